// SegmentReader: reads one CSR segment file (segment/segment_format.h, docs/file-format.md).
//
//   std::unique_ptr<SegmentReader> r;
//   SegmentReader::Open(env, path, SegmentReaderOptions(), &r);
//   VertexEntry v;
//   if (r->FindVertex(42, &v).ok()) {
//     auto it = r->NewNeighborIterator(v, ReadOptions());
//     EdgeBatch b;
//     while (it->Next(&b)) for (size_t i = 0; i < b.size; i++) use(b.dst[i], b.tombstone[i]);
//     if (!it->status().ok()) ...;
//   }
//
// Open validates the preamble, footer, header and every metadata section (checksums, counts,
// offsets); every block is checked against its checksum when it is read. Any mismatch is
// Status::Corruption("file <path> offset <n>: ..."): never a crash, never a wrong answer.
// Verify() reads and checks every byte of the file.
//
// Threading: a SegmentReader is immutable after Open and all its methods are thread-safe.
// Iterators and scanners are single-threaded objects; they must not outlive their reader.
//
// Memory: the vertex index (40 bytes per vertex block), the bloom index (32 bytes per
// partition) and the extent tables are always in memory. With pin_vertex_blocks the vertex
// blocks are too (about 3-5 bytes per vertex), with pin_bloom the filter (bits_per_key / 8 bytes
// per edge); unpinned, FindVertex and GetEdge read them on demand (one small read each), through
// the shared BlockCache when one is given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/env.h"
#include "segment/segment_format.h"
#include "strata/function_ref.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

class BlockCache;

struct SegmentReaderOptions {
  bool pin_vertex_blocks = true;
  bool pin_bloom = true;
  // With a cache, nothing is pinned (the pin_* flags are ignored): vertex blocks and bloom
  // partitions are read on demand and kept in the shared, bounded cache. The cache must
  // outlive the reader.
  BlockCache* cache = nullptr;
  // Bytes a scanner reads at once from each stream (rounded to whole blocks).
  size_t scan_window = size_t{1} << 20;
  // Most bytes a neighbor iterator reads at once (a small run is read whole, in one read).
  size_t random_window = size_t{256} << 10;
};

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

// One edge record, as GetEdge returns it.
struct EdgeRecord {
  VertexId dst = 0;
  bool tombstone = false;
  Timestamp ts = 0;     // the edge's timestamp, or the segment timestamp without the column
  double weight = 1.0;  // 1.0 in unweighted segments
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

class SegmentReader;
class StreamWindow;

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
  bool done_ = false;
};

class SegmentReader {
 public:
  static Status Open(io::Env* env, const std::string& path, const SegmentReaderOptions& options,
                     std::unique_ptr<SegmentReader>* out);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  const SegmentHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  // XXH3 of the metadata region and the footer (seed kind 12): what the manifest records per
  // file to tell this file from any other with the same name.
  uint64_t tail_checksum() const { return tail_checksum_; }
  uint64_t file_size() const { return file_size_; }
  uint64_t num_vertices() const { return header_.num_vertices; }
  uint64_t num_edges() const { return header_.num_edges; }
  Timestamp timestamp() const { return header_.timestamp; }

  // The entry of `src`, or NotFound. Binary search over the vertex index, then one vertex
  // block decoded.
  Status FindVertex(VertexId src, VertexEntry* v) const;
  // The entry at position `ordinal` (< num_vertices()).
  Status VertexAt(uint64_t ordinal, VertexEntry* v) const;

  // False only if no record (src, dst) is in this segment.
  bool MayContainEdge(VertexId src, VertexId dst) const;
  Status MayContainEdge(VertexId src, VertexId dst, bool* may) const;

  // The record (src, dst) — live or tombstone — or NotFound. Bloom filter first.
  Status GetEdge(VertexId src, VertexId dst, EdgeRecord* e) const;
  // The same for a vertex whose entry the caller has (e.g. from the multi-level index).
  Status GetEdgeOf(const VertexEntry& v, VertexId dst, EdgeRecord* e,
                   bool bloom_checked = false) const;

  std::unique_ptr<NeighborIterator> NewNeighborIterator(const VertexEntry& v,
                                                        const ReadOptions& o) const;

  // The edges of many vertices (e.g. a BFS frontier) with all their block reads in flight at
  // once: one MultiRead, which io_uring submits as one batch. Then calls fn(i, batch) for every
  // batch of vs[i]'s edges, i ascending (vertices without edges are skipped); fn returns false
  // to stop. Runs longer than big_run bytes are streamed on their own when their turn comes.
  // Memory: the blocks of all the other runs at once, so callers bound n.
  Status ReadNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                            FunctionRef<bool(size_t, const EdgeBatch&)> fn,
                            uint64_t big_run = uint64_t{256} << 10) const;
  std::unique_ptr<SegmentScanner> NewScanner(const ScanOptions& o) const;

  // Reads every byte: every block's checksum, the layout (each byte belongs to exactly one
  // block or section), and the decoded contents against the header (counts, order, skip
  // tables, timestamp range, bloom filter holding every key).
  Status Verify() const;

  // Bytes in memory for this reader (indexes and pinned blocks).
  size_t MemoryUsage() const;

 private:
  friend class NeighborIterator;
  friend class SegmentScanner;
  friend class StreamWindow;

  struct Stream {
    uint32_t kind = 0;
    const char* name = "";
    uint64_t len = 0;  // logical bytes
    uint64_t blocks = 0;
    std::vector<uint64_t> extents;
  };

  SegmentReader(io::Env* env, std::string path, const SegmentReaderOptions& o);
  Status Load();
  Status ParseMetadata(const char* preamble, const std::string& meta, uint64_t meta_start,
                       const SegmentFooter& f);
  Status LoadBlocks(bool vertex, uint64_t first, uint64_t last, std::string* out,
                    std::vector<uint64_t>* offsets) const;
  // Decodes vertex block j (raw bytes, checksum verified) into entries, or finds src in it.
  Status DecodeVertexBlock(uint64_t j, const char* data, size_t size,
                           std::vector<VertexEntry>* out, VertexId find, VertexEntry* found,
                           bool* hit) const;
  // *data points into the pinned blocks or into *hold (a cached or freshly read block).
  Status ReadVertexBlock(uint64_t j, std::shared_ptr<const std::string>* hold,
                         const char** data) const;
  Status ReadBloomPartition(uint64_t p, std::shared_ptr<const std::string>* hold,
                            const char** data) const;
  Status ReadMetaBlock(bool vertex, uint64_t j, std::shared_ptr<const std::string>* hold) const;
  uint64_t BlockOffset(const Stream& s, uint64_t block) const;
  uint64_t BlockPhysicalSize(const Stream& s, uint64_t block) const;
  uint64_t StreamFileOffset(const Stream& s, uint64_t pos) const;  // for error messages
  Status StreamCorruption(const Stream& s, uint64_t pos, const std::string& what) const;
  // Reads the given blocks (sorted, unique) of a stream with one MultiRead, verifies them, and
  // returns where each block's payload is in *buf (each followed by its 8-byte checksum).
  Status LoadStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks, std::string* buf,
                          std::vector<uint64_t>* payload_at) const;
  Status VerifyLayout() const;

  io::Env* env_;
  const std::string path_;
  const SegmentReaderOptions options_;
  const uint64_t cache_owner_;  // BlockCache::NewOwnerId(), when options_.cache is set
  std::unique_ptr<io::RandomAccessFile> file_;
  uint64_t file_size_ = 0;
  uint64_t tail_checksum_ = 0;
  SegmentHeader header_;
  SegmentFooter footer_;
  Stream edge_stream_;
  Stream weight_stream_;
  std::vector<VertexIndexEntry> vertex_index_;
  std::vector<BloomIndexEntry> bloom_index_;
  // Pinned blocks: raw bytes (checksums included) and where block j starts in them.
  std::string pinned_vertex_;
  std::vector<uint64_t> pinned_vertex_off_;
  std::string pinned_bloom_;
  std::vector<uint64_t> pinned_bloom_off_;
};

}  // namespace strata
