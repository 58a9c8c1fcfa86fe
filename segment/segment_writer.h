// SegmentWriter: writes one CSR segment file (segment/segment_format.h, docs/file-format.md) from
// vertices in ascending order and, per vertex, edges in ascending destination order.
//
//   SegmentWriter w(env);
//   w.Open(path, options);
//   w.AddVertex(3, kVertexExists);  w.AddEdge(5, 1.0);  w.AddEdge(9, 2.5, /*tombstone=*/true);
//   w.AddVertex(7, 0);              w.AddEdge(1);
//   w.Finish(&stats);               // writes metadata, fdatasyncs, closes
//
// Memory is bounded independently of the segment's size: one extent buffer per stream (edges,
// weights, vertex blocks, bloom partitions), one bloom partition's key hashes, the small vertex
// and bloom indexes (40 bytes per vertex block, 32 per partition), and the skip table of the
// current vertex (16 bytes per 128 of its edges). All file writes are appends of whole extents
// (extent_bytes, default 1 MiB) except the last piece of each stream and the metadata.
//
// Errors are sticky: after a failed call every later call returns the same Status. The caller
// makes the new file's directory entry durable (io::Env::SyncDir) before relying on it.
// Not thread-safe; one writer per file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/env.h"
#include "segment/segment_format.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

struct SegmentWriterOptions {
  bool weighted = false;         // store a weight per edge (a separate stream)
  bool keep_timestamps = false;  // store a timestamp per edge; else `timestamp` applies to all
  // Bytes per block, its 8-byte checksum included: a multiple of 512 in [512, 1 MiB]. A random
  // neighbor fetch reads whole blocks; scans read whole extents.
  uint32_t block_size = 4096;
  // Target size of one write; rounded down to whole blocks (at least one).
  size_t extent_bytes = size_t{1} << 20;
  uint32_t level = 0;
  uint64_t file_number = 0;
  Timestamp timestamp = 0;  // the segment timestamp (e.g. the seal timestamp of a flush)
  // Bloom filter density; 0 writes no filter. At most 64.
  int bloom_bits_per_key = 10;
  // Keys per bloom partition (the writer holds one partition's hashes, 8 bytes per key).
  uint32_t bloom_keys_per_partition = 4096;
  // Vertex entries per vertex block: FindVertex decodes up to this many entries. 1..4096.
  uint32_t vertex_group = 64;
  uint32_t user_tag = 0;  // stored in the header for the caller (e.g. out- or in-edges)
  uint64_t store_id = 0;  // stored in the header: the store the file belongs to
  // After the final sync, drop the file's pages from the kernel page cache (the store reads
  // segments back through its own bounded caches; see Options::memory_budget).
  bool drop_page_cache = false;
};

struct SegmentWriteStats {
  uint64_t file_size = 0;
  uint64_t num_vertices = 0;
  uint64_t num_edges = 0;  // edge records, tombstones included
  uint64_t num_tombstones = 0;
  uint64_t edge_stream_bytes = 0;  // logical bytes of encoded runs
  uint64_t edge_bytes = 0;         // on disk: edge blocks with their checksums
  uint64_t weight_bytes = 0;
  uint64_t vertex_bytes = 0;
  uint64_t bloom_bytes = 0;
  uint64_t metadata_bytes = 0;  // preamble page, extent tables, indexes, header, footer
  uint64_t tail_checksum = 0;   // SegmentReader::tail_checksum() of the file
};

class SegmentWriter {
 public:
  explicit SegmentWriter(io::Env* env);
  // An unfinished writer closes its file, leaving an invalid segment (Abandon removes it).
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Creates (or truncates) the file and writes its preamble.
  Status Open(const std::string& path, const SegmentWriterOptions& options);

  // Starts the entry of vertex `src`; `flags` is a combination of kVertexExists,
  // kVertexDeleted and kVertexAdded. Sources must strictly ascend (else InvalidArgument).
  Status AddVertex(VertexId src, uint8_t flags);

  // Adds an edge record of the current vertex. Destinations must strictly ascend within the
  // vertex (else InvalidArgument). `weight` is ignored unless options.weighted; `ts` unless
  // options.keep_timestamps. A tombstone is a delete marker hiding older copies of the edge.
  Status AddEdge(VertexId dst, double weight = 1.0, bool tombstone = false, Timestamp ts = 0) {
    const uint8_t tomb = tombstone ? 1 : 0;
    return AddEdges(&dst, &weight, &tomb, 1, &ts);
  }
  // Adds n edge records of the current vertex, as n AddEdge calls would (the same file, byte
  // for byte; a rejected call adds none of them). Null arrays mean all 1.0 (weight), no
  // tombstones (tomb: nonzero marks one), all 0 (ts). For merges and flushes, which copy runs
  // through: the order checks, the chunk fill and the bloom hashes run over the array.
  Status AddEdges(const VertexId* dst, const double* weight, const uint8_t* tomb, size_t n,
                  const Timestamp* ts = nullptr);

  // Writes the remaining data and the metadata, fdatasyncs and closes the file.
  Status Finish(SegmentWriteStats* stats = nullptr);

  // Closes and removes the file (after an error, or to drop the output).
  Status Abandon();

  // Bytes the file would have if finished now (approximate): for cutting outputs near a target.
  uint64_t EstimatedFileSize() const;
  uint64_t num_vertices() const { return header_.num_vertices + (have_vertex_ ? 1 : 0); }
  uint64_t num_edges() const { return header_.num_edges; }
  const std::string& path() const { return path_; }

 private:
  class BlockStream;
  class VarBlocks;

  Status Fail(Status s);
  Status FinishVertex();
  Status EmitChunk(bool multi);
  Status CloseVertexBlock();
  Status CloseBloomPartition();
  Status WriteExtent(std::string* buf, uint64_t* offset);

  io::Env* const env_;
  std::string path_;
  SegmentWriterOptions options_;
  std::unique_ptr<io::WritableFile> file_;
  Status status_;
  bool opened_ = false;
  bool finished_ = false;
  SegmentHeader header_;

  std::unique_ptr<BlockStream> edges_;
  std::unique_ptr<BlockStream> weights_;
  std::unique_ptr<VarBlocks> vertex_blocks_;
  std::unique_ptr<VarBlocks> bloom_blocks_;

  // Current vertex.
  bool have_vertex_ = false;
  VertexId cur_src_ = 0;
  uint8_t cur_flags_ = 0;
  uint64_t cur_degree_ = 0;
  uint64_t cur_run_start_ = 0;   // edge-stream offset of the run
  uint64_t cur_first_edge_ = 0;  // edge index of the first edge
  bool cur_has_tombstones_ = false;
  VertexId last_dst_ = 0;        // last destination added (valid when cur_degree_ > 0)
  VertexId prev_encoded_ = 0;    // last destination encoded into the stream
  uint64_t chunks_emitted_ = 0;
  std::vector<char> skip_;       // skip table of the current run (kSkipEntrySize per chunk > 0)

  // The pending chunk of the current vertex.
  uint32_t chunk_n_ = 0;
  VertexId chunk_dst_[kChunkEdges];
  Timestamp chunk_ts_[kChunkEdges];
  double chunk_weight_[kChunkEdges];
  bool chunk_tomb_[kChunkEdges];
  bool chunk_has_tomb_ = false;
  char chunk_buf_[kMaxChunkBytes];  // the pending chunk's encoding (segment_format.h's bound)

  // Vertex block being built.
  std::string vblock_;
  uint32_t vblock_count_ = 0;
  VertexId vblock_prev_src_ = 0;
  VertexIndexEntry vblock_entry_;
  std::vector<VertexIndexEntry> vertex_index_;

  // Bloom partition being built.
  std::vector<uint64_t> bloom_hashes_;
  BloomIndexEntry bloom_entry_;
  std::vector<BloomIndexEntry> bloom_index_;
};

}  // namespace strata
