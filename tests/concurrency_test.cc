// Snapshot consistency under concurrent writers. Writers commit batches that keep an
// invariant — edges come in symmetric pairs (a,b),(b,a) inserted or deleted together — while
// readers check on their snapshots that the invariant holds and that a held snapshot never
// changes. Meant to run clean under TSan (make tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <set>
#include <thread>

#include "strata/db.h"

namespace strata {
namespace {

std::vector<std::pair<VertexId, VertexId>> AllEdges(const Snapshot& s) {
  std::vector<std::pair<VertexId, VertexId>> e;
  s.ScanVertices(0, s.VertexIdBound(), [&](VertexId u) {
    s.ScanNeighbors(u, [&](const NeighborChunk& c) {
      for (size_t i = 0; i < c.size; ++i) e.push_back({u, c.dst[i]});
      return true;
    });
    return true;
  });
  return e;
}

void RunPairs(GraphKind kind, uint32_t cart_threshold) {
  Options o;
  o.in_memory = true;
  o.graph_kind = kind;
  o.cart_threshold = cart_threshold;
  o.reader_slots = 2;  // forces the tracer to grow past its first block
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "conc", &db).ok());

  const VertexId kVertices = 300;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> commits{0}, checks{0};
  std::atomic<int> failures{0};

  auto writer = [&](int id) {
    std::mt19937_64 rng(id);
    for (int i = 0; i < 4000; ++i) {
      VertexId a = rng() % 8 == 0 ? rng() % 3 : rng() % kVertices;  // hubs to exercise C-ART
      VertexId b = rng() % kVertices;
      WriteBatch wb;
      if (rng() % 3 == 0) {
        wb.DeleteEdge(a, b);
        wb.DeleteEdge(b, a);
      } else {
        wb.InsertEdge(a, b);
        wb.InsertEdge(b, a);
      }
      if (!db->Write(wb).ok()) failures++;
      commits++;
    }
  };
  auto reader = [&]() {
    while (!stop.load()) {
      auto snap = db->GetSnapshot();
      auto first = AllEdges(*snap);
      std::set<std::pair<VertexId, VertexId>> set(first.begin(), first.end());
      for (auto [a, b] : first) {
        if (!set.count({b, a})) failures++;
      }
      if (snap->NumEdges() != first.size()) failures++;
      auto again = AllEdges(*snap);  // a held snapshot never changes
      if (again != first) failures++;
      checks++;
    }
  };
  std::vector<std::thread> ts;
  ts.emplace_back(writer, 1);
  ts.emplace_back(writer, 2);
  ts.emplace_back(reader);
  ts.emplace_back(reader);
  ts[0].join();
  ts[1].join();
  stop = true;
  ts[2].join();
  ts[3].join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(commits.load(), 8000u);
  EXPECT_GT(checks.load(), 0u);
  auto snap = db->GetSnapshot();
  EXPECT_EQ(snap->timestamp(), db->GetStats().last_committed);
}

TEST(Concurrency, SymmetricPairsDirected) { RunPairs(GraphKind::kDirected, 16); }
TEST(Concurrency, SymmetricPairsDirectedIn) { RunPairs(GraphKind::kDirectedWithInEdges, 256); }

// Commits become visible strictly in timestamp order: a reader that sees batch k of a writer
// sees every earlier batch of that writer.
TEST(Concurrency, PrefixVisibility) {
  Options o;
  o.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "prefix", &db).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  auto writer = [&](VertexId src) {
    for (VertexId k = 0; k < 3000; ++k) {
      if (!db->InsertEdge(src, 1000 + k).ok()) failures++;
    }
  };
  auto reader = [&]() {
    while (!stop.load()) {
      auto snap = db->GetSnapshot();
      for (VertexId src : {1, 2}) {
        std::vector<VertexId> n;
        snap->GetNeighbors(src, &n);
        // Neighbors must be exactly 1000..1000+len-1.
        for (size_t i = 0; i < n.size(); ++i) {
          if (n[i] != 1000 + i) {
            failures++;
            break;
          }
        }
      }
    }
  };
  std::thread w1(writer, 1), w2(writer, 2), r(reader);
  w1.join();
  w2.join();
  stop = true;
  r.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace strata
