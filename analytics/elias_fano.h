#pragma once

// An ascending list of 32-bit IDs as an Elias-Fano record: the format PageRank's list cache
// keeps long lists in past 2^21 vertices (ListCache, "Gap lists"), its encoder and its
// decoder. A record takes one of two forms (Write picks it: Bytes says how):
//
// Plain record of n IDs (n >= IdEliasFano::kMinIds), the last one `last`:
//   byte 0      l = floor(log2(U / n)) for U = last + 1 (0 when n >= U); at most 26
//   low parts   each ID's low l bits, ID after ID from bit 0 of byte 1 (ceil(n * l / 8) bytes)
//   high parts  bit (id_i >> l) + i set for the i-th ID, the rest 0
//               (ceil((n + (last >> l) + 1) / 8) bytes, so at least 9)
//
// Partitioned record (after Ottaviano and Venturini's partitioned Elias-Fano): the ID space
// cut into parts of 2^kPartBits IDs, each part the list holds IDs of coded by itself, so that
// a list whose IDs crowd into some stretches (the cache's renumbered lists crowd into the hot
// prefix) pays each part's own density: 2 + floor(log2(2^kPartBits / count)) bits an ID, or
// a bit an ID of the part as a bitmap where that is fewer:
//   byte 0      kPartitioned (0x80; a plain record's byte 0 is at most 26)
//   bytes 1-2   k, the number of parts holding IDs (little-endian; at most 2^14)
//   directory   k little-endian 32-bit words, parts ascending: part index << kPartBits |
//               (count - 1), count the IDs in the part (1 to 2^kPartBits)
//   payloads    each part's in directory order, of its local IDs (ID - index << kPartBits):
//               a bitmap of 2^kPartBits bits (local ID i: bit i % 8 of byte i / 8) when that is
//               fewer bytes than the Elias-Fano payload, else the Elias-Fano payload: low parts
//               and high parts as above for U = 2^kPartBits (l = Width(count, 2^kPartBits - 1),
//               no width byte: the count gives it). PartOf(count) says which and how long.
//   padding     8 zero bytes (so each part's payload has 8 readable bytes after it)
//
// n is not stored: the reader knows it (the cache's offsets). Decoding loads 8 and 16 bytes
// at a time, so at least 8 readable bytes must follow a record (the cache's tail).

#include <cstddef>
#include <cstdint>
#include <utility>

namespace strata::analytics {

namespace ef_detail {
struct Cursor;
struct PartCursor;
// Decodes the next piece of up to `want` (1 to IdEliasFano::kChunk) IDs into c->buf[0, m)
// and returns m: `want` of them while the record has that many left.
using DecodeFn = size_t (*)(Cursor* c, size_t want);
}  // namespace ef_detail

struct IdEliasFano {
  const uint8_t* rec;  // the record

  // The shortest list a record is made for: its high parts are then at least 9 bytes, which
  // with the 8 readable bytes after a record cover the decoders' loads past the low parts.
  static constexpr size_t kMinIds = 64;
  static constexpr size_t kChunk = 256;
  // The partitioned form: parts of 2^kPartBits IDs, byte 0 kPartitioned.
  static constexpr unsigned kPartBits = 18;
  static constexpr uint8_t kPartitioned = 0x80;
  static constexpr size_t kBitmapBytes = (size_t{1} << kPartBits) / 8;

  static unsigned Width(size_t n, uint32_t last);
  static size_t LowBytes(size_t n, unsigned l) { return (n * l + 7) / 8; }
  static size_t HighBytes(size_t n, unsigned l, uint32_t last) {
    return (n + (last >> l) + 1 + 7) / 8;
  }
  // The record's bytes for ids[0, n) (n >= kMinIds), in one pass over them: 0 when an ID is
  // below the one before it (no record holds such a list); else the partitioned form's when
  // that is more than kPartPenalty bytes a part smaller than the plain form's, else the plain
  // form's (also when an ID repeats: PartitionedBytes is then SIZE_MAX). Each part costs the
  // decode an open and a call: a first build that partitioned whenever smaller (and copied
  // its IDs more) took PageRank's iterations at scale 22 to 2.79-3.63 s against 2.18-2.70
  // (docs/benchmarks.md, "Issue 28: long lists as partitioned Elias-Fano records").
  static constexpr size_t kPartPenalty = 16;
  static size_t Bytes(const uint32_t* ids, size_t n);
  // The record written at `out`, in the form Bytes chose (ids ascending).
  static void Write(const uint32_t* ids, size_t n, uint8_t* out);
  // The same, given bytes == Bytes(ids, n) (the form follows from it: no second choice).
  static void Write(const uint32_t* ids, size_t n, size_t bytes, uint8_t* out);
  // Each form's bytes (ids ascending); the plain form written whatever its size.
  static size_t PlainBytes(const uint32_t* ids, size_t n);
  static void WritePlain(const uint32_t* ids, size_t n, uint8_t* out);
  static size_t PartitionedBytes(const uint32_t* ids, size_t n);
  // A part of `count` IDs: its Elias-Fano width l = Width(count, 2^kPartBits - 1), its
  // payload's bytes, and whether that payload is a bitmap (fewer bytes than the sequence).
  struct Part {
    unsigned l;
    size_t bytes;
    bool bitmap;
  };
  static Part PartOf(size_t count);
  bool partitioned() const { return rec[0] == kPartitioned; }

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
  Cursor() = default;
  // A plain record's IDs.
  Cursor(const uint8_t* rec, size_t n_ids);
  // Starts over on n_ids (at least 1) IDs whose l-bit low parts start at lo_parts, their
  // high parts right after.
  void Open(const uint8_t* lo_parts, unsigned width, size_t n_ids);
  const uint8_t* lo = nullptr;  // the low parts
  const uint8_t* hi = nullptr;  // the high parts
  unsigned l = 0;               // the width of a low part
  size_t n = 0;                 // IDs in the record
  size_t j = 0;       // the next byte of high parts
  size_t have = 0;
  size_t given = 0;
  uint64_t out = 0;  // IDs handed out (so out - given + have have their high parts decoded)
  // A high-parts byte adds up to 8 IDs (8 written); the fill stops at `want` or more, so
  // fewer than 8 are left past a piece.
  alignas(64) uint32_t buf[IdEliasFano::kChunk + 16];
};

// Portable: the high parts a byte at a time (a table: each set bit's position less its rank;
// widened and offset with SSE2 where there is SSE2), the low parts merged by a loop made for
// the record's width (constant shifts, eight IDs in l bytes).
size_t DecodePiece(Cursor* c, size_t want);
// The same with AVX2 (one widening load and store per byte of high parts; eight low parts by
// one shuffle and per-lane shifts). Call only when Avx2Decoder() is not null.
size_t DecodePieceAvx2(Cursor* c, size_t want);

// A partitioned record's decode in progress: buf[given, have) holds IDs not yet handed out.
struct PartCursor {
  PartCursor(const uint8_t* rec, size_t n_ids);
  const uint8_t* dir;      // the next part's directory word
  const uint8_t* payload;  // the next part's payload
  size_t parts_left;       // parts not yet opened
  size_t n;                // IDs in the record
  uint64_t out = 0;        // IDs handed out
  size_t have = 0;
  size_t given = 0;
  // The open part: a bitmap's next word (bits != null), or an Elias-Fano payload's cursor.
  uint32_t base = 0;  // its first ID
  const uint8_t* bits = nullptr;
  size_t word = 0;
  bool ef_open = false;
  Cursor ef;
  // A fill stops at kChunk or more: an Elias-Fano piece adds at most what the piece lacks, a
  // bitmap's word 64.
  alignas(64) uint32_t buf[IdEliasFano::kChunk + 64];
};
// Decodes the next piece of a partitioned record, m == kChunk IDs but for the last piece, and
// returns m with *ids pointing at them: an Elias-Fano part's own buffer when a whole piece of
// that part is next, else c->buf, filled to the piece's end and no further (an Elias-Fano
// part's decode asked for what the piece lacks, a bitmap's a word at a time), so the next
// piece starts with at most a word's IDs to move; its Elias-Fano parts by `decode`.
size_t DecodeParts(PartCursor* c, DecodeFn decode, const uint32_t** ids);

// &DecodePieceAvx2 when this CPU has AVX2, else null.
DecodeFn Avx2Decoder();
// What ForEachChunk uses: the AVX2 decoder where there is one, else DecodePiece.
DecodeFn Decoder();
}  // namespace ef_detail

template <typename F>
void IdEliasFano::ForEachChunkWith(ef_detail::DecodeFn decode, size_t n, F&& f) const {
  if (partitioned()) {
    ef_detail::PartCursor c(rec, n);
    while (c.out < n) {
      const uint32_t* ids;
      const size_t m = ef_detail::DecodeParts(&c, decode, &ids);
      f(ids, m);
    }
    return;
  }
  ef_detail::Cursor c(rec, n);
  while (c.out < n) {
    const size_t m = decode(&c, kChunk);
    f(static_cast<const uint32_t*>(c.buf), m);
  }
}

template <typename F>
void IdEliasFano::ForEachChunk(size_t n, F&& f) const {
  ForEachChunkWith(ef_detail::Decoder(), n, std::forward<F>(f));
}

}  // namespace strata::analytics
