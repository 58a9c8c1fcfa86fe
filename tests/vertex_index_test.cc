// The multi-level vertex index (index/): the page structure against a std::map model (random
// edits, overflow pages splitting and merging, IDs near 2^64, copy-on-write sharing and old
// indexes unchanged), and in the store: the index maintained through many flushes and
// compactions equals the index rebuilt from the same files and the index rebuilt on reopen,
// and reads through it match the reference model.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "index/index_build.h"
#include "index/vertex_index.h"
#include "db/db_impl.h"
#include "strata/db.h"
#include "tests/util/random_batch.h"
#include "tests/util/reference_graph.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

using strata::testing::BatchMix;
using strata::testing::RandomBatch;
// No weight changes: a SetWeight of a missing edge would reject the whole batch.
constexpr BatchMix kMix{60, 85, 85, 93, 8};

using index::Pos;
using index::VertexIndex;
using index::VertexInfo;
using Edit = VertexIndex::Edit;
using Model = std::map<VertexId, VertexInfo>;

Pos RandomPos(std::mt19937_64& rng, uint32_t level) {
  VertexEntry e;
  e.flags = static_cast<uint8_t>(rng() % 8);
  e.has_tombstones = rng() % 2;
  e.degree = rng() % 5 == 0 ? rng() % (uint64_t{1} << 22) : rng() % 1000;
  e.stream_offset = rng() % 7 == 0 ? rng() % (uint64_t{1} << 42) : rng() % (uint64_t{1} << 30);
  e.run_bytes = rng() % 9 == 0 ? rng() % (uint64_t{1} << 26) : rng() % 5000;
  e.first_edge = rng() % 11 == 0 ? rng() % (uint64_t{1} << 34) : rng() % (uint64_t{1} << 28);
  return Pos::Make(level, e);
}

void ApplyToModel(const Edit& e, Model* m) {
  VertexInfo& info = (*m)[e.u];
  auto at = std::find_if(info.pos.begin(), info.pos.end(),
                         [&](const Pos& p) { return p.level() >= e.pos.level(); });
  const bool here = at != info.pos.end() && at->level() == e.pos.level();
  switch (e.kind) {
    case Edit::kLevelErase:
      if (here) info.pos.erase(at);
      break;
    case Edit::kLevelSet:
      if (here) *at = e.pos; else info.pos.insert(at, e.pos);
      break;
  }
  if (info.empty()) m->erase(e.u);
}

// Checks idx against the model: contents, Find on present and absent IDs, invariants.
void ExpectMatches(const VertexIndex& idx, const Model& m, std::mt19937_64& rng,
                   const std::vector<VertexId>& probes) {
  ASSERT_TRUE(idx.CheckInvariants().ok()) << idx.CheckInvariants().ToString();
  ASSERT_EQ(idx.vertices(), m.size());
  auto it = m.begin();
  bool same = true;
  idx.ForEach([&](VertexId u, const VertexInfo& info) {
    if (it == m.end() || it->first != u || !(it->second == info)) {
      same = false;
      return false;
    }
    ++it;
    return true;
  });
  ASSERT_TRUE(same && it == m.end()) << idx.Dump(20);
  for (VertexId u : probes) {
    VertexIndex::Located l;
    const bool found = idx.Find(u, &l);
    auto mi = m.find(u);
    ASSERT_EQ(found, mi != m.end()) << "vertex " << u;
    if (!found) continue;
    ASSERT_EQ(l.size(), mi->second.pos.size());
    for (uint32_t i = 0; i < l.size(); ++i) ASSERT_TRUE(l[i] == mi->second.pos[i]);
  }
  // ForEachIn over windows around some probes (crossing pages, starting and ending mid-word):
  // exactly the model's vertices of the window, ascending, with their positions; and a walk
  // told to stop after two vertices makes two calls.
  for (size_t q = 0; q < probes.size(); q += 7) {  // a seventh of the probes: windows cost more
    const VertexId u = probes[q];
    const VertexId begin = u >= 40 ? u - 40 - rng() % 60 : 0;
    const uint64_t len = 1 + rng() % 2500;
    const VertexId end = begin > ~VertexId{0} - len ? ~VertexId{0} : begin + len;
    std::vector<std::pair<VertexId, VertexInfo>> got, want;
    idx.ForEachIn(begin, end, [&](VertexId v, const VertexIndex::Located& l) {
      VertexInfo info;
      for (uint32_t i = 0; i < l.size(); ++i) info.pos.push_back(l[i]);
      got.emplace_back(v, info);
      return true;
    });
    for (auto mi = m.lower_bound(begin); mi != m.end() && mi->first < end; ++mi) {
      want.emplace_back(mi->first, mi->second);
    }
    ASSERT_TRUE(got == want) << "window [" << begin << ", " << end << "): " << got.size()
                             << " vertices, model " << want.size();
    size_t calls = 0;
    idx.ForEachIn(begin, end, [&](VertexId, const VertexIndex::Located&) { return ++calls < 2; });
    ASSERT_EQ(calls, std::min<size_t>(2, want.size()));
  }
  // LocateGroup: the model's vertices among a random half of a probe's 64-vertex group (and
  // the whole group), ascending, with their positions.
  for (size_t q = 0; q < probes.size(); q += 3) {
    const VertexId base = probes[q] & ~VertexId{63};
    for (uint64_t mask : {uint64_t{rng()}, ~uint64_t{0}}) {
      VertexId us[64];
      VertexIndex::Located locs[64];
      const size_t n = idx.LocateGroup(base, mask, us, locs);
      std::vector<std::pair<VertexId, VertexInfo>> got, want;
      for (size_t k = 0; k < n; ++k) {
        VertexInfo info;
        for (uint32_t i = 0; i < locs[k].size(); ++i) info.pos.push_back(locs[k][i]);
        got.emplace_back(us[k], info);
      }
      for (auto mi = m.lower_bound(base); mi != m.end() && mi->first - base < 64; ++mi) {
        if ((mask >> (mi->first - base)) & 1) want.emplace_back(mi->first, mi->second);
      }
      ASSERT_TRUE(got == want) << "group " << base << " mask " << mask << ": " << got.size()
                               << " vertices, model " << want.size();
    }
  }
}

TEST(VertexIndexPos, PacksAndFallsBackToLevelOnly) {
  VertexEntry e;
  e.src = 9;
  e.flags = kVertexExists | kVertexAdded;
  e.has_tombstones = true;
  e.degree = 1000;
  e.stream_offset = (uint64_t{1} << 40) - 1;
  e.run_bytes = (uint64_t{1} << 24) - 1;
  e.first_edge = (uint64_t{1} << 32) - 1;
  Pos p = Pos::Make(3, e);
  ASSERT_TRUE(p.has_entry());
  EXPECT_EQ(p.level(), 3u);
  VertexEntry d;
  p.ToEntry(9, &d);
  EXPECT_EQ(d.src, 9u);
  EXPECT_EQ(d.flags, e.flags);
  EXPECT_EQ(d.has_tombstones, true);
  EXPECT_EQ(d.degree, e.degree);
  EXPECT_EQ(d.stream_offset, e.stream_offset);
  EXPECT_EQ(d.run_bytes, e.run_bytes);
  EXPECT_EQ(d.first_edge, e.first_edge);
  for (int f = 0; f < 4; ++f) {  // each field just past its width
    VertexEntry big = e;
    if (f == 0) big.stream_offset = uint64_t{1} << 40;
    if (f == 1) big.run_bytes = uint64_t{1} << 24;
    if (f == 2) big.degree = Pos::kDegreeMask;
    if (f == 3) big.first_edge = uint64_t{1} << 32;
    Pos q = Pos::Make(200, big);
    EXPECT_FALSE(q.has_entry()) << f;
    EXPECT_EQ(q.level(), 200u);
  }
}

TEST(VertexIndex, RandomEditsMatchMapAndOldIndexesStay) {
  std::mt19937_64 rng(4242);
  // Vertices in a few clusters: dense low IDs, a sparse middle, and the top of the ID space.
  const std::vector<VertexId> bases = {0, 5000, uint64_t{1} << 40, (uint64_t{1} << 63) + 77,
                                       ~VertexId{0} - 3000};
  auto vertex = [&]() -> VertexId {
    const VertexId b = bases[rng() % bases.size()];
    const uint64_t span = rng() % 4 == 0 ? 3000 : 300;
    return b == bases.back() ? b + rng() % 3001 : b + rng() % span;
  };
  Model model;
  VertexIndex idx;
  std::vector<std::pair<VertexIndex, Model>> history;
  for (int round = 0; round < 60; ++round) {
    std::vector<Edit> edits;
    const int n = 1 + static_cast<int>(rng() % 600);
    for (int i = 0; i < n; ++i) {
      Edit e;
      e.u = vertex();
      const uint64_t r = rng() % 100;
      if (r < 40) {
        e.kind = Edit::kLevelErase;
        e.pos = Pos::LevelOnly(1 + static_cast<uint32_t>(rng() % 6));
      } else {
        e.kind = Edit::kLevelSet;
        e.pos = RandomPos(rng, 1 + static_cast<uint32_t>(rng() % 6));
      }
      edits.push_back(e);
    }
    // Edits come in any vertex order; those of one vertex apply in the order given.
    std::shuffle(edits.begin(), edits.end(), rng);
    Model next = model;
    for (const Edit& e : edits) ApplyToModel(e, &next);
    VertexIndex out;
    ASSERT_TRUE(idx.Apply(&edits, &out).ok());
    std::vector<VertexId> probes;
    for (int i = 0; i < 300; ++i) probes.push_back(vertex());
    for (const auto& [u, info] : next) {
      if (rng() % 8 == 0) probes.push_back(u);
    }
    probes.push_back(0);
    probes.push_back(~VertexId{0});
    ExpectMatches(out, next, rng, probes);
    history.emplace_back(idx, model);
    if (history.size() > 5) history.erase(history.begin());
    // Every older index still reads as it did (copy-on-write).
    for (const auto& [old_idx, old_model] : history) ExpectMatches(old_idx, old_model, rng, probes);
    idx = out;
    model = std::move(next);
  }
  EXPECT_GT(idx.vertices(), 100u);
}

TEST(VertexIndex, OverflowPagesSplitAndMerge) {
  std::mt19937_64 rng(7);
  VertexIndex idx;
  Model model;
  auto apply = [&](std::vector<Edit> edits) {
    for (const Edit& e : edits) ApplyToModel(e, &model);
    VertexIndex out;
    ASSERT_TRUE(idx.Apply(&edits, &out).ok());
    idx = out;
    std::vector<VertexId> probes;
    for (VertexId u = 2048; u < 2048 + 1024; u += 7) probes.push_back(u);
    ExpectMatches(idx, model, rng, probes);
  };
  // 300 vertices of range 2 on five levels: 4 overflow Pos each = 1200 > 4 pages of 256.
  std::vector<Edit> edits;
  for (VertexId u = 2048; u < 2048 + 300; ++u) {
    for (uint32_t l = 1; l <= 5; ++l) edits.push_back({u, Edit::kLevelSet, RandomPos(rng, l)});
  }
  apply(edits);
  ASSERT_EQ(idx.range_pages(), 1u);
  const uint64_t many = idx.overflow_pages();
  EXPECT_GE(many, 5u);
  for (const auto& s : idx.Shape()) {
    for (uint32_t f : s.overflow_fill) EXPECT_LE(f, index::kOverflowCapacity);
  }
  // A vertex in the middle of a full page grows to more levels: the page splits.
  edits.clear();
  for (VertexId u = 2048 + 100; u < 2048 + 140; ++u) {
    for (uint32_t l = 6; l <= 9; ++l) edits.push_back({u, Edit::kLevelSet, RandomPos(rng, l)});
  }
  apply(edits);
  EXPECT_GT(idx.overflow_pages(), many);
  // Vertices drop to two levels, most of them: neighbours merge.
  edits.clear();
  for (VertexId u = 2048; u < 2048 + 290; ++u) {
    for (uint32_t l = 3; l <= 9; ++l) edits.push_back({u, Edit::kLevelErase, Pos::LevelOnly(l)});
  }
  apply(edits);
  EXPECT_EQ(idx.overflow_pages(), 1u);
  // All on two levels: no overflow page at all.
  edits.clear();
  for (VertexId u = 2048 + 290; u < 2048 + 300; ++u) {
    for (uint32_t l = 3; l <= 9; ++l) edits.push_back({u, Edit::kLevelErase, Pos::LevelOnly(l)});
  }
  apply(edits);
  EXPECT_EQ(idx.overflow_pages(), 0u);
  // Everything leaves: the index is empty.
  edits.clear();
  for (VertexId u = 2048; u < 2048 + 300; ++u) {
    for (uint32_t l = 1; l <= 2; ++l) edits.push_back({u, Edit::kLevelErase, Pos::LevelOnly(l)});
  }
  apply(edits);
  EXPECT_EQ(idx.vertices(), 0u);
  EXPECT_EQ(idx.range_pages(), 0u);
}

TEST(VertexIndex, SparseIdsAndCopyOnWriteSharing) {
  std::mt19937_64 rng(11);
  VertexIndex idx;
  Model model;
  std::vector<Edit> edits;
  std::vector<VertexId> ids = {0, 1023, 1024, uint64_t{1} << 32, uint64_t{1} << 63,
                               ~VertexId{0} - 1024, ~VertexId{0} - 1, ~VertexId{0}};
  for (int i = 0; i < 100; ++i) ids.push_back((rng() >> 3) << 10);  // 100 scattered ranges
  for (VertexId u : ids) edits.push_back({u, Edit::kLevelSet, RandomPos(rng, 2)});
  for (const Edit& e : edits) ApplyToModel(e, &model);
  ASSERT_TRUE(VertexIndex().Apply(&edits, &idx).ok());
  ExpectMatches(idx, model, rng, ids);
  // Memory follows the vertices present, not the ID space.
  EXPECT_LT(idx.bytes(), 2000 * idx.vertices());
  const uint64_t pages = idx.range_pages();
  // One edit: one range page copied, every other page shared.
  std::vector<Edit> one = {{~VertexId{0}, Edit::kLevelSet, RandomPos(rng, 4)}};
  VertexIndex next;
  ASSERT_TRUE(idx.Apply(&one, &next).ok());
  EXPECT_EQ(next.SharedRangePages(idx), pages - 1);
  ApplyToModel(one[0], &model);
  ExpectMatches(next, model, rng, ids);
  VertexIndex::Located l;
  ASSERT_TRUE(idx.Find(~VertexId{0}, &l));
  EXPECT_EQ(l.size(), 1u);  // the old index does not see the edit
  ASSERT_TRUE(next.Find(~VertexId{0}, &l));
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[1].level(), 4u);
  EXPECT_FALSE(next.Find(~VertexId{0} - 2, &l));
  // Levels outside [1, kMaxIndexedLevel] are refused with the vertex named.
  std::vector<Edit> bad = {{7, Edit::kLevelSet, Pos::LevelOnly(0)}};
  Status s = idx.Apply(&bad, &next);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("vertex 7"), std::string::npos) << s.ToString();
}

// ---------------------------------------------------------------------------------------------
// In the store


// The index of every direction of v equals the index built from v's files from scratch.
void ExpectIndexMatchesFiles(const Version& v, const std::string& when) {
  Version rebuilt = v;
  ASSERT_TRUE(RebuildIndex(&rebuilt).ok());
  for (int d = 0; d < 2; ++d) {
    ASSERT_TRUE(v.index[d].CheckInvariants().ok()) << when << ": " << v.index[d].CheckInvariants().ToString();
    std::string diff;
    ASSERT_TRUE(v.index[d].SameContents(rebuilt.index[d], &diff))
        << when << ", direction " << d << ": maintained vs rebuilt differ at " << diff;
  }
}

TEST(VertexIndexStore, RebuiltOnOpenEqualsMaintainedDuringCompaction) {
  for (GraphKind kind : {GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    SCOPED_TRACE(GraphKindName(kind));
    testing::TempDir dir;
    Options o;
    o.graph_kind = kind;
    o.weighted = kind == GraphKind::kUndirected;
    o.memgraph_bytes = 8 << 10;
    o.cart_threshold = 8;
    o.memory_budget = 1 << 20;
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 16 << 10;
    o.level_fanout = 2;
    o.max_levels = 5;
    o.target_file_bytes = 8 << 10;
    o.wal = WalMode::kOff;  // every round ends with a flush and a clean close
    const std::string path = dir.path() + "/db";
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    testing::ReferenceGraph ref(kind, o.weighted);
    std::mt19937_64 rng(31 + static_cast<int>(kind));
    // Vertices spread over several 1024-vertex ranges so installs touch some range pages and
    // share the others.
    const VertexId limit = 2600;
    uint64_t checks = 0, max_levels_seen = 0;
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 400; ++i) {
        WriteBatch b = RandomBatch(rng, limit, o.weighted, kMix);
        if (db->Write(b).ok()) ref.Apply(b);
        if (i % 40 == 39) {
          auto v = static_cast<DBImpl*>(db.get())->CurrentVersion();
          ExpectIndexMatchesFiles(*v, "round " + std::to_string(round) + " batch " + std::to_string(i));
          ++checks;
          for (int d = 0; d < 2; ++d) {
            v->index[d].ForEach([&](VertexId, const index::VertexInfo& info) {
              max_levels_seen = std::max<uint64_t>(max_levels_seen, info.pos.size());
              return true;
            });
          }
        }
      }
      ASSERT_TRUE(db->Flush().ok());
      if (round == 2) {
        ASSERT_TRUE(db->CompactAll().ok());
      }
      std::string diff = ref.Compare(*db->GetSnapshot(), limit);
      ASSERT_EQ(diff, "") << "round " << round;
      // Close; the index rebuilt on open equals the one maintained until the close.
      ASSERT_TRUE(db->Close().ok());
      auto before = static_cast<DBImpl*>(db.get())->CurrentVersion();
      ExpectIndexMatchesFiles(*before, "at close");
      db.reset();
      ASSERT_TRUE(DB::Open(o, path, &db).ok());
      auto after = static_cast<DBImpl*>(db.get())->CurrentVersion();
      for (int d = 0; d < 2; ++d) {
        std::string d2;
        ASSERT_TRUE(before->index[d].SameContents(after->index[d], &d2))
            << "round " << round << " direction " << d << ": maintained vs rebuilt on open: " << d2;
      }
      diff = ref.Compare(*db->GetSnapshot(), limit);
      ASSERT_EQ(diff, "") << "after reopen, round " << round;
      const DBStats st = db->GetStats(false);
      EXPECT_GT(st.vertex_index_entries, 0u);
      EXPECT_GT(st.vertex_index_bytes, 0u);
    }
    EXPECT_GE(checks, 40u);
    // Some vertex sat on three levels at once: overflow pages were maintained too.
    EXPECT_GE(max_levels_seen, 3u) << "no vertex on three levels: the test is too small";
  }
}

// ApplyFileChanges on real segment files: for random splits of a version's files into kept (A),
// removed (R) and added (N), the index of A+R with R removed and N added, in steps of various
// sizes and scan windows, equals the index built from A+N; Build gives the same index whatever
// the step and window (a 4-KiB window decodes one 64-entry vertex block a batch, so a file's
// cursor crosses many batches, and steps cut them).
TEST(VertexIndexStore, FileChangesInStepsEqualBuild) {
  testing::TempDir dir;
  Options o;
  o.graph_kind = GraphKind::kDirectedWithInEdges;
  o.memgraph_bytes = 16 << 10;
  o.l0_compaction_trigger = 4;
  o.level1_bytes = 64 << 10;
  o.level_fanout = 2;
  o.target_file_bytes = 16 << 10;
  o.wal = WalMode::kOff;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  std::mt19937_64 rng(77);
  // IDs over ~100 ranges, so steps of 1024 to 16384 IDs cut files apart; half of them among
  // 64 hot vertices spread over the whole span, which most files hold (L0 files overlap).
  auto vertex = [&]() -> VertexId {
    return rng() % 2 == 0 ? (rng() % 64) * 1543 : rng() % 100000;
  };
  // The shape the test needs, in both directions: level-0 files and two levels. Each
  // direction's level 0 is merged by its own background job, so one direction's level 0 may
  // be empty while the other's is not: the writes go on until a Version has the shape (under
  // load the jobs' timing moves; CI once saw l0[1] empty at the 1200th batch).
  auto shaped = [](const Version& v) {
    for (int d = 0; d < 2; ++d) {
      if (v.l0[d].empty() || v.levels[d].size() < 2 || v.levels[d][0].empty()) return false;
    }
    return true;
  };
  std::shared_ptr<const Version> v;
  for (int i = 0; i < 6000; ++i) {
    WriteBatch b;
    for (int k = 0; k < 8; ++k) b.InsertEdge(vertex(), vertex(), 1.0);
    if (i % 50 == 0) b.DeleteVertex(vertex());
    ASSERT_TRUE(db->Write(b).ok());
    if (i < 1200) continue;
    v = static_cast<DBImpl*>(db.get())->CurrentVersion();
    if (shaped(*v)) break;
    v.reset();
  }
  ASSERT_NE(v, nullptr) << "no Version with level-0 files and two levels in both directions";
  const uint64_t steps[] = {1024, 2048, 4096, 1u << 14, uint64_t{1} << 20};
  // 0: the readers' own window (1 MiB).
  const size_t windows[] = {4096, index::kIndexScanWindow, 0};
  for (int d = 0; d < 2; ++d) {
    std::vector<index::IndexedFile> files;
    uint64_t most = 0;  // vertex blocks of the largest file
    for (size_t k = 0; k < v->levels[d].size(); ++k) {
      for (const auto& h : v->levels[d][k]) {
        files.push_back({h->reader.get(), static_cast<uint32_t>(k + 1)});
        const uint64_t group = std::max<uint64_t>(1, h->reader->header().vertex_group);
        most = std::max<uint64_t>(most, (h->reader->num_vertices() + group - 1) / group);
      }
    }
    ASSERT_GE(most, 3u) << "the test needs a file of several vertex blocks";
    // Level-0 files are not indexed per vertex: refused, with the level named.
    VertexIndex refused;
    Status s0 = index::Build({{v->l0[d][0]->reader.get(), 0}}, &refused);
    EXPECT_TRUE(s0.IsInvalidArgument());
    EXPECT_NE(s0.ToString().find("level 0"), std::string::npos) << s0.ToString();
    s0 = index::ApplyFileChanges(v->index[d], {{v->l0[d][0]->reader.get(), 0, false}}, &refused);
    EXPECT_TRUE(s0.IsInvalidArgument()) << s0.ToString();
    // A move to the level it is on is no move.
    s0 = index::ApplyFileChanges(v->index[d], {{files[0].reader, files[0].level, true,
                                                files[0].level}}, &refused);
    EXPECT_TRUE(s0.IsInvalidArgument()) << s0.ToString();
    for (uint64_t step : steps) {
      for (size_t window : windows) {
        VertexIndex built;
        ASSERT_TRUE(index::Build(files, &built, step, window).ok());
        ASSERT_TRUE(built.CheckInvariants().ok());
        std::string diff;
        ASSERT_TRUE(built.SameContents(v->index[d], &diff))
            << "step " << step << " window " << window << ": " << diff;
      }
    }
    uint32_t top = 0;
    for (const index::IndexedFile& f : files) top = std::max(top, f.level);
    for (int trial = 0; trial < 30; ++trial) {
      std::vector<index::IndexedFile> before, after;
      std::vector<index::FileChange> changes;
      bool moved = false;  // at most one file moves, to the empty level below the others
      for (const index::IndexedFile& f : files) {
        const uint64_t r = rng() % 5;  // 0, 1: kept; 2: removed; 3: added; 4: moved
        if (r == 4 && !moved) {
          moved = true;
          before.push_back(f);
          after.push_back({f.reader, top + 1});
          changes.push_back({f.reader, top + 1, true, f.level});
          continue;
        }
        if (r <= 2) before.push_back(f);
        if (r == 0 || r == 1 || r == 3) after.push_back(f);
        if (r == 2 || r == 3) changes.push_back({f.reader, f.level, r == 3});
      }
      std::shuffle(changes.begin(), changes.end(), rng);
      const uint64_t step = steps[rng() % 5];
      const size_t window = windows[rng() % 3];
      VertexIndex base, want, got;
      ASSERT_TRUE(index::Build(before, &base, steps[rng() % 5], windows[rng() % 3]).ok());
      ASSERT_TRUE(index::Build(after, &want, steps[rng() % 5], windows[rng() % 3]).ok());
      ASSERT_TRUE(index::ApplyFileChanges(base, changes, &got, step, window).ok());
      ASSERT_TRUE(got.CheckInvariants().ok()) << got.CheckInvariants().ToString();
      std::string diff;
      ASSERT_TRUE(got.SameContents(want, &diff)) << "direction " << d << " trial " << trial
                                                 << " step " << step << " window " << window
                                                 << ": " << diff;
    }
  }
  VertexIndex unused;
  EXPECT_TRUE(index::Build({}, &unused, 1000).IsInvalidArgument());
  EXPECT_TRUE(index::Build({}, &unused, 512).IsInvalidArgument());
}

TEST(VertexIndexStore, HeldSnapshotKeepsItsIndexAcrossCompaction) {
  testing::TempDir dir;
  Options o;
  o.memgraph_bytes = 8 << 10;
  o.l0_compaction_trigger = 2;
  o.level1_bytes = 16 << 10;
  o.level_fanout = 2;
  o.target_file_bytes = 8 << 10;
  o.wal = WalMode::kOff;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  testing::ReferenceGraph ref(o.graph_kind, o.weighted);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 600; ++i) {
    WriteBatch b = RandomBatch(rng, 3000, false, kMix);
    if (db->Write(b).ok()) ref.Apply(b);
  }
  ASSERT_TRUE(db->Flush().ok());
  std::unique_ptr<Snapshot> held = db->GetSnapshot();
  const testing::ReferenceGraph at_hold = ref;
  auto v0 = static_cast<DBImpl*>(db.get())->CurrentVersion();
  Version copy0 = *v0;
  for (int i = 0; i < 600; ++i) {
    WriteBatch b = RandomBatch(rng, 3000, false, kMix);
    if (db->Write(b).ok()) ref.Apply(b);
  }
  ASSERT_TRUE(db->CompactAll().ok());
  auto v1 = static_cast<DBImpl*>(db.get())->CurrentVersion();
  ASSERT_NE(v0.get(), v1.get());
  std::string diff;
  EXPECT_TRUE(v0->index[0].SameContents(copy0.index[0], &diff)) << diff;
  EXPECT_FALSE(v0->index[0].SameContents(v1->index[0]));
  EXPECT_EQ(at_hold.Compare(*held, 3000), "");
  EXPECT_EQ(ref.Compare(*db->GetSnapshot(), 3000), "");
}

}  // namespace
}  // namespace strata
