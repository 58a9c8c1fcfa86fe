#include "db/snapshot_impl.h"

#include "memgraph/memgraph.h"

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

void SnapshotImpl::ReleaseBelow(VertexId v) {
  VertexId from = released_.load(std::memory_order_relaxed);
  while (v > from && !released_.compare_exchange_weak(from, v, std::memory_order_seq_cst)) {
  }
  if (v <= from) return;
  // This call moved the bound from `from` to v: the whole subgraphs newly below it are its to
  // release and reclaim (concurrent calls take disjoint ranges).
  const uint64_t s0 = from >> mem::kSubgraphBits, s1 = v >> mem::kSubgraphBits;
  if (s0 == s1) return;
  core_->tracer.Release(slot_, s1);
  for (const std::shared_ptr<mem::MemGraph>& mg : version_->memgraphs) mg->Reclaim(s0, s1);
}

Status SnapshotImpl::Released(VertexId begin) const {
  const VertexId r = released_.load(std::memory_order_relaxed);
  if (begin >= r) return Status::OK();
  return Status::Aborted("snapshot: a read of vertex " + std::to_string(begin) +
                         ", below the bound " + std::to_string(r) +
                         " the snapshot's owner released (Snapshot::ReleaseBelow)");
}

bool SnapshotImpl::RefuseValue(VertexId begin) const {
  Status s = Released(begin);
  if (s.ok()) return false;
  RecordError(s);
  return true;
}

bool SnapshotImpl::HasVertex(VertexId v) const {
  return !RefuseValue(v) && reader_.HasVertex(v);
}

// Both count over every vertex (TierReader).
uint64_t SnapshotImpl::NumVertices() const { return RefuseValue(0) ? 0 : reader_.NumVertices(); }
uint64_t SnapshotImpl::NumEdges() const { return RefuseValue(0) ? 0 : reader_.NumEdges(); }

Status SnapshotImpl::ScanVertices(VertexId begin, VertexId end,
                                  FunctionRef<bool(VertexId)> fn) const {
  if (Status r = Released(begin); !r.ok()) return r;
  return reader_.ScanVertices(begin, end, fn);
}

Status SnapshotImpl::GetEdge(VertexId u, VertexId v, double* weight) const {
  if (Status r = Released(u); !r.ok()) return r;
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
  if (RefuseValue(u)) return 0;
  return reader_.Degree(dir, u);
}

Status SnapshotImpl::ScanNeighbors(VertexId u, Direction d,
                                   FunctionRef<bool(const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (Status r = Released(u); !r.ok()) return r;
  return reader_.ScanNeighbors(dir, u, fn);
}

Status SnapshotImpl::ScanEdges(VertexId begin, VertexId end, Direction d,
                               FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (Status r = Released(begin); !r.ok()) return r;
  return reader_.ScanEdges(dir, begin, end, fn);
}

Status SnapshotImpl::ScanAdjacency(VertexId begin, VertexId end, Direction d, bool weights,
                                   FunctionRef<bool(VertexId)> want,
                                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (Status r = Released(begin); !r.ok()) return r;
  return reader_.ScanAdjacency(dir, begin, end, weights, want, fn);
}

Status SnapshotImpl::ScanAdjacency(VertexId begin, VertexId end, Direction d,
                                   const AdjacencyScan& scan,
                                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (Status r = Released(begin); !r.ok()) return r;
  return reader_.ScanAdjacency(dir, begin, end, scan, fn);
}

Status SnapshotImpl::ScanDegreeBounds(VertexId begin, VertexId end, Direction d,
                                      FunctionRef<bool(VertexId, uint64_t)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (Status r = Released(begin); !r.ok()) return r;
  return reader_.ScanDegreeBounds(dir, begin, end, fn);
}

Status SnapshotImpl::ScanVertexDegreeBounds(VertexId begin, VertexId end, Direction d,
                                            FunctionRef<bool(VertexId, uint64_t)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (Status r = Released(begin); !r.ok()) return r;
  // Existence lives in the out-direction files; in-degrees need a second pass.
  if (dir != 0) return Snapshot::ScanVertexDegreeBounds(begin, end, d, fn);
  return reader_.ScanVertexDegreeBounds(begin, end, fn);
}

Status SnapshotImpl::ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d, bool weights,
                                        FunctionRef<bool(size_t, const NeighborChunk&)> fn) const {
  uint8_t dir;
  Status s = StoredDir(d, &dir);
  if (!s.ok()) return s;
  if (released_.load(std::memory_order_relaxed) != 0) {
    for (size_t i = 0; i < n; ++i) {
      if (Status r = Released(vs[i]); !r.ok()) return r;
    }
  }
  return reader_.ScanNeighborsBatch(dir, vs, n, weights, fn);
}

}  // namespace strata
