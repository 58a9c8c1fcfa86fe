// Digests of a graph's vertices and edges (with weights) in ascending order: for comparing a
// snapshot with the model state it should show, or for finding which of many model states it
// shows, without keeping either (concurrency_test's model-checked readers, the no-log prefix of
// disk_differential_test's device faults).
#pragma once

#include <cstdint>
#include <cstring>

#include "strata/snapshot.h"
#include "tests/util/reference_graph.h"

namespace strata::testing {

struct Digest {
  uint64_t h = 0x9e3779b97f4a7c15;
  uint64_t n = 0;
  void Add(uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9;
    ++n;
  }
  void AddEdge(VertexId u, VertexId v, double w) {
    uint64_t bits;
    std::memcpy(&bits, &w, sizeof(bits));
    Add(u);
    Add(v);
    Add(bits);
  }
  bool operator==(const Digest& o) const { return h == o.h && n == o.n; }
};

// Vertices [0, limit), then edges out (and in, on kDirectedWithInEdges) of a snapshot.
inline Digest SnapshotDigest(const Snapshot& s, VertexId limit, bool with_in) {
  Digest d;
  s.ScanVertices(0, limit, [&](VertexId v) {
    d.Add(v);
    return true;
  });
  for (int in = 0; in < (with_in ? 2 : 1); ++in) {
    d.Add(~uint64_t{0});  // direction separator
    Status st = s.ScanEdges(0, limit, in ? Direction::kIn : Direction::kOut,
                            [&](VertexId u, const NeighborChunk& c) {
                              for (size_t i = 0; i < c.size; ++i) {
                                d.AddEdge(u, c.dst[i], c.weight ? c.weight[i] : 1.0);
                              }
                              return true;
                            });
    if (!st.ok()) d.Add(0xdead);  // never equal to a model's
  }
  return d;
}

inline Digest ModelDigest(const ReferenceGraph& m, VertexId limit, bool with_in) {
  Digest d;
  for (VertexId v : m.vertices()) {
    if (v < limit) d.Add(v);
  }
  d.Add(~uint64_t{0});
  for (const auto& [e, w] : m.edges()) {
    if (e.first < limit) d.AddEdge(e.first, e.second, w);
  }
  if (with_in) {
    d.Add(~uint64_t{0});
    const auto in = m.InLists(limit);
    for (VertexId u = 0; u < limit; ++u) {
      for (const auto& [x, w] : in[u]) d.AddEdge(u, x, w);
    }
  }
  return d;
}

}  // namespace strata::testing
