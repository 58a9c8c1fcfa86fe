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
  Cursor(const SegmentReader* r, size_t window)
      : r_(r), window_(window), done_(r->num_vertices() == 0) {}

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
      ScanOptions o;
      o.window = window_;
      sc_ = r_->NewScanner(o);
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
  size_t window_;
  std::unique_ptr<SegmentScanner> sc_;
  VertexEntry e_;
  bool done_;
  Status status_;
};

}  // namespace

Status ApplyFileChanges(const VertexIndex& base, const std::vector<FileChange>& changes,
                        VertexIndex* out, uint64_t chunk_vertices, size_t scan_window) {
  if (chunk_vertices < kRangeSize || (chunk_vertices & (chunk_vertices - 1)) != 0) {
    return Status::InvalidArgument("vertex index: step of " + std::to_string(chunk_vertices) +
                                   " vertices is not a power of two >= " +
                                   std::to_string(kRangeSize));
  }
  // Edit order within a vertex: removals, then additions.
  struct Source {
    const FileChange* change;
    Cursor cursor;
  };
  std::vector<Source> removed, added;
  for (const FileChange& c : changes) {
    if (c.level == 0 || c.level > kMaxIndexedLevel) {
      return Status::InvalidArgument("vertex index: a file of level " + std::to_string(c.level) +
                                     " is not indexed per vertex (levels 1.." +
                                     std::to_string(kMaxIndexedLevel) + ")");
    }
    if (c.from_level != 0 &&
        (!c.added || c.from_level == c.level || c.from_level > kMaxIndexedLevel)) {
      return Status::InvalidArgument("vertex index: a move from level " +
                                     std::to_string(c.from_level) + " to level " +
                                     std::to_string(c.level) + " is not a move");
    }
    (c.added ? added : removed).push_back({&c, Cursor(c.reader, scan_window)});
  }

  VertexIndex cur = base;
  std::vector<Edit> edits, sets;
  VertexEntry e;
  while (true) {
    // The step: the aligned block of chunk_vertices IDs holding the smallest pending vertex.
    bool any = false;
    VertexId lo = ~VertexId{0};
    for (auto* group : {&removed, &added}) {
      for (Source& src : *group) {
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
    for (Source& src : removed) {
      while (src.cursor.NextUpTo(hi, &e)) {
        edits.push_back({e.src, Edit::kLevelErase, Pos::LevelOnly(src.change->level)});
      }
    }
    // A moved file's removals join the others, ahead of every addition.
    sets.clear();
    for (Source& src : added) {
      const uint32_t from = src.change->from_level;
      while (src.cursor.NextUpTo(hi, &e)) {
        if (from != 0) edits.push_back({e.src, Edit::kLevelErase, Pos::LevelOnly(from)});
        sets.push_back({e.src, Edit::kLevelSet, Pos::Make(src.change->level, e)});
      }
    }
    edits.insert(edits.end(), sets.begin(), sets.end());
    for (auto* group : {&removed, &added}) {
      for (Source& src : *group) {
        if (!src.cursor.status().ok()) return src.cursor.status();
      }
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

Status Build(const std::vector<IndexedFile>& files, VertexIndex* out, uint64_t chunk_vertices,
             size_t scan_window) {
  std::vector<FileChange> changes;
  changes.reserve(files.size());
  for (const IndexedFile& f : files) changes.push_back({f.reader, f.level, true});
  return ApplyFileChanges(VertexIndex(), changes, out, chunk_vertices, scan_window);
}

}  // namespace strata::index
