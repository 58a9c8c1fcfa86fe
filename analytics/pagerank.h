// PageRank with the Graphalytics semantics (spec §2.3.2): a fixed number of iterations, the rank
// of sink vertices (no out-edges) redistributed uniformly over all vertices.
#pragma once

#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

struct PageRankParams {
  double damping = 0.85;
  int iterations = 20;
  // Most bytes of decoded neighbor lists kept in memory between iterations (ListCache: about
  // 4 bytes per edge); the rest is streamed from the snapshot every iteration. 0: stream all.
  size_t cache_bytes = size_t{256} << 20;
};

// (*rank)[v] = PR_iterations(v); 0 for vertices that do not exist. Their sum is 1 (up to
// rounding) when the graph has vertices. Pull-based when the store answers in-edges
// (kDirectedWithInEdges, kUndirected); push-based over out-edges for kDirected, with one private
// accumulator array per partition of the sources (no atomics on doubles). Deterministic for a
// given thread count.
Status PageRank(const Snapshot& snap, const PageRankParams& params, std::vector<double>* rank);

}  // namespace strata::analytics
