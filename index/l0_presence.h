// L0Presence: the vertices one level-0 segment holds — the level-0 layer of the multi-level
// vertex index (index/vertex_index.h covers L1..Ln; docs/design.md, "Multi-level vertex index").
//
// A bitmap with one bit per vertex ID of the file's range [min_src, max_src], made once when the
// file is opened from its vertex entries (no edge is read) and never changed: a flush adds a
// level-0 file with its own presence and rewrites no page of the index. Exact: Holds(u) is true
// iff the file has a vertex entry for u (a list, an exists flag or a deletion mark), so a point
// read asks a level-0 file's vertex table only when the file holds the vertex.
//
// Made only when dense enough: the bitmap of a file takes at most kMaxBitsPerVertex bits per
// vertex the file holds. A sparser file (IDs spread over a wide range) gets none and readers ask
// its vertex table (SegmentReader::FindVertex), which answers NotFound for an absent vertex.
//
// Thread safety: immutable once built; any number of threads may call Holds.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "segment/segment_reader.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::index {

class L0Presence {
 public:
  // 32 bits a vertex: the 4 bytes a vertex's smallest level-0 file number took in each page of
  // the index when level-0 files were entered per vertex.
  static constexpr uint64_t kMaxBitsPerVertex = 32;
  // Whether n vertices over IDs [lo, lo + span] get a bitmap (the rule above).
  static bool DenseEnough(uint64_t span, uint64_t n) { return span / kMaxBitsPerVertex < n; }

  // *out = the presence of the vertices r holds, or null when r holds none or its range is too
  // sparse (more than kMaxBitsPerVertex IDs per vertex held). Reads r's vertex entries; a read
  // error or a vertex outside the header's [min_src, max_src] is returned as an error naming
  // the file.
  static Status Build(const SegmentReader& r, std::unique_ptr<const L0Presence>* out);

  // The presence of a file as it is written, without reading it back (a flush): Add(u) for
  // every vertex entry, in the file's (ascending) order; Finish gives what Build gives for the
  // file. Gives up once the vertices added are far sparser than a presence allows (an ID gap
  // past kGiveUpBitsPerVertex bits per vertex so far, so that a wide sparse range is never
  // allocated); then Finish returns false and the caller builds from the file.
  class Builder {
   public:
    static constexpr uint64_t kGiveUpBitsPerVertex = 4 * kMaxBitsPerVertex;
    void Add(VertexId u) {
      if (gave_up_) return;
      if (n_ == 0) lo_ = u;
      const uint64_t i = u - lo_;
      if (n_ > 0 && u <= hi_) {
        gave_up_ = true;  // not ascending: not a segment's order
        return;
      }
      if ((i >> 6) >= bits_.size()) {
        if (i / kGiveUpBitsPerVertex > n_ + 64) {
          gave_up_ = true;
          bits_ = std::vector<uint64_t>();
          return;
        }
        bits_.resize((i >> 6) + 1, 0);
      }
      bits_[i >> 6] |= uint64_t{1} << (i & 63);
      hi_ = u;
      ++n_;
    }
    // False if the builder gave up; else *out = the presence (null: none, as Build says).
    bool Finish(std::unique_ptr<const L0Presence>* out);

   private:
    VertexId lo_ = 0, hi_ = 0;
    uint64_t n_ = 0;
    bool gave_up_ = false;
    std::vector<uint64_t> bits_;
  };

  bool Holds(VertexId u) const {
    if (u < lo_ || u > hi_) return false;
    const uint64_t i = u - lo_;
    return (bits_[i >> 6] >> (i & 63)) & 1;
  }
  // Vertices held (bits set).
  uint64_t vertices() const { return vertices_; }
  // Memory the bitmap takes.
  uint64_t bytes() const { return sizeof(*this) + bits_.capacity() * sizeof(uint64_t); }

 private:
  L0Presence() = default;
  VertexId lo_ = 0, hi_ = 0;
  uint64_t vertices_ = 0;
  std::vector<uint64_t> bits_;
};

}  // namespace strata::index
