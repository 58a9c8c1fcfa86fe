#include "memgraph/subgraph.h"

#include <new>
#include <utility>

namespace strata::mem {

namespace {

CArt* NewArtArray(NodeAllocator* alloc, uint32_t n) {
  if (n == 0) return nullptr;
  return static_cast<CArt*>(alloc->Allocate(sizeof(CArt) * n));
}

void DestroyArts(NodeAllocator* alloc, Adjacency* a) {
  uint32_t n = static_cast<uint32_t>(__builtin_popcountll(a->art_mask));
  for (uint32_t k = 0; k < n; ++k) a->arts[k].~CArt();
  if (a->arts != nullptr) alloc->Free(a->arts, sizeof(CArt) * n);
  a->arts = nullptr;
  a->art_mask = 0;
}

void CopyAdjacency(NodeAllocator* alloc, const Adjacency& from, Adjacency* to) {
  to->ci = from.ci;
  uint32_t n = static_cast<uint32_t>(__builtin_popcountll(from.art_mask));
  to->art_mask = from.art_mask;
  to->arts = NewArtArray(alloc, n);
  for (uint32_t k = 0; k < n; ++k) new (&to->arts[k]) CArt(from.arts[k]);
  for (uint32_t i = 0; i < kSubgraphSize; ++i) {
    to->live[i] = from.live[i];
    to->entries[i] = from.entries[i];
  }
}

}  // namespace

SubgraphVersion* NewVersion(NodeAllocator* alloc, bool with_in, bool weighted) {
  auto* v = new (alloc->Allocate(sizeof(SubgraphVersion))) SubgraphVersion();
  v->out.ci = ClusteredIndex(alloc, weighted);
  if (with_in) {
    v->in = new (alloc->Allocate(sizeof(Adjacency))) Adjacency();
    v->in->ci = ClusteredIndex(alloc, weighted);
  }
  return v;
}

SubgraphVersion* CopyVersion(NodeAllocator* alloc, const SubgraphVersion& base) {
  auto* v = new (alloc->Allocate(sizeof(SubgraphVersion))) SubgraphVersion();
  v->exists_mask = base.exists_mask;
  v->deleted_mask = base.deleted_mask;
  CopyAdjacency(alloc, base.out, &v->out);
  if (base.in != nullptr) {
    v->in = new (alloc->Allocate(sizeof(Adjacency))) Adjacency();
    CopyAdjacency(alloc, *base.in, v->in);
  }
  return v;
}

void FreeVersion(NodeAllocator* alloc, SubgraphVersion* v) {
  DestroyArts(alloc, &v->out);
  if (v->in != nullptr) {
    DestroyArts(alloc, v->in);
    v->in->~Adjacency();
    alloc->Free(v->in, sizeof(Adjacency));
  }
  v->~SubgraphVersion();
  alloc->Free(v, sizeof(SubgraphVersion));
}

void SetArts(NodeAllocator* alloc, Adjacency* a, uint64_t mask, CArt* trees, uint32_t n) {
  DestroyArts(alloc, a);
  a->art_mask = mask;
  a->arts = NewArtArray(alloc, n);
  for (uint32_t k = 0; k < n; ++k) new (&a->arts[k]) CArt(std::move(trees[k]));
}

}  // namespace strata::mem
