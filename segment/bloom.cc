#include "segment/bloom.h"

// The header's inline XXH3: EdgeKeyHash runs once per edge written (flush and every
// compaction). Through the shared library it was 3.2% of an ingest_large profile, inline 1.3%
// (docs/benchmarks.md). Same function, same values as libxxhash's XXH3_64bits
// (tests/segment_test.cc checks).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "util/coding.h"

namespace strata {

namespace {

// Successive bit positions inside a line come from the top 9 bits of h * kMul^i (mod 2^32).
constexpr uint32_t kMul = 0x9E3779B9u;

inline size_t LineOf(uint64_t hash, size_t lines) {
  return static_cast<size_t>(((hash >> 32) * static_cast<uint64_t>(lines)) >> 32);
}

}  // namespace

uint64_t EdgeKeyHash(VertexId src, VertexId dst) {
  char key[16];
  EncodeFixed64(key, src);
  EncodeFixed64(key + 8, dst);
  return XXH3_64bits(key, sizeof(key));
}

int BloomProbesFor(int bits_per_key) {
  int k = static_cast<int>(std::lround(bits_per_key * 0.69));
  return std::clamp(k, 1, 12);
}

size_t BloomLinesFor(size_t n, int bits_per_key) {
  size_t bits = n * static_cast<size_t>(std::max(bits_per_key, 1));
  return std::max<size_t>(1, (bits + kBloomLineBytes * 8 - 1) / (kBloomLineBytes * 8));
}

void BuildBloomFilter(const uint64_t* hashes, size_t n, int bits_per_key, int probes,
                      std::string* out) {
  const size_t lines = BloomLinesFor(n, bits_per_key);
  const size_t base = out->size();
  out->resize(base + lines * kBloomLineBytes, '\0');
  auto* data = reinterpret_cast<uint8_t*>(out->data() + base);
  for (size_t i = 0; i < n; i++) {
    uint8_t* line = data + LineOf(hashes[i], lines) * kBloomLineBytes;
    uint32_t h = static_cast<uint32_t>(hashes[i]);
    for (int p = 0; p < probes; p++) {
      uint32_t bit = h >> 23;  // 0..511
      line[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
      h *= kMul;
    }
  }
}

bool BloomMayContain(const char* filter, size_t bytes, int probes, uint64_t hash) {
  const size_t lines = bytes / kBloomLineBytes;
  if (lines == 0) return true;
  const auto* line =
      reinterpret_cast<const uint8_t*>(filter) + LineOf(hash, lines) * kBloomLineBytes;
  uint32_t h = static_cast<uint32_t>(hash);
  for (int p = 0; p < probes; p++) {
    uint32_t bit = h >> 23;
    if ((line[bit >> 3] & (1u << (bit & 7))) == 0) return false;
    h *= kMul;
  }
  return true;
}

}  // namespace strata
