// The one interface every benchmarked system implements (the storage study's "adapter", §5.1):
//
//   strata      the whole store on disk (DB::Open on a directory, memory budget set)
//   strata-mem  the in-memory tier alone (Options::in_memory)
//   rocksdb     key = big-endian (src, dst), value = weight double (empty when unweighted),
//               default options, WAL off or on (synced), writes batched like ours
//   csr         a static in-memory CSR built from the same edges: the ideal for reads
//
// Graphs are undirected (each logical edge {u, v} stored as (u, v) and (v, u)), as in the
// Graph500/GAPBS Kronecker convention and the RapidStore reference figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/analytics.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::bench {

// One update of a stream.
struct EdgeOp {
  VertexId u = 0;
  VertexId v = 0;
  double w = 1.0;
  bool del = false;
};

// A stream of inserted undirected edges, in stream order, compactly (IDs < 2^32), and the edges
// deleted at the end. The graph it describes: every listed edge, the weight of an edge being
// that of its last occurrence, minus `removed`.
struct PackedEdge {
  uint32_t u;
  uint32_t v;
};
struct EdgeList {
  uint64_t num_vertices = 0;
  std::vector<PackedEdge> edges;
  std::vector<double> weights;  // empty when unweighted, else one per edge
  // (min, max) of each removed edge, sorted, unique.
  std::vector<std::pair<VertexId, VertexId>> removed;
};

// The WAL settings of the durability workload (bench/durability.cc). Every setting but kOff and
// kBuffered acknowledges a write only after its log record is fsynced.
//   kOff       strata WalMode::kOff             rocksdb disableWAL = true
//   kGroup     strata WalMode::kGroup: concurrent writers' records share one append + fsync
//              rocksdb sync = true: concurrent writers join one write group, one fsync per group
//   kSync      strata WalMode::kSync: one append + fsync per batch, never shared
//              rocksdb sync = true with the adapter serializing Write calls (RocksDB cannot turn
//              its write grouping off; one writer at a time gives one fsync per batch)
//   kBuffered  rocksdb only: WAL on, sync = false (RocksDB's default: the record reaches the OS,
//              survives a process crash but not a power loss); strata has no such mode
enum class WalSetting { kDefault, kOff, kGroup, kSync, kBuffered };
const char* WalSettingName(WalSetting w);

struct SystemConfig {
  std::string dir;          // scratch directory of a disk system (created fresh)
  bool weighted = false;
  bool wal = false;         // a synced write-ahead log (strata: WalMode::kGroup; rocksdb: sync=true)
  WalSetting wal_setting = WalSetting::kDefault;  // when not kDefault, overrides `wal`
  bool reopen = false;      // open the files already in dir (crash recovery) instead of a fresh store
  size_t write_buffer_bytes = 0;  // rocksdb: Options::write_buffer_size when nonzero
  size_t memory_budget = size_t{1} << 30;  // strata
  size_t memgraph_bytes = size_t{64} << 20;  // strata
  int threads = 2;          // threads of analytics kernels
  std::optional<size_t> pr_cache_bytes;  // strata: PageRankParams::cache_bytes; unset: default
  std::optional<analytics::ListPacking> pr_packing;  // strata: PageRankParams::packing
  std::optional<bool> pr_group_by_degree;  // strata: PageRankParams::group_by_degree
};

// What an analytics run computed, reduced to a few numbers that every system must agree on
// (compared by the driver across systems).
struct Digest {
  std::string text;
  double seconds = 0;  // the kernel alone (digest computation excluded)
  // StrataGraph's PageRank: its list cache's budget, the bytes it kept and its blocks kept
  // packed and streamed (PageRankStats); -1 for other kernels and systems.
  int64_t list_cache_budget = -1;
  int64_t list_cache_bytes = -1;
  int64_t list_cache_packed_blocks = -1;
  int64_t list_cache_streamed_blocks = -1;
  // StrataGraph's PageRank: seconds of its layout and list cache before the first iteration
  // (PageRankStats::prepare_seconds); -1 for other kernels and systems.
  double prepare_seconds = -1;
  double iterate_seconds = -1;  // PageRankStats::iterate_seconds; -1 as prepare_seconds
  double group_seconds = -1;    // PageRankStats::group_seconds when grouped; -1 as above
  // StrataGraph's PageRank as a view's last read (View::PageRankLast): 1 if it let the
  // snapshot go before its iterations (PageRankStats::snapshot_released), else 0; -1 otherwise.
  int snapshot_released = -1;
};

// (How digests are computed: bench/digest.h.)

// A consistent read view (a snapshot where the system has them). One thread uses a View at a
// time; its analytics run in parallel internally with SystemConfig::threads threads.
class View {
 public:
  virtual ~View() = default;
  virtual bool SearchEdge(VertexId u, VertexId v) = 0;
  // Visits u's neighbors; returns how many.
  virtual uint64_t ScanNeighbors(VertexId u) = 0;
  virtual Status Bfs(VertexId source, Digest* d) = 0;
  virtual Status PageRank(int iterations, Digest* d) = 0;
  // PageRank as the view's last read: the system may let the view's snapshot go during the
  // run (StrataGraph hands it to the kernel, which releases it once its list cache holds every
  // list: analytics::PageRank on a unique_ptr); nothing may be read through the view after.
  virtual Status PageRankLast(int iterations, Digest* d) { return PageRank(iterations, d); }
  virtual Status Sssp(VertexId source, Digest* d) = 0;
  virtual Status Wcc(Digest* d) = 0;
  virtual Status Tc(Digest* d) = 0;
  // Threads of this view's analytics for systems that manage their own threads (RocksDB);
  // TBB-based kernels follow the task arena they are called from instead.
  virtual void SetThreads(int threads) {}
  // First error seen by SearchEdge/ScanNeighbors.
  virtual Status status() const = 0;
};

struct SystemStats {
  uint64_t stored_edges = 0;     // directed entries stored (2 per undirected edge, 1 per loop)
  uint64_t memory_bytes = 0;     // memory the system accounts for its graph (0: not known)
  uint64_t listed_bytes = 0;     // freed nodes its allocator keeps on free lists (strata)
  uint64_t disk_bytes = 0;       // bytes of its files (0: in memory)
  uint64_t data_bytes = 0;       // bytes of its live data files (segments, SSTs): no logs
  uint64_t write_bytes = 0;      // bytes the engine wrote for flushes and compactions
  uint64_t wal_bytes = 0;        // bytes written to its log (when known)
  uint64_t stall_micros = 0;     // time writers were stalled (strata)
  std::string note;
};

class System {
 public:
  virtual ~System() = default;
  // "strata", "strata-mem", "rocksdb", "csr"; nullptr for an unknown name.
  static std::unique_ptr<System> Create(const std::string& name);

  virtual std::string name() const = 0;
  virtual bool dynamic() const { return true; }
  virtual Status Open(const SystemConfig& config) = 0;
  // Applies ops as one transaction (an atomic batch). Thread-safe.
  virtual Status Apply(const EdgeOp* ops, size_t n) = 0;
  // Static systems: builds the graph a stream leaves behind (see EdgeList).
  virtual Status Build(const EdgeList& edges) { return Status::NotSupported("Build"); }
  // Makes everything written so far persistent (flushes the in-memory tier).
  virtual Status Persist() = 0;
  // Rewrites every data file into the bottom level (dropping overwritten entries and
  // tombstones): what the data costs with no space amplification.
  virtual Status CompactFull() { return Status::NotSupported("CompactFull"); }
  virtual std::unique_ptr<View> NewView() = 0;
  virtual SystemStats Stats() = 0;
  virtual Status Close() = 0;
};

std::unique_ptr<System> NewStrataSystem(bool in_memory);
std::unique_ptr<System> NewRocksDbSystem();
std::unique_ptr<System> NewCsrSystem();

}  // namespace strata::bench
