#include "strata/analytics.h"

#include <vector>

#include "analytics/layout.h"
#include "analytics/range_scan.h"

namespace strata::analytics {

Status Scan(const Snapshot& snap, Direction direction, ScanResult* result) {
  *result = ScanResult{};
  // The vertex tables alone (degree bounds balance the ranges): the lists are read once, by
  // the pass below, not also by a layout pass counting exact degrees.
  Layout L;
  Status s = EstimateLayout(snap, &L);
  if (!s.ok()) return s;
  std::vector<ScanResult> part(L.ranges.size());
  // One streamed pass per range (Snapshot::ScanEdges), not a lookup per vertex.
  s = ForEachRange(L, [&](size_t i, VertexRange r) -> Status {
    ScanResult& p = part[i];
    for (VertexId v = r.begin; v < r.end; ++v) p.vertices += L.exists[v];
    return snap.ScanEdges(r.begin, r.end, direction, [&](VertexId u, const NeighborChunk& c) {
      if (!L.exists[u]) return true;
      p.edges += c.size;
      for (size_t j = 0; j < c.size; ++j) p.dst_sum += c.dst[j];
      if (c.weight) {
        for (size_t j = 0; j < c.size; ++j) p.weight_sum += c.weight[j];
      } else {
        p.weight_sum += static_cast<double>(c.size);
      }
      return true;
    });
  });
  for (const ScanResult& p : part) {
    result->vertices += p.vertices;
    result->edges += p.edges;
    result->dst_sum += p.dst_sum;
    result->weight_sum += p.weight_sum;
  }
  return Finish(snap, s);
}

}  // namespace strata::analytics
