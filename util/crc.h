// Checksums for on-disk blocks and records: XXH3 64-bit (Debian's libxxhash).
//
// The name is historical (LevelDB's util/crc32c.h); the function is xxHash, not a CRC. Every
// checksum is seeded with what the bytes are supposed to be (a section kind and a block number),
// so a block that is intact but sits at the wrong place — a misdirected write, a copied
// block — fails its check as surely as a flipped bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xxhash.h>
#if STRATA_XXH3_DISPATCH
#define XXH_DISPATCH_DISABLE_REPLACE  // keep XXH3_64bits_withSeed the plain one (tests compare)
#include <xxh_x86dispatch.h>
#endif

namespace strata {

// The same XXH3 value either way; with STRATA_XXH3_DISPATCH (CMake found it in libxxhash) the
// library picks its AVX2 / AVX-512 code at run time (several times the baseline build's
// throughput: docs/benchmarks.md, "Measurements behind design choices"). Every block a scan
// reads is checked, so this is on the hot path of every streamed pass.
inline uint64_t Checksum64(const void* data, size_t n, uint64_t seed) {
#if STRATA_XXH3_DISPATCH
  return XXH3_64bits_withSeed_dispatch(data, n, seed);
#else
  return XXH3_64bits_withSeed(data, n, seed);
#endif
}

// Seed for block `index` of a stream or section of kind `kind` (kind < 256).
inline constexpr uint64_t ChecksumSeed(uint32_t kind, uint64_t index) {
  return (static_cast<uint64_t>(kind) << 56) ^ index;
}

}  // namespace strata
