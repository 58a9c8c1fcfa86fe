// NeighborIterator: the edge records of one vertex of a segment, in destination order, decoded
// a batch at a time; and what it reads (VertexEntry: the vertex's run; ReadOptions) and yields
// (EdgeBatch). Created by SegmentReader::NewNeighborIterator (segment/segment_reader.h) or
// inside a SegmentScanner, which shares its read-ahead windows with it.
//
// Every chunk is checked as it is decoded (flags, tombstone bitmap, varints, the run's length):
// a mismatch is Status::Corruption naming the file and the offset.
//
// Threading: an iterator is a single-threaded object; it must not outlive its reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "strata/status.h"
#include "strata/types.h"

namespace strata {

class SegmentReader;
class StreamWindow;

// A vertex as this segment records it. Callers may keep entries (e.g. in the multi-level
// index) and open neighbor iterators from them without another FindVertex.
struct VertexEntry {
  VertexId src = 0;
  uint8_t flags = 0;            // kVertexExists | kVertexDeleted | kVertexAdded
  bool has_tombstones = false;  // some edge record is a tombstone
  uint64_t degree = 0;          // edge records, tombstones included
  uint64_t ordinal = 0;         // position among the segment's vertices (0-based)
  uint64_t stream_offset = 0;   // edge-stream offset of the run
  uint64_t run_bytes = 0;
  uint64_t first_edge = 0;      // edge index of the first edge (weights are stored by it)
};

// What iterators decode besides destinations and tombstones.
struct ReadOptions {
  bool weights = false;     // fill EdgeBatch::weight (reads the weight stream)
  bool timestamps = false;  // fill EdgeBatch::ts
  // Most edges per batch; rounded up to a multiple of 128 (one chunk).
  size_t max_batch = 1024;
  // For readers that usually stop after a few records of a run (a bottom-up BFS step, WCC's
  // sampling): a run's first batch is its first `first_batch` records (at most one chunk; the
  // whole first chunk where a timestamp column follows the destinations), and the rest of that
  // chunk comes in pieces as long as what came before (16, 16, 32, 64). 0: every batch is
  // whole chunks up to max_batch.
  size_t first_batch = 0;
};

// Consecutive edge records of one vertex in destination order. Valid until the next call on
// the iterator that produced it.
struct EdgeBatch {
  const VertexId* dst = nullptr;
  const uint8_t* tombstone = nullptr;  // 1: delete marker. All 0 when !has_tombstones
  const Timestamp* ts = nullptr;       // only with ReadOptions::timestamps
  const double* weight = nullptr;      // only with ReadOptions::weights
  size_t size = 0;
  bool has_tombstones = false;
};

// Edge records of one vertex, in destination order, decoded a batch at a time.
class NeighborIterator {
 public:
  ~NeighborIterator();
  NeighborIterator(const NeighborIterator&) = delete;
  NeighborIterator& operator=(const NeighborIterator&) = delete;

  // The next batch (size > 0), or false at the end or on an error (then status() says which).
  bool Next(EdgeBatch* batch);
  // Repositions so the next batch starts at the first record with dst >= target (using the
  // run's skip table: one chunk decoded, not the run). May move backwards.
  Status Seek(VertexId target);
  const Status& status() const { return status_; }
  const VertexEntry& vertex() const { return v_; }

 private:
  friend class SegmentReader;
  friend class SegmentScanner;
  // own_windows: a standalone iterator (reads stop at the run's end; deletes the windows).
  // Otherwise the windows belong to a scanner and read ahead through the whole stream.
  NeighborIterator(const SegmentReader* r, const VertexEntry& v, const ReadOptions& o,
                   StreamWindow* edges, StreamWindow* weights, uint64_t window_goal,
                   bool own_windows);
  void Reset(const VertexEntry& v);
  void Restart();
  bool Fail(Status s);
  Status LoadSkipTable();
  // Verify(): compares the skip table with the chunk boundaries seen while decoding.
  Status CheckSkipTable();
  // Decodes the next records of the current chunk into arrays at `at`, at most `limit` of them
  // (all the chunk's remaining records when the segment keeps timestamps); sets *n. A chunk
  // decoded in pieces keeps pos_ at its start until its last piece.
  Status DecodeChunk(size_t at, uint32_t limit, uint32_t* n, bool* tomb);

  const SegmentReader* r_;
  VertexEntry v_;
  ReadOptions o_;
  StreamWindow* edges_;    // owned unless shared with a scanner
  StreamWindow* weights_;  // idem; nullptr without ReadOptions::weights
  bool own_windows_;
  uint64_t window_goal_;   // bytes to read ahead past the bytes needed
  // The last Reset skipped far (see Reset): read no further ahead than the run's end.
  static constexpr uint64_t kSparseGap = uint64_t{64} << 10;
  bool sparse_ = false;
  // Shared windows read no further than these stream offsets (a scanner's range end).
  uint64_t edge_limit_ = ~uint64_t{0};
  uint64_t weight_limit_ = ~uint64_t{0};
  Status status_;

  uint64_t nchunks_ = 0;
  uint64_t chunks_end_ = 0;  // stream offset where chunks end (skip table starts)
  uint64_t run_end_ = 0;
  uint64_t pos_ = 0;         // stream offset of the next chunk
  uint64_t chunk_ = 0;       // index of the next chunk
  uint32_t in_chunk_ = 0;    // records of chunk chunk_ already decoded (a chunk read in pieces)
  uint32_t piece_off_ = 0;   // then: offset from pos_ of the next destination varint
  VertexId prev_ = 0;        // last destination decoded
  bool has_seek_ = false;
  VertexId seek_target_ = 0;
  uint64_t last_first_ = 0;     // run index of the last batch's first edge
  bool check_skip_ = false;     // record chunk boundaries for CheckSkipTable
  std::vector<uint64_t> seen_skip_;
  std::vector<uint64_t> skip_;  // loaded skip table: prev_dst, offset pairs (chunks 1..n-1)

  // Batch arrays, `cap_` entries each (ts_ and weight_ only when asked for), in one allocation.
  size_t cap_ = 0;
  std::unique_ptr<char[]> mem_;
  VertexId* dst_ = nullptr;
  Timestamp* ts_ = nullptr;
  double* weight_ = nullptr;
  uint8_t* tomb_ = nullptr;
  bool tomb_zero_ = true;  // tomb_[0, cap_) is all zero: chunks without tombstones write nothing
};

}  // namespace strata
