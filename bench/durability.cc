// The durability workload (docs/design.md, "No lost acknowledged batch"): ingest throughput
// under each WAL setting and crash recovery time per GiB of log, StrataGraph against RocksDB
// in the same run.
//
// Grid: settings off / group / sync (adapter.h, WalSetting, states what each means for each
// system; RocksDB also runs "buffered", its default WAL without fsync) x 1 and cfg.threads
// writers x batches of 1, 64 and 1024 edges. Every cell is a fresh store fed a prefix of one
// undirected Kronecker stream (scale cfg.scale); writers split it by a hash of the edge. A
// cell whose setting fsyncs writes at most cfg.durability_syncs transactions, and every cell
// stops after cfg.durability_cell_seconds (throughput = edges written / time taken).
//
// Recovery: a grandchild process opens a store with the group WAL and a memory tier (memgraph
// or memtable) large enough that nothing is flushed, writes batches of 1024 edges until its log
// holds cfg.recovery_log_bytes, and _exits without closing — the crash. The job then times the
// reopen, which replays the log, and checks that the last batch written is visible. The log is
// in the page cache (it was just written): warm recovery. RocksDB's open also writes the
// replayed memtable to a level-0 file before returning; StrataGraph's keeps it in memory.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "bench/util.h"
#include "bench/workloads.h"
#include "graphio/generator.h"

namespace strata::bench {
namespace {

void Say(const std::string& system, const std::string& msg) {
  fprintf(stderr, "[%-10s] %s\n", system.c_str(), msg.c_str());
  fflush(stderr);
}

[[noreturn]] void Die(const std::string& system, const std::string& what, const Status& s) {
  Say(system, "FAILED: " + what + ": " + s.ToString());
  _exit(3);
}

std::unique_ptr<graphio::EdgeGenerator> Kronecker(int scale, uint64_t seed) {
  graphio::GeneratorOptions o;
  o.model = graphio::GraphModel::kKronecker;
  o.scale = scale;
  o.edge_factor = 16;
  o.seed = seed;
  std::unique_ptr<graphio::EdgeGenerator> g;
  Status s = graphio::EdgeGenerator::New(o, &g);
  if (!s.ok()) Die("generator", "EdgeGenerator::New", s);
  return g;
}

struct Cell {
  double seconds = 0;
  double cpu_seconds = 0;
  uint64_t edges = 0;
  uint64_t txns = 0;
  std::vector<float> lat_us;  // per transaction
};

// Writes streams[t] from thread t in transactions of `batch` edges, until the streams end or
// `seconds` have passed (a transaction started before the deadline completes).
Cell RunCell(System* sys, const std::vector<std::vector<EdgeOp>>& streams, size_t batch,
             double seconds) {
  const int writers = static_cast<int>(streams.size());
  std::vector<std::vector<float>> lat(writers);
  std::vector<uint64_t> written(writers, 0);
  double deadline = 0;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, failed{false};
  Status first_error;
  std::mutex mu;
  std::vector<std::thread> ts;
  for (int t = 0; t < writers; ++t) {
    ts.emplace_back([&, t] {
      const std::vector<EdgeOp>& s = streams[t];
      lat[t].reserve(s.size() / batch + 1);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      for (size_t i = 0; i < s.size() && !failed.load(std::memory_order_relaxed); i += batch) {
        const size_t k = std::min(batch, s.size() - i);
        const double t0 = NowSec();
        if (t0 > deadline) break;
        Status st = sys->Apply(s.data() + i, k);
        lat[t].push_back(static_cast<float>((NowSec() - t0) * 1e6));
        written[t] += k;
        if (!st.ok()) {
          std::lock_guard<std::mutex> g(mu);
          if (first_error.ok()) first_error = st;
          failed = true;
        }
      }
    });
  }
  while (ready.load() < writers) std::this_thread::yield();
  Cell c;
  const double c0 = ProcessCpuSec();
  const double t0 = NowSec();
  deadline = t0 + seconds;
  go.store(true, std::memory_order_release);
  for (auto& t : ts) t.join();
  c.seconds = NowSec() - t0;
  c.cpu_seconds = ProcessCpuSec() - c0;
  if (!first_error.ok()) Die(sys->name(), "durability write", first_error);
  for (int t = 0; t < writers; ++t) {
    c.edges += written[t];
    c.txns += lat[t].size();
    c.lat_us.insert(c.lat_us.end(), lat[t].begin(), lat[t].end());
  }
  return c;
}

Result Make(const std::string& system, const std::string& metric, double value,
            const std::string& unit, const JsonObject& params) {
  return R("durability", system, metric, value, unit, params);
}

// Sum of the sizes of the write-ahead logs in dir (strata: *.wal, rocksdb: *.log).
uint64_t LogBytes(const std::string& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string ext = e.path().extension();
    if ((ext == ".wal" || ext == ".log") && e.is_regular_file(ec)) n += e.file_size(ec);
  }
  return n;
}

}  // namespace

void RunDurabilityJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink) {
  if (system != "strata" && system != "rocksdb") return;
  std::unique_ptr<graphio::EdgeGenerator> gen = Kronecker(cfg.scale, cfg.seed);
  const uint64_t k = std::min<uint64_t>(cfg.durability_edges, gen->num_edges());
  std::vector<EdgeOp> all(k);
  for (uint64_t p = 0; p < k; ++p) {
    graphio::Edge e = gen->EdgeAtPosition(p);
    all[p].u = e.src;
    all[p].v = e.dst;
  }
  std::vector<WalSetting> settings{WalSetting::kOff, WalSetting::kGroup, WalSetting::kSync};
  if (system == "rocksdb") settings.push_back(WalSetting::kBuffered);
  std::vector<int> writer_counts{1};
  if (cfg.threads > 1) writer_counts.push_back(cfg.threads);
  const std::string sub = cfg.dir + "/durability";
  auto config = [&](WalSetting w) {
    SystemConfig c;
    c.dir = sub;
    c.wal_setting = w;
    c.memory_budget = cfg.memory_budget;
    c.memgraph_bytes = cfg.memgraph_bytes;
    c.threads = cfg.threads;
    return c;
  };
  // Warm-up: a throwaway load of a tenth of the stream without a log.
  {
    std::unique_ptr<System> sys = System::Create(system);
    Status s = sys->Open(config(WalSetting::kOff));
    if (!s.ok()) Die(system, "open", s);
    RunCell(sys.get(), {std::vector<EdgeOp>(all.begin(), all.begin() + k / 10)}, 1024, 1e9);
    sys->Close();
    RemoveTree(sub);
  }
  for (WalSetting w : settings) {
    const bool fsyncs = w == WalSetting::kGroup || w == WalSetting::kSync;
    for (size_t batch : {size_t{1}, size_t{64}, size_t{1024}}) {
      const uint64_t n = fsyncs ? std::min<uint64_t>(k, cfg.durability_syncs * batch) : k;
      for (int writers : writer_counts) {
        std::vector<std::vector<EdgeOp>> streams(writers);
        for (uint64_t i = 0; i < n; ++i) {
          const EdgeOp& e = all[i];
          const uint64_t key = std::min(e.u, e.v) << 32 | std::max(e.u, e.v);
          streams[writers == 1 ? 0 : graphio::Mix64(key) % writers].push_back(e);
        }
        std::unique_ptr<System> sys = System::Create(system);
        Status s = sys->Open(config(w));
        if (!s.ok()) Die(system, "open", s);
        Cell c = RunCell(sys.get(), streams, batch, cfg.durability_cell_seconds);
        s = sys->Close();
        if (!s.ok()) Die(system, "close", s);
        RemoveTree(sub);

        JsonObject params;
        params.Str("wal", WalSettingName(w));
        params.Int("writers", writers);
        params.Int("batch", static_cast<int64_t>(batch));
        LatencySummary l = Summarize(&c.lat_us);
        Result a = Make(system, "edges_per_s", c.edges / c.seconds, "edges/s", params);
        a.info.Int("edges", static_cast<int64_t>(c.edges));
        a.info.Int("transactions", static_cast<int64_t>(c.txns));
        a.info.Num("seconds", c.seconds);
        a.info.Num("cpu_seconds", c.cpu_seconds);
        a.info.Int("scale", cfg.scale);
        sink->Add(a);
        sink->Add(Make(system, "p50_us", l.p50, "us", params));
        sink->Add(Make(system, "p99_us", l.p99, "us", params));
        char msg[200];
        snprintf(msg, sizeof(msg), "durability wal=%s writers=%d batch=%zu: %.0f edges/s (%llu edges, p50 %.0f us)",
                 WalSettingName(w), writers, batch, c.edges / c.seconds,
                 static_cast<unsigned long long>(c.edges), l.p50);
        Say(system, msg);
      }
    }
  }
}

void RunRecoveryJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink) {
  if (system != "strata" && system != "rocksdb") return;
  SystemConfig c;
  c.dir = cfg.dir + "/recovery";
  c.wal_setting = WalSetting::kGroup;
  // Nothing may be flushed before the crash: the whole graph lives only in the log.
  c.memgraph_bytes = size_t{4} << 30;
  c.memory_budget = size_t{9} << 30;
  // RocksDB's memtable arena grows in blocks of write_buffer_size / 8: keep it no larger than
  // needed to hold the log's data (the memtable of a log is about the log's size).
  c.write_buffer_bytes = std::max<size_t>(size_t{256} << 20, 4 * cfg.recovery_log_bytes);
  c.threads = cfg.threads;
  constexpr size_t kBatch = 1024;

  // The crashing writer. No thread exists in this process yet, so fork is safe; the child
  // uses no TBB (this process has never started its workers).
  int fds[2];
  if (pipe(fds) != 0) Die(system, "pipe", Status::IOError("pipe failed"));
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) Die(system, "fork", Status::IOError("fork failed"));
  if (pid == 0) {
    close(fds[0]);
    std::unique_ptr<System> sys = System::Create(system);
    Status s = sys->Open(c);
    if (!s.ok()) Die(system, "open", s);
    std::unique_ptr<graphio::EdgeGenerator> gen = Kronecker(cfg.recovery_scale, cfg.seed);
    std::vector<EdgeOp> b(kBatch);
    uint64_t pos = 0;
    for (uint64_t n = 0;; ++n) {
      if (n % 64 == 0 && LogBytes(c.dir) >= cfg.recovery_log_bytes) break;
      if (pos + kBatch > gen->num_edges()) break;
      for (size_t j = 0; j < kBatch; ++j, ++pos) {
        graphio::Edge e = gen->EdgeAtPosition(pos);
        b[j].u = e.src;
        b[j].v = e.dst;
      }
      s = sys->Apply(b.data(), kBatch);
      if (!s.ok()) Die(system, "write", s);
    }
    if (write(fds[1], &pos, sizeof(pos)) != sizeof(pos)) _exit(4);
    _exit(0);  // no Close: a crash after the last acknowledged write
  }
  close(fds[1]);
  uint64_t edges = 0;
  const bool got = read(fds[0], &edges, sizeof(edges)) == sizeof(edges);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(system, "recovery writer", Status::Aborted("status " + std::to_string(status)));
  }
  const uint64_t log_bytes = LogBytes(c.dir);

  c.reopen = true;
  std::unique_ptr<System> sys = System::Create(system);
  const double t0 = NowSec();
  const double c0 = ProcessCpuSec();
  Status s = sys->Open(c);
  const double secs = NowSec() - t0;
  const double cpu = ProcessCpuSec() - c0;
  if (!s.ok()) Die(system, "reopen", s);
  // The last batch written must be back.
  std::unique_ptr<graphio::EdgeGenerator> gen = Kronecker(cfg.recovery_scale, cfg.seed);
  std::unique_ptr<View> view = sys->NewView();
  for (uint64_t p = edges - kBatch; p < edges; ++p) {
    graphio::Edge e = gen->EdgeAtPosition(p);
    if (!view->SearchEdge(e.src, e.dst)) {
      Die(system, "recovery", Status::Corruption("edge at stream position " + std::to_string(p) +
                                                 " missing after recovery"));
    }
  }
  view.reset();
  sys->Close();
  RemoveTree(c.dir);

  JsonObject params;
  params.Str("wal", "group");
  params.Str("phase", "recovery");
  const double gib = log_bytes / double(uint64_t{1} << 30);
  Result a = Make(system, "recovery_s_per_gib", secs / gib, "s/GiB", params);
  a.info.Int("log_bytes", static_cast<int64_t>(log_bytes));
  a.info.Int("edges", static_cast<int64_t>(edges));
  a.info.Num("seconds", secs);
  a.info.Num("cpu_seconds", cpu);
  a.info.Int("scale", cfg.recovery_scale);
  a.info.Str("cache", "warm (the log was just written)");
  sink->Add(a);
  sink->Add(Make(system, "recovery_seconds", secs, "s", params));
  sink->Add(Make(system, "replay_edges_per_s", edges / secs, "edges/s", params));
  char msg[200];
  snprintf(msg, sizeof(msg), "recovery: %.1f MiB of log (%llu edges) in %.2f s = %.1f s/GiB",
           log_bytes / 1048576.0, static_cast<unsigned long long>(edges), secs, secs / gib);
  Say(system, msg);
}

}  // namespace strata::bench
