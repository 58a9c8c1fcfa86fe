#include "version/version.h"

#include <unistd.h>

#include <algorithm>

namespace strata::version {

SegmentHandle::~SegmentHandle() {
  reader.reset();
  if (obsolete.load(std::memory_order_acquire)) ::unlink(path.c_str());
}

const SegmentHandle* Version::LevelFind(int dir, size_t k, VertexId u) const {
  const auto& l = levels[dir][k];
  auto it = std::lower_bound(l.begin(), l.end(), u, [](const std::shared_ptr<SegmentHandle>& h,
                                                       VertexId x) { return h->meta.max_src < x; });
  if (it == l.end() || (*it)->meta.min_src > u) return nullptr;
  return it->get();
}

std::vector<const SegmentHandle*> Version::AllFiles(int dir) const {
  std::vector<const SegmentHandle*> r;
  for (const auto& h : l0[dir]) r.push_back(h.get());
  for (const auto& l : levels[dir]) {
    for (const auto& h : l) r.push_back(h.get());
  }
  return r;
}

uint64_t Version::DiskBytes() const {
  uint64_t b = 0;
  for (int d = 0; d < 2; ++d) {
    for (const SegmentHandle* h : AllFiles(d)) b += h->meta.size_bytes;
  }
  return b;
}

size_t Version::FileCount() const { return AllFiles(0).size() + AllFiles(1).size(); }

}  // namespace strata::version
