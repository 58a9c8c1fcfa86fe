// The vocabulary of updates applied to a neighbor container (C-ART or clustered index).
#pragma once

#include <cassert>
#include <cstddef>
#include <bit>
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

// How an update changes its vertex's counts, from the state its key had: the vertex keeps an
// entry for the key unless the update erases it, and a live one only after a put; the key's
// old entry (live or not) goes.
struct CountDelta {
  int32_t entries;
  int32_t live;
};
inline CountDelta DeltaOf(UpdateOp op, PrevState p) {
  const int32_t had = p != PrevState::kAbsent, had_live = p == PrevState::kLive;
  return {static_cast<int32_t>(op != UpdateOp::kErase) - had,
          static_cast<int32_t>(op == UpdateOp::kPut) - had_live};
}

// The first i in [lo, hi) with !less(i), or hi, for less true on a prefix of [lo, hi) (key(i) <
// x). Branch-free: with (base, len) = (lo, hi - lo), while len > 1 { half = len / 2; if
// (less(base + half)) base += half; len -= half; }, then base + less(base). The clustered
// index's searches (ChildFor, LowerBoundU, LowerBoundV) and ScanOverlaid use it.
template <class Less>
inline uint32_t LowerBound(uint32_t lo, uint32_t hi, Less less) {
  if (lo >= hi) return lo;
  uint32_t base = lo, len = hi - lo;
  while (len > 1) {
    const uint32_t half = len / 2;
    base = less(base + half) ? base + half : base;
    len -= half;
  }
  return base + (less(base) ? 1 : 0);
}

// Whether a put of weight b over an entry of weight a changes nothing: the same bits (a put of
// -0.0 over 0.0, or of another NaN, is a change, as a scan would show it). The containers keep
// a leaf whose updates all change nothing instead of copying it.
inline bool SameWeight(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

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

// A scan of a view: a container's entries with an overlay of m updates in key order laid over
// them. key(p) is overlay update p's key; emit(p) hands fn update p's entry (nothing for an
// erase) and returns whether to go on. scan_container(chunk_fn) hands chunk_fn the container's
// entries in key order, chunk_fn(keys, w, tomb, n) returning false to stop. Container entries
// an update overrides are skipped; fn gets chunks in key order, container runs unbroken
// between overlay keys.
template <class Key, class Emit, class ScanContainer, class F>
void ScanOverlaid(size_t m, Key key, Emit emit, ScanContainer&& scan_container, F& fn) {
  size_t p = 0;  // next overlay update
  bool go = true;
  // The overlay's next updates: those with key < bound, or all that are left.
  auto emit_below = [&](uint64_t bound, bool all) {
    while (go && p < m && (all || key(p) < bound)) {
      go = emit(p);
      ++p;
    }
  };
  scan_container([&](const uint64_t* k, const double* w, const uint8_t* t, size_t n) {
    size_t j = 0;
    while (go && j < n) {
      if (p >= m) {
        go = InvokeScan(fn, k + j, w != nullptr ? w + j : nullptr, t != nullptr ? t + j : nullptr,
                         n - j);
        return go;
      }
      emit_below(k[j], false);
      if (!go || p >= m) continue;
      // Container entries before the next overlay key, then skip the one it overrides.
      const uint64_t next = key(p);
      // q: the first of [j, n) with k[q] >= next, by the containers' branch-free search (a
      // linear scan was a quarter of this function's samples in a PageRank layout:
      // docs/benchmarks.md, "the layout's walk"). A chunk is at most one leaf's entries.
      assert(n <= UINT32_MAX);
      const size_t q = LowerBound(static_cast<uint32_t>(j), static_cast<uint32_t>(n),
                                         [k, next](uint32_t x) { return k[x] < next; });
      if (q > j) {
        go = InvokeScan(fn, k + j, w != nullptr ? w + j : nullptr,
                         t != nullptr ? t + j : nullptr, q - j);
      }
      j = q;
      if (j < n && k[j] == next) ++j;
    }
    return go;
  });
  emit_below(0, true);
}

}  // namespace strata::mem
