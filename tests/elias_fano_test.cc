// The Elias-Fano record (analytics/elias_fano.h): its size from the format's definition, and
// every decoder this machine has gives back the IDs written, in pieces of kChunk, for every
// width a record can have. Each record sits in an allocation of exactly its bytes and the
// 8 readable bytes the format promises after it, so a decoder that loads further fails under
// ASan (the sanitizer build runs this suite).

#include "analytics/elias_fano.h"

#include "analytics/lane_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <map>
#include <cstdio>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace strata::analytics {
namespace {

// The decoders to check: the portable one, and the AVX2 one where the CPU has it.
std::vector<std::pair<std::string, ef_detail::DecodeFn>> Decoders() {
  std::vector<std::pair<std::string, ef_detail::DecodeFn>> d = {
      {"portable", &ef_detail::DecodePiece}};
  if (ef_detail::Avx2Decoder() != nullptr) d.emplace_back("avx2", ef_detail::Avx2Decoder());
  return d;
}

// n ascending IDs (repeats allowed) below u, the last one u - 1.
std::vector<uint32_t> RandomList(size_t n, uint64_t u, std::mt19937_64& rng) {
  std::vector<uint32_t> ids(n);
  for (uint32_t& x : ids) x = static_cast<uint32_t>(rng() % u);
  ids.back() = static_cast<uint32_t>(u - 1);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The record of `ids`, alone in an allocation of its bytes + 8, decoded by `decode`, checked
// piece by piece.
void ExpectRoundTrip(const std::vector<uint32_t>& ids, ef_detail::DecodeFn decode,
                     const std::string& what) {
  const size_t n = ids.size();
  const size_t bytes = IdEliasFano::Bytes(ids.data(), n);
  std::unique_ptr<uint8_t[]> rec(new uint8_t[bytes + 8]);
  std::fill(rec.get() + bytes, rec.get() + bytes + 8, uint8_t{0xA5});  // not zeros: no help
  IdEliasFano::Write(ids.data(), n, rec.get());
  std::vector<uint32_t> got;
  size_t pieces = 0;
  bool sizes_ok = true;
  IdEliasFano{rec.get()}.ForEachChunkWith(decode, n, [&](const uint32_t* p, size_t m) {
    sizes_ok &= m == IdEliasFano::kChunk || got.size() + m == n;
    got.insert(got.end(), p, p + m);
    ++pieces;
  });
  EXPECT_TRUE(sizes_ok) << what;
  EXPECT_EQ(pieces, (n + IdEliasFano::kChunk - 1) / IdEliasFano::kChunk) << what;
  ASSERT_EQ(got.size(), n) << what;
  for (size_t k = 0; k < n; ++k) {
    ASSERT_EQ(got[k], ids[k]) << what << ": ID " << k;
  }
}

TEST(EliasFano, SizeFollowsTheDefinition) {
  // l = floor(log2(U / n)); ceil(n l / 8) bytes of low parts; ceil((n + (last >> l) + 1) / 8)
  // of high parts; one byte of width.
  std::vector<uint32_t> ids(64);
  for (size_t k = 0; k < 64; ++k) ids[k] = static_cast<uint32_t>(k * 1000);  // U = 63001
  EXPECT_EQ(IdEliasFano::Width(64, 63000), 9u);  // 63001 / 64 = 984.4; 2^9 = 512 <= 984 < 1024
  EXPECT_EQ(IdEliasFano::Bytes(ids.data(), 64), 1u + 72u + (64u + 123u + 1u + 7u) / 8u);
  EXPECT_EQ(IdEliasFano::Width(64, 63), 0u);   // U = n: no low bits
  EXPECT_EQ(IdEliasFano::Width(64, 127), 1u);  // U = 2n
  EXPECT_EQ(IdEliasFano::Width(64, 126), 0u);  // U = 2n - 1
  EXPECT_EQ(IdEliasFano::Width(64, UINT32_MAX), 26u);  // the widest a record can be
  std::vector<uint8_t> rec(IdEliasFano::Bytes(ids.data(), 64) + 8);
  IdEliasFano::Write(ids.data(), 64, rec.data());
  EXPECT_EQ(rec[0], 9u);
  // The high parts: the i-th ID sets bit (id >> 9) + i.
  const uint8_t* hi = rec.data() + 1 + 72;
  for (size_t k = 0; k < 64; ++k) {
    const size_t at = (ids[k] >> 9) + k;
    EXPECT_TRUE(hi[at / 8] >> (at % 8) & 1) << k;
  }
}

TEST(EliasFano, EveryDecoderEveryWidth) {
  std::mt19937_64 rng(7);
  // Lengths around the pieces' edges (kChunk = 256, a byte of high parts adds up to 8) and
  // the shortest record.
  const size_t lengths[] = {64, 65, 71, 255, 256, 257, 263, 511, 513, 1000, 4099};
  for (const auto& [name, decode] : Decoders()) {
    std::vector<int> cases(27, 0);  // by width
    for (unsigned l = 0; l <= 26; ++l) {
      for (size_t n : lengths) {
        // U with floor(log2(U / n)) = l, capped at 2^32; a record of width 26 needs n = 64.
        uint64_t u = (uint64_t{n} << l) + rng() % (uint64_t{n} << l);
        if (u > (uint64_t{1} << 32)) {
          if (l < 26) continue;
          u = uint64_t{1} << 32;
        }
        const std::vector<uint32_t> ids = RandomList(n, u, rng);
        if (IdEliasFano::Width(n, ids.back()) != l) continue;
        const std::string what =
            name + " width " + std::to_string(l) + " n " + std::to_string(n);
        ExpectRoundTrip(ids, decode, what);
        if (::testing::Test::HasFatalFailure()) return;
        ++cases[l];
      }
    }
    for (unsigned l = 0; l <= 26; ++l) EXPECT_GT(cases[l], 0) << name << " width " << l;
  }
}

TEST(EliasFano, DenseRepeatedAndSpreadLists) {
  std::mt19937_64 rng(11);
  for (const auto& [name, decode] : Decoders()) {
    // Every ID equal: each byte of high parts has 8 set bits.
    ExpectRoundTrip(std::vector<uint32_t>(300, 5), decode, name + " repeated");
    // 0..n-1: width 0, the high parts all ones.
    std::vector<uint32_t> dense(777);
    for (size_t k = 0; k < dense.size(); ++k) dense[k] = static_cast<uint32_t>(k);
    ExpectRoundTrip(dense, decode, name + " dense");
    // Long runs of zero bytes in the high parts: clusters far apart.
    std::vector<uint32_t> spread;
    for (uint32_t c = 0; c < 5; ++c) {
      for (uint32_t k = 0; k < 70; ++k) spread.push_back(c * 50000000u + k);
    }
    ExpectRoundTrip(spread, decode, name + " clusters");
    // The widest: 64 IDs across the whole 32-bit range.
    ExpectRoundTrip(RandomList(64, uint64_t{1} << 32, rng), decode, name + " width 26");
  }
}

// The partitioned form, from its definition: parts of 2^18 IDs; a part of c IDs takes the
// smaller of a 32-KiB bitmap and an Elias-Fano payload for U = 2^18 (l the largest width with
// c * 2^l <= 2^18, ceil(c l / 8) bytes of low parts, ceil((c + ((2^18 - 1) >> l) + 1) / 8) of
// high parts), plus a 4-byte directory word; the record adds 3 bytes of head and 8 of padding.
size_t PartBytesByDefinition(size_t c) {
  unsigned l = 0;
  while (c * (uint64_t{2} << l) <= (uint64_t{1} << 18)) ++l;
  const size_t ef = (c * l + 7) / 8 + (c + (((uint64_t{1} << 18) - 1) >> l) + 1 + 7) / 8;
  return std::min<size_t>(32768, ef);
}
size_t PartitionedBytesByDefinition(const std::vector<uint32_t>& ids, size_t* n_parts = nullptr) {
  std::map<uint32_t, size_t> parts;
  for (uint32_t id : ids) ++parts[id >> 18];
  size_t bytes = 3 + 8;
  for (const auto& [part, c] : parts) bytes += 4 + PartBytesByDefinition(c);
  if (n_parts != nullptr) *n_parts = parts.size();
  return bytes;
}

// Lists made to take the partitioned form: a dense stretch (a bitmap part) beside sparse ones
// (Elias-Fano parts, down to one ID), a whole part, the top part of the 32-bit range, and
// pieces that cross parts. Each is partitioned (byte 0), sized by the definition, smaller than
// its plain form, and read back whole by every decoder in pieces of kChunk.
TEST(EliasFano, PartitionedRecordsRoundTrip) {
  std::mt19937_64 rng(23);
  auto sparse = [&](uint64_t from, uint64_t to, size_t n, std::vector<uint32_t>* out) {
    for (size_t k = 0; k < n; ++k) out->push_back(static_cast<uint32_t>(from + rng() % (to - from)));
  };
  auto dense = [&](uint64_t from, uint64_t to, unsigned one_in, std::vector<uint32_t>* out) {
    for (uint64_t id = from; id < to; ++id) {
      if (rng() % one_in == 0) out->push_back(static_cast<uint32_t>(id));
    }
  };
  auto finish = [](std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  std::vector<std::pair<std::string, std::vector<uint32_t>>> lists;
  {  // the hot prefix: half of part 0, then 300 IDs over 16 parts
    std::vector<uint32_t> v;
    dense(0, 1u << 18, 2, &v);
    sparse(1u << 18, 1u << 22, 300, &v);
    lists.emplace_back("hot prefix", finish(v));
  }
  {  // two dense parts with empty parts between, and parts of one ID each
    std::vector<uint32_t> v;
    dense(3u << 18, 4u << 18, 3, &v);
    v.push_back(5u << 18);
    v.push_back((7u << 18) - 1);
    dense(9u << 18, (9u << 18) + 200000, 2, &v);
    lists.emplace_back("dense parts apart", finish(v));
  }
  {  // a whole part: 2^18 IDs, its count - 1 filling the directory word's low bits
    std::vector<uint32_t> v;
    for (uint32_t id = 0; id < (1u << 18); ++id) v.push_back((2u << 18) + id);
    sparse(0, 2u << 18, 100, &v);
    lists.emplace_back("whole part", finish(v));
  }
  {  // the top part (index 2^14 - 1), dense up to UINT32_MAX
    std::vector<uint32_t> v;
    dense(uint64_t{UINT32_MAX} - 150000, uint64_t{UINT32_MAX} + 1, 2, &v);
    v.push_back(UINT32_MAX);
    sparse(0, uint64_t{1} << 32, 80, &v);
    lists.emplace_back("top part", finish(v));
  }
  {  // many dense parts, so that pieces of 256 straddle parts of every kind
    std::vector<uint32_t> v;
    for (uint32_t part = 0; part < 12; ++part) {
      if (part % 3 == 2) {
        sparse(uint64_t{part} << 18, uint64_t{part + 1} << 18, 1 + rng() % 300, &v);
      } else {
        dense(uint64_t{part} << 18, uint64_t{part} << 18 | 70001, 1 + part % 2, &v);
      }
    }
    lists.emplace_back("mixed parts", finish(v));
  }
  {  // an Elias-Fano part of every width a part can have (2 to 18: past 2^16 IDs, width 1 or
     // 0, a bitmap is fewer bytes), each after a part of 37 IDs, behind a bitmap part of
     // 100,000: pieces start and end inside parts at every offset modulo 8, where a part's low
     // parts are read from
    EXPECT_FALSE(IdEliasFano::PartOf(size_t{1} << 16).bitmap);
    EXPECT_TRUE(IdEliasFano::PartOf((size_t{1} << 16) + 1).bitmap);
    std::vector<uint32_t> v;
    dense(0, 1u << 18, 2, &v);
    v.resize(100000);
    uint32_t part = 1;
    for (unsigned l = 2; l <= 18; ++l) {
      const size_t c = size_t{1} << (18 - l);
      EXPECT_EQ(IdEliasFano::PartOf(c).l, l);
      EXPECT_FALSE(IdEliasFano::PartOf(c).bitmap) << l;
      EXPECT_EQ(IdEliasFano::PartOf(c).bytes, PartBytesByDefinition(c)) << l;
      for (uint32_t k = 0; k < c; ++k) v.push_back((part << 18) + (k << l) + static_cast<uint32_t>(rng() % (1u << l)));
      ++part;
      for (uint32_t k = 0; k < 37; ++k) v.push_back((part << 18) + 7001 * k);
      ++part;
    }
    lists.emplace_back("every width", finish(v));
  }
  for (const auto& [what, ids] : lists) {
    const size_t n = ids.size();
    const size_t part_bytes = PartitionedBytesByDefinition(ids);
    EXPECT_EQ(IdEliasFano::PartitionedBytes(ids.data(), n), part_bytes) << what;
    EXPECT_LT(part_bytes, IdEliasFano::PlainBytes(ids.data(), n)) << what;
    EXPECT_EQ(IdEliasFano::Bytes(ids.data(), n), part_bytes) << what;
    std::vector<uint8_t> rec(part_bytes + 8);
    IdEliasFano::Write(ids.data(), n, rec.data());
    EXPECT_TRUE(IdEliasFano{rec.data()}.partitioned()) << what;
    for (const auto& [name, decode] : Decoders()) {
      ExpectRoundTrip(ids, decode, name + " " + what);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The partitioned record's bytes where the definition places them: the part count, the
// directory words, a bitmap part's bits and an Elias-Fano part's payload after it.
TEST(EliasFano, PartitionedLayoutFollowsTheDefinition) {
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < 120000; ++id) ids.push_back(2 * id + 1);  // part 0: a bitmap
  const uint32_t far[] = {(5u << 18) + 3, (5u << 18) + 77, (6u << 18) + 1000};
  for (uint32_t id : far) ids.push_back(id);
  const size_t n = ids.size();
  ASSERT_TRUE(IdEliasFano::PartOf(120000).bitmap);
  ASSERT_FALSE(IdEliasFano::PartOf(2).bitmap);
  std::vector<uint8_t> rec(IdEliasFano::Bytes(ids.data(), n) + 8);
  ASSERT_EQ(rec.size(), 3 + 3 * 4 + 32768 + PartBytesByDefinition(2) + PartBytesByDefinition(1) + 8 + 8);
  IdEliasFano::Write(ids.data(), n, rec.data());
  EXPECT_EQ(rec[0], 0x80);
  EXPECT_EQ(rec[1] | rec[2] << 8, 3);
  auto word = [&](size_t at) {
    return uint32_t{rec[at]} | uint32_t{rec[at + 1]} << 8 | uint32_t{rec[at + 2]} << 16 |
           uint32_t{rec[at + 3]} << 24;
  };
  EXPECT_EQ(word(3), 119999u);                // part 0, 120,000 IDs
  EXPECT_EQ(word(7), (5u << 18) | 1u);        // part 5, 2 IDs
  EXPECT_EQ(word(11), (6u << 18) | 0u);       // part 6, 1 ID
  const uint8_t* bits = rec.data() + 15;
  for (uint32_t i = 0; i < 240000; ++i) {
    ASSERT_EQ(bits[i / 8] >> (i % 8) & 1, i % 2) << i;
  }
  for (uint32_t i = 240000; i < (1u << 18); ++i) ASSERT_EQ(bits[i / 8] >> (i % 8) & 1, 0) << i;
  // Part 5: l = 17 (2 * 2^17 <= 2^18), low parts 3 and 77 in 17 bits each, then the high
  // parts: bits (3 >> 17) + 0 = 0 and (77 >> 17) + 1 = 1.
  const uint8_t* ef = bits + 32768;
  const uint64_t lows = uint64_t{ef[0]} | uint64_t{ef[1]} << 8 | uint64_t{ef[2]} << 16 |
                        uint64_t{ef[3]} << 24 | uint64_t{ef[4]} << 32;
  EXPECT_EQ(lows & 0x1FFFF, 3u);
  EXPECT_EQ(lows >> 17 & 0x1FFFF, 77u);
  EXPECT_EQ(ef[5], 0x03);
  // The record's last 8 bytes are zero.
  for (size_t k = rec.size() - 16; k < rec.size() - 8; ++k) EXPECT_EQ(rec[k], 0) << k;
}

// The choice: partitioned exactly when it is more than kPartPenalty (16) bytes a part smaller
// than the plain form (ceil(n l / 8) + ceil((n + (last >> l) + 1) / 8) + 1 bytes), over lists
// skewed to low IDs by varied degrees, among them lists partitioned, lists plain though
// partitioning is smaller, and lists where it is larger; each record read back.
TEST(EliasFano, PartitionedOnlyWhenItSavesItsPenalty) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int parted = 0, smaller_but_plain = 0, larger = 0;
  for (int t = 0; t < 400; ++t) {
    const size_t n = 64 + rng() % 5000;
    const double skew = 1.0 + 4.0 * unit(rng);
    std::vector<uint32_t> ids;
    for (size_t k = 0; k < n; ++k) {
      ids.push_back(static_cast<uint32_t>((1u << 22) * std::pow(unit(rng), skew)));
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.size() < IdEliasFano::kMinIds) continue;
    const size_t m = ids.size();
    unsigned l = 0;
    while (m * (uint64_t{2} << l) <= uint64_t{ids.back()} + 1) ++l;
    const size_t plain = 1 + (m * l + 7) / 8 + (m + (ids.back() >> l) + 1 + 7) / 8;
    size_t parts;
    const size_t part = PartitionedBytesByDefinition(ids, &parts);
    const bool want = part + 16 * parts < plain;
    parted += want;
    smaller_but_plain += !want && part < plain;
    larger += part >= plain;
    ASSERT_EQ(IdEliasFano::Bytes(ids.data(), m), want ? part : plain) << t;
    std::vector<uint8_t> rec(IdEliasFano::Bytes(ids.data(), m) + 8);
    IdEliasFano::Write(ids.data(), m, rec.data());
    ASSERT_EQ(IdEliasFano{rec.data()}.partitioned(), want) << t;
    ExpectRoundTrip(ids, ef_detail::Decoder(), "skewed " + std::to_string(t));
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(parted, 0);
  EXPECT_GT(smaller_but_plain, 0);
  EXPECT_GT(larger, 0);
}

// What the chooser keeps plain: IDs spread evenly (a part costs its directory word and nothing
// is dense) and any list with a repeated ID (a bitmap cannot hold it twice); and what it
// refuses: a list with an ID below the one before it, inside a part or across parts, is 0.
TEST(EliasFano, EvenAndRepeatedListsStayPlain) {
  std::mt19937_64 rng(5);
  for (size_t n : {64, 1000, 100000}) {
    std::vector<uint32_t> ids = RandomList(n, uint64_t{1} << 22, rng);
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.size() < IdEliasFano::kMinIds) continue;
    EXPECT_EQ(IdEliasFano::Bytes(ids.data(), ids.size()),
              IdEliasFano::PlainBytes(ids.data(), ids.size())) << n;
    std::vector<uint8_t> rec(IdEliasFano::Bytes(ids.data(), ids.size()) + 8);
    IdEliasFano::Write(ids.data(), ids.size(), rec.data());
    EXPECT_FALSE(IdEliasFano{rec.data()}.partitioned()) << n;
  }
  // Dense enough for a bitmap, but with one ID twice.
  std::vector<uint32_t> twice;
  for (uint32_t id = 0; id < 100000; ++id) twice.push_back(id);
  twice.push_back(99999);
  EXPECT_EQ(IdEliasFano::PartitionedBytes(twice.data(), twice.size()), SIZE_MAX);
  for (const auto& [name, decode] : Decoders()) ExpectRoundTrip(twice, decode, name + " twice");
  // Down a step: the last ID below the one before, in the same part and in an earlier part.
  std::vector<uint32_t> down = RandomList(500, uint64_t{1} << 22, rng);
  ASSERT_NE(IdEliasFano::Bytes(down.data(), down.size()), 0u);
  down.back() = down[down.size() - 2] - 1;
  EXPECT_EQ(IdEliasFano::Bytes(down.data(), down.size()), 0u);
  down.back() = 5;
  EXPECT_EQ(IdEliasFano::Bytes(down.data(), down.size()), 0u);
  // A repeat before a step down still refuses the list.
  twice.push_back(3);
  EXPECT_EQ(IdEliasFano::Bytes(twice.data(), twice.size()), 0u);
}

TEST(EliasFano, DefaultDecoderIsTheFastestPresent) {
  // ForEachChunk takes AVX2 where the CPU has it; the choice is made once.
  const ef_detail::DecodeFn want =
      ef_detail::Avx2Decoder() != nullptr ? ef_detail::Avx2Decoder() : &ef_detail::DecodePiece;
  EXPECT_EQ(ef_detail::Decoder(), want);
}

// Figures, not a check (run with --gtest_also_run_disabled_tests; docs/benchmarks.md, "Issue
// 28: an AVX2 Elias-Fano decoder"): about 40 M IDs in lists of 64-16,384 random IDs under
// 2^22; the encoder's ns an ID; each decoder's, decoding alone, and decoding then gathering
// and summing ranks as pull PageRank does (LaneSum over each decoded piece); the
// same gathers over the lists as plain 32-bit IDs. Five rounds: the machine's speed drifts.
TEST(EliasFanoPerf, DISABLED_DecodeFigures) {
  const uint32_t kBound = 1u << 22;
  std::mt19937_64 rng(1);
  std::vector<std::vector<uint32_t>> lists;
  std::vector<uint8_t> recs;
  std::vector<size_t> off;
  size_t total = 0;
  const size_t degrees[] = {64, 100, 256, 300, 512, 600, 2048, 2500, 8192, 16384};
  while (total < 40000000) {
    std::vector<uint32_t> v = RandomList(degrees[rng() % 10], kBound, rng);
    off.push_back(recs.size());
    recs.resize(recs.size() + IdEliasFano::Bytes(v.data(), v.size()));
    IdEliasFano::Write(v.data(), v.size(), recs.data() + off.back());
    total += v.size();
    lists.push_back(std::move(v));
  }
  recs.resize(recs.size() + 8);
  std::vector<float> x(kBound, 1.0f);
  using Clock = std::chrono::steady_clock;
  auto ns_per_id = [&](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count() / static_cast<double>(total);
  };
  printf("%zu IDs in %zu lists, %.2f bytes an ID\n", total, lists.size(),
         static_cast<double>(recs.size()) / static_cast<double>(total));
  for (int round = 0; round < 5; ++round) {
    {
      const Clock::time_point t0 = Clock::now();
      for (size_t i = 0; i < lists.size(); ++i) {
        IdEliasFano::Write(lists[i].data(), lists[i].size(), recs.data() + off[i]);
      }
      printf("round %d encode %.2f ns/ID\n", round, ns_per_id(t0, Clock::now()));
    }
    for (const auto& [name, decode] : Decoders()) {
      uint64_t check = 0;
      const Clock::time_point t0 = Clock::now();
      for (size_t i = 0; i < lists.size(); ++i) {
        IdEliasFano{recs.data() + off[i]}.ForEachChunkWith(
            decode, lists[i].size(), [&](const uint32_t* ids, size_t m) {
              for (size_t k = 0; k < m; ++k) check += ids[k];
            });
      }
      const Clock::time_point t1 = Clock::now();
      double sum = 0;
      for (size_t i = 0; i < lists.size(); ++i) {
        LaneSum ls;
        IdEliasFano{recs.data() + off[i]}.ForEachChunkWith(
            decode, lists[i].size(),
            [&](const uint32_t* ids, size_t m) { ls.Add(x.data(), ids, m); });
        sum += ls.Take();
      }
      const Clock::time_point t2 = Clock::now();
      printf("round %d %-8s decode %.2f ns/ID, decode + gather %.2f ns/ID [%llu %.0f]\n", round,
             name.c_str(), ns_per_id(t0, t1), ns_per_id(t1, t2),
             static_cast<unsigned long long>(check & 0xFF), sum);
    }
    double sum = 0;
    const Clock::time_point t0 = Clock::now();
    for (const std::vector<uint32_t>& v : lists) {
      LaneSum ls;
      ls.Add(x.data(), v.data(), v.size());
      sum += ls.Take();
    }
    printf("round %d plain IDs gather %.2f ns/ID [%.0f]\n", round, ns_per_id(t0, Clock::now()),
           sum);
  }
}

// Figures, not a check (run with --gtest_also_run_disabled_tests): lists skewed to low IDs as
// the list cache's renumbered lists are (ID = 2^22 u^4 for uniform u, deduplicated; lengths
// 64 to 200,000), each as a plain record and in the form Write picks; bytes an ID, decoding
// alone and decoding then gathering (as DecodeFigures).
TEST(EliasFanoPerf, DISABLED_PartitionedFigures) {
  const uint32_t kBound = 1u << 22;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<uint32_t>> lists;
  size_t total = 0;
  const size_t degrees[] = {64, 100, 256, 600, 2048, 8192, 16384, 50000, 200000};
  while (total < 40000000) {
    std::vector<uint32_t> v(degrees[rng() % 9]);
    for (uint32_t& x : v) {
      const double u = unit(rng);
      x = static_cast<uint32_t>(kBound * u * u * u * u);
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.size() < IdEliasFano::kMinIds) continue;
    total += v.size();
    lists.push_back(std::move(v));
  }
  std::vector<float> x(kBound, 1.0f);
  using Clock = std::chrono::steady_clock;
  auto ns_per_id = [&](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count() / static_cast<double>(total);
  };
  std::vector<uint8_t> recs[2];
  std::vector<size_t> off[2];
  for (int form = 0; form < 2; ++form) {
    size_t parted = 0;
    for (const std::vector<uint32_t>& v : lists) {
      off[form].push_back(recs[form].size());
      const size_t b = form == 0 ? IdEliasFano::PlainBytes(v.data(), v.size())
                                 : IdEliasFano::Bytes(v.data(), v.size());
      recs[form].resize(recs[form].size() + b);
      uint8_t* const at = recs[form].data() + off[form].back();
      if (form == 0) {
        IdEliasFano::WritePlain(v.data(), v.size(), at);
      } else {
        IdEliasFano::Write(v.data(), v.size(), at);
      }
      parted += IdEliasFano{at}.partitioned();
    }
    recs[form].resize(recs[form].size() + 8);
    printf("%s: %zu IDs in %zu lists (%zu partitioned), %.3f bytes an ID\n",
           form == 0 ? "plain" : "chosen", total, lists.size(), parted,
           static_cast<double>(recs[form].size()) / static_cast<double>(total));
  }
  for (int round = 0; round < 4; ++round) {
    for (int form = 0; form < 2; ++form) {
      const uint8_t* const base = recs[form].data();
      uint64_t check = 0;
      const Clock::time_point t0 = Clock::now();
      for (size_t i = 0; i < lists.size(); ++i) {
        IdEliasFano{base + off[form][i]}.ForEachChunk(
            lists[i].size(), [&](const uint32_t* ids, size_t m) {
              for (size_t k = 0; k < m; ++k) check += ids[k];
            });
      }
      const Clock::time_point t1 = Clock::now();
      double sum = 0;
      for (size_t i = 0; i < lists.size(); ++i) {
        LaneSum ls;
        IdEliasFano{base + off[form][i]}.ForEachChunk(
            lists[i].size(), [&](const uint32_t* ids, size_t m) { ls.Add(x.data(), ids, m); });
        sum += ls.Take();
      }
      const Clock::time_point t2 = Clock::now();
      printf("  round %d %-6s decode %.2f ns/ID, decode + gather %.2f ns/ID [%llu %.0f]\n",
             round, form == 0 ? "plain" : "chosen", ns_per_id(t0, t1), ns_per_id(t1, t2),
             static_cast<unsigned long long>(check & 0xFF), sum);
    }
  }
}

}  // namespace
}  // namespace strata::analytics
