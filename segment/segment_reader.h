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
// Iterators (segment/neighbor_iterator.h) and scanners (segment/segment_scanner.h) are
// single-threaded objects; they must not outlive their reader.
//
// Memory: the vertex index (40 bytes per vertex block), the bloom index (32 bytes per
// partition) and the extent tables are always in memory. With pin_vertex_blocks the vertex
// blocks are too (about 3-5 bytes per vertex), with pin_bloom the filter (bits_per_key / 8 bytes
// per edge); unpinned, FindVertex and GetEdge read them on demand (one small read each), through
// the shared BlockCache when one is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/env.h"
#include "segment/neighbor_iterator.h"
#include "segment/segment_format.h"
#include "segment/segment_scanner.h"
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


// One edge record, as GetEdge returns it.
struct EdgeRecord {
  VertexId dst = 0;
  bool tombstone = false;
  Timestamp ts = 0;     // the edge's timestamp, or the segment timestamp without the column
  double weight = 1.0;  // 1.0 in unweighted segments
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

  // ReadNeighborsBatch in two halves around its reads, for callers that perform the reads
  // themselves (an io::ReadQueue: the frontier reads' coroutines, db/tier_reader.cc):
  // PlanNeighborsBatch fills b->reqs (reads of this file, buffers inside *b); once every one
  // has completed (its status set), DecodeNeighborsBatch checks them and the blocks' checksums
  // and calls fn as ReadNeighborsBatch does. vs, n, o and big_run must be the same in both;
  // *b is reusable across calls (its buffers keep their capacity).
  struct BatchReads {
    std::vector<uint64_t> eb, wb;    // blocks of the edge and weight streams, ascending
    std::string ebuf, wbuf;          // their bytes
    std::vector<uint64_t> eat, wat;  // payload offset of each block in ebuf / wbuf
    std::vector<io::ReadRequest> reqs;
    std::string scratch, wscratch;   // runs that cross blocks, copied
  };
  void PlanNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o, BatchReads* b,
                          uint64_t big_run = uint64_t{256} << 10) const;
  Status DecodeNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                              BatchReads* b, FunctionRef<bool(size_t, const EdgeBatch&)> fn,
                              uint64_t big_run = uint64_t{256} << 10) const;
  const io::RandomAccessFile& file() const { return *file_; }
  io::Env* env() const { return env_; }
  std::unique_ptr<SegmentScanner> NewScanner(const ScanOptions& o) const;

  // Reads every byte: every block's checksum, the layout (each byte belongs to exactly one
  // block or section), and the decoded contents against the header (counts, order, skip
  // tables, timestamp range, bloom filter holding every key).
  Status Verify() const;

  // Bytes in memory for this reader (indexes and pinned blocks).
  size_t MemoryUsage() const;

  // How the edge records spread over the source range: appends, per vertex block in order,
  // the block's first source and the records of its vertices' runs. From the resident vertex
  // index (no read): for cutting a scan into parts of about equal work.
  void EdgeSpread(std::vector<std::pair<VertexId, uint64_t>>* out) const;

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
  // The reads of the given blocks (sorted, unique) of a stream into *buf (sized here; adjacent
  // blocks of an extent merged into one read), appended to *reqs, and where each block's
  // payload is in *buf (each followed by its 8-byte checksum). CheckStreamBlocks verifies them
  // once read.
  void PlanStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks, std::string* buf,
                        std::vector<uint64_t>* payload_at, std::vector<io::ReadRequest>* reqs) const;
  Status CheckStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks,
                           const std::string& buf, const std::vector<uint64_t>& payload_at) const;
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

// ---- inline definitions

inline uint64_t SegmentReader::BlockOffset(const Stream& s, uint64_t block) const {
  const uint64_t e = header_.blocks_per_extent;
  return s.extents[block / e] + (block % e) * header_.block_size;
}

inline uint64_t SegmentReader::BlockPhysicalSize(const Stream& s, uint64_t block) const {
  const uint64_t p = header_.payload_per_block();
  if (block + 1 < s.blocks) return header_.block_size;
  return s.len - block * p + kBlockTrailerSize;
}

}  // namespace strata
