// WalkRegistry: short walks over shared links, announced per thread, so that a writer can tell
// when nothing it has unlinked can still be under a reader's feet (a grace period, as in
// read-copy-update) without waiting for the reader's whole snapshot to end.
//
// A version chain's middle versions (MemGraph::Unlink) are selected by no reader, yet a reader
// that loaded a link to them before the unlink may be stepping through them inside
// MemGraph::VersionAt for a few nanoseconds. Their headers used to wait for every snapshot
// older than their unlink; a reader's run of seconds held every header written meanwhile.
//
// Protocol. Each thread owns a slot with a counter, odd while the thread is inside a Walk.
//   Walker:  counter := odd; (barrier B_r); load links ...; counter := even (release).
//   Writer:  store the unlinking links; (barrier B_w); Grace::Start reads every counter and
//            keeps the odd ones; Grace::Passed is true once each kept counter has changed.
// Either the walker's odd store is visible to Start, or the walker's loads come after B_w and
// see the new links, so it cannot reach what was unlinked before Start. Once Passed, every walk
// that may have loaded an old link has ended (its release store orders its loads before the
// writer's frees).
//
// The barrier pair is asymmetric when the kernel offers membarrier(2) with
// MEMBARRIER_CMD_PRIVATE_EXPEDITED: B_r is a compiler barrier and B_w the system call (every
// running thread of the process executes a full barrier), so a walk costs two plain stores.
// Otherwise (the call refused, or a ThreadSanitizer build, which does not see it) B_r and B_w
// are both seq_cst fences (the fence-fence case of [atomics.order]: if B_w precedes B_r in
// their single order, the walker's loads see the writer's stores; else Start sees the odd
// count). The links may be loaded acquire either way (seq_cst loads, plain movs on x86, still
// cost a neighbor scan 10%: they constrain the compiler around the inlined walk).
// The mode is chosen once per process, when the first thread takes a slot (or the first
// grace period starts); a walk that read the flag before it was set exchanges, which is safe
// under either barrier.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

namespace strata::mvcc {

class WalkRegistry {
 public:
  struct alignas(64) Slot {
    std::atomic<uint64_t> seq{0};  // odd while its thread is inside a Walk
    std::atomic<bool> taken{false};
  };

  // The calling thread is inside a walk from construction to destruction. Walks do not nest.
  // Loads of the links the walk follows must be acquire (or stronger).
  class Walk {
   public:
    Walk() : slot_(ThisThread()) {
      const uint64_t s = slot_->seq.load(std::memory_order_relaxed);
      assert(s % 2 == 0 && "walks do not nest");
      if (asymmetric_.load(std::memory_order_relaxed)) {
        // Release: a writer that reads this value synchronizes with the end of the walk before.
        slot_->seq.store(s + 1, std::memory_order_release);
        std::atomic_signal_fence(std::memory_order_seq_cst);
      } else {
        Announce(slot_, s + 1);
      }
    }
    ~Walk() {
      slot_->seq.store(slot_->seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    Walk(const Walk&) = delete;
    Walk& operator=(const Walk&) = delete;

   private:
    Slot* slot_;
  };

  // A writer's grace period: Start after the unlinking stores, then poll Passed.
  class Grace {
   public:
    // Takes the writer's barrier and records the walks in progress. Returns false if the
    // barrier could not be taken (then Passed stays false: nothing may be freed by it).
    bool Start();
    // True once every walk in progress at the last successful Start has ended; false before
    // any. Not thread-safe: one owner.
    bool Passed();

   private:
    std::vector<std::pair<const Slot*, uint64_t>> busy_;
    bool ok_ = false;
  };

  // Slots made so far (taken or free): bounded by the most threads alive at once, rounded up.
  static size_t SlotCount();
  // Walks the calling thread has made while holding its slot (for tests).
  static uint64_t WalksOfThisThread() { return ThisThread()->seq.load(std::memory_order_relaxed) / 2; }

 private:
  static Slot* ThisThread() {
    Slot* s = tls_slot_;
    return s != nullptr ? s : AcquireSlot();
  }
  struct Owner;  // gives the thread's slot back when the thread exits
  static thread_local Owner owner_;
  static Slot* AcquireSlot();
  static void Announce(Slot* slot, uint64_t odd);  // the symmetric mode's store and B_r
  static bool UseMembarrier();
  static void ForEachSlot(void (*fn)(const Slot*, void*), void* arg);

  static inline thread_local Slot* tls_slot_ = nullptr;
  static std::atomic<bool> asymmetric_;
};

}  // namespace strata::mvcc
