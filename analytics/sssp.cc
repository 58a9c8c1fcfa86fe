#include "analytics/sssp.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_sort.h>

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

// Up to 4096 weights of the out-edges of up to 256 existing vertices spread over the ID space
// (the positive, finite ones); empty for unweighted stores.
std::vector<double> SampleWeights(const Snapshot& snap, const Layout& L) {
  std::vector<double> out;
  if (!snap.weighted()) return out;
  const VertexId step = std::max<VertexId>(1, L.bound / 256);
  for (VertexId v = 0; v < L.bound && out.size() < 4096; v += step) {
    if (!L.exists[v]) continue;
    ScanEach(snap, v, Direction::kOut, L, [&](VertexId, double w) {
      if (w > 0 && std::isfinite(w)) out.push_back(w);
      return out.size() < 4096;
    });
  }
  return out;
}

// Auto bucket width: the sample's mean weight divided by the mean out-degree, the Θ(1/degree)
// width of Meyer and Sanders for random weights. A wider bucket relaxes the same edges again and
// again as distances within one bucket improve (on a scale-20 Kronecker graph with uniform
// weights the plain mean weight made 5.4 relaxations per edge, this width 1.1:
// docs/analytics.md); a narrower one only adds empty buckets, which cost a scan of the bin
// vectors each. Unweighted stores use 1.0: every relaxation then lands in the next bucket,
// never the current one (every edge is heavy).
double AutoDelta(const Snapshot& snap, const Layout& L, const std::vector<double>& sample) {
  if (!snap.weighted()) return 1.0;
  double sum = 0;
  for (double w : sample) sum += w;
  const double mean = sample.empty() ? 1.0 : sum / static_cast<double>(sample.size());
  const double degree = L.num_vertices ? static_cast<double>(L.num_out_edges) / static_cast<double>(L.num_vertices) : 1.0;
  const double delta = mean / std::max(1.0, degree);
  return delta > 0 && std::isfinite(delta) ? delta : 1.0;
}

// The light edges (weight < delta) of every vertex, collected from the layout's pass, for the
// inner phases of a bucket (Meyer and Sanders' light/heavy split): a bucket's vertices relax
// their light edges from here, again each time their distance improves within the bucket, and
// read their whole lists from the store once, when the bucket is done, for the heavy edges —
// which cannot land in the bucket (du >= bucket start, w >= delta). Per 4096-vertex block a
// vector of (u, v, w), u ascending (one thread collects a block, vertices in order). Bounded
// by max_bytes; past it, or given a neighbor >= the bound, the store is abandoned (complete()
// false) and the kernel relaxes every edge in every phase instead.
class LightEdges {
 public:
  LightEdges(VertexId bound, double delta, size_t max_bytes)
      : bound_(bound), delta_(delta), max_bytes_(max_bytes),
        blocks_(static_cast<size_t>((bound + kLayoutBlock - 1) / kLayoutBlock)) {}

  void Collect(VertexId u, const NeighborChunk& c) {
    if (c.size == 0 || failed_.load(std::memory_order_relaxed)) return;
    if (c.dst[c.size - 1] >= bound_) {  // damaged: let the store's reads report it
      failed_.store(true, std::memory_order_relaxed);
      return;
    }
    std::vector<Edge>& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    const size_t before = b.capacity();
    for (size_t i = 0; i < c.size; ++i) {
      // NaN and negative weights are heavy or light as `<` says; either way they are relaxed
      // (and rejected) like every other weight.
      if (c.weight != nullptr && c.weight[i] < delta_) b.push_back({u, c.dst[i], c.weight[i]});
    }
    const size_t grown = (b.capacity() - before) * sizeof(Edge);
    if (grown && used_.fetch_add(grown, std::memory_order_relaxed) + grown > max_bytes_) {
      failed_.store(true, std::memory_order_relaxed);
    }
  }

  // After the pass: whether every light edge is here. Frees everything when not.
  bool Complete() {
    if (failed_.load()) blocks_ = {};
    return !failed_.load();
  }

  // fn(v, w) for u's light edges, v ascending.
  template <typename Fn>
  void ForEach(VertexId u, Fn&& fn) const {
    const std::vector<Edge>& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    auto it = std::lower_bound(b.begin(), b.end(), u, [](const Edge& e, VertexId x) { return e.u < x; });
    for (; it != b.end() && it->u == u; ++it) fn(it->v, it->w);
  }

  size_t bytes() const { return used_.load(std::memory_order_relaxed); }

 private:
  struct Edge {
    VertexId u, v;
    double w;
  };
  VertexId bound_;
  double delta_;
  size_t max_bytes_;
  std::atomic<size_t> used_{0};
  std::atomic<bool> failed_{false};
  std::vector<std::vector<Edge>> blocks_;
};

// Budget of the light edges: twice the sample's share of light weights times the edges, at
// most half the cache, at least 1 MiB (or nothing when there is no cache).
size_t LightBudget(const std::vector<double>& sample, double delta, const Layout& est,
                   size_t cache_bytes) {
  if (cache_bytes == 0) return 0;
  size_t light = 0;
  for (double w : sample) light += w < delta;
  const double share = sample.empty() ? 0.0 : static_cast<double>(light) / static_cast<double>(sample.size());
  const double want = 2.0 * share * static_cast<double>(est.num_out_edges) * 24.0 + double(1 << 20);
  return static_cast<size_t>(std::min(want, static_cast<double>(cache_bytes / 2)));
}

enum class Edges { kAll, kLight, kHeavy };

}  // namespace

Status Sssp(const Snapshot& snap, const SsspParams& params, std::vector<double>* dist_out) {
  // A first look at the vertex tables (degree bounds) and a sample of weights decide the
  // bucket width and how the cache is split. Each list is read about once per run, so the list
  // cache keeps the shortest lists (ListCache::LimitDegree): a kept list saves a lookup, and the
  // short ones are most of the lookups for a fraction of the bytes.
  Layout est;
  Status s = EstimateLayout(snap, &est);
  if (!s.ok()) return s;
  const std::vector<double> sample = SampleWeights(snap, est);
  if (!snap.status().ok()) return snap.status();
  const double delta = params.delta > 0 ? params.delta : AutoDelta(snap, est, sample);
  const size_t light_budget = LightBudget(sample, delta, est, params.cache_bytes);
  LightEdges light(est.bound, delta, light_budget);
  ListCache cache(snap, Direction::kOut, params.cache_bytes - light_budget, /*keep_weights=*/true);
  if (params.cache_bytes != 0) cache.LimitDegree(est);
  est = Layout();  // freed before the layout's pass
  Layout L;
  s = BuildLayout(snap, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) {
    cache.Collect(u, c);
    if (light_budget != 0) light.Collect(u, c);
  }, /*weights=*/true);
  if (!s.ok()) return s;
  s = cache.Complete(snap, L);
  if (!s.ok()) return s;
  // Light/heavy split when every light edge is in memory; otherwise each phase relaxes every
  // edge of its vertices (reading a list twice per bucket would cost more than it saves).
  const bool split = light_budget != 0 && light.Complete();
  std::vector<double>& dist = *dist_out;
  dist.assign(L.bound, kInfinity);
  const VertexId src = params.source;
  if (src >= L.bound || !L.exists[src]) return Status::InvalidArgument("SSSP: source does not exist");
  dist[src] = 0;

  // Invariant: every vertex whose distance improved is queued in the bin of its new distance
  // (in some thread's local bins) until processed; bins below `bin` are empty everywhere. With
  // the split, every vertex taken from bin `bin` is in `settled` until the bin is empty, and
  // then relaxes its heavy edges from its final distance.
  using Bins = std::vector<std::vector<VertexId>>;
  tbb::enumerable_thread_specific<Bins> local_bins;
  std::vector<VertexId> frontier{src};
  std::vector<VertexId> settled;
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
  // Streamed ranges: their edge counts, and which vertices a stream reads.
  std::vector<uint64_t> range_edges(L.ranges.size(), 0);
  for (size_t ri = 0; ri < L.ranges.size(); ++ri) {
    for (VertexId v = L.ranges[ri].begin; v < L.ranges[ri].end; ++v) range_edges[ri] += L.out_degree[v];
  }
  std::vector<uint8_t> streamed(L.bound, 0);
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
    for (size_t ri = 0, i = 0; i < vs.size(); ++ri) {
      if (ri == L.ranges.size()) {  // past every range (none should be): looked up
        lookups.insert(lookups.end(), vs.begin() + i, vs.end());
        break;
      }
      const VertexRange r = L.ranges[ri];
      while (i < vs.size() && vs[i] < r.begin) lookups.push_back(vs[i++]);
      size_t j = i;
      uint64_t lookup = 0, own = 0;
      for (; j < vs.size() && vs[j] < r.end; ++j) {
        if (cache.Kept(vs[j])) continue;
        lookup += L.out_degree[vs[j]] + params.lookup_cost_edges;
        own += L.out_degree[vs[j]];
      }
      if (params.fetch_batch != 0 && own != 0 && lookup > range_edges[ri] / 8 + own) {
        stream_ranges.push_back(ri);
        for (size_t k = i; k < j; ++k) {
          if (cache.Kept(vs[k])) {
            lookups.push_back(vs[k]);
          } else {
            streamed[vs[k]] = 1;
          }
        }
      } else {
        lookups.insert(lookups.end(), vs.begin() + i, vs.begin() + j);
      }
      i = j;
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
        snap, lookups.data(), lookups.size(), Direction::kOut, params.fetch_batch, [&] {
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
          const double du = std::atomic_ref<double>(dist[u]).load(std::memory_order_relaxed);
          light.ForEach(u, [&](VertexId v, double w) { relax(bins, du, &v, &w, 1, L.dangling, Edges::kAll); });
        }
      });
      settled.insert(settled.end(), frontier.begin(), frontier.end());
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
