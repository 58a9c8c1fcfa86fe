// Frontier reads of the traversal kernels (BFS, SSSP, k-hop): the neighbor lists of a set of
// vertices, read in parallel by batched lookups (ForEachFrontierChunk, ForEachFrontierNeighbor)
// or, where that costs more, by streaming whole ranges (PlanListReads decides).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_sort.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "analytics/bitmap.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "strata/snapshot.h"

namespace strata::analytics {

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

// Sorts *vs ascending and removes duplicates and the vertices keep(v) rejects. A frontier at
// least 1/kDenseFrontierShare of its ID span is marked in `marks` (sized for every vertex of
// vs, empty on entry and again on return) and taken back word by word in ID order, one pass
// each way, instead of being sorted: SSSP's buckets are that dense, and their sort was 5% of
// the kernel. Sparser ones are filtered and then sorted (in parallel).
inline constexpr uint64_t kDenseFrontierShare = 512;
template <typename Keep>
void SortUniqueFrontier(std::vector<VertexId>* vs, Bitmap* marks, Keep&& keep) {
  std::vector<VertexId>& v = *vs;
  if (v.empty()) return;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const VertexId first = *lo, last = *hi;
  if ((last - first) / kDenseFrontierShare > v.size()) {
    std::erase_if(v, [&](VertexId u) { return !keep(u); });
    tbb::parallel_sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return;
  }
  for (VertexId u : v) {
    if (keep(u)) marks->Set(u);
  }
  v.clear();
  for (size_t w = first >> 6; w <= last >> 6; ++w) {
    for (uint64_t x = marks->TakeWord(w); x != 0; x &= x - 1) {
      v.push_back(w * 64 + static_cast<VertexId>(std::countr_zero(x)));
    }
  }
}

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
