// Version chains under readers of many ages, at the MemGraph level: after every commit each
// registered reader must still select, in every subgraph, the newest version committed at or
// before its timestamp; a chain keeps no more versions than there are reader timestamps; and
// each slot's tail (what Unlink consults instead of the pinned version's header) is the chain's
// oldest version with its ts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "memgraph/memgraph.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"

namespace strata {
namespace {

constexpr uint64_t kSubgraphs = 6;

TEST(VersionChain, ReadersSelectTheirVersionsAndTailsStayTrue) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    mvcc::CommitClock clock;
    mvcc::ReaderTracer tracer;
    mem::MemGraphOptions opt;
    opt.cart_threshold = 8;
    mem::MemGraph g(opt, &clock, &tracer);
    std::mt19937_64 rng(seed);
    // Per subgraph, the timestamps of the commits that changed it, ascending.
    std::vector<std::vector<Timestamp>> changed(kSubgraphs);
    std::vector<mvcc::ReaderTracer::Slot> readers;
    uint64_t checks = 0, max_readers = 0;
    for (int step = 0; step < 4000; ++step) {
      // Readers come and go: a few long-lived ones, some that last a commit or two.
      if (rng() % 4 == 0 && readers.size() < 6) readers.push_back(tracer.Register(clock));
      if (!readers.empty() && rng() % 5 == 0) {
        const size_t k = rng() % readers.size();
        if (k != 0 || rng() % 8 == 0) {  // reader 0 tends to live long
          tracer.Unregister(readers[k]);
          readers.erase(readers.begin() + static_cast<ptrdiff_t>(k));
        }
      }
      max_readers = std::max<uint64_t>(max_readers, readers.size());
      // A batch of one to three subgraphs (one takes the lock-first path, more may not).
      std::vector<mem::PrimOp> ops;
      std::map<uint64_t, bool> touched;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < n; ++i) {
        const uint64_t s = rng() % kSubgraphs;
        const VertexId u = s * 64 + rng() % 64;
        ops.push_back({mem::PrimOp::kPut, 0, static_cast<uint32_t>(i), u, rng() % 1000, 1.0});
        touched[s] = true;
      }
      Timestamp t = 0;
      ASSERT_TRUE(g.Apply(&ops, nullptr, &t).ok());
      for (const auto& [s, unused] : touched) changed[s].push_back(t);
      ASSERT_EQ(g.FirstBadTailForTesting(), UINT64_MAX) << "after commit " << t;
      // Every reader, in every subgraph, selects the newest version at or before its ts.
      for (const mvcc::ReaderTracer::Slot& r : readers) {
        for (uint64_t s = 0; s < kSubgraphs; ++s) {
          const std::vector<Timestamp>& c = changed[s];
          auto it = std::upper_bound(c.begin(), c.end(), r.ts());
          const mem::SubgraphVersion* v = g.VersionAt(s, r.ts());
          if (it == c.begin()) {
            ASSERT_EQ(v, nullptr) << "subgraph " << s << " reader " << r.ts();
          } else {
            ASSERT_NE(v, nullptr) << "subgraph " << s << " reader " << r.ts();
            ASSERT_EQ(v->ts, *(it - 1)) << "subgraph " << s << " reader " << r.ts();
          }
          ++checks;
        }
      }
      // RapidStore's bound: a chain a commit touched keeps at most one version per distinct
      // reader timestamp, and the head.
      std::set<Timestamp> distinct;
      for (const mvcc::ReaderTracer::Slot& r : readers) distinct.insert(r.ts());
      for (const auto& [s, unused] : touched) {
        size_t length = 0;
        for (const mem::SubgraphVersion* v = g.VersionAt(s, UINT64_MAX); v != nullptr;
             v = v->older.load()) {
          ++length;
        }
        ASSERT_LE(length, distinct.size() + 1) << "subgraph " << s << " after commit " << t;
      }
    }
    EXPECT_GT(checks, 10000u);
    EXPECT_GE(max_readers, 4u);
    EXPECT_GT(g.reclaimed_versions(), 3000u);
    for (const mvcc::ReaderTracer::Slot& r : readers) tracer.Unregister(r);
  }
}

// Versions of a chain from the head, newest first.
size_t ChainLength(const mem::MemGraph& g, uint64_t s) {
  size_t n = 0;
  for (const mem::SubgraphVersion* v = g.VersionAt(s, UINT64_MAX); v != nullptr;
       v = v->older.load()) {
    ++n;
  }
  return n;
}

// A reader that released a prefix of the subgraphs (ReaderTracer::Release) pins nothing there:
// a commit on such a subgraph drops what only that reader selected, Reclaim drops it in the
// subgraphs no commit touches; past the prefix, and for every other reader, chains are as
// before.
TEST(VersionChain, AReleasedPrefixIsReclaimedAndTheRestKept) {
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
  mem::MemGraphOptions opt;
  mem::MemGraph g(opt, &clock, &tracer);
  auto put = [&](uint64_t s, VertexId v) {
    std::vector<mem::PrimOp> ops{{mem::PrimOp::kPut, 0, 0, s * 64, v, 1.0}};
    Timestamp t = 0;
    EXPECT_TRUE(g.Apply(&ops, nullptr, &t).ok());
    return t;
  };
  std::vector<Timestamp> first(kSubgraphs);
  for (uint64_t s = 0; s < kSubgraphs; ++s) first[s] = put(s, 1);
  mvcc::ReaderTracer::Slot old_reader = tracer.Register(clock);
  for (uint64_t s = 0; s < kSubgraphs; ++s) put(s, 2);
  mvcc::ReaderTracer::Slot young = tracer.Register(clock);
  for (VertexId v = 3; v < 6; ++v) {
    for (uint64_t s = 0; s < kSubgraphs; ++s) put(s, v);
  }
  for (uint64_t s = 0; s < kSubgraphs; ++s) {
    ASSERT_EQ(ChainLength(g, s), 3u) << "head, the young reader's, the old reader's";
  }
  const uint64_t live = g.live_versions();

  // The old reader is done with subgraphs 0-2.
  tracer.Release(old_reader, 3);
  put(1, 9);  // a commit there drops the old reader's version
  EXPECT_EQ(ChainLength(g, 1), 2u);
  EXPECT_EQ(ChainLength(g, 0), 3u) << "untouched: still there until reclaimed";
  g.Reclaim(0, 3);
  for (uint64_t s = 0; s < 3; ++s) {
    EXPECT_EQ(ChainLength(g, s), 2u) << "subgraph " << s;
    const mem::SubgraphVersion* v = g.VersionAt(s, young.ts());
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->ts, young.ts() - (kSubgraphs - 1 - s)) << "the young reader's, kept";
  }
  for (uint64_t s = 3; s < kSubgraphs; ++s) {
    EXPECT_EQ(ChainLength(g, s), 3u) << "subgraph " << s;
    const mem::SubgraphVersion* v = g.VersionAt(s, old_reader.ts());
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->ts, first[s]) << "the old reader still reads subgraph " << s;
  }
  // The commit: one version in, its replaced head and the old reader's version out; Reclaim:
  // the old reader's in subgraphs 0 and 2.
  EXPECT_EQ(g.live_versions(), live + 1 - 2 - 2);
  EXPECT_EQ(g.FirstBadTailForTesting(), UINT64_MAX);

  // Released everywhere: only the young reader's versions stay besides the heads.
  tracer.Release(old_reader, kSubgraphs);
  g.Reclaim(0, kSubgraphs);
  for (uint64_t s = 0; s < kSubgraphs; ++s) EXPECT_EQ(ChainLength(g, s), 2u) << "subgraph " << s;
  EXPECT_EQ(g.FirstBadTailForTesting(), UINT64_MAX);
  tracer.Unregister(old_reader);
  tracer.Unregister(young);
  g.Reclaim(0, kSubgraphs);
  for (uint64_t s = 0; s < kSubgraphs; ++s) EXPECT_EQ(ChainLength(g, s), 1u) << "subgraph " << s;
}

// Beside two writers, readers walk the subgraphs in order, releasing the prefix they have read
// and reclaiming it as they go (as PageRank's layout does through Snapshot::ReleaseBelow):
// every subgraph a reader has not released still gives it the version it first selected. Runs
// under ThreadSanitizer (make tsan-core): the released bounds, the writers' GC and Reclaim
// race here as in a store.
TEST(VersionChain, ReadersReleasingTheirPrefixBesideWritersKeepWhatTheyStillRead) {
  constexpr uint64_t kSubs = 64;
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
  mem::MemGraphOptions opt;
  mem::MemGraph g(opt, &clock, &tracer);
  for (uint64_t s = 0; s < kSubs; ++s) {
    std::vector<mem::PrimOp> ops{{mem::PrimOp::kPut, 0, 0, s * 64, 1, 1.0}};
    Timestamp t = 0;
    ASSERT_TRUE(g.Apply(&ops, nullptr, &t).ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> commits{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(100 + w);
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t s = rng() % kSubs;
        std::vector<mem::PrimOp> ops{
            {mem::PrimOp::kPut, 0, 0, s * 64 + rng() % 64, rng() % 4096, 1.0}};
        Timestamp t = 0;
        if (!g.Apply(&ops, nullptr, &t).ok()) ADD_FAILURE() << "commit failed";
        commits.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  uint64_t mismatches = 0, reads = 0;
  for (int round = 0; round < 40; ++round) {
    mvcc::ReaderTracer::Slot r = tracer.Register(clock);
    std::vector<const mem::SubgraphVersion*> first(kSubs);
    std::vector<Timestamp> first_ts(kSubs);
    for (uint64_t s = 0; s < kSubs; ++s) {
      first[s] = g.VersionAt(s, r.ts());
      ASSERT_NE(first[s], nullptr);
      first_ts[s] = first[s]->ts;
    }
    // Let the writers replace many of them before the walk.
    const uint64_t until = commits.load() + 2000;
    while (commits.load() < until) std::this_thread::yield();
    uint64_t released = 0;
    for (uint64_t s = 0; s < kSubs; ++s) {
      const mem::SubgraphVersion* v = g.VersionAt(s, r.ts());
      ++reads;
      if (v != first[s] || v == nullptr || v->ts != first_ts[s]) ++mismatches;
      if (s % 8 == 7) {
        tracer.Release(r, s + 1);
        g.Reclaim(released, s + 1);
        released = s + 1;
      }
    }
    tracer.Unregister(r);
  }
  stop = true;
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(mismatches, 0u) << "of " << reads << " reads past the released prefix";
  EXPECT_GT(g.reclaimed_versions(), 10000u);
  EXPECT_EQ(g.FirstBadTailForTesting(), UINT64_MAX);
}

// Commits publish in timestamp order whatever the writers' interleaving: after Publish(t) the
// clock's t_r is at least t (its own commit and every earlier one are visible) and never moves
// back; at the end t_r == t_w.
TEST(CommitClock, PublishesInOrderUnderConcurrentWriters) {
  mvcc::CommitClock clock;
  constexpr int kThreads = 4, kCommits = 20000;
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i) {
    ts.emplace_back([&] {
      Timestamp seen = 0;
      for (int k = 0; k < kCommits; ++k) {
        const Timestamp t = clock.NextCommit();
        clock.Publish(t);
        const Timestamp r = clock.read_ts();
        if (r < t || r < seen) bad.fetch_add(1);
        seen = r;
      }
    });
  }
  for (std::thread& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(clock.read_ts(), Timestamp{kThreads} * kCommits);
  EXPECT_EQ(clock.write_ts(), clock.read_ts());
}

// The memgraph's version counts (striped: each writer adds to its own line) add up once the
// writers stop: every version a commit created is either live or reclaimed, and with no
// reader registered each commit reclaims what it replaced. HasCommits flips at the first commit.
TEST(VersionChain, CountsAddUpAfterConcurrentWriters) {
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
  mem::MemGraph g(mem::MemGraphOptions{}, &clock, &tracer);
  EXPECT_FALSE(g.HasCommits());
  constexpr int kThreads = 3, kCommits = 3000;
  std::atomic<uint64_t> created{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i) {
    ts.emplace_back([&, i] {
      std::mt19937_64 rng(static_cast<uint64_t>(i) + 7);
      for (int k = 0; k < kCommits; ++k) {
        std::vector<mem::PrimOp> ops;
        std::set<uint64_t> touched;
        const int n = 1 + static_cast<int>(rng() % 4);
        for (int j = 0; j < n; ++j) {
          const VertexId u = rng() % (kSubgraphs * 64);
          ops.push_back({mem::PrimOp::kPut, 0, static_cast<uint32_t>(j), u, rng() % 1000, 1.0});
          touched.insert(u / 64);
        }
        Timestamp t = 0;
        ASSERT_TRUE(g.Apply(&ops, nullptr, &t).ok());
        created.fetch_add(touched.size());
      }
    });
  }
  for (std::thread& t : ts) t.join();
  EXPECT_TRUE(g.HasCommits());
  EXPECT_EQ(g.live_versions() + g.reclaimed_versions(), created.load());
  // One live version per subgraph touched (all were), nothing pinned by a reader.
  EXPECT_EQ(g.live_versions(), kSubgraphs);
  EXPECT_EQ(g.hollow_versions(), 0u);
}

}  // namespace
}  // namespace strata
