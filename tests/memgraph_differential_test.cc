// Randomized differential test of the in-memory tier against ReferenceGraph: thousands of
// random batches (edge inserts/deletes/weight changes, vertex adds/deletes, failing batches),
// every query checked on the current snapshot and on snapshots held from earlier.
//
// Two shapes of workload. Narrow: batches of up to 24 ops over 4 subgraphs, so every commit
// takes its small-batch paths (locks first, or the coroutine build of at most 8 items). Wide:
// batches of up to 400 ops over 47 subgraphs, half of the deletes and every weight change
// aimed at edges inserted before, so commits of more than 8 subgraphs take the optimistic,
// software-pipelined build (MemGraph::BuildPipelined) that the bench's loads run, with full
// append areas applied to the containers, tombstones and erasures among them.
//
// STRATA_DIFF_SEEDS=N runs every parameter with N seeds (1 by default; the default seed
// first), for sweeps outside `make test`, e.g. under ASan.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "memgraph/cart.h"
#include "memgraph/memgraph.h"
#include "strata/db.h"
#include "tests/util/random_batch.h"
#include "tests/util/reference_graph.h"

namespace strata {
namespace {

struct Param {
  GraphKind kind;
  bool weighted;
  uint32_t cart_threshold;
  // C-ARTs keep updates pending from this many entries on (mem::CArt::SetPendingForTesting, a
  // capacity of a quarter of the tree); 0: the default (none at these sizes).
  size_t pending_from = 0;
  bool wide = false;  // the wide workload (file comment)
};

class MemgraphDifferential : public ::testing::TestWithParam<Param> {};

// Narrow: batches of up to 24 ops, a hot set of 4 that vertex deletes also hit now and then.
// Wide: WideBatchMix with weight changes (1 op in 100), aimed at stored edges (RecentEdges)
// so that most batches land (2-5% aborted in the weighted cases, 5 seeds).
testing::BatchMix Mix(bool wide) {
  if (!wide) return testing::BatchMix{55, 80, 86, 92, 4, 24, 97};
  testing::BatchMix m = testing::WideBatchMix();
  m.set_weight = m.remove + 1;
  return m;
}

// One run of the workload of p with seed number `seed` (0: the suite's fixed seed).
void RunDifferential(const Param& p, int seed) {
  Options o;
  o.in_memory = true;
  o.graph_kind = p.kind;
  o.weighted = p.weighted;
  o.cart_threshold = p.cart_threshold;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "diff", &db).ok());

  // Narrow: 200 ids span 4 subgraphs, those beyond 128 leave one partly used. Wide: 3000 span
  // 47, the last partly used.
  const VertexId limit = p.wide ? 3000 : 200;
  const testing::BatchMix mix = Mix(p.wide);
  const int batches = p.wide ? 700 : 3000;
  const int check_every = p.wide ? 25 : 50;  // the current snapshot against the model
  const int held_every = p.wide ? 100 : 250;  // the held snapshots against theirs
  testing::ReferenceGraph ref(p.kind, p.weighted);
  std::mt19937_64 rng(1234 + static_cast<int>(p.kind) * 7 + p.weighted + 7919 * seed);
  testing::RecentEdges recent;

  struct Held {
    std::unique_ptr<Snapshot> snap;
    testing::ReferenceGraph model;
  };
  std::vector<Held> held;
  int aborted = 0;
  for (int i = 0; i < batches; ++i) {
    WriteBatch b = testing::RandomBatch(rng, limit, p.weighted, mix, p.wide ? &recent : nullptr);
    bool ref_ok = ref.Apply(b);
    Status s = db->Write(b);
    ASSERT_EQ(ref_ok, s.ok()) << "batch " << i << ": " << s.ToString();
    if (!s.ok()) {
      ASSERT_TRUE(s.IsNotFound()) << s.ToString();
      ++aborted;
    }
    if (i % check_every == 0) {
      auto snap = db->GetSnapshot();
      std::string diff = ref.Compare(*snap, limit);
      ASSERT_EQ(diff, "") << "current snapshot after batch " << i;
      if (held.size() < 8) held.push_back({std::move(snap), ref});
    }
    if (i % held_every == 0) {
      for (size_t h = 0; h < held.size(); ++h) {
        std::string diff = held[h].model.Compare(*held[h].snap, limit);
        ASSERT_EQ(diff, "") << "held snapshot " << h << " at batch " << i;
      }
      if (!held.empty() && rng() % 2 == 0) held.erase(held.begin() + rng() % held.size());
    }
  }
  if (p.weighted) {
    EXPECT_GT(aborted, 0) << "SetWeight on missing edges never exercised";
  }
  if (p.wide) {
    EXPECT_LT(aborted, batches / 4) << "too few batches landed to mean anything";
  }
  auto snap = db->GetSnapshot();
  EXPECT_EQ(ref.Compare(*snap, limit), "");
  EXPECT_GT(ref.edges().size(), 100u) << "workload too sparse to mean anything";
  held.clear();
  snap.reset();
  // With no reader left, a writer's GC trims every chain to its head.
  ASSERT_TRUE(db->InsertEdge(0, 1).ok());
  DBStats st = db->GetStats();
  EXPECT_GT(st.versions_reclaimed, 0u);
}

TEST_P(MemgraphDifferential, RandomBatchesMatchReference) {
  const Param p = GetParam();
  const uint64_t kept_before = mem::cart_detail::KeptPendingForTesting();
  const uint64_t pipelined_before = mem::MemGraph::PipelinedItemsForTesting();
  if (p.pending_from != 0) mem::CArt::SetPendingForTesting(4, p.pending_from / 4);
  struct Reset {
    ~Reset() { mem::CArt::SetPendingForTesting(0, 0); }
  } reset;
  for (int seed = testing::DiffSeedFirst(); seed < testing::DiffSeedEnd() && !HasFatalFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RunDifferential(p, seed);
  }
  const uint64_t pipelined = mem::MemGraph::PipelinedItemsForTesting() - pipelined_before;
  if (p.wide) {
    EXPECT_GT(pipelined, 1000u) << "the wide workload never reached the pipelined build";
  } else {
    EXPECT_EQ(pipelined, 0u) << "the narrow workload is meant for the small-batch paths";
  }
  if (p.pending_from != 0) {
    EXPECT_GT(mem::cart_detail::KeptPendingForTesting() - kept_before, 100u)
        << "no C-ART kept updates pending";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MemgraphDifferential,
    ::testing::Values(Param{GraphKind::kDirected, false, 8}, Param{GraphKind::kDirected, true, 8},
                      Param{GraphKind::kDirectedWithInEdges, true, 8},
                      Param{GraphKind::kUndirected, false, 8},
                      Param{GraphKind::kUndirected, true, 16},
                      Param{GraphKind::kDirectedWithInEdges, false, 256},
                      Param{GraphKind::kDirected, true, 8, 12},
                      Param{GraphKind::kUndirected, false, 16, 24},
                      Param{GraphKind::kDirected, true, 16, 0, true},
                      Param{GraphKind::kDirectedWithInEdges, false, 32, 0, true},
                      Param{GraphKind::kUndirected, true, 16, 48, true},
                      Param{GraphKind::kUndirected, false, 256, 0, true}),
    [](const ::testing::TestParamInfo<Param>& i) {
      std::string k = i.param.kind == GraphKind::kDirected          ? "Directed"
                      : i.param.kind == GraphKind::kUndirected      ? "Undirected"
                                                                    : "DirectedIn";
      return k + (i.param.weighted ? "Weighted" : "") + "T" +
             std::to_string(i.param.cart_threshold) +
             (i.param.pending_from != 0 ? "P" + std::to_string(i.param.pending_from) : "") +
             (i.param.wide ? "Wide" : "");
    });

}  // namespace
}  // namespace strata
