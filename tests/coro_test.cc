// util/coro.h: the interleaving scheduler, its frame arena and its awaitables.
#include "util/coro.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
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

// A fake device for AwaitIo: a queued read copies `value` to `*dst` when it completes. Reads
// complete in a pseudo-random order: Poll(false) completes a random share of them (maybe none),
// Poll(true) at least one. Storage is reserved up front, so polling allocates nothing.
class FakeIo final : public IoPoller {
 public:
  explicit FakeIo(uint64_t seed) : rng_(seed) { q_.reserve(4096); }
  void Queue(IoWait* w, uint64_t* dst, uint64_t value) { q_.push_back({w, dst, value}); }
  Status Poll(bool wait) override {
    ++polls_;
    if (wait) {
      ++waits_;
      // The scheduler blocks only when some item waits on a read that is outstanding.
      EXPECT_FALSE(q_.empty()) << "Poll(true) with nothing outstanding: it would never return";
    }
    size_t n = q_.empty() ? 0 : rng_() % (q_.size() + 1);
    if (wait && n == 0 && !q_.empty()) n = 1;
    for (size_t k = 0; k < n; ++k) {
      const size_t at = rng_() % q_.size();
      Read r = q_[at];
      q_[at] = q_.back();
      q_.pop_back();
      *r.dst = r.value;
      IoWait::Done(r.wait);
    }
    if (fail_next_) {  // fail: complete everything (as IoPoller promises), report an error
      fail_next_ = false;
      while (!q_.empty()) {
        *q_.back().dst = q_.back().value;
        IoWait::Done(q_.back().wait);
        q_.pop_back();
      }
      return Status::IOError("device gone");
    }
    return Status::OK();
  }
  size_t outstanding() const { return q_.size(); }
  size_t polls_ = 0, waits_ = 0;
  bool fail_next_ = false;

 private:
  struct Read {
    IoWait* wait;
    uint64_t* dst;
    uint64_t value;
  };
  std::mt19937_64 rng_;
  std::vector<Read> q_;
};

uint64_t ReadValue(size_t i, int round, int k) { return (i * 1315423911u) ^ (round * 977 + k); }

// Item i: `rounds` rounds of (i % 4) reads each, awaited together; some items do no I/O at all.
// The sum of what it read, in *out; a read not completed when the item resumes leaves a zero
// in the sum's inputs and is reported through *early.
Task<Status> Reader(FakeIo* io, size_t i, int rounds, uint64_t* out, size_t* early) {
  IoWait wait;
  uint64_t buf[4];
  uint64_t sum = 0;
  for (int round = 0; round < rounds; ++round) {
    const int reads = static_cast<int>(i % 4);
    wait.pending = static_cast<size_t>(reads);
    for (int k = 0; k < reads; ++k) {
      buf[k] = 0;
      io->Queue(&wait, &buf[k], ReadValue(i, round, k));
    }
    co_await AwaitIo{&wait};
    for (int k = 0; k < reads; ++k) {
      if (buf[k] != ReadValue(i, round, k)) ++*early;
      sum += buf[k];
    }
    co_await Suspend{};  // plain interleaving between the rounds
  }
  *out = sum;
  co_return Status::OK();
}

TEST(CoroTest, AwaitIoMatchesSequential) {
  const size_t n = 500;
  std::vector<uint64_t> want(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int round = 0; round < 3; ++round) {
      for (int k = 0; k < static_cast<int>(i % 4); ++k) want[i] += ReadValue(i, round, k);
    }
  }
  for (size_t group = 1; group <= 64; ++group) {
    FakeIo io(group);
    std::vector<uint64_t> got(n, ~uint64_t{0});
    size_t early = 0;
    Scheduler sched(group);
    // Warm-up run, then a run that must allocate nothing.
    ASSERT_TRUE(sched.Run(n, [&](size_t i) { return Reader(&io, i, 3, &got[i], &early); }, &io).ok());
    std::fill(got.begin(), got.end(), ~uint64_t{0});
    const size_t before = g_news.load();
    Status st = sched.Run(n, [&](size_t i) { return Reader(&io, i, 3, &got[i], &early); }, &io);
    const size_t allocated = g_news.load() - before;
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(allocated, 0u) << "group " << group;
    EXPECT_EQ(early, 0u) << "group " << group << ": an item resumed before its reads completed";
    EXPECT_EQ(io.outstanding(), 0u);
    ASSERT_EQ(got, want) << "group " << group;
    EXPECT_EQ(sched.arena().fallbacks(), 0u);
    if (group == 1) {
      EXPECT_GT(io.waits_, 0u) << "the scheduler never blocked on I/O";
    }
  }
}

// PerThread: one scheduler per call site (tag) and thread, kept while the group size and frame
// size asked for fit it, made anew otherwise.
TEST(CoroPerThread, KeptPerSiteAndRemadeWhenTheGroupChanges) {
  Scheduler* a = &PerThread<struct SiteA>(8, 256);
  EXPECT_EQ(a, &PerThread<struct SiteA>(8, 256));
  EXPECT_EQ(a, &PerThread<struct SiteA>(8, 128)) << "smaller frames fit the slots it has";
  EXPECT_EQ(a->group(), 8u);
  Scheduler* b = &PerThread<struct SiteB>(8, 256);
  EXPECT_NE(a, b) << "two sites shared a scheduler";
  Scheduler& c = PerThread<struct SiteA>(16, 256);
  EXPECT_EQ(c.group(), 16u);
  Scheduler& d = PerThread<struct SiteA>(16, 1024);
  EXPECT_GE(d.arena().slot_bytes(), 1024u);
  Scheduler* other = nullptr;
  std::thread t([&] { other = &PerThread<struct SiteA>(16, 1024); });
  t.join();
  EXPECT_NE(other, &d) << "two threads shared a scheduler";
}

// Items that do no I/O are scheduled exactly as without a poller (the round-robin contract).
TEST(CoroTest, PollerDoesNotChangeOrderWithoutIo) {
  for (size_t group : {1, 3, 16}) {
    std::vector<std::pair<size_t, int>> a, b;
    FakeIo io(1);
    Scheduler s1(group), s2(group);
    ASSERT_TRUE(s1.Run(50, [&](size_t i) { return Stepper(i, static_cast<int>(i % 5), &a); }).ok());
    ASSERT_TRUE(
        s2.Run(50, [&](size_t i) { return Stepper(i, static_cast<int>(i % 5), &b); }, &io).ok());
    EXPECT_EQ(a, b);
    EXPECT_EQ(io.polls_, 0u);
  }
}

// A failed Poll is Run's status; the items still finish (the poller completed their reads).
TEST(CoroTest, PollErrorIsReturned) {
  for (size_t group : {1, 8, 64}) {
    FakeIo io(3);
    io.fail_next_ = true;
    std::vector<uint64_t> got(100, 0);
    size_t early = 0;
    Scheduler sched(group);
    Status st = sched.Run(got.size(), [&](size_t i) { return Reader(&io, i, 2, &got[i], &early); }, &io);
    ASSERT_TRUE(st.IsIOError()) << st.ToString();
    EXPECT_NE(st.ToString().find("device gone"), std::string::npos);
    EXPECT_EQ(io.outstanding(), 0u);
    EXPECT_EQ(early, 0u);
  }
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
