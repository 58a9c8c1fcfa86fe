#include "db/view_snapshot.h"

#include <algorithm>
#include <bit>
#include <vector>

namespace strata {

struct ViewSnapshot::Buf {
  std::vector<VertexId> dst;
  std::vector<double> weight;
};

namespace {

constexpr size_t kPiece = 64;

// A per-thread stack of filter buffers: a call takes the next one and gives it back on return,
// so a callback that calls the snapshot again filters into another buffer.
class BufLease {
 public:
  template <class B>
  explicit BufLease(B** out) {
    thread_local std::vector<std::unique_ptr<B>> pool;
    thread_local size_t depth = 0;
    if (depth == pool.size()) pool.push_back(std::make_unique<B>());
    *out = pool[depth++].get();
    release_ = [] { --depth; };
  }
  ~BufLease() { release_(); }
  BufLease(const BufLease&) = delete;
  BufLease& operator=(const BufLease&) = delete;

 private:
  void (*release_)() = nullptr;
};

}  // namespace

ViewSnapshot::ViewSnapshot(const Snapshot* base, std::unique_ptr<Snapshot> owned,
                           std::shared_ptr<const CompiledView> view)
    : base_(base), owned_(std::move(owned)), view_(std::move(view)) {}

void ViewSnapshot::RecordError(const Status& s) const {
  if (s.ok()) return;
  std::lock_guard<std::mutex> g(err_mu_);
  if (err_.ok()) err_ = s;
}

Status ViewSnapshot::status() const {
  Status s = base_->status();
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> g(err_mu_);
  return err_;
}

NeighborChunk ViewSnapshot::Filter(VertexId u, Direction d, const NeighborChunk& c, bool weights,
                                   Buf* buf) const {
  const CompiledView& cv = *view_;
  const size_t n = c.size;
  if (buf->dst.size() < n) buf->dst.resize(n);
  const bool keep_w = weights && c.weight != nullptr;
  if (keep_w && buf->weight.size() < n) buf->weight.resize(n);
  VertexId* out = buf->dst.data();
  double* out_w = buf->weight.data();
  const uint64_t* words = cv.words();
  const VertexId bound = cv.bound();
  size_t k = 0;
  // A neighbor at or beyond VertexIdBound() is passed through: the kernels report it as
  // corruption, as they would without the view.
  if (!cv.has_predicate()) {
    if (keep_w) {
      for (size_t i = 0; i < n; ++i) {
        const VertexId v = c.dst[i];
        const bool keep = v >= bound || ((words[v >> 6] >> (v & 63)) & 1) != 0;
        out[k] = v;
        out_w[k] = c.weight[i];
        k += keep;
      }
    } else {
      for (size_t i = 0; i < n; ++i) {
        const VertexId v = c.dst[i];
        const bool keep = v >= bound || ((words[v >> 6] >> (v & 63)) & 1) != 0;
        out[k] = v;
        k += keep;
      }
    }
  } else if (cv.weight_range_only()) {
    const double lo = cv.weight_lo(), hi = cv.weight_hi();
    for (size_t i = 0; i < n; ++i) {
      const VertexId v = c.dst[i];
      const double w = c.weight != nullptr ? c.weight[i] : 1.0;
      const bool keep =
          v >= bound || ((((words[v >> 6] >> (v & 63)) & 1) != 0) & (w >= lo) & (w <= hi));
      out[k] = v;
      if (keep_w) out_w[k] = w;
      k += keep;
    }
  } else {
    // In-lists (kDirectedWithInEdges) hold the sources of u's in-edges: the logical edge is
    // (v -> u).
    const bool reverse = d == Direction::kIn && base_->kind() == GraphKind::kDirectedWithInEdges;
    for (size_t i = 0; i < n; ++i) {
      const VertexId v = c.dst[i];
      const double w = c.weight != nullptr ? c.weight[i] : 1.0;
      bool keep = v >= bound;
      if (!keep && ((words[v >> 6] >> (v & 63)) & 1) != 0) {
        keep = reverse ? cv.Pass(v, u, w) : cv.Pass(u, v, w);
      }
      out[k] = v;
      if (keep_w) out_w[k] = w;
      k += keep;
    }
  }
  if (k == n) return NeighborChunk{c.dst, weights ? c.weight : nullptr, n};
  return NeighborChunk{out, keep_w ? out_w : nullptr, k};
}

uint64_t ViewSnapshot::NumVertices() const {
  std::call_once(vertices_once_, [&] {
    uint64_t n = 0;
    RecordError(ScanVertices(0, VertexIdBound(), [&](VertexId) {
      ++n;
      return true;
    }));
    num_vertices_ = n;
  });
  return num_vertices_;
}

uint64_t ViewSnapshot::NumEdges() const {
  std::call_once(edges_once_, [&] {
    uint64_t n = 0;
    RecordError(ScanAdjacency(0, VertexIdBound(), Direction::kOut, false,
                              [](VertexId) { return true; },
                              [&](VertexId, const NeighborChunk& c) {
                                n += c.size;
                                return ScanStep::kMore;
                              }));
    num_edges_ = n;
  });
  return num_edges_;
}

Status ViewSnapshot::ScanVertices(VertexId begin, VertexId end,
                                  FunctionRef<bool(VertexId)> fn) const {
  const CompiledView& cv = *view_;
  end = std::min(end, cv.bound());
  if (begin >= end) return Status::OK();
  return base_->ScanVertices(begin, end, [&](VertexId v) { return !cv.Contains(v) || fn(v); });
}

Status ViewSnapshot::GetEdge(VertexId u, VertexId v, double* weight) const {
  const CompiledView& cv = *view_;
  if (!cv.Contains(u) || !cv.Contains(v)) return Status::NotFound("edge not in view");
  double w = 1.0;
  Status s = base_->GetEdge(u, v, &w);
  if (!s.ok()) return s;
  if (cv.has_predicate() && !cv.Pass(u, v, w)) return Status::NotFound("edge not in view");
  if (weight != nullptr) *weight = w;
  return Status::OK();
}

uint64_t ViewSnapshot::Degree(VertexId u, Direction d) const {
  if (!view_->Contains(u)) return 0;
  if (d == Direction::kIn && base_->kind() == GraphKind::kDirected) return base_->Degree(u, d);
  uint64_t n = 0;
  Status s = ScanNeighbors(u, d, [&](const NeighborChunk& c) {
    n += c.size;
    return true;
  });
  RecordError(s);
  return n;
}

Status ViewSnapshot::ScanNeighbors(VertexId u, Direction d,
                                   FunctionRef<bool(const NeighborChunk&)> fn) const {
  if (!view_->Contains(u)) {
    // Still the base's answer to a bad direction.
    if (d == Direction::kIn && base_->kind() == GraphKind::kDirected) {
      return base_->ScanNeighbors(u, d, [](const NeighborChunk&) { return false; });
    }
    return Status::OK();
  }
  Buf* buf;
  BufLease lease(&buf);
  return base_->ScanNeighbors(u, d, [&](const NeighborChunk& c) {
    const NeighborChunk f = Filter(u, d, c, true, buf);
    return f.size == 0 || fn(f);
  });
}

Status ViewSnapshot::ScanEdges(VertexId begin, VertexId end, Direction d,
                               FunctionRef<bool(VertexId, const NeighborChunk&)> fn) const {
  AdjacencyScan scan;
  scan.want.words = view_->words();
  scan.weights = true;
  return ScanAdjacency(begin, end, d, scan, [&](VertexId u, const NeighborChunk& c) {
    return fn(u, c) ? ScanStep::kMore : ScanStep::kStop;
  });
}

Status ViewSnapshot::ScanAdjacency(VertexId begin, VertexId end, Direction d, bool weights,
                                   FunctionRef<bool(VertexId)> want,
                                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  const CompiledView& cv = *view_;
  end = std::min(end, cv.bound());
  if (begin >= end) return Status::OK();
  // want(u) asked once per view vertex, into a bitmap: the base's bitmap pass then skips the
  // other vertices without a call (its function pass would call twice per existing vertex).
  const uint64_t w0 = begin >> 6, w1 = (end - 1) >> 6;
  std::vector<uint64_t> both(static_cast<size_t>(w1 - w0 + 1), 0);
  const uint64_t* v = cv.words();
  for (uint64_t k = w0; k <= w1; ++k) {
    uint64_t m = v[k];
    if (k == w0) m &= ~uint64_t{0} << (begin & 63);
    if (k == w1 && (end & 63) != 0) m &= ~(~uint64_t{0} << (end & 63));
    for (uint64_t bits = m; bits != 0; bits &= bits - 1) {
      const VertexId u = (k << 6) | static_cast<VertexId>(std::countr_zero(bits));
      if (!want(u)) m &= ~(uint64_t{1} << (u & 63));
    }
    both[k - w0] = m;
  }
  AdjacencyScan scan;
  scan.want.words = both.data() - w0;  // indexed by absolute word number
  scan.weights = weights;
  return ScanAdjacency(begin, end, d, scan, fn);
}

Status ViewSnapshot::ScanAdjacency(VertexId begin, VertexId end, Direction d,
                                   const AdjacencyScan& scan,
                                   FunctionRef<ScanStep(VertexId, const NeighborChunk&)> fn) const {
  const CompiledView& cv = *view_;
  end = std::min(end, cv.bound());
  if (begin >= end) return Status::OK();
  // want ∩ V over the words covering [begin, end), indexed as the caller's (by u >> 6).
  const uint64_t w0 = begin >> 6, w1 = (end - 1) >> 6;
  std::vector<uint64_t> both(static_cast<size_t>(w1 - w0 + 1));
  const uint64_t* v = cv.words();
  for (uint64_t k = w0; k <= w1; ++k) both[k - w0] = scan.want.Group(k) & v[k];
  AdjacencyScan inner = scan;
  inner.want.words = both.data() - w0;  // indexed by absolute word number
  inner.want.complement = false;
  inner.weights = BaseWeights(scan.weights);
  Buf* buf;
  BufLease lease(&buf);
  return base_->ScanAdjacency(begin, end, d, inner, [&](VertexId u, const NeighborChunk& c) {
    // Pieces of kPiece neighbors: a visitor that stops early (a bottom-up BFS finding a
    // parent, a sampling pass) costs the filter of the piece it stopped in, not of the chunk.
    for (size_t i = 0; i < c.size; i += kPiece) {
      const NeighborChunk piece{c.dst + i, c.weight != nullptr ? c.weight + i : nullptr,
                                std::min(kPiece, c.size - i)};
      const NeighborChunk f = Filter(u, d, piece, scan.weights, buf);
      if (f.size == 0) continue;
      const ScanStep step = fn(u, f);
      if (step != ScanStep::kMore) return step;
    }
    return ScanStep::kMore;
  });
}

uint64_t ViewSnapshot::KeptShare(Direction d) const {
  const int k = d == Direction::kOut ? 0 : 1;
  std::call_once(share_once_[k], [&] {
    const CompiledView& cv = *view_;
    const VertexId bound = cv.bound();
    const uint64_t* words = cv.words();
    const size_t nw = std::min<size_t>(cv.num_words(), static_cast<size_t>((bound + 63) / 64));
    uint64_t members = 0;
    for (size_t i = 0; i < nw; ++i) members += static_cast<uint64_t>(std::popcount(words[i]));
    if (members == 0) return;
    uint64_t read = 0, kept = 0;
    Buf* buf;
    BufLease lease(&buf);
    // Window w: the 64 IDs around the view's member of rank w * members / kShareWindows, so
    // the sample follows the view wherever its vertices are (a region, a range of IDs).
    size_t wi = 0;         // the word holding that member
    uint64_t before = 0;   // members in words [0, wi)
    size_t last = nw;      // the previous window's word
    for (uint64_t w = 0; w < kShareWindows; ++w) {
      const uint64_t rank = w * members / kShareWindows;
      while (before + static_cast<uint64_t>(std::popcount(words[wi])) <= rank) {
        before += static_cast<uint64_t>(std::popcount(words[wi]));
        ++wi;
      }
      if (wi == last) continue;
      last = wi;
      const VertexId lo = static_cast<VertexId>(wi) * 64;
      const VertexId hi = std::min(bound, lo + 64);
      AdjacencyScan scan;
      scan.want.words = cv.words();
      scan.weights = BaseWeights(false);
      Status s = base_->ScanAdjacency(lo, hi, d, scan, [&](VertexId u, const NeighborChunk& c) {
        read += c.size;
        kept += Filter(u, d, c, false, buf).size;
        return ScanStep::kMore;
      });
      // A read error (or a direction the store does not keep) is the kernels' own reads' to
      // report; planning keeps the base's bounds.
      if (!s.ok()) return;
    }
    // Leaning high by 1/32 (beyond the sample's error at scale 20, about 0.5%): a block of
    // lists then rarely holds more than its estimates say, as with the base's bounds, which
    // reservations rely on (ListCache::LimitDegree: a list cache block that outgrows its
    // reservation doubles, then is trimmed, copying it twice).
    if (read > 0) {
      share_[k] = std::clamp<uint64_t>(kept * kShareOne / read + kept * kShareOne / read / 32, 1,
                                       kShareOne);
    }
  });
  return share_[k];
}

uint64_t ViewSnapshot::ScaleBound(VertexId u, uint64_t b, uint64_t share) {
  if (share >= kShareOne) return b;
  if (b >= (uint64_t{1} << 47)) return (b >> 16) * share;  // b * share would overflow
  const uint64_t h = (u * 0x9E3779B97F4A7C15ull) >> 48;     // Fibonacci hashing: 16 mixed bits
  return (b * share + h) >> 16;
}

Status ViewSnapshot::ScanDegreeBounds(VertexId begin, VertexId end, Direction d,
                                      FunctionRef<bool(VertexId, uint64_t)> fn) const {
  const CompiledView& cv = *view_;
  end = std::min(end, cv.bound());
  if (begin >= end) return Status::OK();
  const uint64_t share = KeptShare(d);
  return base_->ScanDegreeBounds(begin, end, d, [&](VertexId u, uint64_t b) {
    return !cv.Contains(u) || fn(u, ScaleBound(u, b, share));
  });
}

Status ViewSnapshot::ScanVertexDegreeBounds(VertexId begin, VertexId end, Direction d,
                                            FunctionRef<bool(VertexId, uint64_t)> fn) const {
  const CompiledView& cv = *view_;
  end = std::min(end, cv.bound());
  if (begin >= end) return Status::OK();
  const uint64_t share = KeptShare(d);
  return base_->ScanVertexDegreeBounds(begin, end, d, [&](VertexId u, uint64_t b) {
    return !cv.Contains(u) || fn(u, ScaleBound(u, b, share));
  });
}

Status ViewSnapshot::ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d, bool weights,
                                        FunctionRef<bool(size_t, const NeighborChunk&)> fn) const {
  const CompiledView& cv = *view_;
  // Only the view's vertices are asked for; idx maps the base's answers back.
  std::vector<VertexId> in;
  std::vector<size_t> idx;
  in.reserve(n);
  idx.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (cv.Contains(vs[i])) {
      in.push_back(vs[i]);
      idx.push_back(i);
    }
  }
  if (in.empty()) {
    if (d == Direction::kIn && base_->kind() == GraphKind::kDirected && n > 0) {
      return base_->ScanNeighborsBatch(vs, 1, d, false, [](size_t, const NeighborChunk&) { return false; });
    }
    return Status::OK();
  }
  Buf* buf;
  BufLease lease(&buf);
  return base_->ScanNeighborsBatch(
      in.data(), in.size(), d, BaseWeights(weights), [&](size_t j, const NeighborChunk& c) {
        const NeighborChunk f = Filter(in[j], d, c, weights, buf);
        return f.size == 0 || fn(idx[j], f);
      });
}

}  // namespace strata
