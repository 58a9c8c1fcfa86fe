// The kernels' interleaved (coroutine) paths against their sequential paths and the sequential
// references (tests/util/analytics_verify.h), on random and skewed graphs held by the
// in-memory tier, for group sizes 1..64. InterleaveBench (skipped unless
// STRATA_INTERLEAVE_BENCH is set) is the measurement in docs/benchmarks.md ("Coroutine
// interleaving").
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <tbb/global_control.h>

#include "graphio/generator.h"
#include "strata/analytics.h"
#include "strata/db.h"
#include "tests/util/analytics_verify.h"
#include "tests/util/assert_ok.h"

namespace strata::analytics {
namespace {

// n vertices (a few deleted), m edges; skewed: an endpoint is drawn as n * x^3 for uniform x,
// so low IDs are hubs with lists far longer than a piece.
std::unique_ptr<DB> MakeGraph(GraphKind kind, VertexId n, uint64_t m, bool skewed, uint64_t seed) {
  Options o;
  o.in_memory = true;
  o.graph_kind = kind;
  o.cart_threshold = 32;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(o, "interleave", &db).ok());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> x(0, 1);
  auto vertex = [&]() -> VertexId {
    if (!skewed) return rng() % n;
    const double u = x(rng);
    return std::min<VertexId>(n - 1, static_cast<VertexId>(static_cast<double>(n) * u * u * u));
  };
  WriteBatch b;
  for (VertexId v = 0; v < n; ++v) b.AddVertex(v);
  for (uint64_t i = 0; i < m; ++i) b.InsertEdge(vertex(), vertex());
  EXPECT_TRUE(db->Write(b).ok());
  WriteBatch d;
  for (int i = 0; i < 20; ++i) d.DeleteVertex(rng() % n);
  EXPECT_TRUE(db->Write(d).ok());
  return db;
}

TEST(AnalyticsInterleave, PageRankEveryGroupMatchesSequentialAndReference) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges}) {
    for (bool skewed : {false, true}) {
      std::unique_ptr<DB> db = MakeGraph(kind, 5000, 40000, skewed, 7 + skewed);
      auto snap = db->GetSnapshot();
      PageRankParams p{0.85, 6};
      std::vector<double> ref, seq;
      ASSERT_OK(ReferencePageRank(*snap, p, &ref));
      // Every list kept, part of them (the rest streamed), none; kept lists as 3-byte IDs
      // and runs (kAuto), packed (whose sequential pass hands 256-entry pieces, the
      // interleaved one 16-entry pieces), or 32-bit IDs.
      const std::pair<size_t, ListPacking> settings[] = {
          {size_t{64} << 20, ListPacking::kAuto}, {size_t{64} << 20, ListPacking::kAlways},
          {size_t{64} << 20, ListPacking::kNever}, {60000, ListPacking::kAuto},
          {60000, ListPacking::kAlways},           {0, ListPacking::kAuto}};
      for (const auto& [cache_bytes, packing] : settings) {
        p.cache_bytes = cache_bytes;
        p.packing = packing;
        p.interleave = 1;
        PageRankStats stats;
        p.stats = &stats;
        ASSERT_OK(PageRank(*snap, p, &seq));
        // (With the small budget a graph may keep no block at all.)
        if (packing == ListPacking::kAlways && cache_bytes != 60000) {
          EXPECT_GT(stats.packed_blocks, 0u);
        }
        ASSERT_OK(CheckEpsilon(ref, seq, kGraphalyticsEpsilon, "PR sequential"));
        for (size_t g = 2; g <= 64; ++g) {
          for (bool pf : {true, false}) {
            if (!pf && g % 7 != 0) continue;
            SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) +
                         (skewed ? " skewed" : " random") + " cache " + std::to_string(cache_bytes) +
                         " packing " + std::to_string(static_cast<int>(packing)) +
                         " group " + std::to_string(g) + (pf ? "" : " no prefetch"));
            p.interleave = g;
            p.interleave_prefetch = pf;
            std::vector<double> got;
            ASSERT_OK(PageRank(*snap, p, &got));
            ASSERT_EQ(got, seq);  // the same sums in the same order per vertex
          }
        }
        p.interleave_prefetch = true;
        p.stats = nullptr;
      }
    }
  }
}

TEST(AnalyticsInterleave, WccEveryGroupMatchesSequentialAndReference) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges}) {
    for (bool skewed : {false, true}) {
      // Sparse enough to leave many components.
      std::unique_ptr<DB> db = MakeGraph(kind, 6000, 4500, skewed, 11 + skewed);
      auto snap = db->GetSnapshot();
      std::vector<VertexId> ref, seq;
      ASSERT_OK(ReferenceWcc(*snap, &ref));
      for (int rounds : {1, 2, 5}) {
        WccParams p;
        p.sampling_rounds = rounds;
        ASSERT_OK(Wcc(*snap, p, &seq));
        ASSERT_OK(CheckEquivalent(std::vector<uint64_t>(ref.begin(), ref.end()),
                                  std::vector<uint64_t>(seq.begin(), seq.end()), "WCC sequential"));
        for (size_t g = 2; g <= 64; ++g) {
          for (bool pf : {true, false}) {
            if (!pf && g % 7 != 0) continue;
            SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) +
                         (skewed ? " skewed" : " random") + " rounds " + std::to_string(rounds) +
                         " group " + std::to_string(g) + (pf ? "" : " no prefetch"));
            p.interleave = g;
            p.interleave_prefetch = pf;
            std::vector<VertexId> got;
            ASSERT_OK(Wcc(*snap, p, &got));
            ASSERT_EQ(got, seq);  // each component labeled by its smallest vertex
          }
        }
      }
    }
  }
}

// TC and LCC: the coroutine path for every group size (with and without its prefetches) and
// the sequential path at several prefetch distances give the reference's count and exactly the
// sequential path's coefficients (integer triangle credits, one division per vertex).
TEST(AnalyticsInterleave, TrianglesEveryGroupMatchesSequentialAndReference) {
  for (GraphKind kind :
       {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges, GraphKind::kDirected}) {
    for (bool skewed : {false, true}) {
      // Dense enough for many triangles; skewed puts hubs (long N+ lists) in the orientation.
      std::unique_ptr<DB> db = MakeGraph(kind, 1500, 30000, skewed, 23 + skewed);
      auto snap = db->GetSnapshot();
      uint64_t ref_tc = 0;
      std::vector<double> ref_lcc, seq_lcc;
      ASSERT_OK(ReferenceTriangleCount(*snap, &ref_tc));
      ASSERT_OK(ReferenceLcc(*snap, &ref_lcc));
      ASSERT_GT(ref_tc, 1000u);  // the graph exercises the intersections
      TriangleParams p;
      ASSERT_OK(Lcc(*snap, p, &seq_lcc));
      ASSERT_OK(CheckEpsilon(ref_lcc, seq_lcc, kGraphalyticsEpsilon, "LCC sequential"));
      for (size_t d : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{64}}) {
        SCOPED_TRACE("prefetch distance " + std::to_string(d));
        p.prefetch_distance = d;
        uint64_t t = 0;
        std::vector<double> got;
        ASSERT_OK(TriangleCount(*snap, p, &t));
        ASSERT_EQ(t, ref_tc);
        ASSERT_OK(Lcc(*snap, p, &got));
        ASSERT_EQ(got, seq_lcc);
      }
      p.prefetch_distance = TriangleParams{}.prefetch_distance;
      for (size_t g = 2; g <= 64; ++g) {
        for (bool pf : {true, false}) {
          if (!pf && g % 7 != 0) continue;
          SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) +
                       (skewed ? " skewed" : " random") + " group " + std::to_string(g) +
                       (pf ? "" : " no prefetch"));
          p.interleave = g;
          p.interleave_prefetch = pf;
          uint64_t t = 0;
          ASSERT_OK(TriangleCount(*snap, p, &t));
          ASSERT_EQ(t, ref_tc);
          if (g % 5 == 0 || g == 2 || g == 64) {  // LCC at some sizes: its callback differs
            std::vector<double> got;
            ASSERT_OK(Lcc(*snap, p, &got));
            ASSERT_EQ(got, seq_lcc);
          }
        }
      }
    }
  }
}

// A weighted graph in the in-memory tier: uniform random (n vertices, m edges) or Kronecker
// (R-MAT, Graph500 initiator: 2^scale vertices, hubs and many short lists), weights in (0, 1];
// then 20 vertices deleted (kDirected keeps the edges into them) and 5% of the edges.
std::unique_ptr<DB> MakeWeightedGraph(GraphKind kind, bool rmat, int scale, uint64_t m,
                                      uint64_t seed) {
  Options o;
  o.in_memory = true;
  o.graph_kind = kind;
  o.weighted = true;
  o.cart_threshold = 32;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(o, "interleave-w", &db).ok());
  graphio::GeneratorOptions go;
  go.model = rmat ? graphio::GraphModel::kKronecker : graphio::GraphModel::kUniform;
  go.scale = scale;
  go.num_edges = m;
  go.seed = seed;
  go.weighted = true;
  std::unique_ptr<graphio::EdgeGenerator> gen;
  EXPECT_TRUE(graphio::EdgeGenerator::New(go, &gen).ok());
  WriteBatch b;
  for (VertexId v = 0; v < gen->num_vertices(); ++v) b.AddVertex(v);
  graphio::Edge e;
  std::vector<graphio::Edge> all;
  while (gen->Next(&e)) {
    b.InsertEdge(e.src, e.dst, e.weight);
    all.push_back(e);
  }
  EXPECT_TRUE(db->Write(b).ok());
  std::mt19937_64 rng(seed);
  WriteBatch d;
  for (size_t i = 0; i < all.size() / 20; ++i) {
    const graphio::Edge& x = all[rng() % all.size()];
    d.DeleteEdge(x.src, x.dst);
  }
  for (int i = 0; i < 20; ++i) d.DeleteVertex(rng() % gen->num_vertices());
  EXPECT_TRUE(db->Write(d).ok());
  return db;
}

// A source with out-edges.
VertexId PickSource(const Snapshot& snap) {
  for (VertexId v = 1;; v = (v * 7 + 3) % snap.VertexIdBound()) {
    if (snap.HasVertex(v) && snap.Degree(v) > 0) return v;
  }
}

TEST(AnalyticsInterleave, SsspEveryGroupMatchesSequentialAndReference) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges, GraphKind::kDirected}) {
    for (bool rmat : {false, true}) {
      std::unique_ptr<DB> db = MakeWeightedGraph(kind, rmat, 12, 30000, 21 + rmat);
      auto snap = db->GetSnapshot();
      const VertexId src = PickSource(*snap);
      std::vector<double> ref;
      ASSERT_OK(ReferenceSssp(*snap, src, &ref));
      // Every list kept with the light/heavy split; a cache that keeps part of the lists and
      // drops light blocks; no cache (no split). Auto width and a narrow one.
      for (size_t cache_bytes : {size_t{64} << 20, size_t{90000}, size_t{0}}) {
        for (double delta : {0.0, 0.01}) {
          SsspParams p;
          p.source = src;
          p.cache_bytes = cache_bytes;
          p.delta = delta;
          std::vector<double> seq;
          ASSERT_OK(Sssp(*snap, p, &seq));
          ASSERT_OK(CheckEpsilon(ref, seq, kGraphalyticsEpsilon, "SSSP sequential"));
          for (size_t g = 1; g <= 64; ++g) {
            for (size_t pd : {size_t{16}, size_t{0}, size_t{3}}) {
              if (pd != 16 && g % 9 != 1) continue;
              SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) +
                           (rmat ? " rmat" : " random") + " cache " + std::to_string(cache_bytes) +
                           " delta " + std::to_string(delta) + " group " + std::to_string(g) +
                           " prefetch " + std::to_string(pd));
              p.interleave = g;
              p.prefetch_distance = pd;
              std::vector<double> got;
              ASSERT_OK(Sssp(*snap, p, &got));
              // Every value written is a path's sum, so the fixed point is the same.
              ASSERT_EQ(got, seq);
            }
          }
        }
      }
    }
  }
}

// The interleaved SSSP with 1 and 3 worker threads (each thread its own scheduler and bins).
TEST(AnalyticsInterleave, SsspGroupsWithThreadCounts) {
  std::unique_ptr<DB> db = MakeWeightedGraph(GraphKind::kUndirected, true, 12, 30000, 31);
  auto snap = db->GetSnapshot();
  const VertexId src = PickSource(*snap);
  std::vector<double> ref;
  ASSERT_OK(ReferenceSssp(*snap, src, &ref));
  for (int threads : {1, 3}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<size_t>(threads));
    for (size_t cache_bytes : {size_t{64} << 20, size_t{90000}}) {
      SsspParams p;
      p.source = src;
      p.cache_bytes = cache_bytes;
      std::vector<double> seq;
      ASSERT_OK(Sssp(*snap, p, &seq));
      ASSERT_OK(CheckEpsilon(ref, seq, kGraphalyticsEpsilon, "SSSP sequential"));
      for (size_t g : {2, 5, 16, 64}) {
        SCOPED_TRACE("threads " + std::to_string(threads) + " cache " +
                     std::to_string(cache_bytes) + " group " + std::to_string(g));
        p.interleave = g;
        std::vector<double> got;
        ASSERT_OK(Sssp(*snap, p, &got));
        ASSERT_EQ(got, seq);
      }
    }
  }
}

// PageRank's pull iterations (10, the time includes the list cache's fill) or WCC on an in-memory store of 2^scale vertices with 8 random
// undirected edges per vertex (16 list entries), every list kept: each round runs every
// setting once, in rotating order (STRATA_INTERLEAVE_ROUNDS, default 3).
// STRATA_INTERLEAVE_BENCH=scale.
TEST(AnalyticsInterleave, InterleaveBench) {
  const char* env = std::getenv("STRATA_INTERLEAVE_BENCH");
  if (env == nullptr) GTEST_SKIP() << "set STRATA_INTERLEAVE_BENCH=scale to run";
  const int scale = std::atoi(env);
  const VertexId n = VertexId{1} << scale;
  // STRATA_INTERLEAVE_THREADS: the kernels' worker threads (default: TBB's choice). One
  // thread measures the per-thread effect without waiting on a core another process holds.
  const char* threads = std::getenv("STRATA_INTERLEAVE_THREADS");
  std::unique_ptr<tbb::global_control> limit;
  if (threads != nullptr) {
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                  static_cast<size_t>(std::atoi(threads)));
  }
  Options o;
  o.in_memory = true;
  o.graph_kind = GraphKind::kUndirected;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "interleave-bench", &db).ok());
  std::mt19937_64 rng(42);
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t done = 0; done < 8 * n; done += 65536) {
    WriteBatch b;
    for (int i = 0; i < 65536; ++i) b.InsertEdge(rng() % n, rng() % n);
    ASSERT_TRUE(db->Write(b).ok());
  }
  std::printf("load %.1f s, %.0f MiB\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              static_cast<double>(db->GetStats(false).memgraph_bytes) / (1 << 20));
  auto snap = db->GetSnapshot();
  struct Setting {
    const char* name;
    size_t group;
    bool prefetch;
  };
  // STRATA_INTERLEAVE_KERNEL: pr (default) or wcc.
  const std::string kernel =
      std::getenv("STRATA_INTERLEAVE_KERNEL") ? std::getenv("STRATA_INTERLEAVE_KERNEL") : "pr";
  const Setting settings[] = {{"sequential", 1, true},     {"interleave 8 no prefetch", 8, false},
                              {"interleave 4", 4, true},   {"interleave 8", 8, true},
                              {"interleave 16", 16, true}, {"interleave 32", 32, true}};
  const size_t k = std::size(settings);
  const int rounds = std::getenv("STRATA_INTERLEAVE_ROUNDS") ? std::atoi(std::getenv("STRATA_INTERLEAVE_ROUNDS")) : 3;
  std::vector<std::vector<double>> secs(k);
  std::vector<double> base;
  for (int r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < k; ++j) {
      const Setting& s = settings[(j + static_cast<size_t>(r)) % k];
      std::vector<double> rank;
      auto t = std::chrono::steady_clock::now();
      if (kernel == "wcc") {
        WccParams p;
        p.interleave = s.group;
        p.interleave_prefetch = s.prefetch;
        std::vector<VertexId> label;
        ASSERT_OK(Wcc(*snap, p, &label));
        rank.assign(label.begin(), label.end());
      } else {
        PageRankParams p;
        p.iterations = 10;
        p.cache_bytes = size_t{4} << 30;
        p.interleave = s.group;
        p.interleave_prefetch = s.prefetch;
        ASSERT_OK(PageRank(*snap, p, &rank));
      }
      secs[(j + static_cast<size_t>(r)) % k].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
      if (base.empty()) base = rank;
      ASSERT_EQ(rank, base);
    }
  }
  // Per round, each setting's time over the sequential path's (the same round's runs are
  // seconds apart, so the ratio cancels most of the load other processes add).
  for (size_t j = 0; j < k; ++j) {
    std::vector<double> ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(secs[j][r] / secs[0][r]);
    std::sort(ratio.begin(), ratio.end());
    std::printf("%s %-26s / sequential median %.3f (min %.3f max %.3f)\n", kernel.c_str(),
                settings[j].name, ratio[ratio.size() / 2], ratio.front(), ratio.back());
  }
  for (size_t j = 0; j < k; ++j) {
    std::sort(secs[j].begin(), secs[j].end());
    std::printf("%s %-26s s min %.2f median %.2f max %.2f\n", kernel.c_str(), settings[j].name,
                secs[j].front(), secs[j][secs[j].size() / 2], secs[j].back());
  }
}

}  // namespace
}  // namespace strata::analytics
