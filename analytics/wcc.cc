#include "strata/analytics.h"

#include <atomic>
#include <cassert>
#include <memory>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analytics/bitmap.h"
#include "analytics/frontier.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "analytics/range_scan.h"
#include "util/coro.h"

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

  // Links every pair of e[0, n). group <= 1: the parents of the second endpoints, then theirs,
  // are prefetched first (those loads are random reads, and a batch keeps many of them in
  // flight), then the pairs are linked in order. group > 1: the pairs are linked `group` at a
  // time as coroutines (LinkInterleaved) on this thread's scheduler. Same forest either way up
  // to which roots hook when (the final roots, each component's smallest vertex, are equal).
  void LinkAll(const std::pair<VertexId, VertexId>* e, size_t n, size_t group, bool prefetch) {
    if (group <= 1) {
      for (size_t i = 0; i < n; ++i) __builtin_prefetch(&parent_[e[i].second]);
      for (size_t i = 0; i < n; ++i) __builtin_prefetch(&parent_[Load(e[i].second)]);
      for (size_t i = 0; i < n; ++i) Link(e[i].first, e[i].second);
      return;
    }
    coro::Scheduler& sched = coro::PerThread<struct WccLinkSite>(group, /*frame_bytes=*/256);
    (void)sched.Run(n, [&](size_t i) {
      return LinkInterleaved(e[i].first, e[i].second, prefetch);
    });
    assert(sched.arena().fallbacks() == 0);
  }

  // Link as a coroutine: the two levels of parents that LinkAll's sequential path prefetches
  // (each endpoint's parent, then its grandparent) are prefetched (when `prefetch`) with a
  // suspension after each level; the rest of the finds (after sampling, trees are shallow and
  // their roots hot) runs as Link, without suspending.
  coro::Task<void> LinkInterleaved(VertexId u, VertexId v, bool prefetch) {
    if (prefetch) {
      coro::Prefetch(&parent_[u]);
      coro::Prefetch(&parent_[v]);
    }
    co_await coro::Suspend{};
    if (prefetch) {
      coro::Prefetch(&parent_[Load(u)]);
      coro::Prefetch(&parent_[Load(v)]);
    }
    co_await coro::Suspend{};
    Link(u, v);
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
  const int rounds = std::max(0, params.sampling_rounds);
  // Vertices already in the largest component skip their edges in phase 2 when every edge is
  // also seen from its other endpoint (undirected, or in-edges kept). On kDirected nothing can
  // skip, so the sampling phase would be wasted work.
  const bool can_skip = HasInEdges(snap.kind()) && rounds > 0;
  const VertexId bound = snap.VertexIdBound();
  Forest forest(bound);
  std::atomic<bool> bad{false};

  // Phase 1: link the first `rounds` out-neighbors of every vertex (Afforest's sampling
  // rounds, all at once; linking order does not matter for the result). When can_skip every
  // neighbor exists (no dangling edges on those kinds). With a list cache this is fused with
  // the layout's pass, which decodes every list to fill it; without one the layout reads
  // degrees only and phase 1 decodes the start of each list (ScanAdjacency, no weights).
  const bool keep = params.cache_bytes > 0;
  ListCache cache(snap, Direction::kOut, params.cache_bytes);
  // Hands the sampled edges (u, dst[i]), i < n, to link(u, v); false (and `bad` set) at an ID
  // beyond the bound.
  auto sample = [&](VertexId u, const VertexId* dst, size_t n, auto&& link) {
    for (size_t i = 0; i < n; ++i) {
      if (u >= bound || dst[i] >= bound) {
        bad.store(true, std::memory_order_relaxed);
        return false;
      }
      link(u, dst[i]);
    }
    return true;
  };
  Layout L;
  Bitmap has_out;  // without a cache: v has an out-entry (phase 1)
  Status s = keep ? BuildLayout(snap, &L, [&](VertexId u, const NeighborChunk& c, uint64_t offset) {
    cache.Collect(u, c);
    if (!can_skip || offset >= static_cast<uint64_t>(rounds)) return;
    sample(u, c.dst, std::min<size_t>(c.size, static_cast<size_t>(rounds - offset)),
           [&](VertexId a, VertexId b) { forest.Link(a, b); });
  }) : EstimateLayout(snap, &L);
  if (!s.ok()) return s;
  if (L.bound != bound) return Status::Corruption("analytics: VertexIdBound() changed");
  if (keep) {
    s = cache.Complete(snap, L);
    if (!s.ok()) return s;
  } else if (can_skip) {
    // Which vertices have an out-entry, noted as phase 1 reads the start of every list: exact
    // where the layout's degrees are bounds (a view's are its base's), so phase 2 does not look
    // up the lists of vertices without edges. Ranges start at multiples of 64: a task writes
    // only its own words.
    has_out.Resize(bound);
    s = ForEachRange(L, [&](size_t, VertexRange r) {
      constexpr size_t kLinkBatch = 256;
      std::vector<std::pair<VertexId, VertexId>> edges;  // sampled, not yet linked
      edges.reserve(kLinkBatch);
      Status st = snap.ScanAdjacency(r.begin, r.end, Direction::kOut, /*weights=*/false,
                                     [&](VertexId u) { return L.exists[u] != 0; },
                                     [&](VertexId u, const NeighborChunk& c) {
        if (c.size == 0) return ScanStep::kMore;
        if (u < bound) has_out.Set(u);
        if (!sample(u, c.dst, std::min<size_t>(c.size, static_cast<size_t>(rounds)),
                    [&](VertexId a, VertexId b) { edges.emplace_back(a, b); })) {
          return ScanStep::kStop;
        }
        if (edges.size() + static_cast<size_t>(rounds) > kLinkBatch) {
          forest.LinkAll(edges.data(), edges.size(), params.interleave, params.interleave_prefetch);
          edges.clear();
        }
        return ScanStep::kNextVertex;
      });
      forest.LinkAll(edges.data(), edges.size(), params.interleave, params.interleave_prefetch);
      return st;
    });
    if (!s.ok()) return s;
  }
  if (bad.load()) return Status::Corruption("analytics: neighbor ID beyond VertexIdBound()");
  if (can_skip) forest.Compress(L);

  // Phase 2: link every edge of the vertices outside the largest component. Linking the
  // sampled edges again is harmless: Link is idempotent.
  const VertexId largest = can_skip ? SampleLargest(L, forest) : kNoLabel;
  const bool scan_in = L.kind == GraphKind::kDirectedWithInEdges;
  // When the largest component holds nearly all the edges (the usual case), reading only the
  // other vertices' lists (batched lookups) beats streaming every list (kLookupCostEdges).
  std::vector<VertexId> rest;
  bool batched = false;
  if (can_skip) {
    uint64_t rest_cost = 0;
    for (VertexId v = 0; v < L.bound; ++v) {
      if (!L.exists[v] || forest.parent()[v] == largest) continue;
      // No edges (undirected: no out-entry). The layout's degrees are exact with a cache;
      // without one phase 1 saw every list's start.
      if (L.kind == GraphKind::kUndirected &&
          (keep ? L.out_degree[v] == 0 : !has_out.Get(v))) {
        continue;
      }
      rest.push_back(v);
      rest_cost += L.out_degree[v] + kLookupCostEdges;
    }
    batched = rest_cost < L.num_out_edges;
  }
  if (batched) {
    auto make = [&] {
      return [&](VertexId v, VertexId u) {
        forest.Link(v, u);
        return true;
      };
    };
    s = ForEachFrontierNeighbor(snap, rest.data(), rest.size(), Direction::kOut, L,
                                kDefaultFetchBatch, make, &cache);
    if (s.ok() && scan_in) {
      s = ForEachFrontierNeighbor(snap, rest.data(), rest.size(), Direction::kIn, L,
                                  kDefaultFetchBatch, make);
    }
  } else {
    // Streamed per range: out-lists from the cache where kept; otherwise only the lists of
    // vertices outside the largest component are decoded (ScanAdjacency, no weights).
    auto outside = [&](VertexId v) { return !(can_skip && forest.Find(v) == largest); };
    auto link = [&](VertexId v, const auto* dst, size_t n) {
      for (size_t i = 0; i < n; ++i) forest.Link(v, dst[i]);
    };
    auto stream = [&](VertexRange r, Direction d) {
      return ScanRangeSteps(snap, r, d, L, /*weights=*/false, outside,
                            [&](VertexId v, const VertexId* dst, const double*, size_t n) {
                              link(v, dst, n);
                              return ScanStep::kMore;
                            });
    };
    s = ForEachRange(L, [&](size_t, VertexRange r) {
      Status st = keep ? cache.Pass(snap, L, r,
                                    [&](VertexId v, const auto* dst, size_t n) {
                                      if (outside(v)) link(v, dst, n);
                                    })
                       : stream(r, Direction::kOut);
      if (st.ok() && scan_in) st = stream(r, Direction::kIn);
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
