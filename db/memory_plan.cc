#include "db/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "memgraph/node_allocator.h"

namespace strata {

size_t IoReserve(const Options& o) {
  return std::clamp<size_t>(o.memory_budget / 16, size_t{64} << 10, size_t{32} << 20);
}

size_t WriterExtent(const Options& o, int writers) {
  return std::clamp<size_t>(IoReserve(o) / 16 / static_cast<size_t>(std::max(writers, 1)),
                            size_t{64} << 10, size_t{1} << 20);
}

size_t CompactionWindow(const Options& o, size_t inputs) {
  return std::clamp<size_t>(IoReserve(o) / 3 / (3 * std::max<size_t>(1, inputs)),
                            size_t{64} << 10, size_t{1} << 20);
}

size_t FileIndexBytes(const Version& v) {
  size_t bytes = 0;
  for (int dir = 0; dir < 2; ++dir) {
    for (const SegmentHandle* h : v.AllFiles(dir)) {
      bytes += h->reader->MemoryUsage();
      if (h->presence != nullptr) bytes += h->presence->bytes();
    }
  }
  return bytes;
}

Status CheckMemoryBudget(const Options& o) {
  const size_t memgraphs = o.memgraph_bytes * (1 + static_cast<size_t>(o.max_sealed_memgraphs));
  if (memgraphs + IoReserve(o) + kMinBlockCache > o.memory_budget) {
    return Status::InvalidArgument(
        "memgraph_bytes: the active and sealed memgraphs (memgraph_bytes x (1 + "
        "max_sealed_memgraphs) = " +
        std::to_string(memgraphs) + " bytes), the I/O reserve (" + std::to_string(IoReserve(o)) +
        " bytes) and a 64 KiB block cache must fit in memory_budget (" +
        std::to_string(o.memory_budget) + " bytes)");
  }
  return Status::OK();
}

double MemoryPlanner::pages_per_byte() const {
  std::lock_guard<std::mutex> plan(plan_mu_);
  return pages_per_byte_;
}

size_t MemoryPlanner::Replan() {
  const size_t budget = options_.memory_budget;
  const size_t slots = 1 + static_cast<size_t>(options_.max_sealed_memgraphs);
  const size_t floor = std::max<size_t>(4096, options_.memgraph_bytes / 8);
  const double r = pages_per_byte_;
  const double room = budget > pinned_ + kMinBlockCache
                          ? static_cast<double>(budget - pinned_ - kMinBlockCache)
                          : 0.0;
  // A spare arena holds one memgraph's pages while the next memgraph fills: kept only if the
  // budget holds it beside the others at full capacity (and the allocator keeps arenas of
  // that many pages at all).
  const double full = static_cast<double>(options_.memgraph_bytes) * r;
  const bool spare = mem::NodeAllocator::RecyclesArenas() &&
                     full <= static_cast<double>(mem::NodeAllocator::kSpareMaxBytes) &&
                     static_cast<double>(slots + 1) * full <= room;
  const size_t n = slots + (spare ? 1 : 0);
  const size_t mg = std::clamp(static_cast<size_t>(room / (static_cast<double>(n) * r)), floor,
                               options_.memgraph_bytes);
  const size_t share = static_cast<size_t>(std::ceil(static_cast<double>(mg) * r));
  memgraph_capacity_.store(mg, std::memory_order_relaxed);
  memgraph_share_.store(share, std::memory_order_relaxed);
  keep_spare_.store(spare, std::memory_order_relaxed);
  const size_t fixed = n * share + pinned_;
  return fixed + kMinBlockCache <= budget ? budget - fixed : kMinBlockCache;
}

void MemoryPlanner::NoteSealedPages(size_t pages, size_t bytes, BlockCache* cache,
                                    const std::function<void(const std::string&)>& log) {
  if (pages == 0 || bytes == 0) return;
  std::lock_guard<std::mutex> plan(plan_mu_);
  // A memgraph sealed well short of its capacity (Flush, Close) holds whole slabs for few
  // nodes: its ratio (up to the clamp) says nothing of a full one's, and averaged in it would
  // shrink the next memgraphs of a store flushed often by hand.
  if (bytes < memgraph_capacity() / 2) return;
  // Averaged, each measurement weighing half: consecutive memgraphs of an ingest measured
  // 1.5-2.1 in turns (scale 18, 4 MiB memgraphs), and the capacity followed each one.
  const double r = std::clamp(static_cast<double>(pages) / static_cast<double>(bytes), 1.0,
                              kMaxPagesPerByte);
  pages_per_byte_ = measured_ ? (pages_per_byte_ + r) / 2 : r;
  measured_ = true;
  cache->SetCapacity(Replan());
  const double last = logged_ratio_ == 0 ? 1.0 : logged_ratio_;
  if (pages_per_byte_ > last * 9 / 8 || pages_per_byte_ < last * 7 / 8) {
    char ratio[32];
    snprintf(ratio, sizeof(ratio), "%.2f", pages_per_byte_);
    log("memory: a sealed memgraph's arena holds " + std::to_string(pages) +
        " bytes of pages for " + std::to_string(bytes) + " bytes of nodes (slabs part used, "
        "freed pages kept): the plan counts a memgraph's bytes " + ratio +
        " times; memgraph capacity " + std::to_string(memgraph_capacity()) + " bytes" +
        (keep_spare() ? ", a spare arena kept" : ", no spare arena"));
    logged_ratio_ = pages_per_byte_;
  }
}

void MemoryPlanner::Update(const VersionSet& versions, BlockCache* cache,
                           const std::function<void(const std::string&)>& log) {
  std::lock_guard<std::mutex> plan(plan_mu_);
  std::shared_ptr<const Version> v = versions.current();
  const size_t index = v->index[0].bytes() + v->index[1].bytes();
  const size_t resident = FileIndexBytes(*v) + index;
  // An install computes the new index beside the old one and the old pages go with the last
  // Version holding them: a compaction touching every vertex holds two copies for a moment.
  pinned_ = IoReserve(options_) + resident + index;
  cache->SetCapacity(Replan());
  const size_t mg = memgraph_capacity();
  const size_t fixed = memgraph_slots() * memgraph_share() + pinned_;
  // LOG: capacity changes of an eighth or more, and entering or leaving "exceeded".
  const size_t last = logged_capacity_ == 0 ? options_.memgraph_bytes : logged_capacity_;
  if (mg != last && (mg < last - last / 8 || mg > last + last / 8 || mg == options_.memgraph_bytes)) {
    log("memory: memgraph capacity " + std::to_string(mg) + " bytes (memgraph_bytes " +
        std::to_string(options_.memgraph_bytes) + "): resident indexes " +
        std::to_string(resident) + " bytes, vertex index " + std::to_string(index) +
        " bytes counted twice");
    logged_capacity_ = mg;
  }
  const bool over = fixed + kMinBlockCache > options_.memory_budget;
  if (over != logged_over_) {
    log(over ? "memory: memory_budget (" + std::to_string(options_.memory_budget) +
                   " bytes) is exceeded by " +
                   std::to_string(fixed + kMinBlockCache - options_.memory_budget) +
                   " bytes: resident indexes " + std::to_string(resident) +
                   " bytes (vertex index " + std::to_string(index) +
                   " counted twice), memgraphs at their floor of memgraph_bytes / 8"
             : "memory: back within memory_budget");
    logged_over_ = over;
  }
}

}  // namespace strata
