#include "bench/csr.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "bench/digest.h"
#include "bench/util.h"

namespace strata::bench {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

template <typename Fn>
void ParFor(uint64_t n, uint64_t grain, Fn&& fn) {
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, grain),
                    [&](const tbb::blocked_range<uint64_t>& r) {
                      for (uint64_t i = r.begin(); i < r.end(); ++i) fn(i);
                    });
}

}  // namespace

Status BuildCsr(const EdgeList& list, CsrGraph* g) {
  const uint64_t n = list.num_vertices;
  if (n >= kNone) return Status::InvalidArgument("csr: too many vertices for 32-bit IDs");
  const bool weighted = !list.weights.empty();
  // Removed edges: a per-vertex flag filters the hash lookups to the few vertices concerned.
  std::vector<uint8_t> has_removed(n, 0);
  std::unordered_set<uint64_t> removed;
  removed.reserve(list.removed.size() * 2);
  for (const auto& [a, b] : list.removed) {
    has_removed[a] = 1;
    removed.insert(a << 32 | b);
  }
  auto keep = [&](uint32_t u, uint32_t v) {
    const uint64_t a = std::min(u, v), b = std::max(u, v);
    return !has_removed[a] || removed.count(a << 32 | b) == 0;
  };
  std::vector<uint64_t> deg(n + 1, 0);
  for (const PackedEdge& e : list.edges) {
    if (!keep(e.u, e.v)) continue;
    ++deg[e.u];
    if (e.u != e.v) ++deg[e.v];
  }
  std::vector<uint64_t> off(n + 1, 0);
  for (uint64_t v = 0; v < n; ++v) off[v + 1] = off[v] + deg[v];
  std::vector<uint32_t> adj(off[n]);
  std::vector<double> wt(weighted ? off[n] : 0);
  std::vector<uint64_t> cur(off.begin(), off.end() - 1);
  // Stream order within each list, so that of equal destinations the last one is the newest.
  for (size_t i = 0; i < list.edges.size(); ++i) {
    const PackedEdge e = list.edges[i];
    if (!keep(e.u, e.v)) continue;
    const uint64_t p = cur[e.u]++;
    adj[p] = e.v;
    if (weighted) wt[p] = list.weights[i];
    if (e.u != e.v) {
      const uint64_t q = cur[e.v]++;
      adj[q] = e.u;
      if (weighted) wt[q] = list.weights[i];
    }
  }
  cur.clear();
  cur.shrink_to_fit();
  // Sort each list (stable: the newest duplicate last), deduplicate keeping the newest.
  std::vector<uint64_t> kept(n + 1, 0);
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, 256), [&](const tbb::blocked_range<uint64_t>& r) {
    std::vector<std::pair<uint32_t, double>> tmp;
    for (uint64_t u = r.begin(); u < r.end(); ++u) {
      const uint64_t b = off[u], e = off[u + 1];
      if (e - b <= 1) {
        kept[u] = e - b;
        continue;
      }
      if (!weighted) {
        std::sort(adj.begin() + b, adj.begin() + e);
        kept[u] = std::unique(adj.begin() + b, adj.begin() + e) - (adj.begin() + b);
        continue;
      }
      tmp.clear();
      for (uint64_t i = b; i < e; ++i) tmp.emplace_back(adj[i], wt[i]);
      std::stable_sort(tmp.begin(), tmp.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      uint64_t k = b;
      for (size_t i = 0; i < tmp.size(); ++i) {
        if (i + 1 < tmp.size() && tmp[i + 1].first == tmp[i].first) continue;  // keep the last
        adj[k] = tmp[i].first;
        wt[k] = tmp[i].second;
        ++k;
      }
      kept[u] = k - b;
    }
  });
  g->n = n;
  g->offset.assign(n + 1, 0);
  for (uint64_t v = 0; v < n; ++v) g->offset[v + 1] = g->offset[v] + kept[v];
  g->adj.resize(g->offset[n]);
  if (weighted) g->weight.resize(g->offset[n]);
  ParFor(n, 1024, [&](uint64_t u) {
    std::copy(adj.begin() + off[u], adj.begin() + off[u] + kept[u], g->adj.begin() + g->offset[u]);
    if (weighted) {
      std::copy(wt.begin() + off[u], wt.begin() + off[u] + kept[u], g->weight.begin() + g->offset[u]);
    }
  });
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// PageRank: pull. Every vertex with an edge exists; sinks cannot exist in an undirected graph
// (a vertex's only edge may be a loop, which still gives it out-degree 1).

void CsrPageRank(const CsrGraph& g, int iterations, std::vector<double>* rank_out) {
  const uint64_t n = g.n;
  const uint64_t* off = g.offset.data();
  const uint32_t* adj = g.adj.data();
  uint64_t nv = tbb::parallel_reduce(
      tbb::blocked_range<uint64_t>(0, n, 4096), uint64_t{0},
      [&](const tbb::blocked_range<uint64_t>& r, uint64_t acc) {
        for (uint64_t v = r.begin(); v < r.end(); ++v) acc += off[v + 1] != off[v];
        return acc;
      },
      std::plus<uint64_t>());
  const double nn = static_cast<double>(std::max<uint64_t>(1, nv));
  const double d = 0.85;
  // Ranks and contributions in single precision (as GAPBS keeps its scores, and as the store's
  // kernel keeps them: analytics/pagerank.cc); sums in double. Widened into *rank_out at the
  // end, after the contributions are freed.
  std::vector<float> rank(n);
  std::vector<float> contrib(n);
  const float first = static_cast<float>(1.0 / nn);
  ParFor(n, 4096, [&](uint64_t v) { rank[v] = off[v + 1] != off[v] ? first : 0.0f; });
  const double base = (1.0 - d) / nn;
  for (int it = 0; it < iterations; ++it) {
    ParFor(n, 4096, [&](uint64_t u) {
      const uint64_t dg = off[u + 1] - off[u];
      contrib[u] = dg ? static_cast<float>(rank[u] / static_cast<double>(dg)) : 0.0f;
    });
    const float* c = contrib.data();
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, 512),
                      [&](const tbb::blocked_range<uint64_t>& r) {
                        for (uint64_t v = r.begin(); v < r.end(); ++v) {
                          const uint64_t b = off[v], e = off[v + 1];
                          if (b == e) continue;
                          double s = 0;
                          for (uint64_t i = b; i < e; ++i) s += c[adj[i]];
                          rank[v] = static_cast<float>(base + d * s);
                        }
                      });
  }
  std::vector<float>().swap(contrib);
  rank_out->assign(rank.begin(), rank.end());
}

// ---------------------------------------------------------------------------------------------
// BFS, direction-optimizing.

namespace {

struct Bitmap {
  std::vector<uint64_t> w;
  explicit Bitmap(uint64_t n) : w((n + 63) / 64, 0) {}
  void Clear() { std::fill(w.begin(), w.end(), 0); }
  bool Get(uint64_t i) const { return (w[i >> 6] >> (i & 63)) & 1; }
  void SetAtomic(uint64_t i) {
    std::atomic_ref<uint64_t>(w[i >> 6]).fetch_or(uint64_t{1} << (i & 63), std::memory_order_relaxed);
  }
};

}  // namespace

void CsrBfs(const CsrGraph& g, uint32_t source, std::vector<int32_t>* depth_out) {
  const uint64_t n = g.n;
  const uint64_t* off = g.offset.data();
  const uint32_t* adj = g.adj.data();
  std::vector<int32_t>& depth = *depth_out;
  depth.assign(n, -1);
  if (source >= n) return;
  const int alpha = 15, beta = 18;
  depth[source] = 0;
  std::vector<uint32_t> queue{source};
  tbb::enumerable_thread_specific<std::vector<uint32_t>> local;
  int64_t edges_to_check = static_cast<int64_t>(g.num_arcs());
  int64_t scout = static_cast<int64_t>(g.degree(source));
  Bitmap front(n), next(n);
  int32_t level = 0;
  while (!queue.empty()) {
    if (scout > edges_to_check / alpha) {
      // Bottom-up: the frontier as a bitmap.
      front.Clear();
      ParFor(queue.size(), 1024, [&](uint64_t i) { front.SetAtomic(queue[i]); });
      int64_t awake = static_cast<int64_t>(queue.size()), old_awake;
      do {
        old_awake = awake;
        next.Clear();
        const int32_t lv = level;
        awake = tbb::parallel_reduce(
            tbb::blocked_range<uint64_t>(0, n, 1024), int64_t{0},
            [&](const tbb::blocked_range<uint64_t>& r, int64_t acc) {
              for (uint64_t v = r.begin(); v < r.end(); ++v) {
                if (depth[v] >= 0) continue;
                for (uint64_t i = off[v], e = off[v + 1]; i < e; ++i) {
                  if (front.Get(adj[i])) {
                    depth[v] = lv + 1;
                    next.SetAtomic(v);
                    ++acc;
                    break;
                  }
                }
              }
              return acc;
            },
            std::plus<int64_t>());
        std::swap(front.w, next.w);
        ++level;
      } while (awake >= old_awake || awake > static_cast<int64_t>(n / beta));
      // Back to a queue.
      for (auto& l : local) l.clear();
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, front.w.size(), 64),
                        [&](const tbb::blocked_range<uint64_t>& r) {
                          auto& l = local.local();
                          for (uint64_t wi = r.begin(); wi < r.end(); ++wi) {
                            for (uint64_t bits = front.w[wi]; bits; bits &= bits - 1) {
                              l.push_back(static_cast<uint32_t>(wi * 64 + __builtin_ctzll(bits)));
                            }
                          }
                        });
      queue.clear();
      for (auto& l : local) queue.insert(queue.end(), l.begin(), l.end());
      scout = 1;
      if (awake == 0) break;
      continue;
    }
    // Top-down.
    edges_to_check -= scout;
    for (auto& l : local) l.clear();
    const int32_t lv = level;
    scout = tbb::parallel_reduce(
        tbb::blocked_range<uint64_t>(0, queue.size(), 64), int64_t{0},
        [&](const tbb::blocked_range<uint64_t>& r, int64_t acc) {
          auto& l = local.local();
          for (uint64_t qi = r.begin(); qi < r.end(); ++qi) {
            const uint32_t u = queue[qi];
            for (uint64_t i = off[u], e = off[u + 1]; i < e; ++i) {
              const uint32_t v = adj[i];
              std::atomic_ref<int32_t> dv(depth[v]);
              int32_t cur = dv.load(std::memory_order_relaxed);
              if (cur < 0 && dv.compare_exchange_strong(cur, lv + 1, std::memory_order_relaxed)) {
                l.push_back(v);
                acc += static_cast<int64_t>(off[v + 1] - off[v]);
              }
            }
          }
          return acc;
        },
        std::plus<int64_t>());
    queue.clear();
    for (auto& l : local) queue.insert(queue.end(), l.begin(), l.end());
    ++level;
  }
}

// ---------------------------------------------------------------------------------------------
// SSSP: delta-stepping. Per-thread bins indexed by floor(dist / delta); a phase processes the
// lowest non-empty bin's vertices, each once (stale and duplicate entries dropped), relaxing
// with CAS-min; light edges in the bin's phases, heavy ones once per vertex when it is empty.

void CsrSssp(const CsrGraph& g, uint32_t source, std::vector<double>* dist_out) {
  const uint64_t n = g.n;
  const uint64_t* off = g.offset.data();
  const uint32_t* adj = g.adj.data();
  const bool weighted = !g.weight.empty();
  const double* wt = weighted ? g.weight.data() : nullptr;
  std::vector<double>& dist = *dist_out;
  dist.assign(n, std::numeric_limits<double>::infinity());
  if (source >= n) return;
  // Bucket width as analytics/ picks it (AutoDelta in analytics/sssp.cc): 1 when unweighted,
  // else the mean weight of a sample of arcs over the mean out-degree of the vertices that
  // have arcs.
  double delta = 1.0;
  if (weighted) {
    double s = 0;
    uint64_t k = 0;
    for (uint64_t i = 0; i < g.weight.size(); i += std::max<uint64_t>(1, g.weight.size() / 4096)) {
      s += g.weight[i];
      ++k;
    }
    uint64_t with_arcs = 0;
    for (uint64_t u = 0; u < n; ++u) with_arcs += off[u + 1] > off[u];
    const double degree = with_arcs ? static_cast<double>(off[n]) / static_cast<double>(with_arcs) : 1.0;
    delta = k && s > 0 ? s / static_cast<double>(k) / std::max(1.0, degree) : 1.0;
  }
  using Bins = std::vector<std::vector<uint32_t>>;
  tbb::enumerable_thread_specific<Bins> bins;
  dist[source] = 0;
  std::vector<uint32_t> frontier{source};
  std::vector<uint8_t> queued(n, 0);  // in `frontier`
  // Light/heavy split (Meyer and Sanders), as analytics/sssp.cc: a bin's phases relax the light
  // edges (w < delta) of its vertices, again whenever a distance improves within the bin; when
  // the bin is empty its vertices relax their heavy edges once, from their distances then
  // (a heavy edge lands in a later bin, but for rounding, which queues the vertex again like any
  // improvement, and the bin runs once more). Unweighted graphs have only heavy edges.
  std::vector<uint32_t> settled;
  std::vector<uint8_t> in_settled(weighted ? n : 0, 0);
  // The light edges in a CSR of their own (one pass over the weights), so that a phase reads
  // only them rather than scanning whole lists for the one edge in degree that is light.
  std::vector<uint64_t> loff(weighted ? n + 1 : 0, 0);
  std::vector<uint32_t> ladj;
  std::vector<double> lwt;
  if (weighted) {
    ParFor(n, 4096, [&](uint64_t u) {
      uint64_t k = 0;
      for (uint64_t i = off[u]; i < off[u + 1]; ++i) k += wt[i] < delta;
      loff[u + 1] = k;
    });
    for (uint64_t u = 0; u < n; ++u) loff[u + 1] += loff[u];
    ladj.resize(loff[n]);
    lwt.resize(loff[n]);
    ParFor(n, 4096, [&](uint64_t u) {
      uint64_t k = loff[u];
      for (uint64_t i = off[u]; i < off[u + 1]; ++i) {
        if (wt[i] < delta) {
          ladj[k] = adj[i];
          lwt[k++] = wt[i];
        }
      }
    });
  }
  uint64_t cur_bin = 0;
  enum Which { kLight, kHeavy, kAll };
  double* const dp = dist.data();
  auto relax = [&](const std::vector<uint32_t>& vs, Which which, uint64_t bin) {
    tbb::parallel_for(tbb::blocked_range<uint64_t>(0, vs.size(), 64),
                      [&, which, bin](const tbb::blocked_range<uint64_t>& r) {
                        // Locals, not captures: the CAS below is a compiler barrier, after
                        // which captured references would be reloaded every edge.
                        Bins& b = bins.local();
                        const uint32_t* const fv = vs.data();
                        const bool light = which == kLight, heavy = which == kHeavy;
                        const uint64_t* const o = light ? loff.data() : off;
                        const uint32_t* const a = light ? ladj.data() : adj;
                        const double* const ws = light ? lwt.data() : wt;
                        double* const dd = dp;
                        const double width = delta;
                        for (uint64_t fi = r.begin(); fi < r.end(); ++fi) {
                          const uint32_t u = fv[fi];
                          const double du = std::atomic_ref<double>(dd[u]).load(std::memory_order_relaxed);
                          // Settled in an earlier bin: a stale entry. The function that queued
                          // it decides (comparing du with bin * delta could drop a live one).
                          if (static_cast<uint64_t>(du / width) < bin) continue;
                          for (uint64_t i = o[u], e = o[u + 1]; i < e; ++i) {
                            if (i + 16 < e) __builtin_prefetch(&dd[a[i + 16]]);
                            const double w = ws ? ws[i] : 1.0;
                            if (heavy && w < width) continue;
                            const uint32_t v = a[i];
                            const double nd = du + w;
                            std::atomic_ref<double> dv(dd[v]);
                            double old = dv.load(std::memory_order_relaxed);
                            bool improved = false;
                            while (nd < old) {
                              if (dv.compare_exchange_weak(old, nd, std::memory_order_relaxed)) {
                                improved = true;
                                break;
                              }
                            }
                            if (improved) {
                              const uint64_t bi = static_cast<uint64_t>(nd / width);
                              if (bi >= b.size()) b.resize(bi + 1);
                              b[bi].push_back(v);
                            }
                          }
                        }
                      });
  };
  auto next_bin = [&] {
    uint64_t next = std::numeric_limits<uint64_t>::max();
    for (Bins& b : bins) {
      for (uint64_t i = cur_bin; i < b.size(); ++i) {
        if (!b[i].empty()) {
          next = std::min(next, i);
          break;
        }
      }
    }
    return next;
  };
  for (;;) {
    if (!weighted) {
      relax(frontier, kAll, cur_bin);
    } else {
      relax(frontier, kLight, cur_bin);
      for (uint32_t u : frontier) {
        if (!in_settled[u]) {
          in_settled[u] = 1;
          settled.push_back(u);
        }
      }
    }
    uint64_t next = next_bin();
    if (weighted && next != cur_bin && !settled.empty()) {
      relax(settled, kHeavy, cur_bin);
      for (uint32_t u : settled) in_settled[u] = 0;
      settled.clear();
      next = next_bin();  // rounding may have put a vertex back into this bin
    }
    if (next == std::numeric_limits<uint64_t>::max()) break;
    // The next bin once per vertex: a vertex improved k times within one bin is queued k
    // times, and relaxing its list k times is what analytics/sssp.cc avoids by sorting and
    // deduplicating its bucket (docs/benchmarks.md, "Measurements behind design choices").
    for (uint32_t u : frontier) queued[u] = 0;
    frontier.clear();
    for (Bins& b : bins) {
      if (next < b.size()) {
        for (uint32_t v : b[next]) {
          if (queued[v]) continue;
          queued[v] = 1;
          frontier.push_back(v);
        }
        b[next].clear();
      }
    }
    cur_bin = next;
  }
}

// ---------------------------------------------------------------------------------------------
// WCC: Afforest.

namespace {

inline void Link(uint32_t u, uint32_t v, uint32_t* comp) {
  uint32_t p1 = std::atomic_ref<uint32_t>(comp[u]).load(std::memory_order_relaxed);
  uint32_t p2 = std::atomic_ref<uint32_t>(comp[v]).load(std::memory_order_relaxed);
  while (p1 != p2) {
    const uint32_t high = std::max(p1, p2), low = std::min(p1, p2);
    std::atomic_ref<uint32_t> ch(comp[high]);
    uint32_t p_high = ch.load(std::memory_order_relaxed);
    if (p_high == low) break;
    if (p_high == high && ch.compare_exchange_strong(p_high, low, std::memory_order_relaxed)) break;
    p1 = std::atomic_ref<uint32_t>(comp[std::atomic_ref<uint32_t>(comp[high]).load(std::memory_order_relaxed)])
             .load(std::memory_order_relaxed);
    p2 = std::atomic_ref<uint32_t>(comp[low]).load(std::memory_order_relaxed);
  }
}

void Compress(uint64_t n, uint32_t* comp) {
  ParFor(n, 4096, [&](uint64_t v) {
    while (comp[v] != comp[comp[v]]) comp[v] = comp[comp[v]];
  });
}

}  // namespace

void CsrWcc(const CsrGraph& g, std::vector<uint32_t>* label) {
  const uint64_t n = g.n;
  const uint64_t* off = g.offset.data();
  const uint32_t* adj = g.adj.data();
  std::vector<uint32_t>& comp = *label;
  comp.resize(n);
  ParFor(n, 4096, [&](uint64_t v) { comp[v] = static_cast<uint32_t>(v); });
  const int rounds = 2;
  for (int r = 0; r < rounds; ++r) {
    ParFor(n, 1024, [&](uint64_t u) {
      if (off[u] + r < off[u + 1]) Link(static_cast<uint32_t>(u), adj[off[u] + r], comp.data());
    });
    Compress(n, comp.data());
  }
  // The most frequent component among a sample of vertices.
  uint32_t c = 0;
  if (n > 0) {
    std::vector<uint32_t> sample;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 1024; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      sample.push_back(comp[x % n]);
    }
    std::sort(sample.begin(), sample.end());
    size_t best = 0;
    for (size_t i = 0, j; i < sample.size(); i = j) {
      for (j = i; j < sample.size() && sample[j] == sample[i]; ++j) {
      }
      if (j - i > best) {
        best = j - i;
        c = sample[i];
      }
    }
  }
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, 256), [&](const tbb::blocked_range<uint64_t>& rg) {
    for (uint64_t u = rg.begin(); u < rg.end(); ++u) {
      if (comp[u] == c) continue;
      for (uint64_t i = off[u] + rounds; i < off[u + 1]; ++i) {
        Link(static_cast<uint32_t>(u), adj[i], comp.data());
      }
    }
  });
  Compress(n, comp.data());
  ParFor(n, 4096, [&](uint64_t v) {
    if (off[v] == off[v + 1]) comp[v] = kNone;
  });
}

// ---------------------------------------------------------------------------------------------
// Triangle counting: for every u, the lower neighbors v < u, and |N(u) ∩ N(v) ∩ [0, v)| by a
// merge. Skewed graphs are first relabelled by degree, highest first (lists of hubs become the
// short "lower" lists).

namespace {

uint64_t OrderedCount(const CsrGraph& g) {
  const uint64_t* off = g.offset.data();
  const uint32_t* adj = g.adj.data();
  return tbb::parallel_reduce(
      tbb::blocked_range<uint64_t>(0, g.n, 64), uint64_t{0},
      [&](const tbb::blocked_range<uint64_t>& r, uint64_t acc) {
        for (uint64_t u = r.begin(); u < r.end(); ++u) {
          const uint32_t* ub = adj + off[u];
          const uint32_t* ue = adj + off[u + 1];
          for (const uint32_t* pv = ub; pv < ue && *pv < u; ++pv) {
            const uint32_t v = *pv;
            const uint32_t* a = ub;
            for (const uint32_t* pw = adj + off[v], *we = adj + off[v + 1]; pw < we && *pw < v; ++pw) {
              const uint32_t w = *pw;
              while (*a < w) ++a;  // a stays below v <= ue's range end: N(u) contains v > w
              if (*a == w) ++acc;
            }
          }
        }
        return acc;
      },
      std::plus<uint64_t>());
}

bool Skewed(const CsrGraph& g) {
  if (g.n < 1024) return false;
  std::vector<uint64_t> d;
  uint64_t x = 88172645463325252ULL, sum = 0;
  for (int i = 0; i < 1000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    d.push_back(g.degree(x % g.n));
    sum += d.back();
  }
  std::nth_element(d.begin(), d.begin() + 500, d.end());
  const double mean = static_cast<double>(sum) / 1000.0;
  return mean > 1.3 * static_cast<double>(d[500]);
}

void RelabelByDegree(const CsrGraph& g, CsrGraph* out) {
  const uint64_t n = g.n;
  std::vector<std::pair<uint64_t, uint32_t>> order(n);
  ParFor(n, 4096, [&](uint64_t v) { order[v] = {g.degree(v), static_cast<uint32_t>(v)}; });
  tbb::parallel_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<uint32_t> new_id(n);
  ParFor(n, 4096, [&](uint64_t i) { new_id[order[i].second] = static_cast<uint32_t>(i); });
  out->n = n;
  out->offset.assign(n + 1, 0);
  for (uint64_t i = 0; i < n; ++i) out->offset[i + 1] = out->offset[i] + order[i].first;
  out->adj.resize(out->offset[n]);
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, 256), [&](const tbb::blocked_range<uint64_t>& r) {
    for (uint64_t i = r.begin(); i < r.end(); ++i) {
      const uint32_t old = order[i].second;
      uint32_t* dst = out->adj.data() + out->offset[i];
      uint64_t k = 0;
      for (uint64_t j = g.offset[old]; j < g.offset[old + 1]; ++j) dst[k++] = new_id[g.adj[j]];
      std::sort(dst, dst + k);
    }
  });
}

}  // namespace

uint64_t CsrTriangles(const CsrGraph& g) {
  if (Skewed(g)) {
    CsrGraph r;
    RelabelByDegree(g, &r);
    return OrderedCount(r);
  }
  return OrderedCount(g);
}

// ---------------------------------------------------------------------------------------------
// The adapter.

namespace {

class CsrView : public View {
 public:
  explicit CsrView(const CsrGraph* g) : g_(g) {}

  bool SearchEdge(VertexId u, VertexId v) override {
    if (u >= g_->n || v >= g_->n) return false;
    const uint32_t* b = g_->adj.data() + g_->offset[u];
    const uint32_t* e = g_->adj.data() + g_->offset[u + 1];
    const uint32_t* p = std::lower_bound(b, e, static_cast<uint32_t>(v));
    return p != e && *p == v;
  }

  uint64_t ScanNeighbors(VertexId u) override {
    if (u >= g_->n) return 0;
    uint64_t sum = 0;
    const uint64_t b = g_->offset[u], e = g_->offset[u + 1];
    for (uint64_t i = b; i < e; ++i) sum += g_->adj[i];
    sink_ += sum;
    return e - b;
  }

  Status Bfs(VertexId source, Digest* d) override {
    std::vector<int32_t> depth;
    const double t0 = NowSec();
    CsrBfs(*g_, static_cast<uint32_t>(source), &depth);
    d->seconds = NowSec() - t0;
    d->text = BfsDigest<int32_t>(depth.data(), depth.size(), -1);
    return Status::OK();
  }
  Status PageRank(int iterations, Digest* d) override {
    std::vector<double> rank;
    const double t0 = NowSec();
    CsrPageRank(*g_, iterations, &rank);
    d->seconds = NowSec() - t0;
    d->text = PageRankDigest(rank.data(), rank.size());
    return Status::OK();
  }
  Status Sssp(VertexId source, Digest* d) override {
    std::vector<double> dist;
    const double t0 = NowSec();
    CsrSssp(*g_, static_cast<uint32_t>(source), &dist);
    d->seconds = NowSec() - t0;
    d->text = SsspDigest(dist.data(), dist.size());
    return Status::OK();
  }
  Status Wcc(Digest* d) override {
    std::vector<uint32_t> label;
    const double t0 = NowSec();
    CsrWcc(*g_, &label);
    d->seconds = NowSec() - t0;
    d->text = WccDigest<uint32_t>(label.data(), label.size(), kNone);
    return Status::OK();
  }
  Status Tc(Digest* d) override {
    const double t0 = NowSec();
    uint64_t t = CsrTriangles(*g_);
    d->seconds = NowSec() - t0;
    d->text = TcDigest(t);
    return Status::OK();
  }
  Status status() const override { return Status::OK(); }

 private:
  const CsrGraph* g_;
  uint64_t sink_ = 0;
};

class CsrSystem : public System {
 public:
  std::string name() const override { return "csr"; }
  bool dynamic() const override { return false; }
  Status Open(const SystemConfig&) override { return Status::OK(); }
  Status Apply(const EdgeOp*, size_t) override { return Status::NotSupported("csr is static"); }
  Status Build(const EdgeList& list) override { return BuildCsr(list, &g_); }
  Status Persist() override { return Status::OK(); }
  std::unique_ptr<View> NewView() override { return std::make_unique<CsrView>(&g_); }
  SystemStats Stats() override {
    SystemStats s;
    s.stored_edges = g_.num_arcs();
    s.memory_bytes = g_.MemoryBytes();
    return s;
  }
  Status Close() override {
    g_ = CsrGraph();
    return Status::OK();
  }

 private:
  CsrGraph g_;
};

}  // namespace

std::unique_ptr<System> NewCsrSystem() { return std::make_unique<CsrSystem>(); }

}  // namespace strata::bench
