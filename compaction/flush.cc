#include "compaction/flush.h"

#include "segment/segment_format.h"
#include "segment/segment_writer.h"

namespace strata::compaction {

namespace {

Status FlushDirection(const mem::MemGraph& mg, uint8_t dir, const FlushOptions& o, io::Env* env,
                      uint64_t number, FileMeta* meta, uint64_t* bytes,
                      index::L0Presence::Builder* presence) {
  const std::string path = o.dir + "/" + SegmentFileName(number);
  SegmentWriter w(env);
  SegmentWriterOptions wo;
  wo.weighted = mg.options().weighted;
  wo.block_size = o.block_size;
  wo.extent_bytes = o.extent_bytes;
  wo.level = 0;
  wo.file_number = number;
  wo.timestamp = o.seal_ts;
  wo.user_tag = dir;
  wo.store_id = o.store_id;
  wo.drop_page_cache = o.drop_page_cache;
  Status s = w.Open(path, wo);
  if (!s.ok()) return s;
  meta->number = number;
  meta->level = 0;
  meta->tag = dir;
  meta->max_ts = o.seal_ts;
  bool first = true;
  for (uint64_t sg = 0; sg < mg.subgraph_bound() && s.ok(); ++sg) {
    const mem::SubgraphVersion* sv = mg.VersionAt(sg, o.seal_ts);
    if (sv == nullptr) continue;
    const mem::Adjacency* a = dir == 0 ? &sv->out : sv->in();
    // Only vertices with a state or entries here are written: the masks name them.
    for (uint64_t m = sv->exists_mask | sv->deleted_mask | a->EntryMask(); m != 0 && s.ok();
         m &= m - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(m));
      uint8_t flags = 0;
      if ((sv->exists_mask >> i) & 1) flags |= kVertexExists;
      if ((sv->deleted_mask >> i) & 1) flags |= kVertexDeleted;
      // A record counts the container, which appended erases may hide whole.
      if (flags == 0 && a->Entries(i) == 0) continue;
      const VertexId v = (sg << mem::kSubgraphBits) | i;
      s = w.AddVertex(v, flags);
      presence->Add(v);
      if (first) meta->min_src = v;
      first = false;
      meta->max_src = v;
      meta->num_vertices++;
      mem::ScanVertex(*a, i, [&](const uint64_t* k, const double* wt, const uint8_t* tomb, size_t n) {
        if (s.ok()) s = w.AddEdges(k, wt, tomb, n);
        return s.ok();
      });
    }
  }
  SegmentWriteStats st;
  if (s.ok()) s = w.Finish(&st);
  if (!s.ok()) {
    w.Abandon();
    return s;
  }
  meta->size_bytes = st.file_size;
  meta->num_edges = st.num_edges;
  meta->tail_checksum = st.tail_checksum;
  *bytes += st.file_size;
  return Status::OK();
}

}  // namespace

Status FlushMemGraph(const mem::MemGraph& mg, const FlushOptions& o, io::Env* env,
                     uint64_t* next_file_number, FlushResult* result) {
  *result = FlushResult();
  const int dirs = mg.options().kind == GraphKind::kDirectedWithInEdges ? 2 : 1;
  for (int dir = 0; dir < dirs; ++dir) {
    FileMeta meta;
    index::L0Presence::Builder presence;
    Status s = FlushDirection(mg, static_cast<uint8_t>(dir), o, env, (*next_file_number)++, &meta,
                              &result->bytes_written, &presence);
    if (!s.ok()) {
      for (const auto& f : result->files) env->RemoveFile(o.dir + "/" + SegmentFileName(f.number));
      return s;
    }
    result->entries_written += meta.num_edges;
    result->files.push_back(meta);
    std::unique_ptr<const index::L0Presence> p;
    result->presence_known.push_back(presence.Finish(&p));
    result->presence.push_back(std::move(p));
  }
  return env->SyncDir(o.dir);
}

}  // namespace strata::compaction
