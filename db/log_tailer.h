// LogTailer: reads a store's commits (batches and view definition changes, each one log record)
// from its write-ahead logs without opening the
// store — no lock, no file changed — so a second process can follow a store another process
// writes (`strata watch`; docs/change-feed.md, "Watching from another process").
//
// Each Poll lists the logs, reads the whole records appended since the last Poll
// (WriteAheadLog::Tail: a record still being written is read by a later Poll, never in part),
// and emits each commit's change records (db/change_feed.h ReplayLogRecord) in
// commit-timestamp order. Commits are numbered densely while the WAL is
// on, so a missing timestamp is a batch still being written (a later Poll has it) — or one
// whose log was flushed and deleted before it was read: when a gap outlives `gap_wait_ms`,
// or at the start when the oldest log begins past `from`, it is skipped and reported by
// TakeGaps. A log that disappears is normal (its memgraph was flushed).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "strata/change_feed.h"
#include "strata/function_ref.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

namespace io { class Env; }

class LogTailer {
 public:
  // `from`: emit commits with ts > from; kMaxTimestamp: only commits after the first Poll's
  // newest. Reads the store's ID and weightedness from its manifest (read-only); NotFound
  // while the store has no CURRENT yet.
  static Status Open(const std::string& dir, Timestamp from, std::unique_ptr<LogTailer>* out);
  ~LogTailer();

  // fn(ts, the commit's records): a batch's replayed records (maybe none: an empty batch) or
  // a view change's one record.
  Status Poll(FunctionRef<void(Timestamp, const std::vector<ChangeRecord>&)> fn);
  // Gaps skipped since the last call, as "commits A to B: <why>".
  std::vector<std::string> TakeGaps();
  bool weighted() const { return weighted_; }
  uint32_t gap_wait_ms = 2000;

 private:
  LogTailer() = default;
  std::unique_ptr<io::Env> env_;
  std::string dir_;
  uint64_t store_id_ = 0;
  bool weighted_ = false;
  Timestamp next_ = 0;  // the next commit to emit (0: not known before the first Poll)
  bool from_now_ = false;
  bool started_ = false;
  std::map<uint64_t, uint64_t> offsets_;  // log number -> bytes read
  uint64_t min_log_ = 0;                  // logs below this were read to their end and deleted
  std::map<Timestamp, std::vector<ChangeRecord>> pending_;
  uint64_t gap_since_ = 0;  // micros when the current gap was first seen (0: none)
  std::vector<std::string> gaps_;
};

}  // namespace strata
