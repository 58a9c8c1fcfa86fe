#include "db/version.h"

#include <algorithm>

#include "index/index_build.h"

namespace strata {

SegmentHandle::~SegmentHandle() {
  reader.reset();
  // Through the Env, like every other file operation of the store (both places that make a
  // handle set `env`); a failure leaves a file the next open removes as a leftover, since the
  // manifest no longer names it.
  if (obsolete.load(std::memory_order_acquire)) (void)env->RemoveFile(path);
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

Status IndexAfterCompaction(const Version& base, int dir,
                            const std::vector<std::shared_ptr<SegmentHandle>>& inputs,
                            const std::vector<std::shared_ptr<SegmentHandle>>& outputs,
                            uint32_t output_level, index::VertexIndex* out) {
  // A move's output shares its input's reader: one change, one pass over its vertex table.
  auto input_of = [&](const SegmentHandle& out) -> const SegmentHandle* {
    for (const auto& h : inputs) {
      if (h->reader == out.reader) return h.get();
    }
    return nullptr;
  };
  std::vector<index::FileChange> changes;
  for (const auto& h : inputs) {  // level-0 inputs are not in the index
    if (static_cast<int>(h->meta.tag) != dir || h->meta.level == 0) continue;
    if (std::any_of(outputs.begin(), outputs.end(),
                    [&](const auto& o) { return o->reader == h->reader; })) {
      continue;
    }
    changes.push_back({h->reader.get(), h->meta.level, false});
  }
  for (const auto& h : outputs) {
    const SegmentHandle* moved = input_of(*h);
    changes.push_back({h->reader.get(), output_level, true, moved ? moved->meta.level : 0u});
  }
  return index::ApplyFileChanges(base.index[dir], changes, out);
}

Status RebuildIndex(Version* v) {
  for (int dir = 0; dir < 2; ++dir) {
    std::vector<index::IndexedFile> files;
    for (size_t k = 0; k < v->levels[dir].size(); ++k) {
      for (const auto& h : v->levels[dir][k]) {
        files.push_back({h->reader.get(), static_cast<uint32_t>(k + 1)});
      }
    }
    Status s = index::Build(files, &v->index[dir]);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace strata
