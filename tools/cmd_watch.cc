// strata watch: prints a store's committed changes as JSON lines, from another process than
// the one writing it (db/log_tailer.h: the write-ahead logs are read, the store is not opened).
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <sys/stat.h>

#include "db/change_feed.h"
#include "db/inspect.h"
#include "db/log_tailer.h"
#include "tools/cli_commands.h"
#include "tools/cli_common.h"

namespace strata::cli {

namespace {

struct WatchArgs {
  std::string db;
  Timestamp from = kMaxTimestamp;
  std::string view;
  uint64_t count = 0;       // exit after this many changes (0: never)
  double idle_exit = 0;     // exit after this many seconds without a change (0: never)
  uint32_t poll_ms = 50;
};

void AppendReal(std::string* out, double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  *out += buf;
}

// A view definition as a JSON object: {"kind":...} and the parts it sets.
std::string DefinitionJson(const ViewDefinition& d) {
  static const char* kKinds[] = {"filter", "union", "intersection", "difference"};
  std::string s = "{\"kind\":\"";
  s += kKinds[static_cast<int>(d.kind)];
  s += "\"";
  if (d.kind == ViewDefinition::Kind::kFilter) {
    if (d.has_vertices) {
      s += ",\"vertices\":[";
      for (size_t i = 0; i < d.vertices.size(); ++i) {
        if (i) s += ",";
        s += std::to_string(d.vertices[i]);
      }
      s += "]";
    }
    if (d.edge_mode != ViewDefinition::EdgeMode::kNone) {
      s += d.edge_mode == ViewDefinition::EdgeMode::kInclude ? ",\"include_edges\":["
                                                             : ",\"exclude_edges\":[";
      for (size_t i = 0; i < d.edges.size(); ++i) {
        if (i) s += ",";
        s += "[" + std::to_string(d.edges[i].first) + "," + std::to_string(d.edges[i].second) + "]";
      }
      s += "]";
    }
    if (d.has_weight_range) {
      s += ",\"weight_min\":";
      AppendReal(&s, d.weight_min);
      s += ",\"weight_max\":";
      AppendReal(&s, d.weight_max);
    }
  } else {
    s += ",\"operands\":[";
    for (size_t i = 0; i < d.operands.size(); ++i) {
      if (i) s += ",";
      s += "\"" + d.operands[i] + "\"";  // names are [A-Za-z0-9_.-]: nothing to escape
    }
    s += "]";
  }
  return s + "}";
}

void PrintViewRecord(const ChangeRecord& r) {
  std::string s = "{\"ts\":" + std::to_string(r.ts) + ",\"kind\":\"" + ChangeKindName(r.kind) +
                  "\",\"view\":\"" + r.view->name + "\"";
  if (r.kind == ChangeKind::kViewDefined) {
    s += ",\"definition\":" + DefinitionJson(r.view->definition);
  }
  s += "}\n";
  std::fputs(s.c_str(), stdout);
}

void PrintRecord(const ChangeRecord& r) {
  if (IsViewChange(r.kind)) {
    PrintViewRecord(r);
    return;
  }
  char buf[256];
  int n = std::snprintf(buf, sizeof(buf), "{\"ts\":%" PRIu64 ",\"kind\":\"%s\",\"u\":%" PRIu64,
                        r.ts, ChangeKindName(r.kind), r.u);
  if (r.kind != ChangeKind::kAddVertex && r.kind != ChangeKind::kDeleteVertex) {
    n += std::snprintf(buf + n, sizeof(buf) - n, ",\"v\":%" PRIu64, r.v);
  }
  if (r.kind == ChangeKind::kPutEdge) {
    n += std::snprintf(buf + n, sizeof(buf) - n, ",\"new_weight\":%.17g", r.new_weight);
  }
  std::snprintf(buf + n, sizeof(buf) - n, "}\n");
  std::fputs(buf, stdout);
}

// --view: keeps the view's current definition (re-read when VIEWS changes) compiled for
// the vertex IDs seen so far, and says whether a change belongs to the view. An edge change
// belongs when both endpoints are in the view's vertex set and the edge passes its predicate;
// a delete carries no weight, so a weight range passes it (the deleted edge may have been in
// the view); a vertex change belongs when the vertex is in the set.
class WatchViewFilter {
 public:
  WatchViewFilter(std::string dir, std::string name) : dir_(std::move(dir)), name_(std::move(name)) {}

  Status Init() {
    StoreState state;
    RecordLogTail tail;
    std::string manifest;
    Status s = ReadManifest(dir_, &state, &tail, &manifest);
    if (!s.ok()) return s;
    shape_.kind = state.kind;
    shape_.bound = std::max<VertexId>(state.next_vertex_id, 1024);
    store_id_ = state.store_id;
    return Compile();
  }

  // Re-reads VIEWS when it changed since the last look.
  Status Refresh() {
    if (Stamp() == stamp_) return Status::OK();
    return Compile();
  }

  Status Keep(const ChangeRecord& r, bool* keep) {
    if (IsViewChange(r.kind)) {
      // The view's own definition changes pass; any view change (an operand's too) makes the
      // filter read VIEWS again.
      *keep = r.view->name == name_;
      return Compile();
    }
    if (view_ == nullptr) {  // dropped: only its own records pass until it is defined again
      *keep = false;
      return Status::OK();
    }
    const VertexId top = std::max(r.u, r.v);
    if (top >= shape_.bound) {
      shape_.bound = std::max(top + 1, shape_.bound * 2);
      Status s = Compile();
      if (!s.ok()) return s;
    }
    if (r.kind == ChangeKind::kAddVertex || r.kind == ChangeKind::kDeleteVertex) {
      *keep = view_->Contains(r.u);
      return Status::OK();
    }
    *keep = view_->Contains(r.u) && view_->Contains(r.v);
    if (*keep && view_->has_predicate()) {
      const bool has_weight = r.kind != ChangeKind::kDeleteEdgeOp;
      *keep = view_->Pass(r.u, r.v, has_weight ? r.new_weight : std::nan(""));
    }
    return Status::OK();
  }

 private:
  std::pair<int64_t, int64_t> Stamp() const {
    struct stat st;
    if (::stat(ViewsFilePath(dir_).c_str(), &st) != 0) return {0, 0};
    return {static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
            static_cast<int64_t>(st.st_ino) ^ st.st_size};
  }
  Status Compile() {
    stamp_ = Stamp();
    std::shared_ptr<const CompiledView> v;
    Status s = CompileStoredView(dir_, store_id_, name_, shape_, &v);
    if (s.IsNotFound() && initialized_) {  // dropped since watch started
      view_.reset();
      return Status::OK();
    }
    if (!s.ok()) return s;
    initialized_ = true;
    view_ = std::move(v);
    return Status::OK();
  }

  const std::string dir_;
  const std::string name_;
  ViewShape shape_;
  uint64_t store_id_ = 0;
  std::pair<int64_t, int64_t> stamp_{0, 0};
  std::shared_ptr<const CompiledView> view_;  // null once the view was dropped
  bool initialized_ = false;                   // compiled once (at Init)
};

int RunWatch(const WatchArgs& a) {
  std::unique_ptr<LogTailer> tailer;
  auto start = std::chrono::steady_clock::now();
  auto last_change = start;
  // The store may still be being created by the writer: wait for its CURRENT.
  for (;;) {
    Status s = LogTailer::Open(a.db, a.from, &tailer);
    if (s.ok()) break;
    if (!s.IsNotFound()) return FailStatus(s, "watch");
    if (a.idle_exit > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > a.idle_exit) {
      return FailStatus(s, "watch");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(a.poll_ms));
  }
  std::unique_ptr<WatchViewFilter> filter;
  if (!a.view.empty()) {
    filter = std::make_unique<WatchViewFilter>(a.db, a.view);
    Status s = filter->Init();
    if (!s.ok()) return FailStatus(s, "watch --view " + a.view);
  }
  uint64_t printed = 0;
  for (;;) {
    bool any = false;
    Status fs;
    if (filter) fs = filter->Refresh();
    Status s = tailer->Poll([&](Timestamp, const std::vector<ChangeRecord>& recs) {
      for (const ChangeRecord& r : recs) {
        if (a.count != 0 && printed == a.count) return;
        if (filter && fs.ok()) {
          bool keep = false;
          fs = filter->Keep(r, &keep);
          if (!keep) continue;
        }
        PrintRecord(r);
        ++printed;
      }
      any = true;
    });
    if (!fs.ok()) return FailStatus(fs, "watch --view " + a.view);
    if (!s.ok()) return FailStatus(s, "watch");
    for (const std::string& g : tailer->TakeGaps()) {
      std::fprintf(stderr, "strata watch: gap: %s\n", g.c_str());
    }
    std::fflush(stdout);
    if (a.count != 0 && printed >= a.count) return kExitOk;
    const auto now = std::chrono::steady_clock::now();
    if (any) last_change = now;
    if (a.idle_exit > 0 && std::chrono::duration<double>(now - last_change).count() > a.idle_exit) {
      return kExitOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(a.poll_ms));
  }
}

}  // namespace

void RegisterWatch(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<WatchArgs>();
  CLI::App* c = app->add_subcommand(
      "watch", "Print a store's committed changes as JSON lines, while another process writes it");
  c->add_option("--db", a->db, "store directory")->required();
  c->add_option("--from", a->from,
                "print commits with a timestamp after TS (default: from now on); older commits "
                "come from the write-ahead logs still on disk")
      ->check(UnsignedIn(0, kMaxTimestamp - 1));
  c->add_option("--view", a->view,
                "only the changes inside view NAME as currently defined (re-read when it changes)");
  c->add_option("--count", a->count, "exit after printing N changes")->check(UnsignedIn(1, ~uint64_t{0}));
  c->add_option("--idle-exit", a->idle_exit, "exit after SECONDS without a new change")
      ->check(RealAtLeast(0));
  c->add_option("--poll-ms", a->poll_ms, "how often to look for new log records")
      ->check(UnsignedIn(1, 60000));
  c->footer(HelpFooter(
      "Reads the store's write-ahead logs read-only and takes no lock, so it runs beside the "
      "process that has the store open (docs/change-feed.md). One line per change, in commit "
      "order: {\"ts\":T,\"kind\":K,\"u\":U[,\"v\":V][,\"new_weight\":W]}, K one of put_edge "
      "(insert or overwrite), delete_edge_op (the edge may have been absent), add_vertex, "
      "delete_vertex; vertex IDs are the store's internal IDs. A view definition change is "
      "{\"ts\":T,\"kind\":\"view_defined\",\"view\":NAME,\"definition\":{...}} or "
      "{\"ts\":T,\"kind\":\"view_dropped\",\"view\":NAME} (with --view, those of NAME). A record still being written is "
      "printed once whole. Commits whose log was flushed and deleted before watch read it are "
      "reported on stderr as a gap (\"strata watch: gap: ...\"). Needs the store's WAL: with "
      "--wal off nothing is logged and nothing is printed."));
  commands->push_back({c, [a] { return RunWatch(*a); }});
}

}  // namespace strata::cli
