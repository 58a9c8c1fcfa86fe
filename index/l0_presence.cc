#include "index/l0_presence.h"

#include <string>

namespace strata::index {

Status L0Presence::Build(const SegmentReader& r, std::unique_ptr<const L0Presence>* out) {
  out->reset();
  const SegmentHeader& h = r.header();
  const uint64_t n = r.num_vertices();
  if (n == 0 || h.max_src < h.min_src) return Status::OK();
  const uint64_t span = h.max_src - h.min_src;  // IDs in the range, minus one
  if (!DenseEnough(span, n)) return Status::OK();
  std::unique_ptr<L0Presence> p(new L0Presence());
  p->lo_ = h.min_src;
  p->hi_ = h.max_src;
  p->bits_.assign(span / 64 + 1, 0);
  std::unique_ptr<SegmentScanner> sc = r.NewScanner(ScanOptions());
  VertexEntry e;
  while (sc->NextVertex(&e)) {
    if (e.src < p->lo_ || e.src > p->hi_) {
      return Status::Corruption("file " + r.path() + ": vertex " + std::to_string(e.src) +
                                " lies outside the header's range [" +
                                std::to_string(p->lo_) + ", " + std::to_string(p->hi_) + "]");
    }
    const uint64_t i = e.src - p->lo_;
    p->bits_[i >> 6] |= uint64_t{1} << (i & 63);
    ++p->vertices_;
  }
  if (!sc->status().ok()) return sc->status();
  *out = std::move(p);
  return Status::OK();
}

bool L0Presence::Builder::Finish(std::unique_ptr<const L0Presence>* out) {
  out->reset();
  if (gave_up_) return false;
  if (n_ == 0) return true;
  const uint64_t span = hi_ - lo_;
  if (!DenseEnough(span, n_)) return true;
  std::unique_ptr<L0Presence> p(new L0Presence());
  p->lo_ = lo_;
  p->hi_ = hi_;
  bits_.resize(span / 64 + 1, 0);
  bits_.shrink_to_fit();
  p->bits_ = std::move(bits_);
  p->vertices_ = n_;
  *out = std::move(p);
  return true;
}

}  // namespace strata::index
