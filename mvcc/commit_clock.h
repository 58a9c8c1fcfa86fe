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

  // Makes commit t visible once t-1 is. Spins briefly, then yields.
  void Publish(Timestamp t) {
    for (int spins = 0; tr_.load(std::memory_order_acquire) != t - 1; ++spins) {
      if (spins > 64) std::this_thread::yield();
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
  std::atomic<Timestamp> tw_;
  std::atomic<Timestamp> tr_;
};

}  // namespace strata::mvcc
