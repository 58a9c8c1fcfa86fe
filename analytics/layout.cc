#include "analytics/layout.h"

#include <algorithm>
#include <atomic>

#include <tbb/task_arena.h>

#include "analytics/range_scan.h"

namespace strata::analytics {

namespace {
constexpr VertexId kGroup = 64;    // ranges are cut at subgraph (64-vertex) boundaries
constexpr VertexId kBlock = kLayoutBlock;  // vertices per ScanVertices call (layout)
}  // namespace

Status BuildLayout(const Snapshot& snap, Layout* layout) {
  return BuildLayout(snap, layout, [](VertexId, const NeighborChunk&, uint64_t) {});
}

namespace {

// The layout's block pass: fill(lo, hi, deg) sets exists[] of the block's vertices and
// deg[u - lo] to each one's out-degree (an error if it reports a vertex outside [lo, hi));
// deg is the block's part of out_degree, or, without keep_degrees, a buffer of the block's
// own (out_degree is then left empty). (*block_done)(b), when given, after block b's fill
// succeeded, by the thread that filled it (blocks then taken in order).
Status LayoutPass(const Snapshot& snap, Layout* layout,
                  FunctionRef<Status(VertexId lo, VertexId hi, uint64_t* deg)> fill,
                  FunctionRef<void(size_t block)>* block_done = nullptr,
                  bool keep_degrees = true);

// exists[] of [lo, hi) from ScanVertices.
Status FillExists(const Snapshot& snap, Layout* layout, VertexId lo, VertexId hi) {
  bool out_of_block = false;
  Status s = snap.ScanVertices(lo, hi, [&](VertexId v) {
    if (v < lo || v >= hi) {
      out_of_block = true;
      return false;
    }
    layout->exists[v] = 1;
    return true;
  });
  if (s.ok() && out_of_block) s = Status::Corruption("analytics: ScanVertices left its range");
  return s;
}

}  // namespace

// The out-lists of block [lo, hi)'s existing vertices in one streamed pass (not a lookup per
// vertex): visit(u, chunk, offset), offset = u's neighbors before the chunk, counted in deg.
Status VisitBlock(const Snapshot& snap, const UninitVector<uint8_t>& exists, VertexId lo,
                  VertexId hi, bool weights, uint64_t* deg,
                  FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit) {
  bool out_of_block = false;
  Status s = snap.ScanAdjacency(lo, hi, Direction::kOut, weights,
                                [&](VertexId u) { return u < lo || u >= hi || exists[u]; },
                                [&](VertexId u, const NeighborChunk& c) {
    if (u < lo || u >= hi) {
      out_of_block = true;
      return ScanStep::kStop;
    }
    visit(u, c, deg[u - lo]);
    deg[u - lo] += c.size;
    return ScanStep::kMore;
  });
  if (s.ok() && out_of_block) s = Status::Corruption("analytics: ScanAdjacency left its range");
  return s;
}

Status BuildLayout(const Snapshot& snap, Layout* layout,
                   FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                   bool weights, FunctionRef<void(size_t block)>* block_done,
                   bool keep_degrees) {
  Layout& L = *layout;
  L.exact_degrees = true;
  return LayoutPass(
      snap, layout,
      [&](VertexId lo, VertexId hi, uint64_t* deg) {
        Status s = FillExists(snap, layout, lo, hi);
        if (!s.ok()) return s;
        return VisitBlock(snap, L.exists, lo, hi, weights, deg, visit);
      },
      block_done, keep_degrees);
}

Status VisitOutLists(const Snapshot& snap, const Layout& L,
                     FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                     bool weights) {
  const size_t blocks = static_cast<size_t>((L.bound + kBlock - 1) / kBlock);
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks), [&](const tbb::blocked_range<size_t>& r) {
    std::vector<uint64_t> deg(kBlock);
    for (size_t b = r.begin(); b < r.end() && !err.failed(); ++b) {
      const VertexId lo = b * kBlock, hi = std::min<VertexId>(L.bound, lo + kBlock);
      std::fill(deg.begin(), deg.end(), 0);
      err.Set(VisitBlock(snap, L.exists, lo, hi, weights, deg.data(), visit));
    }
  });
  return err.Get();
}

Status EstimateLayout(const Snapshot& snap, Layout* layout) {
  Layout& L = *layout;
  L.exact_degrees = false;
  return LayoutPass(snap, layout, [&](VertexId lo, VertexId hi, uint64_t* deg) {
    // Vertices and degree bounds in one pass over the vertex tables.
    bool out_of_block = false;
    Status s = snap.ScanVertexDegreeBounds(lo, hi, Direction::kOut, [&](VertexId u, uint64_t d) {
      if (u < lo || u >= hi) {
        out_of_block = true;
        return false;
      }
      L.exists[u] = 1;
      deg[u - lo] = d;
      return true;
    });
    if (s.ok() && out_of_block) {
      s = Status::Corruption("analytics: ScanVertexDegreeBounds left its range");
    }
    return s;
  });
}

namespace {

Status LayoutPass(const Snapshot& snap, Layout* layout,
                  FunctionRef<Status(VertexId lo, VertexId hi, uint64_t* deg)> fill,
                  FunctionRef<void(size_t block)>* block_done, bool keep_degrees) {
  Layout& L = *layout;
  // Every kernel starts here: return what the kernel arena kept past its decay time (a no-op
  // when jemalloc's background threads already did).
  KernelReleaseExpired();
  L.kind = snap.kind();
  L.dangling = L.kind == GraphKind::kDirected;
  const VertexId bound = snap.VertexIdBound();
  L.bound = bound;
  // Sized without zeroing: each block zeroes its own part below, in parallel.
  L.exists.resize(bound);
  if (keep_degrees) {
    L.out_degree.resize(bound);
  } else {
    L.out_degree = UninitVector<uint64_t>();
  }
  L.ranges.clear();
  const size_t groups = static_cast<size_t>((bound + kGroup - 1) / kGroup);
  const size_t blocks = static_cast<size_t>((bound + kBlock - 1) / kBlock);
  std::vector<uint64_t> work(groups, 0);   // per group: sum of (out-degree + 1) + 1
  std::vector<uint64_t> edges(groups, 0);  // per group: sum of out-degrees
  std::vector<uint64_t> block_vertices(blocks, 0), block_edges(blocks, 0);

  FirstError err;
  auto run = [&](size_t b) {
    const VertexId lo = b * kBlock, hi = std::min<VertexId>(bound, lo + kBlock);
    uint64_t nv = 0, ne = 0;
    std::vector<uint64_t> own;  // the block's degrees when out_degree is not kept
    if (!keep_degrees) own.resize(static_cast<size_t>(hi - lo));
    uint64_t* const deg = keep_degrees ? L.out_degree.data() + lo : own.data();
    std::fill(L.exists.data() + lo, L.exists.data() + hi, 0);
    std::fill(deg, deg + (hi - lo), 0);
    err.Set(fill(lo, hi, deg));
    for (VertexId g = lo / kGroup; g * kGroup < hi; ++g) {
      uint64_t n = 0, e = 0;  // the degree is 0 where a vertex does not exist
      for (VertexId v = g * kGroup; v < std::min<VertexId>(bound, (g + 1) * kGroup); ++v) {
        n += L.exists[v];
        e += deg[v - lo];
      }
      work[g] = 1 + e + n;
      edges[g] = e;
      nv += n;
      ne += e;
    }
    block_vertices[b] = nv;
    block_edges[b] = ne;
  };
  if (block_done != nullptr) {
    // Blocks in ascending order, each taken by the next free thread, so the finished ones
    // are nearly a prefix (what the caller's release of a prefix needs).
    std::atomic<size_t> next{0};
    const size_t workers = std::max<size_t>(
        1, std::min<size_t>(blocks, static_cast<size_t>(tbb::this_task_arena::max_concurrency())));
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, workers, 1),
        [&](const tbb::blocked_range<size_t>&) {
          while (!err.failed()) {
            const size_t b = next.fetch_add(1, std::memory_order_relaxed);
            if (b >= blocks) break;
            run(b);
            if (!err.failed()) (*block_done)(b);
          }
        },
        tbb::simple_partitioner());
  } else {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks),
                      [&](const tbb::blocked_range<size_t>& r) {
      for (size_t b = r.begin(); b < r.end() && !err.failed(); ++b) run(b);
    });
  }
  if (err.failed()) return err.Get();

  L.num_vertices = 0;
  L.num_out_edges = 0;
  for (size_t b = 0; b < blocks; ++b) {
    L.num_vertices += block_vertices[b];
    L.num_out_edges += block_edges[b];
  }
  // Cut [0, bound) greedily into about `parts` ranges of equal work, at group boundaries.
  uint64_t total = 0;
  for (uint64_t w : work) total += w;
  const size_t parts =
      std::max<size_t>(1, std::min<size_t>(groups, 32 * static_cast<size_t>(tbb::this_task_arena::max_concurrency())));
  const uint64_t target = std::max<uint64_t>(1, (total + parts - 1) / parts);
  VertexId begin = 0;
  uint64_t acc = 0, range_edges = 0;
  L.range_edges.clear();
  for (size_t g = 0; g < groups; ++g) {
    acc += work[g];
    range_edges += edges[g];
    if (acc >= target) {
      const VertexId end = std::min<VertexId>(bound, (g + 1) * kGroup);
      L.ranges.push_back({begin, end});
      L.range_edges.push_back(range_edges);
      begin = end;
      acc = 0;
      range_edges = 0;
    }
  }
  if (begin < bound) {
    L.ranges.push_back({begin, bound});
    L.range_edges.push_back(range_edges);
  }
  return Status::OK();
}

}  // namespace

}  // namespace strata::analytics
