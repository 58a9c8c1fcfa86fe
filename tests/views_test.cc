// Views: every kernel on a view equals the same kernel on a store holding only the view's
// vertices and edges (the expected subgraph computed here from the definition, independently of
// db/views.cc); set operations; versioning with snapshots; persistence across reopen and crash;
// a damaged VIEWS file; the rules of CreateView/DropView.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "db/kept_files.h"
#include "db/manifest.h"
#include "db/record_log.h"
#include "db/views.h"
#include "io/env.h"
#include "strata/analytics.h"
#include "strata/db.h"
#include "strata/view.h"
#include "tests/util/cli_run.h"
#include "tests/util/in_child.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

using analytics::kInfinity;
using analytics::kNoLabel;
using analytics::kUnreachable;
using Edge = std::pair<VertexId, VertexId>;

// The raw graph a test writes: vertices and logical edges (normalized u <= v when undirected).
struct Graph {
  GraphKind kind;
  std::set<VertexId> vertices;
  std::map<Edge, double> edges;
};

Edge Norm(Edge e, GraphKind k) {
  if (k == GraphKind::kUndirected && e.first > e.second) std::swap(e.first, e.second);
  return e;
}

Graph RandomGraph(GraphKind kind, uint32_t seed, VertexId n, size_t m) {
  std::mt19937_64 rng(seed);
  Graph g;
  g.kind = kind;
  for (VertexId v = 0; v < n; ++v) {
    if (rng() % 10 != 0) g.vertices.insert(v);  // holes: absent IDs
  }
  std::vector<VertexId> vs(g.vertices.begin(), g.vertices.end());
  for (size_t i = 0; i < m; ++i) {
    const VertexId u = vs[rng() % vs.size()], v = vs[rng() % vs.size()];
    if (u == v) continue;
    g.edges[Norm({u, v}, kind)] = 1.0 + static_cast<double>(rng() % 8);
  }
  return g;
}

// The expected subgraph of a definition (the algebra of include/strata/view.h).
struct Sub {
  std::set<VertexId> v;
  std::map<Edge, double> e;
};

Sub Model(const ViewDefinition& d, const Graph& g, const std::map<std::string, ViewDefinition>& named) {
  Sub s;
  using K = ViewDefinition::Kind;
  if (d.kind == K::kFilter) {
    std::set<Edge> list;
    for (const Edge& e : d.edges) list.insert(Norm(e, g.kind));
    for (VertexId v : g.vertices) {
      bool in = !d.has_vertices || std::count(d.vertices.begin(), d.vertices.end(), v) > 0;
      if (d.edge_mode == ViewDefinition::EdgeMode::kInclude) {
        bool end = false;
        for (const Edge& e : list) end |= e.first == v || e.second == v;
        in = in && end;
      }
      if (in) s.v.insert(v);
    }
    for (const auto& [e, w] : g.edges) {
      if (!s.v.count(e.first) || !s.v.count(e.second)) continue;
      if (d.has_weight_range && (w < d.weight_min || w > d.weight_max)) continue;
      if (d.edge_mode == ViewDefinition::EdgeMode::kInclude && !list.count(e)) continue;
      if (d.edge_mode == ViewDefinition::EdgeMode::kExclude && list.count(e)) continue;
      s.e[e] = w;
    }
    return s;
  }
  std::vector<Sub> ops;
  for (const std::string& o : d.operands) ops.push_back(Model(named.at(o), g, named));
  s = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    if (d.kind == K::kUnion) {
      s.v.insert(ops[i].v.begin(), ops[i].v.end());
      s.e.insert(ops[i].e.begin(), ops[i].e.end());
    } else if (d.kind == K::kIntersection) {
      std::set<VertexId> v;
      for (VertexId x : s.v) if (ops[i].v.count(x)) v.insert(x);
      std::map<Edge, double> e;
      for (const auto& [k, w] : s.e) if (ops[i].e.count(k)) e[k] = w;
      s.v = v;
      s.e = e;
    } else {
      for (const auto& [k, w] : ops[i].e) s.e.erase(k);
    }
  }
  return s;
}

Options StoreOptions(GraphKind kind, bool weighted) {
  Options o;
  o.graph_kind = kind;
  o.weighted = weighted;
  o.memgraph_bytes = 1 << 20;
  o.background_compaction = false;
  return o;
}

// Writes g into db, the first half of the edges flushed to disk when `flush`.
void Fill(DB* db, const Graph& g, bool weighted, bool flush) {
  WriteBatch b;
  for (VertexId v : g.vertices) b.AddVertex(v);
  ASSERT_TRUE(db->Write(b).ok());
  b.Clear();
  size_t i = 0;
  for (const auto& [e, w] : g.edges) {
    b.InsertEdge(e.first, e.second, weighted ? w : 1.0);
    if (++i == g.edges.size() / 2 && flush) {
      ASSERT_TRUE(db->Write(b).ok());
      b.Clear();
      ASSERT_TRUE(db->Flush().ok());
    }
  }
  ASSERT_TRUE(db->Write(b).ok());
}

std::unique_ptr<DB> RefStore(const Sub& s, GraphKind kind, bool weighted) {
  Options o = StoreOptions(kind, weighted);
  o.in_memory = true;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(o, "ref", &db).ok());
  WriteBatch b;
  for (VertexId v : s.v) b.AddVertex(v);
  for (const auto& [e, w] : s.e) b.InsertEdge(e.first, e.second, weighted ? w : 1.0);
  EXPECT_TRUE(db->Write(b).ok());
  return db;
}

template <class T>
void Pad(std::vector<T>* a, size_t n, T absent) {
  if (a->size() < n) a->resize(n, absent);
}

// |a - b| <= 1e-9 relative, infinities equal.
bool Close(const std::vector<double>& expected, const std::vector<double>& actual) {
  if (expected.size() != actual.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double r = expected[i], s = actual[i];
    if (std::isinf(r) || std::isinf(s)) {
      if (r != s) return false;
      continue;
    }
    if (std::abs(r - s) > 1e-9 * std::max(1.0, std::abs(r))) return false;
  }
  return true;
}

// Every kernel on `view` against the same kernel on `ref`.
void CompareKernels(const Snapshot& view, const Snapshot& ref, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(view.NumVertices(), ref.NumVertices());
  ASSERT_EQ(view.NumEdges(), ref.NumEdges());
  const size_t n = std::max<size_t>(view.VertexIdBound(), ref.VertexIdBound());
  std::vector<VertexId> verts;
  ASSERT_TRUE(ref.ScanVertices(0, ref.VertexIdBound(), [&](VertexId v) {
    verts.push_back(v);
    return true;
  }).ok());
  std::vector<VertexId> vverts;
  ASSERT_TRUE(view.ScanVertices(0, view.VertexIdBound(), [&](VertexId v) {
    vverts.push_back(v);
    return true;
  }).ok());
  ASSERT_EQ(verts, vverts);
  for (VertexId v : verts) {
    ASSERT_EQ(view.Degree(v), ref.Degree(v)) << v;
    std::vector<VertexId> a, b;
    std::vector<double> wa, wb;
    ASSERT_TRUE(view.GetNeighbors(v, &a, &wa).ok());
    ASSERT_TRUE(ref.GetNeighbors(v, &b, &wb).ok());
    ASSERT_EQ(a, b) << v;
    ASSERT_EQ(wa, wb) << v;
    if (ref.kind() != GraphKind::kDirected) {
      ASSERT_TRUE(view.GetNeighbors(v, &a, nullptr, Direction::kIn).ok());
      ASSERT_TRUE(ref.GetNeighbors(v, &b, nullptr, Direction::kIn).ok());
      ASSERT_EQ(a, b) << v;
    }
  }
  {
    analytics::ScanResult a, b;
    ASSERT_TRUE(analytics::Scan(view, Direction::kOut, &a).ok());
    ASSERT_TRUE(analytics::Scan(ref, Direction::kOut, &b).ok());
    EXPECT_EQ(a.vertices, b.vertices);
    EXPECT_EQ(a.edges, b.edges);
    EXPECT_EQ(a.dst_sum, b.dst_sum);
    EXPECT_NEAR(a.weight_sum, b.weight_sum, 1e-6 * std::abs(b.weight_sum));
  }
  if (verts.empty()) return;
  const VertexId sources[] = {verts.front(), verts[verts.size() / 2]};
  for (VertexId src : sources) {
    for (uint64_t cost : {uint64_t{0}, analytics::kLookupCostEdges, uint64_t{1} << 40}) {
      analytics::BfsParams p;
      p.source = src;
      p.lookup_cost_edges = cost;
      std::vector<int64_t> a, b;
      ASSERT_TRUE(analytics::Bfs(view, p, &a).ok());
      ASSERT_TRUE(analytics::Bfs(ref, p, &b).ok());
      Pad(&a, n, kUnreachable);
      Pad(&b, n, kUnreachable);
      EXPECT_EQ(a, b) << "bfs from " << src << " cost " << cost;
    }
    for (size_t cache : {size_t{0}, size_t{256} << 20}) {
      analytics::SsspParams p;
      p.source = src;
      p.cache_bytes = cache;
      std::vector<double> a, b;
      ASSERT_TRUE(analytics::Sssp(view, p, &a).ok());
      ASSERT_TRUE(analytics::Sssp(ref, p, &b).ok());
      Pad(&a, n, kInfinity);
      Pad(&b, n, kInfinity);
      EXPECT_TRUE(Close(b, a)) << "sssp from " << src;
    }
    analytics::KHopParams p;
    p.source = src;
    p.k = 2;
    std::vector<VertexId> a, b;
    ASSERT_TRUE(analytics::KHop(view, p, &a).ok());
    ASSERT_TRUE(analytics::KHop(ref, p, &b).ok());
    EXPECT_EQ(a, b);
  }
  for (size_t cache : {size_t{0}, size_t{256} << 20}) {  // streamed, and from its list cache
    analytics::PageRankParams p;
    p.cache_bytes = cache;
    std::vector<double> a, b;
    ASSERT_TRUE(analytics::PageRank(view, p, &a).ok());
    ASSERT_TRUE(analytics::PageRank(ref, p, &b).ok());
    Pad(&a, n, 0.0);
    Pad(&b, n, 0.0);
    EXPECT_TRUE(Close(b, a)) << "pagerank cache " << cache;
  }
  // WCC with and without its list cache (exact layout degrees, or phase 1's record of which
  // vertices have edges), one sampling round (more left to phase 2) and interleaved links.
  for (const auto& [cache, rounds, interleave] :
       {std::tuple<size_t, int, size_t>{0, 2, 1}, {0, 1, 1}, {0, 1, 4}, {size_t{256} << 20, 1, 1},
        {size_t{256} << 20, 2, 1}}) {
    analytics::WccParams p;
    p.cache_bytes = cache;
    p.sampling_rounds = rounds;
    p.interleave = interleave;
    std::vector<VertexId> a, b;
    ASSERT_TRUE(analytics::Wcc(view, p, &a).ok());
    ASSERT_TRUE(analytics::Wcc(ref, p, &b).ok());
    Pad(&a, n, kNoLabel);
    Pad(&b, n, kNoLabel);
    // Labels are smallest member IDs: the same IDs in both.
    EXPECT_EQ(a, b) << "wcc cache " << cache << " rounds " << rounds << " interleave " << interleave;
  }
  {
    std::vector<uint64_t> a, b;
    ASSERT_TRUE(analytics::Cdlp(view, analytics::CdlpParams(), &a).ok());
    ASSERT_TRUE(analytics::Cdlp(ref, analytics::CdlpParams(), &b).ok());
    Pad(&a, n, uint64_t{kNoLabel});
    Pad(&b, n, uint64_t{kNoLabel});
    EXPECT_EQ(a, b) << "cdlp";
  }
  {
    std::vector<double> a, b;
    ASSERT_TRUE(analytics::Lcc(view, &a).ok());
    ASSERT_TRUE(analytics::Lcc(ref, &b).ok());
    Pad(&a, n, 0.0);
    Pad(&b, n, 0.0);
    EXPECT_TRUE(Close(b, a)) << "lcc";
    uint64_t ta = 0, tb = 0;
    ASSERT_TRUE(analytics::TriangleCount(view, &ta).ok());
    ASSERT_TRUE(analytics::TriangleCount(ref, &tb).ok());
    EXPECT_EQ(ta, tb) << "triangles";
  }
}

}  // namespace


namespace {

struct KernelCase {
  GraphKind kind;
  bool weighted;
};

class ViewKernelTest : public ::testing::TestWithParam<KernelCase> {};

TEST_P(ViewKernelTest, EveryKernelMatchesAStoreOfTheViewOnly) {
  const KernelCase c = GetParam();
  testing::TempDir dir;
  Graph g = RandomGraph(c.kind, 7 + static_cast<uint32_t>(c.kind) * 3 + c.weighted, 600, 3000);
  if (!c.weighted) {
    for (auto& [e, w] : g.edges) w = 1.0;  // what an unweighted store reads
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(StoreOptions(c.kind, c.weighted), dir.path() + "/db", &db).ok());
  Fill(db.get(), g, c.weighted, /*flush=*/true);

  std::mt19937_64 rng(99);
  std::map<std::string, ViewDefinition> defs;
  ViewDefinition half;  // a 50% vertex view
  half.has_vertices = true;
  for (VertexId v = 0; v < 600; ++v) {
    if (rng() % 2) half.vertices.push_back(v);
  }
  defs["half"] = half;
  ViewDefinition fifth;  // sparse: many small components and isolated vertices
  fifth.has_vertices = true;
  for (VertexId v = 0; v < 600; ++v) {
    if (rng() % 5 == 0) fifth.vertices.push_back(v);
  }
  defs["fifth"] = fifth;
  ViewDefinition other;
  other.has_vertices = true;
  for (VertexId v = 0; v < 600; ++v) {
    if (rng() % 3) other.vertices.push_back(v);
  }
  defs["other"] = other;
  ViewDefinition closed;  // exclude a quarter of the edges
  closed.edge_mode = ViewDefinition::EdgeMode::kExclude;
  for (const auto& [e, w] : g.edges) {
    if (rng() % 4 == 0) closed.edges.push_back(rng() % 2 && c.kind == GraphKind::kUndirected ? Edge{e.second, e.first} : e);
  }
  defs["closed"] = closed;
  ViewDefinition some;  // include a third of the edges
  some.edge_mode = ViewDefinition::EdgeMode::kInclude;
  for (const auto& [e, w] : g.edges) {
    if (rng() % 3 == 0) some.edges.push_back(e);
  }
  defs["some"] = some;
  ViewDefinition light;
  light.has_weight_range = true;
  light.weight_min = 1;
  light.weight_max = c.weighted ? 4 : 1;
  defs["light"] = light;
  ViewDefinition mixed = half;  // a vertex set and a weight range together
  mixed.has_weight_range = true;
  mixed.weight_min = 2;
  mixed.weight_max = 6;
  defs["mixed"] = mixed;
  auto setop = [](ViewDefinition::Kind k, std::vector<std::string> ops) {
    ViewDefinition d;
    d.kind = k;
    d.operands = std::move(ops);
    return d;
  };
  using K = ViewDefinition::Kind;
  defs["u"] = setop(K::kUnion, {"half", "other"});
  defs["i"] = setop(K::kIntersection, {"other", "closed"});
  defs["d"] = setop(K::kDifference, {"other", "some"});
  defs["nested"] = setop(K::kUnion, {"d", "light", "i"});
  for (const char* name : {"half", "fifth", "other", "closed", "some", "light", "mixed", "u", "i", "d",
                           "nested"}) {
    ASSERT_TRUE(db->CreateView(name, defs[name]).ok()) << name;
  }
  std::unique_ptr<Snapshot> base = db->GetSnapshot();
  for (const auto& [name, def] : defs) {
    std::unique_ptr<Snapshot> view;
    ASSERT_TRUE(db->OpenView(*base, name, &view).ok()) << name;
    std::unique_ptr<DB> ref = RefStore(Model(def, g, defs), c.kind, c.weighted);
    std::unique_ptr<Snapshot> rs = ref->GetSnapshot();
    CompareKernels(*view, *rs, name);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, ViewKernelTest,
                         ::testing::Values(KernelCase{GraphKind::kDirected, false},
                                           KernelCase{GraphKind::kDirected, true},
                                           KernelCase{GraphKind::kDirectedWithInEdges, true},
                                           KernelCase{GraphKind::kUndirected, false},
                                           KernelCase{GraphKind::kUndirected, true}));

TEST(Views, AdHocViewAndBatchReads) {
  Options o = StoreOptions(GraphKind::kUndirected, true);
  o.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "m", &db).ok());
  const Graph g = RandomGraph(GraphKind::kUndirected, 5, 200, 800);
  Fill(db.get(), g, true, false);
  std::unique_ptr<Snapshot> base = db->GetSnapshot();
  ViewDefinition d;
  d.has_vertices = true;
  for (VertexId v = 0; v < 200; v += 2) d.vertices.push_back(v);
  std::unique_ptr<Snapshot> view;
  ASSERT_TRUE(DB::OpenAdHocView(*base, d, &view).ok());
  std::vector<VertexId> vs;
  for (VertexId v = 0; v < 200; ++v) vs.push_back(v);
  std::vector<std::vector<VertexId>> got(vs.size());
  ASSERT_TRUE(view->ScanNeighborsBatch(vs.data(), vs.size(), Direction::kOut, false,
                                       [&](size_t i, const NeighborChunk& c) {
                                         EXPECT_EQ(c.weight, nullptr);
                                         got[i].insert(got[i].end(), c.dst, c.dst + c.size);
                                         return true;
                                       }).ok());
  for (VertexId v : vs) {
    std::vector<VertexId> want;
    ASSERT_TRUE(view->GetNeighbors(v, &want).ok());
    EXPECT_EQ(got[v], want);
    for (VertexId x : want) EXPECT_EQ(x % 2, 0u);
    if (v % 2) {
      EXPECT_TRUE(want.empty());
    }
    EXPECT_EQ(view->HasVertex(v), v % 2 == 0 && g.vertices.count(v) > 0);
  }
  // GetEdge and IntersectCount follow the view.
  for (const auto& [e, w] : g.edges) {
    const bool in = e.first % 2 == 0 && e.second % 2 == 0;
    EXPECT_EQ(view->HasEdge(e.first, e.second), in);
    EXPECT_EQ(view->HasEdge(e.second, e.first), in);
  }
}

// ---- Versioning, rules, persistence

ViewDefinition Vertices(std::vector<VertexId> vs) {
  ViewDefinition d;
  d.has_vertices = true;
  d.vertices = std::move(vs);
  return d;
}

std::vector<VertexId> ViewVertices(const Snapshot& s) {
  std::vector<VertexId> out;
  EXPECT_TRUE(s.ScanVertices(0, s.VertexIdBound(), [&](VertexId v) {
    out.push_back(v);
    return true;
  }).ok());
  return out;
}

// A view's degree bounds are estimates of its own degrees (ViewSnapshot::KeptShare): over a
// 50% vertex view, and over a region of IDs keeping few entries, their sum is near the view's
// entries (half, or a fourteenth, of its base's bounds), and a view that keeps every entry
// gives its base's bounds unchanged. Either way exactly the view's
// vertices are listed.
TEST(Views, DegreeEstimatesFollowTheView) {
  Options o = StoreOptions(GraphKind::kUndirected, true);
  o.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "m", &db).ok());
  const VertexId n = 8192;
  const Graph g = RandomGraph(GraphKind::kUndirected, 11, n, 80000);
  Fill(db.get(), g, true, false);
  std::unique_ptr<Snapshot> base = db->GetSnapshot();
  std::mt19937_64 rng(3);
  ViewDefinition half, all, region;  // region: 600 consecutive IDs, about 7% of their entries
  half.has_vertices = all.has_vertices = region.has_vertices = true;
  for (VertexId v = 0; v < n; ++v) {
    if (rng() % 2) half.vertices.push_back(v);
    all.vertices.push_back(v);
    if (v >= 3000 && v < 3600) region.vertices.push_back(v);
  }
  std::map<VertexId, uint64_t> base_bounds;
  ASSERT_TRUE(base->ScanVertexDegreeBounds(0, base->VertexIdBound(), Direction::kOut,
                                           [&](VertexId u, uint64_t b) {
                                             base_bounds[u] = b;
                                             return true;
                                           }).ok());
  for (const ViewDefinition* d : {&half, &all, &region}) {
    std::unique_ptr<Snapshot> view;
    ASSERT_TRUE(DB::OpenAdHocView(*base, *d, &view).ok());
    uint64_t entries = 0, estimated = 0, their_bounds = 0;
    std::vector<VertexId> listed;
    ASSERT_TRUE(view->ScanVertexDegreeBounds(0, view->VertexIdBound(), Direction::kOut,
                                             [&](VertexId u, uint64_t e) {
                                               listed.push_back(u);
                                               estimated += e;
                                               their_bounds += base_bounds.at(u);
                                               if (d == &all) {
                                                 EXPECT_EQ(e, base_bounds.at(u)) << u;
                                               }
                                               return true;
                                             }).ok());
    for (VertexId u : listed) entries += view->Degree(u);
    EXPECT_EQ(listed, ViewVertices(*view));
    uint64_t by_scan = 0;  // ScanDegreeBounds gives the same estimates
    ASSERT_TRUE(view->ScanDegreeBounds(0, view->VertexIdBound(), Direction::kOut,
                                       [&](VertexId, uint64_t e) {
                                         by_scan += e;
                                         return true;
                                       }).ok());
    EXPECT_EQ(by_scan, estimated);
    ASSERT_GT(entries, 0u);
    EXPECT_GT(static_cast<double>(estimated), 0.8 * static_cast<double>(entries));
    EXPECT_LT(static_cast<double>(estimated), 1.2 * static_cast<double>(entries));
    if (d != &all) {
      EXPECT_LT(static_cast<double>(estimated), 0.7 * static_cast<double>(their_bounds));
    }
  }
}

// WCC's second phase on a view without a list cache: the largest component is skipped, the
// other vertices' lists are looked up, except those phase 1 saw no view edge of. Small
// components whose joining edge no vertex samples first (b+4 - b+6 below: each endpoint has a
// smaller neighbor) are joined by phase 2 only; vertices whose edges all leave the view are
// singletons. Labels must equal those of a store holding only the view's subgraph.
TEST(Views, WccSecondPhaseOnAView) {
  Graph g;
  g.kind = GraphKind::kUndirected;
  std::mt19937_64 rng(17);
  for (VertexId v = 0; v < 4000; ++v) g.vertices.insert(v);
  for (int i = 0; i < 40000; ++i) {  // the largest component: 1000..2999
    const VertexId u = 1000 + rng() % 2000, v = 1000 + rng() % 2000;
    if (u != v) g.edges[Norm({u, v}, g.kind)] = 1.0;
  }
  for (VertexId b = 100; b < 200; b += 10) {
    for (VertexId o : {0, 1}) {  // endpoints both even, and both odd
      g.edges[{b + o, b + o + 4}] = 1.0;
      g.edges[{b + o + 2, b + o + 6}] = 1.0;
      g.edges[{b + o + 4, b + o + 6}] = 1.0;
    }
    g.edges[{b + 8, 3000 + b}] = 1.0;  // b + 8: no edge in the view
  }
  ViewDefinition d;  // every vertex but 3100..3199
  d.has_vertices = true;
  for (VertexId v = 0; v < 4000; ++v) {
    if (v < 3100 || v >= 3200) d.vertices.push_back(v);
  }
  testing::TempDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(StoreOptions(g.kind, false), dir.path() + "/db", &db).ok());
  Fill(db.get(), g, false, /*flush=*/true);
  std::unique_ptr<Snapshot> base = db->GetSnapshot();
  std::unique_ptr<Snapshot> view;
  ASSERT_TRUE(DB::OpenAdHocView(*base, d, &view).ok());
  std::unique_ptr<DB> ref = RefStore(Model(d, g, {}), g.kind, false);
  std::unique_ptr<Snapshot> rs = ref->GetSnapshot();
  for (int rounds : {1, 2}) {
    analytics::WccParams p;
    p.sampling_rounds = rounds;
    std::vector<VertexId> a, b;
    ASSERT_TRUE(analytics::Wcc(*view, p, &a).ok());
    ASSERT_TRUE(analytics::Wcc(*rs, p, &b).ok());
    const size_t n = std::max(a.size(), b.size());
    Pad(&a, n, kNoLabel);
    Pad(&b, n, kNoLabel);
    EXPECT_EQ(a, b) << "rounds " << rounds;
    EXPECT_EQ(a[106], 100u);
    EXPECT_EQ(a[107], 101u);
    EXPECT_EQ(a[108], 108u);
  }
}

TEST(Views, SnapshotsSeeTheDefinitionOfTheirTimestamp) {
  Options o;
  o.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "m", &db).ok());
  for (VertexId v = 0; v < 10; ++v) ASSERT_TRUE(db->AddVertex(v).ok());
  std::unique_ptr<Snapshot> s0 = db->GetSnapshot();
  ASSERT_TRUE(db->CreateView("a", Vertices({1, 2, 3})).ok());
  std::unique_ptr<Snapshot> s1 = db->GetSnapshot();
  EXPECT_TRUE(db->CreateView("a", Vertices({4})).IsInvalidArgument());  // exists
  ASSERT_TRUE(db->CreateView("a", Vertices({4, 5}), /*replace=*/true).ok());
  std::unique_ptr<Snapshot> s2 = db->GetSnapshot();
  ASSERT_TRUE(db->DropView("a").ok());
  std::unique_ptr<Snapshot> s3 = db->GetSnapshot();
  std::unique_ptr<Snapshot> v;
  EXPECT_TRUE(db->OpenView(*s0, "a", &v).IsNotFound());
  ASSERT_TRUE(db->OpenView(*s1, "a", &v).ok());
  EXPECT_EQ(ViewVertices(*v), (std::vector<VertexId>{1, 2, 3}));
  ASSERT_TRUE(db->OpenView(*s2, "a", &v).ok());
  EXPECT_EQ(ViewVertices(*v), (std::vector<VertexId>{4, 5}));
  EXPECT_TRUE(db->OpenView(*s3, "a", &v).IsNotFound());
  EXPECT_TRUE(db->GetViewSnapshot("a", &v).IsNotFound());
  EXPECT_LT(s1->timestamp(), s2->timestamp());
  EXPECT_LT(s2->timestamp(), s3->timestamp());
  // Operands resolve at the snapshot's timestamp too.
  ASSERT_TRUE(db->CreateView("x", Vertices({1, 2})).ok());
  ASSERT_TRUE(db->CreateView("y", Vertices({2, 3})).ok());
  ViewDefinition u;
  u.kind = ViewDefinition::Kind::kIntersection;
  u.operands = {"x", "y"};
  ASSERT_TRUE(db->CreateView("xy", u).ok());
  std::unique_ptr<Snapshot> s4 = db->GetSnapshot();
  ASSERT_TRUE(db->CreateView("y", Vertices({1, 2, 3}), true).ok());
  ASSERT_TRUE(db->OpenView(*s4, "xy", &v).ok());
  EXPECT_EQ(ViewVertices(*v), (std::vector<VertexId>{2}));
  ASSERT_TRUE(db->GetViewSnapshot("xy", &v).ok());
  EXPECT_EQ(ViewVertices(*v), (std::vector<VertexId>{1, 2}));
  std::vector<ViewInfo> list;
  ASSERT_TRUE(db->ListViews(&list).ok());
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "x");
  EXPECT_EQ(list[1].definition.Describe(), "intersect(x, y)");
  // Old definitions are kept while a snapshot can see them, and only then.
  ASSERT_TRUE(db->OpenView(*s1, "a", &v).ok());
  v.reset();
  s0.reset();
  s1.reset();
  s2.reset();
  s3.reset();
  s4.reset();
  ASSERT_TRUE(db->CreateView("z", Vertices({1})).ok());  // prunes
  std::unique_ptr<Snapshot> s5 = db->GetSnapshot();
  ASSERT_TRUE(db->OpenView(*s5, "xy", &v).ok());
  EXPECT_EQ(ViewVertices(*v), (std::vector<VertexId>{1, 2}));
}

TEST(Views, Rules) {
  Options o;
  o.in_memory = true;
  o.max_vertex_id = 1000;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "m", &db).ok());
  EXPECT_TRUE(db->CreateView("", Vertices({1})).IsInvalidArgument());
  EXPECT_TRUE(db->CreateView("a b", Vertices({1})).IsInvalidArgument());
  EXPECT_TRUE(db->CreateView("a", Vertices({1000})).IsInvalidArgument());
  ViewDefinition w;
  w.has_weight_range = true;
  w.weight_min = 2;
  w.weight_max = 1;
  EXPECT_TRUE(db->CreateView("a", w).IsInvalidArgument());
  ASSERT_TRUE(db->CreateView("a", Vertices({1})).ok());
  ASSERT_TRUE(db->CreateView("b", Vertices({2})).ok());
  ViewDefinition u;
  u.kind = ViewDefinition::Kind::kUnion;
  u.operands = {"a"};
  EXPECT_TRUE(db->CreateView("c", u).IsInvalidArgument());  // one operand
  u.operands = {"a", "zz"};
  EXPECT_TRUE(db->CreateView("c", u).IsNotFound());
  u.operands = {"a", "b"};
  ASSERT_TRUE(db->CreateView("c", u).ok());
  EXPECT_TRUE(db->DropView("a").IsInvalidArgument());  // c uses it
  u.operands = {"c", "b"};
  EXPECT_TRUE(db->CreateView("a", u, true).IsInvalidArgument());  // a -> c -> a
  EXPECT_TRUE(db->DropView("nope").IsNotFound());
  ASSERT_TRUE(db->DropView("c").ok());
  ASSERT_TRUE(db->DropView("a").ok());
}

Options DiskOptions() {
  Options o;
  o.background_compaction = false;
  return o;
}

// A store at `path` holding edge (1, 2), closed.
void CreateStoreWithAnEdge(const Options& o, const std::string& path) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, path, &db).ok());
  ASSERT_TRUE(db->InsertEdge(1, 2).ok());
  ASSERT_TRUE(db->Close().ok());
}

TEST(Views, PersistAcrossReopenReadOnlyAndCrash) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  Timestamp created = 0;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    for (VertexId v = 0; v < 8; ++v) ASSERT_TRUE(db->InsertEdge(v, (v + 1) % 8).ok());
    ASSERT_TRUE(db->CreateView("ring", Vertices({0, 1, 2, 3})).ok());
    ASSERT_TRUE(db->CreateView("gone", Vertices({5})).ok());
    ASSERT_TRUE(db->DropView("gone").ok());
    std::vector<ViewInfo> l;
    ASSERT_TRUE(db->ListViews(&l).ok());
    ASSERT_EQ(l.size(), 1u);
    created = l[0].created;
    ASSERT_TRUE(db->Close().ok());
  }
  {
    Options ro = DiskOptions();
    ro.read_only = true;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(ro, path, &db).ok());
    std::vector<ViewInfo> l;
    ASSERT_TRUE(db->ListViews(&l).ok());
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0].name, "ring");
    EXPECT_EQ(l[0].created, created);
    std::unique_ptr<Snapshot> v;
    ASSERT_TRUE(db->GetViewSnapshot("ring", &v).ok());
    EXPECT_EQ(v->NumEdges(), 3u);
    EXPECT_TRUE(db->CreateView("x", Vertices({1})).IsNotSupported());
  }
  // A writer that dies after CreateView returns: the view survives, and the clock continues
  // past it (it was the newest commit).
  testing::InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    ASSERT_TRUE(db->CreateView("late", Vertices({6, 7})).ok());
    db.release();  // no Close: the process exits as if killed
  });
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    std::vector<ViewInfo> l;
    ASSERT_TRUE(db->ListViews(&l).ok());
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].name, "late");
    std::unique_ptr<Snapshot> s = db->GetSnapshot();
    EXPECT_GE(s->timestamp(), l[0].created);
    std::unique_ptr<Snapshot> v;
    ASSERT_TRUE(db->OpenView(*s, "late", &v).ok());
    EXPECT_EQ(v->NumEdges(), 1u);  // 6 -> 7
    std::string report;
    EXPECT_TRUE(db->Verify(&report).ok()) << report;
    ASSERT_TRUE(db->Close().ok());
  }
}

// VIEWS and SUBSCRIPTIONS hold what no other file does once the logs are flushed: deleted, the
// store would open without its views, and a durable subscriber would resume "from now",
// skipping changes. The manifest records that the store keeps them once they are written, so
// Open refuses the store naming the missing file; a repair goes on without it (and stops
// expecting it). Before that record (a store that never wrote them) nothing is expected.
TEST(Views, DeletedViewsOrSubscriptionsFileIsNamedNotIgnored) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  ASSERT_NO_FATAL_FAILURE(CreateStoreWithAnEdge(DiskOptions(), path));
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok()) << "no VIEWS yet, none expected";
    ASSERT_TRUE(db->CreateView("ring", Vertices({1, 2})).ok());
    SubscribeOptions so;
    so.name = "app";
    std::unique_ptr<Subscription> sub;
    ASSERT_TRUE(db->Subscribe(so, {}, &sub).ok());
    ASSERT_TRUE(db->InsertEdge(2, 3).ok());
    sub.reset();
    ASSERT_TRUE(db->Close().ok());
  }
  for (const char* name : {"VIEWS", "SUBSCRIPTIONS"}) {
    const std::string file = path + "/" + name;
    ASSERT_TRUE(std::filesystem::exists(file)) << name;
    const std::string kept = dir.path() + "/kept";
    std::filesystem::rename(file, kept);
    for (bool read_only : {false, true}) {
      Options o = DiskOptions();
      o.read_only = read_only;
      std::unique_ptr<DB> db;
      Status s = DB::Open(o, path, &db);
      ASSERT_TRUE(s.IsCorruption()) << name << ": " << s.ToString();
      EXPECT_NE(s.ToString().find(file), std::string::npos) << s.ToString();
      EXPECT_NE(s.ToString().find("missing"), std::string::npos) << s.ToString();
    }
    std::filesystem::rename(kept, file);
  }
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    std::vector<ViewInfo> l;
    ASSERT_TRUE(db->ListViews(&l).ok());
    EXPECT_EQ(l.size(), 1u);
    Timestamp pos = 0;
    EXPECT_TRUE(db->GetPosition("app", &pos).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  // A repair goes on without VIEWS: no views, and the next plain open no longer expects it.
  std::filesystem::remove(path + "/VIEWS");
  Options repair = DiskOptions();
  repair.repair = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(repair, path, &db).ok());
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
  std::vector<ViewInfo> l;
  ASSERT_TRUE(db->ListViews(&l).ok());
  EXPECT_TRUE(l.empty());
  Timestamp pos = 0;
  EXPECT_TRUE(db->GetPosition("app", &pos).ok()) << "SUBSCRIPTIONS untouched by the repair";
}

std::vector<std::string> ViewNames(DB* db) {
  std::vector<ViewInfo> l;
  EXPECT_TRUE(db->ListViews(&l).ok());
  std::vector<std::string> names;
  for (const ViewInfo& v : l) names.push_back(v.name);
  std::sort(names.begin(), names.end());
  return names;
}

// VIEWS replaced by an older copy of itself (a file restored from a backup): the store served
// the copy's definitions — a view dropped since was back, a redefined one answered with its
// old vertex set. VIEWS records the commit timestamp of its newest change (a drop too, which
// the file itself forgets), the manifest records it after each rewrite, and an older copy is
// refused naming VIEWS.
TEST(Views, OlderCopyOfViewsIsRefusedNotServed) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  const std::string file = path + "/VIEWS";
  std::vector<std::string> copies;
  auto keep_copy = [&] {
    copies.push_back(dir.path() + "/copy" + std::to_string(copies.size()));
    std::filesystem::copy_file(file, copies.back());
  };
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    ASSERT_TRUE(db->InsertEdge(1, 2).ok());
    ASSERT_TRUE(db->CreateView("a", Vertices({1, 2})).ok());
    keep_copy();  // a
    ASSERT_TRUE(db->CreateView("b", Vertices({2, 3})).ok());
    keep_copy();  // a, b
    ASSERT_TRUE(db->CreateView("a", Vertices({1}), /*replace=*/true).ok());
    keep_copy();  // a redefined, b
    // No snapshot is open: the drop leaves nothing of b in the file, whose newest entry is
    // then a's redefinition, as in the copy before the drop.
    ASSERT_TRUE(db->DropView("b").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  const std::string current = dir.path() + "/current";
  std::filesystem::copy_file(file, current);
  for (size_t i = 0; i < copies.size(); ++i) {
    SCOPED_TRACE("copy " + std::to_string(i));
    std::filesystem::copy_file(copies[i], file, std::filesystem::copy_options::overwrite_existing);
    for (bool read_only : {false, true}) {
      Options o = DiskOptions();
      o.read_only = read_only;
      std::unique_ptr<DB> db;
      Status s = DB::Open(o, path, &db);
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.ToString().find(file), std::string::npos) << s.ToString();
      EXPECT_NE(s.ToString().find("older copy"), std::string::npos) << s.ToString();
    }
  }
  // The current file opens, with the current definitions.
  std::filesystem::copy_file(current, file, std::filesystem::copy_options::overwrite_existing);
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"a"}));
    std::unique_ptr<Snapshot> v;
    ASSERT_TRUE(db->GetViewSnapshot("a", &v).ok());
    EXPECT_EQ(ViewVertices(*v), std::vector<VertexId>({1}));
    v.reset();
    // Verify names a copy put in place while the store is open.
    std::filesystem::copy_file(copies[0], file,
                               std::filesystem::copy_options::overwrite_existing);
    std::string report;
    EXPECT_FALSE(db->Verify(&report).ok());
    EXPECT_NE(report.find(file + " holds its view definitions as of commit ts"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("an older copy"), std::string::npos) << report;
    std::filesystem::copy_file(current, file, std::filesystem::copy_options::overwrite_existing);
    report.clear();
    EXPECT_TRUE(db->Verify(&report).ok()) << report;
    ASSERT_TRUE(db->Close().ok());
  }
  // Repair goes on with an older copy (b is back), and the next plain open takes it.
  std::filesystem::copy_file(copies[1], file, std::filesystem::copy_options::overwrite_existing);
  Options repair = DiskOptions();
  repair.repair = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(repair, path, &db).ok());
  EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"a", "b"}));
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
  EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"a", "b"}));
  // Changes after the repair count from there: a copy older than the next change is refused.
  ASSERT_TRUE(db->DropView("b").ok());
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  std::filesystem::copy_file(copies[1], file, std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(DB::Open(DiskOptions(), path, &db).IsCorruption());
}

// Another store's VIEWS copied over a store's: with an as-of at or above the store's own, the
// older-copy check passed it, and the store served the other store's definitions (vertex sets
// of its vertices). VIEWS names its store: refused naming the file, read-only too, and
// reported by the offline check; this store's file back, its definitions return.
TEST(Views, AnotherStoresViewsIsRefused) {
  testing::TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  for (const std::string& path : {a, b}) {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    // a's definitions are newer than b's: a's file is not an older copy of b's.
    const VertexId edges = path == a ? 20 : 2;
    for (VertexId v = 0; v < edges; ++v) ASSERT_TRUE(db->InsertEdge(v, v + 1).ok());
    ASSERT_TRUE(db->CreateView(path == a ? "of_a" : "of_b", Vertices({1, 2})).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  const std::string file = b + "/VIEWS";
  const std::string own = dir.path() + "/b.VIEWS";
  std::filesystem::copy_file(file, own);
  std::filesystem::copy_file(a + "/VIEWS", file, std::filesystem::copy_options::overwrite_existing);
  for (bool read_only : {false, true}) {
    Options o = DiskOptions();
    o.read_only = read_only;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, b, &db);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(file), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("belongs to another store"), std::string::npos) << s.ToString();
  }
  {
    std::unique_ptr<io::Env> env;
    ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
    StoreState st;
    RecordLogTail tail;
    std::string mpath;
    ASSERT_TRUE(Manifest::ReadOnly(env.get(), b, &st, &tail, &mpath).ok());
    const std::vector<std::string> problems = KeptFileProblems(env.get(), b, st);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("belongs to another store"), std::string::npos) << problems[0];
  }
  std::filesystem::copy_file(own, file, std::filesystem::copy_options::overwrite_existing);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DiskOptions(), b, &db).ok());
  EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"of_b"}));
}

// A version-1 VIEWS (written before the file recorded its as-of timestamp and its store) is
// read, its newest entry taken for its as-of; a read-only open leaves it, a writable open
// rewrites it as version 3 (which names the store) before any change.
TEST(Views, VersionOneFileIsReadAndRewrittenWithItsStoreAtOpen) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  ASSERT_NO_FATAL_FAILURE(CreateStoreWithAnEdge(DiskOptions(), path));
  {
    std::unique_ptr<io::Env> env;
    ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
    std::unique_ptr<io::WritableFile> f;
    ASSERT_TRUE(env->NewWritableFile(path + "/VIEWS", &f).ok());
    std::unique_ptr<RecordWriter> w;
    ASSERT_TRUE(RecordWriter::Create(f.get(), "SGVIEWS1", 1, 0x56, &w).ok());
    std::string rec;
    const ViewDefinition def = Vertices({1, 2});
    ViewCatalog::EncodeRecord(7, ViewCatalog::Op::kCreate, "old", &def, &rec);
    ASSERT_TRUE(w->Add(rec).ok());
    ASSERT_TRUE(f->Sync().ok());
    ASSERT_TRUE(f->Close().ok());
  }
  auto version = [&] {
    std::ifstream in(path + "/VIEWS", std::ios::binary);
    char h[12] = {};
    in.read(h, sizeof(h));
    return static_cast<uint32_t>(static_cast<unsigned char>(h[8]));
  };
  EXPECT_EQ(version(), 1u);
  std::unique_ptr<DB> db;
  Options ro = DiskOptions();
  ro.read_only = true;
  ASSERT_TRUE(DB::Open(ro, path, &db).ok());
  EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"old"}));
  db.reset();
  EXPECT_EQ(version(), 1u);
  ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
  EXPECT_EQ(version(), 3u);
  EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"old"}));
  ASSERT_TRUE(db->CreateView("new", Vertices({2})).ok());
  ASSERT_TRUE(db->Close().ok());
  EXPECT_EQ(version(), 3u);
  db.reset();
  ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
  EXPECT_EQ(ViewNames(db.get()), std::vector<std::string>({"new", "old"}));
}

// View changes are commits among concurrent batches: every snapshot sees a view exactly when
// its timestamp is at or after the view's, and the view's vertex set is the one its
// definition (named by a counter) gives.
TEST(Views, ChangesCommitAmongConcurrentWriters) {
  testing::TempDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DiskOptions(), dir.path() + "/db", &db).ok());
  for (VertexId v = 0; v < 64; ++v) ASSERT_TRUE(db->AddVertex(v).ok());
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (VertexId i = 0; !stop.load(); ++i) {
      ASSERT_TRUE(db->InsertEdge(i % 64, (i * 7 + 1) % 64).ok());
    }
  });
  std::thread reader([&] {
    while (!stop.load()) {
      std::unique_ptr<Snapshot> s = db->GetSnapshot();
      std::unique_ptr<Snapshot> v;
      Status st = db->OpenView(*s, "grow", &v);
      if (st.IsNotFound()) continue;
      ASSERT_TRUE(st.ok()) << st.ToString();
      // Definition k holds vertices [0, k]: a contiguous prefix.
      std::vector<VertexId> vs = ViewVertices(*v);
      ASSERT_FALSE(vs.empty());
      for (size_t i = 0; i < vs.size(); ++i) ASSERT_EQ(vs[i], i);
    }
  });
  Timestamp last = 0;
  for (VertexId k = 0; k < 60; ++k) {
    std::vector<VertexId> vs;
    for (VertexId v = 0; v <= k; ++v) vs.push_back(v);
    ASSERT_TRUE(db->CreateView("grow", Vertices(vs), /*replace=*/true).ok());
    std::vector<ViewInfo> l;
    ASSERT_TRUE(db->ListViews(&l).ok());
    ASSERT_EQ(l.size(), 1u);
    EXPECT_GT(l[0].created, last);
    last = l[0].created;
    std::unique_ptr<Snapshot> s = db->GetSnapshot();
    EXPECT_GE(s->timestamp(), last);
    std::unique_ptr<Snapshot> v;
    ASSERT_TRUE(db->OpenView(*s, "grow", &v).ok());
    EXPECT_EQ(ViewVertices(*v).size(), k + 1);
  }
  stop = true;
  writer.join();
  reader.join();
  ASSERT_TRUE(db->Close().ok());
}

// Without a WAL the graph's unflushed batches are lost in a crash, the views are not.
TEST(Views, PersistWithTheWalOff) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  Options o = DiskOptions();
  o.wal = WalMode::kOff;
  ASSERT_NO_FATAL_FAILURE(CreateStoreWithAnEdge(o, path));
  testing::InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    ASSERT_TRUE(db->InsertEdge(2, 3).ok());  // not flushed: lost
    ASSERT_TRUE(db->CreateView("v", Vertices({1, 2, 3})).ok());
    db.release();
  });
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, path, &db).ok());
  std::unique_ptr<Snapshot> v;
  ASSERT_TRUE(db->GetViewSnapshot("v", &v).ok());
  EXPECT_EQ(v->NumEdges(), 1u);  // (1, 2) only
  EXPECT_EQ(ViewVertices(*v), (std::vector<VertexId>{1, 2}));
  ASSERT_TRUE(db->InsertEdge(2, 3).ok());  // later commits order after the view
  ASSERT_TRUE(db->GetViewSnapshot("v", &v).ok());
  EXPECT_EQ(v->NumEdges(), 2u);
}

TEST(Views, DamagedViewsFileIsCorruptionNamingFileAndOffset) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
    ASSERT_TRUE(db->CreateView("a", Vertices({1, 2, 3})).ok());
    ASSERT_TRUE(db->CreateView("b", Vertices({4})).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  const std::string views = path + "/VIEWS";
  std::string data;
  {
    std::ifstream f(views, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(f), {});
  }
  ASSERT_GT(data.size(), 40u);
  // Every byte: flipping it must make the open fail with Corruption naming VIEWS.
  for (size_t i = 0; i < data.size(); ++i) {
    std::string bad = data;
    bad[i] ^= 0x20;
    {
      std::ofstream f(views, std::ios::binary | std::ios::trunc);
      f << bad;
    }
    std::unique_ptr<DB> db;
    Status s = DB::Open(DiskOptions(), path, &db);
    ASSERT_TRUE(s.IsCorruption()) << "byte " << i << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(views), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("offset"), std::string::npos) << s.ToString();
  }
  {
    std::ofstream f(views, std::ios::binary | std::ios::trunc);
    f << data;
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DiskOptions(), path, &db).ok());
}

TEST(Views, CatalogPrunesWhatNoReaderCanSee) {
  ViewCatalog c;  // in memory
  ViewDefinition a = Vertices({1}), b = Vertices({2});
  ASSERT_TRUE(c.Commit(10, ViewCatalog::Op::kCreate, "v", &a, 0).ok());
  ASSERT_TRUE(c.Commit(20, ViewCatalog::Op::kCreate, "v", &b, 10).ok());
  ASSERT_TRUE(c.Commit(30, ViewCatalog::Op::kCreate, "w", &a, 15).ok());
  ViewInfo info;
  ASSERT_TRUE(c.Get("v", 15, &info).ok());  // a reader at 15 may exist: kept
  EXPECT_EQ(info.definition.vertices, (std::vector<VertexId>{1}));
  ASSERT_TRUE(c.Commit(40, ViewCatalog::Op::kDrop, "w", nullptr, 25).ok());
  EXPECT_TRUE(c.Get("v", 15, &info).IsNotFound());  // no reader below 25: pruned
  ASSERT_TRUE(c.Get("v", 25, &info).ok());
  EXPECT_EQ(info.definition.vertices, (std::vector<VertexId>{2}));
  ASSERT_TRUE(c.Get("w", 35, &info).ok());  // dropped at 40, still visible at 35
  ASSERT_TRUE(c.Commit(50, ViewCatalog::Op::kCreate, "x", &a, 45).ok());
  EXPECT_TRUE(c.Get("w", 35, &info).IsNotFound());
  EXPECT_EQ(c.List(kMaxTimestamp).size(), 2u);
}

TEST(Views, RecordRoundTrip) {
  ViewDefinition d;
  d.has_vertices = true;
  d.vertices = {9, 3, 3, 100000};
  d.edge_mode = ViewDefinition::EdgeMode::kExclude;
  d.edges = {{1, 2}, {7, 5}};
  d.has_weight_range = true;
  d.weight_min = -1.5;
  d.weight_max = 2.25;
  std::string rec;
  ViewCatalog::EncodeRecord(42, ViewCatalog::Op::kCreate, "n.1", &d, &rec);
  Timestamp ts;
  ViewCatalog::Op op;
  std::string name;
  ViewDefinition got;
  ASSERT_TRUE(ViewCatalog::DecodeRecord(rec, &ts, &op, &name, &got).ok());
  EXPECT_EQ(ts, 42u);
  EXPECT_EQ(name, "n.1");
  EXPECT_EQ(got.vertices, (std::vector<VertexId>{3, 9, 100000}));
  EXPECT_EQ(got.edges, d.edges);
  EXPECT_EQ(got.weight_min, -1.5);
  EXPECT_EQ(got.weight_max, 2.25);
  EXPECT_TRUE(ViewCatalog::DecodeRecord(rec.substr(0, rec.size() - 1), &ts, &op, &name, &got)
                  .IsCorruption());
}

// ---- CLI: strata view and analyze --view, in a --ids map store (files hold external IDs)

TEST(ViewsCli, CreateListShowDropAndAnalyzeMatchAStoreOfTheViewOnly) {
  using testing::DescribeRun;
  using testing::RunStrata;
  testing::TempDir dir;
  const std::string d = dir.path();
  // A weighted undirected ring of 12 vertices with sparse external IDs, and chords.
  std::string all, kept;
  std::vector<uint64_t> ext;
  for (uint64_t i = 0; i < 12; ++i) ext.push_back(1000 + 37 * i);
  std::vector<std::tuple<uint64_t, uint64_t, int>> edges;
  for (size_t i = 0; i < 12; ++i) edges.emplace_back(ext[i], ext[(i + 1) % 12], 1 + i % 3);
  edges.emplace_back(ext[0], ext[6], 2);
  edges.emplace_back(ext[2], ext[9], 4);
  // The view: vertices 0..8 minus the closed segment (1,2).
  std::string vfile, cfile;
  for (size_t i = 0; i <= 8; ++i) vfile += std::to_string(ext[i]) + "\n";
  cfile = std::to_string(ext[2]) + " " + std::to_string(ext[1]) + "\n";
  auto in_view = [&](uint64_t x) { return x <= ext[8]; };
  for (const auto& [u, v, w] : edges) {
    const std::string line = std::to_string(u) + " " + std::to_string(v) + " " + std::to_string(w) + "\n";
    all += line;
    const bool closed = (u == ext[1] && v == ext[2]);
    if (in_view(u) && in_view(v) && !closed) kept += line;
  }
  testing::WriteWholeFile(d + "/all.el", all);
  testing::WriteWholeFile(d + "/kept.el", kept);
  testing::WriteWholeFile(d + "/v.txt", vfile);
  testing::WriteWholeFile(d + "/c.txt", cfile);
  const std::string s = d + "/s", r = d + "/r";
  for (const auto& [db, in] : {std::pair{s, d + "/all.el"}, std::pair{r, d + "/kept.el"}}) {
    std::vector<std::string> args = {"ingest", "--db", db, "--input", in, "--undirected",
                                     "--weighted", "--ids", "map"};
    auto res = RunStrata(args);
    ASSERT_EQ(res.code, 0) << DescribeRun(args, res);
  }
  auto run = [&](std::vector<std::string> args, int code = 0) {
    auto res = RunStrata(args);
    EXPECT_EQ(res.code, code) << DescribeRun(args, res);
    return res;
  };
  run({"view", "--db", s, "create", "city", "--vertices", d + "/v.txt"});
  run({"view", "--db", s, "create", "closed", "--edges", d + "/c.txt"});
  run({"view", "--db", s, "create", "open", "--intersect", "city,closed"});
  auto l = run({"view", "--db", s, "list"});
  EXPECT_EQ(l.out, "city\tvertices 9\nclosed\texclude 1 edges\nopen\tintersect(city, closed)\n");
  auto sh = run({"view", "--db", s, "show", "open"});
  EXPECT_NE(sh.out.find("vertices 9\n"), std::string::npos) << sh.out;
  // Edges inside 0..8: the 8 ring edges and the chord (0,6), minus (1,2): 8 logical, 16 stored.
  EXPECT_NE(sh.out.find("edges 8\nentries 16\n"), std::string::npos) << sh.out;
  for (const char* algo : {"bfs", "sssp", "wcc", "cdlp"}) {
    std::vector<std::string> a = {"analyze", "--db", s, "--algo", algo, "--view", "open", "-q"};
    std::vector<std::string> b = {"analyze", "--db", r, "--algo", algo, "-q"};
    if (std::string(algo) == "bfs" || std::string(algo) == "sssp") {
      for (auto* v : {&a, &b}) {
        v->push_back("--source");
        v->push_back(std::to_string(ext[2]));
      }
    }
    auto ra = run(a), rb = run(b);
    EXPECT_EQ(ra.out, rb.out) << algo;
    EXPECT_FALSE(ra.out.empty());
  }
  // The source must be in the view.
  auto bad = run({"analyze", "--db", s, "--algo", "bfs", "--view", "open", "--source",
                  std::to_string(ext[10])}, 1);
  EXPECT_NE(bad.err.find("not in view 'open'"), std::string::npos) << bad.err;
  run({"analyze", "--db", s, "--algo", "bfs", "--view", "nope", "--source",
       std::to_string(ext[0])}, 1);
  // Unknown external ID in a vertex file; a view in use cannot be dropped.
  testing::WriteWholeFile(d + "/bad.txt", "5\n");
  run({"view", "--db", s, "create", "x", "--vertices", d + "/bad.txt"}, 1);
  EXPECT_NE(run({"view", "--db", s, "drop", "city"}, 1).err.find("used by open"), std::string::npos);
  run({"view", "--db", s, "drop", "open"});
  run({"view", "--db", s, "drop", "city"});
  l = run({"view", "--db", s, "list"});
  EXPECT_EQ(l.out, "closed\texclude 1 edges\n");
  EXPECT_NE(run({"inspect", "--db", s}).out.find("views: VIEWS"), std::string::npos);
  run({"view", "--db", s, "create", "y"}, 2);  // nothing defines it
  run({"view", "--db", s, "create", "y", "--union", "a,b", "--vertices", d + "/v.txt"}, 2);
}

}  // namespace
}  // namespace strata
