// How a persistent store divides Options::memory_budget:
//
//   I/O reserve        buffers of one flush and one compaction running at once (IoReserve)
//   resident indexes   the segment readers' block indexes, and the multi-level vertex index
//                      counted twice (an install builds the new index beside the old one)
//   memgraphs          1 + max_sealed_memgraphs of them, counted at their arenas' pages: a
//                      memgraph sealed at memgraph_capacity() bytes of nodes holds about
//                      pages_per_byte() times that in pages (slabs part used, freed pages
//                      kept; measured on each sealed memgraph). The capacity is
//                      memgraph_bytes, shrunk when the rest leaves less, down to an eighth
//                      of it (4 KiB at least)
//   spare arena        one memgraph's pages more, kept when a flushed memgraph's arena is
//                      left for the next one (mem::NodeAllocator, "Spare arenas") — only
//                      when the budget has room for it at full capacity and its pages are
//                      within NodeAllocator::kSpareMaxBytes (keep_spare())
//   block cache        what is left, never less than kMinBlockCache
//
// The plan is redone after every change of the file set (MemoryPlanner::Update) and after
// each measurement of a sealed memgraph's pages (NoteSealedPages).
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
      : options_(options),
        memgraph_capacity_(options.memgraph_bytes),
        memgraph_share_(options.memgraph_bytes) {}

  // Size at which the active memgraph is sealed.
  size_t memgraph_capacity() const { return memgraph_capacity_.load(std::memory_order_relaxed); }

  // Replans for the current Version of `versions` (read under plan_mu_, so the last plan is
  // the newest Version's) and sets `cache`'s capacity. `log` gets a line when the capacity
  // moves by an eighth or more, and when the budget starts or stops being exceeded.
  void Update(const VersionSet& versions, BlockCache* cache,
              const std::function<void(const std::string&)>& log);

  // A sealed memgraph's arena holds `pages` bytes of pages for `bytes` bytes of nodes
  // (MemGraph::arena_pages_bytes, bytes(); pages 0 without a private arena: nothing to
  // learn; nor from a memgraph sealed under half its capacity). Their ratio, within
  // [1, kMaxPagesPerByte] and averaged with the earlier ones, is what the plan counts each
  // memgraph's bytes at from now on; the capacity is replanned. `log` gets a line when the
  // ratio moves by an eighth or more.
  void NoteSealedPages(size_t pages, size_t bytes, BlockCache* cache,
                       const std::function<void(const std::string&)>& log);

  // The arena pages a memgraph holds per byte of its nodes, as last measured (1 before any).
  double pages_per_byte() const;
  // Whether a flushed memgraph's arena may be kept as a spare (its pages resident for the
  // next memgraph): only when the plan counts one memgraph more at full capacity and still
  // fits the budget.
  bool keep_spare() const { return keep_spare_.load(std::memory_order_relaxed); }
  // The pages the plan counts for each memgraph slot (capacity x pages_per_byte()).
  size_t memgraph_share() const { return memgraph_share_.load(std::memory_order_relaxed); }
  // The memgraphs the plan counts: active, sealed, and the spare arena when kept.
  size_t memgraph_slots() const {
    return 1 + static_cast<size_t>(options_.max_sealed_memgraphs) + (keep_spare() ? 1 : 0);
  }

  static constexpr double kMaxPagesPerByte = 4.0;

 private:
  const Options& options_;
  std::atomic<size_t> memgraph_capacity_;
  std::atomic<size_t> memgraph_share_;
  std::atomic<bool> keep_spare_{false};
  // Computes the capacity, the share and the spare from pinned_ and pages_per_byte_, and
  // returns the block cache's capacity. Caller holds plan_mu_.
  size_t Replan();
  mutable std::mutex plan_mu_;  // serializes Update; before version_mu_ and the store's log_mu_
  size_t pinned_ = 0;   // under plan_mu_: the reserve and the resident indexes, last Update
  double pages_per_byte_ = 1.0;  // under plan_mu_
  bool measured_ = false;        // under plan_mu_: pages_per_byte_ is a measurement
  double logged_ratio_ = 0;      // under plan_mu_: the ratio LOG last reported
  size_t logged_capacity_ = 0;  // under plan_mu_: the capacity LOG last reported
  bool logged_over_ = false;    // under plan_mu_: LOG said the budget is exceeded
};

}  // namespace strata
