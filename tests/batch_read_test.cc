// Snapshot::ScanNeighborsBatch (the frontier read of BFS, SSSP and k-hop) against
// ScanNeighbors one vertex at a time and against the reference model, on random stores whose
// lists are spread over the active memgraph, level 0 and deeper levels, with edge tombstones and
// vertex deletion marks: every graph kind, weighted or not, both I/O back ends. Also the call's
// contract (chunks of one index consecutive, ascending destinations, early stop) and a damaged
// block reported as Corruption naming the file, and a file cut short as an IOError naming it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "analytics/frontier.h"
#include "db/tier_reader.h"
#include "index/vertex_index.h"
#include "io/env.h"
#include "strata/analytics.h"
#include "strata/db.h"
#include "tests/util/random_batch.h"
#include "tests/util/reference_graph.h"
#include "tests/util/temp_dir.h"
#include "tools/cli_common.h"
#include "graphio/generator.h"

namespace strata {
namespace {

using strata::testing::BatchMix;
using strata::testing::RandomBatch;
// No weight changes: a SetWeight of a missing edge would reject the whole batch.
constexpr BatchMix kMix{55, 85, 85, 92, 8};

using List = std::vector<std::pair<VertexId, double>>;

struct Param {
  GraphKind kind;
  bool weighted;
  IoBackend io;
  // Options::vertex_index_reads: range scans find level runs through the multi-level index
  // (true) or by streaming every file's vertex table.
  bool index_reads = true;
};

// Lists an any-order ScanAdjacency gave in pieces that were not ascending together (the
// unmerged path ran): counted by CheckAdjacency.
size_t g_unmerged_lists = 0;

// Appends a chunk to a list; "" or why the chunk breaks ascending destination order.
std::string Append(const NeighborChunk& c, List* l, const std::string& who) {
  for (size_t j = 0; j < c.size; ++j) {
    if (!l->empty() && c.dst[j] <= l->back().first) {
      return "destinations of " + who + " not ascending";
    }
    l->push_back({c.dst[j], c.weight ? c.weight[j] : 1.0});
  }
  return "";
}

// Answers of one ScanNeighborsBatch call per index. Returns "" or the first breach of the
// contract: an index answered in two separate runs of chunks, a chunk out of destination order,
// an index out of range, weights present iff the store is weighted and `weights` asks for them
// (without, every weight reads 1.0 in *out).
std::string BatchLists(const Snapshot& s, const std::vector<VertexId>& vs, Direction d,
                       bool weights, std::vector<List>* out, Status* st) {
  out->assign(vs.size(), {});
  std::vector<uint8_t> closed(vs.size(), 0);
  size_t last = ~size_t{0};
  std::string err;
  *st = s.ScanNeighborsBatch(vs.data(), vs.size(), d, weights,
                             [&](size_t i, const NeighborChunk& c) {
    if (i >= vs.size()) {
      err = "index " + std::to_string(i) + " out of range";
      return false;
    }
    if (i != last) {
      if (closed[i]) {
        err = "index " + std::to_string(i) + " answered in two separate runs";
        return false;
      }
      if (last != ~size_t{0}) closed[last] = 1;
      last = i;
    }
    if ((c.weight != nullptr) != (s.weighted() && weights)) {
      err = "weights present iff weighted and asked for, broken at index " + std::to_string(i);
      return false;
    }
    err = Append(c, &(*out)[i], "index " + std::to_string(i));
    return err.empty();
  });
  return err;
}

List SingleList(const Snapshot& s, VertexId u, Direction d, Status* st) {
  std::vector<VertexId> dst;
  std::vector<double> w;
  *st = s.GetNeighbors(u, &dst, &w, d);
  List l;
  for (size_t i = 0; i < dst.size(); ++i) l.push_back({dst[i], w[i]});
  return l;
}

std::string Show(const List& l) {
  std::string s;
  for (size_t i = 0; i < l.size() && i < 12; ++i) {
    s += std::to_string(l[i].first) + ":" + std::to_string(l[i].second) + " ";
  }
  return s + (l.size() > 12 ? "... (" + std::to_string(l.size()) + ")" : "");
}

// The frontier reads' I/O settings the batch checks run under (db/tier_reader.h): the
// sequential path (one item per file), every run its own item with 4 live (the most items),
// and groups of 64 with small and default items; reads through the no-readahead descriptor
// (the default) or the scans' one.
const FrontierReadConfig kFrontierConfigs[] = {{1, size_t{32} << 10, false},
                                               {4, 1, true},
                                               {64, 512, true},
                                               {64, size_t{8} << 10, false},
                                               {64, size_t{32} << 10, true}};

struct FrontierConfigScope {
  FrontierReadConfig saved = GetFrontierReadConfig();
  explicit FrontierConfigScope(const FrontierReadConfig& c) { SetFrontierReadConfig(c); }
  ~FrontierConfigScope() { SetFrontierReadConfig(saved); }
};

// Batch vs one-at-a-time (and vs the model for out-lists) for the vertices `vs`, under every
// frontier read setting.
void CheckBatch(const Snapshot& s, const testing::ReferenceGraph* model,
                const std::vector<VertexId>& vs, const std::string& what_in) {
  for (const FrontierReadConfig& cfg : kFrontierConfigs)
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    FrontierConfigScope scope(cfg);
    const std::string what = what_in + " (frontier group " + std::to_string(cfg.group) +
                             ", item bytes " + std::to_string(cfg.item_bytes) + ")";
    for (bool weights : {true, false}) {
      std::vector<List> got;
      Status st;
      std::string err = BatchLists(s, vs, d, weights, &got, &st);
      ASSERT_EQ(err, "") << what;
      if (d == Direction::kIn && s.kind() == GraphKind::kDirected) {
        EXPECT_TRUE(st.IsNotSupported()) << what << ": " << st.ToString();
        continue;
      }
      ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
      for (size_t i = 0; i < vs.size(); ++i) {
        Status ss;
        List want = SingleList(s, vs[i], d, &ss);
        ASSERT_TRUE(ss.ok()) << ss.ToString();
        if (!weights) {
          for (auto& e : want) e.second = 1.0;
        }
        ASSERT_EQ(got[i], want) << what << " dir " << static_cast<int>(d) << " weights " << weights
                                << " index " << i
                                << " vertex " << vs[i] << "\n batch:  " << Show(got[i])
                                << "\n single: " << Show(want);
        if (model != nullptr && d == Direction::kOut && weights) {
          ASSERT_EQ(got[i], model->Neighbors(vs[i], false))
              << what << " vs model, vertex " << vs[i];
        }
      }
    }
  }
}

// ScanEdges over [begin, end) (the streamed merge of whole files) vs one-at-a-time reads: the
// same list for every vertex, each vertex's chunks contiguous and ascending.
void CheckRange(const Snapshot& s, VertexId begin, VertexId end, const std::string& what) {
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    if (d == Direction::kIn && s.kind() == GraphKind::kDirected) continue;
    std::map<VertexId, List> got;
    VertexId last = 0;
    bool any = false;
    std::string err;
    Status st = s.ScanEdges(begin, end, d, [&](VertexId u, const NeighborChunk& c) {
      if (u < begin || u >= end || (any && u < last)) {
        err = "vertex " + std::to_string(u) + " out of order or range";
        return false;
      }
      if (any && u != last && got.count(u)) {
        err = "vertex " + std::to_string(u) + " answered in two separate runs";
        return false;
      }
      any = true;
      last = u;
      err = Append(c, &got[u], "vertex " + std::to_string(u));
      return err.empty();
    });
    ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
    ASSERT_EQ(err, "") << what;
    for (VertexId u = begin; u < end; ++u) {
      Status ss;
      List want = SingleList(s, u, d, &ss);
      ASSERT_TRUE(ss.ok()) << ss.ToString();
      auto it = got.find(u);
      const List none;
      ASSERT_EQ(it == got.end() ? none : it->second, want)
          << what << " ScanEdges dir " << static_cast<int>(d) << " vertex " << u;
    }
  }
}

// ScanAdjacency and ScanDegreeBounds over [begin, end) vs one-at-a-time reads. Every wanted
// vertex with neighbors is visited once, in order, with its whole list (kMore) or its first
// chunk alone (kNextVertex); unwanted vertices never; weights only when asked for; kStop after
// k chunks makes exactly k calls. Degree bounds: a call for every vertex with neighbors, never
// below its degree, and equal to it where `exact` says every list is one run;
// ScanVertexDegreeBounds gives ScanVertices' vertices with those bounds.
void CheckAdjacency(const Snapshot& s, VertexId begin, VertexId end, bool exact,
                    const std::string& what) {
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    if (d == Direction::kIn && s.kind() == GraphKind::kDirected) continue;
    const std::string at = what + " dir " + std::to_string(static_cast<int>(d));
    std::vector<List> want(end - begin);
    for (VertexId u = begin; u < end; ++u) {
      Status ss;
      want[u - begin] = SingleList(s, u, d, &ss);
      ASSERT_TRUE(ss.ok()) << ss.ToString();
    }
    // The vertices u % 3 != 0 as a bitmap (and the others, for its complement).
    std::vector<uint64_t> thirds((end + 63) / 64, 0), others((end + 63) / 64, 0);
    for (VertexId u = 0; u < end; ++u) {
      (u % 3 != 0 ? thirds : others)[u / 64] |= uint64_t{1} << (u % 64);
    }
    for (int mode = 0; mode < 7; ++mode) {
      // mode 0: all vertices, weights; 1: all, no weights; 2: every third skipped; 3: prefixes;
      // 4 and 5: as 2, the wanted vertices given as a bitmap (4) or as a complement (5);
      // 6: as 5 without weights, lists in any order (AdjacencyScan::any_order): each chunk
      // ascending, the list the same set (an entry may repeat: it is counted once).
      const bool weights = mode != 1 && mode != 6;
      auto wanted = [&](VertexId u) { return mode < 2 || mode == 3 || u % 3 != 0; };
      std::map<VertexId, List> got;
      std::map<VertexId, size_t> chunks;
      VertexId last = 0;
      bool any = false;
      std::string err;
      auto scan = [&](auto&& fn) {
        if (mode == 4) {
          const AdjacencyScan scan{VertexBitmap{thirds.data()}, weights};
          return s.ScanAdjacency(begin, end, d, scan, fn);
        }
        if (mode >= 5) {
          const AdjacencyScan scan{VertexBitmap{others.data(), true}, weights, mode == 6};
          return s.ScanAdjacency(begin, end, d, scan, fn);
        }
        return s.ScanAdjacency(begin, end, d, weights, wanted, fn);
      };
      Status st = scan([&](VertexId u, const NeighborChunk& c) {
        // Ascending, so a vertex's chunks are consecutive (a vertex seen again later would
        // come after a larger one).
        if (u < begin || u >= end || (any && u < last) || !wanted(u)) {
          err = "vertex " + std::to_string(u) + " out of order, range or unwanted";
          return ScanStep::kStop;
        }
        if (c.weight != nullptr && !(weights && s.weighted())) {
          err = "weights given without being asked for, vertex " + std::to_string(u);
          return ScanStep::kStop;
        }
        if (c.weight == nullptr && weights && s.weighted()) {
          err = "weights asked for and missing, vertex " + std::to_string(u);
          return ScanStep::kStop;
        }
        any = true;
        last = u;
        ++chunks[u];
        if (mode == 6) {  // each chunk ascending; the pieces of the list in any order
          List piece;
          err = Append(c, &piece, "vertex " + std::to_string(u));
          List& l = got[u];
          if (!l.empty() && !piece.empty() && piece.front().first <= l.back().first) {
            ++g_unmerged_lists;
          }
          l.insert(l.end(), piece.begin(), piece.end());
        } else {
          err = Append(c, &got[u], "vertex " + std::to_string(u));
        }
        if (!err.empty()) return ScanStep::kStop;
        return mode == 3 ? ScanStep::kNextVertex : ScanStep::kMore;
      });
      ASSERT_TRUE(st.ok()) << at << ": " << st.ToString();
      ASSERT_EQ(err, "") << at << " mode " << mode;
      for (VertexId u = begin; u < end; ++u) {
        List full = want[u - begin];
        if (!weights || !s.weighted()) {
          for (auto& e : full) e.second = 1.0;
        }
        auto it = got.find(u);
        if (!wanted(u) || full.empty()) {
          ASSERT_TRUE(it == got.end()) << at << " mode " << mode << ": vertex " << u << " visited";
          continue;
        }
        ASSERT_TRUE(it != got.end()) << at << " mode " << mode << ": vertex " << u << " missed";
        if (mode == 6) {
          List set = it->second;
          std::sort(set.begin(), set.end());
          set.erase(std::unique(set.begin(), set.end()), set.end());
          ASSERT_EQ(set, full) << at << " mode 6: vertex " << u;
          continue;
        }
        if (mode == 3) {
          ASSERT_EQ(chunks[u], 1u) << at << ": vertex " << u;
          ASSERT_LE(it->second.size(), full.size());
          ASSERT_TRUE(std::equal(it->second.begin(), it->second.end(), full.begin()))
              << at << ": vertex " << u << " prefix " << Show(it->second) << " of " << Show(full);
        } else {
          ASSERT_EQ(it->second, full) << at << " mode " << mode << ": vertex " << u;
        }
      }
    }
    // kStop after k chunks: exactly k calls.
    size_t total = 0;
    ASSERT_TRUE(s.ScanAdjacency(begin, end, d, true, [](VertexId) { return true; },
                                [&](VertexId, const NeighborChunk&) {
                                  ++total;
                                  return ScanStep::kMore;
                                }).ok());
    for (size_t k : {size_t{1}, total / 2, total}) {
      if (k == 0) continue;
      size_t calls = 0;
      ASSERT_TRUE(s.ScanAdjacency(begin, end, d, true, [](VertexId) { return true; },
                                  [&](VertexId, const NeighborChunk&) {
                                    return ++calls < k ? ScanStep::kMore : ScanStep::kStop;
                                  }).ok());
      EXPECT_EQ(calls, k) << at;
    }
    // Degree bounds.
    std::map<VertexId, uint64_t> bound;
    VertexId prev = 0;
    bool first = true;
    Status st = s.ScanDegreeBounds(begin, end, d, [&](VertexId u, uint64_t b) {
      EXPECT_TRUE(u >= begin && u < end && (first || u > prev)) << at << ": bound of " << u;
      EXPECT_GT(b, 0u) << at << ": zero bound reported for " << u;
      first = false;
      prev = u;
      bound[u] = b;
      return true;
    });
    ASSERT_TRUE(st.ok()) << at << ": " << st.ToString();
    for (VertexId u = begin; u < end; ++u) {
      const uint64_t deg = want[u - begin].size();
      auto it = bound.find(u);
      if (deg == 0) continue;  // a bound may still count tombstones or hidden duplicates
      ASSERT_TRUE(it != bound.end()) << at << ": no bound for vertex " << u << " of degree " << deg;
      ASSERT_GE(it->second, deg) << at << ": vertex " << u;
      if (exact) {
        ASSERT_EQ(it->second, deg) << at << ": vertex " << u << " (one run)";
      }
    }
    // Vertices with their bounds in one pass: exactly ScanVertices' vertices, ascending, each
    // with ScanDegreeBounds' bound (0 without one).
    std::vector<VertexId> vertices;
    ASSERT_TRUE(s.ScanVertices(begin, end, [&](VertexId u) {
                   vertices.push_back(u);
                   return true;
                 }).ok());
    size_t k = 0;
    st = s.ScanVertexDegreeBounds(begin, end, d, [&](VertexId u, uint64_t b) {
      EXPECT_LT(k, vertices.size()) << at << ": extra vertex " << u;
      if (k >= vertices.size()) return false;
      EXPECT_EQ(u, vertices[k]) << at << ": vertex " << k;
      auto it = bound.find(u);
      EXPECT_EQ(b, it == bound.end() ? 0 : it->second) << at << ": bound of vertex " << u;
      ++k;
      return true;
    });
    ASSERT_TRUE(st.ok()) << at << ": " << st.ToString();
    ASSERT_EQ(k, vertices.size()) << at;
  }
}

Options SmallTiers(const Param& p) {
  Options o;
  o.graph_kind = p.kind;
  o.weighted = p.weighted;
  o.io_backend = p.io;
  o.vertex_index_reads = p.index_reads;
  o.wal = WalMode::kOff;
  o.memgraph_bytes = 16 << 10;  // seals every few hundred entries
  o.cart_threshold = 8;
  o.memory_budget = 8 << 20;
  o.l0_compaction_trigger = 3;  // L0 keeps a few files between compactions
  o.level1_bytes = 24 << 10;
  o.level_fanout = 2;
  o.max_levels = 4;
  o.target_file_bytes = 16 << 10;
  return o;
}

class BatchRead : public ::testing::TestWithParam<Param> {};

TEST_P(BatchRead, MatchesSingleVertexReadsAcrossTiers) {
  const Param p = GetParam();
  if (p.io == IoBackend::kIoUring && !io::Env::IoUringAvailable()) GTEST_SKIP() << "no io_uring";
  g_unmerged_lists = 0;
  testing::TempDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(SmallTiers(p), dir.path() + "/db", &db).ok());
  testing::ReferenceGraph ref(p.kind, p.weighted);
  std::mt19937_64 rng(31 + static_cast<int>(p.kind) * 5 + p.weighted * 2 + static_cast<int>(p.io));
  const VertexId limit = 200;
  const VertexId hub = 3, hub_range = 3000;  // lists longer than a block and than one chunk
  std::unique_ptr<Snapshot> held;
  testing::ReferenceGraph held_ref = ref;
  int all_tiers = 0;
  for (int i = 1; i <= 900; ++i) {
    WriteBatch b = RandomBatch(rng, limit, p.weighted, kMix);
    if (i % 30 == 0) {
      b = WriteBatch();
      for (int j = 0; j < 120; ++j) {
        const VertexId v = rng() % hub_range;
        if (rng() % 5 == 0) {
          b.DeleteEdge(hub, v);
        } else {
          b.InsertEdge(hub, v, p.weighted ? static_cast<double>(rng() % 100) : 1.0);
        }
      }
    }
    ASSERT_EQ(ref.Apply(b), db->Write(b).ok()) << "batch " << i;
    if (i % 75 != 0) continue;

    auto snap = db->GetSnapshot();
    DBStats st = db->GetStats();
    if (st.memgraph_bytes > 0 && st.l0_files > 0 && st.level_files > 0) ++all_tiers;
    const VertexId bound = snap->VertexIdBound();
    std::vector<VertexId> all(bound + 3);
    for (VertexId v = 0; v < all.size(); ++v) all[v] = v;
    const std::string at = "batch " + std::to_string(i);
    CheckBatch(*snap, &ref, all, at + ", every vertex");
    std::vector<VertexId> mixed(400);
    for (VertexId& v : mixed) v = rng() % 4 == 0 ? hub : rng() % (bound + 3);
    CheckBatch(*snap, &ref, mixed, at + ", random with duplicates");
    CheckBatch(*snap, &ref, {}, at + ", empty");
    CheckBatch(*snap, &ref, {hub}, at + ", hub alone");
    CheckRange(*snap, 0, bound + 3, at + ", every vertex");
    CheckRange(*snap, hub, hub + 1, at + ", hub alone");
    CheckAdjacency(*snap, 0, bound + 3, false, at + ", every vertex");
    CheckAdjacency(*snap, hub, hub + 1, false, at + ", hub alone");
    // A snapshot taken one checkpoint earlier, read after flushes and compactions since.
    if (held) CheckBatch(*held, &held_ref, mixed, at + ", held snapshot");
    if (held) CheckRange(*held, 0, held->VertexIdBound(), at + ", held snapshot");
    held = std::move(snap);
    held_ref = ref;
  }
  EXPECT_GT(g_unmerged_lists, 0u) << "no any-order list came unmerged: that path never ran";
  DBStats st = db->GetStats();
  EXPECT_GT(st.flushes, 5u) << "the memgraph never filled";
  EXPECT_GT(st.compactions, 2u) << "compaction never ran";
  EXPECT_GT(all_tiers, 0) << "no checkpoint had data in memgraph, level 0 and levels at once";

  // After a full compaction (one run per vertex: the streamed path), and with new writes over it.
  ASSERT_TRUE(db->CompactAll().ok());
  std::vector<VertexId> all(db->GetSnapshot()->VertexIdBound());
  for (VertexId v = 0; v < all.size(); ++v) all[v] = v;
  CheckBatch(*db->GetSnapshot(), &ref, all, "compacted");
  CheckAdjacency(*db->GetSnapshot(), 0, all.size() + 3, true, "compacted");
  for (int i = 0; i < 40; ++i) {
    WriteBatch b = RandomBatch(rng, limit, p.weighted, kMix);
    ASSERT_EQ(ref.Apply(b), db->Write(b).ok());
  }
  CheckBatch(*db->GetSnapshot(), &ref, all, "compacted + memgraph");

  // Early stop: false from the k-th chunk ends the call after exactly k chunks.
  auto snap = db->GetSnapshot();
  size_t chunks = 0;
  ASSERT_TRUE(snap->ScanNeighborsBatch(all.data(), all.size(), Direction::kOut,
                                       [&](size_t, const NeighborChunk&) {
                                         ++chunks;
                                         return true;
                                       })
                  .ok());
  ASSERT_GT(chunks, 2u);
  for (size_t k : {size_t{1}, chunks / 2, chunks}) {
    size_t calls = 0;
    Status s = snap->ScanNeighborsBatch(all.data(), all.size(), Direction::kOut,
                                        [&](size_t, const NeighborChunk&) { return ++calls < k; });
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(calls, k);
  }
}

std::string Name(const ::testing::TestParamInfo<Param>& i) {
  std::string k = i.param.kind == GraphKind::kDirected     ? "Directed"
                  : i.param.kind == GraphKind::kUndirected ? "Undirected"
                                                           : "DirectedIn";
  return k + (i.param.weighted ? "Weighted" : "") +
         (i.param.io == IoBackend::kPosix ? "Posix" : "IoUring") +
         (i.param.index_reads ? "" : "NoIndexReads");
}

INSTANTIATE_TEST_SUITE_P(
    All, BatchRead,
    ::testing::Values(Param{GraphKind::kDirected, false, IoBackend::kPosix},
                      Param{GraphKind::kDirected, true, IoBackend::kIoUring},
                      Param{GraphKind::kDirectedWithInEdges, true, IoBackend::kPosix},
                      Param{GraphKind::kDirectedWithInEdges, false, IoBackend::kIoUring},
                      Param{GraphKind::kUndirected, true, IoBackend::kPosix},
                      Param{GraphKind::kUndirected, false, IoBackend::kIoUring},
                      Param{GraphKind::kDirectedWithInEdges, true, IoBackend::kPosix, false},
                      Param{GraphKind::kUndirected, false, IoBackend::kIoUring, false}),
    Name);

// Frontier reads on a skewed (R-MAT / Graph500 Kronecker) graph across flushes and
// compactions, both I/O back ends: every frontier read setting gives each vertex the list
// ScanNeighbors gives (CheckBatch), and BFS and SSSP over the store give the same depths and
// distances under every setting.
class FrontierRmat : public ::testing::TestWithParam<IoBackend> {};

TEST_P(FrontierRmat, EverySettingMatchesAcrossFlushAndCompaction) {
  if (GetParam() == IoBackend::kIoUring && !io::Env::IoUringAvailable()) GTEST_SKIP();
  testing::TempDir dir;
  Param p{GraphKind::kUndirected, true, GetParam()};
  Options o = SmallTiers(p);
  o.memgraph_bytes = 64 << 10;  // flushes every few thousand entries
  o.level1_bytes = 128 << 10;
  o.target_file_bytes = 32 << 10;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  graphio::GeneratorOptions go;
  go.scale = 11;
  go.edge_factor = 8;
  go.weighted = true;
  std::unique_ptr<graphio::EdgeGenerator> gen;
  ASSERT_TRUE(graphio::EdgeGenerator::New(go, &gen).ok());
  {
    WriteBatch b;
    for (VertexId v = 0; v < gen->num_vertices(); ++v) b.AddVertex(v);
    ASSERT_TRUE(db->Write(b).ok());
  }
  std::mt19937_64 rng(77 + static_cast<int>(GetParam()));
  std::vector<graphio::Edge> batch;
  int checks = 0;
  auto check = [&](const std::string& at) {
    auto snap = db->GetSnapshot();
    const VertexId bound = snap->VertexIdBound();
    std::vector<VertexId> all(bound);
    for (VertexId v = 0; v < bound; ++v) all[v] = v;
    CheckBatch(*snap, nullptr, all, at + ", every vertex");
    std::vector<VertexId> some(700);
    for (VertexId& v : some) v = rng() % bound;
    CheckBatch(*snap, nullptr, some, at + ", random with duplicates");
    std::sort(some.begin(), some.end());
    CheckBatch(*snap, nullptr, some, at + ", random sorted");
    // The kernels: BFS depths and SSSP distances equal under every setting. Under TSan on one
    // thread: Debian's libtbb is not instrumented (CMakeLists.txt, the "tbb" label).
#if defined(__SANITIZE_THREAD__)
    tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
#endif
    std::vector<int64_t> depth0;
    std::vector<double> dist0;
    for (const FrontierReadConfig& cfg : kFrontierConfigs) {
      FrontierConfigScope scope(cfg);
      analytics::BfsParams bp;
      bp.source = 0;
      std::vector<int64_t> depth;
      ASSERT_TRUE(analytics::Bfs(*snap, bp, &depth).ok());
      analytics::SsspParams sp;
      sp.source = 0;
      std::vector<double> dist;
      ASSERT_TRUE(analytics::Sssp(*snap, sp, &dist).ok());
      if (depth0.empty()) {
        depth0 = depth;
        dist0 = dist;
      }
      ASSERT_EQ(depth, depth0) << at << ": BFS, frontier group " << cfg.group;
      ASSERT_EQ(dist, dist0) << at << ": SSSP, frontier group " << cfg.group;
    }
    ++checks;
  };
  size_t written = 0;
  while (gen->NextBatch(&batch, 2048)) {
    WriteBatch b;
    for (const graphio::Edge& e : batch) {
      b.InsertEdge(e.src, e.dst, e.weight);
      if (rng() % 16 == 0) b.DeleteEdge(e.src, rng() % gen->num_vertices());
    }
    ASSERT_TRUE(db->Write(b).ok());
    written += batch.size();
    if (written % 4096 == 0) check("after " + std::to_string(written) + " edges");
  }
  DBStats st = db->GetStats();
  EXPECT_GT(st.flushes, 2u) << "the memgraph never filled";
  EXPECT_GT(st.compactions, 0u) << "compaction never ran";
  EXPECT_GT(st.level_files, 0u);
  ASSERT_TRUE(db->CompactAll().ok());
  check("compacted");
  EXPECT_GT(checks, 3);
}

INSTANTIATE_TEST_SUITE_P(Backends, FrontierRmat,
                         ::testing::Values(IoBackend::kPosix, IoBackend::kIoUring),
                         [](const ::testing::TestParamInfo<IoBackend>& i) {
                           return std::string(i.param == IoBackend::kPosix ? "Posix" : "IoUring");
                         });

// SortUniqueFrontier (SSSP's buckets): the same vertices as filter + sort + unique, for
// frontiers dense enough for the bitmap pass (n >= span / kDenseFrontierShare) and sparser ones,
// with duplicates and a filter; the bitmap is all zero again afterwards.
TEST(Frontier, SortUniqueMatchesSortAndUnique) {
  const VertexId bound = 1 << 20;
  analytics::Bitmap marks;
  marks.Resize(bound);
  std::mt19937_64 rng(7);
  struct Case {
    size_t n;
    VertexId span;
  };
  // Dense: 20000 over 2^20 and 3000 over 10000 (bitmap); sparse: 50 over 2^20 (sort); 1; 0.
  for (const Case c : {Case{20000, bound}, Case{3000, 10000}, Case{50, bound}, Case{1, 5},
                       Case{0, 5}}) {
    for (int filter = 0; filter < 2; ++filter) {
      std::vector<VertexId> vs;
      const VertexId base = c.span < bound ? 123456 : 0;
      for (size_t i = 0; i < c.n; ++i) {
        vs.push_back(base + rng() % c.span);
        if (i % 7 == 0) vs.push_back(vs.back());  // duplicates
      }
      auto keep = [&](VertexId v) { return filter == 0 || v % 3 != 0; };
      std::vector<VertexId> want;
      for (VertexId v : vs) {
        if (keep(v)) want.push_back(v);
      }
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      analytics::SortUniqueFrontier(&vs, &marks, keep);
      EXPECT_EQ(vs, want) << "n " << c.n << " span " << c.span << " filter " << filter;
      for (size_t w = 0; w < bound / 64; ++w) {
        ASSERT_EQ(marks.Word(w), 0u) << "word " << w << " left set";
      }
    }
  }
}

// A run whose fields do not fit the multi-level index's packed entry (degree >= 2^20 - 1) is
// kept there as "level only"; range scans then take the vertex's entry from its file. The
// hub's list, on the bottom level and (after more writes) on level 0 too, comes back whole
// from ScanAdjacency and ScanDegreeBounds, beside small lists before and after it.
TEST(BatchRead, RunTooLongForTheIndexEntryIsReadThroughItsFile) {
  testing::TempDir dir;
  Options o;
  o.graph_kind = GraphKind::kDirected;
  o.wal = WalMode::kOff;
  o.background_compaction = false;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  const VertexId hub = 5;
  const uint64_t degree = index::Pos::kDegreeMask + 64;  // past what an entry packs
  std::map<VertexId, std::vector<VertexId>> want;
  for (uint64_t k = 0; k < degree;) {
    WriteBatch b;
    for (uint64_t j = 0; j < 65536 && k < degree; ++j, ++k) {
      const VertexId v = 100 + 2 * k;  // even IDs; the later writes add odd ones
      b.InsertEdge(hub, v, 1.0);
      want[hub].push_back(v);
    }
    ASSERT_TRUE(db->Write(b).ok());
  }
  WriteBatch small;
  for (VertexId u : {VertexId{3}, VertexId{7}}) {
    for (VertexId v = 10; v < 40; v += 3) {
      small.InsertEdge(u, v, 1.0);
      want[u].push_back(v);
    }
  }
  ASSERT_TRUE(db->Write(small).ok());
  ASSERT_TRUE(db->CompactAll().ok());
  auto check = [&](const std::string& at) {
    auto snap = db->GetSnapshot();
    std::map<VertexId, std::vector<VertexId>> got;
    ASSERT_TRUE(snap->ScanAdjacency(0, 10, Direction::kOut, false, [](VertexId) { return true; },
                                    [&](VertexId u, const NeighborChunk& c) {
                                      got[u].insert(got[u].end(), c.dst, c.dst + c.size);
                                      return ScanStep::kMore;
                                    })
                    .ok());
    ASSERT_EQ(got.size(), want.size()) << at;
    for (auto& [u, list] : want) {
      ASSERT_EQ(got[u].size(), list.size()) << at << ": vertex " << u;
      ASSERT_TRUE(got[u] == list) << at << ": vertex " << u << " list differs";
    }
    std::map<VertexId, uint64_t> bounds;
    ASSERT_TRUE(snap->ScanVertexDegreeBounds(0, 10, Direction::kOut, [&](VertexId u, uint64_t d) {
                      bounds[u] = d;
                      return true;
                    })
                    .ok());
    EXPECT_GE(bounds[hub], want[hub].size()) << at;
    EXPECT_EQ(bounds[3], want[3].size()) << at;
    EXPECT_EQ(bounds[7], want[7].size()) << at;
  };
  check("compacted: the hub on the bottom level alone");
  WriteBatch more;
  for (VertexId v = 101; v < 101 + 2 * 1000; v += 2) {
    more.InsertEdge(hub, v, 1.0);
    want[hub].push_back(v);
  }
  std::sort(want[hub].begin(), want[hub].end());
  ASSERT_TRUE(db->Write(more).ok());
  ASSERT_TRUE(db->Flush().ok());
  check("flushed: a level-0 run over the bottom level's");
}

// A flipped byte in an edge block: the batch read fails with Corruption naming the file, as
// the single-vertex read of an affected vertex does, on both back ends.
TEST(BatchRead, DamagedBlockIsCorruptionNamingTheFile) {
  for (IoBackend io : {IoBackend::kPosix, IoBackend::kIoUring}) {
    if (io == IoBackend::kIoUring && !io::Env::IoUringAvailable()) continue;
    SCOPED_TRACE(io == IoBackend::kPosix ? "posix" : "io_uring");
    testing::TempDir dir;
    Options o;
    o.io_backend = io;
    o.wal = WalMode::kOff;
    o.background_compaction = false;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
    WriteBatch b;
    for (VertexId u = 0; u < 64; ++u) {
      for (VertexId v = 0; v < 400; ++v) b.InsertEdge(u, (v * 7919 + u) % 5000, 1.0);
    }
    ASSERT_TRUE(db->Write(b).ok());
    ASSERT_TRUE(db->Flush().ok());
    std::string seg;
    for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/db")) {
      if (e.path().extension() == ".seg") seg = e.path().string();
    }
    ASSERT_NE(seg, "") << "no segment file found";
    auto snap = db->GetSnapshot();
    // Corrupt one byte a third into the file: inside the edge stream, the bulk of the file.
    const int fd = ::open(seg.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    const off_t off = static_cast<off_t>(std::filesystem::file_size(seg) / 3);
    char c;
    ASSERT_EQ(::pread(fd, &c, 1, off), 1);
    c = static_cast<char>(c ^ 0x5a);
    ASSERT_EQ(::pwrite(fd, &c, 1, off), 1);
    ::close(fd);
    std::vector<VertexId> all(64);
    for (VertexId v = 0; v < 64; ++v) all[v] = v;
    for (const FrontierReadConfig& cfg : kFrontierConfigs) {
      FrontierConfigScope scope(cfg);
      Status s = snap->ScanNeighborsBatch(all.data(), all.size(), Direction::kOut,
                                          [](size_t, const NeighborChunk&) { return true; });
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.ToString().find(std::filesystem::path(seg).filename().string()),
                std::string::npos)
          << s.ToString();
    }
    bool single_failed = false;
    for (VertexId v : all) {
      std::vector<VertexId> dst;
      single_failed |= snap->GetNeighbors(v, &dst).IsCorruption();
    }
    EXPECT_TRUE(single_failed);
    // The file cut short under the open store: the edge blocks past the cut are read past the
    // end of the file, an IOError naming the file and the offset where its bytes ran out.
    const uint64_t cut = std::filesystem::file_size(seg) / 4;
    ASSERT_EQ(::truncate(seg.c_str(), static_cast<off_t>(cut)), 0);
    for (const FrontierReadConfig& cfg : kFrontierConfigs) {
      FrontierConfigScope scope(cfg);
      Status s = snap->ScanNeighborsBatch(all.data(), all.size(), Direction::kOut,
                                          [](size_t, const NeighborChunk&) { return true; });
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      EXPECT_NE(s.ToString().find("file " + seg + " offset "), std::string::npos) << s.ToString();
      EXPECT_NE(s.ToString().find("read past end of file"), std::string::npos) << s.ToString();
    }
  }
}

// Timings on a persisted store; not a test (skipped unless STRATA_BATCH_BENCH_DB is set):
//   STRATA_BATCH_BENCH_DB=<store> STRATA_BATCH_BENCH_SCALE=20 STRATA_BATCH_BENCH_SEED=1
//     [STRATA_BATCH_BENCH_RUNS=3] ./batch_read_test --gtest_filter='BatchReadBench.*'
// The store holds `strata generate --kind kron --scale S --edge-factor 16 --seed N` ingested with
// dense IDs. SCANNBR: every neighbor of 20% of 2^S vertices, each an endpoint of a random
// edge of the stream (degree-biased, the strata-bench sample), in random order: one
// ScanNeighbors per vertex on a parallel loop, or ForEachFrontierChunk batches of 1024 (also
// with the sample sorted). Then BFS and SSSP with fetch_batch 0 and 1024. Each on both I/O back
// ends, after dropping the page cache before every run (when allowed), then warm. Prints the
// median of the runs: wall time, process CPU time, bytes the process read from the device.
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// read_bytes of /proc/self/io: bytes this process caused to be read from storage.
uint64_t DeviceReadBytes() {
  FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return 0;
  char line[128];
  uint64_t v = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::sscanf(line, "read_bytes: %lu", &v) == 1) break;
  }
  std::fclose(f);
  return v;
}

bool DropPageCache() {
  ::sync();
  FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("3\n", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

struct Timing {
  double wall = 0, cpu = 0, mib = 0;
};

// Median (per field) of `runs` runs of fn; the page cache is dropped before each when cold.
template <class Fn>
Timing Measure(int runs, bool cold, Fn&& fn) {
  std::vector<double> wall, cpu, mib;
  for (int r = 0; r < runs; ++r) {
    if (cold) DropPageCache();
    const double c0 = CpuSeconds(), t0 = Now();
    const uint64_t b0 = DeviceReadBytes();
    fn();
    wall.push_back(Now() - t0);
    cpu.push_back(CpuSeconds() - c0);
    mib.push_back(static_cast<double>(DeviceReadBytes() - b0) / (1 << 20));
  }
  for (auto* v : {&wall, &cpu, &mib}) std::sort(v->begin(), v->end());
  return {wall[runs / 2], cpu[runs / 2], mib[runs / 2]};
}

TEST(BatchReadBench, ScanNbrAndFrontierKernels) {
  const char* dir = std::getenv("STRATA_BATCH_BENCH_DB");
  if (dir == nullptr) GTEST_SKIP() << "set STRATA_BATCH_BENCH_DB";
  auto env = [](const char* name, uint64_t def) {
    const char* v = std::getenv(name);
    return v ? std::strtoull(v, nullptr, 10) : def;
  };
  const int scale = static_cast<int>(env("STRATA_BATCH_BENCH_SCALE", 20));
  const uint64_t seed = env("STRATA_BATCH_BENCH_SEED", 1);
  const int runs = static_cast<int>(std::max<uint64_t>(1, env("STRATA_BATCH_BENCH_RUNS", 3)));
  cli::StoreInfo info;
  ASSERT_TRUE(cli::ReadStoreInfo(dir, &info).ok());
  graphio::GeneratorOptions go;
  go.scale = scale;
  go.seed = seed;
  std::unique_ptr<graphio::EdgeGenerator> gen;
  ASSERT_TRUE(graphio::EdgeGenerator::New(go, &gen).ok());
  std::vector<VertexId> sample(gen->num_vertices() / 5);
  graphio::SplitMix64 rng(seed * 11 + 1);
  for (VertexId& v : sample) {
    const uint64_t r = rng.Next();
    graphio::Edge e = gen->EdgeAtPosition(r % gen->num_edges());
    v = (r >> 63) ? e.src : e.dst;
  }
  std::vector<VertexId> sorted = sample;
  std::sort(sorted.begin(), sorted.end());
  const bool cold_ok = DropPageCache();
  std::printf("store %s (%s), %zu sampled vertices, %d threads, median of %d runs, page cache "
              "drop %s\n", dir, cli::KindName(info.state.kind), sample.size(),
              tbb::this_task_arena::max_concurrency(), runs, cold_ok ? "allowed" : "NOT allowed");
  auto print = [](const char* what, const char* io, bool cold, const char* mode, const Timing& t,
                  double ops, double edges) {
    std::printf("%-7s %-8s %s %-30s %7.3f s wall %7.3f s cpu %7.1f MiB read", what, io,
                cold ? "cold" : "warm", mode, t.wall, t.cpu, t.mib);
    if (ops > 0) std::printf("  %8.0f vertices/s %10.0f edges/s", ops / t.wall, edges / t.wall);
    std::printf("\n");
    std::fflush(stdout);
  };

  for (IoBackend io : {IoBackend::kPosix, IoBackend::kIoUring}) {
    if (io == IoBackend::kIoUring && !io::Env::IoUringAvailable()) continue;
    const char* ioname = io == IoBackend::kPosix ? "pread" : "io_uring";
    Options o;
    o.graph_kind = info.state.kind;
    o.weighted = info.state.weighted;
    o.io_backend = io;
    o.wal = WalMode::kOff;
    o.memory_budget = size_t{2} << 30;
    o.background_compaction = false;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, dir, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto snap = db->GetSnapshot();
    uint64_t want = 0;
    for (bool cold : {true, false}) {
      if (cold && !cold_ok) continue;
      for (int mode = 0; mode < 3; ++mode) {
        const std::vector<VertexId>& vs = mode == 2 ? sorted : sample;
        std::atomic<uint64_t> edges{0};
        Timing t = Measure(runs, cold, [&] {
          edges = 0;
          if (mode == 0) {
            tbb::parallel_for(tbb::blocked_range<size_t>(0, vs.size(), 64),
                              [&](const tbb::blocked_range<size_t>& r) {
              uint64_t n = 0;
              for (size_t i = r.begin(); i < r.end(); ++i) {
                EXPECT_TRUE(snap->ScanNeighbors(vs[i], [&](const NeighborChunk& c) {
                  n += c.size;
                  return true;
                }).ok());
              }
              edges += n;
            });
          } else {
            Status st = analytics::ForEachFrontierChunk(
                *snap, vs.data(), vs.size(), Direction::kOut, /*weights=*/false,
                analytics::kDefaultFetchBatch, [&] {
                  return [&edges](VertexId, const NeighborChunk& c) {
                    edges.fetch_add(c.size, std::memory_order_relaxed);
                    return true;
                  };
                });
            EXPECT_TRUE(st.ok()) << st.ToString();
          }
        });
        if (want == 0) want = edges;
        EXPECT_EQ(edges.load(), want);
        static const char* kModes[] = {"one ScanNeighbors per vertex", "batched (1024)",
                                       "batched (1024), sorted sample"};
        print("SCANNBR", ioname, cold, kModes[mode], t, static_cast<double>(vs.size()),
              static_cast<double>(edges.load()));
      }
      // Frontier-driven kernels, before (one vertex per read) and after (batched).
      std::vector<int64_t> depth[2];
      std::vector<double> dist[2];
      for (int k = 0; k < 2; ++k) {
        const size_t batch = k == 0 ? 0 : analytics::kDefaultFetchBatch;
        const std::string mode = "fetch_batch " + std::to_string(batch);
        Timing t = Measure(runs, cold, [&] {
          analytics::BfsParams bp;
          bp.source = sample[0];
          bp.fetch_batch = batch;
          EXPECT_TRUE(analytics::Bfs(*snap, bp, &depth[k]).ok());
        });
        print("BFS", ioname, cold, mode.c_str(), t, 0, 0);
        t = Measure(runs, cold, [&] {
          analytics::SsspParams sp;
          sp.source = sample[0];
          sp.fetch_batch = batch;
          EXPECT_TRUE(analytics::Sssp(*snap, sp, &dist[k]).ok());
        });
        print("SSSP", ioname, cold, mode.c_str(), t, 0, 0);
      }
      EXPECT_EQ(depth[0], depth[1]);
      EXPECT_EQ(dist[0], dist[1]);
    }
    snap.reset();
    ASSERT_TRUE(db->Close().ok());
  }
}

}  // namespace
}  // namespace strata
