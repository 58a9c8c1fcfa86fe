// Version: the set of tiers a reader sees, pinned by reference count
// (docs/design.md, "Version pinning (per-vertex version control)"). Immutable once installed;
// db/version_set.h installs a new Version when a memgraph is sealed, a flush completes or a
// compaction completes. A snapshot holds a shared_ptr to the Version it started with, so the
// memgraphs and segment files it uses stay alive (and on disk) until it ends.
//
// Why whole-Version pinning is enough for snapshot isolation across flushes: a reader registers
// its timestamp and takes the current Version under one mutex. A Version that contains a
// flushed segment is installed only after the seal that produced it, and the seal happened with
// no writer in flight at t_r == t_w == S; so any reader that can see the segment registered at
// τ >= S and may see all of it. Readers registered earlier hold a Version with the sealed
// memgraph instead, which they read at their τ.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "index/l0_presence.h"
#include "index/vertex_index.h"
#include "segment/block_cache.h"
#include "db/manifest.h"
#include "segment/segment_reader.h"
#include "memgraph/memgraph.h"

namespace strata {

// An open segment file. When the last reference goes and the file was made obsolete (by a
// compaction), the file is deleted.
struct SegmentHandle {
  std::shared_ptr<io::Env> env;  // the reader's Env lives as long as any reader of it
  std::shared_ptr<BlockCache> cache;  // idem for the cache it reads through (may be null)
  FileMeta meta;
  std::string path;
  // Shared by the handles of one file: a file moved a level down (Options::compaction_moves)
  // gets a new handle, with the new level in `meta`, over the same reader.
  std::shared_ptr<SegmentReader> reader;
  // A level-0 file's vertices (index/l0_presence.h), when the store reads through the vertex
  // index and the file's IDs are dense enough; null: ask the file's vertex table.
  std::unique_ptr<const index::L0Presence> presence;
  std::atomic<bool> obsolete{false};
  ~SegmentHandle();
};

struct Version {
  // Newest first: memgraphs[0] is the active memgraph, then sealed ones waiting for flush.
  std::vector<std::shared_ptr<mem::MemGraph>> memgraphs;
  // Level-0 segments, newest first, per stored direction (0 = out-lists, 1 = in-lists).
  std::vector<std::shared_ptr<SegmentHandle>> l0[2];
  // levels[dir][k] is level k+1: disjoint vertex ranges, sorted by min_src. Deeper is older.
  std::vector<std::vector<std::shared_ptr<SegmentHandle>>> levels[2];

  // The multi-level vertex index of each direction (index/vertex_index.h): always equal to the
  // level files above (the per-level entries of every vertex they hold; level-0 files are in
  // `l0` with their own presence, not in the index). Installed with them in the same Version,
  // so a reader sees the index of its own file set; a compaction's install copies only the
  // index pages its files touch and shares the rest with the previous Version; a flush's
  // shares all of them.
  index::VertexIndex index[2];
  // Point reads and vertex walks use `index` (Options::vertex_index_reads); false: point reads
  // search by file range and walks stream every file's vertex table.
  bool index_reads = true;

  // The segment of level k+1 whose vertex range holds u, or null.
  const SegmentHandle* LevelFind(int dir, size_t k, VertexId u) const;
  // Every file of a direction, newest data first: L0 newest first, then L1, L2, ...
  std::vector<const SegmentHandle*> AllFiles(int dir) const;
  uint64_t DiskBytes() const;
  size_t FileCount() const;
};

// The index of direction `dir` once a compaction replaces `inputs` (files of `base`, any
// levels) with `outputs` on level `output_level`.
Status IndexAfterCompaction(const Version& base, int dir,
                            const std::vector<std::shared_ptr<SegmentHandle>>& inputs,
                            const std::vector<std::shared_ptr<SegmentHandle>>& outputs,
                            uint32_t output_level, index::VertexIndex* out);
// Builds both directions' indexes of v from its level files (open).
Status RebuildIndex(Version* v);

}  // namespace strata
