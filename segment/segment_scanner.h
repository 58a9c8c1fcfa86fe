// SegmentScanner: every vertex of a segment's source range, in ascending order, and on demand
// its edges, reading each stream (vertex blocks, edges, weights) sequentially with large reads.
// Created by SegmentReader::NewScanner (segment/segment_reader.h).
//
// Threading: a scanner is a single-threaded object; it must not outlive its reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "segment/neighbor_iterator.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

struct ScanOptions {
  ReadOptions read;
  VertexId min_src = 0;                    // first vertex scanned: the first with src >= min_src
  VertexId max_src = ~VertexId{0};         // last: the last with src <= max_src
  // Bytes read at once from each stream (edges, weights, vertex blocks); 0: the reader's
  // SegmentReaderOptions::scan_window. A scanner holds about this much per stream.
  size_t window = 0;
};

// Every vertex (in ascending src) and, on demand, its edges, reading each stream sequentially
// with large reads. Edges of a vertex not asked for are skipped without being read when they
// span whole windows.
class SegmentScanner {
 public:
  ~SegmentScanner();
  SegmentScanner(const SegmentScanner&) = delete;
  SegmentScanner& operator=(const SegmentScanner&) = delete;

  // Advances to the next vertex; false at the end or on an error (see status()).
  bool NextVertex(VertexEntry* v);
  // Advances to the first vertex with src >= target (NextVertex until one is, and the same
  // result), without reading or decoding the vertex blocks that lie wholly before target:
  // a scan that wants few vertices of its range skips the tables between them.
  bool SeekVertex(VertexId target, VertexEntry* v);
  // Makes *v the current vertex without reading a vertex block: *v is this file's entry of a
  // vertex, found elsewhere (the multi-level vertex index keeps every level's entries), and
  // NextEdges then reads its run through the scanner's windows. *v must stay unchanged until
  // the next SetVertex (the scanner keeps the pointer, not a copy). The vertices given ascend
  // and lie in [min_src, max_src]; a scanner positioned this way is not walked with NextVertex
  // or SeekVertex (its vertex blocks are never loaded).
  void SetVertex(const VertexEntry* v);
  // The next batch of the current vertex's edges; false when they are exhausted or on error.
  bool NextEdges(EdgeBatch* batch);
  const Status& status() const { return status_; }

 private:
  friend class SegmentReader;
  SegmentScanner(const SegmentReader* r, const ScanOptions& o);
  bool Fail(Status s);
  // Loads and decodes the vertex blocks from next_block_ on: a window's worth, or one_block.
  Status LoadVertexBatch(bool one_block = false);
  void LimitReadahead(uint64_t jmax);

  size_t window() const;  // o_.window, or the reader's scan_window

  const SegmentReader* r_;
  ScanOptions o_;
  Status status_;
  std::unique_ptr<StreamWindow> edges_;
  std::unique_ptr<StreamWindow> weights_;
  std::unique_ptr<NeighborIterator> it_;  // over the current vertex, sharing the windows
  bool has_current_ = false;
  // it_ is not yet on the current vertex (batch_[batch_pos_ - 1]): scans that skip a vertex's
  // edges never position the iterator on it (NextEdges does, on its first call).
  bool reset_pending_ = false;
  std::string raw_;                        // vertex blocks read (unpinned reader)
  std::vector<uint64_t> raw_off_;
  std::vector<VertexEntry> batch_;         // decoded entries of the loaded vertex blocks
  size_t batch_pos_ = 0;
  // With has_current_: batch_[batch_pos_ - 1], or the entry SetVertex gave.
  const VertexEntry* current_ = nullptr;
  uint64_t next_block_ = 0;  // next vertex block to load
  uint64_t hinted_block_ = 0;  // vertex blocks before this one were named to the OS already
  bool done_ = false;
};

}  // namespace strata
