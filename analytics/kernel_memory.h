// Kernel scratch memory: where the kernels' per-run arrays (the layout, the list cache, rank
// and distance arrays) come from.
//
// The binaries return freed pages to the OS at once (util/malloc_conf.cc: dirty_decay_ms:0), so
// that flushes and compactions stay within the memory budget. For a kernel that is the wrong
// trade: a PageRank run over a memgraph snapshot allocates ~7 bytes per edge of arrays, frees
// them at its end, and the next run faults every page in again (about a fifth of a run,
// docs/benchmarks.md, "Issue 28"). So allocations of at least kKernelArenaMinBytes come from
// one process-wide jemalloc arena whose freed pages stay resident for kKernelDecayMs and are
// then returned (by jemalloc's background threads, which the binaries enable; without them, at
// the next kernel's start or by ReleaseKernelMemory()). Smaller ones use the default arenas.
//
// A large array gets the extent of its jemalloc size class (four per doubling); the whole pages
// of that extent past the array are returned when it is allocated (madvise), since an extent
// recycled from the arena's kept pages has them resident.
//
// Invariants: memory is freed with the size and alignment it was allocated with; what the arena
// retains is at most the largest set of kernel arrays live at once in the last kKernelDecayMs.
// Builds without jemalloc (sanitizers, the Python module) use operator new and retain nothing.
// A program that links jemalloc with its own settings keeps arrays of 8 MiB and more only if it
// sets oversize_threshold:0 as the binaries do (jemalloc purges those at once otherwise).
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <vector>

namespace strata::analytics {

constexpr size_t kKernelArenaMinBytes = size_t{16} << 10;
constexpr long kKernelDecayMs = 5000;

void* KernelAllocate(size_t bytes, size_t align);
void KernelFree(void* p, size_t bytes, size_t align) noexcept;

// What the arena holds (resident, allocated, freed pages kept): GetKernelMemoryStats, in
// include/strata/analytics.h.

// Returns the pages freed longer than kKernelDecayMs ago (called at each layout build).
void KernelReleaseExpired();
// Returns every retained page now.
void KernelReleaseAll();

// While one is alive, the calling thread's allocations come from the kernel arena (jemalloc's
// thread.arena), whatever allocator asks: for a result a kernel hands back in a std::vector,
// made after the kernel has freed its arrays, so that it takes their kept pages instead of
// faulting in new ones beside them. The result is freed into the kernel arena whenever and
// wherever its owner frees it. Not nestable; a no-op without jemalloc. Its end keeps the
// arena's pages: a thread stays bound to the kernel arena for the life of the process, since
// jemalloc purges an arena whole when the last thread bound to it leaves it.
class KernelArenaScope {
 public:
  KernelArenaScope();
  ~KernelArenaScope();
  KernelArenaScope(const KernelArenaScope&) = delete;
  KernelArenaScope& operator=(const KernelArenaScope&) = delete;

 private:
  unsigned previous_;
  bool bound_ = false;
};

// An allocator of kernel scratch memory whose value-less construction leaves trivial elements
// uninitialized: a per-vertex array sized with resize() is then first written by the parallel
// pass that fills it, so its pages are faulted in by every thread instead of zeroed by one.
template <class T>
struct KernelAllocator {
  using value_type = T;
  KernelAllocator() noexcept = default;
  template <class U>
  KernelAllocator(const KernelAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(KernelAllocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { KernelFree(p, n * sizeof(T), alignof(T)); }
  // Only the value-less form: construction with arguments (assign, copies) is
  // std::allocator_traits' default, placement new with those arguments.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U>
  bool operator==(const KernelAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const KernelAllocator<U>&) const noexcept { return false; }
};

// A vector of kernel scratch memory whose resize() leaves new trivial elements uninitialized.
template <class T>
using UninitVector = std::vector<T, KernelAllocator<T>>;

}  // namespace strata::analytics
