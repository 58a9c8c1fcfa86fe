// strata-bench interleave: BFS and SSSP over a memgraph snapshot (Options::in_memory) with
// their interleaving and prefetch parameters (issue 30; docs/benchmarks.md, "Issue 30: BFS/SSSP
// interleaving over memgraph snapshots").
//
//   strata-bench interleave [--scale S] [--edge-factor F]
//                           [--kernels bfs,sssp,pagerank,wcc,khop,frontier,tc,lcc]
//                           [--settings g1p0,g1,g8,g16,g32,g1r0,g1r8] [--rounds R] [--threads N]
//                           [--directed] [--unweighted] [--pr-iterations N] [--pr-owned]
//                           [--sources K]
//                           [--stats] [--turn FILE --me K --of N]
//                           [--db DIR [--cold [--cold-method drop|fadvise]]]
//
// Loads a Kronecker graph (Graph500 initiator, seed 1, weights in (0, 1]) into an in-memory
// store (undirected unless --directed: then kDirectedWithInEdges; --unweighted: no weights, as
// the quick suite's main graph; --pr-owned: each PageRank run is handed a snapshot of its own,
// PageRank(unique_ptr), taken before its clock starts — the path on which the layout takes its
// blocks in ascending order and lets the snapshot's prefix go, as the mixed workload's reader
// does), then runs every setting once
// per round, in an order rotated by one each round, so the settings of a round are seconds
// apart and their ratio cancels most of what other processes do to the machine. A setting is
// gN (interleave = N) optionally followed by pD (prefetch distance D; absent: the kernel's
// default) and rW (the range walks' prefetch distance, SetWalkPrefetch(W), for every kernel;
// absent: kDefaultWalkPrefetch) and fF (the frontier reads' I/O group, FrontierReadConfig::group
// = F, db/tier_reader.h; optionally kK: items of K KiB, and a: through the descriptor with
// readahead, FrontierReadConfig::random_access false; absent: the defaults) and hH (the streamed
// scans' hints, H windows ahead, SetStreamHintWindows(H); absent: kDefaultStreamHintWindows) and
// cC (PageRank's list cache, PageRankParams::cache_bytes = C MiB; absent: the default) and u
// or z (PageRankParams::packing kNever or kAlways; absent: kAuto) and d or n (PageRankParams::
// group_by_degree true or false; absent: the kernel's default, true). Each
// run's result is checked equal to the first setting's (BFS depths exactly, SSSP distances
// exactly: every setting relaxes to the same fixed point; PageRank's ranks and WCC's labels
// exactly — to within 1e-5 relatively between settings that differ in d, whose sums run in
// other orders — run with default parameters but the cache, and --pr-iterations N (default: the
// kernel's 20), to check the shared read path). Prints per
// setting the wall and CPU seconds (median, min, max) and the median per-round ratio to the
// first setting. tc, lcc: TriangleCount and Lcc with TriangleParams from the setting (the
// count, the coefficients exactly, checked equal). khop: analytics::KHop, k = 2, from the source
// (the set checked equal). frontier: the
// out-lists of every S-th vertex (--frontier-stride S, default 1000: lists in different blocks,
// random reads; 100: nearly every block of the edge stream), sorted, read with
// analytics::ForEachFrontierChunk as a top-down step does (BFS's default fetch batch), the sum
// of the neighbor IDs checked equal. --turn: N processes (e.g. builds of two commits) that loaded their graphs take turns
// by rounds through FILE (it holds whose turn it is: process K runs a round of every kernel when
// it reads K, then writes K + 1 mod N), so their runs alternate within the same minutes.
//
// --db DIR: instead of loading a graph, open the persisted store DIR read-only (made with
// `strata generate | strata ingest --undirected --weighted`, docs/cli.md); each measured run
// opens it anew (not timed), so the store's own caches start empty every run. --cold: before
// each open, the page cache is emptied of the store: `sync; echo 3 > /proc/sys/vm/drop_caches`
// when this process may write it (root), else posix_fadvise(POSIX_FADV_DONTNEED) on every file
// of DIR (clean pages only; says which it used). --cold-method picks one.
#include <CLI/CLI.hpp>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <mutex>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <thread>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graphio/generator.h"
#include "strata/analytics.h"
#include "bench/util.h"
#include "db/tier_reader.h"
#include "segment/stream_window.h"
#include "strata/db.h"

namespace strata::bench {

namespace {

struct Setting {
  std::string name;
  size_t group = 1;
  long prefetch = -1;  // -1: the kernel's default
  long walk = -1;      // TierReader's walk prefetch distance (SetWalkPrefetch); -1: default
  FrontierReadConfig frontier;  // the frontier reads' I/O (SetFrontierReadConfig)
  long hint = -1;      // streamed scans' hint windows (SetStreamHintWindows); -1: default
  long cache_mib = -1; // PageRank's list cache (PageRankParams::cache_bytes) in MiB; -1: default
  // PageRankParams::packing: 'u' kNever, 'z' kAlways; absent: the default (kAuto)
  analytics::ListPacking packing = analytics::ListPacking::kAuto;
  // PageRankParams::group_by_degree: 'd' true, 'n' false; absent: the default
  bool group_by_degree = analytics::PageRankParams{}.group_by_degree;
};

bool ParseSetting(const std::string& s, Setting* out) {
  out->name = s;
  if (s.empty() || s[0] != 'g') return false;
  char* end = nullptr;
  out->group = std::strtoul(s.c_str() + 1, &end, 10);
  if (end == s.c_str() + 1) return false;
  if (*end == 'p') {
    const char* b = end + 1;
    out->prefetch = std::strtol(b, &end, 10);
    if (end == b) return false;
  }
  if (*end == 'r') {
    const char* b = end + 1;
    out->walk = std::strtol(b, &end, 10);
    if (end == b || out->walk < 0) return false;
  }
  if (*end == 'f') {
    const char* b = end + 1;
    out->frontier.group = std::strtoul(b, &end, 10);
    if (end == b || out->frontier.group == 0) return false;
  }
  if (*end == 'k') {
    const char* b = end + 1;
    out->frontier.item_bytes = std::strtoul(b, &end, 10) << 10;
    if (end == b || out->frontier.item_bytes == 0) return false;
  }
  if (*end == 'a') {  // the frontier reads keep the scans' readahead
    out->frontier.random_access = false;
    ++end;
  }
  if (*end == 'h') {
    const char* b = end + 1;
    out->hint = std::strtol(b, &end, 10);
    if (end == b || out->hint < 0) return false;
  }
  if (*end == 'c') {
    const char* b = end + 1;
    out->cache_mib = std::strtol(b, &end, 10);
    if (end == b || out->cache_mib < 0) return false;
  }
  if (*end == 'u' || *end == 'z') {
    out->packing = *end == 'u' ? analytics::ListPacking::kNever : analytics::ListPacking::kAlways;
    ++end;
  }
  if (*end == 'd' || *end == 'n') {
    out->group_by_degree = *end == 'd';
    ++end;
  }
  return *end == '\0';
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

double CpuSec() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// Bytes this process has caused to be read from storage (/proc/self/io read_bytes: device
// reads, readahead included); 0 when unavailable.
uint64_t StorageReadBytes() {
  std::ifstream in("/proc/self/io");
  std::string key;
  uint64_t v = 0;
  while (in >> key >> v) {
    if (key == "read_bytes:") return v;
  }
  return 0;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Die(const char* what, const Status& s) {
  std::fprintf(stderr, "interleave bench: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

struct Stat {
  double median, min, max;
};
Stat Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

// Waits until `file` holds `me` (a missing file is process 0's turn).
void WaitTurn(const std::string& file, int me) {
  for (;;) {
    std::ifstream in(file);
    int k = 0;
    if (!(in >> k)) k = 0;
    if (k == me) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
void PassTurn(const std::string& file, int me, int of) {
  const std::string tmp = file + ".tmp" + std::to_string(me);
  std::ofstream(tmp) << (me + 1) % of << "\n";
  std::rename(tmp.c_str(), file.c_str());
}

// Empties the page cache of the store's files before a cold run. "drop": the whole page cache
// (root only); "fadvise": POSIX_FADV_DONTNEED on each file of dir. Returns what was done.
std::string DropStoreCache(const std::string& dir, const std::string& method) {
  if (method != "fadvise") {
    ::sync();
    FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w");
    if (f != nullptr) {
      const bool ok = std::fputs("3\n", f) >= 0;
      if (std::fclose(f) == 0 && ok) return "drop_caches";
    }
    if (method == "drop") {
      std::fprintf(stderr, "interleave bench: cannot write /proc/sys/vm/drop_caches (not root?)\n");
      std::exit(1);
    }
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return "nothing (cannot list the store)";
  while (dirent* e = ::readdir(d)) {
    const std::string path = dir + "/" + e->d_name;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  ::closedir(d);
  return "posix_fadvise(DONTNEED)";
}

}  // namespace

int RunInterleaveBench(int argc, char** argv) {
  int scale = 22, rounds = 3, threads = 0, sources = 1;
  uint64_t edge_factor = 16;
  bool directed = false, stats = false, cold = false, weighted = true, pr_owned = false;
  int pr_iterations = 0;  // 0: PageRankParams' default
  uint64_t frontier_stride = 1000;
  std::string turn, db_dir, cold_method = "auto";
  int me = 0, of = 1;
  std::vector<std::string> kernels, names;
  std::string kernel_list = "bfs,sssp", setting_list = "g1p0,g1,g8,g16,g32";
  CLI::App app("Kernels over a memgraph snapshot (or a persisted store) by setting, rounds "
               "rotated: bench/interleave_bench.cc.",
               "strata-bench interleave");
  app.add_option("--scale", scale, "Kronecker scale (2^S vertices)")
      ->check(CLI::Range(1, 30))
      ->capture_default_str();
  app.add_option("--edge-factor", edge_factor, "edges per vertex")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--kernels", kernel_list, "comma-separated kernels")->capture_default_str();
  app.add_option("--settings", setting_list, "comma-separated settings (gN[pD][rW]...)")
      ->capture_default_str();
  app.add_option("--rounds", rounds, "rounds of every setting")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--threads", threads, "TBB threads (0: all)")->check(CLI::Range(0, 4096));
  app.add_option("--sources", sources, "BFS/SSSP/k-hop sources per run")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_flag("--directed", directed, "kDirectedWithInEdges instead of undirected");
  CLI::Option* unweighted =
      app.add_flag("--unweighted", [&weighted](int64_t) { weighted = false; },
                   "a graph without weights (as the quick suite's main graph)");
  app.add_option("--pr-iterations", pr_iterations, "PageRank's iterations (default: the kernel's)")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--pr-owned", pr_owned, "hand each PageRank run a snapshot of its own");
  CLI::Option* turn_opt = app.add_option("--turn", turn, "the file the processes take turns by");
  app.add_option("--me", me, "this process's turn")->check(CLI::Range(0, 1000))->needs(turn_opt);
  app.add_option("--of", of, "processes taking turns")->check(CLI::Range(1, 1000))->needs(turn_opt);
  app.add_flag("--stats", stats, "BFS's steps");
  CLI::Option* db_opt = app.add_option("--db", db_dir, "a persisted store, opened read-only");
  unweighted->excludes(db_opt);
  app.add_option("--frontier-stride", frontier_stride, "frontier: every S-th vertex")
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  app.add_flag("--cold", cold, "empty the page cache of the store before each open")
      ->needs(db_opt);
  app.add_option("--cold-method", cold_method, "how --cold empties it")
      ->check(CLI::IsMember({"auto", "drop", "fadvise"}))
      ->capture_default_str();
  try {
    app.parse(argc - 1, argv + 1);  // argv[1] is "interleave"
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help; or a usage error, 2 as in every subcommand
  }
  if (me >= of) {
    std::fprintf(stderr, "interleave bench: --me %d must be below --of %d\n", me, of);
    return 2;
  }
  kernels = SplitList(kernel_list);
  names = SplitList(setting_list);
  std::vector<Setting> settings(names.size());
  for (size_t j = 0; j < names.size(); ++j) {
    if (!ParseSetting(names[j], &settings[j])) {
      std::fprintf(stderr, "interleave bench: bad setting %s (gN or gNpD)\n", names[j].c_str());
      return 2;
    }
  }
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0) {
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                  static_cast<size_t>(threads));
  }

  Options o;
  std::unique_ptr<DB> db;
  std::unique_ptr<Snapshot> snap;
  uint64_t num_vertices = 0;
  Status s;
  if (!db_dir.empty()) {
    // A persisted store, opened read-only; reopened before each measured run (OpenStore).
    o.graph_kind = directed ? GraphKind::kDirectedWithInEdges : GraphKind::kUndirected;
    o.weighted = true;
    o.read_only = true;
    o.create_if_missing = false;
    s = DB::Open(o, db_dir, &db);
    if (!s.ok()) Die("open", s);
    snap = db->GetSnapshot();
    num_vertices = snap->VertexIdBound();
    std::printf("store %s: %llu vertices, %llu stored edges%s\n", db_dir.c_str(),
                static_cast<unsigned long long>(num_vertices),
                static_cast<unsigned long long>(snap->NumEdges()),
                cold ? ", cold runs" : ", warm runs");
  } else {
  o.in_memory = true;
  o.weighted = weighted;
  o.graph_kind = directed ? GraphKind::kDirectedWithInEdges : GraphKind::kUndirected;
  s = DB::Open(o, "interleave-bench", &db);
  if (!s.ok()) Die("open", s);
  graphio::GeneratorOptions go;
  go.scale = scale;
  go.edge_factor = edge_factor;
  go.weighted = weighted;
  std::unique_ptr<graphio::EdgeGenerator> gen;
  s = graphio::EdgeGenerator::New(go, &gen);
  if (!s.ok()) Die("generator", s);
  num_vertices = gen->num_vertices();
  const double t0 = Now();
  {
    WriteBatch b;
    for (VertexId v = 0; v < gen->num_vertices(); ++v) b.AddVertex(v);
    s = db->Write(b);
    if (!s.ok()) Die("write", s);
  }
  std::vector<graphio::Edge> batch;
  while (gen->NextBatch(&batch, 65536)) {
    WriteBatch b;
    for (const graphio::Edge& e : batch) b.InsertEdge(e.src, e.dst, e.weight);
    s = db->Write(b);
    if (!s.ok()) Die("write", s);
  }
  snap = db->GetSnapshot();
  std::printf("load: scale %d, edge factor %llu, %s, %s, %.1f s, %llu stored edges, %.0f MiB of "
              "memgraph\n",
              scale, static_cast<unsigned long long>(edge_factor),
              directed ? "directed+in" : "undirected", weighted ? "weighted" : "unweighted",
              Now() - t0,
              static_cast<unsigned long long>(snap->NumEdges()),
              static_cast<double>(db->GetStats(false).memgraph_bytes) / (1 << 20));
  }
  // A persisted store: opened anew before each run (not timed), after emptying the page cache
  // of it with --cold, so every run starts with the same (empty) caches.
  std::string cold_done;
  auto reopen = [&]() {
    if (db_dir.empty()) return;
    snap.reset();
    db.reset();
    if (cold) cold_done = DropStoreCache(db_dir, cold_method);
    s = DB::Open(o, db_dir, &db);
    if (!s.ok()) Die("open", s);
    snap = db->GetSnapshot();
  };
  // Sources: vertices with out-edges, spread by a fixed stride.
  std::vector<VertexId> srcs;
  for (VertexId v = 12345 % num_vertices; srcs.size() < static_cast<size_t>(sources);
       v = (v + 7919 * 1031) % num_vertices) {
    if (snap->Degree(v) > 0) srcs.push_back(v);
  }
  std::fflush(stdout);

  const size_t k = settings.size();
  // [kernel][setting][round]
  std::vector<std::vector<std::vector<double>>> walls(kernels.size(), std::vector<std::vector<double>>(k)),
      cpus = walls;
  for (int r = 0; r < rounds; ++r) {
    if (!turn.empty()) WaitTurn(turn, me);
    for (size_t ki = 0; ki < kernels.size(); ++ki) {
      const std::string& kernel = kernels[ki];
      std::vector<std::vector<double>>& wall = walls[ki];
      std::vector<std::vector<double>>& cpu = cpus[ki];
      std::vector<int64_t> depth0;
      std::vector<double> dist0;
      bool dist0_grouped = false;  // the setting dist0 came from: group_by_degree
      std::vector<VertexId> label0;
      for (size_t jj = 0; jj < k; ++jj) {
        const size_t j = (jj + static_cast<size_t>(r)) % k;
        const Setting& st = settings[j];
        SetWalkPrefetch(st.walk >= 0 ? static_cast<size_t>(st.walk) : kDefaultWalkPrefetch);
        SetFrontierReadConfig(st.frontier);
        SetStreamHintWindows(st.hint >= 0 ? static_cast<uint64_t>(st.hint) : kDefaultStreamHintWindows);
        double w = 0, c = 0;
        uint64_t io_bytes = 0, faults = 0;
        analytics::PageRankStats pr_stats;  // pagerank: its last run's list cache
        int pr_ran = 0;                     // and the iterations it was given
        for (VertexId src : srcs) {
          reopen();
          const uint64_t io0 = StorageReadBytes();
          std::vector<int64_t> depth;
          std::vector<double> dist;
          std::vector<VertexId> label;
          // --pr-owned: the snapshot PageRank is handed, taken before the clock starts.
          std::unique_ptr<Snapshot> own =
              pr_owned && kernel == "pagerank" ? db->GetSnapshot() : nullptr;
          const uint64_t f0 = ProcessMinorFaults();
          const double c0 = CpuSec(), w0 = Now();
          if (kernel == "bfs") {
            analytics::BfsParams p;
            p.source = src;  // BFS has no interleaving parameter (docs/analytics.md)
            analytics::BfsStats bs;
            if (stats) p.stats = &bs;
            s = analytics::Bfs(*snap, p, &depth);
            if (stats && s.ok()) {
              std::printf("    %s layout %.3f s;", st.name.c_str(), bs.layout_seconds);
              for (const analytics::BfsStep& x : bs.steps) {
                std::printf(" %s %llu->%llu %.3f s;", x.bottom_up ? "bu" : "td",
                            static_cast<unsigned long long>(x.frontier),
                            static_cast<unsigned long long>(x.found), x.seconds);
              }
              std::printf("\n");
            }
          } else if (kernel == "sssp") {
            analytics::SsspParams p;
            p.source = src;
            p.interleave = st.group;
            if (st.prefetch >= 0) p.prefetch_distance = static_cast<size_t>(st.prefetch);
            s = analytics::Sssp(*snap, p, &dist);
          } else if (kernel == "tc" || kernel == "lcc") {
            analytics::TriangleParams p;
            p.interleave = st.group;
            if (st.prefetch >= 0) p.prefetch_distance = static_cast<size_t>(st.prefetch);
            if (kernel == "lcc") {
              s = analytics::Lcc(*snap, p, &dist);
            } else {
              uint64_t t = 0;
              s = analytics::TriangleCount(*snap, p, &t);
              dist.assign(1, static_cast<double>(t));
            }
          } else if (kernel == "pagerank") {  // default parameters but the cache (cC)
            analytics::PageRankParams p;
            if (st.cache_mib >= 0) p.cache_bytes = static_cast<size_t>(st.cache_mib) << 20;
            p.packing = st.packing;
            p.group_by_degree = st.group_by_degree;
            p.stats = &pr_stats;
            if (pr_iterations > 0) p.iterations = pr_iterations;
            pr_ran = p.iterations;
            s = own != nullptr ? analytics::PageRank(std::move(own), p, &dist)
                               : analytics::PageRank(*snap, p, &dist);
          } else if (kernel == "wcc") {
            s = analytics::Wcc(*snap, analytics::WccParams{}, &label);
          } else if (kernel == "khop") {
            analytics::KHopParams p;
            p.source = src;
            s = analytics::KHop(*snap, p, &label);
          } else if (kernel == "frontier") {
            std::vector<VertexId> vs;
            for (VertexId v = src % frontier_stride; v < snap->VertexIdBound(); v += frontier_stride) {
              vs.push_back(v);
            }
            // Chunks of BFS's fetch batch, in parallel, through the public batch read (what
            // the frontier kernels' ForEachFrontierChunk does inside analytics/).
            std::atomic<uint64_t> sum{0};
            const size_t batch = analytics::BfsParams{}.fetch_batch;
            const size_t chunks = (vs.size() + batch - 1) / batch;
            std::mutex mu;
            Status first;
            tbb::parallel_for(size_t{0}, chunks, [&](size_t k) {
              const size_t b0 = k * batch, n = std::min(batch, vs.size() - b0);
              uint64_t x = 0;
              Status st = snap->ScanNeighborsBatch(vs.data() + b0, n, Direction::kOut,
                                                   /*weights=*/false,
                                                   [&x](size_t, const NeighborChunk& c) {
                for (size_t i = 0; i < c.size; ++i) x += c.dst[i];
                return true;
              });
              sum.fetch_add(x, std::memory_order_relaxed);
              if (!st.ok()) {
                std::lock_guard<std::mutex> lock(mu);
                if (first.ok()) first = st;
              }
            });
            s = first;
            dist.assign(1, static_cast<double>(sum.load()));
          } else {
            std::fprintf(stderr, "interleave bench: unknown kernel %s\n", kernel.c_str());
            return 2;
          }
          w += Now() - w0;
          c += CpuSec() - c0;
          io_bytes += StorageReadBytes() - io0;
          faults += ProcessMinorFaults() - f0;
          if (!s.ok()) Die(kernel.c_str(), s);
          if (srcs.size() == 1) {  // compare with the round's first run
            if (r == 0 && jj == 0) {  // a digest, to compare builds
              uint64_t reached = 0;
              double sum = 0;
              for (int64_t d : depth) {
                if (d != analytics::kUnreachable) ++reached, sum += static_cast<double>(d);
              }
              for (double d : dist) {
                if (d != analytics::kInfinity) ++reached, sum += d;
              }
              for (VertexId l : label) {
                if (l != analytics::kNoLabel) ++reached, sum += static_cast<double>(l);
              }
              std::printf("    %s digest: %llu reached, sum %.12g\n", kernel.c_str(),
                          static_cast<unsigned long long>(reached), sum);
            }
            if (kernel == "bfs") {
              if (depth0.empty()) depth0 = std::move(depth);
              else if (depth != depth0) Die("bfs", Status::Corruption("depths differ between settings"));
            } else if (kernel == "wcc") {
              if (label0.empty()) label0 = std::move(label);
              else if (label != label0) Die("wcc", Status::Corruption("labels differ between settings"));
            } else {
              if (dist0.empty()) {
                dist0 = std::move(dist);
                dist0_grouped = st.group_by_degree;
              } else if (kernel == "pagerank" && st.group_by_degree != dist0_grouped) {
                bool close = dist.size() == dist0.size();
                for (size_t v = 0; close && v < dist.size(); ++v) {
                  close = std::fabs(dist[v] - dist0[v]) <= 1e-5 * std::fabs(dist0[v]);
                }
                if (!close) Die(kernel.c_str(), Status::Corruption("ranks differ between settings"));
              } else if (dist != dist0) {
                Die(kernel.c_str(), Status::Corruption("results differ between settings"));
              }
            }
          }
        }
        wall[j].push_back(w);
        cpu[j].push_back(c);
        std::printf("  %s round %d %-8s %.3f s (cpu %.3f s, %.1f MiB read from storage, %llu minor "
                    "faults)%s%s\n",
                    kernel.c_str(), r, st.name.c_str(), w, c,
                    static_cast<double>(io_bytes) / (1 << 20), static_cast<unsigned long long>(faults),
                    cold_done.empty() ? "" : " after ",
                    cold_done.c_str());
        if (kernel == "pagerank") {
          std::printf("    %d iterations (layout and list cache %.3f s, iterations %.3f s); "
                      "list cache %.1f MiB of %.1f MiB, %llu blocks packed, %llu streamed",
                      pr_ran, pr_stats.prepare_seconds, pr_stats.iterate_seconds,
                      static_cast<double>(pr_stats.cache_bytes) / (1 << 20),
                      static_cast<double>(pr_stats.cache_budget) / (1 << 20),
                      static_cast<unsigned long long>(pr_stats.packed_blocks),
                      static_cast<unsigned long long>(pr_stats.streamed_blocks));
          if (pr_owned) {
            std::printf("; snapshot handed over: %llu blocks released during the layout, %s",
                        static_cast<unsigned long long>(pr_stats.released_blocks),
                        pr_stats.snapshot_released ? "let go before the iterations"
                                                   : "held through the iterations");
          }
          std::printf("\n");
        }
        std::fflush(stdout);
      }
    }
    if (!turn.empty()) PassTurn(turn, me, of);
  }
  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    for (size_t j = 0; j < k; ++j) {
      const std::vector<double>& wj = walls[ki][j];
      std::vector<double> ratio;
      for (int r = 0; r < rounds; ++r) ratio.push_back(wj[r] / walls[ki][0][r]);
      const Stat ws = Summarize(wj), cs = Summarize(cpus[ki][j]), rs = Summarize(ratio);
      std::printf("%s %-8s wall s median %.3f (%.3f-%.3f)  cpu s median %.3f (%.3f-%.3f)  / %s per round median %.3f (%.3f-%.3f)\n",
                  kernels[ki].c_str(), settings[j].name.c_str(), ws.median, ws.min, ws.max, cs.median,
                  cs.min, cs.max, settings[0].name.c_str(), rs.median, rs.min, rs.max);
    }
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace strata::bench
