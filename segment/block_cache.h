// BlockCache: a bounded, sharded LRU cache of verified segment metadata blocks (vertex blocks
// and bloom partitions), shared by every segment reader of a store. It is how the store keeps
// the memory budget true once the disk tier outgrows it: readers pin nothing per file, and the
// hot blocks stay in memory up to `capacity` bytes (Options::memory_budget minus the memgraphs
// and reserves; see DBImpl::UpdateCacheCapacity).
//
//   BlockCache cache(64 << 20);
//   std::shared_ptr<const std::string> b = cache.Lookup(key);
//   if (!b) b = cache.Insert(key, std::make_shared<const std::string>(ReadBlock()));
//
// Invariants: usage() <= capacity() whenever no Insert is in flight, except for one block
// larger than a whole shard, which is returned to its caller but never kept. A block handed
// out stays valid as long as the caller holds its shared_ptr, even if it is evicted meanwhile
// (eviction drops the cache's reference, not the caller's). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata {

class BlockCache {
 public:
  struct Key {
    uint64_t owner = 0;  // a NewOwnerId() per segment reader: never reused
    uint64_t block = 0;  // the owner's block number (kind in the top bits)
    bool operator==(const Key& o) const { return owner == o.owner && block == o.block; }
  };
  using Block = std::shared_ptr<const std::string>;

  explicit BlockCache(size_t capacity, int shard_bits = 4);
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The cached block, or null (a miss). A hit makes the block the most recently used.
  Block Lookup(const Key& k);
  // Caches b under k (replacing an older entry) and returns it, evicting least recently used
  // blocks of the shard until it fits. A block larger than a shard's share is not kept.
  Block Insert(const Key& k, Block b);
  // Drops the blocks of an owner that is gone (e.g. a segment deleted by compaction).
  void EraseOwner(uint64_t owner);

  // Changes the capacity; shrinking evicts at once.
  void SetCapacity(size_t capacity);
  size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  size_t usage() const;
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }

  static uint64_t NewOwnerId();

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Entry {
    Key key;
    Block block;
    size_t charge;
  };
  struct Shard {
    std::mutex mu;
    std::list<Entry> lru;  // front = most recently used
    std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> map;
    size_t usage = 0;
    size_t capacity = 0;
    void EvictTo(size_t limit);  // mu held
  };
  static size_t Charge(const Block& b) { return b->size() + sizeof(Entry) + 64; }
  Shard& ShardOf(const Key& k);

  // Serializes SetCapacity: without it, two resizes could leave capacity_ from one and the
  // shard limits from the other (then usage() could exceed capacity()).
  std::mutex resize_mu_;
  std::atomic<size_t> capacity_;
  std::vector<Shard> shards_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace strata
