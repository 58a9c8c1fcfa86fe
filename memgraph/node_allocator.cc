#include "memgraph/node_allocator.h"

#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <new>

namespace strata::mem {

#ifdef STRATA_NO_JEMALLOC
// Sanitizer builds: plain aligned new/delete so the sanitizer sees every allocation.
NodeAllocator::NodeAllocator() = default;
NodeAllocator::~NodeAllocator() = default;
void* NodeAllocator::Allocate(size_t size) {
  void* p = ::operator new(size == 0 ? 1 : size, std::align_val_t(16));
  bytes_.fetch_add(size, std::memory_order_relaxed);
  return p;
}
void NodeAllocator::Free(void* p, size_t size) {
  if (p == nullptr) return;
  ::operator delete(p, std::align_val_t(16));
  bytes_.fetch_sub(size, std::memory_order_relaxed);
}
#else
}  // namespace strata::mem

// jemalloc reads this once at startup; the MALLOC_CONF environment variable overrides it.
// Freed pages go back to the OS after about a second instead of jemalloc's default ten, and
// without a "muzzy" stage: flushes and compactions free large buffers in bursts, and the
// process's resident memory must fall back under Options::memory_budget after each one.
extern "C" const char* malloc_conf = "dirty_decay_ms:1000,muzzy_decay_ms:0";

namespace strata::mem {

NodeAllocator::NodeAllocator() {
  size_t sz = sizeof(arena_);
  // A private arena per memgraph; if jemalloc refuses (e.g. under a sanitizer), fall back to
  // its default arenas.
  use_arena_ = mallctl("arenas.create", &arena_, &sz, nullptr, 0) == 0;
}

NodeAllocator::~NodeAllocator() {
  if (use_arena_) {
    char name[64];
    snprintf(name, sizeof(name), "arena.%u.destroy", arena_);
    mallctl(name, nullptr, nullptr, nullptr, 0);
  }
}

void* NodeAllocator::Allocate(size_t size) {
  int flags = MALLOCX_ALIGN(16) | (use_arena_ ? MALLOCX_ARENA(arena_) | MALLOCX_TCACHE_NONE : 0);
  void* p = mallocx(size == 0 ? 1 : size, flags);
  if (p == nullptr) throw std::bad_alloc();
  bytes_.fetch_add(size, std::memory_order_relaxed);
  return p;
}

void NodeAllocator::Free(void* p, size_t size) {
  if (p == nullptr) return;
  int flags = use_arena_ ? MALLOCX_TCACHE_NONE : 0;
  sdallocx(p, size == 0 ? 1 : size, flags);
  bytes_.fetch_sub(size, std::memory_order_relaxed);
}

#endif  // STRATA_NO_JEMALLOC

}  // namespace strata::mem
