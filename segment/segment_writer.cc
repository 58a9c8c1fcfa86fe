#include "segment/segment_writer.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>

#include "segment/bloom.h"
#include "util/buffer_pool.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

// A logical byte stream cut into fixed blocks (payload + checksum) grouped into extents of
// `per_extent` blocks; every full extent is written at once through the writer.
class SegmentWriter::BlockStream {
 public:
  BlockStream(SegmentWriter* w, uint32_t kind, uint32_t block_size, uint32_t per_extent)
      : w_(w), kind_(kind), block_size_(block_size), payload_(block_size - kBlockTrailerSize),
        per_extent_(per_extent) {
    ReserveFromPool(&ext_, static_cast<size_t>(block_size) * per_extent);
  }
  ~BlockStream() { ReturnBuffer(&ext_); }
  BlockStream(const BlockStream&) = delete;
  BlockStream& operator=(const BlockStream&) = delete;

  Status Append(const char* p, size_t n) {
    while (n > 0) {
      size_t take = std::min<size_t>(n, payload_ - fill_);
      ext_.append(p, take);
      fill_ += take;
      size_ += take;
      p += take;
      n -= take;
      if (fill_ == payload_) {
        Status s = SealBlock();
        if (!s.ok()) return s;
      }
    }
    return Status::OK();
  }

  // Seals the last partial block and writes what is buffered.
  Status Finish() {
    if (fill_ > 0) {
      Status s = SealBlock();
      if (!s.ok()) return s;
    }
    return FlushExtent();
  }

  uint64_t size() const { return size_; }  // logical bytes
  uint64_t physical_bytes() const { return blocks_ * kBlockTrailerSize + size_; }
  uint64_t buffered() const { return ext_.size(); }
  const std::vector<uint64_t>& extents() const { return extents_; }

 private:
  Status SealBlock() {
    const char* block = ext_.data() + ext_.size() - fill_;
    char trailer[8];
    EncodeFixed64(trailer, Checksum64(block, fill_, ChecksumSeed(kind_, blocks_)));
    ext_.append(trailer, 8);
    blocks_++;
    fill_ = 0;
    if (++in_extent_ == per_extent_) return FlushExtent();
    return Status::OK();
  }

  Status FlushExtent() {
    if (ext_.empty()) return Status::OK();
    uint64_t offset;
    Status s = w_->WriteExtent(&ext_, &offset);
    if (!s.ok()) return s;
    extents_.push_back(offset);
    in_extent_ = 0;
    return s;
  }

  SegmentWriter* const w_;
  const uint32_t kind_;
  const uint32_t block_size_;
  const size_t payload_;
  const uint32_t per_extent_;
  std::string ext_;       // sealed blocks of the current extent, then the open block's payload
  size_t fill_ = 0;       // payload bytes in the open block
  uint32_t in_extent_ = 0;
  uint64_t blocks_ = 0;   // sealed blocks
  uint64_t size_ = 0;
  std::vector<uint64_t> extents_;  // file offset of every extent written
};

// Variable-size blocks (vertex blocks, bloom partitions) buffered into extents. Index entries
// of blocks still in the buffer hold buffer-relative offsets until the extent is written.
class SegmentWriter::VarBlocks {
 public:
  VarBlocks(SegmentWriter* w, size_t extent_bytes) : w_(w), extent_bytes_(extent_bytes) {}
  ~VarBlocks() { ReturnBuffer(&buf_); }
  VarBlocks(const VarBlocks&) = delete;
  VarBlocks& operator=(const VarBlocks&) = delete;

  // Appends a finished block; returns its buffer-relative offset (fixed up on flush).
  template <typename Entry>
  Status Add(const std::string& block, Entry* entry, std::vector<Entry>* index) {
    ReserveFromPool(&buf_, extent_bytes_);
    entry->offset = buf_.size();
    entry->size = static_cast<uint32_t>(block.size());
    buf_.append(block);
    index->push_back(*entry);
    total_ += block.size();
    if (buf_.size() >= extent_bytes_) return Flush(index);
    return Status::OK();
  }

  template <typename Entry>
  Status Flush(std::vector<Entry>* index) {
    if (buf_.empty()) return Status::OK();
    uint64_t offset;
    Status s = w_->WriteExtent(&buf_, &offset);
    if (!s.ok()) return s;
    for (size_t i = first_pending_; i < index->size(); i++) (*index)[i].offset += offset;
    first_pending_ = index->size();
    return s;
  }

  uint64_t total() const { return total_; }
  uint64_t buffered() const { return buf_.size(); }

 private:
  SegmentWriter* const w_;
  const size_t extent_bytes_;
  std::string buf_;
  size_t first_pending_ = 0;
  uint64_t total_ = 0;
};

SegmentWriter::SegmentWriter(io::Env* env) : env_(env) {}

SegmentWriter::~SegmentWriter() {
  if (file_ != nullptr) file_->Close();
}

Status SegmentWriter::Fail(Status s) {
  if (status_.ok()) status_ = s;
  return status_;
}

Status SegmentWriter::WriteExtent(std::string* buf, uint64_t* offset) {
  *offset = file_->Size();
  Status s = file_->Append(*buf);
  buf->clear();
  return s;
}

Status SegmentWriter::Open(const std::string& path, const SegmentWriterOptions& options) {
  if (opened_) return Status::InvalidArgument("segment writer: Open called twice");
  path_ = path;
  const SegmentWriterOptions& o = options;
  if (o.block_size < kMinBlockSize || o.block_size > kMaxBlockSize || o.block_size % 512 != 0) {
    return Status::InvalidArgument("segment writer: block_size must be a multiple of 512 in "
                                   "[512, 1 MiB]");
  }
  if (o.bloom_bits_per_key < 0 || o.bloom_bits_per_key > 64) {
    return Status::InvalidArgument("segment writer: bloom_bits_per_key must be in [0, 64]");
  }
  if (o.bloom_keys_per_partition == 0 || o.bloom_keys_per_partition > (1u << 24)) {
    return Status::InvalidArgument("segment writer: bloom_keys_per_partition must be in "
                                   "[1, 2^24]");
  }
  if (o.vertex_group == 0 || o.vertex_group > 4096) {
    return Status::InvalidArgument("segment writer: vertex_group must be in [1, 4096]");
  }
  options_ = o;
  Status s = env_->NewWritableFile(path, &file_);
  if (!s.ok()) return Fail(s);
  opened_ = true;

  const uint32_t per_extent =
      static_cast<uint32_t>(std::max<size_t>(1, o.extent_bytes / o.block_size));
  header_.flags =
      (o.weighted ? kSegmentWeighted : 0) | (o.keep_timestamps ? kSegmentTimestamps : 0);
  header_.level = o.level;
  header_.block_size = o.block_size;
  header_.file_number = o.file_number;
  header_.timestamp = o.timestamp;
  header_.blocks_per_extent = per_extent;
  header_.vertex_group = static_cast<uint16_t>(o.vertex_group);
  header_.bloom_bits_per_key = static_cast<uint8_t>(o.bloom_bits_per_key);
  header_.bloom_probes =
      o.bloom_bits_per_key > 0 ? static_cast<uint8_t>(BloomProbesFor(o.bloom_bits_per_key)) : 0;
  header_.bloom_keys_per_partition = o.bloom_keys_per_partition;
  header_.user_tag = o.user_tag;
  header_.store_id = o.store_id;
  header_.min_edge_ts = kMaxTimestamp;
  header_.max_edge_ts = 0;

  const size_t extent_bytes = static_cast<size_t>(per_extent) * o.block_size;
  edges_ = std::make_unique<BlockStream>(this, kSeedEdgeBlock, o.block_size, per_extent);
  if (o.weighted) {
    weights_ = std::make_unique<BlockStream>(this, kSeedWeightBlock, o.block_size, per_extent);
  }
  vertex_blocks_ = std::make_unique<VarBlocks>(this, extent_bytes);
  bloom_blocks_ = std::make_unique<VarBlocks>(this, extent_bytes);
  if (o.bloom_bits_per_key > 0) bloom_hashes_.reserve(o.bloom_keys_per_partition);

  std::string page(kDataStart, '\0');
  EncodePreamble(o.block_size, header_.flags, page.data());
  s = file_->Append(page);
  if (!s.ok()) return Fail(s);
  return Status::OK();
}

Status SegmentWriter::AddVertex(VertexId src, uint8_t flags) {
  if (!status_.ok()) return status_;
  if (!opened_ || finished_) return Status::InvalidArgument("segment writer: not open");
  if ((flags & ~kVertexCallerFlags) != 0) {
    return Status::InvalidArgument("segment writer: vertex " + std::to_string(src) +
                                   ": unknown flag bits " + std::to_string(flags));
  }
  if (have_vertex_ || header_.num_vertices > 0) {
    VertexId prev = have_vertex_ ? cur_src_ : header_.max_src;
    if (src <= prev) {
      return Status::InvalidArgument("segment writer: source " + std::to_string(src) +
                                     " not after " + std::to_string(prev));
    }
  }
  if (have_vertex_) {
    Status s = FinishVertex();
    if (!s.ok()) return s;
  }
  have_vertex_ = true;
  cur_src_ = src;
  cur_flags_ = flags;
  cur_degree_ = 0;
  cur_run_start_ = edges_->size();
  cur_first_edge_ = header_.num_edges;
  cur_has_tombstones_ = false;
  chunks_emitted_ = 0;
  chunk_n_ = 0;
  chunk_has_tomb_ = false;
  skip_.clear();
  return Status::OK();
}

Status SegmentWriter::AddEdges(const VertexId* dst, const double* weight, const uint8_t* tomb,
                               size_t n, const Timestamp* ts) {
  if (!status_.ok()) return status_;
  if (!opened_ || finished_) return Status::InvalidArgument("segment writer: not open");
  if (!have_vertex_) return Status::InvalidArgument("segment writer: AddEdge before AddVertex");
  if (n == 0) return Status::OK();
  for (size_t i = 0; i < n; i++) {
    const VertexId prev = i > 0 ? dst[i - 1] : last_dst_;
    if ((i > 0 || cur_degree_ > 0) && dst[i] <= prev) {
      return Status::InvalidArgument("segment writer: vertex " + std::to_string(cur_src_) +
                                     ": destination " + std::to_string(dst[i]) + " not after " +
                                     std::to_string(prev));
    }
  }
  if (cur_degree_ + n >= (uint64_t{1} << 59)) {
    return Status::InvalidArgument("segment writer: vertex degree too large");
  }
  for (size_t i = 0; i < n;) {
    if (chunk_n_ == kChunkEdges) {
      // A further edge: the run has more than one chunk, each with its flags byte.
      Status s = EmitChunk(/*multi=*/true);
      if (!s.ok()) return s;
    }
    // Element loops, not memcpy: most ranges a merge hands over are a few records.
    const uint32_t m = static_cast<uint32_t>(std::min<size_t>(n - i, kChunkEdges - chunk_n_));
    uint32_t tombs = 0;
    for (uint32_t k = 0; k < m; k++) {
      const uint32_t c = chunk_n_ + k;
      chunk_dst_[c] = dst[i + k];
      chunk_weight_[c] = weight != nullptr ? weight[i + k] : 1.0;
      chunk_tomb_[c] = tomb != nullptr && tomb[i + k] != 0;
      chunk_ts_[c] = ts != nullptr ? ts[i + k] : 0;
      tombs += chunk_tomb_[c];
    }
    if (options_.keep_timestamps) {
      for (uint32_t k = chunk_n_; k < chunk_n_ + m; k++) {
        header_.min_edge_ts = std::min(header_.min_edge_ts, chunk_ts_[k]);
        header_.max_edge_ts = std::max(header_.max_edge_ts, chunk_ts_[k]);
      }
    }
    chunk_has_tomb_ |= tombs > 0;
    cur_has_tombstones_ |= tombs > 0;
    header_.num_tombstones += tombs;
    chunk_n_ += m;
    i += m;
  }
  cur_degree_ += n;
  last_dst_ = dst[n - 1];
  header_.num_edges += n;
  if (options_.bloom_bits_per_key > 0) {
    for (size_t i = 0; i < n;) {
      if (bloom_hashes_.empty()) {
        bloom_entry_.first_src = cur_src_;
        bloom_entry_.first_dst = dst[i];
      }
      const size_t m =
          std::min<size_t>(n - i, options_.bloom_keys_per_partition - bloom_hashes_.size());
      for (size_t k = 0; k < m; k++) bloom_hashes_.push_back(EdgeKeyHash(cur_src_, dst[i + k]));
      i += m;
      if (bloom_hashes_.size() == options_.bloom_keys_per_partition) {
        Status s = CloseBloomPartition();
        if (!s.ok()) return s;
      }
    }
  }
  return Status::OK();
}

// Encodes the pending chunk (chunk_n_ > 0) into the edge stream and its weights into the weight
// stream. `multi`: the run has more than one chunk (flags byte, skip table entry).
Status SegmentWriter::EmitChunk(bool multi) {
  const uint32_t n = chunk_n_;
  if (multi && chunks_emitted_ > 0) {
    // Skip entry for this chunk: the destination before it and its offset within the run.
    char entry[kSkipEntrySize];
    EncodeFixed64(entry, prev_encoded_);
    EncodeFixed64(entry + 8, edges_->size() - cur_run_start_);
    skip_.insert(skip_.end(), entry, entry + kSkipEntrySize);
  }
  // Encoded straight into chunk_buf_, which holds the largest chunk (kMaxChunkBytes).
  char* const begin = chunk_buf_;
  char* p = begin;
  if (multi) *p++ = static_cast<char>(chunk_has_tomb_ ? kChunkHasTombstones : 0);
  if (chunk_has_tomb_) {
    std::memset(p, 0, (n + 7) / 8);
    for (uint32_t i = 0; i < n; i++) {
      if (chunk_tomb_[i]) p[i / 8] = static_cast<char>(p[i / 8] | (1 << (i % 8)));
    }
    p += (n + 7) / 8;
  }
  uint32_t i = 0;
  VertexId prev = prev_encoded_;
  if (chunks_emitted_ == 0) {
    p = EncodeVarint64(p, ZigZagEncode(chunk_dst_[0] - cur_src_));
    prev = chunk_dst_[0];
    i = 1;
  }
  for (; i < n; i++) {
    p = EncodeVarint64(p, chunk_dst_[i] - prev - 1);
    prev = chunk_dst_[i];
  }
  if (options_.keep_timestamps) {
    for (i = 0; i < n; i++) p = EncodeVarint64(p, ZigZagEncode(chunk_ts_[i] - options_.timestamp));
  }
  assert(static_cast<size_t>(p - begin) <= kMaxChunkBytes);
  Status s = edges_->Append(begin, static_cast<size_t>(p - begin));
  if (!s.ok()) return Fail(s);
  if (weights_ != nullptr) {
    // Doubles in host order, which is little-endian (util/coding.h asserts it).
    s = weights_->Append(reinterpret_cast<const char*>(chunk_weight_), 8 * n);
    if (!s.ok()) return Fail(s);
  }
  prev_encoded_ = prev;
  chunks_emitted_++;
  chunk_n_ = 0;
  chunk_has_tomb_ = false;
  return Status::OK();
}

Status SegmentWriter::FinishVertex() {
  Status s;
  if (chunk_n_ > 0) {
    s = EmitChunk(/*multi=*/chunks_emitted_ > 0);
    if (!s.ok()) return s;
  }
  if (!skip_.empty()) {
    s = edges_->Append(skip_.data(), skip_.size());
    if (!s.ok()) return Fail(s);
    skip_.clear();
  }
  const uint64_t run_len = edges_->size() - cur_run_start_;
  const uint8_t flags = cur_flags_ | (cur_has_tombstones_ ? kRunHasTombstones : 0);

  if (vblock_count_ == 0) {
    vblock_.clear();
    vblock_entry_ = VertexIndexEntry();
    vblock_entry_.first_src = cur_src_;
    vblock_entry_.stream_base = cur_run_start_;
    vblock_entry_.edge_base = cur_first_edge_;
  }
  PutVarint64(&vblock_, (cur_degree_ << 4) | flags);
  if (vblock_count_ > 0) PutVarint64(&vblock_, cur_src_ - vblock_prev_src_ - 1);
  if (cur_degree_ > 0) PutVarint64(&vblock_, run_len);
  vblock_prev_src_ = cur_src_;
  vblock_count_++;

  if (header_.num_vertices == 0) header_.min_src = cur_src_;
  header_.max_src = cur_src_;
  header_.num_vertices++;
  have_vertex_ = false;
  if (vblock_count_ == options_.vertex_group) return CloseVertexBlock();
  return Status::OK();
}

Status SegmentWriter::CloseVertexBlock() {
  if (vblock_count_ == 0) return Status::OK();
  PutFixed64(&vblock_, Checksum64(vblock_.data(), vblock_.size(),
                                  ChecksumSeed(kSeedVertexBlock, vertex_index_.size())));
  vblock_entry_.count = vblock_count_;
  vblock_count_ = 0;
  Status s = vertex_blocks_->Add(vblock_, &vblock_entry_, &vertex_index_);
  if (!s.ok()) return Fail(s);
  return s;
}

Status SegmentWriter::CloseBloomPartition() {
  if (bloom_hashes_.empty()) return Status::OK();
  std::string part;
  BuildBloomFilter(bloom_hashes_.data(), bloom_hashes_.size(), options_.bloom_bits_per_key,
                   header_.bloom_probes, &part);
  PutFixed64(&part, Checksum64(part.data(), part.size(),
                               ChecksumSeed(kSeedBloomPartition, bloom_index_.size())));
  bloom_entry_.num_keys = static_cast<uint32_t>(bloom_hashes_.size());
  bloom_hashes_.clear();
  Status s = bloom_blocks_->Add(part, &bloom_entry_, &bloom_index_);
  if (!s.ok()) return Fail(s);
  return s;
}

Status SegmentWriter::Finish(SegmentWriteStats* stats) {
  if (!status_.ok()) return status_;
  if (!opened_ || finished_) return Status::InvalidArgument("segment writer: not open");
  Status s;
  if (have_vertex_ && !(s = FinishVertex()).ok()) return Fail(s);
  if (!(s = CloseVertexBlock()).ok()) return Fail(s);
  if (!(s = CloseBloomPartition()).ok()) return Fail(s);
  if (!(s = edges_->Finish()).ok()) return Fail(s);
  if (weights_ != nullptr && !(s = weights_->Finish()).ok()) return Fail(s);
  if (!(s = vertex_blocks_->Flush(&vertex_index_)).ok()) return Fail(s);
  if (!(s = bloom_blocks_->Flush(&bloom_index_)).ok()) return Fail(s);

  header_.edge_stream_bytes = edges_->size();
  if (!options_.keep_timestamps || header_.num_edges == 0) {
    header_.min_edge_ts = header_.max_edge_ts = header_.timestamp;
  }
  header_.creation_time_us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());

  // Metadata: each section is its payload followed by a checksum of it.
  const uint64_t meta_start = file_->Size();
  std::string meta;
  SegmentFooter footer;
  auto section = [&](SegmentFooter::Section* sec, const std::string& payload, uint32_t kind) {
    sec->offset = meta_start + meta.size();
    meta.append(payload);
    PutFixed64(&meta, Checksum64(payload.data(), payload.size(), ChecksumSeed(kind, 0)));
    sec->size = meta_start + meta.size() - sec->offset;
  };
  std::string payload;
  for (uint64_t off : edges_->extents()) PutFixed64(&payload, off);
  section(&footer.edge_extents, payload, kSeedEdgeExtents);
  payload.clear();
  if (weights_ != nullptr) {
    for (uint64_t off : weights_->extents()) PutFixed64(&payload, off);
  }
  section(&footer.weight_extents, payload, kSeedWeightExtents);
  payload.assign(vertex_index_.size() * kVertexIndexEntrySize, '\0');
  for (size_t i = 0; i < vertex_index_.size(); i++) {
    vertex_index_[i].EncodeTo(payload.data() + i * kVertexIndexEntrySize);
  }
  section(&footer.vertex_index, payload, kSeedVertexIndex);
  payload.assign(bloom_index_.size() * kBloomIndexEntrySize, '\0');
  for (size_t i = 0; i < bloom_index_.size(); i++) {
    bloom_index_[i].EncodeTo(payload.data() + i * kBloomIndexEntrySize);
  }
  section(&footer.bloom_index, payload, kSeedBloomIndex);
  footer.header.offset = meta_start + meta.size();
  footer.header.size = kHeaderSize;
  meta.resize(meta.size() + kHeaderSize);
  header_.EncodeTo(meta.data() + meta.size() - kHeaderSize);
  meta.resize(meta.size() + kFooterSize);
  footer.EncodeTo(meta.data() + meta.size() - kFooterSize);

  if (!(s = file_->Append(meta)).ok()) return Fail(s);
  if (!(s = file_->Sync()).ok()) return Fail(s);
  if (options_.drop_page_cache) file_->DropCache();
  const uint64_t file_size = file_->Size();
  if (!(s = file_->Close()).ok()) return Fail(s);
  file_.reset();
  finished_ = true;

  if (stats != nullptr) {
    stats->file_size = file_size;
    stats->num_vertices = header_.num_vertices;
    stats->num_edges = header_.num_edges;
    stats->num_tombstones = header_.num_tombstones;
    stats->edge_stream_bytes = edges_->size();
    stats->edge_bytes = edges_->physical_bytes();
    stats->weight_bytes = weights_ != nullptr ? weights_->physical_bytes() : 0;
    stats->vertex_bytes = vertex_blocks_->total();
    stats->bloom_bytes = bloom_blocks_->total();
    stats->metadata_bytes = kDataStart + meta.size();
    stats->tail_checksum = Checksum64(meta.data(), meta.size(), ChecksumSeed(kSeedTail, 0));
  }
  return Status::OK();
}

Status SegmentWriter::Abandon() {
  if (file_ != nullptr) {
    file_->Close();
    file_.reset();
  }
  finished_ = true;
  if (!opened_) return Status::OK();
  if (!env_->FileExists(path_)) return Status::OK();
  return env_->RemoveFile(path_);
}

uint64_t SegmentWriter::EstimatedFileSize() const {
  if (!opened_) return 0;
  uint64_t size = file_ != nullptr ? file_->Size() : 0;
  size += edges_->buffered() + (weights_ != nullptr ? weights_->buffered() : 0);
  size += vertex_blocks_->buffered() + bloom_blocks_->buffered() + vblock_.size();
  size += (vertex_index_.size() + 1) * kVertexIndexEntrySize +
          (bloom_index_.size() + 1) * kBloomIndexEntrySize + kHeaderSize + kFooterSize;
  if (options_.bloom_bits_per_key > 0) {
    size += bloom_hashes_.size() * options_.bloom_bits_per_key / 8;
  }
  return size;
}

}  // namespace strata
