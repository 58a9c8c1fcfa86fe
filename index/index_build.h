// Edits that keep a VertexIndex equal to the files of a Version (index/vertex_index.h), and the
// whole-index build used on open. Each function reads only vertex entries (the pinned vertex
// blocks of a segment), never edges.
//
// Invariant kept for one stored direction, exactly (so an index maintained through compactions
// equals one rebuilt from the same files):
//   u has a Pos at level k  <=>  the level-k file whose range holds u has an entry for u.
// Level-0 files are not entered (index/l0_presence.h): a flush leaves the index as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/vertex_index.h"
#include "segment/segment_reader.h"

namespace strata::index {

using Edit = VertexIndex::Edit;

// Vertices per step of ApplyFileChanges / Build: the edits of one step (at most one per file
// per vertex of the step) are all that is held besides the index itself.
inline constexpr uint64_t kChunkVertices = uint64_t{1} << 14;

// Bytes each file's scanner reads at once (ScanOptions::window). A scanner decodes at most
// window / 64 vertex entries a batch (SegmentScanner::LoadVertexBatch): 1,024 here, ~57 KiB,
// against 8,192 (~460 KiB) at the readers' default 1-MiB window. An install after a
// compaction runs beside the old and the new index pages, at the store's peak: with the
// default window its scanners held ~2.6 MB of the 16-MiB quick ingest's peak
// (docs/benchmarks.md, "Issue 28: what an index install holds at a small budget").
inline constexpr size_t kIndexScanWindow = size_t{64} << 10;

// A level file entering or leaving the version (one direction).
struct FileChange {
  const SegmentReader* reader = nullptr;
  uint32_t level = 1;  // 1..kMaxIndexedLevel
  bool added = true;
  // An added file that was on this level until now (a move): its vertices leave from_level
  // as they enter `level`, with one pass over its vertex table. 0: a new file.
  uint32_t from_level = 0;
};

// *out = base with `changes` applied, keeping the invariant above:
//   - a level file removed: its vertices leave that level;
//   - a level file added: a Pos for each of its vertices (applied after the removals, so a
//     compaction may rewrite a level into itself); one moved (from_level) leaves its old
//     level with the removals.
// Works in steps of `chunk_vertices` vertex IDs (a power of two, a multiple of kRangeSize): one
// scanner per file over its vertex entries (opened when the steps reach its range), the edits
// of one step applied before the next. Memory besides the indexes: O(files x chunk_vertices)
// of edits, and per open scanner about scan_window bytes (read and decoded entries; 0: the
// reader's own SegmentReaderOptions::scan_window). Reads only vertex entries, never edges. Requires base to satisfy the invariant for the old
// file set. A change of level 0 (or above kMaxIndexedLevel) is InvalidArgument.
Status ApplyFileChanges(const VertexIndex& base, const std::vector<FileChange>& changes,
                        VertexIndex* out, uint64_t chunk_vertices = kChunkVertices,
                        size_t scan_window = kIndexScanWindow);

// One level file of a version, for Build.
struct IndexedFile {
  const SegmentReader* reader = nullptr;
  uint32_t level = 1;  // 1..kMaxIndexedLevel
};

// The index of a set of level files (one direction) from scratch, in steps as ApplyFileChanges.
Status Build(const std::vector<IndexedFile>& files, VertexIndex* out,
             uint64_t chunk_vertices = kChunkVertices, size_t scan_window = kIndexScanWindow);

}  // namespace strata::index
