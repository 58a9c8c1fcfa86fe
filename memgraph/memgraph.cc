#include "memgraph/memgraph.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>

#include "memgraph/append_area.h"
#include "util/coro.h"
#include "util/radix_sort.h"
#include "util/scratch.h"
#include "util/small_sort.h"

namespace strata::mem {

namespace {

inline uint64_t SubgraphOf(VertexId v) { return v >> kSubgraphBits; }
inline uint32_t LocalOf(VertexId v) { return static_cast<uint32_t>(v & (kSubgraphSize - 1)); }

// Per-thread buffers of Apply, reused across batches (util/scratch.h): a batch's sort buffer
// and work list are hundreds of KiB to MiB.
struct ApplyScratch {
  RadixSortScratch<PrimOp> sort;
  std::vector<SubgraphVersion*> unread;
  std::vector<SubgraphVersion*> dead;
  std::vector<SubgraphVersion*> middle;
  std::vector<Timestamp> readers;
  std::vector<mvcc::ReaderTracer::Active> active;
  std::vector<Timestamp> subgraph_readers;
};

// The distinct timestamps, ascending, of the readers in `active` (ReaderTracer::ActiveReaders:
// ascending by ts) that may still read subgraph s — those that have not released it — into
// *out. t_r (released 0, last) is always among them. Returns whether some reader has released
// a prefix: if not, the list is every reader's and serves every subgraph; if so, each subgraph
// needs its own.
bool SubgraphReaders(const std::vector<mvcc::ReaderTracer::Active>& active, uint64_t s,
                     std::vector<Timestamp>* out) {
  out->clear();
  bool released = false;
  for (const mvcc::ReaderTracer::Active& a : active) {
    released |= a.released != 0;
    if (a.released <= s && (out->empty() || out->back() != a.ts)) out->push_back(a.ts);
  }
  return released;
}
thread_local ApplyScratch apply_scratch;

// Sorts ops by (subgraph, seq), stably. Each subgraph's ops arrive in seq order (Apply's
// precondition: DBImpl::Expand emits a batch in seq order, recovery groups it by subgraph
// stably), so one stable pass by subgraph does it; derived ops (vertex deletes)
// are appended out of seq order, so that path sorts by seq first (by_seq).
void SortBySubgraph(std::vector<PrimOp>* ops, bool by_seq) {
  RadixSortScratch<PrimOp>* sc = &apply_scratch.sort;
  if (by_seq) StableRadixSort(ops, [](const PrimOp& p) { return uint64_t{p.seq}; }, sc);
  StableRadixSort(ops, [](const PrimOp& p) { return SubgraphOf(p.u); }, sc);
  sc->Release();
}

// The process-wide LocateConfig, packed: mode | group << 8 | prefetch << 16.
std::atomic<uint32_t> locate_config{LocateConfig::kPipeline | 16u << 8 | 1u << 16};

// Prefetches the two lines a build's in-place append to a's area writes (the next slot's key
// and its vertex-and-kind byte); nothing when a has no area or it is full.
inline void PrefetchAreaSlot(const Adjacency* a) {
  if (a == nullptr || a->appended == nullptr || a->appended_n >= a->appended->cap) return;
  coro::Prefetch(a->appended->v() + a->appended_n);
  coro::Prefetch(a->appended->uk() + a->appended_n);
}

// One work item's locate, then its build: the slot, the head version, the containers' roots
// (CopyVersion takes a reference on each) and the append area's next slot, each prefetched
// (when `prefetch`) and followed by a suspension, so the scheduler's other items run while
// the line arrives. Reads only what BuildPipelined's stages read (heads a registered or
// locking writer keeps allocated). `build` runs the item's BuildVersion.
template <typename W, typename Build>
coro::Task<Status> LocateThenBuild(const W* w, bool prefetch, Build build) {
  if (w->fresh != nullptr) co_return Status::OK();
  if (prefetch) coro::Prefetch(w->slot);
  co_await coro::Suspend{};
  const SubgraphVersion* h = w->slot->head.load(std::memory_order_acquire);
  if (h != nullptr) {
    if (prefetch) {  // the header spans two or three lines
      coro::Prefetch(h);
      coro::Prefetch(reinterpret_cast<const char*>(h) + 64);
      coro::Prefetch(reinterpret_cast<const char*>(h + 1) - 1);
    }
    co_await coro::Suspend{};
    for (const Adjacency* a : {&h->out, static_cast<const Adjacency*>(h->in())}) {
      if (a == nullptr || !prefetch) continue;
      coro::Prefetch(a->ci.root_node());
      coro::PrefetchRange(a->counts(), a->CountBytes());
      if (a->appended != nullptr) coro::Prefetch(a->appended);
      if (a->arts != nullptr) coro::Prefetch(a->arts);
    }
    co_await coro::Suspend{};
    // An update takes no prior state (Adjacency's counts): nothing is looked up, and the
    // build's append writes the area's next slot.
    if (prefetch) {
      for (const Adjacency* a : {&h->out, static_cast<const Adjacency*>(h->in())}) {
        PrefetchAreaSlot(a);
      }
    }
    co_await coro::Suspend{};
  }
  co_return build();
}

// body(k) for k in [0, n), each item's line fetched `ahead` items before its body: for loops
// over items whose lines are cold and whose bodies wait on them one at a time (atomics).
template <typename Fetch, typename Body>
void LoopFetchingAhead(size_t n, size_t ahead, Fetch&& fetch, Body&& body) {
  for (size_t k = 0; k < std::min(ahead, n); ++k) fetch(k);
  for (size_t k = 0; k < n; ++k) {
    if (k + ahead < n) fetch(k + ahead);
    body(k);
  }
}

}  // namespace

void SetLocateConfig(const LocateConfig& c) {
  const uint32_t group = std::clamp<uint32_t>(c.group, 1, 64);
  locate_config.store(uint32_t{c.mode} | group << 8 | uint32_t{c.prefetch} << 16,
                      std::memory_order_relaxed);
}

LocateConfig GetLocateConfig() {
  const uint32_t x = locate_config.load(std::memory_order_relaxed);
  LocateConfig c;
  c.mode = static_cast<LocateConfig::Mode>(x & 0xff);
  c.group = static_cast<uint8_t>(x >> 8);
  c.prefetch = (x >> 16) & 1;
  return c;
}

struct MemGraph::SubgraphWork {
  uint64_t s = 0;
  SubgraphSlot* slot = nullptr;
  PrimOp* ops = nullptr;  // this subgraph's ops, sorted by seq
  size_t n = 0;
  SubgraphVersion* base = nullptr;
  SubgraphVersion* fresh = nullptr;
};

MemGraph::MemGraph(const MemGraphOptions& options, mvcc::CommitClock* clock,
                   mvcc::ReaderTracer* tracer)
    : opt_(options), clock_(clock), tracer_(tracer) {
  alloc_.set_list_limit(options.free_list_class_bytes);
  alloc_.set_thread_caches(options.thread_caches);
}

MemGraph::~MemGraph() {
  // Every chain, a chunk of versions at a time: read their older links (fetched ahead), then
  // free the chunk while it is in cache. Limbo versions were cut from their chains (their
  // older links may still point at each other): freed as listed.
  std::vector<SubgraphVersion*> todo, chunk;
  for (uint64_t s = 0; s < dir_.bound(); ++s) {
    SubgraphSlot* slot = dir_.Get(s);
    if (slot == nullptr) continue;
    SubgraphVersion* v = slot->head.load(std::memory_order_relaxed);
    if (v != nullptr) todo.push_back(v);
  }
  constexpr size_t kChunk = 1024, kAhead = 8;
  while (!todo.empty()) {
    const size_t k = std::min(todo.size(), kChunk);
    chunk.assign(todo.end() - static_cast<ptrdiff_t>(k), todo.end());
    todo.resize(todo.size() - k);
    for (size_t i = 0; i < k; ++i) {
      if (i + kAhead < k) __builtin_prefetch(chunk[i + kAhead]);
      SubgraphVersion* older = chunk[i]->older.load(std::memory_order_relaxed);
      if (older != nullptr) todo.push_back(older);
    }
    FreeVersions(&alloc_, chunk.data(), chunk.data() + k);
  }
  for (const std::deque<Limbo>* q : {&limbo_, &hollow_}) {
    for (const Limbo& l : *q) {
      FreeVersions(&alloc_, l.versions.data(), l.versions.data() + l.versions.size());
    }
  }
}

uint64_t MemGraph::FirstBadTailForTesting() const {
  for (uint64_t s = 0; s < dir_.bound(); ++s) {
    SubgraphSlot* slot = dir_.Get(s);
    if (slot == nullptr) continue;
    std::lock_guard<std::mutex> g(slot->mu);
    const SubgraphVersion* v = slot->head.load(std::memory_order_relaxed);
    if (v == nullptr) {
      if (slot->tail != nullptr) return s;
      continue;
    }
    while (v != slot->tail && v != nullptr) v = v->older.load(std::memory_order_relaxed);
    if (v == nullptr || v->older.load(std::memory_order_relaxed) != nullptr ||
        v->ts != slot->tail_ts) {
      return s;
    }
  }
  return UINT64_MAX;
}

// For each kDeleteVertex(u), derives the deletes of u's edges stored in other lists: (x,u) in
// x's out-list for undirected graphs, and the mirror entries for kDirectedWithInEdges. Reads
// u's subgraph head, which the caller holds locked.
void MemGraph::ExpandVertexDeletes(std::vector<PrimOp>* ops, OlderTiers* older,
                                   std::vector<PrimOp>* derived) {
  if (opt_.kind == GraphKind::kDirected) return;
  std::vector<VertexId> nbrs;
  for (const PrimOp& op : *ops) {
    if (op.kind != PrimOp::kDeleteVertex) continue;
    const uint32_t i = LocalOf(op.u);
    const SubgraphVersion* head = dir_.Get(SubgraphOf(op.u))->head.load(std::memory_order_acquire);
    for (uint8_t dir = 0; dir < (opt_.kind == GraphKind::kUndirected ? 1 : 2); ++dir) {
      nbrs.clear();
      bool hidden = head != nullptr && ((head->deleted_mask >> i) & 1);
      if (older != nullptr && !hidden) older->Neighbors(dir, op.u, &nbrs);
      if (head != nullptr) {
        const Adjacency* a = dir == 0 ? &head->out : head->in();
        ScanVertex(*a, i, [&](const uint64_t* k, const double*, const uint8_t* tomb, size_t n) {
          for (size_t j = 0; j < n; ++j) {
            if (tomb == nullptr || !tomb[j]) nbrs.push_back(k[j]);
          }
          return true;
        });
      }
      // Neighbors added earlier in this batch.
      for (const PrimOp& p : *ops) {
        if ((p.kind == PrimOp::kPut || p.kind == PrimOp::kPutIfExists) && p.dir == dir &&
            p.u == op.u && p.seq <= op.seq) {
          nbrs.push_back(p.v);
        }
      }
      std::sort(nbrs.begin(), nbrs.end());
      nbrs.erase(std::unique(nbrs.begin(), nbrs.end()), nbrs.end());
      // Tombstoned-in-memgraph neighbors may still be in `nbrs` via older tiers; deleting
      // them again is harmless.
      for (VertexId x : nbrs) {
        PrimOp d{};
        d.kind = PrimOp::kDelete;
        d.seq = op.seq;
        d.u = x;
        d.v = op.u;
        // Undirected: (x,u) lives in x's out-list. Directed+in: u's out-neighbor x keeps u in
        // its in-list; u's in-neighbor x keeps u in its out-list.
        d.dir = opt_.kind == GraphKind::kUndirected ? 0 : (dir == 0 ? 1 : 0);
        derived->push_back(d);
      }
    }
  }
}

// Builds the version of every work item that has none yet, from its slot's head (loaded with
// acquire: the optimistic build holds no lock). A shuffled stream touches each subgraph with about
// one edge per batch, so the build is bound by cache misses on versions and their containers
// (an update looks nothing up: Adjacency's counts). The items are software-pipelined: item
// k + 24's slot is fetched, k + 20's head (both lines of the version header), k + 16's counts
// (every line: CopyVersion copies them), append area and container roots (CopyVersion takes a
// reference on each), k + 14's append area slot an in-place append writes (its key's line and
// its vertex-and-kind byte's); item k is built
// with those lines in cache. The stages only read (heads a registered or locking writer keeps
// allocated) and prefetch.
namespace {
thread_local uint64_t tls_pipelined_items = 0;  // PipelinedItemsForTesting
// Batches of at most this many items (a single-edge transaction touches one or two
// subgraphs) are shorter than every distance below: the prologue's loops run each stage for
// the whole batch before the next stage, so the items' chains of misses (slot, head, header
// and roots, area slot) overlap stage by stage, as one coroutine per item overlapped them
// (LocateThenBuild) but without a scheduler and frames: callgrind, a single-edge load at
// scale 18 (`strata-bench fill --batch 1`), 6,376 -> 5,044 instructions an edge in
// DBImpl::Write with the in-place sort of radix_sort.h (docs/benchmarks.md, "Issue 28:
// single-edge transactions without coroutines").
constexpr size_t kSmallBatch = 8;
}  // namespace

uint64_t MemGraph::PipelinedItemsForTesting() { return tls_pipelined_items; }

Status MemGraph::BuildPipelined(std::vector<SubgraphWork>* items, OlderTiers* older) {
  std::vector<SubgraphWork>& work = *items;
  constexpr size_t kSlot = 24, kHead = 20, kBase = 16, kArea = 14;
  if (work.size() > kSmallBatch) tls_pipelined_items += work.size();
  auto pending = [&](size_t k) { return k < work.size() && work[k].fresh == nullptr; };
  // coro::Prefetch, not __builtin_prefetch: GCC deleted that one (the loop before the main one
  // holds nothing else, and in the main loop it went too), so each item's head load waited
  // for its slot's line (a third of this function's samples; docs/benchmarks.md, "Issue 28:
  // the slot prefetch GCC deleted").
  auto prefetch_slot = [&](size_t k) {
    if (pending(k)) coro::Prefetch(work[k].slot);
  };
  auto prefetch_head = [&](size_t k) {
    if (!pending(k)) return;
    const SubgraphVersion* h = work[k].slot->head.load(std::memory_order_acquire);
    if (h != nullptr) coro::PrefetchRange(h, sizeof(SubgraphVersion));  // two lines
  };
  auto prefetch_base = [&](size_t k) {
    if (!pending(k)) return;
    const SubgraphVersion* h = work[k].slot->head.load(std::memory_order_acquire);
    if (h == nullptr) return;
    for (const Adjacency* a : {&h->out, static_cast<const Adjacency*>(h->in())}) {
      if (a == nullptr) continue;
      __builtin_prefetch(a->ci.root_node());
      coro::PrefetchRange(a->counts(), a->CountBytes());  // copied whole by CopyVersion
      if (a->appended != nullptr) __builtin_prefetch(a->appended);
      if (a->arts != nullptr) __builtin_prefetch(a->arts);
    }
  };
  // The append area's next slot, where an in-place append writes its key (the header,
  // prefetched two items ago, says where), in each direction the item updates.
  auto prefetch_area = [&](size_t k) {
    if (!pending(k)) return;
    const SubgraphVersion* h = work[k].slot->head.load(std::memory_order_acquire);
    if (h == nullptr) return;
    for (const Adjacency* a : {&h->out, static_cast<const Adjacency*>(h->in())}) {
      PrefetchAreaSlot(a);
    }
  };
  const size_t n = work.size();
  for (size_t k = 0; k < std::min(kSlot, n); ++k) prefetch_slot(k);
  for (size_t k = 0; k < std::min(kHead, n); ++k) prefetch_head(k);
  for (size_t k = 0; k < std::min(kBase, n); ++k) prefetch_base(k);
  for (size_t k = 0; k < std::min(kArea, n); ++k) prefetch_area(k);
  for (size_t k = 0; k < work.size(); ++k) {
    prefetch_slot(k + kSlot);
    prefetch_head(k + kHead);
    prefetch_base(k + kBase);
    prefetch_area(k + kArea);
    if (work[k].fresh != nullptr) continue;
    Status st = BuildVersion(&work[k], older);
    if (!st.ok()) return st;
  }
  return Status::OK();
}

// Each pending item's locate and build as one coroutine, c.group at a time on this thread's
// scheduler (frames from its arena: nothing is allocated per item). Items are built in an
// interleaved order; each build reads only its own item's head, so the versions are those of
// the sequential order. On an error the first failing status (in completion order) is returned
// and items not yet started are left unbuilt; the caller frees what was built.
Status MemGraph::BuildInterleaved(std::vector<SubgraphWork>* items, OlderTiers* older,
                                  const LocateConfig& c) {
  coro::Scheduler& sched = coro::PerThread<struct BuildSite>(c.group, /*frame_bytes=*/512);
  SubgraphWork* const w = items->data();
  Status st = sched.Run(items->size(), [&](size_t k) {
    return LocateThenBuild(&w[k], c.prefetch, [this, older, item = &w[k]] {
      return BuildVersion(item, older);
    });
  });
  assert(sched.arena().fallbacks() == 0);  // every frame fits a slot
  return st;
}

Status MemGraph::BuildPending(std::vector<SubgraphWork>* items, OlderTiers* older) {
  const LocateConfig c = GetLocateConfig();
  switch (c.mode) {
    case LocateConfig::kSequential:
      for (SubgraphWork& w : *items) {
        if (w.fresh != nullptr) continue;
        Status st = BuildVersion(&w, older);
        if (!st.ok()) return st;
      }
      return Status::OK();
    case LocateConfig::kInterleave:
      return BuildInterleaved(items, older, c);
    case LocateConfig::kPipeline:
      break;
  }
  return BuildPipelined(items, older);
}

Status MemGraph::Apply(std::vector<PrimOp>* ops, OlderTiers* older, Timestamp* ts,
                       FunctionRef<Status(Timestamp)>* before_publish) {
  if (ops->empty()) {
    *ts = clock_->read_ts();
    return Status::OK();
  }
  // Group by subgraph; within a subgraph keep batch order. One work item per subgraph, in
  // ascending order: the lock order.
  SortBySubgraph(ops, /*by_seq=*/false);

  bool has_vertex_delete = std::any_of(ops->begin(), ops->end(), [](const PrimOp& p) {
    return p.kind == PrimOp::kDeleteVertex;
  });
  thread_local std::vector<SubgraphWork> work_scratch;  // not in ApplyScratch: a private type
  ScopedScratch<SubgraphWork> scoped_work(&work_scratch);
  std::vector<SubgraphWork>& work = scoped_work.get();
  auto group = [&] {
    work.clear();
    for (size_t b = 0; b < ops->size();) {
      size_t e = b;
      const uint64_t s = SubgraphOf((*ops)[b].u);
      while (e < ops->size() && SubgraphOf((*ops)[e].u) == s) ++e;
      SubgraphWork w;
      w.s = s;
      w.slot = dir_.GetOrCreate(s);
      w.ops = ops->data() + b;
      w.n = e - b;
      work.push_back(w);
      b = e;
    }
  };
  auto free_fresh = [&] {
    for (SubgraphWork& w : work) {
      if (w.fresh != nullptr) FreeVersion(&alloc_, w.fresh);
      w.fresh = nullptr;
    }
  };

  // Optimistic build: the new versions are built from the current heads before any lock is
  // taken, so two writers whose batches share a few subgraphs build in parallel; under the
  // locks only the subgraphs whose head moved meanwhile are rebuilt. Registered in writers_
  // until then, this writer keeps every head it read allocated (a replaced head waits in limbo
  // while a writer registered before its replacement runs), so an unchanged head pointer means
  // an unchanged head (no ABA).
  // Batches that delete vertices take the locks first (their lock set depends on the heads),
  // and so do batches of at most kLockFirstSubgraphs subgraphs (a single-edge transaction):
  // holding one or two locks through a build of one or two versions blocks little, and a
  // writer that reads its heads under their locks need not register in writers_, so the
  // versions it replaces are freed at once instead of through limbo and its mutex (two
  // single-edge writers did both on every commit).
  // Either way the touched subgraphs are locked in ascending order, and afterwards `work`
  // holds exactly the locked slots, in that order.
  constexpr size_t kLockFirstSubgraphs = 2;
  if (!has_vertex_delete) group();
  const bool optimistic = !has_vertex_delete && work.size() > kLockFirstSubgraphs;
  mvcc::ReaderTracer::Slot writer;
  uint32_t filter = HeadFilters::kNone;
  if (!has_vertex_delete) {
    if (optimistic) {
      // The heads this build may read are marked before it registers (head_filters.h).
      filter = head_filters_.Claim();
      for (const SubgraphWork& w : work) head_filters_.Mark(filter, w.s);
      writer = writers_.Register(*clock_);
      if (!BuildPending(&work, older).ok()) {
        free_fresh();  // e.g. a failed kPutIfExists: decided again under the locks
      }
    }
    // The slots' lines are cold by now (the build read them thousands of lines ago), and each
    // lock's atomic waits for the miss before the next lock's load may start: fetched ahead.
    LoopFetchingAhead(
        work.size(), 16, [&](size_t k) { coro::Prefetch(work[k].slot); },
        [&](size_t k) { work[k].slot->mu.lock(); });
  } else {
    std::vector<uint64_t> lockset;
    for (const PrimOp& op : *ops) {
      if (lockset.empty() || lockset.back() != SubgraphOf(op.u)) lockset.push_back(SubgraphOf(op.u));
    }
    std::vector<PrimOp> derived;
    std::vector<SubgraphSlot*> slots;
    for (;;) {
      slots.clear();
      for (uint64_t s : lockset) {
        SubgraphSlot* slot = dir_.GetOrCreate(s);
        slot->mu.lock();
        slots.push_back(slot);
      }
      derived.clear();
      ExpandVertexDeletes(ops, older, &derived);
      std::vector<uint64_t> needed = lockset;
      for (const PrimOp& d : derived) needed.push_back(SubgraphOf(d.u));
      std::sort(needed.begin(), needed.end());
      needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
      if (needed.size() == lockset.size()) break;
      // A neighbor lives in a subgraph we do not hold: lock the larger set in order and retry.
      for (auto it = slots.rbegin(); it != slots.rend(); ++it) (*it)->mu.unlock();
      lockset = std::move(needed);
    }
    if (!derived.empty()) {
      ops->insert(ops->end(), derived.begin(), derived.end());
      SortBySubgraph(ops, /*by_seq=*/true);
    }
    group();
    // The last expansion may need fewer subgraphs than are held: a retry took the set an
    // earlier expansion needed, and another writer has removed edges that led there since.
    // Release those, so `work` is exactly the held set (unlock_all releases `work`'s).
    // Both lists ascend by subgraph.
    size_t k = 0;
    for (SubgraphSlot* slot : slots) {
      if (k < work.size() && work[k].slot == slot) {
        ++k;
      } else {
        slot->mu.unlock();
      }
    }
    assert(k == work.size());
  }
  auto unlock_all = [&] {
    for (auto it = work.rbegin(); it != work.rend(); ++it) it->slot->mu.unlock();
  };

  uint64_t stale = 0;
  for (SubgraphWork& w : work) {
    if (w.fresh != nullptr && w.slot->head.load(std::memory_order_relaxed) != w.base) {
      FreeVersion(&alloc_, w.fresh);
      w.fresh = nullptr;
      ++stale;
    }
  }
  if (optimistic) {
    writers_.Unregister(writer);
    for (const SubgraphWork& w : work) head_filters_.Clear(filter, w.s);
    head_filters_.Release(filter);
  }
  if (stale != 0) rebuilt_.Add(static_cast<int64_t>(stale));
  Status st = BuildPending(&work, older);
  if (!st.ok()) {
    free_fresh();
    unlock_all();
    return st;
  }

  const Timestamp t = clock_->NextCommit();
  if (before_publish != nullptr) {
    st = (*before_publish)(t);
    if (!st.ok()) {
      free_fresh();
      clock_->Publish(t);  // an empty commit keeps t_r moving for later writers
      unlock_all();
      return st;
    }
  }
  // The new versions' first lines were written thousands of lines ago (a batch): fetched
  // ahead, so the stores below do not fill the store buffer with misses that the unlocks
  // (atomics: they drain it) then wait for one by one.
  LoopFetchingAhead(work.size(), 8, [&](size_t k) { coro::Prefetch(work[k].fresh); },
                    [&](size_t k) {
                      SubgraphWork& w = work[k];
                      w.fresh->ts = t;
                      w.fresh->older.store(w.base, std::memory_order_relaxed);
                      w.slot->head.store(w.fresh, std::memory_order_release);
                      if (w.base == nullptr) {
                        w.slot->tail = w.fresh;
                        w.slot->tail_ts = t;
                      }
                    });
  live_versions_.Add(static_cast<int64_t>(work.size()));
  if (!has_commits_.load(std::memory_order_relaxed)) has_commits_.store(true, std::memory_order_release);
  clock_->Publish(t);

  // Unlink what no snapshot can select, and unlock, in one pass. In a subgraph that a reader
  // has released (ReaderTracer::Release), what only that reader selects goes too.
  std::vector<Timestamp>& readers = apply_scratch.readers;
  std::vector<mvcc::ReaderTracer::Active>& active = apply_scratch.active;
  tracer_->ActiveReaders(*clock_, &active);
  const bool released = SubgraphReaders(active, 0, &readers);
  // A writer registered below t may still read a head this commit replaced, if its filter
  // marks the subgraph: those versions wait in limbo (`dead`), the rest are freed (`unread`).
  const Timestamp min_writer = writers_.MinActive(*clock_);
  const bool writers_behind = min_writer < t;
  const HeadFilters::View heads = writers_behind ? head_filters_.Load() : HeadFilters::View();
  std::vector<SubgraphVersion*>& unread = apply_scratch.unread;
  std::vector<SubgraphVersion*>& dead = apply_scratch.dead;
  std::vector<SubgraphVersion*>& middle = apply_scratch.middle;
  unread.clear();
  dead.clear();
  middle.clear();
  for (SubgraphWork& w : work) {
    const bool may_be_read = writers_behind && head_filters_.MayRead(heads, w.s);
    std::vector<SubgraphVersion*>* replaced = may_be_read ? &dead : &unread;
    if (released) {
      SubgraphReaders(active, w.s, &apply_scratch.subgraph_readers);
      Unlink(w.slot, apply_scratch.subgraph_readers, replaced, &middle);
    } else {
      Unlink(w.slot, readers, replaced, &middle);
    }
    w.slot->mu.unlock();
  }
  Retire(t, active.front().ts, min_writer, &unread, &dead, &middle);
  ReleaseScratch(&unread);
  ReleaseScratch(&dead);
  ReleaseScratch(&middle);
  *ts = t;
  return Status::OK();
}

void MemGraph::Reclaim(uint64_t begin, uint64_t end) {
  end = std::min<uint64_t>(end, dir_.bound());
  if (begin >= end) return;
  // Not a writer's: its own buffers (a reader may call this from a writer's thread too).
  std::vector<mvcc::ReaderTracer::Active> active;
  std::vector<Timestamp> readers;
  std::vector<SubgraphVersion*> dead, middle;
  tracer_->ActiveReaders(*clock_, &active);
  for (uint64_t s = begin; s < end; ++s) {
    SubgraphSlot* slot = dir_.Get(s);
    if (slot == nullptr) continue;
    std::lock_guard<std::mutex> g(slot->mu);
    // One version (head == tail): nothing to unlink, and no header to load.
    if (slot->head.load(std::memory_order_relaxed) == slot->tail) continue;
    SubgraphReaders(active, s, &readers);
    Unlink(slot, readers, &dead, &middle);
  }
  if (dead.empty() && middle.empty()) return;
  // Every version unlinked here was replaced by a commit published before this read; a writer
  // registered before it may have read any of them (no filter is consulted).
  const Timestamp t = clock_->read_ts();
  const Timestamp min_writer = writers_.MinActive(*clock_);
  std::vector<SubgraphVersion*> unread;
  Retire(t, active.front().ts, min_writer, &unread, &dead, &middle);
  // What this (reader's) thread freed goes where the writers allocate from.
  alloc_.PassOnThreadLists();
}

// `unread`, `dead` and `middle` were unlinked by commit t, and min_writer is the writers'
// minimum read after t was published. `unread` versions no writer can read (head_filters.h):
// they are freed now. A writer registered at t_r >= t read its heads after they were replaced
// (see ReaderTracer's protocol), so once the writers' minimum reaches t no writer can read
// the others: `dead` versions are freed then, `middle` ones hollowed (their headers wait in
// hollow_ until a walk that may step through them has ended: a grace period over VersionAt's
// walks started after the unlink has passed, or the readers' minimum has reached t). Until
// the writers are past t both wait in limbo. Limbo and hollow entries that are due are handled
// too. The lists are left empty (their buffers kept for reuse).
void MemGraph::Retire(Timestamp t, Timestamp min_reader, Timestamp min_writer,
                      std::vector<SubgraphVersion*>* unread, std::vector<SubgraphVersion*>* dead,
                      std::vector<SubgraphVersion*>* middle) {
  constexpr size_t kSpareLists = 8;
  const bool free_now = min_writer >= t;
  thread_local std::vector<std::vector<SubgraphVersion*>> drained;  // lists freed outside the lock
  drained.clear();
  size_t hollowed_now = 0, headers_freed = 0;  // middle versions hollowed; hollow headers freed
  const bool queue_dead = !free_now && !dead->empty();
  // Middle versions pass through limbo unless the writers are past t already and limbo is
  // empty: then they are hollowed here.
  const bool queue_middle = !middle->empty();
  if (queue_dead || queue_middle ||
      limbo_entries_.load(std::memory_order_relaxed) != 0 ||
      hollow_entries_.load(std::memory_order_relaxed) != 0) {
    std::lock_guard<std::mutex> g(limbo_mu_);
    if (queue_dead) {
      limbo_.push_back(Limbo{t, std::move(*dead), false});
      dead->clear();
      if (!spare_lists_.empty()) {  // the caller's buffer went to limbo: give it a spare one
        dead->swap(spare_lists_.back());
        spare_lists_.pop_back();
      }
      limbo_entries_.fetch_add(1, std::memory_order_relaxed);
    }
    if (queue_middle && free_now && limbo_.empty()) {
      hollowed_now += middle->size();
      QueueHollow(t, middle);
    } else if (queue_middle) {
      limbo_.push_back(Limbo{t, std::move(*middle), true});
      middle->clear();
      limbo_entries_.fetch_add(1, std::memory_order_relaxed);
    }
    while (!limbo_.empty() && limbo_.front().retired_at <= min_writer) {
      Limbo& l = limbo_.front();
      if (l.middle) {
        hollowed_now += l.versions.size();
        QueueHollow(l.retired_at, &l.versions);
        if (spare_lists_.size() < kSpareLists &&
            l.versions.capacity() * sizeof(SubgraphVersion*) <= kScratchKeepBytes) {
          spare_lists_.push_back(std::move(l.versions));
        }
      } else {
        drained.push_back(std::move(l.versions));
      }
      limbo_.pop_front();
      limbo_entries_.fetch_sub(1, std::memory_order_relaxed);
    }
    // Every hollow entry was unlinked before it reached hollow_, so a grace period started
    // now covers all of them. One at a time, once kGraceBatch headers wait: the barrier is a
    // system call.
    if (grace_covered_ == 0 && uncovered_headers_ >= kGraceBatch && !grace_failed_) {
      if (grace_.Start()) {
        grace_covered_ = hollow_.size();
        uncovered_headers_ = 0;
      } else {
        grace_failed_ = true;
      }
    }
    const bool grace_passed = grace_covered_ != 0 && grace_.Passed();
    // Headers are freed a bounded number per commit: when a long reader ends, or a walk that
    // held a grace period back does, many become due at once, and one commit must not pay
    // for all of them.
    while (!hollow_.empty() && headers_freed < kHollowFreesPerCommit &&
           ((grace_passed && grace_covered_ != 0) || hollow_.front().retired_at <= min_reader)) {
      const size_t n = hollow_.front().versions.size();
      if (grace_covered_ != 0) {
        --grace_covered_;
      } else {
        uncovered_headers_ -= n;
      }
      headers_freed += n;
      drained.push_back(std::move(hollow_.front().versions));
      hollow_.pop_front();
      hollow_entries_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  size_t freed = 0;
  for (std::vector<SubgraphVersion*>& list : drained) {
    FreeVersions(&alloc_, list.data(), list.data() + list.size());
    freed += list.size();
    list.clear();
  }
  if (free_now) {
    FreeVersions(&alloc_, dead->data(), dead->data() + dead->size());
    freed += dead->size();
    dead->clear();
  }
  FreeVersions(&alloc_, unread->data(), unread->data() + unread->size());
  freed += unread->size();
  unread->clear();
  if (!drained.empty()) {
    std::lock_guard<std::mutex> g(limbo_mu_);
    for (std::vector<SubgraphVersion*>& list : drained) {
      if (spare_lists_.size() < kSpareLists &&
          list.capacity() * sizeof(SubgraphVersion*) <= kScratchKeepBytes) {
        spare_lists_.push_back(std::move(list));
      }
    }
  }
  drained.clear();
  // A version counts as reclaimed once its containers are gone: freed whole, or hollowed.
  const size_t reclaimed = freed - headers_freed + hollowed_now;
  if (reclaimed != 0) {
    live_versions_.Add(-static_cast<int64_t>(reclaimed));
    reclaimed_.Add(static_cast<int64_t>(reclaimed));
  }
  if (hollowed_now != 0) hollow_versions_.Add(static_cast<int64_t>(hollowed_now));
  if (headers_freed != 0) hollow_versions_.Add(-static_cast<int64_t>(headers_freed));
}

// Caller holds limbo_mu_; no writer can read *vs (unlinked by commit t). Hollows them and
// queues their headers in hollow_: joined to the newest entry when no grace period covers it
// (a period takes nothing unlinked after it started) and it holds fewer than kHollowEntryMax
// headers, else
// as a new entry on a spare list. Joining moves the entry's retired_at up to t, which only
// delays its earlier headers under the reader rule. So a commit beside a reader adds no list
// of its own. *vs is left empty, its storage with the caller.
void MemGraph::QueueHollow(Timestamp t, std::vector<SubgraphVersion*>* vs) {
  for (SubgraphVersion* v : *vs) HollowVersion(&alloc_, v);
  uncovered_headers_ += vs->size();
  if (hollow_.size() > grace_covered_ && hollow_.back().versions.size() < kHollowEntryMax) {
    Limbo& last = hollow_.back();
    last.versions.insert(last.versions.end(), vs->begin(), vs->end());
    last.retired_at = std::max(last.retired_at, t);
  } else {
    Limbo e{t, {}, true};
    if (!spare_lists_.empty()) {
      e.versions.swap(spare_lists_.back());
      spare_lists_.pop_back();
    }
    e.versions.assign(vs->begin(), vs->end());
    hollow_.push_back(std::move(e));
    hollow_entries_.fetch_add(1, std::memory_order_relaxed);
  }
  vs->clear();
}

// Keeps every version some timestamp in `readers` (ascending; the last one is t_r, which the
// head serves) selects: v, whose newer neighbour in the chain is u, is selected by r iff
// v.ts <= r < u.ts. A run of unselected versions between two kept ones is unlinked onto
// *middle by pointing the newer kept version past it; the run's own older links are left as
// they were, so a reader that already stepped into it still walks on to what it selects.
// When every reader is served, everything older than the oldest kept version goes onto *dead:
// each reader stops at its version and never reads past it. A reader older than every version
// selects none and walks the whole chain, so an unselected run at the chain's end is cut onto
// *middle instead. Hence at most readers.size() versions per chain survive a commit
// (RapidStore's bound).
// The slot's tail stands in for the tail's header (its ts; its older link is null): beside a
// snapshot that pins the tail, a commit's chain is head -> base -> tail, and the tail's header
// is not touched at all (it is cold by then: one miss per commit and subgraph otherwise).
void MemGraph::Unlink(SubgraphSlot* slot, const std::vector<Timestamp>& readers,
                      std::vector<SubgraphVersion*>* dead, std::vector<SubgraphVersion*>* middle) {
  SubgraphVersion* kept = slot->head.load(std::memory_order_relaxed);
  if (kept == nullptr) return;
  SubgraphVersion* const tail = slot->tail;
  auto ts_of = [&](const SubgraphVersion* v) { return v == tail ? slot->tail_ts : v->ts; };
  // readers[0, idx) are not served yet: each is below the ts of every version kept so far.
  size_t idx = readers.size();
  const Timestamp head_ts = ts_of(kept);
  while (idx > 0 && readers[idx - 1] >= head_ts) --idx;
  size_t run = 0;  // unselected versions since `kept`, pushed onto *middle
  for (SubgraphVersion* v = kept == tail ? nullptr : kept->older.load(std::memory_order_relaxed);
       v != nullptr && idx > 0;) {
    const Timestamp vts = ts_of(v);
    if (readers[idx - 1] < vts) {
      middle->push_back(v);
      ++run;
    } else {
      if (run != 0) kept->older.store(v, std::memory_order_release);
      kept = v;
      run = 0;
      while (idx > 0 && readers[idx - 1] >= vts) --idx;
    }
    v = v == tail ? nullptr : v->older.load(std::memory_order_relaxed);
  }
  if (kept == tail) return;
  // Cut below the oldest kept version. A run left over (run != 0) means the chain ended with
  // readers unserved: they are older than every version and walk the whole chain to its null
  // end, so the run, already on *middle, keeps its headers for those walks. Otherwise no reader
  // reads past its version and what hangs below is dead: the versions down to the old tail,
  // whose older link is null (SubgraphSlot's invariant), so its header is not loaded (in a
  // batch the replaced head, read ~2,000 builds earlier, is cold: three quarters of this
  // function's samples were that load).
  // Links change only under the slot's lock, which this thread holds: a load and a store, not
  // an exchange (a locked instruction per subgraph, which waits for the store buffer).
  SubgraphVersion* below = kept->older.load(std::memory_order_relaxed);
  kept->older.store(nullptr, std::memory_order_release);
  if (run == 0) {
    for (SubgraphVersion* d = below; d != nullptr;
         d = d == tail ? nullptr : d->older.load(std::memory_order_relaxed)) {
      dead->push_back(d);
    }
  }
  slot->tail = kept;
  slot->tail_ts = kept->ts;
}

namespace {

struct EdgeStage {
  uint32_t i;
  uint64_t v;
  uint32_t seq;
  bool put;
  double w;
};

// Per-thread buffers of BuildVersion, reused across subgraphs and batches (a batch of a
// shuffled stream builds one version per edge: four heap allocations each were measurable).
struct BuildScratch {
  std::vector<EdgeStage> st;
  std::vector<PrevState> prev;  // the clustered index's prior states (ApplyToContainers)
  std::vector<AppendEntry> merged;
  std::vector<AppendEntry> prior;
  std::vector<ClusteredUpdate> ci_ups;
  std::vector<Update> art_ups;
};
thread_local BuildScratch build_scratch;

inline Update ToUpdate(const AppendEntry& e) {
  Update u;
  u.key = e.v;
  u.weight = e.w;
  u.op = OpOf(e.kind);
  return u;
}

// Applies e (sorted by (u, v), unique) to a's containers: one batched Apply for the clustered
// index, one per C-ART touched, and counts the result in *c (records count containers): each
// changed tree's record is set to the tree's counts, and a clustered-index vertex's record
// takes each of its updates with the prior state the index's merge found.
void ApplyToContainers(NodeAllocator* alloc, Adjacency* a, const std::vector<AppendEntry>& e,
                       CountEdits* c) {
  BuildScratch& sc = build_scratch;
  std::vector<ClusteredUpdate>& ci_ups = sc.ci_ups;
  std::vector<PrevState>& prev = sc.prev;
  std::vector<Update>& art_ups = sc.art_ups;
  ci_ups.clear();
  for (size_t b = 0; b < e.size();) {
    size_t x = b;
    const uint8_t i = e[b].u;
    while (x < e.size() && e[x].u == i) ++x;
    if (a->InArt(i)) {
      art_ups.clear();
      for (size_t k = b; k < x; ++k) art_ups.push_back(ToUpdate(e[k]));
      CArt& tree = MutableArt(alloc, a, i);
      tree = tree.Apply(art_ups.data(), art_ups.size(), nullptr);
      c->entries_ref(i) = static_cast<uint32_t>(tree.tree_size());
      c->live_ref(i) = static_cast<uint32_t>(tree.tree_live_size());
    } else {
      for (size_t k = b; k < x; ++k) ci_ups.push_back({i, ToUpdate(e[k])});
    }
    b = x;
  }
  if (ci_ups.empty()) return;
  prev.resize(ci_ups.size());
  a->ci = a->ci.Apply(ci_ups.data(), ci_ups.size(), prev.data());
  for (size_t k = 0; k < ci_ups.size(); ++k) {
    const uint32_t i = ci_ups[k].u;
    const CountDelta d = DeltaOf(ci_ups[k].upd.op, prev[k]);
    c->entries_ref(i) += static_cast<uint32_t>(d.entries);  // modulo 2^32: adds d
    c->live_ref(i) += static_cast<uint32_t>(d.live);
  }
}

// Moves a's appended updates into its containers (see ApplyToContainers).
void FlushAppended(NodeAllocator* alloc, Adjacency* a, CountEdits* c) {
  if (a->appended == nullptr) return;
  std::vector<AppendEntry>& e = build_scratch.merged;
  AreaEntries(a->appended, a->appended_n, &e);
  ApplyToContainers(alloc, a, e, c);
  UnrefAppendArea(alloc, a->appended);
  a->appended = nullptr;
  a->appended_n = 0;
}

}  // namespace

Status MemGraph::BuildVersion(SubgraphWork* w, OlderTiers* older) {
  const bool with_in = opt_.kind == GraphKind::kDirectedWithInEdges;
  w->base = w->slot->head.load(std::memory_order_acquire);
  const SubgraphVersion* base = w->base;

  // 1. Vertex ops and kPutIfExists checks, in batch order. A kPut adds its vertex too (an
  // edge insert is expanded without kAddVertex ops for the vertices its puts name).
  uint64_t exists = base ? base->exists_mask : 0;
  uint64_t deleted = base ? base->deleted_mask : 0;
  uint32_t clear_seq[kSubgraphSize];
  uint64_t cleared = 0;
  for (size_t k = 0; k < w->n; ++k) {
    const PrimOp& op = w->ops[k];
    const uint32_t i = LocalOf(op.u);
    const uint64_t bit = uint64_t{1} << i;
    if (op.kind == PrimOp::kAddVertex || op.kind == PrimOp::kPut) {
      exists |= bit;
    } else if (op.kind == PrimOp::kDeleteVertex) {
      exists &= ~bit;
      deleted |= bit;
      cleared |= bit;
      clear_seq[i] = op.seq;
    } else if (op.kind == PrimOp::kPutIfExists) {
      // Latest earlier op in this batch on the same entry decides; else this tier; else older.
      int found = -1;  // -1 unknown, 0 absent, 1 live
      for (size_t j = k; j-- > 0;) {
        const PrimOp& p = w->ops[j];
        if (p.kind == PrimOp::kDeleteVertex && p.u == op.u) { found = 0; break; }
        if (p.dir == op.dir && p.u == op.u && p.v == op.v &&
            (p.kind == PrimOp::kPut || p.kind == PrimOp::kPutIfExists || p.kind == PrimOp::kDelete)) {
          found = p.kind == PrimOp::kDelete ? 0 : 1;
          break;
        }
      }
      if (found < 0 && base != nullptr) {
        const Adjacency* a = op.dir == 0 ? &base->out : base->in();
        double wt;
        bool tomb;
        if (FindEdge(*a, i, op.v, &wt, &tomb)) {
          found = tomb ? 0 : 1;
        } else if ((base->deleted_mask >> i) & 1) {
          found = 0;
        }
      }
      if (found < 0) found = (older != nullptr && older->HasEdge(op.dir, op.u, op.v)) ? 1 : 0;
      if (found == 0) {
        return Status::NotFound("edge (" + std::to_string(op.dir == 0 ? op.u : op.v) + ", " +
                                std::to_string(op.dir == 0 ? op.v : op.u) + ") does not exist");
      }
    }
  }

  SubgraphVersion* fresh =
      base ? CopyVersion(&alloc_, *base) : NewVersion(&alloc_, with_in, opt_.weighted);
  w->fresh = fresh;
  fresh->exists_mask = exists;
  fresh->deleted_mask = deleted;

  // The new version's per-vertex counts, edited while it is built; written back at the end.
  // Until then its counts are a copy of the base's, so unedited ones are read from the base,
  // whose lines the pipeline fetched: the new block is cold memory from the allocator, and a
  // load from it waited for the line CopyVersion's stores were still fetching.
  const SubgraphVersion* const from = base != nullptr ? base : fresh;
  CountEdits counts[2] = {CountEdits(&from->out), CountEdits(with_in ? from->in() : &from->out)};

  // 2. Clear deleted vertices' lists (and their appended updates).
  for (uint8_t dir = 0; dir < (with_in ? 2 : 1); ++dir) {
    Adjacency* a = dir == 0 ? &fresh->out : fresh->in();
    CountEdits& c = counts[dir];
    // A vertex whose view is empty may still have container entries its appended erases hide.
    const uint64_t appended_cleared =
        a->appended != nullptr && cleared != 0 ? a->appended->PrefixMask(a->appended_n) & cleared
                                               : 0;
    if (appended_cleared != 0) {
      std::vector<AppendEntry>& e = build_scratch.merged;
      AreaEntries(a->appended, a->appended_n, &e);
      e.erase(std::remove_if(e.begin(), e.end(),
                             [&](const AppendEntry& x) { return ((cleared >> x.u) & 1) != 0; }),
              e.end());
      UnrefAppendArea(&alloc_, a->appended);
      a->appended = e.empty() ? nullptr : NewAppendArea(&alloc_, opt_.weighted, e.data(), e.size());
      a->appended_n = static_cast<uint8_t>(e.size());
    }
    uint64_t drop_art = a->art_mask & cleared;
    for (uint64_t m = cleared & ~a->art_mask; m != 0; m &= m - 1) {
      uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
      if (c.entries(i) != 0 || ((appended_cleared >> i) & 1) != 0) {
        size_t removed = 0;
        a->ci = a->ci.EraseVertex(static_cast<uint8_t>(i), &removed);
      }
      c.live_ref(i) = c.entries_ref(i) = 0;
    }
    if (drop_art != 0) {
      std::vector<CArt> keep;
      uint64_t mask = a->art_mask & ~drop_art;
      for (uint64_t m = mask; m != 0; m &= m - 1) {
        keep.push_back(a->Art(static_cast<uint32_t>(__builtin_ctzll(m))));
      }
      SetArts(&alloc_, a, mask, keep.data(), static_cast<uint32_t>(keep.size()));
      for (uint64_t m = drop_art; m != 0; m &= m - 1) {
        uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
        c.live_ref(i) = c.entries_ref(i) = 0;
      }
    }
  }

  // 3. Edge updates: last op per entry wins, unless a later vertex delete cleared it.
  BuildScratch& sc = build_scratch;
  for (uint8_t dir = 0; dir < (with_in ? 2 : 1); ++dir) {
    std::vector<EdgeStage>& st = sc.st;
    st.clear();
    for (size_t k = 0; k < w->n; ++k) {
      const PrimOp& op = w->ops[k];
      if (op.dir != dir) continue;
      if (op.kind == PrimOp::kPut || op.kind == PrimOp::kPutIfExists || op.kind == PrimOp::kDelete) {
        st.push_back({LocalOf(op.u), op.v, op.seq, op.kind != PrimOp::kDelete, op.weight});
      }
    }
    if (st.empty()) continue;
    if (st.size() > 1) {
      StableSmallSort(st.begin(), st.end(), [](const EdgeStage& a, const EdgeStage& b) {
        return a.i != b.i ? a.i < b.i : a.v < b.v;
      });
    }
    if (st.size() > 1 || cleared != 0) {
      size_t out = 0;
      for (size_t k = 0; k < st.size(); ++k) {
        if (k + 1 < st.size() && st[k + 1].i == st[k].i && st[k + 1].v == st[k].v) continue;
        const EdgeStage& e = st[k];
        if (((cleared >> e.i) & 1) && e.seq < clear_seq[e.i]) continue;
        st[out++] = e;
      }
      st.resize(out);
      if (st.empty()) continue;
    }
    Adjacency* a = dir == 0 ? &fresh->out : fresh->in();
    CountEdits& c = counts[dir];
    uint64_t touched = 0;
    // e's update, recorded without its prior state: records count containers, and an
    // appended update is resolved against its container when counts are read or when the
    // area is applied (Adjacency's counts). An erase of an absent entry is recorded too (it
    // hides nothing).
    auto take = [&](size_t k) {
      const EdgeStage& e = st[k];
      touched |= uint64_t{1} << e.i;
      Update u;
      u.key = e.v;
      u.weight = e.w;
      if (e.put) {
        u.op = UpdateOp::kPut;
      } else {
        // A vertex deleted in this tier hides older tiers already: no marker needed.
        bool hidden = (fresh->deleted_mask >> e.i) & 1;
        u.op = (opt_.tombstones && !hidden) ? UpdateOp::kTombstone : UpdateOp::kErase;
      }
      return u;
    };
    // The updates laid over the appended ones: each overrides an appended entry of its key.
    const AppendArea* const old = a->appended;
    const size_t old_n = a->appended_n;
    if (old_n + st.size() <= kAppendCapacity) {
      // Updates that fit the area (the common case: a shuffled stream gives a subgraph about
      // one per batch): each appended in place when this build claims the next slot of the
      // area (the one the base version shares, at first), else onto a copy of the prefix,
      // which the next ones append to.
      size_t n = old_n;
      for (size_t k = 0; k < st.size(); ++k) {
        const EdgeStage& e = st[k];
        const Update u = take(k);
        AppendArea* const cur = a->appended;
        if (cur == nullptr ||
            !TryAppend(cur, n, static_cast<uint8_t>(e.i), KindOf(u.op), e.v, e.w)) {
          a->appended = AreaWith(&alloc_, opt_.weighted, cur, n, static_cast<uint8_t>(e.i),
                                 KindOf(u.op), e.v, e.w);
          UnrefAppendArea(&alloc_, cur);
        }
        a->appended_n = static_cast<uint8_t>(++n);
      }
    } else {
      // The base's view of the area, then this build's updates merged over it in key order.
      std::vector<AppendEntry>& merged = sc.merged;
      std::vector<AppendEntry>& prior = sc.prior;
      AreaEntries(old, old_n, &prior);
      merged.clear();
      size_t op = 0;
      auto old_before = [&](uint8_t i, uint64_t v) {
        return op < prior.size() && (prior[op].u < i || (prior[op].u == i && prior[op].v < v));
      };
      for (size_t k = 0; k < st.size(); ++k) {
        const EdgeStage& e = st[k];
        const Update u = take(k);
        while (old_before(static_cast<uint8_t>(e.i), e.v)) merged.push_back(prior[op++]);
        if (op < prior.size() && prior[op].u == e.i && prior[op].v == e.v) ++op;
        merged.push_back({static_cast<uint8_t>(e.i), KindOf(u.op), e.v, e.w});
      }
      while (op < prior.size()) merged.push_back(prior[op++]);
      UnrefAppendArea(&alloc_, a->appended);
      a->appended = nullptr;
      a->appended_n = 0;
      if (merged.size() <= kAppendCapacity) {
        if (!merged.empty()) {
          a->appended = NewAppendArea(&alloc_, opt_.weighted, merged.data(), merged.size());
          a->appended_n = static_cast<uint8_t>(merged.size());
        }
      } else {
        ApplyToContainers(&alloc_, a, merged, &c);
      }
    }

    // 4. Move vertices between the clustered index and their own C-ART by size (a vertex's view
    // changes only where a build touches it; a flush changes where it lies, not its size). A
    // vertex's view has at most its container's entries plus its appended updates, and at
    // least its container's entries less its appended and pending updates (each erases at most
    // one); only between those bounds are they resolved, and a vertex moves into a C-ART
    // unresolved when even the lower bound keeps it there.
    uint64_t to_art = 0, to_ci = 0;
    for (uint64_t m = touched; m != 0; m &= m - 1) {
      uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
      const Adjacency::CountPair rec{c.entries(i), c.live(i)};
      // Each appended update of i adds or erases at most one entry. The area's size bounds
      // their number for free; a vertex near a bound counts its own (a mid-degree vertex takes
      // updates often: bounded by the area's size alone it resolved them on most of its builds).
      auto mine = [&]() -> uint32_t {
        if (a->appended == nullptr) return 0;
        return static_cast<uint32_t>(__builtin_popcountll(a->appended->Matches(a->appended_n, i)));
      };
      const uint32_t half = opt_.cart_threshold / 2;
      if (!a->InArt(i)) {
        if (rec.entries + a->appended_n <= opt_.cart_threshold) continue;
        const uint32_t own = mine();
        if (rec.entries + own <= opt_.cart_threshold) continue;
        // Its view may pass the threshold. It moves without resolving when the view holds at
        // least half the threshold whatever its updates do (each erases at most one entry):
        // inside the band where a C-ART vertex stays one, so it moves at most once there and
        // is not moved back. Resolving (a lookup per appended update, cold in a full tier)
        // was 2.1% of a scale-22 fill's last tenth, and a vertex whose updates re-add keys it
        // has resolved again on every build (docs/benchmarks.md, "Issue 28: moves to a C-ART
        // without lookups").
        if (rec.entries >= half + own || a->ResolvedCounts(i, rec).entries > opt_.cart_threshold) {
          to_art |= uint64_t{1} << i;
        }
        continue;
      }
      // A hub's record counts its tree alone, and the tree keeps at most PendingCapacity of
      // its size pending (CArt::Apply): a hub that stays far enough above half is kept
      // without reading its tree, a cold line per hub touched (the read was a third of
      // BuildVersion's samples in a full tier's last tenth: docs/benchmarks.md).
      if (rec.entries >= half + a->appended_n + CArt::PendingCapacity(rec.entries)) continue;
      const uint32_t pending = a->Art(i).pending();
      if (rec.entries >= half + a->appended_n + pending ||
          rec.entries >= half + mine() + pending || a->ResolvedCounts(i, rec).entries >= half) {
        continue;
      }
      to_ci |= uint64_t{1} << i;
    }
    if ((to_art | to_ci) != 0) {
      FlushAppended(&alloc_, a, &c);  // a vertex moves with its whole list
      std::vector<uint64_t> keys;
      std::vector<double> wts;
      std::vector<uint8_t> tombs;
      auto gather = [&](const uint64_t* k, const double* wt, const uint8_t* tb, size_t n) {
        for (size_t j = 0; j < n; ++j) {
          keys.push_back(k[j]);
          wts.push_back(wt ? wt[j] : 1.0);
          tombs.push_back(tb ? tb[j] : 0);
        }
        return true;
      };
      uint64_t mask = (a->art_mask | to_art) & ~to_ci;
      std::vector<CArt> trees;
      for (uint64_t m = mask; m != 0; m &= m - 1) {
        uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
        if ((to_art >> i) & 1) {
          keys.clear(); wts.clear(); tombs.clear();
          a->ci.ForEachInVertex(static_cast<uint8_t>(i), gather);
          std::unique_ptr<bool[]> tb(new bool[tombs.size() + 1]);
          for (size_t j = 0; j < tombs.size(); ++j) tb[j] = tombs[j] != 0;
          trees.push_back(CArt::BuildSorted(&alloc_, opt_.weighted, keys.data(),
                                            opt_.weighted ? wts.data() : nullptr, tb.get(),
                                            keys.size()));
          size_t removed = 0;
          a->ci = a->ci.EraseVertex(static_cast<uint8_t>(i), &removed);
        } else {
          trees.push_back(a->Art(i));
        }
      }
      for (uint64_t m = to_ci; m != 0; m &= m - 1) {
        uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
        keys.clear(); wts.clear(); tombs.clear();
        a->Art(i).ForEachChunk(gather);
        c.entries_ref(i) = static_cast<uint32_t>(keys.size());  // the index run it becomes
        c.live_ref(i) = static_cast<uint32_t>(
            keys.size() - static_cast<size_t>(std::count_if(
                              tombs.begin(), tombs.end(), [](uint8_t t) { return t != 0; })));
        a->ci = a->ci.InsertVertexRun(static_cast<uint8_t>(i), keys.data(),
                                      opt_.weighted ? wts.data() : nullptr, tombs.data(),
                                      keys.size());
      }
      SetArts(&alloc_, a, mask, trees.data(), static_cast<uint32_t>(trees.size()));
    }
  }
  for (uint8_t dir = 0; dir < (with_in ? 2 : 1); ++dir) {
    counts[dir].Commit(&alloc_, dir == 0 ? &fresh->out : fresh->in());
  }
  return Status::OK();
}

}  // namespace strata::mem
