#include "analytics/degree_groups.h"

#include <algorithm>
#include <atomic>
#include <cassert>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "analytics/layout.h"

namespace strata::analytics {

Status DegreeGroups::Build(const Snapshot& snap, Direction d) {
  const VertexId bound = snap.VertexIdBound();
  if (bound > UINT32_MAX) return Status::InvalidArgument("analytics: degree groups need IDs below 2^32");
  const size_t slices = static_cast<size_t>((bound + kSlice - 1) / kSlice);
  // Pass 1: each vertex's degree bound (kept in to_new_ until pass 3 replaces it by the new
  // ID; a bound past 2^32 - 1 is clamped, which keeps it in the first group), the sums.
  to_new_.resize(bound);
  group_.resize(bound);
  std::vector<uint64_t> edges(slices, 0), present(slices, 0);
  FirstError err;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, slices, 1), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end() && !err.failed(); ++i) {
      const VertexId lo = i * kSlice, hi = std::min(bound, lo + kSlice);
      std::fill(to_new_.data() + lo, to_new_.data() + hi, 0u);
      uint64_t e = 0, p = 0;
      bool outside = false;
      Status s = snap.ScanVertexDegreeBounds(lo, hi, d, [&](VertexId u, uint64_t b) {
        if (u < lo || u >= hi) {
          outside = true;
          return false;
        }
        to_new_[u] = static_cast<uint32_t>(std::min<uint64_t>(b, UINT32_MAX));
        e += b;
        ++p;
        return true;
      });
      if (s.ok() && outside) s = Status::Corruption("analytics: ScanVertexDegreeBounds left its range");
      if (!s.ok()) err.Set(s);
      edges[i] = e;
      present[i] = p;
    }
  });
  if (err.failed()) return err.Get();
  uint64_t e = 0, p = 0;
  for (size_t i = 0; i < slices; ++i) {
    e += edges[i];
    p += present[i];
  }
  // The thresholds: t[k] = avg * 2^(kGroups - 2 - k), t[kGroups - 1] = 0 (everything else).
  const double avg = p == 0 ? 1.0 : std::max(1.0, static_cast<double>(e) / static_cast<double>(p));
  uint64_t t[kGroups];
  for (int k = 0; k < kGroups - 1; ++k) {
    t[k] = static_cast<uint64_t>(avg * static_cast<double>(uint64_t{1} << (kGroups - 2 - k)));
  }
  t[kGroups - 1] = 0;
  auto group = [&t](uint64_t b) {
    int k = 0;
    while (b < t[k]) ++k;  // t[kGroups - 1] == 0 ends it
    return k;
  };
  // Pass 2: each vertex's group and the counts per slice and group; then each slice's
  // cursors (kept for Cursors, with a row past the last slice: each group's end); then
  // pass 3, the new IDs.
  std::vector<uint32_t>& count = slice_first_;
  count.assign((slices + 1) * kGroups, 0);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, slices, 1), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) {
      const VertexId lo = i * kSlice, hi = std::min(bound, lo + kSlice);
      uint32_t* c = count.data() + i * kGroups;
      for (VertexId u = lo; u < hi; ++u) {
        const int g = group(to_new_[u]);
        group_[u] = static_cast<uint8_t>(g);
        ++c[g];
      }
    }
  });
  uint64_t at = 0;
  for (int k = 0; k < kGroups; ++k) {
    first_[k] = static_cast<uint32_t>(at);
    for (size_t i = 0; i < slices; ++i) {
      const uint32_t c = count[i * kGroups + k];
      count[i * kGroups + k] = static_cast<uint32_t>(at);
      at += c;
    }
    count[slices * kGroups + k] = static_cast<uint32_t>(at);
  }
  first_[kGroups] = static_cast<uint32_t>(at);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, slices, 1), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i < r.end(); ++i) {
      const VertexId lo = i * kSlice, hi = std::min(bound, lo + kSlice);
      uint32_t c[kGroups];
      std::copy(count.data() + i * kGroups, count.data() + (i + 1) * kGroups, c);
      for (VertexId u = lo; u < hi; ++u) to_new_[u] = c[group_[u]]++;
    }
  });
  return Status::OK();
}

void DegreeGroups::Cursors(VertexId begin, uint32_t cur[]) const {
  assert(begin <= bound());
  const size_t i = static_cast<size_t>(begin / kSlice);
  std::copy(slice_first_.data() + i * kGroups, slice_first_.data() + (i + 1) * kGroups, cur);
  for (VertexId u = static_cast<VertexId>(i) * kSlice; u < begin; ++u) ++cur[group_[u]];
}

namespace {

// Stable partition of ids[0, n) into those below `pivot`, then the rest; returns how many are
// below. Without branches on the data (the two sides are as likely in a renumbered list): each
// ID is stored on both sides and one cursor moves. tmp: room for n.
size_t SplitBelow(uint32_t* ids, size_t n, uint32_t pivot, uint32_t* tmp) {
  size_t a = 0, b = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t x = ids[i];
    const bool below = x < pivot;
    ids[a] = x;  // a <= i: never past what is still to be read
    tmp[b] = x;
    a += below;
    b += !below;
  }
  std::copy(tmp, tmp + b, ids + a);
  return a;
}

}  // namespace

void DegreeGroups::SplitGroups(uint32_t* ids, size_t n, int lo, int hi, uint32_t* tmp) const {
  // ids: IDs of groups [lo, hi) only. Halves by group until each part is one group.
  if (hi - lo < 2 || n < 2) return;
  const int mid = (lo + hi) / 2;
  const size_t a = SplitBelow(ids, n, first_[mid], tmp);
  SplitGroups(ids, a, lo, mid, tmp);
  SplitGroups(ids + a, n - a, mid, hi, tmp);
}

void DegreeGroups::OrderList(uint32_t* ids, size_t n, std::vector<uint32_t>* scratch) const {
  if (n < 2) return;
  // Already ascending (a list within one group, or of the first groups in turn): as it is.
  size_t k = 1;
  while (k < n && ids[k - 1] < ids[k]) ++k;
  if (k == n) return;
  // A renumbered ascending list is its groups' runs interleaved, each ascending: a stable
  // partition by group sorts it — log2(kGroups) stable halvings, one comparison an ID each.
  // Any other list is sorted outright.
  if (scratch->size() < n) scratch->resize(n);
  SplitGroups(ids, n, 0, kGroups, scratch->data());
  if (!std::is_sorted(ids, ids + n)) std::sort(ids, ids + n);
}

}  // namespace strata::analytics
