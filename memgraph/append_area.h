// AppendArea: the newest updates to one Adjacency (one direction of the 64 vertices of a
// subgraph) that its containers (clustered index, C-ARTs) do not hold yet.
//
// Why. A shuffled stream gives each subgraph about one update per batch, so without it every
// update copies a whole container leaf (up to 512 entries of the clustered index, a re-encoded
// C-ART leaf plus the wide inner nodes above it): the cost of an update grows with how full the
// tier is. With it, an update copies the area (at most kAppendCapacity small entries) and a full
// area is applied to the containers in one batched Apply, which copies each touched leaf once
// for many updates.
//
// Semantics. An entry (u, v) overrides whatever the containers hold for (u, v): kLive is an
// entry with weight w, kTomb a delete marker with weight w, kErased "no entry" (hides the
// containers' one). The view of an Adjacency is its containers with its area laid over them;
// readers go through ScanVertex / FindEdge (memgraph.h), which merge the two.
//
// Invariants: entries strictly increase in (u, v); 1 <= n <= kAppendCapacity once published
// (an empty area is a null pointer); bit u of `mask` is set iff some entry has vertex u; the
// w column exists iff weighted. Immutable once built except `refs`, which counts the
// Adjacencies (of any version) holding it; the last reference frees it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "memgraph/node_allocator.h"
#include "memgraph/update.h"

namespace strata::mem {

inline constexpr size_t kAppendCapacity = 32;

enum AppendKind : uint8_t { kAppendLive = 0, kAppendTomb = 1, kAppendErased = 2 };

// An entry while an area is built (scratch form).
struct AppendEntry {
  uint8_t u;
  uint8_t kind;  // AppendKind
  uint64_t v;
  double w;
};

struct AppendArea {
  std::atomic<uint32_t> refs;
  uint16_t n;
  uint8_t weighted;
  uint8_t reserved;
  uint64_t mask;
  // Columns follow: uint64_t v[n]; double w[n] iff weighted; uint8_t u[n]; uint8_t kind[n].

  const uint64_t* v() const { return reinterpret_cast<const uint64_t*>(this + 1); }
  const double* w() const { return weighted ? reinterpret_cast<const double*>(v() + n) : nullptr; }
  const uint8_t* u() const {
    return reinterpret_cast<const uint8_t*>(v() + (weighted ? 2 * size_t{n} : n));
  }
  const uint8_t* kind() const { return u() + n; }
  bool Has(uint32_t x) const { return (mask >> x) & 1; }
  // Entries of vertex x: [*b, *e).
  void Run(uint32_t x, size_t* b, size_t* e) const {
    const uint8_t* uu = u();
    size_t i = 0;
    while (i < n && uu[i] < x) ++i;
    size_t j = i;
    while (j < n && uu[j] == x) ++j;
    *b = i;
    *e = j;
  }
  // Index of (x, key) among the entries, or -1.
  ptrdiff_t Find(uint32_t x, uint64_t key) const {
    if (!Has(x)) return -1;
    size_t b, e;
    Run(x, &b, &e);
    const uint64_t* vv = v();
    for (size_t i = b; i < e; ++i) {
      if (vv[i] == key) return static_cast<ptrdiff_t>(i);
      if (vv[i] > key) break;
    }
    return -1;
  }
};
static_assert(sizeof(AppendArea) == 16);

// A new area holding e[0, n) (sorted by (u, v), unique, 1 <= n), with one reference.
AppendArea* NewAppendArea(NodeAllocator* alloc, bool weighted, const AppendEntry* e, size_t n);
// A new area holding old's entries (old may be null) with entry (u, v) set to (kind, w): added
// in order, or replacing old's entry of (u, v). One reference. The caller makes sure the result
// fits kAppendCapacity (old->n < kAppendCapacity always does). The single-update form of
// NewAppendArea: the columns are copied in two runs each, without a merge buffer.
AppendArea* AreaWith(NodeAllocator* alloc, bool weighted, const AppendArea* old, uint8_t u,
                     uint8_t kind, uint64_t v, double w);
inline void RefAppendArea(AppendArea* a) {
  if (a != nullptr) a->refs.fetch_add(1, std::memory_order_relaxed);
}
void UnrefAppendArea(NodeAllocator* alloc, AppendArea* a);

// Calls fn(keys, w, tomb, n) -> bool|void over vertex x's view: the chunks that
// scan_container(chunk_fn) hands chunk_fn (x's container entries in key order, chunk_fn
// returning false to stop), merged with the area's entries [b, e) of x. Container entries an
// area entry overrides are skipped; kErased entries give nothing. Chunks stay in key order.
template <class ScanContainer, class F>
void ScanWithAppended(const AppendArea& a, size_t b, size_t e, ScanContainer&& scan_container,
                      F& fn) {
  const uint64_t* av = a.v();
  const double* aw = a.w();
  const uint8_t* ak = a.kind();
  size_t p = b;  // next area entry
  bool go = true;
  // The area's next entries: those with key < bound, or all that are left.
  auto emit_area_below = [&](uint64_t bound, bool all) {
    while (go && p < e && (all || av[p] < bound)) {
      if (ak[p] != kAppendErased) {
        go = InvokeScan(fn, av + p, aw != nullptr ? aw + p : nullptr,
                         ak[p] == kAppendTomb ? ak + p : nullptr, 1);
      }
      ++p;
    }
  };
  scan_container([&](const uint64_t* k, const double* w, const uint8_t* t, size_t n) {
    size_t j = 0;
    while (go && j < n) {
      if (p >= e) {
        go = InvokeScan(fn, k + j, w != nullptr ? w + j : nullptr, t != nullptr ? t + j : nullptr,
                         n - j);
        return go;
      }
      emit_area_below(k[j], false);
      if (!go || p >= e) continue;
      // Container entries before the next area key, then skip the one it overrides.
      const uint64_t next = av[p];
      size_t q = j;
      while (q < n && k[q] < next) ++q;
      if (q > j) {
        go = InvokeScan(fn, k + j, w != nullptr ? w + j : nullptr,
                         t != nullptr ? t + j : nullptr, q - j);
      }
      j = q;
      if (j < n && k[j] == next) ++j;
    }
    return go;
  });
  emit_area_below(0, true);
}

}  // namespace strata::mem
