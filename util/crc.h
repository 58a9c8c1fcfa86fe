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

namespace strata {

inline uint64_t Checksum64(const void* data, size_t n, uint64_t seed) {
  return XXH3_64bits_withSeed(data, n, seed);
}

// Seed for block `index` of a stream or section of kind `kind` (kind < 256).
inline constexpr uint64_t ChecksumSeed(uint32_t kind, uint64_t index) {
  return (static_cast<uint64_t>(kind) << 56) ^ index;
}

}  // namespace strata
