// RandomBatch: the random write batches of the differential tests. A third of the endpoints
// come from a small hot set, so edges are inserted, deleted and re-inserted many times.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

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
  // A vertex delete hits the hot set once in this many (0: never aimed there).
  int hot_delete_one_in = 0;
};

// Edges a generator inserted lately (the last 4096), for deletes and weight changes that hit:
// among thousands of vertices a random pair almost never names a stored edge.
struct RecentEdges {
  std::vector<std::pair<VertexId, VertexId>> ring;
  size_t next = 0;
  void Add(VertexId a, VertexId b) {
    if (ring.size() < 4096) {
      ring.emplace_back(a, b);
    } else {
      ring[next++ % ring.size()] = {a, b};
    }
  }
  const std::pair<VertexId, VertexId>& Pick(std::mt19937_64& rng) const {
    return ring[rng() % ring.size()];
  }
  const std::pair<VertexId, VertexId>& Last() const {
    return ring[(next + ring.size() - 1) % ring.size()];
  }
};

// Batches of up to 400 ops with a hot set of 64 (one subgraph's worth), no weight changes (one
// on an absent edge aborts a whole batch) and a vertex delete in one op of 100: over thousands
// of vertices, commits span dozens of subgraphs (MemGraph's pipelined build).
inline BatchMix WideBatchMix() {
  BatchMix m;
  m.max_ops = 400;
  m.hot = 64;
  m.set_weight = m.remove;
  m.add_vertex = 99;
  return m;
}

// How many seeds a randomized differential test runs each parameter with: STRATA_DIFF_SEEDS
// (for sweeps outside `make test`, e.g. under ASan), else 1 (the suite's fixed seed; a test
// derives seed k's generator from it and k, so seed 0 is the same run with or without it).
inline int DiffSeedCount() {
  const char* e = std::getenv("STRATA_DIFF_SEEDS");
  const int n = e != nullptr ? std::atoi(e) : 1;
  return n > 0 ? n : 1;
}

// The first of those seeds: STRATA_DIFF_SEED_FIRST (default 0), so that a sweep can go on where
// an earlier one stopped (seeds [first, first + DiffSeedCount())); a test derives each seed's
// generator from its number alone, so seed k is the same run in every sweep.
inline int DiffSeedFirst() {
  const char* e = std::getenv("STRATA_DIFF_SEED_FIRST");
  const int n = e != nullptr ? std::atoi(e) : 0;
  return n > 0 ? n : 0;
}
inline int DiffSeedEnd() { return DiffSeedFirst() + DiffSeedCount(); }

// With `recent`, inserts are recorded there, half of the edge deletes aim at a recorded edge,
// and weight changes at the last one recorded (most likely still stored), one in eight at an
// earlier one (perhaps deleted since: the batch then aborts), when there is one: so large
// batches with weight changes mostly land.
inline WriteBatch RandomBatch(std::mt19937_64& rng, VertexId limit, bool weighted,
                              const BatchMix& mix = BatchMix(), RecentEdges* recent = nullptr) {
  WriteBatch b;
  const int n = 1 + static_cast<int>(rng() % static_cast<uint64_t>(mix.max_ops));
  auto vertex = [&]() -> VertexId { return rng() % 3 == 0 ? rng() % mix.hot : rng() % limit; };
  const bool aim = recent != nullptr;
  for (int i = 0; i < n; ++i) {
    const int r = static_cast<int>(rng() % 100);
    const double w = weighted ? static_cast<double>(rng() % 1000) / 8.0 : 1.0;
    if (r < mix.insert) {
      const VertexId x = vertex(), y = vertex();
      b.InsertEdge(x, y, w);
      if (aim) recent->Add(x, y);
    } else if (r < mix.remove) {
      if (aim && !recent->ring.empty() && rng() % 2 == 0) {
        const auto& e = recent->Pick(rng);
        b.DeleteEdge(e.first, e.second);
      } else {
        b.DeleteEdge(vertex(), vertex());
      }
    } else if (r < mix.set_weight && weighted) {
      if (aim && !recent->ring.empty()) {
        const auto& e = rng() % 8 == 0 ? recent->Pick(rng) : recent->Last();
        b.SetWeight(e.first, e.second, w);
      } else {
        b.SetWeight(vertex(), vertex(), w);
      }
    } else if (r < mix.add_vertex) {
      b.AddVertex(rng() % limit);
    } else if (mix.hot_delete_one_in != 0 &&
               rng() % static_cast<uint64_t>(mix.hot_delete_one_in) == 0) {
      b.DeleteVertex(rng() % mix.hot);
    } else {
      b.DeleteVertex(rng() % limit);
    }
  }
  return b;
}

}  // namespace strata::testing
