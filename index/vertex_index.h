// VertexIndex: the multi-level vertex index of one stored direction (LSMGraph §4.2;
// docs/design.md, "Multi-level vertex index").
//
// For every vertex that some file of levels L1..Ln of the direction holds, it records, for each
// level whose file holds the vertex, a Pos: the level and the fields of the file's VertexEntry,
// so the edge run opens without the file's own vertex lookup. A vertex no level file holds is
// absent: nothing is stored for it, whatever the ID space. Level-0 files are not entered per
// vertex (a flush would rewrite a page of nearly every range): each has its own presence
// bitmap (index/l0_presence.h), and the Version's L0 list is the set a reader may read.
//
// Layout. Vertex IDs are cut into ranges of 1024 (kRangeBits). A RangePage holds the vertices
// present in its range: a 1024-bit presence bitmap with per-word ranks, and per present vertex
// a variable-size entry: a 16-bit offset into the page's slot array and 1..2 inline 16-byte
// slots. A vertex on one level costs 18 bytes, one on two levels 34. A vertex on three or
// more levels keeps its first Pos inline, a reference in its second slot, and the rest in one
// of the range's overflow pages (at most kOverflowCapacity Pos = 4 KiB each), which partition
// the range into vertex sub-ranges: a page that overflows is split at the middle of its
// sub-range, and two neighbours that together fill at most half a page are merged. Pages are
// rebuilt whole by Apply (never edited in place), so the packed arrays cost nothing to keep
// sorted. Range pages hang off a
// copy-on-write radix tree over the range number (64-way nodes with a child bitmap, height
// grown on demand: IDs up to 2^64 - 1).
//
// Versioning. A VertexIndex is immutable and cheap to copy (one shared root). Apply builds a new
// index from a list of edits: it copies only the range pages its edits touch (and, inside them,
// only the overflow pages whose content changes) and the tree nodes on their paths; everything
// else is shared with the old index. An index lives in a Version, so a reader holding an older
// Version keeps reading the pages of its own index and never sees an edit made after it.
//
// Thread safety: const methods are safe from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "segment/segment_reader.h"
#include "strata/function_ref.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::index {

inline constexpr unsigned kRangeBits = 10;
inline constexpr uint32_t kRangeSize = 1u << kRangeBits;
inline constexpr size_t kOverflowCapacity = 256;  // Pos per overflow page: 4 KiB
inline constexpr uint32_t kMaxIndexedLevel = 254;

// Where a vertex is on one level: the level and its VertexEntry packed in 16 bytes
//   w0 = stream_offset:40 | run_bytes:24 (high bits)
//   w1 = level:8 | flags:4 | degree:20 | first_edge:32 (high bits)
// An entry whose fields do not fit is stored "level only" (degree field all ones): the reader
// then asks the file (FindVertex). The ordinal is not kept (readers do not use it).
struct Pos {
  uint64_t w0 = 0;
  uint64_t w1 = 0;

  static Pos Make(uint32_t level, const VertexEntry& e);
  static Pos LevelOnly(uint32_t level);
  uint32_t level() const { return static_cast<uint32_t>(w1 & 0xFF); }
  // False for a level-only Pos.
  bool has_entry() const { return ((w1 >> 12) & kDegreeMask) != kDegreeMask; }
  // The entry's degree and caller flags (kVertexCallerFlags bits), without unpacking the
  // rest (requires has_entry()).
  uint64_t degree() const { return (w1 >> 12) & kDegreeMask; }
  uint8_t vertex_flags() const {
    return static_cast<uint8_t>((w1 >> 8) & kVertexCallerFlags);
  }
  // The entry of vertex u (requires has_entry()); ordinal is 0.
  void ToEntry(VertexId u, VertexEntry* e) const;
  bool operator==(const Pos& o) const { return w0 == o.w0 && w1 == o.w1; }
  bool operator!=(const Pos& o) const { return !(*this == o); }

  static constexpr uint64_t kDegreeMask = (uint64_t{1} << 20) - 1;
};

// What the index holds for one vertex (a decoded, owning form for edits, tests and dumps).
struct VertexInfo {
  std::vector<Pos> pos;  // ascending level, one per level
  bool empty() const { return pos.empty(); }
  bool operator==(const VertexInfo& o) const { return pos == o.pos; }
};

struct RangePage;
struct RadixNode;

class VertexIndex {
 public:
  // A vertex as found: views into the index, valid while the index (or a copy) lives.
  struct Located {
    const Pos* a = nullptr;  // inline positions
    uint32_t na = 0;
    const Pos* b = nullptr;  // positions in an overflow page, after a's
    uint32_t nb = 0;
    uint32_t size() const { return na + nb; }
    const Pos& operator[](uint32_t i) const { return i < na ? a[i] : b[i - na]; }
  };

  // One edit. Apply takes edits in any vertex order; the edits of one vertex apply in the
  // order given.
  struct Edit {
    enum Kind : uint8_t {
      kLevelErase,  // u leaves level pos.level()
      kLevelSet,    // u is at pos.level() as pos says
    };
    VertexId u = 0;
    Kind kind = kLevelSet;
    Pos pos;
  };

  VertexIndex();

  // False when no level file holds u.
  bool Find(VertexId u, Located* out) const;

  // *out = this index with `edits` applied (this index is unchanged). `edits` is reordered.
  Status Apply(std::vector<Edit>* edits, VertexIndex* out) const;

  uint64_t vertices() const { return vertices_; }
  // Bytes of memory the index holds (pages, overflow pages, tree nodes).
  uint64_t bytes() const { return bytes_; }
  uint64_t range_pages() const { return range_pages_; }
  uint64_t overflow_pages() const { return overflow_pages_; }

  // Every indexed vertex in ascending order; fn returns false to stop.
  void ForEach(FunctionRef<bool(VertexId, const VertexInfo&)> fn) const;
  // The indexed vertices of [begin, end), ascending, as Find gives them (views, nothing
  // decoded into owning form); fn returns false to stop. One tree descent per 1024 IDs of
  // the range: for short ranges (a subgraph's 64 IDs lie in one page).
  void ForEachIn(VertexId begin, VertexId end,
                 FunctionRef<bool(VertexId, const Located&)> fn) const;
  // The indexed vertices among base + i for the set bits i of `mask` (base a multiple of 64):
  // their IDs ascending into us[] and what Find gives for each into out[] (room for 64 each);
  // returns how many. One tree descent and no call per vertex: the walk of range scans asks
  // for each 64-vertex group's wanted vertices at once.
  size_t LocateGroup(VertexId base, uint64_t mask, VertexId* us, Located* out) const;
  // Same vertices with the same information (page layout may differ: it depends on history).
  bool SameContents(const VertexIndex& o, std::string* first_difference = nullptr) const;
  // Range pages (by range number) that this index shares, by pointer, with `o`.
  uint64_t SharedRangePages(const VertexIndex& o) const;
  // Per range page: range number and the vertex sub-ranges [lo, hi) of its overflow pages.
  struct PageShape {
    uint64_t range = 0;
    uint32_t vertices = 0;
    std::vector<std::pair<uint32_t, uint32_t>> overflow;
    std::vector<uint32_t> overflow_fill;  // Pos per overflow page
  };
  std::vector<PageShape> Shape() const;
  // Human-readable contents, at most max_vertices vertices.
  std::string Dump(size_t max_vertices = 100) const;
  // Checks internal invariants (ranks, ordering, overflow partition and fill, counters).
  Status CheckInvariants() const;

 private:
  const RangePage* FindPage(uint64_t range) const;
  std::shared_ptr<const RadixNode> root_;
  int height_ = 0;  // the tree covers range numbers < 64^height_
  uint64_t vertices_ = 0;
  uint64_t bytes_ = 0;
  uint64_t range_pages_ = 0;
  uint64_t overflow_pages_ = 0;
};

}  // namespace strata::index
