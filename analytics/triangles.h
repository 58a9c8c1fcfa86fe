// Triangle kernels: local clustering coefficient (Graphalytics LCC) and triangle counting.
// Both work on the undirected neighborhood N(v) = (N_out(v) ∪ N_in(v)) \ {v}; kDirected stores
// get their in-neighbors from a transposed copy built once (O(E) memory). Self-loops are ignored.
// Both read the graph in two streaming passes into an in-memory orientation by (degree, ID) rank
// (one ID + one byte per undirected edge), then enumerate each triangle a ≺ b ≺ c once as
// N+(a) ∩ N+(b) (a search-based intersection when the sizes differ by 10x or more).
#pragma once

#include <cstdint>
#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

// (*lcc)[v] = |{(u, w) : u, w ∈ N(v), u != w, (u, w) ∈ E}| / (|N(v)| (|N(v)| - 1)), 0 when
// |N(v)| <= 1 and for absent vertices. Directions count between neighbors: on a directed graph
// (u, w) and (w, u) are two possible edges; on an undirected one each neighbor pair counts twice
// over twice as many ordered pairs. Computed by crediting each triangle to its three corners, so
// it costs what TC costs instead of one neighbor-list read per pair (v, u ∈ N(v)).
Status Lcc(const Snapshot& snap, std::vector<double>* lcc);

// Number of triangles {u, v, w} of the underlying undirected simple graph.
Status TriangleCount(const Snapshot& snap, uint64_t* triangles);

}  // namespace strata::analytics
