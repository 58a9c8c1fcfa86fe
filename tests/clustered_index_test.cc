// Differential and structural tests of the clustered index against an ordered map.
#include "memgraph/clustered_index.h"

#include <gtest/gtest.h>

#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace strata::mem {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

struct Entry {
  uint8_t u;
  uint64_t v;
  double w;
  bool tomb;
};

inline bool KeyLess(const Entry& a, uint8_t u, uint64_t v) { return a.u != u ? a.u < u : a.v < v; }

// The reference: entries sorted by (u, v) in a flat vector (batches merge in linearly).
class Model {
 public:
  size_t size() const { return e_.size(); }
  bool empty() const { return e_.empty(); }
  const std::vector<Entry>& entries() const { return e_; }
  size_t LowerBound(uint8_t u, uint64_t v) const {
    return static_cast<size_t>(
        std::lower_bound(e_.begin(), e_.end(), 0, [&](const Entry& a, int) { return KeyLess(a, u, v); }) -
        e_.begin());
  }
  const Entry* Find(uint8_t u, uint64_t v) const {
    size_t i = LowerBound(u, v);
    return i < e_.size() && e_[i].u == u && e_[i].v == v ? &e_[i] : nullptr;
  }
  // [b, e) of u's entries.
  std::pair<size_t, size_t> Run(uint8_t u) const {
    size_t b = LowerBound(u, 0), e = b;
    while (e < e_.size() && e_[e].u == u) ++e;
    return {b, e};
  }
  // Applies sorted unique updates; returns the prior state of each key.
  std::vector<PrevState> Apply(const std::vector<ClusteredUpdate>& ups) {
    std::vector<PrevState> prev;
    std::vector<Entry> out;
    out.reserve(e_.size() + ups.size());
    size_t i = 0;
    for (const ClusteredUpdate& cu : ups) {
      while (i < e_.size() && KeyLess(e_[i], cu.u, cu.upd.key)) out.push_back(e_[i++]);
      bool match = i < e_.size() && e_[i].u == cu.u && e_[i].v == cu.upd.key;
      prev.push_back(!match ? PrevState::kAbsent : e_[i].tomb ? PrevState::kTombstone : PrevState::kLive);
      if (match) ++i;
      if (cu.upd.op != UpdateOp::kErase) {
        out.push_back({cu.u, cu.upd.key, cu.upd.weight, cu.upd.op == UpdateOp::kTombstone});
      }
    }
    out.insert(out.end(), e_.begin() + static_cast<ptrdiff_t>(i), e_.end());
    e_.swap(out);
    return prev;
  }
  // Replaces u's run; returns the number of entries removed.
  size_t ReplaceRun(uint8_t u, const std::vector<Entry>& run) {
    auto [b, e] = Run(u);
    e_.erase(e_.begin() + static_cast<ptrdiff_t>(b), e_.begin() + static_cast<ptrdiff_t>(e));
    e_.insert(e_.begin() + static_cast<ptrdiff_t>(b), run.begin(), run.end());
    return e - b;
  }

 private:
  std::vector<Entry> e_;
};

// Destination IDs mixing dense small values (many collisions), values near 0 and 2^64, values
// around 2^63 and arbitrary 64-bit values.
uint64_t RandomV(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return rng() % 16;
    case 1:
      return kMax - rng() % 16;
    case 2:
      return rng();
    case 3:
      return (uint64_t{1} << 63) - 8 + rng() % 16;
    default:
      return rng() % 20000;
  }
}

// A few hot vertices carry most entries, as with skewed degrees.
uint8_t RandomU(std::mt19937_64& rng) {
  return static_cast<uint8_t>(rng() % 4 == 0 ? rng() % 64 : rng() % 6);
}

std::vector<Entry> ModelEntries(const Model& m, bool weighted) {
  std::vector<Entry> out = m.entries();
  if (!weighted) {
    for (Entry& e : out) e.w = 1.0;
  }
  return out;
}

// Every entry through ForEachChunk, checking the chunk contract on the way.
std::vector<Entry> IndexEntries(const ClusteredIndex& idx) {
  std::vector<Entry> out;
  idx.ForEachChunk([&](uint8_t u, const uint64_t* v, const double* w, const uint8_t* t, size_t n) {
    EXPECT_GT(n, 0u);
    EXPECT_EQ(w != nullptr, idx.weighted());
    bool any_tomb = false;
    for (size_t i = 0; i < n; ++i) {
      out.push_back({u, v[i], w ? w[i] : 1.0, t ? t[i] != 0 : false});
      if (t) any_tomb |= t[i] != 0;
    }
    EXPECT_TRUE(t == nullptr || any_tomb) << "tomb pointer for a run without tombstones";
    return true;
  });
  return out;
}

void ExpectSameEntries(const std::vector<Entry>& got, const std::vector<Entry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].u == want[i].u && got[i].v == want[i].v && got[i].tomb == want[i].tomb &&
        got[i].w == want[i].w) {
      continue;
    }
    ASSERT_EQ(got[i].u, want[i].u) << i;
    ASSERT_EQ(got[i].v, want[i].v) << i;
    ASSERT_EQ(got[i].tomb, want[i].tomb) << i;
    ASSERT_EQ(got[i].w, want[i].w) << i;
  }
}

void ExpectMatches(const ClusteredIndex& idx, const Model& m) {
  std::string why;
  ASSERT_TRUE(idx.CheckInvariants(&why)) << why;
  ASSERT_EQ(idx.size(), m.size());
  ExpectSameEntries(IndexEntries(idx), ModelEntries(m, idx.weighted()));
}

// Per-vertex access paths for one vertex: ForEachInVertex, Cursor::Next, Cursor::Seek, Find.
void ExpectVertexMatches(const ClusteredIndex& idx, const Model& m, uint8_t u, std::mt19937_64& rng) {
  auto [rb, re] = m.Run(u);
  std::vector<Entry> want(m.entries().begin() + static_cast<ptrdiff_t>(rb),
                          m.entries().begin() + static_cast<ptrdiff_t>(re));
  if (!idx.weighted()) {
    for (Entry& e : want) e.w = 1.0;
  }
  std::vector<Entry> got;
  idx.ForEachInVertex(u, [&](const uint64_t* v, const double* w, const uint8_t* t, size_t n) {
    EXPECT_GT(n, 0u);
    for (size_t i = 0; i < n; ++i) got.push_back({u, v[i], w ? w[i] : 1.0, t ? t[i] != 0 : false});
    return true;
  });
  ExpectSameEntries(got, want);

  got.clear();
  for (auto c = idx.NewCursor(u); c.Valid(); c.Next()) {
    got.push_back({u, c.key(), c.weight(), c.tombstone()});
  }
  ExpectSameEntries(got, want);

  // Chunked cursor traversal.
  got.clear();
  for (auto c = idx.NewCursor(u); c.Valid();) {
    size_t n = c.ChunkSize();
    ASSERT_GT(n, 0u);
    for (size_t i = 0; i < n; ++i) {
      got.push_back({u, c.ChunkKeys()[i], c.ChunkWeights() ? c.ChunkWeights()[i] : 1.0,
                     c.ChunkTombs() ? c.ChunkTombs()[i] != 0 : false});
    }
    c.Skip(n);
  }
  ExpectSameEntries(got, want);

  // Seeks to increasing random targets agree with lower_bound on the model.
  auto c = idx.NewCursor(u);
  uint64_t target = 0;
  for (int s = 0; s < 8; ++s) {
    uint64_t t = RandomV(rng);
    if (!want.empty() && rng() % 2) t = want[rng() % want.size()].v + rng() % 3;
    target = std::max(target, t);
    c.Seek(target);
    auto it = std::lower_bound(want.begin(), want.end(), target,
                               [](const Entry& e, uint64_t x) { return e.v < x; });
    if (it == want.end()) {
      ASSERT_FALSE(c.Valid());
      break;
    }
    ASSERT_TRUE(c.Valid());
    ASSERT_EQ(c.key(), it->v);
    ASSERT_EQ(c.tombstone(), it->tomb);
  }

  for (int s = 0; s < 4; ++s) {
    uint64_t v = (!want.empty() && rng() % 2) ? want[rng() % want.size()].v : RandomV(rng);
    double w = -1;
    bool t = false;
    bool found = idx.Find(u, v, &w, &t);
    const Entry* e = m.Find(u, v);
    ASSERT_EQ(found, e != nullptr);
    if (found) {
      ASSERT_EQ(t, e->tomb);
      ASSERT_EQ(w, idx.weighted() ? e->w : 1.0);
    }
  }
}

void SortUnique(std::vector<ClusteredUpdate>* ups) {
  auto key = [](const ClusteredUpdate& a) { return std::make_pair(a.u, a.upd.key); };
  std::sort(ups->begin(), ups->end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  ups->erase(std::unique(ups->begin(), ups->end(),
                         [&](const auto& a, const auto& b) { return key(a) == key(b); }),
             ups->end());
}

// A random batch; p_put / p_tomb / rest = erase. Half the keys hit existing entries.
std::vector<ClusteredUpdate> RandomBatch(std::mt19937_64& rng, const Model& m, size_t n, int p_put,
                                         int p_tomb) {
  std::vector<ClusteredUpdate> ups;
  for (size_t i = 0; i < n; ++i) {
    uint8_t u = RandomU(rng);
    uint64_t v = RandomV(rng);
    if (!m.empty() && rng() % 2) {
      size_t i = m.LowerBound(u, v);
      if (i == m.size()) i = 0;
      u = m.entries()[i].u;
      v = m.entries()[i].v;
    }
    int r = static_cast<int>(rng() % 100);
    UpdateOp op = r < p_put ? UpdateOp::kPut : r < p_put + p_tomb ? UpdateOp::kTombstone : UpdateOp::kErase;
    ups.push_back({u, Update{v, static_cast<double>(rng() % 1000) / 8.0, op}});
  }
  SortUnique(&ups);
  return ups;
}

// A vertex run for InsertVertexRun: n random keys, sorted, duplicates dropped; a weight and a
// tombstone byte (1 in 10) for each.
struct RandomRun {
  std::vector<uint64_t> keys;
  std::vector<double> w;
  std::vector<uint8_t> t;
  RandomRun(std::mt19937_64& rng, size_t n) {
    for (size_t i = 0; i < n; ++i) keys.push_back(RandomV(rng));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    w.resize(keys.size());
    t.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      w[i] = static_cast<double>(rng() % 100);
      t[i] = rng() % 10 == 0;
    }
  }
};

// A walk over an ascending random subset of the vertices (WalkStart, then WalkTo and ScanRun
// per vertex; ClusteredIndex's "walk") gives each vertex the chunks ForEachInVertex gives it,
// also when a scan stops after its first chunk (the walk then resumes inside that run).
void ExpectWalkMatches(const ClusteredIndex& idx, std::mt19937_64& rng) {
  using Chunks = std::vector<std::vector<Entry>>;
  auto record = [](uint8_t u, Chunks* out, bool stop_early) {
    return [u, out, stop_early](const uint64_t* v, const double* w, const uint8_t* t, size_t n) {
      EXPECT_GT(n, 0u);
      out->emplace_back();
      for (size_t i = 0; i < n; ++i) {
        out->back().push_back({u, v[i], w ? w[i] : 1.0, t ? t[i] != 0 : false});
      }
      return !stop_early;
    };
  };
  const int every = 1 + static_cast<int>(rng() % 3);  // walk every vertex, or about a half or third
  ClusteredIndex::RunAt r;
  bool started = false;
  for (unsigned x = 0; x < 64; ++x) {
    if (rng() % every != 0) continue;
    const uint8_t u = static_cast<uint8_t>(x);
    const bool stop_early = rng() % 4 == 0;
    Chunks want, got;
    idx.ForEachInVertex(u, record(u, &want, stop_early));
    if (!started) {
      idx.WalkStart(u, &r);
      started = true;
    }
    ClusteredIndex::WalkTo(u, &r);
    ClusteredIndex::ScanRun(u, &r, record(u, &got, stop_early));
    ASSERT_EQ(got.size(), want.size()) << "vertex " << x;
    for (size_t c = 0; c < want.size(); ++c) {
      ASSERT_NO_FATAL_FAILURE(ExpectSameEntries(got[c], want[c])) << "vertex " << x;
    }
  }
}

class ClusteredIndexTest : public ::testing::TestWithParam<bool> {};

// Walks over indexes whose runs are short, span leaves, or are missing, at every step of a
// random history (each step's index is a new version sharing nodes with the last).
TEST_P(ClusteredIndexTest, WalksMatchPerVertexScans) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(19);
  {
    ClusteredIndex idx(&alloc, weighted);
    for (int step = 0; step < 120; ++step) {
      const uint8_t u = static_cast<uint8_t>(rng() % 64);
      const RandomRun r(rng, rng() % 5 == 0 ? rng() % 1500 : rng() % 40);
      idx = idx.InsertVertexRun(u, r.keys.data(), r.w.data(), r.t.data(), r.keys.size());
      for (int k = 0; k < 4; ++k) ASSERT_NO_FATAL_FAILURE(ExpectWalkMatches(idx, rng)) << step;
    }
    EXPECT_GT(idx.height(), 1);
  }
  {
    ClusteredIndex empty(&alloc, weighted);
    ASSERT_NO_FATAL_FAILURE(ExpectWalkMatches(empty, rng));
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

TEST_P(ClusteredIndexTest, EmptyIndex) {
  NodeAllocator alloc;
  ClusteredIndex idx(&alloc, GetParam());
  EXPECT_EQ(idx.size(), 0u);
  EXPECT_EQ(idx.height(), 0);
  EXPECT_FALSE(idx.Find(0, 0, nullptr, nullptr));
  EXPECT_FALSE(idx.NewCursor(3).Valid());
  ExpectMatches(idx, {});
  // Erasing absent keys keeps the tree empty.
  std::vector<ClusteredUpdate> ups = {{1, {5, 0, UpdateOp::kErase}}};
  PrevState prev;
  ClusteredIndex b = idx.Apply(ups.data(), ups.size(), &prev);
  EXPECT_EQ(prev, PrevState::kAbsent);
  ExpectMatches(b, {});
  ClusteredIndex d;  // default: no allocator, empty
  EXPECT_EQ(d.size(), 0u);
  EXPECT_TRUE(d.CheckInvariants(nullptr));
  EXPECT_EQ(alloc.bytes(), 0u);
}

TEST_P(ClusteredIndexTest, ExtremeKeys) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  {
    ClusteredIndex idx(&alloc, weighted);
    Model m;
    std::vector<ClusteredUpdate> ups;
    for (uint8_t u : {uint8_t{0}, uint8_t{1}, uint8_t{62}, uint8_t{63}}) {
      for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 63, kMax - 1, kMax}) {
        ups.push_back({u, Update{v, double(v % 7), UpdateOp::kPut}});
      }
    }
    ups[3].upd.op = UpdateOp::kTombstone;
    m.Apply(ups);
    idx = idx.Apply(ups.data(), ups.size(), nullptr);
    ExpectMatches(idx, m);
    std::mt19937_64 rng(1);
    for (int u = 0; u < 64; ++u) ExpectVertexMatches(idx, m, static_cast<uint8_t>(u), rng);
    // Seeking to kMax lands on kMax; past the last vertex nothing is found.
    auto c = idx.NewCursor(62);
    c.Seek(kMax);
    ASSERT_TRUE(c.Valid());
    EXPECT_EQ(c.key(), kMax);
    c.Next();
    EXPECT_FALSE(c.Valid());
    EXPECT_TRUE(idx.Find(63, kMax, nullptr, nullptr));
    EXPECT_FALSE(idx.Find(63, kMax - 2, nullptr, nullptr));

    // Enough entries near 2^64 for several leaves, split across vertices 62 and 63.
    ups.clear();
    for (uint8_t u : {uint8_t{62}, uint8_t{63}}) {
      for (uint64_t i = 0; i < 1500; ++i) ups.push_back({u, Update{kMax - 3000 + 2 * i, 1.5, UpdateOp::kPut}});
    }
    m.Apply(ups);
    idx = idx.Apply(ups.data(), ups.size(), nullptr);
    ExpectMatches(idx, m);
    EXPECT_GE(idx.height(), 2);
    for (int u : {0, 1, 61, 62, 63}) ExpectVertexMatches(idx, m, static_cast<uint8_t>(u), rng);
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

TEST_P(ClusteredIndexTest, RandomizedDifferential) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(weighted ? 42 : 7);
  size_t max_height = 0, max_size = 0;
  {
    ClusteredIndex idx(&alloc, weighted);
    Model m;
    // Older versions and their expected contents: deriving new versions must not change them.
    std::deque<std::pair<ClusteredIndex, std::vector<Entry>>> history;
    const int kSteps = 4000;
    for (int step = 0; step < kSteps; ++step) {
      // Phases: grow, churn, shrink, so that trees split up to three levels and merge back.
      int phase = (step / 250) % 4;
      int p_put = phase == 0 ? 85 : phase == 1 ? 45 : phase == 2 ? 15 : 40;
      int p_tomb = phase == 2 ? 10 : 20;
      size_t n = rng() % 10 == 0 ? 1 + rng() % 3000 : 1 + rng() % 300;
      std::vector<ClusteredUpdate> ups = RandomBatch(rng, m, n, p_put, p_tomb);
      if (phase == 2 && rng() % 20 == 0) {  // bulk-erase a slice of a hot vertex
        uint8_t u = static_cast<uint8_t>(rng() % 6);
        ups.clear();
        auto [rb, re] = m.Run(u);
        for (size_t i = rb; i < re; ++i) {
          if (rng() % 4 != 0) ups.push_back({u, Update{m.entries()[i].v, 0, UpdateOp::kErase}});
        }
      }
      std::vector<PrevState> want_prev = m.Apply(ups);
      std::vector<PrevState> prev(ups.size());
      ClusteredIndex next = idx.Apply(ups.data(), ups.size(), prev.data());
      ASSERT_EQ(prev, want_prev) << "step " << step;
      ASSERT_NO_FATAL_FAILURE(ExpectMatches(next, m)) << "step " << step;
      if (step % 5 == 0) {
        for (int k = 0; k < 3; ++k) {
          ASSERT_NO_FATAL_FAILURE(ExpectVertexMatches(next, m, RandomU(rng), rng)) << "step " << step;
        }
      }
      if (step % 10 == 0) {
        history.emplace_back(idx, IndexEntries(idx));
        if (history.size() > 6) history.pop_front();
      }
      if (step % 50 == 0) {
        for (const auto& [old, entries] : history) {
          std::string why;
          ASSERT_TRUE(old.CheckInvariants(&why)) << why;
          ExpectSameEntries(IndexEntries(old), entries);
        }
      }
      idx = std::move(next);
      max_height = std::max<size_t>(max_height, idx.height());
      max_size = std::max(max_size, idx.size());
    }
    history.clear();
    // A lone version owns every allocated byte.
    EXPECT_EQ(alloc.bytes(), idx.MemoryBytes());
  }
  EXPECT_EQ(alloc.bytes(), 0u);
  EXPECT_GE(max_height, 3u) << "max size " << max_size;
}

TEST_P(ClusteredIndexTest, VertexRuns) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(3);
  {
    ClusteredIndex idx(&alloc, weighted);
    Model m;
    for (int step = 0; step < 300; ++step) {
      uint8_t u = static_cast<uint8_t>(rng() % 64);
      if (rng() % 3 == 0) {
        size_t removed = 0;
        size_t want = m.ReplaceRun(u, {});
        ClusteredIndex next = idx.EraseVertex(u, &removed);
        ASSERT_EQ(removed, want);
        idx = std::move(next);
      } else {
        // Replace u's run with a fresh sorted run of 0..3000 entries (some tombstones).
        const RandomRun r(rng, rng() % 4 == 0 ? rng() % 3000 : rng() % 300);
        const std::vector<uint64_t>& keys = r.keys;
        const std::vector<double>& w = r.w;
        const std::vector<uint8_t>& t = r.t;
        bool with_w = rng() % 2, with_t = rng() % 2;
        std::vector<Entry> run;
        for (size_t i = 0; i < keys.size(); ++i) {
          run.push_back({u, keys[i], with_w ? w[i] : 1.0, with_t && t[i] != 0});
        }
        m.ReplaceRun(u, run);
        idx = idx.InsertVertexRun(u, keys.data(), with_w ? w.data() : nullptr,
                                  with_t ? t.data() : nullptr, keys.size());
      }
      ASSERT_NO_FATAL_FAILURE(ExpectMatches(idx, m)) << "step " << step;
      ASSERT_NO_FATAL_FAILURE(ExpectVertexMatches(idx, m, u, rng));
      ASSERT_NO_FATAL_FAILURE(ExpectVertexMatches(idx, m, static_cast<uint8_t>(rng() % 64), rng));
    }
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

// Bulk loads to four levels, then vertex by vertex erasure collapses the root level by level.
TEST_P(ClusteredIndexTest, DeepTreeGrowsAndCollapses) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(11);
  {
    ClusteredIndex idx(&alloc, weighted);
    const size_t kPerVertex = 36000;
    std::vector<uint64_t> keys(kPerVertex);
    for (int u = 0; u < 64; ++u) {
      for (size_t i = 0; i < kPerVertex; ++i) keys[i] = (kMax / kPerVertex) * i + u;
      idx = idx.InsertVertexRun(static_cast<uint8_t>(u), keys.data(), nullptr, nullptr, kPerVertex);
    }
    std::string why;
    ASSERT_TRUE(idx.CheckInvariants(&why)) << why;
    EXPECT_EQ(idx.size(), 64 * kPerVertex);
    EXPECT_EQ(idx.height(), 4);
    ClusteredIndex full = idx;
    std::vector<int> order(64);
    for (int u = 0; u < 64; ++u) order[u] = u;
    std::shuffle(order.begin(), order.end(), rng);
    size_t left = idx.size();
    int min_height_seen = idx.height();
    for (int u : order) {
      size_t removed = 0;
      idx = idx.EraseVertex(static_cast<uint8_t>(u), &removed);
      ASSERT_EQ(removed, kPerVertex);
      left -= removed;
      ASSERT_TRUE(idx.CheckInvariants(&why)) << why;
      ASSERT_EQ(idx.size(), left);
      ASSERT_FALSE(idx.NewCursor(static_cast<uint8_t>(u)).Valid());
      min_height_seen = std::min(min_height_seen, idx.height());
    }
    EXPECT_EQ(idx.height(), 0);
    EXPECT_EQ(idx.MemoryBytes(), 0u);
    // The full version survived all of it.
    ASSERT_TRUE(full.CheckInvariants(&why)) << why;
    EXPECT_EQ(full.size(), 64 * kPerVertex);
    size_t n = 0;
    full.ForEachInVertex(17, [&](const uint64_t* v, const double*, const uint8_t*, size_t k) {
      for (size_t i = 0; i < k; ++i) EXPECT_EQ(v[i], (kMax / kPerVertex) * (n + i) + 17);
      n += k;
      return true;
    });
    EXPECT_EQ(n, kPerVertex);
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

// A one-key update copies one root-to-leaf path and shares the rest.
TEST_P(ClusteredIndexTest, PathCopySharesUntouchedNodes) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  {
    ClusteredIndex idx(&alloc, weighted);
    std::vector<ClusteredUpdate> ups;
    for (int u = 0; u < 64; ++u) {
      for (uint64_t v = 0; v < 400; ++v) ups.push_back({static_cast<uint8_t>(u), Update{v * 3, 1, UpdateOp::kPut}});
    }
    idx = idx.Apply(ups.data(), ups.size(), nullptr);
    ASSERT_EQ(alloc.bytes(), idx.MemoryBytes());
    size_t before = alloc.bytes();
    std::vector<ClusteredIndex> versions;
    for (int i = 0; i < 50; ++i) {
      ClusteredUpdate one{static_cast<uint8_t>(i), Update{uint64_t(i) * 3 + 1, 2, UpdateOp::kPut}};
      versions.push_back(versions.empty() ? idx.Apply(&one, 1, nullptr) : versions.back().Apply(&one, 1, nullptr));
      size_t leaf_max = sizeof(clustered::Leaf) + clustered::kLeafCapacity * 18;
      size_t inner_max = 16 + 64 * 8 + 63 * 16;
      ASSERT_LE(alloc.bytes() - before, (i + 1) * (leaf_max + 2 * inner_max));
    }
    ASSERT_EQ(versions.back().size(), idx.size() + 50);
    // Dropping versions in a scrambled order returns to the base tree's bytes.
    std::mt19937_64 rng(5);
    std::shuffle(versions.begin(), versions.end(), rng);
    while (!versions.empty()) {
      versions.pop_back();
      std::string why;
      for (const auto& v : versions) ASSERT_TRUE(v.CheckInvariants(&why)) << why;
    }
    EXPECT_EQ(alloc.bytes(), before);
    std::string why;
    ASSERT_TRUE(idx.CheckInvariants(&why)) << why;
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

// A put over a live entry of the same weight changes nothing, so a leaf whose updates are all
// such puts is kept, not copied: a batch of them shares the whole tree (no node allocated),
// and one changing put among them copies only its own path. A put that changes the weight or
// revives a tombstone is a change.
TEST_P(ClusteredIndexTest, RePutsOfLiveEntriesShareTheirLeaves) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  {
    ClusteredIndex idx(&alloc, weighted);
    Model model;
    std::vector<ClusteredUpdate> ups;
    for (int u = 0; u < 64; ++u) {
      for (uint64_t v = 0; v < 400; ++v) {
        ups.push_back({static_cast<uint8_t>(u), Update{v * 3, 1.5, UpdateOp::kPut}});
      }
    }
    ups.push_back({5, Update{1, 2.5, UpdateOp::kTombstone}});  // (5, 1): a tombstone
    std::sort(ups.begin(), ups.end(), [](const ClusteredUpdate& a, const ClusteredUpdate& b) {
      return a.u != b.u ? a.u < b.u : a.upd.key < b.upd.key;
    });
    idx = idx.Apply(ups.data(), ups.size(), nullptr);
    model.Apply(ups);
    const size_t base_bytes = alloc.bytes();

    // Every 7th entry of every vertex put again as it is: nothing allocated, the same root.
    std::vector<ClusteredUpdate> again;
    for (int u = 0; u < 64; ++u) {
      for (uint64_t v = 0; v < 400; v += 7) {
        again.push_back({static_cast<uint8_t>(u), Update{v * 3, 1.5, UpdateOp::kPut}});
      }
    }
    std::vector<PrevState> prev(again.size());
    ClusteredIndex same = idx.Apply(again.data(), again.size(), prev.data());
    EXPECT_EQ(same.root_node(), idx.root_node());
    EXPECT_EQ(alloc.bytes(), base_bytes);
    for (PrevState p : prev) ASSERT_EQ(p, PrevState::kLive);
    EXPECT_EQ(same.size(), idx.size());

    // The same batch with one new key in it: only that key's path is copied.
    std::vector<ClusteredUpdate> one_new = again;
    one_new.insert(one_new.begin() + 1, {0, Update{4, 1.5, UpdateOp::kPut}});  // (0, 4) is absent
    ClusteredIndex grown = idx.Apply(one_new.data(), one_new.size(), nullptr);
    const size_t leaf_max = sizeof(clustered::Leaf) + clustered::kLeafCapacity * 18;
    const size_t inner_max = 16 + 64 * 8 + 63 * 16;
    EXPECT_GT(alloc.bytes(), base_bytes);
    EXPECT_LE(alloc.bytes() - base_bytes, 2 * leaf_max + 3 * inner_max);
    EXPECT_EQ(grown.size(), idx.size() + 1);
    grown = ClusteredIndex();
    EXPECT_EQ(alloc.bytes(), base_bytes);

    // A put over the tombstone revives it: a change.
    ClusteredUpdate revive{5, Update{1, 1.5, UpdateOp::kPut}};
    ClusteredIndex revived = idx.Apply(&revive, 1, nullptr);
    EXPECT_NE(revived.root_node(), idx.root_node());
    bool tomb = true;
    double w = 0;
    ASSERT_TRUE(revived.Find(5, 1, &w, &tomb));
    EXPECT_FALSE(tomb);
    revived = ClusteredIndex();

    // A new weight is a change where weights are kept (and nothing to keep where they are not).
    ClusteredUpdate reweigh{9, Update{30, 4.0, UpdateOp::kPut}};
    ClusteredIndex reweighed = idx.Apply(&reweigh, 1, nullptr);
    ASSERT_TRUE(reweighed.Find(9, 30, &w, &tomb));
    if (weighted) {
      EXPECT_NE(reweighed.root_node(), idx.root_node());
      EXPECT_EQ(w, 4.0);
    } else {
      EXPECT_EQ(reweighed.root_node(), idx.root_node());
      EXPECT_EQ(w, 1.0);
    }
    reweighed = ClusteredIndex();
    EXPECT_EQ(alloc.bytes(), base_bytes);

    // The kept tree reads as the model does.
    ExpectMatches(same, model);
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

TEST_P(ClusteredIndexTest, CopyAndMoveSemantics) {
  NodeAllocator alloc;
  {
    ClusteredIndex a(&alloc, GetParam());
    std::vector<ClusteredUpdate> ups;
    for (uint64_t v = 0; v < 2000; ++v) ups.push_back({7, Update{v, 1, UpdateOp::kPut}});
    a = a.Apply(ups.data(), ups.size(), nullptr);
    ClusteredIndex b = a;   // copy
    ClusteredIndex c(std::move(b));  // move
    EXPECT_EQ(b.size(), 0u);
    ClusteredIndex d;
    d = c;            // copy-assign
    d = d;            // self-assign
    c = std::move(d); // move-assign
    EXPECT_EQ(c.size(), 2000u);
    a = ClusteredIndex();
    std::string why;
    ASSERT_TRUE(c.CheckInvariants(&why)) << why;
    EXPECT_EQ(alloc.bytes(), c.MemoryBytes());
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

TEST_P(ClusteredIndexTest, ScanEarlyStop) {
  NodeAllocator alloc;
  ClusteredIndex idx(&alloc, GetParam());
  std::vector<ClusteredUpdate> ups;
  for (int u = 0; u < 4; ++u) {
    for (uint64_t v = 0; v < 1500; ++v) ups.push_back({static_cast<uint8_t>(u), Update{v, 1, UpdateOp::kPut}});
  }
  idx = idx.Apply(ups.data(), ups.size(), nullptr);
  int calls = 0;
  idx.ForEachInVertex(2, [&](const uint64_t*, const double*, const uint8_t*, size_t) {
    ++calls;
    return false;
  });
  EXPECT_EQ(calls, 1);
  calls = 0;
  idx.ForEachChunk([&](uint8_t, const uint64_t*, const double*, const uint8_t*, size_t) {
    return ++calls < 3;
  });
  EXPECT_EQ(calls, 3);
}

INSTANTIATE_TEST_SUITE_P(WeightedAndNot, ClusteredIndexTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Weighted" : "Unweighted"; });

// Readers scan published versions without locks while a writer derives new versions and drops
// old ones; each version's content must stay what the writer published.
TEST(ClusteredIndexConcurrency, ReadersSeeImmutableVersions) {
  NodeAllocator alloc;
  struct Published {
    ClusteredIndex idx;
    uint64_t checksum = 0;
  };
  auto checksum = [](const ClusteredIndex& idx) {
    uint64_t h = 0;
    idx.ForEachChunk([&](uint8_t u, const uint64_t* v, const double*, const uint8_t* t, size_t n) {
      for (size_t i = 0; i < n; ++i) h = h * 1000003 + v[i] * 131 + u * 7 + (t ? t[i] : 0);
      return true;
    });
    return h;
  };
  std::mutex mu;
  Published slot{ClusteredIndex(&alloc, true), 0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        Published p;
        {
          std::lock_guard<std::mutex> l(mu);
          p = slot;
        }
        std::string why;
        if (!p.idx.CheckInvariants(&why) || checksum(p.idx) != p.checksum) failures.fetch_add(1);
      }
    });
  }
  std::mt19937_64 rng(9);
  Model m;
  ClusteredIndex cur(&alloc, true);
  for (int step = 0; step < 400; ++step) {
    std::vector<ClusteredUpdate> ups = RandomBatch(rng, m, 1 + rng() % 200, step % 100 < 60 ? 80 : 20, 10);
    m.Apply(ups);
    cur = cur.Apply(ups.data(), ups.size(), nullptr);
    Published p{cur, checksum(cur)};
    std::lock_guard<std::mutex> l(mu);
    slot = std::move(p);
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  ExpectMatches(cur, m);
  slot = Published{};
  cur = ClusteredIndex();
  EXPECT_EQ(alloc.bytes(), 0u);
}

// A memgraph's arena keeps the pages its freed nodes leave (version GC frees at the rate
// writers allocate, and returning each emptied slab to the OS cost an madvise and a TLB
// shootdown per few edges); a second round of the same allocations reuses them.
TEST(NodeAllocatorTest, FreedPagesStayInTheArena) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no arena to observe";
#endif
  NodeAllocator alloc;
  auto round = [&] {
    std::vector<void*> ps;
    for (int i = 0; i < 4096; ++i) ps.push_back(alloc.Allocate(4096));
    EXPECT_EQ(alloc.bytes(), size_t{4096} * 4096);
    for (void* p : ps) alloc.Free(p, 4096);
    EXPECT_EQ(alloc.bytes(), 0u);
  };
  round();
  // 16 MiB freed: all of it still held (a thread cache may hold a few nodes, not pages).
  const size_t kept = alloc.RetainedBytes();
  EXPECT_GE(kept, size_t{15} << 20);
  round();
  EXPECT_LE(alloc.RetainedBytes(), kept + (size_t{1} << 20));  // reused, not grown
}

// Freeing a memgraph's blocks must not wake jemalloc's background thread: an arena that never
// purges (decay -1) leaves its thread asleep with no timeout, and jemalloc wakes such a thread
// on every slab the arena frees or takes — a futex wake and a context switch per few blocks,
// 5.2% of the samples of a scale-20 fill's last tenth (docs/benchmarks.md, "Issue 28:
// jemalloc's background thread woken per slab"). Rounds of 4 KiB blocks free and take back thousands of slabs here.
TEST(NodeAllocatorTest, FreeingBlocksDoesNotWakeTheBackgroundThread) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no arena to observe";
#else
  bool on = false;
  size_t sz = sizeof(on);
  if (mallctl("background_thread", &on, &sz, nullptr, 0) != 0 || !on) {
    GTEST_SKIP() << "jemalloc's background threads are off (MALLOC_CONF?)";
  }
  auto runs = [] {
    uint64_t epoch = 1;
    size_t esz = sizeof(epoch);
    mallctl("epoch", &epoch, &esz, &epoch, esz);
    uint64_t n = 0;
    size_t nsz = sizeof(n);
    EXPECT_EQ(mallctl("stats.background_thread.num_runs", &n, &nsz, nullptr, 0), 0);
    return n;
  };
  NodeAllocator alloc;
  std::vector<void*> ps(4096);
  auto round = [&] {
    for (void*& p : ps) p = alloc.Allocate(4000);  // a slab class (4 KiB): one region a slab
    for (void* p : ps) alloc.Free(p, 4000);
  };
  round();  // the arena's first pages; its thread may run once on the first freed slab
  const uint64_t before = runs();
  for (int k = 0; k < 8; ++k) round();
  // Each round empties and refills thousands of slabs; the thread may run on its timer (an
  // epoch of the hour's decay is 18 s) or for another arena, not once per slab.
  EXPECT_LE(runs() - before, 20u);
#endif
}

// A memgraph's allocator, destroyed after its flush, leaves its arena (reset: every block in
// it discarded, its pages kept) to the next memgraph's, which then allocates without faulting
// fresh pages in (docs/benchmarks.md, "Issue 28: spare memgraph arenas"). The pages must be
// reused, not added to: cycles of the same allocations keep the resident size flat.
TEST(NodeAllocatorTest, NextAllocatorReusesAFreedArenasPages) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no arena to observe";
#endif
  auto resident = [] {
    long pages = 0, rss = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr || std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    if (f != nullptr) std::fclose(f);
    return static_cast<size_t>(rss) * 4096;
  };
  // 12 MiB in blocks of the sizes a memgraph allocates (versions, areas, leaves, large nodes),
  // all freed again; the blocks' first words written so their pages are resident.
  auto cycle = [](NodeAllocator* alloc) {
    std::vector<std::pair<void*, size_t>> ps;
    size_t total = 0;
    for (size_t i = 0; total < (size_t{12} << 20); ++i) {
      const size_t size = (i % 5 == 4) ? 2048 + 16 * (i % 64) : 48 + 16 * (i % 29);
      void* p = alloc->Allocate(size);
      std::memset(p, 0xab, 16);
      ps.emplace_back(p, size);
      total += size;
    }
    for (auto& [p, size] : ps) alloc->Free(p, size);
    EXPECT_EQ(alloc->bytes(), 0u);
  };
  // Whether arenas are recycled depends on jemalloc's options (MALLOC_CONF may change them);
  // the binaries' own settings recycle.
  std::printf("arenas recycled: %s\n", NodeAllocator::RecyclesArenas() ? "yes" : "no");
  size_t after_first = 0;
  for (int k = 0; k < 8; ++k) {
    auto alloc = std::make_unique<NodeAllocator>();
    if (k > 0 && NodeAllocator::RecyclesArenas()) {
      // The spare (the previous allocator's arena) comes with its pages.
      EXPECT_GE(alloc->RetainedBytes(), size_t{8} << 20) << "cycle " << k;
    }
    cycle(alloc.get());
    if (k == 0) after_first = resident();
  }
  EXPECT_LE(resident(), after_first + (size_t{4} << 20))
      << "a recycled arena took fresh pages instead of its own";
}

// An allocator told not to leave its pages to the next one (a store whose memory plan has no
// room for a spare, db/memory_plan.h) purges its arena: the next allocator starts without the
// pages, and the one after that finds them again once an allocator leaves them.
TEST(NodeAllocatorTest, AnArenaNotSparedGoesOnWithoutItsPages) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no arena to observe";
#endif
  if (!NodeAllocator::RecyclesArenas()) GTEST_SKIP() << "jemalloc's options recycle no arena";
  auto fill = [](NodeAllocator* alloc) {
    std::vector<void*> ps;
    for (size_t i = 0; i < (size_t{8} << 20) / 1024; ++i) {
      ps.push_back(alloc->Allocate(1024));
      std::memset(ps.back(), 0xab, 1024);
    }
    for (void* p : ps) alloc->Free(p, 1024);
  };
  // Whatever spare an earlier test left is taken here and not given back.
  { auto drain = std::make_unique<NodeAllocator>(); drain->set_spare_on_release(false); }
  auto a = std::make_unique<NodeAllocator>();
  fill(a.get());
  a->set_spare_on_release(false);
  a.reset();
  auto b = std::make_unique<NodeAllocator>();
  EXPECT_LT(b->RetainedBytes(), size_t{1} << 20) << "the purged arena's pages came back";
  fill(b.get());
  b.reset();  // spared (the default)
  auto c = std::make_unique<NodeAllocator>();
  EXPECT_GE(c->RetainedBytes(), size_t{4} << 20) << "b's arena should have been left as a spare";
}

}  // namespace
}  // namespace strata::mem
