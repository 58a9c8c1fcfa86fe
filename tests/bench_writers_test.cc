// The benchmark's writers (bench/writers.h): every op applied exactly once; each edge's ops in
// one stream; writers of commuting ops take the work a slower writer has not claimed, and
// writers of ops that do not commute never do; an Apply error stops the run and comes back.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "bench/writers.h"

namespace strata::bench {
namespace {

// Records which thread applied each op and in what order. With `rendezvous_u` set, a thread
// that applies an op whose source vertex has that parity waits (up to 10 s) until a second
// thread has applied such an op too: the owner of that stream stalls until another writer
// takes part of it, which only work stealing can do.
class RecordingSystem : public System {
 public:
  struct Applied {
    std::thread::id thread;
    VertexId u, v;
  };
  int rendezvous_parity = -1;
  // The one Apply call that would take the log past this many ops fails; later calls succeed
  // again, 1 ms each, and are counted: only the writers' stop keeps them few.
  size_t fail_after = SIZE_MAX;
  int calls_after_failure = 0;

  std::string name() const override { return "recording"; }
  Status Open(const SystemConfig&) override { return Status::OK(); }
  Status Apply(const EdgeOp* ops, size_t n) override {
    std::unique_lock<std::mutex> l(mu_);
    if (!failed_ && log_.size() + n > fail_after) {
      failed_ = true;
      return Status::IOError("injected apply failure");
    }
    if (failed_) {
      ++calls_after_failure;
      l.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      l.lock();
    }
    for (size_t i = 0; i < n; ++i) log_.push_back({std::this_thread::get_id(), ops[i].u, ops[i].v});
    if (rendezvous_parity >= 0 && n > 0 && static_cast<int>(ops[0].u % 2) == rendezvous_parity) {
      parity_threads_.insert(std::this_thread::get_id());
      cv_.notify_all();
      if (!waited_) {  // one wait in all: without a second thread it times out once
        cv_.wait_for(l, std::chrono::seconds(10), [&] { return parity_threads_.size() >= 2; });
        waited_ = true;
      }
    }
    return Status::OK();
  }
  Status Persist() override { return Status::OK(); }
  std::unique_ptr<View> NewView() override { return nullptr; }
  SystemStats Stats() override { return {}; }
  Status Close() override { return Status::OK(); }

  std::vector<Applied> log() {
    std::lock_guard<std::mutex> g(mu_);
    return log_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Applied> log_;
  std::set<std::thread::id> parity_threads_;
  bool waited_ = false;
  bool failed_ = false;
};

OpStream Stream(VertexId first_u, size_t n) {
  OpStream s;
  for (size_t i = 0; i < n; ++i) {
    s.e.push_back({static_cast<uint32_t>(first_u + 2 * (i % 1000)), static_cast<uint32_t>(i)});
  }
  return s;
}

TEST(BenchWriters, PartitionKeepsEachEdgesOpsInOneStreamInOrder) {
  std::vector<PackedEdge> e;
  std::vector<uint8_t> del;
  for (uint32_t i = 0; i < 5000; ++i) {
    e.push_back({i % 97, i % 89});
    del.push_back(i % 3 == 0);
    e.push_back({i % 89, i % 97});  // the same undirected edge, reversed
    del.push_back(0);
  }
  const std::vector<OpStream> s = Partition(e, {}, del, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].size() + s[1].size(), e.size());
  EXPECT_GT(s[0].size(), 0u);
  EXPECT_GT(s[1].size(), 0u);
  // Each undirected edge's ops, in the order they were given: all in one stream, same order.
  std::map<uint64_t, std::vector<uint8_t>> want, got;
  for (size_t i = 0; i < e.size(); ++i) want[PairKey(e[i].u, e[i].v)].push_back(del[i]);
  std::map<uint64_t, int> stream_of;
  for (int t = 0; t < 2; ++t) {
    for (size_t i = 0; i < s[t].size(); ++i) {
      const uint64_t k = PairKey(s[t].e[i].u, s[t].e[i].v);
      auto [it, fresh] = stream_of.emplace(k, t);
      EXPECT_EQ(it->second, t) << "edge " << k << " in both streams";
      got[k].push_back(s[t].del[i]);
    }
  }
  EXPECT_EQ(got, want);
}

TEST(BenchWriters, OnlyUnweightedInsertsAreStolen) {
  std::vector<PackedEdge> e = {{1, 2}, {3, 4}, {5, 6}};
  EXPECT_TRUE(SplitForWriters(e, {}, {}, 2).steal);
  EXPECT_FALSE(SplitForWriters(e, {}, {}, 1).steal);
  EXPECT_FALSE(SplitForWriters(e, {1.0, 2.0, 3.0}, {}, 2).steal) << "weights do not commute";
  EXPECT_FALSE(SplitForWriters(e, {}, {0, 1, 0}, 2).steal) << "deletes do not commute";
}

// Every op of `ws` appears exactly once in the log.
void ExpectEachOpOnce(const WriterStreams& ws, const std::vector<RecordingSystem::Applied>& log) {
  std::map<std::pair<VertexId, VertexId>, int> want, got;
  for (const OpStream& s : ws.streams) {
    for (const PackedEdge& x : s.e) ++want[{x.u, x.v}];
  }
  for (const auto& a : log) ++got[{a.u, a.v}];
  EXPECT_EQ(got, want);
}

TEST(BenchWriters, AWriterTakesTheOpsAStalledWriterHasNotClaimed) {
  for (size_t batch : {size_t{1}, size_t{100}, size_t{1024}}) {
    WriterStreams ws;
    ws.steal = true;
    ws.streams = {Stream(0, 20000), Stream(1, 3000)};  // stream 0: even sources, stalls
    RecordingSystem sys;
    sys.rendezvous_parity = 0;
    WriteRun run;
    ASSERT_TRUE(RunWriters(&sys, ws, batch, 1.0, false, &run).ok());
    const auto log = sys.log();
    ExpectEachOpOnce(ws, log);
    EXPECT_EQ(run.ops, 23000u);
    std::set<std::thread::id> even_writers;
    for (const auto& a : log) {
      if (a.u % 2 == 0) even_writers.insert(a.thread);
    }
    EXPECT_EQ(even_writers.size(), 2u) << "batch " << batch << ": nobody took stream 0's tail";
    // The owner applied a prefix of its stream in order; the thief took the rest from the back.
    std::map<std::thread::id, std::vector<VertexId>> by_thread;
    for (const auto& a : log) {
      if (a.u % 2 == 0) by_thread[a.thread].push_back(a.v);
    }
    for (auto& [id, vs] : by_thread) {
      if (vs.front() != 0) continue;  // the owner's
      for (size_t i = 0; i < vs.size(); ++i) ASSERT_EQ(vs[i], i) << "batch " << batch;
    }
  }
}

TEST(BenchWriters, OpsThatDoNotCommuteStayWithTheirWriterInOrder) {
  std::vector<PackedEdge> e;
  std::vector<double> w;
  for (uint32_t i = 0; i < 6000; ++i) {
    e.push_back({i % 50, i});
    w.push_back(i);
  }
  const WriterStreams ws = SplitForWriters(e, w, {}, 2);
  ASSERT_FALSE(ws.steal);
  RecordingSystem sys;
  WriteRun run;
  ASSERT_TRUE(RunWriters(&sys, ws, 7, 1.0, false, &run).ok());
  const auto log = sys.log();
  ExpectEachOpOnce(ws, log);
  // Each stream's ops were applied by one thread, in the stream's order.
  for (const OpStream& s : ws.streams) {
    std::set<std::thread::id> threads;
    std::vector<VertexId> order;
    std::set<VertexId> mine;
    for (const PackedEdge& x : s.e) mine.insert(x.v);
    for (const auto& a : log) {
      if (mine.count(a.v) != 0) {
        threads.insert(a.thread);
        order.push_back(a.v);
      }
    }
    EXPECT_EQ(threads.size(), 1u);
    ASSERT_EQ(order.size(), s.size());
    for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(order[i], s.e[i].v);
  }
}

TEST(BenchWriters, AnApplyErrorStopsTheWritersAndComesBack) {
  WriterStreams ws;
  ws.steal = true;
  ws.streams = {Stream(0, 5000), Stream(1, 5000)};
  RecordingSystem sys;
  sys.fail_after = 3000;
  WriteRun run;
  Status s = RunWriters(&sys, ws, 10, 1.0, true, &run);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("injected apply failure"), std::string::npos);
  // Writers that went on after the error would make the other ~700 calls; the other writer
  // may make one or two before the failing one has told it (more only if that one is
  // preempted for milliseconds).
  EXPECT_LE(sys.calls_after_failure, 20);
}

}  // namespace
}  // namespace strata::bench
