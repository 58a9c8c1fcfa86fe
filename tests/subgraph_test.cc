// Unit tests of memgraph/subgraph.{h,cc}: packed per-vertex counts and version allocation.
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "memgraph/subgraph.h"

namespace strata::mem {
namespace {

TEST(SubgraphTest, CountsRoundTrip) {
  NodeAllocator alloc;
  SubgraphVersion* v = NewVersion(&alloc, false, false);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 500; ++round) {
    // Densities from empty to full, and the edge vertices 0 and 63.
    VertexCounts c;
    std::memset(&c, 0, sizeof(c));
    const unsigned density = static_cast<unsigned>(rng() % 66);  // 65: every vertex
    uint64_t want = 0;
    for (uint32_t i = 0; i < kSubgraphSize; ++i) {
      if (density == 65 || rng() % 64 < density) {
        c.entries[i] = 1 + static_cast<uint32_t>(rng() % 1000);
        c.live[i] = static_cast<uint32_t>(rng() % (c.entries[i] + 1));
        want |= uint64_t{1} << i;
      }
    }
    SetCounts(&alloc, &v->out, c);
    ASSERT_EQ(v->out.count_mask, want) << "round " << round;
    VertexCounts back;
    GetCounts(v->out, &back);
    ASSERT_EQ(std::memcmp(&back, &c, sizeof(c)), 0) << "round " << round;
  }
  FreeVersion(&alloc, v);
  EXPECT_EQ(alloc.bytes(), 0u);
}

TEST(SubgraphTest, FreeVersionsFreesEveryVersion) {
  NodeAllocator alloc;
  for (size_t n : {0, 1, 3, 4, 5, 9, 100}) {
    std::vector<SubgraphVersion*> vs;
    for (size_t i = 0; i < n; ++i) {
      vs.push_back(NewVersion(&alloc, /*with_in=*/i % 2 == 0, /*weighted=*/false));
      VertexCounts c;
      std::memset(&c, 0, sizeof(c));
      c.entries[i % kSubgraphSize] = c.live[i % kSubgraphSize] = 1;
      SetCounts(&alloc, &vs.back()->out, c);
    }
    EXPECT_EQ(alloc.bytes() == 0, n == 0);
    FreeVersions(&alloc, vs.data(), vs.data() + vs.size());
    EXPECT_EQ(alloc.bytes(), 0u) << n << " versions";
  }
}

}  // namespace
}  // namespace strata::mem
