// DB: a StrataGraph store. Open one, write batches, take snapshots, close.
//
// Every method is safe to call from any thread. Two DB objects share no state, even in one
// process. A store directory can be open for writing in one process at a time (the lock is on
// the directory too, so removing LOCK does not let a second writer in); Options::read_only
// opens share it with each other, not with a writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/change_feed.h"
#include "strata/options.h"
#include "strata/snapshot.h"
#include "strata/status.h"
#include "strata/view.h"
#include "strata/write_batch.h"

namespace strata {

struct WriteOptions {
  // Force an fsync of this batch's log record before returning, whatever the WAL mode.
  bool sync = false;
};

// Counters a store keeps about itself. All figures are since Open unless noted.
struct DBStats {
  // The store's ID: random, chosen at creation, in its manifest, every WAL and segment header,
  // and the owner record of the CLI's ID dictionary. 0 for an in-memory store.
  uint64_t store_id = 0;
  Timestamp last_committed = 0;     // newest timestamp visible to new snapshots
  uint64_t num_vertices = 0;        // in the current snapshot (GetStats(true) only)
  uint64_t num_edges = 0;           // stored directed entries, idem
  // GetStats(true): the first read error of the walk that counted num_vertices and num_edges
  // (then the counts are short and must not be used); OK otherwise, and without count_graph.
  Status count_status;
  uint64_t batches_committed = 0;
  uint64_t ops_applied = 0;
  uint64_t memgraph_bytes = 0;      // bytes held by all memgraphs (active + sealed)
  // The pages their arenas hold, in use (slabs however full) and freed but kept: the
  // memgraphs' resident memory, which the memory plan (counting memgraph_bytes) does not see.
  // About memgraph_bytes for large memgraphs, ~2x for memgraphs of a few MiB
  // (docs/benchmarks.md, "ingest_large's memory"); 0 in builds without jemalloc.
  uint64_t memgraph_resident_bytes = 0;
  // Of memgraph_resident_bytes: freed nodes on the memgraphs' free lists (per thread and shared),
  // kept for the next allocations of their sizes; not in memgraph_bytes. 0 without jemalloc.
  uint64_t memgraph_listed_bytes = 0;
  uint64_t memgraph_versions = 0;   // subgraph versions alive (not yet reclaimed)
  uint64_t versions_reclaimed = 0;  // subgraph versions whose contents writer GC freed
  // Headers (~100 bytes each) of versions reclaimed from between two readers' versions, kept
  // until no reader can be walking past them.
  uint64_t hollow_versions = 0;
  // Subgraph versions a writer built before taking its locks and built again because another
  // writer committed to the subgraph meanwhile (a measure of writer conflicts).
  uint64_t versions_rebuilt = 0;
  uint64_t active_readers = 0;      // registered snapshots
  uint64_t sealed_memgraphs = 0;
  uint64_t flushes = 0;
  uint64_t compactions = 0;
  uint64_t compaction_parts = 0;  // parts merged (a compaction cut into n parts counts n)
  // Compactions begun beside running writers that a second thread joined when writers came
  // to wait on level 0, or a DB::WaitIdle caller on the merge (Options::max_subcompactions).
  uint64_t compactions_joined = 0;
  // Compactions that moved one file a level down by a manifest edit, writing nothing
  // (Options::compaction_moves); counted in `compactions` too.
  uint64_t compaction_moves = 0;
  // Time writers spent stalled (summed over writers), in total and by reason: level 0 at
  // Options::l0_stall_trigger files (compaction is behind), or every sealed memgraph still
  // waiting for its flush (flush is behind). LOG names the reason when a stall begins.
  uint64_t stall_micros = 0;
  uint64_t stall_l0_micros = 0;
  uint64_t stall_flush_micros = 0;
  uint64_t disk_bytes = 0;
  uint64_t l0_files = 0;            // level-0 segment files
  uint64_t level_files = 0;         // files on levels 1..n
  std::string level_shape;          // "L0 3 files 12.1 MiB, L1 8 files 250.3 MiB, ..." (out-lists)
  uint64_t flush_bytes = 0;         // bytes written by flushes
  uint64_t compaction_bytes = 0;    // bytes written by compactions
  // Multi-level vertex index (index/), in memory: its bytes and the vertices it holds on levels
  // 1..n, summed over the stored directions (a vertex with in- and out-lists counts twice).
  // Level-0 files are not in it: their presence bitmaps are in resident_index_bytes.
  uint64_t vertex_index_bytes = 0;
  uint64_t vertex_index_entries = 0;
  double vertex_index_bytes_per_vertex() const {
    return vertex_index_entries ? static_cast<double>(vertex_index_bytes) / vertex_index_entries
                                : 0.0;
  }
  // Memory (Options::memory_budget): the budget is split between the memgraphs, an I/O
  // reserve, the resident indexes (the multi-level vertex index counted twice: an install
  // briefly holds its old and new pages) and the block cache, which gets what is left. When
  // the indexes grow, the memgraphs shrink (down to memgraph_bytes / 8) before the budget is
  // exceeded; LOG says when either happens. A memgraph is counted at the pages its arena
  // holds: its capacity times the pages per byte of nodes measured on the last sealed one.
  // A flushed memgraph's arena is kept for the next one (its pages resident) only when the
  // budget has room for one more memgraph at full capacity; the plan then counts it.
  uint64_t memory_budget = 0;
  uint64_t memgraph_capacity = 0;     // size at which the active memgraph is sealed now
  double memgraph_pages_per_byte = 0;  // measured on the last sealed memgraph (1 before any)
  uint64_t memgraph_share = 0;        // pages counted per memgraph: capacity x pages per byte
  uint64_t memgraph_slots = 0;        // memgraphs counted: active, sealed, a kept spare arena
  // Per-segment indexes always in memory (current files), level-0 presence bitmaps included.
  uint64_t resident_index_bytes = 0;
  uint64_t block_cache_capacity = 0;
  uint64_t block_cache_bytes = 0;     // vertex blocks and bloom partitions cached
  uint64_t block_cache_hits = 0;
  uint64_t block_cache_misses = 0;

  std::string ToString() const;
};

class DB {
 public:
  // Opens (creating if allowed) the store at `path`. With options.in_memory, `path` is only a
  // name and nothing touches disk.
  static Status Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db);

  virtual ~DB() = default;
  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;

  // Applies the batch atomically: all of it is visible to later snapshots, or none of it.
  virtual Status Write(const WriteOptions& wo, const WriteBatch& batch) = 0;
  Status Write(const WriteBatch& batch) { return Write(WriteOptions(), batch); }

  // Single-update conveniences: each is one batch.
  Status InsertEdge(VertexId u, VertexId v, double weight = 1.0);
  Status DeleteEdge(VertexId u, VertexId v);
  Status SetWeight(VertexId u, VertexId v, double weight);
  Status AddVertex(VertexId v);
  Status DeleteVertex(VertexId v);
  // Creates a vertex with a fresh ID, reusing the ID of a deleted vertex when one is free.
  virtual Status NewVertex(VertexId* id) = 0;

  // A consistent view of everything committed so far.
  virtual std::unique_ptr<Snapshot> GetSnapshot() = 0;

  // Counters are cheap. With count_graph, num_vertices and num_edges are exact counts over a
  // snapshot, which walks the whole graph (seconds on a large store); without, they are 0.
  // A read error during the walk is DBStats::count_status: check it before using the counts.
  virtual DBStats GetStats(bool count_graph = true) = 0;

  // Seals the in-memory tier and returns once it is on disk. No-op for in-memory stores.
  virtual Status Flush() = 0;

  // Returns once background work has settled: every sealed memgraph is flushed, no
  // compaction is due by its level scores and, when Options::idle_compaction_ms > 0, level 0
  // has been merged into level 1 (a caller waiting counts as idle, so that merge runs now).
  // Does not seal the active memgraph (Flush does). Writes issued meanwhile can keep it
  // waiting. Returns the background error if a flush or compaction failed. No-op for
  // in-memory stores.
  virtual Status WaitIdle() = 0;

  // Full compaction: flushes, then merges every level into the bottom level, dropping
  // tombstones and shadowed versions. Readers keep their snapshots meanwhile.
  virtual Status CompactAll() = 0;

  // Walks every file of the store — manifest, logs, every block of every segment — checking
  // checksums and structural invariants, and that each segment now at its path is the file
  // the manifest names (store ID, file number, size, counts, tail checksum) and each log is
  // this store's. Returns OK when clean; otherwise Corruption, with one
  // line per problem (naming file and offset) appended to *report when it is not null.
  virtual Status Verify(std::string* report) = 0;

  // Makes everything committed so far durable and releases the store. Later calls fail.
  // The destructor closes too, ignoring errors.
  virtual Status Close() = 0;

  // --- Change feed (include/strata/change_feed.h, docs/change-feed.md).
  // Starts a subscription: pushed to `handler` on its own threads, or pulled with
  // Subscription::Next when `handler` is empty. A durable name needs the write-ahead log
  // (NotSupported otherwise: with WalMode::kOff subscriptions are in-memory only); one live
  // Subscription per name (Busy); a name whose history was dropped is Aborted ("lost").
  virtual Status Subscribe(const SubscribeOptions& options, ChangeHandler handler,
                           std::unique_ptr<Subscription>* out) = 0;
  // Persists durable subscription `name`'s position: every record with ts <= `ts` is
  // processed. Positions only move forward (an older ts is ignored). Synced when it returns.
  virtual Status CommitPosition(const std::string& name, Timestamp ts) = 0;
  // The committed position of `name` (NotFound when there is none).
  virtual Status GetPosition(const std::string& name, Timestamp* ts) = 0;
  // Forgets a durable subscription (Busy while it is subscribed): its logs are released.
  virtual Status DropSubscription(const std::string& name) = 0;
  // --- Views (include/strata/view.h, docs/views.md). A view definition change is a commit:
  // it takes a timestamp from the same clock as the batches, so a snapshot sees the views as
  // they were at its timestamp. Persistent stores keep the definitions in <store>/VIEWS
  // (fsynced before the call returns, whatever the WAL mode); in-memory stores keep them in
  // memory. Read-only stores read them; changing them there is NotSupported.

  // Creates view `name` (1-128 characters of [A-Za-z0-9_.-]). InvalidArgument when it exists
  // (unless `replace`: the new definition takes effect from now on), when the definition is
  // malformed (vertex IDs at or above Options::max_vertex_id, min > max, a set operation with
  // fewer than two operands) or would make a view use itself; NotFound for an operand that is
  // not a view now.
  virtual Status CreateView(const std::string& name, const ViewDefinition& def,
                            bool replace = false) = 0;
  // Drops view `name` from now on (snapshots taken before still see it). NotFound when there
  // is none; InvalidArgument while another view names it as an operand.
  virtual Status DropView(const std::string& name) = 0;
  // The views at the newest timestamp, ascending by name.
  virtual Status ListViews(std::vector<ViewInfo>* views) = 0;
  // A snapshot of view `name`'s subgraph (see include/strata/view.h) as of now: a new
  // snapshot of the store, filtered; it owns the snapshot. NotFound when there is no such view.
  virtual Status GetViewSnapshot(const std::string& name, std::unique_ptr<Snapshot>* out) = 0;
  // Same, over `base` (a snapshot of this store, which must outlive *out), with the view as
  // of base.timestamp(): the view at the snapshot's time, or NotFound if it did not exist then.
  virtual Status OpenView(const Snapshot& base, const std::string& name,
                          std::unique_ptr<Snapshot>* out) = 0;
  // An unnamed filter view over `base` (which must outlive *out): a kFilter definition (set
  // operations need named views), nothing stored.
  static Status OpenAdHocView(const Snapshot& base, const ViewDefinition& def,
                              std::unique_ptr<Snapshot>* out);
};

}  // namespace strata
