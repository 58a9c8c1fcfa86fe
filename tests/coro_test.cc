// util/coro.h: the interleaving scheduler, its frame arena and its awaitables.
#include "util/coro.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// A counting global allocator: every operator new in this binary passes here, so a test can
// assert that a region allocated nothing. (GCC cannot see that these new and delete pair up.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<size_t> g_news{0};
}  // namespace

void* operator new(size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace strata::coro {
namespace {

// Item i suspends steps[i] times, recording (i, step) at each resumption.
Task<void> Stepper(size_t i, int steps, std::vector<std::pair<size_t, int>>* log) {
  for (int s = 0; s < steps; ++s) {
    log->emplace_back(i, s);
    co_await Suspend{};
  }
  log->emplace_back(i, steps);
}

TEST(CoroTest, RoundRobinOrderAndCompletion) {
  for (size_t group = 1; group <= 64; ++group) {
    const size_t n = 100;
    std::vector<int> steps(n);
    for (size_t i = 0; i < n; ++i) steps[i] = static_cast<int>((i * 7) % 5);
    std::vector<std::pair<size_t, int>> log;
    Scheduler sched(group);
    Status st = sched.Run(n, [&](size_t i) { return Stepper(i, steps[i], &log); });
    ASSERT_TRUE(st.ok());
    // Completion: every item ran every step, in its own order.
    std::vector<int> seen(n, 0);
    for (auto [i, s] : log) {
      ASSERT_EQ(s, seen[i]) << "group " << group;
      ++seen[i];
    }
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], steps[i] + 1);
    // Ordering: simulate the contract (slots resumed in order; a finished slot starts the
    // next index, which first runs in the next round) and compare.
    std::vector<std::pair<size_t, int>> want;
    std::vector<long> slot(group, -1), at(group, 0);
    size_t next = 0, live = 0;
    for (size_t s = 0; s < group && next < n; ++s, ++live) slot[s] = static_cast<long>(next++);
    while (live != 0) {
      for (size_t s = 0; s < group; ++s) {
        if (slot[s] < 0) continue;
        const size_t i = static_cast<size_t>(slot[s]);
        want.emplace_back(i, static_cast<int>(at[s]));
        if (at[s]++ < steps[i]) continue;
        at[s] = 0;
        slot[s] = -1;
        --live;
        if (next < n) {
          slot[s] = static_cast<long>(next++);
          ++live;
        }
      }
    }
    ASSERT_EQ(log, want) << "group " << group;
    // At most `group` live: item i + group cannot start before item i finished (checked by
    // the simulation above); group 1 is strictly sequential.
    if (group == 1) {
      for (size_t k = 1; k < log.size(); ++k) ASSERT_LE(log[k - 1].first, log[k].first);
    }
  }
}

Task<Status> Prefetching(const std::vector<uint64_t>* table, size_t i, uint64_t* out) {
  size_t at = i % table->size();
  uint64_t sum = 0;
  for (int hop = 0; hop < 4; ++hop) {
    co_await PrefetchAndSuspend(&(*table)[at]);
    sum += (*table)[at];
    at = (*table)[at] % table->size();
  }
  *out = sum;
  co_return Status::OK();
}

TEST(CoroTest, PrefetchingChainsMatchSequential) {
  std::vector<uint64_t> table(1 << 14);
  for (size_t i = 0; i < table.size(); ++i) table[i] = (i * 2654435761u) ^ (i >> 3);
  std::vector<uint64_t> want(1000);
  for (size_t i = 0; i < want.size(); ++i) {
    size_t at = i;
    for (int hop = 0; hop < 4; ++hop) {
      want[i] += table[at];
      at = table[at] % table.size();
    }
  }
  for (size_t group : {1, 2, 3, 8, 17, 64}) {
    std::vector<uint64_t> got(want.size());
    Scheduler sched(group);
    ASSERT_TRUE(sched.Run(got.size(), [&](size_t i) { return Prefetching(&table, i, &got[i]); }).ok());
    EXPECT_EQ(got, want);
    EXPECT_EQ(sched.arena().fallbacks(), 0u);
  }
}

Task<Status> MaybeFail(size_t i, size_t fail_at, std::vector<size_t>* done) {
  co_await Suspend{};
  if (i == fail_at) co_return Status::Corruption("item " + std::to_string(i));
  co_await Suspend{};
  done->push_back(i);
  co_return Status::OK();
}

TEST(CoroTest, StatusPropagation) {
  for (size_t group = 1; group <= 64; group += 7) {
    std::vector<size_t> done;
    Scheduler sched(group);
    Status st = sched.Run(200, [&](size_t i) { return MaybeFail(i, 50, &done); });
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.ToString().find("item 50"), std::string::npos) << st.ToString();
    // No item after the failure's window started; every started item other than 50 finished.
    for (size_t i : done) EXPECT_LT(i, 50 + group);
    EXPECT_EQ(std::count(done.begin(), done.end(), 50u), 0);
    // The scheduler is reusable after a failure.
    done.clear();
    ASSERT_TRUE(sched.Run(10, [&](size_t i) { return MaybeFail(i, 99, &done); }).ok());
    EXPECT_EQ(done.size(), 10u);
  }
}

Task<void> MaybeThrow(size_t i, size_t* finished) {
  co_await Suspend{};
  if (i == 7) throw std::runtime_error("seven");
  ++*finished;
}

TEST(CoroTest, ExceptionPropagation) {
  for (size_t group : {1, 4, 64}) {
    size_t finished = 0;
    Scheduler sched(group);
    EXPECT_THROW((void)sched.Run(20, [&](size_t i) { return MaybeThrow(i, &finished); }),
                 std::runtime_error);
    EXPECT_GE(finished, 7u);
    EXPECT_LT(finished, 20u);  // nothing starts after the throw's item finished
    EXPECT_EQ(sched.arena().fallbacks(), 0u);
    finished = 0;
    ASSERT_TRUE(sched.Run(5, [&](size_t i) { return MaybeThrow(i + 100, &finished); }).ok());
    EXPECT_EQ(finished, 5u);
  }
}

TEST(CoroTest, NoAllocationAfterWarmUp) {
  std::vector<uint64_t> table(4096);
  std::iota(table.begin(), table.end(), 1);
  std::vector<uint64_t> got(10000);
  for (size_t group : {1, 16, 64}) {
    Scheduler sched(group);  // the arena is allocated here
    const size_t before = g_news.load();
    Status st = sched.Run(got.size(), [&](size_t i) { return Prefetching(&table, i, &got[i]); });
    const size_t after = g_news.load();
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(after - before, 0u) << "group " << group;
    EXPECT_EQ(sched.arena().fallbacks(), 0u);
  }
}

TEST(CoroTest, OversizedFrameFallsBackToHeap) {
  Scheduler sched(2, /*frame_bytes=*/16);  // smaller than any frame
  std::vector<uint64_t> table(64, 3);
  std::vector<uint64_t> got(8);
  const size_t before = g_news.load();
  ASSERT_TRUE(sched.Run(got.size(), [&](size_t i) { return Prefetching(&table, i, &got[i]); }).ok());
  EXPECT_EQ(g_news.load() - before, got.size());  // the counter sees frame allocations
  EXPECT_EQ(sched.arena().fallbacks(), got.size());
  for (uint64_t g : got) EXPECT_EQ(g, 12u);
}

TEST(CoroTest, TaskDestroyedUnrunFreesItsFrame) {
  FrameArena arena(512, 1);
  FrameArena::Current() = &arena;
  size_t finished = 0;
  { Task<void> t = MaybeThrow(0, &finished); }  // never resumed: destroyed by ~Task
  { Task<void> t = MaybeThrow(0, &finished); }  // the slot is free again
  FrameArena::Current() = nullptr;
  EXPECT_EQ(arena.fallbacks(), 0u);
  EXPECT_EQ(finished, 0u);
}

}  // namespace
}  // namespace strata::coro
