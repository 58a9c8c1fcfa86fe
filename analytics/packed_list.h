// A packed neighbor list: an ascending list of 32-bit vertex IDs as one byte record, about
// half the bytes of the plain list on random graphs (the list cache's packed blocks,
// list_cache.h). The record of a list of n >= 1 IDs:
//
//   varint n          LEB128, 1-5 bytes
//   varint first      the first ID, LEB128
//   uint8  b          0..4: bytes per gap, the fewest that hold the largest gap
//   gaps              n - 1 gaps ids[k] - ids[k - 1], b bytes each, little-endian
//
// Whole bytes, one width per list: decoding is a loop per width of a load and an add per ID,
// no shifts (bit-packed gaps took about 1.78 bytes per entry instead of 2.2 on a Kronecker
// graph, but made PageRank over the cache 1.5x slower: docs/benchmarks.md). A 3-byte gap is
// read with a 4-byte load, so a buffer of records must be followed by kPackedPad readable
// bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata::analytics {

inline constexpr size_t kPackedPad = 4;

// Gaps are written and read as whole little-endian words (PackList, PackedListReader).
static_assert(std::endian::native == std::endian::little, "packed lists assume little-endian");

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

inline size_t VarintBytes(uint64_t x) {
  size_t k = 1;
  for (; x >= 0x80; x >>= 7) ++k;
  return k;
}

// Bytes of the record of n >= 1 IDs from `first` with gaps `width` bytes wide.
inline size_t PackedRecordSize(size_t n, uint32_t first, int width) {
  return VarintBytes(n) + VarintBytes(first) + 1 + (n - 1) * static_cast<size_t>(width);
}

// Writes the record of ids[0, n) (n >= 1, width = PackedWidth(ids, n) >= 0) at out and
// returns its length, PackedRecordSize(n, ids[0], width). Each gap is stored as a 4-byte word
// of which the next gap overwrites all but the low `width` bytes, so up to 3 bytes past the
// record are written too (garbage): out needs kPackedPad bytes of room after it.
inline size_t PackList(const uint32_t* ids, size_t n, int width, uint8_t* out) {
  uint8_t* p = out;
  auto varint = [&p](uint64_t x) {
    for (; x >= 0x80; x >>= 7) *p++ = static_cast<uint8_t>(x | 0x80);
    *p++ = static_cast<uint8_t>(x);
  };
  varint(n);
  varint(ids[0]);
  *p++ = static_cast<uint8_t>(width);
  const size_t step = static_cast<size_t>(width);
  for (size_t k = 1; k < n && step != 0; ++k) {
    const uint32_t gap = ids[k] - ids[k - 1];  // its low `width` bytes are kept
    std::memcpy(p, &gap, sizeof(gap));
    p += step;
  }
  return static_cast<size_t>(p - out);
}

// Reads one record, in pieces.
class PackedListReader {
 public:
  explicit PackedListReader(const uint8_t* record) {
    const uint8_t* p = record;
    left_ = static_cast<size_t>(Varint(&p));
    prev_ = static_cast<uint32_t>(Varint(&p));
    width_ = *p++;
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
    const uint8_t* g = gaps_;
    switch (width_) {
      case 0:
        for (; i < k; ++i) out[i] = prev;
        break;
      case 1:
        for (; i < k; ++i) out[i] = prev += *g++;
        break;
      case 2:
        for (; i < k; ++i, g += 2) out[i] = prev += Load<uint16_t>(g);
        break;
      case 3:
        for (; i < k; ++i, g += 3) out[i] = prev += Load<uint32_t>(g) & 0xffffffu;
        break;
      default:
        for (; i < k; ++i, g += 4) out[i] = prev += Load<uint32_t>(g);
        break;
    }
    gaps_ = g;
    prev_ = prev;
    left_ -= k;
    return k;
  }

 private:
  template <typename T>
  static T Load(const uint8_t* p) {
    T x;
    std::memcpy(&x, p, sizeof(x));
    return x;
  }
  static uint64_t Varint(const uint8_t** p) {
    uint64_t x = 0;
    for (unsigned shift = 0;; shift += 7) {
      const uint8_t b = *(*p)++;
      x |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return x;
    }
  }

  const uint8_t* gaps_ = nullptr;
  size_t left_ = 0;
  uint32_t prev_ = 0;
  uint8_t width_ = 0;
  bool first_ = true;
};

}  // namespace strata::analytics
