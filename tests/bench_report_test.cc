// The benchmark's result agreement check (bench/report.h CheckDigests).
#include <gtest/gtest.h>

#include "bench/report.h"
#include "bench/workloads.h"

namespace strata::bench {
namespace {

Result Digest(const std::string& workload, const std::string& system, const std::string& graph,
              const std::string& cache, const std::string& digest) {
  JsonObject p;
  if (!graph.empty()) p.Str("graph", graph);
  if (!cache.empty()) p.Str("cache", cache);
  Result r = R(workload, system, "seconds", 1.0, "s", p);
  r.info.Str("digest", digest);
  return r;
}

const Result* Agree(const std::vector<Result>& rs, const std::string& workload,
                    const std::string& graph) {
  for (const Result& r : rs) {
    if (r.metric != "results_agree" || r.workload != workload) continue;
    if (r.params.Get("graph") == (graph.empty() ? "" : "\"" + graph + "\"")) return &r;
  }
  return nullptr;
}

// A kernel's digests are compared per graph: PageRank on the main graph (four systems) and on
// the ingest_large graph (three, with other ranks) agree; a system that differs on one graph
// makes that graph's check fail alone; cold runs are not compared; a workload one system
// reports gets no check.
TEST(BenchReport, DigestsAgreePerWorkloadAndGraph) {
  std::vector<Result> rs;
  for (const char* s : {"strata", "strata-mem", "rocksdb", "csr"}) {
    rs.push_back(Digest("pr", s, "main", "warm", "top=839720"));
  }
  for (const char* s : {"strata", "rocksdb", "csr"}) {
    rs.push_back(Digest("pr", s, "ingest_large", "warm", "top=260171"));
    rs.push_back(Digest("bfs", s, "ingest_large", "warm", "reached=10"));
  }
  rs.push_back(Digest("bfs", "strata", "ingest_large", "cold", "reached=11"));  // not compared
  rs.push_back(Digest("wcc", "strata", "main", "warm", "largest=3"));            // one system
  rs.push_back(Digest("search_edge", "strata", "", "", "found=5"));
  rs.push_back(Digest("search_edge", "csr", "", "", "found=6"));
  CheckDigests(&rs);
  const Result* main_pr = Agree(rs, "pr", "main");
  const Result* large_pr = Agree(rs, "pr", "ingest_large");
  const Result* bfs = Agree(rs, "bfs", "ingest_large");
  const Result* search = Agree(rs, "search_edge", "");
  ASSERT_NE(main_pr, nullptr);
  ASSERT_NE(large_pr, nullptr);
  ASSERT_NE(bfs, nullptr);
  ASSERT_NE(search, nullptr);
  EXPECT_EQ(main_pr->value, 1);
  EXPECT_EQ(large_pr->value, 1);
  EXPECT_EQ(bfs->value, 1);
  EXPECT_EQ(search->value, 0);
  EXPECT_EQ(main_pr->system, "all");
  EXPECT_NE(main_pr->info.Get("strata-mem").find("839720"), std::string::npos);
  EXPECT_EQ(Agree(rs, "wcc", "main"), nullptr);
}

// --scale moves every graph; ingest_large's budget and memgraphs grow with its graph and never
// shrink below the suite's own.
TEST(BenchSuite, RescaleKeepsIngestLargesDataToBudgetRatio) {
  SuiteConfig q;
  q.scale = 20;
  q.small_scale = 15;
  q.large_scale = 18;
  q.large_budget = size_t{16} << 20;
  q.large_memgraph_bytes = size_t{4} << 20;
  auto at = [&](int scale) {
    SuiteConfig c = q;
    RescaleSuite(&c, scale);
    return c;
  };
  const SuiteConfig up = at(22), down = at(12), same = at(20);
  EXPECT_EQ(up.scale, 22);
  EXPECT_EQ(up.small_scale, 17);
  EXPECT_EQ(up.large_scale, 20);
  EXPECT_EQ(up.large_budget, size_t{64} << 20);
  EXPECT_EQ(up.large_memgraph_bytes, size_t{16} << 20);
  EXPECT_EQ(down.small_scale, 10);
  EXPECT_EQ(down.large_scale, 10);
  EXPECT_EQ(down.large_budget, q.large_budget);
  EXPECT_EQ(down.large_memgraph_bytes, q.large_memgraph_bytes);
  EXPECT_EQ(same.large_scale, 18);
  EXPECT_EQ(same.large_budget, q.large_budget);
}

}  // namespace
}  // namespace strata::bench
