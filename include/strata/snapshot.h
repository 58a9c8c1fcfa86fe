// Snapshot: a consistent, immutable view of the graph at one commit timestamp.
//
// A snapshot sees exactly the batches committed at or before timestamp(), whatever writes,
// flushes and compactions happen while it is held. It is safe to use from many threads at once.
// Releasing it (destroying the unique_ptr) lets the store reclaim what only it was pinning.
//
// Reads that touch disk can fail (I/O error, corruption). Calls that return Status report it
// directly; calls that return a value record the first failure, which status() returns, so a
// long analysis checks status() once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/function_ref.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

enum class Direction : unsigned char { kOut = 0, kIn = 1 };

// A run of neighbors, in ascending destination order. `weight` is null for unweighted stores
// (every weight reads as 1.0). The arrays are valid only during the callback.
struct NeighborChunk {
  const VertexId* dst;
  const double* weight;
  size_t size;
};

// What a ScanAdjacency visitor wants next.
enum class ScanStep : uint8_t {
  kMore,        // the vertex's next chunk
  kNextVertex,  // skip the rest of this vertex's list
  kStop,        // end the scan
};

// A set of vertex IDs as a bitmap: u is in it iff bit u % 64 of words[u / 64] is set (clear,
// when `complement`: the complement of a set costs nothing to pass). The caller owns the words.
struct VertexBitmap {
  const uint64_t* words = nullptr;
  bool complement = false;
  bool Contains(VertexId u) const { return (((words[u >> 6] >> (u & 63)) & 1) != 0) != complement; }
  // Membership of IDs [64k, 64k + 64), bit i for 64k + i.
  uint64_t Group(uint64_t k) const { return complement ? ~words[k] : words[k]; }
};

// What a ScanAdjacency pass over a bitmap of vertices reads.
struct AdjacencyScan {
  VertexBitmap want;     // the vertices whose lists are read
  bool weights = false;  // chunks carry weights (else NeighborChunk::weight is null)
  // false: each list merged from its runs, destinations ascending, each once. true: a list
  // whose runs hold no tombstone comes run after run, without the merge (each chunk ascending,
  // the list not), and an entry stored in several runs (re-inserted since it reached a deeper
  // level) comes once per run, with that run's weight; never a deleted edge. For visitors that
  // only test or mark neighbors (BFS): a vertex on two levels costs no merge.
  bool any_order = false;
};

class Snapshot {
 public:
  virtual ~Snapshot() = default;
  Snapshot() = default;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  virtual Timestamp timestamp() const = 0;
  virtual GraphKind kind() const = 0;
  virtual bool weighted() const = 0;

  // --- Vertices.
  virtual bool HasVertex(VertexId v) const = 0;
  // Every existing vertex is < VertexIdBound(); size dense per-vertex arrays with it.
  virtual VertexId VertexIdBound() const = 0;
  virtual uint64_t NumVertices() const = 0;
  // Calls fn(v) for each existing vertex in [begin, end), ascending, until fn returns false.
  virtual Status ScanVertices(VertexId begin, VertexId end,
                              FunctionRef<bool(VertexId)> fn) const = 0;

  // --- Edges. For kUndirected stores, (u,v) and (v,u) are the same logical edge.
  // OK with *weight set, NotFound, or an error.
  virtual Status GetEdge(VertexId u, VertexId v, double* weight) const = 0;
  bool HasEdge(VertexId u, VertexId v) const;
  // Number of stored directed entries: for kUndirected, twice the logical edge count (a
  // self-loop is one entry).
  virtual uint64_t NumEdges() const = 0;

  // --- Neighbors. kIn needs kDirectedWithInEdges (kUndirected treats kIn as kOut); otherwise
  // NotSupported.
  virtual uint64_t Degree(VertexId u, Direction d = Direction::kOut) const = 0;
  // Calls fn with consecutive chunks of u's neighbors in ascending destination order until fn
  // returns false. A vertex that does not exist has no neighbors.
  virtual Status ScanNeighbors(VertexId u, Direction d,
                               FunctionRef<bool(const NeighborChunk&)> fn) const = 0;
  Status ScanNeighbors(VertexId u, FunctionRef<bool(const NeighborChunk&)> fn) const {
    return ScanNeighbors(u, Direction::kOut, fn);
  }
  // Full-graph pass: for each vertex u in [begin, end), ascending, calls fn(u, chunk) for each
  // chunk of u's neighbors (vertices without neighbors get no call) until fn returns false.
  // Streams every disk level sequentially by vertex range — the way to read a whole graph or
  // a large range; ScanNeighbors per vertex does one lookup per vertex and file instead.
  virtual Status ScanEdges(VertexId begin, VertexId end, Direction d,
                           FunctionRef<bool(VertexId u, const NeighborChunk&)> fn) const;

  // ScanEdges with control over what is read. Only vertices u with want(u) are read (the
  // others' lists are neither merged nor decoded); chunks carry weights only when `weights`
  // (else NeighborChunk::weight is null, and a weighted store's disk levels do not read their
  // weight streams); fn returns kMore for u's next chunk, kNextVertex to skip the rest of u's
  // list, kStop to end the scan. The pass for reading some lists of a range, a prefix of
  // every list (sampling, searches that stop early) or the topology alone.
  virtual Status ScanAdjacency(VertexId begin, VertexId end, Direction d, bool weights,
                               FunctionRef<bool(VertexId u)> want,
                               FunctionRef<ScanStep(VertexId u, const NeighborChunk&)> fn) const;
  // ScanAdjacency of the vertices of scan.want, whose words cover [begin, end): no call per
  // vertex, and a 64-vertex group with none of them wanted costs one word read — the pass for
  // a frontier or an unvisited set kept as a bitmap. See AdjacencyScan for what is read.
  virtual Status ScanAdjacency(VertexId begin, VertexId end, Direction d,
                               const AdjacencyScan& scan,
                               FunctionRef<ScanStep(VertexId u, const NeighborChunk&)> fn) const;

  // Degrees for schedules, without decoding edges: for each u in [begin, end) with entries in
  // direction d, ascending, fn(u, bound) until fn returns false, where bound >= the number of
  // u's neighbors, and equal to it when u's list lives in one run without deletions (a
  // compacted or never-updated vertex). Otherwise bound sums u's runs: an edge stored on two
  // levels, or deleted, counts once per run, and once per put among a memgraph's recent
  // updates (they are not looked up in its containers). A vertex with no entries gets no
  // call; a deleted vertex's older runs are not counted. Disk levels read only their vertex
  // tables.
  virtual Status ScanDegreeBounds(VertexId begin, VertexId end, Direction d,
                                  FunctionRef<bool(VertexId u, uint64_t bound)> fn) const;

  // ScanVertices and ScanDegreeBounds in one pass: for each existing vertex u in [begin, end),
  // ascending, fn(u, bound) until fn returns false, with bound as ScanDegreeBounds gives it
  // (0 for a vertex without entries in direction d). Disk levels read their vertex tables
  // once for both (out-direction and undirected stores).
  virtual Status ScanVertexDegreeBounds(VertexId begin, VertexId end, Direction d,
                                        FunctionRef<bool(VertexId u, uint64_t bound)> fn) const;

  // Frontier expansion: the neighbors of many vertices at once. For each i in [0, n), calls
  // fn(i, chunk) for each chunk of vs[i]'s neighbors (ascending destination order, the same
  // lists ScanNeighbors gives); the chunks of one i come consecutively, but the order of the
  // i's is unspecified. fn returns false to stop the whole call. Duplicates in vs are allowed
  // (each index is answered). Disk-backed snapshots read the runs of all n vertices in one
  // segment with one batch of reads in flight (io_uring, else pread), so callers should pass
  // frontiers in chunks of a few thousand: memory grows with the chunk's runs. Chunks carry
  // weights only when `weights` (else NeighborChunk::weight is null, and a weighted store's
  // disk levels do not read their weight streams, which hold 8 bytes per edge, several times
  // what the delta-coded neighbor IDs take).
  virtual Status ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d, bool weights,
                                    FunctionRef<bool(size_t i, const NeighborChunk&)> fn) const;
  Status ScanNeighborsBatch(const VertexId* vs, size_t n, Direction d,
                            FunctionRef<bool(size_t i, const NeighborChunk&)> fn) const {
    return ScanNeighborsBatch(vs, n, d, /*weights=*/true, fn);
  }

  // Convenience: the whole neighbor list (weights too when `weights` is not null).
  Status GetNeighbors(VertexId u, std::vector<VertexId>* dst,
                      std::vector<double>* weights = nullptr,
                      Direction d = Direction::kOut) const;

  // --- Set operations (triangle counting). Sorted-merge intersection, switching to a
  // search-based one when degrees differ by 10x or more (RapidStore §6.5).
  virtual uint64_t IntersectCount(VertexId u, VertexId v) const;
  virtual Status Intersect(VertexId u, VertexId v, std::vector<VertexId>* out) const;

  // First read error seen by a value-returning call, or OK.
  virtual Status status() const = 0;

  // --- Letting go early. The caller will read no vertex below v through this snapshot again
  // (nor any list of one), and its reads of them have returned: the store may reclaim what
  // only this snapshot pinned for those vertices while the rest is still read (a pass over the
  // vertices in order, such as PageRank's list cache, stops pinning what it has passed). From
  // then on a read of a vertex below the largest v given fails with Aborted (value-returning
  // calls record it for status()), NumVertices and NumEdges too, which read every vertex. Any
  // thread may call it. The default does nothing (a snapshot that pins nothing, or keeps it).
  virtual void ReleaseBelow(VertexId v) { (void)v; }
};

}  // namespace strata
