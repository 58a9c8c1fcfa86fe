// Community detection by label propagation (Graphalytics CDLP): synchronous, deterministic.
#pragma once

#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

struct CdlpParams {
  int max_iterations = 10;
  // Initial label of each vertex, indexed by internal ID (e.g. the external IDs, so that ties
  // resolve as Graphalytics resolves them on the original IDs). Null: the internal ID.
  const std::vector<uint64_t>* initial_labels = nullptr;
};

// (*label)[v] = L_k(v) after k = max_iterations synchronous rounds; kNoLabel for absent
// vertices. Each round a vertex takes the most frequent label among its in- and out-neighbors
// (on directed graphs a neighbor linked both ways counts twice; on undirected graphs each
// neighbor counts once, which selects the same label), the smallest on ties, and keeps its own
// label without neighbors. Stops early at a fixed point (later rounds would change nothing).
// kDirected stores get their in-neighbors from a transposed copy built once (O(E) memory).
Status Cdlp(const Snapshot& snap, const CdlpParams& params, std::vector<uint64_t>* label);

}  // namespace strata::analytics
