// DBImpl: the store. Owns the commit clock, the reader tracer, the current Version, the write
// path (WriteBatch -> primitive memgraph ops -> MV2PL commit), and — for a persistent store —
// the directory lock, the manifest, the write-ahead logs, seal and background flush.
//
// Concurrency:
//   - Writers hold seal_mu_ shared while they apply to the active memgraph; sealing takes it
//     exclusively, so a seal happens with no writer in flight and t_r == t_w == S.
//   - version_mu_ guards current_. A reader registers its timestamp and copies current_
//     under it, so it never pairs a timestamp with a Version that lacks that timestamp's data.
//   - bg_mu_ guards the sealed-memgraph bookkeeping, the background error and shutdown;
//     room_cv_ wakes stalled writers, bg_cv_ wakes the flush thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "io/env.h"
#include "db/manifest.h"
#include "db/tier_reader.h"
#include "db/wal.h"
#include "strata/db.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"
#include "db/version.h"

namespace strata {

// What snapshots share with the DB and must outlive it if a snapshot does.
struct DBCore {
  explicit DBCore(uint32_t reader_slots) : tracer(reader_slots) {}
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
};

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string path);
  ~DBImpl() override;

  Status Init();

  Status Write(const WriteOptions& wo, const WriteBatch& batch) override;
  Status NewVertex(VertexId* id) override;
  std::unique_ptr<Snapshot> GetSnapshot() override;
  DBStats GetStats(bool count_graph = true) override;
  Status Close() override;

  Status Flush() override { return FlushAll(); }
  Status WaitIdle() override;
  Status CompactAll() override;
  Status Verify(std::string* report) override;

  // Seals the active memgraph (if it holds anything) and waits until every sealed memgraph
  // is flushed.
  Status FlushAll();
  // Waits until no sealed memgraph is left to flush; returns the background error.
  Status WaitForFlushes();

  // The current Version (tests and tools: its files and multi-level index).
  std::shared_ptr<const Version> CurrentVersion() const { return current(); }

  // Expands a batch into primitive ops (exposed for tests).
  Status Expand(const WriteBatch& batch, std::vector<mem::PrimOp>* ops) const;

 private:
  struct Sealed {
    Timestamp seal_ts = 0;
    std::vector<std::unique_ptr<WriteAheadLog>> logs;  // the memgraph's logs, deleted after flush
    std::vector<std::string> replayed_logs;            // older logs replayed into it
  };

  std::shared_ptr<const Version> current() const {
    std::lock_guard<std::mutex> g(version_mu_);
    return current_;
  }
  void Install(std::shared_ptr<const Version> v) {
    std::lock_guard<std::mutex> g(version_mu_);
    current_ = std::move(v);
  }
  std::shared_ptr<mem::MemGraph> NewMemGraph();

  Status OpenDisk();
  // Takes the store's lock: flock on the directory itself (it cannot be unlinked and
  // recreated while it holds the store's files) and on LOCK; exclusive, or shared when
  // read-only. Busy when another opener holds either.
  Status LockDir();
  // OK while the path LOCK still names the file this process locked (run before every
  // manifest write: a LOCK removed or replaced means the lock no longer keeps others out).
  Status CheckLock() const;
  // No CURRENT: the directory is new, or a first open failed before CURRENT was written.
  // Removes what such an open leaves (MANIFEST-*, *.tmp); refuses a directory holding logs or
  // segments (not an unfinished creation).
  Status PrepareCreate();
  // The segment `r` (at `path`) is the file the manifest's entry `f` describes: store ID,
  // file number, size, level, adjacency, counts, source range, timestamp, tail checksum.
  Status CheckSegment(const SegmentReader& r, const std::string& path, const FileMeta& f) const;
  Status RecoverLogs(const StoreState& state);
  // Repair: replaces log `path` by its first `bytes` bytes (temp file, sync, rename).
  Status TruncateLog(const std::string& path, uint64_t bytes);
  void RemoveObsoleteFiles(const StoreState& state);
  Status NewLog(std::unique_ptr<WriteAheadLog>* log);
  // Opens a handle (reader included) on each named segment of this store.
  Status OpenSegments(const std::vector<FileMeta>& files,
                      std::vector<std::shared_ptr<SegmentHandle>>* out);

  // Waits until the active memgraph has room, sealing it or stalling as needed.
  Status MakeRoom();
  // Seals the active memgraph if `force` or it is full, and a sealed slot is free.
  // Returns true when it sealed.
  bool Seal(bool force);
  void FlushLoop();
  Status FlushOldest();

  // Compaction (compaction/compactor.h). One at a time, serialized by compact_mu_.
  struct CompactionJob {
    int dir = 0;
    uint32_t output_level = 1;
    bool bottom = false;
    std::vector<std::shared_ptr<SegmentHandle>> inputs;  // newest first
    std::string why;
  };
  // The most urgent job for the current version, if any.
  bool PickCompaction(const Version& v, CompactionJob* job);
  // Level 0 -> level 1 of direction dir: every L0 file plus the L1 files overlapping them.
  void L0Job(const Version& v, int dir, CompactionJob* job) const;
  // The idle merge (Options::idle_compaction_ms): an L0Job for the first direction whose
  // level 0 holds a file, if any.
  bool PickIdle(const Version& v, CompactionJob* job) const;
  Status RunJob(const CompactionJob& job);
  void CompactLoop();
  uint64_t LevelTarget(size_t k) const;  // target bytes of level k+1

  void Log(const std::string& line);
  // Logs "stall: <why>" unless *last (micros) says this reason was logged less than 1 s ago.
  void LogStall(std::atomic<uint64_t>* last, const std::string& why);
  size_t memgraph_capacity() const { return memgraph_capacity_.load(std::memory_order_relaxed); }
  // Splits the budget for the current files: I/O reserve, resident indexes (the vertex index
  // twice), memgraphs (shrunk when the rest leaves them less than memgraph_bytes each, down to
  // an eighth of it), and the block cache, which gets what is left. Called after every change
  // of the file set.
  void UpdateMemoryPlan();

  const Options options_;
  const std::string path_;
  std::shared_ptr<DBCore> core_;
  mutable std::mutex version_mu_;
  std::shared_ptr<const Version> current_;
  // GC and rebuild counts of the memgraphs flushed and dropped from current_ (guarded by
  // version_mu_, so GetStats adds each memgraph's counts exactly once).
  uint64_t retired_reclaimed_ = 0;
  uint64_t retired_rebuilt_ = 0;

  // Persistent stores only.
  std::shared_ptr<io::Env> env_;  // shared with segment handles, which may outlive the DB
  std::shared_ptr<BlockCache> cache_;  // idem; every segment reader reads through it
  std::unique_ptr<Manifest> manifest_;
  int lock_fd_ = -1;
  int dir_fd_ = -1;       // the store directory, flocked
  uint64_t lock_dev_ = 0;  // LOCK as locked (CheckLock)
  uint64_t lock_ino_ = 0;
  uint64_t store_id_ = 0;
  std::atomic<uint64_t> next_file_{1};
  std::shared_mutex seal_mu_;
  std::unique_ptr<WriteAheadLog> wal_;           // the active memgraph's log (null: kOff)
  std::vector<std::string> active_replayed_;     // logs replayed into the active memgraph
  std::mutex bg_mu_;
  std::condition_variable bg_cv_;
  std::condition_variable room_cv_;
  std::map<const mem::MemGraph*, Sealed> sealed_;
  Status bg_error_;
  bool stop_ = false;
  bool flushing_ = false;
  std::thread flush_thread_;
  std::thread compact_thread_;
  std::condition_variable compact_cv_;
  bool compact_pending_ = false;  // under bg_mu_: a flush or a stall asked for a compaction check
  // Under bg_mu_: WaitIdle calls take tickets; the compaction thread moves settled_ up to the
  // newest ticket it saw once a round ends with nothing to do and no flush pending or running
  // (room_cv_ wakes the waiters).
  uint64_t settle_requested_ = 0;
  uint64_t settled_ = 0;
  std::mutex compact_mu_;
  // Held across "log the edit to the manifest + install the Version", so Verify sees the two
  // agree.
  std::mutex install_mu_;
  std::vector<VertexId> compact_cursor_[2];  // round-robin position per level
  std::mutex log_mu_;
  std::unique_ptr<io::WritableFile> event_log_;

  std::mutex free_ids_mu_;
  std::deque<VertexId> free_ids_;  // IDs of deleted vertices, reused by NewVertex
  bool holes_scanned_ = false;     // free_ids_ seeded with the holes below next_id_ (reopen)

  std::atomic<VertexId> next_id_{0};  // above every ID ever written
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> ops_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> stall_l0_micros_{0};
  std::atomic<uint64_t> stall_flush_micros_{0};
  std::atomic<uint64_t> last_l0_stall_log_{0};
  std::atomic<uint64_t> last_flush_stall_log_{0};
  std::atomic<uint64_t> flush_bytes_{0};
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> compaction_bytes_{0};
  // Size at which the active memgraph is sealed: Options::memgraph_bytes, less when the
  // resident indexes leave the memgraphs less of the budget (UpdateMemoryPlan).
  std::atomic<size_t> memgraph_capacity_{0};
  size_t logged_capacity_ = 0;  // under plan_mu_: the capacity LOG last reported
  bool logged_over_ = false;    // under plan_mu_: LOG said the budget is exceeded
  std::mutex plan_mu_;
};

}  // namespace strata
