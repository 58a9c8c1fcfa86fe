#include "memgraph/append_area.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <new>

#include "util/small_sort.h"

namespace strata::mem {

namespace {

size_t Bytes(size_t cap, bool weighted) {
  return sizeof(AppendArea) + cap * (1 + sizeof(uint64_t) + (weighted ? sizeof(double) : 0));
}

// The capacity of a new area that holds n entries: room for a few appends before the next
// copy, without a full-size area for every subgraph a stream touched once.
size_t CapacityFor(size_t n) {
  return n < 8 ? 8 : n < 16 ? 16 : n < 32 ? 32 : kAppendCapacity;
}

AppendArea* Allocate(NodeAllocator* alloc, bool weighted, size_t n) {
  assert(n >= 1 && n <= kAppendCapacity);
  const size_t cap = CapacityFor(n);
  auto* a = new (alloc->Allocate(Bytes(cap, weighted))) AppendArea;
  a->refs.store(1, std::memory_order_relaxed);
  a->cap = static_cast<uint8_t>(cap);
  a->weighted = weighted ? 1 : 0;
  a->claimed.store(static_cast<uint8_t>(n), std::memory_order_relaxed);
  a->reserved = 0;
  a->mask.store(0, std::memory_order_relaxed);
  return a;
}

void Set(AppendArea* a, size_t i, uint8_t u, uint8_t kind, uint64_t v, double w) {
  assert(u <= kAreaVertexMask && kind <= kAppendErased);
  const_cast<uint8_t*>(a->uk())[i] = PackUk(u, kind);
  const_cast<uint64_t*>(a->v())[i] = v;
  if (a->weighted) const_cast<double*>(a->w())[i] = w;
}

}  // namespace

size_t AppendArea::Run(size_t n, uint32_t x, uint8_t* idx) const {
  const uint64_t* vv = v();
  size_t m = 0;
  // Latest first, so the first entry seen of a key is the one that counts.
  for (uint64_t bits = Matches(n, x); bits != 0;) {
    const size_t i = static_cast<size_t>(63 - __builtin_clzll(bits));
    bits &= ~(uint64_t{1} << i);
    bool older = false;
    for (size_t j = 0; j < m; ++j) older |= vv[idx[j]] == vv[i];
    if (!older) idx[m++] = static_cast<uint8_t>(i);
  }
  StableSmallSort(idx, idx + m, [vv](uint8_t a, uint8_t b) { return vv[a] < vv[b]; });
  return m;
}

uint64_t AppendArea::PrefixMask(size_t n) const {
  uint64_t m = 0;
  for (size_t i = 0; i < n; ++i) m |= uint64_t{1} << U(i);
  return m;
}

AppendArea* NewAppendArea(NodeAllocator* alloc, bool weighted, const AppendEntry* e, size_t n) {
  AppendArea* a = Allocate(alloc, weighted, n);
  uint64_t mask = 0;
  for (size_t i = 0; i < n; ++i) {
    Set(a, i, e[i].u, e[i].kind, e[i].v, e[i].w);
    mask |= uint64_t{1} << e[i].u;
  }
  a->mask.store(mask, std::memory_order_relaxed);
  return a;
}

bool TryAppend(AppendArea* a, size_t n, uint8_t u, uint8_t kind, uint64_t v, double w) {
  if (n >= a->cap) return false;
  uint8_t expect = static_cast<uint8_t>(n);
  // Relaxed suffices: slot n is published only through the new version's head, whose release
  // store orders these writes before any reader's acquire of it.
  if (!a->claimed.compare_exchange_strong(expect, static_cast<uint8_t>(n + 1),
                                          std::memory_order_relaxed)) {
    return false;
  }
  Set(a, n, u, kind, v, w);
  a->mask.fetch_or(uint64_t{1} << u, std::memory_order_relaxed);
  return true;
}

AppendArea* AreaWith(NodeAllocator* alloc, bool weighted, const AppendArea* old, size_t n,
                     uint8_t u, uint8_t kind, uint64_t v, double w) {
  assert(n < kAppendCapacity && (old != nullptr || n == 0));
  AppendArea* a = Allocate(alloc, weighted, n + 1);
  if (n != 0) {
    std::memcpy(const_cast<uint8_t*>(a->uk()), old->uk(), n);
    std::memcpy(const_cast<uint64_t*>(a->v()), old->v(), n * sizeof(uint64_t));
    if (weighted) std::memcpy(const_cast<double*>(a->w()), old->w(), n * sizeof(double));
  }
  Set(a, n, u, kind, v, w);
  a->mask.store(a->PrefixMask(n + 1), std::memory_order_relaxed);
  return a;
}

namespace {
// AreaEntries sorts a bucket of more than this many entries by std::sort, not by insertion.
constexpr size_t kBucketInsertionMax = 16;
}  // namespace

void AreaEntries(const AppendArea* old, size_t n, std::vector<AppendEntry>* out) {
  out->clear();
  if (n == 0) return;
  auto u = [old](size_t i) { return old->U(i); };
  const uint64_t* v = old->v();
  const double* w = old->w();
  // The entries' positions in (u, v) order, log order among equal keys (so the last of each
  // run is the latest), then only the last of each run. Positions are sorted, not 24-byte
  // entries: this function was 4-6% of a load's samples (a full area is sorted when it is
  // applied, and a build of several updates sorts the area it merges over).
  uint8_t ord[kAppendCapacity];
  size_t m = 0;  // ord[0, m): the latest entry of each key, in key order
  uint64_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= v[i];
  if (any < (uint64_t{1} << 58)) {
    // Bucketed by vertex (a counting sort: stable, so log order within a bucket), each
    // bucket's keys one word, v:58 | i:6, sorted by insertion, or by std::sort past
    // kBucketInsertionMax (a hub's bucket may hold most of the area). One insertion sort of
    // the whole area's words (u:8 | v:50 | i:6) took ~11,000 instructions a full area: 7% of
    // a scale-18 load's (callgrind; docs/benchmarks.md, "Issue 28: a full area's entries by
    // vertex buckets").
    uint8_t count[kAreaVertexMask + 1] = {};
    uint64_t present = 0;  // bit x: a bucket for vertex x
    for (size_t i = 0; i < n; ++i) {
      ++count[u(i)];
      present |= uint64_t{1} << u(i);
    }
    uint8_t end[kAreaVertexMask + 1];  // bucket x's start, then (after the scatter) its end
    size_t at = 0;
    for (uint64_t p = present; p != 0; p &= p - 1) {
      const int x = __builtin_ctzll(p);
      end[x] = static_cast<uint8_t>(at);
      at += count[x];
    }
    uint64_t key[kAppendCapacity];
    for (size_t i = 0; i < n; ++i) key[end[u(i)]++] = (v[i] << 6) | i;
    for (uint64_t p = present; p != 0; p &= p - 1) {
      const int x = __builtin_ctzll(p);
      const size_t b = end[x] - count[x], e = end[x];
      // The words are distinct (their i), so either sort keeps log order among equal keys.
      if (e - b > kBucketInsertionMax) {
        std::sort(key + b, key + e);
      } else {
        StableSmallSort(key + b, key + e, std::less<uint64_t>());
      }
      for (size_t j = b; j < e; ++j) {
        if (j + 1 < e && (key[j + 1] >> 6) == (key[j] >> 6)) continue;  // not the latest
        ord[m++] = static_cast<uint8_t>(key[j] & 63);
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) ord[i] = static_cast<uint8_t>(i);
    // Stable: equal keys keep log order.
    StableSmallSort(ord, ord + n, [u, v](uint8_t a, uint8_t b) {
      return u(a) != u(b) ? u(a) < u(b) : v[a] < v[b];
    });
    for (size_t j = 0; j < n; ++j) {
      const size_t i = ord[j];
      if (j + 1 < n && u(ord[j + 1]) == u(i) && v[ord[j + 1]] == v[i]) continue;  // not the latest
      ord[m++] = static_cast<uint8_t>(i);
    }
  }
  out->resize(m);  // scratch: its capacity stays between calls
  AppendEntry* o = out->data();
  for (size_t j = 0; j < m; ++j) {
    const size_t i = ord[j];
    o[j] = {u(i), old->Kind(i), v[i], w != nullptr ? w[i] : 1.0};
  }
}

void UnrefAppendArea(NodeAllocator* alloc, AppendArea* a) {
  if (a == nullptr || a->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const size_t bytes = Bytes(a->cap, a->weighted);
  a->~AppendArea();
  alloc->Free(a, bytes);
}

}  // namespace strata::mem
