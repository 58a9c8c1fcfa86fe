// Intersections of ascending, duplicate-free vertex arrays (triangle kernels).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "strata/types.h"

namespace strata::analytics {

// Calls fn(i, j) for every a[i] == b[j] of two ascending, duplicate-free arrays, ascending: a
// linear merge (branch-free), or binary searches of the smaller array's elements into the
// larger one when their sizes differ by 10x or more.
// T: an unsigned integer type (vertex IDs, or the triangle kernels' 32-bit ranks).
template <typename T, typename Fn>
void ForEachCommon(const T* a, size_t na, const T* b, size_t nb, Fn&& fn) {
  if (na == 0 || nb == 0) return;
  if (nb >= 10 * na || na >= 10 * nb) {
    const bool a_small = na <= nb;
    const T* s = a_small ? a : b;
    const T* l = a_small ? b : a;
    const size_t ns = a_small ? na : nb, nl = a_small ? nb : na;
    size_t lo = 0;  // l[0, lo) < every element of s not yet searched
    for (size_t i = 0; i < ns && lo < nl; ++i) {
      lo = static_cast<size_t>(std::lower_bound(l + lo, l + nl, s[i]) - l);
      if (lo < nl && l[lo] == s[i]) {
        a_small ? fn(i, lo) : fn(lo, i);
        ++lo;
      }
    }
    return;
  }
  // Branch-free steps: which side advances is data (the comparisons become increments), and
  // the only branch, on a common element, is rarely taken (a triangle per many wedges).
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    const T x = a[i], y = b[j];
    if (x == y) [[unlikely]] fn(i, j);
    i += static_cast<size_t>(x <= y);
    j += static_cast<size_t>(y <= x);
  }
}

// |a ∩ b| of two ascending, duplicate-free arrays (ForEachCommon's 10x rule).
uint64_t IntersectSorted(const VertexId* a, size_t na, const VertexId* b, size_t nb);

}  // namespace strata::analytics
