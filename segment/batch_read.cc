// SegmentReader::ReadNeighborsBatch: the edges of many vertices, their blocks read with one
// MultiRead and decoded by one NeighborIterator over adopted memory; PlanNeighborsBatch and
// DecodeNeighborsBatch are its two halves, for callers that do the reads (io::ReadQueue).
#include <algorithm>
#include <cstring>

#include "segment/scan_spares.h"
#include "segment/segment_reader.h"
#include "segment/stream_window.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

void SegmentReader::PlanStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks,
                                     std::string* buf, std::vector<uint64_t>* payload_at,
                                     std::vector<io::ReadRequest>* reqs) const {
  uint64_t total = 0;
  for (uint64_t k : blocks) total += BlockPhysicalSize(s, k);
  buf->resize(total);
  payload_at->resize(blocks.size());
  uint64_t at = 0;
  const uint64_t per_extent = header_.blocks_per_extent;
  const size_t first = reqs->size();
  for (size_t i = 0; i < blocks.size(); i++) {
    const uint64_t k = blocks[i];
    const uint64_t size = BlockPhysicalSize(s, k);
    (*payload_at)[i] = at;
    // Adjacent on disk: the previous block, in the same extent.
    if (i > 0 && blocks[i - 1] + 1 == k && k % per_extent != 0 && reqs->size() > first) {
      reqs->back().len += size;
    } else {
      reqs->push_back(
          io::ReadRequest{BlockOffset(s, k), static_cast<size_t>(size), buf->data() + at, {}});
    }
    at += size;
  }
}

Status SegmentReader::CheckStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks,
                                        const std::string& buf,
                                        const std::vector<uint64_t>& payload_at) const {
  for (size_t i = 0; i < blocks.size(); i++) {
    const char* p = buf.data() + payload_at[i];
    const uint64_t plen = BlockPhysicalSize(s, blocks[i]) - kBlockTrailerSize;
    if (DecodeFixed64(p + plen) != Checksum64(p, plen, ChecksumSeed(s.kind, blocks[i]))) {
      return io::CorruptionAt(path_, BlockOffset(s, blocks[i]),
                              std::string(s.name) + " block " + std::to_string(blocks[i]) +
                                  " checksum mismatch");
    }
  }
  return Status::OK();
}

namespace {

// Whether vs[i]'s run is read with the batch's blocks (not streamed alone: too long, or an
// entry whose fields are out of the stream's bounds, which the iterator reports).
struct SmallRun {
  uint64_t big_run, stream_len, num_edges;
  bool operator()(const VertexEntry& v) const {
    return v.degree > 0 && v.run_bytes <= big_run && v.stream_offset + v.run_bytes <= stream_len &&
           v.stream_offset + v.run_bytes >= v.stream_offset &&
           v.first_edge + v.degree <= num_edges && v.first_edge + v.degree >= v.degree;
  }
};

}  // namespace

Status SegmentReader::ReadNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                                         FunctionRef<bool(size_t, const EdgeBatch&)> fn,
                                         uint64_t big_run) const {
  // Block and copy buffers from this thread's spares: a batch of a frontier-driven kernel
  // (SSSP, BFS) loads a few hundred KiB, and fresh buffers would fault their pages in on every
  // call.
  SpareString ebuf_s, wbuf_s, scratch_s, wscratch_s;
  BatchReads b;
  b.ebuf.swap(ebuf_s.s);
  b.wbuf.swap(wbuf_s.s);
  b.scratch.swap(scratch_s.s);
  b.wscratch.swap(wscratch_s.s);
  PlanNeighborsBatch(vs, n, o, &b, big_run);
  // Failures are in the requests' statuses, which DecodeNeighborsBatch checks.
  (void)file_->MultiRead(b.reqs.data(), b.reqs.size());
  Status s = DecodeNeighborsBatch(vs, n, o, &b, fn, big_run);
  b.ebuf.swap(ebuf_s.s);
  b.wbuf.swap(wbuf_s.s);
  b.scratch.swap(scratch_s.s);
  b.wscratch.swap(wscratch_s.s);
  return s;
}

void SegmentReader::PlanNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                                       BatchReads* b, uint64_t big_run) const {
  const uint64_t payload = header_.payload_per_block();
  const bool weights = o.weights && header_.weighted();
  const SmallRun small{big_run, edge_stream_.len, header_.num_edges};
  // Blocks of both streams that the small runs need.
  std::vector<uint64_t>& eb = b->eb;
  std::vector<uint64_t>& wb = b->wb;
  eb.clear();
  wb.clear();
  for (size_t i = 0; i < n; i++) {
    const VertexEntry& v = vs[i];
    if (!small(v)) continue;
    for (uint64_t k = v.stream_offset / payload; k <= (v.stream_offset + v.run_bytes - 1) / payload;
         k++) {
      eb.push_back(k);
    }
    if (weights) {
      for (uint64_t k = 8 * v.first_edge / payload;
           k <= (8 * (v.first_edge + v.degree) - 1) / payload; k++) {
        wb.push_back(k);
      }
    }
  }
  std::sort(eb.begin(), eb.end());
  eb.erase(std::unique(eb.begin(), eb.end()), eb.end());
  std::sort(wb.begin(), wb.end());
  wb.erase(std::unique(wb.begin(), wb.end()), wb.end());
  b->reqs.clear();
  PlanStreamBlocks(edge_stream_, eb, &b->ebuf, &b->eat, &b->reqs);
  if (weights) PlanStreamBlocks(weight_stream_, wb, &b->wbuf, &b->wat, &b->reqs);
}

Status SegmentReader::DecodeNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                                           BatchReads* b,
                                           FunctionRef<bool(size_t, const EdgeBatch&)> fn,
                                           uint64_t big_run) const {
  const uint64_t payload = header_.payload_per_block();
  const bool weights = o.weights && header_.weighted();
  const SmallRun small{big_run, edge_stream_.len, header_.num_edges};
  for (const io::ReadRequest& r : b->reqs) {
    if (!r.status.ok()) return r.status;  // in request order, as MultiRead reports
  }
  const std::vector<uint64_t>& eb = b->eb;
  const std::vector<uint64_t>& wb = b->wb;
  const std::string& ebuf = b->ebuf;
  const std::string& wbuf = b->wbuf;
  const std::vector<uint64_t>& eat = b->eat;
  const std::vector<uint64_t>& wat = b->wat;
  Status s = CheckStreamBlocks(edge_stream_, eb, ebuf, eat);
  if (!s.ok()) return s;
  if (weights && !(s = CheckStreamBlocks(weight_stream_, wb, wbuf, wat)).ok()) return s;

  // The bytes [begin, begin + len) of a stream, from the loaded blocks: in place when they
  // lie in one block, else copied (with slack for the varint decoder).
  std::string& scratch = b->scratch;
  auto locate = [&](const Stream& st, const std::vector<uint64_t>& blocks,
                    const std::string& buf, const std::vector<uint64_t>& at, uint64_t begin,
                    uint64_t len, std::string* copy) -> const char* {
    const uint64_t k0 = begin / payload, k1 = (begin + len - 1) / payload;
    auto idx = [&](uint64_t k) {
      return static_cast<size_t>(std::lower_bound(blocks.begin(), blocks.end(), k) -
                                 blocks.begin());
    };
    size_t i0 = idx(k0);
    if (k0 == k1) return buf.data() + at[i0] + (begin - k0 * payload);
    copy->assign(len + kWindowSlack, '\0');
    uint64_t done = 0;
    for (uint64_t k = k0; k <= k1; k++, i0++) {
      uint64_t from = k == k0 ? begin - k0 * payload : 0;
      uint64_t plen = BlockPhysicalSize(st, k) - kBlockTrailerSize;
      uint64_t take = std::min(plen - from, len - done);
      std::memcpy(copy->data() + done, buf.data() + at[i0] + from, take);
      done += take;
    }
    return copy->data();
  };

  StreamWindow ew(this, &edge_stream_), ww(this, &weight_stream_);
  NeighborIterator it(this, VertexEntry(), o, &ew, weights ? &ww : nullptr,
                      options_.random_window, /*own_windows=*/false);
  std::string& wscratch = b->wscratch;
  EdgeBatch batch;
  for (size_t i = 0; i < n; i++) {
    const VertexEntry& v = vs[i];
    if (v.degree == 0) continue;
    if (!small(v)) {
      std::unique_ptr<NeighborIterator> big = NewNeighborIterator(v, o);
      while (big->Next(&batch)) {
        if (!fn(i, batch)) return Status::OK();
      }
      if (!big->status().ok()) return big->status();
      continue;
    }
    ew.Adopt(v.stream_offset,
             locate(edge_stream_, eb, ebuf, eat, v.stream_offset, v.run_bytes, &scratch),
             v.run_bytes);
    if (weights) {
      ww.Adopt(8 * v.first_edge,
               locate(weight_stream_, wb, wbuf, wat, 8 * v.first_edge, 8 * v.degree, &wscratch),
               8 * v.degree);
    }
    it.Reset(v);
    while (it.Next(&batch)) {
      if (!fn(i, batch)) return Status::OK();
    }
    if (!it.status().ok()) return it.status();
  }
  return Status::OK();
}

}  // namespace strata
