#include "segment/block_cache.h"

#include <xxhash.h>

namespace strata {

size_t BlockCache::KeyHash::operator()(const Key& k) const {
  const uint64_t words[2] = {k.owner, k.block};
  return static_cast<size_t>(XXH3_64bits(words, sizeof(words)));
}

BlockCache::BlockCache(size_t capacity, int shard_bits)
    : capacity_(capacity), shards_(size_t{1} << shard_bits) {
  SetCapacity(capacity);
}

uint64_t BlockCache::NewOwnerId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

BlockCache::Shard& BlockCache::ShardOf(const Key& k) {
  // The top bits of the hash pick the shard; the map uses all of it.
  return shards_[(KeyHash()(k) >> 40) & (shards_.size() - 1)];
}

void BlockCache::Shard::EvictTo(size_t limit) {
  while (usage > limit && !lru.empty()) {
    Entry& e = lru.back();
    usage -= e.charge;
    map.erase(e.key);
    lru.pop_back();
  }
}

BlockCache::Block BlockCache::Lookup(const Key& k) {
  Shard& s = ShardOf(k);
  std::lock_guard<std::mutex> g(s.mu);
  auto it = s.map.find(k);
  if (it == s.map.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  s.lru.splice(s.lru.begin(), s.lru, it->second);
  return it->second->block;
}

BlockCache::Block BlockCache::Insert(const Key& k, Block b) {
  const size_t charge = Charge(b);
  Shard& s = ShardOf(k);
  std::lock_guard<std::mutex> g(s.mu);
  auto it = s.map.find(k);
  if (it != s.map.end()) {
    s.usage -= it->second->charge;
    s.lru.erase(it->second);
    s.map.erase(it);
  }
  if (charge > s.capacity) return b;  // never kept: it would flush the whole shard
  s.EvictTo(s.capacity - charge);
  s.lru.push_front(Entry{k, b, charge});
  s.map.emplace(k, s.lru.begin());
  s.usage += charge;
  return b;
}

void BlockCache::EraseOwner(uint64_t owner) {
  for (Shard& s : shards_) {
    std::lock_guard<std::mutex> g(s.mu);
    for (auto it = s.lru.begin(); it != s.lru.end();) {
      if (it->key.owner == owner) {
        s.usage -= it->charge;
        s.map.erase(it->key);
        it = s.lru.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void BlockCache::SetCapacity(size_t capacity) {
  std::lock_guard<std::mutex> resize(resize_mu_);
  capacity_.store(capacity, std::memory_order_relaxed);
  const size_t per = capacity / shards_.size();
  for (Shard& s : shards_) {
    std::lock_guard<std::mutex> g(s.mu);
    s.capacity = per;
    s.EvictTo(per);
  }
}

size_t BlockCache::usage() const {
  size_t total = 0;
  for (const Shard& s : shards_) {
    std::lock_guard<std::mutex> g(const_cast<Shard&>(s).mu);
    total += s.usage;
  }
  return total;
}

}  // namespace strata
