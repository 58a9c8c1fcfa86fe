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

size_t IdEliasFano::Bytes(const uint32_t* ids, size_t n) {
  const unsigned l = Width(n, ids[n - 1]);
  return 1 + LowBytes(n, l) + HighBytes(n, l, ids[n - 1]);
}

void IdEliasFano::Write(const uint32_t* ids, size_t n, uint8_t* out) {
  assert(n >= kMinIds);
  const unsigned l = Width(n, ids[n - 1]);
  out[0] = static_cast<uint8_t>(l);
  uint8_t* p = out + 1;
  // The low parts, 4 bytes at a time: fewer than 32 bits wait before each ID's l (<= 26).
  const uint64_t mask = (uint64_t{1} << l) - 1;
  uint64_t acc = 0;
  unsigned nb = 0;
  for (size_t k = 0; k < n; ++k) {
    acc |= (ids[k] & mask) << nb;
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
  const size_t hb = HighBytes(n, l, ids[n - 1]);
  std::memset(hi, 0, hb);
  auto store = [&](uint64_t word_index, uint64_t word) {
    const size_t at = static_cast<size_t>(8 * word_index);
    char bytes[8];
    EncodeFixed64(bytes, word);
    std::memcpy(hi + at, bytes, std::min<size_t>(8, hb - at));
  };
  uint64_t word = 0, wi = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t at = (uint64_t{ids[k]} >> l) + k;
    if ((at >> 6) != wi) {
      store(wi, word);
      wi = at >> 6;
      word = 0;
    }
    word |= uint64_t{1} << (at & 63);
  }
  store(wi, word);
}

namespace ef_detail {

Cursor::Cursor(const uint8_t* rec, size_t n_ids)
    : lo(rec + 1), hi(rec + 1 + IdEliasFano::LowBytes(n_ids, rec[0])), l(rec[0]), n(n_ids) {
  assert(n >= IdEliasFano::kMinIds);
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
// the fill stops at kChunk or more, a byte adds at most 8), before a fill.
inline void DropGiven(Cursor* c) {
  // 8 IDs moved whatever the count (the buffer's slack covers them): a fixed-size move.
  std::memmove(c->buf, c->buf + c->given, 8 * sizeof(uint32_t));
  c->have -= c->given;
  c->given = 0;
}

// Hands out buf[0, m) once the fill is done: their low parts merged by `merge`.
inline size_t Finish(Cursor* c, MergeFn merge) {
  assert(c->given == 0 && c->out + c->have <= c->n);  // the bits past the last ID's are 0
  const size_t m = std::min(IdEliasFano::kChunk, c->have);
  merge(c->buf, m, c->lo, c->out);
  c->given = m;
  c->out += m;
  return m;
}

}  // namespace

size_t DecodePiece(Cursor* c) {
  DropGiven(c);
  const uint8_t* const hi = c->hi;
  uint32_t* const buf = c->buf;
  size_t have = c->have, j = c->j;
  uint64_t i = c->out + have;  // IDs whose high parts are decoded
  while (have < IdEliasFano::kChunk && i < c->n) {
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
  return Finish(c, kMergeLows[c->l]);
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
__attribute__((target("avx2,popcnt"))) size_t DecodePieceAvx2(Cursor* c) {
  DropGiven(c);
  const uint8_t* const hi = c->hi;
  uint32_t* const buf = c->buf;
  size_t have = c->have, j = c->j;
  uint64_t i = c->out + have;  // IDs whose high parts are decoded
  while (have < IdEliasFano::kChunk && i < c->n) {
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
  return Finish(c, kMergeLowsAvx2[c->l]);
}

DecodeFn Avx2Decoder() {
  __builtin_cpu_init();
  const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return has ? &DecodePieceAvx2 : nullptr;
}
#else
size_t DecodePieceAvx2(Cursor*) {
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
