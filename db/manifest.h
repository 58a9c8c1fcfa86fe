// Manifest: the durable description of a store's files (docs/design.md, "WAL and manifest").
//
// Directory layout (db/filename.h): CURRENT names the live manifest ("MANIFEST-<n>\n"). A
// manifest is a record log (db/record_log.h, magic "SGMANIF1") of ManifestEdits; its first
// record holds the whole state, later ones the changes: segment added/removed per level, next
// file number, last flushed timestamp, next vertex ID, write-ahead logs made and retired. Each
// append is synced before LogAndApply returns.
//
// Logs: a log is listed (ManifestEdit::logs_added) after its header and identity record are
// synced and before any batch is written to it, and unlisted (logs_removed) by the edit that
// makes its batches obsolete (the flush's, or a clean close's) before it is deleted. So every
// listed log exists and holds its identity record; one that is gone or emptied was damaged
// after the fact, and Open reports it rather than serve a store without its batches. A log not
// listed (a crash between its creation and its listing; a store written before logs were
// listed) holds no batch after the last flush — once the manifest lists logs
// (StoreState::lists_logs), an unlisted log that does is newer than the manifest (an older
// copy of it restored), and Open refuses the store rather than drop the segments that copy
// does not name.
//
// Recover replays the live manifest (a torn last record is cut and reported; a last record
// written whole but damaged, or one whose cut would leave the state naming a segment that is
// gone, is Corruption and nothing is rewritten), then writes the recovered state into a new
// manifest, syncs it, and switches CURRENT to it by atomic rename (temp file, fsync, rename,
// fsync of the directory) before deleting the old one. A crash at any point leaves CURRENT
// naming a complete manifest.
//
// Bytes: docs/file-format.md, "Manifest" (CURRENT, the MANIFEST-<n> record log and the
// ManifestEdit encoding, tag by tag).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "io/env.h"
#include "db/record_log.h"
#include "segment/file_meta.h"
#include "strata/types.h"

namespace strata {

// 2: the store ID (in the store info, every WAL's first record and every segment header) and
// each file's tail checksum. Version 1 stores are refused with NotSupported.
inline constexpr uint32_t kStoreFormatVersion = 2;

struct StoreState {
  uint32_t format_version = kStoreFormatVersion;
  GraphKind kind = GraphKind::kDirected;
  bool weighted = false;
  uint64_t store_id = 0;  // random at creation; in every WAL and segment of the store
  uint64_t next_file_number = 1;
  Timestamp last_flushed_ts = 0;  // every commit <= this lives in segment files
  VertexId next_vertex_id = 0;
  std::map<uint64_t, FileMeta> files;  // by file number
  std::set<uint64_t> logs;  // write-ahead logs listed: each must exist (see the file comment)
  // Set once every log that may hold a batch after the last flush is listed: from a store's
  // creation, or the first open of a store written before logs were listed (which lists the
  // logs it finds). Only then does an unlisted log holding such a batch mean a stale manifest.
  bool lists_logs = false;
  // Store files outside the manifest whose loss would go unseen (kKept*): set once the file
  // exists; Open refuses the store, naming the file, when a kept file is gone.
  uint32_t kept_files = 0;
  // Per kept file (KeptIndex), its stamp as last recorded here: a number that only grows with
  // what the file holds and that the file records too (VIEWS: the commit timestamp of its
  // newest definition change; SUBSCRIPTIONS: its set generation, ChangeFeed::generation). The
  // file is rewritten, then its stamp recorded, so a file whose own stamp is lower is an older
  // copy of it (Open refuses it). 0: none recorded.
  uint64_t kept_stamps[2] = {};
};

inline constexpr uint32_t kKeptViews = 1;          // VIEWS
inline constexpr uint32_t kKeptSubscriptions = 2;  // SUBSCRIPTIONS
// The CLI's ID files (db/filename.h): the engine neither reads nor writes them, but a mapped
// store without both would be read as dense, every external ID taken for an internal one.
inline constexpr uint32_t kKeptIdMode = 4;          // IDMODE
inline constexpr uint32_t kKeptIdDictionary = 8;    // IDDICT
// Whether kept file `bit` records a stamp (VIEWS and SUBSCRIPTIONS; the ID files do not).
inline constexpr bool KeptFileHasStamp(uint32_t bit) {
  return bit == kKeptViews || bit == kKeptSubscriptions;
}
// The index of kept file `bit` (one with a stamp) in StoreState::kept_stamps and
// ManifestEdit::kept_stamps.
inline constexpr size_t KeptIndex(uint32_t bit) { return bit == kKeptViews ? 0 : 1; }

struct ManifestEdit {
  bool has_store_info = false;  // format_version, kind, weighted, store_id (version >= 2)
  uint32_t format_version = kStoreFormatVersion;
  GraphKind kind = GraphKind::kDirected;
  bool weighted = false;
  uint64_t store_id = 0;
  std::optional<uint64_t> next_file_number;
  std::optional<Timestamp> last_flushed_ts;
  std::optional<VertexId> next_vertex_id;
  std::vector<FileMeta> added;
  std::vector<uint64_t> removed;
  std::vector<uint64_t> logs_added;    // listing a log twice is Corruption
  std::vector<uint64_t> logs_removed;  // unlisting one not listed is a no-op
  bool lists_logs = false;             // sets StoreState::lists_logs
  uint32_t kept_files_set = 0;         // bits set in StoreState::kept_files
  uint32_t kept_files_clear = 0;       // bits cleared (a repair going on without the file)
  std::optional<uint64_t> kept_stamps[2];  // set StoreState::kept_stamps (a repair may lower one)

  void EncodeTo(std::string* dst) const;
  // `where` names the record in error messages.
  Status DecodeFrom(std::string_view src, const std::string& where);
  // Applies to `state`; removing an unknown file or adding a known one is Corruption.
  Status ApplyTo(StoreState* state, const std::string& where) const;
  // An edit that recreates `state` from nothing.
  static ManifestEdit FullState(const StoreState& state);
};

class Manifest {
 public:
  // Creates the manifest of a new store in `dir` (which must exist) and points CURRENT at it.
  static Status Create(io::Env* env, const std::string& dir, const StoreState& initial,
                       std::unique_ptr<Manifest>* out);
  // Reads the store's state; see the file comment. `tail` reports a cut torn record.
  static Status Recover(io::Env* env, const std::string& dir, StoreState* state,
                        RecordLogTail* tail, std::unique_ptr<Manifest>* out);
  // A fresh random store ID (never 0).
  static uint64_t NewStoreId();
  // Reads the live manifest without changing anything (strata inspect / verify).
  static Status ReadOnly(io::Env* env, const std::string& dir, StoreState* state,
                         RecordLogTail* tail, std::string* manifest_path);

  // Appends and syncs the edit, then applies it to the in-memory state. Thread-safe.
  // `precheck`, when set, runs first under the manifest's mutex; a non-OK result is returned
  // and nothing is written (the store checks that it still holds its lock).
  Status LogAndApply(ManifestEdit edit, const std::function<Status()>& precheck = nullptr);
  StoreState state() const;
  const std::string& path() const { return path_; }
  uint64_t number() const { return number_; }

 private:
  Manifest(io::Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}
  static Status WriteNew(io::Env* env, const std::string& dir, const StoreState& state,
                         std::unique_ptr<Manifest>* out);

  io::Env* env_;
  std::string dir_;
  std::string path_;
  uint64_t number_ = 0;
  mutable std::mutex mu_;
  StoreState state_;
  std::unique_ptr<io::WritableFile> file_;
  std::unique_ptr<RecordWriter> writer_;
};

}  // namespace strata
