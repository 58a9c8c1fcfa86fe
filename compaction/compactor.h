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

#include <algorithm>
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
  // Unset: anything older may hold anything (unless bottom). See the rules above. Called
  // from every part's thread at once by RunCompactionParts.
  std::function<bool(VertexId src)> older_may_hold_vertex;
  // Only sources in [min_src, max_src] are merged (one part of a compaction; see
  // RunCompactionParts). What the inputs hold outside is left to other parts.
  VertexId min_src = 0;
  VertexId max_src = ~VertexId{0};
};

struct CompactionResult {
  std::vector<FileMeta> outputs;  // ascending, disjoint source ranges
  uint64_t bytes_read = 0;        // the inputs' sizes (whole files, whatever the range)
  uint64_t bytes_written = 0;
  uint64_t entries_in = 0;        // the inputs' edge records (whole files)
  uint64_t entries_out = 0;
  int parts = 1;                  // parts it was cut into (RunCompactionParts)
  int threads = 1;                // threads that merged them (a joining one counted)
};

// `inputs` newest first. New file numbers come from *next_file_number.
Status RunCompaction(const std::vector<const SegmentReader*>& inputs,
                     const CompactionOptions& options, io::Env* env,
                     std::atomic<uint64_t>* next_file_number, CompactionResult* result);

// How RunCompaction groups `inputs` (newest first): the lengths of its runs of consecutive
// inputs whose vertex ranges ascend without overlap (the files of one level), each merged as
// one input read a file after another. Files holding no vertex stand alone.
std::vector<size_t> InputChains(const std::vector<const SegmentReader*>& inputs);

// Where a compaction of `inputs` splits into at most `max_parts` parts of about equal work:
// the first source of each part after the first, ascending (empty: one part). Cut at the
// inputs' vertex-block boundaries by their edge records (SegmentReader::EdgeSpread); no part
// gets fewer than min_part_edges records (a small merge is not worth a thread).
std::vector<VertexId> PartCuts(const std::vector<const SegmentReader*>& inputs, int max_parts,
                               uint64_t min_part_edges);

// The least records per part the store's compactions ask for: kMinPartEdges unless a test set
// it lower (SetMinPartEdges), to cut its small stores' compactions into parts.
inline constexpr uint64_t kMinPartEdges = uint64_t{1} << 18;
uint64_t MinPartEdges();
void SetMinPartEdges(uint64_t n);

// How RunCompactionParts runs a merge's parts.
struct PartPlan {
  int parts = 1;    // at most this many parts (PartCuts)
  int threads = 1;  // threads merging from the start, the caller's among them (<= parts)
  // When set: one more thread takes parts not yet started once this returns true (polled
  // every kJoinPollMs while such parts remain, from that thread; must be thread-safe). The
  // store sets it to "writers wait on level 0": a merge that began beside running writers
  // then takes the core they leave idle.
  std::function<bool()> join_when;
  // Threads that may merge at once (what the memory reserve must hold).
  int MaxThreads() const { return std::min(parts, threads + (join_when ? 1 : 0)); }
  // Up to n parts, each on its own thread from the start.
  static PartPlan AllAtOnce(int n) { return {n, n, {}}; }
};
inline constexpr int kJoinPollMs = 5;

// RocksDB's subcompactions: RunCompaction over the source ranges PartCuts gives, within
// [options.min_src, options.max_src], each part with its own outputs; the result is what one
// RunCompaction would give (same records; outputs ascending and disjoint, cut at part
// boundaries too). Parts are taken in order by plan.threads threads (and the joining one), one
// part at a time. A failed part fails the whole: no part starts after it, and every part's
// outputs are removed.
Status RunCompactionParts(const std::vector<const SegmentReader*>& inputs,
                          const CompactionOptions& options, const PartPlan& plan, io::Env* env,
                          std::atomic<uint64_t>* next_file_number, CompactionResult* result,
                          uint64_t min_part_edges);

}  // namespace strata::compaction
