// Basic vocabulary shared by the public API and the engine.
#pragma once

#include <cstdint>
#include <limits>

namespace strata {

// Internal vertex IDs are dense 64-bit integers: subgraph s holds vertices [64s, 64s+64).
// Sparse external IDs are mapped to dense ones by the tools' persisted dictionary.
using VertexId = uint64_t;

// Logical commit timestamps. A snapshot at t sees exactly the batches committed at or before t.
using Timestamp = uint64_t;

inline constexpr Timestamp kMaxTimestamp = std::numeric_limits<Timestamp>::max();

// Fixed when a store is created (docs/design.md, "Data model").
enum class GraphKind : unsigned char {
  kDirected = 0,             // out-edges only
  kDirectedWithInEdges = 1,  // out-edges and a mirrored in-edge index
  kUndirected = 2,           // each logical edge {u,v} stored as (u,v) and (v,u)
};

const char* GraphKindName(GraphKind k);

}  // namespace strata
