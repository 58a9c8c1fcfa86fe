#include "strata/analytics.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include <tbb/enumerable_thread_specific.h>

#include "analytics/frontier.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "analytics/range_scan.h"
#include "util/coro.h"

namespace strata::analytics {

namespace {

// Bin index of a distance. Monotone in x, and the same function decides where a vertex is
// queued and whether a queued entry is stale, so rounding cannot drop a live entry. Capped:
// distances past the cap share the last bin, which stays correct (label-correcting) if slower.
constexpr size_t kMaxBins = size_t{1} << 20;
size_t BinOf(double x, double delta) {
  const double b = x / delta;
  return b >= static_cast<double>(kMaxBins - 1) ? kMaxBins - 1 : static_cast<size_t>(b);
}

// Up to 4096 weights (the finite, non-negative ones) of the out-edges of up to 256 existing
// vertices spread over the ID space, into *out; empty for unweighted stores.
Status SampleWeights(const Snapshot& snap, const Layout& L, std::vector<double>* out) {
  out->clear();
  if (!snap.weighted()) return Status::OK();
  const VertexId step = std::max<VertexId>(1, L.bound / 256);
  for (VertexId v = 0; v < L.bound && out->size() < 4096; v += step) {
    if (!L.exists[v]) continue;
    Status s = ScanEach(snap, v, Direction::kOut, L, [&](VertexId, double w) {
      if (w >= 0 && std::isfinite(w)) out->push_back(w);
      return out->size() < 4096;
    });
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// Auto bucket width: the sample's mean weight divided by the mean out-degree (of the degree
// bounds: above the true mean on a store whose lists span several runs), the Θ(1/degree)
// width of Meyer and Sanders for random weights. A wider bucket relaxes the same edges again and
// again as distances within one bucket improve; a narrower one only adds empty buckets, which
// cost a scan of the bin vectors each. Unweighted stores use 1.0: every relaxation then lands
// in the next bucket, never the current one (every edge is heavy).
double AutoDelta(const Snapshot& snap, const Layout& L, const std::vector<double>& sample) {
  if (!snap.weighted()) return 1.0;
  double sum = 0;
  for (double w : sample) sum += w;
  const double mean = sample.empty() ? 1.0 : sum / static_cast<double>(sample.size());
  const double degree = L.num_vertices ? static_cast<double>(L.num_out_edges) / static_cast<double>(L.num_vertices) : 1.0;
  const double delta = mean / std::max(1.0, degree);
  return delta > 0 && std::isfinite(delta) ? delta : 1.0;
}

// The light edges (weight < delta) of every vertex, collected in the kernel's one pass over the lists, for the
// inner phases of a bucket (Meyer and Sanders' light/heavy split): a bucket's vertices relax
// their light edges from here, again each time their distance improves within the bucket, and
// read their whole lists once, when the bucket is empty, for the heavy edges (w >= delta: from
// du >= the bucket's start they land in a later bucket, but for rounding and the capped last
// bin, where an improved vertex is queued again like any other). Per 4096-vertex block a
// vector of (vertex in block, v, w), vertices ascending (one thread collects a block, in
// order): 16 bytes an edge, so only for bounds that fit 32 bits. Each block reserves its
// expected share of the budget up front (its degree bounds times the sampled light share, with
// a margin), so growth slack does not decide which blocks fit; a block that outgrows what is
// left of max_bytes (or holds a neighbor >= the bound) is dropped, and its vertices relax
// every edge from their lists in each phase instead (Kept false).
class LightEdges {
 public:
  // share: the expected fraction of light edges; est: degree bounds of the same snapshot.
  LightEdges(const Layout& est, double delta, double share, size_t max_bytes)
      : bound_(est.bound), delta_(delta), max_bytes_(max_bytes),
        blocks_(static_cast<size_t>((est.bound + kLayoutBlock - 1) / kLayoutBlock)) {
    if (max_bytes == 0) return;
    for (size_t bi = 0; bi < blocks_.size(); ++bi) {
      const VertexId lo = bi * kLayoutBlock, hi = std::min<VertexId>(bound_, lo + kLayoutBlock);
      uint64_t edges = 0;
      for (VertexId v = lo; v < hi; ++v) edges += est.out_degree[v];
      blocks_[bi].reserve = static_cast<size_t>(kMargin * share * static_cast<double>(edges)) + 16;
    }
  }

  // Whether this store can hold the bound's IDs (else nothing is kept).
  static bool Fits(VertexId bound) { return bound <= (VertexId{1} << 32); }
  // Reservations over expectation.
  static constexpr double kMargin = 1.5;

  void Collect(VertexId u, const NeighborChunk& c) {
    Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    if (c.size == 0 || b.dropped) return;
    if (c.dst[c.size - 1] >= bound_) {  // damaged: the store's reads will report it
      Drop(b);
      return;
    }
    const size_t before = b.e.capacity();
    if (before == 0) b.e.reserve(b.reserve);
    const uint32_t j = static_cast<uint32_t>(u % kLayoutBlock);
    for (size_t i = 0; i < c.size; ++i) {
      // NaN and negative weights are heavy or light as `<` says; either way they are relaxed
      // (and rejected) like every other weight.
      const double w = c.weight != nullptr ? c.weight[i] : 1.0;  // unweighted: 1.0 each
      if (w < delta_) b.e.push_back({j, static_cast<uint32_t>(c.dst[i]), w});
    }
    const size_t grown = (b.e.capacity() - before) * sizeof(Edge);
    if (grown && used_.fetch_add(grown, std::memory_order_relaxed) + grown > max_bytes_) Drop(b);
  }

  // After the pass: per kept block with light edges, where each vertex's edges start (4 bytes
  // per vertex of the block, outside max_bytes), so a vertex finds them with one load instead
  // of a binary search over the block (whose probes were misses).
  void Index() {
    tbb::parallel_for(size_t{0}, blocks_.size(), [&](size_t bi) {
      Block& b = blocks_[bi];
      if (b.dropped || b.e.empty()) return;
      b.off.assign(kLayoutBlock + 1, 0);
      for (const Edge& x : b.e) ++b.off[x.j + 1];
      for (size_t j = 0; j < kLayoutBlock; ++j) b.off[j + 1] += b.off[j];
    });
  }

  // Whether u's light edges are here (after the pass).
  bool Kept(VertexId u) const { return !blocks_[static_cast<size_t>(u / kLayoutBlock)].dropped; }

  struct Edge {
    uint32_t j;  // u - the block's first vertex
    uint32_t v;
    double w;
  };
  // Where u's light edges' offsets are (a prefetch address; u must be Kept, after Index).
  const void* Head(VertexId u) const {
    const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    return b.off.empty() ? nullptr : b.off.data() + u % kLayoutBlock;
  }
  // u's light edges, v ascending (u must be Kept, after Index): *n of them from the result.
  const Edge* List(VertexId u, size_t* n) const {
    const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    if (b.off.empty()) {
      *n = 0;
      return nullptr;
    }
    const size_t j = static_cast<size_t>(u % kLayoutBlock);
    *n = b.off[j + 1] - b.off[j];
    return b.e.data() + b.off[j];
  }

 private:
  struct Block {
    std::vector<Edge> e;
    std::vector<uint32_t> off;  // Index: vertex j's edges are e[off[j], off[j + 1])
    size_t reserve = 0;  // entries reserved at the block's first light edge
    bool dropped = false;
  };
  void Drop(Block& b) {
    used_.fetch_sub(b.e.capacity() * sizeof(Edge), std::memory_order_relaxed);
    b.e = {};
    b.dropped = true;
  }
  VertexId bound_;
  double delta_;
  size_t max_bytes_;
  std::atomic<size_t> used_{0};
  std::vector<Block> blocks_;
};

// The expected fraction of light edges: the sample's share below delta (unweighted stores:
// every edge weighs 1.0).
double LightShare(const Snapshot& snap, const std::vector<double>& sample, double delta) {
  if (!snap.weighted()) return 1.0 < delta ? 1.0 : 0.0;
  if (sample.empty()) return 0.0;
  size_t light = 0;
  for (double w : sample) light += w < delta;
  return static_cast<double>(light) / static_cast<double>(sample.size());
}

// Budget of the light edges: the blocks' reservations (kMargin times the expected light edges,
// 16 bytes each) plus 1 MiB, at most half the cache. Nothing — no split — without a cache,
// when no edge is expected to be light (every bucket then runs once per vertex anyway), or
// when the bound does not fit 32 bits.
size_t LightBudget(double share, const Layout& est, size_t cache_bytes) {
  if (cache_bytes == 0 || share == 0 || !LightEdges::Fits(est.bound)) return 0;
  const double want = LightEdges::kMargin * share * static_cast<double>(est.num_out_edges) * 16.0 +
                      static_cast<double>(est.bound / kLayoutBlock + 1) * 16.0 * 16.0 + double(1 << 20);
  return static_cast<size_t>(std::min(want, static_cast<double>(cache_bytes / 2)));
}

enum class Edges { kAll, kHeavy };

}  // namespace

Status Sssp(const Snapshot& snap, const SsspParams& params, std::vector<double>* dist_out) {
  // A first look at the vertex tables (degree bounds) and a sample of weights decide the
  // bucket width and how the cache is split. Each list is read about once per run, so the list
  // cache keeps the shortest lists (ListCache::LimitDegree): a kept list saves a lookup, and the
  // short ones are most of the lookups for a fraction of the bytes.
  Layout est;
  Status s = EstimateLayout(snap, &est);
  if (!s.ok()) return s;
  std::vector<double> sample;
  s = SampleWeights(snap, est, &sample);
  if (!s.ok()) return s;
  const double delta = params.delta > 0 ? params.delta : AutoDelta(snap, est, sample);
  const double share = LightShare(snap, sample, delta);
  // Resolved before it is split: kAutoCacheBytes less the light edges' share would read as a
  // budget of nearly 2^64 bytes.
  const size_t cache_bytes = ResolveCacheBytes(params.cache_bytes);
  const size_t light_budget = LightBudget(share, est, cache_bytes);
  LightEdges light(est, delta, share, light_budget);
  ListCache cache(snap, Direction::kOut, cache_bytes - light_budget, /*keep_weights=*/true);
  if (cache_bytes != 0) cache.LimitDegree(est);
  // The estimate is the layout (degrees only steer the cost model); one pass over the lists
  // fills the cache and the light store.
  const Layout& L = est;
  if (cache_bytes != 0) {
    s = VisitOutLists(snap, L, [&](VertexId u, const NeighborChunk& c, uint64_t) {
      cache.Collect(u, c);
      if (light_budget != 0) light.Collect(u, c);
    }, /*weights=*/true);
    if (!s.ok()) return s;
  }
  s = cache.Complete(snap, L);
  if (!s.ok()) return s;
  // Light/heavy split when the light edges have a store; without one each phase relaxes every
  // edge of its vertices (as do the vertices of blocks the store dropped), as reading every
  // list twice per bucket would cost more than it saves.
  const bool split = light_budget != 0;
  if (split) light.Index();
  std::vector<double>& dist = *dist_out;
  dist.assign(L.bound, kInfinity);
  const VertexId src = params.source;
  if (src >= L.bound || !L.exists[src]) return Status::InvalidArgument("SSSP: source does not exist");
  dist[src] = 0;

  // Invariant: every vertex whose distance improved is queued in the bin of its new distance
  // (in some thread's local bins) until processed; bins below `bin` are empty everywhere. With
  // the split, every vertex taken from bin `bin` whose light edges are kept is in `settled`
  // until the bin is empty, and then relaxes its heavy edges from its distance then (final
  // unless a later improvement queues it again).
  using Bins = std::vector<std::vector<VertexId>>;
  tbb::enumerable_thread_specific<Bins> local_bins;
  std::vector<VertexId> frontier{src};
  std::vector<VertexId> settled;
  std::vector<VertexId> unkept;  // split: a phase's vertices without light edges in memory
  Bitmap marks;  // SortUniqueFrontier's
  marks.Resize(L.bound);
  size_t bin = 0;
  FirstError err;
  std::atomic<bool> bad_weight{false};
  // Relaxes u's edges to dst[0, n) (weights w, or 1.0 each) of kind `which`, u's distance du;
  // false on a bad weight (stops the list). The loads of dist[v] are the kernel's cache misses
  // (8 bytes per vertex, read in neighbor order), and the branch on each comparison lets few
  // overlap: with pd > 0 the first pd are prefetched before the loop and each iteration
  // prefetches the one pd entries ahead (before, only ahead of the 16th: a list of at most 16,
  // most lists of a Kronecker graph, had none). `filter`: skip edges into deleted vertices
  // (kDirected lists keep them). dst is `const VertexId*` or `const uint32_t*` (kept lists).
  const size_t pd = params.prefetch_distance;
  auto relax = [&](Bins& bins, double du, const auto* dst, const double* w, size_t n,
                   bool filter, Edges which, size_t pd) {
    for (size_t e = 0; e < std::min(pd, n); ++e) coro::Prefetch(&dist[dst[e]]);
    for (size_t e = 0; e < n; ++e) {
      if (pd != 0 && e + pd < n) coro::Prefetch(&dist[dst[e + pd]]);
      const VertexId v = dst[e];
      if (filter && !L.exists[v]) continue;
      const double we = w ? w[e] : 1.0;
      if (!(we >= 0)) {
        bad_weight.store(true, std::memory_order_relaxed);
        return false;
      }
      if (which == Edges::kHeavy && we < delta) continue;  // relaxed in the bucket's phases
      const double nd = du + we;
      std::atomic_ref<double> dv(dist[v]);
      double cur = dv.load(std::memory_order_relaxed);
      while (nd < cur) {
        if (dv.compare_exchange_weak(cur, nd, std::memory_order_relaxed)) {
          const size_t b = BinOf(nd, delta);
          if (bins.size() <= b) bins.resize(b + 1);
          bins[b].push_back(v);
          break;
        }
      }
    }
    return true;
  };
  // Lists held in memory (the light edges, kept lists of the cache) are relaxed per vertex, a
  // chain of dependent misses: the list's offsets, the list, then its neighbors' dist. With
  // interleave > 1 each vertex is a coroutine (util/coro.h) that prefetches the next link of
  // its chain and suspends, so a thread has `interleave` chains in flight (GastCoCo); the
  // relaxations themselves are the same calls as the sequential path's, in pieces of kPiece
  // neighbors whose dist entries were prefetched. interleave <= 1 (and prefetch_distance > 0):
  // one vertex after another in a software pipeline of the same chain: the offsets of the
  // vertex 3 * kStage places ahead are prefetched, the list of the one 2 * kStage ahead, the
  // first dist entries of the one kStage ahead.
  const size_t group = std::max<size_t>(1, params.interleave);
  constexpr size_t kPiece = 16;
  constexpr size_t kStage = 4;
  tbb::enumerable_thread_specific<std::unique_ptr<coro::Scheduler>> schedulers;
  auto scheduler = [&]() -> coro::Scheduler& {
    std::unique_ptr<coro::Scheduler>& sc = schedulers.local();
    if (sc == nullptr) sc = std::make_unique<coro::Scheduler>(group, /*frame_bytes=*/512);
    return *sc;
  };
  // A neighbor >= the bound in a kept list (the cache drops blocks that hold one; checked
  // again here as the snapshot's chunks are).
  std::atomic<bool> beyond{false};
  // The light edges of vertex u (Kept) from its distance now.
  auto light_sequential = [&](Bins& bins, VertexId u) {
    const double du = std::atomic_ref<double>(dist[u]).load(std::memory_order_relaxed);
    size_t n;
    const LightEdges::Edge* e = light.List(u, &n);
    if (pd != 0 && n != 0) {
      for (size_t k = 0; k < std::min(pd, n); ++k) coro::Prefetch(&dist[e[k].v]);
    }
    for (size_t k = 0; k < n; ++k) {
      if (pd != 0 && k + pd < n) coro::Prefetch(&dist[e[k + pd].v]);
      const VertexId v = e[k].v;
      relax(bins, du, &v, &e[k].w, 1, L.dangling, Edges::kAll, 0);
    }
  };
  auto light_task = [&](Bins& bins, VertexId u) -> coro::Task<void> {
    if (!light.Kept(u)) co_return;
    coro::Prefetch(&dist[u]);
    co_await coro::PrefetchAndSuspend(light.Head(u));
    size_t n;
    const LightEdges::Edge* e = light.List(u, &n);
    if (n == 0) co_return;
    co_await coro::PrefetchAndSuspend(e);
    const double du = std::atomic_ref<double>(dist[u]).load(std::memory_order_relaxed);
    for (size_t k = 0; k < n; k += kPiece) {
      const size_t m = std::min(kPiece, n - k);
      for (size_t x = 0; x < m; ++x) coro::Prefetch(&dist[e[k + x].v]);
      co_await coro::Suspend{};
      for (size_t x = 0; x < m; ++x) {
        const VertexId v = e[k + x].v;
        relax(bins, du, &v, &e[k + x].w, 1, L.dangling, Edges::kAll, 0);
      }
    }
  };
  // The light edges of vs[0, n) (those Kept), relaxed from memory: one phase of a bucket.
  auto relax_light = [&](const std::vector<VertexId>& vs) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, vs.size(), 256),
                      [&](const tbb::blocked_range<size_t>& r) {
      Bins& bins = local_bins.local();
      if (group > 1) {
        coro::Scheduler& sc = scheduler();
        (void)sc.Run(r.size(), [&](size_t i) { return light_task(bins, vs[r.begin() + i]); });
        assert(sc.arena().fallbacks() == 0);
        return;
      }
      for (size_t i = r.begin(); i < r.end(); ++i) {
        if (pd != 0) {  // the pipeline: offsets and dist[u] 3 stages ahead, list 2, dist 1
          if (i + 3 * kStage < r.end() && light.Kept(vs[i + 3 * kStage])) {
            coro::Prefetch(light.Head(vs[i + 3 * kStage]));
            coro::Prefetch(&dist[vs[i + 3 * kStage]]);
          }
          if (i + 2 * kStage < r.end() && light.Kept(vs[i + 2 * kStage])) {
            size_t n;
            coro::Prefetch(light.List(vs[i + 2 * kStage], &n));
          }
          if (i + kStage < r.end() && light.Kept(vs[i + kStage])) {
            size_t n;
            const LightEdges::Edge* e = light.List(vs[i + kStage], &n);
            for (size_t k = 0; k < std::min(n, pd); ++k) coro::Prefetch(&dist[e[k].v]);
          }
        }
        const VertexId u = vs[i];
        if (light.Kept(u)) light_sequential(bins, u);
      }
    });
  };
  // The `which` edges of the vertices vs[idx[k]] whose lists the cache keeps, from du[idx[k]].
  auto kept_task = [&](Bins& bins, VertexId u, double du, Edges which) -> coro::Task<void> {
    co_await coro::PrefetchAndSuspend(cache.Head(u));
    ListCache::Span sp;
    cache.List(u, &sp);
    if (sp.n == 0) co_return;
    if (sp.w != nullptr) coro::Prefetch(sp.w);
    const bool narrow = sp.ids32 != nullptr;
    co_await coro::PrefetchAndSuspend(narrow ? static_cast<const void*>(sp.ids32) : sp.ids64);
    if ((narrow ? sp.ids32[sp.n - 1] : sp.ids64[sp.n - 1]) >= L.bound) {
      beyond.store(true, std::memory_order_relaxed);
      co_return;
    }
    // In pieces: prefetch a piece's dist entries, suspend, relax it (false: a bad weight).
    for (size_t k = 0; k < sp.n; k += kPiece) {
      const size_t m = std::min(kPiece, sp.n - k);
      for (size_t e = 0; e < m; ++e) {
        coro::Prefetch(&dist[narrow ? VertexId{sp.ids32[k + e]} : sp.ids64[k + e]]);
      }
      co_await coro::Suspend{};
      const double* w = sp.w != nullptr ? sp.w + k : nullptr;
      const bool ok = narrow ? relax(bins, du, sp.ids32 + k, w, m, L.dangling, which, 0)
                             : relax(bins, du, sp.ids64 + k, w, m, L.dangling, which, 0);
      if (!ok) co_return;
    }
  };
  auto relax_kept = [&](const std::vector<VertexId>& vs, const std::vector<double>& du,
                        const std::vector<size_t>& idx, Edges which) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, idx.size(), 256),
                      [&](const tbb::blocked_range<size_t>& r) {
      Bins& bins = local_bins.local();
      if (group > 1) {
        coro::Scheduler& sc = scheduler();
        (void)sc.Run(r.size(), [&](size_t i) {
          const size_t x = idx[r.begin() + i];
          return kept_task(bins, vs[x], du[x], which);
        });
        assert(sc.arena().fallbacks() == 0);
        return;
      }
      for (size_t k = r.begin(); k < r.end(); ++k) {
        if (pd != 0) {  // the pipeline: offsets 3 stages ahead, list 2, its first dist entries 1
          if (k + 3 * kStage < r.end()) coro::Prefetch(cache.Head(vs[idx[k + 3 * kStage]]));
          ListCache::Span sp;
          if (k + 2 * kStage < r.end() && cache.List(vs[idx[k + 2 * kStage]], &sp)) {
            coro::Prefetch(sp.ids32 != nullptr ? static_cast<const void*>(sp.ids32) : sp.ids64);
            if (sp.w != nullptr) coro::Prefetch(sp.w);
          }
          if (k + kStage < r.end() && cache.List(vs[idx[k + kStage]], &sp)) {
            for (size_t e = 0; e < std::min(sp.n, pd); ++e) {
              coro::Prefetch(&dist[sp.ids32 != nullptr ? VertexId{sp.ids32[e]} : sp.ids64[e]]);
            }
          }
        }
        const size_t x = idx[k];
        ListCache::Span sp;
        cache.List(vs[x], &sp);
        if (sp.n == 0) continue;
        auto go = [&](const auto* ids) {
          if (ids[sp.n - 1] >= L.bound) {
            beyond.store(true, std::memory_order_relaxed);
            return;
          }
          relax(bins, du[x], ids, sp.w, sp.n, L.dangling, which, pd);
        };
        if (sp.ids32 != nullptr) {
          go(sp.ids32);
        } else {
          go(sp.ids64);
        }
      }
    });
  };
  std::vector<uint8_t> streamed(L.bound, 0);  // the vertices a stream reads
  std::vector<size_t> stream_ranges;
  std::vector<VertexId> lookups;
  std::vector<double> du_of;  // du_of[i]: dist of vs[i] when its lists were taken
  std::vector<size_t> kept_idx;  // indexes of vs whose lists the cache keeps
  // Relaxes the `which` edges of vs (sorted, unique) from the store (cached lists from memory).
  // du is read once per vertex, before its relaxations, as a scan of one vertex would: a
  // concurrent improvement of u re-queues u anyway.
  auto relax_lists = [&](const std::vector<VertexId>& vs, Edges which) {
    du_of.resize(vs.size());
    for (size_t i = 0; i < vs.size(); ++i) du_of[i] = dist[vs[i]];
    auto du_at = [&](VertexId u) {
      return du_of[std::lower_bound(vs.begin(), vs.end(), u) - vs.begin()];
    };
    // Choose per range: lookups of the vertices (cached ones always: they cost no read), or
    // one stream of the range that decodes only their lists.
    stream_ranges.clear();
    lookups.clear();
    if (params.fetch_batch != 0) {
      PlanListReads(L, vs.data(), vs.size(), &cache, params.lookup_cost_edges, 1, &stream_ranges,
                    &lookups, [&](VertexId v) { streamed[v] = 1; });
    } else {
      lookups = vs;
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, stream_ranges.size(), 1),
                      [&](const tbb::blocked_range<size_t>& rr) {
      Bins& bins = local_bins.local();
      for (size_t k = rr.begin(); k < rr.end() && !err.failed(); ++k) {
        const VertexRange r = L.ranges[stream_ranges[k]];
        VertexId last = kNoLabel;
        double du = 0;
        err.Set(ScanRangeSteps(
            snap, r, Direction::kOut, L, /*weights=*/true,
            [&](VertexId u) { return streamed[u] != 0; },
            [&](VertexId u, const VertexId* dst, const double* w, size_t n) {
              if (u != last) {
                last = u;
                du = du_at(u);
              }
              // ScanRangeSteps has dropped edges into deleted vertices.
              return relax(bins, du, dst, w, n, false, which, pd) ? ScanStep::kMore
                                                                  : ScanStep::kStop;
            }));
      }
    }, tbb::simple_partitioner());
    for (VertexId u : vs) streamed[u] = 0;
    // The lists the cache keeps, relaxed from memory (relax_kept); the others looked up.
    kept_idx.clear();
    for (size_t i = 0; i < vs.size(); ++i) {
      if (cache.Kept(vs[i])) kept_idx.push_back(i);
    }
    if (!kept_idx.empty()) {
      relax_kept(vs, du_of, kept_idx, which);
      std::erase_if(lookups, [&](VertexId u) { return cache.Kept(u); });
    }
    err.Set(ForEachFrontierChunk(
        snap, lookups.data(), lookups.size(), Direction::kOut, /*weights=*/true,
        params.fetch_batch, [&] {
          return [&, &bins = local_bins.local(), last = kNoLabel, du = 0.0](
                     VertexId u, const NeighborChunk& c) mutable {
            if (c.size == 0) return true;
            if (c.dst[c.size - 1] >= L.bound) {  // ascending: the last one is the largest
              beyond.store(true, std::memory_order_relaxed);
              return false;
            }
            if (u != last) {
              last = u;
              du = du_at(u);
            }
            return relax(bins, du, c.dst, c.weight, c.size, L.dangling, which, pd);
          };
        }));
    if (beyond.load()) err.Set(Status::Corruption("analytics: neighbor ID >= VertexIdBound()"));
  };
  // The smallest non-empty bin at or after `bin` in any thread (kMaxBins: none).
  auto next_bin = [&] {
    size_t next = kMaxBins;
    for (Bins& bins : local_bins) {
      for (size_t b = bin; b < std::min(bins.size(), next); ++b) {
        if (!bins[b].empty()) {
          next = b;
          break;
        }
      }
    }
    return next;
  };
  while (!err.failed()) {
    // Drop stale entries (u settled from an earlier bin) and duplicates; sorted for batching.
    SortUniqueFrontier(&frontier, &marks, [&](VertexId u) { return BinOf(dist[u], delta) >= bin; });
    if (!split) {
      relax_lists(frontier, Edges::kAll);
    } else {
      // A phase of the bucket: light edges, from memory.
      relax_light(frontier);
      // The others read their lists once per phase and relax every edge, as without the split.
      unkept.clear();
      for (VertexId u : frontier) (light.Kept(u) ? settled : unkept).push_back(u);
      if (!unkept.empty()) relax_lists(unkept, Edges::kAll);
    }
    if (bad_weight.load()) err.Set(Status::InvalidArgument("SSSP: negative or NaN weight"));
    if (err.failed()) break;
    size_t next = next_bin();
    if (split && next != bin && !settled.empty()) {
      // The bucket is empty, its vertices' distances final: their heavy edges, once each.
      SortUniqueFrontier(&settled, &marks, [](VertexId) { return true; });
      relax_lists(settled, Edges::kHeavy);
      settled.clear();
      if (bad_weight.load()) err.Set(Status::InvalidArgument("SSSP: negative or NaN weight"));
      next = next_bin();  // rounding may have put a vertex back into this bin
    }
    if (next == kMaxBins) break;
    frontier.clear();
    for (Bins& bins : local_bins) {
      if (next < bins.size()) {
        frontier.insert(frontier.end(), bins[next].begin(), bins[next].end());
        bins[next].clear();
      }
    }
    bin = next;
  }
  return Finish(snap, err.Get());
}

}  // namespace strata::analytics
