// Decoded neighbor lists in one direction, kept in memory for kernels that read every list
// several times (PageRank's iterations), per kLayoutBlock block of vertices. Out-lists are
// collected while BuildLayout streams them (Collect, from its visitor: no extra pass); other
// lists by one streamed pass in Complete. Blocks are kept while they fit `max_bytes`; a block
// that does not fit (or holds a neighbor >= the bound) is streamed from the snapshot by every
// Pass. IDs are kept in 32 bits when the bound allows (4 bytes per edge, plus 4 per vertex of
// a kept block); weights (8 bytes per edge) only when asked for and the store has them. The
// memory belongs to the kernel and is freed with the object. max_bytes = 0: always stream;
// kAutoCacheBytes: AutoCacheBytes() when the cache is made (budget() says what it became).
// Frontier kernels read kept lists one vertex at a time with Chunks (ForEachFrontierChunk
// takes the cache and reads only the other vertices from the snapshot).
//
// Packed blocks (ListPacking, with 32-bit IDs and no weights): a block's lists kept as records
// of byte-wide gaps (packed_list.h), packed when the block's lists are complete — when its
// thread moves on to another block, or in Complete — so at most one block per thread is held
// unpacked. 71 MiB instead of 124 for the 31 M entries of the scale-20 Kronecker graph (heads
// included), so a budget keeps nearly twice the lists, for a decode of each entry on every
// pass (docs/benchmarks.md, "Issue 28: packed list-cache blocks"). kAuto packs only when the
// lists will not fit unpacked: a block is packed once the unpacked bytes of the blocks
// completed so far, extrapolated to every block, pass nine tenths of the budget (from then on
// every block is packed; the blocks completed before stay unpacked). Pass, PassInterleaved
// and Chunks give the same entries in the same order either way (Pass and Chunks in pieces of
// at most 256); List and Head do not serve packed blocks (false, null: read those lists from
// the store). A chunk that comes for a block already packed (its thread left it and came
// back) drops the block, which Pass then streams. A block whose lists do not ascend, or whose
// records would take as many bytes as its plain lists or pass 4 GiB, is kept unpacked.
//
// Three-byte IDs (packing other than kNever, a bound of at most 2^24, no weights): a complete
// block that is not packed keeps its lists as 3-byte IDs (Id24) instead of 4, one pad byte
// after them: 94 instead of 124 MiB at scale 20, read as they are (Pass and PassInterleaved
// hand fn `const Id24*`: one unaligned load and a mask per entry, no decode pass; PageRank was
// no slower, docs/benchmarks.md, "Issue 28: three-byte IDs in PageRank's list cache"). List and
// Head do not serve them (false, null), as packed blocks; Chunks does. A staged block is still
// checked against the budget at 4 bytes an entry (its stage holds them so), so near the
// budget's edge a block may be streamed whose 3-byte lists would have fitted.
//
// Runs. In a 3-byte block, a list of at least kRunList IDs is kept instead as runs
// of IDs sharing their high bits (above the low 16): per run a 4-byte header (high bits,
// count), then the list's low halves, 2 bytes an ID (Block::long_recs; 16 runs at most on a
// 2^20-vertex graph). Pass<true> hands fn such a list whole as an Id16Runs (fn reads it with
// ForEachId or ForEachPiece), Pass the list widened to 32 bits; PassInterleaved reads blocks with runs as Pass
// does; Chunks widens them. off[] still counts every list's entries (lengths for HasLengths), the 3-byte
// array holding only the other lists. On the scale-20 Kronecker graph lists of 256 entries
// or more hold ~64% of the entries (docs/benchmarks.md, "Issue 28: long lists as 16-bit
// runs").
//
// Gap lists. Past kGapBound vertices (LongLists::kAuto), a 3-byte block keeps its long lists
// instead as Elias-Fano records (IdEliasFano), from kGapList IDs: for a list of n IDs whose
// last is U - 1, a width l = floor(log2(U / n)); each ID's low l bits packed back to back,
// and its high bits in unary (bit (id >> l) + i set for the i-th ID), about 2 + l bits an
// ID whatever the gaps. A list whose IDs step down, or that would not be smaller than its
// 3-byte IDs with its index entries, stays in 3-byte IDs. At scale 22 PageRank's cache took
// 262.0 instead of 308.4 MB (16-bit gaps before: 2 bytes an ID, an escape of 4 more for each
// gap past 65535, which kept most lists of 64-127 IDs in 3 bytes), the mixed workload's
// reader 42 MiB less, for PageRank's iterations ~6% slower and its first pass 0.04-0.2 s
// longer (each ID is a few more instructions to decode and to encode; docs/benchmarks.md,
// "Issue 28: long lists as Elias-Fano records"); the AVX2 decoder won back 2-24% of the
// iterations in three paired runs ("Issue 28: an AVX2 Elias-Fano decoder"). A record may be
// partitioned (elias_fano.h: parts of 2^18 IDs, each at its own density) where that saves
// more than 16 bytes a part: the renumbered lists crowd into the first parts, and at scale 22
// the cache took 230.0 instead of 250.5 MiB, PageRank's iterations ~5% longer ("Issue 28:
// long lists as partitioned Elias-Fano records"). Below kGapBound
// the runs stay (at 2^20 vertices the 16-bit gaps' chain of adds made PageRank's iterations
// 4-24% slower: "Issue 28: long lists as 16-bit gaps past 2^21 vertices"). Pass<true> hands
// fn such a list as an IdEliasFano (ForEachId, or ForEachPiece: the IDs decoded 256 at a time
// into a buffer); Pass, PassInterleaved and Chunks read it as they read runs.
//
// Renumbered lists (set_groups, PageRank's pull lists): every list kept or streamed is
// handed on in the IDs of a DegreeGroups and in their ascending order (DegreeGroups::
// OrderList), so the sums over a list follow one order whether it is kept, packed, in 3-byte
// IDs or streamed. A block's lists are renumbered and ordered when it completes (before it is
// packed or its long lists are encoded, which need them ascending): a staged block's all at
// once, in one loop of lookups (renumbered chunk by chunk in Collect, the lookups waited
// behind the layout's own reads: 11.5 ns an ID at scale 22); chunks appended to a block's
// own vectors as they come. Pass gathers a streamed vertex's chunks, renumbers and orders
// them before fn sees them.
// Chunks, List and Head serve nothing then (false, null): their callers want store IDs.
//
// For frontier kernels that read each list about once (SSSP), which lists are kept matters more
// than for passes: a kept list saves a lookup whatever its length, so LimitDegree (before any
// Collect) keeps the shortest lists — every list up to a degree cutoff chosen so that they fit
// — and leaves the long ones (few vertices, most of the bytes) to be read from the store.
//
//   ListCache cache(snap, Direction::kOut, max_bytes);
//   BuildLayout(snap, &L, [&](VertexId u, const NeighborChunk& c, uint64_t) {
//     cache.Collect(u, c);
//   });
//   cache.Complete(snap, L);
//   ForEachRange(L, [&](size_t, VertexRange r) { return cache.Pass(snap, L, r, fn); });
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analytics/degree_groups.h"
#include "analytics/elias_fano.h"
#include "analytics/layout.h"
#include "analytics/packed_list.h"
#include "analytics/range_scan.h"
#include "strata/analytics.h"
#include "strata/snapshot.h"
#include "util/coro.h"

namespace strata::analytics {

// A neighbor ID of a list cache's 3-byte block (ListCache, "Three-byte IDs"), read as the
// uint32_t it holds; kernels index with it as with the 32-bit IDs.
struct Id24 {
  uint8_t b[3];
  // One 4-byte load: every array of them is followed by a byte of padding (Into24).
  operator uint32_t() const {  // NOLINT: used where a uint32_t ID is
    uint32_t x;
    std::memcpy(&x, b, 4);
    return x & 0xFFFFFFu;
  }
};
static_assert(sizeof(Id24) == 3 && alignof(Id24) == 1);

// A run of a long list in a 3-byte block (ListCache, "Runs"): IDs that share their bits above
// the low 16, kept as their low halves; read as `hi | lo[i]` (one load and an OR, as deep as
// an Id24's load and mask).
struct Id16Run {
  const uint16_t* lo;
  uint32_t hi;  // the shared high bits, in place
  uint32_t operator[](size_t i) const { return hi | lo[i]; }
};

// A whole long list of a 3-byte block as its runs, for a kernel that loops over them itself
// (Pass<true>): f(Id16Run, n) per run, in list order. One call per list instead of one per
// run keeps the kernel's per-list state (PageRank's running sum) in registers across runs.
struct Id16Runs {
  const uint8_t* rec;  // the list's record (ListCache::Block::long_recs)
  template <typename F>
  void ForEach(F&& f) const {
    uint32_t runs;
    std::memcpy(&runs, rec, 4);
    const uint8_t* const headers = rec + 4;
    const uint16_t* lo = reinterpret_cast<const uint16_t*>(headers + 4 * size_t{runs});
    for (uint32_t r = 0; r < runs; ++r) {
      uint32_t h;
      std::memcpy(&h, headers + 4 * size_t{r}, 4);
      const size_t n = h & 0xFFFFFFu;
      f(Id16Run{lo, (h >> 24) << 16}, n);
      lo += n;
    }
  }
};

// A long list of a 3-byte block as its Elias-Fano record: IdEliasFano (elias_fano.h).


// f(ids, m) for each piece of a list that ListCache::Pass<true> gave as `src` (n IDs): a
// pointer's n IDs in one piece, an Id16Runs' runs one by one, an IdEliasFano's IDs decoded
// IdEliasFano::kChunk (a multiple of 4) at a time into a buffer; ids[i] reads an ID each way.
template <typename Src, typename F>
inline void ForEachPiece(const Src& src, size_t n, F&& f) {
  if constexpr (std::is_same_v<Src, Id16Runs>) {
    src.ForEach(f);
  } else if constexpr (std::is_same_v<Src, IdEliasFano>) {
    src.ForEachChunk(n, f);
  } else {
    f(src, n);
  }
}

// f(id) for each ID of such a list, a loop per piece (so a kernel's state stays in registers).
template <typename Src, typename F>
inline void ForEachId(const Src& src, size_t n, F&& f) {
  ForEachPiece(src, n, [&](const auto& ids, size_t m) {
    for (size_t i = 0; i < m; ++i) f(ids[i]);
  });
}

// A kernel's cache_bytes as a number of bytes: kAutoCacheBytes resolved (AutoCacheBytes(),
// read now), anything else as it is. For a kernel that divides its budget before making its
// caches (SSSP); a ListCache resolves its own max_bytes.
size_t ResolveCacheBytes(size_t cache_bytes);

class ListCache {
 public:
  // keep_weights: keep each edge's weight too (a weighted store's lists come with weights).
  // packing: which blocks are packed (see above); none with keep_weights or IDs past 32 bits.
  ListCache(const Snapshot& snap, Direction d, size_t max_bytes, bool keep_weights = false,
            ListPacking packing = ListPacking::kNever);

  // Keeps only the lists of vertices whose degree bound in `estimate` (EstimateLayout: upper
  // bounds) is at most a cutoff, the largest with which all those lists fit max_bytes, heads
  // included (a short list with a loose bound may be left out); each block reserves what its
  // kept lists need, so no block is dropped for the slack of a growing vector. (A view's
  // degrees are estimates that may fall short of a list: its block then grows as without a
  // reservation, and is dropped, so streamed, if that passes max_bytes.) Returns the
  // cutoff (UINT64_MAX: every list fits; 0: nothing is kept). Call once, before Collect or
  // Complete; `estimate` must be a layout of the same snapshot.
  uint64_t LimitDegree(const Layout& estimate);

  // Keeps a chunk of u's list in direction d. Thread-safe across blocks; the chunks of one
  // block must come from one thread, vertices ascending, a vertex's chunks in order (as
  // BuildLayout's visitor gives them).
  void Collect(VertexId u, const NeighborChunk& c) {
    // The common case, inline: a chunk of the block this thread stages, within the room the
    // stage has (Stage::room: 0 unless the IDs are narrow and no weights are kept).
    if (u < bound_ && c.size != 0) {
      Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
      Stage* const st = b.stage;
      if (st != nullptr && c.size <= st->room && c.dst[c.size - 1] < bound_) {
        const size_t j = static_cast<size_t>(u % kLayoutBlock);
        const size_t n = st->n;
        while (b.next <= j) b.off[b.next++] = static_cast<uint32_t>(n);
        Narrow(c.dst, c.size, st->ids32.data() + n);
        st->n = n + c.size;
        st->room -= c.size;
        return;
      }
    }
    CollectSlow(u, c);
  }
  // After BuildLayout: closes the collected blocks; when nothing was collected, reads the lists
  // (one parallel streamed pass) to keep what fits.
  Status Complete(const Snapshot& snap, const Layout& layout);
  // Every list of block bi has been offered to Collect (BuildLayout's visitor, on the thread
  // that read the block, called from its block_done): closes the block now, as Complete
  // would. Returns whether Pass and PassInterleaved will read nothing of the block from the
  // snapshot (its lists kept whole, or none in this direction), so that the caller may
  // release the block's vertices (Snapshot::ReleaseBelow).
  bool EndBlock(size_t bi);

  // One pass over range r: fn(u, src, n) for each chunk of existing neighbors of each existing
  // u in r, u ascending, src ascending; `src` is `const uint32_t*`, `const Id24*` or
  // `const VertexId*` (fn takes `const auto*` and reads src[i] as an ID). A neighbor >= the
  // bound is Corruption. Safe to call concurrently.
  // kWholeLong: a long list kept as runs or Elias-Fano comes in one call as an Id16Runs or an
  // IdEliasFano, read in place (fn takes `auto src` and reads it with ForEachId or
  // ForEachPiece), instead of widened to 32 bits.
  template <bool kWholeLong = false, typename Fn>
  Status Pass(const Snapshot& snap, const Layout& layout, VertexRange r, Fn&& fn) const;

  // Pass with the lists of kept blocks read `group` vertices at a time, interleaved as
  // coroutines (util/coro.h) on this thread's scheduler: each vertex's list is cut into pieces
  // of kInterleavePiece entries; before fn(u, piece, n) runs, prefetch(piece, n) issues the
  // prefetches of what fn will read for it and the coroutine suspends, so the other vertices'
  // pieces run while those lines arrive. Contract as Pass, except that vertices of a kept
  // block interleave (not ascending): each vertex's chunks still come in list order, so a fn
  // that keeps per-vertex state sees exactly Pass's sequence for each vertex. Blocks not kept
  // (and kDirected's filtered lists) are streamed as by Pass. group <= 1 is Pass.
  static constexpr size_t kInterleavePiece = 16;
  // The shortest list a 3-byte block keeps as runs (see "Runs").
  static constexpr size_t kRunList = 256;
  // Gap lists (see "Gap lists"): from a bound past kGapBound (kAuto); the shortest list kept
  // so.
  static constexpr VertexId kGapBound = VertexId{1} << 21;
  static constexpr size_t kGapList = IdEliasFano::kMinIds;
  // Which form a 3-byte block's long lists take: kAuto by the bound (above), or either one
  // (for tests). Set before the first Collect or Complete.
  enum class LongLists : uint8_t { kAuto, kRuns, kGaps };
  void set_long_lists(LongLists f) {
    gap_lists_ = f == LongLists::kGaps || (f == LongLists::kAuto && bound_ > kGapBound);
  }
  bool gap_lists() const { return gap_lists_; }
  // Renumbers every list by g (see "Renumbered lists"); g outlives the cache and covers its
  // bound. Only for 32-bit IDs without weights (else ignored: false). Set before the first
  // Collect or Complete.
  bool set_groups(const DegreeGroups* g) {
    if (!narrow_ || weights_ || g == nullptr || g->bound() != bound_) return false;
    groups_ = g;
    return true;
  }
  const DegreeGroups* groups() const { return groups_; }
  template <typename Prefetch, typename Fn>
  Status PassInterleaved(const Snapshot& snap, const Layout& layout, VertexRange r, size_t group,
                         Prefetch&& prefetch, Fn&& fn) const;

  // u's whole list as the store gives it (edges into deleted vertices included), in chunks of
  // at most 256: fn(const NeighborChunk&) -> bool until it returns false; the chunk's weight
  // is null unless weights() (callers that need weights must not use it then). Returns false
  // without calling fn when u's list is not kept (its block not kept, or u left out by
  // LimitDegree: read u from the store instead). Safe to call concurrently after Complete.
  template <typename Fn>
  bool Chunks(VertexId u, Fn&& fn) const;

  // u's kept list as arrays, for readers that interleave or prefetch (SSSP): ids32 (narrow
  // IDs) or ids64 is set, w only when weights(). False when u's list is not kept, as Chunks,
  // or is packed.
  struct Span {
    const uint32_t* ids32 = nullptr;
    const VertexId* ids64 = nullptr;
    const double* w = nullptr;
    size_t n = 0;
  };
  bool List(VertexId u, Span* out) const {
    if (!Kept(u) || groups_ != nullptr) return false;
    const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    if (b.coded()) return false;
    const size_t j = static_cast<size_t>(u % kLayoutBlock);
    const uint64_t e0 = b.off[j];
    out->n = static_cast<size_t>(b.off[j + 1] - e0);
    out->ids32 = narrow_ ? b.ids32.data() + e0 : nullptr;
    out->ids64 = narrow_ ? nullptr : b.ids64.data() + e0;
    out->w = weights_ ? b.w.data() + e0 : nullptr;
    return true;
  }
  // Where List(u) reads u's offsets (for a prefetch); null when List(u) would return false.
  const void* Head(VertexId u) const {
    if (!Kept(u) || groups_ != nullptr || blocks_[static_cast<size_t>(u / kLayoutBlock)].coded()) {
      return nullptr;
    }
    return blocks_[static_cast<size_t>(u / kLayoutBlock)].off.data() + u % kLayoutBlock;
  }
  Direction direction() const { return d_; }
  // Whether u's list is kept (Chunks(u, ...) would return true). After Complete.
  bool Kept(VertexId u) const {
    if (u >= bound_) return false;
    const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
    return b.state == Block::kKept && !b.Skipped(static_cast<size_t>(u % kLayoutBlock));
  }
  // Whether kept lists carry their weights.
  bool weights() const { return weights_; }
  // Whether Offsets gives every vertex's list length: every list kept (HoldsAll) and none
  // packed (a packed block's offsets are bytes). After Complete.
  bool HasLengths() const { return HoldsAll() && packed_blocks() == 0; }
  // Block bi's offsets when HasLengths: u = bi * kLayoutBlock + j has a kept list of
  // off[j + 1] - off[j] entries; null for a block without lists (every length 0).
  const uint32_t* Offsets(size_t bi) const {
    const Block& b = blocks_[bi];
    return b.state == Block::kKept ? b.off.data() : nullptr;
  }
  // Kept blocks held packed. After Complete.
  size_t packed_blocks() const {
    size_t n = 0;
    for (const Block& b : blocks_) n += b.state == Block::kKept && b.packed();
    return n;
  }
  // Bytes held.
  size_t bytes() const { return used_.load(std::memory_order_relaxed); }
  // The most bytes it may hold: max_bytes, kAutoCacheBytes resolved.
  size_t budget() const { return max_bytes_; }
  // Whether every list is kept (no block streamed, none left out by LimitDegree): Pass and
  // PassInterleaved then read no snapshot, so the caller may let its snapshot go (PageRank on
  // a snapshot it owns). After Complete.
  bool HoldsAll() const {
    if (max_bytes_ == 0) return false;
    for (const Block& b : blocks_) {
      if (b.state == Block::kNone) continue;
      if (b.state != Block::kKept || !b.skip.empty()) return false;
    }
    return true;
  }
  // Blocks whose lists did not fit (or could not be kept): Pass streams them. After Complete;
  // every block when max_bytes is 0.
  size_t dropped_blocks() const {
    if (max_bytes_ == 0) return blocks_.size();
    size_t n = 0;
    for (const Block& b : blocks_) n += b.state == Block::kDropped;
    return n;
  }
  // The most bytes of entries one stage held for a block (Stage; not in bytes()): at most
  // max_bytes, since a block that cannot fit is dropped before its stage grows past it.
  size_t staged_peak() const { return staged_peak_.load(std::memory_order_relaxed); }

 private:
  struct Stage;
  // Aligned to cache lines of its own: Collect reads `stage` and writes `next` on every chunk,
  // and a layout that takes its blocks in ascending order (BuildLayout with block_done: PageRank
  // on a snapshot it owns) has two threads filling adjacent blocks, whose 176 bytes shared a
  // line (docs/benchmarks.md, "Issue 28: list-cache blocks on lines of their own").
  struct alignas(64) Block {
    // kNone: complete, and no vertex of the block has a list in direction d_ (Complete's
    // verdict on a block that nothing was collected for); Pass skips it.
    enum State : uint8_t { kEmpty, kFilling, kKept, kDropped, kNone } state = kEmpty;
    size_t next = 0;            // vertices before this one (in the block) have their offsets
    // List of vertex base + j: ids[off[j], off[j + 1]). 32 bits: a block holding more than
    // 2^32 - 1 entries (16 GiB of IDs and more) is dropped instead.
    // Packed (form kPacked): off[j] is the byte offset of the list's record in `bytes`, and
    // off[j] == off[j + 1] for an empty list; ids32 is empty.
    UninitVector<uint32_t> off;
    UninitVector<uint32_t> ids32;
    UninitVector<VertexId> ids64;
    UninitVector<double> w;  // weights_ only: w[k] belongs to the k-th id
    UninitVector<uint8_t> bytes;  // packed: the records, then kPackedPad zero bytes; kId24
    // Whether the lists are packed, decided once per block, when they are first complete
    // (Unstage, or Close for lists never staged); kOpen until then. kId24: plain lists of
    // 3-byte IDs in `bytes` (entry k at 3k; off[] counts entries, as for ids32).
    enum Form : uint8_t { kOpen, kPlain, kPacked, kId24 } form = kOpen;
    bool packed() const { return form == kPacked; }
    bool coded() const { return form == kPacked || form == kId24; }  // no ids32 to append to
    // kId24: every list's entries (off[] counts them), those in `bytes` and in `runs`.
    uint32_t coded_count = 0;
    // kId24: the long lists, ascending by vertex j (long_j), each a record at byte long_off
    // of `long_recs`: as runs (uint32 count of runs; per run a uint32 (high bits << 24 |
    // IDs); then the list's low halves, uint16; every record's size is even, so the halves
    // are 2-byte aligned), or, when the cache's gap_lists_, as Elias-Fano records
    // (IdEliasFano), followed by 8 zero bytes past the last (the decoders' loads). `bytes` holds
    // the other lists back to back.
    UninitVector<uint16_t> long_j;
    UninitVector<uint32_t> long_off;
    UninitVector<uint8_t> long_recs;
    bool has_long() const { return !long_j.empty(); }
    // LimitDegree only: bit j set = vertex base + j's degree bound is over the cutoff, so its
    // list is not kept (off[j] == off[j + 1]); empty when no vertex of the block is left out.
    UninitVector<uint64_t> skip;
    // While filling: the stage holding this block's entries (then ids32/ids64/w are empty), or
    // null. A block is staged at most once; chunks that come after its stage moved on are
    // appended to its own vectors.
    Stage* stage = nullptr;
    bool Skipped(size_t j) const { return !skip.empty() && (skip[j / 64] >> (j % 64) & 1); }
  };
  // A filling block's entries, gathered in one thread's reused buffers and moved into vectors
  // of the exact size when the thread starts another block (or Complete runs): a block's size
  // is known only at its end, and reserving it up front took a pass over the degree bounds
  // (a quarter of a PageRank layout's CPU time on a memgraph), growing by doubling took as
  // long. One stage per thread index of the arena the cache was made in; a thread outside it,
  // or one whose stage another thread holds, appends to the block's vectors. Used only without
  // LimitDegree (whose reservations are exact). A stage's buffers (up to a block's entries)
  // are not in bytes(); Complete frees them.
  // Aligned to a cache line of its own: the threads' stages are written on every chunk.
  struct alignas(64) Stage {
    std::atomic<const void*> owner{nullptr};  // the thread using it (a thread-local address)
    size_t block = SIZE_MAX;                  // the block staged, SIZE_MAX: none
    // Entries staged: the first n of ids32 or ids64 (and of w); the vectors' sizes are what
    // they have room for (they only grow, and are freed by Complete).
    size_t n = 0;
    // Entries Collect may append inline without a check: 0 unless narrow_ and !weights_,
    // else at most the room in ids32 and what max_bytes_ allowed past bytes() when set.
    size_t room = 0;
    UninitVector<uint32_t> ids32;
    UninitVector<VertexId> ids64;
    UninitVector<double> w;
  };
  size_t Held(const Block& b) const;  // bytes a block holds (capacities)
  // Whether a block of `count` entries completed now is packed (ListPacking).
  bool ShouldPack(size_t count);
  // Packs block bi's lists ids[0, count) (its offsets set for its first `next` vertices; the
  // rest get `count`) into `bytes`, unless they do not ascend, would not be smaller, or pass
  // 4 GiB: then false and b unchanged. Does not count the bytes in used_.
  bool Pack(size_t bi, const uint32_t* ids, size_t count);
  // Makes b a kId24 block of ids[0, count): lists [0, lists) as off[] gives them (the last
  // ends at count), long ones as runs (see "Runs"). Does not count the bytes in used_.
  void Keep24(Block& b, const uint32_t* ids, size_t count, size_t lists);
  // fn(const uint32_t*, n) for the list of the runs record at `rec`, in pieces of at most
  // kWidenPiece IDs widened into `wide`.
  static constexpr size_t kWidenPiece = 256;
  template <typename Fn>
  static void WidenRuns(const uint8_t* rec, uint32_t (&wide)[kWidenPiece], Fn&& fn);
  // WidenRuns, or the n-ID Elias-Fano record's ForEachChunk (pieces of kWidenPiece, decoded
  // into its own buffer), as this cache keeps long lists.
  static_assert(IdEliasFano::kChunk == kWidenPiece);
  template <typename Fn>
  void WidenLong(const uint8_t* rec, size_t n, uint32_t (&wide)[kWidenPiece], Fn&& fn) const {
    if (gap_lists_) {
      IdEliasFano{rec}.ForEachChunk(n, fn);
    } else {
      WidenRuns(rec, wide, fn);
    }
  }
  // Entries of block b's long lists of vertices before j (not in its 3-byte array), and the
  // index in long_j of the first long list at or after j.
  static std::pair<uint64_t, size_t> LongBefore(const Block& b, size_t j);
  void Drop(Block& b);
  void Close(Block& b, VertexId len);
  // Closes block bi; when every list of it was offered to Collect (`offered`) and it kept
  // none, marks it kNone (no lists in this direction: Pass skips it).
  void CloseBlock(size_t bi, bool offered);
  // This thread's stage for a block starting now, or null (see Stage).
  Stage* ClaimStage();
  // Moves st's block's entries into its vectors (dropping the block if they pass max_bytes)
  // and frees the stage.
  void Unstage(Stage& st);
  size_t Entries(const Block& b) const;  // entries gathered so far (staged or not)
  void ReleaseStage(Stage& st);            // empties st and frees it for any thread
  void CollectSlow(VertexId u, const NeighborChunk& c);
  // Appends c to st's entries (growing its vectors) and sets its room.
  void StageAppend(const NeighborChunk& c, Stage* st);
  // to[0, n) = the low 32 bits of from[0, n) (IDs below 2^32).
  static void Narrow(const VertexId* from, size_t n, uint32_t* to) {
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) {  // two pairs of 64-bit IDs -> their four low halves
      const auto* p = reinterpret_cast<const __m128i*>(from + i);
      const __m128 a = _mm_castsi128_ps(_mm_loadu_si128(p));
      const __m128 b = _mm_castsi128_ps(_mm_loadu_si128(p + 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i),
                       _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))));
    }
#endif
    for (; i < n; ++i) to[i] = static_cast<uint32_t>(from[i]);
  }
  // Writes c at index `at` of ids32 or ids64 (as narrow_ says) and of w (when weights_),
  // first growing each that is shorter than `size` to it.
  void PutAt(const NeighborChunk& c, size_t at, size_t size, UninitVector<uint32_t>* ids32,
             UninitVector<VertexId>* ids64, UninitVector<double>* w) const;
  // Appends c to ids32 or ids64 (as narrow_ says) and to w (when weights_); renumbered by
  // groups_ when set.
  void Append(const NeighborChunk& c, UninitVector<uint32_t>* ids32, UninitVector<VertexId>* ids64,
              UninitVector<double>* w) const;
  // Bytes a kept entry takes.
  size_t PerEdge() const { return (narrow_ ? 4 : 8) + (weights_ ? 8 : 0); }

  Direction d_;
  VertexId bound_;
  bool narrow_;
  bool weights_;
  ListPacking packing_;  // kNever unless narrow_ && !weights_
  bool id24_;            // plain blocks as 3-byte IDs (packing_ not kNever, bound_ <= 2^24)
  bool gap_lists_ = false;  // every 3-byte block's long lists as gaps (set_long_lists)
  const DegreeGroups* groups_ = nullptr;  // set_groups
  // Pass's streamed blocks [r) when groups_ is set: a vertex's whole list renumbered and
  // ordered, in one call (L.dangling is false: PageRank renumbers pull lists only). Out of
  // Pass's body, which stays as it was without groups.
  template <typename Fn>
  [[gnu::noinline]] Status PassStreamedGrouped(const Snapshot& snap, const Layout& L,
                                               VertexRange r, Fn& fn) const;
  // Orders each of the `lists` lists of ids (offsets off, the last ending at count) by
  // groups_ (DegreeGroups::OrderList).
  void OrderLists(uint32_t* ids, const uint32_t* off, size_t lists, size_t count) const;
  // kAuto: entries and blocks completed so far, and whether packing has started.
  std::atomic<uint64_t> seen_entries_{0};
  std::atomic<uint64_t> seen_blocks_{0};
  std::atomic<bool> packing_started_{false};
  size_t max_bytes_;
  std::vector<uint64_t> reserve_;  // LimitDegree: per block, the entries its kept lists need
  std::atomic<bool> collected_{false};
  std::atomic<size_t> used_{0};
  std::atomic<size_t> staged_peak_{0};
  std::vector<Block> blocks_;
  std::unique_ptr<Stage[]> stages_;
  size_t num_stages_ = 0;
};

template <typename Fn>
bool ListCache::Chunks(VertexId u, Fn&& fn) const {
  if (u >= bound_ || groups_ != nullptr) return false;
  const Block& b = blocks_[static_cast<size_t>(u / kLayoutBlock)];
  const size_t j = static_cast<size_t>(u % kLayoutBlock);
  if (b.state != Block::kKept || b.Skipped(j)) return false;
  const uint64_t e0 = b.off[j], e1 = b.off[j + 1];
  constexpr size_t kPiece = 256;
  VertexId wide[kPiece];
  if (b.packed()) {
    if (e0 == e1) return true;
    PackedListReader rd(b.bytes.data() + e0);
    while (size_t n = rd.Next(wide, kPiece)) {
      if (!fn(NeighborChunk{wide, nullptr, n})) break;
    }
    return true;
  }
  uint64_t shift = 0;  // entries of long lists before u: not in the 3-byte array
  if (b.form == Block::kId24 && b.has_long()) {
    const auto [before, k] = LongBefore(b, j);
    if (k < b.long_j.size() && b.long_j[k] == j) {
      uint32_t narrow[kWidenPiece];
      bool more = true;
      WidenLong(b.long_recs.data() + b.long_off[k], static_cast<size_t>(e1 - e0), narrow,
                [&](const uint32_t* src, size_t n) {
        if (!more) return;
        for (size_t i = 0; i < n; ++i) wide[i] = src[i];
        more = fn(NeighborChunk{wide, nullptr, n});
      });
      return true;
    }
    shift = before;
  }
  const Id24* const ids24 = reinterpret_cast<const Id24*>(b.bytes.data());
  for (uint64_t k = e0; k < e1;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, e1 - k));
    const VertexId* dst;
    if (b.form == Block::kId24) {
      for (size_t i = 0; i < n; ++i) wide[i] = ids24[k - shift + i];
      dst = wide;
    } else if (narrow_) {
      for (size_t i = 0; i < n; ++i) wide[i] = b.ids32[k + i];
      dst = wide;
    } else {
      dst = b.ids64.data() + k;
    }
    const double* w = weights_ ? b.w.data() + k : nullptr;
    if (!fn(NeighborChunk{dst, w, n})) break;
    k += n;
  }
  return true;
}

namespace list_cache_detail {

// One vertex's kept list [ids, ids + n) in pieces: prefetch, suspend, fn.
template <typename Id, typename Prefetch, typename Fn>
coro::Task<void> InterleavedList(VertexId u, const Id* ids, size_t n, Prefetch* prefetch,
                                 Fn* fn) {
  for (size_t i = 0; i < n; i += ListCache::kInterleavePiece) {
    const size_t k = std::min(ListCache::kInterleavePiece, n - i);
    (*prefetch)(ids + i, k);
    co_await coro::Suspend{};
    (*fn)(u, ids + i, k);
  }
}

// The same for a packed list's record: each piece is decoded into the coroutine's frame.
template <typename Prefetch, typename Fn>
coro::Task<void> InterleavedPacked(VertexId u, const uint8_t* record, Prefetch* prefetch,
                                   Fn* fn) {
  PackedListReader rd(record);
  uint32_t piece[ListCache::kInterleavePiece];
  while (size_t k = rd.Next(piece, ListCache::kInterleavePiece)) {
    (*prefetch)(static_cast<const uint32_t*>(piece), k);
    co_await coro::Suspend{};
    (*fn)(u, static_cast<const uint32_t*>(piece), k);
  }
}

// Frame bytes PassInterleaved's scheduler gives each coroutine (a packed list's frame holds
// its reader and a piece).
inline constexpr size_t kInterleaveFrameBytes = 384;

}  // namespace list_cache_detail

template <typename Prefetch, typename Fn>
Status ListCache::PassInterleaved(const Snapshot& snap, const Layout& L, VertexRange r,
                                  size_t group, Prefetch&& prefetch, Fn&& fn) const {
  if (group <= 1) return Pass(snap, L, r, fn);
  coro::Scheduler& sched =
      coro::PerThread<struct PassSite>(group, list_cache_detail::kInterleaveFrameBytes);
  const uint8_t* const exists = L.exists.data();
  for (VertexId lo = r.begin; lo < r.end;) {
    const size_t bi = static_cast<size_t>(lo / kLayoutBlock);
    const VertexId base = bi * kLayoutBlock;
    const VertexId hi = std::min<VertexId>(r.end, base + kLayoutBlock);
    const Block& b = blocks_[bi];
    // (Blocks with runs too: Pass reads them.)
    if (b.state != Block::kKept || !b.skip.empty() || L.dangling || b.has_long()) {
      // Pass streams a run of blocks not kept at once; the run ends at the next kept block.
      VertexId end = hi;
      auto interleavable = [&](const Block& x) {
        return x.state == Block::kKept && x.skip.empty() && !L.dangling && !x.has_long();
      };
      while (end < r.end && !interleavable(blocks_[static_cast<size_t>(end / kLayoutBlock)])) {
        end = std::min<VertexId>(r.end, end + kLayoutBlock);
      }
      Status s = Pass(snap, L, VertexRange{lo, end}, fn);
      if (!s.ok()) return s;
      lo = end;
      continue;
    }
    auto run = [&](const auto* ids) {
      return sched.Run(static_cast<size_t>(hi - lo), [&](size_t i) {
        const VertexId u = lo + i;
        const size_t j = static_cast<size_t>(u - base);
        const uint64_t e0 = b.off[j], e1 = b.off[j + 1];
        const size_t n = exists[u] ? static_cast<size_t>(e1 - e0) : 0;
        return list_cache_detail::InterleavedList(u, ids + e0, n, &prefetch, &fn);
      });
    };
    Status s;
    if (b.packed()) {
      s = sched.Run(static_cast<size_t>(hi - lo), [&](size_t i) {
        const VertexId u = lo + i;
        const size_t j = static_cast<size_t>(u - base);
        const uint64_t e0 = b.off[j], e1 = b.off[j + 1];
        const uint8_t* rec = exists[u] && e0 != e1 ? b.bytes.data() + e0 : nullptr;
        return rec != nullptr ? list_cache_detail::InterleavedPacked(u, rec, &prefetch, &fn)
                              : list_cache_detail::InterleavedList(u, b.ids32.data(), 0,
                                                                   &prefetch, &fn);
      });
    } else if (b.form == Block::kId24) {
      s = run(reinterpret_cast<const Id24*>(b.bytes.data()));
    } else {
      s = narrow_ ? run(b.ids32.data()) : run(b.ids64.data());
    }
    assert(sched.arena().fallbacks() == 0);
    if (!s.ok()) return s;
    lo = hi;
  }
  return Status::OK();
}

template <typename Fn>
void ListCache::WidenRuns(const uint8_t* rec, uint32_t (&wide)[kWidenPiece], Fn&& fn) {
  Id16Runs{rec}.ForEach([&](Id16Run run, size_t n) {
    for (size_t i = 0; i < n;) {
      const size_t m = std::min(kWidenPiece, n - i);
      for (size_t k = 0; k < m; ++k) wide[k] = run[i + k];
      fn(static_cast<const uint32_t*>(wide), m);
      i += m;
    }
  });
}

inline std::pair<uint64_t, size_t> ListCache::LongBefore(const Block& b, size_t j) {
  uint64_t before = 0;
  size_t k = 0;
  for (; k < b.long_j.size() && b.long_j[k] < j; ++k) {
    before += b.off[b.long_j[k] + size_t{1}] - b.off[b.long_j[k]];
  }
  return {before, k};
}

template <typename Fn>
Status ListCache::PassStreamedGrouped(const Snapshot& snap, const Layout& L, VertexRange r,
                                      Fn& fn) const {
  assert(!L.dangling);
  thread_local std::vector<uint32_t> list, scratch;
  VertexId cur = 0;
  size_t m = 0;
  auto flush = [&] {
    if (m == 0) return;
    groups_->OrderList(list.data(), m, &scratch);
    fn(cur, static_cast<const uint32_t*>(list.data()), m);
    m = 0;
  };
  Status s = ScanRangeChunks(snap, r, d_, L, /*weights=*/false,
                             [&](VertexId u, const VertexId* src, const double*, size_t n) {
                               if (u != cur) flush();
                               cur = u;
                               if (list.size() < m + n) list.resize(std::max(m + n, 2 * list.size()));
                               groups_->Renumber(src, n, list.data() + m);
                               m += n;
                             });
  if (s.ok()) flush();
  return s;
}

template <bool kWholeLong, typename Fn>
Status ListCache::Pass(const Snapshot& snap, const Layout& L, VertexRange r, Fn&& fn) const {
  const uint8_t* const exists = L.exists.data();
  constexpr size_t kKeep = 256;
  VertexId keep[kKeep];
  for (VertexId lo = r.begin; lo < r.end;) {
    const size_t bi = static_cast<size_t>(lo / kLayoutBlock);
    const VertexId base = bi * kLayoutBlock;
    const VertexId hi = std::min<VertexId>(r.end, base + kLayoutBlock);
    const Block& b = blocks_[bi];
    if (b.state == Block::kNone) {
      lo = hi;
      continue;
    }
    // A block with lists left out by LimitDegree is streamed whole, as one not kept.
    auto whole = [](const Block& x) { return x.state == Block::kKept && x.skip.empty(); };
    if (!whole(b)) {
      // Stream the whole run of blocks not kept in one scan: a scan's setup (a scanner per
      // disk file) per 4096-vertex block made a partly cached PageRank slower than none.
      VertexId end = hi;
      // (A kNone block has nothing to stream: the run ends there too.)
      auto streamed = [&](const Block& x) { return !whole(x) && x.state != Block::kNone; };
      while (end < r.end && streamed(blocks_[static_cast<size_t>(end / kLayoutBlock)])) {
        end = std::min<VertexId>(r.end, end + kLayoutBlock);
      }
      Status s;
      if (groups_ == nullptr) {
        s = ScanRangeChunks(snap, VertexRange{lo, end}, d_, L, /*weights=*/false,
                            [&](VertexId u, const VertexId* src, const double*, size_t n) {
                              fn(u, src, n);
                            });
      } else {
        s = PassStreamedGrouped(snap, L, VertexRange{lo, end}, fn);
      }
      if (!s.ok()) return s;
      lo = end;
      continue;
    }
    // A 3-byte block's long lists (runs): lk is the next one's index in long_j, long_before
    // the entries of those before u (not in the 3-byte array).
    auto [long_before, lk] = b.has_long() ? LongBefore(b, static_cast<size_t>(lo - base))
                                          : std::pair<uint64_t, size_t>{0, 0};
    for (VertexId u = lo; u < hi; ++u) {
      const size_t j = static_cast<size_t>(u - base);
      const uint64_t e0 = b.off[j], e1 = b.off[j + 1];
      // u's runs or gaps record, when its list is one of them (never empty: at least
      // kGapList IDs).
      const uint8_t* rec = nullptr;
      if (lk < b.long_j.size() && b.long_j[lk] == j) {
        rec = b.long_recs.data() + b.long_off[lk++];
        long_before += e1 - e0;
      }
      if (e0 == e1 || !exists[u]) continue;
      size_t n = 0;  // entries in `keep`
      auto emit = [&](const auto* ids, size_t count) {
        if (!L.dangling) {
          fn(u, ids, count);
          return;
        }
        for (size_t k = 0; k < count; ++k) {  // drop edges into deleted vertices (kDirected
          if (!exists[ids[k]]) continue;      // keeps them)
          keep[n] = ids[k];
          if (++n == kKeep) {
            fn(u, static_cast<const VertexId*>(keep), n);
            n = 0;
          }
        }
      };
      if (b.packed()) {
        PackedListReader rd(b.bytes.data() + e0);
        uint32_t piece[kKeep];
        while (size_t k = rd.Next(piece, kKeep)) {
          emit(static_cast<const uint32_t*>(piece), k);
        }
      } else if (rec != nullptr) {
        bool whole = false;  // given in one call, read in place
        if constexpr (kWholeLong) {
          if (!L.dangling) {
            if (gap_lists_) {
              fn(u, IdEliasFano{rec}, static_cast<size_t>(e1 - e0));
            } else {
              fn(u, Id16Runs{rec}, static_cast<size_t>(e1 - e0));
            }
            whole = true;
          }
        }
        if (!whole) {
          uint32_t piece[kWidenPiece];
          WidenLong(rec, static_cast<size_t>(e1 - e0), piece,
                    [&](const uint32_t* src, size_t m) { emit(src, m); });
        }
      } else if (b.form == Block::kId24) {
        emit(reinterpret_cast<const Id24*>(b.bytes.data()) + (e0 - long_before),
             static_cast<size_t>(e1 - e0));
      } else if (narrow_) {
        emit(b.ids32.data() + e0, static_cast<size_t>(e1 - e0));
      } else {
        emit(b.ids64.data() + e0, static_cast<size_t>(e1 - e0));
      }
      if (n) fn(u, static_cast<const VertexId*>(keep), n);
    }
    lo = hi;
  }
  return Status::OK();
}

}  // namespace strata::analytics
