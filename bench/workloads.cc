#include "bench/workloads.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "bench/csr.h"
#include "bench/util.h"
#include "bench/writers.h"
#include "graphio/generator.h"

namespace strata::bench {

bool WorkloadSet::Has(const std::string& w) const {
  return names.empty() || std::find(names.begin(), names.end(), w) != names.end();
}

namespace {

using graphio::Mix64;

void Log(const std::string& system, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Log(const std::string& system, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  fprintf(stderr, "[%-10s] %s\n", system.c_str(), buf);
  fflush(stderr);
}

[[noreturn]] void Fail(const std::string& system, const std::string& what, const Status& s) {
  Log(system, "FAILED: %s: %s", what.c_str(), s.ToString().c_str());
  fflush(stderr);
  _exit(3);
}

// ---------------------------------------------------------------------------------------------
// Streams.

struct Graph {
  int scale = 0;
  bool weighted = false;
  uint64_t seed = 0;
  uint64_t m = 0;  // stream length
  uint64_t n = 0;  // vertex bound
  std::unique_ptr<graphio::EdgeGenerator> gen;

  uint64_t load_end() const { return m * 8 / 10; }
  uint64_t insert_end() const { return m * 9 / 10; }
};

Graph MakeGraph(int scale, bool weighted, uint64_t seed) {
  Graph g;
  g.scale = scale;
  g.weighted = weighted;
  g.seed = seed;
  graphio::GeneratorOptions o;
  o.model = graphio::GraphModel::kKronecker;
  o.scale = scale;
  o.edge_factor = 16;
  o.seed = seed;
  o.weighted = weighted;
  Status s = graphio::EdgeGenerator::New(o, &g.gen);
  if (!s.ok()) Fail("generator", "EdgeGenerator::New", s);
  g.m = g.gen->num_edges();
  g.n = g.gen->num_vertices();
  return g;
}

// Positions [b, e) of the stream, generated in parallel.
void Generate(const Graph& g, uint64_t b, uint64_t e, std::vector<PackedEdge>* out,
              std::vector<double>* w) {
  out->resize(e - b);
  if (g.weighted) w->resize(e - b);
  tbb::parallel_for(tbb::blocked_range<uint64_t>(b, e, 1 << 14),
                    [&](const tbb::blocked_range<uint64_t>& r) {
                      for (uint64_t p = r.begin(); p < r.end(); ++p) {
                        graphio::Edge x = g.gen->EdgeAtPosition(p);
                        (*out)[p - b] = {static_cast<uint32_t>(x.src), static_cast<uint32_t>(x.dst)};
                        if (g.weighted) (*w)[p - b] = x.weight;
                      }
                    });
}

// The [90%, 100%) part as ops: every insert in order, and after every 20th insert a delete of
// the edge at a random position of the load part.
void MixedOps(const Graph& g, std::vector<PackedEdge>* e, std::vector<double>* w,
              std::vector<uint8_t>* del) {
  std::vector<PackedEdge> ins;
  std::vector<double> insw;
  Generate(g, g.insert_end(), g.m, &ins, &insw);
  e->clear();
  w->clear();
  del->clear();
  for (size_t k = 0; k < ins.size(); ++k) {
    e->push_back(ins[k]);
    if (g.weighted) w->push_back(insw[k]);
    del->push_back(0);
    if ((k + 1) % 20 == 0) {
      const uint64_t pos = Mix64(g.seed * 0x9e3779b97f4a7c15ULL + k) % g.load_end();
      graphio::Edge x = g.gen->EdgeAtPosition(pos);
      e->push_back({static_cast<uint32_t>(x.src), static_cast<uint32_t>(x.dst)});
      if (g.weighted) w->push_back(0);
      del->push_back(1);
    }
  }
}

// Edges whose last op in the mixed part is a delete: (min, max), sorted.
std::vector<std::pair<VertexId, VertexId>> RemovedEdges(const std::vector<PackedEdge>& e,
                                                        const std::vector<uint8_t>& del) {
  std::unordered_set<uint64_t> deleted;
  for (size_t i = 0; i < e.size(); ++i) {
    if (del[i]) deleted.insert(PairKey(e[i].u, e[i].v));
  }
  std::unordered_map<uint64_t, bool> last;
  for (size_t i = 0; i < e.size(); ++i) {
    const uint64_t k = PairKey(e[i].u, e[i].v);
    if (deleted.count(k)) last[k] = del[i] != 0;
  }
  std::vector<std::pair<VertexId, VertexId>> out;
  for (const auto& [k, d] : last) {
    if (d) out.emplace_back(k >> 32, k & 0xffffffffULL);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writers (bench/writers.h).

WriteRun RunWriters(System* sys, const WriterStreams& ws, size_t batch, double series_interval,
                    const std::string& what, bool deciles = false) {
  WriteRun run;
  Status s = RunWriters(sys, ws, batch, series_interval, deciles, &run);
  if (!s.ok()) Fail(sys->name(), what, s);
  return run;
}

// The rate of each tenth of a run's ops (RunWriters with deciles), as results of `workload`
// with params + {"decile": 1..10}, and the last tenth's rate over the first's
// ("fill_rate_ratio"): how much the store slows as it fills.
void AddDecileResults(ResultSink* sink, const std::string& workload, const std::string& system,
                      const JsonObject& params, const WriteRun& run) {
  if (run.decile_at.size() != 10 || run.ops < 10) return;
  std::vector<double> rate(10);
  for (int d = 0; d < 10; ++d) {
    const double dt = run.decile_at[d] - (d == 0 ? 0.0 : run.decile_at[d - 1]);
    rate[d] = dt > 0 ? (static_cast<double>(run.ops) / 10) / dt : 0;
    JsonObject p = params;
    p.Int("decile", d + 1);
    sink->Add(R(workload, system, "decile_edges_per_s", rate[d], "edges/s", p));
  }
  if (rate[0] > 0) {
    Result r = R(workload, system, "fill_rate_ratio", rate[9] / rate[0], "x", params);
    r.info.Str("source", "rate of the last tenth of the ops over the rate of the first tenth");
    sink->Add(r);
  }
  Log(system, "%s deciles (K edges/s): %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f", workload.c_str(),
      rate[0] / 1e3, rate[1] / 1e3, rate[2] / 1e3, rate[3] / 1e3, rate[4] / 1e3, rate[5] / 1e3,
      rate[6] / 1e3, rate[7] / 1e3, rate[8] / 1e3, rate[9] / 1e3);
}

std::string SeriesJson(const std::vector<std::pair<double, uint64_t>>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += "[" + JsonNum(std::round(s[i].first * 1000) / 1000) + ", " + std::to_string(s[i].second) + "]";
  }
  return out + "]";
}

std::string NumbersJson(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + JsonNum(v[i]);
  return out + "]";
}

std::string CdfJson(const LatencySummary& l) {
  std::string out = "[";
  for (size_t i = 0; i < l.cdf.size(); ++i) {
    if (i) out += ", ";
    out += "[" + JsonNum(l.cdf[i].first) + ", " + JsonNum(l.cdf[i].second) + "]";
  }
  return out + "]";
}

// Throughput, time and latency figures of a write run.
void AddWriteResults(ResultSink* sink, const std::string& workload, const std::string& system,
                     const JsonObject& params, WriteRun& run, bool with_series,
                     const JsonObject& extra_info = JsonObject()) {
  LatencySummary l = Summarize(&run.lat_us);
  JsonObject info = extra_info;
  info.Int("ops", static_cast<int64_t>(run.ops));
  info.Int("transactions", static_cast<int64_t>(run.txns));
  info.Num("cpu_seconds", run.cpu_seconds);
  info.Num("writers_finish_spread_s", run.finish_spread);
  info.Raw("latency_cdf_us", CdfJson(l));
  info.Str("latency", "per transaction, every transaction timed");
  if (with_series) info.Raw("series", SeriesJson(run.series));
  Result a = R(workload, system, "edges_per_s", run.ops / run.seconds, "edges/s", params);
  a.info = info;
  sink->Add(a);
  if (run.inserts != run.ops) {
    sink->Add(R(workload, system, "ops_per_s", run.ops / run.seconds, "ops/s", params));
  }
  sink->Add(R(workload, system, "seconds", run.seconds, "s", params));
  sink->Add(R(workload, system, "cpu_seconds", run.cpu_seconds, "s", params));
  sink->Add(R(workload, system, "p50_us", l.p50, "us", params));
  sink->Add(R(workload, system, "p99_us", l.p99, "us", params));
  sink->Add(R(workload, system, "max_us", l.max, "us", params));
}

SystemConfig MakeSystemConfig(const SuiteConfig& cfg, const std::string& sub, bool weighted,
                              bool wal) {
  SystemConfig c;
  c.dir = cfg.dir + "/" + sub;
  c.weighted = weighted;
  c.wal = wal;
  c.memory_budget = cfg.memory_budget;
  c.memgraph_bytes = cfg.memgraph_bytes;
  c.threads = cfg.threads;
  c.pr_cache_bytes = cfg.pr_cache_bytes;
  c.pr_packing = cfg.pr_packing;
  c.pr_group_by_degree = cfg.pr_group_by_degree;
  return c;
}

std::unique_ptr<System> OpenSystem(const std::string& name, const SystemConfig& c) {
  std::unique_ptr<System> sys = System::Create(name);
  if (!sys) Fail(name, "create", Status::InvalidArgument("unknown system"));
  Status s = sys->Open(c);
  if (!s.ok()) Fail(name, "open", s);
  return sys;
}

// ---------------------------------------------------------------------------------------------
// Readers.

struct ReadRun {
  double seconds = 0;
  double cpu_seconds = 0;
  uint64_t ops = 0;
  uint64_t items = 0;  // edges found / neighbors visited
  std::vector<float> lat_us;  // sampled
};

constexpr int kLatencyEvery = 64;

// Each of `threads` readers runs its contiguous share of indexes [0, count); with a
// `budget_s`, a reader stops at the first latency sample taken after the budget ran out, and
// `ops` counts what was done.
template <typename Fn>  // fn(View*, index) -> items
ReadRun RunReaders(System* sys, int threads, uint64_t count, Fn&& fn, double budget_s = 1e9) {
  ReadRun run;
  std::vector<uint64_t> items(threads, 0), done(threads, 0);
  std::vector<std::vector<float>> lat(threads);
  std::vector<std::unique_ptr<View>> views;
  for (int t = 0; t < threads; ++t) views.push_back(sys->NewView());
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      View* v = views[t].get();
      const uint64_t b = count * t / threads, e = count * (t + 1) / threads;
      uint64_t acc = 0, i = b;
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      const double deadline = NowSec() + budget_s;
      for (; i < e; ++i) {
        if ((i & (kLatencyEvery - 1)) == 0) {
          const double t0 = NowSec();
          if (t0 > deadline) break;
          acc += fn(v, i);
          lat[t].push_back(static_cast<float>((NowSec() - t0) * 1e6));
        } else {
          acc += fn(v, i);
        }
      }
      items[t] = acc;
      done[t] = i - b;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const double c0 = ProcessCpuSec();
  const double t0 = NowSec();
  go.store(true, std::memory_order_release);
  for (auto& t : ts) t.join();
  run.seconds = NowSec() - t0;
  run.cpu_seconds = ProcessCpuSec() - c0;
  for (int t = 0; t < threads; ++t) {
    run.items += items[t];
    run.ops += done[t];
    run.lat_us.insert(run.lat_us.end(), lat[t].begin(), lat[t].end());
    Status s = views[t]->status();
    if (!s.ok()) Fail(sys->name(), "read", s);
  }
  return run;
}

// The sample's description, and the digest every system must agree on (`items_name`=total)
// when the whole sample ran; a run the time budget stopped is a different prefix per system
// and carries no digest.
void SampleInfo(JsonObject* info, const ReadRun& run, uint64_t count, const char* items_name,
                const std::string& sample) {
  if (run.ops == count) {
    info->Str("digest", std::string(items_name) + "=" + std::to_string(run.items));
    info->Str("sample", sample);
  } else {
    info->Str("sample", sample + "; stopped by the time budget after " + std::to_string(run.ops) +
                            " operations (a prefix of each reader's part)");
  }
}

void AddReadResults(ResultSink* sink, const std::string& workload, const std::string& system,
                    const JsonObject& params, ReadRun& run, const char* items_name,
                    const JsonObject& extra_info) {
  LatencySummary l = Summarize(&run.lat_us);
  JsonObject info = extra_info;
  info.Int("ops", static_cast<int64_t>(run.ops));
  info.Int(items_name, static_cast<int64_t>(run.items));
  info.Num("cpu_seconds", run.cpu_seconds);
  info.Raw("latency_cdf_us", CdfJson(l));
  info.Str("latency", "per operation, every 64th operation timed");
  Result a = R(workload, system, "ops_per_s", run.ops / run.seconds, "ops/s", params);
  a.info = info;
  sink->Add(a);
  if (workload == "scan_nbr") {
    sink->Add(R(workload, system, "edges_per_s", run.items / run.seconds, "edges/s", params));
  }
  sink->Add(R(workload, system, "seconds", run.seconds, "s", params));
  sink->Add(R(workload, system, "cpu_seconds", run.cpu_seconds, "s", params));
  sink->Add(R(workload, system, "p50_us", l.p50, "us", params));
  sink->Add(R(workload, system, "p99_us", l.p99, "us", params));
  sink->Add(R(workload, system, "max_us", l.max, "us", params));
}

// ---------------------------------------------------------------------------------------------
// Analytics.

enum class Algo { kBfs, kPr, kSssp, kWcc, kTc };

const char* AlgoName(Algo a) {
  switch (a) {
    case Algo::kBfs: return "bfs";
    case Algo::kPr: return "pr";
    case Algo::kSssp: return "sssp";
    case Algo::kWcc: return "wcc";
    case Algo::kTc: return "tc";
  }
  return "?";
}

Status RunAlgo(View* v, Algo a, VertexId source, int iterations, Digest* d) {
  switch (a) {
    case Algo::kBfs: return v->Bfs(source, d);
    case Algo::kPr: return v->PageRank(iterations, d);
    case Algo::kSssp: return v->Sssp(source, d);
    case Algo::kWcc: return v->Wcc(d);
    case Algo::kTc: return v->Tc(d);
  }
  return Status::InvalidArgument("algo");
}

// A vertex with neighbors: the first endpoint of the stream's first edges that has one.
VertexId PickSource(System* sys, const Graph& g) {
  std::unique_ptr<View> v = sys->NewView();
  for (uint64_t p = 0; p < g.m; ++p) {
    graphio::Edge e = g.gen->EdgeAtPosition(p);
    if (v->ScanNeighbors(e.src) > 0) return e.src;
  }
  return 0;
}

// StrataGraph's PageRank runs: what the kernel's list cache had (Digest), into a row's info.
void AddListCache(const Digest& d, JsonObject* info) {
  if (d.list_cache_budget < 0) return;
  info->Int("list_cache_budget", d.list_cache_budget);
  info->Int("list_cache_bytes", d.list_cache_bytes);
  info->Int("list_cache_packed_blocks", d.list_cache_packed_blocks);
  info->Int("list_cache_streamed_blocks", d.list_cache_streamed_blocks);
}

// The private arenas' share of a heap reading (the memgraphs' and the kernels' arenas): into a
// row's info as private_{resident,allocated,dirty}_<when>, and as log text.
void AddPrivateArenas(const HeapBreakdown& h, const std::string& when, JsonObject* info) {
  info->Int("private_resident_" + when, static_cast<int64_t>(h.private_resident));
  info->Int("private_allocated_" + when, static_cast<int64_t>(h.private_allocated));
  info->Int("private_dirty_" + when, static_cast<int64_t>(h.private_dirty));
  info->Int("kernel_resident_" + when, static_cast<int64_t>(h.kernel_resident));
  info->Int("kernel_allocated_" + when, static_cast<int64_t>(h.kernel_allocated));
}
std::string PrivateArenasText(const HeapBreakdown& h) {
  char buf[224];
  snprintf(buf, sizeof(buf),
           "private arenas %.1f / %.1f MiB, %.1f MiB of it freed pages kept; of them the "
           "kernels' %.1f / %.1f MiB",
           h.private_resident / 1048576.0, h.private_allocated / 1048576.0,
           h.private_dirty / 1048576.0, h.kernel_resident / 1048576.0,
           h.kernel_allocated / 1048576.0);
  return buf;
}

// The shared warm-up's PageRank iterations for the system (SuiteConfig::shared_warmup).
int WarmupIterations(const SuiteConfig& cfg, const std::string& system) {
  return system == "rocksdb" && cfg.rocksdb_warmup_one_pass ? 0 : 1;
}

// Warm-up run + `runs` timed runs, median reported; or one cold run per drop of the page cache.
void RunAnalytics(const SuiteConfig& cfg, System* sys, ResultSink* sink, Algo algo,
                  VertexId source, int runs, bool cold, const char* graph, int graph_scale,
                  bool weighted) {
  const std::string sys_name = sys->name();
  JsonObject params;
  params.Str("graph", graph);
  params.Int("threads", cfg.threads);
  if (algo == Algo::kPr) {
    params.Int("iterations", cfg.pr_iterations);
    // StrataGraph's kernel only: baselines match the row by a subset of its params.
    const bool strata = sys_name == "strata" || sys_name == "strata-mem";
    if (strata && cfg.pr_cache_bytes) params.Int("cache_bytes", static_cast<int64_t>(*cfg.pr_cache_bytes));
    if (strata && cfg.pr_packing) params.Str("packing", PackingName(*cfg.pr_packing));
    if (strata && cfg.pr_group_by_degree) {
      params.Str("group_by_degree", *cfg.pr_group_by_degree ? "on" : "off");
    }
  }
  if (sys_name != "csr") params.Str("cache", cold ? "cold" : "warm");
  std::vector<double> secs, cpus, faults, prepares, iterates, groups;
  std::string digest;
  Digest last;  // the last measured run's (its list cache)
  std::unique_ptr<View> view = sys->NewView();
  if (!cold && !cfg.shared_warmup) {
    // Warm-up: one run (one iteration for PageRank, which reads everything each iteration).
    Digest d;
    Status s = RunAlgo(view.get(), algo, source, 1, &d);
    if (!s.ok()) Fail(sys_name, AlgoName(algo), s);
    if (algo != Algo::kPr) digest = d.text;
  }
  double spent = 0;
  for (int r = 0; r < runs; ++r) {
    if (r > 0 && spent > cfg.analytics_budget_seconds) break;
    if (cold) {
      view.reset();
      DropPageCache();
      view = sys->NewView();
    }
    Digest d;
    const double c0 = ProcessCpuSec();
    const uint64_t f0 = ProcessMinorFaults();
    Status s = RunAlgo(view.get(), algo, source, cfg.pr_iterations, &d);
    const double c1 = ProcessCpuSec();
    if (!s.ok()) Fail(sys_name, AlgoName(algo), s);
    secs.push_back(d.seconds);
    if (d.prepare_seconds >= 0) prepares.push_back(d.prepare_seconds);
    if (d.iterate_seconds >= 0) iterates.push_back(d.iterate_seconds);
    if (d.group_seconds >= 0) groups.push_back(d.group_seconds);
    cpus.push_back(c1 - c0);
    faults.push_back(static_cast<double>(ProcessMinorFaults() - f0));
    spent += d.seconds;
    if (!digest.empty() && d.text != digest) {
      Log(sys_name, "WARNING: %s digest changed between runs: %s vs %s", AlgoName(algo),
          digest.c_str(), d.text.c_str());
    }
    digest = d.text;
    last = d;
  }
  JsonObject info;
  info.Int("runs", static_cast<int64_t>(secs.size()));
  info.Bool("warmup_run", !cold);
  if (!cold) {
    info.Str("warmup", !cfg.shared_warmup ? "one run of the kernel (PageRank: one iteration)"
                       : WarmupIterations(cfg, sys_name) == 0
                           ? "one pass over every list before the graph's kernels (PageRank's "
                             "degree count, no iteration)"
                           : "one PageRank iteration over the graph before its kernels");
  }
  info.Str("digest", digest);
  info.Int("scale", graph_scale);
  info.Bool("weighted", weighted);
  if (algo == Algo::kBfs || algo == Algo::kSssp) info.Int("source", static_cast<int64_t>(source));
  info.Raw("all_seconds", NumbersJson(secs));
  AddListCache(last, &info);
  if (!prepares.empty()) info.Num("prepare_seconds_median", Median(prepares));
  if (!iterates.empty()) info.Num("iterate_seconds_median", Median(iterates));
  if (!groups.empty()) info.Num("group_seconds_median", Median(groups));
  // Pages the run faulted in (the process's, so a concurrent thread's count too): what a
  // kernel's freed arrays cost the next run (analytics/kernel_memory.h).
  info.Num("minor_faults_median", Median(faults));
  Result a = R(AlgoName(algo), sys_name, "seconds", Median(secs), "s", params);
  a.info = info;
  sink->Add(a);
  sink->Add(R(AlgoName(algo), sys_name, "cpu_seconds", Median(cpus), "s", params));
  char prepare[96] = "";
  if (!prepares.empty() && !iterates.empty()) {
    snprintf(prepare, sizeof(prepare), " (layout and list cache %.3f s, iterations %.3f s)",
             Median(prepares), Median(iterates));
  }
  Log(sys_name, "%s on %s (%s): median %.3f s of %zu%s, %s", AlgoName(algo), graph,
      cold ? "cold" : "warm", Median(secs), secs.size(), prepare, digest.c_str());
}

// The main graph as the update phases leave it: the whole stream, less the edges the
// insert:delete phase deletes last (what the static systems build).
EdgeList FinalGraph(const Graph& g) {
  EdgeList list;
  list.num_vertices = g.n;
  std::vector<double> w;
  Generate(g, 0, g.m, &list.edges, &w);
  std::vector<PackedEdge> e;
  std::vector<uint8_t> del;
  MixedOps(g, &e, &w, &del);
  list.removed = RemovedEdges(e, del);
  return list;
}

// PageRank on strata-mem's snapshot against the CSR kernel on the same graph (built here from
// the same stream, deletions removed), `pairs` runs of each alternated in this one process, the
// order swapped every pair. The two systems' own medians come from separate jobs minutes apart
// on a machine whose speed drifts by up to 2x (docs/benchmarks.md); a pair is seconds apart.
// The value is the median of the pairs' ratios; the digests must agree (same graph, same ranks).
void RunPrPaired(const SuiteConfig& cfg, System* sys, const Graph& g, int pairs,
                 ResultSink* sink) {
  const std::string name = sys->name();
  std::unique_ptr<System> csr = OpenSystem("csr", MakeSystemConfig(cfg, "pr-paired", false, false));
  {
    Status s = csr->Build(FinalGraph(g));
    if (!s.ok()) Fail(name, "pr paired: CSR build", s);
  }
  std::unique_ptr<View> views[2] = {sys->NewView(), csr->NewView()};
  for (auto& v : views) {  // one iteration each: both graphs' pages touched once before timing
    Digest d;
    Status s = v->PageRank(1, &d);
    if (!s.ok()) Fail(name, "pr paired: warm-up", s);
  }
  std::vector<double> secs[2], ratios;
  std::string digest[2];
  Digest last;  // strata-mem's last run: its list cache
  for (int k = 0; k < pairs; ++k) {
    for (int j = 0; j < 2; ++j) {
      const int which = (k + j) % 2;  // pair k runs strata-mem first when k is even
      Digest d;
      Status s = views[which]->PageRank(cfg.pr_iterations, &d);
      if (!s.ok()) Fail(name, "pr paired", s);
      secs[which].push_back(d.seconds);
      digest[which] = d.text;
      if (which == 0) last = d;
    }
    ratios.push_back(secs[0].back() / secs[1].back());
  }
  const bool same = digest[0] == digest[1];
  if (!same) {
    Log(name, "WARNING: pr paired: digests differ: %s (%s) vs %s (csr)", digest[0].c_str(),
        name.c_str(), digest[1].c_str());
  }
  JsonObject params;
  params.Str("graph", "main");
  params.Int("threads", cfg.threads);
  params.Int("iterations", cfg.pr_iterations);
  if (cfg.pr_cache_bytes) params.Int("cache_bytes", static_cast<int64_t>(*cfg.pr_cache_bytes));
  if (cfg.pr_packing) params.Str("packing", PackingName(*cfg.pr_packing));
  if (cfg.pr_group_by_degree) params.Str("group_by_degree", *cfg.pr_group_by_degree ? "on" : "off");
  params.Str("baseline", "csr");
  Result r = R("pr", name, "seconds_ratio_paired", Median(ratios), "x", params);
  r.info.Int("pairs", pairs);
  r.info.Str("order", "alternated: strata-mem first in even pairs, CSR first in odd ones");
  r.info.Str("warmup", "one PageRank iteration on each before the pairs");
  r.info.Raw("seconds", NumbersJson(secs[0]));
  r.info.Raw("csr_seconds", NumbersJson(secs[1]));
  r.info.Raw("ratios", NumbersJson(ratios));
  r.info.Bool("digests_match", same);
  AddListCache(last, &r.info);
  sink->Add(r);
  Log(name, "pr paired with csr (%d pairs, alternated): median ratio %.2f (%.3f s / %.3f s median)",
      pairs, Median(ratios), Median(secs[0]), Median(secs[1]));
}

bool DiskSystem(const std::string& s) { return s == "strata" || s == "rocksdb"; }

int AnalyticsRuns(const SuiteConfig& cfg, const std::string& system) {
  return system == "rocksdb" ? cfg.rocksdb_analytics_runs : cfg.analytics_runs;
}

// Every kernel of `algos` that `only` names, warm (all systems) then cold (disk systems, when
// the page cache can be dropped and `cold` allows), on one loaded graph.
void RunAnalyticsSet(const SuiteConfig& cfg, System* sys, ResultSink* sink,
                     const std::vector<Algo>& algos, const WorkloadSet& only, VertexId source,
                     const char* graph, int scale, bool weighted, bool cold,
                     bool cold_tc = true) {
  const int runs = AnalyticsRuns(cfg, sys->name());
  if (cfg.shared_warmup &&
      std::any_of(algos.begin(), algos.end(), [&](Algo a) { return only.Has(AlgoName(a)); })) {
    std::unique_ptr<View> view = sys->NewView();
    Digest d;
    const int iterations = WarmupIterations(cfg, sys->name());
    Status s = RunAlgo(view.get(), Algo::kPr, source, iterations, &d);
    if (!s.ok()) Fail(sys->name(), "warm-up", s);
    Log(sys->name(), "warm-up on %s: PageRank, %d iteration(s), %.3f s", graph, iterations,
        d.seconds);
  }
  for (Algo a : algos) {
    if (only.Has(AlgoName(a))) RunAnalytics(cfg, sys, sink, a, source, runs, false, graph, scale, weighted);
  }
  if (!DiskSystem(sys->name()) || !cfg.can_drop_cache || !cold) return;
  for (Algo a : algos) {
    if (!only.Has(AlgoName(a)) || (a == Algo::kTc && !cold_tc)) continue;
    RunAnalytics(cfg, sys, sink, a, source, 1, true, graph, scale, weighted);
  }
}

// Loads a whole graph (all positions) into a dynamic system in batches of 1024 with the
// configured writer threads, or builds the CSR from it. Used by jobs that measure reads only.
void LoadWhole(const SuiteConfig& cfg, System* sys, const Graph& g) {
  std::vector<PackedEdge> e;
  std::vector<double> w;
  Generate(g, 0, g.m, &e, &w);
  if (!sys->dynamic()) {
    EdgeList list;
    list.num_vertices = g.n;
    list.edges = std::move(e);
    list.weights = std::move(w);
    Status s = sys->Build(list);
    if (!s.ok()) Fail(sys->name(), "build", s);
    return;
  }
  WriterStreams streams = SplitForWriters(e, w, {}, cfg.threads);
  e.clear();
  e.shrink_to_fit();
  w.clear();
  w.shrink_to_fit();
  WriteRun run = RunWriters(sys, streams, 1024, 1.0, "load");
  Log(sys->name(), "loaded scale %d: %.0f edges/s", g.scale, run.ops / run.seconds);
  Status s = sys->Persist();
  if (!s.ok()) Fail(sys->name(), "persist", s);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// insert: load throughput into a fresh store, batches of 1 and 1024, 1 and N writer threads,
// WAL off and on.

void RunInsertJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink) {
  if (system == "csr") return;
  Graph g = MakeGraph(cfg.scale, false, cfg.seed);
  const uint64_t k = std::min<uint64_t>(cfg.insert_edges, g.m);
  std::vector<PackedEdge> all;
  std::vector<double> noweights;
  Generate(g, 0, k, &all, &noweights);
  std::vector<int> thread_counts{1};
  if (cfg.threads > 1) thread_counts.push_back(cfg.threads);
  std::vector<bool> wals{false};
  if (system != "strata-mem") wals.push_back(true);

  // Warm-up: a throwaway load of a tenth of the edges.
  {
    std::unique_ptr<System> sys = OpenSystem(system, MakeSystemConfig(cfg, "insert-warmup", false, false));
    std::vector<PackedEdge> part(all.begin(), all.begin() + k / 10);
    WriterStreams st = SplitForWriters(part, {}, {}, 1);
    RunWriters(sys.get(), st, 1024, 1.0, "warm-up");
    sys->Close();
    RemoveTree(cfg.dir + "/insert-warmup");
  }
  for (bool wal : wals) {
    struct Config {
      size_t batch;
      int threads;
      uint64_t n;
      const WriterStreams* streams;  // the first n edges for the threads
      std::vector<WriteRun> runs;
    };
    // One split per (threads, n): the batch sizes share it, and the rounds reuse it.
    std::map<std::pair<int, uint64_t>, WriterStreams> splits;
    std::vector<Config> configs;
    for (size_t batch : {size_t{1}, size_t{1024}}) {
      for (int threads : thread_counts) {
        const uint64_t n = wal && batch == 1 ? std::min<uint64_t>(k, cfg.insert_sync_edges) : k;
        auto [it, fresh] = splits.try_emplace({threads, n});
        if (fresh) {
          std::vector<PackedEdge> part(all.begin(), all.begin() + n);
          it->second = SplitForWriters(part, {}, {}, threads);
        }
        configs.push_back(Config{batch, threads, n, &it->second, {}});
      }
    }
    // Rounds of every configuration once, in the same order: a stretch of time in which the
    // machine runs slower then slows one run of each configuration, not all runs of one, and
    // the ratios between configurations (2 writers / 1, batch / single: issue 28's targets)
    // compare runs made moments apart.
    const int runs_off =
        system == "rocksdb" ? std::min(cfg.insert_runs, cfg.rocksdb_insert_runs) : cfg.insert_runs;
    const int nruns = wal ? cfg.insert_wal_runs : runs_off;
    for (int r = 0; r < nruns; ++r) {
      for (Config& c : configs) {
        const std::string sub = "insert";
        std::unique_ptr<System> sys = OpenSystem(system, MakeSystemConfig(cfg, sub, false, wal));
        c.runs.push_back(RunWriters(sys.get(), *c.streams, c.batch, 0.25, "insert"));
        sys->Close();
        RemoveTree(cfg.dir + "/" + sub);
      }
    }
    for (Config& c : configs) {
      // The median run by throughput.
      std::sort(c.runs.begin(), c.runs.end(),
                [](const WriteRun& a, const WriteRun& b) { return a.seconds < b.seconds; });
      WriteRun& med = c.runs[c.runs.size() / 2];
      JsonObject params;
      params.Int("batch", static_cast<int64_t>(c.batch));
      params.Int("threads", c.threads);
      params.Str("wal", wal ? "on" : "off");
      JsonObject info;
      info.Int("runs", nruns);
      info.Str("run_order", "rounds");  // every configuration once per round
      info.Int("scale", cfg.scale);
      Log(system,
          "insert batch=%zu threads=%d wal=%s: %.0f edges/s (%llu edges, median of %d; writers' "
          "ends %.3f s apart)",
          c.batch, c.threads, wal ? "on" : "off", med.ops / med.seconds,
          static_cast<unsigned long long>(c.n), nruns, med.finish_spread);
      AddWriteResults(sink, "insert", system, params, med, false, info);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The update load's fill ratio, paired.

void RunFillPairedJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink) {
  Graph g = MakeGraph(cfg.scale, false, cfg.seed);
  const uint64_t n = g.load_end();
  const uint64_t tenth = n / 10;
  const int rounds = std::max(1, cfg.fill_paired_rounds);
  auto streams = [&](uint64_t b, uint64_t e) {
    std::vector<PackedEdge> edges;
    std::vector<double> w;
    Generate(g, b, e, &edges, &w);
    return SplitForWriters(edges, w, {}, cfg.threads);
  };
  std::unique_ptr<System> full =
      OpenSystem(system, MakeSystemConfig(cfg, "fill-full", false, false));
  {
    WriteRun load = RunWriters(full.get(), streams(0, n - tenth), 1024, 1.0, "fill paired load");
    Log(system, "fill paired: loaded the first %.0f%% of the update load, %.0f edges/s",
        100.0 * static_cast<double>(n - tenth) / static_cast<double>(n), load.ops / load.seconds);
  }
  std::unique_ptr<System> fresh =
      OpenSystem(system, MakeSystemConfig(cfg, "fill-fresh", false, false));
  double sec_first = 0, sec_last = 0;
  uint64_t ops_first = 0, ops_last = 0;
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    const uint64_t f0 = tenth * r / rounds, f1 = tenth * (r + 1) / rounds;
    const WriterStreams first = streams(f0, f1);
    const WriterStreams last = streams(n - tenth + f0, n - tenth + f1);
    WriteRun a, b;
    // Alternate which side goes first, so neither always follows the other.
    if (r % 2 == 0) {
      a = RunWriters(fresh.get(), first, 1024, 1.0, "fill paired first tenth");
      b = RunWriters(full.get(), last, 1024, 1.0, "fill paired last tenth");
    } else {
      b = RunWriters(full.get(), last, 1024, 1.0, "fill paired last tenth");
      a = RunWriters(fresh.get(), first, 1024, 1.0, "fill paired first tenth");
    }
    sec_first += a.seconds;
    sec_last += b.seconds;
    ops_first += a.ops;
    ops_last += b.ops;
    ratios.push_back((b.ops / b.seconds) / (a.ops / a.seconds));
  }
  const double rate_first = ops_first / sec_first, rate_last = ops_last / sec_last;
  JsonObject p;
  p.Str("phase", "load");
  p.Int("batch", 1024);
  p.Int("threads", cfg.threads);
  Result r = R("update", system, "fill_rate_ratio_paired", rate_last / rate_first, "x", p);
  r.info.Int("rounds", rounds);
  r.info.Raw("ratio_by_round", NumbersJson(ratios));
  r.info.Num("first_tenth_edges_per_s", rate_first);
  r.info.Num("last_tenth_edges_per_s", rate_last);
  r.info.Str("source",
             "the last tenth of the update load into a store holding the first 90%, in slices "
             "alternated with slices of the first tenth into a fresh store; the two rates' ratio");
  sink->Add(r);
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  Log(system,
      "fill paired (%d rounds): last tenth %.0f edges/s, first tenth %.0f edges/s, ratio %.2f "
      "(rounds %.2f-%.2f)",
      rounds, rate_last, rate_first, rate_last / rate_first, *lo, *hi);
  full->Close();
  fresh->Close();
  RemoveTree(cfg.dir + "/fill-full");
  RemoveTree(cfg.dir + "/fill-fresh");
}

// ---------------------------------------------------------------------------------------------
// The main graph: update (80/20), memory, search_edge, scan_nbr, bfs, pr, wcc, mixed.

void RunMainJob(const SuiteConfig& cfg, const std::string& system, const WorkloadSet& only,
                ResultSink* sink) {
  Graph g = MakeGraph(cfg.scale, false, cfg.seed);
  const uint64_t rss0 = CurrentRssBytes();
  const IoCounters io0 = ReadIoCounters();
  std::unique_ptr<System> sys = OpenSystem(system, MakeSystemConfig(cfg, "main", false, false));
  const int T = cfg.threads;
  uint64_t ops_applied = 0;
  uint64_t buffer_bytes = 0;
  JsonObject common_info;
  common_info.Int("scale", cfg.scale);
  common_info.Int("stream_edges", static_cast<int64_t>(g.m));

  if (sys->dynamic()) {
    // The memgraph arenas' size classes ranked by the room their slabs hold unused, after each
    // phase: where the slack the mixed workload starts with is made.
    auto log_bins = [&](const char* phase) {
      Log(system, "the private arenas' bins after the %s: %s", phase,
          PrivateBinsText(ReadHeapBreakdown(), 4).c_str());
    };
    // load: the first 80% in batches of 1024.
    {
      std::vector<PackedEdge> e;
      std::vector<double> w;
      Generate(g, 0, g.load_end(), &e, &w);
      WriterStreams streams = SplitForWriters(e, w, {}, T);
      buffer_bytes = e.size() * sizeof(PackedEdge) * 2;
      e.clear();
      e.shrink_to_fit();
      WriteRun run = RunWriters(sys.get(), streams, 1024, cfg.series_interval, "update load",
                                /*deciles=*/true);
      ops_applied += run.ops;
      JsonObject p;
      p.Str("phase", "load");
      p.Int("batch", 1024);
      p.Int("threads", T);
      p.Str("wal", "off");
      Log(system, "update load (80%%, batch 1024): %.0f edges/s (writers' ends %.3f s apart)",
          run.ops / run.seconds, run.finish_spread);
      log_bins("load");
      if (only.Has("update")) {
        AddWriteResults(sink, "update", system, p, run, true, common_info);
        AddDecileResults(sink, "update", system, p, run);
      }
    }
    // insert: [80%, 90%) as single-edge transactions.
    {
      std::vector<PackedEdge> e;
      std::vector<double> w;
      Generate(g, g.load_end(), g.insert_end(), &e, &w);
      WriterStreams streams = SplitForWriters(e, w, {}, T);
      WriteRun run = RunWriters(sys.get(), streams, 1, cfg.series_interval, "update insert");
      ops_applied += run.ops;
      JsonObject p;
      p.Str("phase", "insert");
      p.Int("batch", 1);
      p.Int("threads", T);
      p.Str("wal", "off");
      Log(system, "update insert (10%%, single-edge): %.0f edges/s", run.ops / run.seconds);
      log_bins("single-edge inserts");
      if (only.Has("update")) AddWriteResults(sink, "update", system, p, run, false, common_info);
    }
    // insert_delete: [90%, 100%) with one delete per 20 inserts, single-edge transactions.
    {
      std::vector<PackedEdge> e;
      std::vector<double> w;
      std::vector<uint8_t> del;
      MixedOps(g, &e, &w, &del);
      WriterStreams streams = SplitForWriters(e, w, del, T);
      WriteRun run = RunWriters(sys.get(), streams, 1, cfg.series_interval, "update insert_delete");
      ops_applied += run.ops;
      JsonObject p;
      p.Str("phase", "insert_delete");
      p.Int("batch", 1);
      p.Int("threads", T);
      p.Str("wal", "off");
      Log(system, "update insert:delete 20:1 (10%%, single-edge): %.0f ops/s", run.ops / run.seconds);
      log_bins("inserts and deletes");
      if (only.Has("update")) AddWriteResults(sink, "update", system, p, run, false, common_info);
    }
    const double t0 = NowSec();
    Status s = sys->Persist();
    if (!s.ok()) Fail(system, "persist", s);
    const double persist_s = NowSec() - t0;
    SystemStats st = sys->Stats();
    const IoCounters io1 = ReadIoCounters();
    const double edge_bytes = 16.0 * static_cast<double>(ops_applied);
    JsonObject p;
    JsonObject info = common_info;
    info.Int("stored_edges", static_cast<int64_t>(st.stored_edges));
    info.Num("persist_seconds", persist_s);
    info.Str("engine", st.note);
    info.Str("edge_bytes", "16 bytes (src, dst) per op applied");
    if (DiskSystem(system)) {
      Result wa = R("update", system, "write_amp", st.write_bytes / edge_bytes, "x", p);
      wa.info = info;
      wa.info.Str("source", system == "strata" ? "DBStats flush_bytes + compaction_bytes"
                                               : "statistics FLUSH_WRITE_BYTES + COMPACT_WRITE_BYTES");
      sink->Add(wa);
      Result iw = R("update", system, "io_write_amp",
                    (io1.write_bytes - io0.write_bytes) / edge_bytes, "x", p);
      iw.info.Str("source", "/proc/self/io write_bytes (everything the process dirtied)");
      sink->Add(iw);
      Result db = R("insert", system, "disk_bytes_per_edge",
                    static_cast<double>(st.disk_bytes) / st.stored_edges, "B/directed edge", p);
      db.info = info;
      db.info.Int("disk_bytes", static_cast<int64_t>(st.disk_bytes));
      sink->Add(db);
      Log(system, "persist %.2f s; disk %.1f B/edge; write amp %.2f (io %.2f)", persist_s,
          static_cast<double>(st.disk_bytes) / st.stored_edges, st.write_bytes / edge_bytes,
          (io1.write_bytes - io0.write_bytes) / edge_bytes);
    }
    if (st.memory_bytes && system == "strata-mem") {
      Result m = R("insert", system, "memory_bytes_per_edge",
                   static_cast<double>(st.memory_bytes) / st.stored_edges, "B/directed edge", p);
      m.info = info;
      m.info.Int("memory_bytes", static_cast<int64_t>(st.memory_bytes));
      m.info.Str("source", "DBStats::memgraph_bytes (the tier's jemalloc arena counter)");
      sink->Add(m);
      Log(system, "memory %.1f B/directed edge (%llu edges)",
          static_cast<double>(st.memory_bytes) / st.stored_edges,
          static_cast<unsigned long long>(st.stored_edges));
    }
    Result rs = R("insert", system, "rss_bytes", static_cast<double>(CurrentRssBytes()) - static_cast<double>(rss0), "B", p);
    rs.info.Str("source", "VmRSS after the load and persist minus VmRSS before open; buffers freed");
    rs.info.Int("stored_edges", static_cast<int64_t>(st.stored_edges));
    sink->Add(rs);
  } else {
    EdgeList list = FinalGraph(g);
    buffer_bytes = list.edges.size() * sizeof(PackedEdge);
    const double t0 = NowSec();
    Status s = sys->Build(list);
    if (!s.ok()) Fail(system, "build", s);
    const double build_s = NowSec() - t0;
    list = EdgeList();
    SystemStats st = sys->Stats();
    JsonObject p;
    JsonObject info = common_info;
    info.Int("stored_edges", static_cast<int64_t>(st.stored_edges));
    info.Num("build_seconds", build_s);
    info.Str("layout", "64-bit offsets, 32-bit neighbor IDs, no weights");
    Result m = R("insert", system, "memory_bytes_per_edge",
                 static_cast<double>(st.memory_bytes) / st.stored_edges, "B/directed edge", p);
    m.info = info;
    m.info.Int("memory_bytes", static_cast<int64_t>(st.memory_bytes));
    sink->Add(m);
    sink->Add(R("insert", system, "build_seconds", build_s, "s", p));
    Result rs = R("insert", system, "rss_bytes", static_cast<double>(CurrentRssBytes()) - static_cast<double>(rss0), "B", p);
    rs.info.Str("source", "VmRSS after the build minus VmRSS before; edge list freed");
    sink->Add(rs);
    Log(system, "built in %.2f s: %llu arcs, %.2f B/directed edge", build_s,
        static_cast<unsigned long long>(st.stored_edges),
        static_cast<double>(st.memory_bytes) / st.stored_edges);
  }

  {
    Result pk = R("insert", system, "peak_rss_bytes", static_cast<double>(PeakRssBytes()), "B",
                  JsonObject());
    pk.info.Str("source", sys->dynamic()
                              ? "VmHWM of the process after loading the main graph (stream buffers included)"
                              : "VmHWM of the process after building the CSR (edge list included)");
    pk.info.Int("edge_buffer_bytes", static_cast<int64_t>(buffer_bytes));
    sink->Add(pk);
  }

  // search_edge: a 20% sample of the stream's edges (with replacement), warm-up on 1%.
  JsonObject rp;
  rp.Int("threads", T);
  if (system != "csr") rp.Str("cache", "warm");
  auto sample_edge = [&](uint64_t salt, uint64_t i) {
    return g.gen->EdgeAtPosition(Mix64(salt + i * 0x9e3779b97f4a7c15ULL) % g.m);
  };
  if (only.Has("search_edge")) {
    const uint64_t count = std::min(g.m / 5, cfg.sample_cap);
    std::vector<std::pair<VertexId, VertexId>> sample(count), warm(count / 20);
    tbb::parallel_for(uint64_t{0}, count, [&](uint64_t i) {
      graphio::Edge e = sample_edge(g.seed * 7 + 1, i);
      sample[i] = {e.src, e.dst};
    });
    for (uint64_t i = 0; i < warm.size(); ++i) {
      graphio::Edge e = sample_edge(g.seed * 7 + 2, i);
      warm[i] = {e.src, e.dst};
    }
    RunReaders(sys.get(), T, warm.size(),
               [&](View* v, uint64_t i) -> uint64_t { return v->SearchEdge(warm[i].first, warm[i].second); });
    ReadRun run = RunReaders(
        sys.get(), T, count,
        [&](View* v, uint64_t i) -> uint64_t { return v->SearchEdge(sample[i].first, sample[i].second); },
        cfg.read_budget_seconds);
    JsonObject info = common_info;
    SampleInfo(&info, run, count, "found", count < g.m / 5 ? "20% of the stream's edges, capped at " +
                                                              std::to_string(count) + " operations"
                                                        : "20% of the stream's edges");
    Log(system, "search_edge: %.0f ops/s (%llu of %llu found)", run.ops / run.seconds,
        static_cast<unsigned long long>(run.items), static_cast<unsigned long long>(run.ops));
    AddReadResults(sink, "search_edge", system, rp, run, "found", info);
  }
  // scan_nbr: 20% of the vertex bound, each the endpoint of a random edge (degree-biased).
  if (only.Has("scan_nbr")) {
    const uint64_t count = std::min(g.n / 5, cfg.sample_cap);
    auto pick = [&](uint64_t salt, uint64_t i) {
      graphio::Edge e = sample_edge(salt, i);
      return (Mix64(salt ^ i) & 1) ? e.src : e.dst;
    };
    std::vector<VertexId> sample(count), warm(count / 20);
    tbb::parallel_for(uint64_t{0}, count, [&](uint64_t i) { sample[i] = pick(g.seed * 11 + 1, i); });
    for (uint64_t i = 0; i < warm.size(); ++i) warm[i] = pick(g.seed * 11 + 2, i);
    RunReaders(sys.get(), T, warm.size(),
               [&](View* v, uint64_t i) -> uint64_t { return v->ScanNeighbors(warm[i]); });
    ReadRun run = RunReaders(
        sys.get(), T, count, [&](View* v, uint64_t i) -> uint64_t { return v->ScanNeighbors(sample[i]); },
        cfg.read_budget_seconds);
    JsonObject info = common_info;
    SampleInfo(&info, run, count, "neighbors", count < g.n / 5 ? "20% of the vertex bound, capped at " +
                                                                    std::to_string(count) + " operations"
                                                              : "20% of the vertex bound");
    Log(system, "scan_nbr: %.0f vertices/s, %.0f edges/s (%llu of %llu vertices)", run.ops / run.seconds,
        run.items / run.seconds, static_cast<unsigned long long>(run.ops),
        static_cast<unsigned long long>(count));
    AddReadResults(sink, "scan_nbr", system, rp, run, "neighbors", info);
  }

  // Analytics, warm then cold (the full suite runs them on the ingest_large graph instead).
  if (cfg.main_analytics) {
    std::vector<Algo> algos = {Algo::kBfs, Algo::kPr, Algo::kWcc};
    if (system == "rocksdb" && !cfg.rocksdb_all_kernels) algos.clear();
    RunAnalyticsSet(cfg, sys.get(), sink, algos, only,
                    PickSource(sys.get(), g), "main", cfg.scale, false, cfg.cold_analytics);
  } else if (cfg.main_pr_in_memory && (system == "strata-mem" || system == "csr")) {
    RunAnalyticsSet(cfg, sys.get(), sink, {Algo::kPr}, only, PickSource(sys.get(), g), "main",
                    cfg.scale, false, /*cold=*/false);
  }
  if (system == "strata-mem" && only.Has("pr") && (cfg.main_analytics || cfg.main_pr_in_memory)) {
    RunPrPaired(cfg, sys.get(), g, /*pairs=*/5, sink);
  }

  // mixed: R readers run PageRank (fresh snapshot each run) while W writers insert new edges
  // (single-edge transactions from a second stream); each side alone, then together.
  if (only.Has("mixed") && (system != "rocksdb" || cfg.rocksdb_mixed)) {
    const int readers = std::max(1, T / 2), writers = sys->dynamic() ? std::max(1, T - readers) : 0;
    const int pr_runs = system == "rocksdb" ? cfg.rocksdb_mixed_runs : cfg.mixed_runs;
    Graph extra = MakeGraph(cfg.scale, false, cfg.seed + 1000);
    std::atomic<bool> stop{false};
    std::vector<Counter> wdone(std::max(1, writers));
    // Per writer, the latencies of the current phase: buckets, not samples (a writer makes
    // tens of millions of operations at scale 22, and the samples counted in the peak RSS).
    std::vector<LatencyHistogram> wlat(std::max(1, writers));
    // Writer t applies positions t, t + W, t + 2W, ... of the second stream, going on in each
    // phase from where its last phase stopped (next[t]), so every insert is of an edge the
    // store does not hold yet (until the stream wraps after extra.m ops). Up to `3b3754e` each
    // phase started over at position 0: after the first phase nearly every op put an edge
    // already there, a re-put, which keeps its leaf and copies nothing (docs/benchmarks.md,
    // "Issue 28: the mixed writers insert new edges").
    std::vector<uint64_t> next(std::max(1, writers), 0);
    auto writer = [&](int t) {
      EdgeOp op;
      const uint64_t first = next[t];
      uint64_t i = first;
      while (!stop.load(std::memory_order_relaxed)) {
        graphio::Edge e = extra.gen->EdgeAtPosition((i * writers + t) % extra.m);
        ++i;
        op.u = e.src;
        op.v = e.dst;
        const double t0 = NowSec();
        Status s = sys->Apply(&op, 1);
        if (!s.ok()) Fail(system, "mixed writer", s);
        wlat[t].Record(NowSec() - t0);
        wdone[t].v.store(i - first, std::memory_order_relaxed);
      }
      next[t] = i;  // read by the next phase's thread, which starts after this one is joined
    };
    // Each reader's kernel gets its share of the cores left to readers, with or without
    // writers running, so both measurements use the same reader threads.
    const int reader_threads = std::max(1, (T - std::max(1, T - readers)) / readers);
    // Each reader makes `runs` PageRank runs, each on a fresh snapshot; their times go to *lat_s.
    // Reader runs, and those that let their snapshot go before their iterations (each run's
    // PageRank is its view's last read: View::PageRankLast).
    std::atomic<int64_t> reader_runs{0}, reader_runs_released{0};
    auto readers_run = [&](std::vector<float>* lat_s, int runs) {
      std::vector<std::thread> ts;
      std::vector<std::vector<float>> per(readers);
      for (int r = 0; r < readers; ++r) {
        ts.emplace_back([&, r] {
          tbb::task_arena arena(reader_threads);
          for (int k = 0; k < runs; ++k) {
            const double t0 = NowSec();
            std::unique_ptr<View> v = sys->NewView();
            v->SetThreads(reader_threads);
            Digest d;
            Status s;
            arena.execute([&] { s = v->PageRankLast(cfg.mixed_pr_iterations, &d); });
            if (!s.ok()) Fail(system, "mixed reader", s);
            ++reader_runs;
            if (d.snapshot_released == 1) ++reader_runs_released;
            per[r].push_back(static_cast<float>(NowSec() - t0));
          }
        });
      }
      for (auto& t : ts) t.join();
      for (auto& p : per) lat_s->insert(lat_s->end(), p.begin(), p.end());
    };
    auto writers_for = [&](double seconds) {
      stop = false;
      for (auto& c : wdone) c.v = 0;
      for (auto& l : wlat) l.Clear();
      std::vector<std::thread> ts;
      const double t0 = NowSec();
      for (int w = 0; w < writers; ++w) ts.emplace_back(writer, w);
      if (seconds > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        stop = true;
      }
      return std::make_pair(std::move(ts), t0);
    };
    auto add_reader = [&](int w, std::vector<float>& lat, const char* reader_kind = nullptr,
                          const char* runs_note = nullptr) {
      JsonObject p;
      p.Str("role", "reader");
      if (reader_kind != nullptr) p.Str("reader", reader_kind);
      p.Int("readers", readers);
      p.Int("writers", w);
      p.Int("iterations", cfg.mixed_pr_iterations);
      p.Int("reader_threads", reader_threads);
      std::vector<double> d(lat.begin(), lat.end());
      Result a = R("mixed", system, "seconds", Median(d), "s", p);
      a.info.Int("pr_runs", static_cast<int64_t>(lat.size()));
      a.info.Raw("all_seconds", NumbersJson(d));
      a.info.Str("latency", "one PageRank run on a fresh snapshot, per reader");
      if (runs_note != nullptr) a.info.Str("runs", runs_note);
      sink->Add(a);
      sink->Add(R("mixed", system, "max_us", *std::max_element(d.begin(), d.end()) * 1e6, "us", p));
    };
    // The writers' side of a phase made of rounds: their ops, time and latencies summed over
    // the rounds, and their rate in each round.
    struct WriterSide {
      uint64_t ops = 0;
      double seconds = 0;
      LatencyHistogram lat;
      std::vector<double> rates;
      std::vector<std::array<uint64_t, 3>> ranges;  // per round and writer: t, first, end
    };
    // The writers' ops since writers_for.
    auto writer_ops = [&] {
      uint64_t ops = 0;
      for (int w = 0; w < writers; ++w) ops += wdone[w].v.load();
      return ops;
    };
    // Adds the round the writers just finished (their counters since writers_for) to *side:
    // its ops, latencies and time, and its one rate unless `with_rate` is false.
    auto collect = [&](WriterSide* side, double seconds, bool with_rate = true) {
      const uint64_t ops = writer_ops();
      for (int w = 0; w < writers; ++w) side->lat.Merge(wlat[w]);
      side->ops += ops;
      side->seconds += seconds;
      for (int w = 0; w < writers; ++w) {  // the phase began wdone ops before where it stopped
        side->ranges.push_back({uint64_t(w), next[w] - wdone[w].v.load(), next[w]});
      }
      if (with_rate) side->rates.push_back(ops / seconds);
    };
    // The writers' rate is the median of their rounds' rates.
    auto add_writer = [&](int r, const WriterSide& side, const char* reader_kind = nullptr) {
      LatencySummary l = Summarize(side.lat);
      JsonObject p;
      p.Str("role", "writer");
      p.Int("readers", r);
      p.Int("writers", writers);
      p.Int("batch", 1);
      if (reader_kind != nullptr) p.Str("reader", reader_kind);
      const double rate = Median(side.rates);
      Result a = R("mixed", system, "ops_per_s", rate, "ops/s", p);
      a.info.Int("ops", static_cast<int64_t>(side.ops));
      a.info.Num("seconds", side.seconds);
      a.info.Raw("latency_cdf_us", CdfJson(l));
      a.info.Str("latency", "per transaction, every one timed, counted in log-linear buckets (quantiles within 0.4%)");
      a.info.Raw("ops_per_s_by_round", NumbersJson(side.rates));
      a.info.Str("rounds", "the writers' rate in each round, in order; the value is their median");
      std::string ranges;
      for (const auto& r : side.ranges) {
        ranges += (ranges.empty() ? "[" : ", [") + std::to_string(r[0]) + ", " +
                  std::to_string(r[1]) + ", " + std::to_string(r[2]) + "]";
      }
      a.info.Raw("stream_ranges", "[" + ranges + "]");
      a.info.Str("stream", "writer t applies positions i * writers + t of the second stream (mod "
                           "its edges) for i in [first, end) of each [t, first, end]: each phase "
                           "goes on where that writer's last phase stopped");
      sink->Add(a);
      sink->Add(R("mixed", system, "p50_us", l.p50, "us", p));
      sink->Add(R("mixed", system, "p99_us", l.p99, "us", p));
      sink->Add(R("mixed", system, "max_us", l.max, "us", p));
      std::string rates;
      for (double x : side.rates) rates += (rates.empty() ? "" : " ") + std::to_string(static_cast<int64_t>(x / 1000)) + "K";
      Log(system, "mixed writers (readers=%d%s%s): %.0f ops/s (median; rounds %s), p99 %.1f us", r,
          reader_kind != nullptr ? ", " : "", reader_kind != nullptr ? reader_kind : "", rate,
          rates.c_str(), l.p99);
    };
    const bool peak_reset = ResetPeakRss();
    const uint64_t rss_before_mixed = CurrentRssBytes();
    const HeapBreakdown heap_before_mixed = ReadHeapBreakdown();
    const SystemStats stats_before_mixed = sys->Stats();
    // The heap at the largest RSS sampled (every 0.25 s) over the workload: what the peak is
    // made of (the memgraph's arena, the reader's list cache and arrays in the kernels' arena).
    // At scale 22 the sample's RSS came within 0.2 MiB of VmHWM (1,327.3 / 1,327.1 MiB).
    // Only the sampler's thread writes heap_peak; it is read after Stop() joins that thread.
    HeapBreakdown heap_peak;
    // And the sample where the memgraphs' arenas held the most allocated (the private arenas
    // less the kernels'): a reader's snapshot keeps the versions and leaves the writers replace
    // until it lets them go, so their allocation peaks while a reader builds its list cache,
    // and what that burst made resident stays with the arenas (partly used slabs) after it.
    HeapBreakdown heap_memgraph_peak;
    auto memgraph_allocated = [](const HeapBreakdown& h) {
      return h.private_allocated - h.kernel_allocated;
    };
    PeriodicSampler heap_sampler(0.25, [&] {
      const HeapBreakdown h = ReadHeapBreakdown();
      if (h.rss > heap_peak.rss) heap_peak = h;
      if (memgraph_allocated(h) > memgraph_allocated(heap_memgraph_peak)) heap_memgraph_peak = h;
    });
    // The readers' runs unmeasured first: the first runs of a process fault in the kernels'
    // scratch (analytics/kernel_memory.h), which later runs reuse; without them the readers'
    // time alone would carry those faults and the time beside the writers would not.
    std::vector<float> warm;
    readers_run(&warm, pr_runs);
    // VmHWM with the readers alone on the loaded graph: what the readers' kernels add.
    const uint64_t peak_readers_alone = peak_reset ? PeakRssBytes() : 0;
    auto median_of = [](const std::vector<float>& v) { return Median(std::vector<double>(v.begin(), v.end())); };
    // Rounds, each: the writers alone for as long as the readers' last run took, the readers
    // alone (one run each), then both together (one run each, the writers running throughout).
    // Alone and together alternate, so both sides of each ratio see the same machine and nearly
    // the same graph: the writers grow it (they run for as long as the readers do, so by how
    // much depends on both rates: at scale 22 127.6 M directed entries became 204.3 and 209.8
    // M in two runs of the full suite once every phase inserted new edges; 137.0-143.6 M while
    // each phase started its stream over) and a PageRank's time grows with its
    // snapshot's edges; a stretch in which the machine runs slower slows a round of each, not
    // one side (docs/benchmarks.md, "Issue 28:
    // the mixed workload in rounds"). Before, each side ran as one phase: the writers alone,
    // the readers alone, together, the readers alone again.
    std::vector<float> alone, with;
    WriterSide writers_alone, writers_with;
    double last_run = *std::max_element(warm.begin(), warm.end());
    // When the writers stop beside the readers: the store's memory (which still holds the
    // versions the last reader pinned, until commits on their subgraphs reclaim them) and its
    // directed entries.
    SystemStats after_together;
    HeapBreakdown heap_after;
    for (int k = 0; k < pr_runs; ++k) {
      if (writers > 0) {
        auto [ts, t0] = writers_for(std::max(0.5, last_run));
        for (auto& t : ts) t.join();
        collect(&writers_alone, NowSec() - t0);
      }
      std::vector<float> a;
      readers_run(&a, 1);
      last_run = *std::max_element(a.begin(), a.end());
      alone.insert(alone.end(), a.begin(), a.end());
      if (writers > 0) {
        auto [ts, t0] = writers_for(0);
        readers_run(&with, 1);
        stop = true;
        for (auto& t : ts) t.join();
        collect(&writers_with, NowSec() - t0);
      }
    }
    // The last round ended with the writers stopping beside the readers. (Stats counts the
    // whole graph: once, here, not per round.)
    if (writers > 0) {
      after_together = sys->Stats();
      heap_after = ReadHeapBreakdown();
    }
    add_reader(0, alone, nullptr,
               writers > 0 ? "one run per round, between the writers alone and the round together "
                             "(all_seconds in round order)"
                           : nullptr);
    if (writers > 0) {
      add_writer(0, writers_alone);
      add_reader(writers, with);
      add_writer(readers, writers_with);
      Log(system, "mixed readers: PR median %.3f s alone, %.3f s with %d writers (one run each per round)",
          median_of(alone), median_of(with), writers);
    } else {
      Log(system, "mixed readers alone: PR median %.3f s", median_of(alone));
    }
    heap_sampler.Stop();
    if (peak_reset) {
      JsonObject p;
      p.Int("readers", readers);
      p.Int("writers", writers);
      Result pk = R("mixed", system, "peak_rss_bytes", static_cast<double>(PeakRssBytes()), "B", p);
      pk.info.Int("rss_before", static_cast<int64_t>(rss_before_mixed));
      pk.info.Int("jemalloc_resident_before", static_cast<int64_t>(heap_before_mixed.jemalloc_resident));
      pk.info.Int("jemalloc_allocated_before", static_cast<int64_t>(heap_before_mixed.jemalloc_allocated));
      AddPrivateArenas(heap_before_mixed, "before", &pk.info);
      pk.info.Int("memory_bytes_before", static_cast<int64_t>(stats_before_mixed.memory_bytes));
      pk.info.Int("listed_bytes_before", static_cast<int64_t>(stats_before_mixed.listed_bytes));
      // The writers keep adding edges (at scale 22, 60-64% more entries by the end of the last
      // round in the runs recorded): the graph at the peak is the one they leave, hence the
      // _after figures (memory_bytes_after still holds the versions the last reader pinned).
      pk.info.Int("stored_edges_before", static_cast<int64_t>(stats_before_mixed.stored_edges));
      if (after_together.stored_edges != 0) {
        pk.info.Int("stored_edges_after", static_cast<int64_t>(after_together.stored_edges));
        pk.info.Int("memory_bytes_after", static_cast<int64_t>(after_together.memory_bytes));
        pk.info.Int("listed_bytes_after", static_cast<int64_t>(after_together.listed_bytes));
        pk.info.Int("rss_after", static_cast<int64_t>(heap_after.rss));
        AddPrivateArenas(heap_after, "after", &pk.info);
      }
      pk.info.Int("peak_rss_readers_alone", static_cast<int64_t>(peak_readers_alone));
      pk.info.Int("rss_at_sampled_peak", static_cast<int64_t>(heap_peak.rss));
      AddPrivateArenas(heap_peak, "at_sampled_peak", &pk.info);
      pk.info.Int("rss_at_memgraph_peak", static_cast<int64_t>(heap_memgraph_peak.rss));
      AddPrivateArenas(heap_memgraph_peak, "at_memgraph_peak", &pk.info);
      pk.info.Int("reader_runs", reader_runs.load());
      pk.info.Int("reader_runs_snapshot_released", reader_runs_released.load());
      pk.info.Str("source", "VmHWM over the mixed workload (reset before it via /proc/self/clear_refs)");
      sink->Add(pk);
      const double mib = 1.0 / 1048576.0;
      Log(system,
          "mixed peak RSS %.1f MiB; before it: RSS %.1f MiB, jemalloc %.1f MiB resident / %.1f MiB "
          "allocated (%s), store %.1f MiB of %.1f M entries (free lists %.1f MiB); readers alone "
          "peaked at %.1f MiB; when the writers stop: %.1f M entries, store %.1f MiB with what the "
          "last reader held (free lists %.1f MiB), RSS %.1f MiB, %s; %lld of %lld reader runs let "
          "their snapshot go before iterating; "
          "at the largest RSS sampled (%.1f MiB): %s",
          PeakRssBytes() * mib, rss_before_mixed * mib, heap_before_mixed.jemalloc_resident * mib,
          heap_before_mixed.jemalloc_allocated * mib, PrivateArenasText(heap_before_mixed).c_str(),
          stats_before_mixed.memory_bytes * mib,
          stats_before_mixed.stored_edges / 1e6, stats_before_mixed.listed_bytes * mib,
          peak_readers_alone * mib, after_together.stored_edges / 1e6,
          after_together.memory_bytes * mib, after_together.listed_bytes * mib, heap_after.rss * mib,
          PrivateArenasText(heap_after).c_str(), static_cast<long long>(reader_runs_released.load()),
          static_cast<long long>(reader_runs.load()), heap_peak.rss * mib,
          PrivateArenasText(heap_peak).c_str());
      // Which size classes the memgraph's partly used slabs are of (the slack the peak carries
      // beside the store's nodes): after the load (before the workload), at the peak and when
      // the writers stop.
      Log(system, "mixed: the private arenas' bins before the workload: %s",
          PrivateBinsText(heap_before_mixed, 8).c_str());
      Log(system, "mixed: the private arenas' bins at the largest RSS sampled: %s",
          PrivateBinsText(heap_peak, 8).c_str());
      if (memgraph_allocated(heap_memgraph_peak) != 0) {  // a system with memgraph arenas
        Log(system,
            "mixed: the memgraph arenas' largest allocation sampled: %.1f MiB (%.1f MiB before the "
            "workload), %.1f MiB resident; RSS %.1f MiB then",
            memgraph_allocated(heap_memgraph_peak) * mib,
            memgraph_allocated(heap_before_mixed) * mib,
            (heap_memgraph_peak.private_resident - heap_memgraph_peak.kernel_resident) * mib,
            heap_memgraph_peak.rss * mib);
      }
      if (writers > 0) {
        Log(system, "mixed: the private arenas' bins when the writers stop: %s",
            PrivateBinsText(heap_after, 8).c_str());
      }
    }
    // Control: the same writers beside a PageRank that does not read the store (the CSR kernel
    // on a copy of the loaded graph, same threads and iterations), timed alone first. What the
    // writers lose here, and what the CSR reader loses to them, is the machine's share (cores,
    // shared cache, memory bandwidth), not the store's.
    if (writers > 0 && sys->dynamic() && system != "rocksdb") {
      CsrGraph csr;
      {
        EdgeList list;
        list.num_vertices = g.n;
        std::vector<double> w;
        Generate(g, 0, g.load_end(), &list.edges, &w);
        Status s = BuildCsr(list, &csr);
        if (!s.ok()) Fail(system, "mixed control CSR", s);
      }
      // With `marks`: the time and the writers' ops at each run's end.
      auto csr_runs = [&](std::vector<float>* lat,
                          std::vector<std::pair<double, uint64_t>>* marks) {
        tbb::task_arena arena(reader_threads);
        std::vector<double> rank;
        for (int k = 0; k < pr_runs * readers; ++k) {
          const double r0 = NowSec();
          arena.execute([&] { CsrPageRank(csr, cfg.mixed_pr_iterations, &rank); });
          const double r1 = NowSec();
          lat->push_back(static_cast<float>(r1 - r0));
          if (marks != nullptr) marks->emplace_back(r1, writer_ops());
        }
      };
      std::vector<float> csr_alone, csr_with;
      csr_runs(&csr_alone, nullptr);
      add_reader(0, csr_alone, "csr");
      std::vector<std::pair<double, uint64_t>> marks;
      auto [ts, t0] = writers_for(0);
      std::thread reader([&] { csr_runs(&csr_with, &marks); });
      reader.join();
      stop = true;
      for (auto& t : ts) t.join();
      // One window, the writers' rate in each CSR run (as the store's rounds give one rate
      // per reader run; one rate for the whole window was a single sample against medians).
      WriterSide beside_csr;
      collect(&beside_csr, NowSec() - t0, /*with_rate=*/false);
      double prev_t = t0;
      uint64_t prev_ops = 0;
      for (const auto& [t, ops] : marks) {  // pr_runs * readers >= 1 marks, each after a run
        beside_csr.rates.push_back(static_cast<double>(ops - prev_ops) / (t - prev_t));
        prev_t = t;
        prev_ops = ops;
      }
      add_writer(readers, beside_csr, "csr");
      add_reader(writers, csr_with, "csr");
      Log(system, "mixed control: CSR PageRank median %.3f s alone, %.3f s beside %d writers",
          Median(std::vector<double>(csr_alone.begin(), csr_alone.end())),
          Median(std::vector<double>(csr_with.begin(), csr_with.end())), writers);
    }
  }

  sys->Close();
  RemoveTree(cfg.dir + "/main");
}

// ---------------------------------------------------------------------------------------------
// The small weighted graph: sssp and tc.

void RunSmallJob(const SuiteConfig& cfg, const std::string& system, const WorkloadSet& only,
                 ResultSink* sink) {
  if (!only.Has("sssp") && !only.Has("tc")) return;
  Graph g = MakeGraph(cfg.small_scale, true, cfg.seed + 1);
  std::unique_ptr<System> sys = OpenSystem(system, MakeSystemConfig(cfg, "small", true, false));
  LoadWhole(cfg, sys.get(), g);
  std::vector<Algo> algos = {Algo::kSssp, Algo::kTc};
  if (system == "rocksdb" && !cfg.rocksdb_all_kernels) algos = {Algo::kSssp};
  RunAnalyticsSet(cfg, sys.get(), sink, algos, only, PickSource(sys.get(), g), "small",
                  cfg.small_scale, true, true, cfg.cold_tc);
  sys->Close();
  RemoveTree(cfg.dir + "/small");
}

// ---------------------------------------------------------------------------------------------
// ingest_large: a whole stream into a store whose memory budget is far smaller than the graph.
// Edges are generated inside the writer threads (streaming: nothing is buffered), in batches of
// 1024; the same for both systems. In the last 20% of the stream every 21st operation deletes
// an edge of the first 80% (20:1 inserts to deletes). Then the kernels of
// cfg.large_analytics run on the persisted graph (the same digests expected from every
// system, the CSR built from the stream's final edge set), then a full compaction measures
// space amplification.

// The stream of ingest_large: operation p of g.m. A delete picks a position at least 4 batches
// per thread behind it, whose insert the writers have applied long before (the writers share
// the stream by edge, so an edge's own operations are applied in stream order anyway).
struct LargeStream {
  const Graph* g;
  uint64_t delete_from;  // first position of the last 20%
  uint64_t delete_pool;  // deletes pick a position in [0, delete_pool)
  LargeStream(const Graph& graph, int threads, uint64_t chunk)
      : g(&graph),
        delete_from(graph.m / 5 * 4),
        delete_pool(delete_from - std::min(delete_from, 4 * static_cast<uint64_t>(threads) * chunk)) {}
  bool IsDelete(uint64_t p) const { return p >= delete_from && p % 21 == 20; }
  EdgeOp At(uint64_t p) const {
    if (IsDelete(p)) {
      graphio::Edge x = g->gen->EdgeAtPosition(Mix64(p) % delete_pool);
      return {x.src, x.dst, 1.0, true};
    }
    graphio::Edge x = g->gen->EdgeAtPosition(p);
    return {x.src, x.dst, g->weighted ? x.weight : 1.0, false};
  }
};

// The graph the stream leaves (undirected: (u,v) and (v,u) are one edge; of all operations on
// an edge the last one decides, with its weight): every operation's (edge, position) sorted.
EdgeList FinalEdges(const LargeStream& st) {
  const Graph& g = *st.g;
  struct Rec {
    uint64_t key;  // PairKey
    uint64_t pos;
  };
  std::vector<Rec> recs(g.m);
  tbb::parallel_for(tbb::blocked_range<uint64_t>(0, g.m, 1 << 14), [&](const tbb::blocked_range<uint64_t>& r) {
    for (uint64_t p = r.begin(); p < r.end(); ++p) {
      const EdgeOp op = st.At(p);
      recs[p] = {PairKey(op.u, op.v), p};
    }
  });
  tbb::parallel_sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
    return a.key != b.key ? a.key < b.key : a.pos < b.pos;
  });
  EdgeList list;
  list.num_vertices = g.n;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (i + 1 < recs.size() && recs[i + 1].key == recs[i].key) continue;  // not the last op
    if (st.IsDelete(recs[i].pos)) continue;
    list.edges.push_back({static_cast<uint32_t>(recs[i].key >> 32), static_cast<uint32_t>(recs[i].key)});
    if (g.weighted) list.weights.push_back(st.At(recs[i].pos).w);
  }
  return list;
}

void RunIngestLargeCsr(const SuiteConfig& cfg, ResultSink* sink) {
  Graph g = MakeGraph(cfg.large_scale, cfg.large_weighted, cfg.seed + 2);
  SystemConfig sc = MakeSystemConfig(cfg, "large", cfg.large_weighted, false);
  std::unique_ptr<System> sys = OpenSystem("csr", sc);
  const double t0 = NowSec();
  {
    EdgeList list = FinalEdges(LargeStream(g, cfg.threads, 1024));
    Status s = sys->Build(list);
    if (!s.ok()) Fail("csr", "ingest_large build", s);
  }
  Log("csr", "ingest_large: CSR of the stream's final graph built in %.1f s", NowSec() - t0);
  RunAnalyticsSet(cfg, sys.get(), sink, {Algo::kBfs, Algo::kPr, Algo::kSssp, Algo::kWcc},
                  cfg.large_analytics, PickSource(sys.get(), g), "ingest_large", cfg.large_scale,
                  cfg.large_weighted, false);
}

void RescaleSuite(SuiteConfig* cfg, int scale) {
  const int large = std::max(10, cfg->large_scale + (scale - cfg->scale));
  if (large > cfg->large_scale) {
    const int up = large - cfg->large_scale;
    cfg->large_budget <<= up;
    cfg->large_memgraph_bytes <<= up;
  }
  cfg->small_scale = std::max(10, cfg->small_scale + (scale - cfg->scale));
  cfg->large_scale = large;
  cfg->scale = scale;
}

void RunIngestLargeJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink) {
  if (system == "csr") return RunIngestLargeCsr(cfg, sink);
  if (!DiskSystem(system)) return;
  Graph g = MakeGraph(cfg.large_scale, cfg.large_weighted, cfg.seed + 2);
  SystemConfig sc = MakeSystemConfig(cfg, "large", cfg.large_weighted, false);
  sc.memory_budget = cfg.large_budget;
  sc.memgraph_bytes = cfg.large_memgraph_bytes;
  const IoCounters io0 = ReadIoCounters();
  const uint64_t rss0 = CurrentRssBytes();
  std::unique_ptr<System> sys = OpenSystem(system, sc);
  const int T = cfg.threads;
  const uint64_t chunk = 1024;
  const LargeStream stream(g, T, chunk);
  const uint64_t delete_from = stream.delete_from;
  std::vector<Counter> done(T);
  std::vector<std::vector<float>> lat(T);
  std::vector<std::pair<double, uint64_t>> series;
  const double c0 = ProcessCpuSec();
  const double t0 = NowSec();
  // One producer generates the stream once and deals each operation to the writer its edge
  // hashes to (as the other loads partition their streams), in batches of `chunk`: all
  // operations on one edge reach one writer in stream order, so the final graph (and every
  // weight) is the same in every system whatever the interleaving. Each writer only applies,
  // so T writers pay for one stream, not T. A writer's queue holds at most kDepth batches: the
  // producer waits on the one writer whose queue is full while the others' queues drain, so
  // the depth is the slack one writer has while another is held up (a seal, a scheduling
  // delay); at 8 batches the writers of `strata` waited ~0.5 s each on an empty queue in a
  // 5 s run (docs/benchmarks.md, "the ingest_large producer").
  // Queued operations take 16 bytes, not an EdgeOp's 32: the queues are the harness's, and
  // their memory counts in the job's peak RSS (a 16-MiB budget's row). A writer widens each
  // batch into one reused EdgeOp buffer before applying it.
  struct QueuedOp {
    uint32_t u;
    uint32_t v_del;  // v | del << 31
    double w;
  };
  if (g.n > (uint64_t{1} << 31)) {
    Fail(system, "ingest_large", Status::InvalidArgument("vertex IDs past 2^31"));
  }
  struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::vector<QueuedOp>> batches;
    // Applied batches' vectors, handed back for the producer to fill again: a fresh 32 KiB
    // vector per batch was freed and purged at once (jemalloc decay 0) and faulted in again,
    // the harness's largest source of page faults.
    std::vector<std::vector<QueuedOp>> spare;
    bool closed = false;
  };
  constexpr size_t kDepth = 64;  // 1 MiB of operations per writer
  std::vector<Queue> queues(T);
  std::thread producer([&] {
    std::vector<std::vector<QueuedOp>> buf(T);
    auto push = [&](int t) {
      Queue& q = queues[t];
      std::unique_lock<std::mutex> lk(q.mu);
      q.cv.wait(lk, [&] { return q.batches.size() < kDepth; });
      q.batches.push_back(std::move(buf[t]));
      if (q.batches.size() == 1) q.cv.notify_all();  // the writer waits only on an empty queue
      if (!q.spare.empty()) {
        buf[t] = std::move(q.spare.back());
        q.spare.pop_back();
      } else {
        buf[t] = std::vector<QueuedOp>();
        buf[t].reserve(chunk);
      }
    };
    for (auto& b : buf) b.reserve(chunk);
    for (uint64_t p = 0; p < g.m; ++p) {
      const EdgeOp op = stream.At(p);
      const int t = T > 1 ? static_cast<int>(Mix64(PairKey(op.u, op.v)) % T) : 0;
      buf[t].push_back({static_cast<uint32_t>(op.u),
                        static_cast<uint32_t>(op.v) | (op.del ? uint32_t{1} << 31 : 0), op.w});
      if (buf[t].size() == chunk) push(t);
    }
    for (int t = 0; t < T; ++t) {
      if (!buf[t].empty()) push(t);
      std::lock_guard<std::mutex> lk(queues[t].mu);
      queues[t].closed = true;
      queues[t].cv.notify_all();
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < T; ++t) {
    ts.emplace_back([&, t] {
      Queue& q = queues[t];
      std::vector<EdgeOp> ops;
      ops.reserve(chunk);
      for (;;) {
        std::vector<QueuedOp> batch;
        {
          std::unique_lock<std::mutex> lk(q.mu);
          q.cv.wait(lk, [&] { return !q.batches.empty() || q.closed; });
          if (q.batches.empty()) break;
          batch = std::move(q.batches.front());
          if (q.batches.size() == kDepth) q.cv.notify_all();  // the producer waits on a full one
          q.batches.pop_front();
        }
        ops.clear();
        for (const QueuedOp& o : batch) {
          ops.push_back({o.u, o.v_del & ~(uint32_t{1} << 31), o.w, (o.v_del >> 31) != 0});
        }
        const double a = NowSec();
        Status s = sys->Apply(ops.data(), ops.size());
        if (!s.ok()) Fail(system, "ingest_large", s);
        lat[t].push_back(static_cast<float>((NowSec() - a) * 1e6));
        done[t].v.fetch_add(batch.size(), std::memory_order_relaxed);
        batch.clear();
        std::lock_guard<std::mutex> lk(q.mu);
        q.spare.push_back(std::move(batch));
      }
    });
  }
  const double interval = std::max(cfg.series_interval, 0.5);
  series.emplace_back(0.0, 0);
  PeriodicSampler monitor(interval, [&] {
    uint64_t sum = 0;
    for (auto& c : done) sum += c.v.load(std::memory_order_relaxed);
    series.emplace_back(NowSec() - t0, sum);
  });
  // The heap at the largest RSS: RSS read every 10 ms (a read of /proc/self/status), the
  // breakdown taken when it passes the last one taken by 256 KiB. At the series' 0.5 s the
  // samples missed the peak by 4-12 MiB (a flush's and an install's buffers come and go
  // within a second).
  HeapBreakdown heap_peak;
  PeriodicSampler heap_monitor(0.01, [&] {
    if (CurrentRssBytes() < heap_peak.rss + (256 << 10)) return;
    heap_peak = ReadHeapBreakdown();
  });
  producer.join();
  for (auto& t : ts) t.join();
  const double ingest_s = NowSec() - t0;
  monitor.Stop();
  heap_monitor.Stop();
  series.emplace_back(ingest_s, g.m);
  Status s = sys->Persist();
  if (!s.ok()) Fail(system, "persist", s);
  const double total_s = NowSec() - t0;
  const double cpu_s = ProcessCpuSec() - c0;
  SystemStats st = sys->Stats();
  const IoCounters io1 = ReadIoCounters();
  std::vector<float> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  LatencySummary l = Summarize(&all);
  // User bytes per stream edge: two 8-byte IDs, and an 8-byte weight when weighted.
  const double edge_bytes = (g.weighted ? 24.0 : 16.0) * static_cast<double>(g.m);
  JsonObject p;
  p.Int("threads", T);
  p.Int("batch", 1024);
  p.Str("wal", "off");
  JsonObject info;
  info.Int("scale", cfg.large_scale);
  info.Bool("weighted", g.weighted);
  info.Int("stream_edges", static_cast<int64_t>(g.m));
  info.Int("stored_edges", static_cast<int64_t>(st.stored_edges));
  info.Num("ingest_seconds", ingest_s);
  info.Num("persist_seconds", total_s - ingest_s);
  info.Raw("series", SeriesJson(series));
  info.Raw("latency_cdf_us", CdfJson(l));
  if (system == "strata") {
    info.Int("memory_budget", static_cast<int64_t>(sc.memory_budget));
    info.Int("memgraph_bytes", static_cast<int64_t>(sc.memgraph_bytes));
  } else {
    info.Str("memory", "RocksDB default options (64 MiB write buffers, 8 MiB block cache)");
  }
  info.Str("engine", st.note);
  {
    const double mib = 1.0 / (1 << 20);
    char buf[512];
    snprintf(buf, sizeof(buf),
             "at the largest sampled RSS (%.1f MiB): jemalloc %.1f MiB resident, %.1f "
             "allocated (memgraph arenas %.1f resident, %.1f allocated, %.1f freed pages "
             "kept; metadata %.1f); rss before open %.1f MiB; the harness's queues hold up "
             "to %.1f MiB",
             heap_peak.rss * mib, heap_peak.jemalloc_resident * mib,
             heap_peak.jemalloc_allocated * mib, heap_peak.private_resident * mib,
             heap_peak.private_allocated * mib, heap_peak.private_dirty * mib,
             heap_peak.metadata * mib, rss0 * mib,
             static_cast<double>(T) * ((kDepth + 2) * chunk * sizeof(QueuedOp) +
                                       chunk * sizeof(EdgeOp)) * mib);
    info.Str("heap_at_peak", buf);
  }
  info.Str("generation", "edges generated inside the timed loop by one producer thread, which "
                         "deals each operation to the writer its edge hashes to through bounded "
                         "queues (same for every system)");
  {
    // Positions q in [delete_from, m) with q % 21 == 20.
    auto upto = [](uint64_t n) { return n / 21; };  // count in [0, n): q + 1 a multiple of 21
    const uint64_t deletes = upto(g.m) - upto(delete_from);
    info.Int("deletes", static_cast<int64_t>(deletes));
    info.Str("stream", "shuffled Kronecker edges; in the last 20% every 21st op deletes an edge "
                       "of the first 80% (20:1 inserts to deletes)");
  }
  Result a = R("ingest_large", system, "edges_per_s", g.m / total_s, "edges/s", p);
  a.info = info;
  sink->Add(a);
  sink->Add(R("ingest_large", system, "seconds", total_s, "s", p));
  sink->Add(R("ingest_large", system, "cpu_seconds", cpu_s, "s", p));
  sink->Add(R("ingest_large", system, "p50_us", l.p50, "us", p));
  sink->Add(R("ingest_large", system, "p99_us", l.p99, "us", p));
  sink->Add(R("ingest_large", system, "max_us", l.max, "us", p));
  sink->Add(R("ingest_large", system, "stall_seconds", st.stall_micros / 1e6, "s", p));
  Result pk = R("ingest_large", system, "peak_rss_bytes", static_cast<double>(PeakRssBytes()), "B", p);
  pk.info.Int("rss_at_open", static_cast<int64_t>(rss0));
  sink->Add(pk);
  sink->Add(R("ingest_large", system, "disk_bytes_per_edge",
              static_cast<double>(st.disk_bytes) / std::max<uint64_t>(1, st.stored_edges),
              "B/directed edge", p));
  sink->Add(R("ingest_large", system, "write_amp", st.write_bytes / edge_bytes, "x", p));
  sink->Add(R("ingest_large", system, "io_write_amp", (io1.write_bytes - io0.write_bytes) / edge_bytes,
              "x", p));
  Log(system, "ingest_large scale %d: %.0f edges/s, peak RSS %.0f MiB, disk %.1f B/edge, wamp %.2f",
      cfg.large_scale, g.m / total_s, PeakRssBytes() / 1048576.0,
      static_cast<double>(st.disk_bytes) / std::max<uint64_t>(1, st.stored_edges),
      st.write_bytes / edge_bytes);

  // The kernels on the persisted graph, as the ingest left it.
  RunAnalyticsSet(cfg, sys.get(), sink, {Algo::kBfs, Algo::kPr, Algo::kSssp, Algo::kWcc},
                  cfg.large_analytics, PickSource(sys.get(), g), "ingest_large", cfg.large_scale,
                  cfg.large_weighted, cfg.cold_analytics);
  Log(system, "ingest_large analytics done (peak RSS now %.0f MiB)", PeakRssBytes() / 1048576.0);
  if (cfg.keep_large && system == "strata") {
    sys->Close();
    // Moved out of the way of the next system's ingest_large, which uses the same directory.
    const std::string kept = cfg.dir + "/large-strata";
    RemoveTree(kept);
    if (rename(sc.dir.c_str(), kept.c_str()) != 0) {
      Fail(system, "ingest_large --keep-large", Status::IOError("rename " + sc.dir + " to " + kept));
    }
    Log(system, "ingest_large: store kept in %s (no space-amplification figure)", kept.c_str());
    return;
  }
  // Space amplification: the data files as the ingest left them, over the same data fully
  // compacted (every overwritten entry and tombstone gone). After PageRank, so it reads the
  // store as ingested.
  {
    const double c0 = NowSec();
    Status cs = sys->CompactFull();
    if (!cs.ok()) Fail(system, "ingest_large full compaction", cs);
    const double compact_s = NowSec() - c0;
    const uint64_t after = sys->Stats().data_bytes;
    const double amp = static_cast<double>(st.data_bytes) / std::max<uint64_t>(1, after);
    Result sa = R("ingest_large", system, "space_amp", amp, "x", p);
    sa.info.Int("data_bytes", static_cast<int64_t>(st.data_bytes));
    sa.info.Int("data_bytes_compacted", static_cast<int64_t>(after));
    sa.info.Num("full_compaction_seconds", compact_s);
    sink->Add(sa);
    Log(system, "ingest_large space amplification %.3f (%.1f MiB of data files; %.1f MiB after "
        "a full compaction of %.1f s)", amp, st.data_bytes / 1048576.0, after / 1048576.0,
        compact_s);
  }
  sys->Close();
  RemoveTree(cfg.dir + "/large");
}

constexpr std::pair<analytics::ListPacking, const char*> kPackingNames[] = {
    {analytics::ListPacking::kAuto, "auto"},
    {analytics::ListPacking::kNever, "never"},
    {analytics::ListPacking::kAlways, "always"},
};

bool ParsePacking(const std::string& name, analytics::ListPacking* out) {
  for (const auto& [p, n] : kPackingNames) {
    if (name == n) {
      *out = p;
      return true;
    }
  }
  return false;
}

const char* PackingName(analytics::ListPacking p) {
  for (const auto& [q, n] : kPackingNames) {
    if (q == p) return n;
  }
  return "?";
}

}  // namespace strata::bench
