// Level-0 presence (index/l0_presence.h) in the store: each level-0 file's bitmap says exactly
// which vertices the file holds (against the file's own vertex table), is made only when the
// file's IDs are dense enough, is counted in the resident indexes, and reads through it (and
// without it, for sparse files) match the reference model. A flush leaves the vertex index
// as it is (the new Version shares every page of it).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "db/db_impl.h"
#include "index/l0_presence.h"
#include "strata/db.h"
#include "tests/util/random_batch.h"
#include "tests/util/reference_graph.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

using strata::testing::BatchMix;
using strata::testing::RandomBatch;
constexpr BatchMix kMix{60, 85, 85, 93, 8};

Options SmallStore(GraphKind kind) {
  Options o;
  o.graph_kind = kind;
  o.weighted = kind == GraphKind::kUndirected;
  o.memgraph_bytes = 16 << 10;
  o.memory_budget = 1 << 20;
  o.l0_compaction_trigger = 1000;  // level-0 files pile up: the reads go through them
  o.l0_stall_trigger = 2000;
  // Nor does the idle merge move them: a slow run (ASan took 15 s for the first test) passes
  // 2 s without a write between the flush and the checks.
  o.idle_compaction_ms = 0;
  o.wal = WalMode::kOff;
  return o;
}

bool Dense(const SegmentReader& r) {
  const SegmentHeader& h = r.header();
  return r.num_vertices() != 0 &&
         (h.max_src - h.min_src) / index::L0Presence::kMaxBitsPerVertex < r.num_vertices();
}

// Every level-0 file of v: a presence exactly when dense, and then Holds(u) == the file has an
// entry for u, over the file's range and a little around it. Returns the files with one.
size_t ExpectPresenceExact(const Version& v) {
  size_t with = 0;
  for (int d = 0; d < 2; ++d) {
    for (const auto& h : v.l0[d]) {
      const SegmentReader& r = *h->reader;
      EXPECT_EQ(h->presence != nullptr, Dense(r)) << h->path;
      if (h->presence == nullptr) continue;
      ++with;
      EXPECT_EQ(h->presence->vertices(), r.num_vertices()) << h->path;
      const VertexId lo = h->meta.min_src >= 3 ? h->meta.min_src - 3 : 0;
      for (VertexId u = lo; u <= h->meta.max_src + 3; ++u) {
        VertexEntry e;
        const Status s = r.FindVertex(u, &e);
        EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
        if (h->presence->Holds(u) != s.ok()) {
          ADD_FAILURE() << h->path << ": vertex " << u << " presence " << h->presence->Holds(u)
                        << ", file " << s.ToString();
          return with;
        }
      }
    }
  }
  return with;
}

TEST(L0Presence, ExactForEveryLevel0FileAndReadsMatchTheModel) {
  for (GraphKind kind : {GraphKind::kDirectedWithInEdges, GraphKind::kUndirected}) {
    SCOPED_TRACE(GraphKindName(kind));
    testing::TempDir dir;
    const Options o = SmallStore(kind);
    const std::string path = dir.path() + "/db";
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    testing::ReferenceGraph ref(kind, o.weighted);
    std::mt19937_64 rng(91 + static_cast<int>(kind));
    const VertexId limit = 3000;
    for (int i = 0; i < 500; ++i) {
      WriteBatch b = RandomBatch(rng, limit, o.weighted, kMix);  // deletions too
      if (db->Write(b).ok()) ref.Apply(b);
    }
    ASSERT_TRUE(db->Flush().ok());
    auto v = static_cast<DBImpl*>(db.get())->CurrentVersion();
    ASSERT_GE(v->l0[0].size(), 3u) << "the test needs level-0 files";
    EXPECT_GE(ExpectPresenceExact(*v), 3u);
    EXPECT_EQ(v->index[0].vertices(), 0u) << "level-0 files entered in the vertex index";
    EXPECT_EQ(ref.Compare(*db->GetSnapshot(), limit), "");
    // The resident indexes count the bitmaps.
    uint64_t presence = 0, readers = 0;
    for (int d = 0; d < 2; ++d) {
      for (const SegmentHandle* h : v->AllFiles(d)) {
        readers += h->reader->MemoryUsage();
        if (h->presence != nullptr) presence += h->presence->bytes();
      }
    }
    EXPECT_EQ(db->GetStats(false).resident_index_bytes, readers + presence);
    // Reopened: the files' presence is made again, the same.
    ASSERT_TRUE(db->Close().ok());
    db.reset();
    ASSERT_TRUE(DB::Open(o, path, &db).ok());
    v = static_cast<DBImpl*>(db.get())->CurrentVersion();
    EXPECT_GE(ExpectPresenceExact(*v), 3u);
    EXPECT_EQ(ref.Compare(*db->GetSnapshot(), limit), "");
  }
}

TEST(L0Presence, SparseFilesHaveNoneAndAreReadThroughTheirVertexTable) {
  testing::TempDir dir;
  const Options o = SmallStore(GraphKind::kDirectedWithInEdges);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  testing::ReferenceGraph ref(o.graph_kind, o.weighted);
  std::mt19937_64 rng(17);
  // 300 vertices 40 IDs apart: no file can hold one vertex per 32 IDs of its range.
  constexpr VertexId kStride = 40;
  auto vertex = [&] { return (rng() % 300) * kStride; };
  for (int i = 0; i < 300; ++i) {
    WriteBatch b;
    for (int k = 0; k < 8; ++k) b.InsertEdge(vertex(), vertex(), 1.0);
    if (i % 25 == 0) b.DeleteEdge(vertex(), vertex());
    if (i % 60 == 0) b.DeleteVertex(vertex());
    ASSERT_TRUE(db->Write(b).ok());
    ASSERT_TRUE(ref.Apply(b));
  }
  ASSERT_TRUE(db->Flush().ok());
  auto v = static_cast<DBImpl*>(db.get())->CurrentVersion();
  ASSERT_GE(v->l0[0].size(), 2u);
  for (int d = 0; d < 2; ++d) {
    for (const auto& h : v->l0[d]) EXPECT_EQ(h->presence, nullptr) << h->path;
  }
  EXPECT_EQ(ref.Compare(*db->GetSnapshot(), 300 * kStride), "");
}

TEST(L0Presence, AFlushSharesTheWholeVertexIndex) {
  testing::TempDir dir;
  Options o = SmallStore(GraphKind::kDirectedWithInEdges);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir.path() + "/db", &db).ok());
  testing::ReferenceGraph ref(o.graph_kind, o.weighted);
  std::mt19937_64 rng(23);
  auto write = [&](int n) {
    for (int i = 0; i < n; ++i) {
      WriteBatch b = RandomBatch(rng, 5000, o.weighted, kMix);
      if (db->Write(b).ok()) ref.Apply(b);
    }
  };
  write(300);
  ASSERT_TRUE(db->CompactAll().ok());  // levels, so the index has pages
  auto before = static_cast<DBImpl*>(db.get())->CurrentVersion();
  ASSERT_GT(before->index[0].range_pages(), 1u);
  write(150);
  ASSERT_TRUE(db->Flush().ok());
  auto after = static_cast<DBImpl*>(db.get())->CurrentVersion();
  ASSERT_GT(after->l0[0].size(), before->l0[0].size()) << "no flush happened";
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(after->index[d].SharedRangePages(before->index[d]), before->index[d].range_pages())
        << "direction " << d;
    EXPECT_EQ(after->index[d].range_pages(), before->index[d].range_pages());
  }
  EXPECT_EQ(ref.Compare(*db->GetSnapshot(), 5000), "");
  // The level-0 files merge into level 1: then the index holds their vertices.
  ASSERT_TRUE(db->CompactAll().ok());
  auto merged = static_cast<DBImpl*>(db.get())->CurrentVersion();
  EXPECT_TRUE(merged->l0[0].empty());
  EXPECT_LT(merged->index[0].SharedRangePages(before->index[0]), before->index[0].range_pages());
  EXPECT_EQ(ref.Compare(*db->GetSnapshot(), 5000), "");
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// The builder a flush uses (the presence made while the file is written) gives what Build
// gives for the file: none when too sparse, else exactly the vertices added. It gives up
// (Finish false: the caller reads the file) rather than allocate for a wide sparse range.
TEST(L0PresenceBuilder, SameAsTheRuleOfBuildOrGivesUp) {
  std::mt19937_64 rng(5);
  int made = 0, none = 0;
  for (int round = 0; round < 300; ++round) {
    // Vertex sets from dense to sparse: n IDs drawn from a range of n * spread.
    const uint64_t n = 1 + rng() % 3000;
    const uint64_t spread = 1 + rng() % 60;
    const VertexId base = rng() % 100000;
    std::vector<VertexId> ids;
    for (uint64_t i = 0; i < n; ++i) ids.push_back(base + rng() % (n * spread));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    index::L0Presence::Builder b;
    for (VertexId u : ids) b.Add(u);
    std::unique_ptr<const index::L0Presence> p;
    const bool known = b.Finish(&p);
    const uint64_t span = ids.back() - ids.front();
    const bool dense = span / index::L0Presence::kMaxBitsPerVertex < ids.size();
    if (spread <= 8) {
      ASSERT_TRUE(known) << "gave up on a dense set (round " << round << ")";
    }
    if (!known) continue;
    ASSERT_EQ(p != nullptr, dense) << "round " << round;
    if (p == nullptr) {
      ++none;
      continue;
    }
    ++made;
    EXPECT_EQ(p->vertices(), ids.size());
    size_t k = 0;
    for (VertexId u = ids.front() >= 5 ? ids.front() - 5 : 0; u <= ids.back() + 5; ++u) {
      const bool in = k < ids.size() && ids[k] == u;
      if (in) ++k;
      ASSERT_EQ(p->Holds(u), in) << "round " << round << ", vertex " << u;
    }
  }
  EXPECT_GT(made, 50);
  EXPECT_GT(none, 10);
  // A wide sparse range: no bitmap of 2^40 bits is allocated; the builder gives up.
  index::L0Presence::Builder wide;
  wide.Add(7);
  wide.Add(VertexId{1} << 40);
  std::unique_ptr<const index::L0Presence> p;
  EXPECT_FALSE(wide.Finish(&p));
  EXPECT_EQ(p, nullptr);
  // Empty: known, none.
  index::L0Presence::Builder empty;
  EXPECT_TRUE(empty.Finish(&p));
  EXPECT_EQ(p, nullptr);
}

}  // namespace
}  // namespace strata
