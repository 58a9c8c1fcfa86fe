#include "memgraph/node_allocator.h"

#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <sys/mman.h>

#include "util/clock.h"
#include "util/jemalloc_stats.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>
#include <vector>

namespace strata::mem {

// A thread's free lists for one allocator (jemalloc builds only; see the header).
struct NodeAllocator::Pool {
  static constexpr size_t kClasses = kPoolMaxBytes / 16;
  struct Block {
    Block* next;
  };
  // Class c holds blocks of ClassBytes(c); PoolClass(size) is the class of 1..kPoolMaxBytes.
  static size_t ClassBytes(size_t c) { return 16 * (c + 1); }
  static size_t PoolClass(size_t size) { return (size + 15) / 16 - 1; }

  Block* head[kClasses] = {};
  uint32_t count[kClasses] = {};

  // Leaf lists (see the header): class c holds blocks of LeafClassBytes(c), jemalloc's
  // classes past kPoolMaxBytes up to kLeafListMaxBytes (four per doubling: 640, 768, 896,
  // 1024, 1280, ..., 4096; test LeafListClassesAreJemallocs); leaf[c][0, leaf_n[c]) by
  // address, highest first.
  static constexpr size_t kLeafClasses = 12;
  static size_t LeafClass(size_t size) {  // kPoolMaxBytes < size <= kLeafListMaxBytes
    const int g = 63 - __builtin_clzll(size - 1);  // 9, 10 or 11
    const size_t step = size_t{1} << (g - 2);
    return static_cast<size_t>(g - 9) * 4 + (size + step - 1) / step - 5;
  }
  static size_t LeafClassBytes(size_t c) {
    const size_t step = size_t{1} << (7 + c / 4);
    return step * (c % 4 + 5);
  }
  void* leaf[kLeafClasses][kLeafListBlocks];
  uint32_t leaf_n[kLeafClasses] = {};
  // MALLOCX_TCACHE flags of the thread's jemalloc cache, and its index (both set when the
  // pool is made); MALLOCX_TCACHE_NONE when there is none (not made, or destroyed).
  int tcache_flag = 0;
  unsigned tcache = 0;
  // Bytes on the lists; written by the owning thread only, read by RetainedBytes.
  std::atomic<size_t> held{0};

  void AddHeld(ptrdiff_t d) {
    held.store(held.load(std::memory_order_relaxed) + static_cast<size_t>(d),
               std::memory_order_relaxed);
  }
  // The newest n blocks of class c's list back to jemalloc (jemalloc builds only).
  void GiveBack(size_t c, uint32_t n);
  // Leaf class c's first (highest) n blocks back to jemalloc.
  void GiveBackLeaves(size_t c, uint32_t n);
  // Every leaf list's blocks back to jemalloc.
  void GiveBackAllLeaves() {
    for (size_t c = 0; c < kLeafClasses; ++c) GiveBackLeaves(c, leaf_n[c]);
  }
};

// The blocks of one class that threads' full lists passed on, in the batches they came in
// (each a chain of Pool::Block). bytes <= the allocator's list_limit_.
struct NodeAllocator::Depot {
  struct Batch {
    Pool::Block* head;
    uint32_t n;
  };
  std::mutex mu;
  std::vector<Batch> batches;  // guarded by mu
  bool active = false;         // guarded by mu: a batch came or went since the last trim
  // The depot's bytes: written under mu, read without it (ListedBytes, and Allocate's check
  // before it takes the lock).
  std::atomic<size_t> bytes{0};
};

#ifdef STRATA_NO_JEMALLOC
// Sanitizer builds: plain aligned new/delete so the sanitizer sees every allocation.
NodeAllocator::NodeAllocator() = default;
NodeAllocator::~NodeAllocator() = default;
size_t NodeAllocator::RetainedBytes() const { return 0; }
size_t NodeAllocator::ArenaPagesBytes() const { return 0; }
size_t NodeAllocator::ListedBytes() const { return 0; }
size_t NodeAllocator::ArenaAllocatedBytes() const { return 0; }
size_t NodeAllocator::ThreadCachesForTesting() const { return 0; }
bool NodeAllocator::RecyclesArenas() { return false; }
void NodeAllocator::DrainIfLive(uint64_t, void*) {}
void NodeAllocator::PassOnThreadLists() {}
void* NodeAllocator::Allocate(size_t size) {
  void* p = ::operator new(size == 0 ? 1 : size, std::align_val_t(16));
  bytes_.Add(static_cast<int64_t>(size));
  return p;
}
void NodeAllocator::Free(void* p, size_t size) {
  if (p == nullptr) return;
  ::operator delete(p, std::align_val_t(16));
  bytes_.Add(-static_cast<int64_t>(size));
}
#else

namespace {

std::atomic<uint64_t> next_generation{1};

// The live allocators with a private arena, by generation: a thread that leaves a pool (it
// exits, or evicts the pool's entry) gives the pool's blocks back to jemalloc if the allocator
// still lives. Held while draining, so an allocator is not destroyed under a drain. Never
// destroyed (threads may exit during static destruction).
std::mutex& LiveMutex() {
  static std::mutex* const mu = new std::mutex;
  return *mu;
}
std::unordered_map<uint64_t, NodeAllocator*>& Live() {
  static auto* const live = new std::unordered_map<uint64_t, NodeAllocator*>;
  return *live;
}

// This thread's caches, most recently used first. A thread touches few memgraphs at a time
// (the active one, and sealed ones a flush or reader frees into). When the thread exits or
// evicts an entry, the entry's free lists are drained and its jemalloc cache destroyed
// (DrainIfLive).
struct CacheEntry {
  uint64_t generation = 0;
  void* pool = nullptr;  // NodeAllocator::Pool of that allocator for this thread
};
constexpr int kThreadCaches = 4;
struct ThreadCaches {
  CacheEntry e[kThreadCaches];
  ~ThreadCaches() {
    for (CacheEntry& c : e) NodeAllocator::DrainIfLive(c.generation, c.pool);
  }
};
thread_local ThreadCaches thread_caches;

// The memgraph arenas' extent hooks: jemalloc's own, except that the address space an arena
// takes from the OS is marked for transparent huge pages (madvise(MADV_HUGEPAGE); the system
// default "madvise" mode gives huge pages only to such ranges). The tier's nodes are reached
// by dependent random loads over hundreds of MiB, far past the TLB's reach in 4 KiB pages;
// the arena keeps its freed pages (below), so its huge pages are not split by partial purges. An
// arena grows its address space geometrically (2, 2.5, 3, ... MiB); only mappings of
// kHugePageMinExtent or more are advised, so a memgraph that stays under ~33 MiB (the disk
// tier's memgraphs, sealed at Options::memgraph_bytes) keeps 4 KiB pages and its resident
// size: a half-used 2 MiB page of each small arena cost the scale-18 ingest 5 MiB of peak RSS
// (one run). Measured in docs/benchmarks.md, "Issue 28: huge pages for the memgraph arenas".
constexpr size_t kHugePageMinExtent = size_t{8} << 20;
extent_hooks_t* DefaultHooks() {
  static extent_hooks_t* const hooks = [] {
    extent_hooks_t* h = nullptr;
    size_t sz = sizeof(h);
    return mallctl("arena.0.extent_hooks", &h, &sz, nullptr, 0) == 0 ? h : nullptr;
  }();
  return hooks;
}

void* HugePageAlloc(extent_hooks_t*, void* new_addr, size_t size, size_t alignment, bool* zero,
                    bool* commit, unsigned arena_ind) {
  extent_hooks_t* d = DefaultHooks();
  void* p = d->alloc(d, new_addr, size, alignment, zero, commit, arena_ind);
  // Advice only: a failure changes nothing.
  if (p != nullptr && size >= kHugePageMinExtent) ::madvise(p, size, MADV_HUGEPAGE);
  return p;
}

// Null if jemalloc would not give its default hooks.
extent_hooks_t* HugePageHooks() {
  static extent_hooks_t hooks;
  static extent_hooks_t* const made = []() -> extent_hooks_t* {
    extent_hooks_t* d = DefaultHooks();
    if (d == nullptr || d->alloc == nullptr) return nullptr;
    hooks = *d;
    hooks.alloc = &HugePageAlloc;
    return &hooks;
  }();
  return made;
}


// How long a memgraph arena keeps a freed page (its dirty_decay_ms). Not -1 (never purge):
// an arena that can never purge leaves its jemalloc background thread asleep with no timeout,
// and jemalloc then wakes that thread on every slab or extent the arena frees or takes
// (arena_handle_deferred_work's inactivity check), which finds nothing to do: a futex wake
// and a context switch per few blocks freed. An hour keeps the thread on a timer while
// freed pages are, in practice, all kept (docs/benchmarks.md, "Issue 28: jemalloc's
// background thread woken per slab").
constexpr ssize_t kKeepDecayMs = ssize_t{3600} * 1000;

void SetDecay(unsigned arena, ssize_t ms) {
  char name[64];
  snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", arena);
  mallctl(name, nullptr, nullptr, &ms, sizeof(ms));
}

size_t DirtyBytes(unsigned arena) {
  jemalloc_stats::Refresh();
  return jemalloc_stats::ArenaStat(arena, "pdirty") * jemalloc_stats::PageBytes();
}

// Spare arenas: those of destroyed allocators, reset (every allocation in them discarded) but
// holding their freed pages, for the next allocator. A store seals a memgraph and starts the
// next one every Options::memgraph_bytes of updates; a fresh arena faulted in every page again
// and its destruction purged them all (an madvise and a TLB shootdown per extent): the
// scale-18 ingest took 104 K of its 185 K page faults in the writers' first touches of new
// memgraphs (docs/benchmarks.md, "Issue 28: spare memgraph arenas"). At most kSpareArenas are
// kept, each holding at most kSpareMaxBytes of pages: the arenas of small memgraphs, which
// keep 4 KiB pages (kHugePageMinExtent above) and so paid a fault per 4 KiB. A larger one is
// destroyed: its huge pages fault in 2 MiB at a time, and with 64 MiB memgraphs a kept spare
// lifted the scale-23 ingest's peak RSS from 407-432 to 488 MiB (a spare's pages stay resident
// while the next memgraph fills and compactions run). A spare's pages decay back to the OS
// over kSpareDecayMs if no allocator takes it (with jemalloc's background threads on, as in
// the tools; without them, when the arena is next used).
constexpr size_t kSpareArenas = 1;
constexpr size_t kSpareMaxBytes = NodeAllocator::kSpareMaxBytes;
constexpr ssize_t kSpareDecayMs = 10000;

std::mutex& SpareMutex() {
  static std::mutex* const mu = new std::mutex;
  return *mu;
}
std::vector<unsigned>& Spares() {
  static auto* const spares = new std::vector<unsigned>;
  return *spares;
}

bool TakeSpareArena(unsigned* arena) {
  std::lock_guard<std::mutex> g(SpareMutex());
  if (Spares().empty()) return false;
  *arena = Spares().back();
  Spares().pop_back();
  SetDecay(*arena, kKeepDecayMs);
  return true;
}

// Whether a reset arena's pages are reused: they coalesce into extents of MiBs, which jemalloc
// splits for a small request only if the extent is at most 2^lg_extent_max_active_fit times
// its size; under the default (6) every new slab took fresh pages beside them and a recycled
// arena grew by each memgraph's size (measured: 42 -> 142 MB over 10 cycles). The binaries
// set 20 (util/malloc_conf.cc); a program embedding the engine with jemalloc's default
// destroys arenas as before.
bool SparesReusePages() {
  static const bool ok = [] {
    size_t fit = 0;
    size_t sz = sizeof(fit);
    return mallctl("opt.lg_extent_max_active_fit", &fit, &sz, nullptr, 0) == 0 && fit >= 16;
  }();
  return ok;
}

// Every thread cache that held the arena's objects is destroyed (flushed) before this.
// `may_spare` false: the reset arena's pages are purged (returned to the OS) first, so that a
// spare costs no memory; its address space and jemalloc's metadata for it are still reused
// (an arena created and destroyed per memgraph grew jemalloc's metadata: 4.2 -> 6.1 MiB over
// the 83 memgraphs of a scale-18 ingest in a 16 MiB budget).
void ReleaseArena(unsigned arena, bool may_spare) {
  char name[64];
  snprintf(name, sizeof(name), "arena.%u.reset", arena);
  const bool reset = SparesReusePages() && mallctl(name, nullptr, nullptr, nullptr, 0) == 0;
  if (reset && !may_spare) {
    snprintf(name, sizeof(name), "arena.%u.purge", arena);
    mallctl(name, nullptr, nullptr, nullptr, 0);
  }
  if (reset && DirtyBytes(arena) <= kSpareMaxBytes) {
    std::lock_guard<std::mutex> g(SpareMutex());
    if (Spares().size() < kSpareArenas) {
      SetDecay(arena, kSpareDecayMs);
      Spares().push_back(arena);
      return;
    }
  }
  snprintf(name, sizeof(name), "arena.%u.destroy", arena);
  mallctl(name, nullptr, nullptr, nullptr, 0);
}

}  // namespace

NodeAllocator::NodeAllocator()
    : generation_(next_generation.fetch_add(1)), depot_(new Depot[Pool::kClasses]) {
  last_trim_us_.store(NowMicros(), std::memory_order_relaxed);
  use_arena_ = TakeSpareArena(&arena_);
  if (!use_arena_) {
    size_t sz = sizeof(arena_);
    // A private arena per memgraph, its address space marked for huge pages; if jemalloc
    // refuses (e.g. under a sanitizer), fall back to its default arenas.
    extent_hooks_t* hooks = HugePageHooks();
    use_arena_ = mallctl("arenas.create", &arena_, &sz, hooks != nullptr ? &hooks : nullptr,
                         hooks != nullptr ? sizeof(hooks) : 0) == 0;
    // The arena keeps its freed pages (a page is purged only after kKeepDecayMs unused):
    // version GC frees nodes at the rate writers allocate them, and purging each emptied slab
    // at once would cost an madvise and a TLB shootdown per few edges, then refaults
    // (docs/design.md, "Memgraph memory"; figures in docs/benchmarks.md, "Allocator"). What
    // the arena keeps is bounded by its own peak, which the memgraph's capacity bounds.
    if (use_arena_) SetDecay(arena_, kKeepDecayMs);
  }
  if (use_arena_) {
    std::lock_guard<std::mutex> g(LiveMutex());
    Live().emplace(generation_, this);
  }
}

void NodeAllocator::DrainIfLive(uint64_t generation, void* pool_ptr) {
  if (generation == 0 || pool_ptr == nullptr) return;
  std::lock_guard<std::mutex> g(LiveMutex());
  auto it = Live().find(generation);
  if (it == Live().end()) return;  // its arena took the blocks with it
  auto* pool = static_cast<Pool*>(pool_ptr);
  // The thread's jemalloc cache first: no thread uses it again, and what it holds (up to a
  // few hundred objects of each size the thread used) would otherwise stay out of the arena's
  // reach until the allocator is destroyed: ~7 MiB of a scale-20 strata-mem tier's arena after
  // its load's threads had exited (docs/benchmarks.md, "Issue 28: exited threads' caches").
  // Destroying it flushes it and frees its index (jemalloc has 4096; a store's threads that
  // come and go took one each). The lists' blocks then go straight to the arena.
  if (pool->tcache_flag != MALLOCX_TCACHE_NONE) {
    mallctl("tcache.destroy", nullptr, nullptr, &pool->tcache, sizeof(pool->tcache));
    NodeAllocator* a = it->second;
    std::lock_guard<std::mutex> c(a->caches_mu_);
    a->caches_.erase(std::find(a->caches_.begin(), a->caches_.end(), pool->tcache));
    pool->tcache_flag = MALLOCX_TCACHE_NONE;
  }
  for (size_t c = 0; c < Pool::kClasses; ++c) pool->GiveBack(c, pool->count[c]);
  pool->GiveBackAllLeaves();
}

NodeAllocator::~NodeAllocator() {
  // The free lists' blocks belong to the arena, destroyed below (nothing is pooled without a
  // private arena); no thread drains into it from here on.
  if (use_arena_) {
    std::lock_guard<std::mutex> g(LiveMutex());
    Live().erase(generation_);
  }
  for (unsigned tc : caches_) mallctl("tcache.destroy", nullptr, nullptr, &tc, sizeof(tc));
  if (use_arena_) ReleaseArena(arena_, spare_on_release_.load(std::memory_order_relaxed));
}

bool NodeAllocator::RecyclesArenas() { return SparesReusePages(); }

size_t NodeAllocator::RetainedBytes() const {
  if (!use_arena_) return 0;
  return DirtyBytes(arena_) + ListedBytes();
}

size_t NodeAllocator::ArenaPagesBytes() const {
  if (!use_arena_) return 0;
  jemalloc_stats::Refresh();
  jemalloc_stats::ArenaMemory m;
  jemalloc_stats::ReadArena(arena_, &m);
  return m.active + m.dirty;
}

size_t NodeAllocator::ArenaAllocatedBytes() const {
  if (!use_arena_) return 0;
  jemalloc_stats::Refresh();
  jemalloc_stats::ArenaMemory m;
  jemalloc_stats::ReadArena(arena_, &m);
  return m.allocated;
}

size_t NodeAllocator::ThreadCachesForTesting() const {
  std::lock_guard<std::mutex> g(caches_mu_);
  return caches_.size();
}

size_t NodeAllocator::ListedBytes() const {
  size_t listed = 0;
  std::lock_guard<std::mutex> g(caches_mu_);
  for (const auto& p : pools_) listed += p->held.load(std::memory_order_relaxed);
  for (size_t c = 0; c < Pool::kClasses; ++c) {
    listed += depot_[c].bytes.load(std::memory_order_relaxed);
  }
  return listed;
}

void NodeAllocator::PassOnThreadLists() {
  if (!use_arena_) return;
  Pool* pool = ThreadPool();
  for (size_t c = 0; c < Pool::kClasses; ++c) {
    const uint32_t n = pool->count[c];
    if (n != 0 && !ToDepot(pool, c, n)) pool->GiveBack(c, n);
  }
  pool->GiveBackAllLeaves();
}

void NodeAllocator::MaybeTrimDepots() {
  const uint64_t now = NowMicros();
  uint64_t last = last_trim_us_.load(std::memory_order_relaxed);
  // Signed: another thread may have stored a later time than `now`.
  if (static_cast<int64_t>(now - last) < depot_trim_us_) return;
  if (!last_trim_us_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  std::vector<Depot::Batch> idle;
  for (size_t c = 0; c < Pool::kClasses; ++c) {
    Depot& d = depot_[c];
    // An empty class has nothing to give back; its stale `active` is harmless, as the batch
    // that fills it again sets it anyway.
    if (d.bytes.load(std::memory_order_relaxed) == 0) continue;
    idle.clear();
    {
      std::lock_guard<std::mutex> g(d.mu);
      if (!d.active && !d.batches.empty()) {
        idle.swap(d.batches);
        d.bytes.store(0, std::memory_order_relaxed);
      }
      d.active = false;
    }
    for (const Depot::Batch& b : idle) {
      Pool::Block* k = b.head;
      for (uint32_t i = 0; i < b.n; ++i) {
        Pool::Block* next = k->next;
        sdallocx(k, Pool::ClassBytes(c), MALLOCX_ALIGN(16) | MALLOCX_TCACHE_NONE);
        k = next;
      }
    }
  }
}

bool NodeAllocator::ToDepot(Pool* pool, size_t c, uint32_t n) {
  MaybeTrimDepots();
  const size_t moved = n * Pool::ClassBytes(c);
  Depot& d = depot_[c];
  if (n == 0 || d.bytes.load(std::memory_order_relaxed) + moved > list_limit_) return false;
  Pool::Block* const first = pool->head[c];
  Pool::Block* last = first;
  for (uint32_t k = 1; k < n; ++k) last = last->next;
  {
    std::lock_guard<std::mutex> g(d.mu);
    if (d.bytes.load(std::memory_order_relaxed) + moved > list_limit_) return false;
    pool->head[c] = last->next;
    last->next = nullptr;
    d.batches.push_back({first, n});
    d.active = true;
    d.bytes.store(d.bytes.load(std::memory_order_relaxed) + moved, std::memory_order_relaxed);
  }
  pool->count[c] -= n;
  pool->AddHeld(-static_cast<ptrdiff_t>(moved));
  return true;
}

bool NodeAllocator::FromDepot(Pool* pool, size_t c) {
  Depot& d = depot_[c];
  if (d.bytes.load(std::memory_order_relaxed) == 0) return false;
  MaybeTrimDepots();
  Depot::Batch b;
  {
    std::lock_guard<std::mutex> g(d.mu);
    if (d.batches.empty()) return false;
    b = d.batches.back();
    d.batches.pop_back();
    d.active = true;
    d.bytes.store(d.bytes.load(std::memory_order_relaxed) - b.n * Pool::ClassBytes(c),
                  std::memory_order_relaxed);
  }
  pool->head[c] = b.head;
  pool->count[c] = b.n;
  pool->AddHeld(static_cast<ptrdiff_t>(b.n * Pool::ClassBytes(c)));
  return true;
}

NodeAllocator::Pool* NodeAllocator::ThreadPool() {
  // The most recently used entry inline; the rest, and making an entry, out of line: the
  // whole function's prologue (six registers saved) ran for every allocation and free, ~20
  // instructions of each (callgrind).
  const CacheEntry& first = thread_caches.e[0];
  if (__builtin_expect(first.generation == generation_, 1)) return static_cast<Pool*>(first.pool);
  return ThreadPoolSlow();
}

__attribute__((noinline)) NodeAllocator::Pool* NodeAllocator::ThreadPoolSlow() {
  CacheEntry* const e = thread_caches.e;
  for (int k = 1; k < kThreadCaches; ++k) {
    if (e[k].generation == generation_) {
      // Moved to the front (the entries stay in the order of their last use).
      const CacheEntry found = e[k];
      for (int j = k; j > 0; --j) e[j] = e[j - 1];
      e[0] = found;
      return static_cast<Pool*>(found.pool);
    }
  }
  auto pool = std::make_unique<Pool>();
  unsigned tc = 0;
  size_t sz = sizeof(tc);
  const bool made = thread_caches_ && mallctl("tcache.create", &tc, &sz, nullptr, 0) == 0;
  pool->tcache_flag = made ? MALLOCX_TCACHE(tc) : MALLOCX_TCACHE_NONE;
  pool->tcache = tc;
  Pool* p = pool.get();
  {
    std::lock_guard<std::mutex> g(caches_mu_);
    if (made) caches_.push_back(tc);
    pools_.push_back(std::move(pool));
  }
  const CacheEntry evicted = e[kThreadCaches - 1];
  for (int k = kThreadCaches - 1; k > 0; --k) e[k] = e[k - 1];
  e[0] = {generation_, p};
  DrainIfLive(evicted.generation, evicted.pool);
  return p;
}

void NodeAllocator::Pool::GiveBackLeaves(size_t c, uint32_t n) {
  const size_t bytes = LeafClassBytes(c);
  for (uint32_t i = 0; i < n; ++i) sdallocx(leaf[c][i], bytes, MALLOCX_ALIGN(16) | tcache_flag);
  std::memmove(leaf[c], leaf[c] + n, (leaf_n[c] - n) * sizeof(void*));
  leaf_n[c] -= n;
  AddHeld(-static_cast<ptrdiff_t>(n * bytes));
}

void NodeAllocator::Pool::GiveBack(size_t c, uint32_t n) {
  for (; n > 0 && head[c] != nullptr; --n) {
    Block* b = head[c];
    head[c] = b->next;
    --count[c];
    AddHeld(-static_cast<ptrdiff_t>(ClassBytes(c)));
    sdallocx(b, ClassBytes(c), MALLOCX_ALIGN(16) | tcache_flag);
  }
}

void* NodeAllocator::Allocate(size_t size) {
  const size_t asked = size == 0 ? 1 : size;
  void* p;
  if (!use_arena_) {
    p = mallocx(asked, MALLOCX_ALIGN(16));
  } else {
    Pool* pool = ThreadPool();
    size_t block = asked;
    if (asked <= kPoolMaxBytes) {
      const size_t c = Pool::PoolClass(asked);
      if (pool->head[c] == nullptr) FromDepot(pool, c);
      if (Pool::Block* b = pool->head[c]) {
        pool->head[c] = b->next;
        // Blocks come back to the lists in bulk (a grace period's or a reader's versions) and
        // cold: reading the popped block's link was ~90% of this function's samples beside a
        // reader. The new head is the next pop of this class: its lines are fetched now
        // (asked for writing, as the caller fills the block; without -mprfchw GCC emits a read
        // prefetch), while the caller builds. Every line, not just the link's: a version block
        // spans several, and 18% of a full tier's BuildVersion samples stalled on a store of
        // the copy into them (docs/benchmarks.md, "free-list blocks prefetched whole").
        if (Pool::Block* h = b->next) {
          const uintptr_t first = reinterpret_cast<uintptr_t>(h) & ~uintptr_t{63};
          const uintptr_t end = reinterpret_cast<uintptr_t>(h) + Pool::ClassBytes(c);
          for (uintptr_t l = first; l < end; l += 64) {
            __builtin_prefetch(reinterpret_cast<const void*>(l), 1, 3);
          }
        }
        --pool->count[c];
        pool->AddHeld(-static_cast<ptrdiff_t>(Pool::ClassBytes(c)));
        bytes_.Add(static_cast<int64_t>(size));
        return b;
      }
      block = Pool::ClassBytes(c);  // allocated (and given back) at its class's size
    } else if (LeafListed(asked)) {
      const size_t c = Pool::LeafClass(asked);
      block = Pool::LeafClassBytes(c);  // allocated (and given back) at its class's size
      if (pool->leaf_n[c] != 0) {  // the lowest address listed
        void* b = pool->leaf[c][--pool->leaf_n[c]];
        pool->AddHeld(-static_cast<ptrdiff_t>(block));
        bytes_.Add(static_cast<int64_t>(size));
        return b;
      }
    }
    p = mallocx(block, MALLOCX_ALIGN(16) | MALLOCX_ARENA(arena_) | pool->tcache_flag);
  }
  if (p == nullptr) throw std::bad_alloc();
  bytes_.Add(static_cast<int64_t>(size));
  return p;
}

void NodeAllocator::Free(void* p, size_t size) {
  if (p == nullptr) return;
  bytes_.Add(-static_cast<int64_t>(size));
  const size_t asked = size == 0 ? 1 : size;
  // The alignment flag too: it is part of the size class (an 8-byte block aligned to 16 is a
  // 16-byte one), and a free into the wrong class corrupts a thread cache.
  if (!use_arena_) {
    sdallocx(p, asked, MALLOCX_ALIGN(16));
    return;
  }
  if (asked > kPoolMaxBytes && LeafListed(asked)) {
    Pool* pool = ThreadPool();
    const size_t c = Pool::LeafClass(asked);
    const size_t bytes = Pool::LeafClassBytes(c);
    // Full (kLeafListBlocks, or list_limit_ bytes): its highest quarter goes back, one move of
    // the rest for a quarter's frees.
    if (const uint32_t k = pool->leaf_n[c]; k == kLeafListBlocks || k * bytes >= list_limit_) {
      pool->GiveBackLeaves(c, std::max<uint32_t>(1, k / 4));
    }
    void** const a = pool->leaf[c];
    const uint32_t n = pool->leaf_n[c];
    const uint32_t i = static_cast<uint32_t>(
        std::lower_bound(a, a + n, p, [](const void* x, const void* y) {
          return reinterpret_cast<uintptr_t>(x) > reinterpret_cast<uintptr_t>(y);
        }) - a);
    std::memmove(a + i + 1, a + i, (n - i) * sizeof(void*));
    a[i] = p;
    pool->leaf_n[c] = n + 1;
    pool->AddHeld(static_cast<ptrdiff_t>(bytes));
    return;
  }
  if (asked > kPoolMaxBytes) {  // the thread's pool only for its cache, when there are caches
    const int cache = thread_caches_ ? ThreadPool()->tcache_flag : MALLOCX_TCACHE_NONE;
    sdallocx(p, asked, MALLOCX_ALIGN(16) | cache);
    return;
  }
  Pool* pool = ThreadPool();
  const size_t c = Pool::PoolClass(asked);
  // Full: the newest half of this class's list goes to the depot, or back to jemalloc when
  // the depot's class is full. (One bound for all classes together was measured slower: a
  // class freed in bulk crowded the versions out.)
  if (pool->count[c] * Pool::ClassBytes(c) >= std::min(list_limit_, kThreadListBytes)) {
    const uint32_t half = pool->count[c] / 2;
    if (!ToDepot(pool, c, half)) pool->GiveBack(c, half);
  }
  auto* b = static_cast<Pool::Block*>(p);
  b->next = pool->head[c];
  pool->head[c] = b;
  ++pool->count[c];
  pool->AddHeld(static_cast<ptrdiff_t>(Pool::ClassBytes(c)));
}

#endif  // STRATA_NO_JEMALLOC

}  // namespace strata::mem
