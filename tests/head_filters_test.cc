// HeadFilters, and the rule it serves in MemGraph::Apply: a commit holds back in limbo only the
// replaced versions of subgraphs whose heads a registered writer may read; the others are freed
// at once, however long that writer takes.
#include "memgraph/head_filters.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "memgraph/memgraph.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"

namespace strata {
namespace {

using mem::HeadFilters;

TEST(HeadFilters, AClaimedFilterAnswersForItsSubgraphsOnly) {
  HeadFilters h;
  EXPECT_FALSE(h.MayRead(h.Load(), 5));
  const uint32_t f = h.Claim();
  ASSERT_NE(f, HeadFilters::kNone);
  for (uint64_t s : {5u, 6u, 700u}) h.Mark(f, s);
  const HeadFilters::View v = h.Load();
  EXPECT_FALSE(v.all);
  for (uint64_t s : {5u, 6u, 700u}) EXPECT_TRUE(h.MayRead(v, s)) << s;
  for (uint64_t s : {4u, 7u, 64u + 5u, 699u}) EXPECT_FALSE(h.MayRead(v, s)) << s;
  // Subgraphs are kept modulo kBits: the same low bits answer yes (a collision only delays).
  EXPECT_TRUE(h.MayRead(v, 5 + HeadFilters::kBits));
  // A view without the filter claimed (a commit that found no writer behind it) answers no.
  EXPECT_FALSE(h.MayRead(HeadFilters::View(), 5));
  for (uint64_t s : {5u, 6u, 700u}) h.Clear(f, s);
  h.Release(f);
  EXPECT_FALSE(h.MayRead(h.Load(), 5));
  EXPECT_FALSE(h.MayRead(h.Load(), 700));
}

TEST(HeadFilters, AWriterPastTheLastFilterMakesEverySubgraphReadable) {
  HeadFilters h;
  std::vector<uint32_t> claimed;
  for (uint32_t i = 0; i < HeadFilters::kFilters; ++i) claimed.push_back(h.Claim());
  for (uint32_t i = 0; i < claimed.size(); ++i) {
    EXPECT_EQ(claimed[i], i);
    h.Mark(claimed[i], 10 * i);
  }
  EXPECT_FALSE(h.MayRead(h.Load(), 3));
  const uint32_t extra = h.Claim();
  EXPECT_EQ(extra, HeadFilters::kNone);
  h.Mark(extra, 3);  // no filter: nothing to mark
  EXPECT_TRUE(h.Load().all);
  EXPECT_TRUE(h.MayRead(h.Load(), 3));
  h.Release(extra);
  EXPECT_FALSE(h.Load().all);
  EXPECT_FALSE(h.MayRead(h.Load(), 3));
  EXPECT_TRUE(h.MayRead(h.Load(), 70));
  // A released filter is claimed again, with no marks of its last owner.
  h.Clear(claimed[7], 70);
  h.Release(claimed[7]);
  EXPECT_FALSE(h.MayRead(h.Load(), 70));
  EXPECT_EQ(h.Claim(), claimed[7]);
  EXPECT_FALSE(h.MayRead(h.Load(), 70));
}

// Older tiers whose HasEdge (what a kPutIfExists of an edge absent here asks) stops the first
// caller until Resume: a writer stalled in its optimistic build, registered, with the head of
// the subgraph it is building read.
class StallingTiers : public mem::OlderTiers {
 public:
  bool HasEdge(uint8_t, VertexId, VertexId) override {
    std::unique_lock<std::mutex> l(mu_);
    if (!stalled_) {
      stalled_ = true;
      cv_.notify_all();
      cv_.wait(l, [&] { return resumed_; });
    }
    return true;
  }
  void Neighbors(uint8_t, VertexId, std::vector<VertexId>*) override {}
  void WaitUntilStalled() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return stalled_; });
  }
  void Resume() {
    std::lock_guard<std::mutex> l(mu_);
    resumed_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stalled_ = false;
  bool resumed_ = false;
};

mem::PrimOp Put(uint32_t seq, VertexId u, VertexId v, bool if_exists = false) {
  return {if_exists ? mem::PrimOp::kPutIfExists : mem::PrimOp::kPut, 0, seq, u, v, 1.0};
}

// Writer B stalls in its build of subgraphs 0-2 while writer A commits to subgraphs 0 and 5-7
// again and again. The versions of 0 that A replaces wait for B (B may be reading one of them);
// those of 5-7 are freed at each commit. Without the filters every one of them waited; with a
// filter that forgot B's subgraphs, B would go on building from a freed version.
TEST(HeadFilters, AStalledWriterHoldsBackOnlyTheSubgraphsItReads) {
  for (bool stall : {false, true}) {
    SCOPED_TRACE(stall ? "B stalled" : "no B");
    mvcc::CommitClock clock;
    mvcc::ReaderTracer tracer;
    mem::MemGraph g(mem::MemGraphOptions(), &clock, &tracer);
    const std::vector<uint64_t> all = {0, 1, 2, 5, 6, 7};
    std::vector<mem::PrimOp> ops;
    for (uint64_t s : all) ops.push_back(Put(static_cast<uint32_t>(ops.size()), s * 64, 1));
    Timestamp t = 0;
    ASSERT_TRUE(g.Apply(&ops, nullptr, &t).ok());
    ASSERT_EQ(g.live_versions(), all.size());

    StallingTiers tiers;
    std::thread b;
    Status b_status;
    if (stall) {
      b = std::thread([&] {
        // Only subgraph 0's op asks the older tiers, so B stops in that build, after it read
        // the head, whatever order the build takes the items in.
        std::vector<mem::PrimOp> bops = {Put(0, 0 * 64 + 1, 9, /*if_exists=*/true),
                                         Put(1, 1 * 64 + 1, 9), Put(2, 2 * 64 + 1, 9)};
        Timestamp bt = 0;
        b_status = g.Apply(&bops, &tiers, &bt);
      });
      tiers.WaitUntilStalled();
    }
    constexpr uint64_t kCommits = 50;
    for (uint64_t i = 0; i < kCommits; ++i) {
      std::vector<mem::PrimOp> aops;
      for (uint64_t s : {0, 5, 6, 7}) {
        aops.push_back(Put(static_cast<uint32_t>(aops.size()), s * 64 + 2, 100 + i));
      }
      ASSERT_TRUE(g.Apply(&aops, nullptr, &t).ok());
    }
    // One version per subgraph, and with B stalled every version of subgraph 0 that A
    // replaced: those of 5-7 were freed though B is still registered below them.
    EXPECT_EQ(g.live_versions(), all.size() + (stall ? kCommits : 0));
    if (stall) {
      tiers.Resume();
      b.join();
      ASSERT_TRUE(b_status.ok()) << b_status.ToString();
      EXPECT_GE(g.rebuilt_versions(), 1u);  // B's build of subgraph 0 was from a replaced head
      // B is done: the next commit frees what waited for it.
      std::vector<mem::PrimOp> aops = {Put(0, 5 * 64 + 3, 1), Put(1, 6 * 64 + 3, 1),
                                       Put(2, 7 * 64 + 3, 1)};
      ASSERT_TRUE(g.Apply(&aops, nullptr, &t).ok());
      EXPECT_EQ(g.live_versions(), all.size());
      // B's writes are there.
      for (uint64_t s : {0, 1, 2}) {
        const mem::SubgraphVersion* v = g.VersionAt(s, t);
        ASSERT_NE(v, nullptr);
        bool found = false;
        mem::ScanVertex(v->out, 1, [&](const uint64_t* k, const double*, const uint8_t*,
                                       size_t n) {
          for (size_t j = 0; j < n; ++j) found |= k[j] == 9;
          return true;
        });
        EXPECT_TRUE(found) << "subgraph " << s;
      }
    }
  }
}

}  // namespace
}  // namespace strata
