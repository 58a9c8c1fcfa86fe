// The static in-memory CSR baseline: the ideal for reads. 32-bit neighbor IDs (as GAPBS uses
// when the vertex count allows), 64-bit offsets, optional double weights in a parallel array.
//
// Kernels written for speed in the manner of GAPBS (Beamer et al.), all parallel with oneTBB:
//   PageRank    pull over the (symmetric) adjacency, contributions precomputed per iteration
//   BFS         direction-optimizing (top-down queue / bottom-up bitmap, alpha 15, beta 18)
//   SSSP        delta-stepping with per-thread bins, light/heavy edges split (Meyer-Sanders)
//   WCC         Afforest: sampled neighbor linking, skip of the largest component
//   TC          ordered counting over lower neighbors, degree relabelling when skewed
// Semantics are those of analytics/ (Graphalytics), so results can be compared.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/adapter.h"

namespace strata::bench {

struct CsrGraph {
  uint64_t n = 0;                // vertex bound
  std::vector<uint64_t> offset;  // n + 1
  std::vector<uint32_t> adj;     // each list ascending, no duplicates
  std::vector<double> weight;    // empty when unweighted

  uint64_t num_arcs() const { return adj.size(); }
  uint64_t degree(uint64_t u) const { return offset[u + 1] - offset[u]; }
  // Bytes of the arrays.
  uint64_t MemoryBytes() const {
    return offset.size() * sizeof(uint64_t) + adj.size() * sizeof(uint32_t) +
           weight.size() * sizeof(double);
  }
};

// Builds the undirected graph an EdgeList describes (both directions, loops once).
Status BuildCsr(const EdgeList& list, CsrGraph* g);

// Kernels. Results indexed by vertex; vertices without edges are "absent".
void CsrPageRank(const CsrGraph& g, int iterations, std::vector<double>* rank);
void CsrBfs(const CsrGraph& g, uint32_t source, std::vector<int32_t>* depth);  // -1: unreached
void CsrSssp(const CsrGraph& g, uint32_t source, std::vector<double>* dist);
void CsrWcc(const CsrGraph& g, std::vector<uint32_t>* label);  // UINT32_MAX: absent
uint64_t CsrTriangles(const CsrGraph& g);

}  // namespace strata::bench
