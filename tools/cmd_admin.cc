// strata compact, strata inspect, strata verify: the store's maintenance commands.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/filename.h"
#include "db/inspect.h"
#include "db/kept_files.h"
#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "graphio/size_parse.h"

namespace strata::cli {

namespace {

// ---------------------------------------------------------------------------------------------
// A minimal JSON writer: objects and arrays with comma bookkeeping, escaped strings.
class Json {
 public:
  Json& Open(const char* key, char bracket) {
    Key(key);
    out_ += bracket;
    first_ = true;
    return *this;
  }
  Json& Close(char bracket) {
    out_ += bracket;
    first_ = false;
    return *this;
  }
  Json& Str(const char* key, const std::string& v) {
    Key(key);
    Quote(v);
    return *this;
  }
  Json& Num(const char* key, uint64_t v) {
    Key(key);
    out_ += std::to_string(v);
    return *this;
  }
  Json& Bool(const char* key, bool v) {
    Key(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  void Key(const char* key) {
    if (!first_) out_ += ", ";
    first_ = false;
    if (key != nullptr) {
      Quote(key);
      out_ += ": ";
    }
  }
  void Quote(const std::string& s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }
  std::string out_;
  bool first_ = true;
};

std::string Basename(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string FormatTimeMicros(uint64_t us) {
  if (us == 0) return "-";
  std::time_t t = static_cast<std::time_t>(us / 1000000);
  std::tm tm;
  localtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// compact

struct CompactArgs {
  std::string db;
  bool full = false;
  std::string progress = "auto";
};

int RunCompact(const CompactArgs& a) {
  Stopwatch clock;
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::OpenOptions(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  DB* db = store->db();
  // CompactAll runs on its own thread so the progress line can follow it.
  std::future<Status> done = std::async(std::launch::async, [db] { return db->CompactAll(); });
  {
    const bool show = a.progress == "always" || (a.progress == "auto" && StderrIsTerminal());
    ProgressLine progress(
        show,
        [&] { return "compact  " + HumanSeconds(clock.Seconds()) + " elapsed"; },
        std::chrono::milliseconds(500));
    done.wait();
  }
  s = done.get();
  if (!s.ok()) {
    Status c = store->Close();
    std::string msg = Describe(s);
    if (s.IsNotSupported()) msg += " (the store was flushed; nothing else changed)";
    if (!c.ok()) msg += "; closing failed too: " + Describe(c);
    return Fail(kExitError, msg);
  }
  s = store->Close();
  if (!s.ok()) return FailStatus(s, "close");
  StoreInfo info;
  s = ReadStoreInfo(a.db, &info);
  if (!s.ok()) return FailStatus(s);
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> levels;  // level -> files, bytes
  for (const auto& [num, f] : info.state.files) {
    levels[f.level].first++;
    levels[f.level].second += f.size_bytes;
  }
  std::string layout;
  for (const auto& [l, fb] : levels) {
    layout += " L" + std::to_string(l) + ": " + Plural(fb.first, "file") + ", " +
              graphio::FormatSize(fb.second) + ";";
  }
  std::fprintf(stderr, "compacted in %s;%s\n", HumanSeconds(clock.Seconds()).c_str(),
               layout.c_str());
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------
// inspect

struct InspectArgs {
  std::string db;
  std::string segment;
  bool json = false;
};

int InspectStore(const InspectArgs& a) {
  StoreInfo info;
  Status s = ReadStoreInfo(a.db, &info);
  if (!s.ok()) return FailStatus(s);
  const StoreState& st = info.state;
  const StoreFiles files = ListStoreFiles(a.db, info.manifest_path);
  const uint64_t manifest_bytes = files.manifest_bytes;
  std::map<uint32_t, std::vector<const FileMeta*>> levels;
  for (const auto& [num, f] : st.files) levels[f.level].push_back(&f);
  const auto& wals = files.wals;
  // Logs the manifest lists that are not here: their batches are lost (Open refuses the store
  // until `strata repair` goes on without them).
  std::vector<std::string> missing_wals;
  for (uint64_t n : st.logs) {
    const std::string name = WalFileName(n);
    if (std::none_of(wals.begin(), wals.end(), [&](const auto& w) { return w.first == name; })) {
      missing_wals.push_back(name);
    }
  }
  const uint64_t dict_bytes = files.id_dictionary_bytes;
  const bool has_dict = files.has_id_dictionary;
  // IDMODE gone or dense beside an IDDICT: every other command refuses the store; say why.
  const Status id_mode = CheckIdMode(info);
  // A kept file (VIEWS, SUBSCRIPTIONS, IDMODE, IDDICT) missing, damaged or older than the
  // manifest says: likewise.
  const std::vector<std::string> kept_problems = KeptFileProblems(a.db, st);
  const uint64_t disk = DirectoryBytes(a.db);
  // A store open elsewhere may delete segments meanwhile: then the index size is unavailable.
  VertexIndexSize vix;
  const Status vix_status = MeasureVertexIndex(a.db, st, &vix);

  if (a.json) {
    Json j;
    j.Open(nullptr, '{');
    j.Str("store", a.db).Num("format_version", st.format_version);
    j.Str("kind", KindName(st.kind)).Bool("weighted", st.weighted);
    j.Str("ids", IdModeName(info.ids));
    if (!id_mode.ok()) j.Str("ids_problem", id_mode.ToString());
    j.Open("manifest", '{')
        .Str("file", Basename(info.manifest_path))
        .Num("bytes", manifest_bytes)
        .Num("torn_tail_bytes", info.manifest_tail.cut_bytes)
        .Num("next_file_number", st.next_file_number)
        .Num("last_flushed_ts", st.last_flushed_ts)
        .Num("next_vertex_id", st.next_vertex_id)
        .Close('}');
    j.Open("levels", '[');
    for (const auto& [level, files] : levels) {
      uint64_t bytes = 0, edges = 0;
      for (const FileMeta* f : files) {
        bytes += f->size_bytes;
        edges += f->num_edges;
      }
      j.Open(nullptr, '{').Num("level", level).Num("files", files.size()).Num("bytes", bytes);
      j.Num("edge_entries", edges).Open("segments", '[');
      for (const FileMeta* f : files) {
        j.Open(nullptr, '{')
            .Str("file", SegmentFileName(f->number))
            .Num("number", f->number)
            .Str("adjacency", f->tag == 0 ? "out" : "in")
            .Num("bytes", f->size_bytes)
            .Num("vertices", f->num_vertices)
            .Num("edge_entries", f->num_edges)
            .Num("min_src", f->min_src)
            .Num("max_src", f->max_src)
            .Num("max_ts", f->max_ts)
            .Close('}');
      }
      j.Close(']').Close('}');
    }
    j.Close(']');
    j.Open("wal", '[');
    for (const auto& [n, sz] : wals) {
      j.Open(nullptr, '{').Str("file", n).Num("bytes", sz);
      j.Bool("listed", st.logs.count(WalNumberOfPath(n)) != 0).Close('}');
    }
    j.Close(']');
    j.Open("wal_missing", '[');
    for (const std::string& n : missing_wals) j.Str(nullptr, n);
    j.Close(']');
    if (has_dict) {
      j.Open("dictionary", '{').Str("file", kIdDictionaryFile).Num("bytes", dict_bytes).Close('}');
    }
    if (files.has_views) {
      j.Open("views", '{').Str("file", kViewsFile).Num("bytes", files.views_bytes).Close('}');
    }
    j.Open("kept_file_problems", '[');
    for (const std::string& p : kept_problems) j.Str(nullptr, p);
    j.Close(']');
    j.Open("vertex_index", '{')
        .Bool("ok", vix_status.ok())
        .Num("vertices", vix.vertices)
        .Num("bytes", vix.bytes)
        .Num("range_pages", vix.range_pages)
        .Num("overflow_pages", vix.overflow_pages)
        .Close('}');
    j.Num("disk_bytes", disk);
    j.Close('}');
    std::printf("%s\n", j.str().c_str());
    return kExitOk;
  }

  std::printf("store %s: format %u, %s, %s, ids %s; %s on disk\n", a.db.c_str(),
              st.format_version, KindName(st.kind), st.weighted ? "weighted" : "unweighted",
              IdModeName(info.ids), graphio::FormatSize(disk).c_str());
  if (!id_mode.ok()) std::printf("ids: %s\n", id_mode.ToString().c_str());
  std::printf("manifest %s (%s%s): last flushed ts %" PRIu64 ", next file %" PRIu64
              ", next vertex ID %" PRIu64 "\n",
              Basename(info.manifest_path).c_str(), graphio::FormatSize(manifest_bytes).c_str(),
              info.manifest_tail.cut_bytes ? ", torn tail" : "", st.last_flushed_ts,
              st.next_file_number, st.next_vertex_id);
  if (levels.empty()) std::printf("no segments\n");
  for (const auto& [level, files] : levels) {
    uint64_t bytes = 0, edges = 0, verts = 0;
    for (const FileMeta* f : files) {
      bytes += f->size_bytes;
      edges += f->num_edges;
      verts += f->num_vertices;
    }
    std::printf("level %u: %zu segment%s, %s, %" PRIu64 " vertex entries, %" PRIu64
                " edge entries\n",
                level, files.size(), files.size() == 1 ? "" : "s",
                graphio::FormatSize(bytes).c_str(), verts, edges);
    std::printf("  %-12s %-4s %10s %10s %12s %25s %12s\n", "file", "adj", "size", "vertices",
                "edges", "src range", "max ts");
    for (const FileMeta* f : files) {
      const std::string range =
          f->num_vertices ? std::to_string(f->min_src) + ".." + std::to_string(f->max_src) : "-";
      std::printf("  %-12s %-4s %10s %10" PRIu64 " %12" PRIu64 " %25s %12" PRIu64 "\n",
                  SegmentFileName(f->number).c_str(), f->tag == 0 ? "out" : "in",
                  graphio::FormatSize(f->size_bytes).c_str(), f->num_vertices, f->num_edges,
                  range.c_str(), f->max_ts);
    }
  }
  if (wals.empty()) {
    std::printf("WAL: none\n");
  } else {
    std::string list;
    for (const auto& [n, sz] : wals) list += " " + n + " (" + graphio::FormatSize(sz) + ")";
    std::printf("WAL:%s\n", list.c_str());
  }
  if (!missing_wals.empty()) {
    std::string list;
    for (const std::string& n : missing_wals) list += " " + n;
    std::printf("WAL listed in the manifest but missing (its batches are lost; strata repair "
                "goes on without them):%s\n", list.c_str());
  }
  if (has_dict) {
    std::printf("ID dictionary: %s (%s)\n", kIdDictionaryFile,
                graphio::FormatSize(dict_bytes).c_str());
  }
  if (files.has_views) {
    std::printf("views: %s (%s; strata view --db DIR list)\n", kViewsFile,
                graphio::FormatSize(files.views_bytes).c_str());
  }
  for (const std::string& p : kept_problems) {
    std::printf("problem: %s (the store does not open)\n", p.c_str());
  }
  if (!vix_status.ok()) {
    std::printf("vertex index: unavailable (%s)\n", vix_status.ToString().c_str());
    return kExitOk;
  }
  std::printf("vertex index (in memory while open): %" PRIu64 " vertex entries, %s, %.1f bytes per"
              " vertex, %" PRIu64 " range pages, %" PRIu64 " overflow pages\n",
              vix.vertices, graphio::FormatSize(vix.bytes).c_str(), vix.PerVertex(),
              vix.range_pages, vix.overflow_pages);
  return kExitOk;
}

int InspectSegment(const InspectArgs& a) {
  SegmentInspection seg;
  Status s = InspectSegmentFile(a.segment, &seg);
  if (!s.ok()) return FailStatus(s, a.segment);
  const SegmentHeader& h = seg.header;
  const Status& v = seg.verify;
  const double verify_secs = seg.verify_seconds;
  const uint64_t edge_blocks = seg.edge_blocks;
  const uint64_t weight_blocks = seg.weight_blocks;
  const uint64_t vertex_blocks = seg.vertex_blocks;
  const uint64_t bloom_parts = seg.bloom_partitions;
  if (a.json) {
    Json j;
    j.Open(nullptr, '{').Str("file", a.segment).Num("file_bytes", seg.file_bytes);
    j.Open("header", '{')
        .Num("format_version", h.format_version)
        .Num("flags", h.flags)
        .Bool("weighted", h.weighted())
        .Bool("timestamps", h.has_timestamps())
        .Num("level", h.level)
        .Num("block_size", h.block_size)
        .Num("file_number", h.file_number)
        .Num("timestamp", h.timestamp)
        .Num("creation_time_us", h.creation_time_us)
        .Num("num_vertices", h.num_vertices)
        .Num("num_edges", h.num_edges)
        .Num("num_tombstones", h.num_tombstones)
        .Num("min_src", h.min_src)
        .Num("max_src", h.max_src)
        .Num("min_edge_ts", h.min_edge_ts)
        .Num("max_edge_ts", h.max_edge_ts)
        .Num("edge_stream_bytes", h.edge_stream_bytes)
        .Num("blocks_per_extent", h.blocks_per_extent)
        .Num("vertex_group", h.vertex_group)
        .Num("bloom_bits_per_key", h.bloom_bits_per_key)
        .Num("bloom_probes", h.bloom_probes)
        .Num("bloom_keys_per_partition", h.bloom_keys_per_partition)
        .Num("user_tag", h.user_tag)
        .Close('}');
    j.Open("blocks", '{')
        .Num("edge", edge_blocks)
        .Num("weight", weight_blocks)
        .Num("vertex", vertex_blocks)
        .Num("bloom_partitions", bloom_parts)
        .Close('}');
    j.Num("reader_memory_bytes", seg.reader_memory_bytes);
    j.Open("verify", '{').Bool("ok", v.ok()).Str("status", v.ToString()).Close('}');
    j.Close('}');
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("segment %s: %s, format %u, written at level %u, file number %" PRIu64
                ", %s adjacency\n",
                a.segment.c_str(), graphio::FormatSize(seg.file_bytes).c_str(), h.format_version,
                h.level, h.file_number, h.user_tag == 0 ? "out" : h.user_tag == 1 ? "in" : "?");
    std::printf("  flags           %s%s\n", h.weighted() ? "weighted" : "unweighted",
                h.has_timestamps() ? ", per-edge timestamps" : "");
    std::printf("  timestamp       %" PRIu64 " (edge ts %" PRIu64 "..%" PRIu64 ")\n", h.timestamp,
                h.min_edge_ts, h.max_edge_ts);
    std::printf("  created         %s\n", FormatTimeMicros(h.creation_time_us).c_str());
    std::printf("  vertices        %" PRIu64 " (src %" PRIu64 "..%" PRIu64 ")\n", h.num_vertices,
                h.min_src, h.max_src);
    std::printf("  edges           %" PRIu64 " (%" PRIu64 " tombstones)\n", h.num_edges,
                h.num_tombstones);
    std::printf("  block size      %u (%u per extent)\n", h.block_size, h.blocks_per_extent);
    std::printf("  blocks          %" PRIu64 " edge (%s stream), %" PRIu64 " weight, %" PRIu64
                " vertex (%u entries each), %" PRIu64 " bloom partitions\n",
                edge_blocks, graphio::FormatSize(h.edge_stream_bytes).c_str(), weight_blocks,
                vertex_blocks, h.vertex_group, bloom_parts);
    std::printf("  bloom           %u bits/key, %u probes, %u keys per partition\n",
                h.bloom_bits_per_key, h.bloom_probes, h.bloom_keys_per_partition);
    std::printf("  reader memory   %s\n", graphio::FormatSize(seg.reader_memory_bytes).c_str());
    std::printf("  verify          %s (%s)\n", v.ok() ? "OK: every block checksum and invariant"
                                                     : v.ToString().c_str(),
                HumanSeconds(verify_secs).c_str());
  }
  std::fflush(stdout);
  if (!v.ok()) return Fail(kExitError, a.segment + ": " + v.ToString());
  return kExitOk;
}

int RunInspect(const InspectArgs& a) {
  if (a.db.empty() == a.segment.empty()) {
    return Fail(kExitUsage, "give exactly one of --db DIR and --segment FILE");
  }
  return a.segment.empty() ? InspectStore(a) : InspectSegment(a);
}

// ---------------------------------------------------------------------------------------------
// verify

struct VerifyArgs {
  std::string db;
};

int RunRepair(const VerifyArgs& a) {
  std::unique_ptr<Store> store;
  Store::OpenOptions o;
  o.repair = true;
  o.load_dictionary = false;
  Status s = Store::Open(a.db, o, &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  s = store->Close();  // flushes what was replayed: the repaired logs go
  if (!s.ok()) return Fail(kExitError, Describe(s));
  std::printf("OK: '%s' opened with repair (LOG names anything dropped)\n", a.db.c_str());
  return kExitOk;
}

int RunVerify(const VerifyArgs& a) {
  Stopwatch clock;
  std::unique_ptr<Store> store;
  // Opening checks the manifest and every segment's metadata, and (map mode) every record of
  // the ID dictionary.
  Status s = Store::Open(a.db, Store::ReadOnlyOpen(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  std::string report;
  s = store->db()->Verify(&report);
  std::vector<std::string> problems;
  for (size_t b = 0, e; b < report.size(); b = e + 1) {
    e = report.find('\n', b);
    if (e == std::string::npos) e = report.size();
    if (e > b) problems.push_back(report.substr(b, e - b));
  }
  if (!s.ok() && problems.empty()) problems.push_back(s.ToString());
  const StoreFiles files = ListStoreFiles(a.db, store->info().manifest_path);
  const uint64_t segments = store->info().state.files.size();
  const uint64_t wals = files.wals.size();
  const uint64_t ids = store->dictionary() ? store->dictionary()->size() : 0;
  // A torn IDDICT tail is what a crash during an ingest leaves (mappings no stored batch uses),
  // not damage: said, not counted as a problem; verify leaves it for a writing command to cut.
  const std::string note = store->DictionaryNote();
  Status c = store->Close();
  if (!c.ok()) problems.push_back("close: " + c.ToString());
  if (!note.empty()) std::printf("note: %s\n", note.c_str());
  for (const std::string& p : problems) std::printf("%s\n", p.c_str());
  std::fflush(stdout);
  if (!problems.empty()) {
    return Fail(kExitError, std::to_string(problems.size()) + " problem(s) in '" + a.db +
                                "'; the first: " + problems[0]);
  }
  std::printf("OK: manifest, %s, %s%s verified in %s\n", Plural(segments, "segment").c_str(),
              Plural(wals, "log").c_str(),
              ids ? (", dictionary (" + std::to_string(ids) + " IDs)").c_str() : "",
              HumanSeconds(clock.Seconds()).c_str());
  return kExitOk;
}

}  // namespace

void RegisterAdmin(CLI::App* app, CommandList* commands) {
  {
    auto a = std::make_shared<CompactArgs>();
    CLI::App* c = app->add_subcommand(
        "compact", "Offline compaction: merge every level into the bottom one");
    c->add_option("--db", a->db, "store directory")->required();
    c->add_flag("--full", a->full, "merge everything into the bottom level (the only mode today)");
    c->add_option("--progress", a->progress, "auto (on a terminal), always or never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    c->footer(HelpFooter(
        "Flushes the in-memory tier, then merges every level into the bottom level "
        "(DB::CompactAll), dropping tombstones and shadowed versions. Takes the store's lock. "
        "If the engine reports NotSupported, the message is printed and the exit code is 1."));
    commands->push_back({c, [a] { return RunCompact(*a); }});
  }
  {
    auto a = std::make_shared<InspectArgs>();
    CLI::App* c = app->add_subcommand(
        "inspect", "Describe a store (levels, segments, WAL) or one segment file");
    CLI::Option* d = c->add_option("--db", a->db, "store directory");
    CLI::Option* seg = c->add_option("--segment", a->segment, "one .seg file");
    d->excludes(seg);
    c->add_flag("--json", a->json, "one JSON object on stdout");
    c->footer(HelpFooter(
        "--db reads the manifest without opening the store (works while another process has it "
        "open): files per level with sizes, vertex ranges (internal IDs), edge entries, newest "
        "timestamp, last flushed timestamp, WAL files and sizes. --segment opens one .seg file: "
        "header fields, block counts, and a full Verify() of every block checksum (exit 1 if "
        "it fails)."));
    commands->push_back({c, [a] { return RunInspect(*a); }});
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    CLI::App* c = app->add_subcommand(
        "verify", "Check every checksum and invariant of a store; exit 0 only when clean");
    c->add_option("--db", a->db, "store directory")->required();
    c->footer(HelpFooter(
        "Checks the manifest, every block of every segment, every write-ahead log and the ID "
        "dictionary (DB::Verify). Problems are listed on stdout, one per line; the exit code is "
        "0 only when there are none."));
    commands->push_back({c, [a] { return RunVerify(*a); }});
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    CLI::App* c = app->add_subcommand(
        "repair", "Open a store that refuses to open because a log's last record is damaged");
    c->add_option("--db", a->db, "store directory")->required();
    c->footer(HelpFooter(
        "A write-ahead log whose last record was written whole but fails its checksum is "
        "damage, not a crash: open, verify and the other commands refuse the store, naming the "
        "log and offset. repair drops that record (an acknowledged batch is lost; LOG names "
        "it), replays the rest and flushes it. Other damage is not repaired."));
    commands->push_back({c, [a] { return RunRepair(*a); }});
  }
}

}  // namespace strata::cli
