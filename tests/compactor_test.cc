// Tests of the vertex-aware k-way merge (compaction/compactor.h) against a model of its rules:
// random inputs with deletion marks, tombstones and weights, merged at and above the bottom,
// with runs far longer than one read batch (a vertex of 200,000 edges in several inputs), tiny
// read windows and small output files; outputs must be disjoint ascending vertex ranges.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "compaction/compactor.h"
#include "io/env.h"
#include "segment/segment_format.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"

namespace strata::compaction {
namespace {

struct Rec {
  double w = 1.0;
  bool tomb = false;
  bool operator==(const Rec& o) const { return w == o.w && tomb == o.tomb; }
};
struct Vtx {
  uint8_t flags = 0;
  std::map<VertexId, Rec> edges;
  bool operator==(const Vtx& o) const { return flags == o.flags && edges == o.edges; }
};
using Seg = std::map<VertexId, Vtx>;  // one input's contents

// Which vertices older levels may hold (CompactionOptions::older_may_hold_vertex): unset, any.
struct Older {
  std::function<bool(VertexId)> vertex;
};

// What the merge must write for inputs newest first (compactor.h's rules, stated plainly).
Seg Expected(const std::vector<Seg>& in, bool bottom, const Older& older = {}) {
  std::map<VertexId, bool> all;
  for (const Seg& s : in) {
    for (const auto& [u, v] : s) all[u] = true;
  }
  Seg out;
  for (const auto& [u, _] : all) {
    bool knows = false, exists = false, deleted = false;
    std::map<VertexId, Rec> edges;  // newest wins: insert only what is not there yet
    for (const Seg& s : in) {
      auto it = s.find(u);
      if (it == s.end()) continue;
      const uint8_t f = it->second.flags;
      if (!knows && (f & (kVertexExists | kVertexDeleted))) {
        knows = true;
        exists = (f & kVertexExists) != 0;
      }
      for (const auto& [d, r] : it->second.edges) edges.emplace(d, r);
      if (f & kVertexDeleted) {
        deleted = true;
        break;  // older inputs are hidden for u
      }
    }
    Vtx v;
    const bool older_u = !bottom && (!older.vertex || older.vertex(u));
    if (knows && exists) v.flags |= kVertexExists;
    if (deleted && older_u) v.flags |= kVertexDeleted;
    for (const auto& [d, r] : edges) {
      const bool keep_tomb = older_u && !deleted;
      if (!r.tomb || keep_tomb) v.edges[d] = r;
    }
    if (v.flags != 0 || !v.edges.empty()) out[u] = v;
  }
  return out;
}

class CompactorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata_compactor_test_XXXXXX";
    char* p = ::mkdtemp(tmpl);
    ASSERT_NE(p, nullptr);
    dir_ = p;
    io::EnvOptions eo;
    eo.backend = IoBackend::kPosix;
    ASSERT_TRUE(io::Env::Open(eo, &env_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const Seg& s, bool weighted, std::unique_ptr<SegmentReader>* r) {
    const std::string path = dir_ + "/" + SegmentFileName(next_++);
    SegmentWriterOptions wo;
    wo.weighted = weighted;
    SegmentWriter w(env_.get());
    ASSERT_TRUE(w.Open(path, wo).ok());
    for (const auto& [u, v] : s) {
      ASSERT_TRUE(w.AddVertex(u, v.flags).ok());
      for (const auto& [d, rec] : v.edges) ASSERT_TRUE(w.AddEdge(d, rec.w, rec.tomb).ok());
    }
    ASSERT_TRUE(w.Finish().ok());
    Status st = SegmentReader::Open(env_.get(), path, SegmentReaderOptions(), r);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Writes each of `in` as a segment; *inputs points at the readers, newest first as `in`.
  void WriteInputs(const std::vector<Seg>& in, bool weighted,
                   std::vector<std::unique_ptr<SegmentReader>>* readers,
                   std::vector<const SegmentReader*>* inputs) {
    readers->resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      Write(in[i], weighted, &(*readers)[i]);
      inputs->push_back((*readers)[i].get());
    }
  }

  // Reads every output back, checking that outputs hold disjoint ascending vertex ranges.
  void ReadOutputs(const CompactionResult& res, bool weighted, Seg* got) {
    VertexId prev_max = 0;
    bool first = true;
    for (const FileMeta& f : res.outputs) {
      std::unique_ptr<SegmentReader> r;
      const std::string path = dir_ + "/" + SegmentFileName(f.number);
      ASSERT_TRUE(SegmentReader::Open(env_.get(), path, SegmentReaderOptions(), &r).ok());
      if (!first) {
        ASSERT_GT(f.min_src, prev_max) << "output ranges overlap";
      }
      first = false;
      prev_max = f.max_src;
      ScanOptions so;
      so.read.weights = weighted;
      auto sc = r->NewScanner(so);
      VertexEntry ve;
      while (sc->NextVertex(&ve)) {
        ASSERT_GE(ve.src, f.min_src);
        ASSERT_LE(ve.src, f.max_src);
        ASSERT_EQ(got->count(ve.src), 0u) << "vertex " << ve.src << " written twice";
        Vtx& v = (*got)[ve.src];
        v.flags = ve.flags & (kVertexExists | kVertexDeleted);
        EdgeBatch b;
        while (sc->NextEdges(&b)) {
          for (size_t j = 0; j < b.size; ++j) {
            Rec rec;
            rec.w = weighted ? b.weight[j] : 1.0;
            rec.tomb = b.has_tombstones && b.tombstone[j] != 0;
            ASSERT_TRUE(v.edges.emplace(b.dst[j], rec).second) << "duplicate edge";
          }
        }
      }
      ASSERT_TRUE(sc->status().ok()) << sc->status().ToString();
    }
  }

  // plan.parts > 1: RunCompactionParts with that plan (no minimum part size); its result
  // goes to *res_out.
  void Check(const std::vector<Seg>& in, bool bottom, bool weighted, size_t window,
             uint64_t target_file_bytes, const Older& older = {}, const PartPlan& plan = {},
             CompactionResult* res_out = nullptr) {
    std::vector<std::unique_ptr<SegmentReader>> readers;
    std::vector<const SegmentReader*> inputs;
    WriteInputs(in, weighted, &readers, &inputs);
    ASSERT_FALSE(HasFatalFailure());
    CompactionOptions o;
    o.dir = dir_;
    o.bottom = bottom;
    o.weighted = weighted;
    o.read_window_bytes = window;
    o.target_file_bytes = target_file_bytes;
    o.older_may_hold_vertex = older.vertex;
    CompactionResult res;
    Status st = plan.parts > 1 ? RunCompactionParts(inputs, o, plan, env_.get(), &next_, &res, 1)
                               : RunCompaction(inputs, o, env_.get(), &next_, &res);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_LE(res.parts, std::max(plan.parts, 1));
    ASSERT_LE(res.threads, std::max(plan.MaxThreads(), 1));
    if (res_out != nullptr) *res_out = res;
    Seg got;
    ReadOutputs(res, weighted, &got);
    const Seg want = Expected(in, bottom, older);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [u, v] : want) {
      auto it = got.find(u);
      ASSERT_NE(it, got.end()) << "vertex " << u << " missing";
      ASSERT_EQ(it->second.flags, v.flags) << "vertex " << u;
      ASSERT_EQ(it->second.edges.size(), v.edges.size()) << "vertex " << u;
      ASSERT_TRUE(it->second.edges == v.edges) << "vertex " << u;
    }
    uint64_t edges = 0;
    for (const auto& [u, v] : want) edges += v.edges.size();
    EXPECT_EQ(res.entries_out, edges);
  }

  std::string dir_;
  std::unique_ptr<io::Env> env_;
  std::atomic<uint64_t> next_{1};
};

// tomb_in: one record in this many is a tombstone (0: none).
Seg RandomSeg(std::mt19937_64& rng, VertexId vertices, VertexId dsts, size_t max_degree,
              bool weighted, uint64_t tomb_in = 4) {
  Seg s;
  for (VertexId u = 0; u < vertices; ++u) {
    if (rng() % 3 == 0) continue;  // absent from this input
    Vtx v;
    const uint64_t f = rng() % 10;
    if (f == 0) v.flags = kVertexDeleted;
    if (f == 1) v.flags = kVertexExists;
    if (f == 2) v.flags = kVertexExists | kVertexDeleted;
    const size_t deg = rng() % (max_degree + 1);
    for (size_t k = 0; k < deg; ++k) {
      Rec r;
      r.tomb = tomb_in != 0 && rng() % tomb_in == 0;
      r.w = weighted ? static_cast<double>(rng() % 1000) / 8.0 : 1.0;
      v.edges[rng() % dsts] = r;
    }
    s[u] = v;
  }
  return s;
}

TEST_F(CompactorTest, RandomInputsMatchTheModel) {
  std::mt19937_64 rng(20261122);
  for (int round = 0; round < 24; ++round) {
    const size_t k = 1 + rng() % 5;
    const bool bottom = round % 2 == 0;
    const bool weighted = round % 3 == 0;
    std::vector<Seg> in;
    for (size_t i = 0; i < k; ++i) in.push_back(RandomSeg(rng, 300, 400, 40, weighted));
    SCOPED_TRACE("round " + std::to_string(round) + ", " + std::to_string(k) + " inputs");
    // Small output files: the merge cuts outputs at vertex boundaries.
    Check(in, bottom, weighted, 64 << 10, round % 4 == 1 ? 4096 : 64 << 20);
    if (HasFatalFailure()) return;
  }
}

// Many inputs (a level-0 merge has up to l0_stall_trigger of them): the merge goes through a
// heap past a few runs per vertex; the newest record of each destination still wins.
TEST_F(CompactorTest, ManyInputsMatchTheModel) {
  std::mt19937_64 rng(20261129);
  for (int round = 0; round < 10; ++round) {
    const size_t k = 5 + rng() % 20;
    const bool bottom = round % 2 == 0;
    const bool weighted = round % 3 != 0;
    std::vector<Seg> in;
    // Few destinations: most records of a vertex have an older copy in another input.
    for (size_t i = 0; i < k; ++i) in.push_back(RandomSeg(rng, 120, 60, 30, weighted));
    SCOPED_TRACE("round " + std::to_string(round) + ", " + std::to_string(k) + " inputs");
    Check(in, bottom, weighted, 64 << 10, round % 4 == 1 ? 4096 : 64 << 20);
    if (HasFatalFailure()) return;
  }
}

// Runs without tombstones are copied a range at a time: the records of one run up to the
// smallest destination of the others. Hubs whose lists in the older inputs span many read
// batches, against a few records each in newer inputs (a level-0 merge into level 1), with 2-4
// runs (the scan) and 5-20 (the heap); some inputs with tombstones among them, so a vertex can
// mix ranged and per-record runs. Equal destinations must still go to the newest run.
TEST_F(CompactorTest, TombstoneFreeRunsMergeAsRanges) {
  std::mt19937_64 rng(20261129);
  for (int round = 0; round < 12; ++round) {
    const size_t k = round % 2 == 0 ? 2 + rng() % 3 : 5 + rng() % 16;
    const bool bottom = round % 3 == 0;
    const bool weighted = round % 2 == 1 || round == 4;
    std::vector<Seg> in;
    for (size_t i = 0; i < k; ++i) {
      const bool with_tombs = round % 4 == 3 && i % 3 == 1;
      in.push_back(RandomSeg(rng, 200, 3000, i + 1 == k ? 300 : 20, weighted,
                             with_tombs ? 4 : 0));
    }
    // Hubs: long in the oldest input, a few records (some shared) in every newer one.
    for (VertexId hub : {3, 77, 150}) {
      Vtx& old = in.back()[hub];
      for (VertexId d = 0; d < 40000; ++d) {
        if (rng() % 3 != 0) old.edges[d * 2] = Rec{weighted ? 1.0 + d % 7 : 1.0, false};
      }
      for (size_t i = 0; i + 1 < k; ++i) {
        for (int e = 0; e < 30; ++e) {
          in[i][hub].edges[rng() % 80000] = Rec{weighted ? 100.0 + i : 1.0, false};
        }
      }
    }
    SCOPED_TRACE("round " + std::to_string(round) + ", " + std::to_string(k) + " inputs");
    Check(in, bottom, weighted, round % 3 == 2 ? 4096 : 64 << 10, 64 << 20);
    if (HasFatalFailure()) return;
  }
}

// Above the bottom, tombstones and deletion marks survive only for vertices an older level may
// hold.
TEST_F(CompactorTest, TombstonesAndMarksDroppedWhereNothingOlderHoldsThem) {
  std::mt19937_64 rng(4242);
  Older older;
  older.vertex = [](VertexId u) { return u % 3 != 0; };
  uint64_t dropped = 0;
  for (int round = 0; round < 12; ++round) {
    const size_t k = 1 + rng() % 4;
    std::vector<Seg> in;
    for (size_t i = 0; i < k; ++i) in.push_back(RandomSeg(rng, 300, 400, 40, round % 2 == 0));
    SCOPED_TRACE("round " + std::to_string(round));
    Check(in, /*bottom=*/false, round % 2 == 0, 64 << 10, round % 3 == 1 ? 4096 : 64 << 20,
          older);
    if (HasFatalFailure()) return;
    // The narrowed rules keep fewer entries than "anything older may hold anything".
    uint64_t narrow = 0, wide = 0;
    for (const auto& [u, v] : Expected(in, false, older)) narrow += v.edges.size() + (v.flags != 0);
    for (const auto& [u, v] : Expected(in, false)) wide += v.edges.size() + (v.flags != 0);
    ASSERT_LE(narrow, wide);
    dropped += wide - narrow;
  }
  EXPECT_GT(dropped, 100u) << "the random inputs should hold tombstones the rules can drop";
}

TEST_F(CompactorTest, LongRunsInterleaveAcrossManyBatches) {
  // Vertex 7's list is 200,000 edges in the oldest input and overlaps partly rewritten copies
  // (tombstones, new weights) in newer ones: the merge advances each input a batch at a time.
  std::mt19937_64 rng(7);
  std::vector<Seg> in(3);
  for (VertexId d = 0; d < 200000; ++d) in[2][7].edges[d * 3] = Rec{1.0 + d % 5, false};
  for (VertexId d = 0; d < 300000; d += 2) in[1][7].edges[d] = Rec{2.5, rng() % 3 == 0};
  for (VertexId d = 1; d < 600000; d += 7) in[0][7].edges[d] = Rec{4.0, rng() % 5 == 0};
  in[1][7].flags = kVertexExists;
  for (VertexId u = 0; u < 20; ++u) {  // short neighbours on both sides
    if (u == 7) continue;
    in[u % 3][u].edges[u + 1] = Rec{1.0, u % 2 == 0};
  }
  Check(in, /*bottom=*/false, /*weighted=*/true, 64 << 10, 64 << 20);
  if (HasFatalFailure()) return;
  Check(in, /*bottom=*/true, /*weighted=*/true, 64 << 10, 1 << 20);
}

// The files of a level (ascending, disjoint vertex ranges) are merged as one input read a file
// after another: two overlapping newer files over a level of five files (one empty) and a
// level of three, with deletion marks and tombstones, whole and in parts whose ranges leave
// some files out. Files out of order (a level listed descending) stay separate inputs.
TEST_F(CompactorTest, LevelFilesChainIntoOneInput) {
  std::mt19937_64 rng(1130);
  auto slice = [&](VertexId lo, VertexId hi, uint64_t tomb_in) {
    Seg s = RandomSeg(rng, hi, 500, 30, true, tomb_in);
    for (auto it = s.begin(); it != s.end();) it = it->first < lo ? s.erase(it) : std::next(it);
    return s;
  };
  std::vector<Seg> in;
  in.push_back(RandomSeg(rng, 400, 500, 10, true));  // newest: overlaps everything
  in.push_back(RandomSeg(rng, 400, 500, 10, true));
  in.push_back(slice(0, 90, 0));  // level 1: [0, 90) [90, 150) empty [150, 310) [310, 400)
  in.push_back(slice(90, 150, 0));
  in.push_back(Seg());
  in.push_back(slice(150, 310, 4));
  in.push_back(slice(310, 400, 0));
  in.push_back(slice(0, 200, 0));  // level 2: [0, 200) [200, 330) [330, 400)
  in.push_back(slice(200, 330, 5));
  in.push_back(slice(330, 400, 0));
  {
    std::vector<std::unique_ptr<SegmentReader>> readers;
    std::vector<const SegmentReader*> inputs;
    WriteInputs(in, true, &readers, &inputs);
    ASSERT_FALSE(HasFatalFailure());
    // The empty file stands alone; level 1's files before and after it chain, and level 2's
    // first file ([0, 200)) does not follow [310, 400).
    EXPECT_EQ(InputChains(inputs), (std::vector<size_t>{1, 1, 2, 1, 2, 3}));
    std::vector<const SegmentReader*> reversed = {inputs[9], inputs[8], inputs[7]};
    EXPECT_EQ(InputChains(reversed), (std::vector<size_t>{1, 1, 1}));
    // A range that starts or ends exactly at a file's first or last vertex reads that file.
    std::vector<VertexId> ends;
    for (size_t i = 2; i < inputs.size(); ++i) {
      if (inputs[i]->num_vertices() == 0) continue;
      ends.push_back(inputs[i]->header().min_src);
      ends.push_back(inputs[i]->header().max_src);
    }
    const Seg all = Expected(in, false);
    for (size_t a = 0; a + 1 < ends.size(); a += 3) {
      const VertexId lo = std::min(ends[a], ends[a + 1]), hi = std::max(ends[a], ends[a + 1]);
      CompactionOptions o;
      o.dir = dir_;
      o.weighted = true;
      o.min_src = lo;
      o.max_src = hi;
      CompactionResult res;
      Status st = RunCompaction(inputs, o, env_.get(), &next_, &res);
      ASSERT_TRUE(st.ok()) << st.ToString();
      Seg got;
      ReadOutputs(res, true, &got);
      Seg want;
      for (const auto& [u, v] : all) {
        if (u >= lo && u <= hi) want[u] = v;
      }
      EXPECT_TRUE(got == want) << "range [" << lo << ", " << hi << "]: " << got.size()
                               << " vertices, want " << want.size();
    }
    // Files that share a vertex do not chain.
    std::vector<Seg> touching(2);
    touching[0][5].edges[1] = Rec{1.0, false};
    touching[0][9].edges[1] = Rec{1.0, false};
    touching[1][9].edges[2] = Rec{1.0, false};
    std::vector<std::unique_ptr<SegmentReader>> tr;
    std::vector<const SegmentReader*> ti;
    WriteInputs(touching, true, &tr, &ti);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(InputChains(ti), (std::vector<size_t>{1, 1}));
  }
  for (bool bottom : {false, true}) {
    SCOPED_TRACE(bottom ? "bottom" : "above the bottom");
    Check(in, bottom, /*weighted=*/true, 4096, 64 << 20);
    if (HasFatalFailure()) return;
    // Parts: their ranges leave files of both levels wholly outside.
    Check(in, bottom, /*weighted=*/true, 4096, 64 << 20, {}, PartPlan::AllAtOnce(4));
    if (HasFatalFailure()) return;
  }
}

TEST_F(CompactorTest, DeletionMarkHidesOlderInputs) {
  std::vector<Seg> in(3);
  in[2][5].edges[1] = Rec{1.0, false};   // oldest: hidden by the mark in in[1]
  in[2][5].edges[9] = Rec{1.0, false};
  in[1][5].flags = kVertexDeleted;  // the vertex was deleted, then re-added in in[0]
  in[0][5].flags = kVertexExists;
  in[0][5].edges[3] = Rec{1.0, false};
  in[0][5].edges[4] = Rec{1.0, true};    // a tombstone under a mark: dropped
  Check(in, /*bottom=*/false, /*weighted=*/false, 0, 64 << 20);
  if (HasFatalFailure()) return;
  const Seg want = Expected(in, false);
  ASSERT_EQ(want.at(5).edges.size(), 1u);  // only 5->3 survives
  EXPECT_EQ(want.at(5).flags, kVertexExists | kVertexDeleted);
}

// Subcompactions: the merge cut into parts by source range, each on its own thread, gives what
// one merge gives (the model's records; outputs disjoint and ascending across the parts).
TEST_F(CompactorTest, PartsMatchTheModel) {
  std::mt19937_64 rng(20261127);
  int split = 0;
  for (int round = 0; round < 16; ++round) {
    const size_t k = 1 + rng() % 5;
    const bool bottom = round % 2 == 0;
    const bool weighted = round % 3 == 0;
    std::vector<Seg> in;
    for (size_t i = 0; i < k; ++i) in.push_back(RandomSeg(rng, 2000, 4000, 40, weighted));
    const int parts = 2 + round % 3;
    SCOPED_TRACE("round " + std::to_string(round) + ", " + std::to_string(k) + " inputs, " +
                 std::to_string(parts) + " parts");
    Older older;
    if (round % 4 == 3) older.vertex = [](VertexId u) { return u % 5 != 0; };
    CompactionResult res;
    Check(in, bottom, weighted, 64 << 10, round % 4 == 1 ? 16384 : 64 << 20, older,
          PartPlan::AllAtOnce(parts), &res);
    if (HasFatalFailure()) return;
    split += res.parts > 1;
  }
  EXPECT_GE(split, 14) << "the random inputs are large enough to be cut";
}

// A merge begun on one thread (a compaction beside running writers) is cut into parts that
// thread takes in order; once join_when holds, a second thread takes the parts not yet
// started. Either way the outputs are the model's.
TEST_F(CompactorTest, AJoiningThreadTakesPartsNotYetStarted) {
  std::mt19937_64 rng(20261128);
  std::vector<Seg> in;
  for (int i = 0; i < 3; ++i) in.push_back(RandomSeg(rng, 2000, 4000, 40, false));
  // Never joined: one thread merges all eight parts.
  CompactionResult res;
  std::atomic<int> asked{0};
  Check(in, /*bottom=*/true, false, 64 << 10, 64 << 20, {},
        PartPlan{8, 1, [&] { return ++asked, false; }}, &res);
  if (HasFatalFailure()) return;
  EXPECT_EQ(res.parts, 8);
  EXPECT_EQ(res.threads, 1);
  // Joined at once. The first part's thread waits at its first vertex (older_may_hold_vertex,
  // called per vertex above the bottom) until another thread merges a vertex, so the joiner
  // is known to find parts not yet started; a joiner that never comes fails on the count
  // below after the wait's 20 s.
  std::mutex mu;
  std::condition_variable cv;
  std::thread::id first;
  bool other = false;
  Older older;
  older.vertex = [&](VertexId u) {
    std::unique_lock<std::mutex> g(mu);
    const std::thread::id me = std::this_thread::get_id();
    if (first == std::thread::id()) first = me;
    if (me != first) {
      other = true;
      cv.notify_all();
    } else if (!other) {
      cv.wait_for(g, std::chrono::seconds(20), [&] { return other; });
    }
    return u % 5 != 0;
  };
  asked = 0;
  Check(in, /*bottom=*/false, false, 64 << 10, 64 << 20, older,
        PartPlan{8, 1, [&] { return ++asked, true; }}, &res);
  if (HasFatalFailure()) return;
  EXPECT_EQ(res.parts, 8);
  EXPECT_EQ(res.threads, 2) << "the joining thread never merged a part";
  EXPECT_GE(asked.load(), 1);
}

// PartCuts: ascending cuts at block boundaries that split the records about evenly, none
// when the inputs are under two parts' minimum.
TEST_F(CompactorTest, PartCutsSplitTheRecordsEvenly) {
  Seg s;
  for (VertexId u = 0; u < 20000; ++u) {
    for (VertexId d = 0; d < 1 + u % 17; ++d) s[u].edges[d * 13] = Rec{};
  }
  std::unique_ptr<SegmentReader> r;
  Write(s, false, &r);
  const std::vector<const SegmentReader*> in = {r.get()};
  uint64_t total = 0;
  for (const auto& [u, v] : s) total += v.edges.size();
  EXPECT_TRUE(PartCuts(in, 4, total).empty());  // one part's minimum is all there is
  EXPECT_TRUE(PartCuts(in, 1, 1).empty());
  for (int parts : {2, 3, 4, 7}) {
    const std::vector<VertexId> cuts = PartCuts(in, parts, 1);
    ASSERT_EQ(cuts.size(), static_cast<size_t>(parts - 1));
    std::vector<uint64_t> per(cuts.size() + 1, 0);
    for (const auto& [u, v] : s) {
      per[std::upper_bound(cuts.begin(), cuts.end(), u) - cuts.begin()] += v.edges.size();
    }
    for (size_t i = 0; i < per.size(); ++i) {
      if (i > 0) {
        ASSERT_GT(cuts[i - 1], i > 1 ? cuts[i - 2] : 0);
      }
      // Within a vertex block's records of an even share (blocks here hold < 2% of them).
      EXPECT_NEAR(static_cast<double>(per[i]), static_cast<double>(total) / parts, total * 0.03)
          << parts << " parts, part " << i;
    }
  }
}

// A part that fails fails the compaction, and no output of any part is left behind.
TEST_F(CompactorTest, AFailedPartLeavesNoOutputs) {
  class FailingEnv final : public io::Env {
   public:
    FailingEnv(io::Env* base, int fail_at) : base_(base), fail_at_(fail_at) {}
    IoBackend backend() const override { return base_->backend(); }
    Status NewWritableFile(const std::string& path,
                           std::unique_ptr<io::WritableFile>* out) override {
      if (++made_ == fail_at_) return Status::IOError(path + ": injected");
      return base_->NewWritableFile(path, out);
    }
    Status NewRandomAccessFile(const std::string& path,
                               std::unique_ptr<io::RandomAccessFile>* out) override {
      return base_->NewRandomAccessFile(path, out);
    }

   private:
    io::Env* base_;
    const int fail_at_;
    std::atomic<int> made_{0};
  };
  std::mt19937_64 rng(99);
  std::vector<Seg> in;
  for (int i = 0; i < 3; ++i) in.push_back(RandomSeg(rng, 1500, 4000, 40, false));
  std::vector<std::unique_ptr<SegmentReader>> readers;
  std::vector<const SegmentReader*> inputs;
  WriteInputs(in, false, &readers, &inputs);
  ASSERT_FALSE(HasFatalFailure());
  auto segs = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) n += e.path().extension() == ".seg";
    return n;
  };
  ASSERT_EQ(segs(), in.size());
  for (int fail_at : {1, 3, 6}) {
    CompactionOptions o;
    o.dir = dir_;
    o.target_file_bytes = 16384;  // several outputs per part
    // Every part on its own thread, and one thread joined by another at once.
    for (const PartPlan& plan : {PartPlan::AllAtOnce(3), PartPlan{3, 1, [] { return true; }}}) {
      FailingEnv env(env_.get(), fail_at);
      CompactionResult res;
      Status st = RunCompactionParts(inputs, o, plan, &env, &next_, &res, 1);
      EXPECT_TRUE(st.IsIOError()) << "fail at " << fail_at << ": " << st.ToString();
      EXPECT_EQ(segs(), in.size()) << "fail at " << fail_at << ": outputs left behind";
    }
  }
}

}  // namespace
}  // namespace strata::compaction
