#include "analytics/wcc.h"

#include <atomic>
#include <random>
#include <unordered_map>

namespace strata::analytics {

namespace {

// The parent forest. Invariants: parent[x] <= x; a root r has parent[r] == r; every tree holds
// vertices of one weak component; a root is only ever hooked (by CAS) under a smaller root, so
// the final root of a component is its smallest vertex.
class Forest {
 public:
  explicit Forest(VertexId n) : parent_(n) {
    for (VertexId v = 0; v < n; ++v) parent_[v] = v;
  }

  VertexId Load(VertexId x) const {
    return std::atomic_ref<VertexId>(const_cast<VertexId&>(parent_[x])).load(std::memory_order_relaxed);
  }

  // Root of x, halving the path on the way (a non-root only ever gets a closer ancestor).
  VertexId Find(VertexId x) {
    for (;;) {
      const VertexId p = Load(x);
      if (p == x) return x;
      const VertexId g = Load(p);
      if (g != p) std::atomic_ref<VertexId>(parent_[x]).store(g, std::memory_order_relaxed);
      x = p;
    }
  }

  // Puts u and v in one tree: hooks the larger root under the smaller one.
  void Link(VertexId u, VertexId v) {
    for (;;) {
      VertexId ru = Find(u), rv = Find(v);
      if (ru == rv) return;
      if (ru < rv) std::swap(ru, rv);  // ru is the larger root
      VertexId expected = ru;
      if (std::atomic_ref<VertexId>(parent_[ru])
              .compare_exchange_strong(expected, rv, std::memory_order_relaxed)) {
        return;
      }
    }
  }

  // After all links: parent[v] = root for every v.
  void Compress(const Layout& L) {
    ForEachRange(L, [&](size_t, VertexRange r) {
      for (VertexId v = r.begin; v < r.end; ++v) {
        std::atomic_ref<VertexId>(parent_[v]).store(Find(v), std::memory_order_relaxed);
      }
      return Status::OK();
    });
  }

  const std::vector<VertexId>& parent() const { return parent_; }

 private:
  std::vector<VertexId> parent_;
};

// The most frequent root among up to 1024 randomly sampled existing vertices.
VertexId SampleLargest(const Layout& L, const Forest& f) {
  std::mt19937_64 rng(0x5eed);
  std::unordered_map<VertexId, uint64_t> count;
  VertexId best = kNoLabel;
  uint64_t best_count = 0;
  for (int i = 0; i < 4096 && count.size() < 1024 && L.bound > 0; ++i) {
    const VertexId v = rng() % L.bound;
    if (!L.exists[v]) continue;
    const uint64_t c = ++count[f.parent()[v]];
    if (c > best_count) {
      best_count = c;
      best = f.parent()[v];
    }
  }
  return best;
}

}  // namespace

Status Wcc(const Snapshot& snap, const WccParams& params, std::vector<VertexId>* label) {
  Layout L;
  Status s = BuildLayout(snap, &L);
  if (!s.ok()) return s;
  Forest forest(L.bound);
  const int rounds = std::max(0, params.sampling_rounds);

  // Phase 1: link the r-th out-neighbor of every vertex, r < rounds.
  for (int r = 0; r < rounds && s.ok(); ++r) {
    s = ForEachVertex(L, [&](VertexId v) {
      int i = 0;
      return ScanEach(snap, v, Direction::kOut, L, [&](VertexId u, double) {
        if (i++ < r) return true;
        forest.Link(v, u);
        return false;
      });
    });
    forest.Compress(L);
  }
  // Phase 2: vertices already in the largest component skip their edges when every edge is
  // also seen from its other endpoint (undirected, or in-edges kept).
  const bool can_skip = HasInEdges(L.kind) && rounds > 0;
  const VertexId largest = can_skip ? SampleLargest(L, forest) : kNoLabel;
  const bool scan_in = L.kind == GraphKind::kDirectedWithInEdges;
  if (s.ok()) {
    // Streamed per range. Linking every out-edge again (including the sampled ones) is
    // harmless: Link is idempotent.
    s = ForEachRange(L, [&](size_t, VertexRange r) {
      Status st = ScanRangeEach(snap, r, Direction::kOut, L, [&](VertexId v, VertexId u, double) {
        if (!(can_skip && forest.Find(v) == largest)) forest.Link(v, u);
      });
      if (st.ok() && scan_in) {
        st = ScanRangeEach(snap, r, Direction::kIn, L, [&](VertexId v, VertexId u, double) {
          if (!(can_skip && forest.Find(v) == largest)) forest.Link(v, u);
        });
      }
      return st;
    });
  }
  forest.Compress(L);
  label->assign(L.bound, kNoLabel);
  ForEachVertex(L, [&](VertexId v) {
    (*label)[v] = forest.parent()[v];
    return Status::OK();
  });
  return Finish(snap, s);
}

}  // namespace strata::analytics
