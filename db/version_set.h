// VersionSet: the store's current Version and the one path that replaces it; and the compaction
// policy (CompactionPicker), which decides from a Version which files to merge next.
//
// Installing a file change (a flush or a compaction) is "log the edit to the manifest, then
// install the Version" under install_mu_, with the new multi-level vertex index computed from
// the current Version under the same mutex: no other file change can come between, so the
// index is the one of the new file set, and whoever holds install_mu_ sees the manifest and the
// current Version agree. Seals change no file: they replace the Version under version_mu_ only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/manifest.h"
#include "db/version.h"
#include "strata/options.h"

namespace strata {

// A change of the file set, applied to the current Version by VersionSet::LogAndApply.
struct VersionChange {
  enum Kind {
    // `flushed` (a sealed memgraph) leaves the Version; `added` (its segments, any direction)
    // go to the front of level 0 of their direction, in reverse order of `added`.
    kFlush,
    // `removed` (files of direction `dir`, any level) leave; `added` go to level `level` of
    // `dir`, which is kept sorted by min_src.
    kCompaction,
  };
  Kind kind = kFlush;
  std::shared_ptr<mem::MemGraph> flushed;
  int dir = 0;
  uint32_t level = 0;
  std::vector<std::shared_ptr<SegmentHandle>> added;
  std::vector<std::shared_ptr<SegmentHandle>> removed;
};

class VersionSet {
 public:
  // The current Version (version_mu_).
  std::shared_ptr<const Version> current() const {
    std::lock_guard<std::mutex> g(version_mu_);
    return current_;
  }
  // Runs fn(current Version) under version_mu_: a reader registers its timestamp and takes the
  // Version in one step, so it never pairs a timestamp with a Version that lacks its data.
  template <class Fn>
  auto WithCurrent(Fn&& fn) const {
    std::lock_guard<std::mutex> g(version_mu_);
    return fn(current_);
  }
  // The current Version's active memgraph (memgraphs[0]) without copying the Version: no lock
  // and no reference count, so writers share no cache line through it. Valid while no seal
  // can replace it: the caller holds DBImpl::seal_mu_ shared, or the store is in memory (it
  // never seals). A seal changes it under version_mu_ with the Version.
  mem::MemGraph* active() const { return active_.load(std::memory_order_acquire); }
  // Level-0 files of stored direction 0 in the current Version (writers' stall check, read
  // without the lock; exact at each install).
  size_t l0_files() const { return l0_files_.load(std::memory_order_relaxed); }
  // The current Version and the GC and rebuild counts of the memgraphs flushed out of the
  // Versions so far, read together (so each memgraph's counts are added exactly once).
  std::shared_ptr<const Version> CurrentWithRetired(uint64_t* reclaimed, uint64_t* rebuilt) const;

  // The first Version (open): no reader or installer runs yet.
  void Reset(std::shared_ptr<const Version> v);
  // Seal: `active` becomes memgraphs[0], above the memgraph just sealed.
  void PushActiveMemGraph(std::shared_ptr<mem::MemGraph> active);

  // Under install_mu_: computes the new vertex index of the direction a compaction changes
  // from the current Version (a flush's level-0 files leave the index as it is), logs `edit` to `manifest` (`precheck` first, see
  // Manifest::LogAndApply), then installs the current Version with `change` applied. On failure
  // nothing is installed and the caller owns the new files. *index_micros (if not null): time
  // spent on the index.
  Status LogAndApply(Manifest* manifest, const ManifestEdit& edit,
                     const std::function<Status()>& precheck, const VersionChange& change,
                     uint64_t* index_micros = nullptr);

  // Holds off every LogAndApply while the lock is held: the manifest on disk and current()
  // agree (Verify).
  std::unique_lock<std::mutex> LockInstalls() { return std::unique_lock<std::mutex>(install_mu_); }

 private:
  // Held across "compute the index, log the edit, install the Version". Before version_mu_.
  std::mutex install_mu_;
  mutable std::mutex version_mu_;
  // Under version_mu_: current_ = v, and the two lock-free views of it.
  void SetCurrent(std::shared_ptr<const Version> v);

  std::shared_ptr<const Version> current_;  // under version_mu_
  std::atomic<mem::MemGraph*> active_{nullptr};  // current_->memgraphs[0]
  std::atomic<size_t> l0_files_{0};              // current_->l0[0].size()
  uint64_t retired_reclaimed_ = 0;          // under version_mu_
  uint64_t retired_rebuilt_ = 0;            // under version_mu_
};

// One compaction: `inputs` (newest first) merge into files of `output_level` of direction
// `dir`; `bottom`: nothing older lies below the output, so tombstones can go.
struct CompactionJob {
  int dir = 0;
  uint32_t output_level = 1;
  bool bottom = false;
  // inputs is one file of level output_level-1 >= 1 that overlaps nothing on output_level:
  // the store moves it down by a manifest edit (Options::compaction_moves).
  bool move = false;
  std::vector<std::shared_ptr<SegmentHandle>> inputs;  // newest first
  std::string why;  // for LOG
};

// The compaction policy. Levels score by size over target (level k+1 targets
// level1_bytes * level_fanout^k), level 0 by file count over l0_compaction_trigger; the highest
// score of at least 1 runs. Not thread-safe: the store calls Pick from one thread at a time
// (compact_mu_), as it keeps a round-robin cursor per level.
class CompactionPicker {
 public:
  explicit CompactionPicker(const Options& options) : options_(options) {}

  // The most urgent job for v, if any.
  bool Pick(const Version& v, CompactionJob* job);
  // The idle merge (Options::idle_compaction_ms): the level-0 job of the first direction whose
  // level 0 holds a file, if any.
  bool PickIdle(const Version& v, CompactionJob* job) const;
  // The full compaction of direction dir (DB::CompactAll): every file into the deepest
  // non-empty level (at least 1), bottom. False when the direction holds no file.
  bool PickFull(const Version& v, int dir, CompactionJob* job) const;

  // Target bytes of level k+1.
  uint64_t LevelTarget(size_t k) const;

 private:
  // Level 0 -> level 1 of direction dir: every L0 file plus the L1 files overlapping them.
  void L0Job(const Version& v, int dir, CompactionJob* job) const;
  int Directions() const;

  const Options& options_;
  std::vector<VertexId> cursor_[2];  // per direction and level: where the next Li pick starts
};

}  // namespace strata
