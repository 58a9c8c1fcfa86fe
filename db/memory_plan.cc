#include "db/memory_plan.h"

#include <algorithm>

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

void MemoryPlanner::NoteSealedPages(size_t pages,
                                    const std::function<void(const std::string&)>& log) {
  if (pages == 0) return;
  std::lock_guard<std::mutex> plan(plan_mu_);
  const size_t cap = memgraph_capacity();
  const bool over = pages > cap + cap / 4;
  if (over == logged_pages_over_) return;
  logged_pages_over_ = over;
  log(over ? "memory: a sealed memgraph's arena holds " + std::to_string(pages) +
                 " bytes of pages against the " + std::to_string(cap) +
                 " bytes of capacity the plan counts it at (slabs part used, freed pages "
                 "kept): the memgraphs take more of memory_budget than planned "
                 "(DBStats::memgraph_resident_bytes)"
           : "memory: a sealed memgraph's arena is back within its planned capacity (" +
                 std::to_string(pages) + " bytes of pages, capacity " + std::to_string(cap) +
                 ")");
}

void MemoryPlanner::Update(const VersionSet& versions, BlockCache* cache,
                           const std::function<void(const std::string&)>& log) {
  std::lock_guard<std::mutex> plan(plan_mu_);
  std::shared_ptr<const Version> v = versions.current();
  const size_t index = v->index[0].bytes() + v->index[1].bytes();
  const size_t resident = FileIndexBytes(*v) + index;
  // An install computes the new index beside the old one and the old pages go with the last
  // Version holding them: a compaction touching every vertex holds two copies for a moment.
  const size_t pinned = IoReserve(options_) + resident + index;
  const size_t slots = 1 + static_cast<size_t>(options_.max_sealed_memgraphs);
  const size_t floor = std::max<size_t>(4096, options_.memgraph_bytes / 8);
  const size_t room = options_.memory_budget > pinned + kMinBlockCache
                          ? options_.memory_budget - pinned - kMinBlockCache
                          : 0;
  const size_t mg = std::clamp(room / slots, floor, options_.memgraph_bytes);
  memgraph_capacity_.store(mg, std::memory_order_relaxed);
  const size_t fixed = slots * mg + pinned;
  const size_t cap = fixed + kMinBlockCache <= options_.memory_budget
                         ? options_.memory_budget - fixed
                         : kMinBlockCache;
  cache->SetCapacity(cap);
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
