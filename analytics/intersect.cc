#include "analytics/intersect.h"

namespace strata::analytics {

uint64_t IntersectSorted(const VertexId* a, size_t na, const VertexId* b, size_t nb) {
  uint64_t count = 0;
  ForEachCommon(a, na, b, nb, [&](size_t, size_t) { ++count; });
  return count;
}

}  // namespace strata::analytics
