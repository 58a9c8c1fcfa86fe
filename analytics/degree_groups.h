// Vertices renumbered by degree group, for a pull kernel's gathers (PageRank): a vertex's value
// is gathered once per out-edge (once per edge on an undirected graph), so the vertices of
// highest out-degree get the lowest new IDs, and the values a pass gathers at random lie
// mostly in a small prefix of the array that stays in cache (degree-based grouping). On a
// scale-22 Kronecker graph a pull PageRank's iterations ran 1.4-2.0x as fast so, a whole run
// 1.04-1.42x (docs/benchmarks.md, "Issue 28: PageRank's gathers by degree group").
//
// Group k (0 <= k < kGroups) holds the vertices whose degree bound is in [t_k, t_{k-1}):
// t_k = avg * 2^(kGroups - 2 - k) for k < kGroups - 1, t_{-1} = infinity, and the last group
// holds every degree below avg / 2 (absent vertices too); avg: the bounds' mean over
// existing vertices. Within a group the new IDs follow the old ones, so an ascending list of
// old IDs renumbered is at most kGroups ascending runs, one per group, which OrderList sorts
// in log2(kGroups) stable partitions.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analytics/kernel_memory.h"
#include "strata/snapshot.h"

namespace strata::analytics {

class DegreeGroups {
 public:
  static constexpr int kGroups = 8;
  // PageRank groups graphs past this bound only: below it the contributions (4 bytes a
  // vertex, 8 MiB here) stay in cache anyway, and at 2^20 vertices the renumbering took more
  // than the gathers gave back (docs/benchmarks.md).
  static constexpr VertexId kMinBound = VertexId{1} << 21;

  // Groups the vertices [0, snap.VertexIdBound()) by Snapshot::ScanVertexDegreeBounds in
  // direction d (parallel, one task per 64-Ki-vertex slice). Needs a bound below 2^32.
  Status Build(const Snapshot& snap, Direction d);

  VertexId bound() const { return group_.size(); }
  // The new ID of old ID u (< bound()), while the map is kept (not after DropMap).
  uint32_t New(VertexId u) const { return to_new_[u]; }
  bool has_map() const { return !to_new_.empty(); }
  // Frees the map of new IDs (4 bytes a vertex): New and Renumber are not to be called after
  // it. What stays (groups(), Cursors) gives the new IDs of vertices taken in ascending order,
  // as PageRank's contribution pass takes them, at 1 byte a vertex.
  void DropMap() { to_new_ = UninitVector<uint32_t>(); }
  // groups()[u]: u's group (u < bound()).
  const uint8_t* groups() const { return group_.data(); }
  // cur[k] = the new ID of the first vertex of group k at or after old ID begin (<= bound()):
  // walking u = begin, begin + 1, ..., u's new ID is cur[groups()[u]]++. At most kSlice - 1
  // bytes read.
  void Cursors(VertexId begin, uint32_t cur[]) const;
  // The first new ID of group k (new IDs [first(k), first(k + 1)) are group k's);
  // first(kGroups) == bound().
  uint32_t first(int k) const { return first_[k]; }

  // to[i] = New(from[i]) for i < n (each from[i] < bound()); `to` may be `from` (32-bit IDs).
  template <typename Id>
  void Renumber(const Id* from, size_t n, uint32_t* to) const {
    assert(n == 0 || has_map());
    const uint32_t* const m = to_new_.data();
    for (size_t i = 0; i < n; ++i) to[i] = m[from[i]];
  }
  // Sorts ids[0, n) ascending. A list of old IDs, ascending, renumbered (at most kGroups
  // ascending runs interleaved, one per group) by log2(kGroups) stable halvings by group, no
  // comparison sort. scratch: any buffer, grown as needed.
  void OrderList(uint32_t* ids, size_t n, std::vector<uint32_t>* scratch) const;

 private:
  // Stable partition of ids[0, n), IDs of groups [lo, hi), by group. tmp: room for n.
  void SplitGroups(uint32_t* ids, size_t n, int lo, int hi, uint32_t* tmp) const;

  static constexpr VertexId kSlice = VertexId{1} << 16;  // vertices per task of Build

  UninitVector<uint32_t> to_new_;
  UninitVector<uint8_t> group_;
  // [i * kGroups + k]: Cursors(i * kSlice)[k], for every slice i and one past the last
  // (first(k + 1) there).
  std::vector<uint32_t> slice_first_;
  uint32_t first_[kGroups + 1] = {};
};

}  // namespace strata::analytics
