// NodeAllocator: the memory pool of one memgraph. Nodes, leaves and subgraph versions of the
// in-memory tier are allocated here so that (1) the tier knows its size against its capacity
// and (2) copy-on-write churn goes to a jemalloc arena private to this memgraph, not the
// process heap. Thread-safe.
//
// Invariant: bytes() == sum of sizes Allocate()d and not yet Free()d.
#pragma once

#include <atomic>
#include <cstddef>

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

  size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  unsigned arena_ = 0;
  bool use_arena_ = false;
  std::atomic<size_t> bytes_{0};
};

}  // namespace strata::mem
