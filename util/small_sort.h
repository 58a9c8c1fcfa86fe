// StableSmallSort: a stable sort for the short ranges of a version build (a subgraph's few
// updates, an append area's at most 32 entries). std::stable_sort allocates a temporary buffer
// per call, which cost more than sorting a handful of elements; insertion sort allocates
// nothing and is stable. Longer ranges go to std::stable_sort.
#pragma once

#include <algorithm>
#include <iterator>
#include <utility>

namespace strata {

inline constexpr std::ptrdiff_t kSmallSortMax = 48;

template <class It, class Less>
void StableSmallSort(It b, It e, Less less) {
  if (e - b > kSmallSortMax) {
    std::stable_sort(b, e, less);
    return;
  }
  for (It i = b + (b != e ? 1 : 0); i < e; ++i) {
    auto x = std::move(*i);
    It j = i;
    // Strictly less: an element never moves past an equal one, so equal keys keep their order.
    for (; j != b && less(x, *(j - 1)); --j) *j = std::move(*(j - 1));
    *j = std::move(x);
  }
}

}  // namespace strata
