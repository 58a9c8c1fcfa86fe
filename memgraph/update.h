// The vocabulary of updates applied to a neighbor container (C-ART or clustered index).
#pragma once

#include <cstdint>

namespace strata::mem {

enum class UpdateOp : uint8_t {
  kPut = 0,        // make the entry live with `weight` (insert, overwrite, or revive a tombstone)
  kTombstone = 1,  // make the entry a delete marker (shadows older tiers); insert if absent
  kErase = 2,      // remove the entry entirely; no-op if absent
};

// What an entry was before an update: lets the caller keep exact live degrees.
enum class PrevState : uint8_t { kAbsent = 0, kLive = 1, kTombstone = 2 };

struct Update {
  uint64_t key;   // destination vertex ID
  double weight;  // for kPut
  UpdateOp op;
};

}  // namespace strata::mem
