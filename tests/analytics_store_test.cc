// Analytics on the real store, against independent sequential references on a MapSnapshot
// holding the same graph: with the graph in the memgraph, flushed to level 0 (several files),
// and compacted to the bottom level; after deletions too. And an analysis started before a
// stream of writes, flushes and compactions returns the result of its own snapshot.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "analytics/layout.h"
#include "strata/analytics.h"
#include "tests/util/analytics_verify.h"
#include "strata/db.h"
#include "tests/util/map_snapshot.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

using namespace analytics;

Options StoreOptions(GraphKind kind) {
  Options o;
  o.graph_kind = kind;
  o.weighted = true;
  o.memgraph_bytes = 32 << 10;
  o.memory_budget = 1 << 20;
  o.wal = WalMode::kOff;
  o.background_compaction = false;  // states placed by hand below
  return o;
}

// Checks every kernel on `snap` against the references run on `model`.
void CheckKernels(const Snapshot& snap, const Snapshot& model, const std::string& state) {
  SCOPED_TRACE(state);
  VertexId src = 0;
  model.ScanVertices(0, model.VertexIdBound(), [&](VertexId v) {
    src = v;
    return false;
  });
  std::vector<int64_t> d1, d2;
  ASSERT_TRUE(Bfs(snap, BfsParams{src}, &d1).ok());
  ASSERT_TRUE(ReferenceBfs(model, src, &d2).ok());
  d1.resize(d2.size(), kUnreachable);
  EXPECT_TRUE(CheckExact(d2, d1, "bfs").ok());

  // Reads one vertex at a time, and batched in tiny chunks; default steps, always bottom-up
  // (where in-edges exist) and always top-down: the same depths.
  // Bottom-up steps from the list cache (default), from the store (0), and from a cache too
  // small for every block (the rest streamed).
  // Without a cache, the unvisited vertices' lists kept between bottom-up steps: all of them
  // (default budget), none, or a budget that some ranges' lists do not fit (those ranges are
  // read from the store again).
  for (size_t batch : {size_t{0}, size_t{3}, kDefaultFetchBatch}) {
    for (BfsParams bp : {BfsParams{src}, BfsParams{src, 1 << 30, 1 << 30}, BfsParams{src, 1, 1}}) {
      for (size_t cache : {size_t{1} << 30, size_t{0}, size_t{40000}}) {
        for (size_t kept : {BfsParams().unvisited_bytes, size_t{0}, size_t{3000}}) {
          if (cache != 0 && kept != BfsParams().unvisited_bytes) continue;
          bp.fetch_batch = batch;
          bp.cache_bytes = cache;
          bp.unvisited_bytes = kept;
          std::vector<int64_t> d3;
          ASSERT_TRUE(Bfs(snap, bp, &d3).ok());
          d3.resize(d2.size(), kUnreachable);
          EXPECT_TRUE(CheckExact(d2, d3, "bfs batch " + std::to_string(batch)).ok())
              << "alpha " << bp.alpha << " batch " << batch << " cache " << cache << " kept "
              << kept;
        }
      }
    }
  }
  // Reads by streams wherever a frontier or the unvisited vertices touch a range (a lookup
  // costing 2^40 edges): top-down steps mark neighbors in per-thread bitmaps and merge them
  // per range; default steps, and always top-down.
  for (size_t batch : {size_t{3}, kDefaultFetchBatch}) {
    for (BfsParams bp : {BfsParams{src}, BfsParams{src, 1, 1}}) {
      bp.fetch_batch = batch;
      bp.lookup_cost_edges = uint64_t{1} << 40;
      std::vector<int64_t> d3;
      ASSERT_TRUE(Bfs(snap, bp, &d3).ok());
      d3.resize(d2.size(), kUnreachable);
      EXPECT_TRUE(CheckExact(d2, d3, "bfs streamed").ok()) << "alpha " << bp.alpha << " batch " << batch;
    }
  }
  for (size_t batch : {size_t{0}, size_t{5}, kDefaultFetchBatch}) {
    for (Direction dir : {Direction::kOut, Direction::kIn}) {
      if (dir == Direction::kIn && !HasInEdges(snap.kind())) continue;
      KHopParams kp{src, 2, dir};
      kp.fetch_batch = batch;
      std::vector<VertexId> k1, k2;
      ASSERT_TRUE(KHop(snap, kp, &k1).ok());
      ASSERT_TRUE(ReferenceKHop(model, kp, &k2).ok());
      EXPECT_EQ(k1, k2) << "k-hop batch " << batch << " dir " << static_cast<int>(dir);
    }
  }

  std::vector<double> p1, p2;
  PageRankParams pp{0.85, 10};
  ASSERT_TRUE(PageRank(snap, pp, &p1).ok());
  ASSERT_TRUE(ReferencePageRank(model, pp, &p2).ok());
  p1.resize(p2.size(), 0.0);
  Status c = CheckEpsilon(p2, p1, kGraphalyticsEpsilon, "pr");
  EXPECT_TRUE(c.ok()) << c.ToString();
  // Lists streamed every iteration, or partly cached: the same ranks, to the last bit.
  for (size_t cache : {size_t{0}, size_t{40000}}) {
    PageRankParams pc = pp;
    pc.cache_bytes = cache;
    std::vector<double> p3;
    ASSERT_TRUE(PageRank(snap, pc, &p3).ok());
    p3.resize(p2.size(), 0.0);
    EXPECT_EQ(p3, p1) << "cache " << cache;
  }

  std::vector<double> s1, s2;
  ASSERT_TRUE(Sssp(snap, SsspParams{src}, &s1).ok());
  ASSERT_TRUE(ReferenceSssp(model, src, &s2).ok());
  s1.resize(s2.size(), kInfinity);
  c = CheckEpsilon(s2, s1, kGraphalyticsEpsilon, "sssp");
  EXPECT_TRUE(c.ok()) << c.ToString();
  // Buckets read one vertex at a time and batched; lists with their weights from the cache
  // (default), from the store (0), and from a cache too small for every block; ranges
  // streamed by the cost model, never (lookup cost 0), or always (huge lookup cost).
  for (size_t batch : {size_t{0}, size_t{4}}) {
    for (size_t cache : {size_t{1} << 30, size_t{0}, size_t{40000}}) {
      for (uint64_t cost : {kLookupCostEdges, uint64_t{0}, uint64_t{1} << 40}) {
        SsspParams sp{src};
        sp.fetch_batch = batch;
        sp.cache_bytes = cache;
        sp.lookup_cost_edges = cost;
        std::vector<double> s3;
        ASSERT_TRUE(Sssp(snap, sp, &s3).ok());
        s3.resize(s2.size(), kInfinity);
        c = CheckEpsilon(s2, s3, kGraphalyticsEpsilon,
                         "sssp batch " + std::to_string(batch) + " cache " + std::to_string(cache) +
                             " lookup cost " + std::to_string(cost));
        EXPECT_TRUE(c.ok()) << c.ToString();
      }
    }
  }

  std::vector<VertexId> w1, w2;
  ASSERT_TRUE(Wcc(snap, WccParams{}, &w1).ok());
  ASSERT_TRUE(ReferenceWcc(model, &w2).ok());
  w1.resize(w2.size(), kNoLabel);
  c = CheckEquivalent(w2, w1, "wcc");
  EXPECT_TRUE(c.ok()) << c.ToString();
  for (size_t cache : {size_t{0}, size_t{40000}}) {  // lists from the store, partly cached
    WccParams wp;
    wp.cache_bytes = cache;
    std::vector<VertexId> w3;
    ASSERT_TRUE(Wcc(snap, wp, &w3).ok());
    w3.resize(w2.size(), kNoLabel);
    c = CheckEquivalent(w2, w3, "wcc cache " + std::to_string(cache));
    EXPECT_TRUE(c.ok()) << c.ToString();
  }

  std::vector<uint64_t> c1, c2;
  ASSERT_TRUE(Cdlp(snap, CdlpParams{}, &c1).ok());
  ASSERT_TRUE(ReferenceCdlp(model, CdlpParams{}, &c2).ok());
  c1.resize(c2.size(), kNoLabel);
  c = CheckExact(c2, c1, "cdlp");
  EXPECT_TRUE(c.ok()) << c.ToString();

  std::vector<double> l1, l2;
  ASSERT_TRUE(Lcc(snap, &l1).ok());
  ASSERT_TRUE(ReferenceLcc(model, &l2).ok());
  l1.resize(l2.size(), 0.0);
  c = CheckEpsilon(l2, l1, kGraphalyticsEpsilon, "lcc");
  EXPECT_TRUE(c.ok()) << c.ToString();

  for (Direction dir : {Direction::kOut, Direction::kIn}) {
    if (dir == Direction::kIn && !HasInEdges(snap.kind())) continue;
    ScanResult r1, r2;
    ASSERT_TRUE(Scan(snap, dir, &r1).ok());
    ASSERT_TRUE(ReferenceScan(model, dir, &r2).ok());
    EXPECT_EQ(r1.vertices, r2.vertices);
    EXPECT_EQ(r1.edges, r2.edges);
    EXPECT_EQ(r1.dst_sum, r2.dst_sum);
    EXPECT_NEAR(r1.weight_sum, r2.weight_sum, 1e-9 * std::abs(r2.weight_sum));
  }

  uint64_t t1 = 0, t2 = 0;
  ASSERT_TRUE(TriangleCount(snap, &t1).ok());
  ASSERT_TRUE(ReferenceTriangleCount(model, &t2).ok());
  EXPECT_EQ(t1, t2);
}

class AnalyticsStore : public ::testing::TestWithParam<GraphKind> {};

TEST_P(AnalyticsStore, KernelsMatchReferencesInEveryTier) {
  const GraphKind kind = GetParam();
  testing::TempDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(StoreOptions(kind), dir.path() + "/db", &db).ok());
  MapSnapshot model(kind, true);
  std::mt19937_64 rng(5);
  const VertexId n = 600;
  auto add = [&](int edges) {
    WriteBatch b;
    for (int i = 0; i < edges; ++i) {
      // Skewed: a few hubs and many low-degree vertices.
      VertexId u = rng() % 4 == 0 ? rng() % 8 : rng() % n;
      VertexId v = rng() % n;
      double w = 1.0 + static_cast<double>(rng() % 50);
      b.InsertEdge(u, v, w);
      model.PutEdge(u, v, w);
    }
    ASSERT_TRUE(db->Write(b).ok());
  };
  for (int i = 0; i < 3; ++i) add(300);
  CheckKernels(*db->GetSnapshot(), model, "memgraph");
  for (int i = 0; i < 10; ++i) {
    add(300);
    ASSERT_TRUE(db->Flush().ok());
  }
  ASSERT_GE(db->GetStats().l0_files, 5u);
  CheckKernels(*db->GetSnapshot(), model, "level 0");
  ASSERT_TRUE(db->CompactAll().ok());
  ASSERT_EQ(db->GetStats().l0_files, 0u);
  CheckKernels(*db->GetSnapshot(), model, "bottom level");
  // Deletions on top of the compacted level: tombstones in the memgraph and in L0.
  WriteBatch del;
  for (int i = 0; i < 400; ++i) {
    VertexId u = rng() % n, v = rng() % n;
    del.DeleteEdge(u, v);
    model.DeleteEdge(u, v);
  }
  ASSERT_TRUE(db->Write(del).ok());
  ASSERT_TRUE(db->Flush().ok());
  add(200);
  CheckKernels(*db->GetSnapshot(), model, "deletes over levels");
}

INSTANTIATE_TEST_SUITE_P(Kinds, AnalyticsStore,
                         ::testing::Values(GraphKind::kDirected, GraphKind::kDirectedWithInEdges,
                                           GraphKind::kUndirected));

TEST(AnalyticsStore, AnalysisSeesItsSnapshotWhileWritesFlushAndCompact) {
  testing::TempDir dir;
  Options o = StoreOptions(GraphKind::kDirected);
  o.background_compaction = true;
  o.l0_compaction_trigger = 2;
  o.level1_bytes = 32 << 10;
  o.level_fanout = 2;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20; ++i) {
    WriteBatch b;
    for (int j = 0; j < 200; ++j) b.InsertEdge(rng() % 500, rng() % 500, 1.0);
    ASSERT_TRUE(db->Write(b).ok());
  }
  auto snap = db->GetSnapshot();
  std::vector<double> before;
  ASSERT_TRUE(PageRank(*snap, PageRankParams{0.85, 10}, &before).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    std::mt19937_64 r(12);
    while (!stop) {
      WriteBatch b;
      for (int j = 0; j < 100; ++j) {
        if (r() % 3 == 0) b.DeleteEdge(r() % 500, r() % 500); else b.InsertEdge(r() % 700, r() % 700, 1.0);
      }
      if (!db->Write(b).ok()) break;
      written.fetch_add(1);
    }
  });
  // At least 5 rounds, and as many as it takes for the writer to get well under way (a fast
  // PageRank could otherwise finish before the first write).
  for (int round = 0; round < 5 || (written.load() < 200 && round < 100000); ++round) {
    std::vector<double> again;
    ASSERT_TRUE(PageRank(*snap, PageRankParams{0.85, 10}, &again).ok());
    ASSERT_EQ(again.size(), before.size());
    double maxd = 0;
    size_t at = 0;
    for (size_t i = 0; i < again.size(); ++i) {
      if (std::abs(again[i] - before[i]) > maxd) {
        maxd = std::abs(again[i] - before[i]);
        at = i;
      }
    }
    ASSERT_EQ(maxd, 0.0) << "round " << round << " vertex " << at << ": " << again[at] << " vs "
                         << before[at];
  }
  stop = true;
  writer.join();
  DBStats st = db->GetStats();
  EXPECT_GT(st.flushes, 0u) << st.ToString();
  std::vector<double> latest;
  ASSERT_TRUE(PageRank(*db->GetSnapshot(), PageRankParams{0.85, 10}, &latest).ok());
  EXPECT_NE(latest, before) << "writes changed nothing: the test would prove nothing";
}

}  // namespace
}  // namespace strata
