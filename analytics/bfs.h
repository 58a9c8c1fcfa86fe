// Breadth-first search (Graphalytics BFS): depth of every vertex from a source over out-edges.
#pragma once

#include <cstdint>
#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

struct BfsParams {
  VertexId source = 0;
  // Direction-optimizing thresholds (Beamer et al.): go bottom-up when the frontier's out-edges
  // exceed (unexplored edges) / alpha; return top-down when the frontier shrinks below n / beta.
  // Bottom-up needs in-edges, so kDirected stores always run top-down.
  int alpha = 15;
  int beta = 18;
  // Vertices per batched neighbor read (kDefaultFetchBatch): frontier vertices in top-down
  // steps, unvisited low-degree vertices of a range in bottom-up steps. 0 reads one vertex at a
  // time.
  size_t fetch_batch = kDefaultFetchBatch;
  // Most bytes of out-lists kept decoded in memory (ListCache, about 4 bytes per edge),
  // collected during the layout's pass: top-down steps read the frontier's lists from it, and
  // on undirected stores (in-lists = out-lists) bottom-up steps too; vertices left out are
  // read from the store (batched lookups). 0: every step reads the store.
  size_t cache_bytes = size_t{256} << 20;
};

// (*depth)[v] = hops from source to v; kUnreachable for vertices not reached and for vertices
// that do not exist. InvalidArgument if the source does not exist.
Status Bfs(const Snapshot& snap, const BfsParams& params, std::vector<int64_t>* depth);

}  // namespace strata::analytics
