#include "util/buffer_pool.h"

#include <algorithm>

#include <mutex>
#include <utility>
#include <vector>

namespace strata {

namespace {

struct Pool {
  std::mutex mu;
  std::vector<std::string> kept;  // empty strings; capacity held
  size_t bytes = 0;               // sum of kept capacities
  size_t limit = kBufferPoolBytes;  // bytes <= limit
};

// Never destroyed: files may be closed during static destruction.
Pool& ThePool() {
  static Pool* const p = new Pool;
  return *p;
}

}  // namespace

std::string TakeBuffer(size_t bytes) {
  Pool& p = ThePool();
  {
    std::lock_guard<std::mutex> g(p.mu);
    // The smallest kept buffer that is large enough.
    size_t best = p.kept.size();
    for (size_t i = 0; i < p.kept.size(); ++i) {
      const size_t c = p.kept[i].capacity();
      if (c >= bytes && (best == p.kept.size() || c < p.kept[best].capacity())) best = i;
    }
    if (best != p.kept.size()) {
      std::string s = std::move(p.kept[best]);
      p.kept[best] = std::move(p.kept.back());
      p.kept.pop_back();
      p.bytes -= s.capacity();
      return s;
    }
  }
  std::string s;
  s.reserve(bytes);
  return s;
}

void ReserveFromPool(std::string* s, size_t bytes) {
  if (s->capacity() >= bytes) return;
  std::string b = TakeBuffer(bytes);
  b.append(*s);
  s->swap(b);
}

void ReturnBuffer(std::string* s) {
  std::string b = std::move(*s);
  *s = std::string();
  b.clear();
  const size_t c = b.capacity();
  if (c < 4096) return;  // not worth keeping: a small string costs no page faults
  Pool& p = ThePool();
  {
    std::lock_guard<std::mutex> g(p.mu);
    if (p.bytes + c <= p.limit) {
      p.bytes += c;
      p.kept.push_back(std::move(b));
      return;
    }
  }
  // Freed here, outside the lock.
}

void LimitBufferPool(size_t bytes) {
  std::vector<std::string> freed;
  Pool& p = ThePool();
  {
    std::lock_guard<std::mutex> g(p.mu);
    p.limit = std::min(p.limit, bytes);
    while (p.bytes > p.limit) {
      p.bytes -= p.kept.back().capacity();
      freed.push_back(std::move(p.kept.back()));
      p.kept.pop_back();
    }
  }
  // Freed here, outside the lock.
}

size_t PooledBufferBytes() {
  Pool& p = ThePool();
  std::lock_guard<std::mutex> g(p.mu);
  return p.bytes;
}

}  // namespace strata
