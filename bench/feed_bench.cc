// strata-bench feed: the change feed's cost and throughput (docs/benchmarks.md, "Change feed").
// In one run: ingest E random edges (batches of B, W writer threads) into a fresh store without
// a subscriber, then into another fresh store with a no-op subscriber, and report both ingest
// rates, their ratio, and the changes per second the feed delivered to the handler (records /
// time from the first write until the handler returned from the last commit's records).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "strata/db.h"

namespace strata::bench {

namespace {

struct FeedRun {
  double ingest_s = 0;
  double deliver_s = 0;
  uint64_t records = 0;
  double drain_s = 0;  // held mode: from the release of the handler to the last record
};

// hold: the handler waits until the ingest is over (the queue holds every record), then the
// drain measures delivery alone.
FeedRun RunOnce(const std::string& dir, bool in_memory, bool subscribe, uint64_t edges,
                uint64_t batch, int writers, uint64_t vertices, bool hold = false) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  Options o;
  o.in_memory = in_memory;
  std::unique_ptr<DB> db;
  Status s = DB::Open(o, dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  std::atomic<uint64_t> seen{0};
  std::atomic<bool> held{hold};
  std::unique_ptr<Subscription> sub;
  if (subscribe) {
    SubscribeOptions so;
    so.queue_capacity = hold ? edges + 1 : so.queue_capacity;
    s = db->Subscribe(so, [&](const ChangeRecord*, size_t n) {
          while (held.load(std::memory_order_relaxed)) std::this_thread::yield();
          seen.fetch_add(n, std::memory_order_relaxed);
        }, &sub);
    if (!s.ok()) std::exit(1);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int w = 0; w < writers; ++w) {
    ts.emplace_back([&, w] {
      std::mt19937_64 rng(w + 1);
      WriteBatch b;
      for (uint64_t i = w; i < edges; i += writers) {
        b.InsertEdge(rng() % vertices, rng() % vertices);
        if (b.Count() == batch) {
          if (!db->Write(b).ok()) std::exit(1);
          b.Clear();
        }
      }
      if (b.Count() != 0 && !db->Write(b).ok()) std::exit(1);
    });
  }
  for (auto& t : ts) t.join();
  FeedRun r;
  r.ingest_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto t1 = std::chrono::steady_clock::now();
  held = false;
  if (sub) {
    s = sub->WaitDelivered(db->GetStats(false).last_committed, 600000);
    if (!s.ok()) {
      std::fprintf(stderr, "feed: %s\n", s.ToString().c_str());
      std::exit(1);
    }
    r.deliver_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.records = seen.load();
    r.drain_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    sub.reset();
  }
  db->Close();
  std::filesystem::remove_all(dir, ec);
  return r;
}

}  // namespace

int RunFeedBench(int argc, char** argv) {
  uint64_t edges = 4000000, batch = 1024, vertices = 1 << 20;
  int writers = 1;
  bool in_memory = false;
  std::string dir = "/tmp/strata-feed-bench";
  for (int i = 2; i + 1 < argc || (i < argc && std::string(argv[i]) == "--in-memory"); ++i) {
    std::string a = argv[i];
    if (a == "--in-memory") { in_memory = true; continue; }
    std::string v = argv[++i];
    if (a == "--edges") edges = std::stoull(v);
    else if (a == "--batch") batch = std::stoull(v);
    else if (a == "--writers") writers = std::stoi(v);
    else if (a == "--vertices") vertices = std::stoull(v);
    else if (a == "--dir") dir = v;
    else {
      std::fprintf(stderr, "usage: strata-bench feed [--edges N] [--batch B] [--writers W] "
                           "[--vertices V] [--dir DIR] [--in-memory]\n");
      return 2;
    }
  }
  FeedRun base = RunOnce(dir, in_memory, false, edges, batch, writers, vertices);
  FeedRun feed = RunOnce(dir, in_memory, true, edges, batch, writers, vertices);
  const double base_rate = edges / base.ingest_s, feed_rate = edges / feed.ingest_s;
  std::printf("feed bench: %llu edges, batch %llu, %d writer(s), %s store\n",
              static_cast<unsigned long long>(edges), static_cast<unsigned long long>(batch),
              writers, in_memory ? "in-memory" : "disk (WAL group)");
  std::printf("  ingest without subscriber: %.3f M edges/s (%.2f s)\n", base_rate / 1e6, base.ingest_s);
  std::printf("  ingest with no-op subscriber: %.3f M edges/s (%.2f s) = %.0f%% of the above\n",
              feed_rate / 1e6, feed.ingest_s, 100.0 * feed_rate / base_rate);
  std::printf("  delivered: %llu changes in %.2f s = %.3f M changes/s\n",
              static_cast<unsigned long long>(feed.records), feed.deliver_s,
              feed.records / feed.deliver_s / 1e6);
  FeedRun drain = RunOnce(dir, in_memory, true, edges, batch, writers, vertices, /*hold=*/true);
  std::printf("  drain (handler held during the ingest, then released): %llu changes in %.3f s = "
              "%.2f M changes/s\n",
              static_cast<unsigned long long>(drain.records), drain.drain_s,
              drain.records / drain.drain_s / 1e6);
  return feed.records == edges && drain.records == edges ? 0 : 1;
}

}  // namespace strata::bench
