// HeadFilters: which subgraphs each writer in its optimistic build may read the head of, so
// that a commit keeps in limbo only the replaced heads some such writer may read (MemGraph::
// Apply), not every version replaced while any writer builds.
//
// Why: a writer registered in MemGraph's writers_ keeps every head it reads allocated; with
// the registry alone, a commit must hold back all the versions it replaces while any writer
// registered before it runs. When that writer is descheduled mid-batch (two writers on two
// cores), the other's commits pile up in limbo: 182 K versions at once for 16 K subgraphs in a
// scale-20 load, and the blocks drawn to replace them were left behind as partly used slabs
// when limbo drained (docs/benchmarks.md, "Issue 28: limbo bounded by the subgraphs a writer
// reads").
//
// A writer claims a filter, marks its subgraphs, and only then registers in writers_; it
// unregisters before it clears them and frees the filter. A committer that found a writer
// registered below its timestamp (a seq_cst scan of writers_ after its Publish) reads the
// filters after that scan: the marks of every writer the scan saw were stored before that
// writer's registration, so they are visible, and stay set while it is registered; a writer
// the scan missed registered at a timestamp the commit is below, and read the new heads. So a
// version of a subgraph no claimed filter marks is read by no registered writer. Marks are
// kept modulo kBits (a subgraph is marked when any subgraph with its low 16 bits is): a
// collision only sends a version through limbo. A writer that finds every filter claimed
// counts itself as unfiltered, and while any is, every replaced version goes through limbo.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace strata::mem {

class HeadFilters {
 public:
  static constexpr uint32_t kFilters = 8;
  static constexpr uint32_t kBits = uint32_t{1} << 16;
  static constexpr uint32_t kNone = UINT32_MAX;

  HeadFilters() : words_(new std::atomic<uint64_t>[kFilters * kWords]) {
    for (uint32_t i = 0; i < kFilters * kWords; ++i) words_[i].store(0, std::memory_order_relaxed);
  }
  HeadFilters(const HeadFilters&) = delete;
  HeadFilters& operator=(const HeadFilters&) = delete;

  // A free filter for this thread, or kNone (then counted as unfiltered until Release).
  uint32_t Claim() {
    uint32_t c = claimed_.load(std::memory_order_relaxed);
    while (c != (uint32_t{1} << kFilters) - 1) {
      const uint32_t f = static_cast<uint32_t>(__builtin_ctz(~c));
      if (claimed_.compare_exchange_weak(c, c | (uint32_t{1} << f), std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
        return f;
      }
    }
    unfiltered_.fetch_add(1, std::memory_order_seq_cst);
    return kNone;
  }
  // Marks subgraph s in filter f (claimed by this thread; before it registers).
  void Mark(uint32_t f, uint64_t s) {
    if (f == kNone) return;
    std::atomic<uint64_t>& w = Word(f, s);
    w.store(w.load(std::memory_order_relaxed) | Bit(s), std::memory_order_relaxed);
  }
  // Clears the marks of subgraph s and of every subgraph sharing its word in filter f (after
  // the thread unregistered; every mark in f is that thread's, and all of them go).
  void Clear(uint32_t f, uint64_t s) {
    if (f != kNone) Word(f, s).store(0, std::memory_order_relaxed);
  }
  // Frees filter f (all its marks cleared), or ends an unfiltered writer's count (kNone).
  void Release(uint32_t f) {
    if (f == kNone) {
      unfiltered_.fetch_sub(1, std::memory_order_seq_cst);
    } else {
      claimed_.fetch_and(~(uint32_t{1} << f), std::memory_order_release);
    }
  }

  // What a committer reads once, after its scan of the writers' registry.
  struct View {
    uint32_t claimed = 0;
    bool all = false;  // an unfiltered writer: every subgraph may be read
  };
  View Load() const {
    View v;
    v.all = unfiltered_.load(std::memory_order_seq_cst) != 0;
    v.claimed = claimed_.load(std::memory_order_acquire);
    return v;
  }
  // Whether a writer of `v` may read subgraph s's head.
  bool MayRead(const View& v, uint64_t s) const {
    if (v.all) return true;
    for (uint32_t c = v.claimed; c != 0; c &= c - 1) {
      const uint32_t f = static_cast<uint32_t>(__builtin_ctz(c));
      if (Word(f, s).load(std::memory_order_relaxed) & Bit(s)) return true;
    }
    return false;
  }

 private:
  static constexpr uint32_t kWords = kBits / 64;
  static uint64_t Bit(uint64_t s) { return uint64_t{1} << (s & 63); }
  std::atomic<uint64_t>& Word(uint32_t f, uint64_t s) const {
    return words_[f * kWords + ((s >> 6) & (kWords - 1))];
  }

  std::unique_ptr<std::atomic<uint64_t>[]> words_;
  std::atomic<uint32_t> claimed_{0};     // bit f: filter f is claimed
  std::atomic<uint32_t> unfiltered_{0};  // writers registered without a filter
};

}  // namespace strata::mem
