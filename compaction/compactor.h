// Compactor: the vertex-aware k-way merge of segments (LSMGraph §4;
// docs/design.md, "Levels and compaction").
//
// Inputs are segments of one stored direction, ordered newest first. For each source vertex in
// ascending order the merge takes the inputs that hold it, newest first, up to and including
// the first one whose entry carries a deletion mark (older inputs are hidden for that vertex),
// and writes:
//   - vertex marks: exists = the newest knowing input's; deleted = any taken input's (the
//     output must keep hiding levels older than the inputs) — dropped at the bottom;
//   - edges: per destination the newest input's record wins; a winning tombstone is kept only
//     when something older than the inputs may hold the edge (not at the bottom, no deletion
//     mark in the output, and — when the caller can tell — something older holds the vertex).
//     A vertex with no marks and no edges left is dropped.
// Above the bottom, `older_may_hold_vertex` (when set) narrows "older": a vertex's deletion
// mark and tombstones are kept only if something older than the inputs may hold the vertex.
// It may answer true wrongly, never false.
// Outputs are cut at vertex boundaries once they pass the target size, so each output covers a
// disjoint, ascending vertex range. Each output is complete and fsynced before Run returns.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "io/env.h"
#include "segment/file_meta.h"
#include "segment/segment_reader.h"

namespace strata::compaction {

struct CompactionOptions {
  std::string dir;
  uint32_t output_level = 1;
  uint32_t tag = 0;                     // stored direction of every input and output
  bool bottom = false;                  // nothing older than the inputs holds this direction
  bool weighted = false;
  uint64_t target_file_bytes = 64ull << 20;
  Timestamp max_ts = 0;                 // newest commit in any input (recorded in outputs)
  uint32_t block_size = 4096;
  // Bytes each input reads at once per stream (ScanOptions::window; 0: the reader's
  // default). The merge holds about 3 x this per input plus one batch of edges per input.
  size_t read_window_bytes = 0;
  size_t extent_bytes = size_t{1} << 20;  // outputs' SegmentWriterOptions::extent_bytes
  uint64_t store_id = 0;                  // outputs' SegmentWriterOptions::store_id
  bool drop_page_cache = false;           // outputs' SegmentWriterOptions::drop_page_cache
  // Unset: anything older may hold anything (unless bottom). See the rules above.
  std::function<bool(VertexId src)> older_may_hold_vertex;
};

struct CompactionResult {
  std::vector<FileMeta> outputs;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t entries_in = 0;
  uint64_t entries_out = 0;
};

// `inputs` newest first. New file numbers come from *next_file_number.
Status RunCompaction(const std::vector<const SegmentReader*>& inputs,
                     const CompactionOptions& options, io::Env* env,
                     std::atomic<uint64_t>* next_file_number, CompactionResult* result);

}  // namespace strata::compaction
