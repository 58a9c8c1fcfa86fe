#pragma once

// An ascending list of 32-bit IDs as an Elias-Fano record: the format PageRank's list cache
// keeps long lists in past 2^21 vertices (ListCache, "Gap lists"), its encoder and its
// decoder.
//
// Record of n IDs (n >= IdEliasFano::kMinIds), the last one `last`:
//   byte 0      l = floor(log2(U / n)) for U = last + 1 (0 when n >= U); at most 25
//   low parts   each ID's low l bits, ID after ID from bit 0 of byte 1 (ceil(n * l / 8) bytes)
//   high parts  bit (id_i >> l) + i set for the i-th ID, the rest 0
//               (ceil((n + (last >> l) + 1) / 8) bytes, so at least 9)
// n is not stored: the reader knows it (the cache's offsets). Decoding loads 8 and 16 bytes
// at a time, so at least 8 readable bytes must follow a record (the cache's tail).

#include <cstddef>
#include <cstdint>
#include <utility>

namespace strata::analytics {

namespace ef_detail {
struct Cursor;
// Decodes the next piece of up to IdEliasFano::kChunk IDs into c->buf[0, m) and returns m.
using DecodeFn = size_t (*)(Cursor* c);
}  // namespace ef_detail

struct IdEliasFano {
  const uint8_t* rec;  // the record

  // The shortest list a record is made for: its high parts are then at least 9 bytes, which
  // with the 8 readable bytes after a record cover the decoders' loads past the low parts.
  static constexpr size_t kMinIds = 64;
  static constexpr size_t kChunk = 256;

  static unsigned Width(size_t n, uint32_t last);
  static size_t LowBytes(size_t n, unsigned l) { return (n * l + 7) / 8; }
  static size_t HighBytes(size_t n, unsigned l, uint32_t last) {
    return (n + (last >> l) + 1 + 7) / 8;
  }
  // The record's bytes for ids[0, n) (ascending, n >= kMinIds), and the record written at
  // `out`.
  static size_t Bytes(const uint32_t* ids, size_t n);
  static void Write(const uint32_t* ids, size_t n, uint8_t* out);

  // f(ids, m) over the n IDs decoded into a buffer, kChunk at a time (the last piece
  // shorter): the decode runs apart from what f does with the IDs, so f's loads are not held
  // up behind it (PageRank's gathers). The only decoder: every reader of a record goes
  // through it. ForEachChunkWith takes the piece decoder (the tests run each one the machine
  // has); ForEachChunk the fastest the machine has (ef_detail::Decoder).
  template <typename F>
  void ForEachChunk(size_t n, F&& f) const;
  template <typename F>
  void ForEachChunkWith(ef_detail::DecodeFn decode, size_t n, F&& f) const;
};

namespace ef_detail {
// A decode in progress: buf[0, have) holds IDs whose high parts are decoded (the first
// `given` of them handed out in the last piece, with their low parts merged).
struct Cursor {
  Cursor(const uint8_t* rec, size_t n_ids);
  const uint8_t* lo;  // the low parts
  const uint8_t* hi;  // the high parts
  unsigned l;         // the width of a low part
  size_t n;           // IDs in the record
  size_t j = 0;       // the next byte of high parts
  size_t have = 0;
  size_t given = 0;
  uint64_t out = 0;  // IDs handed out (so out - given + have have their high parts decoded)
  // A high-parts byte adds up to 8 IDs (8 written); the fill stops at kChunk or more.
  alignas(64) uint32_t buf[IdEliasFano::kChunk + 16];
};

// Portable: the high parts a byte at a time (a table: each set bit's position less its rank;
// widened and offset with SSE2 where there is SSE2), the low parts merged by a loop made for
// the record's width (constant shifts, eight IDs in l bytes).
size_t DecodePiece(Cursor* c);
// The same with AVX2 (one widening load and store per byte of high parts; eight low parts by
// one shuffle and per-lane shifts). Call only when Avx2Decoder() is not null.
size_t DecodePieceAvx2(Cursor* c);
// &DecodePieceAvx2 when this CPU has AVX2, else null.
DecodeFn Avx2Decoder();
// What ForEachChunk uses: the AVX2 decoder where there is one, else DecodePiece.
DecodeFn Decoder();
}  // namespace ef_detail

template <typename F>
void IdEliasFano::ForEachChunkWith(ef_detail::DecodeFn decode, size_t n, F&& f) const {
  ef_detail::Cursor c(rec, n);
  while (c.out < n) {
    const size_t m = decode(&c);
    f(static_cast<const uint32_t*>(c.buf), m);
  }
}

template <typename F>
void IdEliasFano::ForEachChunk(size_t n, F&& f) const {
  ForEachChunkWith(ef_detail::Decoder(), n, std::forward<F>(f));
}

}  // namespace strata::analytics
