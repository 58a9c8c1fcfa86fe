#include "db/tier_reader.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <functional>
#include <optional>

#include "segment/segment_format.h"
#include "util/coro.h"

namespace strata {

namespace {

inline uint64_t SubgraphOf(VertexId v) { return v >> mem::kSubgraphBits; }
inline uint32_t LocalOf(VertexId v) { return static_cast<uint32_t>(v & (mem::kSubgraphSize - 1)); }

inline const mem::Adjacency* Adj(const mem::SubgraphVersion* sv, uint8_t dir) {
  return dir == 0 ? &sv->out : sv->in();
}

constexpr size_t kChunk = 512;
// ScanAdjacency serves readers that often stop after a few neighbors (a bottom-up BFS step,
// WCC's sampling): a file run's first batch is this many records (ReadOptions::first_batch)
// and a merged list's first chunk as many entries — no more, so the merge does not load a
// run's second batch before its reader has seen the first chunk. Later pieces and chunks
// double (NeighborIterator::Next, ChunkEmitter).
constexpr size_t kPrefixBatch = 16;

// Buffers live entries and hands them out as NeighborChunks.
class ChunkEmitter {
 public:
  // first: entries in the first chunk (at most kChunk); each later chunk holds twice as many
  // as the one before, up to kChunk (a merge that stops early merges little past its stop).
  ChunkEmitter(bool weighted, FunctionRef<bool(const NeighborChunk&)> fn, size_t first = kChunk)
      : weighted_(weighted), fn_(fn), limit_(first) {}
  bool Add(uint64_t k, double w) {
    dst_[n_] = k;
    w_[n_] = w;
    if (++n_ == limit_) return Flush();
    return true;
  }
  // Direct filling for merge loops: room left, where the next entry goes, and Commit(n) after
  // writing n entries there (flushes a full chunk).
  bool weighted() const { return weighted_; }
  size_t Room() const { return limit_ - n_; }
  uint64_t* DstTail() { return dst_ + n_; }
  double* WeightTail() { return w_ + n_; }
  bool Commit(size_t n) {
    n_ += n;
    return n_ == limit_ ? Flush() : true;
  }
  bool Flush() {
    if (n_ == 0) return true;
    NeighborChunk c{dst_, weighted_ ? w_ : nullptr, n_};
    n_ = 0;
    limit_ = std::min(kChunk, 2 * limit_);
    return fn_(c);
  }

 private:
  bool weighted_;
  FunctionRef<bool(const NeighborChunk&)> fn_;
  uint64_t dst_[kChunk];
  double w_[kChunk];
  size_t n_ = 0;
  size_t limit_;  // entries that make the chunk full: first, doubling up to kChunk
};

// Vertex i's live entries in memgraph run a, which nothing lies under (so its tombstones hide
// nothing and are only dropped): chunks without tombstones go to fn as they are, the others
// through `out` (whose function is fn too; flushed at the end). False when fn stopped. A
// template, so that a range scan's per-chunk call is direct (one indirect call fewer per chunk:
// ~2 ms of a ~90-ms PageRank layout on a 2^20-vertex memgraph, docs/benchmarks.md).
template <class Fn>
bool ScanLoneMemRun(const mem::Adjacency& a, uint32_t i, mem::VertexAt* at, bool weighted,
                    ChunkEmitter* out, Fn&& fn) {
  bool go = true;
  mem::ScanVertex(a, i, at, [&](const uint64_t* k, const double* w, const uint8_t* tomb,
                                size_t n) {
    if (tomb == nullptr) {
      if (!out->Flush()) return go = false;
      return go = fn(NeighborChunk{k, weighted ? w : nullptr, n});
    }
    for (size_t j = 0; j < n; ++j) {
      if (!tomb[j] && !out->Add(k[j], w ? w[j] : 1.0)) return go = false;
    }
    return true;
  });
  return go && out->Flush();
}

// A vertex's entries of one tier, materialized (columns, so a run reads like an EdgeBatch).
// Used for memgraph runs and for disk runs read out of order (batch reads). Weights are kept
// only when `weighted` (the merge emits them); an unweighted buffer's MergeRun has none.
struct RunBuffer {
  explicit RunBuffer(bool weighted = true) : weighted(weighted) {}
  bool weighted;
  std::vector<uint64_t> key;
  std::vector<double> w;
  std::vector<uint8_t> tomb;
  void Clear() {
    key.clear();
    w.clear();
    tomb.clear();
  }
  void Reserve(size_t n) {
    key.reserve(n);
    if (weighted) w.reserve(n);
    tomb.reserve(n);
  }
  void Push(uint64_t k, double wt, bool t) {
    key.push_back(k);
    if (weighted) w.push_back(wt);
    tomb.push_back(t ? 1 : 0);
  }
};

// Appends vertex i's entries of a memgraph list (tombstones included) to l.
void AppendMemRun(const mem::Adjacency& a, uint32_t i, RunBuffer* l,
                  mem::VertexAt* at = nullptr) {
  mem::ScanVertex(a, i, at, [&](const uint64_t* k, const double* w, const uint8_t* tomb, size_t n) {
    for (size_t j = 0; j < n; ++j) l->Push(k[j], w ? w[j] : 1.0, tomb && tomb[j]);
    return true;
  });
}

// Appends a decoded segment batch (tombstones included) to l, an array at a time.
void AppendBatch(const EdgeBatch& b, RunBuffer* l) {
  l->key.insert(l->key.end(), b.dst, b.dst + b.size);
  if (l->weighted) {
    if (b.weight != nullptr) {
      l->w.insert(l->w.end(), b.weight, b.weight + b.size);
    } else {
      l->w.resize(l->w.size() + b.size, 1.0);
    }
  }
  if (b.has_tombstones) {  // 0 or 1 each (EdgeBatch::tombstone)
    l->tomb.insert(l->tomb.end(), b.tombstone, b.tombstone + b.size);
  } else {
    l->tomb.resize(l->tomb.size() + b.size, 0);
  }
}

// One input of MergeRuns: a run of one vertex (keys ascending, each at most once), read a
// batch at a time from a scanner positioned on the vertex, a neighbor iterator, or a
// RunBuffer (one batch).
struct MergeRun {
  EdgeBatch b;
  size_t i = 0;
  SegmentScanner* sc = nullptr;
  NeighborIterator* it = nullptr;

  static MergeRun Of(const RunBuffer& l) {
    MergeRun r;
    r.b.dst = l.key.data();
    r.b.weight = l.weighted ? l.w.data() : nullptr;
    r.b.tombstone = l.tomb.data();
    r.b.has_tombstones = true;
    r.b.size = l.key.size();
    return r;
  }
  static MergeRun Of(SegmentScanner* sc) {
    MergeRun r;
    r.sc = sc;
    return r;
  }
  static MergeRun Of(NeighborIterator* it) {
    MergeRun r;
    r.it = it;
    return r;
  }
  // Loads the next batch when the current one is used up; false at the run's end or on a
  // read error (then *s is set).
  bool Ready(Status* s) {
    if (i < b.size) return true;
    i = 0;
    b.size = 0;
    if (sc != nullptr) {
      if (sc->NextEdges(&b)) return true;
      *s = sc->status();
    } else if (it != nullptr) {
      if (it->Next(&b)) return true;
      *s = it->status();
    }
    sc = nullptr;
    it = nullptr;
    return false;
  }
};

// The two-run case of MergeRuns (the common one: a vertex on two levels) up to the end of
// either run's current batch: a two-way merge, a newer; on equal keys a's entry wins. No
// branch depends on the data: both cursors advance by comparisons, and a dead entry (a
// tombstone winner) is written to the emitter's chunk and not counted. TA/TB: the batch has
// tombstones; W: weights are copied (needs both batches' weights). False when `out` asked to
// stop. MergeTwoBatches<W> picks TA and TB.
template <bool TA, bool TB, bool W>
bool MergeTwoBatchesAs(MergeRun* a, MergeRun* b, ChunkEmitter* out) {
  const uint64_t* const ak = a->b.dst;
  const uint64_t* const bk = b->b.dst;
  const uint8_t* const at = a->b.tombstone;
  const uint8_t* const bt = b->b.tombstone;
  const double* const aw = a->b.weight;
  const double* const bw = b->b.weight;
  const size_t na = a->b.size, nb = b->b.size;
  size_t i = a->i, j = b->i;
  bool go = true;
  while (go && i < na && j < nb) {
    const size_t room = out->Room();
    uint64_t* const d = out->DstTail();
    double* const w = out->WeightTail();
    size_t n = 0;
    while (n < room && i < na && j < nb) {
      const uint64_t x = ak[i], y = bk[j];
      const bool take_a = x <= y;
      d[n] = take_a ? x : y;
      if constexpr (W) w[n] = take_a ? aw[i] : bw[j];
      bool dead = false;
      if constexpr (TA) dead = take_a && at[i] != 0;
      if constexpr (TB) dead = dead || (!take_a && bt[j] != 0);
      n += dead ? 0 : 1;
      i += take_a ? 1 : 0;
      j += x >= y ? 1 : 0;  // equal keys: b's older entry is skipped
    }
    go = out->Commit(n);
  }
  a->i = i;
  b->i = j;
  return go;
}

template <bool W>
bool MergeTwoBatches(MergeRun* a, MergeRun* b, ChunkEmitter* out) {
  if (a->b.has_tombstones) {
    return b->b.has_tombstones ? MergeTwoBatchesAs<true, true, W>(a, b, out)
                               : MergeTwoBatchesAs<true, false, W>(a, b, out);
  }
  return b->b.has_tombstones ? MergeTwoBatchesAs<false, true, W>(a, b, out)
                             : MergeTwoBatchesAs<false, false, W>(a, b, out);
}

// Merges runs[0, n) of one vertex, given newest first, into `out`: per key the newest entry
// wins and live winners are emitted in key order. The runs are consumed batch by batch, so a
// merge holds one batch per run, never a whole run. Returns false when `out` asked to stop or
// a run failed to read (*s set).
bool MergeRuns(MergeRun* runs, size_t n, ChunkEmitter* out, Status* s) {
  size_t live = 0;  // runs[0, live) have entries left; order (newest first) is kept
  for (size_t q = 0; q < n; ++q) {
    if (runs[q].Ready(s)) {
      runs[live++] = runs[q];
    } else if (!s->ok()) {
      return false;
    }
  }
  while (live > 1) {
    // Two runs whose weights the emitter takes as they are (a batch without weights in a
    // weighted merge, weight 1.0, takes the general step below).
    if (live == 2 && (!out->weighted() || (runs[0].b.weight && runs[1].b.weight))) {
      if (!(out->weighted() ? MergeTwoBatches<true>(&runs[0], &runs[1], out)
                            : MergeTwoBatches<false>(&runs[0], &runs[1], out))) {
        return false;
      }
      size_t keep = 0;
      for (size_t q = 0; q < 2; ++q) {
        if (runs[q].Ready(s)) {
          if (keep != q) runs[keep] = runs[q];
          ++keep;
        } else if (!s->ok()) {
          return false;
        }
      }
      live = keep;
      continue;
    }
    size_t win = 0;
    uint64_t best = runs[0].b.dst[runs[0].i];
    for (size_t q = 1; q < live; ++q) {
      const uint64_t k = runs[q].b.dst[runs[q].i];
      if (k < best) {
        best = k;
        win = q;
      }
    }
    const MergeRun& w = runs[win];
    const bool tomb = w.b.has_tombstones && w.b.tombstone[w.i];
    const double wt = w.b.weight != nullptr ? w.b.weight[w.i] : 1.0;
    size_t keep = win;
    for (size_t q = win; q < live; ++q) {
      MergeRun& r = runs[q];
      if (r.b.dst[r.i] == best) ++r.i;
      if (r.Ready(s)) {
        if (keep != q) runs[keep] = r;
        ++keep;
      } else if (!s->ok()) {
        return false;
      }
    }
    live = keep;
    if (!tomb && !out->Add(best, wt)) return false;
  }
  if (live == 1) {  // the rest of one run: no comparisons left
    MergeRun& r = runs[0];
    do {
      for (; r.i < r.b.size; ++r.i) {
        if (r.b.has_tombstones && r.b.tombstone[r.i]) continue;
        if (!out->Add(r.b.dst[r.i], r.b.weight != nullptr ? r.b.weight[r.i] : 1.0)) return false;
      }
    } while (r.Ready(s));
    if (!s->ok()) return false;
  }
  return true;
}

// Vertex filters of TierReader::WalkRuns: Group(base) -> the vertices of group [base, base +
// 64) that may be wanted (bit i for base + i), Want(u) -> whether u, a member of that mask, is.
struct AllVertices {
  uint64_t Group(VertexId) const { return ~uint64_t{0}; }
  bool Want(VertexId) const { return true; }
};
struct WantFn {
  FunctionRef<bool(VertexId)> fn;
  uint64_t Group(VertexId) const { return ~uint64_t{0}; }
  bool Want(VertexId u) const { return fn(u); }
};
struct WantBits {
  const VertexBitmap& bits;
  uint64_t Group(VertexId base) const { return bits.Group(base >> 6); }
  bool Want(VertexId) const { return true; }  // Group is exact
};

// The index placed u on a level none of whose files holds it.
Status IndexCorruption(VertexId u, uint32_t level) {
  return Status::Corruption("vertex index places vertex " + std::to_string(u) + " on level " +
                            std::to_string(level) + ", whose files do not hold it");
}

std::atomic<size_t> walk_prefetch{kDefaultWalkPrefetch};

// The memgraph side of WalkRuns' prefetch pipeline (issue 30): the vertices of [begin, end)
// that the filter may want and that have entries in one memgraph (the newest the walk reads),
// ascending, each prepared by mem::VertexAt's stages a fixed distance d apart ahead of the
// walk's scan: when the vertex `ahead` places is number T, it starts T, descends T - d, prefetches
// the u column of T - 2d and locates T - 3d; the walk scans T - 4d. Subgraph version headers are prefetched
// kGroupsAhead wanted groups ahead of the vertices placed. Only prefetches and reads: the walk
// takes each vertex's VertexAt (Take) and scans it with mem::ScanVertex, which runs any stage
// left, so the entries are those of a walk without it.
template <class Want>
class MemAhead {
 public:
  static constexpr size_t kGroupsAhead = 2;

  MemAhead(const mem::MemGraph* mg, Timestamp ts, uint8_t dir, VertexId begin, VertexId end,
           const Want& want, size_t d, bool weights)
      : mg_(mg), ts_(ts), dir_(dir), begin_(begin), end_(end), want_(want), d_(d),
        weights_(weights), ring_(std::bit_ceil(4 * d + 1)) {
    next_ = begin & ~VertexId{mem::kSubgraphSize - 1};
    ahead_ = next_;
    for (size_t g = 0; g < kGroupsAhead; ++g) PrefetchNextGroup();
  }

  // u's VertexAt in the memgraph (Adjacency a), or null when the pipeline does not hold it.
  // u ascends across calls; the result is valid until the next call.
  mem::VertexAt* Take(VertexId u, const mem::Adjacency* a) {
    for (;;) {
      while (tail_ - head_ < 4 * d_ + 1 && Place()) {
      }
      if (head_ == tail_) return nullptr;
      Entry& e = At(head_);
      if (e.u > u) return nullptr;
      ++head_;
      if (e.u < u) continue;  // the walk skipped it
      return e.a == a ? &e.at : nullptr;
    }
  }

 private:
  struct Entry {
    VertexId u;
    const mem::Adjacency* a;
    mem::VertexAt at;
  };
  Entry& At(uint64_t seq) { return ring_[seq & (ring_.size() - 1)]; }

  // Prefetches the version header of the next group after ahead_ that the filter wants.
  void PrefetchNextGroup() {
    for (; ahead_ < end_; ahead_ += mem::kSubgraphSize) {
      if (want_.Group(ahead_) == 0) continue;
      mg_->PrefetchHead(SubgraphOf(ahead_));
      ahead_ += mem::kSubgraphSize;
      return;
    }
  }

  // Places the next vertex at the tail and runs each stage on the vertex it is due for; false
  // at the end of the range.
  bool Place() {
    while (mask_ == 0) {
      if (next_ >= end_) return false;
      const VertexId base = next_;
      next_ += mem::kSubgraphSize;
      uint64_t wanted = want_.Group(base);
      if (wanted == 0) continue;
      PrefetchNextGroup();
      if (base < begin_) wanted &= ~uint64_t{0} << LocalOf(begin_);
      if (end_ - base < mem::kSubgraphSize) wanted &= (uint64_t{1} << (end_ - base)) - 1;
      const mem::SubgraphVersion* sv = mg_->VersionAt(SubgraphOf(base), ts_);
      if (sv == nullptr) continue;
      adj_ = Adj(sv, dir_);
      mask_ = wanted & adj_->EntryMask();
      base_ = base;
    }
    const uint32_t i = static_cast<uint32_t>(std::countr_zero(mask_));
    mask_ &= mask_ - 1;
    Entry& e = At(tail_);
    e.u = base_ + i;
    e.a = adj_;
    mem::VertexAtStart(*adj_, i, &e.at);
    auto due = [&](uint64_t back) -> Entry* {
      if (tail_ < back || tail_ - back < head_) return nullptr;
      return &At(tail_ - back);
    };
    if (Entry* x = due(d_); x != nullptr && x->at.stage == mem::VertexAt::kStarted) {
      mem::VertexAtDescend(*x->a, LocalOf(x->u), &x->at);
    }
    if (Entry* x = due(2 * d_); x != nullptr && x->at.stage == mem::VertexAt::kDescended) {
      mem::VertexAtColumn(*x->a, LocalOf(x->u), &x->at);
    }
    if (Entry* x = due(3 * d_); x != nullptr && x->at.stage == mem::VertexAt::kColumn) {
      mem::VertexAtLocate(*x->a, LocalOf(x->u), weights_, &x->at);
    }
    ++tail_;
    return true;
  }

  const mem::MemGraph* mg_;
  Timestamp ts_;
  uint8_t dir_;
  VertexId begin_, end_;
  const Want& want_;
  size_t d_;
  bool weights_;
  std::vector<Entry> ring_;
  uint64_t head_ = 0, tail_ = 0;  // ring_ holds the vertices numbered [head_, tail_)
  VertexId next_;                 // the next group Place enters
  VertexId ahead_;                // the next group whose header may be prefetched
  VertexId base_ = 0;             // the group Place is in, its Adjacency and vertices left
  const mem::Adjacency* adj_ = nullptr;
  uint64_t mask_ = 0;
};

}  // namespace

namespace {
std::atomic<size_t> frontier_group{FrontierReadConfig{}.group};
std::atomic<size_t> frontier_item_bytes{FrontierReadConfig{}.item_bytes};
std::atomic<bool> frontier_random_access{FrontierReadConfig{}.random_access};

// A frontier read item's buffers (its blocks) and the reads it waits for, reused across calls
// on this thread (ScanSpares' reason: fresh buffers fault their pages in every call), at most
// kMaxSpareItemBytes of buffers kept per thread.
struct FrontierItemState {
  SegmentReader::BatchReads reads;
  std::vector<VertexEntry> entries;
  coro::IoWait wait;
  size_t Bytes() const {
    return reads.ebuf.capacity() + reads.wbuf.capacity() + reads.scratch.capacity() +
           reads.wscratch.capacity();
  }
};
constexpr size_t kMaxSpareItemStates = 128;
constexpr size_t kMaxSpareItemBytes = size_t{16} << 20;
std::vector<std::unique_ptr<FrontierItemState>>& SpareItemStates() {
  thread_local std::vector<std::unique_ptr<FrontierItemState>> spares;
  return spares;
}

// Completes the items' reads: the scheduler's IoPoller over one io::ReadQueue.
struct QueuePoller final : coro::IoPoller {
  io::ReadQueue* queue;
  explicit QueuePoller(io::ReadQueue* q) : queue(q) {}
  Status Poll(bool wait) override {
    queue->Reap(wait, [](void* tag) { coro::IoWait::Done(tag); });
    return Status::OK();  // failed reads carry their status into the item's decode
  }
};
}  // namespace

void SetFrontierReadConfig(const FrontierReadConfig& c) {
  frontier_group.store(std::clamp<size_t>(c.group, 1, kMaxFrontierReadGroup));
  frontier_item_bytes.store(std::max<size_t>(c.item_bytes, 1));
  frontier_random_access.store(c.random_access);
}
FrontierReadConfig GetFrontierReadConfig() {
  return FrontierReadConfig{frontier_group.load(std::memory_order_relaxed),
                            frontier_item_bytes.load(std::memory_order_relaxed),
                            frontier_random_access.load(std::memory_order_relaxed)};
}

void SetWalkPrefetch(size_t d) { walk_prefetch.store(std::min<size_t>(d, kMaxWalkPrefetch)); }
size_t GetWalkPrefetch() { return walk_prefetch.load(std::memory_order_relaxed); }

struct TierReader::Run {
  const mem::Adjacency* adj = nullptr;  // memgraph run, or
  const SegmentHandle* seg = nullptr;  // segment run
  VertexEntry ve;
  uint64_t entries = 0;
  bool has_tombstones = false;
};

void TierReader::RecordError(const Status& s) const {
  std::lock_guard<std::mutex> g(err_mu_);
  if (err_.ok()) err_ = s;
}

Status TierReader::status() const {
  std::lock_guard<std::mutex> g(err_mu_);
  return err_;
}

void TierReader::CollectRuns(uint8_t dir, VertexId u, std::vector<Run>* runs) const {
  const uint32_t i = LocalOf(u);
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    const mem::Adjacency* a = Adj(sv, dir);
    if (const mem::Adjacency::CountPair n = a->Counts(i); n.entries != 0) {
      Run r;
      r.adj = a;
      r.entries = n.entries;
      r.has_tombstones = n.live != n.entries;
      runs->push_back(r);
    }
    if ((sv->deleted_mask >> i) & 1) return;
  }
  ForEachDiskFile(dir, u, [&](const SegmentHandle* seg, const VertexEntry* known) {
    Run r;
    if (known != nullptr) {
      r.ve = *known;
    } else {
      Status s = seg->reader->FindVertex(u, &r.ve);
      if (s.IsNotFound()) return true;
      if (!s.ok()) {
        RecordError(s);
        return false;
      }
    }
    if (r.ve.degree != 0) {
      r.seg = seg;
      r.entries = r.ve.degree;
      r.has_tombstones = r.ve.has_tombstones;
      runs->push_back(r);
    }
    return (r.ve.flags & kVertexDeleted) == 0;
  });
}

bool TierReader::HasVertex(VertexId u) const {
  const uint32_t i = LocalOf(u);
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    if ((sv->exists_mask >> i) & 1) return true;
    if ((sv->deleted_mask >> i) & 1) return false;
  }
  bool exists = false;
  ForEachDiskFile(0, u, [&](const SegmentHandle* seg, const VertexEntry* known) {
    VertexEntry ve;
    if (known != nullptr) {
      ve = *known;
    } else {
      Status s = seg->reader->FindVertex(u, &ve);
      if (s.IsNotFound()) return true;
      if (!s.ok()) {
        RecordError(s);
        return false;
      }
    }
    if (ve.flags & kVertexExists) {
      exists = true;
      return false;
    }
    return (ve.flags & kVertexDeleted) == 0;
  });
  return exists;
}

bool TierReader::GetEdge(uint8_t dir, VertexId u, VertexId x, double* weight) const {
  const uint32_t i = LocalOf(u);
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    bool tomb = false;
    double w = 1.0;
    if (mem::FindEdge(*Adj(sv, dir), i, x, &w, &tomb)) {
      if (tomb) return false;
      if (weight) *weight = w;
      return true;
    }
    if ((sv->deleted_mask >> i) & 1) return false;
  }
  bool found = false;
  ForEachDiskFile(dir, u, [&](const SegmentHandle* seg, const VertexEntry* known) {
    VertexEntry ve;
    Status s;
    if (known != nullptr) {
      ve = *known;
    } else {
      s = seg->reader->FindVertex(u, &ve);
      if (s.IsNotFound()) return true;
      if (!s.ok()) {
        RecordError(s);
        return false;
      }
    }
    EdgeRecord e;
    s = seg->reader->GetEdgeOf(ve, x, &e);
    if (s.ok()) {
      found = !e.tombstone;
      if (found && weight) *weight = e.weight;
      return false;
    }
    if (!s.IsNotFound()) {
      RecordError(s);
      return false;
    }
    // The edge is not here; a deletion mark on u still hides older files.
    return (ve.flags & kVertexDeleted) == 0;
  });
  return found;
}

uint64_t TierReader::Degree(uint8_t dir, VertexId u) const {
  std::vector<Run> runs;
  CollectRuns(dir, u, &runs);
  if (runs.empty()) return 0;
  if (runs.size() == 1 && !runs[0].has_tombstones) return runs[0].entries;
  if (runs.size() == 1 && runs[0].adj != nullptr) return runs[0].adj->Live(LocalOf(u));
  uint64_t d = 0;
  Status s = ScanNeighbors(dir, u, [&](const NeighborChunk& c) {
    d += c.size;
    return true;
  });
  if (!s.ok()) RecordError(s);
  return d;
}

Status TierReader::ScanNeighbors(uint8_t dir, VertexId u,
                                 FunctionRef<bool(const NeighborChunk&)> fn) const {
  const uint32_t i = LocalOf(u);
  std::vector<Run> runs;
  CollectRuns(dir, u, &runs);
  if (runs.empty()) return status();
  ChunkEmitter out(weighted_, fn);
  ReadOptions ro;
  ro.weights = weighted_;

  if (runs.size() == 1) {
    const Run& r = runs[0];
    if (r.adj != nullptr) {
      ScanLoneMemRun(*r.adj, i, nullptr, weighted_, &out, fn);
      return Status::OK();
    }
    auto it = r.seg->reader->NewNeighborIterator(r.ve, ro);
    EdgeBatch b;
    bool go = true;
    while (go && it->Next(&b)) {
      if (!b.has_tombstones) {
        if (!out.Flush()) return Status::OK();
        NeighborChunk c{b.dst, weighted_ ? b.weight : nullptr, b.size};
        go = fn(c);
        continue;
      }
      for (size_t j = 0; j < b.size && go; ++j) {
        if (!b.tombstone[j]) go = out.Add(b.dst[j], b.weight ? b.weight[j] : 1.0);
      }
    }
    if (!it->status().ok()) return it->status();
    if (go) out.Flush();
    return Status::OK();
  }

  // Several tiers: memgraph runs materialized, disk runs streamed; the newest entry of a key
  // wins.
  std::vector<RunBuffer> bufs(runs.size(), RunBuffer(weighted_));
  std::vector<std::unique_ptr<NeighborIterator>> its(runs.size());
  std::vector<MergeRun> in(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].adj != nullptr) {
      bufs[r].Reserve(runs[r].entries);
      AppendMemRun(*runs[r].adj, i, &bufs[r]);
      in[r] = MergeRun::Of(bufs[r]);
    } else {
      its[r] = runs[r].seg->reader->NewNeighborIterator(runs[r].ve, ro);
      in[r] = MergeRun::Of(its[r].get());
    }
  }
  Status s;
  if (MergeRuns(in.data(), in.size(), &out, &s)) out.Flush();
  return s;
}

// A segment's scanner over the walked range, positioned on its current vertex.
struct TierReader::FileScan {
  std::unique_ptr<SegmentScanner> sc;
  VertexEntry ve;
  bool valid = false;  // a streamed file's scanner: ve is its current vertex
};

// The vertex walk of the range scans: for each u in [begin, end) with want(u) and entries in
// some tier, ascending, visit(u, local index, memgraph runs, file runs, tombs) with u's runs
// newest first up to a deletion mark (the runs CollectRuns finds); tombs: some file run holds
// a tombstone (memgraph runs' tombstones are for their readers: a lone run's scan drops them,
// a merge applies them). visit returns false to stop. File runs are left positioned on u:
// visit may read their edges (FileScan::sc->NextEdges) or not; unread edges are skipped, not
// decoded. Runs are located without a lookup per vertex: L0 files by streaming their vertex
// tables in step; level files, with the multi-level vertex index (Version::index_reads), from
// the index's entries (one in-memory pass, no vertex block read or decoded — a scan that wants
// few vertices of its range touches only their runs), otherwise from their vertex tables too.
template <class Want, class Visit>
Status TierReader::WalkRuns(uint8_t dir, VertexId begin, VertexId end, bool weights,
                            size_t first_batch, bool prepare, const Want& want,
                            Visit&& visit) const {
  end = std::min(end, VertexIdBound());
  if (begin >= end) return status();
  // The newest memgraph's lists prepared ahead of the scan (MemAhead), when asked and the
  // distance is not 0.
  const size_t ahead_d = prepare && first_ < v_->memgraphs.size() ? GetWalkPrefetch() : 0;
  std::optional<MemAhead<Want>> ahead;
  if (ahead_d != 0) {
    ahead.emplace(v_->memgraphs[first_].get(), ts_, dir, begin, end, want, ahead_d,
                  weighted_ && weights);
  }
  ScanOptions so;
  so.min_src = begin;
  so.max_src = end - 1;
  so.read.weights = weighted_ && weights;
  so.read.first_batch = first_batch;
  auto overlaps = [&](const SegmentHandle* h) {
    return h->meta.num_vertices != 0 && h->meta.max_src >= begin && h->meta.min_src < end;
  };
  const bool indexed = v_->index_reads;
  std::vector<const SegmentHandle*> streamed;  // L0 only when indexed
  if (indexed) {
    for (const auto& h : v_->l0[dir]) streamed.push_back(h.get());
  } else {
    streamed = v_->AllFiles(dir);
  }
  std::vector<FileScan> files;  // streamed vertex tables, newest first
  for (const SegmentHandle* h : streamed) {
    if (!overlaps(h)) continue;
    FileScan f;
    f.sc = h->reader->NewScanner(so);
    f.valid = f.sc->NextVertex(&f.ve);
    if (!f.sc->status().ok()) return f.sc->status();
    files.push_back(std::move(f));
  }
  // Indexed: per level, a scanner on the file that holds the walk's current vertex there,
  // opened when the walk first needs one of its runs. A level's files hold disjoint, ascending
  // ranges and the walk ascends, so a file left behind is never needed again.
  struct LevelScan {
    const SegmentHandle* h = nullptr;
    FileScan f;
  };
  std::vector<LevelScan> level_scans(indexed ? v_->levels[dir].size() : 0);
  VertexId indexed_u[mem::kSubgraphSize];
  index::VertexIndex::Located indexed_loc[mem::kSubgraphSize];
  std::vector<const mem::SubgraphVersion*> mems;
  std::vector<const mem::Adjacency*> mem_runs;
  std::vector<FileScan*> file_runs;
  for (VertexId base = begin & ~VertexId{mem::kSubgraphSize - 1}; base < end;
       base += mem::kSubgraphSize) {
    const VertexId lo = std::max(base, begin), hi = std::min(base + mem::kSubgraphSize, end);
    // The group's vertices in [lo, hi) that may be wanted.
    uint64_t wanted = want.Group(base) & (~uint64_t{0} << LocalOf(lo));
    if (hi - base < mem::kSubgraphSize) wanted &= (uint64_t{1} << (hi - base)) - 1;
    if (wanted == 0) continue;  // file scanners move past the group when a wanted vertex comes
    mems.clear();
    const mem::Adjacency* ahead_adj = nullptr;  // the newest memgraph's, when ahead holds it
    for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
      const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(base), ts_);
      if (sv == nullptr) continue;
      if (t == first_ && ahead) ahead_adj = Adj(sv, dir);
      mems.push_back(sv);
    }
    // The newest version's runs (mems[0]'s) come with a VertexAt: prepared ahead by the
    // pipeline, or else read by one walk of its clustered index (mem::VertexAt::Walk: the
    // vertices come ascending).
    mem::VertexAt walk = mem::VertexAt::Walk();
    const mem::Adjacency* at_adj = ahead ? ahead_adj : mems.empty() ? nullptr : Adj(mems[0], dir);
    // The wanted vertices that may have runs: every one while L0 files are streamed (their
    // vertices are known only by walking them), else those with memgraph entries or indexed.
    uint64_t may = files.empty() ? 0 : ~uint64_t{0};
    for (const mem::SubgraphVersion* sv : mems) may |= Adj(sv, dir)->EntryMask();
    size_t n_indexed = 0, next_indexed = 0;
    if (indexed) {
      n_indexed = v_->index[dir].LocateGroup(base, wanted, indexed_u, indexed_loc);
      for (size_t k = 0; k < n_indexed; ++k) may |= uint64_t{1} << LocalOf(indexed_u[k]);
    }
    for (may &= wanted; may != 0; may &= may - 1) {
      const uint32_t i = static_cast<uint32_t>(std::countr_zero(may));
      const VertexId u = base + i;
      if (!want.Want(u)) continue;  // file scanners move past u when the next wanted one comes
      mem_runs.clear();
      file_runs.clear();
      mem::VertexAt* at = nullptr;  // mem_runs[0]'s: prepared ahead, or the walk
      bool hidden = false, tombs = false;
      for (const mem::SubgraphVersion* sv : mems) {
        const mem::Adjacency* a = Adj(sv, dir);
        // Not Counts: a C-ART vertex's resolve its pending and appended updates, a Find each
        // (docs/benchmarks.md, "its layout and sweep"). A C-ART vertex's run may be empty.
        if (a->MayHaveEntries(i)) {
          if (a == at_adj) at = ahead ? ahead->Take(u, a) : &walk;  // mems[0]'s: the first run
          mem_runs.push_back(a);
        }
        if ((sv->deleted_mask >> i) & 1) {
          hidden = true;
          break;
        }
      }
      auto take = [&](FileScan& f) {
        if (f.ve.degree != 0) {
          file_runs.push_back(&f);
          tombs |= f.ve.has_tombstones;
        }
        if (f.ve.flags & kVertexDeleted) hidden = true;
      };
      for (FileScan& f : files) {
        if (f.valid && f.ve.src < u) {
          f.valid = f.sc->SeekVertex(u, &f.ve);
          if (!f.sc->status().ok()) return f.sc->status();
        }
        if (hidden || !f.valid || f.ve.src != u) continue;
        take(f);
      }
      while (next_indexed < n_indexed && indexed_u[next_indexed] < u) ++next_indexed;
      if (!hidden && next_indexed < n_indexed && indexed_u[next_indexed] == u) {
        const index::VertexIndex::Located& loc = indexed_loc[next_indexed];
        for (uint32_t k = 0; k < loc.size() && !hidden; ++k) {
          const index::Pos& p = loc[k];
          const size_t lv = p.level() - 1;
          if (lv >= level_scans.size()) return IndexCorruption(u, p.level());
          LevelScan& ls = level_scans[lv];
          assert(ls.h == nullptr || u >= ls.h->meta.min_src);  // the walk ascends
          if (ls.h == nullptr || u > ls.h->meta.max_src) {
            ls.h = v_->LevelFind(dir, lv, u);
            if (ls.h == nullptr) return IndexCorruption(u, p.level());
            ls.f.sc = ls.h->reader->NewScanner(so);
          }
          FileScan& f = ls.f;
          if (p.has_entry()) {
            p.ToEntry(u, &f.ve);
          } else {  // a level-only position: the file has the entry
            Status s = ls.h->reader->FindVertex(u, &f.ve);
            if (!s.ok()) return s;
          }
          f.sc->SetVertex(&f.ve);
          take(f);
        }
      }
      if (mem_runs.empty() && file_runs.empty()) continue;
      Status s;
      assert(at == nullptr || mem_runs[0] == at_adj);
      if (!visit(u, i, mem_runs, file_runs, at, tombs, &s)) return s.ok() ? status() : s;
    }
  }
  return status();
}

Status TierReader::ScanEdges(uint8_t dir, VertexId begin, VertexId end,
                             FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const {
  return ScanLists(dir, begin, end, true, /*first=*/0, AllVertices(), /*any_order=*/false,
                   [&](VertexId u, const NeighborChunk& c) {
                     return fn(u, c) ? ScanStep::kMore : ScanStep::kStop;
                   });
}

Status TierReader::ScanAdjacency(uint8_t dir, VertexId begin, VertexId end, bool weights,
                                 FunctionRef<bool(VertexId)> want,
                                 FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  return ScanLists(dir, begin, end, weights, kPrefixBatch, WantFn{want}, /*any_order=*/false, fn);
}

Status TierReader::ScanAdjacency(uint8_t dir, VertexId begin, VertexId end,
                                 const AdjacencyScan& scan,
                                 FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  return ScanLists(dir, begin, end, scan.weights, kPrefixBatch, WantBits{scan.want},
                   scan.any_order, fn);
}

template <class Want>
Status TierReader::ScanLists(uint8_t dir, VertexId begin, VertexId end, bool weights,
                             size_t first, const Want& want, bool any_order,
                             FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  const bool w = weighted_ && weights;
  std::vector<RunBuffer> bufs;
  std::vector<MergeRun> in;
  // Lists are prepared ahead (MemAhead) in the bitmap walks only: BFS's streamed steps, which
  // read most lists up to a first hit, gained; whole-list passes (the layout's, SSSP's streamed
  // ranges: ScanEdges and the predicate form) measured slower with it (docs/benchmarks.md,
  // "Issue 30").
  constexpr bool kPrepare = std::is_same_v<Want, WantBits>;
  return WalkRuns(dir, begin, end, weights, first, kPrepare, want,
                  [&](VertexId u, uint32_t i, const std::vector<const mem::Adjacency*>& mem_runs,
                      const std::vector<FileScan*>& file_runs, mem::VertexAt* at, bool tombs,
                      Status* err) {
    ScanStep step = ScanStep::kMore;
    // One memgraph run and nothing under it: as ScanNeighbors reads one.
    if (mem_runs.size() == 1 && file_runs.empty()) {
      auto emit = [&](const NeighborChunk& c) {
        step = fn(u, c);
        return step == ScanStep::kMore;
      };
      ChunkEmitter out(w, emit);
      ScanLoneMemRun(*mem_runs[0], i, at, w, &out, emit);
      return step != ScanStep::kStop;
    }
    // Disk runs without tombstones, one (the common case after compaction) or, when order is not
    // needed, several: each streamed from its scanner in turn, unmerged.
    if (!tombs && mem_runs.empty() && (file_runs.size() == 1 || any_order)) {
      for (FileScan* f : file_runs) {
        EdgeBatch b;
        while (step == ScanStep::kMore && f->sc->NextEdges(&b)) {
          step = fn(u, NeighborChunk{b.dst, w ? b.weight : nullptr, b.size});
        }
        if (!f->sc->status().ok()) {
          *err = f->sc->status();
          return false;
        }
        if (step != ScanStep::kMore) break;
      }
      return step != ScanStep::kStop;
    }
    // Several runs or tombstones: memgraph runs materialized (buffers reused across vertices),
    // file runs streamed from their scanners; merged newest first.
    if (bufs.size() < mem_runs.size()) bufs.resize(mem_runs.size(), RunBuffer(w));
    in.clear();
    for (size_t q = 0; q < mem_runs.size(); ++q) {
      bufs[q].Clear();
      AppendMemRun(*mem_runs[q], i, &bufs[q], q == 0 ? at : nullptr);
      in.push_back(MergeRun::Of(bufs[q]));
    }
    for (FileScan* f : file_runs) in.push_back(MergeRun::Of(f->sc.get()));
    auto emit = [&](const NeighborChunk& c) {
      step = fn(u, c);
      return step == ScanStep::kMore;
    };
    ChunkEmitter out(w, emit, first != 0 ? first : kChunk);
    if (MergeRuns(in.data(), in.size(), &out, err)) out.Flush();
    return err->ok() && step != ScanStep::kStop;
  });
}

Status TierReader::ScanDegreeBounds(uint8_t dir, VertexId begin, VertexId end,
                                    FunctionRef<bool(VertexId, uint64_t)> fn) const {
  return WalkRuns(dir, begin, end, false, 0, /*prepare=*/false, AllVertices(),
                  [&](VertexId u, uint32_t i, const std::vector<const mem::Adjacency*>& mem_runs,
                      const std::vector<FileScan*>& file_runs, mem::VertexAt*, bool, Status*) {
    uint64_t d = 0;
    for (const mem::Adjacency* a : mem_runs) d += a->LiveBound(i);
    for (const FileScan* f : file_runs) d += f->ve.degree;
    return d == 0 || fn(u, d);
  });
}

Status TierReader::ScanNeighborsBatch(uint8_t dir, const VertexId* vs, size_t n, bool weights,
                                      FunctionRef<bool(size_t, const NeighborChunk&)> fn) const {
  const bool w = weighted_ && weights;
  // Locate: runs[first[i], first[i + 1]) are vs[i]'s runs, newest first, up to a deletion mark
  // (the same runs ScanNeighbors merges).
  std::vector<Run> runs;
  std::vector<size_t> first(n + 1), owner;
  for (size_t i = 0; i < n; ++i) {
    first[i] = runs.size();
    CollectRuns(dir, vs[i], &runs);
    owner.resize(runs.size(), i);
  }
  first[n] = runs.size();
  Status s = status();
  if (!s.ok()) return s;

  // Classify. A vertex whose only run is in a memgraph is answered at once. A vertex with one
  // disk run streams from its file's batch ("direct"). Every other vertex is merged at the end;
  // its disk runs are materialized into mat[slot[r]] while the batches are read.
  constexpr size_t kDirect = ~size_t{0};
  std::vector<size_t> slot(runs.size(), kDirect);
  std::vector<size_t> disk;   // indexes of disk runs, grouped by file below
  std::vector<size_t> merge;  // vertices merged at the end
  size_t nmat = 0;
  bool go = true;
  size_t cur = 0;  // the vertex the emitter is filling
  auto emit = [&](const NeighborChunk& c) { return go = fn(cur, c); };
  ChunkEmitter out(w, emit);
  for (size_t i = 0; i < n && go; ++i) {
    const size_t b = first[i], e = first[i + 1];
    if (b == e) continue;
    if (e - b == 1 && runs[b].adj != nullptr) {
      cur = i;
      ScanLoneMemRun(*runs[b].adj, LocalOf(vs[i]), nullptr, w, &out, emit);
      continue;
    }
    if (e - b == 1) {
      disk.push_back(b);
      continue;
    }
    merge.push_back(i);
    for (size_t r = b; r < e; ++r) {
      if (runs[r].seg == nullptr) continue;
      slot[r] = nmat++;
      disk.push_back(r);
    }
  }
  if (!go) return Status::OK();

  // The disk runs in file order (ascending stream offsets; the ordinal is not set in entries
  // that come from the vertex index), cut into items: disk[items[k], items[k + 1]) is item k,
  // the runs of one file, read together (FrontierReadConfig).
  std::sort(disk.begin(), disk.end(), [&](size_t x, size_t y) {
    if (runs[x].seg != runs[y].seg) return std::less<>()(runs[x].seg, runs[y].seg);
    return runs[x].ve.stream_offset < runs[y].ve.stream_offset;
  });
  // An item's size is the blocks it reads: a run adds the blocks of its edge (and weight)
  // stream range that the previous run of the item does not already read.
  const FrontierReadConfig cfg = GetFrontierReadConfig();
  std::vector<size_t> items;
  uint64_t item_bytes = 0, last_eb = 0, last_wb = 0;
  for (size_t g = 0; g < disk.size(); ++g) {
    const Run& r = runs[disk[g]];
    const bool new_file = g == 0 || r.seg != runs[disk[g - 1]].seg;
    const uint64_t payload = r.seg->reader->header().payload_per_block();
    const uint64_t block = payload + kBlockTrailerSize;
    const uint64_t e0 = r.ve.stream_offset / payload,
                   e1 = (r.ve.stream_offset + std::max<uint64_t>(r.ve.run_bytes, 1) - 1) / payload;
    const uint64_t w0 = 8 * r.ve.first_edge / payload,
                   w1 = (8 * (r.ve.first_edge + std::max<uint64_t>(r.ve.degree, 1)) - 1) / payload;
    auto blocks = [&](bool fresh) {
      uint64_t b = e1 - e0 + 1 - (!fresh && e0 == last_eb ? 1 : 0);
      if (w) b += w1 - w0 + 1 - (!fresh && w0 == last_wb ? 1 : 0);
      return b * block;
    };
    if (new_file || (cfg.group > 1 && item_bytes + blocks(false) > cfg.item_bytes)) {
      items.push_back(g);
      item_bytes = blocks(true);
    } else {
      item_bytes += blocks(false);
    }
    last_eb = e1;
    last_wb = w1;
  }
  items.push_back(disk.size());
  const size_t n_items = items.size() - 1;
  std::vector<RunBuffer> mat(nmat, RunBuffer(w));
  ReadOptions ro;
  ro.weights = w;

  if (n_items != 0) {
    // Item states: at most `group` live at once, from this thread's spares.
    const size_t live = std::min(cfg.group, n_items);
    std::vector<std::unique_ptr<FrontierItemState>>& spares = SpareItemStates();
    std::vector<std::unique_ptr<FrontierItemState>> states;
    std::vector<FrontierItemState*> free_states;
    for (size_t k = 0; k < live; ++k) {
      if (!spares.empty()) {
        states.push_back(std::move(spares.back()));
        spares.pop_back();
      } else {
        states.push_back(std::make_unique<FrontierItemState>());
      }
      free_states.push_back(states.back().get());
    }
    std::unique_ptr<io::ReadQueue> queue =
        runs[disk[0]].seg->reader->env()->NewReadQueue(cfg.random_access);
    QueuePoller poller(queue.get());

    // Queues item k's reads (none once the call stopped); st->wait counts them.
    auto plan = [&](size_t k, FrontierItemState* st) {
      st->entries.clear();
      st->wait.pending = 0;
      st->reads.reqs.clear();
      if (!go) return;
      const SegmentReader& reader = *runs[disk[items[k]]].seg->reader;
      for (size_t g = items[k]; g < items[k + 1]; ++g) {
        st->entries.push_back(runs[disk[g]].ve);
        if (slot[disk[g]] != kDirect) mat[slot[disk[g]]].Reserve(runs[disk[g]].entries);
      }
      reader.PlanNeighborsBatch(st->entries.data(), st->entries.size(), ro, &st->reads);
      st->wait.pending = st->reads.reqs.size();
      for (io::ReadRequest& req : st->reads.reqs) queue->Queue(reader.file(), &req, &st->wait);
    };
    // Decodes item k's runs once its reads are done: direct runs to fn, the others into mat.
    auto decode = [&](size_t k, FrontierItemState* st) -> Status {
      if (!go) return Status::OK();
      const size_t g = items[k];
      size_t last = ~size_t{0};  // entry the emitter holds edges of
      Status s = runs[disk[g]].seg->reader->DecodeNeighborsBatch(
          st->entries.data(), st->entries.size(), ro, &st->reads,
          [&](size_t j, const EdgeBatch& batch) {
            const size_t r = disk[g + j];
            if (slot[r] != kDirect) {
              AppendBatch(batch, &mat[slot[r]]);
              return true;
            }
            if (j != last) {
              if (!out.Flush()) return false;
              last = j;
              cur = owner[r];
            }
            if (!batch.has_tombstones) {
              if (!out.Flush()) return false;
              NeighborChunk c{batch.dst, w ? batch.weight : nullptr, batch.size};
              return go = fn(cur, c);
            }
            for (size_t q = 0; q < batch.size; ++q) {
              if (batch.tombstone[q]) continue;
              if (!out.Add(batch.dst[q], batch.weight ? batch.weight[q] : 1.0)) return false;
            }
            return true;
          });
      if (s.ok() && go) out.Flush();
      return s;
    };
    // One item: plan and queue, suspend until its reads are done, decode. Runs without
    // suspending otherwise, so a vertex's chunks are emitted consecutively.
    auto item = [&](size_t k) -> coro::Task<Status> {
      FrontierItemState* st = free_states.back();
      free_states.pop_back();
      plan(k, st);
      co_await coro::AwaitIo{&st->wait};
      Status s = decode(k, st);
      free_states.push_back(st);
      co_return s;
    };
    coro::Scheduler sched(live, /*frame_bytes=*/512);
    s = sched.Run(n_items, [&](size_t k) { return item(k); }, &poller);
    assert(sched.arena().fallbacks() == 0 && "a frontier read item's frame left the arena");
    assert(queue->outstanding() == 0);
    size_t kept = 0;
    for (const std::unique_ptr<FrontierItemState>& st : spares) kept += st->Bytes();
    for (std::unique_ptr<FrontierItemState>& st : states) {
      if (spares.size() >= kMaxSpareItemStates || kept + st->Bytes() > kMaxSpareItemBytes) continue;
      kept += st->Bytes();
      spares.push_back(std::move(st));
    }
    if (!s.ok()) return s;
  }
  if (!go) return Status::OK();

  // Merge: every run of the vertex, newest first; the newest entry of a key wins.
  std::vector<RunBuffer> bufs;
  std::vector<MergeRun> in;
  for (size_t i : merge) {
    const size_t b = first[i], e = first[i + 1];
    in.clear();
    if (bufs.size() < e - b) bufs.resize(e - b, RunBuffer(w));
    for (size_t r = b; r < e; ++r) {
      if (runs[r].adj != nullptr) {
        RunBuffer& l = bufs[r - b];
        l.Clear();
        AppendMemRun(*runs[r].adj, LocalOf(vs[i]), &l);
        in.push_back(MergeRun::Of(l));
      } else {
        in.push_back(MergeRun::Of(mat[slot[r]]));
      }
    }
    cur = i;
    Status st;  // runs in memory: never a read error
    if (!MergeRuns(in.data(), in.size(), &out, &st) || !out.Flush()) break;
  }
  return Status::OK();
}

VertexId TierReader::VertexIdBound() const {
  VertexId cached = bound_.load(std::memory_order_acquire);
  if (cached != kUnknownBound) return cached;
  uint64_t b = 0;
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    // The active memgraph grows under writers: count only subgraphs this timestamp sees.
    uint64_t s = v_->memgraphs[t]->subgraph_bound();
    while (s > 0 && (s << mem::kSubgraphBits) > b && v_->memgraphs[t]->VersionAt(s - 1, ts_) == nullptr) --s;
    b = std::max<uint64_t>(b, s << mem::kSubgraphBits);
  }
  for (int dir = 0; dir < 2; ++dir) {
    for (const SegmentHandle* seg : v_->AllFiles(dir)) {
      if (seg->meta.num_vertices != 0) b = std::max<uint64_t>(b, seg->meta.max_src + 1);
    }
  }
  bound_.store(b, std::memory_order_release);
  return b;
}

// The walk of ScanVertices (kDegrees false) and ScanVertexDegreeBounds: fn(v, bound) for each
// existing v in [begin, end), ascending, bound as ScanDegreeBounds(dir 0) gives it (0 when
// !kDegrees). Per 64-vertex subgraph: a vertex is decided by the newest tier that knows it
// (exists or deletion mark); its bound sums the live entries of the memgraph runs and the
// degrees of the file runs from the newest tier down to the first deletion mark.
template <bool kDegrees, class Fn>
Status TierReader::WalkVertices(VertexId begin, VertexId end, Fn&& fn) const {
  end = std::min(end, VertexIdBound());
  if (begin >= end) return status();
  // Disk files overlapping the range, newest first, each streamed by a scanner that skips
  // edges: one sequential pass per file instead of a lookup per vertex.
  struct FileScan {
    std::unique_ptr<SegmentScanner> sc;
    VertexEntry ve;
    bool valid = false;
  };
  // With the multi-level vertex index (Version::index_reads) only the L0 files are streamed:
  // the index holds every level's entries in memory, so the levels' vertex tables are not
  // read at all.
  const bool indexed = v_->index_reads;
  std::vector<const SegmentHandle*> sources;
  if (indexed) {
    for (const auto& h : v_->l0[0]) sources.push_back(h.get());
  } else {
    sources = v_->AllFiles(0);
  }
  std::vector<FileScan> files;
  for (const SegmentHandle* h : sources) {
    if (h->meta.num_vertices == 0 || h->meta.max_src < begin || h->meta.min_src >= end) continue;
    ScanOptions so;
    so.min_src = begin;
    so.max_src = end - 1;
    FileScan f;
    f.sc = h->reader->NewScanner(so);
    f.valid = f.sc->NextVertex(&f.ve);
    if (!f.sc->status().ok()) return f.sc->status();
    files.push_back(std::move(f));
  }
  uint64_t degree[mem::kSubgraphSize] = {};  // zero again after each group's emission
  VertexId us[mem::kSubgraphSize];
  index::VertexIndex::Located locs[mem::kSubgraphSize];
  // Prefetch (GetWalkPrefetch() != 0): the version headers kHeadsAhead groups ahead, and with
  // kDegrees the next group's counts (the header is in cache by then).
  constexpr uint64_t kHeadsAhead = 4;
  const bool prefetch = GetWalkPrefetch() != 0;
  const uint64_t last_group = SubgraphOf(end - 1);
  for (VertexId base = begin & ~VertexId{mem::kSubgraphSize - 1}; base < end;
       base += mem::kSubgraphSize) {
    if (prefetch) {
      const uint64_t g = SubgraphOf(base);
      for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
        if (g + kHeadsAhead <= last_group) v_->memgraphs[t]->PrefetchHead(g + kHeadsAhead);
        if (!kDegrees || g + 1 > last_group) continue;
        if (const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(g + 1, ts_)) {
          const mem::Adjacency* a = Adj(sv, 0);
          coro::PrefetchRange(a->counts(), a->CountBytes());
        }
      }
    }
    uint64_t exists = 0, decided = 0;
    uint64_t hidden = 0;   // a newer tier marked the vertex deleted: older runs do not count
    uint64_t touched = 0;  // degree[i] written
    for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
      const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(base), ts_);
      if (sv == nullptr) continue;
      exists |= sv->exists_mask & ~decided;
      decided |= sv->exists_mask | sv->deleted_mask;
      if constexpr (kDegrees) {
        const mem::Adjacency* a = Adj(sv, 0);
        for (uint64_t m = a->EntryMask() & ~hidden; m != 0; m &= m - 1) {
          const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
          degree[i] += a->LiveBound(i);
          touched |= uint64_t{1} << i;
        }
        hidden |= sv->deleted_mask;
      }
    }
    // One disk tier's entry for vertex base + i, tiers taken newest first.
    auto take = [&](uint32_t i, const VertexEntry& e) {
      const uint64_t bit = uint64_t{1} << i;
      if (!(decided & bit)) {
        if (e.flags & kVertexExists) {
          exists |= bit;
          decided |= bit;
        } else if (e.flags & kVertexDeleted) {
          decided |= bit;
        }
      }
      if constexpr (kDegrees) {
        if (!(hidden & bit)) {
          degree[i] += e.degree;
          touched |= bit;
        }
        if (e.flags & kVertexDeleted) hidden |= bit;
      }
    };
    for (FileScan& f : files) {
      while (f.valid && f.ve.src < base + mem::kSubgraphSize) {
        take(static_cast<uint32_t>(f.ve.src - base), f.ve);
        f.valid = f.sc->NextVertex(&f.ve);
        if (!f.sc->status().ok()) return f.sc->status();
      }
    }
    if (indexed) {
      // The levels, newest (L1) first, as the index places each vertex on them.
      const size_t n = v_->index[0].LocateGroup(base, ~uint64_t{0}, us, locs);
      VertexEntry e;
      for (size_t j = 0; j < n; ++j) {
        const VertexId u = us[j];
        for (uint32_t k = 0; k < locs[j].size(); ++k) {
          const index::Pos& p = locs[j][k];
          if (p.has_entry()) {  // only the flags and the degree are needed
            e.flags = p.vertex_flags();
            e.degree = p.degree();
          } else {  // a level-only position: the file has the entry
            const size_t lv = p.level() - 1;
            const SegmentHandle* h =
                lv < v_->levels[0].size() ? v_->LevelFind(0, lv, u) : nullptr;
            if (h == nullptr) return IndexCorruption(u, p.level());
            Status s = h->reader->FindVertex(u, &e);
            if (!s.ok()) return s;
          }
          take(static_cast<uint32_t>(u - base), e);
        }
      }
    }
    for (uint64_t m = exists; m != 0; m &= m - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
      const VertexId v = base + i;
      if (v < begin || v >= end) continue;
      if (!fn(v, kDegrees ? degree[i] : 0)) return status();
    }
    for (; touched != 0; touched &= touched - 1) degree[std::countr_zero(touched)] = 0;
  }
  return status();
}

Status TierReader::ScanVertices(VertexId begin, VertexId end,
                                FunctionRef<bool(VertexId)> fn) const {
  return WalkVertices<false>(begin, end, [&](VertexId v, uint64_t) { return fn(v); });
}

Status TierReader::ScanVertexDegreeBounds(VertexId begin, VertexId end,
                                          FunctionRef<bool(VertexId, uint64_t)> fn) const {
  return WalkVertices<true>(begin, end, fn);
}

// Value-returning: a failed scan is recorded (status()), as Snapshot's contract says; the
// count is then of the vertices seen before the failure.
uint64_t TierReader::NumVertices() const {
  uint64_t n = 0;
  Status s = ScanVertices(0, VertexIdBound(), [&](VertexId) {
    ++n;
    return true;
  });
  if (!s.ok()) RecordError(s);
  return n;
}

uint64_t TierReader::NumEdges() const {
  uint64_t n = 0;
  Status s = ScanVertices(0, VertexIdBound(), [&](VertexId v) {
    n += Degree(0, v);
    return true;
  });
  if (!s.ok()) RecordError(s);
  return n;
}

}  // namespace strata
