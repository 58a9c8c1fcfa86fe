// The static CSR baseline of bench/ (bench/csr.h) against the analytics references
// (tests/util/analytics_verify.h) on the same final graph: its kernels are tuned for speed on their own, so
// every ratio the benchmark prints relies on them computing what analytics/ computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/util/analytics_verify.h"
#include "bench/csr.h"
#include "tests/util/map_snapshot.h"
#include "tests/util/assert_ok.h"

namespace strata::bench {
namespace {

using analytics::kInfinity;
using analytics::kNoLabel;
using analytics::kUnreachable;

// A skewed random stream: a quarter of the edges leave one of `hubs` vertices, a few edges
// repeat (the later weight wins in both), a few loops, and some edges are removed.
EdgeList MakeStream(uint64_t n, uint64_t m, uint64_t hubs, bool weighted, uint64_t seed) {
  std::mt19937_64 rng(seed);
  EdgeList list;
  list.num_vertices = n;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (uint64_t i = 0; i < m; ++i) {
    uint32_t u = static_cast<uint32_t>(rng() % 4 == 0 ? rng() % hubs : rng() % n);
    uint32_t v = static_cast<uint32_t>(rng() % n);
    if (i % 97 == 0 && !list.edges.empty()) {  // a repeat of an earlier edge
      const PackedEdge e = list.edges[rng() % list.edges.size()];
      u = e.u;
      v = e.v;
    }
    if (i % 211 == 0) v = u;  // a loop
    list.edges.push_back({u, v});
    if (weighted) list.weights.push_back(1.0 - unit(rng));  // (0, 1]
  }
  std::set<std::pair<VertexId, VertexId>> removed;
  for (uint64_t i = 0; i < m / 20; ++i) {
    const PackedEdge e = list.edges[rng() % list.edges.size()];
    removed.insert({std::min(e.u, e.v), std::max(e.u, e.v)});
  }
  list.removed.assign(removed.begin(), removed.end());
  return list;
}

// The final graph of `list` into an empty undirected g, as the reference model holds it: undirected, the last weight of an
// edge wins, removed edges gone, and only vertices with an edge left (the CSR has no vertex
// table, so a vertex whose edges were all removed does not exist for it).
void FillSnapshot(const EdgeList& list, MapSnapshot& g) {
  const bool weighted = !list.weights.empty();
  const std::set<std::pair<VertexId, VertexId>> removed(list.removed.begin(), list.removed.end());
  for (size_t i = 0; i < list.edges.size(); ++i) {
    const VertexId u = list.edges[i].u, v = list.edges[i].v;
    if (removed.count({std::min(u, v), std::max(u, v)})) continue;
    g.PutEdge(u, v, weighted ? list.weights[i] : 1.0);
  }
}

// Vertices of the reference model in [0, n): the ones both sides report on.
std::vector<VertexId> Existing(const MapSnapshot& g, uint64_t n) {
  std::vector<VertexId> out;
  for (VertexId v = 0; v < n; ++v) {
    if (g.HasVertex(v)) out.push_back(v);
  }
  return out;
}

VertexId MaxDegree(const CsrGraph& csr) {
  VertexId best = 0;
  for (VertexId v = 0; v < csr.n; ++v) {
    if (csr.degree(v) > csr.degree(best)) best = v;
  }
  return best;
}

void CheckAll(const EdgeList& list) {
  CsrGraph csr;
  ASSERT_OK(BuildCsr(list, &csr));
  MapSnapshot g(GraphKind::kUndirected, !list.weights.empty());
  FillSnapshot(list, g);
  const std::vector<VertexId> vs = Existing(g, csr.n);
  ASSERT_FALSE(vs.empty());
  // Vertices without an edge in the CSR are exactly the absent ones.
  for (VertexId v = 0; v < csr.n; ++v) ASSERT_EQ(csr.degree(v) > 0, g.HasVertex(v)) << v;
  uint64_t entries = 0;
  for (VertexId v : vs) entries += g.Degree(v, Direction::kOut);
  ASSERT_EQ(csr.num_arcs(), entries);

  for (VertexId src : {MaxDegree(csr), vs[vs.size() / 2], vs.back()}) {
    SCOPED_TRACE("source " + std::to_string(src));
    std::vector<int64_t> dref;
    ASSERT_OK(analytics::ReferenceBfs(g, src, &dref));
    std::vector<int32_t> depth;
    CsrBfs(csr, static_cast<uint32_t>(src), &depth);
    std::vector<int64_t> want, got;
    for (VertexId v : vs) {
      want.push_back(dref[v]);
      got.push_back(depth[v] < 0 ? kUnreachable : depth[v]);
    }
    ASSERT_OK(analytics::CheckExact(want, got, "CSR BFS"));

    std::vector<double> sref, dist;
    ASSERT_OK(analytics::ReferenceSssp(g, src, &sref));
    CsrSssp(csr, static_cast<uint32_t>(src), &dist);
    std::vector<double> swant, sgot;
    for (VertexId v : vs) {
      swant.push_back(sref[v]);
      sgot.push_back(dist[v]);
    }
    ASSERT_OK(analytics::CheckEpsilon(swant, sgot, 1e-9, "CSR SSSP"));
  }

  std::vector<VertexId> lref;
  ASSERT_OK(analytics::ReferenceWcc(g, &lref));
  std::vector<uint32_t> label;
  CsrWcc(csr, &label);
  std::vector<uint64_t> lwant, lgot;
  for (VertexId v : vs) {
    lwant.push_back(lref[v]);
    lgot.push_back(label[v] == UINT32_MAX ? kNoLabel : label[v]);
  }
  ASSERT_OK(analytics::CheckEquivalent(lwant, lgot, "CSR WCC"));

  analytics::PageRankParams pp;
  pp.iterations = 10;
  std::vector<double> rref, rank;
  ASSERT_OK(analytics::ReferencePageRank(g, pp, &rref));
  CsrPageRank(csr, pp.iterations, &rank);
  std::vector<double> rwant, rgot;
  for (VertexId v : vs) {
    rwant.push_back(rref[v]);
    rgot.push_back(rank[v]);
  }
  // The CSR keeps single-precision ranks and contributions (as GAPBS): at most
  // 2^-24 * (2t + 1) relative after t iterations (analytics_test's PR check), 1.25e-6 at 10.
  ASSERT_OK(analytics::CheckEpsilon(rwant, rgot, 1.3e-6, "CSR PageRank"));

  uint64_t tref = 0;
  ASSERT_OK(analytics::ReferenceTriangleCount(g, &tref));
  EXPECT_EQ(CsrTriangles(csr), tref);
}

TEST(CsrBaselineTest, WeightedSkewedGraphMatchesReferences) {
  CheckAll(MakeStream(3000, 40000, 8, /*weighted=*/true, 1));
}

TEST(CsrBaselineTest, UnweightedSkewedGraphMatchesReferences) {
  CheckAll(MakeStream(3000, 40000, 8, /*weighted=*/false, 2));
}

// Sparse: many components, long paths, and vertices whose edges were all removed.
TEST(CsrBaselineTest, SparseGraphMatchesReferences) {
  CheckAll(MakeStream(5000, 4000, 50, /*weighted=*/true, 3));
}

}  // namespace
}  // namespace strata::bench
