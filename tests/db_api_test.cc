// The public API's contract: argument errors, atomic batches, vertex ID recycling, directions,
// intersections, stats, independence of two stores.
#include <gtest/gtest.h>

#include <algorithm>

#include "strata/db.h"
#include "mvcc/reader_tracer.h"
#include "tests/util/file_util.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

std::unique_ptr<DB> OpenMem(GraphKind kind = GraphKind::kDirected, bool weighted = false) {
  Options o;
  o.in_memory = true;
  o.graph_kind = kind;
  o.weighted = weighted;
  std::unique_ptr<DB> db;
  Status s = DB::Open(o, "api", &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return db;
}

TEST(DBApi, RejectsBadOptionsNamingTheField) {
  Options o;
  o.in_memory = true;
  o.cart_threshold = 1;
  std::unique_ptr<DB> db;
  Status s = DB::Open(o, "x", &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("cart_threshold"), std::string::npos) << s.ToString();
  EXPECT_EQ(db, nullptr);
  // Writers would stall at l0_stall_trigger files with no compaction ever due.
  Options l0;
  l0.in_memory = true;
  l0.l0_compaction_trigger = 8;
  l0.l0_stall_trigger = 8;
  s = DB::Open(l0, "x", &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("l0_stall_trigger"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("l0_compaction_trigger (8)"), std::string::npos) << s.ToString();
  l0.l0_compaction_trigger = 0;
  s = DB::Open(l0, "x", &db);
  EXPECT_NE(s.message().find("l0_compaction_trigger: must be at least 1"), std::string::npos)
      << s.ToString();
  for (int parts : {0, -1, 65}) {
    Options sc;
    sc.in_memory = true;
    sc.max_subcompactions = parts;
    s = DB::Open(sc, "x", &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << parts;
    EXPECT_NE(s.message().find("max_subcompactions: must be in [1, 64]"), std::string::npos)
        << s.ToString();
  }
}

// The store ID: random per store, the same across reopens; 0 in memory.
TEST(DBApi, StatsCarryTheStoreId) {
  testing::TempDir dir;
  Options o;
  uint64_t ids[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const std::string path = dir.path() + "/s" + std::to_string(k);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    ids[k] = db->GetStats(false).store_id;
    EXPECT_NE(ids[k], 0u);
    ASSERT_TRUE(db->Close().ok());
    db.reset();
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    EXPECT_EQ(db->GetStats(false).store_id, ids[k]);
  }
  EXPECT_NE(ids[0], ids[1]);
  Options mem;
  mem.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(mem, "", &db).ok());
  EXPECT_EQ(db->GetStats(false).store_id, 0u);
}

TEST(DBApi, RejectsVertexIdsBeyondLimitAndAppliesNothing) {
  auto db = OpenMem();
  WriteBatch b;
  b.InsertEdge(1, 2);
  b.InsertEdge(3, VertexId{1} << 40);
  Status s = db->Write(b);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("op 1"), std::string::npos) << s.ToString();
  EXPECT_FALSE(db->GetSnapshot()->HasEdge(1, 2));
}

TEST(DBApi, SetWeightOnMissingEdgeAbortsWholeBatch) {
  auto db = OpenMem(GraphKind::kDirected, true);
  ASSERT_TRUE(db->InsertEdge(1, 2, 0.5).ok());
  WriteBatch b;
  b.InsertEdge(5, 6, 2.0);
  b.SetWeight(1, 2, 7.0);
  b.SetWeight(2, 1, 3.0);  // missing
  Status s = db->Write(b);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  auto snap = db->GetSnapshot();
  EXPECT_FALSE(snap->HasEdge(5, 6));
  double w = 0;
  ASSERT_TRUE(snap->GetEdge(1, 2, &w).ok());
  EXPECT_EQ(w, 0.5);
  // Inserted earlier in the same batch counts as existing.
  WriteBatch c;
  c.InsertEdge(7, 8, 1.0);
  c.SetWeight(7, 8, 9.0);
  ASSERT_TRUE(db->Write(c).ok());
  ASSERT_TRUE(db->GetSnapshot()->GetEdge(7, 8, &w).ok());
  EXPECT_EQ(w, 9.0);
}

TEST(DBApi, SetWeightNeedsWeightedStore) {
  auto db = OpenMem();
  ASSERT_TRUE(db->InsertEdge(1, 2).ok());
  EXPECT_TRUE(db->SetWeight(1, 2, 3.0).IsInvalidArgument());
}

TEST(DBApi, NewVertexRecyclesDeletedIds) {
  auto db = OpenMem();
  VertexId a, b, c;
  ASSERT_TRUE(db->NewVertex(&a).ok());
  ASSERT_TRUE(db->NewVertex(&b).ok());
  EXPECT_NE(a, b);
  ASSERT_TRUE(db->InsertEdge(a, b).ok());
  ASSERT_TRUE(db->DeleteVertex(a).ok());
  ASSERT_TRUE(db->NewVertex(&c).ok());
  EXPECT_EQ(c, a);
  auto snap = db->GetSnapshot();
  EXPECT_TRUE(snap->HasVertex(c));
  EXPECT_EQ(snap->Degree(c), 0u) << "a recycled ID starts with no edges";
}

// An edge insert adds both its vertices (its puts add the vertices whose lists they write; a
// directed store without in-edges adds the destination by a vertex op of its own), in batch
// order with the batch's vertex deletes: a delete before the insert leaves the vertex with
// only the new edge, a delete after it leaves neither the vertex nor its edges.
TEST(DBApi, EdgeInsertsAddTheirVerticesInBatchOrder) {
  for (GraphKind kind :
       {GraphKind::kDirected, GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)));
    auto db = OpenMem(kind);
    ASSERT_TRUE(db->InsertEdge(1, 200).ok());  // the two ends in different subgraphs
    ASSERT_TRUE(db->InsertEdge(3, 4).ok());
    {
      auto snap = db->GetSnapshot();
      for (VertexId v : {1, 200, 3, 4}) EXPECT_TRUE(snap->HasVertex(v)) << v;
      EXPECT_EQ(snap->NumVertices(), 4u);
    }
    WriteBatch b;
    b.DeleteVertex(3);
    b.InsertEdge(3, 5);     // 3 again, with this edge only
    b.InsertEdge(6, 300);
    b.DeleteVertex(6);      // gone, with its edge
    b.InsertEdge(7, 8);
    b.DeleteVertex(8);      // the destination gone
    ASSERT_TRUE(db->Write(b).ok());
    auto snap = db->GetSnapshot();
    for (VertexId v : {1, 200, 3, 4, 5, 300, 7}) EXPECT_TRUE(snap->HasVertex(v)) << v;
    for (VertexId v : {6, 8}) EXPECT_FALSE(snap->HasVertex(v)) << v;
    EXPECT_EQ(snap->NumVertices(), 7u);
    EXPECT_TRUE(snap->HasEdge(3, 5));
    EXPECT_FALSE(snap->HasEdge(3, 4));
    EXPECT_EQ(snap->Degree(3), 1u);
    EXPECT_FALSE(snap->HasEdge(6, 300));
    if (kind != GraphKind::kDirected) {  // without in-lists a destination's delete cannot find
      EXPECT_FALSE(snap->HasEdge(7, 8));  // the edges into it
      EXPECT_EQ(snap->Degree(300, kind == GraphKind::kUndirected ? Direction::kOut
                                                                  : Direction::kIn),
                0u);
    }
  }
}

TEST(DBApi, InDirectionNeedsInEdges) {
  auto db = OpenMem(GraphKind::kDirected);
  ASSERT_TRUE(db->InsertEdge(1, 2).ok());
  auto snap = db->GetSnapshot();
  EXPECT_TRUE(snap->ScanNeighbors(2, Direction::kIn, [](const NeighborChunk&) { return true; })
                  .IsNotSupported());
  EXPECT_EQ(snap->Degree(2, Direction::kIn), 0u);
  EXPECT_TRUE(snap->status().IsNotSupported()) << "value-returning calls record the error";

  auto db2 = OpenMem(GraphKind::kDirectedWithInEdges);
  ASSERT_TRUE(db2->InsertEdge(1, 2).ok());
  ASSERT_TRUE(db2->InsertEdge(3, 2).ok());
  std::vector<VertexId> in;
  ASSERT_TRUE(db2->GetSnapshot()->GetNeighbors(2, &in, nullptr, Direction::kIn).ok());
  EXPECT_EQ(in, (std::vector<VertexId>{1, 3}));
}

TEST(DBApi, UndirectedStoresBothDirections) {
  auto db = OpenMem(GraphKind::kUndirected);
  ASSERT_TRUE(db->InsertEdge(4, 9).ok());
  auto snap = db->GetSnapshot();
  EXPECT_TRUE(snap->HasEdge(9, 4));
  EXPECT_EQ(snap->NumEdges(), 2u);
  ASSERT_TRUE(db->DeleteEdge(9, 4).ok());
  EXPECT_FALSE(db->GetSnapshot()->HasEdge(4, 9));
  EXPECT_TRUE(snap->HasEdge(4, 9)) << "the old snapshot is unchanged";
}

TEST(DBApi, IntersectionMergeAndSearchPaths) {
  auto db = OpenMem(GraphKind::kDirected);
  WriteBatch b;
  for (VertexId x = 100; x < 3000; ++x) b.InsertEdge(1, x);     // big hub (C-ART)
  for (VertexId x = 100; x < 3000; x += 97) b.InsertEdge(2, x); // small: search path
  for (VertexId x = 50; x < 3000; x += 2) b.InsertEdge(3, x);   // similar size: merge path
  ASSERT_TRUE(db->Write(b).ok());
  auto snap = db->GetSnapshot();
  uint64_t expect_small = 0, expect_merge = 0;
  for (VertexId x = 100; x < 3000; x += 97) ++expect_small;
  for (VertexId x = 100; x < 3000; ++x) expect_merge += x % 2 == 0;
  EXPECT_EQ(snap->IntersectCount(1, 2), expect_small);
  EXPECT_EQ(snap->IntersectCount(2, 1), expect_small);
  EXPECT_EQ(snap->IntersectCount(1, 3), expect_merge);
  std::vector<VertexId> out;
  ASSERT_TRUE(snap->Intersect(3, 1, &out).ok());
  EXPECT_EQ(out.size(), expect_merge);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
}

TEST(DBApi, TwoStoresAreIndependent) {
  auto a = OpenMem();
  auto b = OpenMem();
  ASSERT_TRUE(a->InsertEdge(1, 2).ok());
  EXPECT_FALSE(b->GetSnapshot()->HasEdge(1, 2));
  EXPECT_EQ(b->GetStats().last_committed, 0u);
  EXPECT_EQ(a->GetStats().last_committed, 1u);
}

TEST(DBApi, ClosedStoreRefusesWrites) {
  auto db = OpenMem();
  ASSERT_TRUE(db->Close().ok());
  EXPECT_TRUE(db->InsertEdge(1, 2).IsInvalidArgument());
}

TEST(DBApi, SnapshotOutlivesDB) {
  auto db = OpenMem();
  ASSERT_TRUE(db->InsertEdge(1, 2).ok());
  auto snap = db->GetSnapshot();
  db.reset();
  EXPECT_TRUE(snap->HasEdge(1, 2));
}

// Options::drop_written_pages decides whether a flush's segment stays in the OS page cache
// (the next compaction reads it back) or leaves it after its fsync.
TEST(DBApi, DropWrittenPagesTakesFlushOutputsOutOfThePageCache) {
  testing::TempDir dir;
  if (testing::OnTmpfs(dir.path())) GTEST_SKIP() << "tmpfs pages cannot be dropped";
  for (bool drop : {false, true}) {
    const std::string path = dir.path() + (drop ? "/dropped" : "/kept");
    Options o;
    o.create_if_missing = true;
    o.wal = WalMode::kOff;
    o.background_compaction = false;
    o.drop_written_pages = drop;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    WriteBatch b;
    for (VertexId u = 0; u < 2000; ++u) {
      for (VertexId k = 1; k <= 200; ++k) b.InsertEdge(u, (u * 7919 + k * 104729) % 100000);
    }
    ASSERT_TRUE(db->Write(b).ok());
    ASSERT_TRUE(db->Flush().ok());
    const auto [resident, pages] = testing::SegmentPages(path);
    ASSERT_GT(pages, 64u) << "the flush wrote no segment of size";
    std::printf("drop_written_pages %d: %zu of %zu segment pages resident\n", drop, resident,
                pages);
    if (drop) {
      // What the store reads back when it opens the new file (its vertex table and filter
      // blocks, ~19% of this one) is cached again; the edge stream is not.
      EXPECT_LT(resident, pages / 3);
    } else if (resident < pages * 9 / 10) {
      GTEST_SKIP() << "written pages do not stay cached on this file system";
    }
  }
}

// ReleaseBelow: what the owner gave up is refused, loudly; the rest reads as before, and the
// store's later writes do not show through.
TEST(DBApi, AReleasedPrefixOfASnapshotRefusesItsReads) {
  auto db = OpenMem(GraphKind::kDirectedWithInEdges);
  for (VertexId u = 0; u < 256; ++u) ASSERT_TRUE(db->InsertEdge(u, (u * 7 + 1) % 256).ok());
  auto snap = db->GetSnapshot();
  for (VertexId u = 0; u < 256; u += 3) ASSERT_TRUE(db->InsertEdge(u, 300).ok());
  // Subgraphs 0-3 (vertices 0-255) each keep the snapshot's version beside the head; the
  // release of vertices 0-129 reclaims the snapshot's in the whole subgraphs 0 and 1.
  const uint64_t versions = db->GetStats(false).memgraph_versions;
  snap->ReleaseBelow(130);
  EXPECT_EQ(db->GetStats(false).memgraph_versions, versions - 2);
  auto refused = [](const Status& s) { return s.IsAborted(); };
  std::vector<VertexId> got;
  auto collect = [&](const NeighborChunk& c) {
    got.insert(got.end(), c.dst, c.dst + c.size);
    return true;
  };
  EXPECT_TRUE(refused(snap->ScanNeighbors(129, Direction::kOut, collect)));
  EXPECT_TRUE(refused(snap->ScanNeighbors(5, Direction::kIn, collect)));
  EXPECT_TRUE(refused(snap->GetEdge(0, 1, nullptr)));
  EXPECT_TRUE(refused(snap->ScanVertices(100, 200, [](VertexId) { return true; })));
  EXPECT_TRUE(refused(snap->ScanEdges(0, 256, Direction::kOut,
                                      [](VertexId, const NeighborChunk&) { return true; })));
  const VertexId batch[] = {200, 3};
  EXPECT_TRUE(refused(snap->ScanNeighborsBatch(batch, 2, Direction::kOut, false,
                                               [](size_t, const NeighborChunk&) { return true; })));
  EXPECT_TRUE(got.empty());
  // Past the bound: as before the release, without the later writes.
  ASSERT_TRUE(snap->ScanNeighbors(130, Direction::kOut, collect).ok());
  EXPECT_EQ(got, std::vector<VertexId>{(130 * 7 + 1) % 256});
  uint64_t seen = 0;
  ASSERT_TRUE(snap->ScanVertices(130, 256, [&](VertexId) { return ++seen, true; }).ok());
  EXPECT_EQ(seen, 126u);
  EXPECT_TRUE(snap->status().ok()) << "no value-returning call was refused yet";
  EXPECT_FALSE(snap->HasVertex(7));
  EXPECT_TRUE(snap->status().IsAborted()) << "a refused HasVertex is recorded";
  // A lower bound later changes nothing.
  snap->ReleaseBelow(64);
  EXPECT_TRUE(refused(snap->ScanNeighbors(100, Direction::kOut, collect)));
  // Other snapshots are not affected.
  auto other = db->GetSnapshot();
  EXPECT_TRUE(other->HasEdge(3, 300));
  EXPECT_EQ(other->NumVertices(), 257u);
}

// An empty commit: moves t_r one step, as a writer's commit does.
Timestamp CommitEmpty(mvcc::CommitClock* clock) {
  const Timestamp t = clock->NextCommit();
  clock->Publish(t);
  return t;
}

TEST(ReaderTracer, ReleasedBoundsReachGcAndStartAtZeroForTheSlotsNextReader) {
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer(1);  // one slot per block: the next reader reuses the freed one
  CommitEmpty(&clock);
  mvcc::ReaderTracer::Slot a = tracer.Register(clock);
  CommitEmpty(&clock);
  tracer.Release(a, 10);
  tracer.Release(a, 4);  // only raises
  std::vector<mvcc::ReaderTracer::Active> active;
  tracer.ActiveReaders(clock, &active);
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0].ts, a.ts());
  EXPECT_EQ(active[0].released, 10u);
  EXPECT_EQ(active[1].ts, clock.read_ts()) << "t_r, which releases nothing";
  EXPECT_EQ(active[1].released, 0u);
  tracer.Unregister(a);
  CommitEmpty(&clock);
  mvcc::ReaderTracer::Slot b = tracer.Register(clock);
  CommitEmpty(&clock);
  tracer.ActiveReaders(clock, &active);
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0].ts, b.ts());
  EXPECT_EQ(active[0].released, 0u) << "the slot's next reader starts with nothing released";
  // Ascending by timestamp whatever the slots' order: a newer reader in an older one's slot.
  mvcc::ReaderTracer::Slot c = tracer.Register(clock);  // the second slot
  CommitEmpty(&clock);
  tracer.Unregister(b);
  CommitEmpty(&clock);
  mvcc::ReaderTracer::Slot d = tracer.Register(clock);  // the first slot again
  CommitEmpty(&clock);
  tracer.ActiveReaders(clock, &active);
  ASSERT_EQ(active.size(), 3u);
  EXPECT_EQ(active[0].ts, c.ts());
  EXPECT_EQ(active[1].ts, d.ts());
  EXPECT_EQ(active[2].ts, clock.read_ts());
  EXPECT_EQ(tracer.MinActive(clock), active[0].ts);
  tracer.Unregister(c);
  tracer.Unregister(d);
}

// With no reader registered the scans skip the slots (reader_tracer.h, "Registered count"):
// what they return must be what a pass over the slots would, before, between and after
// readers, whichever slots those readers took; a tracer without the count (MemGraph's
// writers') returns the same.
TEST(ReaderTracer, NoReaderLeftMeansOnlyTheReadTimestamp) {
  for (bool counted : {true, false}) {
    SCOPED_TRACE(counted ? "counted" : "not counted");
    mvcc::CommitClock clock;
    mvcc::ReaderTracer tracer(2, counted);
    std::vector<mvcc::ReaderTracer::Active> active;
    CommitEmpty(&clock);
    tracer.ActiveReaders(clock, &active);
    ASSERT_EQ(active.size(), 1u);
    EXPECT_EQ(active[0].ts, clock.read_ts());
    EXPECT_EQ(tracer.RegisteredForTesting(), 0u);
    for (int round = 0; round < 3; ++round) {
      std::vector<mvcc::ReaderTracer::Slot> slots;
      for (int i = 0; i < 3 + round; ++i) {  // past one block: the later slots are in new ones
        slots.push_back(tracer.Register(clock));
        CommitEmpty(&clock);
      }
      EXPECT_EQ(tracer.RegisteredForTesting(), counted ? slots.size() : 0u);
      tracer.ActiveReaders(clock, &active);
      ASSERT_EQ(active.size(), slots.size() + 1);
      EXPECT_EQ(active[0].ts, slots[0].ts());
      EXPECT_EQ(tracer.MinActive(clock), slots[0].ts());
      for (size_t i = 0; i + 1 < slots.size(); ++i) tracer.Unregister(slots[i]);
      tracer.ActiveReaders(clock, &active);
      ASSERT_EQ(active.size(), 2u) << "the last reader, still registered, is seen";
      EXPECT_EQ(active[0].ts, slots.back().ts());
      tracer.Unregister(slots.back());
      CommitEmpty(&clock);
      EXPECT_EQ(tracer.RegisteredForTesting(), 0u);
      tracer.ActiveReaders(clock, &active);
      ASSERT_EQ(active.size(), 1u);
      EXPECT_EQ(active[0].ts, clock.read_ts());
      EXPECT_EQ(tracer.MinActive(clock), clock.read_ts());
      EXPECT_EQ(tracer.ActiveCount(), 0u);
    }
  }
}

// The scans read a block's slots up to one past the highest ever taken (reader_tracer.h,
// "Used prefix"): a reader on the last of them is seen after the readers before it leave, the
// prefix never shrinks, and a reader that takes a freed slot inside it does not widen it.
TEST(ReaderTracer, ScansReadTheUsedSlotsAndEveryReaderInThem) {
  for (bool counted : {true, false}) {
    SCOPED_TRACE(counted ? "counted" : "not counted");
    mvcc::CommitClock clock;
    mvcc::ReaderTracer tracer(64, counted);
    EXPECT_EQ(tracer.ScannedSlotsForTesting(), 0u);
    std::vector<mvcc::ReaderTracer::Slot> slots;
    for (int i = 0; i < 5; ++i) {
      CommitEmpty(&clock);
      slots.push_back(tracer.Register(clock));
    }
    CommitEmpty(&clock);
    EXPECT_EQ(tracer.ScannedSlotsForTesting(), 5u);
    for (int i = 0; i < 4; ++i) tracer.Unregister(slots[i]);
    std::vector<mvcc::ReaderTracer::Active> active;
    tracer.ActiveReaders(clock, &active);
    ASSERT_EQ(active.size(), 2u) << "the reader on the fifth slot";
    EXPECT_EQ(active[0].ts, slots[4].ts());
    EXPECT_EQ(tracer.MinActive(clock), slots[4].ts());
    EXPECT_EQ(tracer.ActiveCount(), 1u);
    EXPECT_EQ(tracer.ScannedSlotsForTesting(), 5u) << "the prefix never shrinks";
    CommitEmpty(&clock);
    mvcc::ReaderTracer::Slot again = tracer.Register(clock);  // the first slot, freed above
    EXPECT_EQ(tracer.ScannedSlotsForTesting(), 5u);
    CommitEmpty(&clock);
    tracer.ActiveReaders(clock, &active);
    ASSERT_EQ(active.size(), 3u);
    EXPECT_EQ(active[0].ts, slots[4].ts());
    EXPECT_EQ(active[1].ts, again.ts());
    tracer.Unregister(slots[4]);
    EXPECT_EQ(tracer.MinActive(clock), again.ts());
    tracer.Unregister(again);
    EXPECT_EQ(tracer.MinActive(clock), clock.read_ts());
    EXPECT_EQ(tracer.ActiveCount(), 0u);
  }
}

TEST(ReaderTracer, GrowsInsteadOfFailingAndTracksMinimum) {
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer(2);
  std::vector<mvcc::ReaderTracer::Slot> slots;
  for (int i = 0; i < 5; ++i) {
    const Timestamp t = CommitEmpty(&clock);
    slots.push_back(tracer.Register(clock));
    EXPECT_EQ(slots.back().ts(), t);
  }
  EXPECT_EQ(tracer.ActiveCount(), 5u);
  EXPECT_EQ(tracer.MinActive(clock), 1u);
  tracer.Unregister(slots[0]);
  tracer.Unregister(slots[1]);
  EXPECT_EQ(tracer.MinActive(clock), 3u);
  for (size_t i = 2; i < slots.size(); ++i) tracer.Unregister(slots[i]);
  EXPECT_EQ(tracer.MinActive(clock), clock.read_ts());
  EXPECT_EQ(tracer.ActiveCount(), 0u);
}

}  // namespace
}  // namespace strata
