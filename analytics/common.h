// Shared machinery of the analytics kernels (brief §7): the vertex layout of a snapshot, work
// ranges balanced by edge count, error collection across parallel tasks, in-neighbors for stores
// that keep none, and sorted-set intersection.
//
// Conventions of every kernel in analytics/:
//  - results are dense vectors indexed by internal vertex ID, sized snapshot.VertexIdBound();
//    a position whose vertex does not exist holds the kernel's "absent" marker (documented per
//    kernel: unreachable / infinity / 0 / kNoLabel);
//  - a kernel returns the first read error of any task, else snapshot.status(), so a failed read
//    never yields a silently wrong result;
//  - kernels see the graph induced by the existing vertices: a neighbor that does not exist is
//    skipped (a kDirected store keeps the edges into a deleted vertex, docs/architecture.md), so
//    degrees that matter (PageRank) are counted from scans, not taken from Degree(). A neighbor
//    >= VertexIdBound() is Corruption (never an out-of-bounds write).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/snapshot.h"

namespace strata::analytics {

// Graphalytics "infinity" for BFS depths (printed as 9223372036854775807).
inline constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::max();
// Graphalytics "infinity" for SSSP distances.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Label of a vertex that does not exist (WCC, CDLP).
inline constexpr VertexId kNoLabel = std::numeric_limits<VertexId>::max();

// Cost model for choosing between reading some vertices' lists by batched lookups and
// streaming every list of a range: one lookup costs about as much as decoding this many edges.
inline constexpr uint64_t kLookupCostEdges = 512;

// An allocator whose value-less construction leaves trivial elements uninitialized: a
// per-vertex array sized with resize() is then first written by the parallel pass that fills
// it, so its pages are faulted in by every thread instead of zeroed by one (a layout's
// out_degree is 8 bytes per vertex ID: 67 MB at scale 23, 37 ms to zero serially).
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  // Only the value-less form: construction with arguments (assign, copies) falls back to
  // std::allocator_traits' default, placement new with those arguments.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
};
// A vector whose resize() leaves new trivial elements uninitialized (DefaultInitAllocator).
template <class T>
using UninitVector = std::vector<T, DefaultInitAllocator<T>>;

// Half-open interval of internal vertex IDs.
struct VertexRange {
  VertexId begin = 0;
  VertexId end = 0;
};

// What every kernel needs first: which vertices exist, their out-degrees, and a split of
// [0, bound) into ranges of roughly equal work (sum of out-degree + 1 over existing vertices).
// Invariants: ranges are ascending, disjoint, cover [0, bound) exactly, and every boundary except
// `bound` is a multiple of 64 (one memgraph subgraph never straddles two ranges).
struct Layout {
  GraphKind kind = GraphKind::kDirected;
  VertexId bound = 0;
  uint64_t num_vertices = 0;   // existing vertices
  uint64_t num_out_edges = 0;  // sum of out_degree (stored entries; 2x logical when undirected)
  UninitVector<uint8_t> exists;      // exists[v] == 1 iff v exists
  // Degree(v) as the store reports it (0 for absent vertices): a work estimate, which counts
  // edges into deleted vertices on kDirected stores. With exact_degrees false (EstimateLayout)
  // an upper bound of it (Snapshot::ScanDegreeBounds), and num_out_edges their sum.
  UninitVector<uint64_t> out_degree;
  bool exact_degrees = true;
  std::vector<VertexRange> ranges;
  std::vector<uint64_t> range_edges;  // range_edges[i]: sum of out_degree over ranges[i]
  // Whether an edge may point at a vertex that does not exist: only kDirected stores keep edges
  // into a deleted vertex (the other kinds delete both directions). When false, kernels skip
  // the per-edge existence check — a second random access per edge on the hot path.
  bool dangling = true;
};

// Reads the vertex set and out-degrees (parallel, one ScanVertices per 4096-vertex block).
Status BuildLayout(const Snapshot& snap, Layout* layout);

// BuildLayout that also hands every chunk of the out-lists it streams to `visit(u, chunk,
// offset)` (offset: u's neighbors delivered before this chunk), so a kernel can fuse its first
// pass with the layout's. Calls come from several threads at once; a vertex's chunks come
// consecutively from one thread. Only existing u are visited; the neighbors are not checked
// (they may be >= VertexIdBound() in a damaged store, or not exist on kDirected stores).
// Chunks carry weights only when `weights` (a weighted store's weight streams are read only
// then).
Status BuildLayout(const Snapshot& snap, Layout* layout,
                   FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                   bool weights = false);

// One pass over the out-lists of `layout`'s existing vertices (a layout of the same snapshot,
// exact or estimated): visit(u, chunk, offset) as BuildLayout's visitor gets it, one task per
// kLayoutBlock block, so a block's chunks come from one thread, vertices ascending (what
// ListCache::Collect needs). For kernels that need degree bounds before their first pass
// (EstimateLayout) and then the lists: the vertex tables are not read a second time.
Status VisitOutLists(const Snapshot& snap, const Layout& layout,
                     FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                     bool weights = false);

// BuildLayout without decoding a single edge: out_degree holds Snapshot::ScanDegreeBounds
// (exact for vertices in one run without deletions, an upper bound otherwise), so it only
// serves kernels that use degrees as estimates (schedules, direction switches, cost models).
Status EstimateLayout(const Snapshot& snap, Layout* layout);

// Whether the store can answer Direction::kIn (undirected stores answer it as kOut).
inline bool HasInEdges(GraphKind k) { return k != GraphKind::kDirected; }
// The direction to scan for in-neighbors when HasInEdges(k).
inline Direction InDirection(GraphKind k) {
  return k == GraphKind::kUndirected ? Direction::kOut : Direction::kIn;
}

// First non-OK Status reported by any task; tasks poll failed() to stop early.
class FirstError {
 public:
  void Set(const Status& s) {
    if (s.ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.load(std::memory_order_relaxed)) {
      status_ = s;
      failed_.store(true, std::memory_order_release);
    }
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  mutable std::mutex mu_;
  std::atomic<bool> failed_{false};
  Status status_;
};

// The kernel's own status if it failed, else the snapshot's first recorded read error.
inline Status Finish(const Snapshot& snap, const Status& s) {
  return s.ok() ? snap.status() : s;
}

// Runs fn(range_index, range) -> Status for every range of the layout in parallel (one task per
// range). Ranges not yet started are skipped once a task failed. Returns the first error.
template <typename Fn>
Status ForEachRange(const Layout& layout, Fn&& fn);

// Runs fn(v) -> Status for every existing vertex, ranges in parallel, ascending within a range.
template <typename Fn>
Status ForEachVertex(const Layout& layout, Fn&& fn) {
  return ForEachRange(layout, [&](size_t, VertexRange r) -> Status {
    for (VertexId v = r.begin; v < r.end; ++v) {
      if (!layout.exists[v]) continue;
      Status s = fn(v);
      if (!s.ok()) return s;
    }
    return Status::OK();
  });
}

// A pass over some lists of range r, a chunk at a time (Snapshot::ScanAdjacency: disk levels
// streamed, no lookup per vertex, vertices without want(u) neither merged nor decoded):
// fn(u, dst, weight, n) -> ScanStep for the existing neighbors of every existing u in r with
// want(u), u ascending, a vertex's chunks consecutive, dst ascending; weight is null for
// unweighted stores and when `weights` is false (the weight streams are then not read). One
// call per chunk, so the kernel's inner loop runs over plain arrays (no per-edge indirection,
// no reloads through captured references); kNextVertex skips the rest of u's list, kStop ends
// the pass. A neighbor >= layout.bound is Corruption (checked once per chunk). `want` is a
// function of the vertex, or an AdjacencyScan (its bitmap of vertices, no call per vertex, and
// whether lists may come unmerged; `weights` replaces its own).
template <typename Want, typename Fn>
Status ScanRangeSteps(const Snapshot& snap, VertexRange r, Direction d, const Layout& layout,
                      bool weights, Want&& want, Fn&& fn) {
  constexpr bool kBits = std::is_same_v<std::decay_t<Want>, AdjacencyScan>;
  bool bad = false;
  const uint8_t* const exists = layout.exists.data();
  const VertexId bound = layout.bound;
  const bool dangling = layout.dangling;
  constexpr size_t kKeep = 256;
  VertexId keep[kKeep];
  double keep_w[kKeep];
  auto visit = [&](VertexId u, const NeighborChunk& c) {
    if constexpr (kBits) {
      if (!exists[u]) return ScanStep::kNextVertex;  // a bitmap does not know the layout
    }
    if (c.size == 0) return ScanStep::kMore;
    if (c.dst[c.size - 1] >= bound) {  // ascending: the last one is the largest
      bad = true;
      return ScanStep::kStop;
    }
    if (!dangling) return fn(u, c.dst, c.weight, c.size);
    // Drop edges into deleted vertices (kDirected keeps them), kKeep at a time.
    size_t n = 0;
    for (size_t i = 0; i < c.size; ++i) {
      if (!exists[c.dst[i]]) continue;
      keep[n] = c.dst[i];
      if (c.weight) keep_w[n] = c.weight[i];
      if (++n == kKeep) {
        const ScanStep step = fn(u, static_cast<const VertexId*>(keep), c.weight ? keep_w + 0 : nullptr, n);
        if (step != ScanStep::kMore) return step;
        n = 0;
      }
    }
    return n ? fn(u, static_cast<const VertexId*>(keep), c.weight ? keep_w + 0 : nullptr, n)
             : ScanStep::kMore;
  };
  Status s;
  if constexpr (kBits) {
    AdjacencyScan scan = want;
    scan.weights = weights;
    s = snap.ScanAdjacency(r.begin, r.end, d, scan, visit);
  } else {
    s = snap.ScanAdjacency(r.begin, r.end, d, weights,
                           [&](VertexId u) { return exists[u] != 0 && want(u); }, visit);
  }
  if (!s.ok()) return s;
  if (bad) return Status::Corruption("analytics: neighbor ID beyond VertexIdBound()");
  return Status::OK();
}

// ScanRangeSteps over every list of r, to the end: fn(u, dst, weight, n).
template <typename Fn>
Status ScanRangeChunks(const Snapshot& snap, VertexRange r, Direction d, const Layout& layout,
                       bool weights, Fn&& fn) {
  return ScanRangeSteps(snap, r, d, layout, weights, [](VertexId) { return true; },
                        [&](VertexId u, const VertexId* dst, const double* w, size_t n) {
                          fn(u, dst, w, n);
                          return ScanStep::kMore;
                        });
}

// ScanRangeChunks an edge at a time: fn(u, v, weight) for every existing neighbor v of every
// existing u in r, u ascending (weight 1.0 unless `weights`).
template <typename Fn>
Status ScanRangeEach(const Snapshot& snap, VertexRange r, Direction d, const Layout& layout,
                     bool weights, Fn&& fn) {
  return ScanRangeChunks(snap, r, d, layout, weights,
                         [&](VertexId u, const VertexId* dst, const double* w, size_t n) {
                           for (size_t i = 0; i < n; ++i) fn(u, dst[i], w ? w[i] : 1.0);
                         });
}

// Vertices per block of BuildLayout's streamed pass (one ScanVertices + ScanEdges each).
inline constexpr VertexId kLayoutBlock = 4096;

// Decoded neighbor lists in one direction, kept in memory for kernels that read every list
// several times (PageRank's iterations), per kLayoutBlock block of vertices. Out-lists are
// collected while BuildLayout streams them (Collect, from its visitor: no extra pass); other
// lists by one streamed pass in Complete. Blocks are kept while they fit `max_bytes`; a block
// that does not fit (or holds a neighbor >= the bound) is streamed from the snapshot by every
// Pass. IDs are kept in 32 bits when the bound allows (4 bytes per edge, plus 4 per vertex of
// a kept block); weights (8 bytes per edge) only when asked for and the store has them. The
// memory belongs to the kernel and is freed with the object. max_bytes = 0: always stream.
// Frontier kernels read kept lists one vertex at a time with Chunks (ForEachFrontierChunk
// takes the cache and reads only the other vertices from the snapshot).
//
// For frontier kernels that read each list about once (SSSP), which lists are kept matters more
// than for passes: a kept list saves a lookup whatever its length, so LimitDegree (before any
// Collect) keeps the shortest lists — every list up to a degree cutoff chosen so that they fit
// — and leaves the long ones (few vertices, most of the bytes) to be read from the store.
//
//   ListCache cache(snap, Direction::kOut, max_bytes);
//   BuildLayout(snap, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) {
//     cache.Collect(u, c);
//   });
//   cache.Complete(snap, L);
//   ForEachRange(L, [&](size_t, VertexRange r) { return cache.Pass(snap, L, r, fn); });
class ListCache {
 public:
  // keep_weights: keep each edge's weight too (a weighted store's lists come with weights).
  ListCache(const Snapshot& snap, Direction d, size_t max_bytes, bool keep_weights = false);

  // Keeps only the lists of vertices whose degree bound in `estimate` (EstimateLayout: upper
  // bounds) is at most a cutoff, the largest with which all those lists fit max_bytes, heads
  // included (a short list with a loose bound may be left out); each block reserves what its
  // kept lists need, so no block is dropped for the slack of a growing vector. Returns the
  // cutoff (UINT64_MAX: every list fits; 0: nothing is kept). Call once, before Collect or
  // Complete; `estimate` must be a layout of the same snapshot.
  uint64_t LimitDegree(const Layout& estimate);

  // Keeps a chunk of u's list in direction d. Thread-safe across blocks; the chunks of one
  // block must come from one thread, vertices ascending, a vertex's chunks in order (as
  // BuildLayout's visitor gives them).
  void Collect(VertexId u, const NeighborChunk& c);
  // After BuildLayout: closes the collected blocks; when nothing was collected, reads the lists
  // (one parallel streamed pass) to keep what fits.
  Status Complete(const Snapshot& snap, const Layout& layout);

  // One pass over range r: fn(u, src, n) for each chunk of existing neighbors of each existing
  // u in r, u ascending, src ascending; `src` is `const uint32_t*` or `const VertexId*` (fn
  // takes `const auto*`). A neighbor >= the bound is Corruption. Safe to call concurrently.
  template <typename Fn>
  Status Pass(const Snapshot& snap, const Layout& layout, VertexRange r, Fn&& fn) const;

  // u's whole list as the store gives it (edges into deleted vertices included), in chunks of
  // at most 256: fn(const NeighborChunk&) -> bool until it returns false; the chunk's weight
  // is null unless weights() (callers that need weights must not use it then). Returns false
  // without calling fn when u's list is not kept (its block not kept, or u left out by
  // LimitDegree: read u from the store instead). Safe to call concurrently after Complete.
  template <typename Fn>
  bool Chunks(VertexId u, Fn&& fn) const;

  Direction direction() const { return d_; }
  // Whether u's list is kept (Chunks(u, ...) would return true). After Complete.
  bool Kept(VertexId u) const {
    if (u >= bound_) return false;
    const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    return b.state == Block::kKept && !b.Skipped(static_cast<size_t>(u % kLayoutBlock));
  }
  // Whether kept lists carry their weights.
  bool weights() const { return weights_; }
  // Bytes held.
  size_t bytes() const { return used_.load(std::memory_order_relaxed); }

 private:
  struct Block {
    enum State : uint8_t { kEmpty, kFilling, kKept, kDropped } state = kEmpty;
    size_t next = 0;            // vertices before this one (in the block) have their offsets
    // List of vertex base + j: ids[off[j], off[j + 1]). 32 bits: a block holding more than
    // 2^32 - 1 entries (16 GiB of IDs and more) is dropped instead.
    std::vector<uint32_t> off;
    std::vector<uint32_t> ids32;
    std::vector<VertexId> ids64;
    std::vector<double> w;  // weights_ only: w[k] belongs to the k-th id
    // LimitDegree only: bit j set = vertex base + j's degree bound is over the cutoff, so its
    // list is not kept (off[j] == off[j + 1]); empty when no vertex of the block is left out.
    std::vector<uint64_t> skip;
    bool Skipped(size_t j) const { return !skip.empty() && (skip[j / 64] >> (j % 64) & 1); }
  };
  size_t Held(const Block& b) const;  // bytes a block holds (capacities)
  void Drop(Block& b);
  void Close(Block& b, VertexId len);

  Direction d_;
  VertexId bound_;
  bool narrow_;
  bool weights_;
  size_t max_bytes_;
  std::vector<uint64_t> reserve_;  // LimitDegree: per block, the entries its kept lists need
  std::atomic<bool> collected_{false};
  std::atomic<size_t> used_{0};
  std::vector<Block> blocks_;
};

// Calls fn(dst, weight) -> bool for u's existing neighbors in ascending order until fn returns
// false. Unweighted stores give weight 1.0. A neighbor >= layout.bound is Corruption.
template <typename Fn>
Status ScanEach(const Snapshot& snap, VertexId u, Direction d, const Layout& layout, Fn&& fn) {
  bool bad = false;
  Status s = snap.ScanNeighbors(u, d, [&](const NeighborChunk& c) {
    for (size_t i = 0; i < c.size; ++i) {
      if (c.dst[i] >= layout.bound) {
        bad = true;
        return false;
      }
      if (layout.dangling && !layout.exists[c.dst[i]]) continue;  // edge into a deleted vertex
      if (!fn(c.dst[i], c.weight ? c.weight[i] : 1.0)) return false;
    }
    return true;
  });
  if (!s.ok()) return s;
  if (bad) return Status::Corruption("analytics: neighbor ID >= VertexIdBound()");
  return Status::OK();
}

// Vertices per Snapshot::ScanNeighborsBatch call in frontier-driven kernels (BFS, SSSP,
// k-hop): their `fetch_batch` parameter. 0 reads one vertex at a time (ScanNeighbors).
inline constexpr size_t kDefaultFetchBatch = 1024;

// Frontier expansion: the neighbor lists of vs[0, n) in direction d, read in parallel chunks,
// each chunk with one Snapshot::ScanNeighborsBatch (batch > 0; disk runs of the whole chunk in
// flight at once) or one ScanNeighbors per vertex (batch == 0). Chunks hold at most `batch`
// vertices and are cut smaller when the frontier is small, so every thread gets work. Each task
// calls make() once and then visit(u, chunk) -> bool for the chunks of u's lists (a vertex's
// chunks consecutive, vertices of a task in any order); false stops the pass. Pass a frontier
// sorted by vertex so a chunk covers nearby vertices (shared blocks, sequential file offsets).
// Chunks read from the snapshot carry weights only when `weights` (a weighted store's disk
// levels otherwise leave their weight streams unread). With a `cache` of direction d, the
// vertices whose lists it keeps are read from it (their chunks then carry no weights unless
// cache->weights()) and only the others from the snapshot.
template <typename Make>
Status ForEachFrontierChunk(const Snapshot& snap, const VertexId* vs, size_t n, Direction d,
                            bool weights, size_t batch, Make&& make,
                            const ListCache* cache = nullptr);

// ForEachFrontierChunk for traversals that ignore weights: make() returns visit(u, v) -> bool,
// called for every existing neighbor v of every u in vs; a neighbor >= layout.bound is
// Corruption. No weight is read.
template <typename Make>
Status ForEachFrontierNeighbor(const Snapshot& snap, const VertexId* vs, size_t n, Direction d,
                               const Layout& layout, size_t batch, Make&& make,
                               const ListCache* cache = nullptr) {
  std::atomic<bool> bad{false};
  Status s = ForEachFrontierChunk(snap, vs, n, d, /*weights=*/false, batch, [&] {
    return [&bad, &layout, visit = make()](VertexId u, const NeighborChunk& c) mutable {
      for (size_t i = 0; i < c.size; ++i) {
        const VertexId v = c.dst[i];
        if (v >= layout.bound) {
          bad.store(true, std::memory_order_relaxed);
          return false;
        }
        if (layout.dangling && !layout.exists[v]) continue;  // edge into a deleted vertex
        if (!visit(u, v)) return false;
      }
      return true;
    };
  }, cache);
  if (!s.ok()) return s;
  if (bad.load()) return Status::Corruption("analytics: neighbor ID >= VertexIdBound()");
  return Status::OK();
}

// u's existing out-neighbors that are <= limit, ascending, into *out (cleared first).
Status GatherOut(const Snapshot& snap, VertexId u, VertexId limit, const Layout& layout,
                 std::vector<VertexId>* out);

// In-neighbors of every vertex, whatever the store keeps. For kDirected stores (no in-edge
// index) Init builds a transposed CSR from one pass over the out-edges: O(E) memory, the price
// of not keeping in-edges. Otherwise it scans the store's in-direction on demand.
class InNeighbors {
 public:
  Status Init(const Snapshot& snap, const Layout& layout);

  // Calls fn(u) -> bool for v's in-neighbors in ascending order until fn returns false.
  template <typename Fn>
  Status ForEach(VertexId v, Fn&& fn) const {
    if (!transposed_) {
      return ScanEach(*snap_, v, InDirection(kind_), *layout_,
                      [&](VertexId u, double) { return fn(u); });
    }
    for (uint64_t i = offset_[v]; i < offset_[v + 1]; ++i) {
      if (!fn(src_[i])) break;
    }
    return Status::OK();
  }

 private:
  const Snapshot* snap_ = nullptr;
  const Layout* layout_ = nullptr;  // must outlive this object
  GraphKind kind_ = GraphKind::kDirected;
  VertexId bound_ = 0;
  bool transposed_ = false;
  std::vector<uint64_t> offset_;  // size bound+1; in-neighbors of v: src_[offset_[v], offset_[v+1])
  std::vector<VertexId> src_;     // each list ascending
};

// Direction bits of an undirected-neighborhood entry u of v.
inline constexpr uint8_t kOutBit = 1;  // (v, u) is an edge
inline constexpr uint8_t kInBit = 2;   // (u, v) is an edge

// N(v) = (N_out(v) ∪ N_in(v)) \ {v}, restricted to IDs <= limit: ascending, no duplicates. When
// `dirs` is not null, (*dirs)[i] holds the direction bits of (*out)[i] (both for undirected
// stores). `scratch` is a reusable buffer.
Status GatherUndirected(const Snapshot& snap, const InNeighbors& in, const Layout& layout,
                        VertexId v, VertexId limit, std::vector<VertexId>* out,
                        std::vector<uint8_t>* dirs, std::vector<VertexId>* scratch);

// Calls fn(i, j) for every a[i] == b[j] of two ascending, duplicate-free arrays, ascending: a
// linear merge, or binary searches of the smaller array's elements into the larger one when
// their sizes differ by 10x or more.
template <typename Fn>
void ForEachCommon(const VertexId* a, size_t na, const VertexId* b, size_t nb, Fn&& fn) {
  if (na == 0 || nb == 0) return;
  if (nb >= 10 * na || na >= 10 * nb) {
    const bool a_small = na <= nb;
    const VertexId* s = a_small ? a : b;
    const VertexId* l = a_small ? b : a;
    const size_t ns = a_small ? na : nb, nl = a_small ? nb : na;
    size_t lo = 0;  // l[0, lo) < every element of s not yet searched
    for (size_t i = 0; i < ns && lo < nl; ++i) {
      lo = static_cast<size_t>(std::lower_bound(l + lo, l + nl, s[i]) - l);
      if (lo < nl && l[lo] == s[i]) {
        a_small ? fn(i, lo) : fn(lo, i);
        ++lo;
      }
    }
    return;
  }
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      fn(i++, j++);
    }
  }
}

// |a ∩ b| of two ascending, duplicate-free arrays (ForEachCommon's 10x rule).
uint64_t IntersectSorted(const VertexId* a, size_t na, const VertexId* b, size_t nb);

// How a frontier kernel reads the lists of vs[0..n) (sorted): per layout range, by lookups
// (batched) or by one stream of the range that decodes only their lists. A range is streamed
// when its vertices' lookups would cost more: each lookup `lookup_cost` edges plus its list's
// decoding times `lookup_edge_factor` (a batch read materializes its runs), against decoding
// the lists once plus an eighth of the range's edges (the stream reads past the other lists).
// Vertices `cache` keeps are always looked up (they cost no read). Appends the streamed ranges
// to *stream_ranges and the vertices to look up to *lookups; mark(v) for each streamed vertex.
template <typename Mark>
void PlanListReads(const Layout& L, const VertexId* vs, size_t n, const ListCache* cache,
                   uint64_t lookup_cost, uint64_t lookup_edge_factor,
                   std::vector<size_t>* stream_ranges, std::vector<VertexId>* lookups, Mark&& mark);

// ---------------------------------------------------------------------------------------------

}  // namespace strata::analytics

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace strata::analytics {

template <typename Fn>
Status ForEachRange(const Layout& layout, Fn&& fn) {
  FirstError err;
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, layout.ranges.size(), 1),
      [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
          if (err.failed()) return;
          err.Set(fn(i, layout.ranges[i]));
        }
      },
      tbb::simple_partitioner());
  return err.Get();
}

template <typename Make>
Status ForEachFrontierChunk(const Snapshot& snap, const VertexId* vs, size_t n, Direction d,
                            bool weights, size_t batch, Make&& make, const ListCache* cache) {
  if (n == 0) return Status::OK();
  if (cache != nullptr && cache->direction() != d) cache = nullptr;
  const size_t tasks = 4 * static_cast<size_t>(tbb::this_task_arena::max_concurrency());
  const size_t limit = batch == 0 ? 64 : batch;
  const size_t grain =
      std::max<size_t>(std::min<size_t>(limit, 16), std::min(limit, (n + tasks - 1) / tasks));
  FirstError err;
  std::atomic<bool> stopped{false};
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, n, grain),
      [&](const tbb::blocked_range<size_t>& r) {
        if (err.failed() || stopped.load(std::memory_order_relaxed)) return;
        auto visit = make();
        bool go = true;
        const VertexId* base = vs + r.begin();
        size_t m = r.size();
        std::vector<VertexId> rest;  // with a cache: the vertices it does not keep
        if (cache != nullptr) {
          for (size_t i = 0; i < m && go; ++i) {
            const VertexId u = base[i];
            if (!cache->Chunks(u, [&](const NeighborChunk& c) { return go = visit(u, c); })) {
              rest.push_back(u);
            }
          }
          base = rest.data();
          m = go ? rest.size() : 0;
        }
        if (m > 0 && batch == 0) {
          for (size_t i = 0; i < m && go && !err.failed(); ++i) {
            const VertexId u = base[i];
            err.Set(snap.ScanNeighbors(u, d, [&](const NeighborChunk& c) {
              return go = visit(u, weights ? c : NeighborChunk{c.dst, nullptr, c.size});
            }));
          }
        } else if (m > 0) {
          err.Set(snap.ScanNeighborsBatch(base, m, d, weights,
                                          [&](size_t i, const NeighborChunk& c) {
                                            return go = visit(base[i], c);
                                          }));
        }
        if (!go) stopped.store(true, std::memory_order_relaxed);
      },
      tbb::simple_partitioner());
  return err.Get();
}

template <typename Fn>
bool ListCache::Chunks(VertexId u, Fn&& fn) const {
  if (u >= bound_) return false;
  const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
  const size_t j = static_cast<size_t>(u % kLayoutBlock);
  if (b.state != Block::kKept || b.Skipped(j)) return false;
  const uint64_t e0 = b.off[j], e1 = b.off[j + 1];
  constexpr size_t kPiece = 256;
  VertexId wide[kPiece];
  for (uint64_t k = e0; k < e1;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, e1 - k));
    const VertexId* dst;
    if (narrow_) {
      for (size_t i = 0; i < n; ++i) wide[i] = b.ids32[k + i];
      dst = wide;
    } else {
      dst = b.ids64.data() + k;
    }
    const double* w = weights_ ? b.w.data() + k : nullptr;
    if (!fn(NeighborChunk{dst, w, n})) break;
    k += n;
  }
  return true;
}

template <typename Fn>
Status ListCache::Pass(const Snapshot& snap, const Layout& L, VertexRange r, Fn&& fn) const {
  const uint8_t* const exists = L.exists.data();
  constexpr size_t kKeep = 256;
  VertexId keep[kKeep];
  for (VertexId lo = r.begin; lo < r.end;) {
    const size_t bi = static_cast<size_t>(lo / kLayoutBlock);
    const VertexId base = bi * kLayoutBlock;
    const VertexId hi = std::min<VertexId>(r.end, base + kLayoutBlock);
    const Block& b = blocks_[bi];
    // A block with lists left out by LimitDegree is streamed whole, as one not kept.
    auto whole = [](const Block& x) { return x.state == Block::kKept && x.skip.empty(); };
    if (!whole(b)) {
      // Stream the whole run of blocks not kept in one scan: a scan's setup (a scanner per
      // disk file) per 4096-vertex block made a partly cached PageRank slower than none.
      VertexId end = hi;
      while (end < r.end && !whole(blocks_[static_cast<size_t>(end / kLayoutBlock)])) {
        end = std::min<VertexId>(r.end, end + kLayoutBlock);
      }
      Status s = ScanRangeChunks(snap, VertexRange{lo, end}, d_, L, /*weights=*/false,
                                 [&](VertexId u, const VertexId* src, const double*, size_t n) {
                                   fn(u, src, n);
                                 });
      if (!s.ok()) return s;
      lo = end;
      continue;
    }
    for (VertexId u = lo; u < hi; ++u) {
      const size_t j = static_cast<size_t>(u - base);
      const uint64_t e0 = b.off[j], e1 = b.off[j + 1];
      if (e0 == e1 || !exists[u]) continue;
      auto emit = [&](const auto* ids) {
        if (!L.dangling) {
          fn(u, ids + e0, static_cast<size_t>(e1 - e0));
          return;
        }
        size_t n = 0;  // drop edges into deleted vertices (kDirected keeps them)
        for (uint64_t k = e0; k < e1; ++k) {
          if (!exists[ids[k]]) continue;
          keep[n] = ids[k];
          if (++n == kKeep) {
            fn(u, static_cast<const VertexId*>(keep), n);
            n = 0;
          }
        }
        if (n) fn(u, static_cast<const VertexId*>(keep), n);
      };
      if (narrow_) {
        emit(b.ids32.data());
      } else {
        emit(b.ids64.data());
      }
    }
    lo = hi;
  }
  return Status::OK();
}

template <typename Mark>
void PlanListReads(const Layout& L, const VertexId* vs, size_t n, const ListCache* cache,
                   uint64_t lookup_cost, uint64_t lookup_edge_factor,
                   std::vector<size_t>* stream_ranges, std::vector<VertexId>* lookups, Mark&& mark) {
  auto kept = [&](VertexId v) { return cache != nullptr && cache->Kept(v); };
  for (size_t ri = 0, i = 0; i < n; ++ri) {
    if (ri == L.ranges.size()) {  // past every range (none should be): looked up
      lookups->insert(lookups->end(), vs + i, vs + n);
      break;
    }
    const VertexRange r = L.ranges[ri];
    while (i < n && vs[i] < r.begin) lookups->push_back(vs[i++]);
    size_t j = i;
    uint64_t vertices = 0, own = 0;
    for (; j < n && vs[j] < r.end; ++j) {
      if (kept(vs[j])) continue;
      ++vertices;
      own += L.out_degree[vs[j]];
    }
    if (own != 0 && own * lookup_edge_factor + vertices * lookup_cost > L.range_edges[ri] / 8 + own) {
      stream_ranges->push_back(ri);
      for (size_t k = i; k < j; ++k) {
        if (kept(vs[k])) {
          lookups->push_back(vs[k]);
        } else {
          mark(vs[k]);
        }
      }
    } else {
      lookups->insert(lookups->end(), vs + i, vs + j);
    }
    i = j;
  }
}

}  // namespace strata::analytics
