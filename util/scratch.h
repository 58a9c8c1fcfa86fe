// Per-thread scratch buffers that outlive one call.
//
// A hot path that needs a large temporary (a batch's sort buffer, a page rebuild's decode
// array) keeps it in a thread_local vector and clears it instead of freeing it: the process
// heap returns freed memory to the OS at once (malloc_conf in memgraph/node_allocator.cc), so
// a fresh buffer of that size per call costs an madvise on free and a page fault per page on
// the next use. A buffer one unusually large call grew past kScratchKeepBytes is released by
// ReleaseScratch, so what a thread keeps between calls stays bounded.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace strata {

inline constexpr size_t kScratchKeepBytes = size_t{8} << 20;

// Empties *v for the next call; frees its buffer only if it is larger than kScratchKeepBytes.
template <class T>
void ReleaseScratch(std::vector<T>* v) {
  v->clear();
  if (v->capacity() * sizeof(T) > kScratchKeepBytes) std::vector<T>().swap(*v);
}

// A stable sort that allocates nothing once its buffers have grown (std::stable_sort takes a
// fresh temporary buffer per call). Sorts *v by key(x), a std::pair<uint64_t, uint32_t>, equal
// keys keeping their order. *keys and *spare are the caller's reusable buffers; on return *v
// may hold what was *spare's buffer and *spare *v's old one (its contents unspecified).
struct SortEntry {
  uint64_t major;
  uint32_t minor;
  uint32_t index;  // position before the sort: the tie-break that makes the sort stable
  bool operator<(const SortEntry& o) const {
    if (major != o.major) return major < o.major;
    if (minor != o.minor) return minor < o.minor;
    return index < o.index;
  }
};

template <class T, class KeyFn>
void StableSortWithScratch(std::vector<T>* v, KeyFn key, std::vector<SortEntry>* keys,
                           std::vector<T>* spare) {
  keys->clear();
  keys->reserve(v->size());
  bool sorted = true;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::pair<uint64_t, uint32_t> k = key((*v)[i]);
    keys->push_back(SortEntry{k.first, k.second, static_cast<uint32_t>(i)});
    sorted = sorted && (i == 0 || !((*keys)[i] < (*keys)[i - 1]));
  }
  if (sorted) return;
  std::sort(keys->begin(), keys->end());
  spare->clear();
  spare->reserve(v->size());
  for (const SortEntry& e : *keys) spare->push_back(std::move((*v)[e.index]));
  v->swap(*spare);
}

}  // namespace strata
