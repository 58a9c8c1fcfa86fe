// Analytics kernels (analytics/) against the LDBC Graphalytics example graphs and expected
// outputs, and against their sequential references (tests/util/analytics_verify.h) on random and Kronecker
// graphs held in a MapSnapshot, before and after deletions, for every GraphKind.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <tbb/task_arena.h>

#include "analytics/degree_groups.h"
#include "analytics/intersect.h"
#include "analytics/kernel_memory.h"
#include "analytics/lane_sum.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "analytics/packed_list.h"
#include "analytics/range_scan.h"
#include "strata/analytics.h"
#include "tests/util/analytics_verify.h"
#include "tests/util/map_snapshot.h"
#include "tests/util/assert_ok.h"
#include "util/memory_info.h"

#ifndef STRATA_TESTDATA_DIR
#error "STRATA_TESTDATA_DIR must name tests/data"
#endif

namespace strata::analytics {
namespace {

const char* KindName(GraphKind k) {
  switch (k) {
    case GraphKind::kDirected: return "directed";
    case GraphKind::kDirectedWithInEdges: return "directed+in";
    case GraphKind::kUndirected: return "undirected";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// A tiny loader for the Graphalytics example graphs (EVLP .v/.e files, .properties, outputs).

std::string ExampleDir() { return std::string(STRATA_TESTDATA_DIR) + "/graphalytics/example/"; }

struct Example {
  std::vector<uint64_t> vertices;                              // external IDs, ascending
  std::vector<std::tuple<uint64_t, uint64_t, double>> edges;  // external (src, dst, weight)
  std::map<std::string, std::string> props;                   // key suffix after the graph name
};

Example LoadExample(const std::string& name) {
  Example ex;
  std::ifstream v(ExampleDir() + name + ".v");
  EXPECT_TRUE(v.good()) << "missing " << ExampleDir() + name + ".v";
  for (uint64_t id; v >> id;) ex.vertices.push_back(id);
  std::ifstream e(ExampleDir() + name + ".e");
  for (std::string line; std::getline(e, line);) {
    std::istringstream ls(line);
    uint64_t a, b;
    double w = 1.0;
    if (ls >> a >> b) {
      ls >> w;
      ex.edges.emplace_back(a, b, w);
    }
  }
  std::ifstream p(ExampleDir() + name + ".properties");
  const std::string prefix = "graph." + name + ".";
  for (std::string line; std::getline(p, line);) {
    const size_t eq = line.find('=');
    if (line.rfind(prefix, 0) != 0 || eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t\r") + 1);
      return s;
    };
    ex.props[trim(line.substr(prefix.size(), eq - prefix.size()))] = trim(line.substr(eq + 1));
  }
  return ex;
}

// Expected output: external ID -> value as text.
std::map<uint64_t, std::string> LoadOutput(const std::string& name, const std::string& alg) {
  std::map<uint64_t, std::string> out;
  std::ifstream f(ExampleDir() + name + "-" + alg);
  EXPECT_TRUE(f.good()) << "missing output " << name << "-" << alg;
  uint64_t id;
  std::string value;
  while (f >> id >> value) out[id] = value;
  return out;
}

double ParseDouble(const std::string& s) {
  if (s == "Infinity" || s == "infinity") return kInfinity;
  return std::stod(s);
}

// How external IDs become internal ones: dense (index), sparse (holes; order kept), reversed
// (holes; order reversed, so CDLP's smallest-label rule needs the external IDs as labels).
enum class Mapping { kDense, kSparse, kReversed };

struct Loaded {
  std::unique_ptr<MapSnapshot> snap;
  std::map<uint64_t, VertexId> to_internal;
  std::vector<uint64_t> external;  // by internal ID; kNoLabel for holes
};

Loaded Build(const Example& ex, GraphKind kind, Mapping m) {
  Loaded l;
  l.snap = std::make_unique<MapSnapshot>(kind, /*weighted=*/true);
  l.snap->set_chunk_size(2);  // several chunks per neighbor list
  const size_t n = ex.vertices.size();
  for (size_t i = 0; i < n; ++i) {
    VertexId id = i;
    if (m == Mapping::kSparse) id = 3 * i + 2;
    if (m == Mapping::kReversed) id = 2 * (n - 1 - i);
    l.to_internal[ex.vertices[i]] = id;
    l.snap->AddVertex(id);
  }
  for (auto& [a, b, w] : ex.edges) l.snap->PutEdge(l.to_internal[a], l.to_internal[b], w);
  l.external.assign(l.snap->VertexIdBound(), kNoLabel);
  for (auto& [ext, id] : l.to_internal) l.external[id] = ext;
  return l;
}

struct ExampleCase {
  const char* graph;
  GraphKind kind;
  Mapping mapping;
};

void PrintTo(const ExampleCase& c, std::ostream* os) {
  *os << c.graph << "/" << KindName(c.kind) << "/mapping" << int(c.mapping);
}

class GraphalyticsExample : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(GraphalyticsExample, MatchesExpectedOutputs) {
  const ExampleCase& c = GetParam();
  const Example ex = LoadExample(c.graph);
  ASSERT_FALSE(ex.vertices.empty());
  Loaded l = Build(ex, c.kind, c.mapping);
  const Snapshot& snap = *l.snap;
  const VertexId bound = snap.VertexIdBound();
  auto expected = [&](const std::string& alg, auto absent, auto parse) {
    std::vector<decltype(absent)> v(bound, absent);
    for (auto& [ext, text] : LoadOutput(c.graph, alg)) v[l.to_internal.at(ext)] = parse(text);
    return v;
  };

  // BFS: exact.
  {
    const VertexId src = l.to_internal.at(std::stoull(ex.props.at("bfs.source-vertex")));
    auto want = expected("BFS", kUnreachable, [](const std::string& s) { return int64_t(std::stoll(s)); });
    std::vector<int64_t> got, ref;
    ASSERT_OK(Bfs(snap, {src}, &got));
    ASSERT_OK(CheckExact(want, got, "BFS"));
    ASSERT_OK(Bfs(snap, {src, 1 << 30, 1 << 30}, &got));  // bottom-up whenever in-edges exist
    ASSERT_OK(CheckExact(want, got, "BFS bottom-up"));
    ASSERT_OK(ReferenceBfs(snap, src, &ref));
    ASSERT_OK(CheckExact(want, ref, "reference BFS"));
  }
  // PageRank: epsilon.
  {
    PageRankParams p;
    p.damping = std::stod(ex.props.at("pr.damping-factor"));
    p.iterations = std::stoi(ex.props.at("pr.num-iterations"));
    auto want = expected("PR", 0.0, ParseDouble);
    std::vector<double> got, ref;
    ASSERT_OK(PageRank(snap, p, &got));
    ASSERT_OK(CheckEpsilon(want, got, kGraphalyticsEpsilon, "PR"));
    ASSERT_OK(ReferencePageRank(snap, p, &ref));
    ASSERT_OK(CheckEpsilon(want, ref, kGraphalyticsEpsilon, "reference PR"));
  }
  // SSSP: epsilon.
  {
    const VertexId src = l.to_internal.at(std::stoull(ex.props.at("sssp.source-vertex")));
    auto want = expected("SSSP", kInfinity, ParseDouble);
    std::vector<double> got, ref;
    ASSERT_OK(Sssp(snap, {src}, &got));
    ASSERT_OK(CheckEpsilon(want, got, kGraphalyticsEpsilon, "SSSP"));
    ASSERT_OK(Sssp(snap, {src, 0.05}, &got));  // many buckets
    ASSERT_OK(CheckEpsilon(want, got, kGraphalyticsEpsilon, "SSSP delta=0.05"));
    ASSERT_OK(ReferenceSssp(snap, src, &ref));
    ASSERT_OK(CheckEpsilon(want, ref, kGraphalyticsEpsilon, "reference SSSP"));
  }
  // WCC: equivalence.
  {
    auto want = expected("WCC", kNoLabel, [](const std::string& s) { return uint64_t(std::stoull(s)); });
    std::vector<uint64_t> got, ref;
    ASSERT_OK(Wcc(snap, {}, &got));
    ASSERT_OK(CheckEquivalent(want, got, "WCC"));
    ASSERT_OK(ReferenceWcc(snap, &ref));
    ASSERT_OK(CheckEquivalent(want, ref, "reference WCC"));
  }
  // CDLP: exact. Labels are internal IDs when the mapping keeps the order, else external IDs
  // passed as initial labels.
  {
    CdlpParams p;
    p.max_iterations = std::stoi(ex.props.at("cdlp.max-iterations"));
    const bool keep_order = c.mapping != Mapping::kReversed;
    if (!keep_order) p.initial_labels = &l.external;
    auto want = expected("CDLP", kNoLabel, [&](const std::string& s) {
      const uint64_t ext = std::stoull(s);
      return keep_order ? uint64_t(l.to_internal.at(ext)) : ext;
    });
    std::vector<uint64_t> got, ref;
    ASSERT_OK(Cdlp(snap, p, &got));
    ASSERT_OK(CheckExact(want, got, "CDLP"));
    ASSERT_OK(ReferenceCdlp(snap, p, &ref));
    ASSERT_OK(CheckExact(want, ref, "reference CDLP"));
  }
  // LCC: epsilon.
  {
    auto want = expected("LCC", 0.0, ParseDouble);
    std::vector<double> got, ref;
    ASSERT_OK(Lcc(snap, &got));
    ASSERT_OK(CheckEpsilon(want, got, kGraphalyticsEpsilon, "LCC"));
    ASSERT_OK(ReferenceLcc(snap, &ref));
    ASSERT_OK(CheckEpsilon(want, ref, kGraphalyticsEpsilon, "reference LCC"));
  }
}

std::vector<ExampleCase> ExampleCases() {
  std::vector<ExampleCase> cases;
  for (Mapping m : {Mapping::kDense, Mapping::kSparse, Mapping::kReversed}) {
    cases.push_back({"example-directed", GraphKind::kDirectedWithInEdges, m});
    cases.push_back({"example-directed", GraphKind::kDirected, m});
    cases.push_back({"example-undirected", GraphKind::kUndirected, m});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, GraphalyticsExample, ::testing::ValuesIn(ExampleCases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& info) {
                           std::string s = std::string(info.param.graph) + "_" +
                                           KindName(info.param.kind) + "_" +
                                           std::to_string(int(info.param.mapping));
                           for (char& ch : s) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

// ---------------------------------------------------------------------------------------------
// Random graphs, cross-checked against the references.

void FillUniform(MapSnapshot* g, uint64_t n, uint64_t m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> weight(0.0, 1.0);
  for (VertexId v = 0; v < n; ++v) g->AddVertex(v);
  for (uint64_t i = 0; i < m; ++i) {
    const VertexId u = rng() % n, v = rng() % n;
    if (u != v) g->PutEdge(u, v, weight(rng));
  }
}

// Graph500-style RMAT (a=0.57, b=0.19, c=0.19), vertex IDs permuted, self-loops dropped.
void FillKronecker(MapSnapshot* g, int scale, int edge_factor, std::mt19937_64& rng) {
  const uint64_t n = uint64_t{1} << scale;
  std::vector<VertexId> perm(n);
  for (VertexId v = 0; v < n; ++v) perm[v] = v;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (VertexId v = 0; v < n; ++v) g->AddVertex(v);
  for (uint64_t i = 0; i < n * edge_factor; ++i) {
    uint64_t u = 0, v = 0;
    for (int b = 0; b < scale; ++b) {
      const double r = unit(rng);
      const int quadrant = r < 0.57 ? 0 : r < 0.76 ? 1 : r < 0.95 ? 2 : 3;
      u = (u << 1) | (quadrant >> 1);
      v = (v << 1) | (quadrant & 1);
    }
    if (u != v) g->PutEdge(perm[u], perm[v], unit(rng));
  }
}

// Deletes ~frac of the vertices and of the remaining edges, then re-adds some deleted IDs
// (recycled, with fresh edges) and new edges.
void Mutate(MapSnapshot* g, double frac, std::mt19937_64& rng) {
  std::vector<VertexId> vs;
  g->ScanVertices(0, g->VertexIdBound(), [&](VertexId v) {
    vs.push_back(v);
    return true;
  });
  std::vector<VertexId> deleted;
  for (VertexId v : vs) {
    if (std::uniform_real_distribution<double>(0, 1)(rng) < frac) {
      g->DeleteVertex(v);
      deleted.push_back(v);
    }
  }
  std::vector<std::pair<VertexId, VertexId>> edges;
  for (VertexId v : vs) {
    if (!g->HasVertex(v)) continue;
    g->ScanNeighbors(v, [&](const NeighborChunk& c) {
      for (size_t i = 0; i < c.size; ++i) edges.emplace_back(v, c.dst[i]);
      return true;
    });
  }
  for (auto& [u, v] : edges) {
    if (std::uniform_real_distribution<double>(0, 1)(rng) < frac) g->DeleteEdge(u, v);
  }
  // Recycle a third of the deleted IDs and give them a few edges.
  for (size_t i = 0; i < deleted.size(); i += 3) {
    for (int j = 0; j < 3; ++j) {
      const VertexId u = vs[rng() % vs.size()];
      if (g->HasVertex(u) && u != deleted[i]) g->PutEdge(deleted[i], u, 0.5);
    }
  }
}

VertexId MaxDegreeVertex(const Snapshot& g) {
  VertexId best = 0;
  uint64_t best_deg = 0;
  g.ScanVertices(0, g.VertexIdBound(), [&](VertexId v) {
    if (g.Degree(v) >= best_deg) {
      best_deg = g.Degree(v);
      best = v;
    }
    return true;
  });
  return best;
}

VertexId RandomVertex(const Snapshot& g, std::mt19937_64& rng) {
  for (;;) {
    const VertexId v = rng() % g.VertexIdBound();
    if (g.HasVertex(v)) return v;
  }
}

// BfsStats against the depths it describes: step k expanded the vertices at depth k and gave
// depth k + 1 to `found` of them; the last step found none. "" or the first mismatch.
std::string CheckBfsStats(const std::vector<int64_t>& depth, const BfsStats& st) {
  std::vector<uint64_t> at;
  for (int64_t x : depth) {
    if (x == kUnreachable) continue;
    if (static_cast<size_t>(x) >= at.size()) at.resize(static_cast<size_t>(x) + 1, 0);
    ++at[static_cast<size_t>(x)];
  }
  if (st.steps.size() != at.size()) {
    return std::to_string(st.steps.size()) + " steps for " + std::to_string(at.size()) + " depths";
  }
  for (size_t k = 0; k < at.size(); ++k) {
    const uint64_t next = k + 1 < at.size() ? at[k + 1] : 0;
    if (st.steps[k].frontier != at[k] || st.steps[k].found != next || st.steps[k].seconds < 0) {
      return "step " + std::to_string(k) + ": frontier " + std::to_string(st.steps[k].frontier) +
             " found " + std::to_string(st.steps[k].found) + ", depths say " +
             std::to_string(at[k]) + " and " + std::to_string(next);
    }
  }
  return st.layout_seconds >= 0 ? "" : "negative layout time";
}

// Every kernel against its reference on `g`.
void CrossCheck(const MapSnapshot& g, std::mt19937_64& rng) {
  const std::vector<VertexId> sources = {MaxDegreeVertex(g), RandomVertex(g, rng)};
  for (VertexId src : sources) {
    SCOPED_TRACE("source " + std::to_string(src));
    std::vector<int64_t> d, dref;
    ASSERT_OK(ReferenceBfs(g, src, &dref));
    for (BfsParams p : {BfsParams{src}, BfsParams{src, 1 << 30, 1 << 30}, BfsParams{src, 1, 1}}) {
      for (size_t kept : {p.unvisited_bytes, size_t{0}, size_t{2000}}) {
        p.unvisited_bytes = kept;
        BfsStats stats;
        p.stats = &stats;
        ASSERT_OK(Bfs(g, p, &d));
        p.stats = nullptr;
        ASSERT_OK(CheckExact(dref, d, "BFS kept " + std::to_string(kept)));
        ASSERT_EQ(CheckBfsStats(d, stats), "") << "alpha " << p.alpha;
        // Alpha 2^30 goes bottom-up from the first step wherever in-edges are kept (and the
        // source has an out-edge); without them every step is top-down.
        if (p.alpha == 1 << 30 && g.Degree(src) > 0) {
          const bool up = g.kind() != GraphKind::kDirected;
          for (const BfsStep& step : stats.steps) ASSERT_EQ(step.bottom_up, up);
        }
      }
      // Every range a step touches streamed (top-down: neighbors marked per thread, merged).
      p.lookup_cost_edges = uint64_t{1} << 40;
      ASSERT_OK(Bfs(g, p, &d));
      ASSERT_OK(CheckExact(dref, d, "BFS streamed"));
    }
    std::vector<double> s, sref;
    ASSERT_OK(ReferenceSssp(g, src, &sref));
    for (double delta : {0.0, 0.01, 10.0}) {
      ASSERT_OK(Sssp(g, {src, delta}, &s));
      ASSERT_OK(CheckEpsilon(sref, s, 1e-9, "SSSP"));
    }
    for (int k : {1, 2, 3}) {
      std::vector<Direction> dirs = {Direction::kOut};
      if (HasInEdges(g.kind())) dirs.push_back(Direction::kIn);
      for (Direction dir : dirs) {
        std::vector<VertexId> h, href;
        ASSERT_OK(KHop(g, {src, k, dir}, &h));
        ASSERT_OK(ReferenceKHop(g, {src, k, dir}, &href));
        ASSERT_OK(CheckExact(href, h, "k-hop"));
      }
    }
  }
  {
    PageRankParams p;
    std::vector<double> r, rref;
    ASSERT_OK(PageRank(g, p, &r));
    ASSERT_OK(ReferencePageRank(g, p, &rref));
    // The kernel keeps ranks and contributions in single precision (pagerank.cc): the first
    // ranks and then each iteration's contributions and ranks are rounded once, so a rank's
    // relative error is at most 2^-24 * (2t + 1) after t iterations (a vertex's sum carries
    // its in-neighbors' relative errors, not more): 2.44e-6 at the default 20.
    ASSERT_EQ(p.iterations, 20);
    ASSERT_OK(CheckEpsilon(rref, r, 2.5e-6, "PR"));
    double sum = 0;
    for (double x : r) sum += x;
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  {
    std::vector<uint64_t> w, wref;
    ASSERT_OK(Wcc(g, {}, &w));
    ASSERT_OK(ReferenceWcc(g, &wref));
    ASSERT_OK(CheckEquivalent(wref, w, "WCC"));
    ASSERT_OK(CheckExact(wref, w, "WCC min-ID labels"));
    ASSERT_OK(Wcc(g, {0}, &w));  // no sampling: plain concurrent union-find
    ASSERT_OK(CheckExact(wref, w, "WCC rounds=0"));
  }
  {
    CdlpParams p;
    p.max_iterations = 10;
    std::vector<uint64_t> c, cref;
    ASSERT_OK(Cdlp(g, p, &c));
    ASSERT_OK(ReferenceCdlp(g, p, &cref));
    ASSERT_OK(CheckExact(cref, c, "CDLP"));
  }
  {
    std::vector<double> c, cref;
    ASSERT_OK(Lcc(g, &c));
    ASSERT_OK(ReferenceLcc(g, &cref));
    ASSERT_OK(CheckEpsilon(cref, c, 1e-12, "LCC"));
    uint64_t t = 0, tref = 0;
    ASSERT_OK(TriangleCount(g, &t));
    ASSERT_OK(ReferenceTriangleCount(g, &tref));
    EXPECT_EQ(tref, t);
  }
  {
    std::vector<Direction> dirs = {Direction::kOut};
    if (HasInEdges(g.kind())) dirs.push_back(Direction::kIn);
    for (Direction dir : dirs) {
      ScanResult r, rref;
      ASSERT_OK(Scan(g, dir, &r));
      ASSERT_OK(ReferenceScan(g, dir, &rref));
      EXPECT_EQ(rref.vertices, r.vertices);
      EXPECT_EQ(rref.edges, r.edges);
      EXPECT_EQ(rref.dst_sum, r.dst_sum);
      EXPECT_NEAR(rref.weight_sum, r.weight_sum, 1e-9 * std::max(1.0, rref.weight_sum));
    }
    ScanResult r;
    ASSERT_OK(Scan(g, Direction::kOut, &r));
    EXPECT_EQ(g.NumEdges(), r.edges);
    EXPECT_EQ(g.NumVertices(), r.vertices);
  }
  ASSERT_OK(g.status());
}

struct RandomCase {
  GraphKind kind;
  bool kronecker;
  bool weighted;
  size_t chunk;
};

void PrintTo(const RandomCase& c, std::ostream* os) {
  *os << KindName(c.kind) << (c.kronecker ? "/kronecker" : "/uniform")
      << (c.weighted ? "/weighted" : "/unweighted") << "/chunk" << c.chunk;
}

class RandomGraphs : public ::testing::TestWithParam<RandomCase> {};

TEST_P(RandomGraphs, KernelsMatchReferencesBeforeAndAfterDeletions) {
  const RandomCase& c = GetParam();
  std::mt19937_64 rng(1234 + int(c.kind) * 7 + c.kronecker * 3 + c.weighted);
  MapSnapshot g(c.kind, c.weighted);
  g.set_chunk_size(c.chunk);
  if (c.kronecker) {
    FillKronecker(&g, 11, 8, rng);
  } else {
    FillUniform(&g, 3000, 20000, rng);
  }
  {
    SCOPED_TRACE("fresh");
    CrossCheck(g, rng);
  }
  Mutate(&g, 0.1, rng);
  {
    SCOPED_TRACE("after deletions");
    CrossCheck(g, rng);
  }
  Mutate(&g, 0.3, rng);
  {
    SCOPED_TRACE("after more deletions");
    CrossCheck(g, rng);
  }
}

std::vector<RandomCase> RandomCases() {
  std::vector<RandomCase> cases;
  for (GraphKind k : {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    cases.push_back({k, false, true, 64});
    cases.push_back({k, true, true, 5});
    cases.push_back({k, true, false, 1000});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, RandomGraphs, ::testing::ValuesIn(RandomCases()),
                         [](const ::testing::TestParamInfo<RandomCase>& info) {
                           std::string s = std::string(KindName(info.param.kind)) +
                                           (info.param.kronecker ? "_kron" : "_uniform") +
                                           (info.param.weighted ? "_weighted" : "_unweighted");
                           for (char& ch : s) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

// The same results with 1, 3 and 8 worker threads (push PageRank has one partition per thread).
// LaneSum: a list handed in pieces of a multiple of 4 entries (but the last), or in the chunks
// of a stream, sums to the bits of one call over the whole
// list, with lanes that carry across calls; and the association it keeps is the documented one. Contributions log-uniform
// over 2^-40..1, so that the order of additions shows in the result (floats of similar size
// sum exactly in double in any order: a test with them could not tell associations apart).
TEST(LaneSum, PiecesSumLikeOneCall) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> expo(-40.0, 0.0);
  std::vector<float> x(4096);
  for (float& v : x) v = static_cast<float>(std::exp2(expo(rng)));
  int order_mattered = 0;
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 1 + rng() % 700;
    std::vector<uint32_t> ids(n);
    for (uint32_t& id : ids) id = static_cast<uint32_t>(rng() % x.size());
    LaneSum whole;
    whole.Add(x.data(), ids.data(), n);
    const double expect = whole.Take();
    // The association spelled out.
    double l[4] = {0, 0, 0, 0};
    const size_t q = n / 4 * 4;
    for (size_t i = 0; i < n; ++i) l[i < q ? i % 4 : 0] += x[ids[i]];
    ASSERT_EQ(expect, (l[0] + l[1]) + (l[2] + l[3])) << "n " << n;
    double chain = 0;
    for (uint32_t id : ids) chain += x[id];
    order_mattered += chain != expect;
    // Pieces of 16 and of 256 (the interleaved mode's and a packed block's), and of random
    // multiples of 4.
    for (size_t piece : {size_t{16}, size_t{256}, size_t{0}}) {
      LaneSum s;
      for (size_t i = 0; i < n;) {
        const size_t want = piece != 0 ? piece : 4 * (1 + rng() % 40);
        const size_t k = std::min(want, n - i);
        s.Add(x.data(), ids.data() + i, k);
        i += k;
      }
      ASSERT_EQ(s.Take(), expect) << "n " << n << " piece " << piece;
    }
    // The same arbitrary chunks twice (a streamed list, in either mode) give the same bits,
    // and Take starts the next list from zero.
    std::vector<size_t> cuts;
    for (size_t i = 0; i < n;) {
      const size_t k = std::min<size_t>(1 + rng() % 37, n - i);
      cuts.push_back(k);
      i += k;
    }
    LaneSum s1, s2;
    s2.Add(x.data(), ids.data(), n);
    s2.Take();
    for (LaneSum* s : {&s1, &s2}) {
      size_t i = 0;
      for (size_t k : cuts) {
        s->Add(x.data(), ids.data() + i, k);
        i += k;
      }
    }
    ASSERT_EQ(s1.Take(), s2.Take());
  }
  EXPECT_GT(order_mattered, 100);  // the data tells associations apart
}

TEST(Analytics, ThreadCounts) {
  for (GraphKind k : {GraphKind::kDirected, GraphKind::kUndirected}) {
    std::mt19937_64 rng(5);
    MapSnapshot g(k, /*weighted=*/true);
    g.set_chunk_size(3);
    FillKronecker(&g, 9, 8, rng);
    for (int threads : {1, 3, 8}) {
      SCOPED_TRACE(std::string(KindName(k)) + " threads " + std::to_string(threads));
      tbb::task_arena arena(threads);
      arena.execute([&] { CrossCheck(g, rng); });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Edge cases.

TEST(Analytics, LayoutCoversBoundInAlignedRanges) {
  std::mt19937_64 rng(7);
  MapSnapshot g(GraphKind::kDirected);
  FillKronecker(&g, 11, 4, rng);
  g.AddVertex(5000);  // a hole up to 5000
  Layout L;
  ASSERT_OK(BuildLayout(g, &L));
  ASSERT_FALSE(L.ranges.empty());
  EXPECT_EQ(0u, L.ranges.front().begin);
  EXPECT_EQ(g.VertexIdBound(), L.ranges.back().end);
  ASSERT_EQ(L.ranges.size(), L.range_edges.size());
  for (size_t i = 0; i < L.ranges.size(); ++i) {
    EXPECT_LT(L.ranges[i].begin, L.ranges[i].end);
    uint64_t edges = 0;
    for (VertexId v = L.ranges[i].begin; v < L.ranges[i].end; ++v) edges += L.out_degree[v];
    EXPECT_EQ(edges, L.range_edges[i]) << "range " << i;
    if (i > 0) {
      EXPECT_EQ(L.ranges[i - 1].end, L.ranges[i].begin);
    }
    if (i + 1 < L.ranges.size()) {
      EXPECT_EQ(0u, L.ranges[i].end % 64);
    }
  }
  EXPECT_EQ(g.NumVertices(), L.num_vertices);
  EXPECT_EQ(g.NumEdges(), L.num_out_edges);
  // Without per-vertex degrees (keep_degrees false; the bound, 5001, spans two blocks): the
  // same existence, ranges and counts, the visitor's offsets the same, and no degree array.
  std::vector<uint64_t> seen(g.VertexIdBound(), 0), seen_lean(g.VertexIdBound(), 0);
  auto counter = [](std::vector<uint64_t>* into) {
    return [into](VertexId u, const NeighborChunk& c, uint64_t offset) {
      EXPECT_EQ((*into)[u], offset) << "vertex " << u;
      (*into)[u] += c.size;
    };
  };
  g.set_chunk_size(5);
  Layout full, lean;
  ASSERT_OK(BuildLayout(g, &full, counter(&seen)));
  ASSERT_OK(BuildLayout(g, &lean, counter(&seen_lean), /*weights=*/false, /*block_done=*/nullptr,
                        /*keep_degrees=*/false));
  EXPECT_TRUE(lean.out_degree.empty());
  EXPECT_EQ(seen, seen_lean);
  for (VertexId v = 0; v < g.VertexIdBound(); ++v) ASSERT_EQ(seen[v], full.out_degree[v]) << v;
  EXPECT_TRUE(std::equal(full.exists.begin(), full.exists.end(), lean.exists.begin(), lean.exists.end()));
  ASSERT_EQ(full.ranges.size(), lean.ranges.size());
  for (size_t i = 0; i < full.ranges.size(); ++i) {
    EXPECT_EQ(full.ranges[i].begin, lean.ranges[i].begin);
    EXPECT_EQ(full.ranges[i].end, lean.ranges[i].end);
  }
  EXPECT_EQ(full.range_edges, lean.range_edges);
  EXPECT_EQ(full.num_vertices, lean.num_vertices);
  EXPECT_EQ(full.num_out_edges, lean.num_out_edges);
}

// ListCache gives the lists ScanRangeEach gives, whether every block, some (a budget that
// runs out: the rest streamed) or none is kept, lists collected during the layout's pass (out)
// or by its own pass (in); PageRank and BFS do not depend on it (PageRank to the last bit).
// ScanRangeSteps reads exactly the wanted existing vertices' lists without edges into deleted
// vertices, with their weights when asked; kNextVertex leaves a list after the piece that asked
// (pieces of at most 256 after the dangling filter, inside 300-edge chunks) and kStop ends the
// pass.
TEST(Analytics, ScanRangeStepsWantedPrefixesAndStop) {
  std::mt19937_64 rng(5);
  MapSnapshot g(GraphKind::kDirected, true);
  FillUniform(&g, 3000, 30000, rng);
  for (int i = 0; i < 2000; ++i) g.PutEdge(7, rng() % 3000, 0.25);
  Mutate(&g, 0.1, rng);  // deleted vertices: dangling edges into them
  g.set_chunk_size(300);
  Layout L;
  ASSERT_OK(BuildLayout(g, &L));
  ASSERT_TRUE(L.dangling);
  auto full = [&](VertexId u, std::vector<VertexId>* dst, std::vector<double>* w) {
    std::vector<VertexId> d;
    std::vector<double> x;
    ASSERT_OK(g.GetNeighbors(u, &d, &x));
    for (size_t i = 0; i < d.size(); ++i) {
      if (!L.exists[d[i]]) continue;
      dst->push_back(d[i]);
      w->push_back(x[i]);
    }
  };
  size_t cut = 0, whole = 0;
  for (bool weights : {false, true}) {
    for (VertexRange r : L.ranges) {
      std::map<VertexId, std::pair<std::vector<VertexId>, std::vector<double>>> got;
      ASSERT_OK(ScanRangeSteps(g, r, Direction::kOut, L, weights,
                               [](VertexId u) { return u % 3 != 0; },
                               [&](VertexId u, const VertexId* dst, const double* w, size_t n) {
        EXPECT_EQ(w != nullptr, weights);
        EXPECT_LE(n, 256u);
        auto& [d, x] = got[u];
        d.insert(d.end(), dst, dst + n);
        if (w) x.insert(x.end(), w, w + n);
        return d.size() >= 100 ? ScanStep::kNextVertex : ScanStep::kMore;
      }));
      for (VertexId u = r.begin; u < r.end; ++u) {
        std::vector<VertexId> want;
        std::vector<double> want_w;
        if (L.exists[u] && u % 3 != 0) full(u, &want, &want_w);
        auto it = got.find(u);
        if (want.empty()) {
          EXPECT_TRUE(it == got.end()) << u;
          continue;
        }
        ASSERT_TRUE(it != got.end()) << u;
        const auto& [d, x] = it->second;
        ASSERT_LE(d.size(), want.size()) << u;
        EXPECT_TRUE(std::equal(d.begin(), d.end(), want.begin())) << u;
        if (weights) {
          EXPECT_TRUE(std::equal(x.begin(), x.end(), want_w.begin())) << u;
        }
        if (d.size() < want.size()) {
          EXPECT_GE(d.size(), 100u) << u << ": left before asking";
          ++cut;
        } else {
          ++whole;
        }
      }
    }
  }
  EXPECT_GT(cut, 0u);
  EXPECT_GT(whole, 0u);
  // kStop at the first vertex >= half the bound: no vertex after it.
  const VertexId half = L.bound / 2;
  std::vector<VertexId> seen;
  VertexRange all{0, L.bound};
  ASSERT_OK(ScanRangeSteps(g, all, Direction::kOut, L, false, [](VertexId) { return true; },
                           [&](VertexId u, const VertexId*, const double*, size_t) {
    if (seen.empty() || seen.back() != u) seen.push_back(u);
    return u >= half ? ScanStep::kStop : ScanStep::kMore;
  }));
  ASSERT_FALSE(seen.empty());
  EXPECT_GE(seen.back(), half);
  for (size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_LT(seen[i], half);
}

// Pass over every range of L gives the store's lists in direction d: the same (u, v) pairs in
// the same order as ScanRangeEach.
void ExpectPassGivesStoreLists(const ListCache& cache, const Snapshot& g, const Layout& L,
                               Direction d) {
  std::vector<std::pair<VertexId, VertexId>> got, want;
  for (VertexRange r : L.ranges) {
    ASSERT_OK(cache.Pass(g, L, r, [&](VertexId u, const auto* src, size_t n) {
      for (size_t i = 0; i < n; ++i) got.emplace_back(u, src[i]);
    }));
    ASSERT_OK(ScanRangeEach(g, r, d, L, /*weights=*/false,
                            [&](VertexId u, VertexId v, double) { want.emplace_back(u, v); }));
  }
  EXPECT_EQ(want, got);
}

// Each vertex's list as PassInterleaved (8 at a time) gives it over every range of L.
std::map<VertexId, std::vector<VertexId>> InterleavedLists(const ListCache& cache,
                                                           const Snapshot& g, const Layout& L) {
  std::map<VertexId, std::vector<VertexId>> lists;
  for (VertexRange r : L.ranges) {
    Status s = cache.PassInterleaved(g, L, r, 8, [](const auto*, size_t) {},
                                     [&](VertexId u, const auto* src, size_t n) {
                                       for (size_t i = 0; i < n; ++i) lists[u].push_back(src[i]);
                                     });
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  return lists;
}

// u's list as the cache's Chunks gives it; *kept = whether it did (the list is kept).
std::vector<VertexId> ChunksOf(const ListCache& cache, VertexId u, bool* kept) {
  std::vector<VertexId> got;
  *kept = cache.Chunks(u, [&](const NeighborChunk& c) {
    got.insert(got.end(), c.dst, c.dst + c.size);
    return true;
  });
  return got;
}

// Builds L over g and fills `cache` as a kernel does: its out-lists collected from the
// layout's pass, other lists read by Complete.
Status FillCache(const Snapshot& g, ListCache* cache, Layout* L) {
  Status s = BuildLayout(g, L, [&](VertexId u, const NeighborChunk& c, uint64_t) {
    if (cache->direction() == Direction::kOut) cache->Collect(u, c);
  });
  return s.ok() ? cache->Complete(g, *L) : s;
}

// u's out-list: `deg` distinct neighbors other than u drawn from [lo, hi).
void AddHub(MapSnapshot* g, VertexId u, size_t deg, VertexId lo, VertexId hi,
            std::mt19937_64& rng) {
  std::set<VertexId> nb;
  while (nb.size() < deg) {
    const VertexId v = lo + rng() % (hi - lo);
    if (v != u) nb.insert(v);
  }
  for (VertexId v : nb) g->PutEdge(u, v, 1.0);
}

// A cache with long lists (ListCache, "Runs" and "Gap lists"; kept whole, `cache` filled over
// L) read every way gives g's out-lists: Pass widened (as the store's scan gives them),
// Pass<true> (long lists whole, read with ForEachId, and with ForEachChunk when they come as
// an IdEliasFano), PassInterleaved and Chunks (short lists after a long one in the same block
// included). *whole_calls: the lists Pass<true> gave whole as a `Whole`.
template <typename Whole>
void ExpectLongListsRead(const ListCache& cache, const Snapshot& g, const Layout& L,
                         size_t* whole_calls) {
  ExpectPassGivesStoreLists(cache, g, L, Direction::kOut);  // 32-bit IDs
  std::map<VertexId, std::vector<VertexId>> widened, whole;
  *whole_calls = 0;
  for (VertexRange r : L.ranges) {
    ASSERT_OK(cache.Pass(g, L, r, [&](VertexId u, const auto* src, size_t n) {
      for (size_t i = 0; i < n; ++i) widened[u].push_back(src[i]);
    }));
    ASSERT_OK(cache.Pass<true>(g, L, r, [&](VertexId u, auto src, size_t n) {
      size_t seen = 0;
      ForEachId(src, n, [&](VertexId v) {
        whole[u].push_back(v);
        ++seen;
      });
      EXPECT_EQ(seen, n) << u;
      if constexpr (std::is_same_v<decltype(src), IdEliasFano>) {  // ForEachChunk's pieces
        // (ForEachId decodes through ForEachChunk too; both are checked against the store by
        // `whole == widened` and Chunks below, which compare with the store's lists.)
        std::vector<VertexId> chunked;
        size_t pieces = 0;
        src.ForEachChunk(n, [&](const uint32_t* ids, size_t m) {
          EXPECT_TRUE(m == IdEliasFano::kChunk || chunked.size() + m == n) << u;
          chunked.insert(chunked.end(), ids, ids + m);
          ++pieces;
        });
        EXPECT_EQ(pieces, (n + IdEliasFano::kChunk - 1) / IdEliasFano::kChunk) << u;
        EXPECT_EQ(chunked, std::vector<VertexId>(whole[u].end() - n, whole[u].end())) << u;
      }
      *whole_calls += std::is_same_v<decltype(src), Whole>;
    }));
  }
  EXPECT_EQ(whole, widened);
  EXPECT_EQ(InterleavedLists(cache, g, L), widened);
  for (VertexId u = 0; u < L.bound; ++u) {
    std::vector<VertexId> want;
    std::vector<double> w;
    ASSERT_OK(g.GetNeighbors(u, &want, &w));
    if (want.empty()) continue;
    bool kept = false;
    ASSERT_EQ(ChunksOf(cache, u, &kept), want) << u;
    ASSERT_TRUE(kept) << u;
  }
}

// PageRank on g with its cache's packing allowed keeps `want_bytes` of lists (in the store's
// IDs: group_by_degree off) and gives the ranks of 4-byte IDs (packing kNever) to the bit,
// with the lists in the store's IDs and renumbered by degree group alike.
void ExpectPageRankAsPlainIds(const Snapshot& g, uint64_t want_bytes) {
  for (bool grouped : {false, true}) {
    SCOPED_TRACE(grouped ? "grouped" : "store IDs");
    PageRankParams p{0.85, 5};
    p.group_by_degree = grouped;
    std::vector<double> coded_ranks, plain_ranks;
    PageRankStats st;
    p.stats = &st;
    ASSERT_OK(PageRank(g, p, &coded_ranks));
    EXPECT_EQ(st.grouped,
              grouped && HasInEdges(g.kind()) && g.VertexIdBound() > DegreeGroups::kMinBound);
    if (!grouped) {
      EXPECT_EQ(st.cache_bytes, want_bytes);
    }
    p.packing = ListPacking::kNever;
    ASSERT_OK(PageRank(g, p, &plain_ranks));
    EXPECT_EQ(coded_ranks, plain_ranks);
  }
}

TEST(Analytics, ListCacheMatchesStreamedLists) {
  for (GraphKind kind : {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(99);
    MapSnapshot g(kind, false);
    FillUniform(&g, 20000, 100000, rng);  // 5 layout blocks
    Mutate(&g, 0.1, rng);                  // deleted vertices: dangling edges on kDirected
    std::vector<Direction> dirs = {Direction::kOut};
    if (HasInEdges(kind)) dirs.push_back(Direction::kIn);
    for (Direction dir : dirs) {
      for (size_t budget : {size_t{0}, size_t{300000}, size_t{1} << 30}) {
        ListCache cache(g, dir, budget);
        Layout L;
        ASSERT_OK(FillCache(g, &cache, &L));
        EXPECT_LE(cache.bytes(), budget);
        EXPECT_LE(cache.staged_peak(), budget);
        if (budget == 300000) {
          EXPECT_GT(cache.bytes(), 0u);
        }
        SCOPED_TRACE("dir " + std::to_string(static_cast<int>(dir)) + " budget " +
                     std::to_string(budget));
        ExpectPassGivesStoreLists(cache, g, L, dir);
      }
    }
    std::vector<double> p0, p1, p2;
    PageRankParams pp{0.85, 5};
    ASSERT_OK(PageRank(g, pp, &p0));
    pp.cache_bytes = 300000;
    ASSERT_OK(PageRank(g, pp, &p1));
    pp.cache_bytes = 0;
    ASSERT_OK(PageRank(g, pp, &p2));
    EXPECT_EQ(p2, p0);
    EXPECT_EQ(p2, p1);
    const VertexId src = MaxDegreeVertex(g);
    std::vector<int64_t> dref, d;
    ASSERT_OK(ReferenceBfs(g, src, &dref));
    for (size_t budget : {size_t{0}, size_t{300000}, size_t{1} << 30}) {
      BfsParams bp{src, 1 << 30, 1 << 30};  // bottom-up whenever in-edges exist
      bp.cache_bytes = budget;
      ASSERT_OK(Bfs(g, bp, &d));
      ASSERT_OK(CheckExact(dref, d, "BFS cache " + std::to_string(budget)));
    }
  }
}

// PageRank's list cache budget: by default sized from the machine when the run starts (a
// quarter of the available memory, at least 256 MiB), so a graph that fits keeps every list;
// an explicit budget is taken as given, 0 and a single iteration keep nothing; PageRankStats
// reports the budget, the bytes kept and the blocks streamed; the ranks never depend on it.
// kAutoCacheBytes is a value of every kernel's cache_bytes: ResolveCacheBytes turns it into a
// finite budget (the ListCache constructor and SSSP's split both go through it) and leaves a
// number as it is. An SSSP run with it gets the distances of its default budget. (Before the
// resolver SSSP split the sentinel itself and ran with a budget of nearly 2^64 bytes; on a
// graph this small that keeps the same lists, so the distances cannot tell the two apart:
// that SSSP goes through the resolver is not checked here, only that the resolver works and
// that SSSP accepts the value.)
TEST(Analytics, AutoCacheBytesResolvedForEveryKernel) {
  EXPECT_EQ(ResolveCacheBytes(0), 0u);
  EXPECT_EQ(ResolveCacheBytes(12345), 12345u);
  const size_t a = ResolveCacheBytes(kAutoCacheBytes);
  EXPECT_GE(a, size_t{256} << 20);
  EXPECT_LT(a, kAutoCacheBytes / 2);
  std::mt19937_64 rng(5);
  MapSnapshot g(GraphKind::kUndirected, true);
  FillUniform(&g, 2 * kLayoutBlock, 30000, rng);
  std::vector<double> want, got;
  ASSERT_OK(Sssp(g, {1}, &want));
  SsspParams p{1};
  p.cache_bytes = kAutoCacheBytes;
  ASSERT_OK(Sssp(g, p, &got));
  ASSERT_OK(CheckEpsilon(want, got, 0, "SSSP, automatic cache budget"));
}

#ifndef STRATA_NO_JEMALLOC
// A PageRank run leaves the pages of its list cache and arrays in the kernel arena for the
// next kernel (analytics/kernel_memory.h), and the next run takes them. It did not while each
// run's end purged the arena (jemalloc purges an arena when the last thread bound to it leaves
// it, and the run's result is made in a KernelArenaScope): nothing was kept but the arrays
// freed after the scope, and the second run faulted in as many pages as the first.
TEST(Analytics, PageRankLeavesItsPagesForTheNextRun) {
  std::mt19937_64 rng(29);
  MapSnapshot g(GraphKind::kUndirected, false);
  FillUniform(&g, 8 * kLayoutBlock, 200000, rng);
  PageRankParams p{0.85, 3};
  PageRankStats st;
  p.stats = &st;
  std::vector<double> r1, r2;
  KernelReleaseAll();
  ASSERT_OK(PageRank(g, p, &r1));
  ASSERT_GT(st.cache_bytes, size_t{1} << 20) << "too small a cache to tell";
  const KernelMemoryStats after = GetKernelMemoryStats();
  EXPECT_GE(after.retained, st.cache_bytes) << "the run's freed pages were returned";
  ASSERT_OK(PageRank(g, p, &r2));
  EXPECT_EQ(r1, r2);
  // The second run's arrays came from the kept pages: the arena grew by less than a cache.
  EXPECT_LT(GetKernelMemoryStats().resident, after.resident + st.cache_bytes / 2);
  KernelReleaseAll();
}
#endif

TEST(Analytics, PageRankCacheBudgetAndStats) {
  const size_t floor = size_t{256} << 20;
  const size_t avail = static_cast<size_t>(AvailableMemoryBytes());
  const size_t auto_bytes = AutoCacheBytes();
  EXPECT_GE(auto_bytes, floor);
  // MemAvailable moves while the test runs: within a tenth of the memory read here.
  EXPECT_GE(auto_bytes + avail / 40 + 1, avail / 4) << "avail " << avail;
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirected}) {  // pull, push
    std::mt19937_64 rng(23);
    MapSnapshot g(kind, false);
    FillUniform(&g, 3 * kLayoutBlock, 60000, rng);  // 3 layout blocks
    const uint64_t blocks = (g.VertexIdBound() + kLayoutBlock - 1) / kLayoutBlock;
    const std::string what = kind == GraphKind::kUndirected ? "undirected" : "directed";
    PageRankParams p{0.85, 5};
    EXPECT_EQ(p.cache_bytes, kAutoCacheBytes);
    PageRankStats st;
    p.stats = &st;
    std::vector<double> r_auto, r;
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_OK(PageRank(g, p, &r_auto));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(st.cache_budget, floor) << what;
    EXPECT_NE(st.cache_budget, kAutoCacheBytes) << what;
    EXPECT_GT(st.cache_bytes, 0u) << what;
    EXPECT_LE(st.cache_bytes, st.cache_budget) << what;
    EXPECT_EQ(st.streamed_blocks, 0u) << what;
    // The two phases' times are measured (a run that left them unset reads 0) and are
    // disjoint parts of the run.
    EXPECT_GT(st.prepare_seconds, 0.0) << what;
    EXPECT_GT(st.iterate_seconds, 0.0) << what;
    EXPECT_LE(st.prepare_seconds + st.iterate_seconds, wall) << what;
    // kAuto keeps lists that fit the budget unpacked, in 3-byte IDs; kNever in 4-byte ones;
    // kAlways packs every block into fewer bytes than 4-byte IDs. The same ranks each way.
    EXPECT_EQ(st.packed_blocks, 0u) << what;
    const size_t all = st.cache_bytes;  // unpacked, 3-byte IDs
    p.packing = ListPacking::kNever;
    st = PageRankStats();
    ASSERT_OK(PageRank(g, p, &r));
    EXPECT_EQ(r, r_auto) << what;
    const size_t all32 = st.cache_bytes;
    EXPECT_LT(all, all32) << what;
    EXPECT_EQ(st.packed_blocks, 0u) << what;
    p.packing = ListPacking::kAlways;
    st = PageRankStats();
    ASSERT_OK(PageRank(g, p, &r));
    EXPECT_EQ(r, r_auto) << what;
    EXPECT_EQ(st.streamed_blocks, 0u) << what;
    EXPECT_EQ(st.packed_blocks, blocks) << what;
    EXPECT_LT(st.cache_bytes, all32 * 3 / 4) << what;
    // A budget for about one block's unpacked lists: the rest streamed, the same ranks. (A
    // block is kept only if its unpacked lists fit the room left, so, packed or not, not all
    // three fit.) kAuto packs here: the lists cannot fit unpacked.
    for (ListPacking pack : {ListPacking::kNever, ListPacking::kAlways, ListPacking::kAuto}) {
      p.packing = pack;
      p.cache_bytes = all / 2;
      st = PageRankStats();
      ASSERT_OK(PageRank(g, p, &r));
      const std::string how = what + " packing " + std::to_string(static_cast<int>(pack));
      EXPECT_EQ(st.cache_budget, all / 2) << how;
      EXPECT_LE(st.cache_bytes, all / 2) << how;
      EXPECT_GT(st.cache_bytes, 0u) << how;
      EXPECT_GE(st.streamed_blocks, 1u) << how;
      EXPECT_LT(st.streamed_blocks, blocks) << how;
      EXPECT_EQ(r, r_auto) << how;
      if (pack == ListPacking::kNever) {
        EXPECT_EQ(st.packed_blocks, 0u) << how;
      } else {
        EXPECT_GE(st.packed_blocks, 1u) << how;
      }
    }
    p.packing = ListPacking::kAuto;
    p.cache_bytes = 0;
    st = PageRankStats();
    ASSERT_OK(PageRank(g, p, &r));
    EXPECT_EQ(st.cache_budget, 0u) << what;
    EXPECT_EQ(st.cache_bytes, 0u) << what;
    EXPECT_EQ(st.streamed_blocks, blocks) << what;
    EXPECT_EQ(r, r_auto) << what;
    // One iteration reads each list once: nothing is kept, whatever the budget.
    p.cache_bytes = kAutoCacheBytes;
    p.iterations = 1;
    st = PageRankStats();
    ASSERT_OK(PageRank(g, p, &r));
    EXPECT_EQ(st.cache_budget, 0u) << what;
    EXPECT_EQ(st.cache_bytes, 0u) << what;
  }
}

// Each block's lists are gathered in its thread's stage and moved into a vector of the exact
// size, so a cache holds its heads and entries and no growth slack; the in-lists of a
// kDirectedWithInEdges store are read by Complete's own pass, the out-lists collected.
TEST(Analytics, ListCacheBlocksHoldNoGrowthSlack) {
  for (Direction dir : {Direction::kOut, Direction::kIn}) {
    std::mt19937_64 rng(7);
    MapSnapshot g(GraphKind::kDirectedWithInEdges, false);
    FillUniform(&g, 20000, 150000, rng);  // 5 layout blocks
    ListCache cache(g, dir, size_t{1} << 30);
    Layout L;
    ASSERT_OK(FillCache(g, &cache, &L));
    uint64_t entries = 0;
    std::set<VertexId> blocks;
    for (VertexId u = 0; u < L.bound; ++u) {
      const uint64_t n = g.Degree(u, dir);
      entries += n;
      if (n > 0) blocks.insert(u / kLayoutBlock);
    }
    EXPECT_EQ(cache.bytes(), blocks.size() * (kLayoutBlock + 1) * 4 + entries * 4)
        << "dir " << static_cast<int>(dir);
  }
}

// Three-byte IDs: with packing allowed (kAuto) and a bound under 2^24, a block that is not
// packed keeps 3 bytes an entry instead of 4, and every read gives what the store gives: Pass,
// PassInterleaved (each vertex's pieces in order), Chunks; List, which hands out 32-bit
// arrays, refuses those blocks. IDs up to ~300,000 fill the third byte.
TEST(Analytics, ListCacheThreeByteIds) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirected}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(31);
    MapSnapshot g(kind, false);
    FillUniform(&g, 300000, 200000, rng);  // 74 layout blocks
    Mutate(&g, 0.1, rng);                   // deleted vertices: dangling edges on kDirected
    uint64_t entries = 0;
    std::set<VertexId> blocks;
    for (ListPacking pack : {ListPacking::kNever, ListPacking::kAuto}) {
      ListCache cache(g, Direction::kOut, size_t{1} << 30, false, pack);
      Layout L;
      ASSERT_OK(FillCache(g, &cache, &L));
      EXPECT_EQ(cache.packed_blocks(), 0u);
      EXPECT_EQ(cache.dropped_blocks(), 0u);
      if (pack == ListPacking::kNever) {
        for (VertexId u = 0; u < L.bound; ++u) {
          const uint64_t n = g.Degree(u, Direction::kOut);
          entries += n;
          if (n > 0) blocks.insert(u / kLayoutBlock);
        }
        EXPECT_EQ(cache.bytes(), blocks.size() * (kLayoutBlock + 1) * 4 + entries * 4);
      } else {  // heads as before; entries at 3 bytes, and a pad byte per block
        EXPECT_EQ(cache.bytes(),
                  blocks.size() * ((kLayoutBlock + 1) * 4 + 1) + entries * 3);
      }
      ExpectPassGivesStoreLists(cache, g, L, Direction::kOut);
      std::map<VertexId, std::vector<VertexId>> pass;
      for (VertexRange r : L.ranges) {
        ASSERT_OK(cache.Pass(g, L, r, [&](VertexId u, const auto* src, size_t n) {
          for (size_t i = 0; i < n; ++i) pass[u].push_back(src[i]);
        }));
      }
      EXPECT_EQ(InterleavedLists(cache, g, L), pass);
      size_t checked = 0;
      for (VertexId u = 0; u < L.bound; u += 97) {
        std::vector<VertexId> want;
        std::vector<double> w;
        ASSERT_OK(g.GetNeighbors(u, &want, &w));
        if (want.empty()) continue;
        bool kept = false;
        EXPECT_EQ(ChunksOf(cache, u, &kept), want) << u;
        EXPECT_TRUE(kept) << u;
        ListCache::Span span;
        EXPECT_EQ(cache.List(u, &span), pack == ListPacking::kNever) << u;
        ++checked;
      }
      EXPECT_GT(checked, 100u);
    }
  }
}

// Runs (ListCache, "Runs"): in a 3-byte block, lists of at least kRunList IDs that pay for it
// are kept as runs of IDs sharing their bits above the low 16. The cache's bytes equal the
// arithmetic from the store's lists (heads; per block 3 bytes an entry of the other lists and a
// pad byte; per long list 4 + 4 per run + 2 per entry, and 6 of index); Pass (widened) and
// Pass<true> (a whole list as Id16Runs, read with ForEachId) give the store's lists;
// PassInterleaved and Chunks give them too (short lists after a long one in
// the same block included); PageRank's ranks are the same to the bit as with 4-byte IDs, pull
// and push. Bound ~300,000: IDs in five high parts. Hubs: long lists spanning every part, one
// within a single part, one of exactly kRunList entries and one of kRunList - 1.
TEST(Analytics, ListCacheLongListsAsRuns) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirected}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(41);
    MapSnapshot g(kind, false);
    constexpr uint64_t kN = 300000;
    FillUniform(&g, kN, 100000, rng);
    auto hub = [&](VertexId u, size_t deg, VertexId lo, VertexId hi) {
      AddHub(&g, u, deg, lo, hi, rng);
    };
    for (int i = 0; i < 40; ++i) hub(rng() % kN, 300 + rng() % 3000, 0, kN);
    hub(5000, 2000, 131072, 131072 + 65536);  // one high part
    hub(5001, ListCache::kRunList, 0, kN);
    hub(5002, ListCache::kRunList - 1, 0, kN);
    if (kind == GraphKind::kDirected) Mutate(&g, 0.05, rng);  // dangling edges
    // The arithmetic: which out-lists are long (>= kRunList, and smaller as runs).
    std::map<uint64_t, uint64_t> block_bytes;  // per block with any entry
    uint64_t long_lists = 0;
    for (VertexId u = 0; u < g.VertexIdBound(); ++u) {
      std::vector<VertexId> nb;
      std::vector<double> w;
      ASSERT_OK(g.GetNeighbors(u, &nb, &w));
      if (nb.empty()) continue;
      uint64_t& bytes = block_bytes[u / kLayoutBlock];
      size_t runs = 1;
      for (size_t k = 1; k < nb.size(); ++k) runs += (nb[k] >> 16) != (nb[k - 1] >> 16);
      const uint64_t as_runs = 4 + 4 * runs + 2 * nb.size() + 6;
      if (nb.size() >= ListCache::kRunList && as_runs < 3 * nb.size()) {
        bytes += as_runs;
        ++long_lists;
      } else {
        bytes += 3 * nb.size();
      }
    }
    ASSERT_GE(long_lists, 30u);
    uint64_t want_bytes = 0;
    for (const auto& [bi, b] : block_bytes) want_bytes += (kLayoutBlock + 1) * 4 + 1 + b;
    ListCache cache(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kAuto);
    EXPECT_FALSE(cache.gap_lists());  // bound ~300,000: runs
    Layout L;
    ASSERT_OK(FillCache(g, &cache, &L));
    EXPECT_EQ(cache.packed_blocks(), 0u);
    EXPECT_EQ(cache.dropped_blocks(), 0u);
    EXPECT_EQ(cache.bytes(), want_bytes);
    size_t whole_calls = 0;
    ExpectLongListsRead<Id16Runs>(cache, g, L, &whole_calls);
    // kDirected's dangling edges make every list go through the widened, filtered path.
    EXPECT_EQ(whole_calls, kind == GraphKind::kUndirected ? long_lists : 0u);
    ExpectPageRankAsPlainIds(g, want_bytes);
  }
}

// DegreeGroups (analytics/degree_groups.h): on a Kronecker graph with absent vertices and a
// bound that ends within a word of the map, New is a bijection onto [0, bound); group k's IDs
// are [first(k), first(k + 1)); each vertex is in the group its degree gives by the definition
// (thresholds avg * 2^(kGroups - 2 - k), avg over existing vertices), and within a group new
// IDs follow old ones. OrderList puts a renumbered ascending list in ascending order, short
// and long alike, and leaves an ascending list as it is.
TEST(DegreeGroups, ByDegreeKeepingOrderWithinAGroup) {
  std::mt19937_64 rng(7);
  MapSnapshot g(GraphKind::kUndirected, false);
  FillKronecker(&g, 12, 8, rng);
  Mutate(&g, 0.05, rng);
  // A bound past a whole 64-vertex word of the map, and a gap of absent IDs before it.
  g.PutEdge(4096 + 100, 3);
  g.PutEdge(4096 + 101, 5);
  ASSERT_EQ(g.VertexIdBound() % 64, 38u);
  DegreeGroups groups;
  ASSERT_OK(groups.Build(g, Direction::kOut));
  const VertexId bound = g.VertexIdBound();
  ASSERT_EQ(groups.bound(), bound);
  std::vector<uint64_t> deg(bound, 0);
  uint64_t sum = 0, present = 0;
  for (VertexId u = 0; u < bound; ++u) {
    if (!g.HasVertex(u)) continue;
    std::vector<VertexId> nb;
    std::vector<double> w;
    ASSERT_OK(g.GetNeighbors(u, &nb, &w));
    deg[u] = nb.size();
    sum += nb.size();
    ++present;
  }
  const double avg = std::max(1.0, static_cast<double>(sum) / static_cast<double>(present));
  auto want_group = [&](uint64_t d) {
    for (int k = 0; k < DegreeGroups::kGroups - 1; ++k) {
      if (static_cast<double>(d) >= std::floor(avg * std::ldexp(1.0, DegreeGroups::kGroups - 2 - k))) return k;
    }
    return DegreeGroups::kGroups - 1;
  };
  EXPECT_EQ(groups.first(0), 0u);
  EXPECT_EQ(groups.first(DegreeGroups::kGroups), bound);
  std::vector<bool> seen(bound, false);
  std::vector<int64_t> last_new(DegreeGroups::kGroups, -1);
  std::vector<uint64_t> per_group(DegreeGroups::kGroups, 0);
  for (VertexId u = 0; u < bound; ++u) {
    const uint32_t x = groups.New(u);
    ASSERT_LT(x, bound);
    ASSERT_FALSE(seen[x]) << "new ID " << x << " given twice";
    seen[x] = true;
    const int k = want_group(deg[u]);
    ASSERT_GE(x, groups.first(k)) << "vertex " << u << " of degree " << deg[u];
    ASSERT_LT(x, groups.first(k + 1)) << "vertex " << u << " of degree " << deg[u];
    ASSERT_GT(static_cast<int64_t>(x), last_new[k]) << "group " << k << " out of order at " << u;
    last_new[k] = x;
    ++per_group[k];
  }
  // A skewed graph fills the top groups sparsely and the last ones densely.
  EXPECT_GT(per_group[0], 0u);
  EXPECT_GT(per_group[DegreeGroups::kGroups - 1], per_group[0]);
  // OrderList over every renumbered list (many short, some past 32 entries).
  std::vector<uint32_t> scratch;
  size_t long_lists = 0;
  for (VertexId u = 0; u < bound; ++u) {
    std::vector<VertexId> nb;
    std::vector<double> w;
    ASSERT_OK(g.GetNeighbors(u, &nb, &w));
    std::vector<uint32_t> ids(nb.size());
    groups.Renumber(nb.data(), nb.size(), ids.data());
    std::vector<uint32_t> want = ids;
    std::sort(want.begin(), want.end());
    groups.OrderList(ids.data(), ids.size(), &scratch);
    ASSERT_EQ(ids, want) << "vertex " << u;
    groups.OrderList(ids.data(), ids.size(), &scratch);
    ASSERT_EQ(ids, want) << "vertex " << u << ", ordered twice";
    long_lists += nb.size() > 32;
  }
  EXPECT_GT(long_lists, 20u);
}

// DegreeGroups::Cursors and groups(), before and after DropMap, over IDs spread across three
// of Build's 64-Ki-vertex slices: walking u upwards from any start, cur[groups()[u]]++ is
// New(u) (a start inside a slice, at its first vertex, at the bound, and at a bound that ends
// a slice).
TEST(DegreeGroups, CursorsGiveTheNewIdsInAscendingOrder) {
  std::mt19937_64 rng(11);
  MapSnapshot g(GraphKind::kUndirected, false);
  std::uniform_int_distribution<VertexId> id(0, 150000);
  for (int i = 0; i < 20000; ++i) g.PutEdge(id(rng), id(rng));
  for (int i = 0; i < 300; ++i) g.PutEdge(70000, id(rng));  // a hub past the first slice
  g.PutEdge(150001, 150002);  // bound 150003: the last slice ends within a word
  DegreeGroups groups;
  ASSERT_OK(groups.Build(g, Direction::kOut));
  const VertexId bound = g.VertexIdBound();
  ASSERT_EQ(groups.bound(), bound);
  std::vector<uint32_t> want_new(bound);
  for (VertexId u = 0; u < bound; ++u) {
    want_new[u] = groups.New(u);
    const int k = groups.groups()[u];
    ASSERT_GE(want_new[u], groups.first(k)) << "vertex " << u;
    ASSERT_LT(want_new[u], groups.first(k + 1)) << "vertex " << u;
  }
  EXPECT_LT(groups.New(70000), groups.first(1)) << "the hub is in the first group";
  for (bool dropped : {false, true}) {
    if (dropped) {
      groups.DropMap();
      EXPECT_FALSE(groups.has_map());
    }
    for (VertexId begin : {VertexId{0}, VertexId{1}, VertexId{12345}, VertexId{65536},
                           VertexId{65537}, VertexId{131072}, VertexId{140000}, bound - 1, bound}) {
      uint32_t cur[DegreeGroups::kGroups];
      groups.Cursors(begin, cur);
      for (VertexId u = begin; u < bound; ++u) {
        ASSERT_EQ(cur[groups.groups()[u]]++, want_new[u]) << "from " << begin << " at " << u;
      }
      for (int k = 0; k < DegreeGroups::kGroups; ++k) {
        EXPECT_EQ(cur[k], groups.first(k + 1)) << "from " << begin << ", group " << k;
      }
    }
  }
  // A bound that ends a slice exactly: Cursors at the bound gives every group's end.
  MapSnapshot h(GraphKind::kUndirected, false);
  for (int i = 0; i < 3000; ++i) h.PutEdge(id(rng) % 65536, id(rng) % 65536);
  h.PutEdge(65535, 1);
  DegreeGroups at_end;
  ASSERT_OK(at_end.Build(h, Direction::kOut));
  ASSERT_EQ(at_end.bound(), 65536u);
  uint32_t cur[DegreeGroups::kGroups];
  at_end.Cursors(65536, cur);
  for (int k = 0; k < DegreeGroups::kGroups; ++k) EXPECT_EQ(cur[k], at_end.first(k + 1)) << k;
}

// A cache renumbered by degree groups (ListCache, "Renumbered lists") gives every list as
// the store's list renumbered and sorted, whichever way it keeps it: plain, 3-byte IDs, runs
// or Elias-Fano records, packed, or streamed (budgets of nothing, a few blocks, everything);
// through Pass, Pass<true> and PassInterleaved. Chunks, List and Head serve nothing.
TEST(Analytics, ListCacheRenumberedByDegreeGroups) {
  std::mt19937_64 rng(43);
  MapSnapshot g(GraphKind::kUndirected, false);
  constexpr uint64_t kN = 20000;
  FillUniform(&g, kN, 60000, rng);
  for (int i = 0; i < 12; ++i) AddHub(&g, rng() % kN, 300 + rng() % 2000, 0, kN, rng);
  DegreeGroups groups;
  ASSERT_OK(groups.Build(g, Direction::kOut));
  std::map<VertexId, std::vector<VertexId>> want;
  for (VertexId u = 0; u < g.VertexIdBound(); ++u) {
    std::vector<VertexId> nb;
    std::vector<double> w;
    ASSERT_OK(g.GetNeighbors(u, &nb, &w));
    if (nb.empty()) continue;
    for (VertexId& v : nb) v = groups.New(v);
    std::sort(nb.begin(), nb.end());
    want[u] = nb;
  }
  struct Setting {
    size_t budget;
    ListPacking packing;
    ListCache::LongLists long_lists;
  };
  for (Setting s : {Setting{0, ListPacking::kAuto, ListCache::LongLists::kAuto},
                    Setting{60000, ListPacking::kAuto, ListCache::LongLists::kAuto},
                    Setting{size_t{1} << 30, ListPacking::kNever, ListCache::LongLists::kAuto},
                    Setting{size_t{1} << 30, ListPacking::kAlways, ListCache::LongLists::kAuto},
                    Setting{size_t{1} << 30, ListPacking::kAuto, ListCache::LongLists::kRuns},
                    Setting{size_t{1} << 30, ListPacking::kAuto, ListCache::LongLists::kGaps}}) {
    SCOPED_TRACE(testing::Message() << "budget " << s.budget << " packing "
                                    << static_cast<int>(s.packing) << " long lists "
                                    << static_cast<int>(s.long_lists));
    ListCache cache(g, Direction::kOut, s.budget, false, s.packing);
    cache.set_long_lists(s.long_lists);
    ASSERT_TRUE(cache.set_groups(&groups));
    Layout L;
    ASSERT_OK(FillCache(g, &cache, &L));
    std::map<VertexId, std::vector<VertexId>> widened, whole;
    for (VertexRange r : L.ranges) {
      ASSERT_OK(cache.Pass(g, L, r, [&](VertexId u, const auto* src, size_t n) {
        for (size_t i = 0; i < n; ++i) widened[u].push_back(src[i]);
      }));
      ASSERT_OK(cache.Pass<true>(g, L, r, [&](VertexId u, auto src, size_t n) {
        ForEachId(src, n, [&](VertexId v) { whole[u].push_back(v); });
      }));
    }
    EXPECT_EQ(widened, want);
    EXPECT_EQ(whole, want);
    EXPECT_EQ(InterleavedLists(cache, g, L), want);
    bool kept = true;
    EXPECT_TRUE(ChunksOf(cache, want.begin()->first, &kept).empty());
    EXPECT_FALSE(kept);
    ListCache::Span span;
    EXPECT_FALSE(cache.List(want.begin()->first, &span));
    EXPECT_EQ(cache.Head(want.begin()->first), nullptr);
    if (s.budget == 60000) {
      EXPECT_GT(cache.dropped_blocks(), 0u);
    } else if (s.budget == (size_t{1} << 30)) {
      EXPECT_EQ(cache.dropped_blocks(), 0u);
    }
    if (s.packing == ListPacking::kAlways) {
      EXPECT_GT(cache.packed_blocks(), 0u);
    }
  }
  // Lists appended to a block's own vectors, not staged: collected on a thread outside any
  // task arena, which gets no stage (packing never, so the blocks stay plain and Close
  // orders them).
  {
    ListCache cache(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kNever);
    ASSERT_TRUE(cache.set_groups(&groups));
    Layout L;
    ASSERT_OK(BuildLayout(g, &L));
    std::thread outside([&] {
      for (const auto& [u, store_list] : want) {
        std::vector<VertexId> nb;
        std::vector<double> w;
        ASSERT_OK(g.GetNeighbors(u, &nb, &w));
        for (size_t at = 0; at < nb.size(); at += 100) {  // chunks of up to 100
          const size_t n = std::min<size_t>(100, nb.size() - at);
          cache.Collect(u, NeighborChunk{nb.data() + at, nullptr, n});
        }
      }
    });
    outside.join();
    ASSERT_OK(cache.Complete(g, L));
    EXPECT_EQ(cache.staged_peak(), 0u);  // no stage held them
    EXPECT_EQ(cache.dropped_blocks(), 0u);
    std::map<VertexId, std::vector<VertexId>> got;
    for (VertexRange r : L.ranges) {
      ASSERT_OK(cache.Pass(g, L, r, [&](VertexId u, const auto* src, size_t n) {
        for (size_t i = 0; i < n; ++i) got[u].push_back(src[i]);
      }));
    }
    EXPECT_EQ(got, want);
  }
  // Weighted lists are not renumbered.
  MapSnapshot gw(GraphKind::kUndirected, true);
  gw.AddVertex(kN - 1);
  ListCache wcache(gw, Direction::kOut, size_t{1} << 30, /*keep_weights=*/true);
  EXPECT_FALSE(wcache.set_groups(&groups));
}

// PageRank past DegreeGroups::kMinBound (IDs spread up to 2^22, a skewed graph, both pull
// kinds): grouped by degree it gives the sequential oracle's ranks, and those of a run in the
// store's IDs to 1e-6 relatively; grouped, the same ranks to the last bit whether its lists
// are kept, packed or streamed, and with the lists interleaved.
TEST(Analytics, PageRankGroupedByDegreePastTheMinimumBound) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(5);
    MapSnapshot g(kind, false);
    // A Kronecker graph of scale 13 with its IDs moved to random places below 2^22.
    MapSnapshot k(kind, false);
    FillKronecker(&k, 13, 8, rng);
    std::vector<VertexId> place;
    std::set<VertexId> used;
    while (place.size() < k.VertexIdBound()) {
      const VertexId v = rng() % (VertexId{1} << 22);
      if (used.insert(v).second) place.push_back(v);
    }
    for (VertexId u = 0; u < k.VertexIdBound(); ++u) {
      g.AddVertex(place[u]);
      std::vector<VertexId> nb;
      std::vector<double> w;
      ASSERT_OK(k.GetNeighbors(u, &nb, &w));
      for (VertexId v : nb) g.PutEdge(place[u], place[v], 1.0);
    }
    ASSERT_GT(g.VertexIdBound(), DegreeGroups::kMinBound);
    PageRankParams p{0.85, 12};
    p.group_by_degree = true;
    PageRankStats st;
    p.stats = &st;
    std::vector<double> grouped, plain, oracle;
    ASSERT_OK(PageRank(g, p, &grouped));
    EXPECT_TRUE(st.grouped);
    ASSERT_OK(ReferencePageRank(g, p, &oracle));
    PageRankParams q = p;
    q.group_by_degree = false;
    ASSERT_OK(PageRank(g, q, &plain));
    EXPECT_FALSE(st.grouped);
    ASSERT_EQ(grouped.size(), plain.size());
    ASSERT_EQ(grouped.size(), oracle.size());
    for (size_t v = 0; v < grouped.size(); ++v) {
      ASSERT_NEAR(grouped[v], plain[v], 1e-6 * plain[v]) << v;
      ASSERT_NEAR(grouped[v], oracle[v], 1e-5 * oracle[v] + 1e-15) << v;
    }
    struct Variant {
      const char* name;
      size_t cache_bytes;
      ListPacking packing;
      size_t interleave;
    };
    for (Variant x : {Variant{"streamed", 0, ListPacking::kAuto, 1},
                      Variant{"partly kept", 200000, ListPacking::kAuto, 1},
                      Variant{"packed", kAutoCacheBytes, ListPacking::kAlways, 1},
                      Variant{"plain IDs", kAutoCacheBytes, ListPacking::kNever, 1},
                      Variant{"interleaved", kAutoCacheBytes, ListPacking::kAuto, 8}}) {
      SCOPED_TRACE(x.name);
      PageRankParams r = p;
      r.cache_bytes = x.cache_bytes;
      r.packing = x.packing;
      r.interleave = x.interleave;
      std::vector<double> got;
      ASSERT_OK(PageRank(g, r, &got));
      EXPECT_TRUE(st.grouped);
      EXPECT_EQ(got, grouped);
    }
  }
}

// Gap lists (ListCache, "Gap lists"): in a 3-byte block past kGapBound, lists of at least
// kGapList ascending IDs that pay for it are kept as Elias-Fano records. The cache's bytes
// equal the arithmetic from the store's lists (heads; per block 3 bytes an entry of the other
// lists and a pad byte, and 8 bytes of tail when it has a long list; per long list its
// record, sized here from the definition: a width byte, l = the largest width with n * 2^l <=
// last + 1, n * l bits of low parts, n + (last >> l) + 1 bits of high parts, each rounded up
// to whole bytes; and 6 of index); every reader gives the store's lists (ExpectLongListsRead,
// a whole list as an IdEliasFano); PageRank's ranks are the same to the bit as with 4-byte IDs,
// pull and push. IDs up to ~300,000, and one edge past kGapBound, so that the bound makes
// kAuto choose Elias-Fano (a cache told kRuns keeps runs instead: other bytes, the same
// lists). Hand-made lists: IDs in a window far from 0; exactly kGapList and one less; IDs from
// 0 with a gap past 65535; a dense list (width 0: the low parts take no byte); a list whose
// last ID is past 2^21 (a width of 15); a list a third of whose IDs are in part 0 (the
// partitioned form, with a bitmap part, sized from its definition too).
TEST(Analytics, ListCacheLongListsAsGaps) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirected}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(41);
    MapSnapshot g(kind, false);
    constexpr uint64_t kN = 300000;
    FillUniform(&g, kN, 100000, rng);
    auto hub = [&](VertexId u, size_t deg, VertexId lo, VertexId hi) {
      AddHub(&g, u, deg, lo, hi, rng);
    };
    auto put = [&](VertexId u, const std::vector<VertexId>& nb) {
      for (VertexId v : nb) g.PutEdge(u, v, 1.0);
    };
    auto dense = [](VertexId from, size_t n, std::vector<VertexId>* out) {
      for (size_t i = 0; i < n; ++i) out->push_back(from + i);
    };
    const VertexId far = ListCache::kGapBound + 10;  // the bound past kGapBound
    for (int i = 0; i < 40; ++i) hub(rng() % kN, 300 + rng() % 3000, 0, kN);
    // Past kN: lists of exactly the neighbors given (no other list names these vertices).
    hub(kN, 2000, 131072, 131072 + 65536);
    hub(kN + 1, ListCache::kGapList, 0, kN);
    hub(kN + 2, ListCache::kGapList - 1, 0, kN);
    std::vector<VertexId> made;
    dense(0, 200, &made);
    made.push_back(70000 + 65535 + 65536);
    dense(70000 + 65535 + 65536 + 1, 200, &made);
    made.push_back(kN - 1);
    put(kN + 3, made);
    made.clear();
    dense(0, 100, &made);  // 100 IDs in 100: width 0
    put(kN + 4, made);
    made.clear();
    dense(5000, ListCache::kGapList - 1, &made);
    made.push_back(far - 2);  // 64 * 2^15 <= far - 1 < 64 * 2^16
    put(kN + 5, made);
    made.clear();
    // Partitioned (elias_fano.h): 87,000 IDs in part 0 (a bitmap: 32 KiB, against ~40.5 KB
    // for the whole list plain) and one in part 1.
    for (VertexId v = 0; v < 261000; v += 3) made.push_back(v);
    made.push_back(kN - 1);
    put(kN + 6, made);
    if (kind == GraphKind::kDirected) Mutate(&g, 0.05, rng);  // dangling edges
    g.PutEdge(far, far + 1, 1.0);
    // The arithmetic: which out-lists are long (>= kGapList, smaller as Elias-Fano).
    std::map<uint64_t, uint64_t> block_bytes;  // per block with any entry
    std::set<uint64_t> blocks_with_long;
    uint64_t long_lists = 0;
    std::set<VertexId> long_set;
    std::map<VertexId, unsigned> width_of;
    std::set<VertexId> parted_set;  // the long lists kept partitioned
    for (VertexId u = 0; u < g.VertexIdBound(); ++u) {
      std::vector<VertexId> nb;
      std::vector<double> w;
      ASSERT_OK(g.GetNeighbors(u, &nb, &w));
      if (nb.empty()) continue;
      uint64_t& bytes = block_bytes[u / kLayoutBlock];
      const uint64_t n = nb.size(), last = nb.back();
      unsigned l = 0;
      while (n * (uint64_t{2} << l) <= last + 1) ++l;
      const uint64_t plain = 1 + (n * l + 7) / 8 + (n + (last >> l) + 1 + 7) / 8;
      // The partitioned form: parts of 2^18 IDs, each the smaller of a 32-KiB bitmap and an
      // Elias-Fano payload for U = 2^18, and a 4-byte directory word; 3 bytes of head and 8
      // of padding; kept when it is more than 16 bytes a part smaller than the plain form.
      std::map<uint64_t, uint64_t> parts;
      for (VertexId v : nb) ++parts[v >> 18];
      uint64_t parted = 3 + 8;
      for (const auto& [part, c] : parts) {
        unsigned pl = 0;
        while (c * (uint64_t{2} << pl) <= (uint64_t{1} << 18)) ++pl;
        parted += 4 + std::min<uint64_t>(32768, (c * pl + 7) / 8 +
                                                    (c + (((uint64_t{1} << 18) - 1) >> pl) + 1 + 7) / 8);
      }
      const bool use_parted = parted + 16 * parts.size() < plain;
      const uint64_t as_ef = (use_parted ? parted : plain) + 6;
      if (n >= ListCache::kGapList && as_ef < 3 * n) {
        bytes += as_ef;
        ++long_lists;
        long_set.insert(u);
        width_of[u] = l;
        if (use_parted) parted_set.insert(u);
        blocks_with_long.insert(u / kLayoutBlock);
      } else {
        bytes += 3 * n;
      }
    }
    ASSERT_GE(long_lists, 30u);
    // (kDirected: Mutate deletes vertices and edges, the hand-made lists' among them.)
    if (kind == GraphKind::kUndirected) {  // the hand-made lists are as their comments say
      for (VertexId u : {kN, kN + 1, kN + 3, kN + 4, kN + 5}) EXPECT_TRUE(long_set.count(u)) << u;
      EXPECT_FALSE(long_set.count(kN + 2));
      EXPECT_EQ(width_of[kN + 4], 0u);
      EXPECT_EQ(width_of[kN + 5], 15u);
      EXPECT_TRUE(parted_set.count(kN + 6));
      EXPECT_FALSE(parted_set.count(kN + 3));
    }
    uint64_t want_bytes = 0;
    for (const auto& [bi, b] : block_bytes) {
      want_bytes += (kLayoutBlock + 1) * 4 + 1 + b + (blocks_with_long.count(bi) ? 8 : 0);
    }
    ListCache cache(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kAuto);
    EXPECT_TRUE(cache.gap_lists());
    Layout L;
    ASSERT_OK(FillCache(g, &cache, &L));
    EXPECT_EQ(cache.packed_blocks(), 0u);
    EXPECT_EQ(cache.dropped_blocks(), 0u);
    EXPECT_EQ(cache.bytes(), want_bytes);
    size_t whole_calls = 0;
    ExpectLongListsRead<IdEliasFano>(cache, g, L, &whole_calls);
    // kDirected's dangling edges make every list go through the widened, filtered path.
    EXPECT_EQ(whole_calls, kind == GraphKind::kUndirected ? long_lists : 0u);
    {  // The same bound with runs asked for: other bytes, the same lists, read every way.
      ListCache runs(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kAuto);
      runs.set_long_lists(ListCache::LongLists::kRuns);
      EXPECT_FALSE(runs.gap_lists());
      Layout L2;
      ASSERT_OK(FillCache(g, &runs, &L2));
      EXPECT_NE(runs.bytes(), want_bytes);
      size_t runs_calls = 0;
      ExpectLongListsRead<Id16Runs>(runs, g, L2, &runs_calls);
      if (kind == GraphKind::kUndirected) {
        EXPECT_GT(runs_calls, 0u);
      }
    }
    ExpectPageRankAsPlainIds(g, want_bytes);
  }
}

// Collect's stages (one per arena thread, a block's entries moved into exact vectors when its
// thread starts another block): a thread that leaves a block and comes back to it (the rest
// of the block goes to the block's own vectors), a thread outside any arena (no stage), and
// budgets that drop blocks while staged or when moved all give the lists the store gives,
// and no stage holds more than the budget.
TEST(Analytics, ListCacheStagesAreMovedWhereverCollectGoes) {
  std::mt19937_64 rng(17);
  MapSnapshot g(GraphKind::kUndirected, false);
  FillUniform(&g, 5 * kLayoutBlock, 120000, rng);  // 5 layout blocks
  g.set_chunk_size(100);                            // several chunks for a long list
  Layout L;
  ASSERT_OK(BuildLayout(g, &L));
  auto collect = [&](ListCache* cache, VertexId lo, VertexId hi) {
    for (VertexId u = lo; u < hi; ++u) {
      if (!L.exists[u]) continue;
      ASSERT_OK(g.ScanNeighbors(u, Direction::kOut, [&](const NeighborChunk& c) {
        cache->Collect(u, c);
        return true;
      }));
    }
  };
  std::vector<std::pair<VertexId, VertexId>> want;
  for (VertexRange r : L.ranges) {
    ASSERT_OK(ScanRangeEach(g, r, Direction::kOut, L, /*weights=*/false,
                            [&](VertexId u, VertexId v, double) { want.emplace_back(u, v); }));
  }
  const uint64_t entries = want.size();
  const size_t all = 5 * (kLayoutBlock + 1) * 4 + entries * 4;
  // 2^30: every block kept; all (the kept size of everything: block 0's second half grows its
  // vector past it), all / 2, 70000, 50000: some dropped, by the check while staged or when
  // moved (50000 is below a stage vector's size, so the room of inline appends must count it).
  std::vector<std::pair<ListPacking, size_t>> cases;
  for (ListPacking packing : {ListPacking::kNever, ListPacking::kAlways}) {
    for (size_t budget : {size_t{1} << 30, all, all / 2, size_t{70000}, size_t{50000}}) {
      cases.emplace_back(packing, budget);
    }
  }
  for (const auto& [packing, budget] : cases) {
    SCOPED_TRACE(budget);
    SCOPED_TRACE(static_cast<int>(packing));
    ListCache cache(g, Direction::kOut, budget, false, packing);
    const VertexId half = kLayoutBlock / 2;
    collect(&cache, 0, half);                                // block 0, first half: staged
    collect(&cache, kLayoutBlock, 2 * kLayoutBlock);         // block 1: block 0 moved
    collect(&cache, half, kLayoutBlock);                     // block 0 again: its vectors
    std::thread outside([&] { collect(&cache, 2 * kLayoutBlock, 4 * kLayoutBlock); });
    outside.join();                                          // blocks 2, 3: no stage
    collect(&cache, 4 * kLayoutBlock, L.bound);              // block 4: staged until Complete
    ASSERT_OK(cache.Complete(g, L));
    EXPECT_LE(cache.bytes(), budget);
    // Staging stays within the budget too: a block that cannot fit is dropped before its
    // stage grows past it (the inline appends' room included).
    EXPECT_LE(cache.staged_peak(), budget);
    EXPECT_GT(cache.staged_peak(), 0u);
    if (budget > 2 * all) {
      for (VertexId u = 0; u < L.bound; ++u) {
        if (L.exists[u] && g.Degree(u, Direction::kOut) > 0) {
          // Packed: block 0 was packed when its thread moved to block 1, so the chunks that
          // came back for it dropped it (streamed); every other block is kept packed.
          const bool dropped = packing == ListPacking::kAlways && u < kLayoutBlock;
          ASSERT_EQ(cache.Kept(u), !dropped) << u;
        }
      }
      if (packing == ListPacking::kAlways) {
        EXPECT_EQ(cache.packed_blocks(), 4u);
      }
    }
    std::vector<std::pair<VertexId, VertexId>> got;
    for (VertexRange r : L.ranges) {
      ASSERT_OK(cache.Pass(g, L, r, [&](VertexId u, const auto* src, size_t n) {
        for (size_t i = 0; i < n; ++i) got.emplace_back(u, src[i]);
      }));
    }
    EXPECT_EQ(want, got);
  }
}

// A staged block packed when its thread moves on, and dropped then because other blocks filled
// the budget meanwhile, gives back exactly what it was counted for: the cache's bytes() after
// Complete are those of a cache that never saw the block. (It gave its packed bytes back
// twice, so bytes() fell short by them and the budget no longer bounded the cache.)
TEST(Analytics, ListCacheBlockPackedThenDroppedIsCountedOnce) {
  MapSnapshot g(GraphKind::kDirected, false);
  for (VertexId v = 2; v < 8002; ++v) g.PutEdge(1, v);                       // block 0
  for (VertexId k = 0; k < 3000; ++k) g.PutEdge(kLayoutBlock + 1, 3 * k);    // block 1
  for (VertexId k = 0; k < 50; ++k) g.PutEdge(2 * kLayoutBlock + 1, 5 * k);  // block 2
  Layout L;
  ASSERT_OK(BuildLayout(g, &L));
  auto collect = [&](ListCache* cache, VertexId u) {
    ASSERT_OK(g.ScanNeighbors(u, Direction::kOut, [&](const NeighborChunk& c) {
      cache->Collect(u, c);
      return true;
    }));
  };
  // Block 0 staged by this thread, block 1 appended by a thread without a stage, then block 2
  // moves block 0's stage (packed). bytes() after block 1, and after block 2's first chunk.
  auto run = [&](ListCache* cache, bool block0, size_t* after1, size_t* after2) {
    if (block0) collect(cache, 1);
    std::thread outside([&] { collect(cache, kLayoutBlock + 1); });
    outside.join();
    if (after1 != nullptr) *after1 = cache->bytes();
    collect(cache, 2 * kLayoutBlock + 1);
    if (after2 != nullptr) *after2 = cache->bytes();
    ASSERT_OK(cache->Complete(g, L));
  };
  size_t after1 = 0, after2 = 0;
  {
    ListCache roomy(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kAlways);
    run(&roomy, true, &after1, &after2);
    ASSERT_GT(after2, after1 + (kLayoutBlock + 1) * 4) << "block 0 was packed when moved";
  }
  // One byte short of what block 0's packed lists need when its stage moves: dropped then.
  ListCache tight(g, Direction::kOut, after2 - 1, false, ListPacking::kAlways);
  run(&tight, true, nullptr, nullptr);
  EXPECT_FALSE(tight.Kept(1));
  EXPECT_TRUE(tight.Kept(kLayoutBlock + 1));
  EXPECT_TRUE(tight.Kept(2 * kLayoutBlock + 1));
  ListCache without(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kAlways);
  run(&without, false, nullptr, nullptr);
  EXPECT_EQ(tight.bytes(), without.bytes());
  ExpectPassGivesStoreLists(tight, g, L, Direction::kOut);
}

// ListCache::Chunks gives a kept vertex's whole list as the store does (edges into deleted
// vertices included), with its weights when kept with them, and refuses vertices whose block
// is not kept.
void ListCacheChunksCase() {
  for (GraphKind kind : {GraphKind::kDirected, GraphKind::kUndirected}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(7);
    MapSnapshot g(kind, true);
    FillUniform(&g, 20000, 100000, rng);
    for (int i = 0; i < 3000; ++i) g.PutEdge(5, rng() % 20000, 1.0 + static_cast<double>(rng() % 9));
    Mutate(&g, 0.1, rng);
    for (bool weights : {false, true}) {
      // What every block takes, then 90% of it: at least one block must be left out (the
      // blocks' final sizes add up to `full`), and one must fit (with two threads, at most two
      // blocks fill at once).
      size_t full = 0;
      {
        ListCache all(g, Direction::kOut, size_t{1} << 30, weights);
        Layout L;
        ASSERT_OK(BuildLayout(
            g, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) { all.Collect(u, c); },
            weights));
        ASSERT_OK(all.Complete(g, L));
        full = all.bytes();
      }
      const size_t tight = full / 10 * 9;
      for (size_t budget : {tight, size_t{1} << 30}) {
        ListCache cache(g, Direction::kOut, budget, weights);
        EXPECT_EQ(cache.weights(), weights);
        Layout L;
        ASSERT_OK(BuildLayout(
            g, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) { cache.Collect(u, c); },
            weights));
        ASSERT_OK(cache.Complete(g, L));
        EXPECT_LE(cache.bytes(), budget);
        size_t kept = 0, refused = 0;
        for (VertexId u = 0; u < L.bound; ++u) {
          std::vector<VertexId> dst;
          std::vector<double> w;
          const bool ok = cache.Chunks(u, [&](const NeighborChunk& c) {
            EXPECT_LE(c.size, 256u);
            EXPECT_EQ(c.weight != nullptr, weights);
            for (size_t i = 0; i < c.size; ++i) {
              dst.push_back(c.dst[i]);
              if (c.weight) w.push_back(c.weight[i]);
            }
            return true;
          });
          if (!ok) {
            ++refused;
            continue;
          }
          ++kept;
          std::vector<VertexId> want_dst;
          std::vector<double> want_w;
          ASSERT_OK(g.GetNeighbors(u, &want_dst, &want_w));
          ASSERT_EQ(dst, want_dst) << u;
          if (weights) {
            ASSERT_EQ(w, want_w) << u;
          }
        }
        EXPECT_GT(kept, 0u);
        if (budget == tight) {
          EXPECT_GT(refused, 0u) << "the budget should leave blocks out";
        }
        // A visitor that stops: no further chunk of the list.
        size_t calls = 0;
        ASSERT_TRUE(budget != (size_t{1} << 30) || cache.Chunks(5, [&](const NeighborChunk&) {
          ++calls;
          return false;
        }));
        if (budget == (size_t{1} << 30)) {
          EXPECT_EQ(calls, 1u);
        }
      }
    }
  }
}

TEST(Analytics, ListCacheChunksMatchStoreListsWithWeights) {
  tbb::task_arena two(2);
  two.execute([&] { ListCacheChunksCase(); });
}

// A packed record reads back as the list it was made of, in pieces of any size, into 32- or
// 64-bit IDs: gaps of every width (0-4 bytes, the largest 2^32 - 1), single IDs, equal
// neighbors and IDs up to 2^32 - 1. The record holds the fewest bytes per gap, is as long as
// PackedRecordSize says, and its reader stays within the record and kPackedPad bytes after it (an
// exact-size buffer: ASan checks it). IDs that do not ascend are refused.
TEST(Analytics, PackedListsRoundTrip) {
  std::mt19937_64 rng(41);
  std::vector<std::vector<uint32_t>> lists = {
      {7}, {0, UINT32_MAX}, {UINT32_MAX}, {5, 5, 5}, {1, 2, 3, 300, 70000, 20000000, 20000001}};
  for (uint32_t span : {1u, 200u, 60000u, 16000000u, UINT32_MAX}) {
    for (size_t n : {1, 2, 17, 300, 1000}) {
      std::vector<uint32_t> l(n);
      for (uint32_t& x : l) x = static_cast<uint32_t>(rng() % (uint64_t{span} + 1));
      std::sort(l.begin(), l.end());
      lists.push_back(l);
    }
  }
  for (const std::vector<uint32_t>& l : lists) {
    SCOPED_TRACE(l.size());
    uint32_t max_gap = 0;
    for (size_t k = 1; k < l.size(); ++k) max_gap = std::max(max_gap, l[k] - l[k - 1]);
    const int width = max_gap == 0 ? 0 : max_gap < 256 ? 1 : max_gap < 65536 ? 2
                                       : max_gap < (1u << 24) ? 3 : 4;
    ASSERT_EQ(PackedWidth(l.data(), l.size()), width);
    const size_t size = PackedRecordSize(l.size(), l[0], width);
    std::vector<uint8_t> tmp(size + 64, 0xee);
    const size_t len = PackList(l.data(), l.size(), width, tmp.data());
    ASSERT_EQ(len, size);
    EXPECT_EQ(tmp[len + 3], 0xee) << "wrote more than 3 bytes past its size";
    EXPECT_EQ(tmp[len - (l.size() - 1) * static_cast<size_t>(width) - 1], width);
    std::vector<uint8_t> rec(tmp.begin(), tmp.begin() + static_cast<std::ptrdiff_t>(len));
    rec.resize(len + kPackedPad, 0);
    for (size_t piece : {size_t{1}, size_t{3}, size_t{16}, size_t{256}}) {
      PackedListReader rd(rec.data());
      EXPECT_EQ(rd.left(), l.size());
      std::vector<uint32_t> got32;
      std::vector<uint32_t> buf(piece);
      while (size_t k = rd.Next(buf.data(), piece)) {
        ASSERT_LE(k, piece);
        got32.insert(got32.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(k));
      }
      EXPECT_EQ(got32, l) << "piece " << piece;
      EXPECT_EQ(rd.left(), 0u);
    }
    PackedListReader wide(rec.data());
    std::vector<VertexId> got64(l.size());
    ASSERT_EQ(wide.Next(got64.data(), l.size() + 5), l.size());
    EXPECT_TRUE(std::equal(l.begin(), l.end(), got64.begin()));
  }
  const uint32_t down[] = {4, 9, 8};
  EXPECT_EQ(PackedWidth(down, 3), -1);
  EXPECT_EQ(PackedWidth(down, 2), 1);
}

// A cache whose blocks are packed gives what an unpacked one gives: Pass the same entries in
// the same order (edges into deleted vertices dropped on kDirected), PassInterleaved each
// vertex's list in order, Chunks each kept list; List and Head refuse packed blocks (so
// their readers go to the store). It holds fewer bytes; a block that would not be smaller
// packed is kept plain.
TEST(Analytics, ListCachePackedBlocksReadAsUnpacked) {
  tbb::task_arena two(2);
  two.execute([&] {
    for (GraphKind kind : {GraphKind::kDirected, GraphKind::kUndirected}) {
      SCOPED_TRACE(KindName(kind));
      std::mt19937_64 rng(13);
      MapSnapshot g(kind, false);
      FillUniform(&g, 20000, 100000, rng);
      for (int i = 0; i < 3000; ++i) g.PutEdge(5, rng() % 20000, 1.0);  // pieces of a list
      Mutate(&g, 0.1, rng);
      auto make = [&](ListPacking packing, std::unique_ptr<ListCache>* cache, Layout* L) {
        *cache = std::make_unique<ListCache>(g, Direction::kOut, size_t{1} << 30, false, packing);
        ListCache* c = cache->get();
        ASSERT_OK(BuildLayout(g, L, [&](VertexId u, const NeighborChunk& ch, uint64_t) {
          c->Collect(u, ch);
        }));
        ASSERT_OK(c->Complete(g, *L));
      };
      std::unique_ptr<ListCache> plain, packed;
      Layout L, Lp;
      make(ListPacking::kNever, &plain, &L);
      make(ListPacking::kAlways, &packed, &Lp);
      const size_t blocks = (L.bound + kLayoutBlock - 1) / kLayoutBlock;
      EXPECT_EQ(plain->packed_blocks(), 0u);
      EXPECT_EQ(packed->packed_blocks(), blocks);
      EXPECT_EQ(packed->dropped_blocks(), 0u);
      EXPECT_LT(packed->bytes(), plain->bytes() * 3 / 4);
      auto pass = [&](const ListCache& c, const Layout& lay) {
        std::vector<std::pair<VertexId, VertexId>> out;
        for (VertexRange r : lay.ranges) {
          const Status st = c.Pass(g, lay, r, [&](VertexId u, const auto* src, size_t n) {
            for (size_t i = 0; i < n; ++i) out.emplace_back(u, src[i]);
          });
          EXPECT_TRUE(st.ok()) << st.ToString();
        }
        return out;
      };
      const auto want = pass(*plain, L);
      EXPECT_GT(want.size(), 50000u);
      EXPECT_EQ(pass(*packed, Lp), want);
      auto interleaved = [&](const ListCache& c, const Layout& lay) {
        std::map<VertexId, std::vector<VertexId>> out;
        for (VertexRange r : lay.ranges) {
          const Status st = c.PassInterleaved(
              g, lay, r, 4, [](const auto*, size_t) {},
              [&](VertexId u, const auto* src, size_t n) {
                // Pieces of kept blocks (kDirected's dangling lists go through Pass).
                if (!lay.dangling) {
                  EXPECT_LE(n, ListCache::kInterleavePiece);
                }
                out[u].insert(out[u].end(), src, src + n);
              });
          EXPECT_TRUE(st.ok()) << st.ToString();
        }
        return out;
      };
      EXPECT_EQ(interleaved(*packed, Lp), interleaved(*plain, L));
      size_t refused = 0;
      for (VertexId u = 0; u < L.bound; ++u) {
        std::vector<VertexId> a, b;
        const bool ka = plain->Chunks(u, [&](const NeighborChunk& c) {
          a.insert(a.end(), c.dst, c.dst + c.size);
          return true;
        });
        const bool kb = packed->Chunks(u, [&](const NeighborChunk& c) {
          EXPECT_LE(c.size, 256u);
          b.insert(b.end(), c.dst, c.dst + c.size);
          return true;
        });
        ASSERT_EQ(ka, kb) << u;
        ASSERT_EQ(a, b) << u;
        ListCache::Span span;
        EXPECT_EQ(plain->List(u, &span), ka) << u;
        if (packed->List(u, &span) || packed->Head(u) != nullptr) ++refused;
      }
      EXPECT_EQ(refused, 0u) << "List/Head served a packed block";
    }
    // Lists of one entry take more as records (count, first ID, width: 5+ bytes against 4):
    // such a block stays unpacked.
    MapSnapshot g(GraphKind::kDirected, false);
    for (VertexId v = 0; v + 1 < 3 * kLayoutBlock; ++v) g.PutEdge(v, 1000000 + v, 1.0);
    ListCache c(g, Direction::kOut, size_t{1} << 30, false, ListPacking::kAlways);
    Layout L;
    ASSERT_OK(FillCache(g, &c, &L));
    EXPECT_EQ(c.packed_blocks(), 0u);
    EXPECT_EQ(c.dropped_blocks(), 0u);
  });
}

// kAuto decides each block once, when its lists are first complete: a block left plain before
// the lists seen so far projected past the budget stays plain when Complete closes it, while
// the blocks after it are packed. Block 0 holds short lists, blocks 1 and 2 long ones: after
// block 0 the projection is 3 x (8192 x 4 + 16388) = 147 KB, under 0.9 of 560 KB; after block
// 1 it is 590 KB, over; every block fits while staged.
TEST(Analytics, ListCacheAutoPackingDecidesEachBlockOnce) {
  MapSnapshot g(GraphKind::kDirected, false);
  for (VertexId u = 0; u < 3 * kLayoutBlock; ++u) {
    const int deg = u < kLayoutBlock ? 2 : u < 2 * kLayoutBlock ? 20 : 10;
    for (int k = 1; k <= deg; ++k) {
      g.PutEdge(u, (u + static_cast<VertexId>(k)) % (3 * kLayoutBlock), 1.0);
    }
  }
  Layout L;
  ASSERT_OK(BuildLayout(g, &L));
  // Block 0 (8,192 entries) projects well under 0.9 of this budget, blocks 0 and 1 (90,112,
  // at 3 bytes each when not packed) past it; block 2's stage (40,960 entries at 4 bytes)
  // fits the room left.
  ListCache cache(g, Direction::kOut, 480000, false, ListPacking::kAuto);
  for (VertexId u = 0; u < L.bound; ++u) {  // one thread, blocks in order: each is staged
    ASSERT_OK(g.ScanNeighbors(u, Direction::kOut, [&](const NeighborChunk& c) {
      cache.Collect(u, c);
      return true;
    }));
  }
  ASSERT_OK(cache.Complete(g, L));
  EXPECT_EQ(cache.dropped_blocks(), 0u);
  EXPECT_EQ(cache.packed_blocks(), 2u) << "block 0 packed after it was left plain";
  size_t n = 0;
  EXPECT_TRUE(cache.Chunks(0, [&](const NeighborChunk& c) { return n += c.size, true; }));
  EXPECT_EQ(n, 2u);
  ExpectPassGivesStoreLists(cache, g, L, Direction::kOut);
}

// LimitDegree keeps every list up to its cutoff and none above it, within the budget; Chunks
// and Kept refuse the long ones, and Pass still gives every list (streaming blocks with lists
// left out).
TEST(Analytics, ListCacheLimitDegreeKeepsTheShortLists) {
  for (GraphKind kind : {GraphKind::kDirected, GraphKind::kUndirected}) {
    SCOPED_TRACE(KindName(kind));
    std::mt19937_64 rng(11);
    MapSnapshot g(kind, true);
    FillUniform(&g, 20000, 60000, rng);
    for (VertexId hub : {5, 4200, 9000}) {  // long lists in three blocks
      for (int i = 0; i < 2000; ++i) g.PutEdge(hub, rng() % 20000, 0.5);
    }
    Mutate(&g, 0.1, rng);
    Layout est;
    ASSERT_OK(EstimateLayout(g, &est));
    uint64_t last_cutoff = 0;
    for (size_t budget : {size_t{1000}, size_t{400000}, size_t{600000}, size_t{1} << 30}) {
      SCOPED_TRACE("budget " + std::to_string(budget));
      ListCache cache(g, Direction::kOut, budget, /*keep_weights=*/true);
      const uint64_t cutoff = cache.LimitDegree(est);
      EXPECT_GE(cutoff, last_cutoff);  // more room, longer lists
      last_cutoff = cutoff;
      Layout L;
      ASSERT_OK(BuildLayout(
          g, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) { cache.Collect(u, c); },
          /*weights=*/true));
      ASSERT_OK(cache.Complete(g, L));
      EXPECT_LE(cache.bytes(), budget);
      size_t kept = 0, long_lists = 0;
      for (VertexId u = 0; u < L.bound; ++u) {
        if (!L.exists[u]) continue;
        std::vector<VertexId> dst, want_dst;
        std::vector<double> w, want_w;
        const bool ok = cache.Chunks(u, [&](const NeighborChunk& c) {
          dst.insert(dst.end(), c.dst, c.dst + c.size);
          w.insert(w.end(), c.weight, c.weight + c.size);
          return true;
        });
        ASSERT_EQ(ok, cache.Kept(u)) << u;
        ASSERT_OK(g.GetNeighbors(u, &want_dst, &want_w));
        if (want_dst.empty()) continue;  // kept or not: nothing to read either way
        if (want_dst.size() > cutoff) {
          ++long_lists;
          EXPECT_FALSE(ok) << u << " has " << want_dst.size() << " > cutoff " << cutoff;
          continue;
        }
        // Every short list is kept: the cutoff was chosen so that they all fit.
        EXPECT_TRUE(ok) << u << " has " << want_dst.size() << " <= cutoff " << cutoff;
        if (!ok) continue;
        ++kept;
        ASSERT_EQ(dst, want_dst) << u;
        ASSERT_EQ(w, want_w) << u;
      }
      if (budget == 1000) {
        EXPECT_EQ(cutoff, 0u);  // not even the heads fit
        EXPECT_EQ(kept, 0u);
      } else if (budget == (size_t{1} << 30)) {
        EXPECT_EQ(cutoff, UINT64_MAX);
        EXPECT_EQ(long_lists, 0u);
      } else {
        EXPECT_GT(kept, 0u);
        EXPECT_GT(long_lists, 0u);
      }
      ExpectPassGivesStoreLists(cache, g, L, Direction::kOut);
    }
  }
}

TEST(Analytics, EmptyAndTinyGraphs) {
  MapSnapshot empty(GraphKind::kDirected);
  std::vector<double> pr;
  ASSERT_OK(PageRank(empty, {}, &pr));
  EXPECT_TRUE(pr.empty());
  std::vector<int64_t> depth;
  EXPECT_TRUE(Bfs(empty, {0}, &depth).IsInvalidArgument());
  uint64_t t = 1;
  ASSERT_OK(TriangleCount(empty, &t));
  EXPECT_EQ(0u, t);

  MapSnapshot one(GraphKind::kUndirected);
  one.AddVertex(3);
  ASSERT_OK(Bfs(one, {3}, &depth));
  EXPECT_EQ((std::vector<int64_t>{kUnreachable, kUnreachable, kUnreachable, 0}), depth);
  std::vector<uint64_t> labels;
  ASSERT_OK(Wcc(one, {}, &labels));
  EXPECT_EQ((std::vector<uint64_t>{kNoLabel, kNoLabel, kNoLabel, 3}), labels);
  ASSERT_OK(PageRank(one, {}, &pr));
  EXPECT_DOUBLE_EQ(1.0, pr[3]);
  std::vector<double> dist;
  EXPECT_TRUE(Sssp(one, {1}, &dist).IsInvalidArgument());
}

// SSSP's light/heavy split with light-edge stores too small for every block (their vertices
// relax every edge from their lists in each phase), none (no cache), and a width that makes
// every edge light or every edge heavy, on weighted and unweighted stores with deletions.
TEST(Analytics, SsspLightStoreBudgets) {
  for (bool weighted : {true, false}) {
    for (GraphKind kind : {GraphKind::kDirected, GraphKind::kUndirected}) {
      SCOPED_TRACE(std::string(KindName(kind)) + (weighted ? " weighted" : " unweighted"));
      std::mt19937_64 rng(21);
      MapSnapshot g(kind, weighted);
      FillKronecker(&g, 13, 8, rng);  // 8192 IDs: two layout blocks
      Mutate(&g, 0.1, rng);
      const VertexId src = MaxDegreeVertex(g);
      std::vector<double> want, got;
      ASSERT_OK(ReferenceSssp(g, src, &want));
      for (size_t cache : {size_t{0}, size_t{4000}, size_t{60000}, size_t{1} << 30}) {
        for (double delta : {0.0, 0.002, 0.5, 100.0}) {
          SCOPED_TRACE("cache " + std::to_string(cache) + " delta " + std::to_string(delta));
          SsspParams p{src, delta};
          p.cache_bytes = cache;
          ASSERT_OK(Sssp(g, p, &got));
          ASSERT_OK(CheckEpsilon(want, got, 1e-9, "SSSP"));
        }
      }
    }
  }
}

TEST(Analytics, SsspRejectsNegativeWeights) {
  MapSnapshot g(GraphKind::kDirected, /*weighted=*/true);
  g.PutEdge(0, 1, 1.0);
  g.PutEdge(1, 2, -0.5);
  std::vector<double> dist;
  EXPECT_TRUE(Sssp(g, {0}, &dist).IsInvalidArgument());
}

// WCC's second phase links the lists of the vertices outside the largest sampled component
// and skips those without edges. Two 4-cliques here are joined by one edge that neither end
// samples (each has two smaller neighbors, and the rounds take the first two), beside a giant
// component with most of the edges and an isolated vertex: only the second phase links the
// cliques, from lists read from the store (no cache) or kept (cache).
TEST(Analytics, WccSecondPhaseLinksWhatSamplingMissed) {
  MapSnapshot g(GraphKind::kUndirected);
  for (VertexId v = 100; v < 2100; ++v) {  // giant: a ring with chords
    for (VertexId step : {1, 7, 31, 127}) g.PutEdge(v, 100 + (v - 100 + step) % 2000);
  }
  for (const std::vector<VertexId>& clique : {std::vector<VertexId>{0, 1, 2, 10},
                                              std::vector<VertexId>{3, 4, 5, 11}}) {
    for (VertexId a : clique) {
      for (VertexId b : clique) {
        if (a < b) g.PutEdge(a, b);
      }
    }
  }
  g.PutEdge(10, 11);  // 10's list: 0 1 2 11; 11's: 3 4 5 10
  g.AddVertex(50);
  std::vector<uint64_t> want;
  ASSERT_OK(ReferenceWcc(g, &want));
  ASSERT_EQ(want[0], want[11]);
  for (size_t cache : {size_t{0}, size_t{1} << 30}) {
    SCOPED_TRACE("cache " + std::to_string(cache));
    WccParams p;
    p.cache_bytes = cache;
    std::vector<uint64_t> got;
    ASSERT_OK(Wcc(g, p, &got));
    ASSERT_OK(CheckEquivalent(want, got, "WCC"));
    EXPECT_EQ(0u, got[3]);
    EXPECT_EQ(50u, got[50]);
  }
}

TEST(Analytics, TriangleCountSmall) {
  // K4 plus a pendant vertex: 4 triangles, whatever the kind and the edge directions.
  for (GraphKind k : {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    MapSnapshot g(k);
    g.PutEdge(0, 1);
    g.PutEdge(2, 0);
    g.PutEdge(0, 3);
    g.PutEdge(1, 2);
    g.PutEdge(3, 1);
    g.PutEdge(2, 3);
    g.PutEdge(3, 2);  // both directions: still one undirected edge
    g.PutEdge(4, 3);
    uint64_t t = 0;
    ASSERT_OK(TriangleCount(g, &t));
    EXPECT_EQ(4u, t) << KindName(k);
  }
}

TEST(Analytics, IntersectSortedBothPaths) {
  std::vector<VertexId> small = {3, 50, 77, 1000}, large;
  for (VertexId v = 0; v < 800; v += 1) large.push_back(v);
  EXPECT_EQ(3u, IntersectSorted(small.data(), small.size(), large.data(), large.size()));
  EXPECT_EQ(3u, IntersectSorted(large.data(), large.size(), small.data(), small.size()));
  std::vector<VertexId> odd, three;
  for (VertexId v = 1; v < 100; v += 2) odd.push_back(v);
  for (VertexId v = 0; v < 100; v += 3) three.push_back(v);
  EXPECT_EQ(17u, IntersectSorted(odd.data(), odd.size(), three.data(), three.size()));  // 3,9,..,99
  EXPECT_EQ(0u, IntersectSorted(odd.data(), 0, three.data(), three.size()));
  // ForEachCommon reports (index in a, index in b) on both paths, whichever array is larger.
  for (auto [a, b] : {std::pair{&small, &large}, std::pair{&large, &small}, std::pair{&odd, &three}}) {
    std::vector<VertexId> common;
    ForEachCommon(a->data(), a->size(), b->data(), b->size(), [&](size_t i, size_t j) {
      EXPECT_EQ((*a)[i], (*b)[j]);
      common.push_back((*a)[i]);
    });
    std::vector<VertexId> want;
    std::set_intersection(a->begin(), a->end(), b->begin(), b->end(), std::back_inserter(want));
    EXPECT_EQ(want, common);
  }
}

TEST(Analytics, ReadErrorsAreNeverSilent) {
  std::mt19937_64 rng(99);
  for (GraphKind k : {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    MapSnapshot g(k, /*weighted=*/true);
    FillKronecker(&g, 9, 8, rng);
    const VertexId src = MaxDegreeVertex(g);
    for (uint64_t after : {0, 3, 200}) {
      SCOPED_TRACE(std::string(KindName(k)) + " after " + std::to_string(after));
      auto arm = [&] {
        g.ClearReadError();
        g.InjectReadError(after);
      };
      std::vector<int64_t> i64;
      std::vector<uint64_t> u64;
      std::vector<double> dbl;
      std::vector<VertexId> ids;
      uint64_t t;
      ScanResult sr;
      arm();
      EXPECT_FALSE(Bfs(g, {src}, &i64).ok());
      arm();
      EXPECT_FALSE(PageRank(g, {}, &dbl).ok());
      arm();
      EXPECT_FALSE(Sssp(g, {src}, &dbl).ok());
      arm();
      EXPECT_FALSE(Wcc(g, {}, &u64).ok());
      arm();
      EXPECT_FALSE(Cdlp(g, {}, &u64).ok());
      arm();
      EXPECT_FALSE(Lcc(g, &dbl).ok());
      arm();
      EXPECT_FALSE(TriangleCount(g, &t).ok());
      arm();
      EXPECT_FALSE(KHop(g, {src, 3}, &ids).ok());
      arm();
      EXPECT_FALSE(Scan(g, Direction::kOut, &sr).ok());
    }
    g.ClearReadError();
  }
}

TEST(MapSnapshot, ModelsGraphKinds) {
  MapSnapshot d(GraphKind::kDirected, true), di(GraphKind::kDirectedWithInEdges, true),
      u(GraphKind::kUndirected, true);
  for (MapSnapshot* g : {&d, &di, &u}) {
    g->PutEdge(1, 2, 0.5);
    g->PutEdge(1, 3, 0.25);
    g->PutEdge(1, 2, 0.75);  // overwrite
    g->PutEdge(3, 2, 1.0);
    double w = 0;
    ASSERT_OK(g->GetEdge(1, 2, &w));
    EXPECT_EQ(0.75, w);
    EXPECT_EQ(4u, g->VertexIdBound());
    EXPECT_EQ(3u, g->NumVertices());
    EXPECT_FALSE(g->HasVertex(0));
  }
  EXPECT_EQ(3u, d.NumEdges());
  EXPECT_EQ(6u, u.NumEdges());
  double w = 0;
  EXPECT_TRUE(d.GetEdge(2, 1, &w).IsNotFound());
  ASSERT_OK(u.GetEdge(2, 1, &w));
  EXPECT_EQ(0.75, w);
  EXPECT_EQ(2u, di.Degree(2, Direction::kIn));
  EXPECT_EQ(2u, u.Degree(2, Direction::kIn));
  EXPECT_TRUE(d.ScanNeighbors(2, Direction::kIn, [](const NeighborChunk&) { return true; })
                  .IsNotSupported());
  std::vector<VertexId> in;
  di.set_chunk_size(1);
  ASSERT_OK(di.ScanNeighbors(2, Direction::kIn, [&](const NeighborChunk& c) {
    EXPECT_EQ(1u, c.size);
    in.insert(in.end(), c.dst, c.dst + c.size);
    return true;
  }));
  EXPECT_EQ((std::vector<VertexId>{1, 3}), in);
  // Deleting a vertex removes its out-edges, and its in-edges where the kind keeps them; its ID
  // stays below the bound.
  for (MapSnapshot* g : {&d, &di, &u}) {
    EXPECT_TRUE(g->DeleteVertex(3));
    EXPECT_FALSE(g->HasVertex(3));
    EXPECT_EQ(4u, g->VertexIdBound());
    EXPECT_EQ(0u, g->Degree(3));
    EXPECT_EQ(g == &d ? 2u : 1u, g->Degree(1));  // kDirected keeps 1 -> 3
    ASSERT_OK(g->status());
  }
  EXPECT_EQ(1u, di.Degree(2, Direction::kIn));
  EXPECT_EQ(2u, d.NumEdges());
  EXPECT_EQ(2u, u.NumEdges());
  d.AddVertex(3);  // a reused ID revives the edge into it, and starts with no out-edges
  EXPECT_TRUE(d.HasEdge(1, 3));
  EXPECT_EQ(0u, d.Degree(3));
  MapSnapshot unweighted(GraphKind::kDirected, false);
  unweighted.PutEdge(0, 1, 7.0);
  ASSERT_OK(unweighted.GetEdge(0, 1, &w));
  EXPECT_EQ(1.0, w);
  ASSERT_OK(unweighted.ScanNeighbors(0, [](const NeighborChunk& c) {
    EXPECT_EQ(nullptr, c.weight);
    return true;
  }));
}

// ---------------------------------------------------------------------------------------------
// Timing (skipped unless STRATA_ANALYTICS_BENCH_SCALE is set, e.g. to 16).

// A static CSR copy of a snapshot (one chunk per neighbor list, no copying on reads), so the
// timings show the kernels' own cost next to MapSnapshot's.
class CsrSnapshot : public Snapshot {
 public:
  explicit CsrSnapshot(const Snapshot& src)
      : kind_(src.kind()), weighted_(src.weighted()), bound_(src.VertexIdBound()),
        exists_(bound_, 0) {
    src.ScanVertices(0, bound_, [&](VertexId v) {
      exists_[v] = 1;
      ++n_;
      return true;
    });
    Copy(src, Direction::kOut, &out_);
    if (kind_ == GraphKind::kDirectedWithInEdges) Copy(src, Direction::kIn, &in_);
  }
  Timestamp timestamp() const override { return 0; }
  GraphKind kind() const override { return kind_; }
  bool weighted() const override { return weighted_; }
  bool HasVertex(VertexId v) const override { return v < bound_ && exists_[v]; }
  VertexId VertexIdBound() const override { return bound_; }
  uint64_t NumVertices() const override { return n_; }
  Status ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const override {
    for (VertexId v = begin; v < std::min(end, bound_); ++v) {
      if (exists_[v] && !fn(v)) break;
    }
    return Status::OK();
  }
  Status GetEdge(VertexId u, VertexId v, double* weight) const override {
    const Csr& c = out_;
    if (u >= bound_) return Status::NotFound("");
    auto b = c.dst.begin() + c.off[u], e = c.dst.begin() + c.off[u + 1];
    auto it = std::lower_bound(b, e, v);
    if (it == e || *it != v) return Status::NotFound("");
    *weight = c.w[it - c.dst.begin()];
    return Status::OK();
  }
  uint64_t NumEdges() const override { return out_.dst.size(); }
  uint64_t Degree(VertexId u, Direction d) const override {
    const Csr& c = Pick(d);
    return u < bound_ ? c.off[u + 1] - c.off[u] : 0;
  }
  using Snapshot::ScanNeighbors;
  Status ScanNeighbors(VertexId u, Direction d,
                       FunctionRef<bool(const NeighborChunk&)> fn) const override {
    if (d == Direction::kIn && kind_ == GraphKind::kDirected) return Status::NotSupported("");
    const Csr& c = Pick(d);
    if (u >= bound_ || c.off[u] == c.off[u + 1]) return Status::OK();
    fn(NeighborChunk{&c.dst[c.off[u]], weighted_ ? &c.w[c.off[u]] : nullptr,
                     c.off[u + 1] - c.off[u]});
    return Status::OK();
  }
  Status status() const override { return Status::OK(); }

 private:
  struct Csr {
    std::vector<uint64_t> off;
    std::vector<VertexId> dst;
    std::vector<double> w;
  };
  const Csr& Pick(Direction d) const {
    return d == Direction::kIn && kind_ == GraphKind::kDirectedWithInEdges ? in_ : out_;
  }
  void Copy(const Snapshot& src, Direction d, Csr* c) {
    c->off.assign(bound_ + 1, 0);
    for (VertexId v = 0; v < bound_; ++v) {
      if (exists_[v]) {
        src.ScanNeighbors(v, d, [&](const NeighborChunk& ch) {
          c->dst.insert(c->dst.end(), ch.dst, ch.dst + ch.size);
          for (size_t i = 0; i < ch.size; ++i) c->w.push_back(ch.weight ? ch.weight[i] : 1.0);
          return true;
        });
      }
      c->off[v + 1] = c->dst.size();
    }
  }
  GraphKind kind_;
  bool weighted_;
  VertexId bound_;
  uint64_t n_ = 0;
  std::vector<uint8_t> exists_;
  Csr out_, in_;
};

TEST(AnalyticsBench, CsrSnapshotMatchesMapSnapshot) {
  std::mt19937_64 rng(11);
  for (GraphKind k : {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    MapSnapshot g(k, true);
    FillKronecker(&g, 8, 8, rng);
    Mutate(&g, 0.1, rng);
    CsrSnapshot csr(g);
    SCOPED_TRACE(KindName(k));
    CrossCheck(g, rng);
    std::vector<double> a, b;
    ASSERT_OK(PageRank(g, {}, &a));
    ASSERT_OK(PageRank(csr, {}, &b));
    ASSERT_OK(CheckEpsilon(a, b, 1e-12, "PR map vs csr"));
    ASSERT_OK(Lcc(g, &a));
    ASSERT_OK(Lcc(csr, &b));
    ASSERT_OK(CheckEpsilon(a, b, 1e-12, "LCC map vs csr"));
  }
}

TEST(AnalyticsBench, KroneckerTimings) {
  const char* env = std::getenv("STRATA_ANALYTICS_BENCH_SCALE");
  if (env == nullptr) GTEST_SKIP() << "set STRATA_ANALYTICS_BENCH_SCALE to run";
  const int scale = std::atoi(env);
  for (GraphKind k : {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    std::mt19937_64 rng(42);
    MapSnapshot g(k, true);
    const auto b0 = std::chrono::steady_clock::now();
    FillKronecker(&g, scale, 16, rng);
    std::fprintf(stderr, "%-12s build  %.1f s\n", KindName(k),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count());
    const VertexId src = MaxDegreeVertex(g);
    const bool use_csr = std::getenv("STRATA_ANALYTICS_BENCH_CSR") != nullptr;
    std::unique_ptr<CsrSnapshot> csr_holder;
    if (use_csr) csr_holder = std::make_unique<CsrSnapshot>(g);
    const Snapshot& snap = use_csr ? static_cast<const Snapshot&>(*csr_holder) : g;
    auto time = [&](const char* name, auto&& fn) {
      const auto t0 = std::chrono::steady_clock::now();
      const Status s = fn();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "%-12s %-4s %-6s scale %d  V=%llu E=%llu  %9.1f ms  %s\n", KindName(k),
                   use_csr ? "csr" : "map", name, scale,
                  (unsigned long long)g.NumVertices(), (unsigned long long)g.NumEdges(), ms,
                  s.ToString().c_str());
    };
    std::vector<int64_t> i64;
    std::vector<uint64_t> u64;
    std::vector<double> dbl;
    ScanResult sr;
    uint64_t t;
    time("SCAN", [&] { return Scan(snap, Direction::kOut, &sr); });
    time("BFS", [&] { return Bfs(snap, {src}, &i64); });
    time("PR20", [&] { return PageRank(snap, {}, &dbl); });
    time("SSSP", [&] { return Sssp(snap, {src}, &dbl); });
    time("WCC", [&] { return Wcc(snap, {}, &u64); });
    time("CDLP10", [&] { return Cdlp(snap, {}, &u64); });
    time("LCC", [&] { return Lcc(snap, &dbl); });
    time("TC", [&] { return TriangleCount(snap, &t); });
  }
}

}  // namespace
}  // namespace strata::analytics
