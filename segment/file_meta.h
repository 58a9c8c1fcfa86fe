// FileMeta: what the manifest records of one segment file, and what flush and compaction
// report for each file they write. The manifest persists it (docs/file-format.md, "Manifest");
// every field is checked against the file's own header when the file is opened.
#pragma once

#include <cstdint>

#include "strata/types.h"

namespace strata {

struct FileMeta {
  uint64_t number = 0;
  uint32_t level = 0;
  uint64_t size_bytes = 0;
  VertexId min_src = 0;
  VertexId max_src = 0;
  uint64_t num_vertices = 0;
  uint64_t num_edges = 0;
  Timestamp max_ts = 0;  // newest commit whose data the file holds
  uint32_t tag = 0;      // which adjacency the segment holds: 0 = out-lists, 1 = in-lists
  // XXH3 of the file's metadata region and footer (SegmentReader::tail_checksum()): covers
  // the header (file number, store ID, counts, creation time) and every index.
  uint64_t tail_checksum = 0;
};

}  // namespace strata
