// ViewSnapshot: a Snapshot of a view's subgraph (include/strata/view.h), answered by filtering
// another Snapshot of the same store — nothing is copied.
//
// Contract: every call answers exactly as a snapshot of a store holding only the view's
// vertices and edges would, except
//  - VertexIdBound() is the base's (result arrays keep the base's IDs), and
//  - degree bounds (ScanDegreeBounds, ScanVertexDegreeBounds) are estimates, neither bounds
//    nor exact: the base's bound of each view vertex scaled by the share of entries the view
//    keeps in a sample of its lists (KeptShare), so that kernels plan (direction switches,
//    cache sizes, lookup/stream choices) with about the view's degrees, not its base's (2x
//    them for a 50% vertex view). Kernels use degree bounds only as estimates and count what
//    matters from scans (analytics/layout.h, EstimateLayout), so their results stay exact.
// Costs: a neighbor costs one bit test (its membership in V) plus, when the view has an edge
// predicate, the predicate; a list's own vertex is tested once. Lists of vertices outside V
// are not read (range passes hand the base the membership bitmap as their `want` set).
// Degree(u) counts u's filtered list (O(degree), where the base's may be O(1)); NumVertices()
// and NumEdges() scan the view once, on first use, and cache the count. The first degree-bound
// call per direction samples the lists of up to 2048 vertices (KeptShare: 32 short passes,
// about 0.5 ms at scale 20).
//
// Chunks whose neighbors all pass are handed through untouched; others are compacted into a
// per-thread buffer (a stack of them, so a callback may call the snapshot again).
#pragma once

#include <memory>
#include <mutex>

#include "db/views.h"
#include "strata/snapshot.h"

namespace strata {

class ViewSnapshot final : public Snapshot {
 public:
  // Reads `base`, which must outlive this object; `owned`, when not null, is `base` and is
  // destroyed with it.
  ViewSnapshot(const Snapshot* base, std::unique_ptr<Snapshot> owned,
               std::shared_ptr<const CompiledView> view);

  Timestamp timestamp() const override { return base_->timestamp(); }
  GraphKind kind() const override { return base_->kind(); }
  bool weighted() const override { return base_->weighted(); }
  bool HasVertex(VertexId v) const override { return view_->Contains(v) && base_->HasVertex(v); }
  VertexId VertexIdBound() const override { return base_->VertexIdBound(); }
  // Forwarded to the base when this view owns it (a view's vertex IDs are its base's).
  void ReleaseBelow(VertexId v) override {
    if (owned_ != nullptr) owned_->ReleaseBelow(v);
  }
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

  const CompiledView& view() const { return *view_; }

 private:
  struct Buf;
  // The part of chunk c (of u's list in direction d) in the view; weights kept when `weights`.
  NeighborChunk Filter(VertexId u, Direction d, const NeighborChunk& c, bool weights,
                       Buf* buf) const;
  // Whether the base must be asked for weights to answer a call that wants `weights`.
  bool BaseWeights(bool weights) const { return weights || view_->needs_weights(); }
  void RecordError(const Status& s) const;
  // The share of the entries of view vertices' lists in direction d that the view keeps, in
  // 1/kShareOne, from the lists of the view vertices of kShareWindows 64-vertex windows spread
  // evenly over the view's members by rank (one short streamed pass each), plus 1/32 so that
  // estimates lean high as bounds would; computed once per direction, on first use.
  // kShareOne when the sample holds no entry.
  static constexpr uint64_t kShareOne = uint64_t{1} << 16;
  static constexpr VertexId kShareWindows = 32;
  uint64_t KeptShare(Direction d) const;
  // u's base degree bound b scaled by `share` (rounded up or down by a hash of u, so sums over
  // many vertices are unbiased and the result is the same on every call).
  static uint64_t ScaleBound(VertexId u, uint64_t b, uint64_t share);

  const Snapshot* base_;
  std::unique_ptr<Snapshot> owned_;
  std::shared_ptr<const CompiledView> view_;
  mutable std::once_flag vertices_once_, edges_once_;
  mutable std::once_flag share_once_[2];  // KeptShare, per direction (kOut, kIn)
  mutable uint64_t share_[2] = {kShareOne, kShareOne};
  mutable uint64_t num_vertices_ = 0;
  mutable uint64_t num_edges_ = 0;
  mutable std::mutex err_mu_;
  mutable Status err_;
};

}  // namespace strata
