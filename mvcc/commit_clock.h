// CommitClock: the two global timestamps of MV2PL (RapidStore §5.2).
//
//   t_w: last commit timestamp handed out; a writer takes t = ++t_w while holding its locks.
//   t_r: newest timestamp whose commit, and every earlier one, is fully published.
//
// Invariant: t_r <= t_w, and t_r advances strictly in commit order: only the committer of t
// moves t_r from t-1 to t, after every version it created carries timestamp t and is linked.
// (A CAS loop here is unnecessary: nobody else writes t_r while it equals t-1.)
#pragma once

#include <atomic>
#include <thread>

#include "strata/types.h"

namespace strata::mvcc {

class CommitClock {
 public:
  explicit CommitClock(Timestamp start = 0) : tw_(start), tr_(start) {}

  // Called by a writer holding the locks of every subgraph it changes.
  Timestamp NextCommit() { return tw_.fetch_add(1, std::memory_order_acq_rel) + 1; }

  // Makes commit t visible once t-1 is. Spins (with the CPU's spin-wait hint) for a few
  // microseconds, then yields: the committer of t-1 is normally a few stores from publishing
  // (well under a microsecond), and a yield is a system call; only a committer that was
  // descheduled inside that window is worth giving the core up for.
  void Publish(Timestamp t) {
    for (int spins = 0; tr_.load(std::memory_order_acquire) != t - 1;) {
      if (spins < kSpins) {
        ++spins;
        SpinHint();
      } else {
        std::this_thread::yield();
      }
    }
    tr_.store(t, std::memory_order_seq_cst);
  }

  // Recovery only (no writer or reader running): both timestamps jump to t.
  void ResetTo(Timestamp t) {
    tw_.store(t, std::memory_order_seq_cst);
    tr_.store(t, std::memory_order_seq_cst);
  }

  Timestamp read_ts() const { return tr_.load(std::memory_order_seq_cst); }
  Timestamp write_ts() const { return tw_.load(std::memory_order_acquire); }

 private:
  static constexpr int kSpins = 2048;
  static void SpinHint() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  // On lines of their own: a writer's NextCommit must not take the line another writer is
  // publishing on, nor the readers' t_r line the line every NextCommit writes.
  alignas(64) std::atomic<Timestamp> tw_;
  alignas(64) std::atomic<Timestamp> tr_;
};

}  // namespace strata::mvcc
