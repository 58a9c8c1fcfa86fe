// k-hop neighborhood: the vertices within k hops of a source.
#pragma once

#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

struct KHopParams {
  VertexId source = 0;
  int k = 2;
  Direction direction = Direction::kOut;  // kIn needs in-edges (NotSupported otherwise)
  // Frontier vertices per batched neighbor read (kDefaultFetchBatch); 0 reads one at a time.
  size_t fetch_batch = kDefaultFetchBatch;
};

// *out = every vertex at distance <= k from source (the source included), ascending. Memory is
// proportional to the result, not to the graph: meant for point queries on large graphs.
// InvalidArgument if the source does not exist.
Status KHop(const Snapshot& snap, const KHopParams& params, std::vector<VertexId>* out);

}  // namespace strata::analytics
