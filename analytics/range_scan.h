// Scans of a snapshot's lists that see the graph the layout describes: edges into deleted
// vertices dropped, a neighbor >= the layout's bound reported as Corruption. Per range
// (ScanRangeSteps, ScanRangeChunks, ScanRangeEach: streamed, a chunk at a time) and per vertex
// (ScanEach).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "analytics/layout.h"
#include "strata/snapshot.h"

namespace strata::analytics {

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

}  // namespace strata::analytics
