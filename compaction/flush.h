// Flush: writes one sealed memgraph as level-0 CSR segments (docs/design.md, "Seal and flush").
//
// Walks subgraphs in vertex order and, for every vertex the memgraph knows (exists or deleted
// mark, or any entry), writes a vertex entry with its marks and its entries — live edges and
// tombstones — sorted by destination. One segment per stored direction: out-lists always,
// in-lists for kDirectedWithInEdges. Each segment is complete and fsynced (with its directory)
// before FlushMemGraph returns; the caller then names it in the manifest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "index/l0_presence.h"
#include "io/env.h"
#include "segment/file_meta.h"
#include "memgraph/memgraph.h"

namespace strata::compaction {

struct FlushOptions {
  std::string dir;
  Timestamp seal_ts = 0;  // every commit in the memgraph is <= seal_ts
  uint32_t block_size = 4096;
  size_t extent_bytes = size_t{1} << 20;  // SegmentWriterOptions::extent_bytes
  uint64_t store_id = 0;                  // SegmentWriterOptions::store_id
  bool drop_page_cache = false;           // SegmentWriterOptions::drop_page_cache
};

struct FlushResult {
  std::vector<FileMeta> files;  // one per direction written
  // Per file: whether its level-0 presence was made while it was written (presence_known[i]),
  // and then that presence (null: none, too sparse); otherwise the caller builds it from the
  // file (index::L0Presence::Build). Made as the file is written, it costs no read back of the
  // vertex table: 10% of a flush's time at scale 23 (docs/benchmarks.md).
  std::vector<bool> presence_known;
  std::vector<std::unique_ptr<const index::L0Presence>> presence;
  uint64_t bytes_written = 0;
  uint64_t entries_written = 0;
};

// `next_file_number` is advanced for each file created.
Status FlushMemGraph(const mem::MemGraph& mg, const FlushOptions& options, io::Env* env,
                     uint64_t* next_file_number, FlushResult* result);

}  // namespace strata::compaction
