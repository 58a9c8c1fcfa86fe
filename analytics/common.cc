#include "analytics/common.h"

#include <algorithm>
#include <atomic>
#include <cassert>

#include <tbb/task_arena.h>

namespace strata::analytics {

namespace {
constexpr VertexId kGroup = 64;    // ranges are cut at subgraph (64-vertex) boundaries
constexpr VertexId kBlock = kLayoutBlock;  // vertices per ScanVertices call (layout)
}  // namespace

Status BuildLayout(const Snapshot& snap, Layout* layout) {
  return BuildLayout(snap, layout, [](VertexId, const NeighborChunk&, uint64_t) {});
}

namespace {

// The layout's block pass: fill(lo, hi) sets exists[] and out_degree of the block's vertices
// (an error if it reports a vertex outside [lo, hi)).
Status LayoutPass(const Snapshot& snap, Layout* layout,
                  FunctionRef<Status(VertexId lo, VertexId hi)> fill);

// exists[] of [lo, hi) from ScanVertices.
Status FillExists(const Snapshot& snap, Layout* layout, VertexId lo, VertexId hi) {
  bool out_of_block = false;
  Status s = snap.ScanVertices(lo, hi, [&](VertexId v) {
    if (v < lo || v >= hi) {
      out_of_block = true;
      return false;
    }
    layout->exists[v] = 1;
    return true;
  });
  if (s.ok() && out_of_block) s = Status::Corruption("analytics: ScanVertices left its range");
  return s;
}

}  // namespace

// The out-lists of block [lo, hi)'s existing vertices in one streamed pass (not a lookup per
// vertex): visit(u, chunk, offset), offset = u's neighbors before the chunk, counted in deg.
Status VisitBlock(const Snapshot& snap, const UninitVector<uint8_t>& exists, VertexId lo,
                  VertexId hi, bool weights, uint64_t* deg,
                  FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit) {
  bool out_of_block = false;
  Status s = snap.ScanAdjacency(lo, hi, Direction::kOut, weights,
                                [&](VertexId u) { return u < lo || u >= hi || exists[u]; },
                                [&](VertexId u, const NeighborChunk& c) {
    if (u < lo || u >= hi) {
      out_of_block = true;
      return ScanStep::kStop;
    }
    visit(u, c, deg[u - lo]);
    deg[u - lo] += c.size;
    return ScanStep::kMore;
  });
  if (s.ok() && out_of_block) s = Status::Corruption("analytics: ScanAdjacency left its range");
  return s;
}

Status BuildLayout(const Snapshot& snap, Layout* layout,
                   FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                   bool weights) {
  Layout& L = *layout;
  L.exact_degrees = true;
  return LayoutPass(snap, layout, [&](VertexId lo, VertexId hi) {
    Status s = FillExists(snap, layout, lo, hi);
    if (!s.ok()) return s;
    return VisitBlock(snap, L.exists, lo, hi, weights, L.out_degree.data() + lo, visit);
  });
}

Status VisitOutLists(const Snapshot& snap, const Layout& L,
                     FunctionRef<void(VertexId u, const NeighborChunk& c, uint64_t offset)> visit,
                     bool weights) {
  const size_t blocks = static_cast<size_t>((L.bound + kBlock - 1) / kBlock);
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks), [&](const tbb::blocked_range<size_t>& r) {
    std::vector<uint64_t> deg(kBlock);
    for (size_t b = r.begin(); b < r.end() && !err.failed(); ++b) {
      const VertexId lo = b * kBlock, hi = std::min<VertexId>(L.bound, lo + kBlock);
      std::fill(deg.begin(), deg.end(), 0);
      err.Set(VisitBlock(snap, L.exists, lo, hi, weights, deg.data(), visit));
    }
  });
  return err.Get();
}

Status EstimateLayout(const Snapshot& snap, Layout* layout) {
  Layout& L = *layout;
  L.exact_degrees = false;
  return LayoutPass(snap, layout, [&](VertexId lo, VertexId hi) {
    // Vertices and degree bounds in one pass over the vertex tables.
    bool out_of_block = false;
    Status s = snap.ScanVertexDegreeBounds(lo, hi, Direction::kOut, [&](VertexId u, uint64_t d) {
      if (u < lo || u >= hi) {
        out_of_block = true;
        return false;
      }
      L.exists[u] = 1;
      L.out_degree[u] = d;
      return true;
    });
    if (s.ok() && out_of_block) {
      s = Status::Corruption("analytics: ScanVertexDegreeBounds left its range");
    }
    return s;
  });
}

namespace {

Status LayoutPass(const Snapshot& snap, Layout* layout,
                  FunctionRef<Status(VertexId lo, VertexId hi)> fill) {
  Layout& L = *layout;
  L.kind = snap.kind();
  L.dangling = L.kind == GraphKind::kDirected;
  const VertexId bound = snap.VertexIdBound();
  L.bound = bound;
  // Sized without zeroing: each block zeroes its own part below, in parallel.
  L.exists.resize(bound);
  L.out_degree.resize(bound);
  L.ranges.clear();
  const size_t groups = static_cast<size_t>((bound + kGroup - 1) / kGroup);
  const size_t blocks = static_cast<size_t>((bound + kBlock - 1) / kBlock);
  std::vector<uint64_t> work(groups, 0);   // per group: sum of (out-degree + 1) + 1
  std::vector<uint64_t> edges(groups, 0);  // per group: sum of out-degrees
  std::vector<uint64_t> block_vertices(blocks, 0), block_edges(blocks, 0);

  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t b = r.begin(); b < r.end(); ++b) {
      if (err.failed()) return;
      const VertexId lo = b * kBlock, hi = std::min<VertexId>(bound, lo + kBlock);
      uint64_t nv = 0, ne = 0;
      std::fill(L.exists.data() + lo, L.exists.data() + hi, 0);
      std::fill(L.out_degree.data() + lo, L.out_degree.data() + hi, 0);
      err.Set(fill(lo, hi));
      for (VertexId g = lo / kGroup; g * kGroup < hi; ++g) {
        uint64_t n = 0, e = 0;  // out_degree is 0 where a vertex does not exist
        for (VertexId v = g * kGroup; v < std::min<VertexId>(bound, (g + 1) * kGroup); ++v) {
          n += L.exists[v];
          e += L.out_degree[v];
        }
        work[g] = 1 + e + n;
        edges[g] = e;
        nv += n;
        ne += e;
      }
      block_vertices[b] = nv;
      block_edges[b] = ne;
    }
  });
  if (err.failed()) return err.Get();

  L.num_vertices = 0;
  L.num_out_edges = 0;
  for (size_t b = 0; b < blocks; ++b) {
    L.num_vertices += block_vertices[b];
    L.num_out_edges += block_edges[b];
  }
  // Cut [0, bound) greedily into about `parts` ranges of equal work, at group boundaries.
  uint64_t total = 0;
  for (uint64_t w : work) total += w;
  const size_t parts =
      std::max<size_t>(1, std::min<size_t>(groups, 32 * static_cast<size_t>(tbb::this_task_arena::max_concurrency())));
  const uint64_t target = std::max<uint64_t>(1, (total + parts - 1) / parts);
  VertexId begin = 0;
  uint64_t acc = 0, range_edges = 0;
  L.range_edges.clear();
  for (size_t g = 0; g < groups; ++g) {
    acc += work[g];
    range_edges += edges[g];
    if (acc >= target) {
      const VertexId end = std::min<VertexId>(bound, (g + 1) * kGroup);
      L.ranges.push_back({begin, end});
      L.range_edges.push_back(range_edges);
      begin = end;
      acc = 0;
      range_edges = 0;
    }
  }
  if (begin < bound) {
    L.ranges.push_back({begin, bound});
    L.range_edges.push_back(range_edges);
  }
  return Status::OK();
}

}  // namespace

ListCache::ListCache(const Snapshot& snap, Direction d, size_t max_bytes, bool keep_weights)
    : d_(d),
      bound_(snap.VertexIdBound()),
      narrow_(bound_ <= (VertexId{1} << 32)),
      weights_(keep_weights && snap.weighted()),
      max_bytes_(max_bytes),
      blocks_(static_cast<size_t>((bound_ + kLayoutBlock - 1) / kLayoutBlock)) {}

size_t ListCache::Held(const Block& b) const {
  return b.ids32.capacity() * 4 + b.ids64.capacity() * 8 + b.w.capacity() * 8 +
         b.skip.capacity() * 8;
}

uint64_t ListCache::LimitDegree(const Layout& estimate) {
  assert(!collected_.load() && estimate.bound == bound_);
  const size_t per_edge = (narrow_ ? 4 : 8) + (weights_ ? 8 : 0);
  const size_t head = (kLayoutBlock + 1) * sizeof(uint32_t) + kLayoutBlock / 8;  // off + skip
  // Entries of the vertices of each degree; degrees past kCap are never kept (a list that long
  // is one lookup among thousands of entries: caching it saves little per byte).
  constexpr uint64_t kCap = uint64_t{1} << 16;
  // Heads: every block with an existing vertex may be kept.
  std::vector<uint64_t> vertices(kCap + 1, 0);
  size_t heads = 0;
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    const VertexId lo = bi * kLayoutBlock, hi = std::min<VertexId>(bound_, lo + kLayoutBlock);
    bool any = false;
    for (VertexId v = lo; v < hi; ++v) {
      if (!estimate.exists[v]) continue;
      any = true;
      ++vertices[std::min(estimate.out_degree[v], kCap)];
    }
    if (any) heads += head;
  }
  uint64_t cutoff = 0;
  if (max_bytes_ > heads) {
    const uint64_t room = (max_bytes_ - heads) / per_edge;  // entries that fit
    uint64_t used = 0;
    for (uint64_t d = 1; d < kCap; ++d) {
      if (used + vertices[d] * d > room) break;
      used += vertices[d] * d;
      cutoff = d;
    }
    if (cutoff == kCap - 1 && vertices[kCap] == 0) cutoff = UINT64_MAX;
  }
  if (cutoff == 0) {  // not even the heads fit: keep nothing, as with max_bytes = 0
    max_bytes_ = 0;
    return 0;
  }
  // Per block: the entries of its kept lists (degree bounds, so they cannot outgrow it), and
  // the vertices left out, marked now so that Collect never starts their lists.
  reserve_.assign(blocks_.size(), 0);
  for (VertexId v = 0; v < bound_; ++v) {
    if (!estimate.exists[v]) continue;
    Block& b = blocks_[static_cast<size_t>(v / kLayoutBlock)];
    if (estimate.out_degree[v] <= cutoff) {
      reserve_[static_cast<size_t>(v / kLayoutBlock)] += estimate.out_degree[v];
      continue;
    }
    if (b.skip.empty()) {
      b.skip.assign(kLayoutBlock / 64, 0);
      used_.fetch_add(b.skip.capacity() * 8, std::memory_order_relaxed);
    }
    const size_t j = static_cast<size_t>(v % kLayoutBlock);
    b.skip[j / 64] |= uint64_t{1} << (j % 64);
  }
  return cutoff;
}

void ListCache::Drop(Block& b) {
  const size_t held = b.off.size() * sizeof(uint32_t) + Held(b);
  if (held) used_.fetch_sub(held, std::memory_order_relaxed);
  b = Block();
  b.state = Block::kDropped;
}

void ListCache::Collect(VertexId u, const NeighborChunk& c) {
  if (u >= bound_ || c.size == 0) return;
  collected_.store(true, std::memory_order_relaxed);
  Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
  if (b.state == Block::kDropped) return;
  if (max_bytes_ == 0 || c.dst[c.size - 1] >= bound_) {  // a damaged list: Pass streams it
    Drop(b);
    return;
  }
  const size_t j = static_cast<size_t>(u % kLayoutBlock);
  if (b.Skipped(j)) return;  // bound over LimitDegree's cutoff: read from the store
  if (b.state == Block::kEmpty) {
    b.state = Block::kFilling;
    b.off.assign(kLayoutBlock + 1, 0);
    const size_t head = b.off.size() * sizeof(uint32_t);
    if (used_.fetch_add(head, std::memory_order_relaxed) + head > max_bytes_) {
      Drop(b);  // gives the head back
      return;
    }
    if (!reserve_.empty()) {  // LimitDegree: the block's kept lists at once, no doubling slack
      const size_t want = static_cast<size_t>(reserve_[static_cast<size_t>(u / kLayoutBlock)]);
      const size_t before = Held(b);
      if (narrow_) {
        b.ids32.reserve(want);
      } else {
        b.ids64.reserve(want);
      }
      if (weights_) b.w.reserve(want);
      const size_t after = Held(b);
      if (used_.fetch_add(after - before, std::memory_order_relaxed) + (after - before) > max_bytes_) {
        Drop(b);
        return;
      }
    }
  }
  const size_t count = narrow_ ? b.ids32.size() : b.ids64.size();
  if (count + c.size > UINT32_MAX) {  // past what off[] can say
    Drop(b);
    return;
  }
  while (b.next <= j) b.off[b.next++] = static_cast<uint32_t>(count);
  const size_t before = Held(b);
  if (narrow_) {
    b.ids32.insert(b.ids32.end(), c.dst, c.dst + c.size);
  } else {
    b.ids64.insert(b.ids64.end(), c.dst, c.dst + c.size);
  }
  if (weights_) {
    // Keeping weights needs a scan that reads them (BuildLayout(..., weights = true)).
    assert(c.weight != nullptr);
    b.w.insert(b.w.end(), c.weight, c.weight + c.size);
  }
  const size_t after = Held(b);
  if (after > before &&
      used_.fetch_add(after - before, std::memory_order_relaxed) + (after - before) > max_bytes_) {
    Drop(b);  // gives back all the block held
  }
}

void ListCache::Close(Block& b, VertexId len) {
  if (b.state != Block::kFilling) return;
  const size_t count = narrow_ ? b.ids32.size() : b.ids64.size();
  while (b.next <= len) b.off[b.next++] = static_cast<uint32_t>(count);
  b.state = Block::kKept;
  // Give back what doubling left unused.
  const size_t cap = Held(b);
  auto trim = [](auto& v) {
    if (v.capacity() > v.size() + v.size() / 4) v.shrink_to_fit();
  };
  trim(b.ids32);
  trim(b.ids64);
  trim(b.w);
  const size_t now = Held(b);
  if (now < cap) used_.fetch_sub(cap - now, std::memory_order_relaxed);
}

Status ListCache::Complete(const Snapshot& snap, const Layout& layout) {
  if (layout.bound != bound_) return Status::Corruption("analytics: VertexIdBound() changed");
  if (max_bytes_ == 0) return Status::OK();
  const bool collected = collected_.load(std::memory_order_relaxed);
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks_.size()),
                    [&](const tbb::blocked_range<size_t>& r) {
    for (size_t bi = r.begin(); bi < r.end(); ++bi) {
      Block& b = blocks_[bi];
      const VertexId lo = bi * kLayoutBlock, hi = std::min<VertexId>(bound_, lo + kLayoutBlock);
      if (!collected && b.state == Block::kEmpty && !err.failed()) {
        // Weights are read only when kept.
        Status s = snap.ScanAdjacency(
            lo, hi, d_, weights_,
            [&](VertexId u) {  // lists LimitDegree left out are not decoded
              return u < lo || u >= hi || (layout.exists[u] && !b.Skipped(static_cast<size_t>(u - lo)));
            },
            [&](VertexId u, const NeighborChunk& c) {
              if (u < lo || u >= hi) return ScanStep::kStop;
              Collect(u, c);
              return b.state != Block::kDropped ? ScanStep::kMore : ScanStep::kStop;
            });
        if (!s.ok()) {
          err.Set(s);
          Drop(b);
        }
      }
      Close(b, hi - lo);
    }
  });
  // A block dropped after a read error is streamed (and reports it) by Pass.
  return Status::OK();
}

Status GatherOut(const Snapshot& snap, VertexId u, VertexId limit, const Layout& layout,
                 std::vector<VertexId>* out) {
  out->clear();
  return ScanEach(snap, u, Direction::kOut, layout, [&](VertexId v, double) {
    if (v > limit) return false;
    out->push_back(v);
    return true;
  });
}

Status InNeighbors::Init(const Snapshot& snap, const Layout& layout) {
  snap_ = &snap;
  layout_ = &layout;
  kind_ = layout.kind;
  bound_ = layout.bound;
  transposed_ = !HasInEdges(kind_);
  offset_.clear();
  src_.clear();
  if (!transposed_) return Status::OK();

  // Pass 1: in-degree of every vertex, counted at offset_[v + 1].
  offset_.assign(bound_ + 1, 0);
  Status s = ForEachRange(layout, [&](size_t, VertexRange r) {
    return ScanRangeEach(snap, r, Direction::kOut, layout, /*weights=*/false,
                         [&](VertexId, VertexId v, double) {
      std::atomic_ref<uint64_t>(offset_[v + 1]).fetch_add(1, std::memory_order_relaxed);
    });
  });
  if (!s.ok()) return s;
  for (VertexId v = 0; v < bound_; ++v) offset_[v + 1] += offset_[v];
  // Pass 2: place each source at its destination's cursor; pass 3 sorts every list.
  src_.resize(offset_[bound_]);
  std::vector<uint64_t> cursor(offset_.begin(), offset_.end() - 1);
  std::atomic<bool> overflow{false};
  s = ForEachRange(layout, [&](size_t, VertexRange r) {
    return ScanRangeEach(snap, r, Direction::kOut, layout, /*weights=*/false,
                         [&](VertexId u, VertexId v, double) {
      const uint64_t pos = std::atomic_ref<uint64_t>(cursor[v]).fetch_add(1, std::memory_order_relaxed);
      if (pos >= offset_[v + 1]) {
        overflow.store(true, std::memory_order_relaxed);
        return;
      }
      src_[pos] = u;
    });
  });
  if (!s.ok()) return s;
  if (overflow.load()) return Status::Corruption("analytics: neighbor lists changed between two scans");
  tbb::parallel_for(tbb::blocked_range<VertexId>(0, bound_), [&](const tbb::blocked_range<VertexId>& r) {
    for (VertexId v = r.begin(); v < r.end(); ++v) {
      std::sort(src_.begin() + offset_[v], src_.begin() + offset_[v + 1]);
    }
  });
  return Status::OK();
}

Status GatherUndirected(const Snapshot& snap, const InNeighbors& in, const Layout& layout,
                        VertexId v, VertexId limit, std::vector<VertexId>* out,
                        std::vector<uint8_t>* dirs, std::vector<VertexId>* scratch) {
  out->clear();
  if (dirs) dirs->clear();
  if (layout.kind == GraphKind::kUndirected) {
    Status s = GatherOut(snap, v, limit, layout, out);
    if (!s.ok()) return s;
    auto it = std::lower_bound(out->begin(), out->end(), v);
    if (it != out->end() && *it == v) out->erase(it);
    if (dirs) dirs->assign(out->size(), kOutBit | kInBit);
    return Status::OK();
  }
  // Directed: out-list then in-list in *scratch, merged without duplicates and without v.
  Status s = GatherOut(snap, v, limit, layout, scratch);
  if (!s.ok()) return s;
  const size_t mid = scratch->size();
  s = in.ForEach(v, [&](VertexId u) {
    if (u > limit) return false;
    scratch->push_back(u);
    return true;
  });
  if (!s.ok()) return s;
  const VertexId* o = scratch->data();
  const VertexId* i = scratch->data() + mid;
  const VertexId* oe = i;
  const VertexId* ie = scratch->data() + scratch->size();
  while (o != oe || i != ie) {
    VertexId u;
    uint8_t bits = 0;
    if (i == ie || (o != oe && *o < *i)) {
      u = *o++;
      bits = kOutBit;
    } else if (o == oe || *i < *o) {
      u = *i++;
      bits = kInBit;
    } else {
      u = *o++;
      ++i;
      bits = kOutBit | kInBit;
    }
    if (u == v) continue;
    out->push_back(u);
    if (dirs) dirs->push_back(bits);
  }
  return Status::OK();
}

uint64_t IntersectSorted(const VertexId* a, size_t na, const VertexId* b, size_t nb) {
  uint64_t count = 0;
  ForEachCommon(a, na, b, nb, [&](size_t, size_t) { ++count; });
  return count;
}

}  // namespace strata::analytics
