#include "compaction/compactor.h"

#include <algorithm>
#include <memory>

#include "compaction/flush.h"
#include "lsm/segment_format.h"
#include "lsm/segment_writer.h"

namespace strata::compaction {

namespace {

struct Input {
  std::unique_ptr<lsm::SegmentScanner> scan;
  lsm::VertexEntry v;
  bool valid = false;
};

struct Edge {
  VertexId dst;
  double w;
  bool tomb;
};

class OutputSet {
 public:
  OutputSet(const CompactionOptions& o, io::Env* env, std::atomic<uint64_t>* next,
            CompactionResult* r)
      : o_(o), env_(env), next_(next), r_(r) {}

  Status AddVertex(VertexId v, uint8_t flags) {
    if (w_ != nullptr && w_->EstimatedFileSize() >= o_.target_file_bytes) {
      Status s = Close();
      if (!s.ok()) return s;
    }
    if (w_ == nullptr) {
      Status s = Open();
      if (!s.ok()) return s;
    }
    if (meta_.num_vertices++ == 0) meta_.min_src = v;
    meta_.max_src = v;
    return w_->AddVertex(v, flags);
  }
  Status AddEdge(const Edge& e) { return w_->AddEdge(e.dst, e.w, e.tomb, 0); }

  Status Close() {
    if (w_ == nullptr) return Status::OK();
    lsm::SegmentWriteStats st;
    Status s = w_->Finish(&st);
    if (!s.ok()) return s;
    meta_.size_bytes = st.file_size;
    meta_.num_edges = st.num_edges;
    r_->bytes_written += st.file_size;
    r_->entries_out += st.num_edges;
    r_->outputs.push_back(meta_);
    w_.reset();
    return Status::OK();
  }
  void Abandon() {
    if (w_) w_->Abandon();
    w_.reset();
    for (const auto& f : r_->outputs) env_->RemoveFile(o_.dir + "/" + SegmentFileName(f.number));
    r_->outputs.clear();
  }

 private:
  Status Open() {
    meta_ = lsm::FileMeta();
    meta_.number = next_->fetch_add(1);
    meta_.level = o_.output_level;
    meta_.tag = o_.tag;
    meta_.max_ts = o_.max_ts;
    lsm::SegmentWriterOptions wo;
    wo.weighted = o_.weighted;
    wo.block_size = o_.block_size;
    wo.level = o_.output_level;
    wo.file_number = meta_.number;
    wo.timestamp = o_.max_ts;
    wo.user_tag = o_.tag;
    wo.drop_page_cache = true;  // outputs are read back through the store's bounded caches
    w_ = std::make_unique<lsm::SegmentWriter>(env_);
    return w_->Open(o_.dir + "/" + SegmentFileName(meta_.number), wo);
  }

  const CompactionOptions& o_;
  io::Env* env_;
  std::atomic<uint64_t>* next_;
  CompactionResult* r_;
  std::unique_ptr<lsm::SegmentWriter> w_;
  lsm::FileMeta meta_;
};

Status ReadRun(Input* in, bool weighted, std::vector<Edge>* out) {
  out->clear();
  out->reserve(in->v.degree);
  lsm::EdgeBatch b;
  while (in->scan->NextEdges(&b)) {
    for (size_t j = 0; j < b.size; ++j) {
      out->push_back({b.dst[j], weighted && b.weight ? b.weight[j] : 1.0,
                      b.has_tombstones && b.tombstone[j] != 0});
    }
  }
  return in->scan->status();
}

}  // namespace

Status RunCompaction(const std::vector<const lsm::SegmentReader*>& inputs,
                     const CompactionOptions& o, io::Env* env,
                     std::atomic<uint64_t>* next_file_number, CompactionResult* result) {
  *result = CompactionResult();
  std::vector<Input> in(inputs.size());
  lsm::ScanOptions so;
  so.read.weights = o.weighted;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i].scan = inputs[i]->NewScanner(so);
    in[i].valid = in[i].scan->NextVertex(&in[i].v);
    if (!in[i].scan->status().ok()) return in[i].scan->status();
    result->bytes_read += inputs[i]->file_size();
    result->entries_in += inputs[i]->num_edges();
  }
  OutputSet out(o, env, next_file_number, result);
  std::vector<std::vector<Edge>> runs(inputs.size());
  std::vector<size_t> taken, pos;
  std::vector<Edge> merged;
  Status s;
  for (;;) {
    VertexId u = 0;
    bool any = false;
    for (const Input& x : in) {
      if (x.valid && (!any || x.v.src < u)) {
        u = x.v.src;
        any = true;
      }
    }
    if (!any) break;
    // Inputs holding u, newest first, up to the first deletion mark.
    taken.clear();
    bool hidden = false;
    bool exists = false, knows = false, deleted = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i].valid || in[i].v.src != u) continue;
      if (!hidden) {
        taken.push_back(i);
        const uint8_t f = in[i].v.flags;
        if (!knows && (f & (lsm::kVertexExists | lsm::kVertexDeleted))) {
          knows = true;
          exists = (f & lsm::kVertexExists) != 0;
        }
        if (f & lsm::kVertexDeleted) {
          deleted = true;
          hidden = true;
        }
      }
    }
    for (size_t i : taken) {
      s = ReadRun(&in[i], o.weighted, &runs[i]);
      if (!s.ok()) break;
    }
    if (!s.ok()) break;
    // Newest record per destination wins.
    merged.clear();
    const bool keep_tomb = !o.bottom && !deleted;
    if (taken.size() == 1) {
      // One input holds u (the common case): its run is already sorted and unique.
      for (const Edge& e : runs[taken[0]]) {
        if (!e.tomb || keep_tomb) merged.push_back(e);
      }
    }
    pos.assign(taken.size(), 0);
    while (taken.size() > 1) {
      VertexId best = 0;
      bool more = false;
      for (size_t k = 0; k < taken.size(); ++k) {
        const auto& r = runs[taken[k]];
        if (pos[k] < r.size() && (!more || r[pos[k]].dst < best)) {
          best = r[pos[k]].dst;
          more = true;
        }
      }
      if (!more) break;
      const Edge* win = nullptr;
      for (size_t k = 0; k < taken.size(); ++k) {
        const auto& r = runs[taken[k]];
        if (pos[k] < r.size() && r[pos[k]].dst == best) {
          if (win == nullptr) win = &r[pos[k]];
          ++pos[k];
        }
      }
      if (!win->tomb || keep_tomb) merged.push_back(*win);
    }
    uint8_t flags = 0;
    if (knows && exists) flags |= lsm::kVertexExists;
    if (deleted && !o.bottom) flags |= lsm::kVertexDeleted;
    if (flags != 0 || !merged.empty()) {
      s = out.AddVertex(u, flags);
      for (size_t j = 0; j < merged.size() && s.ok(); ++j) s = out.AddEdge(merged[j]);
      if (!s.ok()) break;
    }
    // Advance every input positioned at u (hidden ones too: their data for u is dead).
    for (Input& x : in) {
      if (x.valid && x.v.src == u) {
        x.valid = x.scan->NextVertex(&x.v);
        if (!x.scan->status().ok()) {
          s = x.scan->status();
          break;
        }
      }
    }
    if (!s.ok()) break;
  }
  if (s.ok()) s = out.Close();
  if (s.ok()) s = env->SyncDir(o.dir);
  if (!s.ok()) out.Abandon();
  return s;
}

}  // namespace strata::compaction
