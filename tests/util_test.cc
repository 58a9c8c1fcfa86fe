// Tests of the small helpers in util/ that no component test covers on its own.
#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

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

struct Item {
  uint64_t major;
  uint32_t minor;
  uint32_t tag;  // original position: shows whether equal keys kept their order
  bool operator==(const Item&) const = default;
};

std::pair<uint64_t, uint32_t> KeyOf(const Item& x) { return {x.major, x.minor}; }

TEST(ScratchTest, StableSortMatchesStdStableSort) {
  std::mt19937_64 rng(42);
  std::vector<SortEntry> keys;
  std::vector<Item> spare;
  for (int round = 0; round < 50; ++round) {
    std::vector<Item> v(rng() % 2000);
    for (uint32_t i = 0; i < v.size(); ++i) {
      // Few distinct keys, so many ties; majors above 2^32 exercise the full 64 bits.
      v[i] = Item{(rng() % 8) << 40, static_cast<uint32_t>(rng() % 4), i};
    }
    std::vector<Item> want = v;
    std::stable_sort(want.begin(), want.end(),
                     [](const Item& a, const Item& b) { return KeyOf(a) < KeyOf(b); });
    StableSortWithScratch(&v, KeyOf, &keys, &spare);
    ASSERT_EQ(v, want) << "round " << round;
  }
}

TEST(ScratchTest, StableSortLeavesASortedVectorInPlace) {
  std::vector<Item> v;
  for (uint32_t i = 0; i < 100; ++i) v.push_back(Item{i / 10, 0, i});
  const Item* buf = v.data();
  std::vector<SortEntry> keys;
  std::vector<Item> spare;
  StableSortWithScratch(&v, KeyOf, &keys, &spare);
  EXPECT_EQ(v.data(), buf);
  EXPECT_EQ(spare.capacity(), 0u);
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(v[i].tag, i);
}

}  // namespace
}  // namespace strata
