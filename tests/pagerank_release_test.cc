// PageRank on a snapshot it owns (analytics::PageRank(std::unique_ptr<Snapshot>, ...)): it lets
// the snapshot go once its list cache holds every list, before its iterations, and the ranks
// are those of the snapshot all the same; it keeps the snapshot while any list is streamed.
// ReleasedSnapshot, what the iterations read through afterwards, refuses every read.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analytics/layout.h"
#include "analytics/released_snapshot.h"
#include "strata/analytics.h"
#include "strata/db.h"
#include "tests/util/assert_ok.h"
#include "tests/util/map_snapshot.h"

namespace strata::analytics {
namespace {

// An in-memory store: n vertices with m random edges among them, and one isolated vertex
// three layout blocks further on, so that the cache has blocks without any list.
std::unique_ptr<DB> MakeStore(GraphKind kind, VertexId n, uint64_t m, uint64_t seed) {
  Options o;
  o.in_memory = true;
  o.graph_kind = kind;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(o, "pagerank_release", &db).ok());
  std::mt19937_64 rng(seed);
  WriteBatch b;
  for (VertexId v = 0; v < n; ++v) b.AddVertex(v);
  b.AddVertex(n + 3 * 4096);
  for (uint64_t i = 0; i < m; ++i) b.InsertEdge(rng() % n, rng() % n);
  EXPECT_TRUE(db->Write(b).ok());
  return db;
}

// PageRank on `snap`, first held (the expected ranks), then handed over and run in a thread
// while this one watches the store's registered snapshots; once there are none (the kernel
// let its snapshot go) and the run is still going, `later` is written to the store.
struct Watched {
  std::vector<double> expected;  // the ranks with the snapshot held throughout
  std::vector<double> got;       // the ranks of the run handed the snapshot
  Status status;
  uint64_t streamed_blocks = 0;         // PageRankStats::streamed_blocks of the held run
  bool released = false;                // PageRankStats::snapshot_released
  bool released_while_running = false;  // the watcher saw no snapshot before the run ended
};
Watched RunWatched(DB* db, std::unique_ptr<Snapshot> snap, PageRankParams p,
                   const WriteBatch& later) {
  Watched w;
  PageRankStats st;
  p.stats = &st;
  w.status = PageRank(*snap, p, &w.expected);
  if (!w.status.ok()) return w;
  EXPECT_FALSE(st.snapshot_released);
  w.streamed_blocks = st.streamed_blocks;
  EXPECT_EQ(db->GetStats(false).active_readers, 1u);
  std::atomic<bool> done{false};
  std::thread t([&] {
    w.status = PageRank(std::move(snap), p, &w.got);
    done = true;
  });
  while (!done.load()) {
    if (db->GetStats(false).active_readers == 0) {
      w.released_while_running = !done.load();
      if (w.released_while_running) {
        EXPECT_TRUE(db->Write(later).ok());
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  t.join();
  w.released = st.snapshot_released;
  EXPECT_EQ(db->GetStats(false).active_readers, 0u);  // gone by the end, either way
  return w;
}

TEST(PageRankRelease, LetsTheSnapshotGoOnceEveryListIsCached) {
  // Pull over in-lists (undirected, directed with in-edges) and push over out-lists (kDirected:
  // edges into deleted vertices are filtered from the cache, still without the store).
  for (GraphKind kind :
       {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges, GraphKind::kDirected}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)));
    std::unique_ptr<DB> db = MakeStore(kind, 5000, 40000, 11);
    // What the writers do once the snapshot is gone: none of it may reach the ranks.
    WriteBatch later;
    for (VertexId v = 0; v < 200; ++v) later.InsertEdge(v, 4999 - v);
    later.DeleteVertex(7);
    // Enough iterations that the run outlasts the watcher's polls by far.
    Watched w = RunWatched(db.get(), db->GetSnapshot(), PageRankParams{0.85, 4000}, later);
    ASSERT_OK(w.status);
    EXPECT_EQ(w.streamed_blocks, 0u);
    EXPECT_TRUE(w.released);
    EXPECT_TRUE(w.released_while_running) << "the snapshot was registered until the run ended";
    EXPECT_EQ(w.got, w.expected);  // the same sums in the same order
  }
}

// Over out-lists (undirected, kDirected), the layout's pass releases each block's vertices
// once the cache keeps its lists (Snapshot::ReleaseBelow), while writers change every part of
// the graph: the store may then reclaim the versions the run no longer reads, and must keep
// the ones it still does. The ranks equal, bit for bit, those of a run on a held snapshot of
// the same graph (taken with the run's, and let go before the writers started: it pins
// nothing the run needs).
TEST(PageRankRelease, ReleasesItsPrefixAsItGoesBesideWriters) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirected}) {
    for (uint64_t seed : {21u, 22u}) {
      SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) + " seed " +
                   std::to_string(seed));
      constexpr VertexId kN = 6 * 4096;
      std::unique_ptr<DB> db = MakeStore(kind, kN, 120000, seed);
      PageRankParams p{0.85, 10};
      std::unique_ptr<Snapshot> owned = db->GetSnapshot();
      std::vector<double> expected;
      {
        std::unique_ptr<Snapshot> held = db->GetSnapshot();
        ASSERT_OK(PageRank(*held, p, &expected));
      }
      std::atomic<bool> stop{false};
      std::atomic<uint64_t> writes{0};
      std::thread writer([&] {
        std::mt19937_64 rng(seed * 7);
        while (!stop.load(std::memory_order_relaxed)) {
          const VertexId u = rng() % kN, v = rng() % kN;
          Status s = rng() % 3 == 0 ? db->DeleteEdge(u, v) : db->InsertEdge(u, v);
          if (!s.ok() && !s.IsNotFound()) ADD_FAILURE() << s.ToString();
          writes.fetch_add(1, std::memory_order_relaxed);
        }
      });
      while (writes.load() < 2000) std::this_thread::yield();  // the writer is going
      PageRankStats st;
      p.stats = &st;
      std::vector<double> got;
      Status s = PageRank(std::move(owned), p, &got);
      stop = true;
      writer.join();
      ASSERT_OK(s);
      EXPECT_EQ(got, expected);
      // Every block below the store's bound: the six with lists, three without, and the
      // isolated vertex's.
      EXPECT_EQ(st.released_blocks, 10u);
      EXPECT_TRUE(st.snapshot_released);
      EXPECT_EQ(db->GetStats(false).active_readers, 0u);
    }
  }
}

TEST(PageRankRelease, KeepsTheSnapshotWhileListsAreStreamed) {
  std::unique_ptr<DB> db = MakeStore(GraphKind::kUndirected, 9000, 60000, 12);
  PageRankParams p{0.85, 1500};
  p.cache_bytes = 100000;  // a block of lists or so: the others are read from the snapshot
  WriteBatch later;
  later.InsertEdge(1, 2);
  Watched w = RunWatched(db.get(), db->GetSnapshot(), p, later);
  ASSERT_OK(w.status);
  ASSERT_GT(w.streamed_blocks, 0u);
  EXPECT_FALSE(w.released);
  EXPECT_FALSE(w.released_while_running) << "let go while lists were still read from it";
  EXPECT_EQ(w.got, w.expected);
}

// On an undirected store whose lists the cache holds whole and unpacked, the iterations read
// the degrees as the cached lists' lengths (no degree array); the ranks are those of the runs
// that keep an array: lists streamed (no cache) or packed.
TEST(PageRankDegrees, FromTheCachedListsAsFromAnArray) {
  std::unique_ptr<DB> db = MakeStore(GraphKind::kUndirected, 5000, 40000, 11);
  std::unique_ptr<Snapshot> snap = db->GetSnapshot();
  PageRankParams p;
  p.iterations = 12;
  PageRankStats st;
  p.stats = &st;
  std::vector<double> from_cache, streamed, packed;
  ASSERT_OK(PageRank(*snap, p, &from_cache));
  EXPECT_TRUE(st.degrees_from_cache);
  EXPECT_EQ(st.streamed_blocks, 0u);
  PageRankParams q = p;
  q.cache_bytes = 0;
  ASSERT_OK(PageRank(*snap, q, &streamed));
  EXPECT_FALSE(st.degrees_from_cache);
  EXPECT_GT(st.streamed_blocks, 0u);
  q = p;
  q.packing = ListPacking::kAlways;
  ASSERT_OK(PageRank(*snap, q, &packed));
  EXPECT_FALSE(st.degrees_from_cache);
  EXPECT_GT(st.packed_blocks, 0u);
  EXPECT_EQ(from_cache, streamed);
  EXPECT_EQ(from_cache, packed);
  // Handed over, the same: the lengths outlive the snapshot.
  std::vector<double> owned;
  ASSERT_OK(PageRank(std::move(snap), p, &owned));
  EXPECT_TRUE(st.snapshot_released);
  EXPECT_TRUE(st.degrees_from_cache);
  EXPECT_EQ(from_cache, owned);
}

// PageRank gives the ReleasedSnapshot it iterates over an exact layout's counts instead of the
// snapshot's (each a scan of every vertex): they are the same, on every kind of store, with
// deleted vertices (kDirected keeps edges into them, and counts them in both).
TEST(PageRankRelease, AnExactLayoutsCountsAreTheSnapshots) {
  for (GraphKind kind :
       {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges, GraphKind::kDirected}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)));
    std::unique_ptr<DB> db = MakeStore(kind, 9000, 50000, 31);
    WriteBatch b;
    for (VertexId v = 0; v < 9000; v += 97) b.DeleteVertex(v);
    ASSERT_OK(db->Write(b));
    std::unique_ptr<Snapshot> snap = db->GetSnapshot();
    Layout L;
    ASSERT_OK(BuildLayout(*snap, &L, [](VertexId, const NeighborChunk&, uint64_t) {}));
    EXPECT_EQ(L.num_vertices, snap->NumVertices());
    EXPECT_EQ(L.num_out_edges, snap->NumEdges());
    const ReleasedSnapshot r(*snap, L.num_vertices, L.num_out_edges);
    EXPECT_EQ(r.NumVertices(), snap->NumVertices());
    EXPECT_EQ(r.NumEdges(), snap->NumEdges());
    EXPECT_EQ(r.VertexIdBound(), snap->VertexIdBound());
    EXPECT_EQ(r.timestamp(), snap->timestamp());
  }
}

TEST(PageRankRelease, NullSnapshotIsInvalidArgument) {
  std::vector<double> rank;
  Status s = PageRank(std::unique_ptr<Snapshot>(), PageRankParams{}, &rank);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST(ReleasedSnapshot, KeepsTheIdentityAndRefusesEveryRead) {
  MapSnapshot g(GraphKind::kUndirected);
  g.PutEdge(1, 2);
  g.PutEdge(2, 9);
  ReleasedSnapshot r(g);
  EXPECT_EQ(r.kind(), GraphKind::kUndirected);
  EXPECT_EQ(r.VertexIdBound(), g.VertexIdBound());
  EXPECT_EQ(r.NumVertices(), 3u);
  EXPECT_EQ(r.NumEdges(), 4u);
  EXPECT_EQ(r.timestamp(), g.timestamp());
  ASSERT_OK(r.status());  // nothing read yet: the released snapshot's status
  std::vector<VertexId> nbrs;
  EXPECT_TRUE(r.GetNeighbors(2, &nbrs).IsAborted());
  EXPECT_TRUE(nbrs.empty());
  EXPECT_TRUE(r.ScanAdjacency(0, 10, Direction::kOut, false, [](VertexId) { return true; },
                              [](VertexId, const NeighborChunk&) { return ScanStep::kMore; })
                  .IsAborted());
  EXPECT_TRUE(r.status().IsAborted());
  ReleasedSnapshot q(g);
  EXPECT_EQ(q.Degree(2, Direction::kOut), 0u);  // a value read: refused through status()
  EXPECT_TRUE(q.status().IsAborted());
}

}  // namespace
}  // namespace strata::analytics
