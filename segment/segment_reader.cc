#include "segment/segment_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "segment/block_cache.h"
#include "segment/bloom.h"
#include "segment/stream_window.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

// ---------------------------------------------------------------------------------------------
// Opening: the preamble, the footer, the metadata sections and the pinned blocks

namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

SegmentReader::SegmentReader(io::Env* env, std::string path, const SegmentReaderOptions& o)
    : env_(env),
      path_(std::move(path)),
      options_(o),
      cache_owner_(o.cache != nullptr ? BlockCache::NewOwnerId() : 0) {}

SegmentReader::~SegmentReader() {
  if (options_.cache != nullptr) options_.cache->EraseOwner(cache_owner_);
}

Status SegmentReader::Open(io::Env* env, const std::string& path,
                           const SegmentReaderOptions& options,
                           std::unique_ptr<SegmentReader>* out) {
  std::unique_ptr<SegmentReader> r(new SegmentReader(env, path, options));
  Status s = r->Load();
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status::OK();
}

uint64_t SegmentReader::StreamFileOffset(const Stream& s, uint64_t pos) const {
  if (s.blocks == 0) return 0;
  const uint64_t p = header_.payload_per_block();
  uint64_t k = std::min(pos / p, s.blocks - 1);
  return BlockOffset(s, k) + (pos - k * p);
}

Status SegmentReader::StreamCorruption(const Stream& s, uint64_t pos,
                                       const std::string& what) const {
  return io::CorruptionAt(path_, StreamFileOffset(s, pos), what);
}

Status SegmentReader::Load() {
  Status s = env_->NewRandomAccessFile(path_, &file_);
  if (!s.ok()) return s;
  file_size_ = file_->Size();
  const uint64_t min_size = kDataStart + 4 * kBlockTrailerSize + kHeaderSize + kFooterSize;
  if (file_size_ < min_size) {
    return io::CorruptionAt(path_, file_size_,
                            "file too short for a segment (" + std::to_string(file_size_) +
                                " bytes; truncated?)");
  }

  // Preamble page.
  std::string page(kDataStart, '\0');
  if (!(s = file_->Read(0, kDataStart, page.data())).ok()) return s;
  if (DecodeFixed64(page.data()) != kSegmentMagic) {
    return io::CorruptionAt(path_, 0, "bad magic: not a segment file");
  }
  if (DecodeFixed64(page.data() + 24) !=
      Checksum64(page.data(), 24, ChecksumSeed(kSeedPreamble, 0))) {
    return io::CorruptionAt(path_, 0, "preamble checksum mismatch");
  }
  if (DecodeFixed32(page.data() + 8) != kSegmentFormatVersion) {
    return io::CorruptionAt(path_, 8,
                            "unsupported format version " +
                                std::to_string(DecodeFixed32(page.data() + 8)));
  }
  for (size_t i = kPreambleSize; i < kDataStart; i++) {
    if (page[i] != 0) return io::CorruptionAt(path_, i, "nonzero byte in preamble padding");
  }

  // Footer.
  const uint64_t footer_off = file_size_ - kFooterSize;
  char fbuf[kFooterSize];
  if (!(s = file_->Read(footer_off, kFooterSize, fbuf)).ok()) return s;
  if (DecodeFixed64(fbuf + 96) != kSegmentMagic) {
    return io::CorruptionAt(path_, footer_off + 96, "bad footer magic (truncated file?)");
  }
  if (!footer_.DecodeFrom(fbuf)) return io::CorruptionAt(path_, footer_off, "footer corrupt");
  if (footer_.format_version != kSegmentFormatVersion) {
    return io::CorruptionAt(path_, footer_off + 80, "unsupported format version in footer");
  }
  const SegmentFooter::Section* secs[5] = {&footer_.edge_extents, &footer_.weight_extents,
                                           &footer_.vertex_index, &footer_.bloom_index,
                                           &footer_.header};
  const uint64_t meta_start = footer_.edge_extents.offset;
  if (meta_start < kDataStart || meta_start > footer_off) {
    return io::CorruptionAt(path_, footer_off, "footer: metadata offset out of range");
  }
  uint64_t expect = meta_start;
  for (int i = 0; i < 5; i++) {
    if (secs[i]->offset != expect || secs[i]->size < kBlockTrailerSize ||
        secs[i]->size > footer_off - expect) {
      return io::CorruptionAt(path_, footer_off + 16 * i, "footer: section table inconsistent");
    }
    expect += secs[i]->size;
  }
  if (expect != footer_off || footer_.header.size != kHeaderSize) {
    return io::CorruptionAt(path_, footer_off, "footer: sections do not end at the footer");
  }

  std::string meta(footer_off - meta_start, '\0');
  if (!(s = file_->Read(meta_start, meta.size(), meta.data())).ok()) return s;
  meta.append(fbuf, kFooterSize);
  tail_checksum_ = Checksum64(meta.data(), meta.size(), ChecksumSeed(kSeedTail, 0));
  meta.resize(meta.size() - kFooterSize);
  return ParseMetadata(page.data(), meta, meta_start, footer_);
}

Status SegmentReader::ParseMetadata(const char* preamble, const std::string& meta,
                                    uint64_t meta_start, const SegmentFooter& f) {
  auto section = [&](const SegmentFooter::Section& sec, uint32_t kind, const char** data,
                     uint64_t* len) -> Status {
    const char* p = meta.data() + (sec.offset - meta_start);
    *len = sec.size - kBlockTrailerSize;
    *data = p;
    if (kind == kSeedHeader) return Status::OK();  // the header has its own checksum
    if (DecodeFixed64(p + *len) != Checksum64(p, *len, ChecksumSeed(kind, 0))) {
      return io::CorruptionAt(path_, sec.offset, "metadata section checksum mismatch");
    }
    return Status::OK();
  };
  const char *ee, *we, *vi, *bi, *hd;
  uint64_t ee_len, we_len, vi_len, bi_len, hd_len;
  Status s;
  if (!(s = section(f.edge_extents, kSeedEdgeExtents, &ee, &ee_len)).ok()) return s;
  if (!(s = section(f.weight_extents, kSeedWeightExtents, &we, &we_len)).ok()) return s;
  if (!(s = section(f.vertex_index, kSeedVertexIndex, &vi, &vi_len)).ok()) return s;
  if (!(s = section(f.bloom_index, kSeedBloomIndex, &bi, &bi_len)).ok()) return s;
  section(f.header, kSeedHeader, &hd, &hd_len);
  const uint64_t hoff = f.header.offset;
  if (!header_.DecodeFrom(hd)) return io::CorruptionAt(path_, hoff, "header checksum mismatch");

  // Header sanity: everything below relies on these bounds (no overflow past them).
  const SegmentHeader& h = header_;
  auto bad = [&](uint64_t field_off, const std::string& what) {
    return io::CorruptionAt(path_, hoff + field_off, "header: " + what);
  };
  if (h.format_version != kSegmentFormatVersion) return bad(0, "unsupported format version");
  if ((h.flags & ~(kSegmentWeighted | kSegmentTimestamps)) != 0) return bad(4, "unknown flags");
  if (h.block_size < kMinBlockSize || h.block_size > kMaxBlockSize || h.block_size % 512 != 0) {
    return bad(12, "invalid block size");
  }
  {
    char pre[kPreambleSize];
    EncodePreamble(h.block_size, h.flags, pre);
    if (std::memcmp(pre, preamble, kPreambleSize) != 0) {
      return io::CorruptionAt(path_, 12, "preamble disagrees with header");
    }
  }
  if (h.blocks_per_extent == 0) return bad(104, "zero blocks per extent");
  if (h.vertex_group == 0 || h.vertex_group > 4096) return bad(108, "invalid vertex group");
  if (h.bloom_bits_per_key > 64) return bad(110, "invalid bloom density");
  if (h.bloom_bits_per_key > 0 &&
      (h.bloom_probes != BloomProbesFor(h.bloom_bits_per_key) || h.bloom_keys_per_partition == 0)) {
    return bad(111, "invalid bloom parameters");
  }
  if (h.num_vertices > file_size_) return bad(40, "vertex count exceeds file size");
  if (h.edge_stream_bytes > file_size_) return bad(96, "edge stream larger than file");
  if (h.num_edges > h.edge_stream_bytes) return bad(48, "more edges than edge-stream bytes");
  if (h.num_tombstones > h.num_edges) return bad(56, "more tombstones than edges");
  if (h.num_vertices == 0 && (h.num_edges != 0 || h.edge_stream_bytes != 0 || h.min_src != 0 ||
                              h.max_src != 0)) {
    return bad(40, "edges without vertices");
  }
  if (h.min_src > h.max_src) return bad(64, "min_src > max_src");
  if (h.num_vertices > 0 && h.max_src - h.min_src < h.num_vertices - 1) {
    return bad(64, "source range smaller than vertex count");
  }
  if (h.min_edge_ts > h.max_edge_ts) return bad(80, "min_edge_ts > max_edge_ts");
  if (h.num_edges == 0 && h.edge_stream_bytes != 0) return bad(96, "edge stream without edges");

  // Streams and their extent tables.
  const uint64_t payload = h.payload_per_block();
  const uint64_t per_extent = h.blocks_per_extent;
  auto load_stream = [&](Stream* st, uint32_t kind, const char* name, uint64_t len,
                         const char* table, uint64_t table_len,
                         const SegmentFooter::Section& sec) -> Status {
    st->kind = kind;
    st->name = name;
    st->len = len;
    st->blocks = CeilDiv(len, payload);
    const uint64_t extents = CeilDiv(st->blocks, per_extent);
    if (table_len != extents * 8) {
      return io::CorruptionAt(path_, sec.offset, std::string(name) + " extent table size " +
                                                     std::to_string(table_len) +
                                                     " does not match the stream length");
    }
    st->extents.resize(extents);
    for (uint64_t i = 0; i < extents; i++) {
      uint64_t off = DecodeFixed64(table + 8 * i);
      uint64_t nblk = std::min(per_extent, st->blocks - i * per_extent);
      uint64_t bytes =
          (nblk - 1) * h.block_size + BlockPhysicalSize(*st, i * per_extent + nblk - 1);
      if (off < kDataStart || off > meta_start || bytes > meta_start - off) {
        return io::CorruptionAt(path_, sec.offset + 8 * i,
                                std::string(name) + " extent " + std::to_string(i) +
                                    " out of range");
      }
      st->extents[i] = off;
    }
    return Status::OK();
  };
  if (!(s = load_stream(&edge_stream_, kSeedEdgeBlock, "edge", h.edge_stream_bytes, ee, ee_len,
                        f.edge_extents))
           .ok()) {
    return s;
  }
  if (h.weighted() && h.num_edges > (std::numeric_limits<uint64_t>::max() >> 4)) {
    return bad(48, "edge count too large");
  }
  if (!(s = load_stream(&weight_stream_, kSeedWeightBlock, "weight",
                        h.weighted() ? 8 * h.num_edges : 0, we, we_len, f.weight_extents))
           .ok()) {
    return s;
  }

  // Vertex index.
  const uint64_t g = h.vertex_group;
  const uint64_t nvb = CeilDiv(h.num_vertices, g);
  if (vi_len != nvb * kVertexIndexEntrySize) {
    return io::CorruptionAt(path_, f.vertex_index.offset, "vertex index size mismatch");
  }
  vertex_index_.resize(nvb);
  for (uint64_t j = 0; j < nvb; j++) {
    VertexIndexEntry& e = vertex_index_[j];
    e.DecodeFrom(vi + j * kVertexIndexEntrySize);
    const uint64_t at = f.vertex_index.offset + j * kVertexIndexEntrySize;
    uint64_t want_count = j + 1 < nvb ? g : h.num_vertices - j * g;
    bool ok = e.count == want_count && e.size > kBlockTrailerSize && e.offset >= kDataStart &&
              e.offset <= meta_start && e.size <= meta_start - e.offset &&
              e.stream_base <= h.edge_stream_bytes && e.edge_base <= h.num_edges &&
              e.first_src >= h.min_src && e.first_src <= h.max_src;
    if (ok && j == 0) ok = e.first_src == h.min_src && e.stream_base == 0 && e.edge_base == 0;
    if (ok && j > 0) {
      const VertexIndexEntry& p = vertex_index_[j - 1];
      ok = e.first_src > p.first_src && e.stream_base >= p.stream_base &&
           e.edge_base >= p.edge_base && e.first_src - p.first_src >= p.count;
    }
    if (!ok) {
      return io::CorruptionAt(path_, at, "vertex index entry " + std::to_string(j) + " invalid");
    }
  }

  // Bloom index.
  const uint64_t nbp =
      h.bloom_bits_per_key == 0 ? 0 : CeilDiv(h.num_edges, h.bloom_keys_per_partition);
  if (bi_len != nbp * kBloomIndexEntrySize) {
    return io::CorruptionAt(path_, f.bloom_index.offset, "bloom index size mismatch");
  }
  bloom_index_.resize(nbp);
  for (uint64_t p = 0; p < nbp; p++) {
    BloomIndexEntry& e = bloom_index_[p];
    e.DecodeFrom(bi + p * kBloomIndexEntrySize);
    const uint64_t at = f.bloom_index.offset + p * kBloomIndexEntrySize;
    uint64_t want_keys =
        p + 1 < nbp ? h.bloom_keys_per_partition : h.num_edges - p * h.bloom_keys_per_partition;
    bool ok = e.num_keys == want_keys &&
              e.size == BloomLinesFor(e.num_keys, h.bloom_bits_per_key) * kBloomLineBytes +
                            kBlockTrailerSize &&
              e.offset >= kDataStart && e.offset <= meta_start && e.size <= meta_start - e.offset;
    if (ok && p > 0) {
      const BloomIndexEntry& q = bloom_index_[p - 1];
      ok = e.first_src > q.first_src || (e.first_src == q.first_src && e.first_dst > q.first_dst);
    }
    if (!ok) {
      return io::CorruptionAt(path_, at, "bloom index entry " + std::to_string(p) + " invalid");
    }
  }

  // Pinned blocks.
  if (options_.cache == nullptr && options_.pin_vertex_blocks && nvb > 0) {
    if (!(s = LoadBlocks(true, 0, nvb - 1, &pinned_vertex_, &pinned_vertex_off_)).ok()) return s;
  }
  if (options_.cache == nullptr && options_.pin_bloom && nbp > 0) {
    if (!(s = LoadBlocks(false, 0, nbp - 1, &pinned_bloom_, &pinned_bloom_off_)).ok()) return s;
  }
  return Status::OK();
}

// Reads vertex blocks (vertex) or bloom partitions [first, last] into *out, one read per run of
// blocks that are adjacent on disk, verifying every checksum. (*offsets)[i] is where block
// first + i starts in *out.
Status SegmentReader::LoadBlocks(bool vertex, uint64_t first, uint64_t last, std::string* out,
                                 std::vector<uint64_t>* offsets) const {
  auto loc = [&](uint64_t j, uint64_t* off, uint64_t* size) {
    if (vertex) {
      *off = vertex_index_[j].offset;
      *size = vertex_index_[j].size;
    } else {
      *off = bloom_index_[j].offset;
      *size = bloom_index_[j].size;
    }
  };
  uint64_t total = 0;
  offsets->resize(last - first + 1);
  for (uint64_t j = first; j <= last; j++) {
    uint64_t off, size;
    loc(j, &off, &size);
    (*offsets)[j - first] = total;
    total += size;
  }
  out->resize(total);
  std::vector<io::ReadRequest> reqs;
  for (uint64_t j = first; j <= last;) {
    uint64_t off, size;
    loc(j, &off, &size);
    uint64_t len = size;
    uint64_t k = j + 1;
    for (; k <= last; k++) {
      uint64_t o2, s2;
      loc(k, &o2, &s2);
      if (o2 != off + len) break;
      len += s2;
    }
    reqs.push_back(io::ReadRequest{off, static_cast<size_t>(len),
                                   out->data() + (*offsets)[j - first], {}});
    j = k;
  }
  Status s = file_->MultiRead(reqs.data(), reqs.size());
  if (!s.ok()) return s;
  const uint32_t kind = vertex ? kSeedVertexBlock : kSeedBloomPartition;
  for (uint64_t j = first; j <= last; j++) {
    uint64_t off, size;
    loc(j, &off, &size);
    const char* p = out->data() + (*offsets)[j - first];
    uint64_t plen = size - kBlockTrailerSize;
    if (DecodeFixed64(p + plen) != Checksum64(p, plen, ChecksumSeed(kind, j))) {
      return io::CorruptionAt(path_, off,
                              std::string(vertex ? "vertex block " : "bloom partition ") +
                                  std::to_string(j) + " checksum mismatch");
    }
  }
  return Status::OK();
}

Status SegmentReader::ReadMetaBlock(bool vertex, uint64_t j,
                                    std::shared_ptr<const std::string>* hold) const {
  // Cache keys: the block number, with the top bit set for bloom partitions.
  const BlockCache::Key key{cache_owner_, j | (vertex ? 0 : uint64_t{1} << 63)};
  if (options_.cache != nullptr && (*hold = options_.cache->Lookup(key)) != nullptr) {
    return Status::OK();
  }
  auto block = std::make_shared<std::string>();
  std::vector<uint64_t> offs;
  Status s = LoadBlocks(vertex, j, j, block.get(), &offs);
  if (!s.ok()) return s;  // a corrupt block is never cached
  *hold = options_.cache != nullptr ? options_.cache->Insert(key, std::move(block))
                                    : std::shared_ptr<const std::string>(std::move(block));
  return Status::OK();
}

Status SegmentReader::ReadVertexBlock(uint64_t j, std::shared_ptr<const std::string>* hold,
                                      const char** data) const {
  if (!pinned_vertex_off_.empty()) {
    *data = pinned_vertex_.data() + pinned_vertex_off_[j];
    return Status::OK();
  }
  Status s = ReadMetaBlock(true, j, hold);
  if (s.ok()) *data = (*hold)->data();
  return s;
}

Status SegmentReader::ReadBloomPartition(uint64_t p, std::shared_ptr<const std::string>* hold,
                                         const char** data) const {
  if (!pinned_bloom_off_.empty()) {
    *data = pinned_bloom_.data() + pinned_bloom_off_[p];
    return Status::OK();
  }
  Status s = ReadMetaBlock(false, p, hold);
  if (s.ok()) *data = (*hold)->data();
  return s;
}

Status SegmentReader::DecodeVertexBlock(uint64_t j, const char* data, size_t size,
                                        std::vector<VertexEntry>* out, VertexId find,
                                        VertexEntry* found, bool* hit) const {
  const VertexIndexEntry& ie = vertex_index_[j];
  const char* p = data;
  const char* end = data + size - kBlockTrailerSize;
  auto bad = [&](const std::string& what) {
    return io::CorruptionAt(path_, ie.offset + static_cast<uint64_t>(p - data),
                            "vertex block " + std::to_string(j) + ": " + what);
  };
  VertexId src = ie.first_src;
  uint64_t stream = ie.stream_base;
  uint64_t edge = ie.edge_base;
  const uint64_t ordinal = j * header_.vertex_group;
  if (hit != nullptr) *hit = false;
  // The 8-byte checksum after `end` makes the 8-byte loads of DecodeVarintWindow addressable.
  for (uint32_t i = 0; i < ie.count; i++) {
    uint64_t dv, gap, run = 0;
    if ((p = DecodeVarintWindow(p, end, &dv)) == nullptr) {
      p = end;
      return bad("truncated entry");
    }
    if (i > 0) {
      const char* q = DecodeVarintWindow(p, end, &gap);
      if (q == nullptr) return bad("truncated entry");
      if (gap >= std::numeric_limits<uint64_t>::max() - src) return bad("source overflows");
      p = q;
      src += gap + 1;
    }
    const uint64_t degree = dv >> 4;
    const uint8_t flags = static_cast<uint8_t>(dv & 15);
    if (degree > 0) {
      const char* q = DecodeVarintWindow(p, end, &run);
      if (q == nullptr) return bad("truncated entry");
      p = q;
      if (run < degree) return bad("run shorter than its degree");
    } else if (flags & kRunHasTombstones) {
      return bad("tombstone flag without edges");
    }
    if (run > header_.edge_stream_bytes - stream || degree > header_.num_edges - edge) {
      return bad("run exceeds the edge stream");
    }
    if (hit != nullptr && src >= find) {
      // Point lookup: stop at the target (or past it). The entries read so far are checked;
      // full-block consistency is checked by scans, VertexAt and Verify.
      if (src == find) {
        VertexEntry& v = *found;
        v.src = src;
        v.flags = flags & kVertexCallerFlags;
        v.has_tombstones = (flags & kRunHasTombstones) != 0;
        v.degree = degree;
        v.ordinal = ordinal + i;
        v.stream_offset = stream;
        v.run_bytes = run;
        v.first_edge = edge;
        *hit = true;
      }
      return Status::OK();
    }
    if (out != nullptr) {
      VertexEntry& v = out->emplace_back();
      v.src = src;
      v.flags = flags & kVertexCallerFlags;
      v.has_tombstones = (flags & kRunHasTombstones) != 0;
      v.degree = degree;
      v.ordinal = ordinal + i;
      v.stream_offset = stream;
      v.run_bytes = run;
      v.first_edge = edge;
    }
    stream += run;
    edge += degree;
  }
  if (p != end) return bad("trailing bytes");
  const bool last = j + 1 == vertex_index_.size();
  const uint64_t next_stream = last ? header_.edge_stream_bytes : vertex_index_[j + 1].stream_base;
  const uint64_t next_edge = last ? header_.num_edges : vertex_index_[j + 1].edge_base;
  if (stream != next_stream || edge != next_edge) return bad("runs disagree with the index");
  if (last ? src != header_.max_src : src >= vertex_index_[j + 1].first_src) {
    return bad("sources disagree with the index");
  }
  return Status::OK();
}

size_t SegmentReader::MemoryUsage() const {
  return sizeof(*this) + vertex_index_.size() * sizeof(VertexIndexEntry) +
         bloom_index_.size() * sizeof(BloomIndexEntry) +
         (edge_stream_.extents.size() + weight_stream_.extents.size()) * 8 +
         pinned_vertex_.size() + pinned_vertex_off_.size() * 8 + pinned_bloom_.size() +
         pinned_bloom_off_.size() * 8;
}

// ---------------------------------------------------------------------------------------------
// Point reads

void SegmentReader::EdgeSpread(std::vector<std::pair<VertexId, uint64_t>>* out) const {
  for (size_t j = 0; j < vertex_index_.size(); ++j) {
    const uint64_t end =
        j + 1 < vertex_index_.size() ? vertex_index_[j + 1].edge_base : header_.num_edges;
    const uint64_t base = vertex_index_[j].edge_base;
    out->emplace_back(vertex_index_[j].first_src, end > base ? end - base : 0);
  }
}

Status SegmentReader::FindVertex(VertexId src, VertexEntry* v) const {
  if (vertex_index_.empty() || src < header_.min_src || src > header_.max_src) {
    return Status::NotFound("vertex not in segment");
  }
  auto it = std::upper_bound(vertex_index_.begin(), vertex_index_.end(), src,
                             [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; });
  const uint64_t j = static_cast<uint64_t>(it - vertex_index_.begin()) - 1;
  std::shared_ptr<const std::string> hold;
  const char* data;
  Status s = ReadVertexBlock(j, &hold, &data);
  if (!s.ok()) return s;
  bool hit = false;
  s = DecodeVertexBlock(j, data, vertex_index_[j].size, nullptr, src, v, &hit);
  if (!s.ok()) return s;
  return hit ? Status::OK() : Status::NotFound("vertex not in segment");
}

Status SegmentReader::VertexAt(uint64_t ordinal, VertexEntry* v) const {
  if (ordinal >= header_.num_vertices) return Status::NotFound("ordinal out of range");
  const uint64_t j = ordinal / header_.vertex_group;
  std::shared_ptr<const std::string> hold;
  const char* data;
  Status s = ReadVertexBlock(j, &hold, &data);
  if (!s.ok()) return s;
  std::vector<VertexEntry> entries;
  s = DecodeVertexBlock(j, data, vertex_index_[j].size, &entries, 0, nullptr, nullptr);
  if (!s.ok()) return s;
  *v = entries[ordinal % header_.vertex_group];
  return Status::OK();
}

Status SegmentReader::MayContainEdge(VertexId src, VertexId dst, bool* may) const {
  *may = true;
  if (header_.num_edges == 0 || src < header_.min_src || src > header_.max_src) {
    *may = false;
    return Status::OK();
  }
  if (bloom_index_.empty()) return Status::OK();
  auto it = std::upper_bound(bloom_index_.begin(), bloom_index_.end(), std::make_pair(src, dst),
                             [](const std::pair<VertexId, VertexId>& k, const BloomIndexEntry& e) {
                               return k.first < e.first_src ||
                                      (k.first == e.first_src && k.second < e.first_dst);
                             });
  if (it == bloom_index_.begin()) {
    *may = false;  // before the first key of the segment
    return Status::OK();
  }
  const uint64_t p = static_cast<uint64_t>(it - bloom_index_.begin()) - 1;
  std::shared_ptr<const std::string> hold;
  const char* data;
  Status s = ReadBloomPartition(p, &hold, &data);
  if (!s.ok()) return s;
  *may = BloomMayContain(data, bloom_index_[p].size - kBlockTrailerSize, header_.bloom_probes,
                         EdgeKeyHash(src, dst));
  return Status::OK();
}

bool SegmentReader::MayContainEdge(VertexId src, VertexId dst) const {
  bool may = true;
  Status s = MayContainEdge(src, dst, &may);
  return !s.ok() || may;
}

Status SegmentReader::GetEdge(VertexId src, VertexId dst, EdgeRecord* e) const {
  bool may = true;
  Status s = MayContainEdge(src, dst, &may);
  if (!s.ok()) return s;
  if (!may) return Status::NotFound("edge not in segment");
  VertexEntry v;
  s = FindVertex(src, &v);
  if (!s.ok()) return s;
  return GetEdgeOf(v, dst, e, /*bloom_checked=*/true);
}

Status SegmentReader::GetEdgeOf(const VertexEntry& v, VertexId dst, EdgeRecord* e,
                                bool bloom_checked) const {
  Status s;
  if (!bloom_checked) {
    bool may = true;
    s = MayContainEdge(v.src, dst, &may);
    if (!s.ok()) return s;
    if (!may) return Status::NotFound("edge not in segment");
  }
  if (v.degree == 0) return Status::NotFound("edge not in segment");
  ReadOptions o;
  o.timestamps = true;
  o.max_batch = kChunkEdges;
  std::unique_ptr<NeighborIterator> it = NewNeighborIterator(v, o);
  if (!(s = it->Seek(dst)).ok()) return s;
  EdgeBatch b;
  if (!it->Next(&b)) {
    return it->status().ok() ? Status::NotFound("edge not in segment") : it->status();
  }
  if (b.dst[0] != dst) return Status::NotFound("edge not in segment");
  e->dst = dst;
  e->tombstone = b.tombstone[0] != 0;
  e->ts = b.ts[0];
  e->weight = 1.0;
  if (header_.weighted()) {
    StreamWindow w(this, &weight_stream_);
    const uint64_t pos = 8 * (v.first_edge + it->last_first_);
    if (!(s = w.Ensure(pos, 8, pos + 8)).ok()) return s;
    std::memcpy(&e->weight, w.At(pos), 8);
  }
  return Status::OK();
}

}  // namespace strata
