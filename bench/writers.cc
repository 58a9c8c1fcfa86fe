#include "bench/writers.h"

#include <mutex>
#include <string>
#include <thread>

#include "bench/util.h"
#include "graphio/generator.h"

namespace strata::bench {

using graphio::Mix64;

std::vector<OpStream> Partition(const std::vector<PackedEdge>& e, const std::vector<double>& w,
                                const std::vector<uint8_t>& del, int threads) {
  std::vector<OpStream> s(threads);
  for (auto& x : s) {
    x.e.reserve(e.size() / threads + e.size() / (threads * 16) + 16);
  }
  for (size_t i = 0; i < e.size(); ++i) {
    const int t = threads == 1 ? 0 : static_cast<int>(Mix64(PairKey(e[i].u, e[i].v)) % threads);
    s[t].e.push_back(e[i]);
    if (!w.empty()) s[t].w.push_back(w[i]);
    if (!del.empty()) s[t].del.push_back(del[i]);
  }
  return s;
}

WriterStreams SplitForWriters(const std::vector<PackedEdge>& e, const std::vector<double>& w,
                              const std::vector<uint8_t>& del, int threads) {
  WriterStreams ws;
  ws.streams = Partition(e, w, del, threads);
  ws.steal = threads > 1 && w.empty() && del.empty();
  return ws;
}

namespace {

// Ops a writer claims at a time: a multiple of the batch, and at least 1024 ops so that a
// single-edge writer touches its stream's claim word once per 1024 transactions.
size_t ClaimOps(size_t batch) { return std::max<size_t>(1, 1024 / batch) * batch; }

// The claims of one stream in units of ClaimOps: its owner takes [front, ...) from the
// front, thieves take from the back; the claims not yet taken are [front, back).
struct alignas(64) StreamClaims {
  std::atomic<uint64_t> word{0};  // front | back << 32
  // Takes the unit at the front (owner) or at the back (thief), or returns false.
  bool Take(bool from_back, uint64_t* unit) {
    uint64_t w = word.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t front = w & 0xffffffffu, back = w >> 32;
      if (front >= back) return false;
      const uint64_t next = from_back ? front | (back - 1) << 32 : (front + 1) | back << 32;
      if (word.compare_exchange_weak(w, next, std::memory_order_relaxed)) {
        *unit = from_back ? back - 1 : front;
        return true;
      }
    }
  }
};

}  // namespace

Status RunWriters(System* sys, const WriterStreams& ws, size_t batch, double series_interval,
                  bool deciles, WriteRun* out) {
  const std::vector<OpStream>& streams = ws.streams;
  const int threads = static_cast<int>(streams.size());
  const size_t claim = ClaimOps(batch);
  std::vector<StreamClaims> claims(threads);
  for (int t = 0; t < threads; ++t) {
    claims[t].word.store(uint64_t{(streams[t].size() + claim - 1) / claim} << 32);
  }
  std::vector<Counter> done(threads);
  std::vector<std::vector<float>> lat(threads);
  std::vector<double> finished(threads, 0.0);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  WriteRun& run = *out;
  run = WriteRun();
  for (const auto& s : streams) {
    run.ops += s.size();
    for (size_t i = 0; i < s.del.size(); ++i) run.inserts += !s.del[i];
    if (s.del.empty()) run.inserts += s.size();
  }
  std::vector<std::thread> ts;
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex err_mu;
  // Deciles: one shared count, added to once per transaction (only asked for with large ones).
  std::atomic<uint64_t> applied{0};
  std::atomic<double> decile_at[10];
  for (auto& d : decile_at) d.store(0.0);
  double t_start = 0;  // set before `go`
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      const OpStream* sp = &streams[t];
      std::vector<EdgeOp> buf(batch);
      // The thread's own latencies, moved to lat[t] at the end: the vectors' headers in `lat`
      // share cache lines, and a push_back per transaction bounced them between writers.
      std::vector<float> my_lat;
      my_lat.reserve(sp->size() / batch + 1);
      // This writer's ops: [i, end) of *sp, then its next claim: its own stream's front, then
      // (ws.steal) the others' backs.
      size_t i = 0, end = 0;
      int victim = t;
      auto next_claim = [&] {
        uint64_t unit = 0;
        for (; victim < t + threads; ++victim) {
          const int v = victim % threads;
          if (v != t && !ws.steal) continue;
          if (claims[v].Take(/*from_back=*/v != t, &unit)) {
            sp = &streams[v];
            i = unit * claim;
            end = std::min(sp->size(), i + claim);
            return true;
          }
        }
        return false;
      };
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      for (; !failed.load(std::memory_order_relaxed); i += batch) {
        if (i >= end && !next_claim()) break;
        const OpStream& s = *sp;
        const size_t k = std::min(batch, end - i);
        for (size_t j = 0; j < k; ++j) {
          EdgeOp& op = buf[j];
          op.u = s.e[i + j].u;
          op.v = s.e[i + j].v;
          op.w = s.w.empty() ? 1.0 : s.w[i + j];
          op.del = !s.del.empty() && s.del[i + j];
        }
        const double t0 = NowSec();
        Status st = sys->Apply(buf.data(), k);
        const double t1 = NowSec();
        if (!st.ok()) {
          std::lock_guard<std::mutex> g(err_mu);
          if (first_error.ok()) first_error = st;
          failed = true;
          break;
        }
        my_lat.push_back(static_cast<float>((t1 - t0) * 1e6));
        done[t].v.store(done[t].v.load(std::memory_order_relaxed) + k, std::memory_order_relaxed);
        if (deciles) {
          const uint64_t before = applied.fetch_add(k, std::memory_order_relaxed);
          for (uint64_t d = before * 10 / run.ops;
               d < 10 && (d + 1) * run.ops <= (before + k) * 10; ++d) {
            decile_at[d].store(t1 - t_start, std::memory_order_relaxed);
          }
        }
      }
      lat[t] = std::move(my_lat);
      finished[t] = NowSec() - t_start;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const double c0 = ProcessCpuSec();
  const double t0 = NowSec();
  t_start = t0;
  go.store(true, std::memory_order_release);
  run.series.emplace_back(0.0, 0);
  PeriodicSampler monitor(series_interval, [&] {
    uint64_t sum = 0;
    for (auto& c : done) sum += c.v.load(std::memory_order_relaxed);
    run.series.emplace_back(NowSec() - t0, sum);
  });
  for (auto& t : ts) t.join();
  run.seconds = NowSec() - t0;
  run.cpu_seconds = ProcessCpuSec() - c0;
  monitor.Stop();
  run.series.emplace_back(run.seconds, run.ops);
  for (auto& l : lat) {
    run.txns += l.size();
    run.lat_us.insert(run.lat_us.end(), l.begin(), l.end());
  }
  if (deciles) {
    for (auto& d : decile_at) run.decile_at.push_back(d.load());
  }
  const auto [first, last] = std::minmax_element(finished.begin(), finished.end());
  run.finish_spread = *last - *first;
  return first_error;
}

}  // namespace strata::bench
