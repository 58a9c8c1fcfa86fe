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

// Auto bucket width: the mean weight of a sample (out-edges of up to 256 existing vertices
// spread over the ID space) divided by the mean out-degree, the Θ(1/degree) width of Meyer and
// Sanders for random weights. A wider bucket relaxes the same edges again and again as
// distances within one bucket improve (on a scale-20 Kronecker graph with uniform weights the
// plain mean weight made 5.4 relaxations per edge, this width 1.1: docs/analytics.md); a
// narrower one only adds empty buckets, which cost a scan of the bin vectors each. Unweighted
// stores use 1.0: every relaxation then lands in the next bucket, never the current one.
double AutoDelta(const Snapshot& snap, const Layout& L) {
  if (!snap.weighted()) return 1.0;
  double sum = 0;
  uint64_t count = 0;
  const VertexId step = std::max<VertexId>(1, L.bound / 256);
  for (VertexId v = 0; v < L.bound; v += step) {
    if (!L.exists[v]) continue;
    ScanEach(snap, v, Direction::kOut, L, [&](VertexId, double w) {
      if (w > 0 && std::isfinite(w)) {
        sum += w;
        ++count;
      }
      return count < 4096;
    });
  }
  const double mean = count ? sum / static_cast<double>(count) : 1.0;
  const double degree = L.num_vertices ? static_cast<double>(L.num_out_edges) / static_cast<double>(L.num_vertices) : 1.0;
  const double delta = mean / std::max(1.0, degree);
  return delta > 0 && std::isfinite(delta) ? delta : 1.0;
}

}  // namespace

Status Sssp(const Snapshot& snap, const SsspParams& params, std::vector<double>* dist_out) {
  // Each list is read about once per run (a vertex is relaxed from about 1.1 buckets), so the
  // cache keeps the shortest lists (ListCache::LimitDegree): a kept list saves a lookup, and
  // the short ones are most of the lookups for a fraction of the bytes.
  ListCache cache(snap, Direction::kOut, params.cache_bytes, /*keep_weights=*/true);
  if (params.cache_bytes != 0) {
    Layout estimate;  // degree bounds from the vertex tables; freed before the layout's pass
    Status s = EstimateLayout(snap, &estimate);
    if (!s.ok()) return s;
    cache.LimitDegree(estimate);
  }
  Layout L;
  Status s = BuildLayout(snap, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) {
    cache.Collect(u, c);
  }, /*weights=*/true);
  if (!s.ok()) return s;
  s = cache.Complete(snap, L);
  if (!s.ok()) return s;
  std::vector<double>& dist = *dist_out;
  dist.assign(L.bound, kInfinity);
  const VertexId src = params.source;
  if (src >= L.bound || !L.exists[src]) return Status::InvalidArgument("SSSP: source does not exist");
  const double delta = params.delta > 0 ? params.delta : AutoDelta(snap, L);
  dist[src] = 0;

  // Invariant: every vertex whose distance improved is queued in the bin of its new distance
  // (in some thread's local bins) until processed; bins below `bin` are empty everywhere.
  using Bins = std::vector<std::vector<VertexId>>;
  tbb::enumerable_thread_specific<Bins> local_bins;
  std::vector<VertexId> frontier{src};
  size_t bin = 0;
  FirstError err;
  std::vector<double> du_of;  // du_of[i]: dist of frontier[i] when its bin was taken
  std::atomic<bool> bad_weight{false};
  // Relaxes u's edges to dst[0, n) (weights w, or 1.0 each), u's distance du; false on a bad
  // weight (stops the list). The loads of dist[v] are the kernel's cache misses (8 bytes per
  // vertex, read in neighbor order); a prefetch kPrefetch edges ahead keeps several in flight
  // where the branch on each comparison would otherwise let few overlap. `filter`: skip edges
  // into deleted vertices (kDirected lists keep them).
  constexpr size_t kPrefetch = 16;
  auto relax = [&](Bins& bins, double du, const VertexId* dst, const double* w, size_t n,
                   bool filter) {
    for (size_t e = 0; e < n; ++e) {
      if (e + kPrefetch < n) __builtin_prefetch(&dist[dst[e + kPrefetch]]);
      const VertexId v = dst[e];
      if (filter && !L.exists[v]) continue;
      const double we = w ? w[e] : 1.0;
      if (!(we >= 0)) {
        bad_weight.store(true, std::memory_order_relaxed);
        return false;
      }
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
  auto du_at = [&](VertexId u) {
    return du_of[std::lower_bound(frontier.begin(), frontier.end(), u) - frontier.begin()];
  };
  // Streamed ranges: their edge counts, and which bucket vertices a stream reads.
  std::vector<uint64_t> range_edges(L.ranges.size(), 0);
  for (size_t ri = 0; ri < L.ranges.size(); ++ri) {
    for (VertexId v = L.ranges[ri].begin; v < L.ranges[ri].end; ++v) range_edges[ri] += L.out_degree[v];
  }
  std::vector<uint8_t> streamed(L.bound, 0);
  std::vector<size_t> stream_ranges;
  std::vector<VertexId> lookups;
  while (!err.failed()) {
    // Drop stale entries (u settled from an earlier bin) and duplicates; sorted for batching.
    std::erase_if(frontier, [&](VertexId u) { return BinOf(dist[u], delta) < bin; });
    tbb::parallel_sort(frontier.begin(), frontier.end());
    frontier.erase(std::unique(frontier.begin(), frontier.end()), frontier.end());
    du_of.resize(frontier.size());
    for (size_t i = 0; i < frontier.size(); ++i) du_of[i] = dist[frontier[i]];
    // Choose per range: lookups of the bucket's vertices (cached ones always: they cost no
    // read), or one stream of the range that decodes only the bucket's lists.
    stream_ranges.clear();
    lookups.clear();
    for (size_t ri = 0, i = 0; i < frontier.size(); ++ri) {
      if (ri == L.ranges.size()) {  // past every range (none should be): looked up
        lookups.insert(lookups.end(), frontier.begin() + i, frontier.end());
        break;
      }
      const VertexRange r = L.ranges[ri];
      while (i < frontier.size() && frontier[i] < r.begin) lookups.push_back(frontier[i++]);
      size_t j = i;
      uint64_t lookup = 0, own = 0;
      for (; j < frontier.size() && frontier[j] < r.end; ++j) {
        if (cache.Kept(frontier[j])) continue;
        lookup += L.out_degree[frontier[j]] + params.lookup_cost_edges;
        own += L.out_degree[frontier[j]];
      }
      if (params.fetch_batch != 0 && own != 0 && lookup > range_edges[ri] / 8 + own) {
        stream_ranges.push_back(ri);
        for (size_t k = i; k < j; ++k) {
          if (cache.Kept(frontier[k])) {
            lookups.push_back(frontier[k]);
          } else {
            streamed[frontier[k]] = 1;
          }
        }
      } else {
        lookups.insert(lookups.end(), frontier.begin() + i, frontier.begin() + j);
      }
      i = j;
    }
    // Relax every out-edge of the bin. du is read once per vertex, before its relaxations,
    // as a scan of one vertex would: a concurrent improvement of u re-queues u anyway.
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
              return relax(bins, du, dst, w, n, false) ? ScanStep::kMore : ScanStep::kStop;
            }));
      }
    }, tbb::simple_partitioner());
    for (VertexId u : frontier) streamed[u] = 0;
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
            return relax(bins, du, c.dst, c.weight, c.size, L.dangling);
          };
        },
        &cache));
    if (beyond.load()) err.Set(Status::Corruption("analytics: neighbor ID >= VertexIdBound()"));
    if (bad_weight.load()) err.Set(Status::InvalidArgument("SSSP: negative or NaN weight"));
    // Next bin: the smallest non-empty one at or after `bin` in any thread.
    size_t next = kMaxBins;
    for (Bins& bins : local_bins) {
      for (size_t b = bin; b < std::min(bins.size(), next); ++b) {
        if (!bins[b].empty()) {
          next = b;
          break;
        }
      }
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
