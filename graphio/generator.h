// Synthetic edge streams: Graph500 Kronecker (R-MAT) and uniform random graphs.
//
// Every output is a pure function of GeneratorOptions, bit-identical on every platform: the
// randomness is splitmix64 (below), integer arithmetic only, and weights k * 2^-53. No
// std::*_distribution is used, because their output differs between standard libraries.
//
// How edges come about (docs/input-formats.md has the exact recipe):
//  - Edge index i in [0, M) is drawn independently from its own splitmix64 stream seeded by
//    (seed, i): for Kronecker, `scale` quadrant choices with probabilities a, b, c, d set one
//    bit of src and dst each; for uniform, src and dst uniform in [0, n).
//  - Vertex IDs are then relabelled by a seeded bijection of [0, n) (permute_vertices), as
//    Graph500 does, so that degree does not correlate with ID.
//  - Output position p carries edge index pi(p), where pi is a seeded bijection of [0, M)
//    (shuffle). Because both bijections are computed, not stored, generation streams in O(1)
//    memory at any scale, any range [begin, end) of positions can be produced directly
//    (e.g. "the first 80%" and "the last 20%" of one shuffled stream, or parallel chunks),
//    and shuffle_seed reorders the same multiset of edges.
//  - Defaults keep self-loops and duplicate edges, exactly like Graph500: the stream has
//    exactly M = edge_factor * 2^scale edges. The stores treat a duplicate insert as a weight
//    overwrite, so the stored graph is the same simple graph either way; self-loops are
//    stored as ordinary edges. remove_self_loops is free; remove_duplicates is the one
//    feature that is not streaming: it keeps a hash set of every pair emitted (11-23 B per
//    distinct edge while 2 * ceil(log2 n) <= 63, twice that otherwise).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "strata/status.h"
#include "graphio/edge_reader.h"

namespace strata::graphio {

class EdgeWriter;

// splitmix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// splitmix64: state advances by the golden gamma, output is Mix64(state).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ULL); }

 private:
  uint64_t state_;
};

// A seeded pseudo-random bijection of [0, n), computed in O(1) space: four rounds of
// xor-key, multiply-by-odd and xor-shift on ceil(log2 n) bits (each a bijection of
// [0, 2^bits)), cycle-walked back into [0, n). Fewer than 2 rounds-sets per call on average.
class IndexPermutation {
 public:
  IndexPermutation() : IndexPermutation(1, 0) {}
  IndexPermutation(uint64_t n, uint64_t seed);
  // Requires x < size().
  uint64_t operator()(uint64_t x) const {
    do {
      x = Round(x);
    } while (x >= n_);
    return x;
  }
  uint64_t size() const { return n_; }

 private:
  uint64_t Round(uint64_t x) const {
    for (int r = 0; r < 4; r++) {
      x = ((x ^ keys_[r]) * mults_[r]) & mask_;
      x ^= x >> shift_;
    }
    return x;
  }
  uint64_t n_;
  uint64_t mask_;
  int shift_;
  uint64_t keys_[4];
  uint64_t mults_[4];  // odd
};

enum class GraphModel : uint8_t {
  kKronecker = 0,  // Graph500 / R-MAT
  kUniform = 1,    // each endpoint uniform over the vertices (Erdos-Renyi G(n, m) with repeats)
};

const char* GraphModelName(GraphModel m);
// "kronecker" (also "graph500", "rmat") or "uniform" (also "random", "er").
Status ParseGraphModel(std::string_view name, GraphModel* model);

struct GeneratorOptions {
  GraphModel model = GraphModel::kKronecker;
  // n = 2^scale vertices, 1 <= scale <= 62.
  int scale = 16;
  // M = edge_factor * 2^scale edges (Graph500 uses 16).
  uint64_t edge_factor = 16;
  // Uniform only: n vertices instead of 2^scale (0: use scale). At most 2^62.
  uint64_t num_vertices = 0;
  // M instead of edge_factor * 2^scale (0: use edge_factor).
  uint64_t num_edges = 0;
  // Kronecker initiator; d = 1 - a - b - c. Graph500: 0.57, 0.19, 0.19, 0.05.
  double a = 0.57, b = 0.19, c = 0.19;
  uint64_t seed = 1;
  // Seed of the output order only (0: derived from seed). Changing it reorders the same edges.
  uint64_t shuffle_seed = 0;
  // Random weights in (0, 1]; otherwise every weight is 1.0.
  bool weighted = false;
  bool permute_vertices = true;
  bool shuffle = true;
  bool remove_self_loops = false;
  bool remove_duplicates = false;
  // The positions [begin, min(end, M)) of the output sequence. Filters apply within the range.
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
};

struct GeneratorStats {
  uint64_t generated = 0;           // positions consumed
  uint64_t self_loops_removed = 0;
  uint64_t duplicates_removed = 0;
  uint64_t emitted = 0;             // generated - removed
};

class EdgeGenerator {
 public:
  // InvalidArgument naming the field for an invalid combination.
  static Status New(const GeneratorOptions& options, std::unique_ptr<EdgeGenerator>* out);
  ~EdgeGenerator();
  EdgeGenerator(const EdgeGenerator&) = delete;
  EdgeGenerator& operator=(const EdgeGenerator&) = delete;

  // Replaces *batch with up to max >= 1 edges; false (and an empty batch) at the end.
  bool NextBatch(std::vector<Edge>* batch, size_t max);
  // One edge; false at the end.
  bool Next(Edge* edge);

  // The edge at output position pos < num_edges() of the unfiltered sequence.
  Edge EdgeAtPosition(uint64_t pos) const {
    return EdgeAtIndex(options_.shuffle ? shuffle_(pos) : pos);
  }
  // Draw number index < num_edges(), before shuffling (vertex IDs already permuted).
  Edge EdgeAtIndex(uint64_t index) const;

  uint64_t num_vertices() const { return num_vertices_; }
  // M: the length of the full unfiltered sequence (not of [begin, end)).
  uint64_t num_edges() const { return num_edges_; }
  // The next output position.
  uint64_t position() const { return pos_; }
  const GeneratorStats& stats() const { return stats_; }
  const GeneratorOptions& options() const { return options_; }

 private:
  class PairSet;
  explicit EdgeGenerator(const GeneratorOptions& options);

  GeneratorOptions options_;
  uint64_t num_vertices_ = 0;
  uint64_t num_edges_ = 0;
  uint64_t edge_key_ = 0;
  // Kronecker quadrant thresholds on a 32-bit uniform r: r < t_a_ is quadrant a, < t_ab_ is b,
  // < t_abc_ is c, else d.
  uint64_t t_a_ = 0, t_ab_ = 0, t_abc_ = 0;
  IndexPermutation vertex_perm_;
  IndexPermutation shuffle_;
  uint64_t pos_ = 0;
  uint64_t end_ = 0;
  GeneratorStats stats_;
  std::unique_ptr<PairSet> seen_;  // remove_duplicates only
};

// Drains `generator` into `writer` as inserts (without Finish(), so the caller may add more).
// Sets *written to the number of edges written when non-null.
Status WriteGeneratedEdges(EdgeGenerator* generator, EdgeWriter* writer,
                           uint64_t* written = nullptr);

}  // namespace strata::graphio
