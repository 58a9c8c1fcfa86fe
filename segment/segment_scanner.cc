#include "segment/segment_scanner.h"

#include <algorithm>

#include "segment/scan_spares.h"
#include "segment/segment_reader.h"
#include "segment/stream_window.h"

namespace strata {

SegmentScanner::SegmentScanner(const SegmentReader* r, const ScanOptions& o) : r_(r), o_(o) {
  size_t unused;
  raw_ = ScanSpares<std::string>::Take(&unused);  // capacity only: emptied here
  raw_.clear();
  batch_ = ScanSpares<std::vector<VertexEntry>>::Take(&unused);
  batch_.clear();
  edges_ = std::make_unique<StreamWindow>(r, &r->edge_stream_);
  if (o.read.weights && r->header_.weighted()) {
    weights_ = std::make_unique<StreamWindow>(r, &r->weight_stream_);
  }
  it_.reset(new NeighborIterator(r, VertexEntry(), o.read, edges_.get(), weights_.get(),
                                 window(), /*own_windows=*/false));
  const auto& index = r->vertex_index_;
  if (index.empty() || o.min_src > o.max_src || o.min_src > r->header_.max_src ||
      o.max_src < r->header_.min_src) {
    done_ = true;
    return;
  }
  auto pos =
      std::upper_bound(index.begin(), index.end(), o.min_src,
                       [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; });
  next_block_ = pos == index.begin() ? 0 : static_cast<uint64_t>(pos - index.begin()) - 1;
  // The windows read no further than the first vertex block past max_src starts: runs are in
  // source order, so the range's runs end before it (LimitReadahead tightens this to the last
  // run once its block is loaded; a SetVertex scan never loads one).
  auto past =
      std::upper_bound(pos, index.end(), o.max_src,
                       [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; });
  if (past != index.end()) {
    it_->edge_limit_ = past->stream_base;
    it_->weight_limit_ = 8 * past->edge_base;
  }
}

SegmentScanner::~SegmentScanner() {
  ScanSpares<std::string>::Give(std::move(raw_), raw_.capacity());
  ScanSpares<std::vector<VertexEntry>>::Give(std::move(batch_),
                                             batch_.capacity() * sizeof(VertexEntry));
}

size_t SegmentScanner::window() const {
  return o_.window != 0 ? o_.window : r_->options_.scan_window;
}

bool SegmentScanner::Fail(Status s) {
  if (status_.ok()) status_ = s;
  has_current_ = false;
  return false;
}

// Most vertex entries a scanner decodes at once.
constexpr uint64_t kScanVertexBatch = 8192;

Status SegmentScanner::LoadVertexBatch(bool one_block) {
  batch_.clear();
  batch_pos_ = 0;
  const auto& index = r_->vertex_index_;
  const uint64_t j0 = next_block_;
  // Blocks past jmax cannot hold a vertex <= max_src.
  const uint64_t jmax = static_cast<uint64_t>(
      std::upper_bound(index.begin(), index.end(), o_.max_src,
                       [](VertexId s, const VertexIndexEntry& e) { return s < e.first_src; }) -
      index.begin());
  if (!r_->pinned_vertex_off_.empty()) {
    next_block_ = j0 + 1;
    Status s = r_->DecodeVertexBlock(j0, r_->pinned_vertex_.data() + r_->pinned_vertex_off_[j0],
                                     index[j0].size, &batch_, 0, nullptr, nullptr);
    if (s.ok()) LimitReadahead(jmax);
    return s;
  }
  // Up to scan_window bytes of blocks, but none past the block that can hold max_src: a scan of
  // a small vertex range reads (and decodes) only the blocks of that range.
  uint64_t j1 = j0;
  uint64_t bytes = index[j0].size;
  // Decoded entries take ~15x their encoded bytes: bound the batch by entries too (a 1 MiB
  // window of vertex blocks would decode to ~16 MiB per scanner, per compaction input).
  // A smaller window bounds it further: at most window / 64 entries, whose decoded form (56
  // bytes each) is about the window's size.
  const uint64_t max_entries = std::min<uint64_t>(kScanVertexBatch, window() / 64);
  const uint64_t max_blocks =
      one_block ? 1 : std::max<uint64_t>(1, max_entries / std::max<uint32_t>(1, r_->header_.vertex_group));
  while (j1 + 1 < index.size() && j1 + 1 < jmax && j1 + 1 - j0 < max_blocks &&
         bytes + index[j1 + 1].size <= window()) {
    bytes += index[++j1].size;
  }
  Status s = r_->LoadBlocks(true, j0, j1, &raw_, &raw_off_);
  if (!s.ok()) return s;
  // Name the vertex blocks the next batch will read to the OS (StreamWindow's hints do the same
  // for the edge and weight streams).
  if (const uint64_t windows = GetStreamHintWindows(); windows > 0 && !one_block && j1 + 1 < jmax) {
    const uint64_t a = std::max(j1 + 1, hinted_block_);
    const uint64_t b = std::min(jmax - 1, j1 + windows * (j1 - j0 + 1));
    if (a <= b && index[b].offset >= index[a].offset) {
      r_->file_->WillNeed(index[a].offset, index[b].offset + index[b].size - index[a].offset);
      hinted_block_ = b + 1;
    }
  }
  for (uint64_t j = j0; j <= j1; j++) {
    s = r_->DecodeVertexBlock(j, raw_.data() + raw_off_[j - j0], index[j].size, &batch_, 0,
                              nullptr, nullptr);
    if (!s.ok()) return s;
  }
  next_block_ = j1 + 1;
  LimitReadahead(jmax);
  return Status::OK();
}

void SegmentScanner::LimitReadahead(uint64_t jmax) {
  // Once the batch holds the range's last vertex, the edge and weight windows need read no
  // further than its run: a scan of a small range then reads only what it decodes.
  if (next_block_ < jmax) return;
  uint64_t edges = 0, weights = 0;
  for (auto e = batch_.rbegin(); e != batch_.rend(); ++e) {
    if (e->src > o_.max_src || e->degree == 0) continue;
    edges = e->stream_offset + e->run_bytes;
    weights = 8 * (e->first_edge + e->degree);
    break;
  }
  it_->edge_limit_ = edges;
  it_->weight_limit_ = weights;
}

bool SegmentScanner::NextVertex(VertexEntry* v) {
  has_current_ = false;
  if (done_ || !status_.ok()) return false;
  while (true) {
    if (batch_pos_ == batch_.size()) {
      if (next_block_ >= r_->vertex_index_.size()) {
        done_ = true;
        return false;
      }
      Status s = LoadVertexBatch();
      if (!s.ok()) return Fail(s);
    }
    const VertexEntry& e = batch_[batch_pos_++];
    if (e.src < o_.min_src) continue;
    if (e.src > o_.max_src) {
      done_ = true;
      return false;
    }
    *v = e;
    current_ = &e;
    has_current_ = true;
    reset_pending_ = true;  // the iterator moves to e when its edges are asked for
    return true;
  }
}

bool SegmentScanner::SeekVertex(VertexId target, VertexEntry* v) {
  has_current_ = false;
  if (done_ || !status_.ok()) return false;
  // In the decoded batch: a few steps (a dense scan's next wanted vertex is near), then a
  // binary search.
  size_t i = batch_pos_;
  for (int k = 0; k < 8 && i < batch_.size() && batch_[i].src < target; ++k) ++i;
  if (i < batch_.size() && batch_[i].src < target) {
    i = static_cast<size_t>(
        std::lower_bound(batch_.begin() + static_cast<ptrdiff_t>(i), batch_.end(), target,
                         [](const VertexEntry& e, VertexId t) { return e.src < t; }) -
        batch_.begin());
  }
  batch_pos_ = i;
  if (batch_pos_ == batch_.size() && next_block_ < r_->vertex_index_.size()) {
    // Blocks before the last one starting at or before target hold only smaller vertices.
    const auto& index = r_->vertex_index_;
    const uint64_t j = static_cast<uint64_t>(
        std::upper_bound(index.begin() + static_cast<ptrdiff_t>(next_block_), index.end(), target,
                         [](VertexId t, const VertexIndexEntry& e) { return t < e.first_src; }) -
        index.begin());
    if (j > next_block_ + 1) {
      // A sparse scan: load the target's block alone (a batch would decode blocks it skips).
      next_block_ = j - 1;
      Status s = LoadVertexBatch(/*one_block=*/true);
      if (!s.ok()) return Fail(s);
    }
  }
  while (NextVertex(v)) {
    if (v->src >= target) return true;
  }
  return false;
}

void SegmentScanner::SetVertex(const VertexEntry* v) {
  if (!status_.ok()) return;
  current_ = v;
  has_current_ = true;
  reset_pending_ = true;
}

bool SegmentScanner::NextEdges(EdgeBatch* b) {
  if (!has_current_ || !status_.ok()) return false;
  if (reset_pending_) {
    reset_pending_ = false;
    it_->Reset(*current_);
  }
  if (it_->Next(b)) return true;
  if (!it_->status().ok()) return Fail(it_->status());
  return false;
}

std::unique_ptr<SegmentScanner> SegmentReader::NewScanner(const ScanOptions& o) const {
  return std::unique_ptr<SegmentScanner>(new SegmentScanner(this, o));
}

}  // namespace strata
