// Neighborhoods of the triangle and label kernels: a vertex's out-neighbors up to a limit
// (GatherOut), in-neighbors whatever the store keeps (InNeighbors), and the undirected
// neighborhood with direction bits (GatherUndirected).
#pragma once

#include <cstdint>
#include <vector>

#include "analytics/layout.h"
#include "analytics/range_scan.h"
#include "strata/snapshot.h"

namespace strata::analytics {

// u's existing out-neighbors that are <= limit, ascending, into *out (cleared first).
Status GatherOut(const Snapshot& snap, VertexId u, VertexId limit, const Layout& layout,
                 std::vector<VertexId>* out);

// In-neighbors of every vertex, whatever the store keeps. For kDirected stores (no in-edge
// index) Init builds a transposed CSR from one pass over the out-edges: O(E) memory, the price
// of not keeping in-edges. Otherwise it scans the store's in-direction on demand.
class InNeighbors {
 public:
  Status Init(const Snapshot& snap, const Layout& layout);

  // Calls fn(u) -> bool for v's in-neighbors in ascending order until fn returns false.
  template <typename Fn>
  Status ForEach(VertexId v, Fn&& fn) const {
    if (!transposed_) {
      return ScanEach(*snap_, v, InDirection(kind_), *layout_,
                      [&](VertexId u, double) { return fn(u); });
    }
    for (uint64_t i = offset_[v]; i < offset_[v + 1]; ++i) {
      if (!fn(src_[i])) break;
    }
    return Status::OK();
  }

 private:
  const Snapshot* snap_ = nullptr;
  const Layout* layout_ = nullptr;  // must outlive this object
  GraphKind kind_ = GraphKind::kDirected;
  VertexId bound_ = 0;
  bool transposed_ = false;
  std::vector<uint64_t> offset_;  // size bound+1; in-neighbors of v: src_[offset_[v], offset_[v+1])
  std::vector<VertexId> src_;     // each list ascending
};

// Direction bits of an undirected-neighborhood entry u of v.
inline constexpr uint8_t kOutBit = 1;  // (v, u) is an edge
inline constexpr uint8_t kInBit = 2;   // (u, v) is an edge

// N(v) = (N_out(v) ∪ N_in(v)) \ {v}, restricted to IDs <= limit: ascending, no duplicates. When
// `dirs` is not null, (*dirs)[i] holds the direction bits of (*out)[i] (both for undirected
// stores). `scratch` is a reusable buffer.
Status GatherUndirected(const Snapshot& snap, const InNeighbors& in, const Layout& layout,
                        VertexId v, VertexId limit, std::vector<VertexId>* out,
                        std::vector<uint8_t>* dirs, std::vector<VertexId>* scratch);

}  // namespace strata::analytics
