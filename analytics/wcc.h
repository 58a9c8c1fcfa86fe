// Weakly connected components (Graphalytics WCC): edge directions are ignored.
#pragma once

#include <vector>

#include "analytics/common.h"

namespace strata::analytics {

struct WccParams {
  // Afforest: neighbors per vertex linked in the sampling rounds before the largest component
  // is identified and skipped.
  int sampling_rounds = 2;
  // Most bytes of out-lists kept decoded in memory (ListCache, about 4 bytes per edge),
  // collected during the layout's pass, so the second phase links them from memory and reads
  // only the lists left out from the store. 0 (the default): the second phase reads the store.
  // Off by default: the second phase skips the largest component, so it reads few lists, and
  // keeping all of them cost more than it saved (compacted scale-21 store: 0.54-0.57 s with
  // 256 MiB, 0.32 s without; docs/benchmarks.md, session 5).
  size_t cache_bytes = 0;
};

// (*label)[v] = the smallest vertex ID of v's component (so two vertices share a label iff they
// are weakly connected); kNoLabel for absent vertices. Afforest-style concurrent union-find:
// link a few neighbors per vertex, find the largest component by sampling, then link the
// remaining edges of the other vertices. kDirected stores cannot skip the largest component
// (an edge into it is only seen from its source), so every out-edge is linked there.
Status Wcc(const Snapshot& snap, const WccParams& params, std::vector<VertexId>* label);

}  // namespace strata::analytics
