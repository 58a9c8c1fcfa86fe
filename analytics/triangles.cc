#include "analytics/triangles.h"

#include <algorithm>

#include <tbb/enumerable_thread_specific.h>

namespace strata::analytics {

namespace {
struct Buffers {
  std::vector<VertexId> a, b, scratch;
};
}  // namespace

Status Lcc(const Snapshot& snap, std::vector<double>* lcc) {
  Layout L;
  Status s = BuildLayout(snap, &L);
  if (!s.ok()) return s;
  InNeighbors in;
  s = in.Init(snap, L);
  if (!s.ok()) return Finish(snap, s);
  lcc->assign(L.bound, 0.0);
  tbb::enumerable_thread_specific<Buffers> buffers;
  s = ForEachVertex(L, [&](VertexId v) {
    Buffers& buf = buffers.local();
    std::vector<VertexId>& nv = buf.a;
    Status st = GatherUndirected(snap, in, L, v, kNoLabel, &nv, &buf.scratch);
    if (!st.ok() || nv.size() < 2) return st;
    // links = sum over u in N(v) of |N(v) ∩ N_out(u) \ {u}|; N_out(u) is read only up to
    // max N(v), since larger IDs cannot be in the intersection.
    uint64_t links = 0;
    for (VertexId u : nv) {
      st = GatherOut(snap, u, nv.back(), L.bound, &buf.b);
      if (!st.ok()) return st;
      links += IntersectSorted(nv.data(), nv.size(), buf.b.data(), buf.b.size());
      if (std::binary_search(buf.b.begin(), buf.b.end(), u)) --links;  // self-loop (u, u)
    }
    const double d = static_cast<double>(nv.size());
    (*lcc)[v] = static_cast<double>(links) / (d * (d - 1));
    return Status::OK();
  });
  return Finish(snap, s);
}

Status TriangleCount(const Snapshot& snap, uint64_t* triangles) {
  *triangles = 0;
  Layout L;
  Status s = BuildLayout(snap, &L);
  if (!s.ok()) return s;
  InNeighbors in;
  s = in.Init(snap, L);
  if (!s.ok()) return Finish(snap, s);
  std::vector<uint64_t> per_range(L.ranges.size(), 0);
  tbb::enumerable_thread_specific<Buffers> buffers;
  s = ForEachRange(L, [&](size_t i, VertexRange r) -> Status {
    Buffers& buf = buffers.local();
    uint64_t count = 0;
    for (VertexId u = r.begin; u < r.end; ++u) {
      if (!L.exists[u] || u == 0) continue;
      // Lower neighbors of u; for each v in them, triangles (w, v, u) with w < v < u.
      Status st = GatherUndirected(snap, in, L, u, u - 1, &buf.a, &buf.scratch);
      if (!st.ok()) return st;
      for (size_t j = 1; j < buf.a.size(); ++j) {
        const VertexId v = buf.a[j];
        st = GatherUndirected(snap, in, L, v, v - 1, &buf.b, &buf.scratch);
        if (!st.ok()) return st;
        count += IntersectSorted(buf.a.data(), j, buf.b.data(), buf.b.size());
      }
    }
    per_range[i] = count;
    return Status::OK();
  });
  for (uint64_t c : per_range) *triangles += c;
  return Finish(snap, s);
}

}  // namespace strata::analytics
