// Analytics kernels over a Snapshot: the LDBC Graphalytics kernels (BFS, PageRank, SSSP, WCC,
// CDLP, LCC), triangle counting, k-hop neighborhoods and a full scan of the adjacency lists.
// Every kernel runs in parallel (oneTBB) and reads the snapshot only.
//
//   std::unique_ptr<strata::Snapshot> snap = db->GetSnapshot();
//   strata::analytics::BfsParams p;
//   p.source = 42;
//   std::vector<int64_t> depth;
//   strata::Status s = strata::analytics::Bfs(*snap, p, &depth);
//
// Conventions of every kernel:
//  - results are dense vectors indexed by internal vertex ID, sized snapshot.VertexIdBound();
//    a position whose vertex does not exist holds the kernel's "absent" marker (documented per
//    kernel: kUnreachable / kInfinity / 0 / kNoLabel);
//  - a kernel returns the first read error of any task, else snapshot.status(), so a failed read
//    never yields a silently wrong result;
//  - kernels see the graph induced by the existing vertices: a neighbor that does not exist is
//    skipped (a kDirected store keeps the edges into a deleted vertex), so degrees that matter
//    (PageRank) are counted from scans, not taken from Degree(). A neighbor >= VertexIdBound()
//    is Corruption (never an out-of-bounds write).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "strata/snapshot.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::analytics {

// ---- Markers and defaults

// Graphalytics "infinity" for BFS depths (printed as 9223372036854775807).
inline constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::max();
// Graphalytics "infinity" for SSSP distances.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Label of a vertex that does not exist (WCC, CDLP).
inline constexpr VertexId kNoLabel = std::numeric_limits<VertexId>::max();

// Vertices per Snapshot::ScanNeighborsBatch call in frontier-driven kernels (BFS, SSSP,
// k-hop): their `fetch_batch` parameter. 0 reads one vertex at a time (ScanNeighbors).
inline constexpr size_t kDefaultFetchBatch = 1024;

// Cost model for choosing between reading some vertices' lists by batched lookups and
// streaming every list of a range: one lookup costs about as much as decoding this many edges
// (the `lookup_cost_edges` parameter of BFS and SSSP).
inline constexpr uint64_t kLookupCostEdges = 512;

// ---- Scan: read every neighbor of every vertex once (the storage-bound baseline of all kernels)

struct ScanResult {
  uint64_t vertices = 0;    // existing vertices visited
  uint64_t edges = 0;       // entries as the store returns them (2x logical if undirected;
                            // on kDirected stores, edges into deleted vertices included)
  uint64_t dst_sum = 0;     // sum of neighbor IDs, modulo 2^64 (a checksum)
  double weight_sum = 0;    // sum of weights (1.0 each when unweighted), summed in range order
};

// Scans the `direction` neighbors of every existing vertex, ranges in parallel.
Status Scan(const Snapshot& snap, Direction direction, ScanResult* result);

// ---- Breadth-first search (Graphalytics BFS): depth of every vertex from a source over
// out-edges

// What a search did, step by step (BfsParams::stats): for tuning and for `strata analyze
// --stats`. Step k expands the vertices at depth k.
struct BfsStep {
  bool bottom_up = false;
  uint64_t frontier = 0;  // vertices at depth k
  uint64_t found = 0;     // vertices given depth k + 1
  double seconds = 0;
};
struct BfsStats {
  double layout_seconds = 0;  // degrees, ranges, the depth array (and the list cache, if kept)
  std::vector<BfsStep> steps;
};

struct BfsParams {
  VertexId source = 0;
  // Direction-optimizing thresholds (Beamer et al.): go bottom-up when the frontier's out-edges
  // exceed (unexplored edges) / alpha; return top-down when the frontier shrinks below n / beta.
  // Bottom-up needs in-edges, so kDirected stores always run top-down.
  // alpha is 4, not Beamer's 15: on a CSR a bottom-up step costs little per vertex that finds
  // no parent, here it decodes that vertex's whole list, while a top-down step over a large
  // frontier streams just the frontier's lists.
  int alpha = 4;
  int beta = 18;
  // Vertices per batched neighbor read (kDefaultFetchBatch): frontier vertices in top-down
  // steps, unvisited low-degree vertices of a range in bottom-up steps. 0 reads one vertex at a
  // time.
  size_t fetch_batch = kDefaultFetchBatch;
  // Cost model of reading lists by batched lookups or by streaming a range (kLookupCostEdges:
  // one lookup costs about as much as decoding this many edges): bottom-up steps stream a
  // range when its unvisited vertices' lookups would cost more, top-down steps when its
  // frontier vertices' would. Tests set it to force either way.
  uint64_t lookup_cost_edges = kLookupCostEdges;
  // Most bytes of out-lists kept decoded in memory (about 4 bytes per edge), collected during
  // the layout's pass: top-down steps read the frontier's lists from it, and on undirected
  // stores (in-lists = out-lists) bottom-up steps too; vertices left out are read from the
  // store (batched lookups). 0 (the default): every step reads the store. Off by default
  // because a BFS reads most lists about once: filling the cache costs more than it saves.
  size_t cache_bytes = 0;
  // Most bytes of unvisited vertices' in-lists kept between bottom-up steps (4 bytes per edge
  // and 8 per vertex, twice that when vertex IDs pass 32 bits; counted by capacity, so a range
  // being filled may pass it by up to its own size before it is dropped). A bottom-up step that
  // streams a range reads the whole list of every vertex that finds no parent; those vertices
  // are the next step's work, so their lists are kept and the range's next steps read only
  // them, from memory. A range whose lists do not fit is read from the store as before.
  // 0: never kept.
  size_t unvisited_bytes = size_t{256} << 20;
  // When not null, filled with the search's layout time and steps.
  BfsStats* stats = nullptr;
};

// (*depth)[v] = hops from source to v; kUnreachable for vertices not reached and for vertices
// that do not exist. InvalidArgument if the source does not exist.
Status Bfs(const Snapshot& snap, const BfsParams& params, std::vector<int64_t>* depth);

// ---- PageRank with the Graphalytics semantics (spec §2.3.2): a fixed number of iterations,
// the rank of sink vertices (no out-edges) redistributed uniformly over all vertices

// A cache_bytes the kernel sizes itself when it runs: AutoCacheBytes(). Any kernel's
// cache_bytes takes it; it is PageRank's default (the others default to fixed sizes).
inline constexpr size_t kAutoCacheBytes = ~size_t{0};
// What kAutoCacheBytes stands for, read now: a quarter of the memory this process may still
// allocate (the system's MemAvailable, within its memory cgroup's limits), and at least
// 256 MiB (the fixed default before; also what it gives when that memory cannot be read).
size_t AutoCacheBytes();

// The kernels' scratch memory now (their list caches, layouts and per-vertex arrays, which come
// from one jemalloc arena that keeps freed pages a few seconds for the next kernel): bytes
// resident, in use, and freed but kept. All 0 in builds without jemalloc. Refreshes jemalloc's
// statistics (a process-wide step; every call, so a caller may read other arenas' figures of
// the same snapshot after it): for monitoring, not for a hot path.
struct KernelMemoryStats {
  size_t resident = 0;
  size_t allocated = 0;
  size_t retained = 0;
};
KernelMemoryStats GetKernelMemoryStats();

// What a PageRank run did (PageRankParams::stats).
// How a kernel's list cache keeps the lists it holds (analytics/list_cache.h): packed, each
// list as its gaps in 0-4 bytes each (analytics/packed_list.h; 71 MiB instead of 124 for the
// scale-20 Kronecker graph's 31 M entries, so a budget keeps nearly twice the lists), at the
// price of a decode per entry on every read (PageRank over a fully cached 2^20-vertex
// memgraph: 1.27x the time at 20 iterations; docs/benchmarks.md, "Issue 28: packed list-cache
// blocks").
//   kAuto    pack only when the lists will not fit the budget unpacked (estimated as they
//            are collected); blocks not packed keep 3-byte IDs when every ID is below 2^24
//            (3 bytes an entry instead of 4, read as they are: no slower; docs/benchmarks.md,
//            "Issue 28: three-byte IDs in PageRank's list cache"), and in them lists of 256
//            IDs or more as 16-bit low halves in runs of one high part (76 instead of 94 MiB
//            at scale 20; "Issue 28: long lists as 16-bit runs");
//   kNever   never pack, 4-byte IDs;
//   kAlways  pack every block (measurement, or a budget known to be short).
enum class ListPacking : uint8_t { kAuto, kNever, kAlways };

struct PageRankStats {
  size_t cache_budget = 0;     // the list cache's budget (kAutoCacheBytes resolved)
  size_t cache_bytes = 0;      // bytes of lists it kept
  uint64_t streamed_blocks = 0;  // blocks of 4096 vertices whose lists did not fit: every
                                 // iteration read them from the snapshot
  uint64_t packed_blocks = 0;    // blocks kept packed (ListPacking)
  // PageRank on a snapshot it owns: whether it let the snapshot go before its iterations (the
  // cache held every list).
  bool snapshot_released = false;
  // PageRank on a snapshot it owns, over out-lists: the blocks of 4096 vertices it released
  // (Snapshot::ReleaseBelow) during its layout's pass, as their lists were kept (a prefix).
  uint64_t released_blocks = 0;
  // Whether the iterations read the degrees as the cached lists' lengths (every out-list
  // kept, none packed, no edges into deleted vertices) instead of an array of them.
  bool degrees_from_cache = false;
  // Whether the gathers read the vertices renumbered by degree group (PageRankParams::
  // group_by_degree), and the wall seconds of grouping them (in prepare_seconds).
  bool grouped = false;
  double group_seconds = 0;
  // Wall seconds before the first iteration: the layout's pass over the snapshot and the
  // list cache's completion (what a CSR kernel does not pay; the rest is the iterations).
  double prepare_seconds = 0;
  // Wall seconds of the iterations themselves (their arrays' setup included).
  double iterate_seconds = 0;
};

struct PageRankParams {
  double damping = 0.85;
  int iterations = 20;
  // Most bytes of decoded neighbor lists kept in memory between iterations (3 or 4 bytes per
  // directed edge, as `packing` says, plus 16 KiB per 4096 vertices); the rest is streamed
  // from the snapshot every iteration, which at 20 iterations made a PageRank on a 128
  // M-entry memgraph twice as slow (docs/benchmarks.md, "Issue 28: PageRank at scale 22 is
  // the list cache's budget").
  // The cache never holds more than the lists, so an in-memory graph costs at most its lists'
  // 3-4 bytes per edge again; the budget bounds it on stores larger than memory. 0: stream all.
  // kAutoCacheBytes (the default): AutoCacheBytes() when the run starts.
  size_t cache_bytes = kAutoCacheBytes;
  // Pull mode: kept in-lists are read this many vertices at a time, interleaved as coroutines
  // that prefetch the contributions a piece of a list gathers and suspend (GastCoCo); 1 reads
  // one vertex after another (no coroutines). Same ranks, to the last bit, for any value.
  size_t interleave = 1;
  // With interleave > 1: whether the coroutines prefetch (false: suspend only; an ablation).
  bool interleave_prefetch = true;
  // How the cached lists are kept (ListPacking): by default packed only when they would not
  // fit cache_bytes unpacked. Same ranks, to the last bit, either way.
  ListPacking packing = ListPacking::kAuto;
  // Pull mode, past 2^21 vertices: the in-lists are read with the vertices renumbered by
  // degree group (the highest degrees first, analytics/degree_groups.h), so the
  // contributions gathered most often share a small, cached prefix of their array. Ranks come
  // out in the store's IDs either way; the sums over a list run in another order, so they may
  // differ from a run without it in the last bits (within the bound below). Same ranks, to the
  // last bit, for any cache_bytes, interleave and packing with it. At scale 22 it made
  // PageRank 1.04-1.42x as fast, for 1 byte a vertex through the iterations (4 while the
  // cache fills) and a longer prepare phase; a reader beside a writer peaked no higher than
  // without it (docs/benchmarks.md, "Issue 28: PageRank's gathers by degree group" and "the
  // degree groups by default").
  bool group_by_degree = true;
  // When not null, filled with what the run's list cache held.
  PageRankStats* stats = nullptr;
};

// (*rank)[v] = PR_iterations(v); 0 for vertices that do not exist. Their sum is 1 (up to
// rounding) when the graph has vertices. Ranks are kept in single precision between
// iterations (sums in double): after t iterations each is within 2^-24 * (2t + 1) of the
// exact ranks, relatively (2.4e-6 at 20). Whatever *rank held is freed when the run starts.
// Pull-based when the store answers in-edges (kDirectedWithInEdges, kUndirected); push-based
// over out-edges for kDirected, with one private accumulator array per partition of the
// sources (no atomics on doubles). Deterministic for a given thread count.
Status PageRank(const Snapshot& snap, const PageRankParams& params, std::vector<double>* rank);

// PageRank on a snapshot the kernel owns: the same ranks as PageRank(*snap, ...), but the
// snapshot is destroyed — ending its hold on the versions writers replace after its
// timestamp — as soon as the list cache holds every list, before the iterations (which then
// read only the cache); else when the run ends. For a reader beside writers that takes a
// snapshot for one PageRank: held to the end, it kept every version the writers replaced
// meanwhile (docs/benchmarks.md, "Issue 28: PageRank lets its snapshot go"). Null snap:
// InvalidArgument.
Status PageRank(std::unique_ptr<Snapshot> snap, const PageRankParams& params,
                std::vector<double>* rank);

// ---- Single-source shortest paths (Graphalytics SSSP) by delta-stepping over out-edges

struct SsspParams {
  VertexId source = 0;
  // Bucket width. 0 picks one: 1.0 for unweighted stores (every weight is 1.0), else the mean
  // weight of a sample of edges.
  double delta = 0;
  // Bucket vertices per batched neighbor read (kDefaultFetchBatch); 0 reads one vertex at a time.
  size_t fetch_batch = kDefaultFetchBatch;
  // Most bytes of decoded lists kept in memory, collected in one pass over the lists: the light
  // edges (weight < delta, 16 bytes each; about 1.5x their sampled share of the edges, at most
  // half of this) for the light/heavy split, and the rest for out-lists with their weights
  // (the shortest lists, about 12 bytes per edge plus 4 per vertex), so buckets read only the
  // other lists from the store. 0: no split, and every bucket reads the store.
  size_t cache_bytes = size_t{256} << 20;
  // Cost model of a bucket's reads (with fetch_batch > 0): a vertex range whose bucket
  // vertices' lookups would cost more than streaming the range (an eighth of its edges for the
  // lists skipped, all of the bucket's) is streamed (Snapshot::ScanAdjacency), where one lookup
  // counts as decoding this many edges. 0 never streams; a huge value streams every range.
  uint64_t lookup_cost_edges = kLookupCostEdges;
  // Lists held in memory (the light edges, the lists the cache keeps) are relaxed this many
  // vertices at a time, interleaved as coroutines (util/coro.h, GastCoCo): each prefetches the
  // next link of its chain (the list's offsets, the list, its neighbors' dist entries 16 at a
  // time) and suspends. 1: one vertex after another. Lists read from the store are relaxed as
  // they come either way. Same distances for any value.
  size_t interleave = 1;
  // Software prefetch of the sequential relaxations: dist[] of the neighbor this many entries
  // ahead in a list (the first ones before the loop), and with interleave 1, for lists in
  // memory, a pipeline over the vertices: the offsets of the one 12 places ahead, the list of
  // the one 8 ahead, the first dist entries of the one 4 ahead. 0: none.
  size_t prefetch_distance = 16;
};

// (*dist)[v] = length of a shortest path from source to v (sum of weights); kInfinity for
// unreachable and absent vertices. InvalidArgument if the source does not exist or a weight is
// negative or NaN.
Status Sssp(const Snapshot& snap, const SsspParams& params, std::vector<double>* dist);

// ---- Weakly connected components (Graphalytics WCC): edge directions are ignored

struct WccParams {
  // Afforest: neighbors per vertex linked in the sampling rounds before the largest component
  // is identified and skipped.
  int sampling_rounds = 2;
  // Most bytes of out-lists kept decoded in memory (about 4 bytes per edge), collected during
  // the layout's pass, so the second phase links them from memory and reads only the lists
  // left out from the store. 0 (the default): the second phase reads the store. Off by
  // default: the second phase skips the largest component, so it reads few lists, and keeping
  // all of them costs more than it saves.
  size_t cache_bytes = 0;
  // Sampling rounds without a list cache: each batch of sampled edges is linked this many
  // edges at a time, interleaved as coroutines that prefetch every parent read of their finds
  // and suspend (GastCoCo); 1 links them in order after prefetching two levels of parents.
  // Same labels for any value.
  size_t interleave = 1;
  // With interleave > 1: whether the coroutines prefetch (false: suspend only; an ablation).
  bool interleave_prefetch = true;
};

// (*label)[v] = the smallest vertex ID of v's component (so two vertices share a label iff they
// are weakly connected); kNoLabel for absent vertices. Afforest-style concurrent union-find:
// link a few neighbors per vertex, find the largest component by sampling, then link the
// remaining edges of the other vertices. kDirected stores cannot skip the largest component
// (an edge into it is only seen from its source), so every out-edge is linked there.
Status Wcc(const Snapshot& snap, const WccParams& params, std::vector<VertexId>* label);

// ---- Community detection by label propagation (Graphalytics CDLP): synchronous,
// deterministic

struct CdlpParams {
  int max_iterations = 10;
  // Initial label of each vertex, indexed by internal ID (e.g. the external IDs, so that ties
  // resolve as Graphalytics resolves them on the original IDs). Null: the internal ID.
  const std::vector<uint64_t>* initial_labels = nullptr;
};

// (*label)[v] = L_k(v) after k = max_iterations synchronous rounds; kNoLabel for absent
// vertices. Each round a vertex takes the most frequent label among its in- and out-neighbors
// (on directed graphs a neighbor linked both ways counts twice; on undirected graphs each
// neighbor counts once, which selects the same label), the smallest on ties, and keeps its own
// label without neighbors. Stops early at a fixed point (later rounds would change nothing).
// kDirected stores get their in-neighbors from a transposed copy built once (O(E) memory).
Status Cdlp(const Snapshot& snap, const CdlpParams& params, std::vector<uint64_t>* label);

// ---- Triangle kernels: local clustering coefficient (Graphalytics LCC) and triangle counting
//
// Both work on the undirected neighborhood N(v) = (N_out(v) ∪ N_in(v)) \ {v}; kDirected stores
// get their in-neighbors from a transposed copy built once (O(E) memory). Self-loops are
// ignored. Memory: an in-memory orientation of the graph relabeled by degree, a 4-byte rank +
// one byte per undirected edge and at most 28 bytes per vertex; NotSupported past 2^32 - 2
// vertices with neighbors.

// (*lcc)[v] = |{(u, w) : u, w ∈ N(v), u != w, (u, w) ∈ E}| / (|N(v)| (|N(v)| - 1)), 0 when
// |N(v)| <= 1 and for absent vertices. Directions count between neighbors: on a directed graph
// (u, w) and (w, u) are two possible edges; on an undirected one each neighbor pair counts twice
// over twice as many ordered pairs.
Status Lcc(const Snapshot& snap, std::vector<double>* lcc);

// Number of triangles {u, v, w} of the underlying undirected simple graph.
Status TriangleCount(const Snapshot& snap, uint64_t* triangles);

// How the triangle enumeration (N+(a) ∩ N+(b) for each b ∈ N+(a), over the in-memory
// orientation) reaches each b's list, which is a random read: b's offsets, then its IDs.
struct TriangleParams {
  // Vertices a whose pairs are intersected this many at a time, interleaved as coroutines that
  // prefetch b's offsets and then b's list and suspend after each (GastCoCo); 1: one pair after
  // another. Same triangles, in the same order per vertex a, for any value.
  size_t interleave = 1;
  // With interleave > 1: whether the coroutines prefetch (false: suspend only; an ablation).
  bool interleave_prefetch = true;
  // With interleave 1: a prefetch pipeline over the pairs of a block of vertices (contiguous
  // in the orientation): the offsets of the b this many pairs ahead, the list of the b half as
  // far ahead. 0: none.
  size_t prefetch_distance = 16;
};
Status Lcc(const Snapshot& snap, const TriangleParams& params, std::vector<double>* lcc);
Status TriangleCount(const Snapshot& snap, const TriangleParams& params, uint64_t* triangles);

// ---- k-hop neighborhood: the vertices within k hops of a source

struct KHopParams {
  VertexId source = 0;
  int k = 2;
  Direction direction = Direction::kOut;  // kIn needs in-edges (NotSupported otherwise)
  // Frontier vertices per batched neighbor read (kDefaultFetchBatch); 0 reads one at a time.
  size_t fetch_batch = kDefaultFetchBatch;
};

// *out = every vertex at distance <= k from source (the source included), ascending. Memory is
// proportional to the result, not to the graph: meant for point queries on large graphs.
// InvalidArgument if the source does not exist.
Status KHop(const Snapshot& snap, const KHopParams& params, std::vector<VertexId>* out);

}  // namespace strata::analytics
