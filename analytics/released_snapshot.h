// ReleasedSnapshot: what a kernel reads through once it has let its own snapshot go (PageRank
// on a snapshot it owns, after its list cache took every list). It keeps the released
// snapshot's identity (timestamp, kind, bound, counts) and answers every read of the graph
// with Aborted, which status() then reports too: a read the kernel should not have made
// fails the run instead of touching versions the writers may have freed. Only the reads
// Snapshot leaves abstract are refused here: its other reads (ScanEdges, ScanAdjacency,
// ScanNeighborsBatch, IntersectCount, ...) are built on these and so fail with them.
#pragma once

#include <atomic>

#include "strata/snapshot.h"

namespace strata::analytics {

class ReleasedSnapshot final : public Snapshot {
 public:
  // Copies what `from` says of itself; `from` may be destroyed afterwards.
  explicit ReleasedSnapshot(const Snapshot& from);
  // The same with the counts given (an exact layout's: Layout::num_vertices and num_out_edges
  // are NumVertices() and NumEdges()), so that nothing is read of `from` but its timestamp,
  // kind, bound and status: no scan of every vertex.
  ReleasedSnapshot(const Snapshot& from, uint64_t num_vertices, uint64_t num_edges);

  Timestamp timestamp() const override { return ts_; }
  GraphKind kind() const override { return kind_; }
  bool weighted() const override { return weighted_; }
  bool HasVertex(VertexId) const override;
  VertexId VertexIdBound() const override { return bound_; }
  uint64_t NumVertices() const override { return vertices_; }
  Status ScanVertices(VertexId, VertexId, FunctionRef<bool(VertexId)>) const override;
  Status GetEdge(VertexId, VertexId, double*) const override;
  uint64_t NumEdges() const override { return edges_; }
  uint64_t Degree(VertexId, Direction) const override;
  Status ScanNeighbors(VertexId, Direction,
                       FunctionRef<bool(const NeighborChunk&)>) const override;
  // The released snapshot's status when it was copied; Aborted once any read came here.
  Status status() const override;

 private:
  Status Refuse() const;  // records the read; the error every read returns

  Timestamp ts_;
  GraphKind kind_;
  bool weighted_;
  VertexId bound_;
  uint64_t vertices_;
  uint64_t edges_;
  Status status_;
  mutable std::atomic<bool> read_{false};
};

}  // namespace strata::analytics
