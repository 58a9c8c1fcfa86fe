// Little-endian fixed-width and LEB128 varint encoding, plus zigzag for signed deltas.
//
// Every on-disk integer in StrataGraph is little-endian. Decoders take an explicit end pointer
// and never read past it: a malformed varint is reported, never a crash.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace strata {

static_assert(std::endian::native == std::endian::little,
              "on-disk formats are little-endian; this build assumes a little-endian host");

inline void EncodeFixed32(char* dst, uint32_t v) { std::memcpy(dst, &v, 4); }
inline void EncodeFixed64(char* dst, uint64_t v) { std::memcpy(dst, &v, 8); }
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint16_t DecodeFixed16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline void EncodeFixed16(char* dst, uint16_t v) { std::memcpy(dst, &v, 2); }

inline void PutFixed32(std::string* dst, uint32_t v) {
  char b[4];
  EncodeFixed32(b, v);
  dst->append(b, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char b[8];
  EncodeFixed64(b, v);
  dst->append(b, 8);
}

// Longest encoding of a 64-bit varint.
inline constexpr size_t kMaxVarint64Bytes = 10;

// Writes v at dst (which must have room for kMaxVarint64Bytes) and returns the end.
inline char* EncodeVarint64(char* dst, uint64_t v) {
  auto* p = reinterpret_cast<unsigned char*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(p);
}

inline void PutVarint64(std::string* dst, uint64_t v) {
  char b[kMaxVarint64Bytes];
  char* e = EncodeVarint64(b, v);
  dst->append(b, static_cast<size_t>(e - b));
}

inline size_t VarintLength(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Decodes one varint from [p, end). Returns the position after it, or nullptr when the
// encoding runs past `end` or is longer than 10 bytes / overflows 64 bits.
inline const char* DecodeVarint64(const char* p, const char* end, uint64_t* v) {
  const auto* q = reinterpret_cast<const unsigned char*>(p);
  const auto* e = reinterpret_cast<const unsigned char*>(end);
  // Fast path: one byte.
  if (q < e && *q < 0x80) {
    *v = *q;
    return p + 1;
  }
  uint64_t result = 0;
  for (unsigned shift = 0; shift <= 63 && q < e; shift += 7) {
    uint64_t byte = *q++;
    if (shift == 63 && byte > 1) return nullptr;  // overflows 64 bits
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      *v = result;
      return reinterpret_cast<const char*>(q);
    }
  }
  return nullptr;
}

// Zigzag maps signed values of small magnitude to small unsigned ones. Applied to a wrapped
// difference (a - b mod 2^64 read as int64), it is a bijection on uint64_t.
inline uint64_t ZigZagEncode(uint64_t wrapped_diff) {
  auto s = static_cast<int64_t>(wrapped_diff);
  return (static_cast<uint64_t>(s) << 1) ^ static_cast<uint64_t>(s >> 63);
}
inline uint64_t ZigZagDecode(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

}  // namespace strata
