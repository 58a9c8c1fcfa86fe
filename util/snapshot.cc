// Snapshot's non-virtual helpers and default set operations, written against the virtual
// interface so every implementation shares them.
#include <algorithm>
#include <utility>
#include <vector>

#include "strata/snapshot.h"

namespace strata {

bool Snapshot::HasEdge(VertexId u, VertexId v) const {
  double w;
  return GetEdge(u, v, &w).ok();
}

Status Snapshot::GetNeighbors(VertexId u, std::vector<VertexId>* dst, std::vector<double>* weights,
                              Direction d) const {
  dst->clear();
  if (weights) weights->clear();
  return ScanNeighbors(u, d, [&](const NeighborChunk& c) {
    dst->insert(dst->end(), c.dst, c.dst + c.size);
    if (weights) {
      if (c.weight) {
        weights->insert(weights->end(), c.weight, c.weight + c.size);
      } else {
        weights->insert(weights->end(), c.size, 1.0);
      }
    }
    return true;
  });
}

Status Snapshot::ScanEdges(VertexId begin, VertexId end, Direction d,
                          FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const {
  Status st;
  bool go = true;
  Status sv = ScanVertices(begin, end, [&](VertexId u) {
    st = ScanNeighbors(u, d, [&](const NeighborChunk& c) { return go = fn(u, c); });
    return st.ok() && go;
  });
  return st.ok() ? sv : st;
}

Status Snapshot::ScanAdjacency(VertexId begin, VertexId end, Direction d, bool weights,
                               FunctionRef<bool(VertexId)> want,
                               FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  Status st;
  bool stop = false;
  Status sv = ScanVertices(begin, end, [&](VertexId u) {
    if (!want(u)) return true;
    st = ScanNeighbors(u, d, [&](const NeighborChunk& c) {
      const NeighborChunk v{c.dst, weights ? c.weight : nullptr, c.size};
      const ScanStep step = fn(u, v);
      stop = step == ScanStep::kStop;
      return step == ScanStep::kMore;
    });
    return st.ok() && !stop;
  });
  return st.ok() ? sv : st;
}

Status Snapshot::ScanAdjacency(VertexId begin, VertexId end, Direction d,
                               const AdjacencyScan& scan,
                               FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  // Merged lists are a valid any-order answer.
  return ScanAdjacency(begin, end, d, scan.weights,
                       [&](VertexId u) { return scan.want.Contains(u); }, fn);
}

Status Snapshot::ScanDegreeBounds(VertexId begin, VertexId end, Direction d,
                                  FunctionRef<bool(VertexId, uint64_t)> fn) const {
  Status sv = ScanVertices(begin, end, [&](VertexId u) {
    const uint64_t n = Degree(u, d);
    return n == 0 || fn(u, n);
  });
  return sv.ok() ? status() : sv;
}

Status Snapshot::ScanVertexDegreeBounds(VertexId begin, VertexId end, Direction d,
                                        FunctionRef<bool(VertexId, uint64_t)> fn) const {
  // Two passes: the bounds of [begin, end) (ascending), then the vertices matched to them.
  std::vector<std::pair<VertexId, uint64_t>> bounds;
  Status s = ScanDegreeBounds(begin, end, d, [&](VertexId u, uint64_t b) {
    bounds.emplace_back(u, b);
    return true;
  });
  if (!s.ok()) return s;
  size_t i = 0;
  return ScanVertices(begin, end, [&](VertexId u) {
    while (i < bounds.size() && bounds[i].first < u) ++i;
    return fn(u, i < bounds.size() && bounds[i].first == u ? bounds[i].second : 0);
  });
}

Status Snapshot::ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d, bool weights,
                                    FunctionRef<bool(size_t, const NeighborChunk&)> fn) const {
  bool go = true;
  for (size_t i = 0; i < n && go; ++i) {
    Status s = ScanNeighbors(vs[i], d, [&](const NeighborChunk& c) {
      if (weights || c.weight == nullptr) return go = fn(i, c);
      return go = fn(i, NeighborChunk{c.dst, nullptr, c.size});
    });
    if (!s.ok()) return s;
  }
  return Status::OK();
}

namespace {

// Visits the intersection of N(u) and N(v) in ascending order.
template <class F>
Status IntersectImpl(const Snapshot& s, VertexId u, VertexId v, F&& visit) {
  uint64_t du = s.Degree(u), dv = s.Degree(v);
  if (du == 0 || dv == 0) return s.status();
  if (du > dv) {
    std::swap(u, v);
    std::swap(du, dv);
  }
  std::vector<VertexId> small;
  Status st = s.GetNeighbors(u, &small);
  if (!st.ok()) return st;
  if (dv >= 10 * du) {
    // Very unequal degrees: search each of the few in the large set (RapidStore §6.5).
    double w;
    for (VertexId x : small) {
      Status g = s.GetEdge(v, x, &w);
      if (g.ok()) {
        visit(x);
      } else if (!g.IsNotFound()) {
        return g;
      }
    }
    return Status::OK();
  }
  size_t i = 0;
  return s.ScanNeighbors(v, [&](const NeighborChunk& c) {
    for (size_t j = 0; j < c.size && i < small.size(); ++j) {
      while (i < small.size() && small[i] < c.dst[j]) ++i;
      if (i < small.size() && small[i] == c.dst[j]) {
        visit(small[i]);
        ++i;
      }
    }
    return i < small.size();
  });
}

}  // namespace

uint64_t Snapshot::IntersectCount(VertexId u, VertexId v) const {
  uint64_t n = 0;
  IntersectImpl(*this, u, v, [&](VertexId) { ++n; });
  return n;
}

Status Snapshot::Intersect(VertexId u, VertexId v, std::vector<VertexId>* out) const {
  out->clear();
  return IntersectImpl(*this, u, v, [&](VertexId x) { out->push_back(x); });
}

}  // namespace strata
