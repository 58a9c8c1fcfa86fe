// Randomized differential test of the in-memory tier against ReferenceGraph: thousands of
// random batches (edge inserts/deletes/weight changes, vertex adds/deletes, failing batches),
// every query checked on the current snapshot and on snapshots held from earlier.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "memgraph/cart.h"
#include "strata/db.h"
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
};

class MemgraphDifferential : public ::testing::TestWithParam<Param> {};

WriteBatch RandomBatch(std::mt19937_64& rng, VertexId limit, bool weighted) {
  WriteBatch b;
  int n = 1 + static_cast<int>(rng() % 24);
  // A few hub vertices get most edges so they cross the C-ART threshold and back.
  auto vertex = [&]() -> VertexId {
    if (rng() % 3 == 0) return rng() % 4;
    return rng() % limit;
  };
  for (int i = 0; i < n; ++i) {
    uint64_t r = rng() % 100;
    double w = weighted ? static_cast<double>(rng() % 1000) / 8.0 : 1.0;
    if (r < 55) {
      b.InsertEdge(vertex(), vertex(), w);
    } else if (r < 80) {
      b.DeleteEdge(vertex(), vertex());
    } else if (r < 86 && weighted) {
      b.SetWeight(vertex(), vertex(), w);  // often aborts: the edge may be absent
    } else if (r < 92) {
      b.AddVertex(rng() % limit);
    } else {
      b.DeleteVertex(rng() % 97 == 0 ? rng() % 4 : rng() % limit);
    }
  }
  return b;
}

TEST_P(MemgraphDifferential, RandomBatchesMatchReference) {
  const Param p = GetParam();
  const uint64_t kept_before = mem::cart_detail::KeptPendingForTesting();
  if (p.pending_from != 0) mem::CArt::SetPendingForTesting(4, p.pending_from / 4);
  struct Reset {
    ~Reset() { mem::CArt::SetPendingForTesting(0, 0); }
  } reset;
  Options o;
  o.in_memory = true;
  o.graph_kind = p.kind;
  o.weighted = p.weighted;
  o.cart_threshold = p.cart_threshold;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "diff", &db).ok());

  testing::ReferenceGraph ref(p.kind, p.weighted);
  const VertexId limit = 200;  // spans 4 subgraphs, ids beyond 128 leave a subgraph partly used
  std::mt19937_64 rng(1234 + static_cast<int>(p.kind) * 7 + p.weighted);

  struct Held {
    std::unique_ptr<Snapshot> snap;
    testing::ReferenceGraph model;
  };
  std::vector<Held> held;
  int aborted = 0;
  const int kBatches = 3000;
  for (int i = 0; i < kBatches; ++i) {
    WriteBatch b = RandomBatch(rng, limit, p.weighted);
    bool ref_ok = ref.Apply(b);
    Status s = db->Write(b);
    ASSERT_EQ(ref_ok, s.ok()) << "batch " << i << ": " << s.ToString();
    if (!s.ok()) {
      ASSERT_TRUE(s.IsNotFound()) << s.ToString();
      ++aborted;
    }
    if (i % 50 == 0) {
      auto snap = db->GetSnapshot();
      std::string diff = ref.Compare(*snap, limit);
      ASSERT_EQ(diff, "") << "current snapshot after batch " << i;
      if (held.size() < 8) held.push_back({std::move(snap), ref});
    }
    if (i % 250 == 0) {
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
  auto snap = db->GetSnapshot();
  EXPECT_EQ(ref.Compare(*snap, limit), "");
  EXPECT_GT(ref.edges().size(), 100u) << "workload too sparse to mean anything";
  if (p.pending_from != 0) {
    EXPECT_GT(mem::cart_detail::KeptPendingForTesting() - kept_before, 100u)
        << "no C-ART kept updates pending";
  }
  held.clear();
  snap.reset();
  // With no reader left, a writer's GC trims every chain to its head.
  ASSERT_TRUE(db->InsertEdge(0, 1).ok());
  DBStats st = db->GetStats();
  EXPECT_GT(st.versions_reclaimed, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MemgraphDifferential,
    ::testing::Values(Param{GraphKind::kDirected, false, 8}, Param{GraphKind::kDirected, true, 8},
                      Param{GraphKind::kDirectedWithInEdges, true, 8},
                      Param{GraphKind::kUndirected, false, 8},
                      Param{GraphKind::kUndirected, true, 16},
                      Param{GraphKind::kDirectedWithInEdges, false, 256},
                      Param{GraphKind::kDirected, true, 8, 12},
                      Param{GraphKind::kUndirected, false, 16, 24}),
    [](const ::testing::TestParamInfo<Param>& i) {
      std::string k = i.param.kind == GraphKind::kDirected          ? "Directed"
                      : i.param.kind == GraphKind::kUndirected      ? "Undirected"
                                                                    : "DirectedIn";
      return k + (i.param.weighted ? "Weighted" : "") + "T" +
             std::to_string(i.param.cart_threshold) +
             (i.param.pending_from != 0 ? "P" + std::to_string(i.param.pending_from) : "");
    });

}  // namespace
}  // namespace strata
