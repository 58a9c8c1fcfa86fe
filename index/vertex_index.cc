#include "index/vertex_index.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <functional>
#include <sstream>

#include "util/radix_sort.h"
#include "util/scratch.h"

namespace strata::index {

// ---------------------------------------------------------------------------------------------
// Pos

namespace {
constexpr uint64_t kOffsetLimit = uint64_t{1} << 40;
constexpr uint64_t kRunLimit = uint64_t{1} << 24;
constexpr uint64_t kFirstEdgeLimit = uint64_t{1} << 32;
constexpr uint32_t kRefLevel = 0xFF;  // slot[1] refers to an overflow page
}  // namespace

Pos Pos::Make(uint32_t level, const VertexEntry& e) {
  if (e.stream_offset >= kOffsetLimit || e.run_bytes >= kRunLimit || e.degree >= kDegreeMask ||
      e.first_edge >= kFirstEdgeLimit) {
    return LevelOnly(level);
  }
  const uint64_t flags = (e.flags & kVertexCallerFlags) | (e.has_tombstones ? 8u : 0u);
  Pos p;
  p.w0 = e.stream_offset | (e.run_bytes << 40);
  p.w1 = level | (flags << 8) | (e.degree << 12) | (e.first_edge << 32);
  return p;
}

Pos Pos::LevelOnly(uint32_t level) {
  Pos p;
  p.w1 = level | (kDegreeMask << 12);
  return p;
}

void Pos::ToEntry(VertexId u, VertexEntry* e) const {
  e->src = u;
  e->flags = vertex_flags();
  e->has_tombstones = ((w1 >> 8) & 8) != 0;
  e->degree = degree();
  e->ordinal = 0;
  e->stream_offset = w0 & (kOffsetLimit - 1);
  e->run_bytes = w0 >> 40;
  e->first_edge = w1 >> 32;
}

// ---------------------------------------------------------------------------------------------
// Pages and tree nodes

// The decoded form of one vertex while a page is rebuilt. slot[0]: first Pos (level 0: none).
// slot[1]: second Pos, none (level 0), or, for a vertex on three or more levels, a reference:
// w1 = kRefLevel | count << 8 | offset << 32, w0 = overflow page index; the vertex's Pos after
// the first are there.
struct Entry {
  Pos slot[2];
};

struct OverflowPage {
  uint32_t lo = 0, hi = 0;  // vertex offsets [lo, hi) within the range
  std::vector<Pos> pos;     // the overflow Pos of the range's vertices in [lo, hi), by vertex
};

// Variable-size entries: vertex i (the i-th present one) has its inline slots
// slots[start[i], start[i + 1]): one Pos, two Pos, or its first Pos and a reference to an
// overflow page. A vertex on one level costs 2 + 16 bytes.
struct RangePage {
  uint64_t bits[kRangeSize / 64] = {};
  uint16_t rank[kRangeSize / 64] = {};  // vertices before word w
  uint32_t n = 0;                       // vertices present
  std::vector<uint16_t> start;          // n + 1 offsets into slots (at most 2 slots a vertex)
  std::vector<Pos> slots;
  std::vector<std::shared_ptr<const OverflowPage>> overflow;  // partition [0, kRangeSize)
  uint64_t bytes = 0;                   // this page with its overflow pages

  uint32_t Slots(uint32_t i) const { return start[i + 1] - start[i]; }
};

struct RadixNode {
  uint64_t bits = 0;                           // digits with a child
  std::vector<std::shared_ptr<const void>> kids;  // RadixNode, or RangePage at height 1
};

namespace {

constexpr uint64_t kControlBlock = 16;  // shared_ptr control block (make_shared)

uint64_t OverflowBytes(const OverflowPage& o) {
  return sizeof(OverflowPage) + kControlBlock + o.pos.capacity() * sizeof(Pos);
}

uint64_t NodeBytes(const RadixNode& n) {
  return sizeof(RadixNode) + kControlBlock + n.kids.capacity() * sizeof(n.kids[0]);
}

uint64_t RefCount(const Pos& s) { return (s.w1 >> 8) & 0xFFFFFF; }
uint64_t RefOffset(const Pos& s) { return s.w1 >> 32; }
Pos MakeRef(uint64_t page, uint64_t offset, uint64_t count) {
  Pos p;
  p.w0 = page;
  p.w1 = kRefLevel | (count << 8) | (offset << 32);
  return p;
}

// Vertex i of page p.
void Locate(const RangePage& p, uint32_t i, VertexIndex::Located* out) {
  const uint32_t s = p.start[i];
  out->a = p.slots.data() + s;
  out->na = p.Slots(i);
  out->b = nullptr;
  out->nb = 0;
  if (out->na == 2 && p.slots[s + 1].level() == kRefLevel) {
    const Pos& ref = p.slots[s + 1];
    out->na = 1;
    const OverflowPage& o = *p.overflow[ref.w0];
    out->b = o.pos.data() + RefOffset(ref);
    out->nb = static_cast<uint32_t>(RefCount(ref));
  }
}

void Decode(const RangePage& p, uint32_t i, VertexInfo* info) {
  VertexIndex::Located l;
  Locate(p, i, &l);
  info->pos.clear();
  for (uint32_t k = 0; k < l.size(); ++k) info->pos.push_back(l[k]);
}

// Calls fn(offset, i) for each vertex of a page (i: its index among the present), ascending.
template <class F>
void ForEachEntry(const RangePage& p, F&& fn) {
  uint32_t i = 0;
  for (uint32_t w = 0; w < kRangeSize / 64; ++w) {
    for (uint64_t m = p.bits[w]; m != 0; m &= m - 1) {
      const uint32_t off = w * 64 + static_cast<uint32_t>(std::countr_zero(m));
      if (!fn(off, i++)) return;
    }
  }
}

void ApplyOne(const VertexIndex::Edit& ed, VertexInfo* info) {
  auto at = std::lower_bound(info->pos.begin(), info->pos.end(), ed.pos.level(),
                             [](const Pos& p, uint32_t l) { return p.level() < l; });
  const bool here = at != info->pos.end() && at->level() == ed.pos.level();
  switch (ed.kind) {
    case VertexIndex::Edit::kLevelErase:
      if (here) info->pos.erase(at);
      break;
    case VertexIndex::Edit::kLevelSet:
      if (here) {
        *at = ed.pos;
      } else {
        info->pos.insert(at, ed.pos);
      }
      break;
  }
}

// The vertices of one range with overflow Pos, as a rebuild lays them out.
struct Rest {
  uint32_t off;      // vertex offset in the range
  uint32_t entry;    // index in the new page's entries
  uint32_t start;    // in the rebuild's arena
  uint32_t n;
};

struct Segment {
  uint32_t lo, hi;
  std::shared_ptr<const OverflowPage> old;  // reusable as is (content unchanged), or null
  size_t rb, re;                            // its rests [rb, re)
  size_t count = 0;                         // Pos
};

// Working buffers of Apply and RebuildPage, kept per thread (an install rebuilds thousands of
// pages; fresh buffers per page were a heap allocation and free each, several KiB apiece).
struct RebuildScratch {
  std::vector<Entry> entries;  // decoded; encoded into the page at the end
  std::vector<Pos> arena;
  std::vector<Rest> rests;
  std::vector<std::pair<uint32_t, uint32_t>> olds;  // (offset, index in old)
  VertexInfo info;
  RadixSortScratch<VertexIndex::Edit> sort;  // Apply's sort of the edits
};

// Builds the page of one range from the old page (may be null) and the edits of the range
// (sorted by vertex, in application order per vertex). Returns null when no vertex is left.
std::shared_ptr<const RangePage> RebuildPage(const RangePage* old, uint64_t range,
                                             const VertexIndex::Edit* eb,
                                             const VertexIndex::Edit* ee, RebuildScratch* sc) {
  auto page = std::make_shared<RangePage>();
  std::vector<Entry>& entries = sc->entries;
  std::vector<Pos>& arena = sc->arena;
  std::vector<Rest>& rests = sc->rests;
  std::vector<std::pair<uint32_t, uint32_t>>& olds = sc->olds;
  VertexInfo& info = sc->info;
  entries.clear();
  arena.clear();
  rests.clear();
  olds.clear();
  uint64_t dirty[kRangeSize / 64] = {};  // vertices whose overflow Pos may have changed

  auto emit = [&](uint32_t off, const Entry& e, const Pos* rest, uint32_t nrest) {
    page->bits[off >> 6] |= uint64_t{1} << (off & 63);
    entries.push_back(e);
    if (nrest != 0) {
      rests.push_back({off, static_cast<uint32_t>(entries.size() - 1),
                       static_cast<uint32_t>(arena.size()), nrest});
      arena.insert(arena.end(), rest, rest + nrest);
    }
  };

  // Old vertices in order, merged with the edited ones.
  if (old != nullptr) {
    olds.reserve(old->n);
    ForEachEntry(*old, [&](uint32_t off, uint32_t i) {
      olds.emplace_back(off, i);
      return true;
    });
  }
  entries.reserve(olds.size() + static_cast<size_t>(ee - eb));
  size_t oi = 0;
  const VertexIndex::Edit* ei = eb;
  while (oi < olds.size() || ei != ee) {
    const uint32_t eoff = ei != ee ? static_cast<uint32_t>(ei->u & (kRangeSize - 1)) : kRangeSize;
    const uint32_t ooff = oi < olds.size() ? olds[oi].first : kRangeSize;
    if (ooff < eoff) {  // untouched (a reference slot is rewritten below)
      const uint32_t i = olds[oi].second;
      Entry e;
      for (uint32_t k = 0; k < old->Slots(i); ++k) e.slot[k] = old->slots[old->start[i] + k];
      VertexIndex::Located l;
      Locate(*old, i, &l);
      emit(ooff, e, l.b, l.nb);
      ++oi;
      continue;
    }
    const bool had_old = ooff == eoff;
    bool had_overflow = false;
    if (had_old) {
      Decode(*old, olds[oi].second, &info);
      had_overflow = info.pos.size() > 2;
      ++oi;
    } else {
      info = VertexInfo();
    }
    for (; ei != ee && (ei->u & (kRangeSize - 1)) == eoff; ++ei) ApplyOne(*ei, &info);
    if (had_overflow || info.pos.size() > 2) dirty[eoff >> 6] |= uint64_t{1} << (eoff & 63);
    if (info.empty()) continue;
    Entry e;
    if (!info.pos.empty()) e.slot[0] = info.pos[0];
    if (info.pos.size() == 2) e.slot[1] = info.pos[1];
    emit(eoff, e, info.pos.size() > 2 ? info.pos.data() + 1 : nullptr,
         info.pos.size() > 2 ? static_cast<uint32_t>(info.pos.size() - 1) : 0);
  }
  if (entries.empty()) return nullptr;
  uint16_t r = 0;
  for (uint32_t w = 0; w < kRangeSize / 64; ++w) {
    page->rank[w] = r;
    r = static_cast<uint16_t>(r + std::popcount(page->bits[w]));
  }

  // Overflow pages: start from the old partition; rebuild the sub-ranges whose content changed,
  // split those over capacity in half, merge small neighbours.
  if (!rests.empty()) {
    auto any_dirty = [&](uint32_t lo, uint32_t hi) {
      for (uint32_t o = lo; o < hi; ++o) {
        if ((dirty[o >> 6] >> (o & 63)) & 1) return true;
      }
      return false;
    };
    std::vector<Segment> segs;
    if (old != nullptr && !old->overflow.empty()) {
      for (const auto& op : old->overflow) segs.push_back({op->lo, op->hi, op, 0, 0, 0});
    } else {
      segs.push_back({0, kRangeSize, nullptr, 0, 0, 0});
    }
    auto fill = [&](Segment* s, size_t from) {  // rests of [lo, hi) starting the search at from
      size_t i = from;
      while (i < rests.size() && rests[i].off < s->lo) ++i;
      s->rb = i;
      s->count = 0;
      while (i < rests.size() && rests[i].off < s->hi) s->count += rests[i++].n;
      s->re = i;
    };
    std::vector<Segment> out;
    size_t from = 0;
    for (Segment s : segs) {
      fill(&s, from);
      from = s.re;
      if (s.old != nullptr && any_dirty(s.lo, s.hi)) s.old = nullptr;
      // Split in half while over capacity (one vertex holds at most kMaxIndexedLevel Pos).
      std::vector<Segment> stack{s};
      std::vector<Segment> pieces;
      while (!stack.empty()) {
        Segment c = stack.back();
        stack.pop_back();
        if (c.count <= kOverflowCapacity) {
          pieces.push_back(c);
          continue;
        }
        const uint32_t mid = c.lo + (c.hi - c.lo) / 2;
        Segment left{c.lo, mid, nullptr, 0, 0, 0}, right{mid, c.hi, nullptr, 0, 0, 0};
        fill(&left, c.rb);
        fill(&right, left.re);
        stack.push_back(right);
        stack.push_back(left);
      }
      out.insert(out.end(), pieces.begin(), pieces.end());
    }
    // Merge neighbours that together fill at most half a page, or where one is empty.
    std::vector<Segment> merged;
    for (const Segment& s : out) {
      if (!merged.empty()) {
        Segment& b = merged.back();
        if (b.count + s.count <= kOverflowCapacity / 2 || b.count == 0 || s.count == 0) {
          if (b.count + s.count <= kOverflowCapacity) {
            b.hi = s.hi;
            b.re = s.re;
            b.count += s.count;
            b.old = nullptr;
            continue;
          }
        }
      }
      merged.push_back(s);
    }
    page->overflow.reserve(merged.size());
    for (size_t pi = 0; pi < merged.size(); ++pi) {
      const Segment& s = merged[pi];
      std::shared_ptr<const OverflowPage> op = s.old;
      if (op == nullptr) {
        auto np = std::make_shared<OverflowPage>();
        np->lo = s.lo;
        np->hi = s.hi;
        np->pos.reserve(s.count);
        for (size_t i = s.rb; i < s.re; ++i) {
          np->pos.insert(np->pos.end(), arena.begin() + rests[i].start,
                         arena.begin() + rests[i].start + rests[i].n);
        }
        op = std::move(np);
      }
      uint64_t at = 0;
      for (size_t i = s.rb; i < s.re; ++i) {
        entries[rests[i].entry].slot[1] = MakeRef(pi, at, rests[i].n);
        at += rests[i].n;
      }
      page->overflow.push_back(std::move(op));
    }
  }
  // Encode.
  page->n = static_cast<uint32_t>(entries.size());
  uint32_t nslots = 0;
  for (const Entry& e : entries) nslots += (e.slot[0].level() != 0) + (e.slot[1].level() != 0);
  page->start.reserve(entries.size() + 1);
  page->slots.reserve(nslots);
  for (const Entry& e : entries) {
    page->start.push_back(static_cast<uint16_t>(page->slots.size()));
    for (const Pos& q : e.slot) {
      if (q.level() != 0) page->slots.push_back(q);
    }
  }
  page->start.push_back(static_cast<uint16_t>(page->slots.size()));
  page->bytes = sizeof(RangePage) + kControlBlock + page->start.capacity() * sizeof(uint16_t) + page->slots.capacity() * sizeof(Pos) +
                page->overflow.capacity() * sizeof(page->overflow[0]);
  for (const auto& op : page->overflow) page->bytes += OverflowBytes(*op);
  (void)range;
  return page;
}

struct Change {
  uint64_t range;
  std::shared_ptr<const RangePage> page;  // null: the range has no vertex left
};

// The node at height h replacing `old` (may be null) with changes [b, e), all in its subtree.
std::shared_ptr<const RadixNode> UpdateNode(const RadixNode* old, int h, const Change* b,
                                            const Change* e, int64_t* dbytes) {
  auto n = std::make_shared<RadixNode>();
  const unsigned shift = 6 * static_cast<unsigned>(h - 1);
  size_t oi = 0;
  const Change* c = b;
  for (unsigned d = 0; d < 64; ++d) {
    const bool has_old = old != nullptr && ((old->bits >> d) & 1);
    const Change* ce = c;
    while (ce != e && ((ce->range >> shift) & 63) == d) ++ce;
    std::shared_ptr<const void> kid;
    if (has_old) kid = old->kids[oi++];
    if (c != ce) {
      if (h == 1) {
        kid = (ce - 1)->page;
      } else {
        kid = UpdateNode(static_cast<const RadixNode*>(kid.get()), h - 1, c, ce, dbytes);
      }
      c = ce;
    }
    if (kid != nullptr) {
      n->bits |= uint64_t{1} << d;
      n->kids.push_back(std::move(kid));
    }
  }
  if (old != nullptr) *dbytes -= static_cast<int64_t>(NodeBytes(*old));
  if (n->bits == 0) return nullptr;
  n->kids.shrink_to_fit();
  *dbytes += static_cast<int64_t>(NodeBytes(*n));
  return n;
}

int HeightFor(uint64_t range) {
  int h = 1;
  while (h < 9 && (range >> (6 * h)) != 0) ++h;
  return h;
}

template <class F>
bool WalkPages(const RadixNode* n, int h, uint64_t prefix, F&& fn) {
  size_t i = 0;
  for (uint64_t m = n->bits; m != 0; m &= m - 1) {
    const uint64_t d = static_cast<uint64_t>(std::countr_zero(m));
    const void* kid = n->kids[i++].get();
    const uint64_t r = (prefix << 6) | d;
    if (h == 1) {
      if (!fn(r, static_cast<const RangePage*>(kid))) return false;
    } else if (!WalkPages(static_cast<const RadixNode*>(kid), h - 1, r, fn)) {
      return false;
    }
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// VertexIndex

VertexIndex::VertexIndex() = default;

const RangePage* VertexIndex::FindPage(uint64_t range) const {
  const RadixNode* n = root_.get();
  if (n == nullptr) return nullptr;
  if (height_ < 9 && (range >> (6 * height_)) != 0) return nullptr;
  for (int h = height_;; --h) {
    const unsigned d = static_cast<unsigned>(range >> (6 * (h - 1))) & 63;
    if (((n->bits >> d) & 1) == 0) return nullptr;
    const void* kid = n->kids[std::popcount(n->bits & ((uint64_t{1} << d) - 1))].get();
    if (h == 1) return static_cast<const RangePage*>(kid);
    n = static_cast<const RadixNode*>(kid);
  }
}

bool VertexIndex::Find(VertexId u, Located* out) const {
  const RangePage* p = FindPage(u >> kRangeBits);
  if (p == nullptr) return false;
  const uint32_t off = static_cast<uint32_t>(u & (kRangeSize - 1));
  const uint64_t word = p->bits[off >> 6];
  const uint64_t bit = uint64_t{1} << (off & 63);
  if ((word & bit) == 0) return false;
  Locate(*p, p->rank[off >> 6] + static_cast<uint32_t>(std::popcount(word & (bit - 1))), out);
  return true;
}

Status VertexIndex::Apply(std::vector<Edit>* edits, VertexIndex* out) const {
  for (const Edit& e : *edits) {
    if ((e.kind == Edit::kLevelErase || e.kind == Edit::kLevelSet) &&
        (e.pos.level() == 0 || e.pos.level() > kMaxIndexedLevel)) {
      return Status::InvalidArgument("vertex index: level " + std::to_string(e.pos.level()) +
                                     " of vertex " + std::to_string(e.u) + " is outside [1, " +
                                     std::to_string(kMaxIndexedLevel) + "]");
    }
  }
  // Buffers reused across calls on this thread (util/scratch.h): an install calls Apply once
  // per step of ApplyFileChanges.
  thread_local RebuildScratch scratch;
  StableRadixSort(edits, [](const Edit& e) { return e.u; }, &scratch.sort);
  scratch.sort.Release();
  VertexIndex r = *this;
  std::vector<Change> changes;
  int64_t dbytes = 0;
  for (size_t i = 0; i < edits->size();) {
    const uint64_t range = (*edits)[i].u >> kRangeBits;
    size_t j = i;
    while (j < edits->size() && ((*edits)[j].u >> kRangeBits) == range) ++j;
    const RangePage* old = FindPage(range);
    std::shared_ptr<const RangePage> np =
        RebuildPage(old, range, edits->data() + i, edits->data() + j, &scratch);
    if (old != nullptr) {
      dbytes -= static_cast<int64_t>(old->bytes);
      r.vertices_ -= old->n;
      r.overflow_pages_ -= old->overflow.size();
      --r.range_pages_;
    }
    if (np != nullptr) {
      dbytes += static_cast<int64_t>(np->bytes);
      r.vertices_ += np->n;
      r.overflow_pages_ += np->overflow.size();
      ++r.range_pages_;
    }
    if (old != nullptr || np != nullptr) changes.push_back({range, std::move(np)});
    i = j;
  }
  if (!changes.empty()) {
    const int need = HeightFor(changes.back().range);
    if (r.root_ == nullptr) {
      r.height_ = need;
    }
    while (r.height_ < need) {  // grow: the old tree becomes digit 0 of a new root
      auto n = std::make_shared<RadixNode>();
      n->bits = 1;
      n->kids.push_back(r.root_);
      dbytes += static_cast<int64_t>(NodeBytes(*n));
      r.root_ = std::move(n);
      ++r.height_;
    }
    r.root_ = UpdateNode(r.root_.get(), r.height_, changes.data(),
                         changes.data() + changes.size(), &dbytes);
    if (r.root_ == nullptr) r.height_ = 0;
  }
  r.bytes_ = static_cast<uint64_t>(static_cast<int64_t>(r.bytes_) + dbytes);
  *out = std::move(r);
  return Status::OK();
}

void VertexIndex::ForEach(FunctionRef<bool(VertexId, const VertexInfo&)> fn) const {
  if (root_ == nullptr) return;
  VertexInfo info;
  WalkPages(root_.get(), height_, 0, [&](uint64_t range, const RangePage* p) {
    bool go = true;
    ForEachEntry(*p, [&](uint32_t off, uint32_t i) {
      Decode(*p, i, &info);
      return go = fn((range << kRangeBits) | off, info);
    });
    return go;
  });
}

void VertexIndex::ForEachIn(VertexId begin, VertexId end,
                            FunctionRef<bool(VertexId, const Located&)> fn) const {
  if (begin >= end) return;
  Located loc;
  for (uint64_t r = begin >> kRangeBits; r <= (end - 1) >> kRangeBits; ++r) {
    const RangePage* p = FindPage(r);
    if (p == nullptr) continue;
    const VertexId base = r << kRangeBits;
    const uint32_t lo = begin > base ? static_cast<uint32_t>(begin - base) : 0;
    const uint32_t hi = static_cast<uint32_t>(std::min<VertexId>(end - base, kRangeSize));
    for (uint32_t w = lo >> 6; w < (hi + 63) >> 6; ++w) {
      uint64_t m = p->bits[w];
      if (w == lo >> 6) m &= ~uint64_t{0} << (lo & 63);
      if (w == (hi - 1) >> 6 && (hi & 63) != 0) m &= (uint64_t{1} << (hi & 63)) - 1;
      for (; m != 0; m &= m - 1) {
        const uint32_t b = static_cast<uint32_t>(std::countr_zero(m));
        const uint64_t below = p->bits[w] & ((uint64_t{1} << b) - 1);
        Locate(*p, p->rank[w] + static_cast<uint32_t>(std::popcount(below)), &loc);
        if (!fn(base + w * 64 + b, loc)) return;
      }
    }
  }
}

size_t VertexIndex::LocateGroup(VertexId base, uint64_t mask, VertexId* us, Located* out) const {
  assert(base % 64 == 0);
  if (mask == 0) return 0;
  const RangePage* p = FindPage(base >> kRangeBits);
  if (p == nullptr) return 0;
  const uint32_t w = static_cast<uint32_t>((base & (kRangeSize - 1)) >> 6);
  const uint64_t present = p->bits[w];
  size_t n = 0;
  for (uint64_t m = present & mask; m != 0; m &= m - 1) {
    const uint32_t b = static_cast<uint32_t>(std::countr_zero(m));
    us[n] = base + b;
    const uint64_t below = present & ((uint64_t{1} << b) - 1);
    Locate(*p, p->rank[w] + static_cast<uint32_t>(std::popcount(below)), &out[n]);
    ++n;
  }
  return n;
}

bool VertexIndex::SameContents(const VertexIndex& o, std::string* first_difference) const {
  std::vector<std::pair<VertexId, VertexInfo>> a, b;
  ForEach([&](VertexId u, const VertexInfo& i) {
    a.emplace_back(u, i);
    return true;
  });
  o.ForEach([&](VertexId u, const VertexInfo& i) {
    b.emplace_back(u, i);
    return true;
  });
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && i < b.size() && a[i] == b[i]) continue;
    if (first_difference != nullptr) {
      std::ostringstream s;
      auto show = [&](const std::vector<std::pair<VertexId, VertexInfo>>& v) {
        if (i >= v.size()) return std::string("(end)");
        std::ostringstream t;
        t << "vertex " << v[i].first;
        for (const Pos& p : v[i].second.pos) {
          VertexEntry e;
          p.ToEntry(v[i].first, &e);
          t << " L" << p.level() << (p.has_entry() ? "" : "(level only)") << "{deg "
            << e.degree << " off " << e.stream_offset << " run " << e.run_bytes << " first "
            << e.first_edge << " flags " << int(e.flags) << (e.has_tombstones ? " t" : "")
            << "}";
        }
        return t.str();
      };
      s << "entry " << i << ": " << show(a) << " vs " << show(b);
      *first_difference = s.str();
    }
    return false;
  }
  return true;
}

uint64_t VertexIndex::SharedRangePages(const VertexIndex& o) const {
  uint64_t n = 0;
  if (root_ == nullptr) return 0;
  WalkPages(root_.get(), height_, 0, [&](uint64_t range, const RangePage* p) {
    if (o.FindPage(range) == p) ++n;
    return true;
  });
  return n;
}

std::vector<VertexIndex::PageShape> VertexIndex::Shape() const {
  std::vector<PageShape> r;
  if (root_ == nullptr) return r;
  WalkPages(root_.get(), height_, 0, [&](uint64_t range, const RangePage* p) {
    PageShape s;
    s.range = range;
    s.vertices = p->n;
    for (const auto& op : p->overflow) {
      s.overflow.emplace_back(op->lo, op->hi);
      s.overflow_fill.push_back(static_cast<uint32_t>(op->pos.size()));
    }
    r.push_back(std::move(s));
    return true;
  });
  return r;
}

std::string VertexIndex::Dump(size_t max_vertices) const {
  std::ostringstream s;
  s << vertices_ << " vertices, " << range_pages_ << " range pages, " << overflow_pages_
    << " overflow pages, " << bytes_ << " bytes\n";
  size_t n = 0;
  ForEach([&](VertexId u, const VertexInfo& info) {
    if (n++ == max_vertices) {
      s << "...\n";
      return false;
    }
    s << u << ":";
    for (const Pos& p : info.pos) {
      VertexEntry e;
      p.ToEntry(u, &e);
      s << " L" << p.level();
      if (p.has_entry()) {
        s << "(deg " << e.degree << " @" << e.stream_offset << "+" << e.run_bytes << ")";
      } else {
        s << "(level only)";
      }
    }
    s << "\n";
    return true;
  });
  return s.str();
}

Status VertexIndex::CheckInvariants() const {
  uint64_t verts = 0, pages = 0, ovf = 0, bytes = 0;
  std::string err;
  auto fail = [&](uint64_t range, const std::string& what) {
    if (err.empty()) err = "range " + std::to_string(range) + ": " + what;
    return false;
  };
  std::vector<const RadixNode*> nodes;
  std::function<void(const RadixNode*, int)> walk_nodes = [&](const RadixNode* n, int h) {
    bytes += NodeBytes(*n);
    if (static_cast<size_t>(std::popcount(n->bits)) != n->kids.size()) err = "radix node kids";
    if (h == 1) return;
    for (const auto& k : n->kids) walk_nodes(static_cast<const RadixNode*>(k.get()), h - 1);
  };
  if (root_ != nullptr) walk_nodes(root_.get(), height_);
  if (root_ != nullptr) {
    WalkPages(root_.get(), height_, 0, [&](uint64_t range, const RangePage* p) {
      ++pages;
      ovf += p->overflow.size();
      bytes += p->bytes;
      verts += p->n;
      if (p->n == 0) return fail(range, "empty page");
      // Entry arrays: n + 1 slot offsets from 0 to slots.size(), one or two slots a vertex.
      if (p->start.size() != p->n + 1 || p->start[0] != 0 || p->start[p->n] != p->slots.size()) {
        return fail(range, "slot offsets");
      }
      for (uint32_t i = 0; i < p->n; ++i) {
        if (p->start[i + 1] <= p->start[i] || p->Slots(i) > 2) return fail(range, "slot count");
      }
      uint32_t r = 0;
      for (uint32_t w = 0; w < kRangeSize / 64; ++w) {
        if (p->rank[w] != r) return fail(range, "rank");
        r += static_cast<uint32_t>(std::popcount(p->bits[w]));
      }
      if (r != p->n) return fail(range, "bitmap count");
      // Overflow pages partition [0, kRangeSize), hold only their sub-range's vertices, fit,
      // and no two neighbours could be merged.
      uint32_t next = 0;
      std::vector<uint32_t> used(p->overflow.size(), 0);
      for (size_t i = 0; i < p->overflow.size(); ++i) {
        const OverflowPage& o = *p->overflow[i];
        if (o.lo != next || o.hi <= o.lo) return fail(range, "overflow pages do not partition");
        next = o.hi;
        if (o.pos.size() > kOverflowCapacity) return fail(range, "overflow page over capacity");
        if (o.pos.empty() && p->overflow.size() > 1) return fail(range, "empty overflow page");
        if (i > 0 && p->overflow[i - 1]->pos.size() + o.pos.size() <= kOverflowCapacity / 2) {
          return fail(range, "mergeable overflow pages");
        }
      }
      if (!p->overflow.empty() && next != kRangeSize) return fail(range, "overflow partition end");
      bool ok = true;
      ForEachEntry(*p, [&](uint32_t off, uint32_t vi) {
        const Pos* sl = p->slots.data() + p->start[vi];
        const uint32_t ns = p->Slots(vi);
        for (uint32_t k = 0; k < ns; ++k) {
          if (sl[k].level() == 0) return ok = fail(range, "empty slot");
          if (sl[k].level() == kRefLevel && k != 1) return ok = fail(range, "misplaced reference");
        }
        if (ns == 2 && sl[1].level() == kRefLevel) {
          const uint64_t pi = sl[1].w0;
          if (pi >= p->overflow.size()) return ok = fail(range, "bad overflow reference");
          const OverflowPage& o = *p->overflow[pi];
          if (off < o.lo || off >= o.hi) return ok = fail(range, "vertex in the wrong page");
          if (RefOffset(sl[1]) != used[pi]) return ok = fail(range, "overflow layout");
          used[pi] += static_cast<uint32_t>(RefCount(sl[1]));
          if (RefCount(sl[1]) < 2) return ok = fail(range, "overflow of one Pos");
        }
        VertexInfo info;
        Decode(*p, vi, &info);
        for (size_t i = 1; i < info.pos.size(); ++i) {
          if (info.pos[i - 1].level() >= info.pos[i].level()) {
            return ok = fail(range, "levels not ascending");
          }
        }
        return true;
      });
      if (!ok) return false;
      for (size_t i = 0; i < used.size(); ++i) {
        if (used[i] != p->overflow[i]->pos.size()) return fail(range, "overflow fill");
      }
      return true;
    });
  }
  if (!err.empty()) return Status::Corruption("vertex index: " + err);
  if (verts != vertices_ || pages != range_pages_ || ovf != overflow_pages_ || bytes != bytes_) {
    return Status::Corruption("vertex index: counters disagree with the pages");
  }
  return Status::OK();
}

}  // namespace strata::index
