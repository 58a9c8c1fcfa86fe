// Views: named subgraphs of a store, persisted and versioned with its commits (docs/views.md).
//
// A view is a pair (vertex set V, edge set E) over the graph of a snapshot: V is a subset of
// the snapshot's vertices and E holds only edges of the snapshot with both endpoints in V.
// A definition is either a filter — the conjunction of the conditions it sets — or a set
// operation over other views, named:
//
//   filter:        V = vertices (all when not given) ∩ endpoints of `edges` when edge_mode is
//                  kInclude; E = the snapshot's edges (u,v) with u, v ∈ V whose weight lies in
//                  [weight_min, weight_max] (when has_weight_range), that are in `edges` (kInclude)
//                  or not in it (kExclude).
//   kUnion:        V = V_A ∪ V_B ∪ ...,  E = E_A ∪ E_B ∪ ...
//   kIntersection: V = V_A ∩ V_B ∩ ...,  E = E_A ∩ E_B ∩ ...
//   kDifference:   V = V_A,              E = E_A \ (E_B ∪ ...)   (graph difference)
//
// Edges are logical: on a kUndirected store (u,v) and (v,u) name the same edge. Operands are
// resolved at the snapshot's timestamp, so a snapshot sees every view as of its timestamp.
//
// A view is read through a Snapshot that filters another (DB::GetViewSnapshot, DB::OpenView):
// every Snapshot call answers for the view's subgraph without copying it, so every analytics
// kernel runs on a view unchanged. Filtering costs one bit test per neighbor (the neighbor in
// V; a vertex's own membership is tested once per list); a view whose edges are not simply
// the subgraph induced by V (edge lists, weight ranges, unions, differences) evaluates its
// edge predicate per neighbor too.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strata/types.h"

namespace strata {

struct ViewDefinition {
  enum class Kind : uint8_t { kFilter = 0, kUnion = 1, kIntersection = 2, kDifference = 3 };
  enum class EdgeMode : uint8_t { kNone = 0, kInclude = 1, kExclude = 2 };

  Kind kind = Kind::kFilter;

  // kFilter. Every condition set here must hold.
  bool has_vertices = false;
  std::vector<VertexId> vertices;  // internal IDs; order and duplicates do not matter
  EdgeMode edge_mode = EdgeMode::kNone;
  std::vector<std::pair<VertexId, VertexId>> edges;  // (source, destination)
  bool has_weight_range = false;
  double weight_min = 0;  // inclusive
  double weight_max = 0;  // inclusive

  // kUnion, kIntersection, kDifference: the names of other views (at least two; for
  // kDifference the first minus all the others).
  std::vector<std::string> operands;

  // Human-readable one-line summary ("vertices 12; exclude 3 edges; weight [1, 5]",
  // "union(a, b)").
  std::string Describe() const;
};

// A view as listed by DB::ListViews.
struct ViewInfo {
  std::string name;
  Timestamp created = 0;  // commit timestamp of the definition in effect
  ViewDefinition definition;
};

// Rules for names: 1 to 128 bytes of [A-Za-z0-9_.-].
bool IsValidViewName(const std::string& name);

}  // namespace strata
