// Unit tests of memgraph/subgraph.{h,cc}: packed per-vertex counts and version allocation.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "memgraph/subgraph.h"

namespace strata::mem {
namespace {

// The adjacency's counts, read back every way (GetCounts, Entries, Live, the mask), equal `want`.
void ExpectCounts(const Adjacency& a, const VertexCounts& want, int round) {
  VertexCounts back;
  GetCounts(a, &back);
  ASSERT_EQ(std::memcmp(&back, &want, sizeof(want)), 0) << "round " << round;
  for (uint32_t i = 0; i < kSubgraphSize; ++i) {
    ASSERT_EQ(a.Entries(i), want.entries[i]) << "round " << round << ", vertex " << i;
    ASSERT_EQ(a.Live(i), want.live[i]) << "round " << round << ", vertex " << i;
    ASSERT_EQ((a.count_mask >> i) & 1, want.entries[i] != 0 ? 1u : 0u) << "vertex " << i;
  }
}

// The narrowest format a set of counts fits: 2 bytes without tombstones and under 65536, 2+2
// with tombstones, 4+4 past 65535.
CountFormat NarrowestFormat(const VertexCounts& c) {
  bool tombs = false, wide = false;
  for (uint32_t i = 0; i < kSubgraphSize; ++i) {
    tombs |= c.live[i] != c.entries[i];
    wide |= c.entries[i] > UINT16_MAX;
  }
  return wide ? kCountPairs32 : tombs ? kCountPairs16 : kCounts16;
}

// Each format was the array's in more than 100 of a test's rounds (so the test covered it).
void ExpectEveryFormat(const int (&seen)[3]) {
  EXPECT_GT(seen[kCounts16], 100);
  EXPECT_GT(seen[kCountPairs16], 100);
  EXPECT_GT(seen[kCountPairs32], 100);
}

// SetCounts and back, at every density (empty to full, the edge vertices 0 and 63) and in each
// format: the array takes the narrowest format and exactly its size.
TEST(SubgraphTest, CountsRoundTrip) {
  NodeAllocator alloc;
  SubgraphVersion* v = NewVersion(&alloc, false, false);
  std::mt19937_64 rng(7);
  int seen[3] = {0, 0, 0};
  for (int round = 0; round < 900; ++round) {
    const unsigned density = static_cast<unsigned>(rng() % 66);  // 65: every vertex
    const unsigned shape = static_cast<unsigned>(rng() % 3);     // 0 narrow, 1 tombs, 2 wide
    VertexCounts c;
    std::memset(&c, 0, sizeof(c));
    uint64_t want = 0;
    for (uint32_t i = 0; i < kSubgraphSize; ++i) {
      if (density != 65 && rng() % 64 >= density) continue;
      c.entries[i] = 1 + static_cast<uint32_t>(rng() % (shape == 2 ? 200000 : 65535));
      c.live[i] = shape == 0 ? c.entries[i] : static_cast<uint32_t>(rng() % (c.entries[i] + 1));
      want |= uint64_t{1} << i;
    }
    SetCounts(&alloc, &v->out, c);
    ASSERT_EQ(v->out.count_mask, want) << "round " << round;
    ASSERT_EQ(v->out.count_format, NarrowestFormat(c)) << "round " << round;
    ASSERT_EQ(v->out.CountBytes(),
              kCountRecordBytes[v->out.count_format] * static_cast<size_t>(__builtin_popcountll(want)));
    if (want != 0) ++seen[v->out.count_format];
    ASSERT_NO_FATAL_FAILURE(ExpectCounts(v->out, c, round));
  }
  ExpectEveryFormat(seen);
  FreeVersion(&alloc, v);
  EXPECT_EQ(alloc.bytes(), 0u);
}

// CountEdits against the dense counts edited directly: random edits of a few vertices, reads
// seeing the edits before Commit and the adjacency only after it. Some edits give a vertex its
// first entry or take its last (a record merged in or out, in the array's format), its first
// tombstone or its 65536th entry (the array is rebuilt, wider when a record outgrew the
// format); most are patched in place. Now and then the array is rebuilt whole from the dense
// counts, which narrows it again (nothing else does).
TEST(SubgraphTest, CountEditsMatchDenseCounts) {
  NodeAllocator alloc;
  SubgraphVersion* v = NewVersion(&alloc, false, false);
  std::mt19937_64 rng(11);
  VertexCounts want;
  std::memset(&want, 0, sizeof(want));
  int rebuilt = 0, patched = 0;
  int seen[3] = {0, 0, 0};
  for (int round = 0; round < 3000; ++round) {
    const uint64_t mask_before = v->out.count_mask;
    const CountFormat format_before = v->out.count_format;
    const VertexCounts before = want;
    CountEdits e(&v->out);
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      const uint32_t i = static_cast<uint32_t>(rng() % kSubgraphSize);
      ASSERT_EQ(e.entries(i), want.entries[i]);
      ASSERT_EQ(e.live(i), want.live[i]);
      uint32_t x = rng() % 8 == 0 ? 0 : 1 + static_cast<uint32_t>(rng() % 40);
      if (rng() % 50 == 0) x = 65530 + static_cast<uint32_t>(rng() % 12);  // around 65536
      const uint32_t live = x != 0 && rng() % 40 == 0 ? x - 1 : x;       // a tombstone
      e.entries_ref(i) = x;
      e.live_ref(i) = live;
      want.entries[i] = x;
      want.live[i] = live;
      ASSERT_EQ(e.entries(i), x);
      ASSERT_EQ(e.live(i), live);
      ASSERT_EQ(v->out.Entries(i), before.entries[i]);  // the adjacency is not written yet
      ASSERT_EQ(v->out.Live(i), before.live[i]);
    }
    e.Commit(&alloc, &v->out);
    const bool same = v->out.count_mask == mask_before && v->out.count_format == format_before;
    (same ? patched : rebuilt)++;
    ++seen[v->out.count_format];
    ASSERT_NO_FATAL_FAILURE(ExpectCounts(v->out, want, round));
    if (round % 29 == 0) {
      SetCounts(&alloc, &v->out, want);
      ASSERT_EQ(v->out.count_format, NarrowestFormat(want)) << "round " << round;
    }
  }
  EXPECT_GT(patched, 1000);
  EXPECT_GT(rebuilt, 50);
  ExpectEveryFormat(seen);
  FreeVersion(&alloc, v);
  EXPECT_EQ(alloc.bytes(), 0u);
}

// Counts live in the version's own block when they fit (Adjacency::inline_cap): a chain of
// copies, each edited (vertices gaining a first entry, losing their last, tombstones, counts
// past 65535), out and in. Every version keeps its own counts — editing a copy never changes
// its base — counts that fit the room are inline, a copy of a version makes room for its
// base's counts and one record more, and freeing the chain returns every byte.
TEST(SubgraphTest, CopiesKeepTheirOwnInlineCounts) {
  NodeAllocator alloc;
  std::mt19937_64 rng(23);
  struct Kept {
    SubgraphVersion* v;
    VertexCounts out, in;
  };
  std::vector<Kept> chain;
  Kept first{NewVersion(&alloc, /*with_in=*/true, /*weighted=*/false), {}, {}};
  std::memset(&first.out, 0, sizeof(first.out));
  std::memset(&first.in, 0, sizeof(first.in));
  chain.push_back(first);
  int inline_seen = 0, outside_seen = 0;
  for (int round = 0; round < 2000; ++round) {
    const Kept& base = chain[rng() % 4 == 0 ? rng() % chain.size() : chain.size() - 1];
    Kept next{CopyVersion(&alloc, *base.v), base.out, base.in};
    for (Adjacency* a : {&next.v->out, next.v->in()}) {
      // Room for the base's counts and one record more, unless every vertex has one already.
      const Adjacency& from = a == next.v->in() ? *base.v->in() : base.v->out;
      ASSERT_GE(a->inline_cap, from.CountBytes() + (from.count_mask == ~uint64_t{0}
                                                        ? 0
                                                        : kCountRecordBytes[from.count_format]));
      ASSERT_EQ(a->CountsInline(), from.CountBytes() != 0) << "round " << round;
      VertexCounts& want = a == next.v->in() ? next.in : next.out;
      CountEdits e(a);
      const int edits = static_cast<int>(rng() % 4);
      for (int k = 0; k < edits; ++k) {
        const uint32_t i = static_cast<uint32_t>(rng() % kSubgraphSize);
        uint32_t x = rng() % 6 == 0 ? 0 : 1 + static_cast<uint32_t>(rng() % 50);
        if (rng() % 200 == 0) x = 65536 + static_cast<uint32_t>(rng() % 8);
        const uint32_t live = x != 0 && rng() % 30 == 0 ? x - 1 : x;
        e.entries_ref(i) = want.entries[i] = x;
        e.live_ref(i) = want.live[i] = live;
      }
      e.Commit(&alloc, a);
      if (rng() % 50 == 0) SetCounts(&alloc, a, want);  // rebuilt whole: narrowed again
      ASSERT_NO_FATAL_FAILURE(ExpectCounts(*a, want, round));
      ASSERT_EQ(a->CountsInline(), a->CountBytes() != 0 && a->CountBytes() <= a->inline_cap)
          << "round " << round;
      (a->CountsInline() ? inline_seen : outside_seen)++;
    }
    chain.push_back(next);
    // Every version kept so far still reads its own counts.
    if (round % 50 == 0) {
      for (const Kept& k : chain) {
        ASSERT_NO_FATAL_FAILURE(ExpectCounts(k.v->out, k.out, round));
        ASSERT_NO_FATAL_FAILURE(ExpectCounts(*k.v->in(), k.in, round));
      }
    }
    if (chain.size() > 64) {  // free a random old version, as GC frees from the middle
      const size_t j = rng() % (chain.size() - 1);
      FreeVersion(&alloc, chain[j].v);
      chain.erase(chain.begin() + static_cast<ptrdiff_t>(j));
    }
  }
  EXPECT_GT(inline_seen, 1000);
  EXPECT_GT(outside_seen, 50);
  for (const Kept& k : chain) FreeVersion(&alloc, k.v);
  EXPECT_EQ(alloc.bytes(), 0u);
}

// A version's block is its 96-byte header and its inline room rounded to whole lines
// (subgraph.h): a copy makes room for its base's 2-byte records and one more, so a copy of a
// version with at most 15 records takes 128 bytes, with at most 47 192 bytes, and a directed
// graph's version with an in-adjacency 8 bytes more before the header. Counts that outgrow the
// room move to a block of their own (its address in the room) and read back the same; freeing
// returns every byte.
TEST(SubgraphTest, VersionBlocksAreTheHeaderAndWholeLines) {
  NodeAllocator alloc;
  const uint32_t kRecords[] = {0, 15, 16, 47, 48, 64};
  // The copy's block for each count of records: 96 (or 8 + 96) bytes of header and room for
  // the records and one more (at least 8 bytes), in whole lines.
  const size_t kBlock[2][6] = {{128, 128, 192, 192, 256, 256},   // no in-adjacency
                               {128, 192, 192, 256, 256, 256}};  // 8 bytes before the header
  for (bool with_in : {false, true}) {
    for (size_t r = 0; r < 6; ++r) {
      const uint32_t records = kRecords[r];
      SubgraphVersion* base = NewVersion(&alloc, with_in, /*weighted=*/false);
      ASSERT_EQ(base->in() != nullptr, with_in);
      VertexCounts c;
      std::memset(&c, 0, sizeof(c));
      for (uint32_t i = 0; i < records; ++i) c.entries[i] = c.live[i] = 1 + i;
      // A new version's room holds 16 records (12 with an in-adjacency); more go to a block of
      // their own, whose address the room holds.
      SetCounts(&alloc, &base->out, c);
      EXPECT_EQ(base->out.CountsInline(), records != 0 && records <= (with_in ? 12u : 16u))
          << records << " records, with_in " << with_in;
      ASSERT_NO_FATAL_FAILURE(ExpectCounts(base->out, c, static_cast<int>(records)));
      const size_t before = alloc.bytes();
      SubgraphVersion* copy = CopyVersion(&alloc, *base);
      const size_t in_bytes = with_in ? 128 : 0;  // the in-adjacency's block: 64 + its room
      EXPECT_EQ(alloc.bytes() - before - in_bytes, kBlock[with_in][r])
          << records << " records, with_in " << with_in;
      EXPECT_EQ(copy->out.CountsInline(), records != 0);
      ASSERT_NO_FATAL_FAILURE(ExpectCounts(copy->out, c, static_cast<int>(records)));
      ASSERT_NO_FATAL_FAILURE(ExpectCounts(base->out, c, static_cast<int>(records)));
      FreeVersion(&alloc, copy);
      FreeVersion(&alloc, base);
      ASSERT_EQ(alloc.bytes(), 0u) << records << " records, with_in " << with_in;
    }
  }
  // The clustered index keeps its allocator and weightedness in one word.
  ClusteredIndex w(&alloc, /*weighted=*/true), u(&alloc, /*weighted=*/false);
  EXPECT_TRUE(w.weighted());
  EXPECT_FALSE(u.weighted());
  EXPECT_EQ(w.allocator(), &alloc);
  EXPECT_EQ(u.allocator(), &alloc);
}

TEST(SubgraphTest, FreeVersionsFreesEveryVersion) {
  NodeAllocator alloc;
  for (size_t n : {0, 1, 3, 4, 5, 9, 100}) {
    std::vector<SubgraphVersion*> vs;
    for (size_t i = 0; i < n; ++i) {
      vs.push_back(NewVersion(&alloc, /*with_in=*/i % 2 == 0, /*weighted=*/false));
      VertexCounts c;
      std::memset(&c, 0, sizeof(c));
      c.entries[i % kSubgraphSize] = c.live[i % kSubgraphSize] = 1;
      SetCounts(&alloc, &vs.back()->out, c);
    }
    EXPECT_EQ(alloc.bytes() == 0, n == 0);
    FreeVersions(&alloc, vs.data(), vs.data() + vs.size());
    EXPECT_EQ(alloc.bytes(), 0u) << n << " versions";
  }
}

// Small blocks go back to the freeing thread's free list and come out again newest first, at
// their 16-byte class (a 200-byte block serves a 208-byte request); the byte count stays exact.
TEST(NodeAllocatorTest, FreedSmallBlocksAreReusedNewestFirst) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  std::vector<void*> ps;
  for (int i = 0; i < 100; ++i) ps.push_back(alloc.Allocate(200));
  EXPECT_EQ(alloc.bytes(), 100u * 200);
  EXPECT_EQ(alloc.ListedBytes(), 0u);
  for (void* p : ps) alloc.Free(p, 200);
  EXPECT_EQ(alloc.bytes(), 0u);
  EXPECT_EQ(alloc.ListedBytes(), 100u * 208);
  for (int i = 99; i >= 0; --i) {
    void* p = alloc.Allocate(i % 2 == 0 ? 208 : 193);  // all in the 208-byte class
    EXPECT_EQ(p, ps[static_cast<size_t>(i)]) << i;
    std::memset(p, 0xab, i % 2 == 0 ? 208 : 193);
  }
  EXPECT_EQ(alloc.ListedBytes(), 0u);
  EXPECT_EQ(alloc.bytes(), 50u * 208 + 50u * 193);
  // Another class does not take them; a block past the listed sizes is not listed.
  for (int i = 0; i < 100; ++i) alloc.Free(ps[static_cast<size_t>(i)], i % 2 == 0 ? 208 : 193);
  void* other = alloc.Allocate(64);
  EXPECT_EQ(std::find(ps.begin(), ps.end(), other), ps.end());
  void* big = alloc.Allocate(NodeAllocator::kLeafListMaxBytes + 16);
  const size_t listed = alloc.ListedBytes();
  alloc.Free(big, NodeAllocator::kLeafListMaxBytes + 16);
  EXPECT_EQ(alloc.ListedBytes(), listed);
  alloc.Free(other, 64);
  EXPECT_EQ(alloc.bytes(), 0u);
}

// Leaf-sized blocks (past kPoolMaxBytes) go to the freeing thread's list of their jemalloc
// class and come out lowest address first, whatever order they were freed in; a full list
// gives back its highest blocks, never its lowest; a thread that exits gives its lists back.
TEST(NodeAllocatorTest, LeafListsKeepTheLowestAddresses) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  const size_t base = alloc.ArenaAllocatedBytes();
  const auto low_first = [](const void* a, const void* b) {
    return reinterpret_cast<uintptr_t>(a) < reinterpret_cast<uintptr_t>(b);
  };
  std::mt19937_64 rng(7);
  // 300 blocks of the 1,536-byte class (1,281..1,536 bytes), freed shuffled.
  std::vector<void*> ps;
  for (int i = 0; i < 300; ++i) ps.push_back(alloc.Allocate(1500));
  std::vector<void*> freed = ps;
  std::shuffle(freed.begin(), freed.end(), rng);
  for (void* p : freed) alloc.Free(p, 1500);
  EXPECT_EQ(alloc.bytes(), 0u);
  EXPECT_EQ(alloc.ListedBytes(), 300u * 1536);
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), base + 300u * 1536);
  // Another class (768 bytes) does not take them.
  void* other = alloc.Allocate(700);
  EXPECT_EQ(std::find(ps.begin(), ps.end(), other), ps.end());
  alloc.Free(other, 700);
  std::sort(ps.begin(), ps.end(), low_first);
  for (int i = 0; i < 300; ++i) {
    void* p = alloc.Allocate(i % 2 == 0 ? 1300 : 1536);  // the same class
    ASSERT_EQ(p, ps[static_cast<size_t>(i)]) << i;
    std::memset(p, 0xcd, i % 2 == 0 ? 1300 : 1536);
  }
  for (int i = 0; i < 300; ++i) alloc.Free(ps[static_cast<size_t>(i)], i % 2 == 0 ? 1300 : 1536);
  alloc.PassOnThreadLists();
  EXPECT_EQ(alloc.ListedBytes(), 0u);

  // More than a list holds, freed shuffled by another thread: it keeps at most
  // kLeafListBlocks, gives the rest back, and the lowest of them all is listed.
  const size_t n = NodeAllocator::kLeafListBlocks * 2;
  std::vector<void*> qs;
  for (size_t i = 0; i < n; ++i) qs.push_back(alloc.Allocate(3000));  // the 3,072-byte class
  std::shuffle(qs.begin(), qs.end(), rng);
  std::thread th([&] {
    for (void* q : qs) alloc.Free(q, 3000);
    const size_t listed = alloc.ListedBytes();
    EXPECT_LE(listed, NodeAllocator::kLeafListBlocks * 3072u);
    EXPECT_GE(listed, NodeAllocator::kLeafListBlocks * 3072u * 3 / 4);
    EXPECT_EQ(alloc.ArenaAllocatedBytes(), base + listed);
    void* lowest = alloc.Allocate(3000);
    EXPECT_EQ(lowest, *std::min_element(qs.begin(), qs.end(), low_first));
    alloc.Free(lowest, 3000);
  });
  th.join();
  EXPECT_EQ(alloc.ListedBytes(), 0u) << "an exited thread's leaf list was not given back";
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), base);
  EXPECT_EQ(alloc.bytes(), 0u);
  // Under a list limit of fewer bytes than kLeafListBlocks blocks, the limit bounds the list.
  NodeAllocator small;
  constexpr size_t kLimit = 64 << 10;
  small.set_list_limit(kLimit);
  const size_t small_base = small.ArenaAllocatedBytes();
  std::vector<void*> rs;
  for (int i = 0; i < 100; ++i) rs.push_back(small.Allocate(3000));
  for (void* r : rs) small.Free(r, 3000);
  EXPECT_LT(small.ListedBytes(), kLimit + 3072);
  EXPECT_GE(small.ListedBytes(), kLimit * 3 / 4);
  EXPECT_EQ(small.ArenaAllocatedBytes(), small_base + small.ListedBytes());
}

// The leaf lists' classes are jemalloc's: a block freed at any size of 513..4,096 bytes serves
// the largest request of its jemalloc class (nallocx), and not the smallest of the next class.
TEST(NodeAllocatorTest, LeafListClassesAreJemallocs) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#else
  NodeAllocator alloc;
  for (size_t n = NodeAllocator::kPoolMaxBytes + 1; n <= NodeAllocator::kLeafListMaxBytes; ++n) {
    const size_t top = nallocx(n, MALLOCX_ALIGN(16));  // the largest size of n's class
    void* p = alloc.Allocate(n);
    alloc.Free(p, n);
    void* q = alloc.Allocate(top);
    ASSERT_EQ(q, p) << n << " and " << top << " bytes in different lists";
    std::memset(q, 0xef, top);
    alloc.Free(q, top);  // listed again, the lowest of its class
    if (top < NodeAllocator::kLeafListMaxBytes) {
      void* r = alloc.Allocate(top + 1);
      EXPECT_NE(r, p) << n << " and " << top + 1 << " bytes in one list";
      alloc.Free(r, top + 1);
    }
  }
  EXPECT_EQ(alloc.bytes(), 0u);
#endif
}

// set_list_limit bounds each list, and the depot's blocks of each class, by the bytes given
// instead (a store's memgraph: a sixty-fourth of its capacity). Without thread caches (the
// default) the overflow goes back to the arena at once: it counts only the listed blocks as
// allocated (128 bytes: a class of the lists and of jemalloc both, so the two count them
// alike).
TEST(NodeAllocatorTest, ListLimitBoundsEachList) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  constexpr size_t kLimit = 64 << 10, kBlock = 128;
  alloc.set_list_limit(kLimit);
  std::vector<void*> ps;
  for (size_t i = 0; i < 8 * kLimit / kBlock; ++i) ps.push_back(alloc.Allocate(kBlock));
  for (void* p : ps) alloc.Free(p, kBlock);
  EXPECT_LE(alloc.ListedBytes(), 2 * kLimit + kBlock);  // the list and the depot
  EXPECT_GE(alloc.ListedBytes(), kLimit);
  EXPECT_EQ(alloc.bytes(), 0u);
#ifndef STRATA_NO_JEMALLOC
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), alloc.ListedBytes()) << "the overflow went to a cache";
#endif
}

// A thread's list of one class holds at most about kThreadListBytes: past it, half goes to
// the depot, which holds at most kPoolClassBytes of the class; past that, back to jemalloc.
// Blocks freed by another thread join that thread's list (or the depot), not the allocating
// one's; the thread's list goes back to jemalloc when it exits, the depot's blocks stay.
TEST(NodeAllocatorTest, FreeListsAreBoundedAndPerThread) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  constexpr size_t kBlock = 256;
  constexpr size_t kList = NodeAllocator::kThreadListBytes, kDepot = NodeAllocator::kPoolClassBytes;
  const size_t n = 4 * kDepot / kBlock;
  std::vector<void*> ps, small;
  for (size_t i = 0; i < n; ++i) ps.push_back(alloc.Allocate(kBlock));
  for (size_t i = 0; i < n; ++i) small.push_back(alloc.Allocate(32));
  std::thread other([&] {
    for (void* p : ps) alloc.Free(p, kBlock);
    EXPECT_LE(alloc.ListedBytes(), kDepot + kList + kBlock);
    EXPECT_GE(alloc.ListedBytes(), kDepot - kList);
    // Another class has bounds of its own: its n * 32 bytes (half a depot) all stay listed.
    const size_t before = alloc.ListedBytes();
    for (void* p : small) alloc.Free(p, 32);
    EXPECT_EQ(alloc.ListedBytes(), before + n * 32);
  });
  other.join();
  EXPECT_EQ(alloc.bytes(), 0u);
  // The other thread's lists went back when it exited; the depot keeps what it held.
  EXPECT_LE(alloc.ListedBytes(), kDepot + n * 32) << "freed blocks stayed listed after their thread exited";
  EXPECT_GE(alloc.ListedBytes(), kDepot - kList + n * 32 - kList);
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), alloc.ListedBytes());
  // This thread takes the depot's blocks before asking jemalloc: allocating what it holds
  // leaves the arena's allocated bytes where they are.
  const size_t arena = alloc.ArenaAllocatedBytes();
  std::vector<void*> again;
  for (size_t i = 0; i < kDepot / 2 / kBlock; ++i) again.push_back(alloc.Allocate(kBlock));
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), arena) << "allocated from jemalloc with the depot full";
  for (void* p : again) alloc.Free(p, kBlock);
}

// A thread that freed blocks it will not allocate again (a reader reclaiming the versions it
// had pinned) passes its lists on: another thread then allocates them from the depot, while the
// first is still alive (its lists are drained only when it exits).
TEST(NodeAllocatorTest, AThreadPassesItsListsOnToTheDepot) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  constexpr size_t kBlock = 256;
  const size_t n = NodeAllocator::kThreadListBytes / 2 / kBlock;  // within one thread's list
  std::vector<void*> ps;
  for (size_t i = 0; i < n; ++i) ps.push_back(alloc.Allocate(kBlock));
  std::atomic<int> phase{0};
  std::thread reader([&] {
    for (void* p : ps) alloc.Free(p, kBlock);
    alloc.PassOnThreadLists();
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
  });
  while (phase.load() != 1) std::this_thread::yield();
  const size_t arena = alloc.ArenaAllocatedBytes();
  std::vector<void*> again;
  for (size_t i = 0; i < n; ++i) again.push_back(alloc.Allocate(kBlock));
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), arena) << "the freed blocks stayed on the reader's list";
  phase = 2;
  reader.join();
  for (void* p : again) alloc.Free(p, kBlock);
}

// A depot class that no batch came to or went from for a whole trim interval gives its blocks
// back to the arena (a class the tier's nodes have grown out of), while a class in use keeps
// its own. With the interval 0 every depot operation checks, and "idle" is "since the last one".
TEST(NodeAllocatorTest, ADepotClassLeftIdleGoesBackToTheArena) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  alloc.set_depot_trim_us(0);
  constexpr size_t kList = NodeAllocator::kThreadListBytes;
  // `bytes` of `block`-byte blocks allocated here and freed by a thread that then exits: its
  // list passes the overflow to the depot at each bound, and goes back to jemalloc at exit.
  auto free_on_another_thread = [&](size_t block, size_t bytes) {
    std::vector<void*> ps;
    for (size_t i = 0; i < bytes / block; ++i) ps.push_back(alloc.Allocate(block));
    std::thread t([&] {
      for (void* p : ps) alloc.Free(p, block);
    });
    t.join();
  };
  free_on_another_thread(192, 3 * kList);  // five overflows of half a list
  const size_t big = alloc.ListedBytes();
  ASSERT_GE(big, kList);
  ASSERT_EQ(alloc.ArenaAllocatedBytes(), big);
  // Two overflows of the 64-byte class: the first depot operation finds the 192-byte class
  // active (its last batch came after the previous check), the second finds it idle.
  free_on_another_thread(64, kList + kList / 2 + 64);
  const size_t after = alloc.ListedBytes();
  EXPECT_GE(after, kList / 2) << "the 64-byte class, active at each check, was given back";
  EXPECT_LE(after, kList + 2 * 64) << "the idle 192-byte class stayed in the depot";
  EXPECT_EQ(alloc.bytes(), 0u);
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), after) << "blocks neither listed nor freed";
}

// One thread allocates, another frees (two writers replacing each other's versions): the
// freeing thread's list stays within kThreadListBytes, so the arena stays near what is live at
// once. (With each list bound at kPoolClassBytes, the freeing thread's list grew to that bound
// while the other drew fresh blocks: 8.25 MiB allocated for 256 KiB live.) That the overflow is
// then reused from the depot is FreeListsAreBoundedAndPerThread's last check.
TEST(NodeAllocatorTest, BlocksFreedByAnotherThreadDoNotPileUp) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no free lists";
#endif
  NodeAllocator alloc;
  constexpr size_t kBlock = 256, kPerRound = 1024, kRounds = 64;  // 16 MiB through
  std::vector<void*> handed;
  std::atomic<int> turn{0};  // 0: the allocator's, 1: the freer's, 2: stop
  std::thread freer([&] {
    for (;;) {
      int t;
      while ((t = turn.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
      if (t == 2) return;
      for (void* p : handed) alloc.Free(p, kBlock);
      turn.store(0, std::memory_order_release);
    }
  });
  size_t peak = 0;
  for (size_t r = 0; r < kRounds; ++r) {
    handed.clear();
    for (size_t i = 0; i < kPerRound; ++i) {
      handed.push_back(alloc.Allocate(kBlock));
      std::memset(handed.back(), static_cast<int>(r), kBlock);
    }
    peak = std::max(peak, alloc.ArenaAllocatedBytes());
    turn.store(1, std::memory_order_release);
    while (turn.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }
  turn.store(2, std::memory_order_release);
  freer.join();
  EXPECT_EQ(alloc.bytes(), 0u);
  // Live at once: one round (256 KiB); beside it the freer's list (< kThreadListBytes) and a
  // batch or two in the depot.
  EXPECT_LE(peak, kPerRound * kBlock + 3 * NodeAllocator::kThreadListBytes);
  EXPECT_GE(peak, kPerRound * kBlock);
}

// With thread caches on (a persistent store's memgraphs), a thread that exits, or drops an
// allocator from its table of recent ones (it uses more than four), leaves nothing of that
// allocator behind: its free lists go back and its jemalloc cache is destroyed, so what the
// arena counts as allocated comes down to what is still allocated (before, each exited
// thread's cache kept up to a few hundred objects of every size it had used, out of the
// arena's reach until the allocator was destroyed), and the caches do not pile up. A thread
// that comes back to a dropped allocator gets a new cache and works on.
TEST(NodeAllocatorTest, ThreadsThatLeaveLeaveNoCachedBlocks) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no thread caches";
#endif
  NodeAllocator alloc;
  alloc.set_thread_caches(true);
  const size_t sizes[] = {48, 208, 640, 1536, 4096, 12000};
  auto churn = [&](NodeAllocator* a) {
    std::vector<std::pair<void*, size_t>> ps;
    for (int i = 0; i < 3000; ++i) {
      const size_t n = sizes[static_cast<size_t>(i) % 6];
      ps.emplace_back(a->Allocate(n), n);
    }
    for (auto& [p, n] : ps) a->Free(p, n);
  };
  void* kept = alloc.Allocate(640);  // one block still allocated by this thread
  const size_t base = alloc.ArenaAllocatedBytes();
  EXPECT_GE(base, 640u);
  for (int t = 0; t < 8; ++t) {
    std::thread th([&] { churn(&alloc); });
    th.join();
  }
  EXPECT_EQ(alloc.bytes(), 640u);
  EXPECT_EQ(alloc.ListedBytes(), 0u);
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), base) << "exited threads' caches still hold blocks";
  EXPECT_EQ(alloc.ThreadCachesForTesting(), 1u) << "only this thread's cache is left";
  // One thread over six allocators: the first two are dropped from its table of four, then it
  // comes back to the first.
  std::vector<std::unique_ptr<NodeAllocator>> others;
  for (int i = 0; i < 5; ++i) {
    others.push_back(std::make_unique<NodeAllocator>());
    others.back()->set_thread_caches(true);
  }
  std::thread th([&] {
    churn(&alloc);
    for (auto& o : others) churn(o.get());
    EXPECT_EQ(alloc.ThreadCachesForTesting(), 1u) << "the dropped allocator kept its cache";
    EXPECT_EQ(alloc.ArenaAllocatedBytes(), base);
    churn(&alloc);
    EXPECT_EQ(alloc.ThreadCachesForTesting(), 2u);
  });
  th.join();
  EXPECT_EQ(alloc.ThreadCachesForTesting(), 1u);
  EXPECT_EQ(alloc.ArenaAllocatedBytes(), base);
  for (auto& o : others) {
    EXPECT_EQ(o->ArenaAllocatedBytes(), 0u);
    EXPECT_EQ(o->ThreadCachesForTesting(), 0u);
  }
  alloc.Free(kept, 640);
  EXPECT_EQ(alloc.bytes(), 0u);
}

// Without thread caches (the default; the in-memory store's memgraph) nothing stands between
// the free lists and the arena's slabs: a block past the listed sizes goes back to the arena
// at once (the arena counts it free while the thread lives on; a list's overflow:
// ListLimitBoundsEachList, LeafListsKeepTheLowestAddresses), so the arena's bins, which fill
// the oldest slab with room first, place every block that is not on a list. With caches on, a
// thread's cache keeps some of each class it saw, and the leaf lists are not used.
TEST(NodeAllocatorTest, BlocksOffTheListsGoStraightBackToTheArena) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "plain new/delete (sanitizer build): no arena";
#endif
  NodeAllocator alloc;
  void* kept = alloc.Allocate(64);
  const size_t base = alloc.ArenaAllocatedBytes();
  for (size_t n : {NodeAllocator::kLeafListMaxBytes + 16, size_t{12000}}) {
    std::vector<void*> ps;
    for (int i = 0; i < 500; ++i) ps.push_back(alloc.Allocate(n));
    EXPECT_GE(alloc.ArenaAllocatedBytes(), base + 500 * n);
    for (void* p : ps) alloc.Free(p, n);
    EXPECT_EQ(alloc.ArenaAllocatedBytes(), base) << n << "-byte blocks held after their free";
  }
  // Leaf-sized blocks: what is not listed went back; once passed on, nothing is listed.
  for (size_t n : {NodeAllocator::kPoolMaxBytes + 16, size_t{640}, size_t{1536}}) {
    std::vector<void*> ps;
    for (int i = 0; i < 1000; ++i) ps.push_back(alloc.Allocate(n));
    for (void* p : ps) alloc.Free(p, n);
    EXPECT_GT(alloc.ListedBytes(), 0u) << n;
    EXPECT_EQ(alloc.ArenaAllocatedBytes(), base + alloc.ListedBytes()) << n;
    alloc.PassOnThreadLists();
    EXPECT_EQ(alloc.ListedBytes(), 0u) << n;
    EXPECT_EQ(alloc.ArenaAllocatedBytes(), base) << n << "-byte blocks held after their lists went";
  }
  alloc.Free(kept, 64);
  EXPECT_EQ(alloc.bytes(), 0u);

  NodeAllocator cached;
  cached.set_thread_caches(true);
  std::vector<void*> qs;
  for (int i = 0; i < 500; ++i) qs.push_back(cached.Allocate(640));
  for (void* p : qs) cached.Free(p, 640);
  EXPECT_EQ(cached.bytes(), 0u);
  EXPECT_EQ(cached.ListedBytes(), 0u) << "a leaf list beside a thread cache";
  EXPECT_GT(cached.ArenaAllocatedBytes(), 0u) << "no thread cache held any of the blocks";
  EXPECT_EQ(cached.ThreadCachesForTesting(), 1u);
}

// VmFlags of the mapping holding address p in /proc/self/smaps; "" when none does.
std::string MappingFlags(const void* addr) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(addr);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    uintptr_t b = 0, e = 0;
    char dash = 0;
    std::istringstream head(line);
    if (line.find(':') > line.find(' ') && (head >> std::hex >> b >> dash >> e) && dash == '-') {
      in = b <= p && p < e;  // a mapping's first line: "start-end perms offset dev inode path"
    } else if (in && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// The memgraph arena's address space is advised for transparent huge pages once the arena is
// large (NodeAllocator's extent hooks): the mapping that holds a block past the first tens of
// MiB carries the "hg" flag in /proc/self/smaps; the arena's first, small mapping does not
// (a small memgraph keeps its 4 KiB pages and its resident size).
TEST(NodeAllocatorTest, LargeArenaMemoryIsAdvisedForHugePages) {
#ifdef STRATA_NO_JEMALLOC
  GTEST_SKIP() << "built without jemalloc: no private arena";
#else
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    GTEST_SKIP() << "kernel without transparent huge pages";
  }
  NodeAllocator alloc;
  std::vector<void*> blocks;
  for (int i = 0; i < 24; ++i) blocks.push_back(alloc.Allocate(4096));
  for (int i = 0; i < 64; ++i) blocks.push_back(alloc.Allocate(size_t{1} << 20));
  const std::string first = MappingFlags(blocks.front());
  const std::string last = MappingFlags(blocks.back());
  ASSERT_FALSE(first.empty()) << "no mapping holds the arena's first block";
  ASSERT_FALSE(last.empty()) << "no mapping holds the arena's last block";
  EXPECT_EQ(first.find(" hg"), std::string::npos) << first;
  EXPECT_NE(last.find(" hg"), std::string::npos) << last;
  for (size_t i = 0; i < blocks.size(); ++i) alloc.Free(blocks[i], i < 24 ? 4096 : size_t{1} << 20);
  EXPECT_EQ(alloc.bytes(), 0u);
#endif
}

}  // namespace
}  // namespace strata::mem
