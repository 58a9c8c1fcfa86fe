#include "analytics/cdlp.h"

#include <algorithm>
#include <atomic>

#include <tbb/enumerable_thread_specific.h>

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
  tbb::enumerable_thread_specific<std::vector<uint64_t>> scratch;
  for (int it = 0; it < params.max_iterations && s.ok(); ++it) {
    std::atomic<bool> changed{false};
    // Reads only `label` (round i-1), writes only next[v] (round i): synchronous.
    s = ForEachVertex(L, [&](VertexId v) {
      std::vector<uint64_t>& seen = scratch.local();
      seen.clear();
      Status st = ScanEach(snap, v, Direction::kOut, L, [&](VertexId u, double) {
        seen.push_back(label[u]);
        return true;
      });
      if (st.ok() && directed) {
        st = in.ForEach(v, [&](VertexId u) {
          seen.push_back(label[u]);
          return true;
        });
      }
      if (!st.ok()) return st;
      if (seen.empty()) {
        next[v] = label[v];
        return Status::OK();
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
      return Status::OK();
    });
    std::swap(label, next);
    if (!changed.load()) break;
  }
  return Finish(snap, s);
}

}  // namespace strata::analytics
