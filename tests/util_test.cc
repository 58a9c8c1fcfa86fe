// Tests of the small helpers in util/ that no component test covers on its own.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/buffer_pool.h"
#include "util/crc.h"
#include "util/memory_info.h"
#include "util/radix_sort.h"
#include "util/scratch.h"
#include "util/small_sort.h"
#include "util/striped_counter.h"

namespace strata {
namespace {

// Checksum64 is the on-disk checksum: whichever XXH3 build it calls (the library's runtime
// dispatch to AVX2 / AVX-512 when CMake found it), it must give the plain XXH3 value for every
// length, across the short-input, medium and long (striped) code paths and their boundaries.
TEST(ChecksumTest, EqualsPlainXxh3ForEveryLengthAndSeed) {
  std::mt19937_64 rng(5);
  std::string data(70000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  std::vector<size_t> lens;
  for (size_t n = 0; n <= 1100; ++n) lens.push_back(n);
  for (size_t n : {2047, 2048, 4095, 4096, 4097, 65535, 65536, 70000}) lens.push_back(n);
  for (size_t n : lens) {
    for (uint64_t seed : {uint64_t{0}, uint64_t{7}, ChecksumSeed(3, 12345)}) {
      const size_t off = n % 13;  // unaligned starts too
      const size_t len = std::min(n, data.size() - off);
      ASSERT_EQ(Checksum64(data.data() + off, len, seed),
                XXH3_64bits_withSeed(data.data() + off, len, seed))
          << "length " << len << " seed " << seed;
    }
  }
  // XXH3-64 of the empty input with seed 0 (the reference value of the xxHash specification).
  EXPECT_EQ(Checksum64("", 0, 0), 0x2D06800538D394C2ULL);
}

// The memory an automatic budget is sized by: MemAvailable from /proc/meminfo, and the room
// under the memory cgroup (v2 "0::/path", v1 "N:memory:/path"), malformed text refused.
TEST(MemoryInfoTest, ParsesMeminfoAndCgroupFiles) {
  const std::string meminfo =
      "MemTotal:       24576000 kB\nMemFree:         1000000 kB\n"
      "MemAvailable:   20000000 kB\nBuffers:          123456 kB\n";
  EXPECT_EQ(ParseMemAvailable(meminfo), uint64_t{20000000} * 1024);
  EXPECT_EQ(ParseMemAvailable("MemTotal: 5 kB\n"), 0u);             // no such line
  EXPECT_EQ(ParseMemAvailable("MemAvailable: 12x kB\n"), 0u);       // not a number
  EXPECT_EQ(ParseMemAvailable("MemAvailable: 12 MB\n"), 0u);        // not kB
  EXPECT_EQ(ParseMemAvailable("MemAvailable: 99999999999999999999 kB\n"), 0u);  // overflow
  EXPECT_EQ(ParseMemAvailable("MemAvailable:  7 kB"), 7u * 1024);    // no newline at the end

  EXPECT_EQ(CgroupHeadroom("1073741824\n", "73741824\n"), 1000000000u);
  EXPECT_EQ(CgroupHeadroom("100\n", "100\n"), 0u);
  EXPECT_EQ(CgroupHeadroom("100\n", "150\n"), 0u);  // over the limit
  EXPECT_EQ(CgroupHeadroom("max\n", "150\n"), UINT64_MAX);
  EXPECT_EQ(CgroupHeadroom("", "150"), UINT64_MAX);

  const std::string v2 = "0::/user.slice/session-3.scope\n";
  EXPECT_EQ(CgroupPath(v2, ""), "/user.slice/session-3.scope");
  EXPECT_EQ(CgroupPath(v2, "memory"), "");
  const std::string v1 =
      "9:name=systemd:/\n4:memory:/docker/abc\n3:cpu,cpuacct:/x\n0::/\n";
  EXPECT_EQ(CgroupPath(v1, "memory"), "/docker/abc");
  EXPECT_EQ(CgroupPath(v1, "cpuacct"), "/x");
  EXPECT_EQ(CgroupPath(v1, "cpuset"), "");
  EXPECT_EQ(CgroupPath(v1, ""), "/");
  EXPECT_EQ(CgroupPath("garbage\n4:memory:relative\n", "memory"), "");

  // This machine: some memory is available, and no more than it has.
  const uint64_t avail = AvailableMemoryBytes();
  EXPECT_GT(avail, 0u);
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  ASSERT_NE(f, nullptr);
  char buf[8192];
  const size_t n = std::fread(buf, 1, sizeof(buf), f);
  std::fclose(f);
  const std::string text(buf, n);
  const size_t at = text.find("MemTotal:");
  ASSERT_NE(at, std::string::npos);
  const uint64_t total_kib = std::stoull(text.substr(at + 9));
  EXPECT_LE(avail, total_kib * 1024);
}

// LimitBufferPool lowers the process-wide bound (a store bounds it by its I/O reserve): kept
// buffers past it are freed at once, later returns keep no more than it, and a higher limit
// does not raise it again. Run in a child process: the bound only falls.
TEST(BufferPoolTest, ALimitFreesWhatItDoesNotHoldAndOnlyFalls) {
  EXPECT_EXIT(
      {
        std::vector<std::string> drained;
        while (PooledBufferBytes() > 0) drained.push_back(TakeBuffer(1));
        std::vector<std::string> bufs;
        for (int i = 0; i < 4; ++i) bufs.push_back(TakeBuffer(size_t{1} << 20));
        for (std::string& b : bufs) ReturnBuffer(&b);
        const size_t kept4 = PooledBufferBytes();
        LimitBufferPool(size_t{2} << 20);
        const size_t kept2 = PooledBufferBytes();
        LimitBufferPool(size_t{8} << 20);  // does not raise it
        for (int i = 0; i < 4; ++i) bufs[i] = TakeBuffer(size_t{1} << 20);
        for (std::string& b : bufs) ReturnBuffer(&b);
        const size_t kept_after = PooledBufferBytes();
        std::fprintf(stderr, "kept %zu %zu %zu\n", kept4, kept2, kept_after);
        std::exit(kept4 >= (size_t{4} << 20) && kept2 <= (size_t{2} << 20) && kept2 > 0 &&
                          kept_after <= (size_t{2} << 20)
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0), "kept");
}

TEST(BufferPoolTest, AReturnedBufferIsTakenAgainWithItsStorage) {
  // Drain whatever earlier tests left, so the pool starts empty.
  std::vector<std::string> drained;
  while (PooledBufferBytes() > 0) drained.push_back(TakeBuffer(1));
  std::string a = TakeBuffer(size_t{1} << 20);
  EXPECT_GE(a.capacity(), size_t{1} << 20);
  EXPECT_TRUE(a.empty());
  a.assign(1000, 'x');
  const char* storage = a.data();
  ReturnBuffer(&a);
  EXPECT_TRUE(a.empty());
  EXPECT_GE(PooledBufferBytes(), size_t{1} << 20);
  // Too large a request does not take it; one it fits does, emptied.
  std::string big = TakeBuffer(size_t{2} << 20);
  EXPECT_NE(big.data(), storage);
  EXPECT_GE(big.capacity(), size_t{2} << 20);
  std::string b = TakeBuffer(size_t{512} << 10);
  EXPECT_EQ(b.data(), storage);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(PooledBufferBytes(), 0u);
  // Small strings are not kept; past kBufferPoolBytes nothing more is kept.
  std::string small(100, 'y');
  ReturnBuffer(&small);
  EXPECT_EQ(PooledBufferBytes(), 0u);
  std::vector<std::string> many;
  for (size_t k = 0; k <= kBufferPoolBytes / (size_t{1} << 20); ++k) many.push_back(TakeBuffer(size_t{1} << 20));
  for (auto& m : many) ReturnBuffer(&m);
  EXPECT_LE(PooledBufferBytes(), kBufferPoolBytes);
  EXPECT_GE(PooledBufferBytes(), kBufferPoolBytes - (size_t{2} << 20));
  ReturnBuffer(&b);
  ReturnBuffer(&big);
  EXPECT_LE(PooledBufferBytes(), kBufferPoolBytes);
  // ReserveFromPool keeps the contents and takes a kept buffer when it must grow.
  while (PooledBufferBytes() > 0) drained.push_back(TakeBuffer(1));
  std::string kept = TakeBuffer(size_t{1} << 20);
  const char* kept_storage = kept.data();
  ReturnBuffer(&kept);
  std::string s = "abc";
  ReserveFromPool(&s, size_t{1} << 19);
  EXPECT_EQ(s, "abc");
  EXPECT_EQ(s.data(), kept_storage);
  const char* now = s.data();
  ReserveFromPool(&s, size_t{1} << 10);  // room enough: unchanged
  EXPECT_EQ(s.data(), now);
}

TEST(ScratchTest, KeepsABufferUpToTheLimit) {
  std::vector<uint64_t> v(kScratchKeepBytes / sizeof(uint64_t));
  const uint64_t* buf = v.data();
  ReleaseScratch(&v);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), kScratchKeepBytes / sizeof(uint64_t));
  v.push_back(7);
  EXPECT_EQ(v.data(), buf);  // reused, not reallocated
}

TEST(ScratchTest, FreesABufferGrownPastTheLimit) {
  std::vector<uint64_t> v(kScratchKeepBytes / sizeof(uint64_t) + 1);
  ReleaseScratch(&v);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 0u);
}

TEST(ScratchTest, ScopedScratchClearsAndReleases) {
  std::vector<uint64_t> big(kScratchKeepBytes / sizeof(uint64_t) + 1), small = {1, 2, 3};
  {
    ScopedScratch<uint64_t> s(&small);
    EXPECT_TRUE(s.get().empty());  // cleared for use
    s.get().push_back(9);
  }
  EXPECT_TRUE(small.empty());
  EXPECT_GE(small.capacity(), 3u);  // kept
  { ScopedScratch<uint64_t> s(&big); }
  EXPECT_EQ(big.capacity(), 0u);  // released
}

struct Item {
  uint64_t key;
  uint32_t tag;  // original position: shows whether equal keys kept their order
  bool operator==(const Item&) const = default;
};

uint64_t KeyOf(const Item& x) { return x.key; }

// Sorts a copy with std::stable_sort and with StableRadixSort, reusing one scratch.
void CheckSort(std::vector<Item> v, RadixSortScratch<Item>* sc) {
  std::vector<Item> want = v;
  std::stable_sort(want.begin(), want.end(),
                   [](const Item& a, const Item& b) { return a.key < b.key; });
  StableRadixSort(&v, KeyOf, sc);
  ASSERT_EQ(v, want);
}

// More threads than stripes add and subtract at once: the sum is exact once they stop.
TEST(StripedCounterTest, ConcurrentAddsSumExactly) {
  StripedCounter c;
  constexpr int kThreads = StripedCounter::kStripes + 3;
  constexpr int kAdds = 20000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&c, t] {
      for (int i = 0; i < kAdds; ++i) c.Add(i % 3 == 0 ? -t : t + 1);
    });
  }
  for (auto& t : ts) t.join();
  int64_t want = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kAdds; ++i) want += i % 3 == 0 ? -t : t + 1;
  }
  EXPECT_EQ(c.Sum(), want);
  c.Add(-want);
  EXPECT_EQ(c.Sum(), 0);
  // Count() is the sum clamped at 0 (a decrement seen before its increment reads as 0).
  c.Add(5);
  EXPECT_EQ(c.Count(), 5u);
  std::thread([&c] { c.Add(-7); }).join();
  EXPECT_EQ(c.Sum(), -2);
  EXPECT_EQ(c.Count(), 0u);
}

TEST(RadixSortTest, MatchesStdStableSort) {
  std::mt19937_64 rng(42);
  RadixSortScratch<Item> sc;
  // Key shapes: few distinct values (many ties), the full 64 bits, a narrow range far from 0
  // (only max - min is sorted on), widths that end inside a pass, and widths cut into passes
  // of equal digits (16 bits: two of 8; 11: one of 11; 12: two of 6).
  const std::vector<std::pair<uint64_t, uint64_t>> shapes = {
      {0, 7}, {0, ~uint64_t{0}}, {uint64_t{1} << 60, 1000}, {5, (uint64_t{1} << 12) - 1},
      {0, (uint64_t{1} << 33) + 17}, {0, (uint64_t{1} << 16) - 1}, {3, (uint64_t{1} << 11) - 1},
      {0, uint64_t{1} << 11}};
  // Sizes on both sides of kInsertionMaxSize (in place up to it) and of kRadixMinSize
  // (std::sort below it, radix passes from it on).
  const std::vector<size_t> sizes = {2, 3, kInsertionMaxSize, kInsertionMaxSize + 1, 17,
                                     kRadixMinSize - 1, kRadixMinSize, kRadixMinSize + 1, 3000};
  for (const auto& [base, span] : shapes) {
    for (size_t round = 0; round < 23; ++round) {
      std::vector<Item> v(round < sizes.size() ? sizes[round] : rng() % 3000);
      for (uint32_t i = 0; i < v.size(); ++i) {
        const uint64_t r = span == ~uint64_t{0} ? rng() : rng() % (span + 1);
        v[i] = Item{base + r, i};
      }
      SCOPED_TRACE("base " + std::to_string(base) + " span " + std::to_string(span));
      CheckSort(v, &sc);
    }
  }
  CheckSort({}, &sc);
  CheckSort({Item{3, 0}}, &sc);
  CheckSort({Item{~uint64_t{0}, 0}, Item{0, 1}, Item{~uint64_t{0}, 2}}, &sc);
}

TEST(RadixSortTest, LeavesASortedVectorInPlace) {
  std::vector<Item> v;
  for (uint32_t i = 0; i < 100; ++i) v.push_back(Item{i / 10, i});
  const Item* buf = v.data();
  RadixSortScratch<Item> sc;
  StableRadixSort(&v, KeyOf, &sc);
  EXPECT_EQ(v.data(), buf);
  EXPECT_EQ(sc.spare.capacity(), 0u);
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(v[i].tag, i);
}

// Up to kInsertionMaxSize elements are sorted where they are, stably: every vector of those
// sizes over three keys (many ties, every order of them), and the scratch is not touched.
TEST(RadixSortTest, SortsFewElementsInPlace) {
  RadixSortScratch<Item> sc;
  for (size_t n = 2; n <= kInsertionMaxSize; ++n) {
    size_t combos = 1;
    for (size_t i = 0; i < n; ++i) combos *= 3;
    for (size_t c = 0; c < combos; ++c) {
      std::vector<Item> v;
      for (size_t i = 0, x = c; i < n; ++i, x /= 3) {
        v.push_back(Item{x % 3, static_cast<uint32_t>(i)});
      }
      const Item* buf = v.data();
      CheckSort(v, &sc);
      StableRadixSort(&v, KeyOf, &sc);
      EXPECT_EQ(v.data(), buf);
    }
  }
  EXPECT_EQ(sc.a.capacity(), 0u);
  EXPECT_EQ(sc.spare.capacity(), 0u);
}

TEST(RadixSortTest, ReleaseKeepsSmallBuffers) {
  std::vector<Item> v;
  for (uint32_t i = 0; i <= kInsertionMaxSize; ++i) v.push_back(Item{kInsertionMaxSize - i, i});
  RadixSortScratch<Item> sc;
  StableRadixSort(&v, KeyOf, &sc);
  for (uint32_t i = 0; i <= kInsertionMaxSize; ++i) EXPECT_EQ(v[i].tag, kInsertionMaxSize - i);
  sc.Release();
  EXPECT_TRUE(sc.a.empty());
  EXPECT_GE(sc.a.capacity(), kInsertionMaxSize + 1);  // kept for the next call
}

// StableSmallSort against std::stable_sort, on both sides of kSmallSortMax, with many ties
// (the second field records the input order, so a tie moved past another is a mismatch).
TEST(SmallSortTest, MatchesStdStableSort) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 400; ++round) {
    const size_t n = round < 100 ? static_cast<size_t>(round % 4)
                                 : rng() % (2 * static_cast<size_t>(kSmallSortMax) + 2);
    std::vector<std::pair<uint32_t, uint32_t>> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = {static_cast<uint32_t>(rng() % (round % 2 ? 4 : 1000)), i};
    auto want = v;
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::stable_sort(want.begin(), want.end(), by_key);
    StableSmallSort(v.begin(), v.end(), by_key);
    ASSERT_EQ(v, want) << "size " << n;
  }
}

}  // namespace
}  // namespace strata
