// CArt: the compressed adaptive radix tree holding the neighbor set of one high-degree vertex in
// the memgraph (RapidStore §6.2), immutable and copy-on-write, with reference-counted nodes
// (RapidStore §6.4).
//
// Keys are uint64_t destination IDs ordered by value; the radix path reads them big-endian, byte
// d being bits [56-8d, 64-8d). Each entry carries a tombstone flag and, in a weighted tree, a
// double weight (an unweighted tree reads 1.0). A tombstone's weight is the one given with its
// kTombstone update.
//
// Layout (all nodes come from the tree's NodeAllocator; every node starts with Node):
//   Inner (80 bytes + 8 per child): dispatches on key byte `depth` (0..6). `prefix` holds key
//     bytes [0, depth) shared by every key below (path compression; other bytes zero). Two
//     256-bit bitmaps: present[c] = slot c is non-empty, starts[c] = slot c begins a child's run.
//     A run is a maximal range of consecutive present slots served by one child; the children
//     array holds one pointer per run in slot order, so child of slot c is
//     children[rank(starts, c) - 1]. A leaf may serve a run of several slots (leaf compression:
//     "several keys of a node point to the same leaf"); an inner child serves exactly one slot.
//   Leaf (24-byte header + columns), up to kLeafCapacity (B = 512) entries in key order:
//     lcp/depth = the longest common prefix of its keys, in whole bytes, capped at 7.
//     Array leaf: each key stored as its (8 - depth)-byte suffix, little-endian, packed; the
//       column is padded so an 8-byte load at any entry stays inside it.
//     Bitmap leaf: depth == 7 and count >= kMinBitmapCount: a 256-bit bitmap of last bytes.
//     Then, if weighted, a column of count doubles; then, only if ntomb > 0, a bitmap of
//     ceil(count / 64) words marking tombstones.
//
// Invariants (CheckInvariants verifies all of them):
//   - Keys strictly increase in DFS order; size()/live_size() count the entries / non-tombstones.
//   - Inner: depth in (parent depth, 6]; >= 2 children; starts is a subset of present;
//     popcount(starts) == count. A leaf child's run is exactly [byte_d(min key), byte_d(max key)];
//     an inner child's run is the single slot of its keys' byte.
//   - Leaf: 1 <= count <= B; its form is canonical for its keys (bitmap iff depth == 7 and
//     count >= kMinBitmapCount). Under a depth-6 node, a leaf serving several slots holds fewer
//     than kDenseGroup keys per slot: denser last-byte groups get a bitmap leaf of their own.
//   - refs >= 1 = the number of parents (in any version) plus roots referring to the node.
//   - Pending updates (if any): 1 <= n <= kMaxPending, keys strictly increasing, made for this
//     version's root; their cached counts, once set, are the view's; pending() == their n (0
//     without them).
//
// Updates copy only the root-to-leaf paths they change: the new version's fresh nodes take one
// reference on every child they share with older versions. Leaves split when they exceed B
// (at the first slot whose offset reaches the target size; a leaf serving a single slot becomes
// a new path-compressed inner node at the keys' LCP), and a leaf that a delete leaves under B/2
// merges with an adjacent sibling leaf when the result fits. An inner node left with one child
// is replaced by it.
//
// Thread safety: a published tree is immutable, so any number of threads may read it without
// locks. Reference counts are atomic, so versions sharing nodes can be copied and destroyed on
// different threads. Deriving versions of one tree (Apply) must be serialized by the caller.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "memgraph/node_allocator.h"
#include "memgraph/update.h"
#include "strata/function_ref.h"

namespace strata::mem {

namespace cart_detail {

static_assert(std::endian::native == std::endian::little, "suffix columns are little-endian");

inline constexpr int kLeafCapacity = 512;  // B
// A depth-7 leaf with this many keys is a bitmap leaf (then no larger than the array form).
inline constexpr int kMinBitmapCount = 25;
// Under a depth-6 node, a last-byte group this large gets its own (bitmap) leaf.
inline constexpr int kDenseGroup = 32;

enum Kind : uint8_t { kInner = 1, kArrayLeaf = 2, kBitmapLeaf = 3 };

struct Node {
  std::atomic<uint32_t> refs;
  uint8_t kind;
  uint8_t depth;   // inner: the key byte it dispatches on; leaf: LCP length in bytes
  uint16_t count;  // inner: children; leaf: entries
};
static_assert(sizeof(Node) == 8);

struct Inner {
  Node h;
  uint64_t prefix;
  uint64_t present[4];
  uint64_t starts[4];
  // Node* children[h.count] follow.
};
static_assert(sizeof(Inner) == 80);

struct Leaf {
  Node h;
  uint8_t width;     // array leaf: suffix bytes (8 - depth); bitmap leaf: 0
  uint8_t weighted;  // 1 if the weight column exists
  uint16_t ntomb;    // tombstones; the tombstone bitmap exists iff ntomb > 0
  uint32_t bytes;    // allocation size
  uint64_t lcp;      // key bytes [0, depth) shared by all entries; other bytes zero
  // key column, [weights], [tombstone bitmap] follow.
};
static_assert(sizeof(Leaf) == 24);

inline uint64_t PrefixMask(int depth) { return depth == 0 ? 0 : ~uint64_t{0} << (64 - 8 * depth); }
inline int ByteAt(uint64_t key, int depth) { return static_cast<int>((key >> (56 - 8 * depth)) & 0xff); }

inline Node* const* Children(const Inner* n) { return reinterpret_cast<Node* const*>(n + 1); }
inline Node** Children(Inner* n) { return reinterpret_cast<Node**>(n + 1); }

inline size_t KeyColumnBytes(size_t count, int width) {
  return width == 0 ? 32 : (count * width + (8 - width) + 7) & ~size_t{7};
}
inline const unsigned char* LeafKeys(const Leaf* l) {
  return reinterpret_cast<const unsigned char*>(l + 1);
}
inline const double* LeafWeights(const Leaf* l) {
  if (!l->weighted) return nullptr;
  return reinterpret_cast<const double*>(LeafKeys(l) + KeyColumnBytes(l->h.count, l->width));
}
inline const uint64_t* LeafTombs(const Leaf* l) {
  if (l->ntomb == 0) return nullptr;
  return reinterpret_cast<const uint64_t*>(LeafKeys(l) + KeyColumnBytes(l->h.count, l->width) +
                                           (l->weighted ? 8 * size_t{l->h.count} : 0));
}

// Suffix i of an array leaf whose suffixes are w bytes wide.
inline uint64_t LoadSuffix(const unsigned char* p, size_t i, int w) {
  switch (w) {
    case 1:
      return p[i];
    case 2: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p + w * i, 8);
      return v & ((uint64_t{1} << (8 * w)) - 1);
    }
  }
}

// Drops one reference; at zero frees the node and drops its children's references.
void Unref(NodeAllocator* alloc, Node* n);

// A large tree's pending updates (CArt::Apply): n updates sorted by key, keys unique, laid over
// the one tree they were made for. Reference-counted like a node; once published only
// `resolved` is written (set once, to the one value it can have).
// Layout: this header, uint64_t keys[n], then (weighted) double weights[n], then UpdateOp ops[n].
struct Pending {
  std::atomic<uint32_t> refs;
  uint32_t n;
  uint8_t weighted;
  // The view's {entries, live} (tree and these updates), packed high/low, once a reader has
  // resolved them against the tree (CArt::size); kUnresolved until then. A Pending belongs to
  // one tree, so the value never changes once set.
  std::atomic<uint64_t> resolved;
  static constexpr uint64_t kUnresolved = ~uint64_t{0};

  const uint64_t* keys() const { return reinterpret_cast<const uint64_t*>(this + 1); }
  uint64_t* keys() { return reinterpret_cast<uint64_t*>(this + 1); }
  const double* weights() const {
    return weighted ? reinterpret_cast<const double*>(keys() + n) : nullptr;
  }
  double* weights() { return weighted ? reinterpret_cast<double*>(keys() + n) : nullptr; }
  const UpdateOp* ops() const {
    return reinterpret_cast<const UpdateOp*>(keys() + (weighted ? 2 * size_t{n} : n));
  }
  UpdateOp* ops() { return reinterpret_cast<UpdateOp*>(keys() + (weighted ? 2 * size_t{n} : n)); }
};
static_assert(sizeof(Pending) == 24);
static_assert(static_cast<uint8_t>(UpdateOp::kPut) == 0 &&
                  static_cast<uint8_t>(UpdateOp::kTombstone) != 0,
              "a tombstone's op byte doubles as a chunk's tombstone flag");

// For tests: the leaf splices (an update's put spliced into a copy of an array leaf instead of
// the leaf decoded, merged and packed again; cart.cc, SpliceLeaf) this thread has done, and a
// process-wide switch that turns them off, to compare the two paths.
uint64_t LeafSplicesForTesting();
void SetLeafSpliceForTesting(bool on);
// For tests: the Applies this thread has answered with pending updates (CArt::Apply).
uint64_t KeptPendingForTesting();

}  // namespace cart_detail

class CArt {
 public:
  static constexpr size_t kLeafCapacity = cart_detail::kLeafCapacity;

  CArt() = default;  // empty, without an allocator (Apply on it must not insert)
  CArt(NodeAllocator* alloc, bool weighted) : alloc_(alloc), weighted_(weighted) {}
  CArt(const CArt& o);
  CArt& operator=(const CArt& o);
  CArt(CArt&& o) noexcept;
  CArt& operator=(CArt&& o) noexcept;
  ~CArt();

  // A new version with `updates` applied (sorted by key, keys unique); *this is unchanged.
  // Each affected root-to-leaf path is copied once for the whole batch. prev (nullable)
  // receives, per update, the state of its entry before it.
  //
  // Pending updates. Without prev, a tree of s entries keeps up to PendingCapacity(s) updates
  // pending instead: sorted beside the tree (shared by the versions that follow, the tree
  // untouched), and applied to it together once an Apply would pass that (or with prev). A
  // large tree's leaves outnumber what one batch touches, so each update would copy a leaf of
  // up to B entries; pending, a leaf is copied once for about PendingCapacity / leaves updates
  // (docs/design.md, "A hub's pending updates").
  CArt Apply(const Update* updates, size_t n, PrevState* prev) const;
  // tree_entries / kTreeEntriesPerPending, 0 below kMinPending, at most kMaxPending.
  static size_t PendingCapacity(size_t tree_entries);
  static constexpr size_t kTreeEntriesPerPending = 32;
  static constexpr size_t kMinPending = 8;
  static constexpr size_t kMaxPending = 4096;
  // For tests: process-wide, the capacity made tree_entries * multiplier /
  // tree_entries_per_pending, 0 below min_pending (small trees keep updates pending, so the
  // tier's tests reach that path); (0, 0) restores the constants above.
  static void SetPendingForTesting(size_t tree_entries_per_pending, size_t min_pending,
                                   size_t multiplier = 1);

  // Bulk load: keys strictly increasing; weights nullable (1.0); tomb nullable (no tombstones).
  // Leaves are filled up to B entries.
  static CArt BuildSorted(NodeAllocator* alloc, bool weighted, const uint64_t* keys,
                          const double* weights, const bool* tomb, size_t n);

  // False if key has no entry in the view (the tree with its pending updates); otherwise fills
  // the non-null outputs.
  bool Find(uint64_t key, double* weight, bool* tombstone) const;

  // The view's entries (tombstones included) and live entries. With pending updates the first
  // call on a version resolves them against the tree (a cursor pass over the tree's leaves
  // they fall in), kept in the Pending for later calls.
  size_t size() const { return pending_ == nullptr ? size_ : Resolved() >> 32; }
  size_t live_size() const { return pending_ == nullptr ? live_ : Resolved() & 0xffffffffu; }
  // The tree's alone, without pending updates: O(1).
  size_t tree_size() const { return size_; }
  size_t tree_live_size() const { return live_; }
  // Read from this object, not the pending array: a writer's shrink check asks it of every
  // hub it touches, and the array is a cold line by then.
  size_t pending() const { return pending_n_; }
  bool empty() const { return size() == 0; }
  bool weighted() const { return weighted_; }
  NodeAllocator* allocator() const { return alloc_; }

  // All entries of the view in key order, a call per leaf (or per run between pending keys):
  //   fn(const uint64_t* keys, const double* w, const uint8_t* tomb, size_t n) -> bool or void
  // keys are full IDs; w is null when unweighted; tomb is null when the leaf holds no
  // tombstone, else tomb[i] != 0 marks one. Returning false stops the scan.
  template <class F>
  void ForEachChunk(F&& fn) const {
    using R = std::invoke_result_t<F&, const uint64_t*, const double*, const uint8_t*, size_t>;
    if constexpr (std::is_void_v<R>) {
      auto wrap = [&fn](const uint64_t* k, const double* w, const uint8_t* t, size_t n) {
        fn(k, w, t, n);
        return true;
      };
      ForEachChunkImpl(ChunkFn(wrap));
    } else {
      auto wrap = [&fn](const uint64_t* k, const double* w, const uint8_t* t, size_t n) {
        return static_cast<bool>(fn(k, w, t, n));
      };
      ForEachChunkImpl(ChunkFn(wrap));
    }
  }

  // Forward cursor over the tree's entries, not its pending updates (tests, and resolving
  // those). Borrows the tree: the CArt it came from (or a copy of it) must outlive it.
  class Cursor {
   public:
    Cursor() = default;
    bool Valid() const { return leaf_ != nullptr; }
    uint64_t key() const { return key_; }
    double weight() const { return weights_ != nullptr ? weights_[pos_] : 1.0; }
    bool tombstone() const {
      return tombs_ != nullptr && ((tombs_[pos_ >> 6] >> (pos_ & 63)) & 1) != 0;
    }
    void Next() {
      if (++pos_ < count_) {
        key_ = width_ == 0 ? NextBitmapKey() : lcp_ | cart_detail::LoadSuffix(keys_, pos_, width_);
      } else {
        NextLeaf();
      }
    }
    // Moves to the first entry with key >= `key` at or after the current one (never moves
    // backwards, like ClusteredIndex::Cursor). Invalid if there is none.
    void Seek(uint64_t key) {
      if (leaf_ == nullptr || key_ >= key) return;
      if (key <= last_) {
        SeekInLeaf(key);
      } else {
        SeekSlow(key);
      }
    }

   private:
    friend class CArt;
    explicit Cursor(const cart_detail::Node* root);
    uint64_t NextBitmapKey() const {
      const uint64_t* bits = reinterpret_cast<const uint64_t*>(keys_);
      const int b = static_cast<int>(key_ & 0xff) + 1;  // <= 255: an entry follows
      int w = b >> 6;
      uint64_t x = bits[w] & (~uint64_t{0} << (b & 63));
      while (x == 0) x = bits[++w];
      return lcp_ | static_cast<uint64_t>(w * 64 + std::countr_zero(x));
    }
    void EnterLeaf(const cart_detail::Leaf* l, uint32_t pos, uint64_t key);
    void DescendFirst(const cart_detail::Node* n);
    void NextLeaf();
    void SeekInLeaf(uint64_t key);  // key in (key_, last_]
    void SeekSlow(uint64_t key);    // key > last_

    const cart_detail::Node* root_ = nullptr;
    const cart_detail::Leaf* leaf_ = nullptr;
    const unsigned char* keys_ = nullptr;
    const double* weights_ = nullptr;
    const uint64_t* tombs_ = nullptr;
    uint64_t lcp_ = 0;
    uint64_t key_ = 0;
    uint64_t last_ = 0;  // last key of leaf_
    uint32_t pos_ = 0;
    uint32_t count_ = 0;
    uint8_t width_ = 0;
    uint8_t sp_ = 0;
    uint16_t idx_[8] = {};
    const cart_detail::Inner* path_[8] = {};  // inner nodes from the root; idx_ = child taken
  };
  // Positioned at the tree's first entry (invalid if the tree is empty).
  Cursor NewTreeCursor() const;

  // Bytes of the nodes reachable from this version and of its pending updates (shared ones
  // counted in full). O(nodes).
  size_t MemoryBytes() const;

  struct Shape {
    size_t inner_nodes = 0;
    size_t leaves = 0;
    size_t bitmap_leaves = 0;
    size_t multi_slot_leaves = 0;  // leaves serving a run of more than one slot
    size_t height = 0;             // nodes on the longest root-to-leaf path
  };
  Shape GetShape() const;

  // Verifies every invariant listed at the top of this file; on failure *why (nullable) says
  // which.
  bool CheckInvariants(std::string* why) const;

  // For prefetching: the root node's address.
  const void* root_node() const { return root_; }

 private:
  using ChunkFn = FunctionRef<bool(const uint64_t*, const double*, const uint8_t*, size_t)>;
  void ForEachChunkImpl(ChunkFn fn) const;
  uint64_t Resolved() const;  // the view's counts, packed as Pending::resolved
  CArt ApplyToTree(const Update* updates, size_t n, PrevState* prev) const;
  void Release();

  NodeAllocator* alloc_ = nullptr;
  cart_detail::Node* root_ = nullptr;
  cart_detail::Pending* pending_ = nullptr;  // null when none; made for root_
  size_t size_ = 0;  // the tree's
  size_t live_ = 0;
  bool weighted_ = false;
  uint32_t pending_n_ = 0;  // pending_->n, 0 without pending_
};

}  // namespace strata::mem
