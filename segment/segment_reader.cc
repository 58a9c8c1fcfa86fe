#include "segment/segment_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "segment/block_cache.h"
#include "segment/bloom.h"
#include "segment/scan_spares.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

namespace {

// Bytes past the end of a window's data that are always allocated and zero, so a decoder may
// load 8 bytes at any position before the end.
constexpr size_t kWindowSlack = 16;

// Decodes a varint of at most 8 bytes at p without branching on its length, loading 8 bytes
// (addressable: see kWindowSlack). Returns its length, or 0 if it is longer than 8 bytes. The
// caller checks that the length does not run past the end of the valid data.
inline size_t DecodeVarint8(const char* p, uint64_t* v) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  const uint64_t stops = ~w & 0x8080808080808080ull;
  if (stops == 0) return 0;
  const int bits = std::countr_zero(stops) + 1;  // 8 * length
  w &= ~uint64_t{0} >> (64 - bits);
  *v = (w & 0x7f) | ((w >> 1) & (0x7full << 7)) | ((w >> 2) & (0x7full << 14)) |
       ((w >> 3) & (0x7full << 21)) | ((w >> 4) & (0x7full << 28)) |
       ((w >> 5) & (0x7full << 35)) | ((w >> 6) & (0x7full << 42)) |
       ((w >> 7) & (0x7full << 49));
  return static_cast<size_t>(bits >> 3);
}

// One varint from [p, end) where at least 8 bytes from p are addressable: the fast path, with
// the checked decoder for long or truncated encodings. nullptr when malformed.
inline const char* DecodeVarintWindow(const char* p, const char* end, uint64_t* v) {
  size_t len = DecodeVarint8(p, v);
  if (len != 0 && p + len <= end) return p + len;
  return DecodeVarint64(p, end, v);
}

}  // namespace

namespace {

// A string taken from this thread's spares (emptied, its capacity kept) and given back.
struct SpareString {
  std::string s;
  SpareString() {
    size_t unused;
    s = ScanSpares<std::string>::Take(&unused);
    s.clear();
  }
  ~SpareString() {
    const size_t cap = s.capacity();
    ScanSpares<std::string>::Give(std::move(s), cap);
  }
  SpareString(const SpareString&) = delete;
  SpareString& operator=(const SpareString&) = delete;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// StreamWindow: a contiguous copy of logical bytes [begin_, end_) of one stream (edges or
// weights), read as whole blocks, each verified against its checksum before use.
// Invariant: end_ is a block boundary or the end of the stream.

class StreamWindow {
 public:
  StreamWindow(const SegmentReader* r, const SegmentReader::Stream* s)
      : r_(r), s_(s), payload_(r->header_.payload_per_block()) {
    buf_ = ScanSpares<std::unique_ptr<char[]>>::Take(&cap_);
  }
  ~StreamWindow() { ScanSpares<std::unique_ptr<char[]>>::Give(std::move(buf_), cap_); }
  StreamWindow(const StreamWindow&) = delete;
  StreamWindow& operator=(const StreamWindow&) = delete;

  // Serves [begin, begin + len) from memory the caller owns (loaded by ReadNeighborsBatch);
  // at least 8 bytes after data + len must be addressable (see kWindowSlack).
  void Adopt(uint64_t begin, const char* data, uint64_t len) {
    ext_ = data;
    begin_ = begin;
    end_ = begin + len;
  }

  // Makes [pos, pos + n) available, reading up to `goal` (clamped to [pos + n, stream end]).
  Status Ensure(uint64_t pos, uint64_t n, uint64_t goal) {
    if (pos >= begin_ && pos + n <= end_) return Status::OK();
    if (ext_ != nullptr) {
      ext_ = nullptr;
      begin_ = end_ = 0;
    }
    if (pos + n > s_->len || pos + n < pos) {
      return r_->StreamCorruption(*s_, std::min(pos, s_->len),
                                  "read of " + std::to_string(n) + " bytes at stream offset " +
                                      std::to_string(pos) + " past the end of the " +
                                      s_->name + " stream");
    }
    goal = std::min(std::max(goal, pos + n), s_->len);
    size_t keep = 0;
    if (pos >= begin_ && pos < end_) {
      keep = static_cast<size_t>(end_ - pos);
      std::memmove(buf_.get(), buf_.get() + (pos - begin_), keep);
      begin_ = pos;
    } else {
      begin_ = pos - pos % payload_;
      end_ = begin_;
    }
    const uint64_t first = end_ / payload_;
    const uint64_t last = (goal - 1) / payload_;
    uint64_t phys = 0;
    for (uint64_t k = first; k <= last; k++) phys += r_->BlockPhysicalSize(*s_, k);
    Reserve(keep, keep + phys + kWindowSlack);

    // One read per run of blocks inside one extent (contiguous on disk).
    const uint64_t per_extent = r_->header_.blocks_per_extent;
    reqs_.clear();
    char* dst = buf_.get() + keep;
    for (uint64_t k = first; k <= last;) {
      uint64_t group_end = std::min(last + 1, (k / per_extent + 1) * per_extent);
      uint64_t len = 0;
      for (uint64_t b = k; b < group_end; b++) len += r_->BlockPhysicalSize(*s_, b);
      reqs_.push_back(io::ReadRequest{r_->BlockOffset(*s_, k), static_cast<size_t>(len), dst, {}});
      dst += len;
      k = group_end;
    }
    Status st = reqs_.size() == 1 ? r_->file_->Read(reqs_[0].offset, reqs_[0].len, reqs_[0].buf)
                                  : r_->file_->MultiRead(reqs_.data(), reqs_.size());
    if (!st.ok()) return Reset(st);

    // Verify each block and squeeze out the checksums.
    char* rp = buf_.get() + keep;
    char* wp = rp;
    for (uint64_t k = first; k <= last; k++) {
      uint64_t psize = r_->BlockPhysicalSize(*s_, k);
      uint64_t plen = psize - kBlockTrailerSize;
      if (DecodeFixed64(rp + plen) != Checksum64(rp, plen, ChecksumSeed(s_->kind, k))) {
        return Reset(io::CorruptionAt(r_->path_, r_->BlockOffset(*s_, k),
                                      std::string(s_->name) + " block " + std::to_string(k) +
                                          " checksum mismatch"));
      }
      std::memmove(wp, rp, plen);
      wp += plen;
      rp += psize;
    }
    std::memset(wp, 0, kWindowSlack);
    end_ = begin_ + static_cast<uint64_t>(wp - buf_.get());
    return Status::OK();
  }

  const char* At(uint64_t pos) const {
    return (ext_ != nullptr ? ext_ : buf_.get()) + (pos - begin_);
  }

 private:
  Status Reset(Status s) {
    begin_ = end_ = 0;
    return s;
  }

  void Reserve(size_t keep, size_t need) {
    if (need <= cap_) return;
    // A scanner's needs stay near its window: grow by a quarter, not double, so the buffer
    // stays within ~1.25x of the largest need.
    size_t cap = std::max(need, cap_ + cap_ / 4);
    std::unique_ptr<char[]> b(new char[cap]);
    if (keep > 0) std::memcpy(b.get(), buf_.get(), keep);
    buf_ = std::move(b);
    cap_ = cap;
  }

  const SegmentReader* r_;
  const SegmentReader::Stream* s_;
  const uint64_t payload_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  const char* ext_ = nullptr;  // adopted memory, when not null
  uint64_t begin_ = 0;
  uint64_t end_ = 0;
  std::vector<io::ReadRequest> reqs_;
};

// ---------------------------------------------------------------------------------------------
// SegmentReader: opening and metadata

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

uint64_t SegmentReader::BlockOffset(const Stream& s, uint64_t block) const {
  const uint64_t e = header_.blocks_per_extent;
  return s.extents[block / e] + (block % e) * header_.block_size;
}

uint64_t SegmentReader::BlockPhysicalSize(const Stream& s, uint64_t block) const {
  const uint64_t p = header_.payload_per_block();
  if (block + 1 < s.blocks) return header_.block_size;
  return s.len - block * p + kBlockTrailerSize;
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

Status SegmentReader::LoadStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks,
                                       std::string* buf, std::vector<uint64_t>* payload_at) const {
  uint64_t total = 0;
  for (uint64_t k : blocks) total += BlockPhysicalSize(s, k);
  buf->resize(total);
  payload_at->resize(blocks.size());
  std::vector<io::ReadRequest> reqs;
  uint64_t at = 0;
  const uint64_t per_extent = header_.blocks_per_extent;
  for (size_t i = 0; i < blocks.size(); i++) {
    const uint64_t k = blocks[i];
    const uint64_t size = BlockPhysicalSize(s, k);
    (*payload_at)[i] = at;
    // Adjacent on disk: the previous block, in the same extent.
    if (i > 0 && blocks[i - 1] + 1 == k && k % per_extent != 0) {
      reqs.back().len += size;
    } else {
      reqs.push_back(
          io::ReadRequest{BlockOffset(s, k), static_cast<size_t>(size), buf->data() + at, {}});
    }
    at += size;
  }
  Status st = file_->MultiRead(reqs.data(), reqs.size());
  if (!st.ok()) return st;
  for (size_t i = 0; i < blocks.size(); i++) {
    const char* p = buf->data() + (*payload_at)[i];
    const uint64_t plen = BlockPhysicalSize(s, blocks[i]) - kBlockTrailerSize;
    if (DecodeFixed64(p + plen) != Checksum64(p, plen, ChecksumSeed(s.kind, blocks[i]))) {
      return io::CorruptionAt(path_, BlockOffset(s, blocks[i]),
                              std::string(s.name) + " block " + std::to_string(blocks[i]) +
                                  " checksum mismatch");
    }
  }
  return Status::OK();
}

Status SegmentReader::ReadNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                                         FunctionRef<bool(size_t, const EdgeBatch&)> fn,
                                         uint64_t big_run) const {
  const uint64_t payload = header_.payload_per_block();
  const bool weights = o.weights && header_.weighted();
  auto small = [&](const VertexEntry& v) {
    return v.degree > 0 && v.run_bytes <= big_run &&
           v.stream_offset + v.run_bytes <= edge_stream_.len &&
           v.stream_offset + v.run_bytes >= v.stream_offset &&
           v.first_edge + v.degree <= header_.num_edges && v.first_edge + v.degree >= v.degree;
  };
  // Blocks of both streams that the small runs need.
  std::vector<uint64_t> eb, wb;
  for (size_t i = 0; i < n; i++) {
    const VertexEntry& v = vs[i];
    if (!small(v)) continue;
    for (uint64_t k = v.stream_offset / payload; k <= (v.stream_offset + v.run_bytes - 1) / payload;
         k++) {
      eb.push_back(k);
    }
    if (weights) {
      for (uint64_t k = 8 * v.first_edge / payload;
           k <= (8 * (v.first_edge + v.degree) - 1) / payload; k++) {
        wb.push_back(k);
      }
    }
  }
  std::sort(eb.begin(), eb.end());
  eb.erase(std::unique(eb.begin(), eb.end()), eb.end());
  std::sort(wb.begin(), wb.end());
  wb.erase(std::unique(wb.begin(), wb.end()), wb.end());
  // Block and copy buffers from this thread's spares: a batch of a frontier-driven kernel
  // (SSSP, BFS) loads a few hundred KiB, and fresh buffers faulted their pages in every call
  // (page faults were ~14% of an SSSP profile on a scale-21 store, these their largest source).
  SpareString ebuf_s, wbuf_s, scratch_s, wscratch_s;
  std::string& ebuf = ebuf_s.s;
  std::string& wbuf = wbuf_s.s;
  std::vector<uint64_t> eat, wat;
  Status s = LoadStreamBlocks(edge_stream_, eb, &ebuf, &eat);
  if (!s.ok()) return s;
  if (weights && !(s = LoadStreamBlocks(weight_stream_, wb, &wbuf, &wat)).ok()) return s;

  // The bytes [begin, begin + len) of a stream, from the loaded blocks: in place when they
  // lie in one block, else copied (with slack for the varint decoder).
  std::string& scratch = scratch_s.s;
  auto locate = [&](const Stream& st, const std::vector<uint64_t>& blocks,
                    const std::string& buf, const std::vector<uint64_t>& at, uint64_t begin,
                    uint64_t len, std::string* copy) -> const char* {
    const uint64_t k0 = begin / payload, k1 = (begin + len - 1) / payload;
    auto idx = [&](uint64_t k) {
      return static_cast<size_t>(std::lower_bound(blocks.begin(), blocks.end(), k) -
                                 blocks.begin());
    };
    size_t i0 = idx(k0);
    if (k0 == k1) return buf.data() + at[i0] + (begin - k0 * payload);
    copy->assign(len + kWindowSlack, '\0');
    uint64_t done = 0;
    for (uint64_t k = k0; k <= k1; k++, i0++) {
      uint64_t from = k == k0 ? begin - k0 * payload : 0;
      uint64_t plen = BlockPhysicalSize(st, k) - kBlockTrailerSize;
      uint64_t take = std::min(plen - from, len - done);
      std::memcpy(copy->data() + done, buf.data() + at[i0] + from, take);
      done += take;
    }
    return copy->data();
  };

  StreamWindow ew(this, &edge_stream_), ww(this, &weight_stream_);
  NeighborIterator it(this, VertexEntry(), o, &ew, weights ? &ww : nullptr,
                      options_.random_window, /*own_windows=*/false);
  std::string& wscratch = wscratch_s.s;
  EdgeBatch b;
  for (size_t i = 0; i < n; i++) {
    const VertexEntry& v = vs[i];
    if (v.degree == 0) continue;
    if (!small(v)) {
      std::unique_ptr<NeighborIterator> big = NewNeighborIterator(v, o);
      while (big->Next(&b)) {
        if (!fn(i, b)) return Status::OK();
      }
      if (!big->status().ok()) return big->status();
      continue;
    }
    ew.Adopt(v.stream_offset,
             locate(edge_stream_, eb, ebuf, eat, v.stream_offset, v.run_bytes, &scratch),
             v.run_bytes);
    if (weights) {
      ww.Adopt(8 * v.first_edge,
               locate(weight_stream_, wb, wbuf, wat, 8 * v.first_edge, 8 * v.degree, &wscratch),
               8 * v.degree);
    }
    it.Reset(v);
    while (it.Next(&b)) {
      if (!fn(i, b)) return Status::OK();
    }
    if (!it.status().ok()) return it.status();
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// NeighborIterator

NeighborIterator::NeighborIterator(const SegmentReader* r, const VertexEntry& v,
                                   const ReadOptions& o, StreamWindow* edges,
                                   StreamWindow* weights, uint64_t window_goal, bool own_windows)
    : r_(r), v_(v), o_(o), edges_(edges), weights_(weights), own_windows_(own_windows),
      window_goal_(window_goal) {
  // Whole chunks; a standalone iterator needs no more than its vertex's degree.
  uint64_t cap = std::max<uint64_t>(kChunkEdges, o.max_batch);
  if (own_windows) cap = std::min<uint64_t>(cap, std::max<uint64_t>(v.degree, 1));
  cap_ = static_cast<size_t>((cap + kChunkEdges - 1) / kChunkEdges * kChunkEdges);
  const size_t words = cap_ * (1 + (o.timestamps ? 1 : 0) + (o.weights ? 1 : 0));
  mem_.reset(new char[words * 8 + cap_]);
  char* p = mem_.get();
  dst_ = reinterpret_cast<VertexId*>(p);
  p += cap_ * 8;
  if (o.timestamps) {
    ts_ = reinterpret_cast<Timestamp*>(p);
    p += cap_ * 8;
  }
  if (o.weights) {
    weight_ = reinterpret_cast<double*>(p);
    std::fill(weight_, weight_ + cap_, 1.0);  // stays 1.0 for an unweighted segment
    p += cap_ * 8;
  }
  tomb_ = reinterpret_cast<uint8_t*>(p);
  std::memset(tomb_, 0, cap_);
  Restart();
}

void NeighborIterator::Reset(const VertexEntry& v) {
  // A scan that skipped more of the stream since the last run it read than this run holds
  // (and at least kSparseGap) reads sparsely: reading ahead would mostly copy runs it skips.
  const uint64_t gap = v.stream_offset > run_end_ ? v.stream_offset - run_end_ : 0;
  sparse_ = gap > std::max<uint64_t>(kSparseGap, v.run_bytes);
  v_ = v;
  Restart();
  seen_skip_.clear();
}

Status NeighborIterator::CheckSkipTable() {
  if (nchunks_ <= 1) return Status::OK();
  Status s = LoadSkipTable();
  if (!s.ok()) return s;
  if (skip_ != seen_skip_) {
    return r_->StreamCorruption(r_->edge_stream_, chunks_end_,
                                "vertex " + std::to_string(v_.src) +
                                    ": skip table disagrees with the chunks");
  }
  return Status::OK();
}

NeighborIterator::~NeighborIterator() {
  if (own_windows_) {
    delete edges_;
    delete weights_;
  }
}

bool NeighborIterator::Fail(Status s) {
  if (status_.ok()) status_ = s;
  return false;
}

void NeighborIterator::Restart() {
  nchunks_ = (v_.degree + kChunkEdges - 1) / kChunkEdges;
  run_end_ = v_.stream_offset + v_.run_bytes;
  const uint64_t skip_bytes = nchunks_ > 1 ? (nchunks_ - 1) * kSkipEntrySize : 0;
  // Smallest possible run: one byte per edge, a flags byte per chunk when there are several.
  const uint64_t min_chunks = v_.degree + (nchunks_ > 1 ? nchunks_ : 0);
  if (v_.run_bytes < skip_bytes || v_.run_bytes - skip_bytes < min_chunks ||
      run_end_ > r_->edge_stream_.len || run_end_ < v_.stream_offset) {
    Fail(r_->StreamCorruption(r_->edge_stream_, v_.stream_offset,
                              "vertex " + std::to_string(v_.src) + ": run length " +
                                  std::to_string(v_.run_bytes) + " impossible for degree " +
                                  std::to_string(v_.degree)));
    nchunks_ = 0;
  }
  chunks_end_ = run_end_ - skip_bytes;
  pos_ = v_.stream_offset;
  chunk_ = 0;
  in_chunk_ = 0;
  prev_ = v_.src;
  has_seek_ = false;
  skip_.clear();
}

Status NeighborIterator::DecodeChunk(size_t at, uint32_t limit, uint32_t* n_out, bool* tomb_out) {
  const SegmentHeader& h = r_->header_;
  const uint32_t total =
      static_cast<uint32_t>(std::min<uint64_t>(kChunkEdges, v_.degree - chunk_ * kChunkEdges));
  const uint32_t done = in_chunk_;
  // A piece ends inside the chunk only where no timestamps follow the destinations.
  const uint32_t n = h.has_timestamps() ? total - done : std::min(limit, total - done);
  const uint64_t avail = std::min<uint64_t>(kMaxChunkBytes, chunks_end_ - pos_);
  const uint64_t limit_off = own_windows_ ? run_end_ : std::min(r_->edge_stream_.len, edge_limit_);
  Status s = edges_->Ensure(pos_, avail, std::min(sparse_ ? run_end_ : limit_off, pos_ + window_goal_));
  if (!s.ok()) return s;
  const char* const start = edges_->At(pos_);
  const char* p = start;
  const char* const end = start + avail;
  auto bad = [&](const std::string& what) {
    return r_->StreamCorruption(r_->edge_stream_, pos_ + static_cast<uint64_t>(p - start),
                                "vertex " + std::to_string(v_.src) + " chunk " +
                                    std::to_string(chunk_) + ": " + what);
  };
  bool tomb = v_.has_tombstones;
  if (nchunks_ > 1) {
    if (p == end) return bad("truncated");
    uint8_t f = static_cast<uint8_t>(*p++);
    if ((f & ~kChunkHasTombstones) != 0) return bad("unknown chunk flags");
    tomb = (f & kChunkHasTombstones) != 0;
    if (tomb && !v_.has_tombstones) return bad("tombstones in a run flagged without");
  }
  uint8_t* tb = tomb_ + at;
  if (tomb) {
    const size_t nb = (total + 7) / 8;
    if (static_cast<size_t>(end - p) < nb) return bad("truncated tombstone bitmap");
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t k = done + i;
      tb[i] = static_cast<uint8_t>((static_cast<uint8_t>(p[k >> 3]) >> (k & 7)) & 1);
    }
    p += nb;
    tomb_zero_ = false;
  }  // else tb[0, n) is zero already: Next clears tomb_ before a batch once a chunk wrote it
  if (check_skip_ && chunk_ > 0 && done == 0) {
    seen_skip_.push_back(prev_);
    seen_skip_.push_back(pos_ - v_.stream_offset);
  }
  if (done > 0) p = start + piece_off_;
  VertexId* d = dst_ + at;
  VertexId prev = prev_;
  uint32_t i = 0;
  uint64_t x;
  if (chunk_ == 0 && done == 0) {
    if ((p = DecodeVarintWindow(p, end, &x)) == nullptr) {
      p = end;
      return bad("truncated destination");
    }
    prev = v_.src + ZigZagDecode(x);
    d[0] = prev;
    i = 1;
  }
  for (; i < n; i++) {
    const char* q = DecodeVarintWindow(p, end, &x);
    if (q == nullptr) return bad("truncated destination");
    if (x >= std::numeric_limits<uint64_t>::max() - prev) return bad("destination overflows");
    p = q;
    prev += x + 1;
    d[i] = prev;
  }
  prev_ = prev;
  if (done + n < total) {  // the rest of the chunk comes with the next call (no timestamps)
    if (o_.timestamps) std::fill(ts_ + at, ts_ + at + n, h.timestamp);
    in_chunk_ = done + n;
    piece_off_ = static_cast<uint32_t>(p - start);
    *n_out = n;
    *tomb_out = tomb;
    return Status::OK();
  }
  if (h.has_timestamps()) {
    Timestamp* t = o_.timestamps ? ts_ + at : nullptr;
    for (i = 0; i < n; i++) {
      const char* q = DecodeVarintWindow(p, end, &x);
      if (q == nullptr) return bad("truncated timestamp");
      p = q;
      if (t != nullptr) t[i] = h.timestamp + ZigZagDecode(x);
    }
  } else if (o_.timestamps) {
    std::fill(ts_ + at, ts_ + at + n, h.timestamp);
  }
  pos_ += static_cast<uint64_t>(p - start);
  in_chunk_ = 0;
  chunk_++;
  if (chunk_ == nchunks_ && pos_ != chunks_end_) return bad("run length mismatch");
  *n_out = n;
  *tomb_out = tomb;
  return Status::OK();
}

bool NeighborIterator::Next(EdgeBatch* b) {
  if (!status_.ok()) return false;
  // With ReadOptions::first_batch a run's first chunk comes in pieces that double: its first
  // first_batch records, then as many again, and so on to the chunk's end (16, 16, 32, 64);
  // every later batch is whole chunks up to cap_ records. A reader that stops at a record
  // found a few pieces in decodes at most twice what it read.
  const bool piece = o_.first_batch != 0 && chunk_ == 0 && !has_seek_;
  const uint32_t piece_len = static_cast<uint32_t>(
      std::min<size_t>(in_chunk_ == 0 ? o_.first_batch : in_chunk_, kChunkEdges));
  const size_t cap = piece ? piece_len : in_chunk_ != 0 ? kChunkEdges : cap_;
  if (!tomb_zero_) {
    std::memset(tomb_, 0, cap_);
    tomb_zero_ = true;
  }
  size_t count = 0;
  uint64_t first = 0;  // run index of the batch's first edge
  bool any_tomb = false;
  while (chunk_ < nchunks_ && (count == 0 || count + kChunkEdges <= cap)) {
    const uint64_t piece_first = chunk_ * kChunkEdges + in_chunk_;
    uint32_t n;
    bool t;
    Status s = DecodeChunk(count, piece ? piece_len : kChunkEdges, &n, &t);
    if (!s.ok()) return Fail(s);
    size_t drop = 0;
    if (has_seek_) {
      VertexId* d = dst_ + count;
      drop = static_cast<size_t>(std::lower_bound(d, d + n, seek_target_) - d);
      if (drop < n) has_seek_ = false;
      if (drop > 0 && drop < n) {
        std::memmove(d, d + drop, (n - drop) * sizeof(VertexId));
        std::memmove(tomb_ + count, tomb_ + count + drop, n - drop);
        if (o_.timestamps) {
          std::memmove(ts_ + count, ts_ + count + drop, (n - drop) * sizeof(Timestamp));
        }
      }
    }
    if (count == 0) first = piece_first + drop;
    count += n - drop;
    any_tomb |= t;
  }
  has_seek_ = false;
  if (count == 0) return false;
  if (weights_ != nullptr) {
    const uint64_t pos = 8 * (v_.first_edge + first);
    const uint64_t limit = own_windows_ || sparse_ ? 8 * (v_.first_edge + v_.degree)
                                                   : std::min(r_->weight_stream_.len, weight_limit_);
    Status s = weights_->Ensure(pos, 8 * count, std::min(limit, pos + window_goal_));
    if (!s.ok()) return Fail(s);
    std::memcpy(weight_, weights_->At(pos), 8 * count);
  }
  last_first_ = first;
  b->dst = dst_;
  b->tombstone = tomb_;
  b->ts = ts_;
  b->weight = weight_;
  b->size = count;
  b->has_tombstones = any_tomb;
  return true;
}

Status NeighborIterator::LoadSkipTable() {
  if (!skip_.empty() || nchunks_ <= 1) return Status::OK();
  const uint64_t len = run_end_ - chunks_end_;
  Status s;
  if (own_windows_ && v_.run_bytes <= 2 * uint64_t{r_->header_.block_size}) {
    // A short run is read whole: the chunk wanted after the seek is then in memory too (one
    // read instead of two; past two blocks, copying and checksumming cost more than a read).
    s = edges_->Ensure(v_.stream_offset, v_.run_bytes, run_end_);
  } else {
    const uint64_t limit = own_windows_ ? run_end_ : r_->edge_stream_.len;
    s = edges_->Ensure(chunks_end_, len, std::min(limit, chunks_end_ + len));
  }
  if (!s.ok()) return s;
  const char* p = edges_->At(chunks_end_);
  skip_.resize(2 * (nchunks_ - 1));
  uint64_t prev_off = 0;
  VertexId prev_dst = 0;
  for (uint64_t c = 0; c + 1 < nchunks_; c++) {
    VertexId d = DecodeFixed64(p + kSkipEntrySize * c);
    uint64_t off = DecodeFixed64(p + kSkipEntrySize * c + 8);
    // Chunk c+1 starts after chunk c (at least one byte per edge) and before the table.
    if (off <= prev_off || off >= chunks_end_ - v_.stream_offset || (c > 0 && d <= prev_dst)) {
      skip_.clear();
      return r_->StreamCorruption(r_->edge_stream_, chunks_end_ + kSkipEntrySize * c,
                                  "vertex " + std::to_string(v_.src) + ": skip table invalid");
    }
    skip_[2 * c] = d;
    skip_[2 * c + 1] = off;
    prev_off = off;
    prev_dst = d;
  }
  return Status::OK();
}

Status NeighborIterator::Seek(VertexId target) {
  if (!status_.ok()) return status_;
  if (nchunks_ <= 1) {
    Restart();
  } else {
    Status s = LoadSkipTable();
    if (!s.ok()) {
      Fail(s);
      return s;
    }
    // Entries are for chunks 1..n-1; chunk c holds destinations in (prev_dst[c], prev_dst[c+1]].
    uint64_t lo = 0, hi = nchunks_ - 1;  // count of entries with prev_dst < target
    while (lo < hi) {
      uint64_t mid = (lo + hi) / 2;
      if (skip_[2 * mid] < target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const uint64_t c = lo;
    if (c == 0) {
      std::vector<uint64_t> keep;
      keep.swap(skip_);
      Restart();
      skip_.swap(keep);
    } else {
      pos_ = v_.stream_offset + skip_[2 * (c - 1) + 1];
      prev_ = skip_[2 * (c - 1)];
      chunk_ = c;
      in_chunk_ = 0;
    }
  }
  has_seek_ = true;
  seek_target_ = target;
  return Status::OK();
}

std::unique_ptr<NeighborIterator> SegmentReader::NewNeighborIterator(const VertexEntry& v,
                                                                     const ReadOptions& o) const {
  auto* edges = new StreamWindow(this, &edge_stream_);
  StreamWindow* weights =
      o.weights && header_.weighted() ? new StreamWindow(this, &weight_stream_) : nullptr;
  return std::unique_ptr<NeighborIterator>(new NeighborIterator(
      this, v, o, edges, weights, options_.random_window, /*own_windows=*/true));
}


// ---------------------------------------------------------------------------------------------
// SegmentScanner

SegmentScanner::SegmentScanner(const SegmentReader* r, const ScanOptions& o) : r_(r), o_(o) {
  size_t unused;
  raw_ = ScanSpares<std::string>::Take(&unused);  // capacity only: emptied here
  raw_.clear();
  batch_ = ScanSpares<std::vector<VertexEntry>>::Take(&unused);
  batch_.clear();
  edges_ = std::make_unique<StreamWindow>(r, &r->edge_stream_);
  if (o.read.weights && r->header_.weighted()) {
    weights_ = std::make_unique<StreamWindow>(r, &r->weight_stream_);
  }
  it_.reset(new NeighborIterator(r, VertexEntry(), o.read, edges_.get(), weights_.get(),
                                 window(), /*own_windows=*/false));
  const auto& index = r->vertex_index_;
  if (index.empty() || o.min_src > o.max_src || o.min_src > r->header_.max_src ||
      o.max_src < r->header_.min_src) {
    done_ = true;
    return;
  }
  auto pos =
      std::upper_bound(index.begin(), index.end(), o.min_src,
                       [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; });
  next_block_ = pos == index.begin() ? 0 : static_cast<uint64_t>(pos - index.begin()) - 1;
  // The windows read no further than the first vertex block past max_src starts: runs are in
  // source order, so the range's runs end before it (LimitReadahead tightens this to the last
  // run once its block is loaded; a SetVertex scan never loads one).
  auto past =
      std::upper_bound(pos, index.end(), o.max_src,
                       [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; });
  if (past != index.end()) {
    it_->edge_limit_ = past->stream_base;
    it_->weight_limit_ = 8 * past->edge_base;
  }
}

SegmentScanner::~SegmentScanner() {
  ScanSpares<std::string>::Give(std::move(raw_), raw_.capacity());
  ScanSpares<std::vector<VertexEntry>>::Give(std::move(batch_),
                                             batch_.capacity() * sizeof(VertexEntry));
}

size_t SegmentScanner::window() const {
  return o_.window != 0 ? o_.window : r_->options_.scan_window;
}

bool SegmentScanner::Fail(Status s) {
  if (status_.ok()) status_ = s;
  has_current_ = false;
  return false;
}

// Most vertex entries a scanner decodes at once.
constexpr uint64_t kScanVertexBatch = 8192;

Status SegmentScanner::LoadVertexBatch(bool one_block) {
  batch_.clear();
  batch_pos_ = 0;
  const auto& index = r_->vertex_index_;
  const uint64_t j0 = next_block_;
  // Blocks past jmax cannot hold a vertex <= max_src.
  const uint64_t jmax = static_cast<uint64_t>(
      std::upper_bound(index.begin(), index.end(), o_.max_src,
                       [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; }) -
      index.begin());
  if (!r_->pinned_vertex_off_.empty()) {
    next_block_ = j0 + 1;
    Status s = r_->DecodeVertexBlock(j0, r_->pinned_vertex_.data() + r_->pinned_vertex_off_[j0],
                                     index[j0].size, &batch_, 0, nullptr, nullptr);
    if (s.ok()) LimitReadahead(jmax);
    return s;
  }
  // Up to scan_window bytes of blocks, but none past the block that can hold max_src: a scan of
  // a small vertex range reads (and decodes) only the blocks of that range.
  uint64_t j1 = j0;
  uint64_t bytes = index[j0].size;
  // Decoded entries take ~15x their encoded bytes: bound the batch by entries too (a 1 MiB
  // window of vertex blocks would decode to ~16 MiB per scanner, per compaction input).
  // A smaller window bounds it further: at most window / 64 entries, whose decoded form (56
  // bytes each) is about the window's size.
  const uint64_t max_entries = std::min<uint64_t>(kScanVertexBatch, window() / 64);
  const uint64_t max_blocks =
      one_block ? 1 : std::max<uint64_t>(1, max_entries / std::max<uint32_t>(1, r_->header_.vertex_group));
  while (j1 + 1 < index.size() && j1 + 1 < jmax && j1 + 1 - j0 < max_blocks &&
         bytes + index[j1 + 1].size <= window()) {
    bytes += index[++j1].size;
  }
  Status s = r_->LoadBlocks(true, j0, j1, &raw_, &raw_off_);
  if (!s.ok()) return s;
  for (uint64_t j = j0; j <= j1; j++) {
    s = r_->DecodeVertexBlock(j, raw_.data() + raw_off_[j - j0], index[j].size, &batch_, 0,
                              nullptr, nullptr);
    if (!s.ok()) return s;
  }
  next_block_ = j1 + 1;
  LimitReadahead(jmax);
  return Status::OK();
}

void SegmentScanner::LimitReadahead(uint64_t jmax) {
  // Once the batch holds the range's last vertex, the edge and weight windows need read no
  // further than its run: a scan of a small range then reads only what it decodes.
  if (next_block_ < jmax) return;
  uint64_t edges = 0, weights = 0;
  for (auto e = batch_.rbegin(); e != batch_.rend(); ++e) {
    if (e->src > o_.max_src || e->degree == 0) continue;
    edges = e->stream_offset + e->run_bytes;
    weights = 8 * (e->first_edge + e->degree);
    break;
  }
  it_->edge_limit_ = edges;
  it_->weight_limit_ = weights;
}

bool SegmentScanner::NextVertex(VertexEntry* v) {
  has_current_ = false;
  if (done_ || !status_.ok()) return false;
  while (true) {
    if (batch_pos_ == batch_.size()) {
      if (next_block_ >= r_->vertex_index_.size()) {
        done_ = true;
        return false;
      }
      Status s = LoadVertexBatch();
      if (!s.ok()) return Fail(s);
    }
    const VertexEntry& e = batch_[batch_pos_++];
    if (e.src < o_.min_src) continue;
    if (e.src > o_.max_src) {
      done_ = true;
      return false;
    }
    *v = e;
    current_ = &e;
    has_current_ = true;
    reset_pending_ = true;  // the iterator moves to e when its edges are asked for
    return true;
  }
}

bool SegmentScanner::SeekVertex(VertexId target, VertexEntry* v) {
  has_current_ = false;
  if (done_ || !status_.ok()) return false;
  // In the decoded batch: a few steps (a dense scan's next wanted vertex is near), then a
  // binary search.
  size_t i = batch_pos_;
  for (int k = 0; k < 8 && i < batch_.size() && batch_[i].src < target; ++k) ++i;
  if (i < batch_.size() && batch_[i].src < target) {
    i = static_cast<size_t>(
        std::lower_bound(batch_.begin() + static_cast<ptrdiff_t>(i), batch_.end(), target,
                         [](const VertexEntry& e, VertexId t) { return e.src < t; }) -
        batch_.begin());
  }
  batch_pos_ = i;
  if (batch_pos_ == batch_.size() && next_block_ < r_->vertex_index_.size()) {
    // Blocks before the last one starting at or before target hold only smaller vertices.
    const auto& index = r_->vertex_index_;
    const uint64_t j = static_cast<uint64_t>(
        std::upper_bound(index.begin() + static_cast<ptrdiff_t>(next_block_), index.end(), target,
                         [](VertexId t, const VertexIndexEntry& e) { return t < e.first_src; }) -
        index.begin());
    if (j > next_block_ + 1) {
      // A sparse scan: load the target's block alone (a batch would decode blocks it skips).
      next_block_ = j - 1;
      Status s = LoadVertexBatch(/*one_block=*/true);
      if (!s.ok()) return Fail(s);
    }
  }
  while (NextVertex(v)) {
    if (v->src >= target) return true;
  }
  return false;
}

void SegmentScanner::SetVertex(const VertexEntry* v) {
  if (!status_.ok()) return;
  current_ = v;
  has_current_ = true;
  reset_pending_ = true;
}

bool SegmentScanner::NextEdges(EdgeBatch* b) {
  if (!has_current_ || !status_.ok()) return false;
  if (reset_pending_) {
    reset_pending_ = false;
    it_->Reset(*current_);
  }
  if (it_->Next(b)) return true;
  if (!it_->status().ok()) return Fail(it_->status());
  return false;
}

std::unique_ptr<SegmentScanner> SegmentReader::NewScanner(const ScanOptions& o) const {
  return std::unique_ptr<SegmentScanner>(new SegmentScanner(this, o));
}

// ---------------------------------------------------------------------------------------------
// Verify

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
