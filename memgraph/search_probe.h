// The branch-free lower bound every container leaf uses, over a key function: with (base,
// len) = (lo, hi - lo), while len > 1 { half = len / 2; if (key(base + half) < x) base +=
// half; len -= half; } and the answer is base + (key(base) < x). ScanOverlaid finds its next
// overlay key with it. (A stepped form with the next levels prefetched served the build's
// lookups until updates stopped looking anything up: docs/benchmarks.md, "Issue 28: updates
// without lookups".)
#pragma once

#include <cstdint>

namespace strata::mem::probe {

// The first i in [lo, hi) with !less(i), or hi; less(i) is key(i) < x.
template <class Less>
inline uint32_t LowerBound(uint32_t lo, uint32_t hi, Less less) {
  if (lo >= hi) return lo;
  uint32_t base = lo, len = hi - lo;
  while (len > 1) {
    const uint32_t half = len / 2;
    base = less(base + half) ? base + half : base;
    len -= half;
  }
  return base + (less(base) ? 1 : 0);
}

}  // namespace strata::mem::probe
