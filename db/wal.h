// WriteAheadLog: one log per memgraph (docs/design.md, "WAL and manifest" and
// "No lost acknowledged batch"; bytes in docs/file-format.md, "Write-ahead log"; file name:
// db/filename.h). Every committed batch is appended as one record — its commit timestamp and
// its ops — before the batch is published to readers, so the log holds every batch a reader or
// an acknowledged writer ever saw.
//
// Records are appended while the writer holds its subgraph locks and after it took its commit
// timestamp: conflicting batches therefore reach the log in commit order; batches in other
// subgraphs commute. Replay sorts by timestamp anyway.
//
// Modes: kSync — each Append writes and fsyncs its own record. kGroup — leader/follower group
// commit: the first waiting writer becomes leader, writes every queued record in one append
// and fsyncs once; all writers of the group return only after that fsync. (kOff: no log.)
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/env.h"
#include "db/record_log.h"
#include "strata/options.h"
#include "strata/write_batch.h"

namespace strata {

// Encodes a committed batch (timestamp + ops) as a WAL record payload.
void EncodeBatchRecord(Timestamp ts, const WriteBatch& batch, bool weighted, std::string* dst);
Status DecodeBatchRecord(std::string_view src, bool weighted, Timestamp* ts, WriteBatch* batch);

// A view definition change, logged as a commit in the same order as the batches
// (docs/file-format.md, "Write-ahead log"): varint ts | varint 0 (no ops) | 'V' | the change
// as a VIEWS record (db/views.h, ViewCatalog::EncodeRecord, whose own timestamp equals ts).
void EncodeViewRecord(Timestamp ts, std::string_view view_record, std::string* dst);
// Decodes any record after a log's identity: a batch (*view_record left empty) or a view
// change (*view_record set to the VIEWS record inside src; *batch empty). Corruption as
// DecodeBatchRecord, and for a view record with an unknown tag or an empty body.
Status DecodeLogRecord(std::string_view src, bool weighted, Timestamp* ts, WriteBatch* batch,
                       std::string_view* view_record);

class WriteAheadLog {
 public:
  // Creates a new, empty log file (synced, with its directory). Its first record is the
  // log's identity: the store ID and the file number (format version 2).
  static Status Create(io::Env* env, const std::string& dir, uint64_t number, uint64_t store_id,
                       WalMode mode, std::unique_ptr<WriteAheadLog>* out);
  ~WriteAheadLog();

  // Appends one record; returns when it is durable under the mode.
  Status Append(std::string_view record);
  // Forces an fsync of everything appended so far.
  Status Sync();
  Status Close();

  uint64_t number() const { return number_; }
  const std::string& path() const { return path_; }
  uint64_t bytes() const;
  uint64_t syncs() const { return syncs_; }

  // Reads every whole batch record of a log. A torn tail is cut and reported in `tail` —
  // including a log shorter than its header or zero-filled from its start, or with no whole
  // identity record (a crash inside Create, which syncs header and identity together): no
  // records, the whole file cut. An identity naming another store than `store_id`, or another
  // file number than the log's name, is Corruption naming the file: the log is not this
  // store's data. A damaged last record (tail->whole_damaged) is cut like a torn one; the
  // caller decides whether that is acceptable.
  static Status Replay(io::Env* env, const std::string& path, uint64_t store_id,
                       FunctionRef<Status(std::string_view record, uint64_t offset)> fn,
                       RecordLogTail* tail);

  // Incremental read for a tailer (the change feed's catch-up, `strata watch` in another
  // process): calls fn for each whole, checksum-valid batch record from *offset on (0: the
  // start; the header and identity are checked first) and advances *offset past it. Stops,
  // with OK, at the first record that is not whole yet: a log being appended to ends in a
  // record being written, which a later call reads. *more is set when bytes follow *offset
  // (an incomplete or damaged record). Never reports a record that is not whole.
  static Status Tail(io::Env* env, const std::string& path, uint64_t store_id, uint64_t* offset,
                     FunctionRef<Status(std::string_view record)> fn, bool* more);

 private:
  struct Waiter;
  WriteAheadLog() = default;
  Status WriteGroup(std::vector<Waiter*>* group);

  WalMode mode_ = WalMode::kGroup;
  uint64_t number_ = 0;
  std::string path_;
  std::unique_ptr<io::WritableFile> file_;
  std::unique_ptr<RecordWriter> writer_;
  mutable std::mutex mu_;
  std::deque<Waiter*> queue_;
  Status sticky_;  // a failed write or sync poisons the log: later appends fail too
  uint64_t syncs_ = 0;
};

}  // namespace strata
