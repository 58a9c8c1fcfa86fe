// strata ingest: load a text edge list, a binary edge stream or an LDBC Graphalytics .v/.e pair
// into a store, creating it if needed.
//
// Invariants:
//  - batches are committed in input order; every batch holds --batch consecutive input records
//    (the last one fewer), so the store always holds a prefix of the input;
//  - in map mode the dictionary is persisted (fsynced) before the batch that uses its new IDs is
//    written, so no durable batch refers to a mapping that could be lost;
//  - IDMODE is written before the store is created (so a store always has it), and a creating
//    ingest that fails before its first batch reaches the store removes what it created;
//  - on any error after the store is open, what was committed stays committed: the DB is closed
//    cleanly (Close flushes) before the error is reported;
//  - SIGINT or SIGTERM stops the reading: every record read so far is committed (the partial
//    batch too) and flushed, the summary is printed, and the exit code is 130.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <memory>
#include <string>

#include "io/env.h"
#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "graphio/edge_reader.h"
#include "graphio/graphalytics_io.h"
#include "graphio/id_dictionary.h"
#include "graphio/size_parse.h"

namespace strata::cli {

namespace {

struct IngestArgs {
  std::string db;
  std::string input;
  std::string format = "auto";
  std::string vertices, edges, properties;
  bool directed = false, undirected = false, in_edges = false, weighted = false;
  std::string memory_budget = "512M";
  std::string memgraph_bytes = "64M";
  int max_sealed = 1;
  std::string wal = "group";
  uint64_t batch = 16384;
  bool skip_bad_lines = false;
  bool drop_written_pages = false;
  std::string ids;
  std::string progress = "auto";
  bool quiet = false;
};

enum class InputKind { kEdges, kGraphalytics };

// Exit code of an ingest stopped by SIGINT or SIGTERM (what shells report for Ctrl-C).
constexpr int kExitInterrupted = 130;

// SIGINT/SIGTERM while loading: the number of the first one, 0 if none.
volatile std::sig_atomic_t g_interrupted = 0;
// Set while a signal is forwarded to the main thread (see OnInterrupt).
volatile std::sig_atomic_t g_forwarding = 0;
pthread_t g_main_thread;

extern "C" void OnInterrupt(int sig) {
  if (!pthread_equal(pthread_self(), g_main_thread)) {
    // A process-directed signal lands on any thread that does not block it (the engine's, the
    // progress line's); the main thread may be blocked reading a pipe and must see EINTR.
    if (g_interrupted == 0) g_interrupted = sig;
    g_forwarding = 1;
    pthread_kill(g_main_thread, sig);
    return;
  }
  if (g_forwarding != 0) {
    g_forwarding = 0;
    return;
  }
  if (g_interrupted != 0) {
    // A second Ctrl-C: stop now, the default way (unflushed batches of --wal off are lost).
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_interrupted = sig;
}

// Installs OnInterrupt for SIGINT and SIGTERM (without SA_RESTART, so a blocking read returns
// EINTR) while it lives.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    g_interrupted = 0;
    g_forwarding = 0;
    g_main_thread = pthread_self();
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    graphio::SetReadInterruptFlag(&g_interrupted);
  }
  ~InterruptHandlers() {
    graphio::SetReadInterruptFlag(nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_, old_term_;
};

const char* SignalName(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

// Counters the progress thread reads while the main thread ingests.
struct Progress {
  std::atomic<uint64_t> records{0};
  std::atomic<uint64_t> bytes{0};
  // The engine's figures, refreshed by StatsPoller.
  std::atomic<uint64_t> memgraph_bytes{0};
  std::atomic<uint64_t> flushes{0};
  std::atomic<uint64_t> stall_micros{0};
  std::atomic<int64_t> stats_taken_ms{-1};  // when the last sample was taken; -1: none yet
};

// Samples DB::GetStats(false) (counters only, no graph walk) for the progress line on its own
// thread. Any snapshot pins memgraph versions while it lives, so it is still sampled sparingly: the next sample waits at least 50 times as long as the last
// one took, and at least two seconds; the progress line never waits for it and says how old
// the sample is. Flushes are counted from the manifest instead (Ingester::Render).
class StatsPoller {
 public:
  StatsPoller(bool enabled, DB* db, Progress* p, const Stopwatch* clock)
      : db_(db), p_(p), clock_(clock) {
    if (enabled) thread_ = std::thread([this] { Loop(); });
  }
  ~StatsPoller() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> g(mu_);
    auto wait = std::chrono::milliseconds(500);
    while (!cv_.wait_for(g, wait, [&] { return stop_; })) {
      g.unlock();
      Stopwatch t;
      DBStats st = db_->GetStats(false);
      p_->memgraph_bytes.store(st.memgraph_bytes, std::memory_order_relaxed);
      p_->flushes.store(st.flushes, std::memory_order_relaxed);
      p_->stall_micros.store(st.stall_micros, std::memory_order_relaxed);
      p_->stats_taken_ms.store(static_cast<int64_t>(clock_->Seconds() * 1000),
                               std::memory_order_relaxed);
      wait = std::max(std::chrono::milliseconds(2000),
                      std::chrono::milliseconds(static_cast<int64_t>(t.Seconds() * 50000)));
      g.lock();
    }
  }
  DB* db_;
  Progress* p_;
  const Stopwatch* clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// The CLI's own files, which an unfinished creation may leave without a CURRENT.
bool IsCliFile(const std::string& name) {
  return name == kIdModeFile || name == TempFilePath(kIdModeFile) || name == kIdDictionaryFile ||
         name == TempFilePath(kIdDictionaryFile);
}

// A directory ingest may create a store in: missing, empty, or holding only what a creation
// that stopped before the store existed leaves: the CLI's files (IDMODE is written before the
// store) and the engine's leftovers of a first open that stopped before CURRENT, as the engine
// itself classifies them (ClassifyFileWithoutCurrent, which DB::Open's creation uses).
// Otherwise *why says what is in the way, naming a file.
bool DirIsNewOrUnfinished(const std::string& dir, std::string* why) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return true;
  if (!S_ISDIR(st.st_mode)) {
    *why = "'" + dir + "' exists and is not a directory";
    return false;
  }
  std::string other;
  for (const auto& [name, size] : FilesWithSuffix(dir, "")) {
    if (IsCliFile(name)) continue;
    switch (ClassifyFileWithoutCurrent(name)) {
      case FileWithoutCurrent::kCreationLeftover:
        continue;
      case FileWithoutCurrent::kStoreData:
        *why = "'" + dir + "' has no CURRENT file but holds store files (" + dir + "/" + name +
               "): a store that lost its CURRENT, not an unfinished creation; ingest does not "
               "create a new store over it";
        return false;
      case FileWithoutCurrent::kOther:
        if (other.empty()) other = name;
        break;
    }
  }
  if (other.empty()) return true;
  *why = "'" + dir + "' exists and is not a StrataGraph store (no CURRENT file; it holds " +
         other + "); ingest creates a store only in a new or empty directory";
  return false;
}

bool PathExists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

uint64_t FileSizeOrZero(const std::string& path) {
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

// Where in the input a record came from, for messages ("edges.txt: line 12").
std::string Where(const std::string& name, const graphio::EdgeReader& r, uint64_t record_number) {
  std::string w = name == "-" ? "<stdin>: " : name + ": ";
  if (r.format() == graphio::EdgeFormat::kText) return w + "line " + std::to_string(r.line_number());
  return w + "record " + std::to_string(record_number);
}

class Ingester {
 public:
  Ingester(const IngestArgs& a) : a_(a) {}
  int Run();

 private:
  int CheckArguments();
  int PrepareStore();
  int OpenInput();
  int Load();
  // Maps an external ID for an insert (dense: checked against the limit; map: added). Errors
  // do not say where; the caller prefixes the location.
  Status MapForInsert(uint64_t ext, VertexId* v);
  // Persists new dictionary entries, then writes and clears the batch.
  Status Commit();
  int Finish(Status s, const std::string& where);
  // A new store: creates the directory if needed, removes what an unfinished creation left
  // (a stale IDDICT maps nothing of the new store) and writes IDMODE, all before the store
  // itself exists, so a store (CURRENT) always has its IDMODE.
  Status BeginCreation();
  // A creating ingest that stored nothing leaves the directory as it found it (files removed,
  // the directory too if it made it), so a retry may use any flags. Call with the DB closed.
  // Returns the note for the error message.
  std::string UndoCreation();
  // The progress line. Runs on the progress thread only (seen_flushed_ is its own).
  std::string Render();
  const std::string& InputName() const {
    return input_kind_ == InputKind::kGraphalytics ? props_.edge_path : a_.input;
  }

  const IngestArgs& a_;
  InputKind input_kind_ = InputKind::kEdges;
  graphio::EdgeFormat format_ = graphio::EdgeFormat::kAuto;
  uint64_t budget_ = 0, memgraph_ = 0;
  WalMode wal_ = WalMode::kGroup;

  // Store.
  bool creating_ = false;
  bool made_dir_ = false;   // BeginCreation made the directory
  bool wrote_any_ = false;  // a batch reached the store
  GraphKind kind_ = GraphKind::kDirected;
  bool weighted_ = false;
  IdMode ids_ = IdMode::kDense;
  std::unique_ptr<DB> db_;
  std::unique_ptr<graphio::IdDictionary> dict_;
  VertexId dense_limit_ = 0;  // dense mode: IDs must be below this

  // Input.
  graphio::GraphalyticsProperties props_;
  std::vector<uint64_t> ga_vertices_;
  std::unique_ptr<graphio::EdgeReader> reader_;
  uint64_t input_size_ = 0;

  // Progress and results.
  WriteBatch batch_;
  Progress progress_;
  Stopwatch clock_;
  uint64_t committed_ = 0;  // input records (and .v vertices) in committed batches
  uint64_t inserts_ = 0, deletes_ = 0, vertices_added_ = 0;
  uint64_t first_new_file_ = 0;          // file numbers from here on are this run's
  std::set<uint64_t> seen_flushed_;      // level-0 out-segments seen by Render
};

int Ingester::CheckArguments() {
  const std::string& f = a_.format;
  if (f == "graphalytics" || f == "ga") {
    input_kind_ = InputKind::kGraphalytics;
  } else if (f == "el" || f == "text" || f == "txt") {
    format_ = graphio::EdgeFormat::kText;
  } else if (f == "bin" || f == "binary") {
    format_ = graphio::EdgeFormat::kBinary;
  } else if (f == "auto") {
    format_ = graphio::EdgeFormat::kAuto;
  } else {
    return Fail(kExitUsage, "--format: expected el, bin, graphalytics or auto, got '" + f + "'");
  }
  if (input_kind_ == InputKind::kGraphalytics) {
    if (!a_.input.empty()) {
      return Fail(kExitUsage, "--format graphalytics reads --vertices and --edges, not --input");
    }
    if (!a_.properties.empty()) {
      Status s = graphio::ReadGraphalyticsProperties(a_.properties, &props_);
      if (!s.ok()) return FailStatus(s);
    }
    if (!a_.vertices.empty()) props_.vertex_path = a_.vertices;
    if (!a_.edges.empty()) props_.edge_path = a_.edges;
    if (props_.vertex_path.empty() || props_.edge_path.empty()) {
      return Fail(kExitUsage,
                  "--format graphalytics needs --vertices FILE.v and --edges FILE.e (or "
                  "--properties FILE.properties)");
    }
  } else {
    if (a_.input.empty()) return Fail(kExitUsage, "--input FILE|- is required");
    if (!a_.vertices.empty() || !a_.edges.empty() || !a_.properties.empty()) {
      return Fail(kExitUsage, "--vertices/--edges/--properties need --format graphalytics");
    }
  }
  Status s = graphio::ParseSize(a_.memory_budget, &budget_);
  if (!s.ok()) return Fail(kExitUsage, "--memory-budget: " + s.message());
  s = graphio::ParseSize(a_.memgraph_bytes, &memgraph_);
  if (!s.ok()) return Fail(kExitUsage, "--memgraph-bytes: " + s.message());
  if (a_.max_sealed < 1) return Fail(kExitUsage, "--max-sealed: must be at least 1");
  if (memgraph_ < 4096) return Fail(kExitUsage, "--memgraph-bytes: must be at least 4 KiB");
  if (memgraph_ * (1 + static_cast<uint64_t>(a_.max_sealed)) > budget_) {
    return Fail(kExitUsage, "--memory-budget " + graphio::FormatSize(budget_) +
                                " cannot hold the active and sealed memgraphs: --memgraph-bytes " +
                                graphio::FormatSize(memgraph_) + " x (1 + " +
                                std::to_string(a_.max_sealed) + " sealed) = " +
                                graphio::FormatSize(memgraph_ * (1 + a_.max_sealed)));
  }
  if (a_.wal == "off") {
    wal_ = WalMode::kOff;
  } else if (a_.wal == "group") {
    wal_ = WalMode::kGroup;
  } else if (a_.wal == "sync") {
    wal_ = WalMode::kSync;
  } else {
    return Fail(kExitUsage, "--wal: expected off, group or sync, got '" + a_.wal + "'");
  }
  if (a_.batch == 0) return Fail(kExitUsage, "--batch: must be at least 1");
  if (!a_.ids.empty()) {
    s = ParseIdMode(a_.ids, &ids_);
    if (!s.ok()) return Fail(kExitUsage, s.message());
  }
  return kExitOk;
}

int Ingester::PrepareStore() {
  // What the flags ask for; only the flags given are compared with an existing store.
  const bool kind_given = a_.directed || a_.undirected || a_.in_edges;
  GraphKind want = GraphKind::kDirected;
  if (a_.undirected) want = GraphKind::kUndirected;
  if (a_.in_edges) want = GraphKind::kDirectedWithInEdges;
  bool want_weighted = a_.weighted;
  if (input_kind_ == InputKind::kGraphalytics && !a_.properties.empty()) {
    // The dataset's properties decide what the flags leave open.
    if (!kind_given && !props_.directed) want = GraphKind::kUndirected;
    want_weighted = want_weighted || props_.weighted();
  }
  if (IsStore(a_.db)) {
    StoreInfo info;
    Status s = ReadStoreInfo(a_.db, &info);
    if (s.ok()) s = CheckIdMode(info);
    if (!s.ok()) return FailStatus(s);
    kind_ = info.state.kind;
    weighted_ = info.state.weighted;
    // --directed matches both directed kinds (with or without the in-edge index).
    const bool kind_ok = !kind_given || want == kind_ ||
                         (a_.directed && !a_.in_edges && kind_ != GraphKind::kUndirected);
    if (!kind_ok || (a_.weighted && !weighted_)) {
      std::string flags;
      if (kind_given) {
        flags += a_.undirected ? "--undirected" : a_.in_edges ? "--in-edges" : "--directed";
      }
      if (a_.weighted && !weighted_) flags += flags.empty() ? "--weighted" : " --weighted";
      return Fail(kExitUsage, "graph kind mismatch: store '" + a_.db + "' is " + KindName(kind_) +
                                  (weighted_ ? ", weighted" : ", unweighted") + " but " + flags +
                                  " was given (kind and weights are fixed when a store is "
                                  "created; omit the flags to use the store's)");
    }
    if (!a_.ids.empty() && ids_ != info.ids) {
      return Fail(kExitUsage, "ID mode mismatch: store '" + a_.db + "' uses --ids " +
                                  IdModeName(info.ids) + " but --ids " + a_.ids + " was given");
    }
    ids_ = info.ids;
    creating_ = false;
  } else {
    std::string why;
    if (!DirIsNewOrUnfinished(a_.db, &why)) return Fail(kExitError, why);
    kind_ = want;
    weighted_ = want_weighted;
    if (a_.ids.empty()) {
      ids_ = input_kind_ == InputKind::kGraphalytics ? IdMode::kMap : IdMode::kDense;
    }
    creating_ = true;
  }
  dense_limit_ = std::max<uint64_t>(1, budget_ / kDenseBytesPerId);
  return kExitOk;
}

int Ingester::OpenInput() {
  graphio::EdgeReaderOptions ro;
  ro.skip_bad_lines = a_.skip_bad_lines;
  if (input_kind_ == InputKind::kGraphalytics) {
    Status s = graphio::ReadGraphalyticsVertices(props_.vertex_path, &ga_vertices_);
    if (!s.ok()) return FailStatus(s);
    if (!a_.properties.empty()) {
      // Files that disagree with their properties load nothing (this reads the edge file once
      // more when the properties give meta.edges, directed = false or a weight column).
      s = graphio::CheckGraphalyticsDataset(props_, ga_vertices_.size());
      if (!s.ok()) return FailStatus(s);
    }
    ro.format = graphio::EdgeFormat::kText;
    ro.allow_extra_columns = true;
    if (!a_.properties.empty()) {
      ro.weight_column = props_.WeightColumn();
    } else {
      ro.weight_column = weighted_ ? 0 : -1;
    }
    s = graphio::EdgeReader::Open(props_.edge_path, ro, &reader_);
    if (!s.ok()) return FailStatus(s);
    input_size_ = FileSizeOrZero(props_.edge_path);
  } else {
    ro.format = format_;
    Status s = graphio::EdgeReader::Open(a_.input, ro, &reader_);
    if (!s.ok()) return FailStatus(s, a_.input == "-" ? "<stdin>" : "");
    input_size_ = FileSizeOrZero(a_.input);
  }
  return kExitOk;
}

Status Ingester::MapForInsert(uint64_t ext, VertexId* v) {
  if (!dict_) {
    if (ext >= dense_limit_) {
      return Status::InvalidArgument(
          "vertex ID " + std::to_string(ext) + " is too large for --ids dense within " +
          "--memory-budget " + graphio::FormatSize(budget_) + " (IDs must be below " +
          std::to_string(dense_limit_) + " at " + std::to_string(kDenseBytesPerId) +
          " B per ID); use --ids map for sparse IDs");
    }
    *v = ext;
    return Status::OK();
  }
  return dict_->GetOrAdd(ext, v);
}

Status Ingester::Commit() {
  if (batch_.empty()) return Status::OK();
  if (dict_ && dict_->persisted() < dict_->size()) {
    Status s = dict_->Persist();
    if (!s.ok()) return s;
    // The dictionary's memory counts against the budget, next to the memgraphs.
    const uint64_t need = dict_->MemoryBytes() + memgraph_ * (1 + a_.max_sealed);
    if (need > budget_) {
      return Status::InvalidArgument(
          "the ID dictionary (" + std::to_string(dict_->size()) + " IDs, " +
          graphio::FormatSize(dict_->MemoryBytes()) + ") and the memgraphs (" +
          graphio::FormatSize(memgraph_ * (1 + a_.max_sealed)) + ") exceed --memory-budget " +
          graphio::FormatSize(budget_) + "; raise --memory-budget");
    }
  }
  Status s = db_->Write(batch_);
  if (!s.ok()) return s;
  wrote_any_ = true;
  batch_.Clear();
  return Status::OK();
}

std::string Ingester::Render() {
  const uint64_t n = progress_.records.load(std::memory_order_relaxed);
  const uint64_t b = progress_.bytes.load(std::memory_order_relaxed);
  const double t = clock_.Seconds();
  std::string line = "ingest  " + HumanCount(n) + " edges  " +
                     HumanCount(t > 0 ? n / t : 0) + " edges/s  " + graphio::FormatSize(b) +
                     " read";
  if (input_size_ > 0) {
    char pct[16];
    std::snprintf(pct, sizeof(pct), " (%.0f%%)", 100.0 * b / input_size_);
    line += pct;
  }
  // Flushes and segments from the manifest: a small file, cheap to read 4 times a second.
  // Every flush adds one out-list segment to level 0; compaction only removes level-0 files.
  StoreInfo info;
  if (ReadStoreInfo(a_.db, &info).ok()) {
    uint64_t l0 = 0, deeper = 0;
    for (const auto& [num, f] : info.state.files) {
      if (f.level == 0 && f.tag == 0 && num >= first_new_file_) seen_flushed_.insert(num);
      (f.level == 0 ? l0 : deeper)++;
    }
    line += "  flushes " + std::to_string(seen_flushed_.size()) + "  segments " +
            std::to_string(l0) + " L0 + " + std::to_string(deeper);
  }
  const int64_t taken = progress_.stats_taken_ms.load();
  if (taken >= 0) {
    line += "  memgraph " + graphio::FormatSize(progress_.memgraph_bytes.load()) + "  stalls " +
            HumanSeconds(progress_.stall_micros.load() / 1e6);
    const double age = t - taken / 1000.0;
    if (age >= 2) {
      char buf[40];
      std::snprintf(buf, sizeof(buf), " (sampled %.0f s ago)", age);
      line += buf;
    }
  }
  return line;
}

int Ingester::Load() {
  Status s;
  std::string where;
  const bool show = a_.progress == "always" || (a_.progress == "auto" && StderrIsTerminal());
  StatsPoller poller(show, db_.get(), &progress_, &clock_);
  ProgressLine progress(show, [this] { return Render(); });

  // Graphalytics: the vertex file first (isolated vertices exist too).
  for (size_t i = 0; i < ga_vertices_.size() && s.ok() && g_interrupted == 0; ++i) {
    VertexId v;
    s = MapForInsert(ga_vertices_[i], &v);
    if (!s.ok()) {
      where = props_.vertex_path + ": vertex " + std::to_string(i + 1);
      break;
    }
    batch_.AddVertex(v);
    ++vertices_added_;
    if (batch_.Count() >= a_.batch) {
      s = Commit();
      if (s.ok()) committed_ = i + 1;
    }
  }
  if (s.ok()) s = Commit();
  if (s.ok()) committed_ = 0;  // from here on committed_ counts edge records
  if (!s.ok()) return Finish(s, where);

  uint64_t pending = 0;  // records in batch_ (deletes of unmapped IDs add no op)
  uint64_t n = 0;
  graphio::EdgeRecord r;
  bool eof = false;
  while (g_interrupted == 0) {
    s = reader_->Next(&r, &eof);
    if (s.IsAborted() && g_interrupted != 0) break;  // a read interrupted by the signal
    if (!s.ok()) {
      // A malformed line: keep what precedes it, like every earlier batch.
      Status c = Commit();
      if (c.ok()) committed_ = n;
      return Finish(c.ok() ? s : c, "");
    }
    if (eof) break;
    ++n;
    if (r.op == graphio::EdgeOp::kInsert) {
      VertexId u, v;
      s = MapForInsert(r.src, &u);
      if (s.ok()) s = MapForInsert(r.dst, &v);
      if (!s.ok()) {
        Status c = Commit();
        if (c.ok()) committed_ = n - 1;
        return Finish(c.ok() ? s : c, c.ok() ? Where(InputName(), *reader_, n) : "");
      }
      batch_.InsertEdge(u, v, r.weight);
      ++inserts_;
    } else {
      VertexId u = r.src, v = r.dst;
      bool known = true;
      if (dict_) {
        known = dict_->Find(r.src, &u) && dict_->Find(r.dst, &v);
      } else {
        known = r.src < dense_limit_ && r.dst < dense_limit_;
      }
      if (known) batch_.DeleteEdge(u, v);  // an unknown endpoint has no edge to delete
      ++deletes_;
    }
    if (++pending >= a_.batch) {
      s = Commit();
      if (!s.ok()) return Finish(s, "batch ending at " + Where(InputName(), *reader_, n));
      committed_ = n;
      pending = 0;
      progress_.records.store(n, std::memory_order_relaxed);
      progress_.bytes.store(reader_->bytes_consumed(), std::memory_order_relaxed);
    }
  }
  // Interrupted: what was read is committed like a last batch, then flushed as at the end.
  const int interrupted = g_interrupted;
  s = Commit();
  if (!s.ok()) return Finish(s, "last batch");
  committed_ = n;
  progress_.records.store(n, std::memory_order_relaxed);
  progress_.bytes.store(reader_->bytes_consumed(), std::memory_order_relaxed);

  // Make everything durable (the rate counts until then) and count the final flush in the
  // summary.
  s = db_->Flush();
  const double secs = clock_.Seconds();
  poller.Stop();
  progress.Stop();
  if (!s.ok()) return Finish(s, "flush");
  DBStats st;
  // Counters only (flushes, stalls): no graph walk, so no counts to check.
  if (!a_.quiet) st = db_->GetStats(false);
  s = db_->Close();
  if (!s.ok()) return FailStatus(s, "close");

  if (interrupted != 0 && a_.quiet) {
    Fail(kExitInterrupted, std::string("interrupted by ") + SignalName(interrupted) + ": the " +
                               std::to_string(n) + " edge records read are stored");
  }
  if (!a_.quiet) {
    // Bytes on disk per edge: the whole directory over the edge entries its segments hold.
    StoreInfo info;
    uint64_t entries = 0, segments = 0;
    if (ReadStoreInfo(a_.db, &info).ok()) {
      for (const auto& [num, f] : info.state.files) {
        if (f.tag == 0) entries += f.num_edges;
        ++segments;
      }
    }
    const uint64_t disk = DirectoryBytes(a_.db);
    std::string msg = "ingested " + std::to_string(n) + " edge records";
    if (interrupted != 0) {
      msg = std::string("interrupted by ") + SignalName(interrupted) + " (stopped reading; " +
            "everything read is stored): " + msg;
    }
    if (deletes_) {
      msg += " (" + std::to_string(inserts_) + " inserts, " + std::to_string(deletes_) +
             " deletes)";
    }
    if (vertices_added_) msg += " and " + std::to_string(vertices_added_) + " vertices";
    char rate[160];
    std::snprintf(rate, sizeof(rate), " in %s: %s edges/s; ", HumanSeconds(secs).c_str(),
                  HumanCount(secs > 0 ? n / secs : 0).c_str());
    msg += rate;
    msg += graphio::FormatSize(disk) + " on disk";
    if (entries > 0) {
      char per[64];
      std::snprintf(per, sizeof(per), " = %.1f B per stored edge entry", double(disk) / entries);
      msg += per;
    }
    msg += " (" + Plural(segments, "segment") + "); " + std::to_string(st.flushes) +
           (st.flushes == 1 ? " flush" : " flushes") +
           ", stalls " + HumanSeconds(st.stall_micros / 1e6);
    if (dict_) msg += "; " + std::to_string(dict_->size()) + " IDs mapped";
    std::fprintf(stderr, "%s\n", msg.c_str());
    if (reader_->bad_lines() > 0) {
      std::fprintf(stderr, "skipped %llu bad lines; the first: %s\n",
                   static_cast<unsigned long long>(reader_->bad_lines()),
                   reader_->first_bad_line().c_str());
    }
    const bool input_weighted = reader_->format() == graphio::EdgeFormat::kBinary
                                    ? reader_->weighted()
                                    : reader_->records_with_weight() > 0;
    if (input_weighted && !weighted_) {
      std::fprintf(stderr,
                   "note: the input has weights but the store is unweighted: they were dropped "
                   "(create the store with --weighted to keep them)\n");
    }
  }
  return interrupted != 0 ? kExitInterrupted : kExitOk;
}

// Reports an error after the store was opened: closes it first so committed batches stay.
int Ingester::Finish(Status s, const std::string& where) {
  Status c = db_->Close();
  std::string msg = where.empty() ? Describe(s) : where + ": " + Describe(s);
  if (wal_ == WalMode::kOff && !c.ok() && committed_ > 0) {
    // Without a log, what the failed close could not flush is gone: only a prefix is stored.
    msg += "; stopped: of the " + std::to_string(committed_) +
           " records before it, only those flushed before the failure are stored (no log: "
           "--wal off)";
  } else if (input_kind_ == InputKind::kEdges || committed_ > 0) {
    msg += committed_ == 1 ? "; stopped: the record before it is stored"
                           : "; stopped: the " + std::to_string(committed_) +
                                 " records before it are stored";
  }
  if (s.IsInvalidArgument() && reader_ && reader_->format() == graphio::EdgeFormat::kText &&
      !a_.skip_bad_lines && msg.find("expected '") != std::string::npos) {
    msg += " (--skip-bad-lines skips such lines)";
  }
  if (!c.ok()) msg += "; closing the store failed too: " + Describe(c);
  if (c.ok() && creating_ && !wrote_any_) msg += UndoCreation();
  return Fail(kExitError, msg);
}

Status Ingester::BeginCreation() {
  if (!PathExists(a_.db)) {
    if (::mkdir(a_.db.c_str(), 0755) != 0) {
      return Status::IOError("mkdir " + a_.db + ": " + std::strerror(errno));
    }
    made_dir_ = true;
  }
  for (const std::string& p : {IdDictionaryFilePath(a_.db), TempFilePath(IdDictionaryFilePath(a_.db)),
                               TempFilePath(IdModeFilePath(a_.db))}) {
    if (PathExists(p)) {
      Status s = io::RemoveFile(p);
      if (!s.ok()) return s;
    }
  }
  // IDMODE's write syncs the directory, which makes these removals durable before it.
  return WriteIdMode(a_.db, ids_);
}

std::string Ingester::UndoCreation() {
  db_.reset();
  bool all = true;
  for (const auto& [name, size] : FilesWithSuffix(a_.db, "")) {
    all = io::RemoveFile(a_.db + "/" + name).ok() && all;
  }
  // Durable before the command says the store is gone: a power loss could otherwise bring back
  // some of the files (a CURRENT without IDMODE: a dense store; a log without CURRENT: a
  // store that lost its CURRENT).
  all = io::SyncDirectory(a_.db).ok() && all;
  if (made_dir_) ::rmdir(a_.db.c_str());
  return all ? "; nothing was stored, so the new store was removed (a retry may use other flags)"
             : "; nothing was stored, but removing the new store failed: remove '" + a_.db +
                   "' before a retry with other flags";
}

int Ingester::Run() {
  int rc = CheckArguments();
  if (rc != kExitOk) return rc;
  rc = PrepareStore();
  if (rc != kExitOk) return rc;
  rc = OpenInput();
  if (rc != kExitOk) return rc;

  Options o;
  o.graph_kind = kind_;
  o.weighted = weighted_;
  o.create_if_missing = creating_;
  o.memory_budget = budget_;
  o.memgraph_bytes = memgraph_;
  o.max_sealed_memgraphs = a_.max_sealed;
  o.drop_written_pages = a_.drop_written_pages;
  o.wal = wal_;
  Status s;
  if (creating_) {
    s = BeginCreation();
    if (!s.ok()) {
      if (made_dir_) ::rmdir(a_.db.c_str());
      return FailStatus(s, "creating the store");
    }
  }
  s = DB::Open(o, a_.db, &db_);
  if (!s.ok()) {
    // A creating open that failed part way (a full disk at its log, say) may have written
    // CURRENT: the engine's files go with IDMODE, or the next ingest would find an existing
    // store without IDMODE, a dense one. Busy: another process is creating it too; its files
    // are not ours to remove.
    const std::string note = creating_ && !s.IsBusy() ? UndoCreation() : "";
    return Fail(kExitError, OpenErrorMessage(a_.db, s) + note);
  }
  if (ids_ == IdMode::kMap) {
    graphio::IdDictionaryOptions dopt;
    std::unique_ptr<Snapshot> snap = db_->GetSnapshot();
    // A new (or still empty) store starts its dictionary; a store that holds vertices must have
    // its own, covering them all: a missing or shortened one would map new external IDs onto
    // internal IDs that already carry edges.
    dopt.create_if_missing = creating_ || snap->VertexIdBound() == 0;
    // A torn tail is cut only once the dictionary is known to cover the store: a shortened
    // IDDICT is left as it was found, for a restore.
    dopt.cut_torn_tail = false;
    // A new dictionary names its store; an existing one must name this store (or none).
    dopt.owner = db_->GetStats(false).store_id;
    graphio::IdDictionaryLoadInfo dinfo;
    s = graphio::IdDictionary::Open(IdDictionaryFilePath(a_.db), dopt, &dict_, &dinfo);
    if (s.IsNotFound()) {
      s = Status::Corruption("store '" + a_.db +
                             "' maps its vertex IDs (IDMODE says ids=map) and holds vertices, "
                             "but has no IDDICT");
    }
    if (s.ok()) {
      s = graphio::CheckDictionaryOwner(IdDictionaryFilePath(a_.db), dopt.owner, dinfo.owner);
    }
    if (s.ok()) s = CheckDictionaryCovers(a_.db, *snap, *dict_);
    if (s.ok()) s = dict_->CutTornTail();
    // A dictionary from before owner records: named from now on, once known to be this one's.
    if (s.ok()) s = dict_->AddOwner(dopt.owner);
    snap.reset();
    if (!s.ok()) {
      dict_.reset();
      Status c = db_->Close();
      std::string note = c.ok() && creating_ ? UndoCreation() : "";
      return Fail(kExitError, "opening the ID dictionary: " + Describe(s) + note);
    }
  }
  {
    StoreInfo info;
    if (ReadStoreInfo(a_.db, &info).ok()) first_new_file_ = info.state.next_file_number;
  }
  clock_.Reset();
  InterruptHandlers handlers;
  return Load();
}

}  // namespace

void RegisterIngest(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<IngestArgs>();
  CLI::App* c = app->add_subcommand(
      "ingest", "Load edges into a store, creating it if the directory is new or empty");
  c->add_option("--db", a->db, "store directory")->required();
  c->add_option("--input", a->input, "edge file (text or binary), - for stdin");
  c->add_option("--format", a->format, "el (text), bin (binary), graphalytics, or auto (detect)")
      ->capture_default_str();
  c->add_option("--vertices", a->vertices, "graphalytics: the .v file");
  c->add_option("--edges", a->edges, "graphalytics: the .e file");
  c->add_option("--properties", a->properties,
                "graphalytics: the .properties file (gives files, direction and weights)");
  CLI::Option* d = c->add_flag("--directed", a->directed, "new store: directed (the default)");
  CLI::Option* u = c->add_flag("--undirected", a->undirected, "new store: undirected");
  CLI::Option* in = c->add_flag("--in-edges", a->in_edges,
                                "new store: directed, also keeping in-edges (faster pull "
                                "PageRank, direction-optimizing BFS, CDLP)");
  u->excludes(d);
  u->excludes(in);
  c->add_flag("--weighted", a->weighted, "new store: keep a weight per edge");
  c->add_option("--memory-budget", a->memory_budget, "total memory (e.g. 512M, 1G)")
      ->capture_default_str();
  c->add_option("--memgraph-bytes", a->memgraph_bytes,
                "in-memory tier size before a flush (budget >= this x (1 + --max-sealed))")
      ->capture_default_str();
  c->add_option("--max-sealed", a->max_sealed, "sealed memgraphs waiting for flush before "
                "writers stall")
      ->check(SignedIn(1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  c->add_flag("--drop-written-pages", a->drop_written_pages,
              "take flushed and compacted files out of the OS page cache after their fsync "
              "(compactions then read them back from the device)");
  c->add_option("--wal", a->wal, "write-ahead log: off, group or sync")
      ->check(CLI::IsMember({"off", "group", "sync"}))
      ->capture_default_str();
  c->add_option("--batch", a->batch, "input records per atomic batch")
      ->check(UnsignedIn(1, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  c->add_flag("--skip-bad-lines", a->skip_bad_lines,
              "skip and count malformed lines instead of stopping");
  c->add_option("--ids", a->ids,
                "new store: dense (input IDs are internal IDs; default for el/bin) or map "
                "(sparse IDs through a persisted dictionary; default for graphalytics)")
      ->check(CLI::IsMember({"dense", "map"}));
  c->add_option("--progress", a->progress, "auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  c->add_flag("-q,--quiet", a->quiet, "no summary on stderr");
  c->footer(HelpFooter(
      "Text edge lists: 'src dst [weight]' per line, '- src dst' deletes that edge, '#' or '%' "
      "starts a comment line, fields split by spaces or tabs. Batches of --batch records commit "
      "atomically in input order; a malformed line stops the ingest (naming line and content) "
      "and keeps everything before it, unless --skip-bad-lines. Graph kind, weights and ID "
      "mode are fixed when the store is created; later ingests use the store's (a flag that "
      "contradicts it is an error). A progress line is shown when stderr is a terminal."));
  commands->push_back({c, [a] { return Ingester(*a).Run(); }});
}

}  // namespace strata::cli
