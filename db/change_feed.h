// ChangeFeed: the engine side of the change feed (include/strata/change_feed.h; design and
// policies in docs/change-feed.md; the SUBSCRIPTIONS file in docs/file-format.md).
//
// Path of a record:
//   writer (DBImpl::Write): WaitForRoom before taking a timestamp; in the commit hook — after
//     the WAL append, before the batch is published, with its subgraph locks held — builds the
//     batch's records from the prior states (BuildLiveRecords) and Stages them, only when
//     active() (no subscription: one atomic load per batch).
//   dispatcher thread: takes the staged batches with ts <= t_r (all of them are staged by
//     then: a batch is staged before it is published, and t_r moves in commit order), sorts
//     them by ts and appends them to every subscription's bounded queue (the overflow policy
//     applies there).
//   subscription threads: run the handler on queued batches (or Next pulls them).
// A subscription starting in the past first replays the write-ahead logs (catch-up) for
// (from, T0], T0 = t_w when it registered; the dispatcher gives it only ts > T0 (held apart
// until the catch-up ends). Writers read active() after taking their timestamp and Subscribe
// raises it before reading t_w (seq_cst fences on both sides): a batch with ts > T0 is staged.
//
// Log retention: DBImpl hands every log it would delete to RetireLog with the largest
// timestamp it may hold; the file is deleted once every durable position (and every running
// catch-up) is past it, or when retained bytes exceed the bound (then the durable
// subscriptions that still needed it are marked lost, persistently).
//
// Locks: mu_ (subscriptions, positions, retention) before a subscription's mu; stage_mu_ is a
// leaf (a writer takes it under seal_mu_ and its subgraph locks). No lock is held while a
// handler runs; the dispatcher holds none of the feed's while it waits for room (kBlock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/env.h"
#include "mvcc/commit_clock.h"
#include "strata/change_feed.h"
#include "strata/function_ref.h"
#include "strata/options.h"
#include "strata/write_batch.h"

namespace strata {

struct ChangeFeedOptions {
  io::Env* env = nullptr;  // null for an in-memory store
  std::string dir;
  uint64_t store_id = 0;
  bool weighted = false;
  GraphKind kind = GraphKind::kDirected;
  // Logs exist and positions may be persisted (persistent, writable, WAL on).
  bool durable = false;
  uint64_t max_retained_bytes = uint64_t{1} << 30;
  mvcc::CommitClock* clock = nullptr;
  std::function<void(const std::string&)> log;  // the event log (may be empty)
  // Called after SUBSCRIPTIONS was written, with its set generation (may be empty): the store
  // records that it keeps the file, and the generation when it grew.
  std::function<void(uint64_t generation)> persisted;
};

// Live records of one committed batch, in op order. `prior(u, v, &w)` returns whether edge
// (u,v) was live before the batch (and its weight); the batch's own earlier ops are overlaid
// here. A delete of an absent edge yields no record.
void BuildLiveRecords(Timestamp ts, const WriteBatch& batch, GraphKind kind, bool weighted,
                      FunctionRef<bool(VertexId, VertexId, double*)> prior,
                      std::vector<ChangeRecord>* out);
// Records of a batch replayed from the log (kPutEdge, kDeleteEdgeOp, vertex kinds).
void ReplayRecords(Timestamp ts, const WriteBatch& batch, std::vector<ChangeRecord>* out);
// The record of a view definition change at ts: kViewDropped when `def` is null, else
// kViewDefined with a copy of *def.
ChangeRecord ViewChangeRecord(Timestamp ts, const std::string& name, const ViewDefinition* def);
// Decodes one write-ahead-log record (a batch or a view change, db/wal.h DecodeLogRecord) and
// appends its records to *out (a batch: ReplayRecords; a view change: its one record).
// Corruption when it does not decode, or a view change's own timestamp is not the record's.
Status ReplayLogRecord(std::string_view rec, bool weighted, Timestamp* ts,
                       std::vector<ChangeRecord>* out);

class ChangeFeed : public std::enable_shared_from_this<ChangeFeed> {
 public:
  struct Sub;  // one subscription (change_feed.cc)

  explicit ChangeFeed(ChangeFeedOptions o);
  ~ChangeFeed();
  // Loads SUBSCRIPTIONS (durable feeds) and starts the dispatcher.
  Status Open();

  // A durable subscription's committed position.
  struct Position {
    Timestamp ts = 0;
    bool lost = false;
  };
  // Reads <dir>/SUBSCRIPTIONS (none: an empty map). Corruption naming the file when its magic,
  // version, checksum or an entry is bad, or when it names a store other than `store_id` (0:
  // not checked; a file from before files named their store, versions 1 and 2, is not
  // either). Open and DB::Verify read it through this. *generation (nullable): the file's set
  // generation (0 for none, or a version-1 file); *version (nullable): its format version (0
  // for none).
  static Status ReadPositions(io::Env* env, const std::string& dir, uint64_t store_id,
                              std::map<std::string, Position>* out,
                              uint64_t* generation = nullptr, uint32_t* version = nullptr);
  // The set generation: counts the changes of the set of durable subscriptions (a creation, a
  // drop, one becoming lost) over the store's life; SUBSCRIPTIONS (version 2) records it, and
  // the store's manifest records each new one, so an older copy of the file — which may lack a
  // subscription created since, whose subscriber would then resume "from now" and skip
  // changes — is told from the current one. Position commits do not change it (an older
  // position redelivers; it skips nothing).
  uint64_t generation() const;
  // Rewrites a SUBSCRIPTIONS read by Open that does not name its store (versions 1 and 2) as
  // the current version, which does; nothing otherwise. Once the file passed the store's
  // checks.
  Status AddOwner();
  // Ends every subscription (status Aborted "store closed") and stops the dispatcher. Retention
  // and positions keep working (the store's close still retires logs).
  void Close();

  // Writers.
  bool active() const {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return active_.load(std::memory_order_relaxed) != 0;
  }
  // Waits while a kBlock subscription's queue is full, or more records than its capacity wait
  // to be dispatched. Two relaxed loads when no kBlock subscription exists.
  void WaitForRoom();
  void Stage(Timestamp ts, std::vector<ChangeRecord>* records);  // takes *records
  void Notify() { stage_cv_.notify_one(); }

  Status Subscribe(const SubscribeOptions& o, ChangeHandler handler,
                   std::unique_ptr<Subscription>* out);
  Status CommitPosition(const std::string& name, Timestamp ts);
  Status GetPosition(const std::string& name, Timestamp* ts);
  Status Drop(const std::string& name);

  // A log DBImpl no longer needs; every record in it has ts <= max_ts.
  void RetireLog(const std::string& path, Timestamp max_ts);
  uint64_t retained_bytes() const;
  size_t retained_logs() const;

  // Used by the subscription handle.
  void Remove(const std::shared_ptr<Sub>& s);

 private:
  struct Retained {
    std::string path;
    Timestamp max_ts;
    uint64_t bytes;
  };
  struct Staged {
    Timestamp ts;
    std::shared_ptr<const std::vector<ChangeRecord>> records;
  };

  void DispatchLoop();
  void CatchUp(const std::shared_ptr<Sub>& s, Timestamp from, Timestamp to);
  // Under mu_.
  Status PersistPositions();
  void CollectRetained();
  Timestamp RetentionFloor() const;

  const ChangeFeedOptions o_;
  std::atomic<int> active_{0};  // registered subscriptions

  std::mutex stage_mu_;
  std::condition_variable stage_cv_;
  std::vector<Staged> staged_;
  bool stop_ = false;  // under stage_mu_
  std::thread dispatcher_;

  // Writers waiting for a kBlock subscription's room.
  std::mutex room_mu_;
  std::condition_variable room_cv_;
  std::atomic<int> full_{0};
  // kBlock subscriptions and the smallest capacity among them (under mu_; read by writers):
  // writers also wait while more records than that are staged and not yet dispatched.
  std::atomic<int> block_subs_{0};
  std::atomic<size_t> block_capacity_{0};
  std::atomic<size_t> staged_records_{0};
  bool MustWait() const {
    return full_.load(std::memory_order_relaxed) != 0 ||
           (block_subs_.load(std::memory_order_relaxed) != 0 &&
            staged_records_.load(std::memory_order_relaxed) >=
                block_capacity_.load(std::memory_order_relaxed));
  }
  void UpdateBlockCapacity();  // under mu_

  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Sub>> subs_;
  std::map<std::string, Position> positions_;
  uint64_t generation_ = 0;  // see generation()
  uint32_t file_version_ = 0;  // of SUBSCRIPTIONS as read by Open or last written; 0 none
  std::deque<Retained> retained_;
  uint64_t retained_bytes_ = 0;
  bool closed_ = false;
};

}  // namespace strata
