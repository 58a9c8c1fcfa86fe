// SegmentReader::ReadNeighborsBatch: the edges of many vertices, their blocks read with one
// MultiRead and decoded by one NeighborIterator over adopted memory.
#include <algorithm>
#include <cstring>

#include "segment/scan_spares.h"
#include "segment/segment_reader.h"
#include "segment/stream_window.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

Status SegmentReader::LoadStreamBlocks(const Stream& s, const std::vector<uint64_t>& blocks,
                                       std::string* buf, std::vector<uint64_t>* payload_at) const {
  uint64_t total = 0;
  for (uint64_t k : blocks) total += BlockPhysicalSize(s, k);
  buf->resize(total);
  payload_at->resize(blocks.size());
  std::vector<io::ReadRequest> reqs;
  uint64_t at = 0;
  const uint64_t per_extent = header_.blocks_per_extent;
  for (size_t i = 0; i < blocks.size(); i++) {
    const uint64_t k = blocks[i];
    const uint64_t size = BlockPhysicalSize(s, k);
    (*payload_at)[i] = at;
    // Adjacent on disk: the previous block, in the same extent.
    if (i > 0 && blocks[i - 1] + 1 == k && k % per_extent != 0) {
      reqs.back().len += size;
    } else {
      reqs.push_back(
          io::ReadRequest{BlockOffset(s, k), static_cast<size_t>(size), buf->data() + at, {}});
    }
    at += size;
  }
  Status st = file_->MultiRead(reqs.data(), reqs.size());
  if (!st.ok()) return st;
  for (size_t i = 0; i < blocks.size(); i++) {
    const char* p = buf->data() + (*payload_at)[i];
    const uint64_t plen = BlockPhysicalSize(s, blocks[i]) - kBlockTrailerSize;
    if (DecodeFixed64(p + plen) != Checksum64(p, plen, ChecksumSeed(s.kind, blocks[i]))) {
      return io::CorruptionAt(path_, BlockOffset(s, blocks[i]),
                              std::string(s.name) + " block " + std::to_string(blocks[i]) +
                                  " checksum mismatch");
    }
  }
  return Status::OK();
}

Status SegmentReader::ReadNeighborsBatch(const VertexEntry* vs, size_t n, const ReadOptions& o,
                                         FunctionRef<bool(size_t, const EdgeBatch&)> fn,
                                         uint64_t big_run) const {
  const uint64_t payload = header_.payload_per_block();
  const bool weights = o.weights && header_.weighted();
  auto small = [&](const VertexEntry& v) {
    return v.degree > 0 && v.run_bytes <= big_run &&
           v.stream_offset + v.run_bytes <= edge_stream_.len &&
           v.stream_offset + v.run_bytes >= v.stream_offset &&
           v.first_edge + v.degree <= header_.num_edges && v.first_edge + v.degree >= v.degree;
  };
  // Blocks of both streams that the small runs need.
  std::vector<uint64_t> eb, wb;
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
  // Block and copy buffers from this thread's spares: a batch of a frontier-driven kernel
  // (SSSP, BFS) loads a few hundred KiB, and fresh buffers would fault their pages in on every
  // call.
  SpareString ebuf_s, wbuf_s, scratch_s, wscratch_s;
  std::string& ebuf = ebuf_s.s;
  std::string& wbuf = wbuf_s.s;
  std::vector<uint64_t> eat, wat;
  Status s = LoadStreamBlocks(edge_stream_, eb, &ebuf, &eat);
  if (!s.ok()) return s;
  if (weights && !(s = LoadStreamBlocks(weight_stream_, wb, &wbuf, &wat)).ok()) return s;

  // The bytes [begin, begin + len) of a stream, from the loaded blocks: in place when they
  // lie in one block, else copied (with slack for the varint decoder).
  std::string& scratch = scratch_s.s;
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
  std::string& wscratch = wscratch_s.s;
  EdgeBatch b;
  for (size_t i = 0; i < n; i++) {
    const VertexEntry& v = vs[i];
    if (v.degree == 0) continue;
    if (!small(v)) {
      std::unique_ptr<NeighborIterator> big = NewNeighborIterator(v, o);
      while (big->Next(&b)) {
        if (!fn(i, b)) return Status::OK();
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
    while (it.Next(&b)) {
      if (!fn(i, b)) return Status::OK();
    }
    if (!it.status().ok()) return it.status();
  }
  return Status::OK();
}

}  // namespace strata
