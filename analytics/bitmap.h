// Bitmap: a vertex set of the analytics kernels (BFS's frontiers and visited set, the marks
// of SortUniqueFrontier), one bit per vertex.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "analytics/layout.h"
#include "strata/snapshot.h"

namespace strata::analytics {

// A vertex set, one bit per vertex (a frontier: 8x smaller than a byte per vertex, so a
// bottom-up step's random probes stay in cache). Words are 64 vertices, the granularity of
// layout ranges: a task that writes only its own range's bits needs no atomics.
class Bitmap {
 public:
  void Resize(VertexId n) { w_.assign(static_cast<size_t>((n + 63) / 64), 0); }
  bool Get(VertexId v) const { return (w_[v >> 6] >> (v & 63)) & 1; }
  void Set(VertexId v) { w_[v >> 6] |= uint64_t{1} << (v & 63); }
  // Clears [r.begin, r.end); r.begin is a multiple of 64, r.end too unless it is the bound.
  void Clear(VertexRange r) {
    std::fill(w_.begin() + static_cast<ptrdiff_t>(r.begin >> 6),
              w_.begin() + static_cast<ptrdiff_t>((r.end + 63) >> 6), 0);
  }
  void ClearAll() { std::fill(w_.begin(), w_.end(), 0); }
  // Sets v's bit; true if this call set it (concurrent callers: exactly one gets true).
  bool Claim(VertexId v) {
    const uint64_t bit = uint64_t{1} << (v & 63);
    std::atomic_ref<uint64_t> w(w_[v >> 6]);
    if (w.load(std::memory_order_relaxed) & bit) return false;
    return (w.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
  }
  // this |= o over the words of range r (same alignment as Clear).
  void OrRange(const Bitmap& o, VertexRange r) {
    for (size_t i = static_cast<size_t>(r.begin >> 6); i < (r.end + 63) >> 6; ++i) w_[i] |= o.w_[i];
  }
  uint64_t Word(size_t i) const { return w_[i]; }
  void OrWord(size_t i, uint64_t w) { w_[i] |= w; }
  // Word i, cleared.
  uint64_t TakeWord(size_t i) { return std::exchange(w_[i], 0); }
  void swap(Bitmap& o) { w_.swap(o.w_); }
  // The set (or its complement) for Snapshot::ScanAdjacency.
  VertexBitmap Members(bool complement = false) const {
    return VertexBitmap{w_.data(), complement};
  }

 private:
  std::vector<uint64_t> w_;
};

}  // namespace strata::analytics
