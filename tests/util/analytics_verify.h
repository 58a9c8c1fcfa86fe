// Sequential reference implementations of every kernel, written straight from the Graphalytics
// pseudo-code (spec appendix) on a plain in-memory copy of the snapshot, and the comparison rules
// of the spec's Output Validation section. Slow and simple on purpose: they are the verifiers.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/analytics.h"

namespace strata::analytics {

// The snapshot read vertex by vertex into vectors: the graph induced by the existing vertices
// (edges into absent vertices, which kDirected stores keep, are dropped). `in` is the transpose
// of `out` computed here (never read from the store's in-edge index), so references do not share
// the kernels' paths.
struct RefGraph {
  GraphKind kind = GraphKind::kDirected;
  VertexId bound = 0;
  uint64_t num_vertices = 0;
  std::vector<uint8_t> exists;
  std::vector<std::vector<std::pair<VertexId, double>>> out;  // ascending destination
  std::vector<std::vector<VertexId>> in;                      // ascending source
};
Status LoadRefGraph(const Snapshot& snap, RefGraph* g);

// Same outputs, markers and parameters as the kernels of the same name.
Status ReferenceBfs(const Snapshot& snap, VertexId source, std::vector<int64_t>* depth);
Status ReferencePageRank(const Snapshot& snap, const PageRankParams& params,
                         std::vector<double>* rank);
Status ReferenceSssp(const Snapshot& snap, VertexId source, std::vector<double>* dist);
Status ReferenceWcc(const Snapshot& snap, std::vector<VertexId>* label);
Status ReferenceCdlp(const Snapshot& snap, const CdlpParams& params, std::vector<uint64_t>* label);
Status ReferenceLcc(const Snapshot& snap, std::vector<double>* lcc);
Status ReferenceTriangleCount(const Snapshot& snap, uint64_t* triangles);
Status ReferenceKHop(const Snapshot& snap, const KHopParams& params, std::vector<VertexId>* out);
Status ReferenceScan(const Snapshot& snap, Direction direction, ScanResult* result);

// Output validation (Graphalytics spec). Each returns OK, or Corruption naming `what`, the first
// mismatching index and both values (InvalidArgument when the sizes differ).
//  - exact match (BFS, CDLP, k-hop):
Status CheckExact(const std::vector<int64_t>& expected, const std::vector<int64_t>& actual,
                  std::string_view what);
Status CheckExact(const std::vector<uint64_t>& expected, const std::vector<uint64_t>& actual,
                  std::string_view what);
//  - epsilon match (PR, LCC, SSSP): |r - s| <= epsilon * |r| (r the expected value); two
//    infinities of the same sign match; NaN never matches.
inline constexpr double kGraphalyticsEpsilon = 1e-4;
Status CheckEpsilon(const std::vector<double>& expected, const std::vector<double>& actual,
                    double epsilon, std::string_view what);
//  - equivalence match (WCC): a bijection between expected and actual labels maps one onto the
//    other (same-label sets are identical).
Status CheckEquivalent(const std::vector<uint64_t>& expected, const std::vector<uint64_t>& actual,
                       std::string_view what);

}  // namespace strata::analytics
