// The memgraph's batch locate modes (mem::LocateConfig): every mode and group size builds the
// same store as the reference model, on random and skewed batches that span many subgraphs.
// LocateBench (skipped unless STRATA_LOCATE_BENCH is set) is the measurement behind the
// default mode in docs/benchmarks.md ("Coroutine interleaving").
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "memgraph/memgraph.h"
#include "strata/db.h"
#include "tests/util/reference_graph.h"

namespace strata {
namespace {

using mem::LocateConfig;

// Restores the process-wide default when a test ends.
struct ConfigScope {
  LocateConfig saved = mem::GetLocateConfig();
  ~ConfigScope() { mem::SetLocateConfig(saved); }
};

// A batch of `n` ops over [0, limit): mostly edge inserts, some deletes and vertex ops; with
// `skewed`, half the endpoints come from 8 hubs (their lists cross the C-ART threshold).
WriteBatch Batch(std::mt19937_64& rng, VertexId limit, int n, bool skewed, bool weighted) {
  WriteBatch b;
  auto vertex = [&]() -> VertexId {
    if (skewed && rng() % 2 == 0) return (rng() % 8) * 97 % limit;
    return rng() % limit;
  };
  for (int i = 0; i < n; ++i) {
    const int r = static_cast<int>(rng() % 100);
    const double w = weighted ? static_cast<double>(rng() % 1000) / 8.0 : 1.0;
    if (r < 75) {
      b.InsertEdge(vertex(), vertex(), w);
    } else if (r < 88) {
      b.DeleteEdge(vertex(), vertex());
    } else if (r < 92 && weighted && n < 40) {
      b.SetWeight(vertex(), vertex(), w);  // aborts the batch when the edge is absent
    } else if (r < 97) {
      b.AddVertex(vertex());
    } else {
      b.DeleteVertex(vertex());  // takes the locking path
    }
  }
  return b;
}

struct Case {
  GraphKind kind;
  bool weighted;
  bool skewed;
};

void RunCase(const Case& c, const LocateConfig& cfg, uint64_t seed) {
  mem::SetLocateConfig(cfg);
  Options o;
  o.in_memory = true;
  o.graph_kind = c.kind;
  o.weighted = c.weighted;
  o.cart_threshold = 8;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "locate", &db).ok());
  testing::ReferenceGraph ref(c.kind, c.weighted);
  const VertexId limit = 3000;  // 47 subgraphs
  std::mt19937_64 rng(seed);
  int aborted = 0;
  for (int i = 0; i < 40; ++i) {
    // Every fourth batch is small, so that some SetWeight batches succeed and some abort.
    const int n = i % 4 == 3 ? 1 + static_cast<int>(rng() % 8) : 1 + static_cast<int>(rng() % 300);
    WriteBatch b = Batch(rng, limit, n, c.skewed, c.weighted);
    const bool ref_ok = ref.Apply(b);
    Status s = db->Write(b);
    ASSERT_EQ(ref_ok, s.ok()) << s.ToString();
    if (!s.ok()) {
      ASSERT_TRUE(s.IsNotFound()) << s.ToString();  // a failed build's Status, propagated
      ++aborted;
    }
  }
  if (c.weighted) {
    EXPECT_GT(aborted, 0);
  }
  auto snap = db->GetSnapshot();
  ASSERT_EQ(ref.Compare(*snap, limit), "");
}

std::string Name(const LocateConfig& c) {
  switch (c.mode) {
    case LocateConfig::kSequential: return "sequential";
    case LocateConfig::kPipeline: return "pipeline";
    case LocateConfig::kInterleave: break;
  }
  return "interleave group " + std::to_string(c.group) + (c.prefetch ? "" : " no prefetch");
}

TEST(MemgraphLocate, EveryModeAndGroupMatchesReference) {
  ConfigScope scope;
  std::vector<LocateConfig> configs = {{LocateConfig::kSequential, 1, true},
                                       {LocateConfig::kPipeline, 1, true}};
  for (int g = 1; g <= 64; ++g) {
    configs.push_back({LocateConfig::kInterleave, static_cast<uint8_t>(g), g % 5 != 0});
  }
  const Case cases[] = {{GraphKind::kDirected, false, false},
                        {GraphKind::kDirectedWithInEdges, true, true},
                        {GraphKind::kUndirected, false, true}};
  uint64_t seed = 1;
  for (const LocateConfig& cfg : configs) {
    for (const Case& c : cases) {
      SCOPED_TRACE(Name(cfg) + " kind " + std::to_string(static_cast<int>(c.kind)) +
                   (c.skewed ? " skewed" : " random"));
      RunCase(c, cfg, ++seed);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(MemgraphLocate, ConfigRoundTripsAndClampsGroup) {
  ConfigScope scope;
  mem::SetLocateConfig({LocateConfig::kInterleave, 0, false});
  EXPECT_EQ(mem::GetLocateConfig().group, 1);
  EXPECT_FALSE(mem::GetLocateConfig().prefetch);
  mem::SetLocateConfig({LocateConfig::kInterleave, 200, true});
  EXPECT_EQ(mem::GetLocateConfig().group, 64);
  EXPECT_EQ(mem::GetLocateConfig().mode, LocateConfig::kInterleave);
}

// Random edge inserts into an in-memory store of 2^scale vertices preloaded with 8 edges per
// vertex, in batches of STRATA_LOCATE_BATCH (default 1024) edges; each round times every mode
// once, in rotating order, on the same store (each mode's inserts land in it). Prints ns per
// inserted edge per mode over the rounds (STRATA_LOCATE_ROUNDS, default 5, of
// STRATA_LOCATE_BATCHES batches, default 200) and per-round ratios to the pipeline (median and
// quartiles).
// STRATA_LOCATE_BENCH=scale.
TEST(MemgraphLocate, LocateBench) {
  const char* env = std::getenv("STRATA_LOCATE_BENCH");
  if (env == nullptr) GTEST_SKIP() << "set STRATA_LOCATE_BENCH=scale to run";
  ConfigScope scope;
  const int scale = std::atoi(env);
  const VertexId n = VertexId{1} << scale;
  const int batch = std::getenv("STRATA_LOCATE_BATCH") ? std::atoi(std::getenv("STRATA_LOCATE_BATCH")) : 1024;
  Options o;
  o.in_memory = true;
  o.graph_kind = GraphKind::kDirected;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "locate-bench", &db).ok());
  std::mt19937_64 rng(42);
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t done = 0; done < 8 * n;) {
    WriteBatch b;
    for (int i = 0; i < 65536; ++i) b.InsertEdge(rng() % n, rng() % n);
    ASSERT_TRUE(db->Write(b).ok());
    done += 65536;
  }
  std::printf("preload %.1f s, %.0f MiB\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              static_cast<double>(db->GetStats(false).memgraph_bytes) / (1 << 20));
  std::vector<LocateConfig> configs = {{LocateConfig::kSequential, 1, true},
                                       {LocateConfig::kPipeline, 1, true},
                                       {LocateConfig::kInterleave, 8, false},
                                       {LocateConfig::kInterleave, 4, true},
                                       {LocateConfig::kInterleave, 8, true},
                                       {LocateConfig::kInterleave, 16, true},
                                       {LocateConfig::kInterleave, 32, true}};
  const int rounds = std::getenv("STRATA_LOCATE_ROUNDS") ? std::atoi(std::getenv("STRATA_LOCATE_ROUNDS")) : 5;
  const int batches = std::getenv("STRATA_LOCATE_BATCHES") ? std::atoi(std::getenv("STRATA_LOCATE_BATCHES")) : 200;
  std::vector<std::vector<double>> ns(configs.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < configs.size(); ++j) {
      const size_t k = (j + static_cast<size_t>(r)) % configs.size();
      mem::SetLocateConfig(configs[k]);
      std::vector<WriteBatch> bs(batches);
      for (WriteBatch& b : bs) {
        for (int i = 0; i < batch; ++i) b.InsertEdge(rng() % n, rng() % n);
      }
      auto t = std::chrono::steady_clock::now();
      for (WriteBatch& b : bs) ASSERT_TRUE(db->Write(b).ok());
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      ns[k].push_back(s * 1e9 / (double{1} * batches * batch));
    }
  }
  // Per round, each mode's time over the pipeline's (runs of one round are seconds apart, so
  // the ratio cancels most of the load other processes put on the machine).
  for (size_t k = 0; k < configs.size(); ++k) {
    std::vector<double> ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(ns[k][r] / ns[1][r]);
    std::sort(ratio.begin(), ratio.end());
    std::vector<double> sorted = ns[k];
    std::sort(sorted.begin(), sorted.end());
    std::printf("%-30s ns/edge min %.0f median %.0f max %.0f; / pipeline median %.3f (%.3f-%.3f)\n",
                Name(configs[k]).c_str(), sorted.front(), sorted[sorted.size() / 2], sorted.back(),
                ratio[ratio.size() / 2], ratio[ratio.size() / 4], ratio[ratio.size() * 3 / 4]);
  }
}

}  // namespace
}  // namespace strata
