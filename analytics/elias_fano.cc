#include "analytics/elias_fano.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define STRATA_EF_AVX2 1
#endif

#include "util/coding.h"

namespace strata::analytics {

unsigned IdEliasFano::Width(size_t n, uint32_t last) {
  const uint64_t q = (uint64_t{last} + 1) / n;  // floor(log2(U / n)) = floor(log2(q))
  return q == 0 ? 0 : static_cast<unsigned>(std::bit_width(q)) - 1;
}

namespace {

// Writes the low and high parts of ids[k] - sub, k < n (ascending), l-bit low parts, hb bytes
// of high parts (at least HighBytes(n, l, ids[n - 1] - sub)), from p; returns their end.
uint8_t* WriteParts(const uint32_t* ids, size_t n, uint32_t sub, unsigned l, size_t hb,
                    uint8_t* p) {
  // The low parts, 4 bytes at a time: fewer than 32 bits wait before each ID's l (<= 26).
  const uint64_t mask = (uint64_t{1} << l) - 1;
  uint64_t acc = 0;
  unsigned nb = 0;
  for (size_t k = 0; k < n; ++k) {
    acc |= ((ids[k] - sub) & mask) << nb;
    nb += l;
    if (nb >= 32) {
      EncodeFixed32(reinterpret_cast<char*>(p), static_cast<uint32_t>(acc));
      p += 4;
      acc >>= 32;
      nb -= 32;
    }
  }
  for (; nb > 0; nb = nb > 8 ? nb - 8 : 0) {
    *p++ = static_cast<uint8_t>(acc);
    acc >>= 8;
  }
  // The high parts a 64-bit word at a time (their positions ascend), each word stored once
  // over the zeroed bytes; the last may be partial.
  uint8_t* const hi = p;
  std::memset(hi, 0, hb);
  auto store = [&](uint64_t word_index, uint64_t word) {
    const size_t at = static_cast<size_t>(8 * word_index);
    char bytes[8];
    EncodeFixed64(bytes, word);
    std::memcpy(hi + at, bytes, std::min<size_t>(8, hb - at));
  };
  uint64_t word = 0, wi = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t at = (uint64_t{ids[k] - sub} >> l) + k;
    if ((at >> 6) != wi) {
      store(wi, word);
      wi = at >> 6;
      word = 0;
    }
    word |= uint64_t{1} << (at & 63);
  }
  store(wi, word);
  return hi + hb;
}

constexpr uint32_t kPartLast = (uint32_t{1} << IdEliasFano::kPartBits) - 1;

// The number of IDs of ids[k, n) in the part of ids[k].
size_t PartRun(const uint32_t* ids, size_t n, size_t k) {
  const uint32_t part = ids[k] >> IdEliasFano::kPartBits;
  size_t e = k + 1;
  while (e < n && (ids[e] >> IdEliasFano::kPartBits) == part) ++e;
  return e - k;
}

}  // namespace

size_t IdEliasFano::PlainBytes(const uint32_t* ids, size_t n) {
  const unsigned l = Width(n, ids[n - 1]);
  return 1 + LowBytes(n, l) + HighBytes(n, l, ids[n - 1]);
}

IdEliasFano::Part IdEliasFano::PartOf(size_t count) {
  const unsigned l = Width(count, kPartLast);
  const size_t ef = LowBytes(count, l) + HighBytes(count, l, kPartLast);
  return Part{l, std::min(kBitmapBytes, ef), kBitmapBytes < ef};
}

namespace {

// One pass over ids[0, n): whether they ascend (repeats allowed), and the partitioned form's
// bytes (SIZE_MAX when an ID repeats: a bitmap holds an ID once) and parts.
struct Scan {
  bool ascends = true;
  size_t parted = 3 + 8;
  size_t parts = 0;
};
Scan ScanIds(const uint32_t* ids, size_t n) {
  Scan s;
  bool repeat = false;
  for (size_t k = 0; k < n;) {
    const uint32_t part = ids[k] >> IdEliasFano::kPartBits;
    size_t e = k + 1;
    for (; e < n && (ids[e] >> IdEliasFano::kPartBits) == part; ++e) {
      if (ids[e] <= ids[e - 1]) {
        if (ids[e] < ids[e - 1]) {
          s.ascends = false;
          return s;
        }
        repeat = true;
      }
    }
    if (e < n && (ids[e] >> IdEliasFano::kPartBits) < part) {
      s.ascends = false;
      return s;
    }
    s.parted += 4 + IdEliasFano::PartOf(e - k).bytes;
    ++s.parts;
    k = e;
  }
  if (repeat) s.parted = SIZE_MAX;
  return s;
}

}  // namespace

size_t IdEliasFano::PartitionedBytes(const uint32_t* ids, size_t n) {
  const Scan s = ScanIds(ids, n);
  assert(s.ascends);
  return s.parted;
}

size_t IdEliasFano::Bytes(const uint32_t* ids, size_t n) {
  const Scan s = ScanIds(ids, n);
  if (!s.ascends) return 0;
  const size_t plain = PlainBytes(ids, n);
  return s.parted != SIZE_MAX && s.parted + kPartPenalty * s.parts < plain ? s.parted : plain;
}

void IdEliasFano::Write(const uint32_t* ids, size_t n, uint8_t* out) {
  Write(ids, n, Bytes(ids, n), out);
}

void IdEliasFano::Write(const uint32_t* ids, size_t n, size_t bytes, uint8_t* out) {
  assert(n >= kMinIds && bytes != 0 && bytes == Bytes(ids, n));
  // Partitioned exactly when that was chosen: only when it is smaller than the plain form.
  if (bytes != PlainBytes(ids, n)) {
    // The directory first, then each part's payload.
    size_t parts = 0;
    for (size_t k = 0; k < n; k += PartRun(ids, n, k)) ++parts;
    assert(parts <= (size_t{1} << (32 - kPartBits)));
    out[0] = kPartitioned;
    EncodeFixed16(reinterpret_cast<char*>(out + 1), static_cast<uint16_t>(parts));
    uint8_t* dir = out + 3;
    uint8_t* p = dir + 4 * parts;
    for (size_t k = 0; k < n;) {
      const size_t c = PartRun(ids, n, k);
      const uint32_t part = ids[k] >> kPartBits;
      EncodeFixed32(reinterpret_cast<char*>(dir), part << kPartBits | static_cast<uint32_t>(c - 1));
      dir += 4;
      const uint32_t base = part << kPartBits;
      const Part form = PartOf(c);
      if (form.bitmap) {
        std::memset(p, 0, kBitmapBytes);
        for (size_t e = k; e < k + c; ++e) {
          const uint32_t i = ids[e] - base;
          p[i / 8] = static_cast<uint8_t>(p[i / 8] | 1u << (i % 8));
        }
        p += kBitmapBytes;
      } else {
        p = WriteParts(ids + k, c, base, form.l, form.bytes - LowBytes(c, form.l), p);
      }
      k += c;
    }
    std::memset(p, 0, 8);
    assert(static_cast<size_t>(p + 8 - out) == bytes);
    return;
  }
  WritePlain(ids, n, out);
}

void IdEliasFano::WritePlain(const uint32_t* ids, size_t n, uint8_t* out) {
  assert(n >= kMinIds);
  const unsigned l = Width(n, ids[n - 1]);
  out[0] = static_cast<uint8_t>(l);
  WriteParts(ids, n, 0, l, HighBytes(n, l, ids[n - 1]), out + 1);
}

namespace ef_detail {

Cursor::Cursor(const uint8_t* rec, size_t n_ids) {
  Open(rec + 1, rec[0], n_ids);
  assert(n >= IdEliasFano::kMinIds);
}

void Cursor::Open(const uint8_t* lo_parts, unsigned width, size_t n_ids) {
  assert(n_ids >= 1);
  lo = lo_parts;
  hi = lo_parts + IdEliasFano::LowBytes(n_ids, width);
  l = width;
  n = n_ids;
  j = have = given = 0;
  out = 0;
}

PartCursor::PartCursor(const uint8_t* rec, size_t n_ids)
    : dir(rec + 3),
      payload(rec + 3 + 4 * size_t{DecodeFixed16(reinterpret_cast<const char*>(rec + 1))}),
      parts_left(DecodeFixed16(reinterpret_cast<const char*>(rec + 1))),
      n(n_ids) {
  assert(rec[0] == IdEliasFano::kPartitioned);
}

namespace {

// out[k] = src[k] + add, k < m (out and src do not overlap).
inline void AddBase(uint32_t* __restrict out, const uint32_t* __restrict src, size_t m,
                    uint32_t add) {
  for (size_t k = 0; k < m; ++k) out[k] = src[k] + add;
}

}  // namespace

size_t DecodeParts(PartCursor* c, DecodeFn decode, const uint32_t** ids) {
  constexpr size_t kChunk = IdEliasFano::kChunk;
  constexpr size_t kWords = IdEliasFano::kBitmapBytes / 8;
  uint32_t* const buf = c->buf;
  // The last piece handed out from buf: what was decoded past it moves to the front.
  size_t have = c->have - c->given;
  if (c->given != 0) std::memmove(buf, buf + c->given, have * sizeof(uint32_t));
  c->have = have;
  c->given = 0;
  // A whole piece of an Elias-Fano part with nothing waiting: handed out from its buffer.
  if (have == 0 && c->ef_open && c->ef.n - c->ef.out >= kChunk) {
    const size_t m = decode(&c->ef, kChunk);
    assert(m == kChunk);
    uint32_t* const p = c->ef.buf;
    const uint32_t base = c->base;
    for (size_t k = 0; k < m; ++k) p[k] += base;
    if (c->ef.out == c->ef.n) c->ef_open = false;
    c->out += m;
    *ids = p;
    return m;
  }
  while (have < kChunk) {
    if (c->bits != nullptr) {
      // A 64-bit word at a time, its set bits in order (a word adds at most 64).
      const uint8_t* const bits = c->bits;
      size_t w = c->word;
      const uint32_t base = c->base;
      for (; w < kWords && have < kChunk; ++w) {
        uint64_t x = DecodeFixed64(reinterpret_cast<const char*>(bits + 8 * w));
        const uint32_t at = base + static_cast<uint32_t>(64 * w);
        while (x != 0) {
          buf[have++] = at + static_cast<uint32_t>(std::countr_zero(x));
          x &= x - 1;
        }
      }
      c->word = w;
      if (w == kWords) c->bits = nullptr;
    } else if (c->ef_open) {
      const size_t m = decode(&c->ef, kChunk - have);
      AddBase(buf + have, c->ef.buf, m, c->base);
      have += m;
      if (c->ef.out == c->ef.n) c->ef_open = false;
    } else if (c->parts_left > 0) {  // the next part
      const uint32_t w = DecodeFixed32(reinterpret_cast<const char*>(c->dir));
      c->dir += 4;
      --c->parts_left;
      const size_t count = (w & kPartLast) + 1;
      c->base = w & ~kPartLast;
      const IdEliasFano::Part form = IdEliasFano::PartOf(count);
      if (form.bitmap) {
        c->bits = c->payload;
        c->word = 0;
      } else {
        c->ef.Open(c->payload, form.l, count);
        c->ef_open = true;
      }
      c->payload += form.bytes;
    } else {
      break;
    }
  }
  const size_t m = std::min(kChunk, have);
  assert(m > 0 && c->out + m <= c->n);
  c->have = have;
  c->given = m;
  c->out += m;
  *ids = buf;
  return m;
}

namespace {

// The widest low part: n >= kMinIds IDs under 2^32 give floor(log2(2^32 / 64)).
constexpr unsigned kMaxWidth = 26;

// kHighByte[b][t]: the position of the t-th set bit of b less t (0 past its popcount).
struct HighByteTable {
  uint8_t e[256][8];
};
constexpr HighByteTable MakeHighByteTable() {
  HighByteTable t{};
  for (int b = 0; b < 256; ++b) {
    int k = 0;
    for (int p = 0; p < 8; ++p) {
      if ((b >> p) & 1) {
        t.e[b][k] = static_cast<uint8_t>(p - k);
        ++k;
      }
    }
  }
  return t;
}
constexpr HighByteTable kHighByte = MakeHighByteTable();

// ids[k] = ids[k] << L | the low L bits of ID first + k, for k < m (first: a multiple of 8).
template <unsigned L>
void MergeLows(uint32_t* ids, size_t m, const uint8_t* lo, uint64_t first) {
  if constexpr (L != 0) {
    constexpr uint64_t kMask = (uint64_t{1} << L) - 1;
    const char* p = reinterpret_cast<const char*>(lo + first * L / 8);
    size_t k = 0;
    for (; k + 8 <= m; k += 8, p += L) {
#pragma GCC unroll 8
      for (unsigned t = 0; t < 8; ++t) {
        const uint64_t x = (DecodeFixed64(p + t * L / 8) >> (t * L % 8)) & kMask;
        ids[k + t] = (ids[k + t] << L) | static_cast<uint32_t>(x);
      }
    }
    for (unsigned t = 0; k < m; ++k, ++t) {
      const uint64_t x = (DecodeFixed64(p + t * L / 8) >> (t * L % 8)) & kMask;
      ids[k] = (ids[k] << L) | static_cast<uint32_t>(x);
    }
  }
}
using MergeFn = void (*)(uint32_t*, size_t, const uint8_t*, uint64_t);
template <unsigned... Ls>
constexpr std::array<MergeFn, sizeof...(Ls)> MakeMerges(std::integer_sequence<unsigned, Ls...>) {
  return {&MergeLows<Ls>...};
}
constexpr std::array<MergeFn, kMaxWidth + 1> kMergeLows =
    MakeMerges(std::make_integer_sequence<unsigned, kMaxWidth + 1>{});

// The piece decoded: moves the IDs decoded past the last piece to the front (fewer than 8:
// the fill stops at `want` or more, a byte adds at most 8), before a fill.
inline void DropGiven(Cursor* c) {
  // 8 IDs moved whatever the count (the buffer's slack covers them): a fixed-size move.
  std::memmove(c->buf, c->buf + c->given, 8 * sizeof(uint32_t));
  c->have -= c->given;
  c->given = 0;
}

// Hands out buf[0, m) once the fill is done: their low parts merged by `merge`, which takes
// them from a multiple of 8 IDs (a piece that ends elsewhere, asked for by a partitioned
// record's decode, leaves the next one to merge up to that multiple here first).
inline size_t Finish(Cursor* c, MergeFn merge, size_t want) {
  assert(c->given == 0 && c->out + c->have <= c->n);  // the bits past the last ID's are 0
  const size_t m = std::min(want, c->have);
  size_t h = 0;
  if (const size_t r = static_cast<size_t>(c->out % 8); r != 0) {
    h = std::min(m, 8 - r);
    const unsigned l = c->l;
    const uint64_t mask = (uint64_t{1} << l) - 1;
    for (size_t k = 0; k < h; ++k) {
      const uint64_t bit = (c->out + k) * l;
      const uint64_t x =
          (DecodeFixed64(reinterpret_cast<const char*>(c->lo + bit / 8)) >> (bit % 8)) & mask;
      c->buf[k] = (c->buf[k] << l) | static_cast<uint32_t>(x);
    }
  }
  merge(c->buf + h, m - h, c->lo, c->out + h);
  c->given = m;
  c->out += m;
  return m;
}

}  // namespace

size_t DecodePiece(Cursor* c, size_t want) {
  assert(want >= 1 && want <= IdEliasFano::kChunk);
  DropGiven(c);
  const uint8_t* const hi = c->hi;
  uint32_t* const buf = c->buf;
  size_t have = c->have, j = c->j;
  uint64_t i = c->out + have;  // IDs whose high parts are decoded
  while (have < want && i < c->n) {
    const unsigned b = hi[j];
    const uint32_t at = static_cast<uint32_t>(8 * j - i);  // bit 8j's position less rank i
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128();
    const __m128i e = _mm_unpacklo_epi8(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kHighByte.e[b])), z);
    const __m128i base = _mm_set1_epi32(static_cast<int>(at));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + have),
                     _mm_add_epi32(_mm_unpacklo_epi16(e, z), base));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + have + 4),
                     _mm_add_epi32(_mm_unpackhi_epi16(e, z), base));
#else
    for (int t = 0; t < 8; ++t) buf[have + t] = at + kHighByte.e[b][t];
#endif
    const unsigned cnt = static_cast<unsigned>(std::popcount(b));
    have += cnt;
    i += cnt;
    ++j;
  }
  c->have = have;
  c->j = j;
  assert(c->l <= kMaxWidth);
  return Finish(c, kMergeLows[c->l], want);
}

#if defined(STRATA_EF_AVX2)
namespace {

// Eight low parts of width L from L bytes at p: lanes 0-3 from a 16-byte load at p, lanes
// 4-7 from one at p + kHalf (the byte of bit 4L); each lane's 4 bytes from its part's first
// byte by a shuffle, then shifted right by the part's bit offset in that byte (at most 7, and
// 7 + L <= 32 for L <= 25) and masked.
template <unsigned L>
struct Lanes {
  static constexpr unsigned kHalf = 4 * L / 8;
  alignas(32) uint8_t shuffle[32];
  alignas(32) uint32_t shift[8];
};
template <unsigned L>
constexpr Lanes<L> MakeLanes() {
  Lanes<L> x{};
  for (unsigned t = 0; t < 8; ++t) {
    const unsigned first = t * L / 8 - (t >= 4 ? Lanes<L>::kHalf : 0);
    for (unsigned q = 0; q < 4; ++q) x.shuffle[4 * t + q] = static_cast<uint8_t>(first + q);
    x.shift[t] = t * L % 8;
  }
  return x;
}
template <unsigned L>
constexpr Lanes<L> kLanes = MakeLanes<L>();

// As MergeLows. Reads up to 16 - ceil(L / 2) bytes past the eight parts' last byte: within
// the high parts (at least 9 bytes) and the 8 readable bytes after the record.
template <unsigned L>
__attribute__((target("avx2,popcnt"))) void MergeLowsAvx2(uint32_t* ids, size_t m,
                                                          const uint8_t* lo, uint64_t first) {
  if constexpr (L != 0) {
    static_assert(L <= 25);
    constexpr uint64_t kMask = (uint64_t{1} << L) - 1;
    const uint8_t* p = lo + first * L / 8;
    const __m256i shuffle = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLanes<L>.shuffle));
    const __m256i shift = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLanes<L>.shift));
    const __m256i mask = _mm256_set1_epi32(static_cast<int>(kMask));
    size_t k = 0;
    for (; k + 8 <= m; k += 8, p += L) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + Lanes<L>::kHalf));
      const __m256i parts = _mm256_and_si256(
          _mm256_srlv_epi32(
              _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1),
                                  shuffle),
              shift),
          mask);
      __m256i* const at = reinterpret_cast<__m256i*>(ids + k);
      _mm256_storeu_si256(at, _mm256_or_si256(_mm256_slli_epi32(_mm256_loadu_si256(at), L), parts));
    }
    const char* const q = reinterpret_cast<const char*>(p);
    for (unsigned t = 0; k < m; ++k, ++t) {
      const uint64_t x = (DecodeFixed64(q + t * L / 8) >> (t * L % 8)) & kMask;
      ids[k] = (ids[k] << L) | static_cast<uint32_t>(x);
    }
  }
}
template <unsigned... Ls>
constexpr std::array<MergeFn, kMaxWidth + 1> MakeMergesAvx2(
    std::integer_sequence<unsigned, Ls...>) {
  // Width 26 (past a 32-bit lane's reach at bit offset 7) merges by the portable loop.
  return {&MergeLowsAvx2<Ls>..., &MergeLows<kMaxWidth>};
}
constexpr std::array<MergeFn, kMaxWidth + 1> kMergeLowsAvx2 =
    MakeMergesAvx2(std::make_integer_sequence<unsigned, kMaxWidth>{});

}  // namespace

// DecodePiece's loop again, with the AVX2 step: a template shared by the two cannot take the
// step as an inlined AVX2 function, since GCC refuses to inline across targets into the
// template's body (always_inline: "target specific option mismatch"), and a call per byte
// would cost more than the step.
__attribute__((target("avx2,popcnt"))) size_t DecodePieceAvx2(Cursor* c, size_t want) {
  assert(want >= 1 && want <= IdEliasFano::kChunk);
  DropGiven(c);
  const uint8_t* const hi = c->hi;
  uint32_t* const buf = c->buf;
  size_t have = c->have, j = c->j;
  uint64_t i = c->out + have;  // IDs whose high parts are decoded
  while (have < want && i < c->n) {
    const unsigned b = hi[j];
    const uint32_t at = static_cast<uint32_t>(8 * j - i);  // bit 8j's position less rank i
    const __m256i e =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kHighByte.e[b])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(buf + have),
                        _mm256_add_epi32(e, _mm256_set1_epi32(static_cast<int>(at))));
    const unsigned cnt = static_cast<unsigned>(__builtin_popcount(b));
    have += cnt;
    i += cnt;
    ++j;
  }
  c->have = have;
  c->j = j;
  assert(c->l <= kMaxWidth);
  return Finish(c, kMergeLowsAvx2[c->l], want);
}

DecodeFn Avx2Decoder() {
  __builtin_cpu_init();
  const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return has ? &DecodePieceAvx2 : nullptr;
}
#else
size_t DecodePieceAvx2(Cursor*, size_t) {
  assert(false && "no AVX2 decoder on this architecture");
  return 0;
}
DecodeFn Avx2Decoder() { return nullptr; }
#endif

DecodeFn Decoder() {
  static const DecodeFn best = [] {
    const DecodeFn avx2 = Avx2Decoder();
    return avx2 != nullptr ? avx2 : &DecodePiece;
  }();
  return best;
}

}  // namespace ef_detail
}  // namespace strata::analytics
