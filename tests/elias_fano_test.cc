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

}  // namespace
}  // namespace strata::analytics
