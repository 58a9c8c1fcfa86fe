// Tests of the small helpers in util/ that no component test covers on its own.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/radix_sort.h"
#include "util/scratch.h"

namespace strata {
namespace {

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

TEST(RadixSortTest, MatchesStdStableSort) {
  std::mt19937_64 rng(42);
  RadixSortScratch<Item> sc;
  // Key shapes: few distinct values (many ties), the full 64 bits, a narrow range far from 0
  // (only max - min is sorted on), and widths that end inside a pass.
  const std::vector<std::pair<uint64_t, uint64_t>> shapes = {
      {0, 7}, {0, ~uint64_t{0}}, {uint64_t{1} << 60, 1000}, {5, (uint64_t{1} << 12) - 1},
      {0, (uint64_t{1} << 33) + 17}};
  // Sizes on both sides of kRadixMinSize (std::sort below it, radix passes from it on).
  const std::vector<size_t> sizes = {2, 3, 17, kRadixMinSize - 1, kRadixMinSize,
                                     kRadixMinSize + 1, 3000};
  for (const auto& [base, span] : shapes) {
    for (int round = 0; round < 21; ++round) {
      std::vector<Item> v(round < 7 ? sizes[round] : rng() % 3000);
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

TEST(RadixSortTest, ReleaseKeepsSmallBuffers) {
  std::vector<Item> v = {Item{2, 0}, Item{1, 1}};
  RadixSortScratch<Item> sc;
  StableRadixSort(&v, KeyOf, &sc);
  EXPECT_EQ(v, (std::vector<Item>{Item{1, 1}, Item{2, 0}}));
  sc.Release();
  EXPECT_TRUE(sc.a.empty());
  EXPECT_GE(sc.a.capacity(), 2u);  // kept for the next call
}

}  // namespace
}  // namespace strata
