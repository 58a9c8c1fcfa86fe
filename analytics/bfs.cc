#include "analytics/bfs.h"

#include <algorithm>
#include <atomic>

#include <tbb/enumerable_thread_specific.h>

namespace strata::analytics {

namespace {

using Queue = std::vector<VertexId>;

// Top-down step. Invariant: every vertex of `frontier` has depth `level`. Each unvisited
// out-neighbor is claimed by exactly one task (CAS kUnreachable -> level + 1) and appended to
// *next. Returns in *scout the sum of the new frontier's out-degrees.
Status TopDownStep(const Snapshot& snap, const Layout& L, int64_t level, const Queue& frontier,
                   std::vector<int64_t>& depth, Queue* next, uint64_t* scout) {
  tbb::enumerable_thread_specific<Queue> local;
  std::atomic<uint64_t> scout_sum{0};
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, frontier.size(), 16),
                    [&](const tbb::blocked_range<size_t>& r) {
    Queue& q = local.local();
    uint64_t sc = 0;
    for (size_t i = r.begin(); i < r.end() && !err.failed(); ++i) {
      err.Set(ScanEach(snap, frontier[i], Direction::kOut, L, [&](VertexId v, double) {
        std::atomic_ref<int64_t> dv(depth[v]);
        int64_t cur = dv.load(std::memory_order_relaxed);
        if (cur == kUnreachable &&
            dv.compare_exchange_strong(cur, level + 1, std::memory_order_relaxed)) {
          q.push_back(v);
          sc += L.out_degree[v];
        }
        return true;
      }));
    }
    scout_sum.fetch_add(sc, std::memory_order_relaxed);
  });
  next->clear();
  for (Queue& q : local) next->insert(next->end(), q.begin(), q.end());
  *scout = scout_sum.load();
  return err.Get();
}

// Bottom-up step. Invariant: front[u] == 1 iff depth[u] == level. Every unvisited vertex scans
// its in-neighbors and stops at the first one in the frontier; only v's own task writes
// depth[v] and next[v]. Returns in *awake the size of the new frontier.
Status BottomUpStep(const Snapshot& snap, const Layout& L, int64_t level,
                    const std::vector<uint8_t>& front, std::vector<uint8_t>& next,
                    std::vector<int64_t>& depth, uint64_t* awake) {
  std::atomic<uint64_t> count{0};
  const Direction in = InDirection(L.kind);
  Status s = ForEachRange(L, [&](size_t, VertexRange r) -> Status {
    uint64_t c = 0;
    for (VertexId v = r.begin; v < r.end; ++v) {
      next[v] = 0;
      if (!L.exists[v] || depth[v] != kUnreachable) continue;
      Status st = ScanEach(snap, v, in, L, [&](VertexId u, double) {
        if (!front[u]) return true;
        depth[v] = level + 1;
        next[v] = 1;
        ++c;
        return false;
      });
      if (!st.ok()) return st;
    }
    count.fetch_add(c, std::memory_order_relaxed);
    return Status::OK();
  });
  *awake = count.load();
  return s;
}

void QueueToBitmap(const Queue& q, std::vector<uint8_t>* bits) {
  std::fill(bits->begin(), bits->end(), 0);
  for (VertexId v : q) (*bits)[v] = 1;
}

// The frontier in ascending vertex order (ranges are ascending and concatenated in order).
void BitmapToQueue(const Layout& L, const std::vector<uint8_t>& bits, Queue* q) {
  std::vector<Queue> parts(L.ranges.size());
  ForEachRange(L, [&](size_t i, VertexRange r) {
    for (VertexId v = r.begin; v < r.end; ++v) {
      if (bits[v]) parts[i].push_back(v);
    }
    return Status::OK();
  });
  q->clear();
  for (const Queue& p : parts) q->insert(q->end(), p.begin(), p.end());
}

}  // namespace

Status Bfs(const Snapshot& snap, const BfsParams& params, std::vector<int64_t>* depth) {
  Layout L;
  Status s = BuildLayout(snap, &L);
  if (!s.ok()) return s;
  depth->assign(L.bound, kUnreachable);
  const VertexId src = params.source;
  if (src >= L.bound || !L.exists[src]) return Status::InvalidArgument("BFS: source does not exist");
  (*depth)[src] = 0;

  const bool can_bottom_up = HasInEdges(L.kind);
  const uint64_t alpha = std::max(1, params.alpha), beta = std::max(1, params.beta);
  Queue frontier{src}, next;
  std::vector<uint8_t> front, back;
  uint64_t edges_to_check = L.num_out_edges;  // out-edges of still-unvisited vertices (estimate)
  uint64_t scout = L.out_degree[src];         // out-edges of the current frontier
  int64_t level = 0;                          // depth of the current frontier
  while (!frontier.empty() && s.ok()) {
    if (can_bottom_up && scout > edges_to_check / alpha) {
      front.resize(L.bound);
      back.resize(L.bound);
      QueueToBitmap(frontier, &front);
      uint64_t awake = frontier.size(), old_awake;
      do {
        old_awake = awake;
        s = BottomUpStep(snap, L, level, front, back, *depth, &awake);
        ++level;
        std::swap(front, back);
      } while (s.ok() && awake > 0 && (awake >= old_awake || awake > L.num_vertices / beta));
      BitmapToQueue(L, front, &frontier);
      scout = 1;
    } else {
      edges_to_check -= std::min(edges_to_check, scout);
      s = TopDownStep(snap, L, level, frontier, *depth, &next, &scout);
      ++level;
      std::swap(frontier, next);
    }
  }
  return Finish(snap, s);
}

}  // namespace strata::analytics
