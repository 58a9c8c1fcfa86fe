// SegmentReader::Verify: reads every byte of a segment file and checks it against the header.
#include <algorithm>
#include <utility>

#include "segment/bloom.h"
#include "segment/segment_reader.h"

namespace strata {

Status SegmentReader::VerifyLayout() const {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // (offset, size)
  const uint64_t per_extent = header_.blocks_per_extent;
  for (const Stream* st : {&edge_stream_, &weight_stream_}) {
    for (uint64_t i = 0; i < st->extents.size(); i++) {
      uint64_t nblk = std::min(per_extent, st->blocks - i * per_extent);
      uint64_t bytes =
          (nblk - 1) * header_.block_size + BlockPhysicalSize(*st, i * per_extent + nblk - 1);
      ranges.emplace_back(st->extents[i], bytes);
    }
  }
  for (const VertexIndexEntry& e : vertex_index_) ranges.emplace_back(e.offset, e.size);
  for (const BloomIndexEntry& e : bloom_index_) ranges.emplace_back(e.offset, e.size);
  const uint64_t meta_start = footer_.edge_extents.offset;
  ranges.emplace_back(meta_start, file_size_ - meta_start);
  std::sort(ranges.begin(), ranges.end());
  uint64_t cursor = kDataStart;
  for (const auto& [off, size] : ranges) {
    if (off != cursor) {
      return io::CorruptionAt(path_, std::min(off, cursor),
                              off > cursor ? "bytes belonging to no block"
                                           : "blocks overlap");
    }
    cursor += size;
  }
  if (cursor != file_size_) return io::CorruptionAt(path_, cursor, "layout does not end at EOF");
  return Status::OK();
}

Status SegmentReader::Verify() const {
  Status s = VerifyLayout();
  if (!s.ok()) return s;

  // Bloom partitions (all checksums), kept in memory for the key check below.
  std::string bloom_raw;
  std::vector<uint64_t> bloom_off;
  const std::string* bloom = &pinned_bloom_;
  const std::vector<uint64_t>* boff = &pinned_bloom_off_;
  if (!bloom_index_.empty() && pinned_bloom_off_.empty()) {
    if (!(s = LoadBlocks(false, 0, bloom_index_.size() - 1, &bloom_raw, &bloom_off)).ok()) {
      return s;
    }
    bloom = &bloom_raw;
    boff = &bloom_off;
  }

  // Every vertex block, edge block and weight block, decoded and cross-checked.
  ScanOptions so;
  so.read.weights = true;
  so.read.timestamps = true;
  std::unique_ptr<SegmentScanner> sc = NewScanner(so);
  sc->it_->check_skip_ = true;
  uint64_t vertices = 0, edges = 0, tombstones = 0;
  Timestamp min_ts = kMaxTimestamp, max_ts = 0;
  VertexId prev_src = 0;
  VertexEntry v;
  EdgeBatch b;
  auto bad = [&](uint64_t pos, const std::string& what) {
    return StreamCorruption(edge_stream_, pos, "vertex " + std::to_string(v.src) + ": " + what);
  };
  while (sc->NextVertex(&v)) {
    if (v.ordinal != vertices || (vertices > 0 && v.src <= prev_src)) {
      return bad(v.stream_offset, "vertex order broken");
    }
    vertices++;
    prev_src = v.src;
    uint64_t n = 0;
    bool any_tomb = false;
    VertexId prev_dst = 0;
    while (sc->NextEdges(&b)) {
      for (size_t i = 0; i < b.size; i++) {
        if (n + i > 0 && b.dst[i] <= prev_dst) return bad(v.stream_offset, "destinations unsorted");
        prev_dst = b.dst[i];
        if (b.tombstone[i]) {
          tombstones++;
          any_tomb = true;
        }
        min_ts = std::min(min_ts, b.ts[i]);
        max_ts = std::max(max_ts, b.ts[i]);
        if (!bloom_index_.empty()) {
          const uint64_t k = edges + n + i;
          const uint64_t p = k / header_.bloom_keys_per_partition;
          const BloomIndexEntry& e = bloom_index_[p];
          if (k % header_.bloom_keys_per_partition == 0 &&
              (e.first_src != v.src || e.first_dst != b.dst[i])) {
            return io::CorruptionAt(path_, footer_.bloom_index.offset + p * kBloomIndexEntrySize,
                                    "bloom partition " + std::to_string(p) +
                                        " first key disagrees with the edges");
          }
          if (!BloomMayContain(bloom->data() + (*boff)[p], e.size - kBlockTrailerSize,
                               header_.bloom_probes, EdgeKeyHash(v.src, b.dst[i]))) {
            return io::CorruptionAt(path_, e.offset,
                                    "bloom partition " + std::to_string(p) + " misses edge (" +
                                        std::to_string(v.src) + ", " + std::to_string(b.dst[i]) +
                                        ")");
          }
        }
      }
      n += b.size;
    }
    if (!sc->status().ok()) return sc->status();
    if (n != v.degree) return bad(v.stream_offset, "edge count disagrees with degree");
    if (any_tomb != v.has_tombstones) return bad(v.stream_offset, "tombstone flag wrong");
    if (!(s = sc->it_->CheckSkipTable()).ok()) return s;
    edges += n;
  }
  if (!sc->status().ok()) return sc->status();
  const uint64_t hoff = footer_.header.offset;
  if (vertices != header_.num_vertices) return io::CorruptionAt(path_, hoff + 40, "vertex count");
  if (edges != header_.num_edges) return io::CorruptionAt(path_, hoff + 48, "edge count");
  if (tombstones != header_.num_tombstones) {
    return io::CorruptionAt(path_, hoff + 56, "tombstone count");
  }
  if (edges > 0 && (min_ts != header_.min_edge_ts || max_ts != header_.max_edge_ts)) {
    return io::CorruptionAt(path_, hoff + 80, "timestamp range");
  }
  return Status::OK();
}

}  // namespace strata
