// Version chains under readers of many ages, at the MemGraph level: after every commit each
// registered reader must still select, in every subgraph, the newest version committed at or
// before its timestamp; a chain keeps no more versions than there are reader timestamps; and
// each slot's tail (what Unlink consults instead of the pinned version's header) is the chain's
// oldest version with its ts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "memgraph/memgraph.h"
#include "mvcc/commit_clock.h"
#include "mvcc/reader_tracer.h"

namespace strata {
namespace {

constexpr uint64_t kSubgraphs = 6;

TEST(VersionChain, ReadersSelectTheirVersionsAndTailsStayTrue) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    mvcc::CommitClock clock;
    mvcc::ReaderTracer tracer;
    mem::MemGraphOptions opt;
    opt.cart_threshold = 8;
    mem::MemGraph g(opt, &clock, &tracer);
    std::mt19937_64 rng(seed);
    // Per subgraph, the timestamps of the commits that changed it, ascending.
    std::vector<std::vector<Timestamp>> changed(kSubgraphs);
    std::vector<mvcc::ReaderTracer::Slot> readers;
    uint64_t checks = 0, max_readers = 0;
    for (int step = 0; step < 4000; ++step) {
      // Readers come and go: a few long-lived ones, some that last a commit or two.
      if (rng() % 4 == 0 && readers.size() < 6) readers.push_back(tracer.Register(clock));
      if (!readers.empty() && rng() % 5 == 0) {
        const size_t k = rng() % readers.size();
        if (k != 0 || rng() % 8 == 0) {  // reader 0 tends to live long
          tracer.Unregister(readers[k]);
          readers.erase(readers.begin() + static_cast<ptrdiff_t>(k));
        }
      }
      max_readers = std::max<uint64_t>(max_readers, readers.size());
      // A batch of one to three subgraphs (one takes the lock-first path, more may not).
      std::vector<mem::PrimOp> ops;
      std::map<uint64_t, bool> touched;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < n; ++i) {
        const uint64_t s = rng() % kSubgraphs;
        const VertexId u = s * 64 + rng() % 64;
        ops.push_back({mem::PrimOp::kPut, 0, static_cast<uint32_t>(i), u, rng() % 1000, 1.0});
        touched[s] = true;
      }
      Timestamp t = 0;
      ASSERT_TRUE(g.Apply(&ops, nullptr, &t).ok());
      for (const auto& [s, unused] : touched) changed[s].push_back(t);
      ASSERT_EQ(g.FirstBadTailForTesting(), UINT64_MAX) << "after commit " << t;
      // Every reader, in every subgraph, selects the newest version at or before its ts.
      for (const mvcc::ReaderTracer::Slot& r : readers) {
        for (uint64_t s = 0; s < kSubgraphs; ++s) {
          const std::vector<Timestamp>& c = changed[s];
          auto it = std::upper_bound(c.begin(), c.end(), r.ts());
          const mem::SubgraphVersion* v = g.VersionAt(s, r.ts());
          if (it == c.begin()) {
            ASSERT_EQ(v, nullptr) << "subgraph " << s << " reader " << r.ts();
          } else {
            ASSERT_NE(v, nullptr) << "subgraph " << s << " reader " << r.ts();
            ASSERT_EQ(v->ts, *(it - 1)) << "subgraph " << s << " reader " << r.ts();
          }
          ++checks;
        }
      }
      // RapidStore's bound: a chain a commit touched keeps at most one version per distinct
      // reader timestamp, and the head.
      std::set<Timestamp> distinct;
      for (const mvcc::ReaderTracer::Slot& r : readers) distinct.insert(r.ts());
      for (const auto& [s, unused] : touched) {
        size_t length = 0;
        for (const mem::SubgraphVersion* v = g.VersionAt(s, UINT64_MAX); v != nullptr;
             v = v->older.load()) {
          ++length;
        }
        ASSERT_LE(length, distinct.size() + 1) << "subgraph " << s << " after commit " << t;
      }
    }
    EXPECT_GT(checks, 10000u);
    EXPECT_GE(max_readers, 4u);
    EXPECT_GT(g.reclaimed_versions(), 3000u);
    for (const mvcc::ReaderTracer::Slot& r : readers) tracer.Unregister(r);
  }
}

}  // namespace
}  // namespace strata
