// A packed neighbor list: an ascending list of 32-bit vertex IDs as one byte record, about
// half the bytes of the plain list on random graphs (the list cache's packed blocks,
// list_cache.h). The record of a list of n >= 1 IDs:
//
//   varint n          LEB128 (util/coding.h), 1-5 bytes
//   varint first      the first ID, LEB128
//   uint8  b          0..4: bytes per gap, the fewest that hold the largest gap
//   gaps              n - 1 gaps ids[k] - ids[k - 1], b bytes each, little-endian
//
// Whole bytes, one width per list: decoding is a loop per width of a load and an add per ID,
// no shifts. (Gaps bit-packed at one width in bits per list would take about 55 MiB where
// these records take 67 on the scale-20 Kronecker graph, by a temporary count, but made
// PageRank over the cache 1.49x slower: docs/benchmarks.md, "Issue 28: packed list-cache
// blocks".) A 3-byte gap is read with a 4-byte load, so a buffer of records must be followed
// by kPackedPad readable bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "util/coding.h"  // varints; asserts a little-endian host, as the gaps' words need

namespace strata::analytics {

inline constexpr size_t kPackedPad = 4;

// The bytes per gap of ids[0, n) (n >= 1): the fewest, 0-4, that hold the largest gap; -1 if
// the IDs do not ascend (equal neighbors are allowed).
inline int PackedWidth(const uint32_t* ids, size_t n) {
  uint32_t max_gap = 0;
  for (size_t k = 1; k < n; ++k) {
    if (ids[k] < ids[k - 1]) return -1;
    max_gap |= ids[k] - ids[k - 1];  // the OR has the byte length of the largest gap
  }
  return max_gap == 0 ? 0 : max_gap < (1u << 8) ? 1 : max_gap < (1u << 16) ? 2
                          : max_gap < (1u << 24) ? 3 : 4;
}

// Bytes of the record of n >= 1 IDs from `first` with gaps `width` bytes wide.
inline size_t PackedRecordSize(size_t n, uint32_t first, int width) {
  return VarintLength(n) + VarintLength(first) + 1 + (n - 1) * static_cast<size_t>(width);
}

// Writes the record of ids[0, n) (n >= 1, width = PackedWidth(ids, n) >= 0) at out and
// returns its length, PackedRecordSize(n, ids[0], width). Each gap is stored as a 4-byte word
// of which the next gap overwrites all but the low `width` bytes, so up to 3 bytes past the
// record are written too (garbage): out needs kPackedPad bytes of room after it.
inline size_t PackList(const uint32_t* ids, size_t n, int width, uint8_t* out) {
  char* p = reinterpret_cast<char*>(out);
  p = EncodeVarint64(p, n);
  p = EncodeVarint64(p, ids[0]);
  *p++ = static_cast<char>(width);
  const size_t step = static_cast<size_t>(width);
  for (size_t k = 1; k < n && step != 0; ++k) {
    EncodeFixed32(p, ids[k] - ids[k - 1]);  // its low `width` bytes are kept
    p += step;
  }
  return static_cast<size_t>(p - reinterpret_cast<char*>(out));
}

// Reads one record, in pieces.
class PackedListReader {
 public:
  explicit PackedListReader(const uint8_t* record) {
    const char* p = reinterpret_cast<const char*>(record);
    uint64_t n = 0, first = 0;
    // A record this cache wrote: each varint ends within its 5 bytes.
    p = DecodeVarint64(p, p + 5, &n);
    p = DecodeVarint64(p, p + 5, &first);
    left_ = static_cast<size_t>(n);
    prev_ = static_cast<uint32_t>(first);
    width_ = static_cast<uint8_t>(*p++);
    gaps_ = p;
  }
  // IDs not yet read.
  size_t left() const { return left_; }
  // Writes the next min(max, left()) IDs to out and returns how many.
  template <typename Id>
  size_t Next(Id* out, size_t max) {
    const size_t k = max < left_ ? max : left_;
    if (k == 0) return 0;
    size_t i = 0;
    if (first_) {
      out[i++] = prev_;
      first_ = false;
    }
    uint32_t prev = prev_;
    const char* g = gaps_;
    switch (width_) {
      case 0:
        for (; i < k; ++i) out[i] = prev;
        break;
      case 1:
        for (; i < k; ++i) out[i] = prev += static_cast<uint8_t>(*g++);
        break;
      case 2:
        for (; i < k; ++i, g += 2) out[i] = prev += DecodeFixed16(g);
        break;
      case 3:
        for (; i < k; ++i, g += 3) out[i] = prev += DecodeFixed32(g) & 0xffffffu;
        break;
      default:
        for (; i < k; ++i, g += 4) out[i] = prev += DecodeFixed32(g);
        break;
    }
    gaps_ = g;
    prev_ = prev;
    left_ -= k;
    return k;
  }

 private:
  const char* gaps_ = nullptr;
  size_t left_ = 0;
  uint32_t prev_ = 0;
  uint8_t width_ = 0;
  bool first_ = true;
};

}  // namespace strata::analytics
