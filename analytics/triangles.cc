// Lcc and TriangleCount: both read the graph in two streaming passes into an in-memory
// orientation relabeled by (degree, ID) rank (one 32-bit rank + one byte per undirected edge),
// then enumerate each triangle a ≺ b ≺ c once as the part of N+(a) after b intersected with
// N+(b) (a search-based intersection when the sizes differ by 10x or more). LCC credits each
// triangle to its three corners, so it costs what TC costs instead of one neighbor-list read
// per pair (v, u ∈ N(v)).
#include "strata/analytics.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <limits>
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "analytics/intersect.h"
#include "analytics/layout.h"
#include "analytics/neighborhood.h"
#include "analytics/range_scan.h"
#include "util/coro.h"

namespace strata::analytics {

namespace {

using Rank = uint32_t;
constexpr Rank kUnranked = std::numeric_limits<Rank>::max();

struct Buffers {
  std::vector<VertexId> ids, scratch;
  std::vector<uint8_t> dirs;
  std::vector<std::pair<Rank, uint8_t>> plus;
};

// The undirected graph oriented and relabeled by rank (GAPBS's relabeling by degree, in the
// kernel's memory only): the vertices with a neighbor, ordered by (|N(v)|, v), have ranks 0,
// 1, ...; x ≺ y iff rank(x) < rank(y). N+(r) = the ranks of {u ∈ N(v) : v ≺ u} for v of rank
// r, ascending, each entry with its direction bits. A triangle a ≺ b ≺ c appears exactly once,
// as b ∈ N+(a) and c ∈ N+(a) ∩ N+(b), and c, being ≻ b, lies after b in N+(a). Hubs rank
// last, so every N+ list is short (|N+(v)| <= sqrt(2|E|)), and the lists of the high ranks,
// which are the b of most pairs, sit together at the end. Memory: a 4-byte rank and a byte per
// undirected edge, 16 bytes per ranked vertex (offset, vertex), 12 per vertex ID (degree,
// rank).
struct Oriented {
  std::vector<uint64_t> degree;  // |N(v)|, by vertex ID
  std::vector<Rank> rank;        // by vertex ID; kUnranked when |N(v)| == 0
  std::vector<VertexId> vertex;  // vertex[r]: the vertex of rank r
  std::vector<uint64_t> offset;  // N+(r) = ids[offset[r], offset[r + 1])
  std::vector<Rank> ids;
  std::vector<uint8_t> dirs;
  Rank ranks() const { return static_cast<Rank>(vertex.size()); }
};

// Two streaming passes over the ranges: degrees, then the N+ lists (one buffer per range);
// between them the ranks (a counting sort by degree, stable in ID), after them each vertex's
// list copied to its rank's place.
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
  // Ranks: by degree, then by ID (the counting sort is stable over ascending IDs).
  uint64_t max_degree = 0, ranked = 0;
  for (VertexId v = 0; v < L.bound; ++v) {
    max_degree = std::max(max_degree, g->degree[v]);
    ranked += g->degree[v] != 0;
  }
  if (ranked >= kUnranked) {
    return Status::NotSupported("triangles: more than 2^32 - 2 vertices with neighbors");
  }
  {
    std::vector<uint64_t> start(max_degree + 2, 0);
    for (VertexId v = 0; v < L.bound; ++v) {
      if (g->degree[v] != 0) ++start[g->degree[v] + 1];
    }
    for (uint64_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
    g->rank.assign(L.bound, kUnranked);
    g->vertex.resize(ranked);
    for (VertexId v = 0; v < L.bound; ++v) {
      if (g->degree[v] == 0) continue;
      const uint64_t r = start[g->degree[v]]++;
      g->rank[v] = static_cast<Rank>(r);
      g->vertex[r] = v;
    }
  }
  std::vector<std::vector<Rank>> part_ids(L.ranges.size());
  std::vector<std::vector<uint8_t>> part_dirs(L.ranges.size());
  g->offset.assign(static_cast<size_t>(ranked) + 1, 0);  // first |N+(r)| at offset[r + 1]
  s = ForEachRange(L, [&](size_t i, VertexRange r) {
    Buffers& b = buffers.local();
    for (VertexId v = r.begin; v < r.end; ++v) {
      if (!L.exists[v] || g->degree[v] == 0) continue;
      Status st = GatherUndirected(snap, in, L, v, kNoLabel, &b.ids, &b.dirs, &b.scratch);
      if (!st.ok()) return st;
      if (b.ids.size() != g->degree[v]) {
        return Status::Corruption("triangles: neighbor list changed between two scans");
      }
      const Rank rv = g->rank[v];
      b.plus.clear();
      for (size_t k = 0; k < b.ids.size(); ++k) {
        const Rank ru = g->rank[b.ids[k]];
        // Every neighbor has a rank (v is its neighbor; the scans drop kDirected edges into
        // absent vertices); the test keeps a stray entry from indexing past the offsets.
        if (ru != kUnranked && ru > rv) b.plus.emplace_back(ru, b.dirs[k]);
      }
      std::sort(b.plus.begin(), b.plus.end());
      for (const auto& [ru, bits] : b.plus) {
        part_ids[i].push_back(ru);
        part_dirs[i].push_back(bits);
      }
      g->offset[rv + 1] = b.plus.size();
    }
    return Status::OK();
  });
  if (!s.ok()) return s;
  for (uint64_t r = 0; r < ranked; ++r) g->offset[r + 1] += g->offset[r];
  g->ids.resize(g->offset[ranked]);
  g->dirs.resize(g->offset[ranked]);
  ForEachRange(L, [&](size_t i, VertexRange r) {
    uint64_t k = 0;  // the range's lists are in its buffer in vertex order
    for (VertexId v = r.begin; v < r.end; ++v) {
      if (!L.exists[v] || g->degree[v] == 0) continue;
      const Rank rv = g->rank[v];
      const uint64_t n = g->offset[rv + 1] - g->offset[rv];
      std::copy_n(part_ids[i].begin() + k, n, g->ids.begin() + g->offset[rv]);
      std::copy_n(part_dirs[i].begin() + k, n, g->dirs.begin() + g->offset[rv]);
      k += n;
    }
    std::vector<Rank>().swap(part_ids[i]);
    std::vector<uint8_t>().swap(part_dirs[i]);
    return Status::OK();
  });
  return Status::OK();
}

// The triangles closed by the pair (a, b = ids[k]), k a position in N+(a), which ends at a1:
// on_triangle once per c ∈ N+(a) ∩ N+(b), ascending; only N+(a) after b can hold such a c.
// Returns their number.
template <typename OnTriangle>
inline uint64_t CloseTriangles(const Oriented& g, Rank a, uint64_t a1, uint64_t k,
                               OnTriangle& on_triangle) {
  const Rank b = g.ids[k];
  const uint64_t b0 = g.offset[b], nb = g.offset[b + 1] - b0;
  const int m_ab = std::popcount(g.dirs[k]);
  uint64_t n = 0;
  ForEachCommon(&g.ids[k + 1], a1 - k - 1, &g.ids[b0], nb, [&](size_t ic, size_t jc) {
    ++n;
    on_triangle(a, b, g.ids[b0 + jc], m_ab, std::popcount(g.dirs[k + 1 + ic]),
                std::popcount(g.dirs[b0 + jc]));
  });
  return n;
}

// Calls on_triangle(a, b, c, m_ab, m_ac, m_bc) once per triangle of ranks a < b < c, where m_xy
// is the number of directed edges between x and y (1 or 2; 2 on undirected stores), from
// several threads; returns the number of triangles. In memory: for each a, for each b ∈ N+(a),
// intersect N+(a) after b with N+(b). N+(a) was just read or is being read; b's offsets and
// list are random reads, which params hide (TriangleParams). `dirs`: on_triangle reads the
// direction bits (LCC), so b's are prefetched with its ranks.
template <typename OnTriangle>
uint64_t ForEachTriangle(const Oriented& g, const TriangleParams& params, bool dirs,
                         OnTriangle&& on_triangle) {
  std::atomic<uint64_t> total{0};
  const size_t group = std::max<size_t>(1, params.interleave);
  const bool pf = params.interleave_prefetch;
  auto fetch_list = [&](uint64_t b0) {
    coro::Prefetch(&g.ids[b0]);
    if (dirs) coro::Prefetch(&g.dirs[b0]);
  };
  // Blocks of ranks; the high ranks (hubs) have the shortest lists.
  const tbb::blocked_range<Rank> all(0, g.ranks(), 1024);
  tbb::parallel_for(all, [&](const tbb::blocked_range<Rank>& r) {
    uint64_t count = 0;
    if (group > 1) {
      // One coroutine per rank a of the block: each pair waits for b's offsets, then b's list.
      auto item = [&](Rank a) -> coro::Task<void> {
        const uint64_t a1 = g.offset[a + 1];
        for (uint64_t k = g.offset[a]; k < a1; ++k) {
          const Rank b = g.ids[k];
          if (pf) coro::Prefetch(&g.offset[b]);
          co_await coro::Suspend{};
          if (pf) fetch_list(g.offset[b]);
          co_await coro::Suspend{};
          count += CloseTriangles(g, a, a1, k, on_triangle);
        }
      };
      coro::Scheduler& sched = coro::PerThread<struct TriangleSite>(group, /*frame_bytes=*/256);
      (void)sched.Run(r.end() - r.begin(),
                      [&](size_t i) { return item(r.begin() + static_cast<Rank>(i)); });
      assert(sched.arena().fallbacks() == 0);
      total.fetch_add(count, std::memory_order_relaxed);
      return;
    }
    // The block's pairs are ids[offset[r.begin], offset[r.end]) in order: b's offsets are
    // fetched d pairs ahead, its list d/2 ahead (d = 0: no prefetch).
    const uint64_t d = params.prefetch_distance, h = d / 2;
    const uint64_t k_begin = g.offset[r.begin()], k_end = g.offset[r.end()];
    for (uint64_t k = k_begin; k < std::min(k_end, k_begin + d); ++k) {
      coro::Prefetch(&g.offset[g.ids[k]]);
    }
    for (Rank a = r.begin(); a < r.end(); ++a) {
      const uint64_t a1 = g.offset[a + 1];
      for (uint64_t k = g.offset[a]; k < a1; ++k) {
        if (d > 0) {
          if (k + d < k_end) coro::Prefetch(&g.offset[g.ids[k + d]]);
          if (h > 0 && k + h < k_end) fetch_list(g.offset[g.ids[k + h]]);
        }
        count += CloseTriangles(g, a, a1, k, on_triangle);
      }
    }
    total.fetch_add(count, std::memory_order_relaxed);
  });
  return total.load();
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
  // links[r] = Σ over triangles {v, x, y} of m_xy = |{(x, y) : x, y ∈ N(v), (x, y) ∈ E}| for
  // v of rank r, the numerator of LCC(v): each triangle credits its three corners (integer
  // atomics).
  std::vector<uint64_t> links(g.ranks(), 0);
  auto credit = [&](Rank a, Rank b, Rank c, int m_ab, int m_ac, int m_bc) {
    std::atomic_ref<uint64_t>(links[a]).fetch_add(m_bc, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(links[b]).fetch_add(m_ac, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(links[c]).fetch_add(m_ab, std::memory_order_relaxed);
  };
  ForEachTriangle(g, params, /*dirs=*/true, credit);
  const tbb::blocked_range<Rank> all(0, g.ranks(), 4096);
  tbb::parallel_for(all, [&](const tbb::blocked_range<Rank>& r) {
    for (Rank x = r.begin(); x < r.end(); ++x) {
      const VertexId v = g.vertex[x];
      const double d = static_cast<double>(g.degree[v]);
      if (g.degree[v] >= 2) (*lcc)[v] = static_cast<double>(links[x]) / (d * (d - 1));
    }
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
  *triangles = ForEachTriangle(g, params, /*dirs=*/false, [](Rank, Rank, Rank, int, int, int) {});
  return Finish(snap, s);
}

}  // namespace strata::analytics
