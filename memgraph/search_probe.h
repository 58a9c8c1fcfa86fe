// A binary search taken a few levels at a time, for lookups whose cache misses are overlapped
// with other work (ClusteredIndex::Probe; docs/design.md, "Locating a batch").
//
// The search is the branch-free lower bound every container leaf uses: with (base, len) =
// (lo, hi - lo), while len > 1 { half = len / 2; if (key(base + half) < x) base += half;
// len -= half; } and the answer is base + (key(base) < x). SearchAdvance runs some of those
// levels; PrefetchSearchLevels prefetches every position the next `levels` levels may read
// (2^levels - 1 of them), so the levels after it read only prefetched lines. A search whose
// state came from these helpers and is finished by the container's own loop reads exactly the
// positions a search from scratch reads.
#pragma once

#include <cstdint>

#include "util/coro.h"

namespace strata::mem::probe {

// What a finished probe found for its key, as the container's Find would say; kUnfinished
// while steps remain.
enum class Outcome : uint8_t { kUnfinished, kAbsent, kLive, kTombstone };

// Runs up to `levels` levels of the search; less(i) is key(i) < x.
template <class Less>
inline void SearchAdvance(uint32_t* base, uint32_t* len, int levels, Less less) {
  uint32_t b = *base, n = *len;
  for (; n > 1 && levels > 0; --levels) {
    const uint32_t half = n / 2;
    b = less(b + half) ? b + half : b;
    n -= half;
  }
  *base = b;
  *len = n;
}

// The whole search over [lo, hi): the first i with !less(i), or hi.
template <class Less>
inline uint32_t LowerBound(uint32_t lo, uint32_t hi, Less less) {
  if (lo >= hi) return lo;
  uint32_t base = lo, len = hi - lo;
  SearchAdvance(&base, &len, 32, less);
  return base + (less(base) ? 1 : 0);
}

// Prefetches addr(i) for every position i the next `levels` levels of the search from
// (base, len) may read.
template <class Addr>
inline void PrefetchSearchLevels(uint32_t base, uint32_t len, int levels, Addr addr) {
  if (levels == 0 || len <= 1) return;
  const uint32_t half = len / 2;
  coro::Prefetch(addr(base + half));
  PrefetchSearchLevels(base, len - half, levels - 1, addr);
  PrefetchSearchLevels(base + half, len - half, levels - 1, addr);
}

// A search range whose keys fit in this many bytes is prefetched whole instead of level by
// level.
inline constexpr uint32_t kWholeRangeBytes = 256;
// Levels prefetched per step: 7 lines, three halvings.
inline constexpr int kLevelsPerStep = 3;

}  // namespace strata::mem::probe
