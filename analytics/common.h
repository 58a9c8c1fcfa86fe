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
#include <mutex>
#include <vector>

#include "strata/snapshot.h"

namespace strata::analytics {

// Graphalytics "infinity" for BFS depths (printed as 9223372036854775807).
inline constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::max();
// Graphalytics "infinity" for SSSP distances.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Label of a vertex that does not exist (WCC, CDLP).
inline constexpr VertexId kNoLabel = std::numeric_limits<VertexId>::max();

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
  std::vector<uint8_t> exists;       // exists[v] == 1 iff v exists
  // Degree(v) as the store reports it (0 for absent vertices): a work estimate, which counts
  // edges into deleted vertices on kDirected stores.
  std::vector<uint64_t> out_degree;
  std::vector<VertexRange> ranges;
  // Whether an edge may point at a vertex that does not exist: only kDirected stores keep edges
  // into a deleted vertex (the other kinds delete both directions). When false, kernels skip
  // the per-edge existence check — a second random access per edge on the hot path.
  bool dangling = true;
};

// Reads the vertex set and out-degrees (parallel, one ScanVertices per 4096-vertex block).
Status BuildLayout(const Snapshot& snap, Layout* layout);

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

// Full pass over the lists of range r (Snapshot::ScanEdges: disk levels streamed, no lookup per
// vertex): fn(u, v, weight) for every existing neighbor v of every u in r, u ascending.
// A neighbor >= layout.bound is Corruption.
template <typename Fn>
Status ScanRangeEach(const Snapshot& snap, VertexRange r, Direction d, const Layout& layout,
                     Fn&& fn) {
  bool bad = false;
  Status s = snap.ScanEdges(r.begin, r.end, d, [&](VertexId u, const NeighborChunk& c) {
    if (!layout.exists[u]) return true;
    for (size_t i = 0; i < c.size; ++i) {
      if (c.dst[i] >= layout.bound) {
        bad = true;
        return false;
      }
      if (!layout.dangling || layout.exists[c.dst[i]]) fn(u, c.dst[i], c.weight ? c.weight[i] : 1.0);
    }
    return true;
  });
  if (!s.ok()) return s;
  if (bad) return Status::Corruption("analytics: neighbor ID beyond VertexIdBound()");
  return Status::OK();
}

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
template <typename Make>
Status ForEachFrontierChunk(const Snapshot& snap, const VertexId* vs, size_t n, Direction d,
                            size_t batch, Make&& make);

// ForEachFrontierChunk with the kernel conventions of ScanEach: make() returns
// visit(u, v, weight) -> bool, called for every existing neighbor v of every u in vs; a
// neighbor >= layout.bound is Corruption.
template <typename Make>
Status ForEachFrontierNeighbor(const Snapshot& snap, const VertexId* vs, size_t n, Direction d,
                               const Layout& layout, size_t batch, Make&& make) {
  std::atomic<bool> bad{false};
  Status s = ForEachFrontierChunk(snap, vs, n, d, batch, [&] {
    return [&bad, &layout, visit = make()](VertexId u, const NeighborChunk& c) mutable {
      for (size_t i = 0; i < c.size; ++i) {
        const VertexId v = c.dst[i];
        if (v >= layout.bound) {
          bad.store(true, std::memory_order_relaxed);
          return false;
        }
        if (layout.dangling && !layout.exists[v]) continue;  // edge into a deleted vertex
        if (!visit(u, v, c.weight ? c.weight[i] : 1.0)) return false;
      }
      return true;
    };
  });
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
                            size_t batch, Make&& make) {
  if (n == 0) return Status::OK();
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
        if (batch == 0) {
          for (size_t i = r.begin(); i < r.end() && go && !err.failed(); ++i) {
            const VertexId u = vs[i];
            err.Set(snap.ScanNeighbors(u, d, [&](const NeighborChunk& c) {
              return go = visit(u, c);
            }));
          }
        } else {
          const VertexId* base = vs + r.begin();
          err.Set(snap.ScanNeighborsBatch(base, r.size(), d, [&](size_t i, const NeighborChunk& c) {
            return go = visit(base[i], c);
          }));
        }
        if (!go) stopped.store(true, std::memory_order_relaxed);
      },
      tbb::simple_partitioner());
  return err.Get();
}

}  // namespace strata::analytics
