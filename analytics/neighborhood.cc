#include "analytics/neighborhood.h"

#include <algorithm>

namespace strata::analytics {

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

}  // namespace strata::analytics
