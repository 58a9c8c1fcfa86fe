// The kernels' scratch memory (analytics/kernel_memory.h): sized, aligned round trips, the
// uninitialized-resize vector, and — where jemalloc is linked — that a large freed array stays
// resident for the next kernel instead of being faulted in again.
#include "analytics/kernel_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "strata/analytics.h"

#include "tests/util/file_util.h"

namespace strata::analytics {
namespace {

long ThreadMinorFaults() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_minflt;
}

// Allocates `bytes` of kernel memory, writes every page, frees it; returns this thread's minor
// page faults meanwhile.
long TouchAndFree(size_t bytes) {
  const long before = ThreadMinorFaults();
  auto* p = static_cast<unsigned char*>(KernelAllocate(bytes, 64));
  for (size_t i = 0; i < bytes; i += 4096) p[i] = static_cast<unsigned char>(i >> 12);
  const long faults = ThreadMinorFaults() - before;
  KernelFree(p, bytes, 64);
  return faults;
}

TEST(KernelMemory, SizedAlignedRoundTrips) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{24}, size_t{4096}, kKernelArenaMinBytes - 8,
                       kKernelArenaMinBytes, size_t{3} << 20}) {
    for (size_t align : {size_t{8}, size_t{16}, size_t{64}, size_t{4096}}) {
      void* p = KernelAllocate(bytes, align);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << bytes << " bytes, align " << align;
      if (bytes > 0) std::memset(p, 0xab, bytes);
      KernelFree(p, bytes, align);
    }
  }
}

TEST(KernelMemory, UninitVectorKeepsValuesItIsGiven) {
  UninitVector<uint64_t> v(100000, 7);  // above the arena threshold
  for (uint64_t x : v) ASSERT_EQ(x, 7u);
  v.resize(300000);  // new elements uninitialized; the old ones copied
  for (size_t i = 0; i < 100000; ++i) ASSERT_EQ(v[i], 7u);
  v.assign(5, 9);
  EXPECT_EQ(v, (UninitVector<uint64_t>(5, 9)));
  UninitVector<double> w;
  w.insert(w.end(), 70000, 1.5);
  EXPECT_EQ(w.back(), 1.5);
}

#ifndef STRATA_NO_JEMALLOC
// A second kernel's arrays reuse the first one's pages: the freed pages are retained (within
// the decay time) and the second pass faults a fraction of what the first did.
TEST(KernelMemory, FreedArraysStayResidentForTheNextKernel) {
  constexpr size_t kBytes = size_t{32} << 20;
  KernelReleaseAll();
  ASSERT_EQ(GetKernelMemoryStats().retained, 0u);
  const long first = TouchAndFree(kBytes);
  EXPECT_GE(GetKernelMemoryStats().retained, kBytes / 2) << "freed kernel pages were returned at once";
  const long second = TouchAndFree(kBytes);
  EXPECT_GT(first, 0);
  EXPECT_LE(second * 4, first) << "first pass " << first << " faults, second " << second;
  KernelReleaseExpired();  // within the decay time: keeps them
  EXPECT_GE(GetKernelMemoryStats().retained, kBytes / 2);
  KernelReleaseAll();
  EXPECT_EQ(GetKernelMemoryStats().retained, 0u);
  // Once released, the pages are faulted in again.
  EXPECT_GT(TouchAndFree(kBytes) * 4, first);
  KernelReleaseAll();
}

// A large array's extent is its size class; the pages past the array that an earlier array in
// that extent left resident go back when it is handed out (the list cache's blocks, at exact
// sizes, held ~12% more resident memory than their lists).
TEST(KernelMemory, PagesPastALargeArrayDoNotStayResident) {
  using testing::ResidentPages;
  KernelReleaseAll();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  constexpr size_t kClass = size_t{5} << 20;  // a large size class (four per doubling)
  const size_t array = (size_t{4} << 20) + page;  // rounded up to kClass
  auto* p = static_cast<unsigned char*>(KernelAllocate(kClass, page));
  std::memset(p, 1, kClass);
  ASSERT_EQ(ResidentPages(p, kClass), kClass / page);
  KernelFree(p, kClass, page);
  auto* q = static_cast<unsigned char*>(KernelAllocate(array, page));
  ASSERT_EQ(q, p) << "the freed extent was not handed out again: nothing to check";
  EXPECT_EQ(ResidentPages(q, array), array / page) << "the array's own pages were released";
  EXPECT_EQ(ResidentPages(q + array, kClass - array), 0u);
  KernelFree(q, array, page);
  KernelReleaseAll();
}

// Small arrays do not go to the kernel arena: it retains nothing for them.
TEST(KernelMemory, SmallArraysUseTheDefaultArenas) {
  KernelReleaseAll();
  std::vector<void*> ps;
  for (int i = 0; i < 256; ++i) ps.push_back(KernelAllocate(kKernelArenaMinBytes / 2, 16));
  for (void* p : ps) KernelFree(p, kKernelArenaMinBytes / 2, 16);
  EXPECT_EQ(GetKernelMemoryStats().retained, 0u);
}

// A result made in a KernelArenaScope (PageRank's ranks, after its list cache is freed) comes
// from the kernel arena and takes the pages a freed kernel array left there; outside a scope
// the same allocation does not.
TEST(KernelMemory, AResultMadeInTheScopeTakesTheKeptPages) {
  constexpr size_t kBytes = size_t{32} << 20;
  KernelReleaseAll();
  const size_t base = GetKernelMemoryStats().allocated;
  const long first = TouchAndFree(kBytes);
  ASSERT_GE(GetKernelMemoryStats().retained, kBytes / 2);
  long faults = ThreadMinorFaults();
  {
    std::vector<double> result;
    {
      KernelArenaScope scope;
      result.resize(kBytes / sizeof(double));  // zero-filled: every page written
    }
    faults = ThreadMinorFaults() - faults;
    EXPECT_GE(GetKernelMemoryStats().allocated, base + kBytes);
    EXPECT_LE(faults * 4, first) << "made in the scope: " << faults << " faults, a fresh array "
                                 << first;
    // Outside the scope the thread allocates from its own arena again.
    std::vector<double> other(kBytes / sizeof(double));
    EXPECT_LT(GetKernelMemoryStats().allocated, base + 2 * kBytes);
  }
  // Freed by its owner: back in the kernel arena, kept.
  EXPECT_EQ(GetKernelMemoryStats().allocated, base);
  EXPECT_GE(GetKernelMemoryStats().retained, kBytes / 2);
  KernelReleaseAll();
}

// Ending a scope keeps the pages the arena held: jemalloc 5.3 purges an arena whole when the
// last thread bound to it leaves it (arena_migrate), so a scope on a thread that was the
// arena's only one returned every kept page, and each PageRank run, which ends in a scope,
// left the next nothing to reuse.
TEST(KernelMemory, PagesKeptBeforeAScopeAreKeptAfterIt) {
  constexpr size_t kBytes = size_t{32} << 20;
  KernelReleaseAll();
  const long first = TouchAndFree(kBytes);
  ASSERT_GE(GetKernelMemoryStats().retained, kBytes / 2);
  {
    KernelArenaScope scope;
    std::vector<double> small(16);  // the scope's use: an allocation in the kernel arena
  }
  EXPECT_GE(GetKernelMemoryStats().retained, kBytes / 2) << "the scope's end returned them";
  EXPECT_LE(TouchAndFree(kBytes) * 4, first);
  KernelReleaseAll();
}

// GetKernelMemoryStats (the public view of this arena) counts a kernel array while it lives
// and its pages as kept once freed, until they are released (the bench splits a peak's
// memory between the kernels and the memgraphs with it).
TEST(KernelMemory, StatsCountArraysAndKeptPages) {
  KernelReleaseAll();
  const KernelMemoryStats before = GetKernelMemoryStats();
  EXPECT_EQ(before.retained, 0u);
  constexpr size_t kBytes = size_t{8} << 20;
  auto* p = static_cast<unsigned char*>(KernelAllocate(kBytes, 64));
  for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
  const KernelMemoryStats live = GetKernelMemoryStats();
  EXPECT_GE(live.allocated, before.allocated + kBytes);
  EXPECT_GE(live.resident, before.resident + kBytes / 2);
  KernelFree(p, kBytes, 64);
  const KernelMemoryStats freed = GetKernelMemoryStats();
  EXPECT_EQ(freed.allocated, before.allocated);
  EXPECT_GE(freed.retained, kBytes / 2);
  KernelReleaseAll();
  EXPECT_EQ(GetKernelMemoryStats().retained, 0u);
}
#else
TEST(KernelMemory, StatsAreZeroWithoutJemalloc) {
  void* p = KernelAllocate(size_t{4} << 20, 64);
  const KernelMemoryStats st = GetKernelMemoryStats();
  EXPECT_EQ(st.resident + st.allocated + st.retained, 0u);
  KernelFree(p, size_t{4} << 20, 64);
}

TEST(KernelMemory, RetainsNothingWithoutJemalloc) {
  TouchAndFree(size_t{4} << 20);
  EXPECT_EQ(GetKernelMemoryStats().retained, 0u);
}
#endif

}  // namespace
}  // namespace strata::analytics
