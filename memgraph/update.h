// The vocabulary of updates applied to a neighbor container (C-ART or clustered index).
#pragma once

#include <cstdint>
#include <type_traits>

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

// Calls a scan visitor that returns bool (false stops the scan) or void (never stops); the
// containers' and the append area's chunk scans accept either.
template <class F, class... A>
inline bool InvokeScan(F& fn, A... a) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&, A...>>) {
    fn(a...);
    return true;
  } else {
    return static_cast<bool>(fn(a...));
  }
}

}  // namespace strata::mem
