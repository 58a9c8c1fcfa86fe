// Subgraph versions: the unit of multi-versioning in the in-memory tier (RapidStore §5.1, §6.1;
// docs/design.md, "Subgraphs and version chains").
//
// Subgraph s holds vertices [64s, 64s+64) and their adjacency. Each subgraph has a version
// chain, newest first. A version is immutable once published (linked as the head with its
// timestamp). A new version copies this small header and shares every container node it does
// not change; containers are copy-on-write and reference-counted.
//
// Vertex state in one memgraph, per local vertex i (bit i of the masks):
//   exists=0 deleted=0  unknown here: older tiers decide
//   exists=1 deleted=0  exists; edges here are added on top of older tiers
//   exists=0 deleted=1  deleted here: hides the vertex and all its edges on older tiers
//   exists=1 deleted=1  deleted then re-created here: older tiers are hidden, starts empty
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "memgraph/append_area.h"
#include "memgraph/cart.h"
#include "memgraph/clustered_index.h"
#include "memgraph/node_allocator.h"
#include "strata/types.h"

namespace strata::mem {

inline constexpr uint32_t kSubgraphBits = 6;
inline constexpr uint32_t kSubgraphSize = 1u << kSubgraphBits;  // 64 vertices

// Per-vertex entry counts of one Adjacency, dense, for building a version (a writer's scratch).
struct VertexCounts {
  uint32_t live[kSubgraphSize];     // live (non-tombstone) entries per vertex
  uint32_t entries[kSubgraphSize];  // entries incl. tombstones per vertex
};

// The C-ARTs of one Adjacency, shared by every version that has not changed them: a new version
// takes one reference on the array instead of one on each tree's root (a subgraph with hubs
// copied k trees, k root cache lines, per version). refs counts the Adjacencies holding it; an
// array with refs == 1 held by an unpublished version may be changed in place (no one else can
// reach it), otherwise MutableArt copies it first.
struct ArtArray {
  std::atomic<uint32_t> refs;
  uint32_t n;
  CArt* trees() { return reinterpret_cast<CArt*>(this + 1); }
  const CArt* trees() const { return reinterpret_cast<const CArt*>(this + 1); }
};
static_assert(sizeof(ArtArray) % alignof(CArt) == 0);

// The neighbor sets of one direction (out or in) of the 64 vertices of a subgraph.
// Low-degree vertices share the clustered index; vertex i with bit i of art_mask set has its
// own C-ART, stored at arts->trees()[popcount(art_mask & ((1 << i) - 1))].
//
// Entry counts: vertex i's record counts its container only, never its appended updates: a
// clustered-index vertex's entries in the index, a C-ART vertex's tree ({tree_size,
// tree_live_size}, without the C-ART's pending updates). A record is written whenever its
// container changes (an area flush, which learns each update's prior state from the merge; a
// move between containers; a vertex deletion). Appended (and pending) updates are resolved
// against the container when counts are read (Counts, ResolvedCounts), so a writer looks
// nothing up to append an update: a hub's tree lookups were a third of what a full tier's
// updates cost more than an empty one's (docs/benchmarks.md, "Issue 28: a hub's updates
// without lookups"), and the clustered index's lookups most of the rest ("Issue 28: updates
// without lookups").
//
// Records are sparse: bit i of count_mask is set iff vertex i's record is not {0, 0},
// and the k-th set bit's counts are the k-th record of `counts`, in a format that holds every
// record: the narrowest of three when SetCounts picks it; CountEdits keeps it while the new
// values fit:
//   kCounts16      uint16 entries; live == entries (no tombstones here): 2 bytes a vertex;
//   kCountPairs16  uint16 {entries, live}: 4 bytes;
//   kCountPairs32  uint32 {entries, live}: 8 bytes.
// A shuffled stream touches every subgraph with a few edges each, so a dense 64-vertex array
// (512 bytes per version) would cost more than the edges themselves (docs/benchmarks.md,
// "Measurements behind design choices"), and every version copies its counts: a full
// subgraph's 64 vertices cost 128 bytes (two cache lines) in the first format against 512 in
// the last (docs/benchmarks.md, "Issue 28: counts of two bytes"). `counts` is owned by this
// Adjacency.
enum CountFormat : uint8_t { kCounts16 = 0, kCountPairs16 = 1, kCountPairs32 = 2 };
inline constexpr size_t kCountRecordBytes[3] = {2, 4, 8};

struct Adjacency {
  ClusteredIndex ci;
  uint64_t art_mask = 0;
  ArtArray* arts = nullptr;     // popcount(art_mask) trees, from the memgraph pool; shared
  uint64_t count_mask = 0;
  // Updates laid over ci and arts: the first appended_n entries of `appended` (append_area.h);
  // null (and 0) when there are none. Shared with the versions before and after this one.
  AppendArea* appended = nullptr;
  CountFormat count_format = kCounts16;
  uint8_t appended_n = 0;
  // Bytes of room right after this object, in the same allocation (the version's block for
  // `out`, the in-adjacency's own block for `in`), at least 8. The counts — popcount(count_mask)
  // records of count_format — live there when they fit, so a version is one block of header
  // and counts (one allocation, adjacent lines) instead of two; counts that do not fit get a
  // block of their own from the memgraph pool, and the room holds its address
  // (kCountsOwnBlock). Fixed when the block is allocated.
  uint16_t inline_cap = 0;
  uint8_t flags = 0;  // kCountsOwnBlock; for a version's `out`, kVersionHasIn

  // Not copyable: the inline counts (and the in-adjacency's address) belong to the block
  // this object heads; CopyVersion copies an adjacency into a block of its own.
  Adjacency() = default;
  Adjacency(const Adjacency&) = delete;
  Adjacency& operator=(const Adjacency&) = delete;

  static constexpr uint8_t kCountsOwnBlock = 1;
  // Set in a version's `out` only: the version has an in-adjacency, whose address is stored
  // in the 8 bytes before the version (SubgraphVersion::in).
  static constexpr uint8_t kVersionHasIn = 2;

  void* InlineCounts() { return this + 1; }
  const void* InlineCounts() const { return this + 1; }
  bool CountsInline() const { return count_mask != 0 && (flags & kCountsOwnBlock) == 0; }
  // The records (meaningful when count_mask != 0).
  const void* counts() const {
    return (flags & kCountsOwnBlock) != 0 ? *static_cast<void* const*>(InlineCounts())
                                          : InlineCounts();
  }
  void* counts() { return const_cast<void*>(static_cast<const Adjacency*>(this)->counts()); }

  bool InArt(uint32_t i) const { return (art_mask >> i) & 1; }
  const CArt& Art(uint32_t i) const {
    return arts->trees()[__builtin_popcountll(art_mask & ((uint64_t{1} << i) - 1))];
  }
  // Index of vertex i's record (bit i of count_mask set).
  size_t CountRecord(uint32_t i) const {
    return static_cast<size_t>(__builtin_popcountll(count_mask & ((uint64_t{1} << i) - 1)));
  }
  // Bytes of the counts array.
  size_t CountBytes() const {
    return kCountRecordBytes[count_format] * static_cast<size_t>(__builtin_popcountll(count_mask));
  }
  // Where vertex i's record would be (for prefetching).
  const void* CountAddress(uint32_t i) const {
    return static_cast<const char*>(counts()) + kCountRecordBytes[count_format] * CountRecord(i);
  }
  // Entries (tombstones included) of vertex i in the view (containers + appended); 0 iff
  // vertex i has no entry here.
  uint32_t Entries(uint32_t i) const { return Counts(i).entries; }
  // Live (non-tombstone) entries of vertex i here.
  uint32_t Live(uint32_t i) const { return Counts(i).live; }
  struct CountPair {
    uint32_t entries;
    uint32_t live;
  };
  // Vertex i's counts in the view, both fields at once: its record with its appended (and a
  // C-ART's pending) updates resolved against its container (ResolvedCounts).
  CountPair Counts(uint32_t i) const {
    const CountPair r = Record(i);
    if (!InArt(i) && (appended == nullptr || !appended->MayHave(i))) return r;
    return ResolvedCounts(i, r);
  }
  // rec (vertex i's record: the counts of its container) with a C-ART's pending updates
  // resolved (CArt::size) and then vertex i's appended updates, each against the state of its
  // key in the container's view (a Find per update); rec when there are neither.
  CountPair ResolvedCounts(uint32_t i, CountPair rec) const;
  // An upper bound of Live(i) without a lookup: the record's live entries plus i's appended
  // puts (exact when each put adds a key its container lacks and nothing is erased).
  // C-ART vertices resolve (their pending updates may erase).
  uint32_t LiveBound(uint32_t i) const;
  // Vertices that may have entries in the view: a record, a C-ART (an empty tree may hold
  // nothing), or an appended update (exact over the first appended_n entries).
  uint64_t EntryMask() const {
    return count_mask | art_mask | (appended != nullptr ? appended->PrefixMask(appended_n) : 0);
  }
  // Whether vertex i may have entries in the view: a record, a C-ART, or possibly an appended
  // update (AppendArea::MayHave). A filter for readers, no lookups.
  bool MayHaveEntries(uint32_t i) const {
    return (((count_mask | art_mask) >> i) & 1) != 0 ||
           (appended != nullptr && appended->MayHave(i));
  }
  // Vertex i's record, both fields in one decode; {0, 0} when i has none. kCounts16 keeps one
  // field, which is both.
  CountPair Record(uint32_t i) const {
    if (((count_mask >> i) & 1) == 0) return {0, 0};
    const size_t k = CountRecord(i);
    switch (count_format) {
      case kCounts16: {
        const uint32_t n = static_cast<const uint16_t*>(counts())[k];
        return {n, n};
      }
      case kCountPairs16: {
        const uint16_t* r = static_cast<const uint16_t*>(counts()) + 2 * k;
        return {r[0], r[1]};
      }
      default: {
        const uint32_t* r = static_cast<const uint32_t*>(counts()) + 2 * k;
        return {r[0], r[1]};
      }
    }
  }
};

// A version's block: [the in-adjacency's address, 8 bytes, only when there is one][this
// header, 96 bytes][out's inline room, the rest of the block, rounded to whole lines]. A copy
// makes room for its base's records and one more (subgraph.cc, InlineCap), so with 2-byte
// records a copy of a version with at most 15 takes 128 bytes and with at most 47 192 bytes;
// with the 128-byte header of before, 192 bytes held at most 31. That saved 3.6 MiB of a
// scale-22 store and left fewer slabs partly used; the fill's speed did not change beyond
// what two builds differ by (docs/benchmarks.md, "Issue 28: a version header of 96 bytes").
// Hence the in-adjacency's address before the header (only GraphKind::kDirectedWithInEdges
// has one), out-of-line counts' address in the room, and a clustered index of 24 bytes.
struct SubgraphVersion {
  Timestamp ts = 0;                               // commit timestamp; set before publishing
  std::atomic<SubgraphVersion*> older{nullptr};   // next older version, cut by GC
  uint64_t exists_mask = 0;
  uint64_t deleted_mask = 0;
  Adjacency out;            // last: its inline counts follow it in the version's block

  // The in-adjacency: only for GraphKind::kDirectedWithInEdges, else null.
  Adjacency* in() const {
    return (out.flags & Adjacency::kVersionHasIn) != 0
               ? reinterpret_cast<Adjacency* const*>(this)[-1]
               : nullptr;
  }
};
static_assert(offsetof(SubgraphVersion, out) + sizeof(Adjacency) == sizeof(SubgraphVersion),
              "out's inline counts must start where the version header ends");
static_assert(sizeof(SubgraphVersion) == 96, "see the block's layout above");

// Allocation helpers: versions and their art arrays live in the memgraph's pool so the tier's
// byte count includes them.
// An empty version whose containers allocate from `alloc`.
SubgraphVersion* NewVersion(NodeAllocator* alloc, bool with_in, bool weighted);
// A new unpublished version sharing every container of `base` (ts and older left unset).
// Its block has room for the base's counts and a record more (Adjacency::inline_cap).
SubgraphVersion* CopyVersion(NodeAllocator* alloc, const SubgraphVersion& base);
void FreeVersion(NodeAllocator* alloc, SubgraphVersion* v);
// Releases v's containers (its neighbor sets, C-ART array and counts), leaving a header whose
// ts and older link still read as before: for a version unlinked from the middle of a chain,
// which readers may still be walking past (they read only ts and older of a version they do not
// select). FreeVersion on it afterwards frees the header.
void HollowVersion(NodeAllocator* alloc, SubgraphVersion* v);
// FreeVersion of every version in [b, e). Version GC frees versions that were replaced a batch
// or more ago, whose nodes are out of cache, so each version and then what FreeVersion writes
// in it are fetched a few versions ahead (without it, each root's reference-count decrement
// waits on a cache miss).
void FreeVersions(NodeAllocator* alloc, SubgraphVersion* const* b, SubgraphVersion* const* e);
// Replaces a's art array with `n` trees (moved from `trees`), releasing the old array.
void SetArts(NodeAllocator* alloc, Adjacency* a, uint64_t mask, CArt* trees, uint32_t n);
// Vertex i's tree (InArt(i)) for changing in place: a's array is copied first if it is shared.
// Only for an Adjacency of an unpublished version.
CArt& MutableArt(NodeAllocator* alloc, Adjacency* a, uint32_t i);
// The dense counts of `a`, and back: SetCounts replaces a's sparse counts with `c`, in the
// narrowest format that holds them.
void GetCounts(const Adjacency& a, VertexCounts* c);
void SetCounts(NodeAllocator* alloc, Adjacency* a, const VertexCounts& c);

// The per-vertex counts of an Adjacency of an unpublished version, while its build changes
// them: a vertex's counts are read from the adjacency until first written, and Commit stores
// back only the written ones. A build touches a few of the 64 vertices, so this costs what it
// touches: records are patched in place, and a vertex's first entry or last one merges a
// record into or out of the array in its format; the array is rebuilt (GetCounts + SetCounts,
// which also narrows the format) only when an edited record does not fit the array's format
// (a count reaching 65536, or a first tombstone under kCounts16).
//
// `a` is where unedited counts are read: the version being built, or the version it copied
// (whose counts it holds until Commit, and whose lines are in cache when the new block is not).
class CountEdits {
 public:
  explicit CountEdits(const Adjacency* a) : a_(a) {}
  uint32_t entries(uint32_t i) const { return Has(i) ? entries_[i] : a_->Record(i).entries; }
  uint32_t live(uint32_t i) const { return Has(i) ? live_[i] : a_->Record(i).live; }
  uint32_t& entries_ref(uint32_t i) { return Touch(i), entries_[i]; }
  uint32_t& live_ref(uint32_t i) { return Touch(i), live_[i]; }
  // Writes the edits to `a`: the adjacency given at construction, or the copy of it that
  // holds the same counts (the old records are read from the one given at construction).
  void Commit(NodeAllocator* alloc, Adjacency* a) const;

 private:
  bool Has(uint32_t i) const { return ((edited_ >> i) & 1) != 0; }
  void Touch(uint32_t i) {
    if (Has(i)) return;
    const Adjacency::CountPair c = a_->Record(i);
    entries_[i] = c.entries;
    live_[i] = c.live;
    edited_ |= uint64_t{1} << i;
  }

  const Adjacency* a_;
  uint64_t edited_ = 0;
  uint32_t entries_[kSubgraphSize];  // valid where edited_ has a bit
  uint32_t live_[kSubgraphSize];
};

}  // namespace strata::mem
