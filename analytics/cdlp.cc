#include "strata/analytics.h"

#include <algorithm>
#include <atomic>

#include <tbb/enumerable_thread_specific.h>

#include "analytics/layout.h"
#include "analytics/neighborhood.h"
#include "analytics/range_scan.h"

namespace strata::analytics {

Status Cdlp(const Snapshot& snap, const CdlpParams& params, std::vector<uint64_t>* label_out) {
  Layout L;
  Status s = BuildLayout(snap, &L);
  if (!s.ok()) return s;
  if (params.initial_labels && params.initial_labels->size() < L.bound) {
    return Status::InvalidArgument("CDLP: initial_labels smaller than VertexIdBound()");
  }
  InNeighbors in;
  const bool directed = L.kind != GraphKind::kUndirected;
  if (directed) s = in.Init(snap, L);
  if (!s.ok()) return Finish(snap, s);

  std::vector<uint64_t>& label = *label_out;
  label.assign(L.bound, kNoLabel);
  for (VertexId v = 0; v < L.bound; ++v) {
    if (L.exists[v]) label[v] = params.initial_labels ? (*params.initial_labels)[v] : v;
  }
  std::vector<uint64_t> next(label);
  struct Gathered {
    std::vector<uint64_t> off;     // out-labels of vertex r.begin + i: labels[off[i], off[i + 1])
    std::vector<uint64_t> labels;
    std::vector<uint64_t> seen;
  };
  tbb::enumerable_thread_specific<Gathered> scratch;
  for (int it = 0; it < params.max_iterations && s.ok(); ++it) {
    std::atomic<bool> changed{false};
    // Reads only `label` (round i-1), writes only next[v] (round i): synchronous. Per range,
    // one streamed pass (ScanRangeEach) gathers the out-neighbors' labels of its vertices.
    s = ForEachRange(L, [&](size_t, VertexRange r) -> Status {
      Gathered& g = scratch.local();
      g.off.assign(r.end - r.begin + 1, 0);
      g.labels.clear();
      Status st = ScanRangeEach(snap, r, Direction::kOut, L, /*weights=*/false,
                                [&](VertexId v, VertexId u, double) {
        ++g.off[v - r.begin + 1];
        g.labels.push_back(label[u]);
      });
      if (!st.ok()) return st;
      for (size_t i = 1; i < g.off.size(); ++i) g.off[i] += g.off[i - 1];
      for (VertexId v = r.begin; v < r.end; ++v) {
        if (!L.exists[v]) continue;
        std::vector<uint64_t>& seen = g.seen;
        const size_t at = v - r.begin;
        seen.assign(g.labels.begin() + g.off[at], g.labels.begin() + g.off[at + 1]);
        if (directed) {
          st = in.ForEach(v, [&](VertexId u) {
            seen.push_back(label[u]);
            return true;
          });
          if (!st.ok()) return st;
        }
        if (seen.empty()) {
          next[v] = label[v];
          continue;
        }
        // Mode of the multiset, smallest label among equally frequent ones: scan runs in order.
        std::sort(seen.begin(), seen.end());
        uint64_t best = seen[0];
        size_t best_run = 0;
        for (size_t i = 0; i < seen.size();) {
          size_t j = i + 1;
          while (j < seen.size() && seen[j] == seen[i]) ++j;
          if (j - i > best_run) {
            best_run = j - i;
            best = seen[i];
          }
          i = j;
        }
        next[v] = best;
        if (best != label[v]) changed.store(true, std::memory_order_relaxed);
      }
      return Status::OK();
    });
    std::swap(label, next);
    if (!changed.load()) break;
  }
  return Finish(snap, s);
}

}  // namespace strata::analytics
