#include "db/snapshot_impl.h"

namespace strata {

SnapshotImpl::SnapshotImpl(std::shared_ptr<DBCore> core, mvcc::ReaderTracer::Slot slot,
                           std::shared_ptr<const Version> version, GraphKind kind,
                           bool weighted)
    : core_(std::move(core)),
      slot_(slot),
      version_(std::move(version)),
      kind_(kind),
      weighted_(weighted),
      reader_(version_.get(), slot_.ts(), weighted) {}

SnapshotImpl::~SnapshotImpl() {
  version_.reset();
  core_->tracer.Unregister(slot_);
}

Status SnapshotImpl::StoredDir(Direction d, uint8_t* dir) const {
  if (d == Direction::kOut || kind_ == GraphKind::kUndirected) {
    *dir = 0;
    return Status::OK();
  }
  if (kind_ == GraphKind::kDirectedWithInEdges) {
    *dir = 1;
    return Status::OK();
  }
  return Status::NotSupported("in-edges are not kept by a 'directed' store; create it as directed+in");
}

void SnapshotImpl::RecordError(const Status& s) const {
  std::lock_guard<std::mutex> g(err_mu_);
  if (err_.ok()) err_ = s;
}

Status SnapshotImpl::status() const {
  {
    std::lock_guard<std::mutex> g(err_mu_);
    if (!err_.ok()) return err_;
  }
  return reader_.status();
}

Status SnapshotImpl::ScanVertices(VertexId begin, VertexId end,
                                  FunctionRef<bool(VertexId)> fn) const {
  return reader_.ScanVertices(begin, end, fn);
}

Status SnapshotImpl::GetEdge(VertexId u, VertexId v, double* weight) const {
  double w = 1.0;
  if (!reader_.GetEdge(0, u, v, &w)) {
    Status s = reader_.status();
    return s.ok() ? Status::NotFound("no such edge") : s;
  }
  if (weight) *weight = w;
  return Status::OK();
}

uint64_t SnapshotImpl::Degree(VertexId u, Direction d) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) {
    RecordError(s);
    return 0;
  }
  return reader_.Degree(dir, u);
}

Status SnapshotImpl::ScanNeighbors(VertexId u, Direction d,
                                   FunctionRef<bool(const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  return reader_.ScanNeighbors(dir, u, fn);
}

Status SnapshotImpl::ScanEdges(VertexId begin, VertexId end, Direction d,
                               FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  return reader_.ScanEdges(dir, begin, end, fn);
}

Status SnapshotImpl::ScanAdjacency(VertexId begin, VertexId end, Direction d, bool weights,
                                   FunctionRef<bool(VertexId)> want,
                                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  return reader_.ScanAdjacency(dir, begin, end, weights, want, fn);
}

Status SnapshotImpl::ScanAdjacency(VertexId begin, VertexId end, Direction d,
                                   const AdjacencyScan& scan,
                                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  return reader_.ScanAdjacency(dir, begin, end, scan, fn);
}

Status SnapshotImpl::ScanDegreeBounds(VertexId begin, VertexId end, Direction d,
                                      FunctionRef<bool(VertexId, uint64_t)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  return reader_.ScanDegreeBounds(dir, begin, end, fn);
}

Status SnapshotImpl::ScanVertexDegreeBounds(VertexId begin, VertexId end, Direction d,
                                            FunctionRef<bool(VertexId, uint64_t)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  // Existence lives in the out-direction files; in-degrees need a second pass.
  if (dir != 0) return Snapshot::ScanVertexDegreeBounds(begin, end, d, fn);
  return reader_.ScanVertexDegreeBounds(begin, end, fn);
}

Status SnapshotImpl::ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d, bool weights,
                                        FunctionRef<bool(size_t, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  return reader_.ScanNeighborsBatch(dir, vs, n, weights, fn);
}

}  // namespace strata
