// Snapshot consistency under concurrent writers. Writers commit batches that keep an
// invariant — edges come in symmetric pairs (a,b),(b,a) inserted or deleted together — while
// readers check on their snapshots that the invariant holds and that a held snapshot never
// changes. Beside them, readers whose every snapshot is checked against the model: a writer's
// committed batches replayed afterwards give the graph each snapshot's timestamp must show
// (ModelCheckedReaders). Meant to run clean under TSan (make tsan).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "strata/db.h"
#include "memgraph/memgraph.h"
#include "mvcc/walk_registry.h"
#include "tests/util/graph_digest.h"
#include "tests/util/open_walk.h"
#include "tests/util/random_batch.h"
#include "tests/util/reference_graph.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

using testing::Digest;
using testing::ModelDigest;
using testing::SnapshotDigest;

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

// One writer commits wide random batches (up to 400 ops over 47 subgraphs: the pipelined
// build, area applies, C-ART moves, vertex deletes) while readers take snapshots at random
// moments, scan them whole (beside the writer's version GC), keep a few to scan again later,
// and record each scan's digest with the snapshot's timestamp. Afterwards the committed
// batches are replayed into the model: every scan must equal the model after exactly the
// batches committed at or before its snapshot's timestamp.
void RunModelCheckedReaders(GraphKind kind, bool weighted) {
  Options o;
  o.in_memory = true;
  o.graph_kind = kind;
  o.weighted = weighted;
  o.cart_threshold = 16;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "conc", &db).ok());
  const VertexId limit = 3000;
  const bool with_in = kind == GraphKind::kDirectedWithInEdges;
  const testing::BatchMix mix = testing::WideBatchMix();  // no weight changes: all commit

  // The writer: batch k committed, and snapshots taken just before and after it saw pre[k]
  // and post[k] (it is the only writer: its commit's timestamp is in (pre[k], post[k]]).
  std::vector<WriteBatch> batches;
  std::vector<Timestamp> pre, post;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::mt19937_64 rng(2026);
    testing::RecentEdges recent;
    for (int k = 0; k < 250; ++k) {
      WriteBatch b = testing::RandomBatch(rng, limit, weighted, mix, &recent);
      const Timestamp before = db->GetSnapshot()->timestamp();
      Status st = db->Write(b);
      if (!st.ok()) {
        ADD_FAILURE() << "batch " << k << ": " << st.ToString();
        break;
      }
      pre.push_back(before);
      post.push_back(db->GetSnapshot()->timestamp());
      batches.push_back(std::move(b));
    }
    done = true;
  });
  struct Scan {
    Timestamp ts;
    Digest d;
  };
  std::vector<std::vector<Scan>> scans(2);
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(77 + r);
      std::vector<std::pair<std::unique_ptr<Snapshot>, Digest>> kept;
      while (!done) {
        auto snap = db->GetSnapshot();
        const Digest d = SnapshotDigest(*snap, limit, with_in);
        scans[r].push_back({snap->timestamp(), d});
        if (kept.size() < 3 && rng() % 4 == 0) kept.push_back({std::move(snap), d});
        if (!kept.empty() && rng() % 3 == 0) {
          // A held snapshot scanned again while the writer went on: unchanged.
          const size_t i = rng() % kept.size();
          EXPECT_TRUE(SnapshotDigest(*kept[i].first, limit, with_in) == kept[i].second)
              << "held snapshot at ts " << kept[i].first->timestamp() << " changed";
          kept.erase(kept.begin() + static_cast<ptrdiff_t>(i));
        }
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_GT(batches.size(), 100u);

  // Model digests after each prefix of the batches: digests[k] after batches [0, k).
  testing::ReferenceGraph model(kind, weighted);
  std::vector<Digest> digests{ModelDigest(model, limit, with_in)};
  for (const WriteBatch& b : batches) {
    ASSERT_TRUE(model.Apply(b));
    digests.push_back(ModelDigest(model, limit, with_in));
  }
  size_t checked = 0, mid = 0;
  for (const auto& per_reader : scans) {
    for (const Scan& sc : per_reader) {
      // k: batches whose post-commit snapshot is at or before ts (certainly seen). Batch k
      // (the next) may be seen too when ts is past its pre-commit snapshot.
      const size_t k = static_cast<size_t>(std::upper_bound(post.begin(), post.end(), sc.ts) -
                                           post.begin());
      const bool maybe_next = k < pre.size() && pre[k] < sc.ts;
      const bool ok = sc.d == digests[k] || (maybe_next && sc.d == digests[k + 1]);
      EXPECT_TRUE(ok) << "a snapshot at ts " << sc.ts << " is not the graph after " << k
                      << " batches" << (maybe_next ? " (or one more)" : "");
      ++checked;
      mid += k > 0 && k < batches.size();
    }
  }
  EXPECT_GT(checked, 10u) << "the readers took too few snapshots to mean anything";
  EXPECT_GT(mid, 5u) << "too few snapshots fell while the writer ran";
}

TEST(Concurrency, ModelCheckedReadersUndirectedWeighted) {
  RunModelCheckedReaders(GraphKind::kUndirected, true);
}
TEST(Concurrency, ModelCheckedReadersDirectedIn) {
  RunModelCheckedReaders(GraphKind::kDirectedWithInEdges, false);
}

TEST(Concurrency, SymmetricPairsDirected) { RunPairs(GraphKind::kDirected, 16); }
TEST(Concurrency, SymmetricPairsDirectedIn) { RunPairs(GraphKind::kDirectedWithInEdges, 256); }

// Commits become visible strictly in timestamp order: a reader that sees batch k of a writer
// sees every earlier batch of that writer. Each source grows past the C-ART threshold, and its
// tree keeps updates pending (CArt::Apply) while the reader scans it.
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
        // Neighbors must be exactly 1000..1000+len-1, and the degree their number (a hub's
        // counts resolve its C-ART's pending updates, once per pending array, by whichever
        // reader asks first).
        for (size_t i = 0; i < n.size(); ++i) {
          if (n[i] != 1000 + i) {
            failures++;
            break;
          }
        }
        if (snap->Degree(src) != n.size()) failures++;
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

// Two writers commit batches to the same two subgraphs at once (so each usually builds a
// version its rival has just replaced and must rebuild it under the locks), each on its own
// destinations: no update may be lost, and a SetWeight on a missing edge must fail without
// applying its batch. The final graph must equal the union of the writers' models.
// Two writers whose batches share subgraphs (the optimistic build's rebuild path), each with
// its own destinations so its model is exact. On disk the memgraphs are tiny, so seals, flushes
// and compactions run under the writers (a batch built against a memgraph that is sealed
// meanwhile must land in the new one). With ops_per_batch 1 each transaction touches two
// subgraphs and is built under their locks instead (MemGraph::Apply, kLockFirstSubgraphs).
void RunConflictingWriters(bool in_memory, int ops_per_batch = 8) {
  testing::TempDir dir;
  Options o;
  o.in_memory = in_memory;
  o.weighted = true;
  o.cart_threshold = 32;  // some sources move to C-ARTs and back
  if (!in_memory) {
    o.memgraph_bytes = 64 << 10;
    o.memory_budget = 4 << 20;
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 128 << 10;
    o.level_fanout = 2;
    o.target_file_bytes = 64 << 10;
  }
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, in_memory ? "conflict" : dir.path() + "/db", &db).ok());
  using Model = std::map<std::pair<VertexId, VertexId>, double>;
  Model model[2];
  std::atomic<int> failures{0}, ready{0};
  auto writer = [&](int id) {
    std::mt19937_64 rng(100 + id);
    Model& m = model[id];
    ready++;
    while (ready.load() < 2) {
    }
    // At least 3000 batches each, and on until the rebuild path has run: a collision is a race
    // (a loaded machine may serialize the writers for a while), so it is waited for, up to a cap.
    const bool optimistic = ops_per_batch > 1;
    for (int i = 0; i < 3000 * (optimistic ? 1 : 2) ||
                    (optimistic && i < 200000 && db->GetStats(false).versions_rebuilt == 0);
         ++i) {
      WriteBatch wb;
      Model next = m;
      bool must_fail = false;
      for (int k = 0; k < ops_per_batch; ++k) {
        const VertexId u = rng() % 128;                      // subgraphs 0 and 1
        const VertexId v = 1000 + 2 * (rng() % 200) + id;    // this writer's destinations
        const double w = static_cast<double>(rng() % 1000);
        switch (rng() % 4) {
          case 0:
            wb.DeleteEdge(u, v);
            next.erase({u, v});
            break;
          case 1:
            wb.SetWeight(u, v, w);
            if (next.count({u, v})) {
              next[{u, v}] = w;
            } else {
              must_fail = true;
            }
            break;
          default:
            wb.InsertEdge(u, v, w);
            next[{u, v}] = w;
        }
      }
      const Status s = db->Write(wb);
      if (must_fail) {
        if (!s.IsNotFound()) failures++;
      } else if (s.ok()) {
        m = std::move(next);
      } else {
        failures++;
      }
    }
  };
  std::thread w0(writer, 0), w1(writer, 1);
  w0.join();
  w1.join();
  EXPECT_EQ(failures.load(), 0);
  Model want = model[0];
  want.insert(model[1].begin(), model[1].end());
  auto snap = db->GetSnapshot();
  Model got;
  for (VertexId u = 0; u < 128; ++u) {
    snap->ScanNeighbors(u, [&](const NeighborChunk& c) {
      for (size_t i = 0; i < c.size; ++i) got[{u, c.dst[i]}] = c.weight[i];
      return true;
    });
  }
  EXPECT_EQ(got, want);
  if (ops_per_batch > 1) {
    // The rebuild path ran (two writers on two subgraphs collide often).
    EXPECT_GT(db->GetStats().versions_rebuilt, 0u);
  } else {
    // Built under the locks: nothing to rebuild.
    EXPECT_EQ(db->GetStats().versions_rebuilt, 0u);
  }
  if (!in_memory) {
    EXPECT_GT(db->GetStats().flushes, 0u);
  }
  if (in_memory) {
    // Garbage is bounded: with no snapshot open and no other writer, one more commit to every
    // subgraph written (sources 0..127, destinations 1000..1399 as vertices) leaves exactly
    // one version per subgraph: every replaced one is freed, those in limbo included.
    snap.reset();
    WriteBatch last;
    std::set<VertexId> subgraphs;
    for (VertexId u : {VertexId{0}, VertexId{64}}) {
      for (VertexId v = 1000; v < 1400; v += 32) {
        last.InsertEdge(u, v, 1.0);
        subgraphs.insert(u / 64);
        subgraphs.insert(v / 64);
      }
    }
    ASSERT_TRUE(db->Write(last).ok());
    EXPECT_EQ(db->GetStats(false).memgraph_versions, subgraphs.size());
  }
}

// Two writers insert and delete the same edges, in batches over 16 subgraphs (the pipelined
// build, whose probe of an item's head runs ahead of the item's build: another writer may
// commit to the subgraph in between, and the probe's answer is then for another container).
// Whatever the commit order, each vertex's degree (the version's live count, which every
// update's prior state adjusts) must equal its neighbors as scanned; a prior state taken from
// a stale probe breaks it.
TEST(Concurrency, SharedEdgesKeepDegreesExact) {
  Options o;
  o.in_memory = true;
  o.cart_threshold = 8;  // vertices move to C-ARTs and back
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "shared", &db).ok());
  std::atomic<int> ready{0}, failures{0};
  auto writer = [&](int id) {
    std::mt19937_64 rng(7 + id);
    ready++;
    while (ready.load() < 2) {
    }
    for (int i = 0; i < 3000; ++i) {
      WriteBatch wb;
      for (int k = 0; k < 64; ++k) {
        const VertexId u = rng() % 1024, v = 5000 + rng() % 24;
        if (rng() % 5 < 3) {
          wb.InsertEdge(u, v);
        } else {
          wb.DeleteEdge(u, v);
        }
      }
      if (!db->Write(wb).ok()) failures++;
    }
  };
  std::thread w0(writer, 0), w1(writer, 1);
  w0.join();
  w1.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(db->GetStats(false).versions_rebuilt, 0u) << "the writers never collided";
  auto snap = db->GetSnapshot();
  uint64_t edges = 0;
  for (VertexId u = 0; u < 1024; ++u) {
    uint64_t n = 0;
    ASSERT_TRUE(snap->ScanNeighbors(u, [&](const NeighborChunk& c) {
      n += c.size;
      return true;
    }).ok());
    ASSERT_EQ(snap->Degree(u), n) << "vertex " << u;
    edges += n;
  }
  EXPECT_GT(edges, 0u);
}

TEST(Concurrency, ConflictingWritersLoseNothingInMemory) { RunConflictingWriters(true); }
TEST(Concurrency, ConflictingWritersLoseNothingOnDisk) { RunConflictingWriters(false); }
TEST(Concurrency, ConflictingSingleEdgeWritersLoseNothingInMemory) {
  RunConflictingWriters(true, 1);
}
TEST(Concurrency, ConflictingSingleEdgeWritersLoseNothingOnDisk) {
  RunConflictingWriters(false, 1);
}

// Version reclamation between readers: a version no reader can select is reclaimed even while
// an older reader runs, so a chain keeps at most one version per distinct reader timestamp (plus
// the head). Each held snapshot must still read exactly its own state.
std::set<VertexId> Neighbors(const Snapshot& s, VertexId u) {
  std::vector<VertexId> n;
  EXPECT_TRUE(s.GetNeighbors(u, &n).ok());
  return std::set<VertexId>(n.begin(), n.end());
}

TEST(Concurrency, VersionsBetweenReadersAreReclaimed) {
  for (uint32_t cart_threshold : {256u, 4u}) {  // the clustered index, then C-ARTs
    SCOPED_TRACE(cart_threshold);
    Options o;
    o.in_memory = true;
    o.cart_threshold = cart_threshold;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, "reclaim", &db).ok());
    std::set<VertexId> model;
    // Every vertex lives in subgraph 0, so every commit makes one version of it.
    auto step = [&](int k) {
      const VertexId v = 1 + static_cast<VertexId>(k * 7 % 60);
      if (model.count(v)) {
        ASSERT_TRUE(db->DeleteEdge(0, v).ok());
        model.erase(v);
      } else {
        ASSERT_TRUE(db->InsertEdge(0, v).ok());
        model.insert(v);
      }
    };
    // Enough commits between the snapshots for two grace periods' worth of hollow headers.
    const int n = static_cast<int>(mem::MemGraph::kGraceBatch);
    int k = 0;
    for (; k < 20; ++k) step(k);
    auto old_snap = db->GetSnapshot();
    const std::set<VertexId> old_model = model;
    for (; k < 20 + n; ++k) step(k);
    auto mid_snap = db->GetSnapshot();
    const std::set<VertexId> mid_model = model;
    for (; k < 20 + 2 * n; ++k) step(k);

    DBStats st = db->GetStats(false);
    // The head, mid_snap's version and old_snap's version; the old rule (free only below the
    // oldest reader) kept all 2n.
    EXPECT_LE(st.memgraph_versions, 3u);
    EXPECT_GE(st.versions_reclaimed, 2u * n - 3u);
    // The 2n hollow headers are freed by grace periods over the walks (kGraceBatch at a
    // time), not held until the snapshots end.
    EXPECT_LT(st.hollow_versions, n + n / 8u);
    EXPECT_EQ(Neighbors(*old_snap, 0), old_model);
    EXPECT_EQ(Neighbors(*mid_snap, 0), mid_model);
    EXPECT_EQ(Neighbors(*db->GetSnapshot(), 0), model);

    old_snap.reset();  // mid_snap still holds its version
    step(k++);
    EXPECT_EQ(Neighbors(*mid_snap, 0), mid_model);
    st = db->GetStats(false);
    EXPECT_LE(st.memgraph_versions, 2u);
    mid_snap.reset();
    // Once no reader is left every hollow header is due; a commit frees two grace periods'
    // worth of them.
    for (int i = 0; i < 2; ++i) step(k++);
    st = db->GetStats(false);
    EXPECT_EQ(st.memgraph_versions, 1u);
    EXPECT_EQ(st.hollow_versions, 0u);
  }
}

// A hollow header waits for the walks that may step through it, not for the snapshots: while
// an old snapshot is held its headers are freed a grace period at a time, and a walk that was
// in progress when a grace period started holds every header that period covers until it ends.
TEST(Concurrency, HollowHeadersWaitForWalksNotSnapshots) {
  Options o;
  o.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "walks", &db).ok());
  ASSERT_TRUE(db->InsertEdge(0, 1).ok());
  auto old_snap = db->GetSnapshot();
  // Six grace periods' worth of commits, each hollowing one header.
  const int n = static_cast<int>(mem::MemGraph::kGraceBatch);
  for (int k = 0; k < 6 * n; ++k) ASSERT_TRUE(db->InsertEdge(0, 2 + k % 50).ok());
  EXPECT_LT(db->GetStats(false).hollow_versions, n + n / 8u) << "headers held for the snapshot";
  {
    testing::OpenWalk walk;
    for (int k = 0; k < 6 * n; ++k) ASSERT_TRUE(db->InsertEdge(0, 2 + k % 50).ok());
    EXPECT_GT(db->GetStats(false).hollow_versions, 6u * n - n / 32u) << "freed under a walk in progress";
    walk.Release();
    // The period the walk held passes, the next covers the rest: a commit frees two
    // periods' worth.
    for (int k = 0; k < 8; ++k) ASSERT_TRUE(db->InsertEdge(0, 100 + k).ok());
    EXPECT_LT(db->GetStats(false).hollow_versions, n + n / 8u);
  }
  // A snapshot's read of the chain is such a walk.
  const uint64_t walks = mvcc::WalkRegistry::WalksOfThisThread();
  EXPECT_EQ(Neighbors(*old_snap, 0), std::set<VertexId>{1});
  EXPECT_GT(mvcc::WalkRegistry::WalksOfThisThread(), walks) << "VersionAt announced no walk";
}

// A grace period covers only the headers unlinked before it started: a walk that began after
// its start may be stepping through headers unlinked later, so those wait for a later period
// (or the readers), whichever hollow entry they joined. Commits of 1-7 subgraphs, so that the
// period starts with its newest entry partly filled in some of the runs.
TEST(Concurrency, HeadersUnlinkedDuringAGracePeriodWaitForALaterOne) {
  for (int width : {1, 3, 5, 7}) {
    SCOPED_TRACE(width);
    Options o;
    o.in_memory = true;
    o.graph_kind = GraphKind::kDirected;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, "period", &db).ok());
    int k = 0;
    // One version per subgraph per commit: edges inside subgraphs 0, 1, ..., width - 1.
    auto commit = [&] {
      WriteBatch b;
      for (int s = 0; s < width; ++s) b.InsertEdge(64 * s, 64 * s + 1 + k % 50);
      ++k;
      ASSERT_TRUE(db->Write(b).ok());
    };
    commit();
    auto old_snap = db->GetSnapshot();  // middle versions are hollowed, their headers kept
    auto walk_a = std::make_unique<testing::OpenWalk>();
    uint64_t h0 = 0;
    // The first commit that leaves kGraceBatch headers waiting starts a period covering all
    // of them; walk A, in progress at its start, holds it.
    while ((h0 = db->GetStats(false).hollow_versions) < mem::MemGraph::kGraceBatch) commit();
    testing::OpenWalk walk_b;  // began after the period started
    for (int i = 0; i < 30; ++i) commit();
    ASSERT_EQ(db->GetStats(false).hollow_versions, h0 + 30u * width) << "freed under walk A";
    walk_a.reset();
    commit();  // the period has passed: what it covers goes, nothing else
    EXPECT_EQ(db->GetStats(false).hollow_versions, 31u * width)
        << "headers unlinked during the period were freed with it";
    walk_b.Release();
  }
}

// A snapshot older than a subgraph's first version selects none of its versions: its walk
// reads every header down to the chain's null end. When a commit cuts that unselected run, the
// headers must wait for such walks like any middle run; freeing them as dead would free what
// the walk is reading (ThreadSanitizer saw it in ReadersOfManyAgesKeepTheirSnapshots).
TEST(Concurrency, ARunNoReaderSelectsAtTheChainsEndWaitsForWalks) {
  Options o;
  o.in_memory = true;
  o.graph_kind = GraphKind::kDirected;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "older", &db).ok());
  ASSERT_TRUE(db->InsertEdge(0, 1).ok());
  auto old_snap = db->GetSnapshot();  // before subgraph 1 exists
  const uint64_t hollow0 = db->GetStats(false).hollow_versions;
  ASSERT_TRUE(db->InsertEdge(64, 65).ok());
  {
    // old_snap's reader inside VersionAt(1, its ts), stepping through the version of (64, 65).
    testing::OpenWalk walk;
    ASSERT_TRUE(db->InsertEdge(64, 66).ok());  // cuts that version: no reader selects it
    DBStats st = db->GetStats(false);
    EXPECT_EQ(st.hollow_versions, hollow0 + 1)
        << "the version old_snap walks through was freed under its walk";
    // One head per subgraph is alive: the cut version is reclaimed once (hollowed), not
    // also freed.
    EXPECT_EQ(st.memgraph_versions, 2u);
    ASSERT_TRUE(db->InsertEdge(64, 67).ok());
    st = db->GetStats(false);
    EXPECT_EQ(st.hollow_versions, hollow0 + 2);
    EXPECT_EQ(st.memgraph_versions, 2u);
    EXPECT_EQ(Neighbors(*old_snap, 64), std::set<VertexId>{});
    EXPECT_EQ(Neighbors(*db->GetSnapshot(), 64), (std::set<VertexId>{65, 66, 67}));
  }
  old_snap.reset();
  for (int k = 0; k < 2 && db->GetStats(false).hollow_versions != 0; ++k) {
    ASSERT_TRUE(db->InsertEdge(64, 100 + k).ok());
  }
  EXPECT_EQ(db->GetStats(false).hollow_versions, 0u) << "the headers outlived the snapshot";
}

// When a walk that held many hollow headers ends, or a long reader does, the headers become due
// at once; each commit frees a bounded number of them (4096), so no single commit pays for all.
TEST(Concurrency, HollowHeadersAreFreedAFewThousandPerCommit) {
  Options o;
  o.in_memory = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "drain", &db).ok());
  ASSERT_TRUE(db->InsertEdge(0, 1).ok());
  auto old_snap = db->GetSnapshot();
  testing::OpenWalk walk;  // holds the grace periods: the headers wait for the snapshot
  const int n = static_cast<int>(mem::MemGraph::kHollowFreesPerCommit);
  for (int k = 0; k < 2 * n + n / 2; ++k) ASSERT_TRUE(db->InsertEdge(0, 2 + k % 50).ok());
  const uint64_t before = db->GetStats(false).hollow_versions;
  ASSERT_GT(before, 2u * n);
  walk.Release();
  old_snap.reset();
  ASSERT_TRUE(db->InsertEdge(0, 1000).ok());
  const uint64_t after_one = db->GetStats(false).hollow_versions;
  EXPECT_GT(after_one, 0u) << "one commit freed them all";
  // Whole entries; single-edge commits join entries of at most kHollowEntryMax.
  EXPECT_LE(before - after_one, n + mem::MemGraph::kHollowEntryMax);
  for (int k = 0; k < 4 && db->GetStats(false).hollow_versions != 0; ++k) {
    ASSERT_TRUE(db->InsertEdge(0, 1001 + k).ok());
  }
  EXPECT_EQ(db->GetStats(false).hollow_versions, 0u);
}

// Readers of many ages at once, each snapshot held across many commits and checked against the
// state at its own timestamp, while a writer churns a few subgraphs: whatever the reclamation
// unlinks or hollows, no held snapshot may change (a version freed or hollowed too early reads
// as other or no edges, or as freed memory under ASan).
TEST(Concurrency, ReadersOfManyAgesKeepTheirSnapshots) {
  Options o;
  o.in_memory = true;
  o.cart_threshold = 8;  // the hubs move into C-ARTs and back
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "ages", &db).ok());
  // Op j inserts (j % 3, 3 + j % 100) unless that edge exists, which it then deletes: the state
  // after ops [0, n) is a function of n, and commit j has timestamp base + j + 1.
  const Timestamp base = db->GetSnapshot()->timestamp();
  constexpr int kOps = 6000;
  auto state_after = [](uint64_t n) {
    std::vector<std::set<VertexId>> g(3);
    for (uint64_t j = 0; j < n; ++j) {
      const VertexId u = j % 3, v = 3 + j % 100;
      if (!g[u].erase(v)) g[u].insert(v);
    }
    return g;
  };
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> checks{0};
  uint64_t ops_done = 0;  // written by the writer before it sets `stop`
  std::thread writer([&] {
    std::vector<std::set<VertexId>> g(3);
    // At least kOps commits, and on until the readers have checked enough snapshots (a loaded
    // machine may not schedule them before kOps), up to a bound.
    uint64_t j = 0;
    for (; j < 50 * uint64_t{kOps} && (j < kOps || checks.load() < 200); ++j) {
      const VertexId u = j % 3, v = 3 + j % 100;
      Status s = g[u].count(v) ? db->DeleteEdge(u, v) : db->InsertEdge(u, v);
      if (!s.ok()) failures++;
      if (!g[u].erase(v)) g[u].insert(v);
    }
    ops_done = j;
    stop = true;
  });
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    struct Held {
      std::unique_ptr<Snapshot> snap;
      std::vector<std::set<VertexId>> want;
    };
    std::vector<Held> held;
    while (!stop.load()) {
      if (held.size() < 4 && rng() % 2 == 0) {
        Held h;
        h.snap = db->GetSnapshot();
        h.want = state_after(h.snap->timestamp() - base);
        held.push_back(std::move(h));
      }
      for (const Held& h : held) {
        for (VertexId u = 0; u < 3; ++u) {
          if (Neighbors(*h.snap, u) != h.want[u]) failures++;
        }
        checks++;
      }
      if (!held.empty() && rng() % 3 == 0) held.erase(held.begin() + rng() % held.size());
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  writer.join();
  r1.join();
  r2.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(checks.load(), 100u);
  DBStats st = db->GetStats(false);
  EXPECT_GT(st.versions_reclaimed, 0u);
  EXPECT_EQ(Neighbors(*db->GetSnapshot(), 1), state_after(ops_done)[1]);
  // No reader left: the hollow headers go, at most 4096 per commit (each commit made at most
  // two: the source's subgraph and, when it created the destination, the destination's).
  for (uint64_t k = 0; k <= 2 * ops_done / 4096 + 1; ++k) {
    ASSERT_TRUE(db->InsertEdge(0, 1000 + k).ok());
  }
  st = db->GetStats(false);
  EXPECT_EQ(st.hollow_versions, 0u);
}


// A vertex delete locks its vertex's subgraph and every subgraph holding a neighbor, retrying
// with the larger set when it finds a neighbor outside what it holds. Meanwhile another writer
// adds and removes those neighbor edges, so the set the final expansion needs may be smaller
// than the one held: the delete must release the extra subgraphs (a held lock no op covers
// would never be released, and the next writer there would wait forever), and every batch of
// both writers must complete.
TEST(Concurrency, VertexDeletesWhileNeighborsComeAndGo) {
  for (GraphKind kind : {GraphKind::kUndirected, GraphKind::kDirectedWithInEdges}) {
    Options o;
    o.in_memory = true;
    o.graph_kind = kind;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, "vdel", &db).ok());
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> toggles{0};
    std::thread churn([&] {
      std::mt19937_64 rng(7);
      while (!stop.load()) {
        WriteBatch b;
        const VertexId far = 64 * (1 + rng() % 32) + rng() % 64;  // another subgraph each time
        if (rng() % 2) {
          b.InsertEdge(1, far);
        } else {
          b.DeleteEdge(1, far);
        }
        ASSERT_TRUE(db->Write(b).ok());
        toggles.fetch_add(1);
      }
    });
    std::mt19937_64 rng(11);
    for (int i = 0; i < 20000; ++i) {
      WriteBatch b;
      for (int k = 0; k < 4; ++k) b.InsertEdge(1, 64 * (1 + rng() % 32) + rng() % 64);
      ASSERT_TRUE(db->Write(b).ok());
      WriteBatch d;
      d.DeleteVertex(1);
      ASSERT_TRUE(db->Write(d).ok());
    }
    stop = true;
    churn.join();
    EXPECT_GT(toggles.load(), 0u);
    // Every subgraph the deletes touched is free again: a write to each completes.
    WriteBatch all;
    for (VertexId s = 0; s <= 33; ++s) all.InsertEdge(64 * s + 5, 64 * s + 6);
    ASSERT_TRUE(db->Write(all).ok());
  }
}

}  // namespace
}  // namespace strata
