// StripedCounter: a sum that many threads add to often and few read.
//
// Each thread adds to its own cache line (one of kStripes, chosen once per thread), so threads
// adding at once do not bounce one line between cores; Sum() reads every stripe (relaxed: a
// sum taken while threads add is some interleaving of their additions, exact once they stop).
// Used for counts every writer changes: the memgraph allocator's bytes, the memgraph's version
// counts, the store's per-batch counts (docs/benchmarks.md has what each measured).
#pragma once

#include <atomic>
#include <cstdint>

namespace strata {

class StripedCounter {
 public:
  static constexpr int kStripes = 8;

  void Add(int64_t d) { stripes_[Stripe()].v.fetch_add(d, std::memory_order_relaxed); }
  int64_t Sum() const {
    int64_t s = 0;
    for (const Line& l : stripes_) s += l.v.load(std::memory_order_relaxed);
    return s;
  }
  // Sum() clamped at 0, for a count that goes up and down: read while threads add, a decrement
  // on one stripe can be seen without the increment it followed on another.
  uint64_t Count() const {
    const int64_t s = Sum();
    return s > 0 ? static_cast<uint64_t>(s) : 0;
  }

 private:
  struct alignas(64) Line {
    std::atomic<int64_t> v{0};
  };
  static int Stripe() {
    static std::atomic<int> next{0};
    thread_local const int stripe = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
    return stripe;
  }
  Line stripes_[kStripes];
};

}  // namespace strata
