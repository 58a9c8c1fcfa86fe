#include "strata/analytics.h"

#include <algorithm>
#include <iterator>

#include <tbb/enumerable_thread_specific.h>

#include "analytics/frontier.h"
#include "analytics/layout.h"

namespace strata::analytics {

Status KHop(const Snapshot& snap, const KHopParams& params, std::vector<VertexId>* out) {
  out->clear();
  const VertexId bound = snap.VertexIdBound();
  if (params.source >= bound || !snap.HasVertex(params.source)) {
    return Finish(snap, Status::InvalidArgument("k-hop: source does not exist"));
  }
  // Invariants: `visited` is sorted and holds every vertex at distance <= level; `frontier` is
  // sorted and holds exactly those at distance == level.
  std::vector<VertexId> visited{params.source}, frontier{params.source}, found, merged;
  FirstError err;
  for (int level = 0; level < params.k && !frontier.empty() && !err.failed(); ++level) {
    tbb::enumerable_thread_specific<std::vector<VertexId>> local;
    err.Set(ForEachFrontierChunk(snap, frontier.data(), frontier.size(), params.direction,
                                 /*weights=*/false, params.fetch_batch, [&] {
      return [&mine = local.local()](VertexId, const NeighborChunk& c) {
        mine.insert(mine.end(), c.dst, c.dst + c.size);
        return true;
      };
    }));
    if (err.failed()) break;
    found.clear();
    for (std::vector<VertexId>& l : local) found.insert(found.end(), l.begin(), l.end());
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    if (!found.empty() && found.back() >= bound) {
      return Finish(snap, Status::Corruption("k-hop: neighbor ID >= VertexIdBound()"));
    }
    frontier.clear();
    std::set_difference(found.begin(), found.end(), visited.begin(), visited.end(),
                        std::back_inserter(frontier));
    // Edges into deleted vertices (kept by kDirected stores) lead nowhere.
    std::erase_if(frontier, [&](VertexId v) { return !snap.HasVertex(v); });
    merged.clear();
    std::merge(visited.begin(), visited.end(), frontier.begin(), frontier.end(),
               std::back_inserter(merged));
    visited.swap(merged);
  }
  if (err.failed()) return err.Get();
  *out = std::move(visited);
  return Finish(snap, Status::OK());
}

}  // namespace strata::analytics
