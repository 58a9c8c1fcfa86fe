// AppendArea: a log shared by versions. Versions built on one another (and on stale bases, as
// concurrent builds are) by TryAppend and AreaWith, checked after every step against an ordered
// map per version: each version's view must stay what it was when it was built, whatever is
// appended to the area it shares afterwards.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "memgraph/append_area.h"
#include "memgraph/memgraph.h"
#include "memgraph/node_allocator.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"

namespace strata::mem {
namespace {

using Key = std::pair<uint8_t, uint64_t>;
using Model = std::map<Key, std::pair<uint8_t, double>>;  // (u, v) -> (kind, w)

struct Version {
  AppendArea* a;
  size_t n;
  Model m;
};

// Every way of reading a version's view agrees with its model.
void ExpectView(const Version& ver, bool weighted) {
  const AppendArea* a = ver.a;
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->w() != nullptr, weighted);
  ASSERT_LE(ver.n, a->claimed.load());
  ASSERT_LE(a->claimed.load(), a->cap);
  std::vector<AppendEntry> e;
  AreaEntries(a, ver.n, &e);
  ASSERT_EQ(e.size(), ver.m.size());
  uint64_t mask = 0;
  size_t i = 0;
  for (const auto& [k, val] : ver.m) {
    EXPECT_EQ(e[i].u, k.first) << "entry " << i;
    EXPECT_EQ(e[i].v, k.second) << "entry " << i;
    EXPECT_EQ(e[i].kind, val.first) << "entry " << i;
    if (weighted) {
      EXPECT_EQ(e[i].w, val.second) << "entry " << i;
    }
    mask |= uint64_t{1} << k.first;
    ++i;
    const ptrdiff_t p = a->Find(ver.n, k.first, k.second);
    ASSERT_GE(p, 0);
    EXPECT_LT(static_cast<size_t>(p), ver.n);
    EXPECT_EQ(a->Kind(static_cast<size_t>(p)), val.first);
    EXPECT_EQ(a->v()[p], k.second);
    if (!ver.m.count({k.first, k.second + 1})) {
      EXPECT_EQ(a->Find(ver.n, k.first, k.second + 1), -1);
    }
  }
  EXPECT_EQ(a->PrefixMask(ver.n), mask);
  EXPECT_EQ(a->mask.load() & mask, mask);  // a superset of every prefix's
  for (uint32_t x = 0; x < 64; ++x) {
    uint8_t idx[kAppendCapacity];
    const size_t r = a->Run(ver.n, x, idx);
    auto it = ver.m.lower_bound({static_cast<uint8_t>(x), 0});
    for (size_t j = 0; j < r; ++j, ++it) {
      ASSERT_TRUE(it != ver.m.end() && it->first.first == x) << "vertex " << x;
      EXPECT_EQ(a->v()[idx[j]], it->first.second);
      EXPECT_EQ(a->Kind(idx[j]), it->second.first);
    }
    EXPECT_TRUE(it == ver.m.end() || it->first.first != x) << "vertex " << x << " run short";
  }
}

class AppendAreaTest : public ::testing::TestWithParam<bool> {};

// Random builds on random live versions (the newest, or a stale one as a concurrent build
// sees): in place when the base's slot is free, copied when not. Few vertices and keys, so
// overrides of earlier entries and same-vertex runs are common.
TEST_P(AppendAreaTest, VersionsSharingAnAreaKeepTheirViews) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(7);
  size_t in_place = 0, copied = 0;
  for (int round = 0; round < 100; ++round) {
    std::vector<Version> live;
    for (int step = 0; step < 120; ++step) {
      const uint8_t u = static_cast<uint8_t>(rng() % (round % 2 ? 3 : 64));
      const uint64_t v = rng() % 40;
      const uint8_t kind = static_cast<uint8_t>(rng() % 3);
      const double w = static_cast<double>(rng() % 1000) / 4;
      Version next;
      // Base: none (a fresh area), the newest, or any live one.
      const size_t pick = live.empty() || rng() % 8 == 0 ? live.size()
                          : rng() % 2 ? live.size() - 1
                                      : rng() % live.size();
      if (pick == live.size()) {
        const AppendEntry e{u, kind, v, w};
        next = {NewAppendArea(&alloc, weighted, &e, 1), 1, {}};
      } else {
        const Version& base = live[pick];
        if (base.n == kAppendCapacity) continue;  // full: the memgraph applies it instead
        next.m = base.m;
        next.n = base.n + 1;
        if (TryAppend(base.a, base.n, u, kind, v, w)) {
          RefAppendArea(base.a);
          next.a = base.a;
          ++in_place;
        } else {
          next.a = AreaWith(&alloc, weighted, base.a, base.n, u, kind, v, w);
          ++copied;
        }
      }
      next.m[{u, v}] = {kind, weighted ? w : 1.0};
      live.push_back(std::move(next));
      for (const Version& ver : live) ASSERT_NO_FATAL_FAILURE(ExpectView(ver, weighted));
      if (live.size() > 6) {
        const size_t drop = rng() % live.size();
        UnrefAppendArea(&alloc, live[drop].a);
        live.erase(live.begin() + static_cast<ptrdiff_t>(drop));
      }
    }
    for (Version& ver : live) UnrefAppendArea(&alloc, ver.a);
  }
  EXPECT_GT(in_place, 1000u);
  EXPECT_GT(copied, 1000u);
  EXPECT_EQ(alloc.bytes(), 0u);  // every area freed, at the size it was allocated with
}

// A sorted, unique entry list as NewAppendArea takes it from a merge reads back unchanged.
TEST_P(AppendAreaTest, NewAreaFromSortedEntries) {
  const bool weighted = GetParam();
  NodeAllocator alloc;
  std::mt19937_64 rng(11);
  for (size_t n = 1; n <= kAppendCapacity; ++n) {
    Model m;
    while (m.size() < n) {
      m[{static_cast<uint8_t>(rng() % 64), rng() % 1000}] = {static_cast<uint8_t>(rng() % 3),
                                                            weighted ? double(rng() % 50) : 1.0};
    }
    std::vector<AppendEntry> e;
    for (const auto& [k, val] : m) e.push_back({k.first, val.first, k.second, val.second});
    Version ver{NewAppendArea(&alloc, weighted, e.data(), e.size()), n, m};
    ASSERT_NO_FATAL_FAILURE(ExpectView(ver, weighted));
    EXPECT_GE(ver.a->cap, n);
    UnrefAppendArea(&alloc, ver.a);
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

// Two builds on the same base racing for its next slot: exactly one gets it, and the entry
// there is the winner's.
TEST(AppendAreaRace, OneBuildClaimsASlot) {
  NodeAllocator alloc;
  for (int round = 0; round < 200; ++round) {
    const AppendEntry first{0, kAppendLive, 1, 1.0};
    AppendArea* a = NewAppendArea(&alloc, false, &first, 1);
    std::atomic<int> go{0};
    bool won[2] = {false, false};
    std::thread t[2];
    for (int k = 0; k < 2; ++k) {
      t[k] = std::thread([&, k] {
        go.fetch_add(1);
        while (go.load() < 2) {
        }
        won[k] = TryAppend(a, 1, static_cast<uint8_t>(k + 1), kAppendLive, 100 + k, 1.0);
      });
    }
    for (auto& th : t) th.join();
    ASSERT_NE(won[0], won[1]);
    const int k = won[0] ? 0 : 1;
    EXPECT_EQ(a->U(1), k + 1);
    EXPECT_EQ(a->v()[1], static_cast<uint64_t>(100 + k));
    EXPECT_EQ(a->claimed.load(), 2);
    UnrefAppendArea(&alloc, a);
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Weights, AppendAreaTest, ::testing::Bool());

// AreaEntries over areas of random entries: small destination IDs, IDs past 2^50, and IDs of
// 2^58 and more (no room for the position in a bucket's word: sorted as entries); prefixes
// of every length; few vertices (buckets of many entries, past 16 sorted otherwise) and all
// 64. Each gives, per (u, v), the latest entry of the prefix, in (u, v) order.
TEST(AppendAreaEntries, LatestPerKeyInKeyOrderForSmallAndLargeIds) {
  NodeAllocator alloc;
  std::mt19937_64 rng(11);
  for (int round = 0; round < 4000; ++round) {
    const bool weighted = round % 2 == 0;
    // IDs past 2^50 in a third of the rounds, past 2^58 in another third.
    const uint64_t large =
        round % 3 == 0 ? uint64_t{1} << 50 : round % 3 == 1 ? uint64_t{1} << 58 : 0;
    const uint64_t vertices = round % 5 < 2 ? 6 : round % 5 < 4 ? 2 : 64;
    const size_t n = 1 + rng() % kAppendCapacity;
    std::vector<AppendEntry> in(n);
    for (auto& e : in) {
      e.u = static_cast<uint8_t>(rng() % vertices);
      e.kind = static_cast<uint8_t>(rng() % 3);
      e.v = rng() % 8 + (large != 0 && rng() % 2 ? large + (rng() % 3) * (uint64_t{1} << 55) : 0);
      e.w = weighted ? static_cast<double>(rng() % 100) : 1.0;
    }
    AppendArea* a = NewAppendArea(&alloc, weighted, in.data(), n);
    const size_t prefix = 1 + rng() % n;
    Model m;
    for (size_t i = 0; i < prefix; ++i) m[{in[i].u, in[i].v}] = {in[i].kind, in[i].w};
    std::vector<AppendEntry> e;
    AreaEntries(a, prefix, &e);
    ASSERT_EQ(e.size(), m.size()) << "round " << round;
    size_t i = 0;
    for (const auto& [k, val] : m) {
      ASSERT_EQ(e[i].u, k.first) << "round " << round << ", entry " << i;
      ASSERT_EQ(e[i].v, k.second) << "round " << round << ", entry " << i;
      ASSERT_EQ(e[i].kind, val.first) << "round " << round << ", entry " << i;
      ASSERT_EQ(e[i].w, val.second) << "round " << round << ", entry " << i;
      ++i;
    }
    UnrefAppendArea(&alloc, a);
  }
  EXPECT_EQ(alloc.bytes(), 0u);
}


// A build of several updates to one subgraph that fit its area appends each in place, in the
// area the base version shares (a merge into a new area copied the area for every such build),
// and every version keeps its own view; updates that do not fit go to the containers.
TEST(AppendAreaBuild, SeveralUpdatesOfOneBuildAppendInPlace) {
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
  MemGraphOptions opt;
  opt.weighted = true;
  MemGraph g(opt, &clock, &tracer);
  uint32_t seq = 0;
  auto put = [&](VertexId u, VertexId v, double w) {
    return PrimOp{PrimOp::kPut, 0, seq++, u, v, w};
  };
  // Each commit's versions stay readable: a reader registered after it keeps them.
  std::vector<mvcc::ReaderTracer::Slot> readers;
  auto apply = [&](std::vector<PrimOp> ops) {
    Timestamp t = 0;
    Status s = g.Apply(&ops, nullptr, &t);
    EXPECT_TRUE(s.ok()) << s.ToString();
    readers.push_back(tracer.Register(clock));
    return t;
  };
  auto find = [](const SubgraphVersion* v, VertexId u, VertexId x, double* w) {
    return FindEdge(v->out, static_cast<uint32_t>(u % 64), x, w, nullptr);
  };
  const Timestamp t1 = apply({put(1, 100, 1.5)});
  const SubgraphVersion* v1 = g.VersionAt(0, t1);
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v1->out.appended, nullptr);
  ASSERT_EQ(v1->out.appended_n, 1);
  // Three new keys and a delete of an absent edge: recorded too (an update looks nothing up),
  // though it hides nothing and counts nothing.
  const Timestamp t2 = apply({put(2, 200, 2.5), put(1, 300, 3.5), put(5, 100, 4.5),
                              PrimOp{PrimOp::kDelete, 0, seq++, 7, 9, 1.0}});
  const SubgraphVersion* v2 = g.VersionAt(0, t2);
  ASSERT_NE(v2, v1);
  EXPECT_EQ(v2->out.appended, v1->out.appended) << "appended in place, not copied";
  EXPECT_EQ(v2->out.appended_n, 5);
  EXPECT_EQ(g.VersionAt(0, t1), v1);
  EXPECT_EQ(v1->out.appended_n, 1);
  double w = 0;
  EXPECT_TRUE(find(v2, 1, 100, &w));
  EXPECT_EQ(w, 1.5);
  EXPECT_TRUE(find(v2, 1, 300, &w));
  EXPECT_EQ(w, 3.5);
  EXPECT_TRUE(find(v2, 5, 100, &w));
  EXPECT_EQ(w, 4.5);
  EXPECT_FALSE(find(v2, 7, 9, &w));
  EXPECT_FALSE(find(v1, 1, 300, &w));
  EXPECT_FALSE(find(v1, 5, 100, &w));
  EXPECT_EQ(v2->out.Live(1), 2u);
  EXPECT_EQ(v2->out.Live(5), 1u);
  EXPECT_EQ(v2->out.Entries(7), 0u);
  EXPECT_EQ(v1->out.Live(1), 1u);
  // An overwrite of an appended key and a new one: appended after v2's entries; the latest
  // entry of a key is the view's.
  const Timestamp t3 = apply({put(1, 100, 6.5), put(3, 1, 7.5)});
  const SubgraphVersion* v3 = g.VersionAt(0, t3);
  EXPECT_EQ(v3->out.appended, v1->out.appended);
  EXPECT_EQ(v3->out.appended_n, 7);
  EXPECT_TRUE(find(v3, 1, 100, &w));
  EXPECT_EQ(w, 6.5);
  EXPECT_TRUE(find(v2, 1, 100, &w));
  EXPECT_EQ(w, 1.5);
  EXPECT_EQ(v3->out.Live(1), 2u);
  // More updates than the area has room for: merged into the containers.
  std::vector<PrimOp> many;
  for (VertexId x = 0; x < kAppendCapacity; ++x) many.push_back(put(x % 64, 1000 + x, 8.0));
  const Timestamp t4 = apply(many);
  const SubgraphVersion* v4 = g.VersionAt(0, t4);
  EXPECT_EQ(v4->out.appended, nullptr);
  for (VertexId x = 0; x < kAppendCapacity; ++x) {
    EXPECT_TRUE(find(v4, x % 64, 1000 + x, &w)) << x;
  }
  EXPECT_TRUE(find(v4, 1, 100, &w));
  EXPECT_EQ(w, 6.5);
  EXPECT_TRUE(find(v4, 3, 1, &w));
  size_t ones = 0;  // the new keys of vertex 1 among `many`
  for (VertexId x = 0; x < kAppendCapacity; ++x) ones += x % 64 == 1;
  EXPECT_EQ(v4->out.Live(1), 2u + ones);
  for (const mvcc::ReaderTracer::Slot& r : readers) tracer.Unregister(r);
}

// A C-ART vertex's updates take no prior state when they are appended: its record counts its
// tree, and its counts are its appended updates resolved against the tree (Adjacency's counts).
// One hub's random puts and deletes (a key space small enough to repeat keys, deletes of absent
// keys included), with another vertex's puts filling the area so that it flushes into the tree
// at random points, checked after every commit against a model: the view's counts and
// entries, and the record against the tree. The hub grows into its own C-ART and, without
// tombstones, shrinks back. With pending on, the hub's C-ART keeps up to four times its tree's
// entries pending beside it (CArt::Apply), so its counts resolve those too.
class HubCountsTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

// Commits ops to g and returns subgraph 0's version at that commit (null if Apply failed).
const SubgraphVersion* CommitAndRead(MemGraph* g, std::vector<PrimOp>* ops) {
  Timestamp t = 0;
  if (!g->Apply(ops, nullptr, &t).ok()) return nullptr;
  return g->VersionAt(0, t);
}

// Vertex i's run in a's clustered index (its container, without appended updates):
// {key, live} in key order.
std::vector<std::pair<uint64_t, bool>> IndexRun(const Adjacency& a, uint32_t i) {
  std::vector<std::pair<uint64_t, bool>> run;
  a.ci.ForEachInVertex(static_cast<uint8_t>(i),
                       [&](const uint64_t* k, const double*, const uint8_t* tomb, size_t m) {
                         for (size_t j = 0; j < m; ++j) {
                           run.push_back({k[j], tomb == nullptr || tomb[j] == 0});
                         }
                         return true;
                       });
  return run;
}

// A memgraph whose hubs move to their own C-ART past 16 entries (and back below 8).
struct HubMemGraph {
  explicit HubMemGraph(bool tombstones) : g(Options(tombstones), &clock, &tracer) {}
  static MemGraphOptions Options(bool tombstones) {
    MemGraphOptions opt;
    opt.tombstones = tombstones;
    opt.cart_threshold = 16;
    return opt;
  }
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
  MemGraph g;
};

struct PendingForTesting {
  explicit PendingForTesting(bool on) {
    if (on) CArt::SetPendingForTesting(1, 1, 4);
  }
  ~PendingForTesting() { CArt::SetPendingForTesting(0, 0); }
};

TEST_P(HubCountsTest, AppendedUpdatesResolveAgainstTheTree) {
  const bool tombstones = std::get<0>(GetParam());
  const PendingForTesting pending(std::get<1>(GetParam()));
  HubMemGraph hub(tombstones);
  MemGraph& g = hub.g;
  const MemGraphOptions opt = HubMemGraph::Options(tombstones);
  std::mt19937_64 rng(tombstones ? 7 : 11);
  std::map<uint64_t, bool> model;  // hub 1's entries: key -> live
  uint32_t seq = 0;
  uint64_t filler = 1'000'000;
  size_t resolved = 0, promotions = 0, demotions = 0, with_pending = 0;
  bool was_art = false;
  for (int round = 0; round < 3000; ++round) {
    // Growing, then mixed, then shrinking: the share of puts moves the hub past the threshold
    // and back below half of it.
    const int put_pct = round < 1000 ? 80 : round < 2000 ? 50 : 15;
    std::vector<PrimOp> ops;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      const uint64_t key = rng() % 48;
      if (static_cast<int>(rng() % 100) < put_pct) {
        ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, 1, key, 1.0});
      } else {
        ops.push_back(PrimOp{PrimOp::kDelete, 0, seq++, 1, key, 1.0});
      }
    }
    if (rng() % 3 == 0) ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, 2, filler++, 1.0});
    // The model: the batch's ops in order.
    for (const PrimOp& op : ops) {
      if (op.u != 1) continue;
      if (op.kind == PrimOp::kPut) {
        model[op.v] = true;
      } else if (tombstones) {
        model[op.v] = false;
      } else {
        model.erase(op.v);
      }
    }
    const SubgraphVersion* v = CommitAndRead(&g, &ops);
    ASSERT_NE(v, nullptr) << "round " << round;
    const Adjacency& a = v->out;
    size_t live = 0;
    for (const auto& [key, is_live] : model) live += is_live;
    const Adjacency::CountPair c = a.Counts(1);
    ASSERT_EQ(c.entries, model.size()) << "round " << round;
    ASSERT_EQ(c.live, live) << "round " << round;
    ASSERT_EQ(a.Entries(1), model.size()) << "round " << round;
    ASSERT_EQ(a.Live(1), live) << "round " << round;
    std::vector<std::pair<uint64_t, bool>> seen;
    ScanVertex(a, 1, [&](const uint64_t* k, const double*, const uint8_t* tomb, size_t m) {
      for (size_t j = 0; j < m; ++j) seen.push_back({k[j], tomb == nullptr || tomb[j] == 0});
    });
    const std::vector<std::pair<uint64_t, bool>> want(model.begin(), model.end());
    ASSERT_EQ(seen, want) << "round " << round;
    // Every round's build touches the hub, so it lies where its size puts it: in its own C-ART
    // above the threshold, in the clustered index below half of it.
    if (a.InArt(1)) {
      ASSERT_GE(c.entries, opt.cart_threshold / 2) << "round " << round;
    } else {
      ASSERT_LE(c.entries, opt.cart_threshold) << "round " << round;
    }
    if (!a.InArt(1)) {
      ASSERT_EQ(a.Record(1).entries, IndexRun(a, 1).size()) << "round " << round;
    }
    if (a.InArt(1)) {
      const Adjacency::CountPair r = a.Record(1);
      ASSERT_EQ(r.entries, a.Art(1).tree_size()) << "round " << round;
      ASSERT_EQ(r.live, a.Art(1).tree_live_size()) << "round " << round;
      std::string why;
      ASSERT_TRUE(a.Art(1).CheckInvariants(&why)) << "round " << round << ": " << why;
      with_pending += a.Art(1).pending() != 0;
      resolved += a.appended != nullptr && ((a.appended->PrefixMask(a.appended_n) >> 1) & 1);
    }
    promotions += !was_art && a.InArt(1);
    demotions += was_art && !a.InArt(1);
    was_art = a.InArt(1);
  }
  // The paths this test is for were taken: counts read with the hub's updates pending, the
  // hub moved into its C-ART, and out again where deletes remove entries (a tombstone is one).
  EXPECT_GT(resolved, 100u);
  EXPECT_GE(promotions, 1u);
  if (!tombstones) {
    EXPECT_GE(demotions, 1u);
  }
  if (std::get<1>(GetParam())) {
    EXPECT_GT(with_pending, 100u);
  } else {
    EXPECT_EQ(with_pending, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(TombstonesPending, HubCountsTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

// A hub whose deletes wait pending beside its tree still moves back to the clustered index
// when its view falls below half the threshold: its record (the tree alone) stays high, and
// the build's shrink check may keep a hub without reading its tree only while the record
// stays above half by more than the tree can hold pending (CArt::PendingCapacity).
TEST(HubShrinkTest, PendingDeletesMoveTheHubBack) {
  const PendingForTesting pending(true);  // a tree keeps up to 4x its entries pending
  HubMemGraph hub(/*tombstones=*/false);
  MemGraph& g = hub.g;
  uint32_t seq = 0;
  std::vector<PrimOp> ops;
  for (uint64_t key = 0; key < 40; ++key) {
    ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, 1, key, 1.0});
  }
  const SubgraphVersion* v = CommitAndRead(&g, &ops);
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->out.InArt(1)) << "40 entries: past the threshold, in its own C-ART";
  // 36 deletes and more filler than the area holds, in one batch: the area is applied within
  // the build and the hub's deletes go to its tree as pending updates (no prior states asked).
  ops.clear();
  for (uint64_t key = 0; key < 36; ++key) {
    ops.push_back(PrimOp{PrimOp::kDelete, 0, seq++, 1, key, 1.0});
  }
  for (uint64_t x = 0; x < 2 * kAppendCapacity; ++x) {
    ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, 2, 1000 + x, 1.0});
  }
  v = CommitAndRead(&g, &ops);
  ASSERT_NE(v, nullptr);
  const Adjacency& a = v->out;
  ASSERT_EQ(a.Counts(1).entries, 4u);
  ASSERT_FALSE(a.InArt(1)) << "4 entries, below half the threshold, left in its C-ART";
  EXPECT_EQ(IndexRun(a, 1).size(), 4u);
}

// Moving into a C-ART by bounds. Vertex 1 holds 10 entries in the clustered index (the area
// applied by filler), then takes 7 appended updates: its container plus them pass the threshold
// (17 > 16). Re-adding 7 of its keys, its container less them (3) may fall under half the
// threshold (8), so the move is decided by resolving: 10 entries, it stays. 7 deletes likewise
// leave 3 (without tombstones): it stays; moved on the bounds alone, it would sit in a C-ART
// under half the threshold. From 14 entries, 3 re-added keys leave at least 11 >= 8 whatever
// they do: it moves with 14, no lookup needed, inside the band where a C-ART vertex stays one.
TEST(HubMoveTest, MovesOnBoundsOnlyWhenHalfTheThresholdIsSure) {
  struct Case {
    uint64_t held;     // vertex 1's entries in the index after the first batch
    uint64_t touched;  // then this many of its keys, each re-added or deleted
    bool del;
    bool art;          // where it should lie after the second batch
    uint64_t entries;  // its view's entries then
  };
  for (const Case& k : {Case{10, 7, false, false, 10}, Case{10, 7, true, false, 3},
                        Case{14, 3, false, true, 14}}) {
    SCOPED_TRACE(testing::Message() << k.held << " held, " << k.touched
                                    << (k.del ? " deleted" : " re-added"));
    HubMemGraph hub(/*tombstones=*/false);
    uint32_t seq = 0;
    std::vector<PrimOp> ops;
    for (uint64_t key = 0; key < k.held; ++key) {
      ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, 1, key, 1.0});
    }
    for (uint64_t x = 0; x < 2 * kAppendCapacity; ++x) {
      ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, 2, 1000 + x, 1.0});
    }
    const SubgraphVersion* v = CommitAndRead(&hub.g, &ops);
    ASSERT_NE(v, nullptr);
    ASSERT_FALSE(v->out.InArt(1));
    ASSERT_EQ(v->out.Record(1).entries, k.held) << "the area was applied: the index holds them";
    ops.clear();
    for (uint64_t key = 0; key < k.touched; ++key) {
      ops.push_back(PrimOp{k.del ? PrimOp::kDelete : PrimOp::kPut, 0, seq++, 1, key, 1.0});
    }
    v = CommitAndRead(&hub.g, &ops);
    ASSERT_NE(v, nullptr);
    const Adjacency& a = v->out;
    EXPECT_EQ(a.InArt(1), k.art);
    EXPECT_EQ(a.Counts(1).entries, k.entries);
    size_t seen = 0;
    ScanVertex(a, 1, [&](const uint64_t*, const double*, const uint8_t*, size_t m) { seen += m; });
    EXPECT_EQ(seen, k.entries);
  }
}

// A clustered-index vertex's updates take no prior state either: its record counts its run in
// the index, and its appended updates are resolved against the index when counts are read or
// when the area is applied (Adjacency's counts). Eight low-degree vertices take random puts,
// deletes (of absent keys too) and now and then a vertex deletion, a few per batch, so the
// area fills and is applied at random points; after every commit each vertex's counts and
// entries are checked against a model, its record against its run in the index, and the
// masks readers filter with against the model.
class IndexCountsTest : public ::testing::TestWithParam<bool> {};

TEST_P(IndexCountsTest, AppendedUpdatesResolveAgainstTheIndex) {
  const bool tombstones = GetParam();
  mvcc::CommitClock clock;
  mvcc::ReaderTracer tracer;
  MemGraphOptions opt;
  opt.tombstones = tombstones;
  MemGraph g(opt, &clock, &tracer);
  std::mt19937_64 rng(tombstones ? 3 : 5);
  constexpr uint32_t kVertices = 8;
  std::map<uint64_t, bool> model[kVertices];  // vertex -> key -> live
  bool deleted_here[kVertices] = {};           // the vertex was deleted in this tier
  uint32_t seq = 0;
  size_t applied = 0, with_appended = 0, erased_absent = 0;
  const void* last_root = nullptr;
  for (int round = 0; round < 4000; ++round) {
    std::vector<PrimOp> ops;
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) {
      const uint32_t u = static_cast<uint32_t>(rng() % kVertices);
      const uint64_t key = 1000 + rng() % 24;
      const int r = static_cast<int>(rng() % 100);
      if (r < 1) {
        ops.push_back(PrimOp{PrimOp::kDeleteVertex, 0, seq++, u, 0, 1.0});
      } else if (r < 60) {
        ops.push_back(PrimOp{PrimOp::kPut, 0, seq++, u, key, 1.0});
      } else {
        ops.push_back(PrimOp{PrimOp::kDelete, 0, seq++, u, key, 1.0});
      }
    }
    for (const PrimOp& op : ops) {
      std::map<uint64_t, bool>& m = model[op.u];
      if (op.kind == PrimOp::kDeleteVertex) {
        m.clear();
        deleted_here[op.u] = true;
      } else if (op.kind == PrimOp::kPut) {
        m[op.v] = true;
      } else {
        erased_absent += m.count(op.v) == 0;
        // A tombstone marks an entry only where the vertex was not deleted in this tier (a
        // deletion hides older tiers already).
        if (tombstones && !deleted_here[op.u]) {
          m[op.v] = false;
        } else {
          m.erase(op.v);
        }
      }
    }
    const SubgraphVersion* v = CommitAndRead(&g, &ops);
    ASSERT_NE(v, nullptr) << "round " << round;
    const Adjacency& a = v->out;
    uint64_t with_entries = 0;
    for (uint32_t i = 0; i < kVertices; ++i) {
      ASSERT_FALSE(a.InArt(i));
      size_t live = 0;
      for (const auto& [key, is_live] : model[i]) live += is_live;
      const Adjacency::CountPair c = a.Counts(i);
      ASSERT_EQ(c.entries, model[i].size()) << "round " << round << ", vertex " << i;
      ASSERT_EQ(c.live, live) << "round " << round << ", vertex " << i;
      ASSERT_GE(a.LiveBound(i), live) << "round " << round << ", vertex " << i;
      const std::vector<std::pair<uint64_t, bool>> run = IndexRun(a, i);
      size_t run_live = 0;
      for (const auto& e : run) run_live += e.second;
      ASSERT_EQ(a.Record(i).entries, run.size()) << "round " << round << ", vertex " << i;
      ASSERT_EQ(a.Record(i).live, run_live) << "round " << round << ", vertex " << i;
      std::vector<std::pair<uint64_t, bool>> seen;
      ScanVertex(a, i, [&](const uint64_t* k, const double*, const uint8_t* tomb, size_t m) {
        for (size_t j = 0; j < m; ++j) seen.push_back({k[j], tomb == nullptr || tomb[j] == 0});
      });
      const std::vector<std::pair<uint64_t, bool>> want(model[i].begin(), model[i].end());
      ASSERT_EQ(seen, want) << "round " << round << ", vertex " << i;
      if (!model[i].empty()) {
        with_entries |= uint64_t{1} << i;
        ASSERT_TRUE(a.MayHaveEntries(i)) << "round " << round << ", vertex " << i;
      }
    }
    ASSERT_EQ(a.EntryMask() & with_entries, with_entries) << "round " << round;
    with_appended += a.appended != nullptr && a.appended_n != 0;
    // The index changes only when an area is applied to it or a vertex deletion erases a run.
    bool vertex_deleted = false;
    for (const PrimOp& op : ops) vertex_deleted |= op.kind == PrimOp::kDeleteVertex;
    applied += a.ci.root_node() != last_root && !vertex_deleted;
    last_root = a.ci.root_node();
  }
  // The paths this test is for were taken: counts read over appended updates, areas applied
  // to the index, and deletes of absent keys recorded.
  EXPECT_GT(with_appended, 1000u);
  EXPECT_GT(applied, 20u);
  EXPECT_GT(erased_absent, 100u);
}

INSTANTIATE_TEST_SUITE_P(Tombstones, IndexCountsTest, ::testing::Bool());

}  // namespace
}  // namespace strata::mem
