// SubgraphDirectory: slots that never move while the directory grows, Get for subgraphs never
// created, bound(), concurrent creation from two threads, and the lines a commit reads (the
// directory and its chunk array) not shared with other heap objects.
#include "memgraph/subgraph_directory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace strata::mem {
namespace {

constexpr uint64_t kChunk = SubgraphDirectory::kChunkSize;

TEST(SubgraphDirectory, SlotsStayPutWhileTheDirectoryGrows) {
  SubgraphDirectory d;
  EXPECT_EQ(d.Get(0), nullptr);
  EXPECT_EQ(d.bound(), 0u);
  SubgraphSlot* first = d.GetOrCreate(3);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(d.Get(3), first);
  EXPECT_EQ(d.bound(), 4u);
  EXPECT_EQ(d.Get(kChunk + 3), nullptr) << "a chunk never created";
  // Far past the initial chunks: the directory is replaced by a larger one.
  const uint64_t far = 100 * kChunk + 17;
  SubgraphSlot* last = d.GetOrCreate(far);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(d.bound(), far + 1);
  EXPECT_EQ(d.Get(3), first) << "a slot moved when the directory grew";
  EXPECT_EQ(d.Get(far), last);
  EXPECT_EQ(d.Get(50 * kChunk), nullptr);
  EXPECT_EQ(d.Get(1000 * kChunk), nullptr) << "beyond the directory";
  // Neighbors within a chunk are distinct lines.
  SubgraphSlot* next = d.GetOrCreate(4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(next) - reinterpret_cast<uintptr_t>(first), 64u);
  // A lower ID does not lower the bound.
  d.GetOrCreate(1);
  EXPECT_EQ(d.bound(), far + 1);
}

TEST(SubgraphDirectory, TwoThreadsCreatingGetTheSameSlots) {
  SubgraphDirectory d;
  constexpr uint64_t kIds = 40 * kChunk;
  std::vector<SubgraphSlot*> seen[2];
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t) {
    ts.emplace_back([&, t] {
      seen[t].resize(kIds);
      // One ascending, one descending: the directory grows under both.
      for (uint64_t i = 0; i < kIds; i += 61) {
        const uint64_t s = t == 0 ? i : kIds - 1 - i;
        seen[t][s] = d.GetOrCreate(s);
      }
    });
  }
  for (auto& t : ts) t.join();
  for (uint64_t s = 0; s < kIds; ++s) {
    for (int t = 0; t < 2; ++t) {
      if (seen[t][s] != nullptr) ASSERT_EQ(seen[t][s], d.Get(s)) << s;
    }
  }
  EXPECT_EQ(d.bound(), kIds);
}

// Sixteen directories made between small allocations of the size class a 16-byte directory
// used to come from: each must start a line (by chance, a 16-byte one did a quarter of the
// time), and so must each chunk array, before and after growing.
TEST(SubgraphDirectory, ItsLinesAreItsOwn) {
  std::vector<std::unique_ptr<SubgraphDirectory>> dirs;
  std::vector<std::unique_ptr<char[]>> small;
  for (int i = 0; i < 16; ++i) {
    small.push_back(std::make_unique<char[]>(16));
    dirs.push_back(std::make_unique<SubgraphDirectory>());
  }
  for (auto& d : dirs) {
    EXPECT_EQ(d->DirectoryAddressForTesting() % 64, 0u);
    EXPECT_EQ(d->ChunkArrayAddressForTesting() % 64, 0u);
    d->GetOrCreate(100 * kChunk);  // grown: both of its allocations replaced
    EXPECT_EQ(d->DirectoryAddressForTesting() % 64, 0u);
    EXPECT_EQ(d->ChunkArrayAddressForTesting() % 64, 0u);
  }
}

}  // namespace
}  // namespace strata::mem
