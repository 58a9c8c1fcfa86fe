// Single-source shortest paths (Graphalytics SSSP) by delta-stepping over out-edges.
#pragma once

#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

struct SsspParams {
  VertexId source = 0;
  // Bucket width. 0 picks one: 1.0 for unweighted stores (every weight is 1.0), else the mean
  // weight of a sample of edges.
  double delta = 0;
  // Bucket vertices per batched neighbor read (kDefaultFetchBatch); 0 reads one vertex at a time.
  size_t fetch_batch = kDefaultFetchBatch;
  // Most bytes of decoded lists kept in memory, collected in one pass over the lists: the light
  // edges (weight < delta, 16 bytes each; about 1.5x their sampled share of the edges, at most
  // half of this) for the light/heavy split, and the rest for out-lists with their weights
  // (ListCache with LimitDegree: the shortest lists, about 12 bytes per edge plus 4 per
  // vertex), so buckets read only the other lists from the store. 0: no split, and every
  // bucket reads the store.
  size_t cache_bytes = size_t{256} << 20;
  // Cost model of a bucket's reads (with fetch_batch > 0): a vertex range whose bucket
  // vertices' lookups would cost more than streaming the range (an eighth of its edges for the
  // lists skipped, all of the bucket's) is streamed (Snapshot::ScanAdjacency), where one lookup
  // counts as decoding this many edges. 0 never streams; a huge value streams every range.
  uint64_t lookup_cost_edges = kLookupCostEdges;
};

// (*dist)[v] = length of a shortest path from source to v (sum of weights); kInfinity for
// unreachable and absent vertices. InvalidArgument if the source does not exist or a weight is
// negative or NaN.
Status Sssp(const Snapshot& snap, const SsspParams& params, std::vector<double>* dist);

}  // namespace strata::analytics
