#include "memgraph/clustered_index.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>


namespace strata::mem {

namespace clustered {

void Unref(NodeAllocator* alloc, const Node* n) {
  if (n->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (n->level > 0) {
    const Inner* x = static_cast<const Inner*>(n);
    for (size_t i = 0; i < x->count; ++i) __builtin_prefetch(x->child()[i], 1);
    for (size_t i = 0; i < x->count; ++i) Unref(alloc, x->child()[i]);
  }
  size_t bytes = n->bytes;
  Node* m = const_cast<Node*>(n);
  std::destroy_at(m);
  alloc->Free(m, bytes);
}

}  // namespace clustered

namespace {

using clustered::ChildFor;
using clustered::Inner;
using clustered::Key;
using clustered::kInnerCapacity;
using clustered::kInnerMergeMax;
using clustered::kInnerMinFill;
using clustered::kLeafCapacity;
using clustered::kLeafMergeMax;
using clustered::kLeafMinFill;
using clustered::kMaxHeight;
using clustered::Leaf;
using clustered::MakeKey;
using clustered::Node;
using clustered::Unref;

inline void Ref(const Node* n) { n->refs.fetch_add(1, std::memory_order_relaxed); }

inline Key KeyOf(const ClusteredUpdate& cu) { return MakeKey(cu.u, cu.upd.key); }

size_t LeafBytes(size_t n, bool weighted, bool tomb) {
  return sizeof(Leaf) + n * (sizeof(uint64_t) + (weighted ? sizeof(double) : 0) + 1 + (tomb ? 1 : 0));
}

size_t InnerBytes(size_t n) { return sizeof(Inner) + Inner::SepOffset(n) + (n - 1) * sizeof(Key); }

// Writable columns of a leaf under construction or of the scratch buffers. w is null when the
// index is unweighted; t is null when no tombstone may be written.
struct Cols {
  uint64_t* v;
  double* w;
  uint8_t* u;
  uint8_t* t;
};

Cols MutableCols(Leaf* l) {
  return {const_cast<uint64_t*>(l->v()), const_cast<double*>(l->w()), const_cast<uint8_t*>(l->u()),
          const_cast<uint8_t*>(l->tomb())};
}

// Copies entries [p, q) of l to out at o. out.t may be null only if that range has no tombstone.
inline void CopyRange(const Leaf* l, size_t p, size_t q, const Cols& out, size_t o) {
  size_t k = q - p;
  std::memcpy(out.v + o, l->v() + p, k * sizeof(uint64_t));
  if (out.w != nullptr) std::memcpy(out.w + o, l->w() + p, k * sizeof(double));
  std::memcpy(out.u + o, l->u() + p, k);
  if (out.t != nullptr) {
    const uint8_t* t = l->tomb();
    if (t != nullptr) {
      std::memcpy(out.t + o, t + p, k);
    } else {
      std::memset(out.t + o, 0, k);
    }
  }
}

// First index i in [p, e) with v[i] >= x, or e: exponential then binary search, so a run of
// nearby updates costs O(log gap) each.
inline size_t Gallop(const uint64_t* v, size_t p, size_t e, uint64_t x) {
  if (p >= e || v[p] >= x) return p;
  size_t lo = p, step = 1;  // invariant: v[lo] < x
  while (true) {
    size_t hi = lo + step;
    if (hi >= e) return clustered::LowerBoundV(v, lo + 1, e, x);
    if (v[hi] >= x) return clustered::LowerBoundV(v, lo + 1, hi, x);
    lo = hi;
    step <<= 1;
  }
}

size_t CountNonZero(const uint8_t* p, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) c += p[i] != 0;
  return c;
}

// An entry of a child list under construction: the child and the lower bound of its key range
// (the separator to its left once placed in a node). Each ChildRef owns one reference.
struct ChildRef {
  Key low;
  const Node* node;
};

// Per-thread buffers reused across calls, so that a typical Apply allocates only its nodes.
struct Scratch {
  std::vector<ChildRef> kids[kMaxHeight];  // kids[L]: children of the level-L node being rebuilt
  std::vector<ChildRef> top, next;         // pieces replacing the root; the level Finish builds
  std::vector<uint32_t> pos;               // per update of one leaf: position << 1 | match
  std::vector<uint64_t> v;                 // merged leaf contents before they are cut into leaves
  std::vector<double> w;
  std::vector<uint8_t> u, t;

  Cols Columns(size_t n, bool weighted) {
    if (v.size() < n) {
      v.resize(n);
      u.resize(n);
      t.resize(n);
    }
    if (weighted && w.size() < n) w.resize(n);
    return {v.data(), weighted ? w.data() : nullptr, u.data(), t.data()};
  }

  // Returns what a bulk load grew beyond a few leaves' worth; this memory is outside the
  // NodeAllocator's accounting.
  void Trim() {
    constexpr size_t kKeep = 8 * kLeafCapacity;
    if (v.capacity() > kKeep) {
      std::vector<uint64_t>().swap(v);
      std::vector<double>().swap(w);
      std::vector<uint8_t>().swap(u);
      std::vector<uint8_t>().swap(t);
    }
    if (pos.capacity() > kKeep) std::vector<uint32_t>().swap(pos);
  }
};

thread_local Scratch tls;

// Builds the new tree of one Apply. Old nodes are never written except for reference counts.
class Builder {
 public:
  Builder(NodeAllocator* alloc, bool weighted) : alloc_(alloc), weighted_(weighted) {}

  // Appends to out the pieces that replace node n (null: the empty tree) after applying
  // ups[lo, hi), all of which lie in n's key range, which starts at low. Pieces may be underfull;
  // the caller combines them.
  void ApplyNode(const Node* n, Key low, const ClusteredUpdate* ups, size_t lo, size_t hi,
                 PrevState* prev, std::vector<ChildRef>& out) {
    if (n == nullptr || n->level == 0) {
      ApplyLeaf(static_cast<const Leaf*>(n), low, ups, lo, hi, prev, out);
    } else {
      ApplyInner(static_cast<const Inner*>(n), low, ups, lo, hi, prev, out);
    }
  }

  // Turns the pieces replacing the old root into the new root (null if empty).
  const Node* Finish(std::vector<ChildRef>& top) {
    while (top.size() > 1) {
      int level = top[0].node->level + 1;
      if (level >= kMaxHeight) {
        std::fprintf(stderr, "ClusteredIndex: height limit exceeded\n");
        std::abort();
      }
      std::vector<ChildRef>& next = tls.next;
      next.clear();
      EmitInners(top, level, next);
      top.swap(next);
    }
    if (top.empty()) return nullptr;
    const Node* root = top[0].node;
    while (root->level > 0 && root->count == 1) {
      const Node* c = static_cast<const Inner*>(root)->child()[0];
      Ref(c);
      Unref(alloc_, root);
      root = c;
    }
    return root;
  }

  int64_t size_delta() const { return size_delta_; }

 private:
  Leaf* NewLeaf(size_t n, size_t ntomb) {
    size_t bytes = LeafBytes(n, weighted_, ntomb > 0);
    Leaf* l = new (alloc_->Allocate(bytes)) Leaf;
    l->refs.store(1, std::memory_order_relaxed);
    l->bytes = static_cast<uint32_t>(bytes);
    l->count = static_cast<uint16_t>(n);
    l->ntomb = static_cast<uint16_t>(ntomb);
    l->level = 0;
    l->flags = weighted_ ? clustered::kWeightedFlag : 0;
    l->reserved = 0;
    return l;
  }

  // A node over kids[0, n), taking over their references.
  const Inner* NewInner(const ChildRef* kids, size_t n, int level) {
    size_t bytes = InnerBytes(n);
    Inner* x = new (alloc_->Allocate(bytes)) Inner;
    x->refs.store(1, std::memory_order_relaxed);
    x->bytes = static_cast<uint32_t>(bytes);
    x->count = static_cast<uint16_t>(n);
    x->ntomb = 0;
    x->level = static_cast<uint8_t>(level);
    x->flags = 0;
    x->reserved = 0;
    const Node** ch = const_cast<const Node**>(x->child());
    Key* sep = const_cast<Key*>(x->sep());
    for (size_t i = 0; i < n; ++i) ch[i] = kids[i].node;
    for (size_t i = 1; i < n; ++i) sep[i - 1] = kids[i].low;
    return x;
  }

  // Removes r from the tree being built (it is not placed in any new node).
  void Drop(const ChildRef& r) {
    Unref(alloc_, r.node);
  }

  // A leaf holding s[b, e) (s.t non-null).
  ChildRef LeafPiece(const Cols& s, size_t b, size_t e, Key low) {
    size_t n = e - b;
    size_t nt = CountNonZero(s.t + b, n);
    Leaf* l = NewLeaf(n, nt);
    Cols d = MutableCols(l);
    std::memcpy(d.v, s.v + b, n * sizeof(uint64_t));
    if (d.w != nullptr) std::memcpy(d.w, s.w + b, n * sizeof(double));
    std::memcpy(d.u, s.u + b, n);
    if (d.t != nullptr) std::memcpy(d.t, s.t + b, n);
    return {low, l};
  }

  void ApplyLeaf(const Leaf* l, Key low, const ClusteredUpdate* ups, size_t lo, size_t hi,
                 PrevState* prev, std::vector<ChildRef>& out) {
    const size_t c = l != nullptr ? l->count : 0;
    const uint8_t* lt = l != nullptr ? l->tomb() : nullptr;
    if (l != nullptr) {
      // The whole leaf is read below (searched, then copied): request all of its cache lines
      // now so that misses on a cold leaf overlap instead of queuing behind each search step.
      coro::PrefetchRange(l, l->bytes);
    }
    std::vector<uint32_t>& pos = tls.pos;
    if (pos.size() < hi - lo) pos.resize(hi - lo);

    // Pass 1: locate each update, record prior states, and size the result exactly.
    size_t m = c;
    size_t nt = l != nullptr ? l->ntomb : 0;
    bool changed = false;
    const uint64_t* lv = l != nullptr ? l->v() : nullptr;
    const uint8_t* lu = l != nullptr ? l->u() : nullptr;
    const double* lw = l != nullptr ? l->w() : nullptr;  // null: unweighted (every weight 1)
    size_t p = 0;        // entries before p precede the remaining updates
    size_t run_end = 0;  // end of the current update vertex's run in l
    int run_u = -1;
    for (size_t j = lo; j < hi; ++j) {
      const ClusteredUpdate& cu = ups[j];
      if (cu.u != run_u) {
        run_u = cu.u;
        size_t b = 0;
        if (c > 0) clustered::URun(lu, c, cu.u, &b, &run_end);
        p = b;
      }
      size_t q = c > 0 ? Gallop(lv, p, run_end, cu.upd.key) : 0;
      bool match = q < run_end && lv[q] == cu.upd.key;
      bool was_tomb = match && lt != nullptr && lt[q] != 0;
      if (prev != nullptr) {
        prev[j] = !match ? PrevState::kAbsent : was_tomb ? PrevState::kTombstone : PrevState::kLive;
      }
      switch (cu.upd.op) {
        case UpdateOp::kPut:
          m += !match;
          nt -= was_tomb;
          // A put over a live entry of the same weight leaves it as it is: a leaf whose
          // updates all do so is kept, not copied (re-put edges; beside a reader's snapshot
          // each copy stays allocated until the reader lets the old leaf go).
          changed |= !match || was_tomb ||
                     (lw != nullptr && !SameWeight(lw[q], cu.upd.weight));
          break;
        case UpdateOp::kTombstone:
          m += !match;
          nt += !was_tomb;
          changed = true;
          break;
        case UpdateOp::kErase:
          m -= match;
          nt -= was_tomb;
          changed |= match;
          break;
      }
      pos[j - lo] = static_cast<uint32_t>(q << 1 | (match ? 1 : 0));
      p = q + match;
    }
    if (!changed) {  // only erases of absent keys and puts that change nothing: keep the leaf
      if (l != nullptr) {
        Ref(l);
        out.push_back({low, l});
      }
      return;
    }
    size_delta_ += static_cast<int64_t>(m) - static_cast<int64_t>(c);
    if (m == 0) return;

    // Pass 2: merge straight into the new leaf, or into scratch when it must be cut.
    if (m <= kLeafCapacity) {
      Leaf* nl = NewLeaf(m, nt);
      Merge(l, ups, lo, hi, pos.data(), MutableCols(nl));
      out.push_back({low, nl});
      return;
    }
    Cols s = tls.Columns(m, weighted_);
    Merge(l, ups, lo, hi, pos.data(), s);
    size_t pieces = (m + kLeafCapacity - 1) / kLeafCapacity;
    for (size_t i = 0; i < pieces; ++i) {
      size_t b = m * i / pieces, e = m * (i + 1) / pieces;
      out.push_back(LeafPiece(s, b, e, i == 0 ? low : MakeKey(s.u[b], s.v[b])));
    }
  }

  // Writes l's entries merged with ups[lo, hi) to out, using the positions from pass 1.
  static void Merge(const Leaf* l, const ClusteredUpdate* ups, size_t lo, size_t hi,
                    const uint32_t* pos, const Cols& out) {
    const size_t c = l != nullptr ? l->count : 0;
    size_t o = 0, p = 0;
    for (size_t j = lo; j < hi; ++j) {
      size_t q = pos[j - lo] >> 1;
      if (q > p) {
        CopyRange(l, p, q, out, o);
        o += q - p;
      }
      p = q + (pos[j - lo] & 1);
      const ClusteredUpdate& cu = ups[j];
      if (cu.upd.op == UpdateOp::kErase) continue;
      out.v[o] = cu.upd.key;
      out.u[o] = cu.u;
      if (out.w != nullptr) out.w[o] = cu.upd.weight;
      if (out.t != nullptr) out.t[o] = cu.upd.op == UpdateOp::kTombstone ? 1 : 0;
      ++o;
    }
    if (c > p) CopyRange(l, p, c, out, o);
  }

  void ApplyInner(const Inner* x, Key low, const ClusteredUpdate* ups, size_t lo, size_t hi,
                  PrevState* prev, std::vector<ChildRef>& out) {
    std::vector<ChildRef>& kids = tls.kids[x->level];
    kids.clear();
    const size_t n = x->count;
    const Node* const* ch = x->child();
    const Key* sep = x->sep();
    auto low_of = [&](size_t i) { return i == 0 ? low : sep[i - 1]; };
    // Nearly every child's count is incremented below, and a locked increment stalls on its
    // miss: fetch the headers for writing first so the misses overlap.
    for (size_t k = 0; k < n; ++k) __builtin_prefetch(ch[k], 1);
    size_t i = 0;
    for (size_t j = lo; j < hi;) {
      size_t ci = ChildFor(x, KeyOf(ups[j]));
      for (; i < ci; ++i) {
        Ref(ch[i]);
        kids.push_back({low_of(i), ch[i]});
      }
      size_t je = hi;
      if (ci + 1 < n) {
        Key bound = sep[ci];
        je = static_cast<size_t>(
            std::lower_bound(ups + j + 1, ups + hi, bound,
                             [](const ClusteredUpdate& a, Key b) { return KeyOf(a) < b; }) -
            ups);
      }
      ApplyNode(ch[ci], low_of(ci), ups, j, je, prev, kids);
      j = je;
      i = ci + 1;
    }
    for (; i < n; ++i) {
      Ref(ch[i]);
      kids.push_back({low_of(i), ch[i]});
    }
    if (kids.size() == n) {  // every child kept as is: keep x
      bool same = true;
      for (size_t k = 0; k < n && same; ++k) same = kids[k].node == ch[k];
      if (same) {
        for (const ChildRef& r : kids) Unref(alloc_, r.node);
        Ref(x);
        out.push_back({low, x});
        return;
      }
    }
    FixUnderflow(kids, x->level - 1);
    EmitInners(kids, x->level, out);
  }

  // Groups kids into ceil(n / kInnerCapacity) even level-`level` nodes appended to out.
  void EmitInners(const std::vector<ChildRef>& kids, int level, std::vector<ChildRef>& out) {
    size_t m = kids.size();
    if (m == 0) return;
    size_t pieces = (m + kInnerCapacity - 1) / kInnerCapacity;
    for (size_t p = 0; p < pieces; ++p) {
      size_t b = m * p / pieces, e = m * (p + 1) / pieces;
      out.push_back({kids[b].low, NewInner(kids.data() + b, e - b, level)});
    }
  }

  // Combines each child under its minimum fill with an adjacent sibling until none is left, or a
  // single child remains (then the parent is underfull and its own parent handles it).
  void FixUnderflow(std::vector<ChildRef>& kids, int child_level) {
    const size_t min_fill = child_level == 0 ? kLeafMinFill : kInnerMinFill;
    size_t i = 0;
    while (kids.size() > 1 && i < kids.size()) {
      if (kids[i].node->count >= min_fill) {
        ++i;
        continue;
      }
      size_t a = i + 1 < kids.size() ? i : i - 1;
      ChildRef pieces[2];
      size_t np = child_level == 0 ? CombineLeaves(kids[a], kids[a + 1], pieces)
                                   : CombineInners(kids[a], kids[a + 1], child_level, pieces);
      kids[a] = pieces[0];
      if (np == 2) {
        kids[a + 1] = pieces[1];
      } else {
        kids.erase(kids.begin() + static_cast<ptrdiff_t>(a) + 1);
      }
      i = a;
    }
  }

  // Replaces adjacent leaves a, b by one leaf (if they hold <= kLeafMergeMax entries) or two
  // evenly filled ones. Returns the number of pieces.
  size_t CombineLeaves(const ChildRef& a, const ChildRef& b, ChildRef* pieces) {
    const Leaf* la = static_cast<const Leaf*>(a.node);
    const Leaf* lb = static_cast<const Leaf*>(b.node);
    size_t na = la->count, n = na + lb->count;
    Key low = a.low;
    Cols s = tls.Columns(n, weighted_);
    CopyRange(la, 0, na, s, 0);
    CopyRange(lb, 0, lb->count, s, na);
    Drop(a);
    Drop(b);
    size_t np = n <= kLeafMergeMax ? 1 : 2;
    for (size_t i = 0; i < np; ++i) {
      size_t pb = n * i / np, pe = n * (i + 1) / np;
      pieces[i] = LeafPiece(s, pb, pe, i == 0 ? low : MakeKey(s.u[pb], s.v[pb]));
    }
    return np;
  }

  // The same for adjacent inner nodes at `level`: their children are pooled (and fixed, as an
  // underfull node may hold underfull children) then regrouped into one or two nodes.
  size_t CombineInners(const ChildRef& a, const ChildRef& b, int level, ChildRef* pieces) {
    std::vector<ChildRef> list;
    list.reserve(a.node->count + b.node->count);
    for (const ChildRef* r : {&a, &b}) {
      const Inner* x = static_cast<const Inner*>(r->node);
      for (size_t i = 0; i < x->count; ++i) {
        Ref(x->child()[i]);
        list.push_back({i == 0 ? r->low : x->sep()[i - 1], x->child()[i]});
      }
    }
    Drop(a);
    Drop(b);
    FixUnderflow(list, level - 1);
    size_t m = list.size();
    size_t np = m <= kInnerMergeMax ? 1 : 2;
    for (size_t i = 0; i < np; ++i) {
      size_t pb = m * i / np, pe = m * (i + 1) / np;
      pieces[i] = {list[pb].low, NewInner(list.data() + pb, pe - pb, level)};
    }
    return np;
  }

  NodeAllocator* const alloc_;
  const bool weighted_;
  int64_t size_delta_ = 0;
};

struct CheckState {
  bool weighted;
  size_t entries = 0;
  std::string err;
};

std::string KeyString(Key k) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "(%u, %llu)", static_cast<unsigned>(k >> 64),
                static_cast<unsigned long long>(static_cast<uint64_t>(k)));
  return buf;
}

// Checks the subtree at n, whose keys must lie in [lo, hi).
bool CheckNode(const Node* n, Key lo, Key hi, bool is_root, int level, CheckState& st) {
  auto fail = [&](const std::string& what) {
    st.err = what + " (level " + std::to_string(n->level) + ", range " + KeyString(lo) + ".." +
             KeyString(hi) + ")";
    return false;
  };
  if (n->refs.load(std::memory_order_relaxed) == 0) return fail("node with zero refs");
  if (level >= 0 && n->level != level) return fail("level mismatch");
  if (n->level == 0) {
    const Leaf* l = static_cast<const Leaf*>(n);
    if (l->count == 0 || l->count > kLeafCapacity) return fail("leaf count out of range");
    if (!is_root && l->count < kLeafMinFill) return fail("leaf underfull");
    if (l->weighted() != st.weighted) return fail("leaf weighted flag");
    if (l->bytes != LeafBytes(l->count, st.weighted, l->ntomb > 0)) return fail("leaf bytes");
    const uint8_t* t = l->tomb();
    size_t nt = 0;
    for (size_t i = 0; i < l->count; ++i) {
      if (l->u()[i] >= clustered::kVertices) return fail("u out of range");
      Key k = l->key(i);
      if (k < lo || k >= hi) return fail("key " + KeyString(k) + " outside its range");
      if (i > 0 && l->key(i - 1) >= k) return fail("leaf keys not strictly increasing");
      if (t != nullptr) {
        if (t[i] > 1) return fail("tomb byte not 0/1");
        nt += t[i];
      }
    }
    if (nt != l->ntomb) return fail("ntomb mismatch");
    st.entries += l->count;
    return true;
  }
  const Inner* x = static_cast<const Inner*>(n);
  if (x->count > kInnerCapacity) return fail("inner count over capacity");
  if (x->count < (is_root ? 2u : kInnerMinFill)) return fail("inner underfull");
  if (x->ntomb != 0) return fail("inner ntomb");
  if (x->bytes != InnerBytes(x->count)) return fail("inner bytes");
  const Key* sep = x->sep();
  for (size_t i = 1; i + 1 < x->count; ++i) {
    if (sep[i - 1] >= sep[i]) return fail("separators not increasing");
  }
  for (size_t i = 0; i < x->count; ++i) {
    Key clo = i == 0 ? lo : sep[i - 1];
    Key chi = i + 1 == x->count ? hi : sep[i];
    if (clo >= chi) return fail("empty child range");
    if (!CheckNode(x->child()[i], clo, chi, false, x->level - 1, st)) return false;
  }
  return true;
}

}  // namespace

// ---- ClusteredIndex ----

static_assert(alignof(NodeAllocator) >= 2, "ClusteredIndex keeps weighted() in bit 0 of the pointer");

ClusteredIndex::ClusteredIndex(const ClusteredIndex& o)
    : alloc_bits_(o.alloc_bits_), root_(o.root_), size_(o.size_) {
  if (root_ != nullptr) Ref(root_);
}

ClusteredIndex::ClusteredIndex(ClusteredIndex&& o) noexcept
    : alloc_bits_(o.alloc_bits_), root_(o.root_), size_(o.size_) {
  o.root_ = nullptr;
  o.size_ = 0;
}

ClusteredIndex& ClusteredIndex::operator=(const ClusteredIndex& o) {
  if (this == &o) return *this;
  if (o.root_ != nullptr) Ref(o.root_);
  Reset();
  alloc_bits_ = o.alloc_bits_;
  root_ = o.root_;
  size_ = o.size_;
  return *this;
}

ClusteredIndex& ClusteredIndex::operator=(ClusteredIndex&& o) noexcept {
  if (this != &o) {
    Reset();
    alloc_bits_ = o.alloc_bits_;
    root_ = o.root_;
    size_ = o.size_;
    o.root_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

ClusteredIndex::~ClusteredIndex() { Reset(); }

void ClusteredIndex::Reset() {
  if (root_ != nullptr) Unref(allocator(), root_);
  root_ = nullptr;
  size_ = 0;
}

ClusteredIndex ClusteredIndex::Apply(const ClusteredUpdate* ups, size_t n, PrevState* prev) const {
  if (n == 0) return *this;
  NodeAllocator* const alloc = allocator();
  bool ok = alloc != nullptr;
  for (size_t i = 0; ok && i < n; ++i) {
    ok = ups[i].u < clustered::kVertices && (i == 0 || KeyOf(ups[i - 1]) < KeyOf(ups[i]));
  }
  if (!ok) {
    std::fprintf(stderr, "ClusteredIndex::Apply: no allocator, or updates not sorted and unique\n");
    std::abort();
  }
  Builder b(alloc, weighted());
  std::vector<ChildRef>& top = tls.top;
  top.clear();
  b.ApplyNode(root_, MakeKey(0, 0), ups, 0, n, prev, top);
  ClusteredIndex r(alloc, weighted());
  r.root_ = b.Finish(top);
  tls.Trim();
  r.size_ = static_cast<size_t>(static_cast<int64_t>(size_) + b.size_delta());
  return r;
}

ClusteredIndex ClusteredIndex::EraseVertex(uint8_t u, size_t* removed) const {
  std::vector<ClusteredUpdate> ups;
  ForEachInVertex(u, [&](const uint64_t* v, const double*, const uint8_t*, size_t n) {
    for (size_t i = 0; i < n; ++i) ups.push_back({u, Update{v[i], 0.0, UpdateOp::kErase}});
    return true;
  });
  if (removed != nullptr) *removed = ups.size();
  return Apply(ups.data(), ups.size(), nullptr);
}

ClusteredIndex ClusteredIndex::InsertVertexRun(uint8_t u, const uint64_t* keys, const double* w,
                                               const uint8_t* tomb, size_t n) const {
  std::vector<uint64_t> old;
  ForEachInVertex(u, [&](const uint64_t* v, const double*, const uint8_t*, size_t k) {
    old.insert(old.end(), v, v + k);
    return true;
  });
  std::vector<ClusteredUpdate> ups;
  ups.reserve(old.size() + n);
  size_t i = 0, j = 0;
  while (i < old.size() || j < n) {
    if (j == n || (i < old.size() && old[i] < keys[j])) {
      ups.push_back({u, Update{old[i++], 0.0, UpdateOp::kErase}});
      continue;
    }
    if (i < old.size() && old[i] == keys[j]) ++i;
    bool t = tomb != nullptr && tomb[j] != 0;
    ups.push_back({u, Update{keys[j], w != nullptr ? w[j] : 1.0,
                             t ? UpdateOp::kTombstone : UpdateOp::kPut}});
    ++j;
  }
  return Apply(ups.data(), ups.size(), nullptr);
}

bool ClusteredIndex::Find(uint8_t u, uint64_t v, double* weight, bool* tombstone) const {
  if (root_ == nullptr) return false;
  Key k = MakeKey(u, v);
  const Node* n = root_;
  while (n->level > 0) {
    const Inner* x = static_cast<const Inner*>(n);
    n = x->child()[ChildFor(x, k)];
  }
  const Leaf* l = static_cast<const Leaf*>(n);
  size_t b, e;
  clustered::URun(l->u(), l->count, u, &b, &e);
  size_t i = clustered::LowerBoundV(l->v(), b, e, v);
  if (i == e || l->v()[i] != v) return false;
  if (weight != nullptr) *weight = l->weighted() ? l->w()[i] : 1.0;
  if (tombstone != nullptr) *tombstone = l->ntomb != 0 && l->tomb()[i] != 0;
  return true;
}

namespace {
size_t SubtreeBytes(const Node* n) {
  size_t bytes = n->bytes;
  if (n->level == 0) return bytes;
  const Inner* x = static_cast<const Inner*>(n);
  for (size_t i = 0; i < x->count; ++i) bytes += SubtreeBytes(x->child()[i]);
  return bytes;
}
}  // namespace

size_t ClusteredIndex::MemoryBytes() const { return root_ == nullptr ? 0 : SubtreeBytes(root_); }

bool ClusteredIndex::CheckInvariants(std::string* why) const {
  CheckState st;
  st.weighted = weighted();
  bool ok = true;
  if (root_ != nullptr) {
    ok = CheckNode(root_, MakeKey(0, 0), MakeKey(clustered::kVertices, 0), true, -1, st);
  }
  if (ok && st.entries != size_) {
    st.err = "size() " + std::to_string(size_) + " != entries " + std::to_string(st.entries);
    ok = false;
  }
  if (!ok && why != nullptr) *why = st.err;
  return ok;
}

// ---- Cursor ----

ClusteredIndex::Cursor::Cursor(const Node* root, uint8_t u) : root_(root), u_(u) {
  if (root == nullptr) return;
  leaf_ = path_.Descend(root, MakeKey(u, 0));
  size_t b, e;
  clustered::URun(leaf_->u(), leaf_->count, u, &b, &e);
  if (b == e) {  // u starts in the next leaf if this one ends before it, else u is empty
    if (b < leaf_->count) {
      leaf_ = nullptr;
      return;
    }
    pos_ = end_ = leaf_->count;
    Settle();
    return;
  }
  pos_ = static_cast<uint32_t>(b);
  end_ = static_cast<uint32_t>(e);
}

void ClusteredIndex::Cursor::Settle() {
  if (end_ < leaf_->count) {  // u's run ended inside this leaf
    leaf_ = nullptr;
    return;
  }
  leaf_ = path_.NextLeaf();
  if (leaf_ == nullptr || leaf_->u()[0] != u_) {
    leaf_ = nullptr;
    return;
  }
  size_t b, e;
  clustered::URun(leaf_->u(), leaf_->count, u_, &b, &e);
  pos_ = 0;
  end_ = static_cast<uint32_t>(e);
}

void ClusteredIndex::Cursor::SeekSlow(uint64_t v) {
  if (end_ < leaf_->count) {  // u's run ends inside this leaf, below v
    leaf_ = nullptr;
    return;
  }
  // The leaf whose range holds (u, v); if its part of u's run is all below v, the first entry of
  // the next leaf (if still u's) is the answer.
  leaf_ = path_.Descend(root_, MakeKey(u_, v));
  size_t b, e;
  clustered::URun(leaf_->u(), leaf_->count, u_, &b, &e);
  size_t p = clustered::LowerBoundV(leaf_->v(), b, e, v);
  if (p < e) {
    pos_ = static_cast<uint32_t>(p);
    end_ = static_cast<uint32_t>(e);
    return;
  }
  if (e < leaf_->count) {
    leaf_ = nullptr;
    return;
  }
  pos_ = end_ = leaf_->count;
  Settle();
}

}  // namespace strata::mem
