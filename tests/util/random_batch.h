// RandomBatch: the random write batches of the differential tests. A third of the endpoints
// come from a small hot set, so edges are inserted, deleted and re-inserted many times.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>

#include "strata/write_batch.h"

namespace strata::testing {

// Cumulative percentages: an op is an edge insert below `insert`, an edge delete below
// `remove`, a weight change below `set_weight` (weighted stores only), a vertex insert below
// `add_vertex`, and a vertex delete otherwise.
struct BatchMix {
  int insert = 55;
  int remove = 82;
  int set_weight = 87;
  int add_vertex = 93;
  VertexId hot = 4;  // size of the hot set of endpoints
  int max_ops = 16;   // ops per batch: 1 to max_ops
};

// How many seeds a randomized differential test runs each parameter with: STRATA_DIFF_SEEDS
// (for sweeps outside `make test`, e.g. under ASan), else 1 (the suite's fixed seed; a test
// derives seed k's generator from it and k, so seed 0 is the same run with or without it).
inline int DiffSeedCount() {
  const char* e = std::getenv("STRATA_DIFF_SEEDS");
  const int n = e != nullptr ? std::atoi(e) : 1;
  return n > 0 ? n : 1;
}

inline WriteBatch RandomBatch(std::mt19937_64& rng, VertexId limit, bool weighted,
                              const BatchMix& mix = BatchMix()) {
  WriteBatch b;
  const int n = 1 + static_cast<int>(rng() % static_cast<uint64_t>(mix.max_ops));
  auto vertex = [&]() -> VertexId { return rng() % 3 == 0 ? rng() % mix.hot : rng() % limit; };
  for (int i = 0; i < n; ++i) {
    const int r = static_cast<int>(rng() % 100);
    const double w = weighted ? static_cast<double>(rng() % 1000) / 8.0 : 1.0;
    if (r < mix.insert) {
      b.InsertEdge(vertex(), vertex(), w);
    } else if (r < mix.remove) {
      b.DeleteEdge(vertex(), vertex());
    } else if (r < mix.set_weight && weighted) {
      b.SetWeight(vertex(), vertex(), w);
    } else if (r < mix.add_vertex) {
      b.AddVertex(rng() % limit);
    } else {
      b.DeleteVertex(rng() % limit);
    }
  }
  return b;
}

}  // namespace strata::testing
