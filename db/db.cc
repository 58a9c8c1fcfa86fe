// DB::Open and the single-update conveniences.
#include <memory>
#include <sstream>

#include "db/db_impl.h"
#include "strata/db.h"

namespace strata {

Status DB::Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db) {
  db->reset();
  auto impl = std::make_unique<DBImpl>(options, path);
  Status s = impl->Init();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

Status DB::InsertEdge(VertexId u, VertexId v, double weight) {
  WriteBatch b;
  b.InsertEdge(u, v, weight);
  return Write(b);
}
Status DB::DeleteEdge(VertexId u, VertexId v) {
  WriteBatch b;
  b.DeleteEdge(u, v);
  return Write(b);
}
Status DB::SetWeight(VertexId u, VertexId v, double weight) {
  WriteBatch b;
  b.SetWeight(u, v, weight);
  return Write(b);
}
Status DB::AddVertex(VertexId v) {
  WriteBatch b;
  b.AddVertex(v);
  return Write(b);
}
Status DB::DeleteVertex(VertexId v) {
  WriteBatch b;
  b.DeleteVertex(v);
  return Write(b);
}

std::string DBStats::ToString() const {
  std::ostringstream o;
  o << "last_committed=" << last_committed << " vertices=" << num_vertices
    << " edges=" << num_edges << " batches=" << batches_committed << " ops=" << ops_applied
    << " memgraph_bytes=" << memgraph_bytes
    << " memgraph_resident_bytes=" << memgraph_resident_bytes
    << " memgraph_listed_bytes=" << memgraph_listed_bytes << " versions=" << memgraph_versions
    << " reclaimed=" << versions_reclaimed << " hollow=" << hollow_versions << " rebuilt=" << versions_rebuilt
    << " readers=" << active_readers
    << " sealed=" << sealed_memgraphs << " flushes=" << flushes
    << " compactions=" << compactions << " compaction_parts=" << compaction_parts
    << " compactions_joined=" << compactions_joined << " compaction_moves=" << compaction_moves
    << " stall_us=" << stall_micros << " (l0 "
    << stall_l0_micros << ", flush " << stall_flush_micros << ")"
    << " disk_bytes=" << disk_bytes << " l0_files=" << l0_files << " level_files=" << level_files
    << " flush_bytes=" << flush_bytes << " compaction_bytes=" << compaction_bytes
    << " vertex_index_bytes=" << vertex_index_bytes
    << " vertex_index_entries=" << vertex_index_entries
    << " vertex_index_bytes_per_vertex=" << vertex_index_bytes_per_vertex()
    << " memory_budget=" << memory_budget << " memgraph_capacity=" << memgraph_capacity
    << " memgraph_pages_per_byte=" << memgraph_pages_per_byte
    << " memgraph_share=" << memgraph_share << " memgraph_slots=" << memgraph_slots
    << " resident_index_bytes=" << resident_index_bytes
    << " block_cache=" << block_cache_bytes << "/" << block_cache_capacity
    << " cache_hits=" << block_cache_hits << " cache_misses=" << block_cache_misses
    << " levels=[" << level_shape << "]";
  if (!count_status.ok()) o << " count_status=\"" << count_status.ToString() << "\"";
  return o.str();
}

}  // namespace strata
