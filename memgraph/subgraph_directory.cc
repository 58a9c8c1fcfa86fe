#include "memgraph/subgraph_directory.h"

#include <new>

namespace strata::mem {

namespace {
constexpr uint64_t kInitialChunks = 16;
constexpr size_t kLine = 64;
}

std::atomic<SubgraphDirectory::Chunk*>* SubgraphDirectory::NewChunkArray(uint64_t n) {
  const size_t bytes = (n * sizeof(std::atomic<Chunk*>) + kLine - 1) / kLine * kLine;
  void* p = ::operator new(bytes, std::align_val_t{kLine});
  auto* a = static_cast<std::atomic<Chunk*>*>(p);
  for (uint64_t i = 0; i < n; ++i) new (&a[i]) std::atomic<Chunk*>(nullptr);
  return a;
}

void SubgraphDirectory::DeleteChunkArray(std::atomic<Chunk*>* a) {
  ::operator delete(static_cast<void*>(a), std::align_val_t{kLine});
}

SubgraphDirectory::SubgraphDirectory() {
  Dir* d = new Dir{kInitialChunks, NewChunkArray(kInitialChunks)};
  for (uint64_t i = 0; i < d->n; ++i) d->chunks[i].store(nullptr, std::memory_order_relaxed);
  dir_.store(d, std::memory_order_release);
}

SubgraphDirectory::~SubgraphDirectory() {
  Dir* d = dir_.load(std::memory_order_relaxed);
  for (uint64_t i = 0; i < d->n; ++i) delete d->chunks[i].load(std::memory_order_relaxed);
  DeleteChunkArray(d->chunks);
  delete d;
  for (Dir* r : retired_) {
    DeleteChunkArray(r->chunks);
    delete r;
  }
}

SubgraphSlot* SubgraphDirectory::GetOrCreate(uint64_t s) {
  for (uint64_t b = bound_.load(std::memory_order_acquire);
       b < s + 1 && !bound_.compare_exchange_weak(b, s + 1, std::memory_order_acq_rel);) {
  }
  if (SubgraphSlot* slot = Get(s)) return slot;
  std::lock_guard<std::mutex> g(grow_mu_);
  Dir* d = dir_.load(std::memory_order_acquire);
  uint64_t c = s >> kChunkBits;
  if (c >= d->n) {
    uint64_t n = d->n;
    while (n <= c) n *= 2;
    Dir* nd = new Dir{n, NewChunkArray(n)};
    for (uint64_t i = 0; i < n; ++i) {
      nd->chunks[i].store(i < d->n ? d->chunks[i].load(std::memory_order_relaxed) : nullptr,
                          std::memory_order_relaxed);
    }
    dir_.store(nd, std::memory_order_release);
    retired_.push_back(d);
    d = nd;
  }
  Chunk* chunk = d->chunks[c].load(std::memory_order_acquire);
  if (chunk == nullptr) {
    chunk = new Chunk();
    d->chunks[c].store(chunk, std::memory_order_release);
  }
  return &chunk->slots[s & (kChunkSize - 1)];
}

}  // namespace strata::mem
