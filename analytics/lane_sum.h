// LaneSum: a sum of contributions x[id] over one neighbor list in four lanes. PageRank's pull
// iterations add a vertex's in-neighbors' contributions; one running sum is a chain of
// dependent additions, one FP-add latency per entry, and that chain set the pace of the
// gathers (docs/benchmarks.md, "Issue 28: PageRank's sums in four lanes").
//
// Association. Each Add(x, ids, k) sends its first 4 * floor(k / 4) entries to lane (index in
// the call) mod 4 and the k mod 4 after them to lane 0, each lane a running sum in list order
// from 0.0; Take() is (l0 + l1) + (l2 + l3). The lanes carry across calls, so a list handed in
// pieces whose lengths are multiples of 4 (but the last) gives the bits of one call over the
// whole list: PageRank's sequential sweep (whole lists, a packed block's 256-entry pieces) and
// its interleaved mode (16-entry pieces) agree to the last bit; a list streamed from the store
// comes in the same chunks to both.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::analytics {

struct LaneSum {
  double l0 = 0, l1 = 0, l2 = 0, l3 = 0;

  // x[ids[0]], ..., x[ids[k - 1]], the list's next k entries.
  template <typename Ids>
  void Add(const float* x, const Ids& ids, size_t k) {
    double a = l0, b = l1, e = l2, f = l3;
    const size_t q = k / 4 * 4;
    for (size_t i = 0; i < q; i += 4) {
      a += x[ids[i]];
      b += x[ids[i + 1]];
      e += x[ids[i + 2]];
      f += x[ids[i + 3]];
    }
    for (size_t i = q; i < k; ++i) a += x[ids[i]];
    l0 = a;
    l1 = b;
    l2 = e;
    l3 = f;
  }

  // The list's sum; the lanes start over for the next list.
  double Take() {
    const double s = (l0 + l1) + (l2 + l3);
    l0 = l1 = l2 = l3 = 0;
    return s;
  }
};

}  // namespace strata::analytics
