#include "strata/analytics.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <type_traits>
#include <utility>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_sort.h>

#include "analytics/bitmap.h"
#include "analytics/frontier.h"
#include "analytics/layout.h"
#include "analytics/list_cache.h"
#include "analytics/range_scan.h"

namespace strata::analytics {

namespace {

using Queue = std::vector<VertexId>;

// *q = the parts concatenated in order, allocated once (a frontier can be millions of
// vertices: growing it by doubling faulted in and copied each larger buffer).
void AppendParts(const std::vector<Queue>& parts, Queue* q) {
  size_t n = 0;
  for (const Queue& p : parts) n += p.size();
  q->clear();
  q->reserve(n);
  for (const Queue& p : parts) q->insert(q->end(), p.begin(), p.end());
}

// A batch read of a list costs this many times its decoding in a stream (it materializes
// the runs of a vertex on several levels); PlanListReads weighs a top-down step's lookups
// with it.
constexpr uint64_t kLookupEdgeFactor = 4;

// Top-down step. Invariant: every vertex of `frontier` has depth `level`; `seen` holds exactly
// the vertices with a depth. Each unvisited out-neighbor gets depth level + 1 and joins *next
// once. *scout: on entry the sum of the frontier's out-degrees, on return the new frontier's.
// The frontier is read in sorted chunks of `batch` vertices (ForEachFrontierNeighbor), or,
// when PlanListReads streams some ranges, by those streams and lookups of the rest.
// A small frontier claims each neighbor with an atomic bit of `seen`. A large one (streamed,
// or with lists of more edges than bound / 64) marks neighbors in per-thread bitmaps without
// atomics and merges them per range afterwards: an atomic read-modify-write waits for every
// memory access before it, so a claim per edge serialized the step on its misses (depth[] and
// out_degree[] of each new vertex); the merge writes those in vertex order, and *next comes
// out sorted.
Status TopDownStep(const Snapshot& snap, const Layout& L, const ListCache* cache, int64_t level,
                   Queue& frontier, size_t batch, uint64_t lookup_cost, std::vector<int64_t>& depth,
                   Bitmap& seen, Bitmap& streamed, Queue* next, uint64_t* scout) {
  std::vector<size_t> stream_ranges;
  Queue lookups;
  if (batch != 0) {
    tbb::parallel_sort(frontier.begin(), frontier.end());
    PlanListReads(L, frontier.data(), frontier.size(), cache, lookup_cost, kLookupEdgeFactor,
                  &stream_ranges, &lookups, [&](VertexId v) { streamed.Set(v); });
  }
  // The lists not streamed (every list when batch is 0: one ScanNeighbors per vertex).
  const Queue& looked_up = batch != 0 ? lookups : frontier;
  // Claims cost an atomic per edge, marks a merge of bound / 64 words per thread: a frontier
  // whose lists hold fewer edges than that claims.
  const uint64_t frontier_edges = *scout;
  next->clear();
  *scout = 0;
  if (stream_ranges.empty() && frontier_edges < L.bound / 64) {
    struct Local {
      Queue q;
      uint64_t scout = 0;
    };
    tbb::enumerable_thread_specific<Local> local;
    Status s = ForEachFrontierNeighbor(
        snap, frontier.data(), frontier.size(), Direction::kOut, L, batch, [&] {
          return [&depth, &seen, &L, level, &mine = local.local()](VertexId, VertexId v) {
            if (seen.Claim(v)) {  // the bitmap, not depth[], takes the random probes
              depth[v] = level + 1;
              mine.q.push_back(v);
              mine.scout += L.out_degree[v];
            }
            return true;
          };
        },
        cache);
    for (Local& l : local) {
      next->insert(next->end(), l.q.begin(), l.q.end());
      *scout += l.scout;
    }
    return s;
  }
  tbb::enumerable_thread_specific<Bitmap> marks([&] {
    Bitmap b;
    b.Resize(L.bound);
    return b;
  });
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, stream_ranges.size(), 1),
                    [&](const tbb::blocked_range<size_t>& rr) {
    Bitmap& mine = marks.local();
    for (size_t k = rr.begin(); k < rr.end() && !err.failed(); ++k) {
      const VertexRange r = L.ranges[stream_ranges[k]];
      err.Set(ScanRangeSteps(snap, r, Direction::kOut, L, /*weights=*/false,
                             AdjacencyScan{streamed.Members(), false, /*any_order=*/true},
                             [&](VertexId, const VertexId* dst, const double*, size_t n) {
                               for (size_t i = 0; i < n; ++i) mine.Set(dst[i]);
                               return ScanStep::kMore;
                             }));
      streamed.Clear(r);
    }
  }, tbb::simple_partitioner());
  Status s = err.Get();
  if (s.ok()) {
    s = ForEachFrontierNeighbor(
        snap, looked_up.data(), looked_up.size(), Direction::kOut, L, batch, [&] {
          return [&mine = marks.local()](VertexId, VertexId v) {
            mine.Set(v);
            return true;
          };
        },
        cache);
  }
  // Merge: a range owns its bitmap words (ranges start at multiples of 64), so only its task
  // reads and clears them in every thread's marks and sets them in `seen`.
  std::vector<Bitmap*> all;
  for (Bitmap& b : marks) all.push_back(&b);
  std::vector<Queue> parts(L.ranges.size());
  std::vector<uint64_t> scouts(L.ranges.size(), 0);
  Status m = ForEachRange(L, [&](size_t ri, VertexRange r) {
    uint64_t sc = 0;
    for (size_t i = static_cast<size_t>(r.begin >> 6); i < (r.end + 63) >> 6; ++i) {
      uint64_t w = 0;
      for (Bitmap* b : all) w |= b->TakeWord(i);
      w &= ~seen.Word(i);
      seen.OrWord(i, w);
      for (; w != 0; w &= w - 1) {
        const VertexId v = static_cast<VertexId>(i) * 64 + static_cast<VertexId>(__builtin_ctzll(w));
        depth[v] = level + 1;
        parts[ri].push_back(v);
        sc += L.out_degree[v];
      }
    }
    scouts[ri] = sc;
    return Status::OK();
  });
  if (s.ok()) s = m;
  AppendParts(parts, next);
  for (uint64_t sc : scouts) *scout += sc;
  return s;
}

// Vertices whose out-degree exceeds this scan their in-lists alone in bottom-up steps (they
// usually find a parent within the first chunk); the others are read in batches.
constexpr uint64_t kBottomUpAloneDegree = 1024;

// The in-lists of unvisited vertices, per layout range, as a bottom-up stream read them: a
// vertex that finds no parent has read its whole list, and it is the next step's work.
// Invariant of a complete range: it holds the whole in-list (existing neighbors, in the order
// the stream gave them: ascending per run, an entry possibly once per run) of every vertex of
// the range that had no depth when it was filled and has a non-empty list, so a bottom-up
// step over the range reads nothing else (a vertex not held has no in-neighbor and is never
// found). Each step drops the vertices it finds, in place: the arrays only shrink.
// Id: uint32_t when every vertex ID fits (half the memory), else VertexId.
template <class Id>
class UnvisitedLists {
  struct Range;

 public:
  UnvisitedLists(size_t ranges, size_t budget) : budget_(budget), r_(ranges) {}
  bool enabled() const { return budget_ > 0; }
  bool complete(size_t ri) const { return r_[ri].complete; }

  // Fills range ri during one stream over its unvisited vertices (ascending, each vertex's
  // chunks consecutive): Add(v, chunk) for every chunk read without a parent in it, Found(v)
  // when v found its parent (its entries are dropped), Close() at the end of a pass that
  // succeeded (a Filler destroyed unclosed leaves the range incomplete). Gives up
  // (the range stays incomplete, its memory freed) once it would pass the budget.
  class Filler {
   public:
    // Only for a range that is not complete (a complete one is searched, never refilled).
    Filler(UnvisitedLists* l, size_t ri) : l_(l), r_(l->r_[ri]), ok_(l->enabled()) {
      assert(!r_.complete && r_.v.empty());
    }
    void Add(VertexId v, const VertexId* src, size_t n) {
      if (!ok_) return;
      if (r_.v.empty() || r_.v.back() != v) {
        r_.v.push_back(static_cast<Id>(v));
        r_.off.push_back(static_cast<uint32_t>(r_.ids.size()));
      }
      r_.ids.insert(r_.ids.end(), src, src + n);  // narrowed to Id: every ID < the bound
      const size_t used = l_->used_.load(std::memory_order_relaxed);
      if (r_.ids.size() > UINT32_MAX || used + r_.Bytes() > l_->budget_) Abandon();
    }
    ~Filler() {
      if (ok_ && !r_.complete) Abandon();  // not closed: the pass failed
    }
    Filler(const Filler&) = delete;
    Filler& operator=(const Filler&) = delete;
    // v found its parent (in a chunk not yet added, or after some were).
    void Found(VertexId v) {
      if (!ok_ || r_.v.empty() || r_.v.back() != v) return;
      r_.ids.resize(r_.off.back());
      r_.v.pop_back();
      r_.off.pop_back();
    }
    void Close() {
      if (!ok_) return;
      r_.off.push_back(static_cast<uint32_t>(r_.ids.size()));
      const size_t b = r_.Bytes();
      if (l_->used_.fetch_add(b, std::memory_order_relaxed) + b > l_->budget_) {
        l_->used_.fetch_sub(b, std::memory_order_relaxed);
        Abandon();
        return;
      }
      r_.complete = true;
    }

   private:
    void Abandon() {
      ok_ = false;
      r_.Free();
    }
    UnvisitedLists* l_;
    Range& r_;
    bool ok_;
  };

  // One bottom-up step over complete range ri: for each held vertex v without a bit in
  // `seen`, search(v, list, n) -> true when v found its parent (v is then dropped). Vertices
  // with a bit in `seen` (visited by a top-down step since) are dropped too.
  template <class Search>
  void Step(size_t ri, const Bitmap& seen, Search&& search);

 private:
  struct Range {
    bool complete = false;        // its bytes are counted in used_ (and stay: steps only shrink it)
    std::vector<Id> v;            // ascending
    std::vector<uint32_t> off;    // v.size() + 1 once closed: v[k]'s list is ids[off[k], off[k + 1])
    std::vector<Id> ids;
    size_t Bytes() const {
      return (v.capacity() + ids.capacity()) * sizeof(Id) + off.capacity() * sizeof(uint32_t);
    }
    void Free() {
      complete = false;
      std::vector<Id>().swap(v);
      std::vector<uint32_t>().swap(off);
      std::vector<Id>().swap(ids);
    }
  };
  friend class Filler;
  size_t budget_;
  std::atomic<size_t> used_{0};
  std::vector<Range> r_;
};

template <class Id>
template <class Search>
void UnvisitedLists<Id>::Step(size_t ri, const Bitmap& seen, Search&& search) {
  Range& r = r_[ri];
  size_t w = 0;
  uint32_t e = 0;  // kept: v[0, w), ids[0, e)
  for (size_t k = 0; k < r.v.size(); ++k) {
    const Id v = r.v[k];
    const uint32_t b = r.off[k], end = r.off[k + 1];  // read before off[w] (w <= k) is written
    if (seen.Get(v) || search(v, r.ids.data() + b, static_cast<size_t>(end - b))) continue;
    r.v[w] = v;
    r.off[w] = e;
    if (e != b) std::copy(r.ids.begin() + b, r.ids.begin() + end, r.ids.begin() + e);  // e < b
    e += end - b;
    ++w;
  }
  r.v.resize(w);
  r.off.resize(w + 1);
  r.off[w] = e;
  r.ids.resize(e);
}

// Calls fn(v) for every existing vertex of range r without a bit in `seen`, ascending: words
// whose 64 vertices are all visited cost one load. An fn returning bool stops the walk with
// false.
template <class Fn>
void ForEachUnseen(const Layout& L, const Bitmap& seen, VertexRange r, Fn&& fn) {
  for (size_t i = static_cast<size_t>(r.begin >> 6); i < (r.end + 63) >> 6; ++i) {
    const VertexId base = static_cast<VertexId>(i) * 64;
    uint64_t m = ~seen.Word(i);
    if (r.end - base < 64) m &= (uint64_t{1} << (r.end - base)) - 1;  // the bound's word
    for (; m != 0; m &= m - 1) {
      const VertexId v = base + static_cast<VertexId>(__builtin_ctzll(m));
      if (!L.exists[v]) continue;
      if constexpr (std::is_same_v<decltype(fn(v)), bool>) {
        if (!fn(v)) return;
      } else {
        fn(v);
      }
    }
  }
}

// Whether streaming range r's in-lists costs less than looking up its unvisited vertices'
// lists (kLookupCostEdges; out-degree estimates the in-degree, exact when undirected). A
// stream decodes only unvisited vertices' lists, up to their parent; the lists it skips are
// still read past (counted at an eighth of their decoding).
bool StreamCheaper(const Layout& L, VertexRange r, const Bitmap& seen, uint64_t range_edges,
                   uint64_t lookup_cost) {
  uint64_t unvisited = 0, unvisited_edges = 0;
  bool lookups_past_stream = false;
  ForEachUnseen(L, seen, r, [&](VertexId v) {
    ++unvisited;
    unvisited_edges += L.out_degree[v];
    // The lookups so far cost more than any stream of the range (at most range_edges): no
    // need to count the rest (an early bottom-up step stops a fifth of the way in).
    lookups_past_stream = unvisited * lookup_cost > range_edges;
    return !lookups_past_stream;
  });
  if (lookups_past_stream) return true;
  const uint64_t stream = unvisited_edges + (range_edges - unvisited_edges) / 8;
  const uint64_t lookup = unvisited_edges + unvisited * lookup_cost;
  return lookup > stream;
}

// Sum of the out-degrees of range r's vertices in `next` (the ones a bottom-up step woke).
uint64_t WokenEdges(const Layout& L, VertexRange r, const Bitmap& next) {
  uint64_t e = 0;
  for (size_t i = static_cast<size_t>(r.begin >> 6); i < (r.end + 63) >> 6; ++i) {
    for (uint64_t m = next.Word(i); m != 0; m &= m - 1) {
      e += L.out_degree[i * 64 + static_cast<size_t>(__builtin_ctzll(m))];
    }
  }
  return e;
}

// Whether a bottom-up step over the `unvisited` vertices (their lists: `unvisited_edges`
// entries) costs less than a top-down step over a frontier of `frontier` vertices whose lists
// hold `frontier_edges`, when every list is a lookup (kLookupCostEdges): a late step of a
// search, where few vertices are left to find but the frontier that found the last ones is
// large, reads the few (Beamer's rule compares edges alone, right for a CSR, where a lookup is
// free).
bool FewLeft(uint64_t unvisited, uint64_t unvisited_edges, uint64_t frontier,
             uint64_t frontier_edges) {
  return unvisited * kLookupCostEdges + unvisited_edges <
         frontier * kLookupCostEdges + frontier_edges;
}

// Bottom-up step. Invariant: front.Get(u) iff depth[u] == level. Every unvisited vertex scans
// its in-neighbors and stops at the first one in the frontier; only v's own task (its range's)
// writes depth[v] and v's bit of next. Returns in *awake the size of the new frontier and in
// *awake_edges the sum of its out-degrees. With batch > 0 the
// unvisited vertices of a range with out-degree <= kBottomUpAloneDegree (an estimate of the
// in-degree; exact when undirected) are read `batch` at a time with ScanNeighborsBatch, in
// ascending order, so their runs come in a few large reads; their lists are read whole. A
// range whose lookups would cost more than one pass over it (StreamCheaper) is streamed, and
// `lists` keeps what the stream read of the vertices that stay unvisited; a range it holds
// whole is then searched from memory alone.
template <class Lists>
Status BottomUpStep(const Snapshot& snap, const Layout& L, int64_t level, size_t batch,
                    uint64_t lookup_cost, const ListCache* cache, Lists* lists, const Bitmap& front,
                    Bitmap& next, std::vector<int64_t>& depth, Bitmap& seen, uint64_t* awake,
                    uint64_t* awake_edges) {
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> edges{0};
  const Direction in = InDirection(L.kind);
  Status s = ForEachRange(L, [&](size_t ri, VertexRange r) -> Status {
    uint64_t c = 0;
    // Whether v has a parent in the frontier among src[0, n) (then v joins the next one).
    auto find_parent = [&](VertexId v, const auto* src, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (!front.Get(src[i])) continue;
        depth[v] = level + 1;
        next.Set(v);
        ++c;
        return true;
      }
      return false;
    };
    auto finish = [&] {
      count.fetch_add(c, std::memory_order_relaxed);
      edges.fetch_add(WokenEdges(L, r, next), std::memory_order_relaxed);
      seen.OrRange(next, r);
    };
    // The range's unvisited vertices' lists are in memory: nothing else to read.
    if (lists->complete(ri)) {
      next.Clear(r);
      lists->Step(ri, seen, find_parent);
      finish();
      return Status::OK();
    }
    // Whole-range passes: in-lists held in memory, or streamed when that is cheaper than
    // lookups (an early bottom-up step, most of the range unvisited). The stream reads only
    // unvisited vertices' lists, without weights, each up to its first frontier neighbor, and
    // keeps the lists of the vertices that found none (UnvisitedLists) for the next steps.
    if (cache != nullptr || (batch != 0 && StreamCheaper(L, r, seen, L.range_edges[ri], lookup_cost))) {
      next.Clear(r);
      Status st;
      if (cache != nullptr) {
        st = cache->Pass(snap, L, r, [&](VertexId v, const auto* src, size_t n) {
          // Visited earlier, or found in this step (seen is updated after the pass).
          if (!seen.Get(v) && !next.Get(v)) find_parent(v, src, n);
        });
      } else {
        typename Lists::Filler fill(lists, ri);
        st = ScanRangeSteps(snap, r, in, L, /*weights=*/false,
                            AdjacencyScan{seen.Members(/*complement=*/true), false,
                                          /*any_order=*/true},
                            [&](VertexId v, const VertexId* src, const double*, size_t n) {
                              if (find_parent(v, src, n)) {
                                fill.Found(v);
                                return ScanStep::kNextVertex;
                              }
                              fill.Add(v, src, n);
                              return ScanStep::kMore;
                            });
        if (st.ok()) fill.Close();
      }
      finish();
      return st;
    }
    std::vector<VertexId> todo;
    bool bad = false;
    auto flush = [&]() -> Status {
      Status st = snap.ScanNeighborsBatch(todo.data(), todo.size(), in, /*weights=*/false,
                                          [&](size_t i, const NeighborChunk& ch) {
        const VertexId v = todo[i];
        if (next.Get(v)) return true;  // found its parent in an earlier chunk
        for (size_t j = 0; j < ch.size; ++j) {
          const VertexId u = ch.dst[j];
          if (u >= L.bound) {
            bad = true;
            return false;
          }
          if (!front.Get(u) || (L.dangling && !L.exists[u])) continue;
          depth[v] = level + 1;
          next.Set(v);
          ++c;
          break;
        }
        return true;
      });
      todo.clear();
      if (st.ok() && bad) st = Status::Corruption("analytics: neighbor ID >= VertexIdBound()");
      return st;
    };
    next.Clear(r);
    Status st;
    ForEachUnseen(L, seen, r, [&](VertexId v) {
      if (!st.ok()) return;
      if (batch != 0 && L.out_degree[v] <= kBottomUpAloneDegree) {
        todo.push_back(v);
        if (todo.size() == batch) st = flush();
        return;
      }
      st = ScanEach(snap, v, in, L, [&](VertexId u, double) {
        if (!front.Get(u)) return true;
        depth[v] = level + 1;
        next.Set(v);
        ++c;
        return false;
      });
    });
    if (!st.ok()) return st;
    if (!todo.empty()) {
      Status st = flush();
      if (!st.ok()) return st;
    }
    finish();
    return Status::OK();
  });
  *awake = count.load();
  *awake_edges = edges.load();
  return s;
}

void QueueToBitmap(const Queue& q, Bitmap* bits) {
  bits->ClearAll();
  for (VertexId v : q) bits->Set(v);
}

// The frontier in ascending vertex order (ranges are ascending and concatenated in order).
void BitmapToQueue(const Layout& L, const Bitmap& bits, Queue* q) {
  std::vector<Queue> parts(L.ranges.size());
  ForEachRange(L, [&](size_t i, VertexRange r) {
    for (size_t k = static_cast<size_t>(r.begin >> 6); k < (r.end + 63) >> 6; ++k) {
      for (uint64_t m = bits.Word(k); m != 0; m &= m - 1) {
        parts[i].push_back(k * 64 + static_cast<VertexId>(__builtin_ctzll(m)));
      }
    }
    return Status::OK();
  });
  AppendParts(parts, q);
}

// The steps of a search from params.source, whose depth is set (0) and every other depth
// kUnreachable. Id: the ID width of the lists kept between bottom-up steps.
template <class Id>
Status Search(const Snapshot& snap, const BfsParams& params, const Layout& L,
              const ListCache& cache, bool keep, bool cache_in, std::vector<int64_t>* depth) {
  const VertexId src = params.source;
  Status s;
  const bool can_bottom_up = HasInEdges(L.kind);
  const uint64_t alpha = std::max(1, params.alpha), beta = std::max(1, params.beta);
  // Bottom-up steps that read undirected lists from the cache keep nothing.
  UnvisitedLists<Id> lists(L.ranges.size(), cache_in ? 0 : params.unvisited_bytes);
  Queue frontier{src}, next;
  Bitmap front, back, seen;  // seen: the vertices with a depth
  Bitmap streamed;           // a top-down step's streamed frontier vertices; clear between steps
  seen.Resize(L.bound);
  streamed.Resize(L.bound);
  seen.Claim(src);
  uint64_t edges_to_check = L.num_out_edges;  // out-edges of unexpanded vertices (estimate)
  uint64_t scout = L.out_degree[src];         // out-edges of the current frontier
  int64_t level = 0;                          // depth of the current frontier
  // The unvisited vertices and their out-edges (estimate). Without a cache every step reads
  // lists by lookups or streams, so FewLeft may choose bottom-up too.
  uint64_t unvisited = L.num_vertices - 1;
  uint64_t unvisited_edges = L.num_out_edges - std::min(L.num_out_edges, L.out_degree[src]);
  auto few_left = [&](uint64_t frontier_size, uint64_t frontier_edges) {
    return !keep && FewLeft(unvisited, unvisited_edges, frontier_size, frontier_edges);
  };
  using Clock = std::chrono::steady_clock;
  auto record = [&](bool bottom_up, uint64_t size, uint64_t found, Clock::time_point t0) {
    if (params.stats == nullptr) return;
    params.stats->steps.push_back(
        {bottom_up, size, found, std::chrono::duration<double>(Clock::now() - t0).count()});
  };
  while (!frontier.empty() && s.ok()) {
    if (can_bottom_up && (scout > edges_to_check / alpha || few_left(frontier.size(), scout))) {
      front.Resize(L.bound);
      back.Resize(L.bound);
      QueueToBitmap(frontier, &front);
      uint64_t awake = frontier.size(), old_awake, awake_edges = 0;
      do {
        old_awake = awake;
        const Clock::time_point t0 = Clock::now();
        s = BottomUpStep(snap, L, level, params.fetch_batch, params.lookup_cost_edges, cache_in ? &cache : nullptr, &lists,
                         front, back, *depth, seen, &awake, &awake_edges);
        if (s.ok()) record(true, old_awake, awake, t0);
        unvisited -= std::min(unvisited, awake);
        unvisited_edges -= std::min(unvisited_edges, awake_edges);
        ++level;
        front.swap(back);
      } while (s.ok() && awake > 0 &&
               (awake >= old_awake || awake > L.num_vertices / beta || few_left(awake, awake_edges)));
      BitmapToQueue(L, front, &frontier);
      scout = awake_edges;  // an estimate, like every degree here
    } else {
      edges_to_check -= std::min(edges_to_check, scout);
      const Clock::time_point t0 = Clock::now();
      const uint64_t size = frontier.size();
      s = TopDownStep(snap, L, keep ? &cache : nullptr, level, frontier, params.fetch_batch,
                      params.lookup_cost_edges, *depth, seen, streamed, &next, &scout);
      if (s.ok()) record(false, size, next.size(), t0);
      unvisited -= std::min<uint64_t>(unvisited, next.size());
      unvisited_edges -= std::min(unvisited_edges, scout);
      ++level;
      std::swap(frontier, next);
    }
  }
  return s;
}

}  // namespace

Status Bfs(const Snapshot& snap, const BfsParams& params, std::vector<int64_t>* depth) {
  // Keep the out-lists the layout streams: top-down steps read them, and bottom-up steps on
  // undirected stores (whose in-lists they are).
  const auto t0 = std::chrono::steady_clock::now();
  if (params.stats != nullptr) *params.stats = BfsStats();
  const bool keep = params.cache_bytes > 0;
  const bool cache_in = keep && snap.kind() == GraphKind::kUndirected;
  // Without a cache the layout decodes nothing: degrees only steer the direction switches.
  ListCache cache(snap, Direction::kOut, keep ? params.cache_bytes : 0);
  Layout L;
  Status s;
  // The depth array (8 bytes per vertex ID) is filled while the layout
  // runs: one thread's page faults and writes, which the layout's tasks overlap instead of
  // waiting for them.
  tbb::parallel_invoke([&] { depth->assign(snap.VertexIdBound(), kUnreachable); },
                       [&] {
                         s = keep ? BuildLayout(snap, &L,
                                                [&](VertexId u, const NeighborChunk& c, uint64_t) {
                                                  cache.Collect(u, c);
                                                })
                                  : EstimateLayout(snap, &L);
                         if (s.ok() && keep) s = cache.Complete(snap, L);
                       });
  if (!s.ok()) return s;
  assert(depth->size() == L.bound);  // the layout took the same snap.VertexIdBound()
  if (params.stats != nullptr) {
    params.stats->layout_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const VertexId src = params.source;
  if (src >= L.bound || !L.exists[src]) return Status::InvalidArgument("BFS: source does not exist");
  (*depth)[src] = 0;

  const bool narrow = L.bound <= (VertexId{1} << 32);
  s = narrow ? Search<uint32_t>(snap, params, L, cache, keep, cache_in, depth)
             : Search<VertexId>(snap, params, L, cache, keep, cache_in, depth);
  return Finish(snap, s);
}

}  // namespace strata::analytics
