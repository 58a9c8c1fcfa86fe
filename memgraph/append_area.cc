#include "memgraph/append_area.h"

#include <cassert>
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

void UnrefAppendArea(NodeAllocator* alloc, AppendArea* a) {
  if (a == nullptr || a->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const size_t bytes = Bytes(a->n, a->weighted);
  a->~AppendArea();
  alloc->Free(a, bytes);
}

}  // namespace strata::mem
