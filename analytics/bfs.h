// Breadth-first search (Graphalytics BFS): depth of every vertex from a source over out-edges.
#pragma once

#include <cstdint>
#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

// What a search did, step by step (BfsParams::stats): for tuning and for `strata analyze
// --stats`. Step k expands the vertices at depth k.
struct BfsStep {
  bool bottom_up = false;
  uint64_t frontier = 0;  // vertices at depth k
  uint64_t found = 0;     // vertices given depth k + 1
  double seconds = 0;
};
struct BfsStats {
  double layout_seconds = 0;  // degrees, ranges, the depth array (and the list cache, if kept)
  std::vector<BfsStep> steps;
};

struct BfsParams {
  VertexId source = 0;
  // Direction-optimizing thresholds (Beamer et al.): go bottom-up when the frontier's out-edges
  // exceed (unexplored edges) / alpha; return top-down when the frontier shrinks below n / beta.
  // Bottom-up needs in-edges, so kDirected stores always run top-down.
  // alpha is 4, not Beamer's 15: on a CSR a bottom-up step costs little per vertex that finds
  // no parent, here it decodes that vertex's whole list, while a top-down step over a large
  // frontier streams just the frontier's lists. On the bench's scale-23 store (source
  // 3316144) level 1 goes top-down (4503 vertices, 18.8M edges; bottom-up read 229M) and the
  // kernel took 1.12-1.22 s against 1.30-1.53 s with 15 (3 interleaved runs); on a scale-21
  // store both chose the same steps (docs/benchmarks.md).
  int alpha = 4;
  int beta = 18;
  // Vertices per batched neighbor read (kDefaultFetchBatch): frontier vertices in top-down
  // steps, unvisited low-degree vertices of a range in bottom-up steps. 0 reads one vertex at a
  // time.
  size_t fetch_batch = kDefaultFetchBatch;
  // Cost model of reading lists by batched lookups or by streaming a range (kLookupCostEdges:
  // one lookup costs about as much as decoding this many edges): bottom-up steps stream a
  // range when its unvisited vertices' lookups would cost more (StreamCheaper), top-down steps
  // when its frontier vertices' would (PlanListReads). Tests set it to force either way.
  uint64_t lookup_cost_edges = kLookupCostEdges;
  // Most bytes of out-lists kept decoded in memory (ListCache, about 4 bytes per edge),
  // collected during the layout's pass: top-down steps read the frontier's lists from it, and
  // on undirected stores (in-lists = out-lists) bottom-up steps too; vertices left out are
  // read from the store (batched lookups). 0 (the default): every step reads the store.
  // Off by default because a BFS reads most lists about once: filling the cache cost more than
  // it saved on a compacted scale-21 store (0.55-0.57 s with 256 MiB, 0.50-0.51 s without;
  // docs/benchmarks.md, session 5).
  size_t cache_bytes = 0;
  // Most bytes of unvisited vertices' in-lists kept between bottom-up steps (4 bytes per edge
  // and 8 per vertex, twice that when vertex IDs pass 32 bits; counted by capacity, so a range being filled may pass it by up to
  // its own size before it is dropped). A bottom-up step that streams a range reads the whole
  // list of every vertex that finds no parent; those vertices are the next step's work, so
  // their lists are kept and the range's next steps read only them, from memory. A range whose
  // lists do not fit is read from the store as before. 0: never kept.
  size_t unvisited_bytes = size_t{256} << 20;
  // When not null, filled with the search's layout time and steps.
  BfsStats* stats = nullptr;
};

// (*depth)[v] = hops from source to v; kUnreachable for vertices not reached and for vertices
// that do not exist. InvalidArgument if the source does not exist.
Status Bfs(const Snapshot& snap, const BfsParams& params, std::vector<int64_t>* depth);

}  // namespace strata::analytics
