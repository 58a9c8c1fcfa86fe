#include "lsm/db_impl.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "lsm/snapshot_impl.h"

namespace strata::lsm {

namespace {

Status ValidateOptions(const Options& o) {
  if (o.memgraph_bytes < (size_t{64} << 10)) {
    return Status::InvalidArgument("memgraph_bytes: must be at least 64 KiB");
  }
  if (o.cart_threshold < 4) return Status::InvalidArgument("cart_threshold: must be at least 4");
  if (o.max_vertex_id == 0) return Status::InvalidArgument("max_vertex_id: must be positive");
  if (o.max_sealed_memgraphs < 1) {
    return Status::InvalidArgument("max_sealed_memgraphs: must be at least 1");
  }
  return Status::OK();
}

}  // namespace

DBImpl::DBImpl(const Options& options, std::string path)
    : options_(options), path_(std::move(path)), core_(std::make_shared<DBCore>(options.reader_slots)) {}

DBImpl::~DBImpl() { Close(); }

Status DBImpl::Init() {
  Status s = ValidateOptions(options_);
  if (!s.ok()) return s;
  if (!options_.in_memory) {
    return Status::NotSupported(
        "the disk tier is not built yet: open with Options::in_memory = true");
  }
  mem::MemGraphOptions mo;
  mo.kind = options_.graph_kind;
  mo.weighted = options_.weighted;
  mo.tombstones = false;  // no older tier to shadow
  mo.cart_threshold = options_.cart_threshold;
  auto v = std::make_shared<version::Version>();
  v->memgraphs.push_back(std::make_shared<mem::MemGraph>(mo, &core_->clock, &core_->tracer));
  current_ = std::move(v);
  return Status::OK();
}

Status DBImpl::Expand(const WriteBatch& batch, std::vector<mem::PrimOp>* ops) const {
  using mem::PrimOp;
  const GraphKind kind = options_.graph_kind;
  ops->clear();
  ops->reserve(batch.Count() * (kind == GraphKind::kDirected ? 3 : 4));
  uint32_t seq = 0;
  auto bad_id = [&](VertexId id) {
    return Status::InvalidArgument("op " + std::to_string(seq) + ": vertex ID " +
                                   std::to_string(id) + " is not below max_vertex_id " +
                                   std::to_string(options_.max_vertex_id));
  };
  auto push = [&](PrimOp::Kind k, uint8_t dir, VertexId u, VertexId v, double w) {
    ops->push_back(PrimOp{k, dir, seq, u, v, w});
  };
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.u >= options_.max_vertex_id) return bad_id(op.u);
    const bool edge_op = op.type != WriteBatch::OpType::kAddVertex &&
                         op.type != WriteBatch::OpType::kDeleteVertex;
    if (edge_op && op.v >= options_.max_vertex_id) return bad_id(op.v);
    double w = options_.weighted ? op.weight : 1.0;
    if ((op.type == WriteBatch::OpType::kInsertEdge || op.type == WriteBatch::OpType::kSetWeight) &&
        options_.weighted && !std::isfinite(op.weight)) {
      return Status::InvalidArgument("op " + std::to_string(seq) + ": weight must be finite");
    }
    switch (op.type) {
      case WriteBatch::OpType::kAddVertex:
        push(PrimOp::kAddVertex, 0, op.u, 0, 0);
        break;
      case WriteBatch::OpType::kDeleteVertex:
        push(PrimOp::kDeleteVertex, 0, op.u, 0, 0);
        break;
      case WriteBatch::OpType::kInsertEdge:
        push(PrimOp::kAddVertex, 0, op.u, 0, 0);
        push(PrimOp::kAddVertex, 0, op.v, 0, 0);
        push(PrimOp::kPut, 0, op.u, op.v, w);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kPut, 1, op.v, op.u, w);
        if (kind == GraphKind::kUndirected) push(PrimOp::kPut, 0, op.v, op.u, w);
        break;
      case WriteBatch::OpType::kDeleteEdge:
        push(PrimOp::kDelete, 0, op.u, op.v, 0);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kDelete, 1, op.v, op.u, 0);
        if (kind == GraphKind::kUndirected) push(PrimOp::kDelete, 0, op.v, op.u, 0);
        break;
      case WriteBatch::OpType::kSetWeight:
        if (!options_.weighted) {
          return Status::InvalidArgument("op " + std::to_string(seq) +
                                         ": SetWeight on an unweighted store");
        }
        push(PrimOp::kPutIfExists, 0, op.u, op.v, w);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kPut, 1, op.v, op.u, w);
        if (kind == GraphKind::kUndirected) push(PrimOp::kPut, 0, op.v, op.u, w);
        break;
    }
    ++seq;
  }
  return Status::OK();
}

Status DBImpl::Write(const WriteOptions& wo, const WriteBatch& batch) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  std::vector<mem::PrimOp> ops;
  Status s = Expand(batch, &ops);
  if (!s.ok()) return s;
  std::shared_ptr<const version::Version> v = current();
  Timestamp ts;
  s = v->memgraphs[0]->Apply(&ops, nullptr, &ts);
  if (!s.ok()) return s;
  batches_.fetch_add(1, std::memory_order_relaxed);
  ops_.fetch_add(batch.Count(), std::memory_order_relaxed);
  bool deletes = false;
  VertexId top = 0;
  for (const WriteBatch::Op& op : batch.ops()) {
    deletes |= op.type == WriteBatch::OpType::kDeleteVertex;
    top = std::max(top, op.u + 1);
    if (op.type != WriteBatch::OpType::kAddVertex && op.type != WriteBatch::OpType::kDeleteVertex) {
      top = std::max(top, op.v + 1);
    }
  }
  for (VertexId cur = next_id_.load(std::memory_order_relaxed);
       cur < top && !next_id_.compare_exchange_weak(cur, top);) {
  }
  if (deletes) {
    std::lock_guard<std::mutex> g(free_ids_mu_);
    for (const WriteBatch::Op& op : batch.ops()) {
      if (op.type == WriteBatch::OpType::kDeleteVertex) free_ids_.push_back(op.u);
    }
  }
  return Status::OK();
}

Status DBImpl::NewVertex(VertexId* id) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  std::lock_guard<std::mutex> g(free_ids_mu_);
  VertexId candidate = next_id_.load(std::memory_order_acquire);
  if (!free_ids_.empty()) {
    std::unique_ptr<Snapshot> snap = GetSnapshot();
    while (!free_ids_.empty()) {
      VertexId f = free_ids_.front();
      free_ids_.pop_front();
      if (!snap->HasVertex(f)) {  // not re-created explicitly since its deletion
        candidate = f;
        break;
      }
    }
  }
  if (candidate >= options_.max_vertex_id) {
    return Status::InvalidArgument("NewVertex: vertex IDs exhausted (max_vertex_id)");
  }
  WriteBatch wb;
  wb.AddVertex(candidate);
  Status s = Write(WriteOptions(), wb);
  if (s.ok()) *id = candidate;
  return s;
}

std::unique_ptr<Snapshot> DBImpl::GetSnapshot() {
  version::ReaderTracer::Slot slot = core_->tracer.Register(core_->clock);
  return std::make_unique<SnapshotImpl>(core_, slot, current(), options_.graph_kind,
                                        options_.weighted);
}

DBStats DBImpl::GetStats() {
  DBStats st;
  std::unique_ptr<Snapshot> snap = GetSnapshot();
  st.last_committed = snap->timestamp();
  st.num_vertices = snap->NumVertices();
  st.num_edges = snap->NumEdges();
  snap.reset();
  st.batches_committed = batches_.load(std::memory_order_relaxed);
  st.ops_applied = ops_.load(std::memory_order_relaxed);
  std::shared_ptr<const version::Version> v = current();
  for (const auto& m : v->memgraphs) {
    st.memgraph_bytes += m->bytes();
    st.memgraph_versions += m->live_versions();
    st.versions_reclaimed += m->reclaimed_versions();
  }
  st.sealed_memgraphs = v->memgraphs.empty() ? 0 : v->memgraphs.size() - 1;
  st.active_readers = core_->tracer.ActiveCount();
  return st;
}

Status DBImpl::Close() {
  closed_.store(true, std::memory_order_release);
  return Status::OK();
}

}  // namespace strata::lsm
