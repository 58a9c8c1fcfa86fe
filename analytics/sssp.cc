#include "strata/analytics.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_sort.h>

#include "analytics/frontier.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "analytics/range_scan.h"

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

  // Whether u's light edges are here (after the pass).
  bool Kept(VertexId u) const { return !blocks_[static_cast<size_t>(u / kLayoutBlock)].dropped; }

  // fn(v, w) for u's light edges, v ascending; u must be Kept.
  template <typename Fn>
  void ForEach(VertexId u, Fn&& fn) const {
    const std::vector<Edge>& e = blocks_[static_cast<size_t>(u / kLayoutBlock)].e;
    const uint32_t j = static_cast<uint32_t>(u % kLayoutBlock);
    auto it = std::lower_bound(e.begin(), e.end(), j, [](const Edge& x, uint32_t k) { return x.j < k; });
    for (; it != e.end() && it->j == j; ++it) fn(VertexId{it->v}, it->w);
  }

 private:
  struct Edge {
    uint32_t j;  // u - the block's first vertex
    uint32_t v;
    double w;
  };
  struct Block {
    std::vector<Edge> e;
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
  const size_t light_budget = LightBudget(share, est, params.cache_bytes);
  LightEdges light(est, delta, share, light_budget);
  ListCache cache(snap, Direction::kOut, params.cache_bytes - light_budget, /*keep_weights=*/true);
  if (params.cache_bytes != 0) cache.LimitDegree(est);
  // The estimate is the layout (degrees only steer the cost model); one pass over the lists
  // fills the cache and the light store.
  const Layout& L = est;
  if (params.cache_bytes != 0) {
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
  size_t bin = 0;
  FirstError err;
  std::atomic<bool> bad_weight{false};
  // Relaxes u's edges to dst[0, n) (weights w, or 1.0 each) of kind `which`, u's distance du;
  // false on a bad weight (stops the list). The loads of dist[v] are the kernel's cache misses
  // (8 bytes per vertex, read in neighbor order); a prefetch kPrefetch edges ahead keeps several
  // in flight where the branch on each comparison would otherwise let few overlap. `filter`:
  // skip edges into deleted vertices (kDirected lists keep them).
  constexpr size_t kPrefetch = 16;
  auto relax = [&](Bins& bins, double du, const VertexId* dst, const double* w, size_t n,
                   bool filter, Edges which) {
    for (size_t e = 0; e < n; ++e) {
      if (e + kPrefetch < n) __builtin_prefetch(&dist[dst[e + kPrefetch]]);
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
  std::vector<uint8_t> streamed(L.bound, 0);  // the vertices a stream reads
  std::vector<size_t> stream_ranges;
  std::vector<VertexId> lookups;
  std::vector<double> du_of;  // du_of[i]: dist of vs[i] when its lists were taken
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
              return relax(bins, du, dst, w, n, false, which) ? ScanStep::kMore : ScanStep::kStop;
            }));
      }
    }, tbb::simple_partitioner());
    for (VertexId u : vs) streamed[u] = 0;
    std::atomic<bool> beyond{false};
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
            return relax(bins, du, c.dst, c.weight, c.size, L.dangling, which);
          };
        },
        &cache));
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
    std::erase_if(frontier, [&](VertexId u) { return BinOf(dist[u], delta) < bin; });
    tbb::parallel_sort(frontier.begin(), frontier.end());
    frontier.erase(std::unique(frontier.begin(), frontier.end()), frontier.end());
    if (!split) {
      relax_lists(frontier, Edges::kAll);
    } else {
      // A phase of the bucket: light edges, from memory.
      tbb::parallel_for(tbb::blocked_range<size_t>(0, frontier.size(), 256),
                        [&](const tbb::blocked_range<size_t>& r) {
        Bins& bins = local_bins.local();
        for (size_t i = r.begin(); i < r.end(); ++i) {
          const VertexId u = frontier[i];
          if (!light.Kept(u)) continue;
          const double du = std::atomic_ref<double>(dist[u]).load(std::memory_order_relaxed);
          light.ForEach(u, [&](VertexId v, double w) { relax(bins, du, &v, &w, 1, L.dangling, Edges::kAll); });
        }
      });
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
      tbb::parallel_sort(settled.begin(), settled.end());
      settled.erase(std::unique(settled.begin(), settled.end()), settled.end());
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
