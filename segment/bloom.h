// Bloom filters over edge keys (src, dst), as stored in segment files.
//
// A filter is a whole number of 64-byte lines. A key's 64-bit hash picks one line with its high
// 32 bits and `probes` bit positions inside that line with its low 32 bits, so a probe touches
// one cache line (a "blocked" bloom filter). The false-positive rate at 10 bits per key is about
// 1%. The hash, the line choice and the bit sequence are part of the file format
// (docs/file-format.md): changing any of them needs a new format version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/types.h"

namespace strata {

inline constexpr size_t kBloomLineBytes = 64;

// XXH3_64bits of the 16 bytes src (little-endian) followed by dst (little-endian).
uint64_t EdgeKeyHash(VertexId src, VertexId dst);

// Number of probes used for a given density (1..12).
int BloomProbesFor(int bits_per_key);

// Number of 64-byte lines of a filter for n keys at the given density (at least 1).
size_t BloomLinesFor(size_t n, int bits_per_key);

// Appends a filter of BloomLinesFor(n, bits_per_key) lines holding the n hashes to *out.
void BuildBloomFilter(const uint64_t* hashes, size_t n, int bits_per_key, int probes,
                      std::string* out);

// False means the key is certainly absent. `bytes` is a positive multiple of kBloomLineBytes.
bool BloomMayContain(const char* filter, size_t bytes, int probes, uint64_t hash);

}  // namespace strata
