// MemGraph: one in-memory tier (RapidStore §5–6): versioned subgraphs written with MV2PL and
// read lock-free at any timestamp still protected by the reader tracer.
//
// Writers call Apply with primitive operations (the DB expands WriteBatch ops into these).
// Apply builds new versions copy-on-write from the current heads without locks (registered in
// the memgraph's writer tracer meanwhile), locks the touched subgraphs in ascending order,
// rebuilds the few whose head moved (a batch of one or two subgraphs locks first and builds
// under the locks, unregistered), takes t = ++t_w, links the versions with timestamp t,
// advances t_r in commit order, then unlinks versions no registered reader can see, and
// unlocks. An unlinked version is freed at once unless a writer registered before t may have
// read it as a head (its subgraph is in that writer's batch: HeadFilters); then it waits in
// limbo until every such writer has finished. Batches that delete vertices lock first and
// build under the locks.
//
// Readers call VersionAt(s, ts) with a ts they registered in the tracer; the result stays
// valid until they unregister.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "memgraph/head_filters.h"
#include "memgraph/node_allocator.h"
#include "memgraph/subgraph.h"
#include "memgraph/subgraph_directory.h"
#include "strata/function_ref.h"
#include "strata/status.h"
#include "strata/types.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"
#include "mvcc/walk_registry.h"
#include "util/coro.h"
#include "util/striped_counter.h"

namespace strata::mem {


struct MemGraphOptions {
  GraphKind kind = GraphKind::kDirected;
  bool weighted = false;
  // Record delete markers for edges deleted here (needed when older tiers exist).
  bool tombstones = false;
  uint32_t cart_threshold = 256;
  // Bound of the free lists' depot, and of each writer thread's list, per block size
  // (NodeAllocator::set_list_limit).
  size_t free_list_class_bytes = NodeAllocator::kPoolClassBytes;
  // Whether writer threads allocate through jemalloc caches of their own
  // (NodeAllocator::set_thread_caches): faster, but a long-lived tier's arena keeps more
  // partly used slabs. For a memgraph that is flushed and dropped soon.
  bool thread_caches = false;
};

// How Apply locates a batch's work items (each subgraph's head version, its counts, container
// roots and the append area's next slot) before their copy-on-write builds:
//   kSequential  no prefetch; each item is built as it comes (the baseline of the ablation);
//   kPipeline    a fixed software pipeline: later items' heads, headers and area slots are
//                prefetched a fixed number of items ahead of the build; a batch of at most 8
//                items, shorter than the pipeline's distances, runs as kInterleave with group 8;
//   kInterleave  one coroutine per item (util/coro.h), `group` at a time: each prefetches the
//                next thing it reads and suspends; `prefetch` false suspends without the
//                prefetches (ablation only).
// All modes build the same versions; the mode changes only which lines are in cache when.
// Process-wide; meant for measurement (docs/benchmarks.md, "Coroutine interleaving"): the
// default is the mode that measured best.
struct LocateConfig {
  enum Mode : uint8_t { kSequential, kPipeline, kInterleave };
  Mode mode = kPipeline;
  uint8_t group = 16;  // kInterleave: items in flight per thread, 1..64
  bool prefetch = true;
};
void SetLocateConfig(const LocateConfig& c);
LocateConfig GetLocateConfig();

// A primitive operation on one subgraph. Edge ops name the stored direction: for kIn, u is the
// destination whose in-list gets v.
struct PrimOp {
  enum Kind : uint8_t {
    kAddVertex,
    kDeleteVertex,  // clears u's out- and in-lists, hides older tiers
    kPut,           // (dir,u,v) := live with weight; u exists (as after a kAddVertex)
    kPutIfExists,   // like kPut, but aborts the whole batch with NotFound if (u,v) is absent
    kDelete,        // (dir,u,v) := absent
  };
  Kind kind;
  uint8_t dir;  // 0 = out, 1 = in
  uint32_t seq;  // order within the batch; ops on one subgraph apply in seq order
  VertexId u;
  VertexId v;
  double weight;
};

// Read access to what older tiers (sealed memgraphs, disk) hold, consulted by Apply for
// kPutIfExists and for the neighbors of a deleted vertex. Null means "no older tiers".
class OlderTiers {
 public:
  virtual ~OlderTiers() = default;
  virtual bool HasEdge(uint8_t dir, VertexId u, VertexId v) = 0;
  // Appends u's live neighbors in direction dir.
  virtual void Neighbors(uint8_t dir, VertexId u, std::vector<VertexId>* out) = 0;
};

struct ApplyStats {
  uint64_t versions_created = 0;
  uint64_t versions_reclaimed = 0;
};

class MemGraph {
 public:
  // Hollow headers that wait before a grace period over the walks starts (Retire): by
  // arithmetic ~1 MiB with their counts, ~7 ms of single-edge commits beside a reader. Each
  // period's barrier is a membarrier(2) call that interrupts every running thread of the
  // process; at 512 a writer beside a PageRank reader made 700-1,000 of them a second, ~45 us
  // each on this project's VMs (docs/benchmarks.md, "Issue 28: the mixed workload in rounds").
  static constexpr size_t kGraceBatch = 4096;
  // Headers per hollow entry that commits join (one list per this many, not per commit).
  static constexpr size_t kHollowEntryMax = 128;
  // Hollow headers one commit frees at most (whole entries: the last one freed may pass it):
  // when a long reader ends, or a walk that held a grace period back does, many become due at
  // once, and one commit must not pay for all of them. A period's headers and a partly filled
  // entry after them fit.
  static constexpr size_t kHollowFreesPerCommit = 2 * kGraceBatch;

  MemGraph(const MemGraphOptions& options, mvcc::CommitClock* clock,
           mvcc::ReaderTracer* tracer);
  ~MemGraph();
  MemGraph(const MemGraph&) = delete;
  MemGraph& operator=(const MemGraph&) = delete;

  // Applies `ops` atomically at one new commit timestamp (returned in *ts). `ops` is consumed;
  // the ops of each subgraph must come in nondecreasing seq order (DBImpl::Expand emits a batch
  // in seq order).
  // On a failed kPutIfExists nothing is applied and no timestamp is taken.
  // `before_publish` (nullable) runs once the timestamp is taken and the new versions are
  // built, before anything is visible; the WAL appends there, so conflicting batches reach the
  // log in commit order. If it fails, nothing is applied (the timestamp is published empty).
  Status Apply(std::vector<PrimOp>* ops, OlderTiers* older, Timestamp* ts,
               FunctionRef<Status(Timestamp)>* before_publish = nullptr);

  // The newest version of subgraph s with timestamp <= ts, or null. The walk down the chain is
  // announced (mvcc/walk_registry.h): the unlinked versions it may step through stay allocated
  // until it ends, whatever the reader's timestamp.
  const SubgraphVersion* VersionAt(uint64_t s, Timestamp ts) const {
    const SubgraphSlot* slot = dir_.Get(s);
    if (slot == nullptr) return nullptr;
    mvcc::WalkRegistry::Walk walk;
    const SubgraphVersion* v = slot->head.load(std::memory_order_acquire);
    while (v != nullptr && v->ts > ts) v = v->older.load(std::memory_order_acquire);
    return v;
  }
  uint64_t subgraph_bound() const { return dir_.bound(); }
  // Unlinks, in subgraphs [begin, end), the versions no registered reader selects there (a
  // reader that released those subgraphs selects none: ReaderTracer::Release), as a commit on
  // each would, and frees them (or queues them, as a commit does: Retire). A commit reclaims
  // only in the subgraphs it writes, so without this the versions a long reader pinned stay
  // until each of its subgraphs is written again.
  void Reclaim(uint64_t begin, uint64_t end);
  // Prefetches the header of subgraph s's head version (the one VersionAt usually returns), for
  // walks that call VersionAt on subgraphs ahead. Only a hint.
  void PrefetchHead(uint64_t s) const {
    const SubgraphSlot* slot = dir_.Get(s);
    if (slot == nullptr) return;
    const SubgraphVersion* v = slot->head.load(std::memory_order_acquire);
    if (v != nullptr) coro::PrefetchRange(v, sizeof(SubgraphVersion));
  }

  const MemGraphOptions& options() const { return opt_; }
  size_t bytes() const { return alloc_.bytes(); }
  // Resident pages of its allocator's arena (NodeAllocator::ArenaPagesBytes).
  size_t arena_pages_bytes() const { return alloc_.ArenaPagesBytes(); }
  // Freed blocks its allocator's free lists hold (NodeAllocator::ListedBytes).
  size_t listed_bytes() const { return alloc_.ListedBytes(); }
  // Whether its arena may be kept as a spare for the next memgraph once this one is
  // destroyed (NodeAllocator::set_spare_on_release). Any time.
  void set_spare_arena(bool keep) { alloc_.set_spare_on_release(keep); }
  // The version counts below are striped (util/striped_counter.h): every commit changes two of
  // them, and one shared line bounced between the writers' cores. Exact once writers stop.
  uint64_t live_versions() const { return live_versions_.Count(); }
  // Versions whose containers were freed: whole, or hollowed (see HollowVersion).
  uint64_t reclaimed_versions() const { return reclaimed_.Count(); }
  // Hollow headers of reclaimed middle versions, waiting until no reader can walk past them.
  uint64_t hollow_versions() const { return hollow_versions_.Count(); }
  // Checks every chain against its slot's tail (taking each slot's lock): the tail is on the
  // chain, its older link is null and its ts is the slot's tail_ts. The first subgraph where
  // that fails, or UINT64_MAX. For tests.
  uint64_t FirstBadTailForTesting() const;
  // Work items the calling thread has built through BuildPipelined in batches of more than a
  // few subgraphs (its steady state; smaller batches run only its prologue), over its
  // lifetime. For tests that must reach that path.
  static uint64_t PipelinedItemsForTesting();
  // Versions built before the locks were taken and built again because another writer had
  // changed their subgraph meanwhile (see Apply).
  uint64_t rebuilt_versions() const { return rebuilt_.Count(); }
  // Whether a commit was applied here (set by the first; a flag, not the newest timestamp, so
  // that commits write no line shared between writers).
  bool HasCommits() const { return has_commits_.load(std::memory_order_acquire); }

 private:
  struct SubgraphWork;
  void ExpandVertexDeletes(std::vector<PrimOp>* ops, OlderTiers* older,
                           std::vector<PrimOp>* derived);
  Status BuildVersion(SubgraphWork* w, OlderTiers* older);
  Status BuildPending(std::vector<SubgraphWork>* work, OlderTiers* older);
  Status BuildPipelined(std::vector<SubgraphWork>* work, OlderTiers* older);
  Status BuildInterleaved(std::vector<SubgraphWork>* work, OlderTiers* older,
                          const LocateConfig& c);
  void Unlink(SubgraphSlot* slot, const std::vector<Timestamp>& readers,
              std::vector<SubgraphVersion*>* dead, std::vector<SubgraphVersion*>* middle);
  void QueueHollow(Timestamp t, std::vector<SubgraphVersion*>* vs);
  void Retire(Timestamp t, Timestamp min_reader, Timestamp min_writer,
              std::vector<SubgraphVersion*>* unread, std::vector<SubgraphVersion*>* dead,
              std::vector<SubgraphVersion*>* middle);

  const MemGraphOptions opt_;
  mvcc::CommitClock* const clock_;
  mvcc::ReaderTracer* const tracer_;
  mutable NodeAllocator alloc_;
  SubgraphDirectory dir_;
  StripedCounter live_versions_;
  StripedCounter reclaimed_;
  StripedCounter hollow_versions_;
  StripedCounter rebuilt_;
  std::atomic<bool> has_commits_{false};

  // Writers between their optimistic build and their locks: the heads they read must stay
  // allocated. Kept apart from the readers' tracer so that, with no snapshot open, GC still
  // unlinks every replaced version at once (a writer pins heads, never older versions).
  mvcc::ReaderTracer writers_{8, /*counted=*/false};
  // The subgraphs whose heads each registered writer may read: a commit holds back in limbo
  // only the replaced versions of those (see head_filters.h).
  HeadFilters head_filters_;
  // Unlinked versions that a writer registered before `retired_at` may still be reading; freed
  // once the writers' minimum timestamp reaches retired_at. In commit order, nearly: an entry
  // waits for the entries before it, which only delays it.
  // A `middle` entry holds versions unlinked from between two kept versions of a chain: once
  // the writers are past retired_at their containers are released and the headers move to
  // hollow_.
  struct Limbo {
    Timestamp retired_at;
    std::vector<SubgraphVersion*> versions;
    bool middle = false;
  };
  std::mutex limbo_mu_;
  std::deque<Limbo> limbo_;
  // Hollow headers of middle versions (HollowVersion), which a walk in VersionAt that loaded a
  // link before their unlink may still step through. Freed when a grace period over the walks
  // (grace_) started after their unlink has passed, or else once the readers' minimum reaches
  // retired_at (no reader can walk past them then). Guarded by limbo_mu_, as are the grace
  // fields.
  std::deque<Limbo> hollow_;
  std::atomic<size_t> hollow_entries_{0};
  // The grace period in progress covers the first grace_covered_ entries of hollow_ (0: none
  // in progress); one starts when the headers past them reach kGraceBatch.
  mvcc::WalkRegistry::Grace grace_;
  size_t grace_covered_ = 0;
  size_t uncovered_headers_ = 0;  // headers in hollow_ past the covered entries
  bool grace_failed_ = false;     // the writer's barrier was refused: the reader rule only
  // Emptied limbo lists, reused for the next ones (a list of a batch's replaced versions is
  // ~16 KiB: allocating one per batch went back to the OS on every free).
  std::vector<std::vector<SubgraphVersion*>> spare_lists_;
  std::atomic<size_t> limbo_entries_{0};
};

// Vertex i's scan of Adjacency a prepared ahead of ScanVertex, in stages a walk over many
// vertices runs a few vertices apart (TierReader's range walks: the prefetch pipeline of
// issue 30). Each stage reads only what the stage before prefetched (when run far enough
// ahead) and prefetches what the next one reads:
//   Start      the vertex's count and its container: the C-ART object, or the clustered
//              index's root (reads a's header: count_mask, art_mask, arts, ci);
//   Descend    the C-ART's root node, or the clustered index's path down to the leaf where i's
//              run starts (reads the inner nodes) and that leaf's header;
//   Column     the leaf's u column;
//   Locate     i's run in the leaf (reads the u column) and its first keys (weights too when
//              asked).
// ScanVertex(a, i, &at, fn) then scans what they found; it runs any stage not run yet, so a
// VertexAt at any stage gives the same entries in the same calls as ScanVertex(a, i, fn).
//
// A VertexAt made by Walk() serves a walk instead: one VertexAt passed to ScanVertex for
// vertices of one Adjacency in ascending order (any subset), which finds each clustered-index
// vertex's run from where the last one's ended (ClusteredIndex::WalkTo): one descent per walk,
// each leaf's u column read once. Same entries in the same calls as ScanVertex(a, i, fn).
struct VertexAt {
  enum Stage : uint8_t { kNew, kStarted, kDescended, kColumn, kLocated, kWalkNew, kWalking };
  Stage stage = kNew;
  ClusteredIndex::RunAt ci;  // !a.InArt(i), from kDescended on; the walk's position
  static VertexAt Walk() {
    VertexAt at;
    at.stage = kWalkNew;
    return at;
  }
};
inline void VertexAtStart(const Adjacency& a, uint32_t i, VertexAt* at) {
  if (a.InArt(i)) {
    coro::Prefetch(&a.Art(i));
  } else {
    coro::Prefetch(a.ci.root_node());
  }
  if (a.appended != nullptr) coro::Prefetch(a.appended);
  coro::Prefetch(a.CountAddress(i));
  at->stage = VertexAt::kStarted;
}
inline void VertexAtDescend(const Adjacency& a, uint32_t i, VertexAt* at) {
  if (a.InArt(i)) {
    coro::Prefetch(a.Art(i).root_node());
  } else {
    a.ci.Seek(static_cast<uint8_t>(i), &at->ci);
  }
  at->stage = VertexAt::kDescended;
}
inline void VertexAtColumn(const Adjacency& a, uint32_t i, VertexAt* at) {
  if (!a.InArt(i)) ClusteredIndex::PrefetchUColumn(at->ci);
  at->stage = VertexAt::kColumn;
}
inline void VertexAtLocate(const Adjacency& a, uint32_t i, bool weights, VertexAt* at) {
  if (!a.InArt(i)) ClusteredIndex::FindRun(static_cast<uint8_t>(i), weights, &at->ci);
  at->stage = VertexAt::kLocated;
}
// Runs the stages of `at` not run yet.
inline void VertexAtFinish(const Adjacency& a, uint32_t i, bool weights, VertexAt* at) {
  if (at->stage < VertexAt::kStarted) at->stage = VertexAt::kStarted;  // prefetches only
  if (at->stage < VertexAt::kDescended) VertexAtDescend(a, i, at);
  if (at->stage < VertexAt::kColumn) at->stage = VertexAt::kColumn;  // prefetches only
  if (at->stage < VertexAt::kLocated) VertexAtLocate(a, i, weights, at);
}

// Reading helpers over the view of one adjacency (containers + appended) for vertex i = local
// index. fn(const uint64_t* keys, const double* w, const uint8_t* tomb, size_t n) -> bool|void.
// With `at` (nullable): i's containers as VertexAt stages prepared them.
template <class F>
void ScanVertex(const Adjacency& a, uint32_t i, VertexAt* at, F&& fn) {
  if (!a.MayHaveEntries(i)) return;
  auto containers = [&](auto&& chunk) {
    if (a.InArt(i)) {
      a.Art(i).ForEachChunk(chunk);
    } else if (at == nullptr) {
      a.ci.ForEachInVertex(static_cast<uint8_t>(i), chunk);
    } else if (at->stage >= VertexAt::kWalkNew) {
      if (at->stage == VertexAt::kWalkNew) {
        a.ci.WalkStart(static_cast<uint8_t>(i), &at->ci);
        at->stage = VertexAt::kWalking;
      }
      ClusteredIndex::WalkTo(static_cast<uint8_t>(i), &at->ci);
      ClusteredIndex::ScanRun(static_cast<uint8_t>(i), &at->ci, chunk);
    } else {
      VertexAtFinish(a, i, /*weights=*/false, at);
      ClusteredIndex::ScanRun(static_cast<uint8_t>(i), &at->ci, chunk);
    }
  };
  uint8_t idx[kAppendCapacity];
  const size_t m = a.appended != nullptr && a.appended->MayHave(i)
                       ? a.appended->Run(a.appended_n, i, idx)
                       : 0;
  if (m == 0) {
    containers(fn);
    return;
  }
  ScanWithAppended(*a.appended, idx, m, containers, fn);
}
template <class F>
void ScanVertex(const Adjacency& a, uint32_t i, F&& fn) {
  ScanVertex(a, i, static_cast<VertexAt*>(nullptr), fn);
}
// The index of the latest of a's appended updates to (i, v) in its view, or -1 when they hold
// none (its containers decide).
inline ptrdiff_t AppendedIndex(const Adjacency& a, uint32_t i, uint64_t v) {
  return a.appended != nullptr ? a.appended->Find(a.appended_n, i, v) : -1;
}

inline bool FindEdge(const Adjacency& a, uint32_t i, uint64_t v, double* w, bool* tomb) {
  if (!a.MayHaveEntries(i)) return false;
  const ptrdiff_t p = AppendedIndex(a, i, v);
  if (p >= 0) {
    const uint8_t k = a.appended->Kind(static_cast<size_t>(p));
    if (k == kAppendErased) return false;
    if (w != nullptr) *w = a.appended->w() != nullptr ? a.appended->w()[p] : 1.0;
    if (tomb != nullptr) *tomb = k == kAppendTomb;
    return true;
  }
  if (a.InArt(i)) return a.Art(i).Find(v, w, tomb);
  return a.ci.Find(static_cast<uint8_t>(i), v, w, tomb);
}

}  // namespace strata::mem
