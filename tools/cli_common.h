// Shared machinery of the `strata` command-line tool (tools/main.cc, tools/cmd_*.cc): exit codes,
// one-line errors, the CLI's own files in a store directory (IDMODE), opening a store with the
// kind and weights it was created with, translating external vertex IDs, and the progress line.
//
// Conventions every command follows (docs/cli.md):
//  - results go to stdout (or --out), everything else (progress, summaries, errors) to stderr;
//  - an error is ONE line on stderr, "strata <command>: <message>", and a non-zero exit code;
//  - vertex IDs on the command line and in every output are external IDs: in a store created
//    with --ids map they go through the persisted IdDictionary, with --ids dense they are the
//    internal IDs themselves.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "db/filename.h"
#include "db/manifest.h"
#include "strata/db.h"
#include "strata/snapshot.h"
#include "strata/status.h"
#include "graphio/id_dictionary.h"

namespace strata::cli {

// Exit codes scripts rely on.
inline constexpr int kExitOk = 0;        // success
inline constexpr int kExitError = 1;     // runtime or storage error (includes bad input data)
inline constexpr int kExitUsage = 2;     // bad command line: unknown option, bad value
inline constexpr int kExitNoEdge = 3;    // `query edge U V`: both vertices exist, the edge not

// The name errors are prefixed with ("strata <command>"); set by main before running a command.
void SetCommandName(std::string name);
// Prints "<command name>: <message>" as one line on stderr (newlines in `message` become "; ")
// and returns `code`.
int Fail(int code, std::string_view message);
// Fail with kExitUsage for InvalidArgument from argument checks, kExitError otherwise.
int FailStatus(const Status& s, std::string_view context = "");
// A Status message without its "<Kind>: " prefix for the kinds users need not see.
std::string Describe(const Status& s);

// ---------------------------------------------------------------------------------------------
// How external vertex IDs become internal ones. Fixed when the store is created.
enum class IdMode : uint8_t {
  kDense = 0,  // external ID == internal ID
  kMap = 1,    // through the IdDictionary persisted in <store>/IDDICT
};
const char* IdModeName(IdMode m);
// "dense" or "map"; InvalidArgument otherwise.
Status ParseIdMode(std::string_view s, IdMode* m);

// <store>/IDMODE holds "ids=dense\n" or "ids=map\n". `strata ingest` writes it (atomically:
// temporary file, fsync, rename, directory fsync) before it creates the store, so a store
// without it was never written by a map-mode ingest (older versions wrote it just after the
// store was created): such stores read as dense.
std::string IdModePath(const std::string& dir);
Status WriteIdMode(const std::string& dir, IdMode m);
// *present = false (and *m = kDense) when the file does not exist.
Status ReadIdMode(const std::string& dir, IdMode* m, bool* present);

// A dense layout costs this many bytes of memory per internal ID below the largest ID (per-vertex
// arrays of the analytics and the store's directories); an ingest with --ids dense refuses IDs
// >= memory_budget / kDenseBytesPerId.
inline constexpr uint64_t kDenseBytesPerId = 16;

// What a store directory says about itself without opening it (no lock taken).
struct StoreInfo {
  std::string dir;
  StoreState state;      // from the live manifest
  std::string manifest_path;
  RecordLogTail manifest_tail;
  IdMode ids = IdMode::kDense;
  bool has_id_mode_file = false;
};
// NotFound "no store at 'DIR': the directory does not exist" / "'DIR' is not a StrataGraph
// store (no CURRENT file)"; errors of the manifest otherwise.
Status ReadStoreInfo(const std::string& dir, StoreInfo* info);
// A store that maps IDs (an IDDICT is there) whose IDMODE is gone or says dense would take
// external IDs for internal ones: every answer wrong, none refused. Corruption naming IDMODE
// then; OK otherwise. Every command that opens a store asks it (inspect shows the state).
Status CheckIdMode(const StoreInfo& info);
// True when `dir` holds a CURRENT file.
bool IsStore(const std::string& dir);

// "directed", "directed+in-edges", "undirected".
const char* KindName(GraphKind k);

// ---------------------------------------------------------------------------------------------
// A store opened by a command that reads it (query, analyze, export, verify, compact): the kind
// and weights come from the manifest, the ID mode from IDMODE, the dictionary is loaded in map
// mode and checked to cover every vertex of the store (CheckDictionaryCovers). Opening takes
// the store's lock: Busy if another process has it open. A read-only open changes no file,
// IDDICT included (IdDictionaryOptions::read_only: a torn tail is left in place and reported
// by DictionaryNote()).
class Store {
 public:
  struct OpenOptions {
    WalMode wal = WalMode::kOff;  // readers log nothing; replayed logs are flushed at Close
    bool load_dictionary = true;
    // Options::read_only: no file of the store changes (logs are replayed in memory only);
    // shares the lock with other readers. verify, export, query and analyze open so.
    bool read_only = false;
    bool repair = false;  // Options::repair (strata repair)
  };
  static Status Open(const std::string& dir, const OpenOptions& o, std::unique_ptr<Store>* out);
  static OpenOptions ReadOnlyOpen() {
    OpenOptions o;
    o.read_only = true;
    return o;
  }
  ~Store();

  DB* db() const { return db_.get(); }
  const StoreInfo& info() const { return info_; }
  GraphKind kind() const { return info_.state.kind; }
  bool weighted() const { return info_.state.weighted; }
  IdMode ids() const { return info_.ids; }
  // Null in dense mode.
  const graphio::IdDictionary* dictionary() const { return dict_.get(); }
  // What loading the dictionary found that a read-only open leaves as it is (a torn tail,
  // graphio::TornTailNote); empty otherwise.
  std::string DictionaryNote() const;

  // The internal ID of external vertex `ext` if it exists in `snap`; otherwise NotFound
  // "unknown vertex <ext>".
  Status ToInternal(const Snapshot& snap, uint64_t ext, VertexId* v) const;
  uint64_t ToExternal(VertexId v) const {
    return dict_ ? (v < dict_->size() ? dict_->External(v) : v) : v;
  }
  // Existing vertices of `snap` as (external, internal) pairs, ascending by external ID.
  Status SortedVertices(const Snapshot& snap,
                        std::vector<std::pair<uint64_t, VertexId>>* out) const;

  // Closes the DB (flushing anything replayed from logs) and reports its status.
  Status Close();

 private:
  Store() = default;
  StoreInfo info_;
  std::unique_ptr<DB> db_;
  std::unique_ptr<graphio::IdDictionary> dict_;
  graphio::IdDictionaryLoadInfo dict_info_;
};

// A mapped store's dictionary must cover every internal ID the store holds: a vertex at or
// above dict.size() would print as if its internal ID were external, and a later ingest would
// map new external IDs onto it. Corruption naming <dir>/IDDICT and the first such vertex.
// Costs a vertex scan of [dict.size(), VertexIdBound()), which is empty or tiny in a sound
// store.
Status CheckDictionaryCovers(const std::string& dir, const Snapshot& snap,
                             const graphio::IdDictionary& dict);

// What a snapshot holds, counted by reading every vertex entry and edge block (a damaged one is
// an error, not a smaller count). entries: stored directed entries (Snapshot::NumEdges's
// sense); edges: logical edges — entries, or on an undirected store each pair once, a
// self-loop being one entry where another edge is two.
struct GraphCounts {
  uint64_t vertices = 0;
  uint64_t entries = 0;
  uint64_t edges = 0;
};
Status CountGraph(const Snapshot& snap, GraphCounts* out);

// Turns an Open failure into the right one-line message (missing store, not a store, busy).
std::string OpenErrorMessage(const std::string& dir, const Status& s);

// ---------------------------------------------------------------------------------------------
// Time and number formatting.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void Reset() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// "1 segment", "3 segments".
std::string Plural(uint64_t n, std::string_view word);
// "999", "12.3K", "4.56M", "1.23G".
std::string HumanCount(double n);
// "%.3g"-like seconds: "0.012 s", "3.45 s", "2 min 03 s".
std::string HumanSeconds(double s);
// Sum of the sizes of the regular files directly in `dir` (0 on error).
uint64_t DirectoryBytes(const std::string& dir);
// Files in `dir` whose name ends with `suffix`, with sizes, sorted by name.
std::vector<std::pair<std::string, uint64_t>> FilesWithSuffix(const std::string& dir,
                                                              std::string_view suffix);

// Whether stderr is a terminal.
bool StderrIsTerminal();

// A status line on stderr refreshed ~4 times a second by a background thread: `render` is
// called on that thread and must be thread-safe. Overwrites itself with '\r'; Stop() erases it.
// Does nothing when not enabled.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::function<std::string()> render,
               std::chrono::milliseconds period = std::chrono::milliseconds(250));
  ~ProgressLine();
  void Stop();

 private:
  void Loop();
  std::function<std::string()> render_;
  std::chrono::milliseconds period_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  size_t last_width_ = 0;
  std::thread thread_;
};

}  // namespace strata::cli
