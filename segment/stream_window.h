// StreamWindow: a contiguous copy of logical bytes [begin, end) of one stream of a segment (edges
// or weights), read as whole blocks, each verified against its checksum before use. Internal to
// segment/: the neighbor iterator, the scanner and the reader's point and batch reads decode
// from windows. Also the varint decoders that rely on a window's slack.
//
// Invariants: the window's end is a block boundary or the end of the stream; kWindowSlack
// addressable zero bytes follow the valid data (adopted memory must provide at least 8).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "io/env.h"
#include "segment/scan_spares.h"
#include "segment/segment_reader.h"
#include "strata/status.h"
#include "util/coding.h"

namespace strata {

// Bytes past the end of a window's data that are always allocated and zero, so a decoder may
// load 8 bytes at any position before the end.
inline constexpr size_t kWindowSlack = 16;

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

// How many windows ahead of a streamed scan's read its hints reach (Ensure's `ahead`), as a
// multiple of the read. Process-wide, for measurement (strata-bench interleave's hH setting;
// docs/benchmarks.md, "Issue 30: hints ahead of streamed scans"); 0 turns the hints off. The
// default is what measured best on cold BFS.
inline constexpr uint64_t kDefaultStreamHintWindows = 4;
inline constexpr uint64_t kMaxStreamHintWindows = 16;
void SetStreamHintWindows(uint64_t w);  // clamped to kMaxStreamHintWindows
uint64_t GetStreamHintWindows();

class StreamWindow {
 public:
  // The buffer comes from this thread's ScanSpares and goes back to them.
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
  // Corruption past the stream's end or on a checksum mismatch (the window is then empty).
  // A streamed scan passes `ahead`, the stream offset it will read up to: when a read happens,
  // the blocks after it, as many as it read but none at or past `ahead`, are named to the OS
  // to read meanwhile (RandomAccessFile::WillNeed). 0: no hint.
  Status Ensure(uint64_t pos, uint64_t n, uint64_t goal, uint64_t ahead = 0) {
    if (pos >= begin_ && pos + n <= end_) return Status::OK();
    return Load(pos, n, goal, ahead);
  }

  // The byte at stream offset pos, which an Ensure since the last read made available.
  const char* At(uint64_t pos) const {
    return (ext_ != nullptr ? ext_ : buf_.get()) + (pos - begin_);
  }

 private:
  // Ensure when [pos, pos + n) is not in the window: keeps what it has of the range, reads the
  // rest (one read per run of blocks inside one extent) and squeezes out the checksums.
  Status Load(uint64_t pos, uint64_t n, uint64_t goal, uint64_t ahead);
  // fn(file offset, bytes) for each run of blocks [first, last] inside one extent (contiguous
  // on disk): what a read or a hint of those blocks covers.
  template <class F>
  void ForEachExtentRun(uint64_t first, uint64_t last, F&& fn) const;

  Status Reset(Status s) {
    begin_ = end_ = 0;
    return s;
  }

  void Reserve(size_t keep, size_t need);

  const SegmentReader* r_;
  const SegmentReader::Stream* s_;
  const uint64_t payload_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  const char* ext_ = nullptr;  // adopted memory, when not null
  uint64_t begin_ = 0;
  uint64_t end_ = 0;
  uint64_t hinted_ = 0;  // blocks before this one were named to the OS already (or are behind)
  std::vector<io::ReadRequest> reqs_;
};

}  // namespace strata
