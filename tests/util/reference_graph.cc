#include "tests/util/reference_graph.h"

#include <sstream>

namespace strata::testing {

void ReferenceGraph::Erase(VertexId u, VertexId v) {
  edges_.erase({u, v});
  if (kind_ == GraphKind::kUndirected) edges_.erase({v, u});
}

bool ReferenceGraph::Apply(const WriteBatch& b) {
  // Only a SetWeight can fail a batch: the model is copied to roll back to only then (a copy
  // per batch made the wide workloads' models quadratic).
  bool may_fail = false;
  for (const WriteBatch::Op& op : b.ops()) may_fail |= op.type == WriteBatch::OpType::kSetWeight;
  ReferenceGraph before(kind_, weighted_);
  if (may_fail) before = *this;
  for (const WriteBatch::Op& op : b.ops()) {
    double w = weighted_ ? op.weight : 1.0;
    switch (op.type) {
      case WriteBatch::OpType::kAddVertex:
        vertices_.insert(op.u);
        break;
      case WriteBatch::OpType::kDeleteVertex: {
        vertices_.erase(op.u);
        // Its out-edges, and where the store keeps in-edges, the edges into it: on undirected
        // stores the mirrors of its out-edges, on kDirectedWithInEdges every (x, u) (a scan).
        std::vector<std::pair<VertexId, VertexId>> gone;
        for (auto it = edges_.lower_bound({op.u, 0}); it != edges_.end() && it->first.first == op.u;
             ++it) {
          gone.push_back(it->first);
          if (kind_ == GraphKind::kUndirected) gone.push_back({it->first.second, op.u});
        }
        if (kind_ == GraphKind::kDirectedWithInEdges) {
          for (const auto& [e, _] : edges_) {
            if (e.second == op.u) gone.push_back(e);
          }
        }
        for (const auto& e : gone) edges_.erase(e);
        break;
      }
      case WriteBatch::OpType::kInsertEdge:
        vertices_.insert(op.u);
        vertices_.insert(op.v);
        edges_[{op.u, op.v}] = w;
        if (kind_ == GraphKind::kUndirected) edges_[{op.v, op.u}] = w;
        break;
      case WriteBatch::OpType::kDeleteEdge:
        Erase(op.u, op.v);
        break;
      case WriteBatch::OpType::kSetWeight:
        if (edges_.count({op.u, op.v}) == 0) {
          *this = before;
          return false;
        }
        edges_[{op.u, op.v}] = w;
        if (kind_ == GraphKind::kUndirected) edges_[{op.v, op.u}] = w;
        break;
    }
  }
  return true;
}

std::vector<std::pair<VertexId, double>> ReferenceGraph::Neighbors(VertexId u, bool in) const {
  std::vector<std::pair<VertexId, double>> r;
  if (!in || kind_ == GraphKind::kUndirected) {
    for (auto it = edges_.lower_bound({u, 0}); it != edges_.end() && it->first.first == u; ++it) {
      r.push_back({it->first.second, it->second});
    }
  } else {
    for (const auto& [e, w] : edges_) {
      if (e.second == u) r.push_back({e.first, w});
    }
  }
  return r;
}

std::vector<std::vector<std::pair<VertexId, double>>> ReferenceGraph::InLists(
    VertexId id_limit) const {
  std::vector<std::vector<std::pair<VertexId, double>>> in(id_limit);
  if (kind_ == GraphKind::kUndirected) {
    for (VertexId u = 0; u < id_limit; ++u) in[u] = Neighbors(u, false);
    return in;
  }
  for (const auto& [e, w] : edges_) {  // ascending sources: each list comes out sorted
    if (e.second < id_limit) in[e.second].push_back({e.first, w});
  }
  return in;
}

std::string ReferenceGraph::Compare(const Snapshot& s, VertexId id_limit) const {
  std::ostringstream d;
  if (s.NumVertices() != vertices_.size()) {
    d << "NumVertices " << s.NumVertices() << " != " << vertices_.size();
    return d.str();
  }
  if (s.NumEdges() != edges_.size()) {
    d << "NumEdges " << s.NumEdges() << " != " << edges_.size();
    return d.str();
  }
  std::vector<VertexId> scanned;
  s.ScanVertices(0, id_limit, [&](VertexId v) {
    scanned.push_back(v);
    return true;
  });
  std::vector<VertexId> expect(vertices_.begin(), vertices_.end());
  if (scanned != expect) return "ScanVertices differs";
  const bool keeps_in = kind_ != GraphKind::kDirected;
  // Per-vertex Neighbors(u, true) is quadratic at thousands of vertices on kDirectedWithInEdges.
  const auto in_lists = kind_ == GraphKind::kDirectedWithInEdges
                            ? InLists(id_limit)
                            : std::vector<std::vector<std::pair<VertexId, double>>>();
  auto neighbors = [&](VertexId u, bool in) {
    return in && !in_lists.empty() ? in_lists[u] : Neighbors(u, in);
  };
  for (VertexId u = 0; u < id_limit; ++u) {
    if (s.HasVertex(u) != HasVertex(u)) {
      d << "HasVertex(" << u << ") " << s.HasVertex(u);
      return d.str();
    }
    for (int in = 0; in < (keeps_in ? 2 : 1); ++in) {
      Direction dir = in ? Direction::kIn : Direction::kOut;
      auto want = neighbors(u, in);
      if (s.Degree(u, dir) != want.size()) {
        d << "Degree(" << u << (in ? ", in) " : ", out) ") << s.Degree(u, dir)
          << " != " << want.size();
        return d.str();
      }
      std::vector<VertexId> got;
      std::vector<double> gw;
      Status st = s.GetNeighbors(u, &got, &gw, dir);
      if (!st.ok()) return "GetNeighbors: " + st.ToString();
      if (got.size() != want.size()) {
        d << "neighbors(" << u << ") size " << got.size() << " != " << want.size();
        return d.str();
      }
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i].first || gw[i] != want[i].second) {
          d << "neighbor " << i << " of " << u << (in ? " (in)" : "") << ": " << got[i] << "/"
            << gw[i] << " != " << want[i].first << "/" << want[i].second;
          return d.str();
        }
      }
    }
  }
  // The streaming full-graph pass agrees with per-vertex reads, in both directions.
  for (int in = 0; in < (keeps_in ? 2 : 1); ++in) {
    std::vector<std::pair<VertexId, VertexId>> streamed;
    std::vector<double> sw;
    Status st = s.ScanEdges(0, id_limit, in ? Direction::kIn : Direction::kOut,
                            [&](VertexId u, const NeighborChunk& c) {
                              for (size_t i = 0; i < c.size; ++i) {
                                streamed.push_back({u, c.dst[i]});
                                sw.push_back(c.weight ? c.weight[i] : 1.0);
                              }
                              return true;
                            });
    if (!st.ok()) return "ScanEdges: " + st.ToString();
    size_t k = 0;
    for (VertexId u = 0; u < id_limit; ++u) {
      for (const auto& [v, w] : neighbors(u, in)) {
        if (k >= streamed.size() || streamed[k] != std::make_pair(u, v) || sw[k] != w) {
          d << "ScanEdges" << (in ? " (in)" : "") << " differs at entry " << k << " (" << u
            << "," << v << ")";
          return d.str();
        }
        ++k;
      }
    }
    if (k != streamed.size()) return "ScanEdges returned extra entries";
  }
  for (const auto& [e, w] : edges_) {
    double got = -1;
    if (!s.GetEdge(e.first, e.second, &got).ok() || got != w) {
      d << "GetEdge(" << e.first << "," << e.second << ")";
      return d.str();
    }
  }
  if (!s.status().ok()) return "status: " + s.status().ToString();
  return "";
}

}  // namespace strata::testing
