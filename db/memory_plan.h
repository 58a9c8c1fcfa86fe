// How a persistent store divides Options::memory_budget:
//
//   I/O reserve        buffers of one flush and one compaction running at once (IoReserve)
//   resident indexes   the segment readers' block indexes, and the multi-level vertex index
//                      counted twice (an install builds the new index beside the old one)
//   memgraphs          1 + max_sealed_memgraphs of them, each sealed at memgraph_capacity():
//                      memgraph_bytes, shrunk when the rest leaves less, down to an eighth of it
//                      (4 KiB at least)
//   block cache        what is left, never less than kMinBlockCache
//
// The plan is redone after every change of the file set (MemoryPlanner::Update).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "db/version_set.h"
#include "segment/block_cache.h"
#include "strata/options.h"

namespace strata {

// The block cache never gets less than this, even when the budget is spent elsewhere (reads
// would otherwise pay one small disk read per vertex lookup).
inline constexpr size_t kMinBlockCache = size_t{64} << 10;

// Memory the budget keeps for the buffers of one flush and one compaction running at once
// (stream windows of each input, the writers' blocks): a sixteenth of it, 64 KiB to 32 MiB.
size_t IoReserve(const Options& o);
// The reserve holds one flush and one compaction. A segment writer buffers about five extents
// (edges, weights, vertex and bloom blocks, the file's tail): the flush's writer and the
// compaction's (one per part, each with WriterExtent(o, parts): together one writer's worth)
// take ~10/16 of the reserve. A compaction input holds about three read windows (edges,
// weights, vertex blocks) per part: CompactionWindow(o, inputs x parts) shares a third of it.
// All are clamped to [64 KiB, 1 MiB] (extents of at least 64 KiB keep reads large; at 1 GiB
// and more the reserve is not the limit).
// The extent of each of `writers` segment writers sharing one writer's part of the reserve.
size_t WriterExtent(const Options& o, int writers = 1);
size_t CompactionWindow(const Options& o, size_t inputs);

// Memory the segment readers of v keep resident (their small block indexes).
size_t FileIndexBytes(const Version& v);

// InvalidArgument unless the memgraphs at memgraph_bytes, the I/O reserve and the smallest
// block cache fit in memory_budget (persistent stores only).
Status CheckMemoryBudget(const Options& o);

// Keeps the plan for one store: the memgraph capacity writers seal at, and the block cache's
// capacity. Thread-safe.
class MemoryPlanner {
 public:
  explicit MemoryPlanner(const Options& options)
      : options_(options), memgraph_capacity_(options.memgraph_bytes) {}

  // Size at which the active memgraph is sealed.
  size_t memgraph_capacity() const { return memgraph_capacity_.load(std::memory_order_relaxed); }

  // Replans for the current Version of `versions` (read under plan_mu_, so the last plan is
  // the newest Version's) and sets `cache`'s capacity. `log` gets a line when the capacity
  // moves by an eighth or more, and when the budget starts or stops being exceeded.
  void Update(const VersionSet& versions, BlockCache* cache,
              const std::function<void(const std::string&)>& log);

  // A sealed memgraph's arena holds `pages` bytes of pages (MemGraph::arena_pages_bytes; 0
  // without a private arena: nothing to say). The plan counts it at its capacity; `log` gets
  // a line when its pages first pass that by a quarter (slabs part used and freed pages kept,
  // which small memgraphs pay most: docs/benchmarks.md, "ingest_large's memory"), and when a
  // later one is back within it.
  void NoteSealedPages(size_t pages, const std::function<void(const std::string&)>& log);

 private:
  const Options& options_;
  std::atomic<size_t> memgraph_capacity_;
  std::mutex plan_mu_;  // serializes Update; before version_mu_ and the store's log_mu_
  size_t logged_capacity_ = 0;  // under plan_mu_: the capacity LOG last reported
  bool logged_over_ = false;    // under plan_mu_: LOG said the budget is exceeded
  bool logged_pages_over_ = false;  // under plan_mu_: LOG said an arena passed its capacity
};

}  // namespace strata
