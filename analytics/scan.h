// SCAN: read every neighbor of every vertex once (the storage-bound baseline of all kernels).
#pragma once

#include <cstdint>

#include "analytics/common.h"

namespace strata::analytics {

struct ScanResult {
  uint64_t vertices = 0;    // existing vertices visited
  uint64_t edges = 0;       // entries as the store returns them (2x logical if undirected;
                            // on kDirected stores, edges into deleted vertices included)
  uint64_t dst_sum = 0;     // sum of neighbor IDs, modulo 2^64 (a checksum)
  double weight_sum = 0;    // sum of weights (1.0 each when unweighted), summed in range order
};

// Scans the `direction` neighbors of every existing vertex, ranges in parallel.
Status Scan(const Snapshot& snap, Direction direction, ScanResult* result);

}  // namespace strata::analytics
