// ClusteredIndex: the neighbor sets of the low-degree vertices of one subgraph, packed into one
// immutable copy-on-write B+ tree keyed by (u, v) (RapidStore §6.3). u is the vertex's index inside
// its subgraph (0..63), v the full 64-bit destination ID. Entries are sorted by (u, v), so one
// vertex's neighbors are contiguous and a scan of N(u) walks column arrays, one leaf at a time.
//
// Versions. A ClusteredIndex is a value: a root pointer plus cached entry and byte counts.
// Apply / EraseVertex / InsertVertexRun return a new tree that copies only the root-to-leaf paths
// they change and shares every other node with the source, which stays valid and unchanged.
// Published nodes are never written again except for their reference count, so readers take no
// locks. Writers deriving versions of one subgraph must be serialized by the caller. A batch is
// grouped by leaf: each affected leaf (and each inner node above it) is copied once per call.
// A leaf whose updates change nothing (erases of absent keys, puts over a live entry of the
// same weight) is shared, not copied, and so is an inner node all of whose children are.
//
// Reference counts (RapidStore §6.4). Node::refs == the number of inner nodes and ClusteredIndex
// values, over all versions, that point at the node. Copying an index increments its root; a
// path copy increments each untouched child it shares; dropping the last reference frees the
// node and then drops the references it held on its children (top-down).
//
// Node layout. Every node comes from the memgraph's NodeAllocator and is sized exactly for its
// contents (a node is never modified after it is built, so slack would only be waste).
//   Header (16 bytes): refs, bytes (allocation size), count, ntomb, level (0 = leaf), flags.
//   Leaf with n = count entries:
//     [header][v: uint64 x n][w: double x n, iff weighted][u: uint8 x n][tomb: uint8 x n, iff ntomb > 0]
//     tomb[i] == 1 marks a delete marker (it shadows older tiers), else 0. An unweighted index
//     stores no weights; its entries read as weight 1.0. The tomb column is a byte (not a bit) per
//     entry so that a run starting anywhere in a leaf can be handed out as a plain pointer.
//   Inner with n = count children:
//     [header][child: Node* x n, padded to an even count][sep: Key x (n - 1)]
//     Key = u << 64 | v (128-bit). Every key under child[i] lies in [sep[i-1], sep[i]), where
//     sep[-1] and sep[n-1] stand for the bounds inherited from the parent.
//
// Invariants (CheckInvariants verifies each):
//   - all leaves are at level 0, and a node at level L > 0 has children at level L - 1;
//   - keys strictly increase in (u, v) order across the whole tree, and u < 64;
//   - leaf: 1 <= count <= kLeafCapacity, and count >= kLeafMinFill unless it is the root;
//   - inner: count <= kInnerCapacity; count >= 2 for the root, >= kInnerMinFill otherwise;
//     separators strictly increase and bound their children as above;
//   - ntomb == the number of tombstones in the leaf; the tomb column exists iff ntomb > 0;
//   - an empty index has a null root; size() == number of entries (tombstones included).
// MemoryBytes() is the sum of the node sizes reachable from the root, counted by a walk (the
// index keeps no byte count: it is part of every version's header, subgraph.h).
//
// Fill policy. A leaf (inner node) that overflows is cut into ceil(n / capacity) pieces of even
// size, so every piece is more than half full. A non-root leaf under a quarter fill
// (kLeafMinFill = 128) is combined with an adjacent sibling: merged into one leaf when the pair
// holds <= kLeafMergeMax = 384 entries, otherwise redistributed evenly into two leaves (>= 192
// each). Capping merges at 3/4 leaves room for inserts, so a merged leaf does not split again at
// once. Inner nodes follow the same rule with 64 / 16 / 48. A root inner node with one child is
// replaced by that child. With 64 vertices the tree is normally one or two levels deep.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "memgraph/node_allocator.h"
#include "memgraph/update.h"
#include "util/coro.h"

namespace strata::mem {

// One update of a clustered index: local vertex u in [0, 64) and its neighbor update.
struct ClusteredUpdate {
  uint8_t u;
  Update upd;
};

namespace clustered {

using Key = unsigned __int128;
inline constexpr Key MakeKey(uint8_t u, uint64_t v) { return (Key{u} << 64) | v; }

inline constexpr size_t kVertices = 64;  // local vertex indexes are < kVertices
inline constexpr size_t kLeafCapacity = 512;
inline constexpr size_t kLeafMinFill = kLeafCapacity / 4;
inline constexpr size_t kLeafMergeMax = kLeafCapacity * 3 / 4;
inline constexpr size_t kInnerCapacity = 64;
inline constexpr size_t kInnerMinFill = kInnerCapacity / 4;
inline constexpr size_t kInnerMergeMax = kInnerCapacity * 3 / 4;
inline constexpr int kMaxHeight = 16;  // levels; far beyond any subgraph (>= 16^14 entries)

inline constexpr uint8_t kWeightedFlag = 1;

struct Node {
  mutable std::atomic<uint32_t> refs;
  uint32_t bytes;   // allocation size
  uint16_t count;   // leaf: entries; inner: children
  uint16_t ntomb;   // leaf: tombstones among the entries; inner: 0
  uint8_t level;    // 0 = leaf
  uint8_t flags;    // leaf: kWeightedFlag
  uint16_t reserved;
};
static_assert(sizeof(Node) == 16);

struct Leaf : Node {
  bool weighted() const { return (flags & kWeightedFlag) != 0; }
  const uint64_t* v() const { return reinterpret_cast<const uint64_t*>(this + 1); }
  const double* w() const { return weighted() ? reinterpret_cast<const double*>(v() + count) : nullptr; }
  const uint8_t* u() const {
    return reinterpret_cast<const uint8_t*>(v() + (weighted() ? 2 * size_t{count} : count));
  }
  const uint8_t* tomb() const { return ntomb != 0 ? u() + count : nullptr; }
  Key key(size_t i) const { return MakeKey(u()[i], v()[i]); }
};

struct Inner : Node {
  static size_t SepOffset(size_t n) { return (n + 1) / 2 * 2 * sizeof(Node*); }
  const Node* const* child() const { return reinterpret_cast<const Node* const*>(this + 1); }
  const Key* sep() const {
    return reinterpret_cast<const Key*>(reinterpret_cast<const char*>(this + 1) + SepOffset(count));
  }
};

// Index of the child of x whose key range holds k (the number of separators <= k).
inline size_t ChildFor(const Inner* x, Key k) {
  const Key* s = x->sep();
  return LowerBound(0, x->count - 1u, [s, k](uint32_t i) { return s[i] <= k; });
}

// First index i in [lo, hi) with u[i] >= x, or hi.
inline size_t LowerBoundU(const uint8_t* u, size_t lo, size_t hi, unsigned x) {
  return LowerBound(static_cast<uint32_t>(lo), static_cast<uint32_t>(hi),
                    [u, x](uint32_t i) { return u[i] < x; });
}

// The run of vertex x in a leaf's sorted u column u[0, n): [*b, *e). Scans 16 bytes at a time
// and stops at the first block past the run. The loads are independent, so on a cold leaf the
// cache misses overlap instead of forming the dependent chain of a binary search.
inline void URun(const uint8_t* u, size_t n, unsigned x, size_t* b, size_t* e) {
  size_t i = 0, lo = 0, hi = 0;
#if defined(__SSE2__)
  const __m128i below = _mm_set1_epi8(static_cast<char>(x));  // u, x <= 64: signed compare is exact
  const __m128i upto = _mm_set1_epi8(static_cast<char>(x + 1));
  for (; i + 16 <= n; i += 16) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u + i));
    // Sorted input: each mask is a prefix of ones, so its population is its trailing-ones count.
    unsigned m1 = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(a, below)));
    unsigned m2 = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(a, upto)));
    lo += static_cast<size_t>(__builtin_ctz(~m1 & 0x1FFFFu));
    hi += static_cast<size_t>(__builtin_ctz(~m2 & 0x1FFFFu));
    if (m2 != 0xFFFFu) {
      *b = lo;
      *e = hi;
      return;
    }
  }
#endif
  for (; i < n; ++i) {
    lo += u[i] < x;
    hi += u[i] <= x;
  }
  *b = lo;
  *e = hi;
}

// First index i in [lo, hi) with v[i] >= x, or hi.
inline size_t LowerBoundV(const uint64_t* v, size_t lo, size_t hi, uint64_t x) {
  return LowerBound(static_cast<uint32_t>(lo), static_cast<uint32_t>(hi),
                    [v, x](uint32_t i) { return v[i] < x; });
}

inline bool AnyNonZero(const uint8_t* p, size_t n) {
  size_t i = 0;
  uint64_t acc = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; ++i) acc |= p[i];
  return acc != 0;
}

// The tomb column of l restricted to [b, b + n), or null when that range holds no tombstone.
inline const uint8_t* TombRun(const Leaf* l, size_t b, size_t n) {
  const uint8_t* t = l->tomb();
  return (t != nullptr && AnyNonZero(t + b, n)) ? t + b : nullptr;
}

// Root-to-leaf path for in-order leaf iteration (leaves have no sibling links: copy-on-write
// would have to copy the neighbors too).
class LeafPath {
 public:
  // The leaf whose key range holds k; root must be non-null. Reads the inner nodes on the path,
  // never the leaf (the children of a level-1 node are leaves), so a caller may prefetch it.
  const Leaf* Descend(const Node* root, Key k) {
    depth_ = 0;
    const Node* n = root;
    if (n->level == 0) return static_cast<const Leaf*>(n);
    while (true) {
      const Inner* x = static_cast<const Inner*>(n);
      size_t i = ChildFor(x, k);
      node_[depth_] = x;
      idx_[depth_] = static_cast<uint8_t>(i);
      ++depth_;
      n = x->child()[i];
      if (x->level == 1) return static_cast<const Leaf*>(n);
    }
  }
  // The leaf after the current one when both are children of one inner node, else null (read
  // without moving; only the parent is read).
  const Leaf* PeekSibling() const {
    if (depth_ == 0) return nullptr;
    const Inner* x = node_[depth_ - 1];
    const unsigned i = idx_[depth_ - 1] + 1u;
    return i < x->count ? static_cast<const Leaf*>(x->child()[i]) : nullptr;
  }
  // The leaf after the current one, or null.
  const Leaf* NextLeaf() {
    while (depth_ > 0) {
      int d = depth_ - 1;
      if (idx_[d] + 1u < node_[d]->count) {
        ++idx_[d];
        const Node* n = node_[d]->child()[idx_[d]];
        while (n->level > 0) {
          const Inner* x = static_cast<const Inner*>(n);
          node_[depth_] = x;
          idx_[depth_] = 0;
          ++depth_;
          n = x->child()[0];
        }
        return static_cast<const Leaf*>(n);
      }
      --depth_;
    }
    return nullptr;
  }

 private:
  const Inner* node_[kMaxHeight];
  uint8_t idx_[kMaxHeight];
  int depth_ = 0;
};

// Drops one reference; frees the node (and drops its children's references) at zero.
void Unref(NodeAllocator* alloc, const Node* n);

}  // namespace clustered

class ClusteredIndex {
 public:
  static constexpr size_t kLeafCapacity = clustered::kLeafCapacity;

  ClusteredIndex() = default;
  ClusteredIndex(NodeAllocator* alloc, bool weighted)
      : alloc_bits_(reinterpret_cast<uintptr_t>(alloc) | static_cast<uintptr_t>(weighted)) {}
  ClusteredIndex(const ClusteredIndex& o);
  ClusteredIndex(ClusteredIndex&& o) noexcept;
  ClusteredIndex& operator=(const ClusteredIndex& o);
  ClusteredIndex& operator=(ClusteredIndex&& o) noexcept;
  ~ClusteredIndex();

  // A new index with the updates applied; *this is unchanged. ups must be sorted by (u, key),
  // without duplicates, with u < 64. prev (nullable, n entries) receives each key's prior state.
  ClusteredIndex Apply(const ClusteredUpdate* ups, size_t n, PrevState* prev) const;

  // A new index without any entry of u (vertex deletion, or u moving to its own C-ART).
  // *removed (nullable) receives the number of entries removed, tombstones included.
  ClusteredIndex EraseVertex(uint8_t u, size_t* removed) const;

  // A new index where u's run is exactly the given entries (u moving back from a C-ART).
  // keys strictly increasing; w (nullable: weight 1.0) and tomb (nullable: none; else 0/1 bytes).
  ClusteredIndex InsertVertexRun(uint8_t u, const uint64_t* keys, const double* w,
                                 const uint8_t* tomb, size_t n) const;

  // True if (u, v) has an entry (live or tombstone); fills the non-null outputs.
  bool Find(uint8_t u, uint64_t v, double* weight, bool* tombstone) const;

  // u's entries in v order, one call per leaf run:
  //   fn(const uint64_t* v, const double* w, const uint8_t* tomb, size_t n) -> bool (false stops)
  // w is null for an unweighted index; tomb is null when the run holds no tombstone.
  // The same as Seek, FindRun, ScanRun in a row.
  template <class F>
  void ForEachInVertex(uint8_t u, F&& fn) const;

  // ForEachInVertex taken in steps, so that a walk over many vertices can run each step a few
  // vertices ahead of the scan and prefetch what the next step reads (TierReader's range
  // walks): Seek descends to the leaf where u's run starts (reading the inner nodes on the way)
  // and prefetches the leaf's header; PrefetchUColumn prefetches the leaf's u column (reads the
  // header); FindRun finds u's run there (WalkTo from that leaf: reads the u column) and
  // prefetches its first keys (and weights when `weights`); ScanRun scans it. Each step only
  // reads; the steps give the same entries in the same calls as ForEachInVertex whatever is in
  // cache. A RunAt borrows the tree, like a Cursor.
  struct RunAt {
    clustered::LeafPath path;
    const clustered::Leaf* leaf = nullptr;  // null: past the last leaf (or an empty index)
    uint32_t b = 0, e = 0;                  // u's run in leaf: [b, e); b == e: u has none
  };
  void Seek(uint8_t u, RunAt* r) const;
  static void PrefetchUColumn(const RunAt& r);
  static void FindRun(uint8_t u, bool weights, RunAt* r);
  // Scans u's run [b, e) (nothing when b == e) and leaves r where the scan stopped: leaf and
  // b at the run's end (or inside it when fn stopped), leaf null past the last leaf.
  template <class F>
  static void ScanRun(uint8_t u, RunAt* r, F&& fn);

  // A walk: the runs of ascending vertices read with one RunAt, each found from where the one
  // before ended (WalkTo then ScanRun) instead of a Seek per vertex, so a pass over many of
  // the subgraph's vertices descends once and reads each leaf's u column once, in order
  // (docs/benchmarks.md, "Issue 28: the layout's walk"). WalkStart(u, r) places r for a first
  // vertex u; WalkTo(u, r) then finds u's run at or after r's position: [b, e) in leaf, b == e
  // when u has none (leaf null: the walk passed the last leaf). u must exceed every vertex
  // walked before; the calls give the same entries in the same chunks as ForEachInVertex.
  // Each leaf the walk enters is prefetched whole, and the header of the one after it.
  void WalkStart(uint8_t u, RunAt* r) const;
  static void WalkTo(uint8_t u, RunAt* r);

  // All entries in (u, v) order, one call per run of one vertex inside one leaf:
  //   fn(uint8_t u, const uint64_t* v, const double* w, const uint8_t* tomb, size_t n) -> bool
  // A vertex's entries may span several calls; a call never spans two vertices.
  template <class F>
  void ForEachChunk(F&& fn) const;

  // Forward cursor over one vertex's entries in v order (merges, intersections). Borrows the
  // tree: the ClusteredIndex it came from (or a copy of it) must outlive it.
  class Cursor {
   public:
    bool Valid() const { return leaf_ != nullptr; }
    uint64_t key() const { return leaf_->v()[pos_]; }
    double weight() const {
      const double* w = leaf_->w();
      return w != nullptr ? w[pos_] : 1.0;
    }
    bool tombstone() const { return leaf_->ntomb != 0 && leaf_->tomb()[pos_] != 0; }
    void Next() {
      if (++pos_ >= end_) Settle();
    }
    // Moves to the first entry with key >= v; never moves backwards.
    void Seek(uint64_t v) {
      if (leaf_ == nullptr) return;
      const uint64_t* lv = leaf_->v();
      if (lv[pos_] >= v) return;
      if (lv[end_ - 1] >= v) {
        pos_ = static_cast<uint32_t>(clustered::LowerBoundV(lv, pos_ + 1, end_, v));
        return;
      }
      SeekSlow(v);
    }

    // The current chunk: the remaining entries of u's run inside the current leaf, starting at
    // the current entry. Lets callers gallop over arrays instead of stepping entry by entry.
    size_t ChunkSize() const { return end_ - pos_; }
    const uint64_t* ChunkKeys() const { return leaf_->v() + pos_; }
    const double* ChunkWeights() const {  // null if unweighted
      const double* w = leaf_->w();
      return w != nullptr ? w + pos_ : nullptr;
    }
    const uint8_t* ChunkTombs() const {  // null if the leaf holds no tombstone
      const uint8_t* t = leaf_->tomb();
      return t != nullptr ? t + pos_ : nullptr;
    }
    // Advances k <= ChunkSize() entries.
    void Skip(size_t k) {
      pos_ += static_cast<uint32_t>(k);
      if (pos_ >= end_) Settle();
    }

   private:
    friend class ClusteredIndex;
    Cursor(const clustered::Node* root, uint8_t u);
    // From pos_ in leaf_ (pos_ <= count): move to the first entry of u at or after it, or
    // become invalid.
    void Settle();
    // Seek when the target lies beyond the current leaf run.
    void SeekSlow(uint64_t v);

    const clustered::Node* root_;
    const clustered::Leaf* leaf_ = nullptr;
    uint32_t pos_ = 0;
    uint32_t end_ = 0;  // end of u's run inside leaf_
    uint8_t u_;
    clustered::LeafPath path_;
  };
  Cursor NewCursor(uint8_t u) const { return Cursor(root_, u); }

  size_t size() const { return size_; }  // all entries, tombstones included
  bool empty() const { return size_ == 0; }
  // Bytes of the nodes of this version's tree (shared nodes counted in full). Walks the tree:
  // for tests and checks, not for a write path.
  size_t MemoryBytes() const;
  // For prefetching, and to tell trees apart: a tree is immutable.
  const void* root_node() const { return root_; }
  bool weighted() const { return (alloc_bits_ & 1) != 0; }
  NodeAllocator* allocator() const { return reinterpret_cast<NodeAllocator*>(alloc_bits_ & ~uintptr_t{1}); }
  int height() const { return root_ == nullptr ? 0 : root_->level + 1; }

  // Verifies every invariant in the header comment; on failure *why (nullable) says which.
  bool CheckInvariants(std::string* why) const;

 private:
  void Reset();

  // The allocator, with weighted() in bit 0 (a NodeAllocator is at least 8-byte aligned): the
  // index is 24 bytes, part of every subgraph version's header (subgraph.h).
  uintptr_t alloc_bits_ = 0;
  const clustered::Node* root_ = nullptr;
  size_t size_ = 0;
};

// ---- inline scans ----

template <class F>
void ClusteredIndex::ForEachInVertex(uint8_t u, F&& fn) const {
  RunAt r;
  Seek(u, &r);
  FindRun(u, /*weights=*/false, &r);
  ScanRun(u, &r, fn);
}

inline void ClusteredIndex::Seek(uint8_t u, RunAt* r) const {
  using namespace clustered;
  r->leaf = root_ == nullptr ? nullptr : r->path.Descend(root_, MakeKey(u, 0));
  r->b = r->e = 0;
  if (r->leaf != nullptr) coro::Prefetch(r->leaf);
}

inline void ClusteredIndex::PrefetchUColumn(const RunAt& r) {
  if (r.leaf != nullptr) coro::PrefetchRange(r.leaf->u(), r.leaf->count);
}

inline void ClusteredIndex::FindRun(uint8_t u, bool weights, RunAt* r) {
  WalkTo(u, r);  // from the leaf Seek found (u's run starts there or in the next one)
  const clustered::Leaf* l = r->leaf;
  if (l == nullptr || r->b == r->e) return;
  coro::Prefetch(l->v() + r->b);
  if (weights && l->w() != nullptr) coro::Prefetch(l->w() + r->b);
}

namespace clustered {
// A walk entering leaf l (path: its path): l's keys and u column, and the next leaf's header.
inline void EnterLeaf(const Leaf* l, const LeafPath& path) {
  if (l == nullptr) return;
  coro::PrefetchRange(l->u(), l->count);
  coro::PrefetchRange(l->v(), l->count * sizeof(uint64_t));
  if (const Leaf* next = path.PeekSibling(); next != nullptr) coro::Prefetch(next);
}
}  // namespace clustered

inline void ClusteredIndex::WalkStart(uint8_t u, RunAt* r) const {
  Seek(u, r);
  clustered::EnterLeaf(r->leaf, r->path);
}

inline void ClusteredIndex::WalkTo(uint8_t u, RunAt* r) {
  using namespace clustered;
  const Leaf* l = r->leaf;
  size_t b = r->b;
  // Leaves that end before u's run (or where the last run ended) hold nothing of it.
  while (l != nullptr && (b >= l->count || l->u()[l->count - 1] < u)) {
    l = r->path.NextLeaf();
    b = 0;
    EnterLeaf(l, r->path);
  }
  r->leaf = l;
  if (l == nullptr) return;
  size_t rb, re;
  URun(l->u() + b, l->count - b, u, &rb, &re);
  r->b = static_cast<uint32_t>(b + rb);
  r->e = static_cast<uint32_t>(b + re);
}

template <class F>
void ClusteredIndex::ScanRun(uint8_t u, RunAt* r, F&& fn) {
  using namespace clustered;
  const Leaf* l = r->leaf;
  if (l == nullptr) return;
  size_t b = r->b, e = r->e;
  if (b == e) return;
  while (true) {
    const double* w = l->w();
    if (!InvokeScan(fn, l->v() + b, w != nullptr ? w + b : nullptr, TombRun(l, b, e - b), e - b)) {
      break;
    }
    b = e;
    if (e < l->count) break;
    l = r->path.NextLeaf();
    b = 0;
    EnterLeaf(l, r->path);
    if (l == nullptr || l->u()[0] != u) break;
    URun(l->u(), l->count, u, &b, &e);  // b == 0
  }
  r->leaf = l;
  r->b = static_cast<uint32_t>(b);
  r->e = static_cast<uint32_t>(b);
}

template <class F>
void ClusteredIndex::ForEachChunk(F&& fn) const {
  using namespace clustered;
  if (root_ == nullptr) return;
  LeafPath path;
  for (const Leaf* l = path.Descend(root_, 0); l != nullptr; l = path.NextLeaf()) {
    const uint8_t* lu = l->u();
    const uint64_t* lv = l->v();
    const double* w = l->w();
    size_t n = l->count;
    for (size_t b = 0; b < n;) {
      uint8_t u = lu[b];
      size_t e = LowerBoundU(lu, b, n, u + 1u);
      if (!InvokeScan(fn, u, lv + b, w != nullptr ? w + b : nullptr, TombRun(l, b, e - b), e - b)) {
        return;
      }
      b = e;
    }
  }
}

}  // namespace strata::mem
