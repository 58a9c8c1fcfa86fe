// ReaderTracer: the registry of active readers (RapidStore §5.2.2), used by writer GC to know
// which versions some reader may still need.
//
// Each slot is a 64-bit word: the top bit says "in use", the rest is the reader's timestamp.
// Slots live in blocks chained by an atomic pointer; when every slot is in use a new block is
// appended, so Register never fails and never returns null. Blocks are freed only with the
// tracer.
//
// Registration protocol (why GC never frees a version a reader needs): a reader stores its
// slot with ts = t_r and then re-reads t_r; it keeps the slot only if t_r did not move, else
// retries with the new value. GC reads t_r *before* scanning the slots and uses
// min(t_r, every slot). If GC's scan missed the slot, GC's t_r read preceded the reader's
// confirming read, so GC's bound is <= the reader's ts.
//
// Released prefixes (Release): a reader that will read no subgraph below some ID again says
// so, and GC may then reclaim, in those subgraphs, what only that reader selects (a long
// analytics pass over the subgraphs in order stops pinning the part it has read). Each slot
// has a second word, the released bound, 0 while the slot is free: Unregister zeroes it
// before it frees the slot, so the reader that takes the slot next starts from 0. A scan
// reads a slot's timestamp and then its bound: a bound that belongs to a later reader of the
// slot pairs with a reader that has gone, and that later reader is covered by t_r.
//
// Registered count: Register adds one before it takes a slot, Unregister subtracts one after
// it frees it (both seq_cst), and a GC scan that reads the count as 0 after its t_r skips the
// slots. Why that misses no reader: the count read follows the t_r read, so a reader whose
// increment the read did not see incremented after it, and so confirmed its ts after GC's
// t_r was read: its ts >= that t_r, which GC serves anyway. A writer with no reader
// registered then pays one load, not a pass over the slots (the 64-slot pass was 7% of the
// samples of a single-edge load; docs/benchmarks.md, "Issue 28: the reader scan of a commit
// with no reader").
//
// Used prefix: each block's `used` is one past the highest slot ever tried by Acquire, raised
// (seq_cst) before the slot's compare-and-swap and never lowered, and the scans read only
// slots [0, used). Why that misses no reader: a scan reads `used` after its t_r; a reader on a
// slot past the value it read raised `used` after that read, so it took the slot and then
// confirmed its ts after GC's t_r was read, and its ts >= that t_r (the count's argument
// again). A writer beside one reader then reads one line of words, not the block's eight
// (with a reader registered, ActiveReaders was 1.5% of a single-edge writer's samples against
// 0.4% alone; docs/benchmarks.md, "Issue 28: the tracer's scans read the used slots").
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "strata/types.h"
#include "mvcc/commit_clock.h"

namespace strata::mvcc {

class ReaderTracer {
 public:
  // counted: keep the registered count (see the top). MemGraph's tracer of writers, which
  // register once per multi-subgraph transaction, passes false: the count would be one more
  // line every writer writes twice a transaction (beside the slots' line they share), to
  // spare a scan of 8 slots. Neither cost was measurable against a batch's time.
  explicit ReaderTracer(uint32_t slots_per_block = 64, bool counted = true);
  ~ReaderTracer();
  ReaderTracer(const ReaderTracer&) = delete;
  ReaderTracer& operator=(const ReaderTracer&) = delete;

  class Slot {
   public:
    Timestamp ts() const { return ts_; }
   private:
    friend class ReaderTracer;
    std::atomic<uint64_t>* word_ = nullptr;
    std::atomic<uint64_t>* released_ = nullptr;
    Timestamp ts_ = 0;
  };

  // A registered reader as GC sees it: it selects versions at ts in every subgraph at or past
  // `released` (below it, none: see Release).
  struct Active {
    Timestamp ts;
    uint64_t released;
  };

  // Registers a reader at the clock's current t_r.
  Slot Register(const CommitClock& clock);
  void Unregister(const Slot& slot);

  // min(t_r read first, every registered reader's ts).
  Timestamp MinActive(const CommitClock& clock) const;
  uint64_t ActiveCount() const;
  // Slots of the first block the scans read (its `used`; see the top). For tests.
  uint32_t ScannedSlotsForTesting() const { return head_->used.load(std::memory_order_relaxed); }
  // The registered count the scans test for 0 (see the top; 0 unless counted). For tests.
  uint64_t RegisteredForTesting() const { return registered_.load(std::memory_order_relaxed); }
  // The reader of `slot` reads no subgraph below `below` again (its reads of them have
  // returned). Only raises the bound; any of the reader's threads may call it.
  void Release(const Slot& slot, uint64_t below);
  // Every reader GC must serve: the registered readers with timestamps below t_r (read
  // first), and t_r itself as a reader that releases nothing, ascending by ts, into *out
  // (cleared first). A reader the scan misses registers at >= that t_r, so it is covered by
  // the last element. out->front().ts is MinActive.
  void ActiveReaders(const CommitClock& clock, std::vector<Active>* out) const;

 private:
  static constexpr uint64_t kInUse = uint64_t{1} << 63;
  struct Block {
    explicit Block(uint32_t n);
    ~Block();
    uint32_t n;
    std::atomic<uint64_t>* words;
    std::atomic<uint64_t>* released;  // released[i]: slot i's released bound
    std::atomic<Block*> next{nullptr};
    std::atomic<uint32_t> used{0};  // slots [used, n) were never tried (see the top)
  };
  // A free slot set to value: its word, and its released bound in *released.
  std::atomic<uint64_t>* Acquire(uint64_t value, std::atomic<uint64_t>** released);

  const uint32_t slots_per_block_;
  Block* head_;
  const bool counted_;
  // Readers registered or registering (see the top); >= the slots in use. 0 unless counted_.
  std::atomic<uint64_t> registered_{0};
  // Whether a scan may skip the slots: the count is kept, and read 0 (after t_r).
  bool NoneRegistered() const {
    return counted_ && registered_.load(std::memory_order_seq_cst) == 0;
  }
};

}  // namespace strata::mvcc
