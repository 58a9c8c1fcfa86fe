// NodeAllocator: the memory pool of one memgraph. Nodes, leaves and subgraph versions of the
// in-memory tier are allocated here so that (1) the tier knows its size against its capacity
// and (2) copy-on-write churn goes to a jemalloc arena private to this memgraph, not the
// process heap. Thread-safe.
//
// Invariant: bytes() == sum of sizes Allocate()d and not yet Free()d.
//
// Thread caches (set_thread_caches; off unless set). A private arena cannot use jemalloc's
// automatic per-thread cache (that cache hands out objects of whatever arena filled it), so
// with caches on each thread gets an explicit cache per allocator (`tcache.create`), found
// through a small thread-local table keyed by the allocator's unique generation number; the
// allocator records every cache made for it and destroys them (flushing their objects back to
// the arena) before it destroys the arena; a thread that exits, or drops the allocator from
// its table, destroys its cache itself (DrainIfLive). A cache is used only by the thread that
// made it. Off, every block not on a free list comes from and goes back to the arena's bins
// (MALLOCX_TCACHE_NONE), which fill the oldest slab with room first: a cache reuses whatever
// slab its thread last freed into, so slabs seldom empty, and a loaded scale-20 tier's arena
// held 47-58 MiB of partly used slabs for 165 MiB of nodes with caches, 19-25 without. The
// caches pay for a short-lived memgraph (a persistent store's, whose arena is reset whole
// after its flush): its load ran ~7% faster with them (docs/benchmarks.md, "Issue 28: the
// memgraph arena without thread caches").
//
// Free lists. In front of that, each thread keeps its own LIFO free lists of small blocks (up
// to kPoolMaxBytes, in 16-byte classes) per allocator: a full tier's build frees about as many
// versions, areas and nodes per batch as it allocates, and jemalloc's mallocx/sdallocx with
// explicit arena, cache and alignment flags took ~15% of a full tier's load
// (docs/benchmarks.md, "Issue 28: a version in one block; free lists in front of jemalloc");
// without lists or caches a scale-20 load ran at about half the rate. A list holds blocks jemalloc
// allocated at the class's size, at most kThreadListBytes of them (or the set_list_limit bytes,
// if fewer). A list is used only by its thread; a block freed by another thread joins that
// thread's list. A thread that exits, or drops the allocator from its table of recent ones,
// gives its lists' blocks back to jemalloc (DrainIfLive).
//
// Depot. A free that finds its list full moves the newest half of it to the allocator's
// depot of that class, shared by the threads, which holds at most set_list_limit bytes of each
// class (past that, the half goes back to jemalloc); a thread whose list of a class is empty
// takes a batch from the depot before it asks jemalloc. Two writers free each other's blocks
// (the versions one replaces were often built by the other), so without it one thread's lists
// filled to their bound while the other's drew fresh blocks from jemalloc, and when the
// threads left, the lists' blocks went back as holes in slabs that stay resident: a loaded
// scale-20 tier's arena kept ~18 MiB of such slabs (a class's lists up to 8 MiB per thread;
// docs/benchmarks.md, "Issue 28: a depot for the free lists"). A depot class idle for a second
// (no batch came or went) gives its blocks back to jemalloc (set_depot_trim_us): a tier's
// version blocks grow through the 128-, 192- and 256-byte classes (a 96-byte header and its
// inline counts, rounded to lines; wider count records take them further), and the depot of a
// class they have left would otherwise keep its 8 MiB for good.
//
// Leaf lists. Without thread caches (the in-memory store's memgraph), blocks past
// kPoolMaxBytes up to kLeafListMaxBytes — clustered-index and C-ART leaves, which an area's
// apply replaces several at a time — are kept too, per thread, per jemalloc size class (four per
// doubling), each class's list in address order: an allocation takes the lowest block listed,
// and a full list (kLeafListBlocks blocks, or list_limit bytes if they are fewer) gives its
// highest quarter back to the arena. Address order is what keeps the arena's slabs compact: the
// arena itself fills the lowest slab with room first, so that slabs high up empty and their
// pages serve other classes as the leaves grow through them. LIFO lists of the same sizes
// (newest first, whatever the address) loaded a scale-22 tier 9-11% faster but left ~100 MiB
// more of its slabs partly used; address order costs 4-11 MiB of it, and loads 10-11% faster
// (the last tenth 19-23%; docs/benchmarks.md, "Issue 28: leaf lists in address order"). With
// thread caches on, those sizes go to the cache, as before.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "util/striped_counter.h"

namespace strata::mem {

class NodeAllocator {
 public:
  NodeAllocator();
  ~NodeAllocator();
  NodeAllocator(const NodeAllocator&) = delete;
  NodeAllocator& operator=(const NodeAllocator&) = delete;

  // 16-byte aligned. Never returns null (aborts on out-of-memory, as operator new would).
  void* Allocate(size_t size);
  // `size` must be the size passed to Allocate.
  void Free(void* p, size_t size);

  size_t bytes() const { return static_cast<size_t>(bytes_.Count()); }

  // Freed memory kept for reuse instead of returned to the OS: the private arena's dirty
  // pages (kept an hour; see the constructor) and the blocks on the threads' free lists;
  // 0 without a private arena. Not counted in bytes().
  size_t RetainedBytes() const;

  // The pages the private arena holds: in use (whole slabs and extents, however full) and
  // freed but kept — what this allocator costs in resident memory, against bytes() of nodes.
  // 0 without a private arena. Refreshes jemalloc's statistics (a process-wide step): for
  // statistics, not for a write path.
  size_t ArenaPagesBytes() const;

  // Whether a destroyed allocator's arena is kept, reset, for the next one (node_allocator.cc,
  // "Spare arenas"): with jemalloc and its lg_extent_max_active_fit at 16 or more.
  static bool RecyclesArenas();

  // Bytes of the blocks on the threads' free lists and in the depot (part of RetainedBytes).
  size_t ListedBytes() const;

  // What jemalloc counts as allocated in the private arena: bytes() at class sizes, plus the
  // blocks on the free lists and the objects the threads' jemalloc caches hold. 0 without a
  // private arena.
  size_t ArenaAllocatedBytes() const;
  // Threads' jemalloc caches made for this allocator and not yet destroyed. For tests.
  size_t ThreadCachesForTesting() const;

  // Gives the blocks on `pool` (a thread's free lists of the allocator of `generation`, which
  // that thread stops using) back to jemalloc, and destroys the thread's jemalloc cache for
  // it, if that allocator still lives. Called by the owning thread only.
  static void DrainIfLive(uint64_t generation, void* pool);
  // Moves this thread's listed blocks to the depot (or, past its bound, back to jemalloc), for
  // a thread that freed many blocks it will not allocate again (a reader's Reclaim): on its own
  // lists they would wait for its next allocations, out of the writers' reach.
  void PassOnThreadLists();

  static constexpr size_t kPoolMaxBytes = 512;
  // Leaf lists (see the top): blocks up to this size, at most this many per class and thread.
  static constexpr size_t kLeafListMaxBytes = 4096;
  static constexpr uint32_t kLeafListBlocks = 512;
  // The bound of a thread's list of one class; what passes it goes to the depot.
  static constexpr size_t kThreadListBytes = 512 << 10;
  // The depot's bound per class (each thread's list's, before the depot). 8 MiB (512 KiB
  // before that): beside a reader, every commit allocates a version block while the
  // blocks it replaced wait for the reader or a grace period (4096 headers at a time), then
  // come back in bulk; with 512 KiB the version class ran dry and overflowed in turns, and
  // jemalloc's arena took 14.5% of the writer's samples (3% with 8 MiB; docs/benchmarks.md,
  // "Issue 28: free lists of 8 MiB per class"). What the lists hold is freed blocks of this
  // allocator, so a memgraph's allocated and listed bytes together stay near its peak.
  static constexpr size_t kPoolClassBytes = 8 << 20;
  // The bound of the depot's blocks of each class, and of each thread's list (with
  // kThreadListBytes), in bytes (kPoolClassBytes unless set). Set before the allocator is
  // used. A store's memgraph lives within the memory budget's plan, which counts its bytes()
  // only: the store bounds the lists by the memgraph's capacity (DBImpl::NewMemGraph).
  void set_list_limit(size_t bytes) { list_limit_ = bytes; }
  // An arena holding more pages than this when its allocator is destroyed is not kept as a
  // spare (node_allocator.cc, "Spare arenas").
  static constexpr size_t kSpareMaxBytes = size_t{32} << 20;
  // Whether the arena keeps its pages for the next allocator when this one is destroyed
  // (node_allocator.cc, "Spare arenas"; true unless set): a store whose memory plan has no
  // room for a spare's pages clears it, and the arena's pages are purged before it is handed
  // on empty. Any time before the destructor.
  void set_spare_on_release(bool on) { spare_on_release_.store(on, std::memory_order_relaxed); }
  // Whether each thread allocates through a jemalloc cache of its own (see the top). Set
  // before the allocator is used.
  void set_thread_caches(bool on) { thread_caches_ = on; }
  // A depot class idle this long (no batch came or went) gives its blocks back to jemalloc,
  // at the next depot operation of any class: the classes a tier's nodes grow out of (a
  // subgraph's version block passes 192 and 256 bytes as it fills) keep no blocks for
  // good. 0: at every depot operation, a class idle since the one before. Set before use.
  static constexpr int64_t kDepotTrimUs = 1'000'000;
  void set_depot_trim_us(int64_t us) { depot_trim_us_ = us; }

 private:
  struct Pool;
  struct Depot;
  // This thread's free lists and jemalloc cache for this allocator (made on first use).
  Pool* ThreadPool();
  Pool* ThreadPoolSlow();  // ThreadPool past the thread's most recently used entry
  // Whether a block of `asked` > kPoolMaxBytes bytes goes to the leaf lists (see the top).
  bool LeafListed(size_t asked) const { return asked <= kLeafListMaxBytes && !thread_caches_; }
  // Moves the newest n blocks of pool's class-c list to the depot; false (nothing moved) when
  // the depot's class is full.
  bool ToDepot(Pool* pool, size_t c, uint32_t n);
  // Refills pool's empty class-c list with a batch from the depot; false if it has none.
  bool FromDepot(Pool* pool, size_t c);
  // Called by the depot's operations: at most once per depot_trim_us_, gives back to jemalloc
  // the blocks of every depot class that no batch came to or went from since the last time.
  // The classes left empty are not looked at.
  void MaybeTrimDepots();

  size_t list_limit_ = kPoolClassBytes;
  std::atomic<bool> spare_on_release_{true};
  bool thread_caches_ = false;
  int64_t depot_trim_us_ = kDepotTrimUs;
  std::atomic<uint64_t> last_trim_us_{0};  // NowMicros() at the last trim (or construction)
  unsigned arena_ = 0;
  bool use_arena_ = false;
  uint64_t generation_ = 0;  // unique per allocator, never reused
  // The byte count, striped by thread (two writers updating one shared counter several times
  // per edge bounced its cache line between cores).
  StripedCounter bytes_;
  mutable std::mutex caches_mu_;
  std::vector<unsigned> caches_;  // every thread cache made for this allocator
  std::vector<std::unique_ptr<Pool>> pools_;  // every thread's free lists for this allocator
  std::unique_ptr<Depot[]> depot_;            // one per class of the lists (jemalloc builds)
};

}  // namespace strata::mem
