// StableRadixSort: a stable sort of a vector by a 64-bit key that allocates nothing once its
// scratch buffers have grown (std::stable_sort takes a fresh temporary buffer per call, and a
// comparison sort of a shuffled batch mispredicts a branch per comparison).
//
// Least-significant-digit radix sort of (key, index) pairs, at most 11 bits a pass, over only
// the bits in which the keys differ (max - min): a batch of a scale-23 graph grouped by
// subgraph needs two passes. Under kRadixMinSize pairs a pass's histogram costs more than
// the pairs themselves, so they are sorted by (key, index) with std::sort instead. The
// elements themselves move once, in a final gather by index. Up to kInsertionMaxSize
// elements are sorted where they are (StableSmallSort): no pairs, no gather, no scratch.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/scratch.h"
#include "util/small_sort.h"

namespace strata {

inline constexpr size_t kRadixMinSize = 512;
// At most this many elements are sorted in place by insertion.
inline constexpr size_t kInsertionMaxSize = 8;

template <class T>
struct RadixSortScratch {
  struct Entry {
    uint64_t key;
    uint64_t index;
  };
  std::vector<Entry> a, b;
  std::vector<T> spare;  // after a sort: the vector's previous buffer (contents unspecified)

  // Empties the buffers, freeing those one large call grew past kScratchKeepBytes.
  void Release() {
    ReleaseScratch(&a);
    ReleaseScratch(&b);
    ReleaseScratch(&spare);
  }
};

// The LSD passes over keys - lo, lo <= every key <= hi; the result ends in *a. The differing
// bits are cut into as few passes of at most kMaxBits as cover them, of equal width: 16 bits
// (the subgraphs of a scale-22 graph) take two passes of 256 buckets, not 2048 and 32, so a
// batch's histograms fit a few lines and zero and sum in a few hundred steps.
template <class Entry>
void RadixPasses(std::vector<Entry>* ap, std::vector<Entry>* bp, uint64_t lo, uint64_t hi) {
  std::vector<Entry>& a = *ap;
  std::vector<Entry>& b = *bp;
  const size_t n = a.size();
  constexpr unsigned kMaxBits = 11;
  const unsigned width = 64 - static_cast<unsigned>(std::countl_zero(hi - lo));
  const unsigned passes = (width + kMaxBits - 1) / kMaxBits;
  if (passes == 0) return;  // every key equal
  const unsigned bits = (width + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  b.resize(n);
  size_t count[size_t{1} << kMaxBits];
  for (unsigned shift = 0; shift < width; shift += bits) {
    std::fill(count, count + mask + 1, size_t{0});
    for (const Entry& e : a) ++count[((e.key - lo) >> shift) & mask];
    size_t at = 0;
    for (uint64_t d = 0; d <= mask; ++d) {
      const size_t k = count[d];
      count[d] = at;
      at += k;
    }
    for (const Entry& e : a) b[count[((e.key - lo) >> shift) & mask]++] = e;
    a.swap(b);
  }
}

template <class T, class KeyFn>
void StableRadixSort(std::vector<T>* v, KeyFn key, RadixSortScratch<T>* sc) {
  using Entry = typename RadixSortScratch<T>::Entry;
  const size_t n = v->size();
  if (n < 2) return;
  if (n <= kInsertionMaxSize) {
    // A single-edge transaction's ops (two; four when measured): the pairs, std::sort and
    // the gather below took ~390 instructions a transaction, this ~145 with the call around
    // it (callgrind).
    StableSmallSort(v->begin(), v->end(),
                    [&key](const T& a, const T& b) { return key(a) < key(b); });
    return;
  }
  std::vector<Entry>& a = sc->a;
  a.clear();
  a.reserve(n);
  uint64_t lo = ~uint64_t{0}, hi = 0;
  bool sorted = true;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = key((*v)[i]);
    sorted = sorted && (i == 0 || a.back().key <= k);
    a.push_back(Entry{k, i});
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  if (sorted) return;
  if (n < kRadixMinSize) {
    std::sort(a.begin(), a.end(), [](const Entry& x, const Entry& y) {
      return x.key != y.key ? x.key < y.key : x.index < y.index;
    });
  } else {
    RadixPasses(&a, &sc->b, lo, hi);
  }
  std::vector<T>& out = sc->spare;
  out.clear();
  out.reserve(n);
  for (const Entry& e : a) out.push_back(std::move((*v)[e.index]));
  v->swap(out);
}

}  // namespace strata
