// DBImpl: the store. Owns the commit clock, the reader tracer, the current Version
// (db/version_set.h), the write path (WriteBatch -> primitive memgraph ops -> MV2PL commit),
// and, for a persistent store, the directory lock, the manifest, the write-ahead logs, seal,
// background flush and compaction.
//
// Sources: db_impl.cc (write, seal, flush, compaction, close), db_open.cc (open and
// recovery), db_verify.cc (Verify), db_stats.cc (GetStats), db_feed.cc (the change feed's
// entry points and the records a commit produces; the feed itself is db/change_feed.*),
// db_views.cc (views; the catalog is db/views.*).
//
// Concurrency:
//   - Writers hold seal_mu_ shared while they apply to the active memgraph; sealing takes it
//     exclusively, so a seal happens with no writer in flight and t_r == t_w == S.
//   - A reader registers its timestamp and copies the current Version under version_mu_, so it
//     never pairs a timestamp with a Version that lacks that timestamp's data.
//   - bg_mu_ guards the sealed-memgraph bookkeeping, the background error and shutdown.
//
// Mutexes, what each guards, in the order they may be acquired (a thread holding one may take
// only those listed after it; none is ever taken while holding a later one):
//   1. free_ids_mu_   free_ids_, holes_scanned_. NewVertex holds it across GetSnapshot and the
//                     whole Write of the new vertex (so everything below nests under it).
//   1a. view_mu_      one view definition change at a time (db_views.cc: check, commit
//                     timestamp, VIEWS rewrite, install in views_). Never held with
//                     free_ids_mu_. Under it: seal_mu_ shared, views_'s own mutex (a leaf,
//                     also taken alone by readers resolving a view).
//   2. seal_mu_       shared_mutex. Shared: a writer applying to memgraphs[0] (and appending to
//                     wal_); Verify reading wal_. Exclusive: Seal, which replaces wal_,
//                     active_replayed_ and memgraphs[0]. Under it: bg_mu_, version_mu_,
//                     log_mu_, and the memgraph's and the WAL's own locks.
//   3. compact_mu_    one compaction at a time (a CompactLoop round, CompactAll) and picker_'s
//                     cursors. Under it: install_mu_, plan_mu_, bg_mu_, version_mu_, log_mu_.
//                     Never held with seal_mu_ (CompactAll flushes before taking it).
//   4. install_mu_    (versions_) "compute the index, log the edit to the manifest, install
//                     the Version" of a flush or a compaction; Verify holds it to read the
//                     manifest and the Version in agreement. Under it: the manifest's mutex,
//                     version_mu_.
//   5. plan_mu_       (planner_) the memory plan's LOG bookkeeping; serializes replans. Under
//                     it: version_mu_, the block cache's locks, log_mu_.
//   6. bg_mu_         sealed_, bg_error_, stop_, flushing_, compact_pending_,
//                     settle_requested_, settled_. Under it: log_mu_ (stall and failure lines).
//   7. version_mu_    (versions_) the current Version and the retired memgraphs' GC counts.
//                     Under it: the reader tracer (GetSnapshot registers there).
//   8. log_mu_        event_log_. A leaf.
//   9. the change feed's mutexes (feed_, db/change_feed.h, its own order inside): a writer
//                     stages records under seal_mu_ (shared) and its subgraph locks; FlushOldest
//                     and Close retire logs through it holding no DBImpl mutex. The feed calls
//                     back only into log_mu_ (Log), and never holds one of its mutexes while a
//                     handler runs.
// Condition variables, all on bg_mu_:
//   bg_cv_       the flush thread waits for a sealed memgraph or stop_ (notified by Seal,
//                Close);
//   room_cv_     stalled writers (MakeRoom), FlushAll, WaitForFlushes and WaitIdle wait for a
//                free sealed slot, a flush, a compaction, settled_, an error or stop_;
//   compact_cv_  the compaction thread waits for compact_pending_ or stop_ (a flush, an
//                L0 stall, WaitIdle, Close), and wakes every second to check for idleness.
// Some notifications are sent without bg_mu_ held: each follows a state change made under
// bg_mu_, or wakes a wait that has a timeout (MakeRoom's level-0 stall, 100 ms).
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "compaction/compactor.h"
#include "compaction/flush.h"
#include "db/change_feed.h"
#include "db/manifest.h"
#include "db/memory_plan.h"
#include "db/tier_reader.h"
#include "db/version.h"
#include "db/version_set.h"
#include "db/views.h"
#include "db/wal.h"
#include "io/env.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"
#include "strata/db.h"
#include "util/striped_counter.h"

namespace strata {

// What snapshots share with the DB and must outlive it if a snapshot does.
struct DBCore {
  explicit DBCore(uint32_t reader_slots) : tracer(reader_slots) {}
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
};

// The tiers under the active memgraph, as the write path and log replay need them.
class OlderTierView : public mem::OlderTiers {
 public:
  // The tiers of v (log replay).
  OlderTierView(const Version* v, bool weighted) { r_.emplace(v, kMaxTimestamp, weighted, 1); }
  // The tiers of the Version current at the first question, pinned then: most batches ask
  // none (plain inserts and deletes), and a writer that copies no Version shares no lock or
  // reference count with the others. The caller holds DBImpl::seal_mu_ shared, so every
  // Version it could take has its active memgraph and the same data under it (a flush or a
  // compaction replaces tiers by equal ones).
  OlderTierView(const VersionSet* versions, bool weighted)
      : versions_(versions), weighted_(weighted) {}
  bool HasEdge(uint8_t dir, VertexId u, VertexId v) override {
    return Reader().GetEdge(dir, u, v, nullptr);
  }
  void Neighbors(uint8_t dir, VertexId u, std::vector<VertexId>* out) override {
    Status s = Reader().ScanNeighbors(dir, u, [&](const NeighborChunk& c) {
      out->insert(out->end(), c.dst, c.dst + c.size);
      return true;
    });
    (void)s;  // recorded in status()
  }
  Status status() const { return r_ ? r_->status() : Status::OK(); }

 private:
  TierReader& Reader() {
    if (!r_) {
      pinned_ = versions_->current();
      r_.emplace(pinned_.get(), kMaxTimestamp, weighted_, 1);
    }
    return *r_;
  }

  const VersionSet* versions_ = nullptr;
  bool weighted_ = false;
  std::shared_ptr<const Version> pinned_;
  std::optional<TierReader> r_;
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

  Status Subscribe(const SubscribeOptions& options, ChangeHandler handler,
                   std::unique_ptr<Subscription>* out) override;
  Status CommitPosition(const std::string& name, Timestamp ts) override;
  Status GetPosition(const std::string& name, Timestamp* ts) override;
  Status DropSubscription(const std::string& name) override;
  // The change feed (tests: retention counters).
  ChangeFeed* feed() const { return feed_.get(); }

  // Seals the active memgraph (if it holds anything) and waits until every sealed memgraph
  // is flushed.
  Status FlushAll();
  // Waits until no sealed memgraph is left to flush; returns the background error.
  Status WaitForFlushes();

  // Views (db_views.cc).
  Status CreateView(const std::string& name, const ViewDefinition& def, bool replace) override;
  Status DropView(const std::string& name) override;
  Status ListViews(std::vector<ViewInfo>* views) override;
  Status GetViewSnapshot(const std::string& name, std::unique_ptr<Snapshot>* out) override;
  Status OpenView(const Snapshot& base, const std::string& name,
                  std::unique_ptr<Snapshot>* out) override;

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

  std::shared_ptr<const Version> current() const { return versions_.current(); }
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
  // After VIEWS is loaded: applies the newest logged view change if VIEWS does not have it
  // yet (a crash between its log record and the VIEWS rewrite); *views_ts moves past every
  // logged view change.
  Status RecoverViewChange(Timestamp* views_ts);
  // Repair: replaces log `path` by its first `bytes` bytes (temp file, sync, rename).
  Status TruncateLog(const std::string& path, uint64_t bytes);
  void RemoveObsoleteFiles(const StoreState& state);
  // Creates the next log and lists it in the manifest (db/manifest.h, "Logs") before anything
  // is written to it; on a failed listing the log is removed again.
  Status NewLog(std::unique_ptr<WriteAheadLog>* log);
  // Unlists the logs at `paths` in one manifest edit (before they are retired at close).
  Status UnlistLogs(const std::vector<std::string>& paths);
  // Kept files (db/kept_files.h). After kept file `bit` was written with stamp `stamp`: the
  // manifest records that the store keeps it and, when the stamp grew past the one recorded
  // (kept_stamps_), the stamp — so an older copy of the file is refused later. A write that
  // leaves the stamp (a position commit) writes nothing there. A failed edit is logged: the
  // manifest then lags the file, which Open accepts; the next write or open retries.
  void RecordKeptFile(uint32_t bit, uint64_t stamp);
  // Kept file `bit` as loaded, with stamp `loaded`, against the stamp the manifest records:
  // below it is Corruption naming the file (an older copy put back); Options::repair goes on
  // with it and records its stamp.
  Status CheckKeptStamp(uint32_t bit, uint64_t loaded);
  // At open: a kept file that is gone is Corruption naming it (a repair unkeeps VIEWS or
  // SUBSCRIPTIONS and goes on, never the ID files: KeptFileRepairable); a file that exists but
  // is not yet kept (written before files were kept, or a crash between its write and its
  // edit) is kept now.
  Status CheckKeptFiles(const StoreState& st);
  // Records every kept file that is here and not yet recorded (writable opens only): at Open,
  // and at Close for the files written while the store was open (the CLI's first IDDICT).
  void RecordFoundKeptFiles();
  // Opens a handle (reader included) on each named segment of this store. A level-0 file's
  // presence is taken from `flushed` (nullable) where its flush made it, else built from the
  // file.
  Status OpenSegments(const std::vector<FileMeta>& files,
                      std::vector<std::shared_ptr<SegmentHandle>>* out,
                      compaction::FlushResult* flushed = nullptr);

  // Waits until the active memgraph has room, sealing it or stalling as needed.
  Status MakeRoom();
  // What MakeRoom waits for, checked without copying the Version: level 0 under
  // l0_stall_trigger and room in the active memgraph. Requires seal_mu_ (shared).
  bool HasRoom() const;
  // Whether writers wait for a compaction with this many level-0 files.
  bool L0Stalls(size_t l0_files) const;
  // Seals the active memgraph if a sealed slot is free and `force`, or it is still `full` (the
  // memgraph MakeRoom found at capacity) and, with no writer in flight, its bytes are within
  // 1/32 of capacity; otherwise sets seal_check_at_ops_ (see there).
  enum class SealResult { kSealed, kNotFull, kNoSlot };
  SealResult Seal(bool force, const mem::MemGraph* full = nullptr);
  void FlushLoop();
  Status FlushOldest();

  // Compaction (compaction/compactor.h): picker_ chooses, RunJob merges and installs. One at a
  // time, serialized by compact_mu_.
  // `plan`: how the merge is cut and how many threads take its parts (RunCompactionParts);
  // see CompactLoop for when.
  Status RunJob(const CompactionJob& job, const compaction::PartPlan& plan);
  // A job with `move`: the one input goes to output_level by a manifest edit, under a new
  // handle sharing its reader (the old handle, still in older Versions, keeps the file).
  Status MoveJob(const CompactionJob& job);
  // The manifest edit and new Version of a compaction (RunJob) or move (MoveJob): job's inputs
  // out, `outs` in at job.output_level; then the memory plan and the count.
  Status InstallCompaction(const CompactionJob& job,
                           const std::vector<std::shared_ptr<SegmentHandle>>& outs,
                           uint64_t* index_micros);
  // The plan of a merge that begins beside running writers: for a level-0 merge, one thread,
  // and one more once writers wait on level 0 (they leave a core idle until the merge
  // installs), cut into 2 x max_subcompactions parts so the joining thread finds parts not yet
  // started; any other merge, one part.
  compaction::PartPlan BesideWriters(const CompactionJob& job) const;
  void CompactLoop();

  // Creates and opens feed_ (after the store is open: it needs the store ID).
  Status OpenFeed();
  // In the commit hook of batch `batch` at ts, when the feed is active: stages its records,
  // prior states read from `v`'s tiers at their newest (the subgraphs written are locked).
  void StageChanges(Timestamp ts, const WriteBatch& batch, const Version* v);
  // Deletes a log DBImpl no longer needs, or hands it to the feed's retention.
  void RetireLog(const std::string& path, Timestamp max_ts);

  void Log(const std::string& line);
  // Logs "stall: <why>" unless *last (micros) says this reason was logged less than 1 s ago.
  void LogStall(std::atomic<uint64_t>* last, const std::string& why);
  size_t memgraph_capacity() const { return planner_.memgraph_capacity(); }
  // Replans memory for the current files (db/memory_plan.h). Called after every change of the
  // file set.
  void UpdateMemoryPlan();

  const Options options_;
  const std::string path_;
  std::shared_ptr<DBCore> core_;
  VersionSet versions_;      // install_mu_, version_mu_
  CompactionPicker picker_;  // under compact_mu_
  MemoryPlanner planner_;    // plan_mu_

  // Persistent stores only.
  std::shared_ptr<io::Env> env_;  // shared with segment handles, which may outlive the DB
  std::shared_ptr<BlockCache> cache_;  // idem; every segment reader reads through it
  std::unique_ptr<Manifest> manifest_;
  // Sets stop_ and joins the flush and compaction threads (Close; an open that fails after
  // OpenDisk started them).
  void StopBackgroundThreads();
  void ReleaseLock();  // closes lock_fd_ and dir_fd_ (their flocks go with them)
  int lock_fd_ = -1;
  int dir_fd_ = -1;       // the store directory, flocked
  uint64_t lock_dev_ = 0;  // LOCK as locked (CheckLock)
  uint64_t lock_ino_ = 0;
  uint64_t store_id_ = 0;
  std::atomic<uint64_t> next_file_{1};
  std::shared_mutex seal_mu_;
  std::unique_ptr<WriteAheadLog> wal_;           // the active memgraph's log (null: kOff)
  std::vector<std::string> active_replayed_;     // logs replayed into the active memgraph
  std::atomic<uint32_t> kept_files_{0};          // the manifest's kept_files, once recorded
  std::atomic<uint64_t> kept_stamps_[2] = {};   // the manifest's kept_stamps, once recorded
  // Logs whose torn tail (a crashed append) this open read past, by path: where their whole
  // records end. Set by RecoverLogs, read by Verify, which does not count that tail again.
  // A read-only open's manifest too (a writable open rewrites the manifest without it).
  std::map<std::string, uint64_t> torn_at_open_;
  // Whether `tail`, read now from the log or manifest at `path`, is the torn tail this open
  // found there (the crash's, not damage): Verify does not count it.
  bool TornAtOpen(const std::string& path, const RecordLogTail& tail) const {
    const auto it = torn_at_open_.find(path);
    return !tail.whole_damaged && it != torn_at_open_.end() && it->second == tail.valid_bytes;
  }
  // Set by RecoverLogs: the newest view change in the logs after the last flush (a VIEWS
  // record; empty when none) and its timestamp.
  std::string logged_view_;
  Timestamp logged_view_ts_ = 0;
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
  std::mutex log_mu_;
  std::unique_ptr<io::WritableFile> event_log_;

  std::shared_ptr<ChangeFeed> feed_;  // set by Init; shared with subscription handles (weakly)
  // Views: view_mu_ serializes definition changes; views_ has its own leaf mutex.
  Status CommitView(ViewCatalog::Op op, const std::string& name, const ViewDefinition* def,
                    bool replace);
  std::mutex view_mu_;
  ViewCatalog views_;

  std::mutex free_ids_mu_;
  std::deque<VertexId> free_ids_;  // IDs of deleted vertices, reused by NewVertex
  bool holes_scanned_ = false;     // free_ids_ seeded with the holes below next_id_ (reopen)

  std::atomic<VertexId> next_id_{0};  // above every ID ever written
  std::atomic<bool> closed_{false};
  // Reads go through the vertex index and L0 files get a presence (Options::vertex_index_reads
  // and STRATA_VERTEX_INDEX_READS, decided once at open).
  bool index_reads_ = true;
  // Per-batch counts, striped: two shared counters added to by every batch were two cache
  // lines bouncing between writers.
  StripedCounter batches_;
  StripedCounter ops_;
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> stall_l0_micros_{0};
  std::atomic<uint64_t> stall_flush_micros_{0};
  std::atomic<uint64_t> last_l0_stall_log_{0};
  std::atomic<uint64_t> last_flush_stall_log_{0};
  std::atomic<uint64_t> flush_bytes_{0};
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> compaction_parts_{0};
  std::atomic<uint64_t> compactions_joined_{0};  // merges a thread joined (BesideWriters)
  std::atomic<uint64_t> compaction_moves_{0};    // files moved down unchanged (MoveJob)
  std::atomic<int> l0_waiters_{0};               // writers in MakeRoom's level-0 stall now
  std::atomic<int> settle_waiters_{0};           // callers in WaitIdle now
  // The seal check (Seal), which drains every writer, is due again once ops_ reaches this: a
  // check that found the active memgraph's contents short of capacity (its bytes at capacity
  // only with what writers had in flight) predicts when they can have grown to it. 0: due
  // whenever the memgraph is at capacity. Reset by every seal.
  std::atomic<uint64_t> seal_check_at_ops_{0};
  // Under seal_mu_ (exclusive), for the active memgraph: ops_ when it began, and the highest
  // bytes per op any seal check found in it (the prediction's rate: a phase of ops that add
  // little, e.g. the same edges written again, must not stretch the next check past where
  // new edges fill the room; test CheapOpsThenInsertsStillSealAtCapacity).
  uint64_t active_first_ops_ = 0;
  double active_bytes_per_op_ = 0;
  std::atomic<uint64_t> compaction_bytes_{0};
};

}  // namespace strata
