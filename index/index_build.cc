#include "index/index_build.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

namespace strata::index {

namespace {

// A file's vertex entries in ascending order. The scanner is opened when first needed (the
// steps reach the file's range) and closed at the end, so only files overlapping the current
// step hold one.
class Cursor {
 public:
  explicit Cursor(const SegmentReader* r) : r_(r), done_(r->num_vertices() == 0) {}

  // The smallest vertex the file may still hold (exact once the scanner is open); false at the
  // end.
  bool Peek(VertexId* u) {
    if (done_) return false;
    if (sc_ == nullptr) {
      *u = r_->header().min_src;
      return true;
    }
    *u = e_.src;
    return true;
  }
  // The next entry with src <= hi, or false (none left in [.., hi]).
  bool NextUpTo(VertexId hi, VertexEntry* e) {
    if (done_) return false;
    if (sc_ == nullptr) {
      if (r_->header().min_src > hi) return false;
      sc_ = r_->NewScanner(ScanOptions());
      Advance();
      if (done_) return false;
    }
    if (e_.src > hi) return false;
    *e = e_;
    Advance();
    return true;
  }
  Status status() const { return status_; }

 private:
  void Advance() {
    if (sc_->NextVertex(&e_)) return;
    status_ = sc_->status();
    done_ = true;
    sc_.reset();
  }

  const SegmentReader* r_;
  std::unique_ptr<SegmentScanner> sc_;
  VertexEntry e_;
  bool done_;
  Status status_;
};

}  // namespace

Status ApplyFileChanges(
    const VertexIndex& base, const std::vector<FileChange>& changes,
    const std::vector<std::pair<uint64_t, const SegmentReader*>>& remaining_l0,
    VertexIndex* out, uint64_t chunk_vertices) {
  if (chunk_vertices < kRangeSize || (chunk_vertices & (chunk_vertices - 1)) != 0) {
    return Status::InvalidArgument("vertex index: step of " + std::to_string(chunk_vertices) +
                                   " vertices is not a power of two >= " +
                                   std::to_string(kRangeSize));
  }
  // Edit order within a vertex: level removals, L0 removals, level additions, L0 additions.
  enum Group { kLevelRemoved, kL0Removed, kLevelAdded, kL0Added, kGroups };
  struct Source {
    const FileChange* change;
    Cursor cursor;
  };
  std::vector<Source> sources[kGroups];
  for (const FileChange& c : changes) {
    const Group g = c.level == 0 ? (c.added ? kL0Added : kL0Removed)
                                 : (c.added ? kLevelAdded : kLevelRemoved);
    sources[g].push_back({&c, Cursor(c.reader)});
  }
  std::vector<std::pair<uint64_t, Cursor>> rest;
  if (!sources[kL0Removed].empty()) {
    for (const auto& [number, r] : remaining_l0) rest.emplace_back(number, Cursor(r));
  }

  VertexIndex cur = base;
  std::vector<Edit> edits;
  std::vector<VertexId> vs;      // vertices of removed L0 files in the step, ascending
  std::vector<uint64_t> min_l0;  // their new min_l0
  VertexEntry e;
  while (true) {
    // The step: the aligned block of chunk_vertices IDs holding the smallest pending vertex.
    bool any = false;
    VertexId lo = ~VertexId{0};
    for (auto& group : sources) {
      for (Source& src : group) {
        VertexId u;
        if (src.cursor.Peek(&u)) {
          any = true;
          lo = std::min(lo, u);
        }
      }
    }
    if (!any) break;
    const VertexId hi = lo | (chunk_vertices - 1);
    edits.clear();
    for (Source& src : sources[kLevelRemoved]) {
      while (src.cursor.NextUpTo(hi, &e)) {
        edits.push_back({e.src, Edit::kLevelErase, 0, Pos::LevelOnly(src.change->level)});
      }
    }
    vs.clear();
    for (Source& src : sources[kL0Removed]) {
      const size_t before = vs.size();
      while (src.cursor.NextUpTo(hi, &e)) vs.push_back(e.src);
      std::inplace_merge(vs.begin(), vs.begin() + static_cast<ptrdiff_t>(before), vs.end());
    }
    vs.erase(std::unique(vs.begin(), vs.end()), vs.end());
    min_l0.assign(vs.size(), kNoL0);
    if (!vs.empty()) {
      for (auto& [number, cursor] : rest) {
        size_t i = 0;
        while (cursor.NextUpTo(hi, &e)) {
          while (i < vs.size() && vs[i] < e.src) ++i;
          if (i < vs.size() && vs[i] == e.src) min_l0[i] = std::min(min_l0[i], number);
        }
      }
    }
    for (size_t i = 0; i < vs.size(); ++i) {
      edits.push_back({vs[i], Edit::kL0Set, min_l0[i], Pos()});
    }
    for (Source& src : sources[kLevelAdded]) {
      while (src.cursor.NextUpTo(hi, &e)) {
        edits.push_back({e.src, Edit::kLevelSet, 0, Pos::Make(src.change->level, e)});
      }
    }
    for (Source& src : sources[kL0Added]) {
      while (src.cursor.NextUpTo(hi, &e)) {
        edits.push_back({e.src, Edit::kL0Min, src.change->number, Pos()});
      }
    }
    for (auto& group : sources) {
      for (Source& src : group) {
        if (!src.cursor.status().ok()) return src.cursor.status();
      }
    }
    for (const auto& r : rest) {
      if (!r.second.status().ok()) return r.second.status();
    }
    if (!edits.empty()) {
      VertexIndex next;
      Status s = cur.Apply(&edits, &next);
      if (!s.ok()) return s;
      cur = std::move(next);
    }
    if (hi == ~VertexId{0}) break;
  }
  *out = std::move(cur);
  return Status::OK();
}

Status Build(const std::vector<IndexedFile>& files, VertexIndex* out, uint64_t chunk_vertices) {
  std::vector<FileChange> changes;
  changes.reserve(files.size());
  for (const IndexedFile& f : files) changes.push_back({f.reader, f.number, f.level, true});
  return ApplyFileChanges(VertexIndex(), changes, {}, out, chunk_vertices);
}

}  // namespace strata::index
