#include "graphio/generator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "graphio/edge_writer.h"

namespace strata::graphio {

namespace {

int CeilLog2(uint64_t n) { return n <= 1 ? 0 : 64 - __builtin_clzll(n - 1); }

// Uniform in [0, n) by multiply-high (Lemire); the bias is below n / 2^64.
inline uint64_t Bounded(uint64_t r, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

// (0, 1]: 53 random bits, plus one ulp so that 0 cannot occur and 1 can.
inline double UnitWeight(uint64_t r) {
  return static_cast<double>((r >> 11) + 1) * 0x1p-53;
}

}  // namespace

IndexPermutation::IndexPermutation(uint64_t n, uint64_t seed) : n_(n == 0 ? 1 : n) {
  int bits = CeilLog2(n_);
  if (bits == 0) bits = 1;
  mask_ = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  shift_ = (bits + 1) / 2;
  SplitMix64 rng(seed);
  for (int r = 0; r < 4; r++) {
    keys_[r] = rng.Next() & mask_;
    mults_[r] = rng.Next() | 1;
  }
}

const char* GraphModelName(GraphModel m) {
  switch (m) {
    case GraphModel::kKronecker:
      return "kronecker";
    case GraphModel::kUniform:
      return "uniform";
  }
  return "unknown";
}

Status ParseGraphModel(std::string_view name, GraphModel* model) {
  if (name == "kronecker" || name == "graph500" || name == "rmat") {
    *model = GraphModel::kKronecker;
  } else if (name == "uniform" || name == "random" || name == "er") {
    *model = GraphModel::kUniform;
  } else {
    return Status::InvalidArgument("unknown graph model '" + std::string(name) +
                                   "' (expected kronecker or uniform)");
  }
  return Status::OK();
}

// An insert-only open-addressing set of (src, dst) pairs, linear probing, load <= 0.7.
// Pairs are packed into one uint64 (src << bits | dst) when 2 * bits <= 63, so that the
// all-ones word is never a key and can mark empty slots; otherwise two words per slot, with
// src == all-ones (never a vertex ID, as n <= 2^62) marking empty slots.
class EdgeGenerator::PairSet {
 public:
  explicit PairSet(int id_bits) : bits_(id_bits), packed_(2 * id_bits <= 63) { Rehash(1024); }

  // True if (src, dst) was not in the set (and now is).
  bool Insert(uint64_t src, uint64_t dst) {
    if ((size_ + 1) * 10 > capacity_ * 7) Rehash(capacity_ * 2);
    if (InsertNoGrow(src, dst)) {
      size_++;
      return true;
    }
    return false;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  bool InsertNoGrow(uint64_t src, uint64_t dst) {
    const uint64_t mask = capacity_ - 1;
    if (packed_) {
      const uint64_t key = (src << bits_) | dst;
      for (uint64_t i = Mix64(key) & mask;; i = (i + 1) & mask) {
        if (one_[i] == key) return false;
        if (one_[i] == kEmpty) {
          one_[i] = key;
          return true;
        }
      }
    }
    for (uint64_t i = Mix64(src * 0x9e3779b97f4a7c15ULL ^ dst) & mask;; i = (i + 1) & mask) {
      if (two_[2 * i] == src && two_[2 * i + 1] == dst) return false;
      if (two_[2 * i] == kEmpty) {
        two_[2 * i] = src;
        two_[2 * i + 1] = dst;
        return true;
      }
    }
  }

  void Rehash(uint64_t capacity) {
    std::vector<uint64_t> one, two;
    one.swap(one_);
    two.swap(two_);
    capacity_ = capacity;
    if (packed_) {
      one_.assign(capacity, kEmpty);
      for (uint64_t k : one) {
        if (k != kEmpty) InsertNoGrow(k >> bits_, k & ((uint64_t{1} << bits_) - 1));
      }
    } else {
      two_.assign(2 * capacity, kEmpty);
      for (size_t i = 0; i < two.size(); i += 2) {
        if (two[i] != kEmpty) InsertNoGrow(two[i], two[i + 1]);
      }
    }
  }

  const int bits_;
  const bool packed_;
  uint64_t capacity_ = 0;  // power of two
  uint64_t size_ = 0;
  std::vector<uint64_t> one_;  // packed keys
  std::vector<uint64_t> two_;  // (src, dst) pairs
};

EdgeGenerator::EdgeGenerator(const GeneratorOptions& options) : options_(options) {}
EdgeGenerator::~EdgeGenerator() = default;

Status EdgeGenerator::New(const GeneratorOptions& o, std::unique_ptr<EdgeGenerator>* out) {
  if (o.scale < 1 || o.scale > 62) {
    return Status::InvalidArgument("generator: scale must be in [1, 62], got " +
                                   std::to_string(o.scale));
  }
  if (o.model == GraphModel::kKronecker && o.num_vertices != 0) {
    return Status::InvalidArgument(
        "generator: num_vertices is for the uniform model; Kronecker has 2^scale vertices");
  }
  if (o.num_vertices > (uint64_t{1} << 62)) {
    return Status::InvalidArgument("generator: num_vertices must be at most 2^62");
  }
  if (o.model == GraphModel::kKronecker) {
    const double d = 1.0 - o.a - o.b - o.c;
    if (!(o.a >= 0 && o.b >= 0 && o.c >= 0 && d >= -1e-12) || !std::isfinite(o.a + o.b + o.c)) {
      return Status::InvalidArgument(
          "generator: Kronecker a, b, c must be >= 0 with a + b + c <= 1");
    }
  }
  uint64_t m = o.num_edges;
  if (m == 0) {
    if (o.edge_factor > (~uint64_t{0} >> o.scale)) {
      return Status::InvalidArgument("generator: edge_factor * 2^scale overflows 64 bits");
    }
    m = o.edge_factor << o.scale;
  }
  if (o.begin > o.end) {
    return Status::InvalidArgument("generator: begin must not exceed end");
  }

  std::unique_ptr<EdgeGenerator> g(new EdgeGenerator(o));
  g->num_vertices_ = o.num_vertices != 0 ? o.num_vertices : uint64_t{1} << o.scale;
  g->num_edges_ = m;
  // Independent keys per purpose, all derived from the one seed.
  const uint64_t base = Mix64(o.seed);
  g->edge_key_ = Mix64(base + 1);
  g->vertex_perm_ = IndexPermutation(g->num_vertices_, Mix64(base + 2));
  g->shuffle_ =
      IndexPermutation(m, o.shuffle_seed != 0 ? Mix64(o.shuffle_seed ^ 0x5bd1e995) : Mix64(base + 3));
  const double two32 = 4294967296.0;
  g->t_a_ = static_cast<uint64_t>(o.a * two32);
  g->t_ab_ = static_cast<uint64_t>((o.a + o.b) * two32);
  g->t_abc_ = static_cast<uint64_t>(std::fmin(o.a + o.b + o.c, 1.0) * two32);
  g->pos_ = std::min(o.begin, m);
  g->end_ = std::min(o.end, m);
  if (o.remove_duplicates) {
    g->seen_ = std::make_unique<PairSet>(std::max(1, CeilLog2(g->num_vertices_)));
  }
  *out = std::move(g);
  return Status::OK();
}

Edge EdgeGenerator::EdgeAtIndex(uint64_t index) const {
  SplitMix64 rng(Mix64(edge_key_ + index));
  Edge e;
  if (options_.model == GraphModel::kKronecker) {
    // Level l (0-based, in draw order) decides bit scale-1-l of src and dst; each 64-bit draw
    // serves two levels, low 32 bits first. Branch-free quadrant choice on a 32-bit uniform u:
    // src bit = (u >= t_ab) (quadrant c or d), dst bit = (u >= t_a) ^ (u >= t_ab) ^ (u >= t_abc)
    // (quadrant b or d).
    const uint64_t ta = t_a_, tab = t_ab_, tabc = t_abc_;
    uint64_t src = 0, dst = 0;
    auto level = [&](uint64_t u) {
      const uint64_t ge_ab = u >= tab;
      src = (src << 1) | ge_ab;
      dst = (dst << 1) | ((u >= ta) ^ ge_ab ^ (u >= tabc));
    };
    int remaining = options_.scale;
    for (; remaining >= 2; remaining -= 2) {
      const uint64_t r = rng.Next();
      level(r & 0xffffffffULL);
      level(r >> 32);
    }
    if (remaining == 1) level(rng.Next() & 0xffffffffULL);
    e.src = src;
    e.dst = dst;
  } else {
    e.src = Bounded(rng.Next(), num_vertices_);
    e.dst = Bounded(rng.Next(), num_vertices_);
  }
  e.weight = options_.weighted ? UnitWeight(rng.Next()) : 1.0;
  if (options_.permute_vertices) {
    e.src = vertex_perm_(e.src);
    e.dst = vertex_perm_(e.dst);
  }
  return e;
}

bool EdgeGenerator::Next(Edge* edge) {
  while (pos_ < end_) {
    Edge e = EdgeAtPosition(pos_++);
    stats_.generated++;
    if (options_.remove_self_loops && e.src == e.dst) {
      stats_.self_loops_removed++;
      continue;
    }
    if (seen_ && !seen_->Insert(e.src, e.dst)) {
      stats_.duplicates_removed++;
      continue;
    }
    stats_.emitted++;
    *edge = e;
    return true;
  }
  return false;
}

bool EdgeGenerator::NextBatch(std::vector<Edge>* batch, size_t max) {
  batch->clear();
  if (max == 0) max = 1;
  Edge e;
  while (batch->size() < max && Next(&e)) batch->push_back(e);
  return !batch->empty();
}

Status WriteGeneratedEdges(EdgeGenerator* generator, EdgeWriter* writer, uint64_t* written) {
  std::vector<Edge> batch;
  batch.reserve(size_t{1} << 16);
  uint64_t n = 0;
  while (generator->NextBatch(&batch, size_t{1} << 16)) {
    Status s = writer->AddEdges(batch);
    if (!s.ok()) return s;
    n += batch.size();
  }
  if (written != nullptr) *written = n;
  return Status::OK();
}

}  // namespace strata::graphio
