#include "memgraph/cart.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <new>
#include <utility>
#include <vector>

#include "util/coro.h"

namespace strata::mem {

using namespace cart_detail;

namespace {

constexpr size_t kB = kLeafCapacity;

inline Inner* AsInner(Node* n) { return reinterpret_cast<Inner*>(n); }
inline const Inner* AsInner(const Node* n) { return reinterpret_cast<const Inner*>(n); }
inline Leaf* AsLeaf(Node* n) { return reinterpret_cast<Leaf*>(n); }
inline const Leaf* AsLeaf(const Node* n) { return reinterpret_cast<const Leaf*>(n); }
inline bool IsLeaf(const Node* n) { return n->kind != kInner; }
inline void Ref(Node* n) { n->refs.fetch_add(1, std::memory_order_relaxed); }

inline size_t InnerBytes(size_t children) { return sizeof(Inner) + children * sizeof(Node*); }

inline int CommonPrefixBytes(uint64_t a, uint64_t b) {
  const uint64_t x = a ^ b;
  return x == 0 ? 8 : std::countl_zero(x) >> 3;
}

inline bool TestBit(const uint64_t* b, size_t i) { return ((b[i >> 6] >> (i & 63)) & 1) != 0; }
inline void SetBit(uint64_t* b, size_t i) { b[i >> 6] |= uint64_t{1} << (i & 63); }
inline void SetRange(uint64_t* b, int lo, int hi) {
  for (int i = lo; i <= hi;) {
    const int w = i >> 6;
    const int end = std::min(hi, w * 64 + 63);
    const int n = end - i + 1;
    b[w] |= (n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1)) << (i & 63);
    i = end + 1;
  }
}
// Set bits of the 256-bit map b at positions <= i.
inline int RankInclusive(const uint64_t* b, int i) {
  const int w = i >> 6;
  int r = 0;
  for (int j = 0; j < w; ++j) r += std::popcount(b[j]);
  return r + std::popcount(b[w] & (~uint64_t{0} >> (63 - (i & 63))));
}
// First set bit of the 256-bit map b at a position >= i, or 256.
inline int NextSetBit(const uint64_t* b, int i) {
  if (i >= 256) return 256;
  int w = i >> 6;
  uint64_t x = b[w] & (~uint64_t{0} << (i & 63));
  while (x == 0) {
    if (++w == 4) return 256;
    x = b[w];
  }
  return w * 64 + std::countr_zero(x);
}
inline int LastSetBit(const uint64_t* b) {
  for (int w = 3; w >= 0; --w) {
    if (b[w] != 0) return w * 64 + 63 - std::countl_zero(b[w]);
  }
  return -1;
}
// Last slot of the run starting at slot s of `in`.
inline int RunEnd(const Inner* in, int s) {
  for (int i = s + 1; i < 256;) {
    const int w = i >> 6;
    const uint64_t cont = in->present[w] & ~in->starts[w];
    const uint64_t x = ~cont & (~uint64_t{0} << (i & 63));
    if (x != 0) return w * 64 + std::countr_zero(x) - 1;
    i = (w + 1) * 64;
  }
  return 255;
}

// ---- suffix columns, specialized per width ----

template <int W>
inline uint64_t Load(const unsigned char* p, size_t i) {
  if constexpr (W == 1) {
    return p[i];
  } else if constexpr (W == 2 || W == 4 || W == 8) {
    std::conditional_t<W == 2, uint16_t, std::conditional_t<W == 4, uint32_t, uint64_t>> v;
    std::memcpy(&v, p + W * i, W);
    return v;
  } else {
    uint64_t v;
    std::memcpy(&v, p + W * i, 8);
    return v & ((uint64_t{1} << (8 * W)) - 1);
  }
}

template <class F>
inline decltype(auto) WithWidth(int w, F&& f) {
  switch (w) {
    case 1: return f(std::integral_constant<int, 1>());
    case 2: return f(std::integral_constant<int, 2>());
    case 3: return f(std::integral_constant<int, 3>());
    case 4: return f(std::integral_constant<int, 4>());
    case 5: return f(std::integral_constant<int, 5>());
    case 6: return f(std::integral_constant<int, 6>());
    case 7: return f(std::integral_constant<int, 7>());
    default: return f(std::integral_constant<int, 8>());
  }
}

// First index in [0, n) whose suffix is >= s, or n.
template <int W>
inline size_t LowerBound(const unsigned char* p, size_t n, uint64_t s) {
  size_t base = 0;
  while (n > 1) {
    const size_t half = n / 2;
    base = Load<W>(p, base + half) < s ? base + half : base;
    n -= half;
  }
  return n == 0 ? 0 : base + (Load<W>(p, base) < s);
}

size_t DecodeKeys(const Leaf* l, uint64_t* out) {
  const size_t n = l->h.count;
  const uint64_t lcp = l->lcp;
  const unsigned char* p = LeafKeys(l);
  if (l->h.kind == kBitmapLeaf) {
    const uint64_t* bits = reinterpret_cast<const uint64_t*>(p);
    size_t o = 0;
    for (int w = 0; w < 4; ++w) {
      for (uint64_t x = bits[w]; x != 0; x &= x - 1) {
        out[o++] = lcp | static_cast<uint64_t>(w * 64 + std::countr_zero(x));
      }
    }
    return n;
  }
  WithWidth(l->width, [&](auto wc) {
    constexpr int W = decltype(wc)::value;
    for (size_t i = 0; i < n; ++i) out[i] = lcp | Load<W>(p, i);
  });
  return n;
}

void DecodeTombs(const Leaf* l, uint8_t* out) {
  const uint64_t* t = LeafTombs(l);
  for (size_t i = 0; i < l->h.count; ++i) out[i] = static_cast<uint8_t>((t[i >> 6] >> (i & 63)) & 1);
}

inline uint64_t FirstKey(const Leaf* l) {
  const unsigned char* p = LeafKeys(l);
  if (l->h.kind == kBitmapLeaf) {
    return l->lcp | static_cast<uint64_t>(NextSetBit(reinterpret_cast<const uint64_t*>(p), 0));
  }
  return l->lcp | LoadSuffix(p, 0, l->width);
}
inline uint64_t LastKey(const Leaf* l) {
  const unsigned char* p = LeafKeys(l);
  if (l->h.kind == kBitmapLeaf) {
    return l->lcp | static_cast<uint64_t>(LastSetBit(reinterpret_cast<const uint64_t*>(p)));
  }
  return l->lcp | LoadSuffix(p, l->h.count - 1, l->width);
}

// Index of key in l, or -1.
int LeafFind(const Leaf* l, uint64_t key) {
  const uint64_t m = PrefixMask(l->h.depth);
  if ((key & m) != l->lcp) return -1;
  const uint64_t s = key & ~m;
  const unsigned char* p = LeafKeys(l);
  if (l->h.kind == kBitmapLeaf) {
    const uint64_t* bits = reinterpret_cast<const uint64_t*>(p);
    if (!TestBit(bits, s)) return -1;
    return RankInclusive(bits, static_cast<int>(s)) - 1;
  }
  const size_t n = l->h.count;
  const size_t pos = WithWidth(l->width, [&](auto wc) { return LowerBound<decltype(wc)::value>(p, n, s); });
  if (pos == n || LoadSuffix(p, pos, l->width) != s) return -1;
  return static_cast<int>(pos);
}

// Index of the first entry of l with key >= `key` (count if none); *at receives its key.
size_t LeafLowerBound(const Leaf* l, uint64_t key, uint64_t* at) {
  const uint64_t m = PrefixMask(l->h.depth);
  const uint64_t kp = key & m;
  const size_t n = l->h.count;
  if (kp < l->lcp) {
    *at = FirstKey(l);
    return 0;
  }
  if (kp > l->lcp) return n;
  const uint64_t s = key & ~m;
  const unsigned char* p = LeafKeys(l);
  if (l->h.kind == kBitmapLeaf) {
    const uint64_t* bits = reinterpret_cast<const uint64_t*>(p);
    const int b = NextSetBit(bits, static_cast<int>(s));
    if (b == 256) return n;
    *at = l->lcp | static_cast<uint64_t>(b);
    return static_cast<size_t>(RankInclusive(bits, b) - 1);
  }
  const size_t pos = WithWidth(l->width, [&](auto wc) { return LowerBound<decltype(wc)::value>(p, n, s); });
  if (pos < n) *at = l->lcp | LoadSuffix(p, pos, l->width);
  return pos;
}

// ---- building ----

// Entries as parallel columns; w and tomb are nullable (1.0 / no tombstones).
struct Src {
  const uint64_t* keys;
  const double* w;
  const uint8_t* tomb;
};

// Reusable per-thread buffer of merged entries. At most one merged sequence is live at a time:
// each is consumed (turned into leaves) before the next one is produced.
struct Scratch {
  std::vector<uint64_t> keys;
  std::vector<double> w;
  std::vector<uint8_t> tomb;
  void Reserve(size_t n) {
    if (keys.size() < n) {
      keys.resize(n);
      w.resize(n);
      tomb.resize(n);
    }
  }
  Src src() const { return {keys.data(), w.data(), tomb.data()}; }
};
thread_local Scratch tls_scratch;

struct Ctx {
  NodeAllocator* alloc;
  bool weighted;
  const Update* base = nullptr;  // the batch, to index prev
  PrevState* prev = nullptr;
  int64_t dsize = 0;
  int64_t dlive = 0;
  Scratch* scratch = &tls_scratch;
  void SetPrev(const Update* u, PrevState p) {
    if (prev != nullptr) prev[u - base] = p;
  }
};

// One child of a node being built: `child` serves slots [lo, hi].
struct Run {
  Node* child;
  uint8_t lo, hi;
  bool owned;   // holds its own reference (else borrowed from the node being replaced)
  bool shrunk;  // a leaf that lost entries in this update: may merge with a neighbor
};

// A new leaf of n entries with its header set: key column `width` bytes per entry (0: bitmap),
// then weights if the tree is weighted, then the tombstone bitmap if ntomb > 0. The columns are
// left for the caller to fill.
Leaf* NewLeaf(const Ctx& c, int depth, int width, size_t n, size_t ntomb, uint64_t lcp) {
  const size_t bytes = sizeof(Leaf) + KeyColumnBytes(n, width) + (c.weighted ? 8 * n : 0) +
                       (ntomb != 0 ? 8 * ((n + 63) / 64) : 0);
  Leaf* l = new (c.alloc->Allocate(bytes)) Leaf();
  l->h.refs.store(1, std::memory_order_relaxed);
  l->h.kind = width == 0 ? kBitmapLeaf : kArrayLeaf;
  l->h.depth = static_cast<uint8_t>(depth);
  l->h.count = static_cast<uint16_t>(n);
  l->width = static_cast<uint8_t>(width);
  l->weighted = c.weighted ? 1 : 0;
  l->ntomb = static_cast<uint16_t>(ntomb);
  l->bytes = static_cast<uint32_t>(bytes);
  l->lcp = lcp;
  return l;
}

Leaf* MakeLeaf(const Ctx& c, const Src& s, size_t b, size_t e) {
  const size_t n = e - b;
  assert(n >= 1 && n <= kB);
  const uint64_t* k = s.keys + b;
  const int depth = std::min(7, CommonPrefixBytes(k[0], k[n - 1]));
  size_t ntomb = 0;
  if (s.tomb != nullptr) {
    for (size_t i = 0; i < n; ++i) ntomb += s.tomb[b + i] != 0;
  }
  const bool bitmap = depth == 7 && n >= static_cast<size_t>(kMinBitmapCount);
  const int width = bitmap ? 0 : 8 - depth;
  const size_t kbytes = KeyColumnBytes(n, width);
  Leaf* l = NewLeaf(c, depth, width, n, ntomb, k[0] & PrefixMask(depth));
  unsigned char* p = reinterpret_cast<unsigned char*>(l + 1);
  std::memset(p, 0, kbytes);
  if (bitmap) {
    uint64_t* bits = reinterpret_cast<uint64_t*>(p);
    for (size_t i = 0; i < n; ++i) SetBit(bits, k[i] & 0xff);
  } else {
    WithWidth(width, [&](auto wc) {
      constexpr int W = decltype(wc)::value;
      for (size_t i = 0; i < n; ++i) std::memcpy(p + W * i, &k[i], W);
    });
  }
  p += kbytes;
  if (c.weighted) {
    double* w = reinterpret_cast<double*>(p);
    if (s.w != nullptr) {
      std::memcpy(w, s.w + b, 8 * n);
    } else {
      std::fill(w, w + n, 1.0);
    }
    p += 8 * n;
  }
  if (ntomb != 0) {
    uint64_t* t = reinterpret_cast<uint64_t*>(p);
    std::memset(t, 0, 8 * ((n + 63) / 64));
    for (size_t i = 0; i < n; ++i) {
      if (s.tomb[b + i] != 0) SetBit(t, i);
    }
  }
  return l;
}

// Consumes the runs' references (borrowed children get a new one).
Inner* MakeInner(const Ctx& c, int depth, uint64_t prefix, const Run* runs, int n) {
  assert(n >= 2 && depth <= 6);
  Inner* in = new (c.alloc->Allocate(InnerBytes(n))) Inner();
  in->h.refs.store(1, std::memory_order_relaxed);
  in->h.kind = kInner;
  in->h.depth = static_cast<uint8_t>(depth);
  in->h.count = static_cast<uint16_t>(n);
  in->prefix = prefix & PrefixMask(depth);
  Node** ch = Children(in);
  for (int i = 0; i < n; ++i) {
    SetBit(in->starts, runs[i].lo);
    SetRange(in->present, runs[i].lo, runs[i].hi);
    ch[i] = runs[i].child;
    if (!runs[i].owned) Ref(runs[i].child);
  }
  return in;
}

Node* BuildSubtree(const Ctx& c, const Src& s, size_t b, size_t e, bool fill);

// Appends to out[*nout...] the runs, at a node dispatching on byte d, holding entries [b, e) of
// s (all sharing bytes [0, d)). Entries of one slot stay in one leaf; a slot with more than B
// entries becomes a subtree; under a depth-6 node a slot with >= kDenseGroup entries gets a leaf
// of its own. A leaf is closed when adding the next slot would exceed B or once it reaches the
// target: B for a bulk load (`fill`), else the even share m / ceil(m / B), which for one
// overflowing leaf is "split at the first slot whose offset reaches B/2".
void Pack(const Ctx& c, const Src& s, size_t b, size_t e, int d, bool fill, bool shrunk, Run* out,
          int* nout) {
  const size_t m = e - b;
  const size_t parts = (m + kB - 1) / kB;
  const size_t target = fill ? kB : (m + parts - 1) / parts;
  auto flush = [&](size_t x, size_t y) {
    if (x == y) return;
    Leaf* l = MakeLeaf(c, s, x, y);
    out[(*nout)++] = Run{&l->h, static_cast<uint8_t>(ByteAt(s.keys[x], d)),
                         static_cast<uint8_t>(ByteAt(s.keys[y - 1], d)), true, shrunk};
  };
  size_t cur = b;  // first entry of the open leaf
  for (size_t i = b; i < e;) {
    const int byte = ByteAt(s.keys[i], d);
    size_t j = i + 1;
    while (j < e && ByteAt(s.keys[j], d) == byte) ++j;
    const size_t g = j - i;
    if (g > kB || (d == 6 && g >= static_cast<size_t>(kDenseGroup))) {
      flush(cur, i);
      Node* child = g > kB ? BuildSubtree(c, s, i, j, fill) : &MakeLeaf(c, s, i, j)->h;
      out[(*nout)++] =
          Run{child, static_cast<uint8_t>(byte), static_cast<uint8_t>(byte), true, shrunk};
      cur = j;
    } else {
      if (i - cur + g > kB) {
        flush(cur, i);
        cur = i;
      }
      if (j - cur >= target) {
        flush(cur, j);
        cur = j;
      }
    }
    i = j;
  }
  flush(cur, e);
}

// A subtree holding entries [b, e) of s (at least one): a leaf, or an inner node at the
// entries' LCP (path compression).
Node* BuildSubtree(const Ctx& c, const Src& s, size_t b, size_t e, bool fill) {
  const uint64_t first = s.keys[b];
  const int depth = std::min(7, CommonPrefixBytes(first, s.keys[e - 1]));
  if (e - b <= kB && depth != 6) return &MakeLeaf(c, s, b, e)->h;
  Run runs[256];
  int n = 0;
  Pack(c, s, b, e, depth, fill, false, runs, &n);
  if (n == 1) return runs[0].child;
  return &MakeInner(c, depth, first, runs, n)->h;
}

// ---- applying updates ----

struct Out {
  uint64_t* k;
  double* w;
  uint8_t* t;
  size_t n;
};

// Appends the entry `up` leaves behind, given what it found, and accounts size changes.
// Returns whether the entry changed.
inline bool Emit(Ctx& c, const Update& up, bool found, bool was_tomb, double old_w, Out& o) {
  switch (up.op) {
    case UpdateOp::kPut:
      o.k[o.n] = up.key;
      o.w[o.n] = c.weighted ? up.weight : 1.0;
      o.t[o.n] = 0;
      ++o.n;
      if (!found) {
        ++c.dsize;
        ++c.dlive;
        return true;
      }
      if (was_tomb) {
        ++c.dlive;
        return true;
      }
      return c.weighted && !SameWeight(old_w, up.weight);
    case UpdateOp::kTombstone:
      o.k[o.n] = up.key;
      o.w[o.n] = c.weighted ? up.weight : 1.0;
      o.t[o.n] = 1;
      ++o.n;
      if (!found) {
        ++c.dsize;
        return true;
      }
      if (!was_tomb) {
        --c.dlive;
        return true;
      }
      return c.weighted && !SameWeight(old_w, up.weight);
    case UpdateOp::kErase:
      if (!found) return false;
      --c.dsize;
      if (!was_tomb) --c.dlive;
      return true;
  }
  return false;
}

// The entries of updates u[0, n) on an empty range, into the scratch buffer. Returns the count.
size_t EntriesFromUpdates(Ctx& c, const Update* u, size_t n) {
  c.scratch->Reserve(n);
  Out o{c.scratch->keys.data(), c.scratch->w.data(), c.scratch->tomb.data(), 0};
  for (size_t j = 0; j < n; ++j) {
    c.SetPrev(&u[j], PrevState::kAbsent);
    Emit(c, u[j], false, false, 1.0, o);
  }
  return o.n;
}

// l's entries with u[0, n) applied, into the scratch buffer. Returns the count.
size_t MergeLeaf(Ctx& c, const Leaf* l, const Update* u, size_t n, bool* changed) {
  uint64_t lk[kB];
  const size_t cnt = DecodeKeys(l, lk);
  const double* lw = LeafWeights(l);
  const uint64_t* lt = LeafTombs(l);
  c.scratch->Reserve(cnt + n);
  Out o{c.scratch->keys.data(), c.scratch->w.data(), c.scratch->tomb.data(), 0};
  auto copy = [&](size_t x) {
    o.k[o.n] = lk[x];
    o.w[o.n] = lw != nullptr ? lw[x] : 1.0;
    o.t[o.n] = lt != nullptr && TestBit(lt, x);
    ++o.n;
  };
  bool ch = false;
  size_t i = 0;
  for (size_t j = 0; j < n; ++j) {
    const Update& up = u[j];
    while (i < cnt && lk[i] < up.key) copy(i++);
    const bool found = i < cnt && lk[i] == up.key;
    const bool tomb = found && lt != nullptr && TestBit(lt, i);
    const double w = found && lw != nullptr ? lw[i] : 1.0;
    c.SetPrev(&up, !found ? PrevState::kAbsent : tomb ? PrevState::kTombstone : PrevState::kLive);
    if (found) ++i;
    ch |= Emit(c, up, found, tomb, w, o);
  }
  while (i < cnt) copy(i++);
  *changed = ch;
  return o.n;
}

// What SpliceLeaf did.
enum class Splice { kNotApplicable, kUnchanged, kSpliced };

thread_local uint64_t tls_splices = 0;
std::atomic<bool> splice_enabled{true};

// The common update of a full tier, puts that land inside an array leaf, done without decoding
// and re-encoding the leaf: the new leaf is l's key (and weight) column with the new entries'
// suffixes spliced in, byte for byte the leaf MergeLeaf + Pack would build. Applies when l has
// no tombstones, every update is a put with a key in [first, last] of l (so its depth, LCP
// and run are unchanged), and the result keeps l's shape: at most B entries, an array leaf
// (depth 7: under kMinBitmapCount), and, when `dense_rule` (Pack will cut l's entries at byte
// 6), no byte-6 group of kDenseGroup entries. Otherwise kNotApplicable, with nothing done.
Splice SpliceLeaf(Ctx& c, const Leaf* l, const Update* u, size_t n, bool dense_rule,
                  Leaf** out) {
  if (!splice_enabled.load(std::memory_order_relaxed) || l->h.kind != kArrayLeaf ||
      l->ntomb != 0 || n == 0 || n > kB) {
    return Splice::kNotApplicable;
  }
  for (size_t j = 0; j < n; ++j) {
    if (u[j].op != UpdateOp::kPut) return Splice::kNotApplicable;
  }
  const size_t cnt = l->h.count;
  const int width = l->width;
  const unsigned char* p = LeafKeys(l);
  const uint64_t mask = PrefixMask(l->h.depth);
  if (u[0].key < (l->lcp | LoadSuffix(p, 0, width)) ||
      u[n - 1].key > (l->lcp | LoadSuffix(p, cnt - 1, width))) {
    return Splice::kNotApplicable;
  }
  // pos[j]: where u[j]'s key is or goes in l; found[j]: whether it is there.
  uint16_t pos[kB];
  bool found[kB];
  const double* lw = LeafWeights(l);
  size_t fresh = 0;
  bool changed = false;
  WithWidth(width, [&](auto wc) {
    constexpr int W = decltype(wc)::value;
    size_t from = 0;
    for (size_t j = 0; j < n; ++j) {
      const uint64_t sfx = u[j].key & ~mask;
      from += LowerBound<W>(p + W * from, cnt - from, sfx);
      pos[j] = static_cast<uint16_t>(from);
      found[j] = from < cnt && Load<W>(p, from) == sfx;
      fresh += !found[j];
      changed |= !found[j] || (c.weighted && !SameWeight(lw[from], u[j].weight));
    }
  });
  const size_t m = cnt + fresh;
  if (m > kB || (l->h.depth == 7 && m >= static_cast<size_t>(kMinBitmapCount))) {
    return Splice::kNotApplicable;
  }
  if (dense_rule && fresh != 0) {
    // Byte-6 groups of the new entries, each with the entries l already has there.
    for (size_t j = 0; j < n;) {
      const uint64_t g = (u[j].key & ~mask) >> 8;
      size_t add = 0;
      for (; j < n && ((u[j].key & ~mask) >> 8) == g; ++j) add += !found[j];
      const size_t have = WithWidth(width, [&](auto wc) {
        constexpr int W = decltype(wc)::value;
        return LowerBound<W>(p, cnt, (g + 1) << 8) - LowerBound<W>(p, cnt, g << 8);
      });
      if (have + add >= static_cast<size_t>(kDenseGroup)) return Splice::kNotApplicable;
    }
  }
  for (size_t j = 0; j < n; ++j) {
    c.SetPrev(&u[j], found[j] ? PrevState::kLive : PrevState::kAbsent);
  }
  if (!changed) return Splice::kUnchanged;
  c.dsize += static_cast<int64_t>(fresh);
  c.dlive += static_cast<int64_t>(fresh);

  const size_t kbytes = KeyColumnBytes(m, width);
  Leaf* nl = NewLeaf(c, l->h.depth, width, m, /*ntomb=*/0, l->lcp);
  unsigned char* q = reinterpret_cast<unsigned char*>(nl + 1);
  double* nw = c.weighted ? reinterpret_cast<double*>(q + kbytes) : nullptr;
  // Copies l's entries [from, to) to the new leaf's entries from `at` on.
  auto copy = [&](size_t from, size_t to, size_t at) {
    std::memcpy(q + width * at, p + width * from, width * (to - from));
    if (nw != nullptr) std::memcpy(nw + at, lw + from, 8 * (to - from));
  };
  size_t src = 0, dst = 0;
  for (size_t j = 0; j < n; ++j) {
    copy(src, pos[j], dst);
    dst += pos[j] - src;
    src = pos[j];
    std::memcpy(q + width * dst, &u[j].key, width);  // little-endian: the low bytes are the suffix
    if (nw != nullptr) nw[dst] = u[j].weight;
    ++dst;
    src += found[j];
  }
  copy(src, cnt, dst);
  std::memset(q + width * m, 0, kbytes - width * m);
  ++tls_splices;
  *out = nl;
  return Splice::kSpliced;
}

// Appends l's entries to o.
void AppendLeaf(const Leaf* l, Out& o) {
  const size_t n = DecodeKeys(l, o.k + o.n);
  const double* w = LeafWeights(l);
  const uint64_t* t = LeafTombs(l);
  for (size_t i = 0; i < n; ++i) {
    o.w[o.n + i] = w != nullptr ? w[i] : 1.0;
    o.t[o.n + i] = t != nullptr && TestBit(t, i);
  }
  o.n += n;
}

inline void DropRun(const Ctx& c, const Run& r) {
  if (r.owned) Unref(c.alloc, r.child);
}

// An inner node, real or virtual (a parent placed above a node whose prefix new keys leave).
struct View {
  const Inner* self;  // null if virtual
  int depth;
  uint64_t prefix;
  int k;
  Node* const* child;
  uint8_t lo[256];
  uint8_t hi[256];
};

void FillView(const Inner* in, View* v) {
  v->self = in;
  v->depth = in->h.depth;
  v->prefix = in->prefix;
  v->k = in->h.count;
  v->child = Children(in);
  int k = 0;
  for (int w = 0; w < 4; ++w) {
    for (uint64_t x = in->starts[w]; x != 0; x &= x - 1) {
      const int s = w * 64 + std::countr_zero(x);
      v->lo[k] = static_cast<uint8_t>(s);
      v->hi[k] = static_cast<uint8_t>(RunEnd(in, s));
      ++k;
    }
  }
  assert(k == v->k);
}

bool Mergeable(const Run& a, const Run& b, int d) {
  if (!IsLeaf(a.child) || !IsLeaf(b.child)) return false;
  const size_t na = a.child->count, nb = b.child->count;
  if (na + nb > kB) return false;
  if (!((a.shrunk && na < kB / 2) || (b.shrunk && nb < kB / 2))) return false;
  if (d == 6) {
    // A depth-6 leaf serving one dense slot stays on its own.
    if (a.lo == a.hi && na >= static_cast<size_t>(kDenseGroup)) return false;
    if (b.lo == b.hi && nb >= static_cast<size_t>(kDenseGroup)) return false;
  }
  return true;
}

Node* ApplyTo(Ctx& c, Node* old, const Update* u, size_t n);

// The node replacing v once u[0, n) (all within v's prefix, sorted) are applied: null if
// empty, v.self (with a new reference) if unchanged, its only child if one remains.
Node* InnerApply(Ctx& c, const View& v, const Update* u, size_t n) {
  const int K = v.k;
  const int d = v.depth;
  // Updates per child: own slots first, then each gap between children is attached to an
  // adjacent leaf (the emptier one) or, between inner nodes, packed on its own.
  uint32_t rb[256], re[256];
  size_t ui = 0;
  for (int k = 0; k < K; ++k) {
    while (ui < n && ByteAt(u[ui].key, d) < v.lo[k]) ++ui;
    rb[k] = static_cast<uint32_t>(ui);
    while (ui < n && ByteAt(u[ui].key, d) <= v.hi[k]) ++ui;
    re[k] = static_cast<uint32_t>(ui);
  }
  bool alone[257];
  for (int g = 0; g <= K; ++g) {
    alone[g] = false;
    const size_t gb = g > 0 ? re[g - 1] : 0;
    const size_t ge = g < K ? rb[g] : n;
    if (gb == ge) continue;
    bool inserts = false;
    for (size_t j = gb; j < ge && !inserts; ++j) inserts = u[j].op != UpdateOp::kErase;
    if (!inserts) {
      for (size_t j = gb; j < ge; ++j) c.SetPrev(&u[j], PrevState::kAbsent);
      continue;
    }
    const bool left = g > 0 && IsLeaf(v.child[g - 1]);
    const bool right = g < K && IsLeaf(v.child[g]);
    if (left && (!right || v.child[g - 1]->count <= v.child[g]->count)) {
      re[g - 1] = static_cast<uint32_t>(ge);
    } else if (right) {
      rb[g] = static_cast<uint32_t>(gb);
    } else {
      alone[g] = true;
    }
  }
  // The touched children are fetched together before any is read: their headers first, then
  // the rest of each touched leaf, which its merge or splice reads (and searches) in full. In a
  // full tier they are out of cache, and one after another each would cost a chain of misses.
  for (int g = 0; g < K; ++g) {
    if (rb[g] != re[g]) __builtin_prefetch(v.child[g]);
  }
  for (int g = 0; g < K; ++g) {
    if (rb[g] != re[g] && IsLeaf(v.child[g])) {
      coro::PrefetchRange(v.child[g], AsLeaf(v.child[g])->bytes);
    }
  }

  Run runs[256];
  int nr = 0;
  bool changed = false;
  for (int g = 0; g <= K; ++g) {
    if (alone[g]) {
      const size_t gb = g > 0 ? re[g - 1] : 0;
      const size_t ge = g < K ? rb[g] : n;
      const size_t m = EntriesFromUpdates(c, u + gb, ge - gb);
      Pack(c, c.scratch->src(), 0, m, d, false, false, runs, &nr);
      changed = true;
    }
    if (g == K) break;
    Node* ch = v.child[g];
    const Run keep{ch, v.lo[g], v.hi[g], false, false};
    if (rb[g] == re[g]) {
      runs[nr++] = keep;
      continue;
    }
    if (IsLeaf(ch)) {
      Leaf* spliced = nullptr;
      const Splice sp = SpliceLeaf(c, AsLeaf(ch), u + rb[g], re[g] - rb[g],
                                   d == 6 && ch->depth == 6, &spliced);
      if (sp == Splice::kUnchanged) {
        runs[nr++] = keep;
        continue;
      }
      if (sp == Splice::kSpliced) {
        changed = true;
        runs[nr++] = Run{&spliced->h, v.lo[g], v.hi[g], true, false};
        continue;
      }
      bool leaf_changed = false;
      const size_t m = MergeLeaf(c, AsLeaf(ch), u + rb[g], re[g] - rb[g], &leaf_changed);
      if (!leaf_changed) {
        runs[nr++] = keep;
        continue;
      }
      changed = true;
      if (m != 0) Pack(c, c.scratch->src(), 0, m, d, false, m < ch->count, runs, &nr);
    } else {
      Node* r = ApplyTo(c, ch, u + rb[g], re[g] - rb[g]);
      if (r == ch) {
        Unref(c.alloc, r);  // the old node still holds ch
        runs[nr++] = keep;
        continue;
      }
      changed = true;
      // An inner child only turns into a leaf by losing entries.
      if (r != nullptr) runs[nr++] = Run{r, v.lo[g], v.lo[g], true, IsLeaf(r)};
    }
  }
  if (!changed) {
    assert(v.self != nullptr);
    Ref(const_cast<Node*>(&v.self->h));
    return const_cast<Node*>(&v.self->h);
  }

  // A leaf that deletes left under B/2 merges with an adjacent leaf when the result fits.
  int no = 0;
  for (int i = 0; i < nr; ++i) {
    if (no > 0 && Mergeable(runs[no - 1], runs[i], d)) {
      Run& a = runs[no - 1];
      const Run& b = runs[i];
      c.scratch->Reserve(2 * kB);
      Out o{c.scratch->keys.data(), c.scratch->w.data(), c.scratch->tomb.data(), 0};
      AppendLeaf(AsLeaf(a.child), o);
      AppendLeaf(AsLeaf(b.child), o);
      Leaf* merged = MakeLeaf(c, c.scratch->src(), 0, o.n);
      DropRun(c, a);
      DropRun(c, b);
      a = Run{&merged->h, a.lo, b.hi, true, true};
    } else {
      runs[no++] = runs[i];
    }
  }
  if (no == 0) return nullptr;
  if (no == 1) {
    if (!runs[0].owned) Ref(runs[0].child);
    return runs[0].child;
  }
  return &MakeInner(c, d, v.prefix, runs, no)->h;
}

// The subtree replacing `old` (nullable) once u[0, n) are applied; the caller owns one
// reference to the result (`old` itself if nothing changed). All keys of `old` and u share the
// bytes the parent dispatched on.
Node* ApplyTo(Ctx& c, Node* old, const Update* u, size_t n) {
  if (n == 0) {
    if (old != nullptr) Ref(old);
    return old;
  }
  if (old == nullptr) {
    const size_t m = EntriesFromUpdates(c, u, n);
    return m == 0 ? nullptr : BuildSubtree(c, c.scratch->src(), 0, m, false);
  }
  if (IsLeaf(old)) {  // only a root leaf gets here; inner nodes handle their leaves
    coro::PrefetchRange(old, AsLeaf(old)->bytes);
    Leaf* spliced = nullptr;
    // BuildSubtree packs a depth-6 leaf's entries at byte 6.
    switch (SpliceLeaf(c, AsLeaf(old), u, n, old->depth == 6, &spliced)) {
      case Splice::kUnchanged:
        Ref(old);
        return old;
      case Splice::kSpliced:
        return &spliced->h;
      case Splice::kNotApplicable:
        break;
    }
    bool changed = false;
    const size_t m = MergeLeaf(c, AsLeaf(old), u, n, &changed);
    if (!changed) {
      Ref(old);
      return old;
    }
    return m == 0 ? nullptr : BuildSubtree(c, c.scratch->src(), 0, m, false);
  }
  const Inner* in = AsInner(old);
  View v;
  FillView(in, &v);
  // Updates outside the node's prefix form a head [u, mb) and a tail [me, u + n) of u.
  const Update* mb;
  const Update* me;
  auto split = [&](int depth) {
    const uint64_t mask = PrefixMask(depth);
    const uint64_t lo = v.prefix & mask, hi = lo | ~mask;
    mb = std::partition_point(u, u + n, [&](const Update& x) { return x.key < lo; });
    me = std::partition_point(mb, u + n, [&](const Update& x) { return x.key <= hi; });
  };
  split(v.depth);
  // Erases there are no-ops. Any other update there needs a new parent at the LCP of the
  // prefix and its key: a virtual node with `old` as its only child.
  int need = v.depth;
  auto widen = [&](const Update* x, const Update* end) {
    for (; x != end; ++x) {
      if (x->op != UpdateOp::kErase) need = std::min(need, CommonPrefixBytes(x->key, v.prefix));
    }
  };
  widen(u, mb);
  widen(me, u + n);
  if (need < v.depth) {
    v.self = nullptr;
    v.depth = need;
    v.prefix &= PrefixMask(need);
    v.k = 1;
    v.child = &old;
    v.lo[0] = v.hi[0] = static_cast<uint8_t>(ByteAt(in->prefix, need));
    split(need);  // every non-erase now falls inside
  }
  for (const Update* x = u; x != mb; ++x) c.SetPrev(x, PrevState::kAbsent);
  for (const Update* x = me; x != u + n; ++x) c.SetPrev(x, PrevState::kAbsent);
  return InnerApply(c, v, mb, static_cast<size_t>(me - mb));
}

}  // namespace

uint64_t cart_detail::LeafSplicesForTesting() { return tls_splices; }
void cart_detail::SetLeafSpliceForTesting(bool on) {
  splice_enabled.store(on, std::memory_order_relaxed);
}

namespace {

// ---- checking ----

struct Checker {
  bool weighted;
  std::string* why;
  size_t size = 0;
  size_t live = 0;
  bool have_last = false;
  uint64_t last = 0;

  bool Fail(const char* what, uint64_t a = 0, uint64_t b = 0) {
    if (why != nullptr) {
      char buf[256];
      snprintf(buf, sizeof(buf), "%s (%llu, %llu)", what, static_cast<unsigned long long>(a),
               static_cast<unsigned long long>(b));
      *why = buf;
    }
    return false;
  }

  // Checks the subtree under a node of depth pd (-1 for the root); *mn/*mx receive its key
  // range. `multi_slot_at6`: the parent is a depth-6 node and the leaf serves several slots.
  bool Check(const Node* n, int pd, bool multi_slot_at6, uint64_t* mn, uint64_t* mx) {
    if (n == nullptr) return Fail("null child");
    if (n->refs.load(std::memory_order_relaxed) == 0) return Fail("zero refcount");
    if (n->kind == kInner) return CheckInner(AsInner(n), pd, mn, mx);
    if (n->kind != kArrayLeaf && n->kind != kBitmapLeaf) return Fail("bad kind", n->kind);
    return CheckLeaf(AsLeaf(n), multi_slot_at6, mn, mx);
  }

  bool CheckInner(const Inner* in, int pd, uint64_t* mn, uint64_t* mx) {
    const int d = in->h.depth;
    if (d <= pd || d > 6) return Fail("inner depth", d, static_cast<uint64_t>(pd + 1));
    const uint64_t mask = PrefixMask(d);
    if ((in->prefix & ~mask) != 0) return Fail("prefix has bytes past depth", in->prefix, d);
    const int k = in->h.count;
    if (k < 2) return Fail("inner node with fewer than 2 children", k);
    int pop = 0;
    for (int w = 0; w < 4; ++w) {
      if ((in->starts[w] & ~in->present[w]) != 0) return Fail("start slot not present", w);
      pop += std::popcount(in->starts[w]);
    }
    if (pop != k) return Fail("starts popcount != children", pop, k);
    const Node* const* ch = Children(in);
    int i = 0;
    for (int s = NextSetBit(in->starts, 0); s < 256; s = NextSetBit(in->starts, s + 1), ++i) {
      const int e = RunEnd(in, s);
      uint64_t cmn = 0, cmx = 0;
      const bool leaf = ch[i] != nullptr && IsLeaf(ch[i]);
      if (!Check(ch[i], d, leaf && d == 6 && e > s, &cmn, &cmx)) return false;
      if ((cmn & mask) != in->prefix || (cmx & mask) != in->prefix) {
        return Fail("child keys outside node prefix", cmn, in->prefix);
      }
      if (ByteAt(cmn, d) != s || ByteAt(cmx, d) != e) return Fail("run != child key bytes", s, e);
      if (!leaf && e != s) return Fail("inner child serves several slots", s, e);
      if (i == 0) *mn = cmn;
      *mx = cmx;
    }
    return true;
  }

  bool CheckLeaf(const Leaf* l, bool multi_slot_at6, uint64_t* mn, uint64_t* mx) {
    const size_t n = l->h.count;
    if (n < 1 || n > kB) return Fail("leaf count", n);
    if (l->weighted != (weighted ? 1 : 0)) return Fail("leaf weighted flag");
    const bool bitmap = l->h.kind == kBitmapLeaf;
    if (bitmap) {
      const uint64_t* bits = reinterpret_cast<const uint64_t*>(LeafKeys(l));
      size_t pop = 0;
      for (int w = 0; w < 4; ++w) pop += std::popcount(bits[w]);
      if (pop != n) return Fail("bitmap popcount != count", pop, n);
    }
    uint64_t k[kB];
    DecodeKeys(l, k);
    for (size_t i = 0; i < n; ++i) {
      if (have_last && k[i] <= last) return Fail("keys not increasing", last, k[i]);
      have_last = true;
      last = k[i];
    }
    const int depth = std::min(7, CommonPrefixBytes(k[0], k[n - 1]));
    if (l->h.depth != depth) return Fail("leaf depth != LCP", l->h.depth, depth);
    if (l->lcp != (k[0] & PrefixMask(depth))) return Fail("leaf lcp", l->lcp, k[0]);
    const bool want_bitmap = depth == 7 && n >= static_cast<size_t>(kMinBitmapCount);
    if (bitmap != want_bitmap) return Fail("leaf form not canonical", bitmap, n);
    if (l->width != (bitmap ? 0 : 8 - depth)) return Fail("leaf width", l->width, depth);
    size_t nt = 0;
    if (l->ntomb != 0) {
      const uint64_t* t = LeafTombs(l);
      for (size_t w = 0; w < (n + 63) / 64; ++w) nt += std::popcount(t[w]);
      if (n % 64 != 0 && (t[n / 64] >> (n % 64)) != 0) return Fail("tombstone bits past count");
      if (nt != l->ntomb) return Fail("ntomb != tombstone bits", l->ntomb, nt);
    }
    const size_t bytes = sizeof(Leaf) + KeyColumnBytes(n, l->width) + (weighted ? 8 * n : 0) +
                         (l->ntomb != 0 ? 8 * ((n + 63) / 64) : 0);
    if (l->bytes != bytes) return Fail("leaf bytes", l->bytes, bytes);
    if (multi_slot_at6) {
      for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && (k[j] >> 8) == (k[i] >> 8)) ++j;
        if (j - i >= static_cast<size_t>(kDenseGroup)) return Fail("dense slot in shared leaf", k[i], j - i);
        i = j;
      }
    }
    size += n;
    live += n - nt;
    *mn = k[0];
    *mx = k[n - 1];
    return true;
  }
};

size_t NodeBytes(const Node* n) {
  if (n->kind == kInner) {
    const Inner* in = AsInner(n);
    size_t b = InnerBytes(in->h.count);
    for (size_t i = 0; i < in->h.count; ++i) b += NodeBytes(Children(in)[i]);
    return b;
  }
  return AsLeaf(n)->bytes;
}

void ShapeOf(const Node* n, size_t level, CArt::Shape* s) {
  s->height = std::max(s->height, level);
  if (IsLeaf(n)) {
    ++s->leaves;
    s->bitmap_leaves += n->kind == kBitmapLeaf;
    return;
  }
  const Inner* in = AsInner(n);
  ++s->inner_nodes;
  int i = 0;
  for (int st = NextSetBit(in->starts, 0); st < 256; st = NextSetBit(in->starts, st + 1), ++i) {
    const Node* ch = Children(in)[i];
    if (IsLeaf(ch) && RunEnd(in, st) > st) ++s->multi_slot_leaves;
    ShapeOf(ch, level + 1, s);
  }
}

// Prefetches the lines of leaf n past its first (whose header says how long it is).
inline void PrefetchLeaf(const Node* n) {
  const Leaf* l = AsLeaf(n);
  const char* p = reinterpret_cast<const char*>(l);
  for (size_t o = 64; o < l->bytes; o += 64) __builtin_prefetch(p + o);
}

bool VisitChunks(const Node* n, uint64_t* keys, uint8_t* tombs,
                 FunctionRef<bool(const uint64_t*, const double*, const uint8_t*, size_t)> fn) {
  if (n->kind == kInner) {
    const Inner* in = AsInner(n);
    Node* const* ch = Children(in);
    const size_t k = in->h.count;
    // Before child i is visited: leaf i + 1 whole (its header was fetched a step before) and
    // the header of i + 2 (docs/benchmarks.md, "the layout's walk").
    if (k > 0 && ch[0]->kind != kInner) PrefetchLeaf(ch[0]);
    for (size_t i = 0; i < k; ++i) {
      if (i + 1 < k && ch[i + 1]->kind != kInner) PrefetchLeaf(ch[i + 1]);
      if (i + 2 < k) __builtin_prefetch(ch[i + 2]);
      if (!VisitChunks(ch[i], keys, tombs, fn)) return false;
    }
    return true;
  }
  const Leaf* l = AsLeaf(n);
  const size_t cnt = DecodeKeys(l, keys);
  const uint8_t* t = nullptr;
  if (l->ntomb != 0) {
    DecodeTombs(l, tombs);
    t = tombs;
  }
  return fn(keys, LeafWeights(l), t, cnt);
}

}  // namespace

void cart_detail::Unref(NodeAllocator* alloc, Node* n) {
  if (n->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (n->kind == kInner) {
    Inner* in = AsInner(n);
    const size_t k = in->h.count;
    Node** ch = Children(in);
    for (size_t i = 0; i < k; ++i) Unref(alloc, ch[i]);
    alloc->Free(in, InnerBytes(k));
  } else {
    Leaf* l = AsLeaf(n);
    alloc->Free(l, l->bytes);
  }
}

// ---- Pending updates ----

namespace {

size_t PendingBytes(size_t n, bool weighted) {
  return (sizeof(Pending) + n * (sizeof(uint64_t) + (weighted ? sizeof(double) : 0) + 1) + 15) &
         ~size_t{15};
}

// An unfilled Pending for n updates (n >= 1), with one reference.
Pending* NewPending(NodeAllocator* alloc, bool weighted, size_t n) {
  auto* p = new (alloc->Allocate(PendingBytes(n, weighted))) Pending;
  p->refs.store(1, std::memory_order_relaxed);
  p->n = static_cast<uint32_t>(n);
  p->weighted = weighted;
  p->resolved.store(Pending::kUnresolved, std::memory_order_relaxed);
  return p;
}

void UnrefPending(NodeAllocator* alloc, Pending* p) {
  if (p->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const size_t bytes = PendingBytes(p->n, p->weighted != 0);
  p->~Pending();
  alloc->Free(p, bytes);
}

// Pending updates p (nullable) with `updates` (sorted, unique) laid over them, in key order:
// emit(j, nullptr) for p's update j, emit(0, &u) for one of `updates`.
template <class Emit>
void ForEachMerged(const Pending* p, const Update* updates, size_t n, Emit&& emit) {
  const size_t pn = p == nullptr ? 0 : p->n;
  const uint64_t* pk = pn != 0 ? p->keys() : nullptr;
  size_t a = 0, b = 0;
  while (a < pn || b < n) {
    if (b == n || (a < pn && pk[a] < updates[b].key)) {
      emit(a++, nullptr);
    } else {
      if (a < pn && pk[a] == updates[b].key) ++a;  // the newer update replaces it
      emit(0, &updates[b++]);
    }
  }
}

// How many updates the merge of p (nullable) and `updates` (sorted, unique) holds: p's and
// `updates`' less the keys both have. A search per update, not a walk of p: an area apply
// brings a hub a few updates, its pending array holds up to kMaxPending.
size_t MergedCount(const Pending* p, const Update* updates, size_t n) {
  if (p == nullptr) return n;
  const uint64_t* it = p->keys();
  const uint64_t* const end = it + p->n;
  size_t common = 0;
  for (size_t b = 0; b < n && it != end; ++b) {
    it = std::lower_bound(it, end, updates[b].key);  // keys increase: search on from the last
    common += it != end && *it == updates[b].key;
  }
  return p->n + n - common;
}

// The merge as updates, into *out (for an apply to the tree).
void MergeOver(const Pending* p, const Update* updates, size_t n, std::vector<Update>* out) {
  out->clear();
  const double* w = p == nullptr ? nullptr : p->weights();
  ForEachMerged(p, updates, n, [&](size_t j, const Update* u) {
    out->push_back(u != nullptr ? *u
                                : Update{p->keys()[j], w != nullptr ? w[j] : 1.0, p->ops()[j]});
  });
}

// The merge written straight into a new Pending of its m updates.
Pending* MergedPending(NodeAllocator* alloc, bool weighted, const Pending* p,
                       const Update* updates, size_t n, size_t m) {
  Pending* q = NewPending(alloc, weighted, m);
  uint64_t* k = q->keys();
  double* w = q->weights();
  UpdateOp* op = q->ops();
  const double* pw = p == nullptr ? nullptr : p->weights();
  size_t i = 0;
  ForEachMerged(p, updates, n, [&](size_t j, const Update* u) {
    assert(i < m);  // MergedCount sized the array
    k[i] = u != nullptr ? u->key : p->keys()[j];
    if (w != nullptr) w[i] = u != nullptr ? u->weight : pw[j];
    op[i] = u != nullptr ? u->op : p->ops()[j];
    ++i;
  });
  assert(i == m);
  return q;
}

thread_local std::vector<Update> tls_merged;
thread_local uint64_t tls_kept_pending = 0;

std::atomic<size_t> pending_per{CArt::kTreeEntriesPerPending};
std::atomic<size_t> pending_min{CArt::kMinPending};
std::atomic<size_t> pending_mult{1};

}  // namespace

uint64_t cart_detail::KeptPendingForTesting() { return tls_kept_pending; }

size_t CArt::PendingCapacity(size_t tree_entries) {
  const size_t c = tree_entries * pending_mult.load(std::memory_order_relaxed) /
                   pending_per.load(std::memory_order_relaxed);
  return c < pending_min.load(std::memory_order_relaxed) ? 0 : c < kMaxPending ? c : kMaxPending;
}

void CArt::SetPendingForTesting(size_t tree_entries_per_pending, size_t min_pending,
                                size_t multiplier) {
  const bool reset = tree_entries_per_pending == 0;
  pending_per.store(reset ? kTreeEntriesPerPending : tree_entries_per_pending);
  pending_min.store(reset ? kMinPending : min_pending);
  pending_mult.store(reset ? 1 : multiplier);
}

// ---- CArt ----

// pending_n_ sits in the padding after weighted_: keeping the count here costs no bytes.
static_assert(sizeof(CArt) == 48);

CArt::CArt(const CArt& o) { *this = o; }

CArt& CArt::operator=(const CArt& o) {
  if (o.root_ != nullptr) Ref(o.root_);
  if (o.pending_ != nullptr) o.pending_->refs.fetch_add(1, std::memory_order_relaxed);
  Release();
  alloc_ = o.alloc_;
  root_ = o.root_;
  pending_ = o.pending_;
  size_ = o.size_;
  live_ = o.live_;
  weighted_ = o.weighted_;
  pending_n_ = o.pending_n_;
  return *this;
}

CArt::CArt(CArt&& o) noexcept { *this = std::move(o); }

CArt& CArt::operator=(CArt&& o) noexcept {
  if (this != &o) {
    Release();
    alloc_ = o.alloc_;
    root_ = o.root_;
    pending_ = o.pending_;
    size_ = o.size_;
    live_ = o.live_;
    weighted_ = o.weighted_;
    pending_n_ = o.pending_n_;
    o.root_ = nullptr;
    o.pending_ = nullptr;
    o.size_ = o.live_ = 0;
    o.pending_n_ = 0;
  }
  return *this;
}

CArt::~CArt() { Release(); }

void CArt::Release() {
  if (root_ != nullptr) Unref(alloc_, root_);
  if (pending_ != nullptr) UnrefPending(alloc_, pending_);
  root_ = nullptr;
  pending_ = nullptr;
  pending_n_ = 0;
}

CArt CArt::Apply(const Update* updates, size_t n, PrevState* prev) const {
  for (size_t i = 1; i < n; ++i) assert(updates[i - 1].key < updates[i].key);
  if (n == 0) return *this;
  if (prev != nullptr) {
    if (pending_ == nullptr) return ApplyToTree(updates, n, prev);
    std::vector<Update> flush;
    MergeOver(pending_, nullptr, 0, &flush);
    return ApplyToTree(flush.data(), flush.size(), nullptr).ApplyToTree(updates, n, prev);
  }
  const size_t cap = PendingCapacity(size_);
  if (pending_ == nullptr && n > cap) return ApplyToTree(updates, n, nullptr);
  const size_t m = MergedCount(pending_, updates, n);
  if (m > cap) {
    std::vector<Update>& merged = tls_merged;
    MergeOver(pending_, updates, n, &merged);
    CArt out = ApplyToTree(merged.data(), merged.size(), nullptr);
    if (merged.capacity() > 4 * kMaxPending) std::vector<Update>().swap(merged);
    return out;
  }
  CArt out(alloc_, weighted_);
  out.root_ = root_;
  if (root_ != nullptr) Ref(root_);
  out.size_ = size_;
  out.live_ = live_;
  out.pending_ = MergedPending(alloc_, weighted_, pending_, updates, n, m);
  out.pending_n_ = static_cast<uint32_t>(m);
  ++tls_kept_pending;
  return out;
}

CArt CArt::ApplyToTree(const Update* updates, size_t n, PrevState* prev) const {
  assert(alloc_ != nullptr || root_ == nullptr);
  Ctx c{alloc_, weighted_, updates, prev};
  CArt out(alloc_, weighted_);
  out.root_ = ApplyTo(c, root_, updates, n);
  out.size_ = static_cast<size_t>(static_cast<int64_t>(size_) + c.dsize);
  out.live_ = static_cast<size_t>(static_cast<int64_t>(live_) + c.dlive);
  // Do not let one huge batch pin a huge per-thread buffer.
  if (c.scratch->keys.size() > (size_t{1} << 16)) *c.scratch = Scratch();
  return out;
}

CArt CArt::BuildSorted(NodeAllocator* alloc, bool weighted, const uint64_t* keys,
                       const double* weights, const bool* tomb, size_t n) {
  CArt t(alloc, weighted);
  if (n == 0) return t;
  for (size_t i = 1; i < n; ++i) assert(keys[i - 1] < keys[i]);
  static_assert(sizeof(bool) == 1);
  const Src s{keys, weighted ? weights : nullptr, reinterpret_cast<const uint8_t*>(tomb)};
  Ctx c{alloc, weighted};
  t.root_ = BuildSubtree(c, s, 0, n, true);
  size_t nt = 0;
  if (tomb != nullptr) {
    for (size_t i = 0; i < n; ++i) nt += tomb[i];
  }
  t.size_ = n;
  t.live_ = n - nt;
  return t;
}

namespace {

// The view's counts of tree t with pending updates p (made for it), packed as
// Pending::resolved: each update against its key's state in the tree, found by one forward
// cursor.
uint64_t ResolveCounts(const CArt::Cursor& start, size_t size, size_t live, const Pending& p) {
  CArt::Cursor c = start;
  int64_t e = static_cast<int64_t>(size), l = static_cast<int64_t>(live);
  const uint64_t* k = p.keys();
  const UpdateOp* op = p.ops();
  for (size_t j = 0; j < p.n; ++j) {
    c.Seek(k[j]);
    const bool had = c.Valid() && c.key() == k[j];
    const bool was_live = had && !c.tombstone();
    e += static_cast<int64_t>(op[j] != UpdateOp::kErase) - had;
    l += static_cast<int64_t>(op[j] == UpdateOp::kPut) - was_live;
  }
  assert(l >= 0 && l <= e && e <= int64_t{0xffffffff});
  return (static_cast<uint64_t>(e) << 32) | static_cast<uint64_t>(l);
}

}  // namespace

uint64_t CArt::Resolved() const {
  uint64_t r = pending_->resolved.load(std::memory_order_relaxed);
  if (r != Pending::kUnresolved) return r;
  r = ResolveCounts(NewTreeCursor(), size_, live_, *pending_);
  pending_->resolved.store(r, std::memory_order_relaxed);
  return r;
}

bool CArt::Find(uint64_t key, double* weight, bool* tombstone) const {
  if (pending_ != nullptr) {
    const uint64_t* k = pending_->keys();
    const uint64_t* it = std::lower_bound(k, k + pending_->n, key);
    if (it != k + pending_->n && *it == key) {
      const size_t j = static_cast<size_t>(it - k);
      const UpdateOp op = pending_->ops()[j];
      if (op == UpdateOp::kErase) return false;
      if (weight != nullptr) *weight = weighted_ ? pending_->weights()[j] : 1.0;
      if (tombstone != nullptr) *tombstone = op == UpdateOp::kTombstone;
      return true;
    }
  }
  const Node* n = root_;
  if (n == nullptr) return false;
  while (n->kind == kInner) {
    const Inner* in = AsInner(n);
    const int d = in->h.depth;
    if ((key & PrefixMask(d)) != in->prefix) return false;
    const int c = ByteAt(key, d);
    if (!TestBit(in->present, c)) return false;
    n = Children(in)[RankInclusive(in->starts, c) - 1];
  }
  const Leaf* l = AsLeaf(n);
  const int pos = LeafFind(l, key);
  if (pos < 0) return false;
  if (weight != nullptr) *weight = l->weighted ? LeafWeights(l)[pos] : 1.0;
  if (tombstone != nullptr) *tombstone = l->ntomb != 0 && TestBit(LeafTombs(l), pos);
  return true;
}

void CArt::ForEachChunkImpl(ChunkFn fn) const {
  alignas(64) uint64_t keys[kB];
  uint8_t tombs[kB];
  if (pending_ == nullptr) {
    if (root_ != nullptr) VisitChunks(root_, keys, tombs, fn);
    return;
  }
  const uint64_t* pk = pending_->keys();
  const double* pw = pending_->weights();
  const uint8_t* po = reinterpret_cast<const uint8_t*>(pending_->ops());
  ScanOverlaid(
      pending_->n, [pk](size_t p) { return pk[p]; },
      [&](size_t p) {
        if (po[p] == static_cast<uint8_t>(UpdateOp::kErase)) return true;
        return fn(pk + p, pw != nullptr ? pw + p : nullptr, po[p] != 0 ? po + p : nullptr, 1);
      },
      [&](auto&& chunk) {
        if (root_ != nullptr) VisitChunks(root_, keys, tombs, ChunkFn(chunk));
      },
      fn);
}

size_t CArt::MemoryBytes() const {
  return (root_ == nullptr ? 0 : NodeBytes(root_)) +
         (pending_ == nullptr ? 0 : PendingBytes(pending_->n, weighted_));
}

CArt::Shape CArt::GetShape() const {
  Shape s;
  if (root_ != nullptr) ShapeOf(root_, 1, &s);
  return s;
}

bool CArt::CheckInvariants(std::string* why) const {
  Checker ck{weighted_, why};
  if (root_ != nullptr) {
    uint64_t mn = 0, mx = 0;
    if (!ck.Check(root_, -1, false, &mn, &mx)) return false;
  }
  if (ck.size != size_) return ck.Fail("size() != entries", size_, ck.size);
  if (ck.live != live_) return ck.Fail("live_size() != live entries", live_, ck.live);
  if (pending_n_ != (pending_ == nullptr ? 0 : pending_->n)) {
    return ck.Fail("pending() != pending updates", pending_n_,
                   pending_ == nullptr ? 0 : pending_->n);
  }
  if (pending_ != nullptr) {
    const Pending& p = *pending_;
    if (p.n == 0 || p.n > kMaxPending) {
      return ck.Fail("pending updates out of range", p.n, kMaxPending);
    }
    if ((p.weighted != 0) != weighted_) return ck.Fail("pending weights", p.weighted, weighted_);
    for (size_t j = 0; j < p.n; ++j) {
      if (j > 0 && p.keys()[j - 1] >= p.keys()[j]) {
        return ck.Fail("pending keys not increasing at", j, p.n);
      }
      if (static_cast<uint8_t>(p.ops()[j]) > static_cast<uint8_t>(UpdateOp::kErase)) {
        return ck.Fail("pending op", j, static_cast<uint8_t>(p.ops()[j]));
      }
    }
    const uint64_t cached = p.resolved.load(std::memory_order_relaxed);
    const uint64_t r = ResolveCounts(NewTreeCursor(), size_, live_, p);
    if (cached != Pending::kUnresolved && cached != r) {
      return ck.Fail("pending counts resolved wrongly", cached, r);
    }
  }
  return true;
}

// ---- Cursor ----

CArt::Cursor CArt::NewTreeCursor() const {
  Cursor c(root_);
  if (root_ != nullptr) c.DescendFirst(root_);
  return c;
}

CArt::Cursor::Cursor(const Node* root) : root_(root) {}

void CArt::Cursor::EnterLeaf(const Leaf* l, uint32_t pos, uint64_t key) {
  leaf_ = l;
  keys_ = LeafKeys(l);
  weights_ = LeafWeights(l);
  tombs_ = LeafTombs(l);
  lcp_ = l->lcp;
  width_ = l->width;
  count_ = l->h.count;
  pos_ = pos;
  key_ = key;
  last_ = LastKey(l);
}

void CArt::Cursor::DescendFirst(const Node* n) {
  while (n->kind == kInner) {
    const Inner* in = AsInner(n);
    path_[sp_] = in;
    idx_[sp_] = 0;
    ++sp_;
    n = Children(in)[0];
  }
  const Leaf* l = AsLeaf(n);
  EnterLeaf(l, 0, FirstKey(l));
}

void CArt::Cursor::NextLeaf() {
  while (sp_ > 0) {
    const Inner* in = path_[sp_ - 1];
    if (idx_[sp_ - 1] + 1 < in->h.count) {
      ++idx_[sp_ - 1];
      DescendFirst(Children(in)[idx_[sp_ - 1]]);
      return;
    }
    --sp_;
  }
  leaf_ = nullptr;
}

void CArt::Cursor::SeekInLeaf(uint64_t key) {
  uint64_t at = 0;
  const size_t pos = LeafLowerBound(leaf_, key, &at);
  assert(pos < count_);
  pos_ = static_cast<uint32_t>(pos);
  key_ = at;
}

void CArt::Cursor::SeekSlow(uint64_t key) {
  // Lower bound from the root; every entry before it is < key, so this never moves backwards.
  sp_ = 0;
  leaf_ = nullptr;
  const Node* n = root_;
  while (n->kind == kInner) {
    const Inner* in = AsInner(n);
    const int d = in->h.depth;
    const uint64_t kp = key & PrefixMask(d);
    if (kp < in->prefix) {
      DescendFirst(n);
      return;
    }
    if (kp > in->prefix) {
      NextLeaf();
      return;
    }
    const int c = ByteAt(key, d);
    const int s = NextSetBit(in->present, c);
    if (s == 256) {
      NextLeaf();
      return;
    }
    const int k = RankInclusive(in->starts, s) - 1;
    path_[sp_] = in;
    idx_[sp_] = static_cast<uint16_t>(k);
    ++sp_;
    n = Children(in)[k];
    if (s > c) {  // slot s starts a run whose keys all exceed key
      DescendFirst(n);
      return;
    }
  }
  const Leaf* l = AsLeaf(n);
  uint64_t at = 0;
  const size_t pos = LeafLowerBound(l, key, &at);
  if (pos < l->h.count) {
    EnterLeaf(l, static_cast<uint32_t>(pos), at);
  } else {
    NextLeaf();
  }
}

}  // namespace strata::mem
