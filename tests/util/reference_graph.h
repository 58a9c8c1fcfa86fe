// ReferenceGraph: the simple model the engine is tested against — an ordered map of edges and
// a set of vertices, applying WriteBatch semantics directly (docs/architecture.md, "Data
// model"). Deliberately naive: every operation is the obvious one on std::map/std::set.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "strata/snapshot.h"
#include "strata/write_batch.h"

namespace strata::testing {

class ReferenceGraph {
 public:
  ReferenceGraph(GraphKind kind, bool weighted) : kind_(kind), weighted_(weighted) {}

  // Applies the whole batch or, when a SetWeight names a missing edge, none of it.
  // Returns false in that case.
  bool Apply(const WriteBatch& b);

  bool HasVertex(VertexId v) const { return vertices_.count(v) != 0; }
  const std::set<VertexId>& vertices() const { return vertices_; }
  const std::map<std::pair<VertexId, VertexId>, double>& edges() const { return edges_; }
  // Out-neighbors (or in-neighbors when in == true) with weights, ascending.
  std::vector<std::pair<VertexId, double>> Neighbors(VertexId u, bool in) const;
  // Neighbors(u, true) of every u < id_limit, from one pass over the edges (a call of
  // Neighbors(u, true) scans them all on kDirectedWithInEdges).
  std::vector<std::vector<std::pair<VertexId, double>>> InLists(VertexId id_limit) const;

  // Compares every query of `s` with this model over vertex IDs [0, id_limit). Returns ""
  // when equal, else a description of the first difference.
  std::string Compare(const Snapshot& s, VertexId id_limit) const;

 private:
  void Erase(VertexId u, VertexId v);
  GraphKind kind_;
  bool weighted_;
  std::set<VertexId> vertices_;
  std::map<std::pair<VertexId, VertexId>, double> edges_;
};

}  // namespace strata::testing
