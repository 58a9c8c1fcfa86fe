#include "analytics/kernel_memory.h"

#include "strata/analytics.h"

#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <system_error>
#include <thread>

#include "util/jemalloc_stats.h"
#endif

#include <climits>
#include <cstdint>
#include <cstdio>

namespace strata::analytics {

#ifdef STRATA_NO_JEMALLOC

void* KernelAllocate(size_t bytes, size_t align) {
  return ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t(align));
}
void KernelFree(void* p, size_t, size_t align) noexcept {
  ::operator delete(p, std::align_val_t(align));
}
KernelMemoryStats GetKernelMemoryStats() { return {}; }
void KernelReleaseExpired() {}
void KernelReleaseAll() {}
KernelArenaScope::KernelArenaScope() : previous_(0) {}
KernelArenaScope::~KernelArenaScope() = default;

#else

namespace {

constexpr unsigned kNoArena = UINT_MAX;

// Binds a thread to arena `a` for the life of the process. jemalloc (5.3, arena_migrate)
// purges an arena whole, decay time or not, when the last thread bound to it moves to another
// arena — what a KernelArenaScope's end does on a thread that was the kernel arena's only
// one. Every PageRank run ends in a scope, so each one returned all the pages it had freed
// and the next faulted them in again (docs/benchmarks.md, "a scope's end purged the kernel
// arena"). This thread keeps the arena's count of bound threads above zero; it allocates
// nothing and sleeps. Returns once it is bound. Without it (no thread could be started) the
// arena still works, and a scope's end purges it.
void PinArena(unsigned a) {
  try {
    std::promise<void> bound;
    std::future<void> ready = bound.get_future();
    std::thread([a, done = std::move(bound)]() mutable {
      unsigned arena = a;
      mallctl("thread.arena", nullptr, nullptr, &arena, sizeof(arena));
      done.set_value();
      for (;;) std::this_thread::sleep_for(std::chrono::hours(24));
    }).detach();
    ready.wait();
  } catch (const std::system_error&) {
  }
}

// The kernel arena, made on first use; kNoArena if jemalloc refused (the default arenas then).
unsigned KernelArena() {
  static const unsigned arena = [] {
    unsigned a = 0;
    size_t sz = sizeof(a);
    if (mallctl("arenas.create", &a, &sz, nullptr, 0) != 0) return kNoArena;
    char name[64];
    ssize_t dirty = kKernelDecayMs, muzzy = 0;
    snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", a);
    mallctl(name, nullptr, nullptr, &dirty, sizeof(dirty));
    snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", a);
    mallctl(name, nullptr, nullptr, &muzzy, sizeof(muzzy));
    PinArena(a);
    return a;
  }();
  return arena;
}

int Flags(size_t bytes, size_t align) {
  int flags = MALLOCX_ALIGN(align);
  if (bytes >= kKernelArenaMinBytes) {
    const unsigned a = KernelArena();
    // Large sizes bypass the thread caches anyway; naming none keeps the arena's pages its own.
    if (a != kNoArena) flags |= MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE;
  }
  return flags;
}

void ArenaCtl(const char* op) {
  const unsigned a = KernelArena();
  if (a == kNoArena) return;
  char name[64];
  snprintf(name, sizeof(name), "arena.%u.%s", a, op);
  mallctl(name, nullptr, nullptr, nullptr, 0);
}

}  // namespace

void* KernelAllocate(size_t bytes, size_t align) {
  const int flags = Flags(bytes, align);
  void* p = mallocx(bytes == 0 ? 1 : bytes, flags);
  if (p == nullptr) throw std::bad_alloc();
  if (bytes >= kKernelArenaMinBytes) {
    // jemalloc gives a large request the extent of its size class (four per doubling), whose
    // pages past `bytes` no one touches; but an extent recycled from the arena's kept pages
    // has them resident already. Those whole pages go back: the list cache's blocks, one per
    // 4096 vertices at their exact sizes, held 100 MiB of extents for 90 MiB of lists at
    // scale 20 (docs/benchmarks.md, "the list cache's rounded extents").
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t used = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) + nallocx(bytes, flags);
    if (end > used) ::madvise(reinterpret_cast<void*>(used), end - used, MADV_DONTNEED);
  }
  return p;
}

void KernelFree(void* p, size_t bytes, size_t align) noexcept {
  if (p == nullptr) return;
  // The extent knows its arena; only the thread-cache choice must match the allocation's.
  int flags = MALLOCX_ALIGN(align);
  if (bytes >= kKernelArenaMinBytes && KernelArena() != kNoArena) flags |= MALLOCX_TCACHE_NONE;
  sdallocx(p, bytes == 0 ? 1 : bytes, flags);
}

KernelMemoryStats GetKernelMemoryStats() {
  KernelMemoryStats st;
  jemalloc_stats::Refresh();  // always: callers may read other arenas' figures after it
  const unsigned a = KernelArena();
  if (a == kNoArena) return st;
  jemalloc_stats::ArenaMemory m;
  if (!jemalloc_stats::ReadArena(a, &m)) return st;
  st.resident = m.resident;
  st.allocated = m.allocated;
  st.retained = m.dirty;
  return st;
}

void KernelReleaseExpired() { ArenaCtl("decay"); }
void KernelReleaseAll() { ArenaCtl("purge"); }

KernelArenaScope::KernelArenaScope() : previous_(0) {
  unsigned a = KernelArena();
  if (a == kNoArena) return;
  size_t sz = sizeof(previous_);
  bound_ = mallctl("thread.arena", &previous_, &sz, &a, sizeof(a)) == 0;
}

KernelArenaScope::~KernelArenaScope() {
  if (bound_) mallctl("thread.arena", nullptr, nullptr, &previous_, sizeof(previous_));
}

#endif

}  // namespace strata::analytics
