// The range walks' prefetch pipeline (TierReader's MemAhead, mem::VertexAt, the staged
// ClusteredIndex scan; issue 30): whatever the distance, a walk hands out the same chunks, in
// the same order and with the same boundaries, as a walk without it, and those chunks hold each
// vertex's list exactly once. A pipeline that handed a vertex another vertex's prepared scan,
// skipped a leaf of a run or scanned one twice would change the recorded chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "db/tier_reader.h"
#include "memgraph/clustered_index.h"
#include "memgraph/memgraph.h"
#include "memgraph/node_allocator.h"
#include "strata/db.h"
#include "tests/util/assert_ok.h"

namespace strata {
namespace {

constexpr size_t kDistances[] = {0, 1, 2, 3, 5, 8, 64};

// Restores the process-wide distance at the end of a test.
struct WalkPrefetchGuard {
  size_t saved = GetWalkPrefetch();
  ~WalkPrefetchGuard() { SetWalkPrefetch(saved); }
};

// The staged scan of a ClusteredIndex (Seek, PrefetchUColumn, FindRun, ScanRun, in the walk's
// order: several vertices in flight) against the index's whole walk (ForEachChunk), on an index
// whose runs span leaves.
TEST(WalkPrefetch, StagedClusteredScanMatchesWholeWalk) {
  mem::NodeAllocator alloc;
  std::mt19937_64 rng(7);
  for (bool weighted : {false, true}) {
    mem::ClusteredIndex ci(&alloc, weighted);
    // Vertex u gets (u * 37) % 900 entries: several runs longer than a leaf (512 entries).
    std::vector<mem::ClusteredUpdate> ups;
    for (uint8_t u = 0; u < 64; ++u) {
      if (u % 5 == 3) continue;  // some vertices without entries
      const size_t n = (u * 37u) % 900u;
      std::vector<uint64_t> keys;
      for (size_t j = 0; j < n; ++j) keys.push_back(rng() % 100000);
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      for (uint64_t k : keys) {
        const mem::UpdateOp op = k % 11 == 0 ? mem::UpdateOp::kTombstone : mem::UpdateOp::kPut;
        ups.push_back({u, mem::Update{k, static_cast<double>(k) / 7, op}});
      }
    }
    ci = ci.Apply(ups.data(), ups.size(), nullptr);
    ASSERT_GT(ci.height(), 1);
    // Reference: each vertex's entries (key, weight, tomb) and chunk sizes from the whole walk.
    struct Rec {
      std::vector<uint64_t> k;
      std::vector<double> w;
      std::vector<uint8_t> t;
      std::vector<size_t> chunks;
    };
    auto add = [](Rec* r, const uint64_t* k, const double* w, const uint8_t* t, size_t n) {
      r->chunks.push_back(n);
      for (size_t j = 0; j < n; ++j) {
        r->k.push_back(k[j]);
        r->w.push_back(w != nullptr ? w[j] : 1.0);
        r->t.push_back(t != nullptr ? t[j] : 0);
      }
    };
    std::map<uint8_t, Rec> want;
    ci.ForEachChunk([&](uint8_t u, const uint64_t* k, const double* w, const uint8_t* t, size_t n) {
      add(&want[u], k, w, t, n);
      return true;
    });
    for (size_t d : {1, 2, 3, 7}) {
      std::vector<mem::ClusteredIndex::RunAt> at(64);
      std::map<uint8_t, Rec> got;
      // Vertex u is sought at step u, its column prefetched at u + d, its run found at u + 2d
      // and scanned at u + 3d.
      for (size_t step = 0; step < 64 + 3 * d; ++step) {
        if (step < 64) ci.Seek(static_cast<uint8_t>(step), &at[step]);
        if (step >= d && step - d < 64) mem::ClusteredIndex::PrefetchUColumn(at[step - d]);
        if (step >= 2 * d && step - 2 * d < 64) {
          const uint8_t u = static_cast<uint8_t>(step - 2 * d);
          mem::ClusteredIndex::FindRun(u, weighted, &at[u]);
        }
        if (step >= 3 * d && step - 3 * d < 64) {
          const uint8_t u = static_cast<uint8_t>(step - 3 * d);
          mem::ClusteredIndex::ScanRun(u, &at[u], [&](const uint64_t* k, const double* w,
                                                      const uint8_t* t, size_t n) {
            add(&got[u], k, w, t, n);
            return true;
          });
        }
      }
      ASSERT_EQ(got.size(), want.size()) << "d " << d;
      for (const auto& [u, r] : want) {
        ASSERT_TRUE(got.count(u)) << "vertex " << int(u);
        EXPECT_EQ(got[u].k, r.k) << "vertex " << int(u) << " d " << d;
        EXPECT_EQ(got[u].w, r.w) << "vertex " << int(u) << " d " << d;
        EXPECT_EQ(got[u].t, r.t) << "vertex " << int(u) << " d " << d;
        EXPECT_EQ(got[u].chunks, r.chunks) << "vertex " << int(u) << " d " << d;
      }
    }
  }
}

// A store's walks recorded chunk by chunk: (vertex, chunk size, entries, weights).
struct Trace {
  std::vector<VertexId> u;
  std::vector<size_t> size;
  std::vector<VertexId> dst;
  std::vector<double> w;
  void Add(VertexId v, const NeighborChunk& c) {
    u.push_back(v);
    size.push_back(c.size);
    dst.insert(dst.end(), c.dst, c.dst + c.size);
    for (size_t j = 0; j < c.size; ++j) w.push_back(c.weight != nullptr ? c.weight[j] : -1.0);
  }
  bool operator==(const Trace& o) const {
    return u == o.u && size == o.size && dst == o.dst && w == o.w;
  }
};

// Every walk of the test over snap: whole and partial ranges (not on 64-vertex boundaries), a
// predicate, dense and sparse bitmaps, weights or not, early stops.
std::vector<Trace> Walks(const Snapshot& snap, VertexId bound, const std::vector<uint64_t>& dense,
                         const std::vector<uint64_t>& sparse) {
  std::vector<Trace> out;
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    for (auto [b, e] : {std::pair<VertexId, VertexId>{0, bound}, {37, bound - 100}, {70, 200}}) {
      Trace t;
      EXPECT_TRUE(snap.ScanEdges(b, e, d, [&](VertexId u, const NeighborChunk& c) {
        t.Add(u, c);
        return true;
      }).ok());
      out.push_back(std::move(t));
      // A predicate; each vertex's list read up to its second chunk or its first entry above
      // u (kNextVertex); the pass ends after 5000 chunks (kStop).
      Trace p;
      size_t chunks = 0;
      std::map<VertexId, int> seen;
      EXPECT_TRUE(snap.ScanAdjacency(b, e, d, /*weights=*/true, [](VertexId u) { return u % 3 != 1; },
                                     [&](VertexId u, const NeighborChunk& c) {
                                       p.Add(u, c);
                                       if (++chunks == 5000) return ScanStep::kStop;
                                       if (++seen[u] == 2) return ScanStep::kNextVertex;
                                       return c.size > 0 && c.dst[0] > u ? ScanStep::kNextVertex
                                                                         : ScanStep::kMore;
                                     }).ok());
      out.push_back(std::move(p));
      for (const std::vector<uint64_t>* words : {&dense, &sparse}) {
        for (bool any_order : {false, true}) {
          for (bool complement : {false, true}) {
            AdjacencyScan scan{VertexBitmap{words->data(), complement}, /*weights=*/!any_order,
                               any_order};
            Trace s;
            EXPECT_TRUE(snap.ScanAdjacency(b, e, d, scan, [&](VertexId u, const NeighborChunk& c) {
              s.Add(u, c);
              return (u + c.size) % 4 == 0 ? ScanStep::kNextVertex : ScanStep::kMore;
            }).ok());
            out.push_back(std::move(s));
          }
        }
      }
    }
  }
  return out;
}

// n vertices, m edges, endpoints skewed towards low IDs (hubs in C-ARTs, the rest in clustered
// indexes whose runs span leaves), written in several batches (append areas, several versions),
// some edges and vertices deleted, and one more batch after a snapshot is taken (versions
// newer than the snapshot). Checks each walk at every distance against distance 0, and the
// whole-range ScanEdges against ScanNeighbors per vertex.
void CheckStore(const Options& base, const std::string& path) {
  WalkPrefetchGuard guard;
  Options o = base;
  o.graph_kind = GraphKind::kDirectedWithInEdges;
  o.weighted = true;
  o.cart_threshold = 64;
  std::unique_ptr<DB> db;
  ASSERT_OK(DB::Open(o, path, &db));
  const VertexId n = 3000;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> x(0, 1);
  auto vertex = [&]() -> VertexId {
    const double u = x(rng);
    return std::min<VertexId>(n - 1, static_cast<VertexId>(static_cast<double>(n) * u * u * u));
  };
  {
    WriteBatch b;
    for (VertexId v = 0; v < n; ++v) b.AddVertex(v);
    ASSERT_OK(db->Write(b));
  }
  for (int round = 0; round < 6; ++round) {
    WriteBatch b;
    for (int i = 0; i < 8000; ++i) b.InsertEdge(vertex(), rng() % n, x(rng));
    ASSERT_OK(db->Write(b));
    WriteBatch d;
    for (int i = 0; i < 300; ++i) d.DeleteEdge(vertex(), rng() % n);
    if (round == 3) {
      for (int i = 0; i < 10; ++i) d.DeleteVertex(rng() % n);
    }
    ASSERT_OK(db->Write(d));
  }
  std::unique_ptr<Snapshot> snap = db->GetSnapshot();
  {
    WriteBatch b;
    for (int i = 0; i < 4000; ++i) b.InsertEdge(vertex(), vertex(), 0.5);
    ASSERT_OK(db->Write(b));
  }
  const VertexId bound = snap->VertexIdBound();
  std::vector<uint64_t> dense((bound + 63) / 64), sparse((bound + 63) / 64);
  for (VertexId v = 0; v < bound; ++v) {
    if (rng() % 10 != 0) dense[v / 64] |= uint64_t{1} << (v % 64);
    if (rng() % 40 == 0) sparse[v / 64] |= uint64_t{1} << (v % 64);
  }

  // Whole-range ScanEdges at distance 0 against ScanNeighbors per vertex.
  SetWalkPrefetch(0);
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    std::map<VertexId, std::vector<VertexId>> walked, looked_up;
    ASSERT_OK(snap->ScanEdges(0, bound, d, [&](VertexId u, const NeighborChunk& c) {
      walked[u].insert(walked[u].end(), c.dst, c.dst + c.size);
      return true;
    }));
    for (VertexId u = 0; u < bound; ++u) {
      ASSERT_OK(snap->ScanNeighbors(u, d, [&](const NeighborChunk& c) {
        looked_up[u].insert(looked_up[u].end(), c.dst, c.dst + c.size);
        return true;
      }));
      if (looked_up[u].empty()) looked_up.erase(u);
    }
    for (auto it = walked.begin(); it != walked.end();) {
      it = it->second.empty() ? walked.erase(it) : std::next(it);
    }
    ASSERT_EQ(walked, looked_up);
  }
  const std::vector<Trace> want = Walks(*snap, bound, dense, sparse);
  for (size_t dist : kDistances) {
    SetWalkPrefetch(dist);
    ASSERT_EQ(GetWalkPrefetch(), dist);
    const std::vector<Trace> got = Walks(*snap, bound, dense, sparse);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(got[i] == want[i]) << "distance " << dist << ", walk " << i;
    }
  }
}

TEST(WalkPrefetch, InMemoryWalksMatchAtEveryDistance) {
  Options o;
  o.in_memory = true;
  CheckStore(o, "walk-prefetch");
}

// Several memgraphs (a small memgraph seals often) and disk levels under them: the pipeline
// prepares the newest memgraph's lists only, and merged lists must not change.
TEST(WalkPrefetch, TieredWalksMatchAtEveryDistance) {
  const std::string dir = ::testing::TempDir() + "/walk_prefetch_tiered";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  Options o;
  o.memgraph_bytes = size_t{256} << 10;
  CheckStore(o, dir);
  std::filesystem::remove_all(dir, ec);
}

TEST(WalkPrefetch, DistanceIsClamped) {
  WalkPrefetchGuard guard;
  SetWalkPrefetch(1000);
  EXPECT_EQ(GetWalkPrefetch(), kMaxWalkPrefetch);
}

}  // namespace
}  // namespace strata
