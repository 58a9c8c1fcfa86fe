// DBImpl::GetStats: counters, the current Version's shape, the memory plan's figures.
#include <cstdio>
#include <string>

#include "db/db_impl.h"
#include "db/memory_plan.h"

namespace strata {

DBStats DBImpl::GetStats(bool count_graph) {
  DBStats st;
  st.store_id = options_.in_memory ? 0 : store_id_;
  std::unique_ptr<Snapshot> snap = GetSnapshot();
  st.last_committed = snap->timestamp();
  if (count_graph) {
    st.num_vertices = snap->NumVertices();
    st.num_edges = snap->NumEdges();
    st.count_status = snap->status();
  }
  snap.reset();
  st.batches_committed = batches_.Count();
  st.ops_applied = ops_.Count();
  std::shared_ptr<const Version> v =
      versions_.CurrentWithRetired(&st.versions_reclaimed, &st.versions_rebuilt);
  for (const auto& m : v->memgraphs) {
    st.memgraph_bytes += m->bytes();
    st.memgraph_resident_bytes += m->arena_pages_bytes();
    st.memgraph_listed_bytes += m->listed_bytes();
    st.memgraph_versions += m->live_versions();
    st.hollow_versions += m->hollow_versions();
    st.versions_reclaimed += m->reclaimed_versions();
    st.versions_rebuilt += m->rebuilt_versions();
  }
  st.sealed_memgraphs = v->memgraphs.empty() ? 0 : v->memgraphs.size() - 1;
  st.active_readers = core_->tracer.ActiveCount();
  st.flushes = flushes_.load(std::memory_order_relaxed);
  st.stall_l0_micros = stall_l0_micros_.load(std::memory_order_relaxed);
  st.stall_flush_micros = stall_flush_micros_.load(std::memory_order_relaxed);
  st.stall_micros = st.stall_l0_micros + st.stall_flush_micros;
  for (const auto& l : v->l0) {
    for (const auto& h : l) st.disk_bytes += h->meta.size_bytes;
    st.l0_files += l.size();
  }
  for (const auto& levels : v->levels) {
    for (const auto& l : levels) {
      for (const auto& h : l) st.disk_bytes += h->meta.size_bytes;
      st.level_files += l.size();
    }
  }
  st.flush_bytes = flush_bytes_.load(std::memory_order_relaxed);
  st.compactions = compactions_.load(std::memory_order_relaxed);
  st.compaction_parts = compaction_parts_.load(std::memory_order_relaxed);
  st.compactions_joined = compactions_joined_.load(std::memory_order_relaxed);
  st.compaction_moves = compaction_moves_.load(std::memory_order_relaxed);
  st.compaction_bytes = compaction_bytes_.load(std::memory_order_relaxed);
  for (const auto& idx : v->index) {
    st.vertex_index_bytes += idx.bytes();
    st.vertex_index_entries += idx.vertices();
  }
  {
    auto shape = [](const char* name, const auto& files) {
      uint64_t bytes = 0;
      for (const auto& h : files) bytes += h->meta.size_bytes;
      char buf[96];
      snprintf(buf, sizeof(buf), "%s %zu files %.1f MiB", name, files.size(), bytes / 1048576.0);
      return std::string(buf);
    };
    st.level_shape = shape("L0", v->l0[0]);
    for (size_t k = 0; k < v->levels[0].size(); ++k) {
      st.level_shape += ", " + shape(("L" + std::to_string(k + 1)).c_str(), v->levels[0][k]);
    }
  }
  st.memory_budget = options_.memory_budget;
  st.memgraph_capacity = options_.in_memory ? options_.memgraph_bytes : memgraph_capacity();
  if (!options_.in_memory) {
    st.memgraph_pages_per_byte = planner_.pages_per_byte();
    st.memgraph_share = planner_.memgraph_share();
    st.memgraph_slots = planner_.memgraph_slots();
  }
  if (cache_) {
    st.resident_index_bytes = FileIndexBytes(*v);
    st.block_cache_capacity = cache_->capacity();
    st.block_cache_bytes = cache_->usage();
    st.block_cache_hits = cache_->hits();
    st.block_cache_misses = cache_->misses();
  }
  return st;
}

}  // namespace strata
