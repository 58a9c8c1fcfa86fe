// The vertex layout of a snapshot, which every kernel builds first: which vertices exist, their
// out-degrees, and work ranges balanced by edge count; the parallel loops over those ranges and
// the collection of the first error of their tasks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "analytics/kernel_memory.h"
#include "strata/snapshot.h"

namespace strata::analytics {

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
  // an upper bound of it (Snapshot::ScanDegreeBounds), and num_out_edges their sum. Empty
  // when BuildLayout was told not to keep them (keep_degrees).
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
// then). With `block_done`, the kLayoutBlock blocks are taken in ascending order, one at a
// time, by whichever thread is free, and (*block_done)(b) runs on the thread that read block
// b once its reads have returned (so the blocks done form nearly a prefix: PageRank releases
// its snapshot's prefix as it goes). keep_degrees false: out_degree is left empty (the ranges
// and num_out_edges are as ever), for a kernel that has the degrees otherwise — PageRank from
// the lengths of the lists it keeps — and whose peak would hold them (8 bytes a vertex).
Status BuildLayout(const Snapshot& snap, Layout* layout,
                   FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                   bool weights = false, FunctionRef<void(size_t block)>* block_done = nullptr,
                   bool keep_degrees = true);

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

// Vertices per block of BuildLayout's streamed pass (one ScanVertices + ScanEdges each).
inline constexpr VertexId kLayoutBlock = 4096;

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

}  // namespace strata::analytics
