// AppendArea: the newest updates to one Adjacency (one direction of the 64 vertices of a
// subgraph) that its containers (clustered index, C-ARTs) do not hold yet.
//
// Why. A shuffled stream gives each subgraph about one update per batch, so without it every
// update copies a whole container leaf (up to 512 entries of the clustered index, a re-encoded
// C-ART leaf plus the wide inner nodes above it): the cost of an update grows with how full the
// tier is. With it, an update adds one entry to the area, and a full area is applied to the
// containers in one batched Apply, which copies each touched leaf once for many updates.
//
// A log shared by versions. The area is an append-only log of entries; a version's Adjacency
// holds the area and `appended_n`, the length of the prefix it sees. A writer building a new
// version on top of a version that sees n entries appends in place when it claims slot n
// (TryAppend: `claimed` goes n -> n+1 by compare-and-swap), so the new version shares the
// area and costs no copy; when another build claimed slot n first, or the area is at its
// capacity, it copies the prefix into a larger area (AreaWith). Entry n is written only by
// the build that claimed it, before that build's version is published; a version never reads
// past its own prefix, so the prefix a published version sees never changes.
//
// Semantics. Within a prefix, a later entry for (u, v) overrides an earlier one, and the
// latest entry overrides whatever the containers hold for (u, v): kLive is an entry with
// weight w, kTomb a delete marker with weight w, kErased "no entry" (hides the containers'
// one). The view of an Adjacency is its containers with its prefix laid over them; readers go
// through ScanVertex / FindEdge (memgraph.h), which merge the two.
//
// Invariants: 1 <= appended_n <= claimed <= cap <= kAppendCapacity for a published version
// (an empty view is a null pointer); bit u of `mask` is set if some claimed entry has vertex u
// (a superset for any prefix: a filter, never an answer); the w column exists iff weighted.
// Columns are laid out by `cap`: uint8_t uk[cap] (entry i's vertex u in its low 6 bits, its
// kind in the high 2); uint64_t v[cap]; double w[cap] iff weighted (uk first, so the header's
// line holds a small area's vertex column). One byte for u and kind: an append writes two
// lines of the area (uk, v), not three, and in a full tier each is a cold line whose store
// the build waits for (docs/benchmarks.md, "Issue 28: an area entry's vertex and kind in one
// byte"). `refs` counts the Adjacencies (of any version) holding the area; the last
// reference frees it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "memgraph/node_allocator.h"
#include "memgraph/update.h"

namespace strata::mem {

// A full area's apply copies each touched leaf once; in a full tier its entries fall about one
// per leaf, so the larger the area the fewer copies per update. 64 against 32: the last tenth
// of a scale-20 fill 10-19% faster in 3 of 4 pairs, PageRank on a snapshot not slower in 2
// pairs (docs/benchmarks.md, "Issue 28: a hub's updates without lookups; areas of 64").
inline constexpr size_t kAppendCapacity = 64;
static_assert(kAppendCapacity <= 64, "AppendArea::Matches returns a bit per entry in 64 bits");

enum AppendKind : uint8_t { kAppendLive = 0, kAppendTomb = 1, kAppendErased = 2 };
// The update an entry of `kind` records, and the kind that records an update: inverses.
inline UpdateOp OpOf(uint8_t kind) {
  return kind == kAppendLive ? UpdateOp::kPut
         : kind == kAppendTomb ? UpdateOp::kTombstone
                               : UpdateOp::kErase;
}
inline uint8_t KindOf(UpdateOp op) {
  return op == UpdateOp::kPut         ? kAppendLive
         : op == UpdateOp::kTombstone ? kAppendTomb
                                      : kAppendErased;
}

// An entry while an area is built (scratch form).
struct AppendEntry {
  uint8_t u;
  uint8_t kind;  // AppendKind
  uint64_t v;
  double w;
};

// An entry's vertex and kind in one byte of the uk column: the vertex (< 64) in the low bits,
// the kind above them.
inline constexpr unsigned kAreaKindShift = 6;
inline constexpr uint8_t kAreaVertexMask = (1u << kAreaKindShift) - 1;
inline uint8_t PackUk(uint8_t u, uint8_t kind) {
  return static_cast<uint8_t>(u | kind << kAreaKindShift);
}

struct AppendArea {
  std::atomic<uint32_t> refs;
  uint8_t cap;                    // entries the columns have room for: 8, 16, 32 or 64
  uint8_t weighted;
  std::atomic<uint8_t> claimed;   // entries written or being written: the next free slot
  uint8_t reserved;
  std::atomic<uint64_t> mask;     // grows as entries are claimed

  const uint8_t* uk() const { return reinterpret_cast<const uint8_t*>(this + 1); }
  uint8_t U(size_t i) const { return uk()[i] & kAreaVertexMask; }
  uint8_t Kind(size_t i) const { return uk()[i] >> kAreaKindShift; }
  const uint64_t* v() const { return reinterpret_cast<const uint64_t*>(uk() + size_t{cap}); }
  const double* w() const { return weighted ? reinterpret_cast<const double*>(v() + cap) : nullptr; }
  // False only if no entry (of any prefix) has vertex x.
  bool MayHave(uint32_t x) const { return (mask.load(std::memory_order_relaxed) >> x) & 1; }
  // Bit i set iff entry i (i < n) has vertex x. Compares the uk column's vertex bits 16 bytes
  // at a time, from a copy of its first n bytes only: slots past a reader's prefix may be
  // written by a build at the same time (a load of them would race, even with their bits
  // masked off).
  uint64_t Matches(size_t n, uint32_t x) const {
#if defined(__SSE2__)
    alignas(16) uint8_t col[kAppendCapacity] = {};
    std::memcpy(col, uk(), n);
    const __m128i key = _mm_set1_epi8(static_cast<char>(x));
    const __m128i vertex = _mm_set1_epi8(static_cast<char>(kAreaVertexMask));
    const auto* c = reinterpret_cast<const __m128i*>(col);
    uint64_t m = 0;
    for (size_t q = 0; q * 16 < n; ++q) {
      const __m128i u = _mm_and_si128(_mm_load_si128(c + q), vertex);
      m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(u, key))))
           << (16 * q);
    }
    return n >= 64 ? m : m & ((uint64_t{1} << n) - 1);
#else
    uint64_t m = 0;
    for (size_t i = 0; i < n; ++i) m |= static_cast<uint64_t>(U(i) == x) << i;
    return m;
#endif
  }
  // Index of the latest entry (x, key) among the first n, or -1.
  ptrdiff_t Find(size_t n, uint32_t x, uint64_t key) const {
    if (!MayHave(x)) return -1;
    const uint64_t* vv = v();
    for (uint64_t m = Matches(n, x); m != 0;) {
      const int i = 63 - __builtin_clzll(m);  // latest first
      if (vv[i] == key) return i;
      m &= ~(uint64_t{1} << i);
    }
    return -1;
  }
  // The entries of vertex x among the first n that no later one overrides, in key order:
  // their indices go to idx[0, return value) (idx has room for kAppendCapacity). Scans the
  // prefix: callers test MayHave(x) first (ScanVertex does, inline, per vertex).
  size_t Run(size_t n, uint32_t x, uint8_t* idx) const;
  // Bits of the vertices that have an entry among the first n (exact, unlike `mask`).
  uint64_t PrefixMask(size_t n) const;
};
static_assert(sizeof(AppendArea) == 16);

// A new area holding e[0, n) (in this order; 1 <= n <= kAppendCapacity), with one reference
// and room for later appends.
AppendArea* NewAppendArea(NodeAllocator* alloc, bool weighted, const AppendEntry* e, size_t n);
// Appends (u, v) := (kind, w) in place as entry n, for a new version built on one that sees
// the first n entries of `a`. Fails (changes nothing) when slot n is taken or beyond the
// capacity; then AreaWith copies.
bool TryAppend(AppendArea* a, size_t n, uint8_t u, uint8_t kind, uint64_t v, double w);
// A new area holding old's first n entries (old may be null when n == 0) and (u, v) := (kind,
// w) as entry n, with one reference. n < kAppendCapacity.
AppendArea* AreaWith(NodeAllocator* alloc, bool weighted, const AppendArea* old, size_t n,
                     uint8_t u, uint8_t kind, uint64_t v, double w);
// The view of old's first n entries: sorted by (u, v), one per key (the latest), into *out.
void AreaEntries(const AppendArea* old, size_t n, std::vector<AppendEntry>* out);
inline void RefAppendArea(AppendArea* a) {
  if (a != nullptr) a->refs.fetch_add(1, std::memory_order_relaxed);
}
void UnrefAppendArea(NodeAllocator* alloc, AppendArea* a);

// Calls fn(keys, w, tomb, n) -> bool|void over vertex x's view: the chunks that
// scan_container(chunk_fn) hands chunk_fn (x's container entries in key order, chunk_fn
// returning false to stop), merged with the area entries idx[0, m) of x (Run's result, in
// key order). Container entries an area entry overrides are skipped; kErased entries give
// nothing. Chunks stay in key order.
template <class ScanContainer, class F>
void ScanWithAppended(const AppendArea& a, const uint8_t* idx, size_t m,
                      ScanContainer&& scan_container, F& fn) {
  const uint64_t* av = a.v();
  const double* aw = a.w();
  static constexpr uint8_t kTombFlag = 1;  // a one-entry tomb column
  ScanOverlaid(
      m, [&](size_t p) { return av[idx[p]]; },
      [&](size_t p) {
        const size_t q = idx[p];
        const uint8_t kind = a.Kind(q);
        if (kind == kAppendErased) return true;
        return InvokeScan(fn, av + q, aw != nullptr ? aw + q : nullptr,
                          kind == kAppendTomb ? &kTombFlag : nullptr, size_t{1});
      },
      scan_container, fn);
}

}  // namespace strata::mem
