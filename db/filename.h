// The names of the files in a store directory: the one place db/ and tools/ build and parse
// them.
//
//   CURRENT          names the live manifest ("MANIFEST-<n>\n"); replaced through CURRENT.tmp
//   LOCK             flocked by the process that has the store open
//   LOG, LOG.old     the event log of the current and of the previous open
//   MANIFEST-<n>     a manifest (db/manifest.h)
//   <n>.wal          a write-ahead log (db/wal.h)
//   <n>.seg          a segment (segment/segment_format.h's SegmentFileName)
//   *.tmp            a file being written, renamed into place once synced
//   IDMODE, IDDICT   the CLI's ID mode and ID dictionary (graphio/id_dictionary.h)
//   SUBSCRIPTIONS    the change feed's durable subscription positions (db/change_feed.h);
//                    replaced through SUBSCRIPTIONS.tmp
//   VIEWS            the view definitions and their history (db/views.h); replaced through
//                    VIEWS.tmp
//
// <n> is a file number of at least six digits; logs, segments and manifests share one counter
// (StoreState::next_file_number).
#pragma once

#include <cstdint>
#include <string>

#include "segment/segment_format.h"

namespace strata {

inline constexpr char kCurrentFile[] = "CURRENT";
inline constexpr char kLockFile[] = "LOCK";
inline constexpr char kEventLogFile[] = "LOG";
inline constexpr char kOldEventLogFile[] = "LOG.old";
inline constexpr char kIdModeFile[] = "IDMODE";
inline constexpr char kIdDictionaryFile[] = "IDDICT";
inline constexpr char kSubscriptionsFile[] = "SUBSCRIPTIONS";
inline constexpr char kViewsFile[] = "VIEWS";
inline constexpr char kTempSuffix[] = ".tmp";

enum class FileType {
  kCurrent,
  kLock,
  kEventLog,     // LOG
  kOldEventLog,  // LOG.old
  kManifest,
  kWal,
  kSegment,
  kTemp,  // any name ending in ".tmp" (CURRENT.tmp, IDDICT.tmp, <log>.tmp, ...)
  kIdMode,
  kIdDictionary,
  kSubscriptions,
  kViews,
};

// "MANIFEST-<n>", "<n>.wal" (six digits at least).
std::string ManifestFileName(uint64_t number);
std::string WalFileName(uint64_t number);
// The number of the log at `path` (a path ending in a log's name); 0 if it names no log.
uint64_t WalNumberOfPath(const std::string& path);

// Paths in store directory `dir`.
inline std::string StoreFilePath(const std::string& dir, const std::string& name) {
  return dir + "/" + name;
}
inline std::string CurrentFilePath(const std::string& dir) { return dir + "/" + kCurrentFile; }
inline std::string LockFilePath(const std::string& dir) { return dir + "/" + kLockFile; }
inline std::string EventLogPath(const std::string& dir) { return dir + "/" + kEventLogFile; }
inline std::string OldEventLogPath(const std::string& dir) { return dir + "/" + kOldEventLogFile; }
inline std::string ManifestFilePath(const std::string& dir, uint64_t number) {
  return dir + "/" + ManifestFileName(number);
}
inline std::string WalFilePath(const std::string& dir, uint64_t number) {
  return dir + "/" + WalFileName(number);
}
inline std::string SegmentFilePath(const std::string& dir, uint64_t number) {
  return dir + "/" + SegmentFileName(number);
}
inline std::string IdModeFilePath(const std::string& dir) { return dir + "/" + kIdModeFile; }
inline std::string IdDictionaryFilePath(const std::string& dir) {
  return dir + "/" + kIdDictionaryFile;
}
inline std::string SubscriptionsFilePath(const std::string& dir) {
  return dir + "/" + kSubscriptionsFile;
}
inline std::string ViewsFilePath(const std::string& dir) { return dir + "/" + kViewsFile; }
// The temporary a file at `path` is written under before it is renamed into place.
inline std::string TempFilePath(const std::string& path) { return path + kTempSuffix; }

// The type of the file called `name` (a name, not a path) in a store directory; false for a
// name that is none of the above. *number is set for kWal and kSegment (their digits, which
// must fit 64 bits) and kManifest ("MANIFEST-" and at least one character: the digits' value,
// or 0 when the rest is not a number; the store writes only numbered manifests, but treats
// every such name as one of its manifests), and 0 for the other types.
bool ParseFileName(const std::string& name, FileType* type, uint64_t* number);

// What a file in a store directory WITHOUT a CURRENT file says about creating a store there.
// One list for the engine (DBImpl::PrepareCreate) and for `strata ingest`, which must agree on
// what counts as a resumable, unfinished creation.
enum class FileWithoutCurrent {
  // What a first open that stopped before CURRENT was renamed into place leaves: a (maybe
  // partial) MANIFEST-<n>, temporary files (*.tmp: CURRENT.tmp, ...), LOCK, LOG, LOG.old.
  // Creating again removes the manifests and temporaries (RemovedOnCreate) and reuses the rest.
  kCreationLeftover,
  // <n>.wal, <n>.seg, VIEWS: written only after CURRENT, so the store lost its CURRENT; creating a new
  // store over them would drop or misread them, and is refused (Corruption naming the file).
  kStoreData,
  // Anything else: not the engine's (the engine leaves it alone; strata ingest refuses it).
  kOther,
};
FileWithoutCurrent ClassifyFileWithoutCurrent(const std::string& name);
// kCreationLeftover files that creation deletes: manifests and temporaries.
bool RemovedOnCreate(const std::string& name);

}  // namespace strata
