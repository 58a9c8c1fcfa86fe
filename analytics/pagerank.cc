#include "strata/analytics.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <mutex>
#include <optional>
#include <type_traits>

#include <tbb/task_arena.h>

#include "analytics/degree_groups.h"
#include "analytics/kernel_memory.h"
#include "analytics/lane_sum.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "analytics/range_scan.h"
#include "analytics/released_snapshot.h"

namespace strata::analytics {

namespace {

// Sum of f(i, r) over the layout's ranges r = L.ranges[i] (f: a range's partial sum, its
// vertices in order), in range order, so the result does not depend on scheduling.
template <typename Fn>
double DeterministicSum(const Layout& L, Fn&& f) {
  std::vector<double> part(L.ranges.size(), 0.0);
  ForEachRange(L, [&](size_t i, VertexRange r) {
    part[i] = f(i, r);
    return Status::OK();
  });
  double sum = 0;
  for (double p : part) sum += p;
  return sum;
}

// Out-degrees as the iterations read them: deg.Within(bi) is a function giving the degree of
// each vertex u of kLayoutBlock block bi, so that a loop over a block finds where its degrees
// are once rather than per vertex (with a block-table lookup per vertex the contribution pass
// took 12.6% as many samples as the sweeps, 10.5% so: docs/benchmarks.md).
template <typename T>
struct ArrayDegrees {  // an array OutDegrees filled
  const T* d;
  uint64_t operator()(VertexId u) const { return d[u]; }
  ArrayDegrees Within(size_t) const { return *this; }
};
struct CachedDegrees {  // the cache's lengths (ListCache::HasLengths)
  const ListCache* cache;
  struct InBlock {
    const uint32_t* off;  // null: a block without lists
    VertexId base;
    uint64_t operator()(VertexId u) const {
      return off == nullptr ? 0 : off[u - base + 1] - off[u - base];
    }
  };
  InBlock Within(size_t bi) const {
    return {cache->Offsets(bi), static_cast<VertexId>(bi) * kLayoutBlock};
  }
};

// The iterations over layout L, reading lists from `cache` (and from `snap` those it does not
// hold). out_degree: |N_out(u)| over existing neighbors (ArrayDegrees or CachedDegrees).
// The lists name u by cache.groups()->New(u) when the cache renumbers them: contrib is
// indexed so (the ranks are not).
template <typename DegreeOf>
Status Iterate(const Snapshot& snap, const Layout& L, const ListCache& cache,
               const PageRankParams& params, DegreeOf out_degree, UninitVector<float>* rank) {
  const DegreeGroups* const groups = cache.groups();
  const auto start = std::chrono::steady_clock::now();
  Status s;
  const bool pull = HasInEdges(snap.kind());
  const double n = static_cast<double>(L.num_vertices);
  const double d = params.damping;
  // pr: the ranks, in *rank itself. One array holds the last iteration's ranks and then the
  // next's: an iteration reads pr only in its first pass (the contributions and the sink sum,
  // over every vertex) and writes it only in its second, so the new ranks overwrite the old in
  // place. (Two scratch arrays and the copy into *rank at the end held 16 bytes per vertex
  // more, 64 MiB at 2^22 vertices, beside the list cache.)
  // contrib[u] = PR(u) / |N_out(u)|, 0 for sinks and absent vertices.
  // Both in single precision (as GAPBS keeps its scores): the gathers over contrib are the
  // kernel's random accesses, and half the bytes keep twice as much of it in cache; pr in
  // floats is 4 bytes per vertex less beside the list cache (16 MiB at 2^22 vertices). Sums
  // are in double, and each stored value is rounded once (relative error at most 2^-24), so
  // an iteration adds at most 2^-23 to a rank's relative error: 2.4e-6 after 20, far inside
  // Graphalytics' 1e-4.
  // Both are set by the ranges in parallel: a serial fill of the three arrays there were then
  // took 14 ms of a 470-ms, 10-iteration run on a 2^20-vertex memgraph (docs/benchmarks.md).
  UninitVector<float>& pr = *rank;
  pr.resize(L.bound);  // every element is set below
  UninitVector<float> contrib(L.bound);
  // The two arrays took kept pages of the kernel arena (the layout's 8-byte degrees, freed by
  // the caller, leave as many); whatever else it keeps (the layout's stages, a previous run's
  // leftovers) would stay resident beside the list cache to the end: returned now.
  KernelReleaseAll();
  ForEachRange(L, [&](size_t, VertexRange r) {
    for (VertexId v = r.begin; v < r.end; ++v) {
      pr[v] = L.exists[v] ? static_cast<float>(1.0 / n) : 0.0f;
      contrib[v] = 0.0f;
    }
    return Status::OK();
  });
  // Each range's cursors (DegreeGroups::Cursors), found once for all the iterations.
  constexpr int kGroups = DegreeGroups::kGroups;
  std::vector<uint32_t> range_cur(groups != nullptr ? L.ranges.size() * kGroups : 0);
  if (groups != nullptr) {
    ForEachRange(L, [&](size_t i, VertexRange r) {
      groups->Cursors(r.begin, range_cur.data() + i * kGroups);
      return Status::OK();
    });
  }
  // Push mode: partition p owns the sources of ranges [cut[p], cut[p+1]) and accumulates into
  // acc[p]; partitions are summed in index order, so no two tasks ever write the same double.
  std::vector<std::vector<double>> acc;
  std::vector<size_t> cut;
  if (!pull) {
    const size_t parts = std::max<size_t>(
        1, std::min<size_t>(L.ranges.size(), static_cast<size_t>(tbb::this_task_arena::max_concurrency())));
    acc.assign(parts, std::vector<double>(L.bound, 0.0));
    for (size_t p = 0; p <= parts; ++p) cut.push_back(L.ranges.size() * p / parts);
  }

  for (int it = 0; it < params.iterations && s.ok(); ++it) {
    // One pass: each vertex's contribution, and the sinks' rank summed per range. Only a
    // sink's rank is added: adding 0.0 for every other vertex (the same sum: the partial
    // sums are never -0.0) chained a dependent add through every vertex of the range.
    // grouped (std::true_type): contributions at the cache's new IDs, in a loop of its own, so
    // the store-ID loop carries no test per vertex. The new IDs come from a cursor per group
    // (DegreeGroups::Cursors): the range's vertices are taken in ascending order, absent ones
    // too (each holds a new ID), so no map of new IDs is kept through the iterations.
    auto contributions = [&](auto grouped) {
      return DeterministicSum(L, [&](size_t i, VertexRange r) {
        double acc = 0;
        uint32_t cur[kGroups];
        const uint8_t* group_of = nullptr;
        if constexpr (decltype(grouped)::value) {
          std::copy(range_cur.data() + i * kGroups, range_cur.data() + (i + 1) * kGroups, cur);
          group_of = groups->groups();
        }
        for (VertexId b0 = r.begin; b0 < r.end;) {
          const size_t bi = static_cast<size_t>(b0 / kLayoutBlock);
          const VertexId b1 = std::min<VertexId>(r.end, static_cast<VertexId>(bi + 1) * kLayoutBlock);
          const auto deg = out_degree.Within(bi);
          for (VertexId u = b0; u < b1; ++u) {
            VertexId cu = u;
            if constexpr (decltype(grouped)::value) cu = cur[group_of[u]]++;
            if (!L.exists[u]) continue;
            const uint64_t k = deg(u);
            if (k != 0) {
              contrib[cu] = static_cast<float>(pr[u] / static_cast<double>(k));
            } else {
              contrib[cu] = 0.0f;
              acc += pr[u];
            }
          }
          b0 = b1;
        }
        return acc;
      });
    };
    const double sink_sum =
        groups != nullptr ? contributions(std::true_type{}) : contributions(std::false_type{});
    const double base = (1.0 - d) / n + d * sink_sum / n;
    if (pull) {
      // Each range owns its vertices v: sums their in-neighbors' contributions in one stream.
      s = ForEachRange(L, [&](size_t, VertexRange r) {
        const float* const c = contrib.data();
        float* const nx = pr.data();  // written after the contributions were taken
        const uint8_t* const ex = L.exists.data();
        if (params.interleave <= 1) {
          // One sweep over the range: Pass gives vertices ascending, each one's chunks
          // together, so a vertex's rank is written when the next vertex starts, and those
          // between (no in-edges, or absent) get base (or 0) on the way: no pass to zero
          // `pr` and none to finish it (with them an iteration over a 2^20-vertex memgraph
          // took 1.13x the CSR's, 1.06x without). The same sums in the same order as the
          // other branch, so the same ranks to the last bit.
          VertexId done = r.begin;  // pr[v] holds the new rank for v < done
          VertexId open = 0;        // the vertex being summed, when `summing`
          bool summing = false;
          LaneSum sum;
          auto close = [&](VertexId upto) {
            if (summing) {  // Pass gives existing vertices only
              nx[open] = static_cast<float>(base + d * sum.Take());
              done = open + 1;
              summing = false;
            }
            for (; done < upto; ++done) nx[done] = ex[done] ? static_cast<float>(base) : 0.0f;
          };
          // `src` is a pointer, or a long list's runs (Id16Runs) or Elias-Fano record
          // (IdEliasFano), read in place.
          Status st = cache.Pass<true>(snap, L, r, [&](VertexId v, auto src, size_t k) {
            if (!summing || v != open) {
              assert(v >= done && ex[v]);
              close(v);
              summing = true;
              open = v;
            }
            // An Elias-Fano record's pieces of 256 (a multiple of 4) keep Add's lanes: the
            // bits of one call. Its gathers are not prefetched before they are summed: on a
            // Xeon with a 260-MiB L3, 84% of this function's samples waited on such a loop's
            // prefetches (the line fill buffers full), and PageRank paired with the CSR took
            // 1.68x with the loop and 1.55x without (three runs each); on the EPYC it was
            // written for it had bought 5.1 -> 4.9 s (docs/benchmarks.md, "Issue 28:
            // PageRank's Elias-Fano pieces without a prefetch loop").
            ForEachPiece(src, k, [&](const auto& ids, size_t m) { sum.Add(c, ids, m); });
          });
          close(r.end);
          return st;
        }
        // The vertices' lists interleave within a layout block, so each vertex keeps its lanes
        // (in `part`, by its index in the block) until the pass reaches the next block —
        // PassInterleaved goes block by block, ascending — and its rank is written then: the
        // same Adds in the same order per vertex as the sweep above, so the same ranks to the
        // last bit (pieces of kInterleavePiece, a multiple of 4).
        static_assert(ListCache::kInterleavePiece % 4 == 0);
        UninitVector<LaneSum> part(kLayoutBlock);
        VertexId done = r.begin;  // pr[v] holds the new rank for v < done
        auto finish = [&](VertexId upto) {
          for (; done < upto; ++done) {
            LaneSum& p = part[done % kLayoutBlock];
            nx[done] = ex[done] ? static_cast<float>(base + d * p.Take()) : 0.0f;
          }
        };
        auto gather = [&](VertexId v, const auto* src, size_t k) {
          finish(v - v % kLayoutBlock);  // blocks before v's are complete
          part[v % kLayoutBlock].Add(c, src, k);
        };
        const bool pf = params.interleave_prefetch;
        auto prefetch = [c, pf](const auto* src, size_t k) {
          if (!pf) return;
          for (size_t i = 0; i < k; ++i) coro::Prefetch(c + src[i]);
        };
        Status st = cache.PassInterleaved(snap, L, r, params.interleave, prefetch, gather);
        finish(r.end);
        return st;
      });
    } else {
      FirstError err;
      tbb::parallel_for(tbb::blocked_range<size_t>(0, acc.size(), 1),
                        [&](const tbb::blocked_range<size_t>& r) {
        for (size_t p = r.begin(); p < r.end(); ++p) {
          std::vector<double>& a = acc[p];
          std::fill(a.begin(), a.end(), 0.0);
          for (size_t i = cut[p]; i < cut[p + 1] && !err.failed(); ++i) {
            double* const acc_p = a.data();
            const float* const c = contrib.data();
            auto push = [acc_p, c](VertexId u, auto dst, size_t k) {  // Pass<true>: ForEachId
              const double x = c[u];
              ForEachId(dst, k, [&](VertexId v) { acc_p[v] += x; });
            };
            Status st = cache.Pass<true>(snap, L, L.ranges[i], push);
            if (!st.ok()) err.Set(st);
          }
        }
      }, tbb::simple_partitioner());
      s = err.Get();
      ForEachVertex(L, [&](VertexId v) {
        double sum = 0;
        for (const std::vector<double>& a : acc) sum += a[v];
        pr[v] = static_cast<float>(base + d * sum);
        return Status::OK();
      });
    }
  }
  if (params.stats != nullptr) {
    params.stats->iterate_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return Finish(snap, s);
}

// *out = |N_out(u)| for every u < L.bound, as T (wide enough for every degree): counted over
// existing neighbors when edges may dangle (Degree() also counts edges into deleted vertices
// on kDirected stores; one pass over the lists, cheap next to the iterations) or the layout
// kept no degrees, else the layout's degrees, which are exactly that.
template <typename T>
Status OutDegrees(const Snapshot& snap, const Layout& L, const ListCache& cache,
                  UninitVector<T>* out) {
  out->resize(L.bound);  // uninitialized (UninitVector): every element is set below
  T* const deg = out->data();
  const bool count = L.dangling || L.out_degree.empty();
  return ForEachRange(L, [&](size_t, VertexRange r) {
    for (VertexId v = r.begin; v < r.end; ++v) {
      deg[v] = count ? 0 : static_cast<T>(L.out_degree[v]);
    }
    if (!count) return Status::OK();
    return cache.Pass(snap, L, r, [&](VertexId u, const auto*, size_t k) { deg[u] += k; });
  });
}

// Releases a snapshot's vertices below the first block not yet done, or done but not kept
// whole by the list cache (those Pass reads from the snapshot): the layout's blocks finish in
// nearly ascending order (BuildLayout's block_done), so the versions the snapshot pins go as
// the layout passes them instead of all at its end.
class PrefixRelease {
 public:
  PrefixRelease(Snapshot* snap, size_t blocks, VertexId bound)
      : snap_(snap), bound_(bound), kept_(blocks) {}
  // Block b is done; kept: the cache keeps its lists whole (or it has none).
  void Done(size_t b, bool kept) {
    std::lock_guard<std::mutex> g(mu_);
    kept_[b] = kept;
    size_t f = front_;
    while (f < kept_.size() && kept_[f]) ++f;
    if (f == front_) return;
    front_ = f;
    snap_->ReleaseBelow(std::min<VertexId>(bound_, static_cast<VertexId>(f) * kLayoutBlock));
  }
  // Blocks released (a prefix).
  size_t released() const {
    std::lock_guard<std::mutex> g(mu_);
    return front_;
  }

 private:
  Snapshot* const snap_;
  const VertexId bound_;
  mutable std::mutex mu_;
  std::vector<bool> kept_;  // guarded by mu_; false until the block is done and kept
  size_t front_ = 0;  // blocks [0, front_) are released
};

// Layout, list cache, then the iterations, leaving the ranks in *rank. owned: the snapshot
// `snap` is, when the caller handed it over (PageRank on a unique_ptr), let go as the cache
// takes its lists: each block's vertices once the block's lists are kept (PrefixRelease, when
// the lists are the out-lists the layout's pass collects), the whole snapshot once the cache
// holds every list. The layout and the cache are freed when it returns.
Status Ranks(const Snapshot& snap, const PageRankParams& params, UninitVector<float>* rank,
             std::unique_ptr<Snapshot>* owned) {
  // Lists read every iteration: in-lists (pull, when the store keeps them) or out-lists (push),
  // kept decoded in memory when they fit. Out-lists are collected during the layout's pass.
  const auto start = std::chrono::steady_clock::now();
  const bool pull = HasInEdges(snap.kind());
  const Direction list_dir = pull ? InDirection(snap.kind()) : Direction::kOut;
  // One iteration reads each list once: nothing to keep.
  ListCache cache(snap, list_dir, params.iterations > 1 ? params.cache_bytes : 0,
                  /*keep_weights=*/false, params.packing);
  // The pull lists' IDs renumbered by degree group (push mode scatters into sums indexed by
  // the store's IDs: nothing to gain there). Built before the layout's pass: the cache
  // renumbers each block's lists as the block completes.
  DegreeGroups groups;
  bool grouped = false;
  double group_seconds = 0;
  const VertexId bound = snap.VertexIdBound();
  if (pull && params.group_by_degree && bound > DegreeGroups::kMinBound && bound <= UINT32_MAX) {
    const auto g0 = std::chrono::steady_clock::now();
    Status gs = groups.Build(snap, Direction::kOut);  // how often u is gathered: |N_out(u)|
    if (!gs.ok()) return gs;
    grouped = cache.set_groups(&groups);
    group_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
  }
  std::optional<PrefixRelease> prefix;
  const bool release_early =
      owned != nullptr && list_dir == Direction::kOut && params.iterations > 1;
  if (release_early) {
    prefix.emplace(owned->get(), static_cast<size_t>((bound + kLayoutBlock - 1) / kLayoutBlock),
                   bound);
  }
  auto block_done = [&](size_t b) { prefix->Done(b, cache.EndBlock(b)); };
  FunctionRef<void(size_t)> done_ref(block_done);
  // The layout's 8-byte degrees only when the iterations may read them: the in-lists' cache
  // gives in-degrees, so a pull over in-lists needs them for its out-degrees; when the kept
  // lists are the out-lists their lengths are the degrees (or, if some are streamed, a pass
  // over the lists counts them: OutDegrees). 32 MiB less at 2^22 vertices beside the cache.
  Layout L;
  Status s = BuildLayout(
      snap, &L,
      [&](VertexId u, const NeighborChunk& c, uint64_t) {
        if (list_dir == Direction::kOut) cache.Collect(u, c);
      },
      /*weights=*/false, release_early ? &done_ref : nullptr,
      /*keep_degrees=*/list_dir != Direction::kOut);
  if (!s.ok()) return s;
  s = cache.Complete(snap, L);
  if (!s.ok()) return s;
  // Every list kept renumbered: the map of new IDs has done its work (only Pass's streamed
  // blocks would read it again), and its 4 bytes a vertex go before the iterations' arrays.
  if (grouped && cache.HoldsAll()) groups.DropMap();
  if (params.stats != nullptr) {
    params.stats->cache_budget = cache.budget();
    params.stats->cache_bytes = cache.bytes();
    params.stats->streamed_blocks = cache.dropped_blocks();
    params.stats->packed_blocks = cache.packed_blocks();
    params.stats->snapshot_released = false;
    params.stats->degrees_from_cache = false;
    params.stats->grouped = grouped;
    params.stats->group_seconds = group_seconds;
    params.stats->released_blocks = prefix ? prefix->released() : 0;
    params.stats->prepare_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    params.stats->iterate_seconds = 0;  // set by Iterate
  }
  if (L.num_vertices == 0) {
    rank->assign(L.bound, 0.0f);
    return Finish(snap, s);
  }
  // The iterations read only the cache (Pass and PassInterleaved read a snapshot only for
  // lists not kept): the versions this snapshot held may go. A read that came anyway would
  // fail the run (ReleasedSnapshot), not touch them.
  auto iterate = [&](auto out_degree) {
    if (owned != nullptr && cache.HoldsAll()) {
      // Its counts from the layout, which is exact (a scan of every vertex for them took
      // 75-95 ms of a 0.65-0.7 s run at scale 20, and a partly released snapshot refuses it).
      const ReleasedSnapshot released(snap, L.num_vertices, L.num_out_edges);
      if (!released.status().ok()) return released.status();
      owned->reset();
      if (params.stats != nullptr) params.stats->snapshot_released = true;
      return Iterate(released, L, cache, params, out_degree, rank);
    }
    return Iterate(snap, L, cache, params, out_degree, rank);
  };
  // The layout's 8-byte degrees are freed before the iterations, whose two 4-byte arrays take
  // their pages (Iterate returns the arena's other kept pages once it has them: purged before,
  // those arrays faulted in 8 bytes a vertex again).
  auto free_layout_degrees = [&L] { L.out_degree = UninitVector<uint64_t>(); };
  if (list_dir == Direction::kOut && !L.dangling && cache.HasLengths()) {
    // The kept lists are the out-lists, over existing neighbors: their lengths are the degrees
    // (no array of them: by arithmetic, 16 MiB less at 2^22 vertices).
    if (params.stats != nullptr) params.stats->degrees_from_cache = true;
    free_layout_degrees();
    return iterate(CachedDegrees{&cache});
  }
  // Else the degrees the iterations divide by, in 4 bytes when every one fits: no degree
  // exceeds its range's edges (the layout's degrees, which are at least the counts, summed),
  // so only a range of more than 2^32 edges asks for 8.
  const bool narrow = L.range_edges.empty() ||
      *std::max_element(L.range_edges.begin(), L.range_edges.end()) <= UINT32_MAX;
  auto run = [&](auto width) {
    UninitVector<decltype(width)> degree;
    Status st = OutDegrees(snap, L, cache, &degree);
    if (!st.ok()) return Finish(snap, st);
    free_layout_degrees();
    return iterate(ArrayDegrees<decltype(width)>{degree.data()});
  };
  return narrow ? run(uint32_t{}) : run(uint64_t{});
}

// Ranks, then *rank in double precision from its single-precision ranks, made only after
// Ranks' list cache is freed and from the kernel arena, on the pages the cache left (kept
// there for kKernelDecayMs): at 2^22 vertices the 32-MiB result is never beside the cache, and
// takes no new pages either (from the default arenas it did: 4 MiB more at the quick suite's
// scale 20 than the double ranks it replaced, docs/benchmarks.md). Whatever *rank held is
// released first, so a caller's earlier result is not beside the cache either.
Status Run(const Snapshot& snap, const PageRankParams& params, std::vector<double>* rank,
           std::unique_ptr<Snapshot>* owned) {
  std::vector<double>().swap(*rank);
  UninitVector<float> pr;
  Status s = Ranks(snap, params, &pr, owned);
  if (!s.ok()) return s;
  KernelArenaScope in_kernel_arena;
  rank->assign(pr.begin(), pr.end());  // one pass: no zero fill before the copy
  return s;
}

}  // namespace

Status PageRank(const Snapshot& snap, const PageRankParams& params, std::vector<double>* rank) {
  return Run(snap, params, rank, nullptr);
}

Status PageRank(std::unique_ptr<Snapshot> snap, const PageRankParams& params,
                std::vector<double>* rank) {
  if (snap == nullptr) return Status::InvalidArgument("analytics: PageRank on a null snapshot");
  const Snapshot& s = *snap;
  return Run(s, params, rank, &snap);
}

}  // namespace strata::analytics
