// strata-bench: the benchmark suite (docs/benchmarks.md).
//
//   strata-bench --suite quick|full --json FILE [--scale S] [--threads N]
//                [--only WORKLOAD,...] [--systems SYSTEM,...] [--dir DIR] [--timeout SECONDS]
//
// Every (job, system) pair runs in its own child process (fork before any thread exists in the
// parent), so peak RSS and I/O counters are per system and a crash or timeout of one system does
// not lose the others' results. Children stream their results back through a pipe; the parent
// adds the ratios of StrataGraph figures to each baseline (from this run only), checks that the
// systems computed the same analytics results, and writes the JSON report.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/version.h>

#include "bench/cache_probe.h"
#include "bench/report.h"
#include "bench/util.h"
#include "bench/workloads.h"
#include "graphio/size_parse.h"

namespace strata::bench {
int RunFeedBench(int argc, char** argv);        // feed_bench.cc
int RunInterleaveBench(int argc, char** argv);  // interleave_bench.cc
int RunFillBench(int argc, char** argv);        // fill_bench.cc

namespace {

const std::vector<std::string> kWorkloads = {"insert", "update", "search_edge", "scan_nbr",
                                             "bfs",    "pr",     "sssp",        "wcc",
                                             "tc",     "mixed",  "ingest_large", "durability"};
const std::vector<std::string> kSystems = {"strata", "strata-mem", "rocksdb", "csr"};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void Usage() {
  fprintf(stderr,
          "usage: strata-bench --suite quick|full --json FILE [--scale S] [--threads N]\n"
          "                    [--only WORKLOAD,...] [--systems SYSTEM,...] [--dir DIR]\n"
          "                    [--timeout SECONDS] [--large-analytics KERNEL,...|none]\n"
          "                    [--keep-large] [--pr-cache-bytes SIZE]\n"
          "                    [--pr-packing auto|never|always] [--pr-group-by-degree on|off]\n"
          "       strata-bench feed [--edges N] [--batch B] [--writers W] [--in-memory]: the\n"
          "         change feed's delivered changes/s and ingest rate with vs without a subscriber\n"
          "       strata-bench interleave [--scale S] [--kernels bfs,sssp,pagerank,...]\n"
          "         [--settings gN[pD][cC],...] [--rounds R] [--threads N] [--directed]\n"
          "         [--unweighted] [--pr-iterations N] [--pr-owned]: kernels\n"
          "         over a memgraph snapshot by interleave group N, prefetch distance D and\n"
          "         PageRank list cache C MiB (more settings: bench/interleave_bench.cc)\n"
          "       strata-bench fill [--scale S] [--fraction F] [--batch B] [--weighted] [--verify]\n"
          "         [--cart-threshold T] [--order shuffled|source] [--directed] [--paired R]\n"
          "         [--perf-ctl FIFO [--perf-ack FIFO] --perf-tenth K]: one writer loads a stream\n"
          "         into strata-mem, the rate of each tenth (bench/fill_bench.cc)\n"
          "workloads: insert update search_edge scan_nbr bfs pr sssp wcc tc mixed ingest_large\n"
          "           durability (WAL grid and recovery; runs only when named in --only)\n"
          "systems:   strata strata-mem rocksdb csr\n"
          "--large-analytics: the kernels (bfs pr sssp wcc) run on the persisted ingest_large\n"
          "           graph; default pr (quick), bfs,pr,sssp,wcc (full)\n"
          "--keep-large: leave strata's ingest_large store in DIR/large-strata (no space-amplification\n"
          "           figure: its full compaction would rewrite the store)\n"
          "--pr-cache-bytes: strata's PageRank list cache (PageRankParams::cache_bytes; e.g. 512M,\n"
          "           as `strata analyze --cache-bytes`); default the kernel's (a quarter of the free\n"
          "           memory, at least 256 MiB); strata's pr rows then carry params.cache_bytes\n"
          "--pr-packing: strata's PageRank list packing (PageRankParams::packing); default auto;\n"
          "           strata's pr rows then carry params.packing\n"
          "--pr-group-by-degree: strata's PageRank gathers by vertices renumbered by degree\n"
          "           group (PageRankParams::group_by_degree); default the kernel's (on); strata's pr rows\n"
          "           then carry params.group_by_degree\n");
}

std::string Trim(std::string s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// The cache probe as JSON (bench/cache_probe.h): M accesses/s within the L2 and over half the
// last-level cache.
std::string ProbeJson(const CacheProbeResult& p) {
  JsonObject o;
  o.Int("threads", p.threads);
  o.Int("small_bytes_per_thread", static_cast<int64_t>(p.small_bytes));
  o.Int("large_bytes_per_thread", static_cast<int64_t>(p.large_bytes));
  o.Num("small_m_per_s", p.small_per_s / 1e6);
  o.Num("large_m_per_s", p.large_per_s / 1e6);
  o.Num("seconds_each", p.seconds);
  return o.ToJson();
}

std::string MachineJson(const SuiteConfig& cfg, bool drop_ok, const std::string& tree_state,
                        const std::string& load_at_start, const CacheProbeResult& probe_at_start) {
  JsonObject m;
  std::string cpuinfo = ReadFileText("/proc/cpuinfo");
  std::string model;
  size_t p = cpuinfo.find("model name");
  if (p != std::string::npos) {
    size_t c = cpuinfo.find(':', p), e = cpuinfo.find('\n', p);
    model = Trim(cpuinfo.substr(c + 1, e - c - 1));
  }
  m.Str("cpu_model", model);
  m.Int("cores", sysconf(_SC_NPROCESSORS_ONLN));
  m.Int("memory_bytes", static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE));
  struct utsname u;
  if (uname(&u) == 0) {
    m.Str("kernel", std::string(u.sysname) + " " + u.release);
    m.Str("arch", u.machine);
  }
  std::string os = ReadFileText("/etc/os-release");
  p = os.find("PRETTY_NAME=");
  if (p != std::string::npos) {
    std::string line = os.substr(p + 12, os.find('\n', p) - p - 12);
    line.erase(std::remove(line.begin(), line.end(), '"'), line.end());
    m.Str("os", line);
  }
  m.Str("compiler", __VERSION__);
#ifdef NDEBUG
  m.Str("build", "NDEBUG");
#else
  m.Str("build", "assertions on (RelWithAssert: -O2 -g1)");
#endif
  m.Str("rocksdb", std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR) + "." +
                       std::to_string(ROCKSDB_PATCH));
  m.Str("loadavg_at_start", load_at_start);
  m.Str("loadavg_at_end", Trim(ReadFileText("/proc/loadavg")));
  m.Raw("cache_probe_at_start", ProbeJson(probe_at_start));
  m.Raw("cache_probe_at_end", ProbeJson(ProbeCaches(cfg.threads, 0.5)));
  m.Str("noise", "other processes may share the cores: compare cpu_seconds with seconds (a "
                 "kernel using T threads alone has cpu_seconds close to T x seconds)");
  m.Bool("page_cache_drop_permitted", drop_ok);
  m.Str("page_cache",
        drop_ok ? "warm runs follow a warm-up run; cold runs drop the page cache (sync; echo 3 > "
                  "/proc/sys/vm/drop_caches) before each run. In-process caches (RocksDB block "
                  "cache, StrataGraph's segment indexes) are not dropped."
                : "dropping the page cache was refused: every run is warm");
  m.Str("storage_dir", cfg.dir);
  m.Str("filesystem", Trim(RunCommand("df -T " + cfg.dir + " 2>/dev/null | tail -1")));
  m.Str("tree", tree_state);
  m.Int("threads", cfg.threads);
  return m.ToJson();
}

std::string RepoDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  for (int i = 0; i < 3 && p.find('/') != std::string::npos; ++i) p = p.substr(0, p.rfind('/'));
  return p.empty() ? "/" : p;  // <repo>/<build>/bin/strata-bench -> <repo>
}

struct Job {
  std::string name;
  std::string system;
  std::function<void(ResultSink*)> fn;
};

// Runs a job in a child process; returns its results (empty if it failed).
bool RunChild(const Job& job, const SuiteConfig& cfg, double timeout, std::vector<Result>* out,
              double* seconds) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const double t0 = NowSec();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    {
      tbb::global_control gc(tbb::global_control::max_allowed_parallelism, cfg.threads);
      ResultSink sink;
      job.fn(&sink);
      std::string bytes = SerializeResults(sink.results());
      size_t off = 0;
      while (off < bytes.size()) {
        ssize_t w = write(fds[1], bytes.data() + off, bytes.size() - off);
        if (w <= 0) {
          code = 2;
          break;
        }
        off += static_cast<size_t>(w);
      }
      close(fds[1]);
    }
    fflush(stderr);
    _exit(code);
  }
  close(fds[1]);
  std::string bytes;
  char buf[65536];
  bool timed_out = false;
  for (;;) {
    const double left = timeout - (NowSec() - t0);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(std::min(left, 1.0) * 1000));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) {
    fprintf(stderr, "[%-10s] job %s timed out after %.0f s: killed\n", job.system.c_str(),
            job.name.c_str(), timeout);
    kill(pid, SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  *seconds = NowSec() - t0;
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (!timed_out) {
      fprintf(stderr, "[%-10s] job %s failed (status %d)\n", job.system.c_str(), job.name.c_str(),
              status);
    }
    return false;
  }
  return DeserializeResults(bytes, out);
}

int Main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "feed") return RunFeedBench(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "interleave") return RunInterleaveBench(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "fill") return RunFillBench(argc, argv);
  SuiteConfig cfg;
  std::string json_path;
  int scale = 0, threads = 0;
  double timeout = 0;
  WorkloadSet only;
  std::vector<std::string> systems = kSystems;
  bool large_analytics_given = false;
  std::vector<std::string> large_analytics;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        Usage();
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--suite") {
      cfg.suite = next();
    } else if (a == "--json") {
      json_path = next();
    } else if (a == "--scale") {
      scale = std::stoi(next());
    } else if (a == "--threads") {
      threads = std::stoi(next());
    } else if (a == "--only") {
      only.names = Split(next());
    } else if (a == "--large-analytics") {
      large_analytics_given = true;
      large_analytics = Split(next());
    } else if (a == "--systems") {
      systems = Split(next());
    } else if (a == "--dir") {
      cfg.dir = next();
    } else if (a == "--keep-large") {
      cfg.keep_large = true;
    } else if (a == "--pr-cache-bytes") {
      uint64_t bytes = 0;
      Status s = graphio::ParseSize(next(), &bytes);
      if (!s.ok()) {
        fprintf(stderr, "--pr-cache-bytes: %s\n", s.message().c_str());
        return 2;
      }
      cfg.pr_cache_bytes = static_cast<size_t>(bytes);
    } else if (a == "--pr-group-by-degree") {
      const std::string v = next();
      if (v != "on" && v != "off") {
        fprintf(stderr, "--pr-group-by-degree: '%s' is not on or off\n", v.c_str());
        return 2;
      }
      cfg.pr_group_by_degree = v == "on";
    } else if (a == "--pr-packing") {
      const std::string v = next();
      analytics::ListPacking p;
      if (!ParsePacking(v, &p)) {
        fprintf(stderr, "--pr-packing: '%s' is not auto, never or always\n", v.c_str());
        return 2;
      }
      cfg.pr_packing = p;
    } else if (a == "--timeout") {
      timeout = std::stod(next());
    } else if (a == "-h" || a == "--help") {
      Usage();
      return 0;
    } else {
      fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      Usage();
      return 2;
    }
  }
  if (json_path.empty() || (cfg.suite != "quick" && cfg.suite != "full")) {
    Usage();
    return 2;
  }
  for (const std::string& w : only.names) {
    if (std::find(kWorkloads.begin(), kWorkloads.end(), w) == kWorkloads.end()) {
      fprintf(stderr, "unknown workload '%s'\n", w.c_str());
      return 2;
    }
  }
  for (const std::string& s : systems) {
    if (std::find(kSystems.begin(), kSystems.end(), s) == kSystems.end()) {
      fprintf(stderr, "unknown system '%s'\n", s.c_str());
      return 2;
    }
  }
  cfg.threads = threads > 0 ? threads : std::max<int>(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  if (cfg.suite == "quick") {
    // Sized to finish in under 10 minutes on 2 cores (docs/benchmarks.md): the main graph at
    // scale 20, point-read samples capped in count and time, 2^18-edge insert runs, warm
    // analytics only after one warm-up per graph (RocksDB's one pass), and neither a mixed run
    // nor RocksDB's kernels on the main graph nor its triangle count (its iterator kernels take
    // minutes; its kernel rows are SSSP on the small graph and PageRank on ingest_large's);
    // `full` runs all of it.
    cfg.scale = 20;
    cfg.small_scale = 15;
    cfg.large_scale = 18;
    cfg.sample_cap = 100000;
    cfg.read_budget_seconds = 5;
    cfg.shared_warmup = true;
    cfg.rocksdb_warmup_one_pass = true;  // ~8 s less of RocksDB iterator reads (workloads.h)
    cfg.rocksdb_all_kernels = false;  // ~65 s of RocksDB iterator kernels (workloads.h)
    cfg.cold_analytics = false;
    cfg.rocksdb_mixed = false;
    cfg.large_budget = size_t{16} << 20;
    cfg.large_memgraph_bytes = size_t{4} << 20;
    cfg.memory_budget = size_t{256} << 20;
    cfg.memgraph_bytes = size_t{16} << 20;
    cfg.insert_edges = uint64_t{1} << 18;
    cfg.insert_sync_edges = 5000;
    // The median of five with the WAL off (the issue 28 targets' rows), the configurations
    // alternated by rounds: one run of a third of a second moved 2 writers / 1 by 0.4x between
    // two runs, and medians of three taken configuration after configuration gave 2.18x in
    // one suite and 1.10x in another for the same engine (docs/benchmarks.md).
    cfg.insert_runs = 5;
    cfg.insert_wal_runs = 1;
    // RocksDB's 16 runs of ~2 s were ~32 s of the suite's 10 minutes (607 s at f2e3dc3).
    cfg.rocksdb_insert_runs = 1;
    cfg.analytics_runs = 3;
    cfg.rocksdb_analytics_runs = 1;
    // Five PageRank runs of 3 iterations (~1.7 s at scale 20): with one run the writer's rate
    // beside the reader came from a 0.4-s window that opens with the snapshot's first copy of
    // every subgraph, against 2 s alone (docs/benchmarks.md, "the mixed workload's windows").
    cfg.mixed_runs = 5;
    cfg.rocksdb_mixed_runs = 1;
    cfg.mixed_pr_iterations = 3;
    cfg.analytics_budget_seconds = 6;
    cfg.cold_tc = false;
    if (timeout == 0) timeout = 480;
  } else {
    cfg.scale = 22;
    cfg.small_scale = 19;
    cfg.large_scale = 23;
    // 512 MiB for scale 23: the memory plan counts the multi-level vertex index twice
    // (docs/design.md, "Memory budget"), and at this scale the index alone is large enough
    // that 256 MiB did not hold (docs/benchmarks.md, "Measurements behind design choices").
    // The memgraphs stay at 64 MiB.
    cfg.large_budget = size_t{512} << 20;
    cfg.large_memgraph_bytes = size_t{64} << 20;
    // The kernels are measured on the persisted scale-23 graph of the ingest (budget well
    // below the data): BFS, PR, SSSP and WCC run there, not on the main graph; TC stays on the
    // small graph (SSSP too, as a second, cache-resident point).
    cfg.main_analytics = false;
    cfg.main_pr_in_memory = true;  // strata-mem's PageRank has no other graph in this suite
    cfg.large_analytics.names = {"bfs", "pr", "sssp", "wcc"};
    cfg.memory_budget = size_t{1} << 30;
    cfg.memgraph_bytes = size_t{64} << 20;
    cfg.insert_edges = uint64_t{1} << 22;
    cfg.insert_sync_edges = 20000;
    cfg.insert_runs = 3;
    cfg.insert_wal_runs = 3;
    cfg.analytics_runs = 5;
    cfg.rocksdb_analytics_runs = 1;
    cfg.mixed_runs = 3;
    cfg.rocksdb_mixed_runs = 1;
    cfg.mixed_pr_iterations = 10;
    cfg.series_interval = 1.0;
    if (timeout == 0) timeout = 3 * 3600;
  }
  if (large_analytics_given) {
    for (const std::string& k : large_analytics) {
      if (k != "bfs" && k != "pr" && k != "sssp" && k != "wcc" && k != "none") {
        fprintf(stderr, "--large-analytics: unknown kernel '%s' (bfs, pr, sssp, wcc or none)\n", k.c_str());
        return 2;
      }
    }
    cfg.large_analytics.names = large_analytics;
    if (large_analytics.empty()) cfg.large_analytics.names = {"none"};
  }
  if (scale > 0) RescaleSuite(&cfg, scale);
  if (!MakeDirs(cfg.dir)) {
    fprintf(stderr, "cannot create %s\n", cfg.dir.c_str());
    return 1;
  }
  cfg.can_drop_cache = DropPageCache();

  const std::string repo = RepoDir();
  std::string commit = RunCommand("git -C '" + repo + "' rev-parse HEAD 2>/dev/null");
  if (commit.empty()) commit = RunCommand("git rev-parse HEAD 2>/dev/null");
  std::string dirty = RunCommand("git -C '" + repo + "' status --porcelain 2>/dev/null | head -1");
  const std::string tree_state =
      dirty.empty() ? "clean" : "uncommitted changes in the working tree (figures are of HEAD plus those)";
  const std::string load_at_start = Trim(ReadFileText("/proc/loadavg"));
  const CacheProbeResult probe_at_start = ProbeCaches(cfg.threads, 0.5);

  fprintf(stderr,
          "strata-bench %s: scale %d (sssp/tc %d, ingest_large %d in a %zu MiB budget), %d threads, "
          "page cache drop %s\n",
          cfg.suite.c_str(), cfg.scale, cfg.small_scale, cfg.large_scale, cfg.large_budget >> 20,
          cfg.threads,
          cfg.can_drop_cache ? "permitted" : "refused");

  auto want = [&](const std::string& s) {
    return std::find(systems.begin(), systems.end(), s) != systems.end();
  };
  std::vector<Job> jobs;
  const bool main_wanted = only.Has("update") || only.Has("search_edge") || only.Has("scan_nbr") ||
                           only.Has("bfs") || only.Has("pr") || only.Has("wcc") ||
                           only.Has("mixed") || only.Has("insert");
  for (const std::string& s : kSystems) {
    if (!want(s)) continue;
    if (only.Has("insert") && s != "csr") {
      jobs.push_back({"insert", s, [&cfg, s](ResultSink* k) { RunInsertJob(cfg, s, k); }});
    }
  }
  for (const std::string& s : kSystems) {
    if (!want(s) || !main_wanted) continue;
    jobs.push_back({"main", s, [&cfg, s, only](ResultSink* k) { RunMainJob(cfg, s, only, k); }});
  }
  if (want("strata-mem") && only.Has("update")) {
    jobs.push_back({"fill_paired", "strata-mem",
                    [&cfg](ResultSink* k) { RunFillPairedJob(cfg, "strata-mem", k); }});
  }
  for (const std::string& s : kSystems) {
    if (!want(s) || !(only.Has("sssp") || only.Has("tc"))) continue;
    jobs.push_back({"small", s, [&cfg, s, only](ResultSink* k) { RunSmallJob(cfg, s, only, k); }});
  }
  for (const std::string& s : {std::string("strata"), std::string("rocksdb"), std::string("csr")}) {
    if (!want(s) || !only.Has("ingest_large")) continue;
    jobs.push_back({"ingest_large", s, [&cfg, s](ResultSink* k) { RunIngestLargeJob(cfg, s, k); }});
  }

  const bool durability_named =
      std::find(only.names.begin(), only.names.end(), "durability") != only.names.end();
  for (const std::string& s : {std::string("strata"), std::string("rocksdb")}) {
    if (!want(s) || !durability_named) continue;
    jobs.push_back({"durability", s, [&cfg, s](ResultSink* k) { RunDurabilityJob(cfg, s, k); }});
    jobs.push_back({"recovery", s, [&cfg, s](ResultSink* k) { RunRecoveryJob(cfg, s, k); }});
  }

  std::vector<Result> results;
  const double t0 = NowSec();
  for (const Job& job : jobs) {
    fprintf(stderr, "== job %s / %s\n", job.name.c_str(), job.system.c_str());
    std::vector<Result> rs;
    double secs = 0;
    bool ok = RunChild(job, cfg, timeout, &rs, &secs);
    fprintf(stderr, "== job %s / %s: %s in %.1f s (%zu results)\n", job.name.c_str(),
            job.system.c_str(), ok ? "done" : "FAILED", secs, rs.size());
    Result jr;
    jr.workload = job.name;
    jr.system = job.system;
    jr.metric = "job_seconds";
    jr.value = secs;
    jr.unit = "s";
    jr.info.Bool("ok", ok);
    results.insert(results.end(), rs.begin(), rs.end());
    results.push_back(jr);
  }
  CheckDigests(&results);
  std::vector<Result> ratios = ComputeRatios(results);
  results.insert(results.end(), ratios.begin(), ratios.end());
  const double total = NowSec() - t0;
  Result tr;
  tr.workload = "suite";
  tr.system = "all";
  tr.metric = "suite_seconds";
  tr.value = total;
  tr.unit = "s";
  results.push_back(tr);
  const std::string machine =
      MachineJson(cfg, cfg.can_drop_cache, tree_state, load_at_start, probe_at_start);
  if (!WriteReport(json_path, machine, commit, cfg.suite, results)) {
    fprintf(stderr, "cannot write %s\n", json_path.c_str());
    return 1;
  }
  fprintf(stderr, "strata-bench: %zu results in %.1f s -> %s\n", results.size(), total,
          json_path.c_str());
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) { return strata::bench::Main(argc, argv); }
