#include "memgraph/subgraph.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <new>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata::mem {

namespace {

ArtArray* NewArtArray(NodeAllocator* alloc, uint32_t n) {
  if (n == 0) return nullptr;
  auto* arr = new (alloc->Allocate(sizeof(ArtArray) + sizeof(CArt) * n)) ArtArray;
  arr->refs.store(1, std::memory_order_relaxed);
  arr->n = n;
  return arr;
}

// Room for a's counts of `bytes` (a has none: FreeCounts): inline when they fit, else a block
// of their own, whose address goes in the inline room. Returns where to write them.
void* NewCounts(NodeAllocator* alloc, Adjacency* a, size_t bytes) {
  if (bytes <= a->inline_cap) return a->InlineCounts();
  void* p = alloc->Allocate(bytes);
  *static_cast<void**>(a->InlineCounts()) = p;
  a->flags |= Adjacency::kCountsOwnBlock;
  return p;
}

// The inline room of a block that holds `header` bytes and then the counts of `a` (a copy's
// base): the block is rounded up to whole cache lines (the allocator's classes of 128, 192,
// 256 ... bytes keep such blocks line-aligned), with room for one more record while some
// vertex has none; never less than an address (for counts in a block of their own).
uint16_t InlineCap(size_t header, const Adjacency* a) {
  constexpr size_t kLine = 64;
  size_t bytes = 2;
  if (a != nullptr) {
    bytes = a->CountBytes();
    if (a->count_mask != ~uint64_t{0}) bytes += kCountRecordBytes[a->count_format];
  }
  bytes = std::max(bytes, sizeof(void*));
  const size_t total = (header + bytes + kLine - 1) / kLine * kLine;
  return static_cast<uint16_t>(total - header);
}

// Whether a vertex's {entries, live} fits a record of format f (live <= entries, so a format
// that holds entries holds live).
bool Fits(CountFormat f, uint32_t entries, uint32_t live) {
  assert(live <= entries);
  switch (f) {
    case kCounts16: return entries <= UINT16_MAX && live == entries;
    case kCountPairs16: return entries <= UINT16_MAX;
    default: return true;
  }
}

void WriteRecord(void* counts, CountFormat f, size_t k, uint32_t entries, uint32_t live) {
  switch (f) {
    case kCounts16:
      static_cast<uint16_t*>(counts)[k] = static_cast<uint16_t>(entries);
      break;
    case kCountPairs16:
      static_cast<uint16_t*>(counts)[2 * k] = static_cast<uint16_t>(entries);
      static_cast<uint16_t*>(counts)[2 * k + 1] = static_cast<uint16_t>(live);
      break;
    default:
      static_cast<uint32_t*>(counts)[2 * k] = entries;
      static_cast<uint32_t*>(counts)[2 * k + 1] = live;
  }
}

// Drops a's reference on its art array; the last one destroys the trees and frees it.
void ReleaseArts(NodeAllocator* alloc, Adjacency* a) {
  ArtArray* arr = a->arts;
  a->arts = nullptr;
  a->art_mask = 0;
  if (arr == nullptr || arr->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (uint32_t k = 0; k < arr->n; ++k) arr->trees()[k].~CArt();
  alloc->Free(arr, sizeof(ArtArray) + sizeof(CArt) * arr->n);
}

void CopyAdjacency(NodeAllocator* alloc, const Adjacency& from, Adjacency* to) {
  to->ci = from.ci;
  to->art_mask = from.art_mask;
  to->arts = from.arts;
  if (to->arts != nullptr) to->arts->refs.fetch_add(1, std::memory_order_relaxed);
  to->appended = from.appended;
  to->appended_n = from.appended_n;
  RefAppendArea(to->appended);
  const size_t bytes = from.CountBytes();
  to->count_mask = from.count_mask;
  to->count_format = from.count_format;
  if (bytes != 0) std::memcpy(NewCounts(alloc, to, bytes), from.counts(), bytes);
}

void FreeCounts(NodeAllocator* alloc, Adjacency* a) {
  if ((a->flags & Adjacency::kCountsOwnBlock) != 0) alloc->Free(a->counts(), a->CountBytes());
  a->flags &= static_cast<uint8_t>(~Adjacency::kCountsOwnBlock);
  a->count_mask = 0;
  a->count_format = kCounts16;
}

// Bytes of a version's block before its header: the in-adjacency's address, when it has one.
size_t LeadBytes(bool with_in) { return with_in ? sizeof(Adjacency*) : 0; }

// A version block with inline room for the counts of `base_out` and a record more (see
// InlineCap), and room for the in-adjacency's address before the header when `with_in`
// (subgraph.h, the block's layout).
SubgraphVersion* AllocateVersion(NodeAllocator* alloc, const Adjacency* base_out, bool with_in) {
  const size_t lead = LeadBytes(with_in);
  const uint16_t cap = InlineCap(lead + sizeof(SubgraphVersion), base_out);
  char* block = static_cast<char*>(alloc->Allocate(lead + sizeof(SubgraphVersion) + cap));
  auto* v = new (block + lead) SubgraphVersion();
  v->out.inline_cap = cap;
  if (with_in) {
    v->out.flags |= Adjacency::kVersionHasIn;
    *reinterpret_cast<Adjacency**>(block) = nullptr;
  }
  return v;
}

void SetIn(SubgraphVersion* v, Adjacency* in) {
  assert((v->out.flags & Adjacency::kVersionHasIn) != 0);
  reinterpret_cast<Adjacency**>(v)[-1] = in;
}

Adjacency* AllocateAdjacency(NodeAllocator* alloc, const Adjacency* base) {
  const uint16_t cap = InlineCap(sizeof(Adjacency), base);
  auto* a = new (alloc->Allocate(sizeof(Adjacency) + cap)) Adjacency();
  a->inline_cap = cap;
  return a;
}

void FreeAdjacency(NodeAllocator* alloc, Adjacency* a) {
  const size_t bytes = sizeof(Adjacency) + a->inline_cap;
  a->~Adjacency();
  alloc->Free(a, bytes);
}

}  // namespace

SubgraphVersion* NewVersion(NodeAllocator* alloc, bool with_in, bool weighted) {
  SubgraphVersion* v = AllocateVersion(alloc, nullptr, with_in);
  v->out.ci = ClusteredIndex(alloc, weighted);
  if (with_in) {
    SetIn(v, AllocateAdjacency(alloc, nullptr));
    v->in()->ci = ClusteredIndex(alloc, weighted);
  }
  return v;
}

SubgraphVersion* CopyVersion(NodeAllocator* alloc, const SubgraphVersion& base) {
  const Adjacency* base_in = base.in();
  SubgraphVersion* v = AllocateVersion(alloc, &base.out, base_in != nullptr);
  v->exists_mask = base.exists_mask;
  v->deleted_mask = base.deleted_mask;
  CopyAdjacency(alloc, base.out, &v->out);
  if (base_in != nullptr) {
    SetIn(v, AllocateAdjacency(alloc, base_in));
    CopyAdjacency(alloc, *base_in, v->in());
  }
  return v;
}

void HollowVersion(NodeAllocator* alloc, SubgraphVersion* v) {
  for (Adjacency* a : {&v->out, v->in()}) {
    if (a == nullptr) continue;
    a->ci = ClusteredIndex(a->ci.allocator(), a->ci.weighted());
    ReleaseArts(alloc, a);
    FreeCounts(alloc, a);
    UnrefAppendArea(alloc, a->appended);
    a->appended = nullptr;
    a->appended_n = 0;
  }
}

void FreeVersion(NodeAllocator* alloc, SubgraphVersion* v) {
  HollowVersion(alloc, v);
  Adjacency* in = v->in();
  if (in != nullptr) FreeAdjacency(alloc, in);
  const size_t lead = LeadBytes(in != nullptr);
  const size_t bytes = lead + sizeof(SubgraphVersion) + v->out.inline_cap;
  v->~SubgraphVersion();
  alloc->Free(reinterpret_cast<char*>(v) - lead, bytes);
}

void FreeVersions(NodeAllocator* alloc, SubgraphVersion* const* b, SubgraphVersion* const* e) {
  constexpr ptrdiff_t kAhead = 4;
  const ptrdiff_t n = e - b;
  // An art array held only by the version being freed is destroyed with its trees:
  // their roots' reference counts are the next misses (a shared array is only decremented).
  auto prefetch_roots = [](const Adjacency* a) {
    const ArtArray* arr = a->arts;
    if (arr == nullptr || arr->refs.load(std::memory_order_relaxed) != 1) return;
    for (uint32_t k = 0; k < arr->n; ++k) __builtin_prefetch(arr->trees()[k].root_node(), 1);
  };
  for (ptrdiff_t i = 0; i < std::min(n, 2 * kAhead); ++i) __builtin_prefetch(b[i], 1);
  for (ptrdiff_t i = 0; i < n; ++i) {
    if (i + 2 * kAhead < n) __builtin_prefetch(b[i + 2 * kAhead], 1);
    if (i + kAhead < n) {
      const SubgraphVersion* v = b[i + kAhead];
      __builtin_prefetch(v->out.ci.root_node(), 1);
      if (v->out.arts != nullptr) __builtin_prefetch(v->out.arts, 1);
      if (v->out.appended != nullptr) __builtin_prefetch(v->out.appended, 1);
      if (const Adjacency* in = v->in(); in != nullptr) __builtin_prefetch(in, 1);
    }
    if (i + kAhead / 2 < n) {
      const SubgraphVersion* v = b[i + kAhead / 2];
      prefetch_roots(&v->out);
      if (const Adjacency* in = v->in(); in != nullptr) {
        __builtin_prefetch(in->ci.root_node(), 1);
        if (in->arts != nullptr) __builtin_prefetch(in->arts, 1);
        if (in->appended != nullptr) __builtin_prefetch(in->appended, 1);
      }
    }
    if (i + 1 < n) {
      if (const Adjacency* in = b[i + 1]->in(); in != nullptr) prefetch_roots(in);
    }
    FreeVersion(alloc, b[i]);
  }
}

void SetArts(NodeAllocator* alloc, Adjacency* a, uint64_t mask, CArt* trees, uint32_t n) {
  ReleaseArts(alloc, a);
  a->art_mask = mask;
  a->arts = NewArtArray(alloc, n);
  for (uint32_t k = 0; k < n; ++k) new (&a->arts->trees()[k]) CArt(std::move(trees[k]));
}

CArt& MutableArt(NodeAllocator* alloc, Adjacency* a, uint32_t i) {
  ArtArray* arr = a->arts;
  if (arr->refs.load(std::memory_order_acquire) != 1) {
    const uint64_t mask = a->art_mask;
    ArtArray* copy = NewArtArray(alloc, arr->n);
    for (uint32_t k = 0; k < arr->n; ++k) new (&copy->trees()[k]) CArt(arr->trees()[k]);
    ReleaseArts(alloc, a);
    a->arts = copy;
    a->art_mask = mask;
  }
  return a->arts->trees()[__builtin_popcountll(a->art_mask & ((uint64_t{1} << i) - 1))];
}

Adjacency::CountPair Adjacency::ResolvedCounts(uint32_t i, CountPair rec) const {
  const CArt* tree = InArt(i) ? &Art(i) : nullptr;
  if (tree != nullptr && tree->pending() != 0) {
    rec = {static_cast<uint32_t>(tree->size()), static_cast<uint32_t>(tree->live_size())};
  }
  if (appended == nullptr || !appended->MayHave(i)) return rec;
  uint8_t idx[kAppendCapacity];
  const size_t m = appended->Run(appended_n, i, idx);
  const uint64_t* key = appended->v();
  int64_t entries = rec.entries, live = rec.live;
  for (size_t j = 0; j < m; ++j) {
    bool tomb = false;
    const uint64_t v = key[idx[j]];
    const bool had = tree != nullptr ? tree->Find(v, nullptr, &tomb)
                                     : ci.Find(static_cast<uint8_t>(i), v, nullptr, &tomb);
    const CountDelta d = DeltaOf(OpOf(appended->Kind(idx[j])), !had  ? PrevState::kAbsent
                                                     : tomb ? PrevState::kTombstone
                                                            : PrevState::kLive);
    entries += d.entries;
    live += d.live;
  }
  assert(live >= 0 && live <= entries);
  return {static_cast<uint32_t>(entries), static_cast<uint32_t>(live)};
}

uint32_t Adjacency::LiveBound(uint32_t i) const {
  if (InArt(i)) return Live(i);
  uint32_t live = Record(i).live;
  if (appended == nullptr || !appended->MayHave(i)) return live;
  for (uint64_t m = appended->Matches(appended_n, i); m != 0; m &= m - 1) {
    live += appended->Kind(static_cast<size_t>(__builtin_ctzll(m))) == kAppendLive;
  }
  return live;
}

void GetCounts(const Adjacency& a, VertexCounts* c) {
  std::memset(c, 0, sizeof(*c));
  for (uint64_t m = a.count_mask; m != 0; m &= m - 1) {
    const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
    const Adjacency::CountPair r = a.Record(i);
    c->entries[i] = r.entries;
    c->live[i] = r.live;
  }
}

void SetCounts(NodeAllocator* alloc, Adjacency* a, const VertexCounts& c) {
  // The vertices with entries, without a branch per vertex (a per-vertex branch mispredicts on
  // most versions of a shuffled stream).
  uint64_t mask = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (uint32_t i = 0; i < kSubgraphSize; i += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.entries + i));
    const int is_zero = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, zero)));
    mask |= static_cast<uint64_t>(~is_zero & 0xF) << i;
  }
#else
  for (uint32_t i = 0; i < kSubgraphSize; ++i) {
    mask |= static_cast<uint64_t>(c.entries[i] != 0) << i;
  }
#endif
  // The narrowest format: the widest count and whether any vertex has tombstones decide it.
  uint32_t widest = 0;
  bool tombs = false;
  for (uint64_t m = mask; m != 0; m &= m - 1) {
    const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
    assert(c.live[i] <= c.entries[i]);
    widest = std::max(widest, c.entries[i]);
    tombs |= c.live[i] != c.entries[i];
  }
  const CountFormat f = widest > UINT16_MAX ? kCountPairs32 : tombs ? kCountPairs16 : kCounts16;
  const size_t bytes = kCountRecordBytes[f] * static_cast<size_t>(__builtin_popcountll(mask));
  void* dst = a->counts();
  if (bytes != a->CountBytes()) {
    FreeCounts(alloc, a);
    dst = NewCounts(alloc, a, bytes);
  }
  a->count_mask = mask;
  a->count_format = f;
  size_t k = 0;
  for (uint64_t m = mask; m != 0; m &= m - 1, ++k) {
    const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
    WriteRecord(dst, f, k, c.entries[i], c.live[i]);
  }
}

void CountEdits::Commit(NodeAllocator* alloc, Adjacency* a) const {
  // a_ holds the same counts as `a` (it is `a`, or the version `a` copied): the old records
  // are read from a_, whose lines are in cache when a's new block is not.
  const Adjacency& from = *a_;
  assert(from.count_mask == a->count_mask && from.count_format == a->count_format);
  uint64_t present = 0;  // edited vertices with entries after the edits
  bool fit = true;       // every edited record fits the format
  for (uint64_t m = edited_; m != 0; m &= m - 1) {
    const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
    present |= static_cast<uint64_t>(entries_[i] != 0) << i;
    fit &= Fits(from.count_format, entries_[i], live_[i]);
  }
  const uint64_t had = from.count_mask & edited_;
  if (fit && present == had) {  // same mask and format: patch in place
    for (uint64_t m = present; m != 0; m &= m - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
      WriteRecord(a->counts(), from.count_format, from.CountRecord(i), entries_[i], live_[i]);
    }
    return;
  }
  if (fit) {
    // The mask changed (a vertex gained its first entry or lost its last), the format holds:
    // the records of the new mask merged from the old array and the edits, without the dense
    // round trip below (GetCounts and SetCounts were 2.4% of a scale-18 ingest_large's
    // samples, most of it for sparse subgraphs' first entries).
    const uint64_t mask = (from.count_mask & ~edited_) | present;
    const CountFormat f = from.count_format;
    const size_t rec = kCountRecordBytes[f];
    alignas(8) unsigned char merged[sizeof(uint32_t) * 2 * kSubgraphSize];
    const unsigned char* old = static_cast<const unsigned char*>(from.counts());
    size_t k = 0;
    for (uint64_t m = mask; m != 0; m &= m - 1, ++k) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
      if ((edited_ >> i) & 1) {
        WriteRecord(merged, f, k, entries_[i], live_[i]);
      } else {
        std::memcpy(merged + k * rec, old + from.CountRecord(i) * rec, rec);
      }
    }
    const size_t bytes = rec * k;
    void* dst = a->counts();
    if (bytes != a->CountBytes()) {
      FreeCounts(alloc, a);
      dst = NewCounts(alloc, a, bytes);
    }
    a->count_mask = mask;
    a->count_format = f;
    if (bytes != 0) std::memcpy(dst, merged, bytes);
    return;
  }
  VertexCounts all;
  GetCounts(*a, &all);
  for (uint64_t m = edited_; m != 0; m &= m - 1) {
    const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
    all.entries[i] = entries_[i];
    all.live[i] = live_[i];
  }
  SetCounts(alloc, a, all);
}

}  // namespace strata::mem
