// Shared machinery of the `strata` command-line tool; see tools/cli_common.h.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <new>
#include <system_error>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "db/filename.h"
#include "db/inspect.h"
#include "tools/cli_commands.h"
#include "tools/cli_common.h"

namespace strata::cli {

namespace {
std::string g_command = "strata";

bool FileExists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
bool IsDirectory(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status ErrnoStatus(const std::string& what) {
  return Status::IOError(what + ": " + std::strerror(errno));
}

}  // namespace

const char* ExitCodesHelp() {
  return "\nExit codes: 0 success; 1 runtime or storage error (missing store, store in use, "
         "bad input data, unknown vertex, corruption, not supported); 2 usage error (unknown "
         "option, bad value, flag contradicting the store); 3 query edge: the edge does not "
         "exist.\nManual: docs/cli.md";
}

std::string HelpFooter(const std::string& details) {
  return "\n" + details + "\n" + ExitCodesHelp();
}

namespace {
// The whole of `text` as a decimal integer (a leading '-' only when `allow_negative`); sets
// *why on failure.
bool ParseWholeInteger(const std::string& text, bool allow_negative, int64_t* sval,
                       uint64_t* uval, const char** why) {
  const char* b = text.data();
  const char* e = b + text.size();
  const bool negative = b != e && *b == '-';
  if (negative && !allow_negative) {
    *why = " (negative)";
    return false;
  }
  std::from_chars_result r;
  if (allow_negative) {
    r = std::from_chars(b, e, *sval);
  } else {
    r = std::from_chars(b, e, *uval);
  }
  if (r.ec == std::errc::result_out_of_range) {
    *why = " (too large for a 64-bit integer)";
    return false;
  }
  if (r.ec != std::errc() || r.ptr != e) {
    *why = " (not an integer)";
    return false;
  }
  return true;
}
}  // namespace

CLI::Validator UnsignedIn(uint64_t min, uint64_t max) {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& in) -> std::string {
        int64_t sv = 0;
        uint64_t v = 0;
        const char* why = "";
        if (!ParseWholeInteger(in, false, &sv, &v, &why) || v < min || v > max) {
          return "expected an integer from " + range + ", got '" + in + "'" + why;
        }
        return std::string();
      },
      "UINT " + range);
}

CLI::Validator SignedIn(int64_t min, int64_t max) {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& in) -> std::string {
        int64_t v = 0;
        uint64_t uv = 0;
        const char* why = "";
        if (!ParseWholeInteger(in, true, &v, &uv, &why) || v < min || v > max) {
          return "expected an integer from " + range + ", got '" + in + "'" + why;
        }
        return std::string();
      },
      "INT " + range);
}

CLI::Validator RealAtLeast(double min) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", min);
  const std::string bound = buf;
  return CLI::Validator(
      [min, bound](std::string& in) -> std::string {
        double v = 0;
        const char* b = in.data();
        const char* e = b + in.size();
        auto r = std::from_chars(b, e, v);
        if (r.ec != std::errc() || r.ptr != e || !std::isfinite(v) || v < min) {
          return "expected a number >= " + bound + ", got '" + in + "'";
        }
        return std::string();
      },
      "REAL >= " + bound);
}

std::string DescribeException(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return "out of memory (an allocation failed): lower --memory-budget or --batch (ingest), "
           "--cache-bytes or --threads (analyze), store sparse vertex IDs with --ids map "
           "(per-vertex arrays span the largest ID), or raise the process's memory limit "
           "(ulimit -v) or free memory on the machine";
  }
  if (const auto* se = dynamic_cast<const std::system_error*>(&e);
      se != nullptr && se->code() == std::errc::resource_unavailable_try_again) {
    return std::string("the system refused a thread or resource (EAGAIN: ") + se->what() +
           "): raise the limit on processes and threads (ulimit -u) or locked memory "
           "(ulimit -l), lower --threads, or run fewer programs at once";
  }
  return std::string("internal error: ") + e.what();
}

void SetCommandName(std::string name) { g_command = std::move(name); }

int Fail(int code, std::string_view message) {
  std::string line(message);
  // One line: embedded newlines (multi-line reports) are joined.
  for (size_t p; (p = line.find('\n')) != std::string::npos;) {
    if (p + 1 == line.size()) {
      line.erase(p);
    } else {
      line.replace(p, 1, "; ");
    }
  }
  std::fprintf(stderr, "%s: %s\n", g_command.c_str(), line.c_str());
  std::fflush(stderr);
  return code;
}

std::string Describe(const Status& s) {
  // Users see the message; the kind is kept where it tells them something.
  if (s.IsCorruption() || s.IsIOError() || s.IsNotSupported()) return s.ToString();
  return s.message();
}

int FailStatus(const Status& s, std::string_view context) {
  std::string m = context.empty() ? Describe(s) : std::string(context) + ": " + Describe(s);
  return Fail(kExitError, m);
}

const char* IdModeName(IdMode m) { return m == IdMode::kMap ? "map" : "dense"; }

Status ParseIdMode(std::string_view s, IdMode* m) {
  if (s == "dense") {
    *m = IdMode::kDense;
  } else if (s == "map") {
    *m = IdMode::kMap;
  } else {
    return Status::InvalidArgument("--ids: expected 'dense' or 'map', got '" + std::string(s) +
                                   "'");
  }
  return Status::OK();
}

std::string IdModePath(const std::string& dir) { return IdModeFilePath(dir); }

Status WriteIdMode(const std::string& dir, IdMode m) {
  return graphio::WriteIdModeFile(IdModePath(dir), m == IdMode::kMap);
}

Status ReadIdMode(const std::string& dir, IdMode* m, bool* present) {
  bool mapped = false;
  Status s = graphio::ReadIdModeFile(IdModePath(dir), &mapped, present);
  *m = mapped ? IdMode::kMap : IdMode::kDense;
  return s;
}

const char* KindName(GraphKind k) {
  switch (k) {
    case GraphKind::kDirected:
      return "directed";
    case GraphKind::kDirectedWithInEdges:
      return "directed+in-edges";
    case GraphKind::kUndirected:
      return "undirected";
  }
  return "unknown";
}

bool IsStore(const std::string& dir) { return FileExists(CurrentFilePath(dir)); }

Status ReadStoreInfo(const std::string& dir, StoreInfo* info) {
  if (!FileExists(dir)) {
    return Status::NotFound("no store at '" + dir + "': the directory does not exist");
  }
  if (!IsDirectory(dir)) return Status::NotFound("'" + dir + "' is not a directory");
  if (!IsStore(dir)) {
    return Status::NotFound("'" + dir + "' is not a StrataGraph store (no CURRENT file)");
  }
  Status s;
  info->dir = dir;
  // A process recovering the store may switch manifests between our reading CURRENT and the
  // manifest it names; a retry reads the new pair.
  for (int attempt = 0; attempt < 3; ++attempt) {
    info->state = StoreState();
    info->manifest_tail = RecordLogTail();
    s = ReadManifest(dir, &info->state, &info->manifest_tail, &info->manifest_path);
    if (s.ok() || s.IsCorruption()) break;
    usleep(20000);
  }
  if (!s.ok()) return s;
  return ReadIdMode(dir, &info->ids, &info->has_id_mode_file);
}

Status CheckIdMode(const StoreInfo& info) {
  return graphio::CheckIdModeAgainstDictionary(IdModePath(info.dir),
                                               IdDictionaryFilePath(info.dir),
                                               info.ids == IdMode::kMap, info.has_id_mode_file);
}

std::string OpenErrorMessage(const std::string& dir, const Status& s) {
  if (s.IsBusy()) {
    return "store '" + dir + "' is in use by another process (its LOCK is held); close it first";
  }
  return Describe(s);
}

// ---------------------------------------------------------------------------------------------

Store::~Store() {
  if (db_) db_->Close();
}

Status Store::Open(const std::string& dir, const OpenOptions& o, std::unique_ptr<Store>* out) {
  std::unique_ptr<Store> st(new Store());
  Status s = ReadStoreInfo(dir, &st->info_);
  if (!s.ok()) return s;
  s = CheckIdMode(st->info_);
  if (!s.ok()) return s;
  Options opt;
  opt.graph_kind = st->info_.state.kind;
  opt.weighted = st->info_.state.weighted;
  opt.create_if_missing = false;
  opt.wal = o.wal;
  opt.read_only = o.read_only;
  opt.repair = o.repair;
  // A command that reads the store does not start compactions of its own accord.
  opt.background_compaction = false;
  s = DB::Open(opt, dir, &st->db_);
  if (!s.ok()) return s;
  if (o.load_dictionary && st->info_.ids == IdMode::kMap) {
    graphio::IdDictionaryOptions dopt;
    dopt.create_if_missing = false;
    // A reader leaves IDDICT as it is (a read-only directory, a torn tail); a writer cuts a
    // torn tail only once the dictionary is known to cover the store, so a shortened IDDICT
    // is left as found.
    dopt.read_only = o.read_only;
    dopt.cut_torn_tail = false;
    s = graphio::IdDictionary::Open(IdDictionaryFilePath(dir), dopt, &st->dict_,
                                  &st->dict_info_);
    // An ingest creates IDDICT just after the store: one stopped in between leaves a store
    // without a dictionary and without vertices, which has nothing to map (the next ingest
    // creates the file). So a missing one is an empty one, held to the same check as any.
    const bool missing = s.IsNotFound();
    if (missing) {
      st->dict_ = std::make_unique<graphio::IdDictionary>();
      s = Status::OK();
    }
    if (!s.ok()) return s;
    s = graphio::CheckDictionaryOwner(IdDictionaryFilePath(dir), st->info_.state.store_id,
                                      st->dict_info_.owner);
    if (!s.ok()) return s;
    std::unique_ptr<Snapshot> snap = st->db_->GetSnapshot();
    s = CheckDictionaryCovers(dir, *snap, *st->dict_);
    if (!s.ok() && missing && s.IsCorruption()) {
      return Status::Corruption("store '" + dir +
                                "' maps its vertex IDs (IDMODE says ids=map) and holds "
                                "vertices, but has no IDDICT");
    }
    if (!s.ok()) {
      const std::string note = st->DictionaryNote();
      if (s.IsCorruption() && !note.empty()) return Status::Corruption(s.message() + "; " + note);
      return s;
    }
    if (!o.read_only) {
      s = st->dict_->CutTornTail(&st->dict_info_.bytes_cut);
      // A dictionary from before owner records: named from now on, once known to be this
      // store's (it covers the store).
      if (s.ok()) s = st->dict_->AddOwner(st->info_.state.store_id);
      if (!s.ok()) return s;
    }
  }
  *out = std::move(st);
  return Status::OK();
}

Status CheckDictionaryCovers(const std::string& dir, const Snapshot& snap,
                             const graphio::IdDictionary& dict) {
  const VertexId mapped = dict.size();
  const VertexId bound = snap.VertexIdBound();
  if (bound <= mapped) return snap.status();
  bool found = false;
  VertexId first = 0;
  Status s = snap.ScanVertices(mapped, bound, [&](VertexId v) {
    found = true;
    first = v;
    return false;
  });
  if (!s.ok()) return s;
  if (!found) return snap.status();
  const std::string covers =
      mapped == 0 ? "maps no IDs" : "maps internal IDs 0.." + std::to_string(mapped - 1);
  return Status::Corruption(IdDictionaryFilePath(dir) + " " + covers +
                            " but the store holds vertex " + std::to_string(first) +
                            " (internal ID): the dictionary is shorter than the store "
                            "(truncated, or from another store); restore it from a backup");
}

std::string Store::DictionaryNote() const {
  return dict_ ? graphio::TornTailNote(dict_->path(), dict_info_) : std::string();
}

Status Store::ToInternal(const Snapshot& snap, uint64_t ext, VertexId* v) const {
  VertexId id = ext;
  if (dict_ && !dict_->Find(ext, &id)) {
    return Status::NotFound("unknown vertex " + std::to_string(ext));
  }
  if (!snap.HasVertex(id)) {
    if (!snap.status().ok()) return snap.status();
    return Status::NotFound("unknown vertex " + std::to_string(ext));
  }
  *v = id;
  return Status::OK();
}

Status Store::SortedVertices(const Snapshot& snap,
                             std::vector<std::pair<uint64_t, VertexId>>* out) const {
  out->clear();
  Status s = snap.ScanVertices(0, snap.VertexIdBound(), [&](VertexId v) {
    out->push_back({ToExternal(v), v});
    return true;
  });
  if (!s.ok()) return s;
  if (dict_) std::sort(out->begin(), out->end());
  return snap.status();
}

Status Store::Close() {
  if (!db_) return Status::OK();
  Status s = db_->Close();
  db_.reset();
  return s;
}

// ---------------------------------------------------------------------------------------------

std::string Plural(uint64_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string HumanCount(double n) {
  char buf[32];
  const double a = std::fabs(n);
  if (a < 1e3) {
    std::snprintf(buf, sizeof(buf), "%.0f", n);
  } else if (a < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.1fK", n / 1e3);
  } else if (a < 1e9) {
    std::snprintf(buf, sizeof(buf), "%.2fM", n / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2fG", n / 1e9);
  }
  return buf;
}

std::string HumanSeconds(double s) {
  char buf[48];
  if (s < 10) {
    std::snprintf(buf, sizeof(buf), "%.3f s", s);
  } else if (s < 120) {
    std::snprintf(buf, sizeof(buf), "%.1f s", s);
  } else {
    int m = static_cast<int>(s / 60);
    std::snprintf(buf, sizeof(buf), "%d min %02d s", m, static_cast<int>(s - 60 * m));
  }
  return buf;
}

std::vector<std::pair<std::string, uint64_t>> FilesWithSuffix(const std::string& dir,
                                                              std::string_view suffix) {
  std::vector<std::pair<std::string, uint64_t>> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back({name, static_cast<uint64_t>(st.st_size)});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Status CountGraph(const Snapshot& snap, GraphCounts* out) {
  *out = GraphCounts();
  const VertexId bound = snap.VertexIdBound();
  Status s = snap.ScanVertices(0, bound, [&](VertexId) {
    ++out->vertices;
    return true;
  });
  uint64_t loops = 0;
  if (s.ok()) {
    s = snap.ScanAdjacency(
        0, bound, Direction::kOut, /*weights=*/false, [](VertexId) { return true; },
        [&](VertexId u, const NeighborChunk& c) {
          out->entries += c.size;
          for (size_t i = 0; i < c.size; ++i) loops += c.dst[i] == u;
          return ScanStep::kMore;
        });
  }
  if (s.ok()) s = snap.status();
  out->edges = snap.kind() == GraphKind::kUndirected ? (out->entries + loops) / 2 : out->entries;
  return s;
}

uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& [name, size] : FilesWithSuffix(dir, "")) total += size;
  return total;
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

// ---------------------------------------------------------------------------------------------

ProgressLine::ProgressLine(bool enabled, std::function<std::string()> render,
                           std::chrono::milliseconds period)
    : render_(std::move(render)), period_(period) {
  if (enabled) thread_ = std::thread([this] { Loop(); });
}

ProgressLine::~ProgressLine() { Stop(); }

void ProgressLine::Stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    // Erase the line so what follows starts on a clean one.
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(last_width_), "");
    std::fflush(stderr);
  }
}

void ProgressLine::Loop() {
  std::unique_lock<std::mutex> g(mu_);
  while (!stop_) {
    cv_.wait_for(g, period_, [&] { return stop_; });
    if (stop_) break;
    g.unlock();
    std::string line = render_();
    g.lock();
    if (stop_) break;
    // Pad over the remains of a longer previous line.
    size_t width = line.size();
    if (width < last_width_) line.append(last_width_ - width, ' ');
    last_width_ = width;
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
  }
}

}  // namespace strata::cli
