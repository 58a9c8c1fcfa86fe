// A probe of how fast this machine's caches serve random accesses right now, recorded in each
// report (at the suite's start and end). On a shared host the last-level cache is shared with
// other tenants: on the AMD EPYC VM of issue 28 two threads' random read-modify-writes over
// 12 MiB each ran anywhere from 105 to 297 M per 0.5 s, in stretches of seconds to a minute,
// while over 1 MiB each (within each core's L2) they never moved (docs/benchmarks.md, "Issue
// 28: PageRank's gathers by degree group; the shared L3's swings"). Workloads whose working
// set is the L3's (the memgraph's writers, PageRank's gathers, the CSR's) swing with it; the
// probe says which kind of stretch a report was measured in.
#pragma once

#include <cstddef>

namespace strata::bench {

struct CacheProbeResult {
  int threads = 0;
  size_t small_bytes = 0;      // per thread: within a core's L2
  size_t large_bytes = 0;      // per thread: together half the last-level cache
  double small_per_s = 0;      // random read-modify-writes per second, all threads
  double large_per_s = 0;
  double seconds = 0;          // each of the two rounds
};

// The last-level cache's bytes (sysfs, the highest cache level of cpu0), 0 when unknown.
size_t LastLevelCacheBytes();

// `threads` threads, each over its own buffer: `seconds` of random read-modify-writes over
// small_bytes each, then as long over large_bytes each (0: half of LastLevelCacheBytes(), or
// 16 MiB, split among the threads); each size rounded down to a power of two (the result
// says what was used). Each thread does at least one round of 4096 accesses.
CacheProbeResult ProbeCaches(int threads, double seconds, size_t small_bytes = size_t{256} << 10,
                             size_t large_bytes = 0);

}  // namespace strata::bench
