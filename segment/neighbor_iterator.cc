#include "segment/neighbor_iterator.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "segment/segment_reader.h"
#include "segment/stream_window.h"
#include "util/coding.h"

namespace strata {

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
  Status s = edges_->Ensure(pos_, avail, std::min(sparse_ ? run_end_ : limit_off, pos_ + window_goal_),
                            own_windows_ || sparse_ ? 0 : limit_off);
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
    Status s = weights_->Ensure(pos, 8 * count, std::min(limit, pos + window_goal_),
                                own_windows_ || sparse_ ? 0 : limit);
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

}  // namespace strata
