// The workloads of strata-bench (the storage study §5.2;
// docs/design.md, "Benchmark methodology"). Each "job" runs in its own child process (so peak
// RSS and I/O counters are per system) and adds its results to a ResultSink.
//
// Streams. A graph is a Graph500 Kronecker edge stream (a=0.57, b=0.19, c=0.19, edge factor 16,
// shuffled, vertex IDs permuted; graphio/generator.h) stored undirected. Its positions split into
//   load   [0, 80%)    inserted in batches of 1024
//   insert [80%, 90%)  streamed as single-edge transactions
//   mixed  [90%, 100%) streamed as single-edge transactions, with one delete of a random edge
//                      of the load part after every 20 inserts (20:1)
// Writer threads split a stream by a hash of the (unordered) edge, so every edge is written by
// one thread in stream order and the final graph is the same whatever the interleaving: the
// CSR is built from exactly the graph the dynamic systems hold, and results can be compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/adapter.h"
#include "bench/report.h"

namespace strata::bench {

// Which workloads a job should run (the --only filter).
struct WorkloadSet {
  std::vector<std::string> names;
  bool Has(const std::string& w) const;
};

struct SuiteConfig {
  std::string suite = "quick";
  std::string dir = "bench-out/data";  // scratch space for disk systems
  int threads = 2;
  uint64_t seed = 1;

  // The main graph: insert/update/search_edge/scan_nbr/bfs/pr/wcc/mixed.
  int scale = 20;
  // The weighted graph of sssp and tc (smaller: tc is superlinear).
  int small_scale = 18;
  // insert: edges per configuration (WAL off, and WAL on with batches), and single-edge
  // transactions with a synced WAL (one fsync each).
  uint64_t insert_edges = uint64_t{1} << 20;
  uint64_t insert_sync_edges = 20000;
  int insert_runs = 1;      // fresh store per run; median reported
  int insert_wal_runs = 1;  // the same with the WAL on (fsync-bound runs: few suffice)
  // RocksDB's runs with the WAL off, when fewer than insert_runs: its rows are context for
  // strata's, not an issue target, and each of its runs takes ~2 s against strata's ~0.3 s.
  int rocksdb_insert_runs = 1 << 30;
  // Analytics: timed runs after one warm-up run (median reported); RocksDB's iterator-based
  // kernels are slow, so they may run fewer times.
  int analytics_runs = 3;
  int rocksdb_analytics_runs = 1;
  int pr_iterations = 10;
  // strata's PageRank list cache (PageRankParams::cache_bytes); unset: the kernel's default.
  std::optional<size_t> pr_cache_bytes;
  // strata's PageRank list packing (PageRankParams::packing); unset: the kernel's default.
  std::optional<analytics::ListPacking> pr_packing;
  // strata's PageRank gathers by degree group (PageRankParams::group_by_degree); unset: the
  // kernel's default.
  std::optional<bool> pr_group_by_degree;
  // Warm-up before the timed runs: false, one run of each kernel (PageRank: one iteration);
  // true, one PageRank iteration per graph before its kernels (it reads every list, so the
  // caches are as warm; quick uses it, since RocksDB's per-kernel warm-ups are slow).
  bool shared_warmup = false;
  // With shared_warmup: RocksDB's warm-up is one pass over every list (its PageRank with no
  // iteration: the degree count) instead of an iteration's two. Quick sets it: the iteration
  // took 16 s on the main graph, and one pass reads every block as the two do.
  bool rocksdb_warmup_one_pass = false;
  // Timed runs stop early (after at least one) once they took this long in total.
  double analytics_budget_seconds = 1e9;
  // Run triangle counting cold too (after dropping the page cache).
  bool cold_tc = true;
  // Run BFS/PR/WCC cold too (after dropping the page cache), when dropping is permitted.
  bool cold_analytics = true;
  // search_edge and scan_nbr: the 20% sample, capped at this many operations.
  uint64_t sample_cap = ~uint64_t{0};
  // search_edge and scan_nbr: readers stop taking operations once this many seconds passed (the
  // operations done, a prefix of each reader's share of the random sample, are reported).
  double read_budget_seconds = 1e9;
  // Run the mixed workload on RocksDB too (its PageRank through iterators is slow).
  bool rocksdb_mixed = true;
  // update (strata-mem): rounds of the paired fill ratio (RunFillPairedJob).
  int fill_paired_rounds = 10;
  // mixed: PageRank runs per reader (each on a fresh snapshot), iterations of each.
  int mixed_runs = 2;
  int rocksdb_mixed_runs = 1;
  int mixed_pr_iterations = 10;
  // Run BFS/PR/WCC on the main graph (the full suite runs them on the ingest_large graph).
  bool main_analytics = true;
  // Without main_analytics: PageRank (warm) on the main graph for the in-memory systems
  // (strata-mem, csr) still, whose kernels the ingest_large graph does not run (issue 28's
  // "PageRank on a memgraph snapshot" target, in the full suite).
  bool main_pr_in_memory = false;
  // Run RocksDB's kernels on the main graph (BFS, PageRank, WCC) and its triangle count on the
  // small graph. Quick leaves them out: each is an iterator-bound run (PageRank alone took a
  // large share of the suite's budget; BFS, WCC and the triangle count 65-70 s more with the
  // shared warm-up, 628.9 s in all in a slow stretch, against a 10-minute bound). RocksDB's
  // kernel rows in quick are SSSP on the small graph and PageRank on the ingest_large graph
  // (its PageRank ratio comes from there); `full` runs all of them.
  bool rocksdb_all_kernels = true;
  // ingest_large: a stream larger than StrataGraph's memory budget, weighted (RocksDB's value
  // is the weight), then the kernels named here on the persisted graph (the full suite: BFS,
  // PR, SSSP, WCC on the scale-23 store), warm and cold, with the CSR of the same final graph.
  int large_scale = 20;
  bool large_weighted = true;
  WorkloadSet large_analytics{{"pr"}};
  size_t large_budget = size_t{128} << 20;
  size_t large_memgraph_bytes = size_t{32} << 20;  // memgraph_bytes of ingest_large
  // Leave StrataGraph's ingest_large store in <dir>/large-strata as the ingest and the analytics left
  // it (for `strata analyze` / `strata inspect`): skips the space-amplification measurement,
  // whose full compaction would rewrite it.
  bool keep_large = false;
  // strata's memory settings for the main graph.
  size_t memory_budget = size_t{1} << 30;
  size_t memgraph_bytes = size_t{64} << 20;
  // Whether "echo 3 > /proc/sys/vm/drop_caches" works (checked by the parent once).
  bool can_drop_cache = false;
  // Seconds between samples of the ingest-rate time series.
  double series_interval = 0.25;
  // durability (bench/durability.cc): edges per cell of the WAL grid; cells whose setting
  // fsyncs write at most durability_syncs transactions, and no cell runs longer than
  // durability_cell_seconds (so batch 1 with a synced WAL stays short); recovery: a crashed writer leaves recovery_log_bytes of log, edges drawn from a
  // Kronecker stream of scale recovery_scale.
  uint64_t durability_edges = uint64_t{1} << 19;
  uint64_t durability_syncs = 4000;
  double durability_cell_seconds = 3;
  uint64_t recovery_log_bytes = uint64_t{32} << 20;
  int recovery_scale = 20;
};

// Jobs. `system` is one of strata, strata-mem, rocksdb, csr.
// --scale S: every graph of the suite moves by S - cfg->scale scales (none below 10), and
// ingest_large's budget and memgraph capacity grow with its graph, so its data stays the same
// multiple of the budget (the quick suite's 16 MiB at scale 20 sealed ~1 MiB memgraphs, a
// flush every few thousand edges). They never shrink below the suite's own.
void RescaleSuite(SuiteConfig* cfg, int scale);

// PageRankParams::packing by its --pr-packing name (auto, never, always), and back.
bool ParsePacking(const std::string& name, analytics::ListPacking* out);
const char* PackingName(analytics::ListPacking p);

void RunInsertJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink);
// The update load's fill ratio with the machine held equal: the first 90% of the load into
// one store (untimed), then its last tenth in cfg.fill_paired_rounds slices alternated with
// slices of its first tenth into a fresh store, each slice by cfg.threads writers; results
// `update` / `fill_rate_ratio_paired` and the two sides' rates (docs/benchmarks.md, "Issue
// 28: writers that steal; the fill ratio paired").
void RunFillPairedJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink);
void RunMainJob(const SuiteConfig& cfg, const std::string& system, const WorkloadSet& only,
                ResultSink* sink);
void RunSmallJob(const SuiteConfig& cfg, const std::string& system, const WorkloadSet& only,
                 ResultSink* sink);
void RunIngestLargeJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink);
// durability: the WAL grid (off/group/sync x 1..threads writers x batch 1/64/1024; rocksdb also
// "buffered") and crash recovery time per GiB of log. strata and rocksdb only.
void RunDurabilityJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink);
void RunRecoveryJob(const SuiteConfig& cfg, const std::string& system, ResultSink* sink);

}  // namespace strata::bench
