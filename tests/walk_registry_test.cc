// WalkRegistry: a grace period passes once every walk in progress at its start has ended, and
// only then; walks started after it do not hold it; slots are reused as threads come and go.
#include "mvcc/walk_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "tests/util/open_walk.h"

namespace strata::mvcc {
namespace {

using testing::OpenWalk;

TEST(WalkRegistryTest, PassesAtOnceWithNoWalkInProgress) {
  { WalkRegistry::Walk w; }  // a finished walk of this thread does not count
  WalkRegistry::Grace g;
  EXPECT_FALSE(g.Passed()) << "not started";
  ASSERT_TRUE(g.Start());
  EXPECT_TRUE(g.Passed());
}

TEST(WalkRegistryTest, WaitsForEveryWalkInProgressAtStart) {
  OpenWalk a, b;
  WalkRegistry::Grace g;
  ASSERT_TRUE(g.Start());
  EXPECT_FALSE(g.Passed());
  a.Release();
  EXPECT_FALSE(g.Passed()) << "b is still walking";
  b.Release();
  EXPECT_TRUE(g.Passed());
  EXPECT_TRUE(g.Passed()) << "stays passed";
}

TEST(WalkRegistryTest, WalksStartedAfterStartDoNotHoldIt) {
  WalkRegistry::Grace g;
  ASSERT_TRUE(g.Start());
  OpenWalk late;
  EXPECT_TRUE(g.Passed());
  // A new period started now waits for it.
  WalkRegistry::Grace g2;
  ASSERT_TRUE(g2.Start());
  EXPECT_FALSE(g2.Passed());
  late.Release();
  EXPECT_TRUE(g2.Passed());
}

// A thread that ends its walk and starts another before the writer looks again has still ended
// the walk the period waits for.
TEST(WalkRegistryTest, AnotherWalkOfTheSameThreadDoesNotHoldIt) {
  std::promise<void> entered, next, second_entered, done;
  std::thread t([&] {
    {
      WalkRegistry::Walk w;
      entered.set_value();
      next.get_future().wait();
    }
    WalkRegistry::Walk w2;
    second_entered.set_value();
    done.get_future().wait();
  });
  entered.get_future().wait();
  WalkRegistry::Grace g;
  ASSERT_TRUE(g.Start());
  EXPECT_FALSE(g.Passed());
  next.set_value();
  second_entered.get_future().wait();
  EXPECT_TRUE(g.Passed());
  done.set_value();
  t.join();
}

// Slots of exited threads are reused: many short-lived walking threads leave every slot free
// again, so a later grace period has nothing to wait for.
TEST(WalkRegistryTest, ExitedThreadsLeaveNoWalkBehind) {
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread> ts;
    for (int i = 0; i < 16; ++i) {
      ts.emplace_back([] {
        for (int k = 0; k < 100; ++k) WalkRegistry::Walk w;
      });
    }
    for (auto& t : ts) t.join();
  }
  WalkRegistry::Grace g;
  ASSERT_TRUE(g.Start());
  EXPECT_TRUE(g.Passed());
  EXPECT_LE(WalkRegistry::SlotCount(), 128u) << "slots of exited threads not reused";
}

// Walkers and a writer at full speed: a grace period started while walks run passes once they
// have moved on, every time (a period that never passes would hold memory forever).
TEST(WalkRegistryTest, PassesUnderContinuousWalks) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int i = 0; i < 3; ++i) {
    ts.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) WalkRegistry::Walk w;
    });
  }
  for (int k = 0; k < 200; ++k) {
    WalkRegistry::Grace g;
    ASSERT_TRUE(g.Start());
    while (!g.Passed()) std::this_thread::yield();
  }
  stop = true;
  for (auto& t : ts) t.join();
}

}  // namespace
}  // namespace strata::mvcc
