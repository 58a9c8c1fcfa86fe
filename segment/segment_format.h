// The CSR segment file format, version 2: constants and the fixed-size records.
//
// docs/file-format.md describes every byte; this header is its executable half. In short:
//
//   [preamble 32 B + zero padding to 4096]
//   [data region: extents of edge blocks, weight blocks, vertex blocks, bloom partitions]
//   [edge extent table][weight extent table][vertex index][bloom index][header][footer]
//
// Edges of each vertex form a "run" in the logical edge stream; the stream is cut into blocks of
// block_size - 8 payload bytes, each stored with an 8-byte checksum; E consecutive blocks form
// an extent (one large write). Weights are a second stream (8 bytes per edge, by edge index)
// with the same block and extent structure, so topology-only reads touch no weight bytes.
// Vertex entries (only for vertices present) are delta-coded in vertex blocks of G entries,
// found through the vertex index (one fixed entry per block). Bloom filter partitions cover
// runs of consecutive (src, dst) keys, found through the bloom index.
//
// Invariants every writer guarantees and every reader checks:
//   - sources strictly ascend across the file; destinations strictly ascend within a source;
//   - every byte after the preamble belongs to exactly one block or metadata section, and every
//     block and section carries an XXH3-64 checksum seeded with its kind and index;
//   - all integers are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "strata/types.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

// "<number>.seg", six digits at least: the name of segment file `number` in a store directory.
inline std::string SegmentFileName(uint64_t number) {
  char name[32];
  snprintf(name, sizeof(name), "%06llu.seg", static_cast<unsigned long long>(number));
  return name;
}

inline constexpr uint64_t kSegmentMagic = 0x6753617461727453ull;  // "StrataSg"
// 2: the header holds the store ID (136-byte header). Version 1 files are refused.
inline constexpr uint32_t kSegmentFormatVersion = 2;

inline constexpr size_t kPreambleSize = 32;
inline constexpr uint64_t kDataStart = 4096;  // the preamble page; the data region starts here
inline constexpr size_t kHeaderSize = 136;
inline constexpr size_t kFooterSize = 104;
inline constexpr size_t kBlockTrailerSize = 8;  // checksum after every block
inline constexpr size_t kVertexIndexEntrySize = 40;
inline constexpr size_t kBloomIndexEntrySize = 32;
inline constexpr size_t kSkipEntrySize = 16;

// Edges per chunk of a run. A run of d edges has ceil(d / 128) chunks.
inline constexpr uint32_t kChunkEdges = 128;
// Longest encoding of one chunk: flags byte, tombstone bitmap, dst and timestamp varints.
inline constexpr size_t kMaxChunkBytes = 1 + kChunkEdges / 8 + 2 * kChunkEdges * kMaxVarint64Bytes;

inline constexpr uint32_t kMinBlockSize = 512;
inline constexpr uint32_t kMaxBlockSize = 1u << 20;

// Header flags.
inline constexpr uint32_t kSegmentWeighted = 1;
inline constexpr uint32_t kSegmentTimestamps = 2;

// Vertex entry flags. The low three bits belong to the caller (the merge rules of the read path
// give them meaning); bit 3 is the format's own.
inline constexpr uint8_t kVertexExists = 1;   // the vertex exists as of this segment
inline constexpr uint8_t kVertexDeleted = 2;  // deletion marker: hides the vertex's edges (and
                                              // existence) on every older level
inline constexpr uint8_t kVertexAdded = 4;    // the vertex was added (or its ID recycled) here
inline constexpr uint8_t kVertexCallerFlags = 7;
inline constexpr uint8_t kRunHasTombstones = 8;  // some edge record of the run is a tombstone

// Chunk flags (first byte of every chunk of a run with more than one chunk).
inline constexpr uint8_t kChunkHasTombstones = 1;

// Checksum seed kinds (util/crc.h ChecksumSeed(kind, index)).
enum SeedKind : uint32_t {
  kSeedPreamble = 1,
  kSeedEdgeBlock = 2,
  kSeedWeightBlock = 3,
  kSeedVertexBlock = 4,
  kSeedBloomPartition = 5,
  kSeedEdgeExtents = 6,
  kSeedWeightExtents = 7,
  kSeedVertexIndex = 8,
  kSeedBloomIndex = 9,
  kSeedHeader = 10,
  kSeedFooter = 11,
  kSeedTail = 12,  // the tail checksum: metadata region + footer (recorded in the manifest)
};

// The properties of a segment (the "header" record, stored at the tail).
struct SegmentHeader {
  uint32_t format_version = kSegmentFormatVersion;
  uint32_t flags = 0;  // kSegmentWeighted | kSegmentTimestamps
  uint32_t level = 0;
  uint32_t block_size = 0;
  uint64_t file_number = 0;
  Timestamp timestamp = 0;         // segment timestamp: applies to every edge without its own
  uint64_t creation_time_us = 0;   // wall clock, microseconds since the Unix epoch
  uint64_t num_vertices = 0;       // vertex entries
  uint64_t num_edges = 0;          // edge records, tombstones included
  uint64_t num_tombstones = 0;
  VertexId min_src = 0;            // 0 when num_vertices == 0
  VertexId max_src = 0;
  Timestamp min_edge_ts = 0;       // over edge timestamps; both = timestamp without the column
  Timestamp max_edge_ts = 0;
  uint64_t edge_stream_bytes = 0;  // logical bytes of the edge stream
  uint32_t blocks_per_extent = 0;
  uint16_t vertex_group = 0;       // vertex entries per vertex block (the last may hold fewer)
  uint8_t bloom_bits_per_key = 0;  // 0: no bloom filter
  uint8_t bloom_probes = 0;
  uint32_t bloom_keys_per_partition = 0;
  uint32_t user_tag = 0;           // caller-defined (e.g. which adjacency: out or in)
  uint64_t store_id = 0;           // the store the file belongs to (0: none, a bare file)

  bool weighted() const { return (flags & kSegmentWeighted) != 0; }
  bool has_timestamps() const { return (flags & kSegmentTimestamps) != 0; }
  uint64_t payload_per_block() const { return block_size - kBlockTrailerSize; }

  // Writes kHeaderSize bytes; the last 8 are the checksum.
  void EncodeTo(char* dst) const;
  // Reads kHeaderSize bytes; false when the checksum does not match.
  bool DecodeFrom(const char* src);
};

// Section table at the very end of the file.
struct SegmentFooter {
  struct Section {
    uint64_t offset = 0;
    uint64_t size = 0;  // bytes including the section's trailing checksum
  };
  Section edge_extents, weight_extents, vertex_index, bloom_index, header;
  uint32_t format_version = kSegmentFormatVersion;

  void EncodeTo(char* dst) const;
  // False when the magic or the checksum does not match.
  bool DecodeFrom(const char* src);
};

// One entry of the vertex index: where vertex block j is and where its first vertex's edges
// start. The block holds entries of vertex ordinals [j*G, j*G + count).
struct VertexIndexEntry {
  VertexId first_src = 0;
  uint64_t stream_base = 0;  // edge-stream offset of the first vertex's run
  uint64_t edge_base = 0;    // edge index of the first vertex's first edge
  uint64_t offset = 0;       // file offset of the block
  uint32_t size = 0;         // bytes, checksum included
  uint32_t count = 0;        // vertex entries in the block

  void EncodeTo(char* dst) const {
    EncodeFixed64(dst, first_src);
    EncodeFixed64(dst + 8, stream_base);
    EncodeFixed64(dst + 16, edge_base);
    EncodeFixed64(dst + 24, offset);
    EncodeFixed32(dst + 32, size);
    EncodeFixed32(dst + 36, count);
  }
  void DecodeFrom(const char* p) {
    first_src = DecodeFixed64(p);
    stream_base = DecodeFixed64(p + 8);
    edge_base = DecodeFixed64(p + 16);
    offset = DecodeFixed64(p + 24);
    size = DecodeFixed32(p + 32);
    count = DecodeFixed32(p + 36);
  }
};

// One entry of the bloom index: partition p holds the keys from (first_src, first_dst) up to,
// not including, the first key of partition p+1.
struct BloomIndexEntry {
  VertexId first_src = 0;
  VertexId first_dst = 0;
  uint64_t offset = 0;  // file offset of the partition
  uint32_t size = 0;    // bytes, checksum included: lines * 64 + 8
  uint32_t num_keys = 0;

  void EncodeTo(char* dst) const {
    EncodeFixed64(dst, first_src);
    EncodeFixed64(dst + 8, first_dst);
    EncodeFixed64(dst + 16, offset);
    EncodeFixed32(dst + 24, size);
    EncodeFixed32(dst + 28, num_keys);
  }
  void DecodeFrom(const char* p) {
    first_src = DecodeFixed64(p);
    first_dst = DecodeFixed64(p + 8);
    offset = DecodeFixed64(p + 16);
    size = DecodeFixed32(p + 24);
    num_keys = DecodeFixed32(p + 28);
  }
};

// Preamble: magic, version, block size, flags, zero; checksum. The rest of the first 4096
// bytes is zero.
inline void EncodePreamble(uint32_t block_size, uint32_t flags, char* dst) {
  EncodeFixed64(dst, kSegmentMagic);
  EncodeFixed32(dst + 8, kSegmentFormatVersion);
  EncodeFixed32(dst + 12, block_size);
  EncodeFixed32(dst + 16, flags);
  EncodeFixed32(dst + 20, 0);
  EncodeFixed64(dst + 24, Checksum64(dst, 24, ChecksumSeed(kSeedPreamble, 0)));
}

// ---- inline definitions

inline void SegmentHeader::EncodeTo(char* d) const {
  EncodeFixed32(d + 0, format_version);
  EncodeFixed32(d + 4, flags);
  EncodeFixed32(d + 8, level);
  EncodeFixed32(d + 12, block_size);
  EncodeFixed64(d + 16, file_number);
  EncodeFixed64(d + 24, timestamp);
  EncodeFixed64(d + 32, creation_time_us);
  EncodeFixed64(d + 40, num_vertices);
  EncodeFixed64(d + 48, num_edges);
  EncodeFixed64(d + 56, num_tombstones);
  EncodeFixed64(d + 64, min_src);
  EncodeFixed64(d + 72, max_src);
  EncodeFixed64(d + 80, min_edge_ts);
  EncodeFixed64(d + 88, max_edge_ts);
  EncodeFixed64(d + 96, edge_stream_bytes);
  EncodeFixed32(d + 104, blocks_per_extent);
  EncodeFixed16(d + 108, vertex_group);
  d[110] = static_cast<char>(bloom_bits_per_key);
  d[111] = static_cast<char>(bloom_probes);
  EncodeFixed32(d + 112, bloom_keys_per_partition);
  EncodeFixed32(d + 116, user_tag);
  EncodeFixed64(d + 120, store_id);
  EncodeFixed64(d + 128, Checksum64(d, 128, ChecksumSeed(kSeedHeader, 0)));
}

inline bool SegmentHeader::DecodeFrom(const char* d) {
  if (DecodeFixed64(d + 128) != Checksum64(d, 128, ChecksumSeed(kSeedHeader, 0))) return false;
  format_version = DecodeFixed32(d + 0);
  flags = DecodeFixed32(d + 4);
  level = DecodeFixed32(d + 8);
  block_size = DecodeFixed32(d + 12);
  file_number = DecodeFixed64(d + 16);
  timestamp = DecodeFixed64(d + 24);
  creation_time_us = DecodeFixed64(d + 32);
  num_vertices = DecodeFixed64(d + 40);
  num_edges = DecodeFixed64(d + 48);
  num_tombstones = DecodeFixed64(d + 56);
  min_src = DecodeFixed64(d + 64);
  max_src = DecodeFixed64(d + 72);
  min_edge_ts = DecodeFixed64(d + 80);
  max_edge_ts = DecodeFixed64(d + 88);
  edge_stream_bytes = DecodeFixed64(d + 96);
  blocks_per_extent = DecodeFixed32(d + 104);
  vertex_group = DecodeFixed16(d + 108);
  bloom_bits_per_key = static_cast<uint8_t>(d[110]);
  bloom_probes = static_cast<uint8_t>(d[111]);
  bloom_keys_per_partition = DecodeFixed32(d + 112);
  user_tag = DecodeFixed32(d + 116);
  store_id = DecodeFixed64(d + 120);
  return true;
}

inline void SegmentFooter::EncodeTo(char* d) const {
  const Section* s[5] = {&edge_extents, &weight_extents, &vertex_index, &bloom_index, &header};
  for (int i = 0; i < 5; i++) {
    EncodeFixed64(d + 16 * i, s[i]->offset);
    EncodeFixed64(d + 16 * i + 8, s[i]->size);
  }
  EncodeFixed32(d + 80, format_version);
  EncodeFixed32(d + 84, static_cast<uint32_t>(kFooterSize));
  EncodeFixed64(d + 88, Checksum64(d, 88, ChecksumSeed(kSeedFooter, 0)));
  EncodeFixed64(d + 96, kSegmentMagic);
}

inline bool SegmentFooter::DecodeFrom(const char* d) {
  if (DecodeFixed64(d + 96) != kSegmentMagic) return false;
  if (DecodeFixed64(d + 88) != Checksum64(d, 88, ChecksumSeed(kSeedFooter, 0))) return false;
  Section* s[5] = {&edge_extents, &weight_extents, &vertex_index, &bloom_index, &header};
  for (int i = 0; i < 5; i++) {
    s[i]->offset = DecodeFixed64(d + 16 * i);
    s[i]->size = DecodeFixed64(d + 16 * i + 8);
  }
  format_version = DecodeFixed32(d + 80);
  return DecodeFixed32(d + 84) == kFooterSize;
}

}  // namespace strata
