#include "analytics/released_snapshot.h"

namespace strata::analytics {

ReleasedSnapshot::ReleasedSnapshot(const Snapshot& from)
    : ReleasedSnapshot(from, from.NumVertices(), from.NumEdges()) {}

ReleasedSnapshot::ReleasedSnapshot(const Snapshot& from, uint64_t num_vertices,
                                   uint64_t num_edges)
    : ts_(from.timestamp()),
      kind_(from.kind()),
      weighted_(from.weighted()),
      bound_(from.VertexIdBound()),
      vertices_(num_vertices),
      edges_(num_edges),
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

}  // namespace strata::analytics
