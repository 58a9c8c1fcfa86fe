// util/jemalloc_stats.h: an arena's figures and a size class's slabs, against allocations whose
// layout the test knows (a private arena, no thread cache).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>

#include "util/jemalloc_stats.h"
#endif

namespace {

#ifndef STRATA_NO_JEMALLOC
using strata::jemalloc_stats::BinUse;

// The bin of jemalloc's small class of `bytes`; BinCount() if none is.
unsigned BinOf(size_t bytes) {
  const unsigned n = strata::jemalloc_stats::BinCount();
  for (unsigned b = 0; b < n; ++b) {
    char name[64];
    snprintf(name, sizeof(name), "arenas.bin.%u.size", b);
    size_t size = 0;
    size_t sz = sizeof(size);
    if (mallctl(name, &size, &sz, nullptr, 0) == 0 && size == bytes) return b;
  }
  return n;
}
#endif

// Half the blocks of one class freed, every other one: each slab keeps about half its regions,
// and the bin's unused bytes are its slabs' bytes less the regions still in use.
TEST(JemallocStats, ABinCountsItsSlabsAndTheRoomInThem) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "no jemalloc (sanitizer build)";
#else
  unsigned arena = 0;
  size_t sz = sizeof(arena);
  ASSERT_EQ(mallctl("arenas.create", &arena, &sz, nullptr, 0), 0);
  constexpr size_t kBytes = 5120;  // a small class of a few regions per slab
  const unsigned bin = BinOf(kBytes);
  ASSERT_LT(bin, strata::jemalloc_stats::BinCount());
  const int flags = MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE;
  std::vector<void*> ps;
  for (int i = 0; i < 1000; ++i) ps.push_back(mallocx(kBytes, flags));
  strata::jemalloc_stats::Refresh();
  BinUse full;
  ASSERT_TRUE(strata::jemalloc_stats::AddBin(arena, bin, &full));
  EXPECT_EQ(full.region_bytes, kBytes);
  EXPECT_EQ(full.regions, 1000u);
  const size_t per_slab = full.slab_bytes / kBytes;
  ASSERT_GE(per_slab, 1u);
  EXPECT_EQ(full.slabs, (1000 + per_slab - 1) / per_slab);  // filled in order: no slab to spare
  EXPECT_LE(full.nonfull_slabs, 1u);  // filled in order: only the last slab has room
  for (size_t i = 0; i < ps.size(); i += 2) dallocx(ps[i], flags);
  strata::jemalloc_stats::Refresh();
  BinUse half;
  ASSERT_TRUE(strata::jemalloc_stats::AddBin(arena, bin, &half));
  EXPECT_EQ(half.regions, 500u);
  EXPECT_EQ(half.slabs, full.slabs) << "a slab emptied though each kept every other region";
  EXPECT_EQ(half.UnusedBytes(), full.UnusedBytes() + 500 * kBytes);
  EXPECT_GE(half.nonfull_slabs, half.slabs - 1);
  // Added into a second BinUse twice: the counts sum, the sizes stay.
  BinUse twice;
  ASSERT_TRUE(strata::jemalloc_stats::AddBin(arena, bin, &twice));
  ASSERT_TRUE(strata::jemalloc_stats::AddBin(arena, bin, &twice));
  EXPECT_EQ(twice.region_bytes, kBytes);
  EXPECT_EQ(twice.regions, 1000u);
  EXPECT_EQ(twice.UnusedBytes(), 2 * half.UnusedBytes());
  for (size_t i = 1; i < ps.size(); i += 2) dallocx(ps[i], flags);
  // An arena jemalloc does not have.
  BinUse none;
  EXPECT_FALSE(strata::jemalloc_stats::AddBin(1u << 20, bin, &none));
  char name[64];
  snprintf(name, sizeof(name), "arena.%u.destroy", arena);
  mallctl(name, nullptr, nullptr, nullptr, 0);
#endif
}

}  // namespace
