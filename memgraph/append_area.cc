#include "memgraph/append_area.h"

#include <cassert>
#include <cstring>
#include <new>

namespace strata::mem {

namespace {

size_t Bytes(size_t n, bool weighted) {
  const size_t b = sizeof(AppendArea) + n * (sizeof(uint64_t) + (weighted ? sizeof(double) : 0) + 2);
  return (b + 7) & ~size_t{7};
}

}  // namespace

AppendArea* NewAppendArea(NodeAllocator* alloc, bool weighted, const AppendEntry* e, size_t n) {
  assert(n >= 1 && n <= UINT16_MAX);
  auto* a = new (alloc->Allocate(Bytes(n, weighted))) AppendArea;
  a->refs.store(1, std::memory_order_relaxed);
  a->n = static_cast<uint16_t>(n);
  a->weighted = weighted ? 1 : 0;
  a->reserved = 0;
  a->mask = 0;
  auto* v = const_cast<uint64_t*>(a->v());
  auto* w = const_cast<double*>(a->w());
  auto* u = const_cast<uint8_t*>(a->u());
  auto* k = const_cast<uint8_t*>(a->kind());
  for (size_t i = 0; i < n; ++i) {
    assert(i == 0 || e[i - 1].u < e[i].u || (e[i - 1].u == e[i].u && e[i - 1].v < e[i].v));
    v[i] = e[i].v;
    if (w != nullptr) w[i] = e[i].w;
    u[i] = e[i].u;
    k[i] = e[i].kind;
    a->mask |= uint64_t{1} << e[i].u;
  }
  return a;
}

AppendArea* AreaWith(NodeAllocator* alloc, bool weighted, const AppendArea* old, uint8_t u,
                     uint8_t kind, uint64_t v, double w) {
  const size_t on = old != nullptr ? old->n : 0;
  // pos: the first old entry not below (u, v); `same`: it is (u, v) and is replaced.
  size_t pos = 0;
  if (old != nullptr) {
    const uint8_t* ou = old->u();
    const uint64_t* ov = old->v();
    while (pos < on && (ou[pos] < u || (ou[pos] == u && ov[pos] < v))) ++pos;
  }
  const bool same = pos < on && old->u()[pos] == u && old->v()[pos] == v;
  const size_t n = on + (same ? 0 : 1);
  assert(n <= kAppendCapacity);
  const size_t rest = on - pos - (same ? 1 : 0);  // old entries after (u, v)
  auto* a = new (alloc->Allocate(Bytes(n, weighted))) AppendArea;
  a->refs.store(1, std::memory_order_relaxed);
  a->n = static_cast<uint16_t>(n);
  a->weighted = weighted ? 1 : 0;
  a->reserved = 0;
  a->mask = (old != nullptr ? old->mask : 0) | uint64_t{1} << u;
  // Each column: old[0, pos), the new entry, old[on - rest, on).
  auto column = [&](auto* dst, const auto* src, auto value) {
    if (pos != 0) std::memcpy(dst, src, pos * sizeof(*dst));
    dst[pos] = value;
    if (rest != 0) std::memcpy(dst + pos + 1, src + (on - rest), rest * sizeof(*dst));
  };
  const AppendArea* o = old;
  column(const_cast<uint64_t*>(a->v()), o != nullptr ? o->v() : nullptr, v);
  if (weighted) column(const_cast<double*>(a->w()), o != nullptr ? o->w() : nullptr, w);
  column(const_cast<uint8_t*>(a->u()), o != nullptr ? o->u() : nullptr, u);
  column(const_cast<uint8_t*>(a->kind()), o != nullptr ? o->kind() : nullptr, kind);
  return a;
}

void UnrefAppendArea(NodeAllocator* alloc, AppendArea* a) {
  if (a == nullptr || a->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const size_t bytes = Bytes(a->n, a->weighted);
  a->~AppendArea();
  alloc->Free(a, bytes);
}

}  // namespace strata::mem
