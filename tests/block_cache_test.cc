#include "segment/block_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <thread>

namespace strata {
namespace {

BlockCache::Block MakeBlock(size_t size, char fill) {
  return std::make_shared<const std::string>(size, fill);
}

TEST(BlockCache, HitMissAndLruEviction) {
  // One shard so the LRU order is global and exact.
  BlockCache c(16 << 10, /*shard_bits=*/0);
  const uint64_t owner = BlockCache::NewOwnerId();
  for (uint64_t i = 0; i < 3; ++i) c.Insert({owner, i}, MakeBlock(4000, 'a' + i));
  EXPECT_EQ(c.Lookup({owner, 0})->at(0), 'a');  // 0 is now the most recently used
  EXPECT_EQ(c.Lookup({owner, 7}), nullptr);
  EXPECT_EQ(c.hits(), 1u);
  EXPECT_EQ(c.misses(), 1u);
  // A fourth block does not fit with the other three: the least recently used (1) goes.
  c.Insert({owner, 3}, MakeBlock(4000, 'd'));
  EXPECT_EQ(c.Lookup({owner, 1}), nullptr);
  EXPECT_NE(c.Lookup({owner, 0}), nullptr);
  EXPECT_NE(c.Lookup({owner, 2}), nullptr);
  EXPECT_NE(c.Lookup({owner, 3}), nullptr);
  EXPECT_LE(c.usage(), c.capacity());
}

TEST(BlockCache, OversizedBlockIsReturnedButNotKept) {
  BlockCache c(8 << 10, 0);
  const uint64_t owner = BlockCache::NewOwnerId();
  c.Insert({owner, 1}, MakeBlock(1000, 'x'));
  BlockCache::Block big = c.Insert({owner, 2}, MakeBlock(64 << 10, 'y'));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->size(), size_t{64} << 10);
  EXPECT_EQ(c.Lookup({owner, 2}), nullptr);
  EXPECT_NE(c.Lookup({owner, 1}), nullptr);  // the small block was not flushed for it
}

TEST(BlockCache, EvictedBlockStaysValidForItsHolder) {
  BlockCache c(8 << 10, 0);
  const uint64_t owner = BlockCache::NewOwnerId();
  BlockCache::Block held = c.Insert({owner, 1}, MakeBlock(4000, 'h'));
  for (uint64_t i = 2; i < 10; ++i) c.Insert({owner, i}, MakeBlock(4000, 'z'));
  EXPECT_EQ(c.Lookup({owner, 1}), nullptr);
  EXPECT_EQ(held->size(), 4000u);
  EXPECT_EQ(held->at(3999), 'h');
}

TEST(BlockCache, EraseOwnerAndShrinkingCapacity) {
  BlockCache c(1 << 20, 2);
  const uint64_t a = BlockCache::NewOwnerId(), b = BlockCache::NewOwnerId();
  ASSERT_NE(a, b);
  for (uint64_t i = 0; i < 50; ++i) {
    c.Insert({a, i}, MakeBlock(1000, 'a'));
    c.Insert({b, i}, MakeBlock(1000, 'b'));
  }
  const size_t before = c.usage();
  c.EraseOwner(a);
  for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(c.Lookup({a, i}), nullptr);
  EXPECT_EQ(c.Lookup({b, 49})->at(0), 'b');
  EXPECT_LT(c.usage(), before);
  c.SetCapacity(16 << 10);
  EXPECT_LE(c.usage(), size_t{16} << 10);
  c.SetCapacity(0);
  EXPECT_EQ(c.usage(), 0u);
  EXPECT_EQ(c.Lookup({b, 49}), nullptr);
}

// Randomized against a model: whatever the cache returns is the newest block inserted under
// that key, and usage never passes capacity.
TEST(BlockCache, RandomizedAgainstModel) {
  BlockCache c(64 << 10, 2);
  std::map<uint64_t, char> newest;
  std::mt19937_64 rng(7);
  const uint64_t owner = BlockCache::NewOwnerId();
  for (int step = 0; step < 20000; ++step) {
    const uint64_t k = rng() % 200;
    if (rng() % 3 == 0) {
      const char fill = static_cast<char>('a' + rng() % 26);
      c.Insert({owner, k}, MakeBlock(100 + rng() % 3000, fill));
      newest[k] = fill;
    } else if (BlockCache::Block b = c.Lookup({owner, k})) {
      ASSERT_TRUE(newest.count(k));
      ASSERT_EQ(b->at(0), newest[k]) << "key " << k << " at step " << step;
    }
    ASSERT_LE(c.usage(), c.capacity());
  }
  EXPECT_GT(c.hits(), 0u);
  EXPECT_GT(c.misses(), 0u);
}

TEST(BlockCache, ConcurrentLookupsAndInserts) {
  BlockCache c(256 << 10, 4);
  const uint64_t owner = BlockCache::NewOwnerId();
  std::vector<std::thread> ts;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < 20000; ++i) {
        const uint64_t k = rng() % 500;
        // Block k always holds k % 251 + 1 in every byte, so any hit can be checked.
        BlockCache::Block b = c.Lookup({owner, k});
        if (!b) b = c.Insert({owner, k}, MakeBlock(512 + k, static_cast<char>(k % 251 + 1)));
        if (b->size() != 512 + k || b->back() != static_cast<char>(k % 251 + 1)) ++wrong;
        if (i % 5000 == 0) c.SetCapacity((64 + rng() % 256) << 10);
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(c.usage(), c.capacity());
}

}  // namespace
}  // namespace strata
