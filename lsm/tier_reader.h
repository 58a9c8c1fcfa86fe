// TierReader: answers reads at one timestamp by merging the tiers of a Version, newest first.
//
// Merge rules (brief §5–6), per vertex u:
//   - walk tiers newest to oldest; the first tier with u's deleted bit hides all older tiers;
//   - u exists if the newest tier that knows u (exists or deleted bit) says it exists;
//   - an edge entry in a newer tier wins over older ones; a tombstone hides older copies.
// Used by snapshots (reads) and by the write path (OlderTiers for sealed tiers).
#pragma once

#include <cstdint>
#include <vector>

#include "memgraph/memgraph.h"
#include "strata/function_ref.h"
#include "strata/snapshot.h"
#include "version/version.h"

namespace strata::lsm {

class TierReader {
 public:
  // Reads tiers [first, end) of `v` at timestamp ts.
  TierReader(const version::Version* v, Timestamp ts, size_t first = 0)
      : v_(v), ts_(ts), first_(first) {}

  bool HasVertex(VertexId u) const;
  // 1 live (weight set), 0 absent or deleted.
  bool GetEdge(uint8_t dir, VertexId u, VertexId x, double* weight) const;
  uint64_t Degree(uint8_t dir, VertexId u) const;
  void ScanNeighbors(uint8_t dir, VertexId u, FunctionRef<bool(const NeighborChunk&)> fn) const;
  VertexId VertexIdBound() const;
  uint64_t NumVertices() const;
  uint64_t NumEdges() const;
  void ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const;

 private:
  const version::Version* v_;
  Timestamp ts_;
  size_t first_;
};

}  // namespace strata::lsm
