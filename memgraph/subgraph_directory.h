// SubgraphDirectory: subgraph ID -> {version chain head, writer lock}.
//
// Slots live in fixed chunks that never move; the directory of chunk pointers grows by
// doubling. A grown directory replaces the old one with one atomic store; old directories are
// retired, not freed, until the SubgraphDirectory dies (their total size is < the live one),
// so a reader that loaded an old directory pointer keeps indexing valid memory. Readers take
// no lock; growth is serialized by grow_mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "memgraph/subgraph.h"

namespace strata::mem {

struct alignas(64) SubgraphSlot {  // one cache line: a writer locks it, then loads head
  std::atomic<SubgraphVersion*> head{nullptr};
  std::mutex mu;  // MV2PL writer lock; taken in ascending subgraph order
  // The chain's oldest version and its ts, read and written only under mu (readers never look).
  // Invariant: tail is null iff head is; else tail is on the chain from head and
  // tail->older == null, tail->ts == tail_ts. With them GC decides about the version a
  // long-running snapshot pins (usually the tail) without loading its header, which is cold
  // by then (MemGraph::Unlink).
  SubgraphVersion* tail = nullptr;
  Timestamp tail_ts = 0;
};

class SubgraphDirectory {
 public:
  static constexpr uint32_t kChunkBits = 10;  // 1024 subgraphs = 65536 vertices per chunk
  static constexpr uint64_t kChunkSize = uint64_t{1} << kChunkBits;

  SubgraphDirectory();
  ~SubgraphDirectory();
  SubgraphDirectory(const SubgraphDirectory&) = delete;
  SubgraphDirectory& operator=(const SubgraphDirectory&) = delete;

  // Null when subgraph s was never created.
  SubgraphSlot* Get(uint64_t s) const {
    const Dir* d = dir_.load(std::memory_order_acquire);
    uint64_t c = s >> kChunkBits;
    if (c >= d->n) return nullptr;
    Chunk* chunk = d->chunks[c].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk->slots[s & (kChunkSize - 1)];
  }
  SubgraphSlot* GetOrCreate(uint64_t s);

  // Every subgraph ID ever passed to GetOrCreate is < bound().
  uint64_t bound() const { return bound_.load(std::memory_order_acquire); }

  // Where the current directory and its chunk array start (each on a line of its own). Tests.
  uintptr_t DirectoryAddressForTesting() const {
    return reinterpret_cast<uintptr_t>(dir_.load(std::memory_order_acquire));
  }
  uintptr_t ChunkArrayAddressForTesting() const {
    return reinterpret_cast<uintptr_t>(dir_.load(std::memory_order_acquire)->chunks);
  }

 private:
  struct Chunk {
    SubgraphSlot slots[kChunkSize];
  };
  // On lines of their own, as is its chunk array (NewChunkArray): every commit reads both, and
  // a line shared with a heap neighbor that another writer's thread writes would miss on
  // every read (docs/benchmarks.md, "the directory's lines").
  struct alignas(64) Dir {
    uint64_t n;
    std::atomic<Chunk*>* chunks;
  };
  static std::atomic<Chunk*>* NewChunkArray(uint64_t n);
  static void DeleteChunkArray(std::atomic<Chunk*>* a);
  std::atomic<Dir*> dir_;
  std::vector<Dir*> retired_;
  std::mutex grow_mu_;
  std::atomic<uint64_t> bound_{0};
};

}  // namespace strata::mem
