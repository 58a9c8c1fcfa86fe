// TierReader: answers reads at one timestamp by merging the tiers of a Version, newest first:
// memgraphs (active, then sealed), then level-0 segments (newest first).
//
// Merge rules (brief §5–6), per vertex u and stored direction:
//   - walk tiers newest to oldest; the first tier that marks u deleted hides all older tiers;
//   - u exists if the newest tier that knows u (exists or deleted mark) says it exists;
//   - an edge entry in a newer tier wins over older ones; a tombstone hides older copies.
// Used by snapshots (reads) and by the write path (OlderTiers for the tiers under the active
// memgraph). Read errors from segment files are returned where a call returns Status and
// otherwise recorded in status().
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "memgraph/memgraph.h"
#include "strata/function_ref.h"
#include "strata/snapshot.h"
#include "version/version.h"

namespace strata::lsm {

class TierReader {
 public:
  // Reads tiers of `v` at timestamp ts, skipping the first `skip_memgraphs` memgraphs.
  TierReader(const version::Version* v, Timestamp ts, bool weighted, size_t skip_memgraphs = 0)
      : v_(v), ts_(ts), weighted_(weighted), first_(skip_memgraphs) {}

  bool HasVertex(VertexId u) const;
  // True with *weight set when (u,x) is live in stored direction dir.
  bool GetEdge(uint8_t dir, VertexId u, VertexId x, double* weight) const;
  uint64_t Degree(uint8_t dir, VertexId u) const;
  Status ScanNeighbors(uint8_t dir, VertexId u, FunctionRef<bool(const NeighborChunk&)> fn) const;
  // Streams [begin, end): see Snapshot::ScanEdges.
  Status ScanEdges(uint8_t dir, VertexId begin, VertexId end,
                   FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const;
  VertexId VertexIdBound() const;
  uint64_t NumVertices() const;
  uint64_t NumEdges() const;
  Status ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const;

  // First read error seen, or OK.
  Status status() const;

 private:
  struct Run;
  // The runs holding u's list in direction dir, newest first, stopping at a deletion mark.
  void CollectRuns(uint8_t dir, VertexId u, std::vector<Run>* runs) const;
  void RecordError(const Status& s) const;
  // Calls fn(segment) for each disk file that may hold u in direction dir, newest first
  // (every L0 file, then the one file of each level whose range holds u); stops when fn
  // returns false.
  template <class F>
  void ForEachDiskFile(uint8_t dir, VertexId u, F&& fn) const {
    for (const auto& h : v_->l0[dir]) {
      if (u < h->meta.min_src || u > h->meta.max_src) continue;
      if (!fn(h.get())) return;
    }
    for (size_t k = 0; k < v_->levels[dir].size(); ++k) {
      const version::SegmentHandle* h = v_->LevelFind(dir, k, u);
      if (h != nullptr && !fn(h)) return;
    }
  }

  const version::Version* v_;
  Timestamp ts_;
  bool weighted_;
  size_t first_;
  static constexpr VertexId kUnknownBound = ~VertexId{0};
  mutable std::atomic<VertexId> bound_{kUnknownBound};  // VertexIdBound(), computed once
  mutable std::mutex err_mu_;
  mutable Status err_;
};

}  // namespace strata::lsm
