// Options: how a store is opened. Every field has a sane default; DB::Open rejects an invalid
// combination with InvalidArgument naming the field.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/types.h"

namespace strata {

enum class WalMode : unsigned char {
  kOff = 0,    // no log: a crash loses what was not yet flushed
  kGroup = 1,  // one fsync per group of concurrent batches (default)
  kSync = 2,   // one fsync per batch
};

enum class IoBackend : unsigned char {
  kAuto = 0,     // io_uring when the kernel allows it, else pread/pwrite
  kIoUring = 1,  // io_uring or fail at Open
  kPosix = 2,    // pread/pwrite
};

struct Options {
  // --- Store creation. Fixed once the store exists; a mismatch on reopen is InvalidArgument.
  GraphKind graph_kind = GraphKind::kDirected;
  bool weighted = false;  // store a double weight per edge (unweighted edges read as 1.0)

  bool create_if_missing = true;
  bool error_if_exists = false;

  // Keep everything in the in-memory tier: no directory, no flush, nothing persisted.
  bool in_memory = false;

  // Open an existing store without changing any of its files: no manifest rewrite, no
  // removal of leftover files, no LOG, no new WAL; logs are replayed into memory only (never
  // flushed). Works on a read-only directory. Takes the store's lock shared: any number of
  // read-only openers at once, none while a writer has it open. Write, NewVertex, Flush and
  // CompactAll return NotSupported. create_if_missing is ignored.
  bool read_only = false;

  // Repair on open: a damaged (not torn) last record of a write-ahead log — written whole,
  // checksum wrong, so a batch that was acknowledged — is dropped (LOG names it) instead of
  // failing Open with Corruption naming the log and offset. `strata repair` sets it.
  bool repair = false;

  // --- Memory.
  // Total memory the store may use: the memgraphs (memgraph_bytes x (1 +
  // max_sealed_memgraphs), each counted at the pages its arena holds per byte of nodes, as
  // measured), an I/O reserve (budget/16, 64 KiB to 32 MiB; a file's write buffer and the
  // buffers kept between files come out of it), the resident indexes, a spare memgraph arena
  // when there is room for one, and a block cache of vertex blocks and bloom filters that
  // gets the rest. Open refuses a budget the memgraphs and the reserve do not fit. DBStats
  // reports each part.
  size_t memory_budget = size_t{1} << 30;
  // Capacity of one memgraph; when the active one reaches it, it is sealed and flushed.
  size_t memgraph_bytes = size_t{64} << 20;
  // Sealed memgraphs that may wait for flush before writers stall.
  int max_sealed_memgraphs = 1;

  // --- In-memory tier (RapidStore).
  // A vertex whose out-degree in a memgraph passes this moves from the subgraph's clustered
  // index to its own C-ART; it moves back when it falls under half of it.
  uint32_t cart_threshold = 256;
  // Initial reader-tracer slots; the tracer grows when they are all in use (never fails).
  uint32_t reader_slots = 64;
  // Largest internal vertex ID accepted plus one. Internal IDs are dense; sparse IDs belong
  // in the tools' dictionary.
  VertexId max_vertex_id = VertexId{1} << 36;

  // --- Disk levels (LSMGraph multi-level CSR).
  // Level-0 files that trigger an L0 -> L1 compaction, and that stall writers. Every L0 -> L1
  // merge rewrites the level-1 files its inputs overlap (all of them for random edges), so
  // the trigger sets how much new data each rewrite of level 1 carries: 8 against 4 cut
  // ingest_large's write amplification 7.8 -> 7.0 at scale 23 and its L0 stalls (25-34 s) to
  // none (docs/benchmarks.md, "Issue 28: level 0 at 8 files"); between ingests the idle merge
  // (idle_compaction_ms) empties level 0 for readers.
  int l0_compaction_trigger = 8;
  int l0_stall_trigger = 20;
  // Target size of level 1; level i+1 targets level_fanout times level i.
  uint64_t level1_bytes = uint64_t{256} << 20;
  int level_fanout = 10;
  int max_levels = 6;
  // Compaction outputs are cut at the first vertex boundary past this size.
  uint64_t target_file_bytes = uint64_t{64} << 20;
  // Threads one compaction may use: its merge is cut by source range into up to this many
  // parts of at least 256 K edge records each, merged at once and installed together
  // (RocksDB's subcompactions). Used where the merge takes no core from a writer: DB::WaitIdle
  // and DB::CompactAll (`strata compact`), an idle store's merge, and a level 0 that stalls
  // writers. A compaction that begins beside running writers is cut into twice this many
  // parts and merged by one thread, which a second joins (taking parts not yet started) if
  // writers come to wait on level 0, or a caller to wait in DB::WaitIdle, before it ends
  // (DBStats::compactions_joined). 1: always one.
  int max_subcompactions = 2;
  // A level-k file (k >= 1) picked for a merge into level k+1 that overlaps no file there is
  // moved down by a manifest edit instead of being rewritten (LevelDB's trivial move): its
  // records are what the merge would write, but for tombstones and deletion marks that hide
  // nothing older, which stay until the file is next merged. False: always rewrite (for A/B
  // measurement). A store whose files were moved opens only with this version or later: an
  // older one reports the header's level against the manifest's as Corruption.
  bool compaction_moves = true;
  // Run compactions in the background (tests may turn this off to place them by hand).
  bool background_compaction = true;
  // When no batch has been written for this long, no flush is pending and level 0 holds
  // files, the background thread merges level 0 into level 1, whatever
  // l0_compaction_trigger says: a store that stopped taking writes is being read, and every
  // L0 file costs each point read a lookup and each list a merge (LevelDB compacts a file
  // that serves many seeks for the same reason). 0 turns it off. DB::WaitIdle does the merge
  // at once.
  uint32_t idle_compaction_ms = 2000;
  // Point reads locate a vertex on disk through the multi-level vertex index (index/), and
  // vertex walks (ScanVertices, ScanVertexDegreeBounds) take the levels' vertices and degrees
  // from it instead of reading the levels' vertex tables. False (or the environment variable
  // STRATA_VERTEX_INDEX_READS=0) makes point reads search each level's files by range and
  // walks stream every file's vertex table, for A/B measurement; the index is maintained
  // either way.
  bool vertex_index_reads = true;

  // --- Durability and I/O.
  WalMode wal = WalMode::kGroup;
  IoBackend io_backend = IoBackend::kAuto;
  // Flush and compaction outputs leave the OS page cache after their fsync
  // (posix_fadvise(DONTNEED)), so the store's writes do not grow the page cache — for a
  // container whose memory limit counts it. The cost: the next compaction reads its inputs,
  // just written, back from the device (ingest_large at scale 18: 6-10% slower by the medians
  // of alternated runs, docs/benchmarks.md). False leaves written pages to the kernel, which reclaims them as any
  // clean file page; the store's own memory (memory_budget) is the same either way.
  bool drop_written_pages = false;

  // --- Change feed (docs/change-feed.md).
  // Write-ahead logs kept after their flush because a durable subscription has not passed
  // them, at most this many bytes; beyond it the oldest are deleted and the subscriptions that
  // needed them are marked lost (Subscribe names them; they must be dropped and recreated).
  uint64_t feed_max_retained_wal_bytes = uint64_t{1} << 30;
};

}  // namespace strata
