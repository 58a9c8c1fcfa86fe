#include "analytics/released_snapshot.h"

namespace strata::analytics {

ReleasedSnapshot::ReleasedSnapshot(const Snapshot& from)
    : ts_(from.timestamp()),
      kind_(from.kind()),
      weighted_(from.weighted()),
      bound_(from.VertexIdBound()),
      vertices_(from.NumVertices()),
      edges_(from.NumEdges()),
      status_(from.status()) {}

Status ReleasedSnapshot::Refuse() const {
  read_.store(true, std::memory_order_relaxed);
  return Status::Aborted("analytics: a read of a snapshot the kernel had released");
}

Status ReleasedSnapshot::status() const {
  return read_.load(std::memory_order_relaxed) ? Refuse() : status_;
}

bool ReleasedSnapshot::HasVertex(VertexId) const {
  Refuse();
  return false;
}
Status ReleasedSnapshot::ScanVertices(VertexId, VertexId, FunctionRef<bool(VertexId)>) const {
  return Refuse();
}
Status ReleasedSnapshot::GetEdge(VertexId, VertexId, double*) const { return Refuse(); }
uint64_t ReleasedSnapshot::Degree(VertexId, Direction) const {
  Refuse();
  return 0;
}
Status ReleasedSnapshot::ScanNeighbors(VertexId, Direction,
                                       FunctionRef<bool(const NeighborChunk&)>) const {
  return Refuse();
}
Status ReleasedSnapshot::ScanEdges(VertexId, VertexId, Direction,
                                   FunctionRef<bool(VertexId, const NeighborChunk&)>) const {
  return Refuse();
}
Status ReleasedSnapshot::ScanAdjacency(VertexId, VertexId, Direction, bool,
                                       FunctionRef<bool(VertexId)>,
                                       FunctionRef<ScanStep(VertexId, const NeighborChunk&)>) const {
  return Refuse();
}
Status ReleasedSnapshot::ScanAdjacency(VertexId, VertexId, Direction, const AdjacencyScan&,
                                       FunctionRef<ScanStep(VertexId, const NeighborChunk&)>) const {
  return Refuse();
}
Status ReleasedSnapshot::ScanDegreeBounds(VertexId, VertexId, Direction,
                                          FunctionRef<bool(VertexId, uint64_t)>) const {
  return Refuse();
}
Status ReleasedSnapshot::ScanVertexDegreeBounds(VertexId, VertexId, Direction,
                                                FunctionRef<bool(VertexId, uint64_t)>) const {
  return Refuse();
}
Status ReleasedSnapshot::ScanNeighborsBatch(const VertexId*, size_t, Direction, bool,
                                            FunctionRef<bool(size_t, const NeighborChunk&)>) const {
  return Refuse();
}
uint64_t ReleasedSnapshot::IntersectCount(VertexId, VertexId) const {
  Refuse();
  return 0;
}
Status ReleasedSnapshot::Intersect(VertexId, VertexId, std::vector<VertexId>*) const {
  return Refuse();
}

}  // namespace strata::analytics
