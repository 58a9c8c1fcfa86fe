// bench/cache_probe.h: the probe runs its two rounds on the threads asked for, over the sizes
// asked for rounded down to powers of two (the large one from the last-level cache when not
// given), and counts accesses.
#include "bench/cache_probe.h"

#include <gtest/gtest.h>

namespace strata::bench {
namespace {

TEST(CacheProbe, CountsAccessesOverTheSizesAsked) {
  const CacheProbeResult r = ProbeCaches(2, 0.05, size_t{64} << 10, size_t{1} << 20);
  EXPECT_EQ(r.threads, 2);
  EXPECT_EQ(r.small_bytes, size_t{64} << 10);
  EXPECT_EQ(r.large_bytes, size_t{1} << 20);
  // At least one round of 4096 accesses per thread, in a round that lasts well under 5 s even
  // on a loaded machine (and far fewer than one access a nanosecond per thread).
  EXPECT_GT(r.small_per_s, 2 * 4096 / 5.0);
  EXPECT_GT(r.large_per_s, 2 * 4096 / 5.0);
  EXPECT_LT(r.small_per_s, 2e9);
  EXPECT_LT(r.large_per_s, 2e9);
}

TEST(CacheProbe, LargeRoundDefaultsToHalfTheLastLevelCache) {
  const CacheProbeResult r = ProbeCaches(1, 0.01);
  const size_t llc = LastLevelCacheBytes();
  const size_t half = llc != 0 ? llc / 2 : size_t{16} << 20;
  // Rounded down to a power of two: within (half / 2, half].
  EXPECT_LE(r.large_bytes, half);
  EXPECT_GT(r.large_bytes, half / 2);
  EXPECT_EQ(r.large_bytes & (r.large_bytes - 1), 0u);
  EXPECT_EQ(r.threads, 1);
  // Sizes that are not powers of two are rounded down to one.
  const CacheProbeResult odd = ProbeCaches(1, 0.01, 3000, 5000);
  EXPECT_EQ(odd.small_bytes, 2048u);
  EXPECT_EQ(odd.large_bytes, 4096u);
  // A zero-thread request still probes on one thread.
  EXPECT_EQ(ProbeCaches(0, 0.01, 4096, 4096).threads, 1);
}

}  // namespace
}  // namespace strata::bench
