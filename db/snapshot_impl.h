// SnapshotImpl: a Snapshot over a pinned Version at a registered timestamp.
//
// Invariant: while this object lives, its tracer slot holds ts, so writer GC keeps every
// subgraph version it can select in the subgraphs it has not released (ReleaseBelow), and the
// shared_ptrs keep the tiers themselves alive. Every read of a vertex below released_ fails
// (Aborted) before it reaches a tier.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "db/db_impl.h"
#include "db/tier_reader.h"

namespace strata {

class SnapshotImpl final : public Snapshot {
 public:
  SnapshotImpl(std::shared_ptr<DBCore> core, mvcc::ReaderTracer::Slot slot,
               std::shared_ptr<const Version> version, GraphKind kind, bool weighted);
  ~SnapshotImpl() override;

  Timestamp timestamp() const override { return slot_.ts(); }
  GraphKind kind() const override { return kind_; }
  bool weighted() const override { return weighted_; }
  bool HasVertex(VertexId v) const override;
  VertexId VertexIdBound() const override { return reader_.VertexIdBound(); }
  uint64_t NumVertices() const override;
  Status ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const override;
  Status GetEdge(VertexId u, VertexId v, double* weight) const override;
  uint64_t NumEdges() const override;
  uint64_t Degree(VertexId u, Direction d) const override;
  Status ScanNeighbors(VertexId u, Direction d,
                       FunctionRef<bool(const NeighborChunk&)> fn) const override;
  Status ScanEdges(VertexId begin, VertexId end, Direction d,
                   FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const override;
  Status ScanAdjacency(VertexId begin, VertexId end, Direction d, bool weights,
                       FunctionRef<bool(VertexId)> want,
                       FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const override;
  Status ScanAdjacency(VertexId begin, VertexId end, Direction d, const AdjacencyScan& scan,
                       FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const override;
  Status ScanDegreeBounds(VertexId begin, VertexId end, Direction d,
                          FunctionRef<bool(VertexId, uint64_t)> fn) const override;
  Status ScanVertexDegreeBounds(VertexId begin, VertexId end, Direction d,
                                FunctionRef<bool(VertexId, uint64_t)> fn) const override;
  using Snapshot::ScanNeighborsBatch;
  Status ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d, bool weights,
                            FunctionRef<bool(size_t, const NeighborChunk&)> fn) const override;
  Status status() const override;
  // Releases in every memgraph of the version the whole subgraphs below v (the tracer's
  // released bound, then MemGraph::Reclaim over the subgraphs newly released).
  void ReleaseBelow(VertexId v) override;

 private:
  // Aborted if [begin, ...) reaches below the released bound, else OK.
  Status Released(VertexId begin) const;
  // Records Released(begin) when it fails; whether it did.
  bool RefuseValue(VertexId begin) const;
  // Maps a public direction to a stored list: 0 = out-lists, 1 = in-lists.
  Status StoredDir(Direction d, uint8_t* dir) const;
  void RecordError(const Status& s) const;

  std::shared_ptr<DBCore> core_;
  mvcc::ReaderTracer::Slot slot_;
  std::shared_ptr<const Version> version_;  // declared after core_: released first
  GraphKind kind_;
  bool weighted_;
  TierReader reader_;
  // Reads of vertices below it fail; the whole subgraphs below it are released in the tracer
  // and reclaimed (by the ReleaseBelow call that moved it past them).
  std::atomic<VertexId> released_{0};
  mutable std::mutex err_mu_;
  mutable Status err_;
};

}  // namespace strata
