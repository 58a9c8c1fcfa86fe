// TierReader: answers reads at one timestamp over the tiers of one Version (db/version.h):
// the memgraphs (active, then sealed) read at the timestamp, the level-0 segments newest first,
// then L1..Ln, where one file per level holds a given vertex. Used by snapshots (reads) and by
// the write path (skip_memgraphs = 1: the tiers under the active memgraph, db_impl.cc's
// OlderTierView).
//
// Merge rules, per vertex u and stored direction (docs/design.md, "Merged reads"):
//   - walk tiers newest to oldest; the first tier that marks u deleted hides all older tiers;
//   - u exists if the newest tier that knows u (exists or deleted mark) says it exists;
//   - an edge entry in a newer tier wins over older ones; a tombstone hides older copies;
//   - lists come out in destination order.
//
// Which files are read. A single-vertex read (HasVertex, GetEdge, Degree, ScanNeighbors, and
// the per-vertex step of ScanNeighborsBatch) asks the Version's multi-level vertex index which
// disk files hold u (ForEachDiskFile) and touches only those. Range reads (ScanEdges,
// ScanAdjacency, ScanDegreeBounds: WalkRuns) stream the L0 files' vertex tables and take each
// level's entries from the index, one sequential scanner per file, never a lookup per vertex;
// vertex walks (ScanVertices, ScanVertexDegreeBounds: WalkVertices) do the same by subgraph.
// One merge (MergeRuns, tier_reader.cc) serves all of them, holding one batch per run, never a
// whole list. With Options::vertex_index_reads off, every file whose range holds u is asked.
//
// Errors: read errors from segment files are returned where a call returns Status and
// otherwise recorded in status() (the first one).
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <mutex>
#include <vector>

#include "memgraph/memgraph.h"
#include "strata/function_ref.h"
#include "strata/snapshot.h"
#include "db/version.h"

namespace strata {

// The range walks' prefetch distance (issue 30): a walk over the lists of a bitmap of vertices
// (ScanAdjacency with an AdjacencyScan) prepares the newest memgraph's lists of the vertices
// ahead of the one it scans in the stages of mem::VertexAt, d vertices apart (tier_reader.cc,
// MemAhead), and the vertex walks (ScanVertices, ScanVertexDegreeBounds) prefetch version
// headers and counts a few subgraphs ahead; 0 does neither. Changes only what is in cache
// when, never what is read. Process-wide, for measurement
// (docs/benchmarks.md, "Issue 30"); the default is the distance that measured best.
inline constexpr size_t kDefaultWalkPrefetch = 4;
inline constexpr size_t kMaxWalkPrefetch = 64;
void SetWalkPrefetch(size_t d);  // clamped to kMaxWalkPrefetch
size_t GetWalkPrefetch();

// The frontier reads' I/O interleaving (issue 30, cold reads; docs/design.md, "Coroutine
// interleaving"). ScanNeighborsBatch reads its disk runs as util/coro.h items, each the runs of
// one file that lie together (at most item_bytes of runs, in file order): an item plans its
// blocks, queues their reads on the thread's io::ReadQueue and suspends; `group` items are live
// per thread, so reads of several files and vertex groups are in flight at once and an item
// decodes while others' reads are outstanding. group 1: one item per file, its reads waited
// for, then decoded, file after file (the sequential path: the reads and decoding of
// SegmentReader::ReadNeighborsBatch per file). Changes what is in flight when, never what is
// read. Process-wide, for measurement (docs/benchmarks.md, "Issue 30: cold frontier reads").
// random_access: the items' reads go through each file's no-readahead descriptor
// (io::RandomAccessFile::ReadRandom, io::Env::NewReadQueue); false: through the one the scans
// and MultiRead use, whose readahead (8 MiB on this VM's disk) multiplied what a cold frontier
// read fetched (docs/benchmarks.md).
struct FrontierReadConfig {
  size_t group = 64;
  size_t item_bytes = size_t{256} << 10;  // with group > 1
  bool random_access = true;
};
inline constexpr size_t kMaxFrontierReadGroup = 1024;
void SetFrontierReadConfig(const FrontierReadConfig& c);  // group clamped to [1, kMax...]
FrontierReadConfig GetFrontierReadConfig();

class TierReader {
 public:
  // Reads tiers of `v` at timestamp ts, skipping the first `skip_memgraphs` memgraphs.
  TierReader(const Version* v, Timestamp ts, bool weighted, size_t skip_memgraphs = 0)
      : v_(v), ts_(ts), weighted_(weighted), first_(skip_memgraphs) {}

  bool HasVertex(VertexId u) const;
  // True with *weight set when (u,x) is live in stored direction dir.
  bool GetEdge(uint8_t dir, VertexId u, VertexId x, double* weight) const;
  uint64_t Degree(uint8_t dir, VertexId u) const;
  Status ScanNeighbors(uint8_t dir, VertexId u, FunctionRef<bool(const NeighborChunk&)> fn) const;
  // Streams [begin, end): see Snapshot::ScanEdges, ScanAdjacency and ScanDegreeBounds.
  Status ScanEdges(uint8_t dir, VertexId begin, VertexId end,
                   FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const;
  Status ScanAdjacency(uint8_t dir, VertexId begin, VertexId end, bool weights,
                       FunctionRef<bool(VertexId)> want,
                       FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const;
  Status ScanAdjacency(uint8_t dir, VertexId begin, VertexId end, const AdjacencyScan& scan,
                       FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const;
  Status ScanDegreeBounds(uint8_t dir, VertexId begin, VertexId end,
                          FunctionRef<bool(VertexId, uint64_t)> fn) const;
  // Neighbors of vs[0..n): see Snapshot::ScanNeighborsBatch. Runs are located per vertex as
  // ScanNeighbors does (CollectRuns); then, per segment, the runs of every vertex that file
  // holds are read as FrontierReadConfig says (group 1: one SegmentReader::ReadNeighborsBatch
  // per file). A vertex with one disk run streams straight from its item's blocks; the others
  // are merged with ScanNeighbors' rules once all their runs are read.
  Status ScanNeighborsBatch(uint8_t dir, const VertexId* vs, size_t n, bool weights,
                            FunctionRef<bool(size_t, const NeighborChunk&)> fn) const;
  VertexId VertexIdBound() const;
  uint64_t NumVertices() const;
  uint64_t NumEdges() const;
  Status ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const;
  // ScanVertices with each vertex's ScanDegreeBounds bound in stored direction 0, one pass.
  Status ScanVertexDegreeBounds(VertexId begin, VertexId end,
                                FunctionRef<bool(VertexId, uint64_t)> fn) const;

  // First read error seen, or OK.
  Status status() const;

  // Locates u on disk in direction dir with the Version's multi-level index and calls
  // fn(segment, entry) for each file that may hold u, newest first: the L0 files (newest
  // first) whose presence holds u (or, without one, whose range holds u), with entry ==
  // nullptr (the caller asks the file: FindVertex may say NotFound); then, for each level the
  // index places u on, that level's file with u's entry (nullptr when the index keeps the
  // level only). Files and levels the index excludes are not touched. Stops when fn returns
  // false.
  template <class F>
  void ForEachDiskFile(uint8_t dir, VertexId u, F&& fn) const {
    if (!v_->index_reads) {  // without the index: every file whose range holds u
      for (const auto& h : v_->l0[dir]) {
        if (u < h->meta.min_src || u > h->meta.max_src) continue;
        if (!fn(h.get(), static_cast<const VertexEntry*>(nullptr))) return;
      }
      for (size_t k = 0; k < v_->levels[dir].size(); ++k) {
        const SegmentHandle* h = v_->LevelFind(dir, k, u);
        if (h != nullptr && !fn(h, static_cast<const VertexEntry*>(nullptr))) return;
      }
      return;
    }
    for (const auto& h : v_->l0[dir]) {
      if (u < h->meta.min_src || u > h->meta.max_src) continue;
      if (h->presence != nullptr && !h->presence->Holds(u)) continue;
      if (!fn(h.get(), static_cast<const VertexEntry*>(nullptr))) return;
    }
    index::VertexIndex::Located loc;
    if (!v_->index[dir].Find(u, &loc)) return;  // no level file holds u
    VertexEntry e;
    for (uint32_t i = 0; i < loc.size(); ++i) {
      const index::Pos& p = loc[i];
      const size_t k = p.level() - 1;
      const SegmentHandle* h =
          k < v_->levels[dir].size() ? v_->LevelFind(dir, k, u) : nullptr;
      assert(h != nullptr && "the index places u on a level whose files do not hold it");
      if (h == nullptr) continue;
      const VertexEntry* known = nullptr;
      if (p.has_entry()) {
        p.ToEntry(u, &e);
        known = &e;
      }
      if (!fn(h, known)) return;
    }
  }

 private:
  struct Run;
  struct FileScan;
  // first_batch: ReadOptions::first_batch of the file scanners. Want: a filter of the
  // vertices to visit (tier_reader.cc: AllVertices, WantFn, WantBits).
  // prepare: the newest memgraph's lists are prepared ahead of the visits (tier_reader.cc:
  // MemAhead; the visitor reads lists).
  template <class Want, class Visit>
  Status WalkRuns(uint8_t dir, VertexId begin, VertexId end, bool weights, size_t first_batch,
                  bool prepare, const Want& want, Visit&& visit) const;
  // ScanEdges (first = 0: whole batches) and ScanAdjacency (first = kPrefixBatch: a run's
  // first batch and a merged list's first chunk hold that many entries). any_order: see
  // AdjacencyScan.
  template <class Want>
  Status ScanLists(uint8_t dir, VertexId begin, VertexId end, bool weights, size_t first,
                   const Want& want, bool any_order,
                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const;
  template <bool kDegrees, class Fn>
  Status WalkVertices(VertexId begin, VertexId end, Fn&& fn) const;
  // The runs holding u's list in direction dir, newest first, stopping at a deletion mark.
  void CollectRuns(uint8_t dir, VertexId u, std::vector<Run>* runs) const;
  void RecordError(const Status& s) const;

  const Version* v_;
  Timestamp ts_;
  bool weighted_;
  size_t first_;
  static constexpr VertexId kUnknownBound = ~VertexId{0};
  mutable std::atomic<VertexId> bound_{kUnknownBound};  // VertexIdBound(), computed once
  mutable std::mutex err_mu_;
  mutable Status err_;
};

}  // namespace strata
