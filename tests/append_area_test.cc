// AppendArea: NewAppendArea and its single-update form AreaWith against an ordered map of
// entries, with every invariant of append_area.h checked on each area built.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "memgraph/append_area.h"
#include "memgraph/node_allocator.h"

namespace strata::mem {
namespace {

using Key = std::pair<uint8_t, uint64_t>;
using Model = std::map<Key, std::pair<uint8_t, double>>;  // (u, v) -> (kind, w)

void ExpectArea(const AppendArea* a, const Model& m, bool weighted) {
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->n, m.size());
  ASSERT_EQ(a->w() != nullptr, weighted);
  uint64_t mask = 0;
  size_t i = 0;
  for (const auto& [k, val] : m) {
    EXPECT_EQ(a->u()[i], k.first) << "entry " << i;
    EXPECT_EQ(a->v()[i], k.second) << "entry " << i;
    EXPECT_EQ(a->kind()[i], val.first) << "entry " << i;
    if (weighted) EXPECT_EQ(a->w()[i], val.second) << "entry " << i;
    mask |= uint64_t{1} << k.first;
    ++i;
  }
  EXPECT_EQ(a->mask, mask);
  for (const auto& [k, val] : m) {
    EXPECT_EQ(a->Find(k.first, k.second), std::distance(m.begin(), m.find(k)));
    EXPECT_EQ(a->Find(k.first, k.second + 1), m.count({k.first, k.second + 1}) != 0
                                                  ? std::distance(m.begin(), m.find({k.first, k.second + 1}))
                                                  : -1);
  }
}

class AppendAreaTest : public ::testing::TestWithParam<bool> {};

// Areas grown one entry at a time by AreaWith (new keys before, between and after the old
// ones, and replacements of old keys) hold what the model holds, like the areas NewAppendArea
// builds from the model's entries; the old area is unchanged by each step.
TEST_P(AppendAreaTest, AreaWithMatchesAModel) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    Model m;
    AppendArea* a = nullptr;
    while (m.size() < kAppendCapacity) {
      // Few vertices and keys, so replacements and same-vertex runs are common.
      const uint8_t u = static_cast<uint8_t>(rng() % (round % 2 ? 3 : 64));
      const uint64_t v = rng() % 40;
      const uint8_t kind = static_cast<uint8_t>(rng() % 3);
      const double w = static_cast<double>(rng() % 1000) / 4;
      const Model before = m;
      m[{u, v}] = {kind, weighted ? w : 1.0};
      AppendArea* next = AreaWith(&alloc, weighted, a, u, kind, v, w);
      ASSERT_NO_FATAL_FAILURE(ExpectArea(next, m, weighted));
      if (a != nullptr) {
        ASSERT_NO_FATAL_FAILURE(ExpectArea(a, before, weighted));
        UnrefAppendArea(&alloc, a);
      }
      a = next;
    }
    std::vector<AppendEntry> e;
    for (const auto& [k, val] : m) e.push_back({k.first, val.first, k.second, val.second});
    AppendArea* whole = NewAppendArea(&alloc, weighted, e.data(), e.size());
    ASSERT_NO_FATAL_FAILURE(ExpectArea(whole, m, weighted));
    UnrefAppendArea(&alloc, whole);
    UnrefAppendArea(&alloc, a);
  }
  EXPECT_EQ(alloc.bytes(), 0u);  // every area freed, at the size it was allocated with
}

INSTANTIATE_TEST_SUITE_P(Weights, AppendAreaTest, ::testing::Bool());

}  // namespace
}  // namespace strata::mem
