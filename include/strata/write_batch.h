// WriteBatch: a group of updates applied atomically by DB::Write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/types.h"

namespace strata {

class WriteBatch {
 public:
  enum class OpType : unsigned char {
    kAddVertex = 0,     // make v exist (no-op if it does)
    kDeleteVertex = 1,  // delete v and its out-edges (and in-edges where the kind keeps them)
    kInsertEdge = 2,    // insert (u,v) or overwrite its weight; creates missing endpoints
    kDeleteEdge = 3,    // delete (u,v); no-op if absent
    kSetWeight = 4,     // change the weight of an existing edge; NotFound aborts the batch
  };
  struct Op {
    OpType type;
    VertexId u;
    VertexId v;  // unused for vertex ops
    double weight;
  };

  void AddVertex(VertexId v) { ops_.push_back({OpType::kAddVertex, v, 0, 0.0}); }
  void DeleteVertex(VertexId v) { ops_.push_back({OpType::kDeleteVertex, v, 0, 0.0}); }
  void InsertEdge(VertexId u, VertexId v, double weight = 1.0) {
    ops_.push_back({OpType::kInsertEdge, u, v, weight});
  }
  void DeleteEdge(VertexId u, VertexId v) { ops_.push_back({OpType::kDeleteEdge, u, v, 0.0}); }
  void SetWeight(VertexId u, VertexId v, double weight) {
    ops_.push_back({OpType::kSetWeight, u, v, weight});
  }

  // Appends every op of `other`, in order: applying the result equals applying the two
  // batches one after the other.
  void Append(const WriteBatch& other) { ops_.insert(ops_.end(), other.ops_.begin(), other.ops_.end()); }

  static bool IsEdgeOp(OpType t) { return t != OpType::kAddVertex && t != OpType::kDeleteVertex; }
  // One above the largest vertex ID the batch names (0 for an empty batch).
  VertexId VertexIdLimit() const {
    VertexId top = 0;
    for (const Op& op : ops_) {
      if (op.u + 1 > top) top = op.u + 1;
      if (IsEdgeOp(op.type) && op.v + 1 > top) top = op.v + 1;
    }
    return top;
  }

  void Clear() { ops_.clear(); }
  size_t Count() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  // Ops in the order they were added; later ops on the same edge win.
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
};

}  // namespace strata
