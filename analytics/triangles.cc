// Lcc and TriangleCount: both read the graph in two streaming passes into an in-memory
// orientation by (degree, ID) rank (one ID + one byte per undirected edge), then enumerate each
// triangle a ≺ b ≺ c once as N+(a) ∩ N+(b) (a search-based intersection when the sizes differ
// by 10x or more). LCC credits each triangle to its three corners, so it costs what TC costs
// instead of one neighbor-list read per pair (v, u ∈ N(v)).
#include "strata/analytics.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <memory>

#include <tbb/enumerable_thread_specific.h>

#include "analytics/intersect.h"
#include "analytics/layout.h"
#include "analytics/neighborhood.h"
#include "analytics/range_scan.h"
#include "util/coro.h"

namespace strata::analytics {

namespace {

struct Buffers {
  std::vector<VertexId> ids, scratch;
  std::vector<uint8_t> dirs;
};

// The undirected graph oriented by rank, x ≺ y iff (|N(x)|, x) < (|N(y)|, y), held in memory:
// N+(v) = {u ∈ N(v) : v ≺ u}, ascending by ID, each entry with its direction bits. A triangle
// a ≺ b ≺ c appears exactly once, as b ∈ N+(a) and c ∈ N+(a) ∩ N+(b). Hubs rank last, so every
// N+ list is short (|N+(v)| <= sqrt(2|E|)) — the effect GAPBS gets by relabeling by degree,
// without relabeling the store. Memory: one ID and one byte per undirected edge.
struct Oriented {
  std::vector<uint64_t> degree;  // |N(v)|
  std::vector<uint64_t> offset;  // N+(v) = ids[offset[v], offset[v + 1])
  std::vector<VertexId> ids;
  std::vector<uint8_t> dirs;
};

// Two streaming passes over the ranges: degrees, then the N+ lists (one buffer per range, copied
// into place: a range's vertices are consecutive, so are their lists).
Status BuildOriented(const Snapshot& snap, const Layout& L, const InNeighbors& in, Oriented* g) {
  tbb::enumerable_thread_specific<Buffers> buffers;
  g->degree.assign(L.bound, 0);
  Status s = ForEachVertex(L, [&](VertexId v) {
    Buffers& b = buffers.local();
    Status st = GatherUndirected(snap, in, L, v, kNoLabel, &b.ids, nullptr, &b.scratch);
    g->degree[v] = b.ids.size();
    return st;
  });
  if (!s.ok()) return s;
  auto before = [&](VertexId x, VertexId y) {
    return g->degree[x] < g->degree[y] || (g->degree[x] == g->degree[y] && x < y);
  };
  std::vector<std::vector<VertexId>> part_ids(L.ranges.size());
  std::vector<std::vector<uint8_t>> part_dirs(L.ranges.size());
  g->offset.assign(L.bound + 1, 0);  // first |N+(v)| at offset[v + 1], then prefix sums
  s = ForEachRange(L, [&](size_t i, VertexRange r) -> Status {
    Buffers& b = buffers.local();
    for (VertexId v = r.begin; v < r.end; ++v) {
      if (!L.exists[v]) continue;
      Status st = GatherUndirected(snap, in, L, v, kNoLabel, &b.ids, &b.dirs, &b.scratch);
      if (!st.ok()) return st;
      if (b.ids.size() != g->degree[v]) {
        return Status::Corruption("triangles: neighbor list changed between two scans");
      }
      for (size_t k = 0; k < b.ids.size(); ++k) {
        if (!before(v, b.ids[k])) continue;
        part_ids[i].push_back(b.ids[k]);
        part_dirs[i].push_back(b.dirs[k]);
        ++g->offset[v + 1];
      }
    }
    return Status::OK();
  });
  if (!s.ok()) return s;
  for (VertexId v = 0; v < L.bound; ++v) g->offset[v + 1] += g->offset[v];
  g->ids.resize(g->offset[L.bound]);
  g->dirs.resize(g->offset[L.bound]);
  ForEachRange(L, [&](size_t i, VertexRange r) {
    std::copy(part_ids[i].begin(), part_ids[i].end(), g->ids.begin() + g->offset[r.begin]);
    std::copy(part_dirs[i].begin(), part_dirs[i].end(), g->dirs.begin() + g->offset[r.begin]);
    std::vector<VertexId>().swap(part_ids[i]);
    std::vector<uint8_t>().swap(part_dirs[i]);
    return Status::OK();
  });
  return Status::OK();
}

// The triangles closed by the pair (a, b = ids[k]), k in N+(a) = [a0, a0 + na): on_triangle
// once per c ∈ N+(a) ∩ N+(b), ascending.
template <typename OnTriangle>
inline void CloseTriangles(const Oriented& g, size_t range, VertexId a, uint64_t a0, uint64_t na,
                           uint64_t k, OnTriangle& on_triangle) {
  const VertexId b = g.ids[k];
  const uint64_t b0 = g.offset[b], nb = g.offset[b + 1] - b0;
  const int m_ab = std::popcount(g.dirs[k]);
  ForEachCommon(&g.ids[a0], na, &g.ids[b0], nb, [&](size_t ic, size_t jc) {
    on_triangle(range, a, b, g.ids[a0 + ic], m_ab, std::popcount(g.dirs[a0 + ic]),
                std::popcount(g.dirs[b0 + jc]));
  });
}

// Calls on_triangle(range, a, b, c, m_ab, m_ac, m_bc) once per triangle a ≺ b ≺ c, where m_xy
// is the number of directed edges between x and y (1 or 2; 2 on undirected stores). In memory:
// for each a, for each b ∈ N+(a), intersect N+(a) with N+(b). N+(a) was just read or is being
// read; b's offsets and list are random reads, which params hide (TriangleParams). `dirs`:
// on_triangle reads the direction bits (LCC), so b's are prefetched with its IDs.
template <typename OnTriangle>
void ForEachTriangle(const Oriented& g, const Layout& L, const TriangleParams& params, bool dirs,
                     OnTriangle&& on_triangle) {
  const size_t group = std::max<size_t>(1, params.interleave);
  const bool pf = params.interleave_prefetch;
  auto fetch_list = [&](uint64_t b0) {
    coro::Prefetch(&g.ids[b0]);
    if (dirs) coro::Prefetch(&g.dirs[b0]);
  };
  ForEachRange(L, [&](size_t range, VertexRange r) {
    if (group > 1) {
      // One coroutine per vertex a of the range: each pair waits for b's offsets, then b's list.
      auto item = [&](VertexId a) -> coro::Task<void> {
        const uint64_t a0 = g.offset[a], na = g.offset[a + 1] - a0;
        for (uint64_t k = a0; k < a0 + na; ++k) {
          const VertexId b = g.ids[k];
          if (pf) coro::Prefetch(&g.offset[b]);
          co_await coro::Suspend{};
          if (pf) fetch_list(g.offset[b]);
          co_await coro::Suspend{};
          CloseTriangles(g, range, a, a0, na, k, on_triangle);
        }
      };
      thread_local std::unique_ptr<coro::Scheduler> sched;
      if (sched == nullptr || sched->group() != group) {
        sched = std::make_unique<coro::Scheduler>(group, /*frame_bytes=*/256);
      }
      (void)sched->Run(r.end - r.begin, [&](size_t i) { return item(r.begin + i); });
      assert(sched->arena().fallbacks() == 0);
      return Status::OK();
    }
    // The range's pairs are ids[offset[r.begin], offset[r.end]) in order: b's offsets are
    // fetched d pairs ahead, its list d/2 ahead (d = 0: no prefetch).
    const uint64_t d = params.prefetch_distance, h = d / 2;
    const uint64_t k_end = g.offset[r.end];
    for (uint64_t k = g.offset[r.begin]; k < std::min(k_end, g.offset[r.begin] + d); ++k) {
      coro::Prefetch(&g.offset[g.ids[k]]);
    }
    for (VertexId a = r.begin; a < r.end; ++a) {
      const uint64_t a0 = g.offset[a], na = g.offset[a + 1] - a0;
      for (uint64_t k = a0; k < a0 + na; ++k) {
        if (d > 0) {
          if (k + d < k_end) coro::Prefetch(&g.offset[g.ids[k + d]]);
          if (h > 0 && k + h < k_end) fetch_list(g.offset[g.ids[k + h]]);
        }
        CloseTriangles(g, range, a, a0, na, k, on_triangle);
      }
    }
    return Status::OK();
  });
}

Status Prepare(const Snapshot& snap, Layout* L, InNeighbors* in, Oriented* g) {
  Status s = BuildLayout(snap, L);
  if (s.ok()) s = in->Init(snap, *L);
  if (s.ok()) s = BuildOriented(snap, *L, *in, g);
  return s;
}

}  // namespace

Status Lcc(const Snapshot& snap, std::vector<double>* lcc) {
  return Lcc(snap, TriangleParams{}, lcc);
}

Status TriangleCount(const Snapshot& snap, uint64_t* triangles) {
  return TriangleCount(snap, TriangleParams{}, triangles);
}

Status Lcc(const Snapshot& snap, const TriangleParams& params, std::vector<double>* lcc) {
  Layout L;
  InNeighbors in;
  Oriented g;
  Status s = Prepare(snap, &L, &in, &g);
  lcc->assign(L.bound, 0.0);
  if (!s.ok()) return Finish(snap, s);
  // links[v] = Σ over triangles {v, x, y} of m_xy = |{(x, y) : x, y ∈ N(v), (x, y) ∈ E}|, the
  // numerator of LCC(v): each triangle credits its three corners (integer atomics).
  std::vector<uint64_t> links(L.bound, 0);
  ForEachTriangle(g, L, params, /*dirs=*/true, [&](size_t, VertexId a, VertexId b, VertexId c,
                                                   int m_ab, int m_ac, int m_bc) {
    std::atomic_ref<uint64_t>(links[a]).fetch_add(m_bc, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(links[b]).fetch_add(m_ac, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(links[c]).fetch_add(m_ab, std::memory_order_relaxed);
  });
  ForEachVertex(L, [&](VertexId v) {
    const double d = static_cast<double>(g.degree[v]);
    if (g.degree[v] >= 2) (*lcc)[v] = static_cast<double>(links[v]) / (d * (d - 1));
    return Status::OK();
  });
  return Finish(snap, s);
}

Status TriangleCount(const Snapshot& snap, const TriangleParams& params, uint64_t* triangles) {
  *triangles = 0;
  Layout L;
  InNeighbors in;
  Oriented g;
  Status s = Prepare(snap, &L, &in, &g);
  if (!s.ok()) return Finish(snap, s);
  std::vector<uint64_t> per_range(L.ranges.size(), 0);  // written only by the range's task
  ForEachTriangle(g, L, params, /*dirs=*/false,
                  [&](size_t range, VertexId, VertexId, VertexId, int, int, int) {
    ++per_range[range];
  });
  for (uint64_t c : per_range) *triangles += c;
  return Finish(snap, s);
}

}  // namespace strata::analytics
