// RocksDB behind the adapter, the baseline (docs/design.md, "Benchmark methodology"):
// key = big-endian (src, dst) (16 bytes, so keys sort by (src, dst)), value = the weight as a
// double (empty for unweighted graphs), default options. WAL off: WriteOptions::disableWAL;
// WAL on: sync = true (the same durability as StrataGraph's group-commit WAL, which fsyncs
// before acknowledging).
//
// Analytics over the iterator API: simple versions of the same algorithms, parallel over
// source ranges where that is natural (one iterator per thread, iterate_upper_bound per range).
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/statistics.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "bench/adapter.h"
#include "bench/digest.h"
#include "bench/util.h"

namespace strata::bench {

namespace {

inline void PutBE(char* p, uint64_t x) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(x & 0xff);
    x >>= 8;
  }
}
inline uint64_t GetBE(const char* p) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x = (x << 8) | static_cast<unsigned char>(p[i]);
  return x;
}

struct Key {
  char b[16];
  Key(uint64_t u, uint64_t v) {
    PutBE(b, u);
    PutBE(b + 8, v);
  }
  rocksdb::Slice slice() const { return rocksdb::Slice(b, 16); }
};

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound(s.ToString());
  if (s.IsCorruption()) return Status::Corruption(s.ToString());
  return Status::IOError(s.ToString());
}

// Runs fn(t) on `threads` threads (t = 0 runs on the caller).
template <typename Fn>
void Parallel(int threads, Fn&& fn) {
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t) ts.emplace_back([&, t] { fn(t); });
  fn(0);
  for (auto& t : ts) t.join();
}

class RocksSystem;

class RocksView : public View {
 public:
  RocksView(rocksdb::DB* db, uint64_t bound, bool weighted, int threads)
      : db_(db), bound_(bound), weighted_(weighted), threads_(std::max(1, threads)) {
    snap_ = db_->GetSnapshot();
    ro_.snapshot = snap_;
  }
  ~RocksView() override {
    it_.reset();
    db_->ReleaseSnapshot(snap_);
  }

  bool SearchEdge(VertexId u, VertexId v) override {
    Key k(u, v);
    rocksdb::PinnableSlice val;
    rocksdb::Status s = db_->Get(ro_, db_->DefaultColumnFamily(), k.slice(), &val);
    if (s.ok()) return true;
    if (!s.IsNotFound() && status_.ok()) status_ = FromRocks(s);
    return false;
  }

  uint64_t ScanNeighbors(VertexId u) override {
    if (!it_) it_.reset(db_->NewIterator(ro_));
    Key k(u, 0);
    uint64_t n = 0, sum = 0;
    for (it_->Seek(k.slice()); it_->Valid(); it_->Next()) {
      const char* kd = it_->key().data();
      if (GetBE(kd) != u) break;
      sum += GetBE(kd + 8);
      ++n;
    }
    if (!it_->status().ok() && status_.ok()) status_ = FromRocks(it_->status());
    sink_ += sum;
    return n;
  }

  // Calls fn(src, dst, weight) for every key with src in [lo, hi), ascending.
  template <typename Fn>
  Status ScanRange(VertexId lo, VertexId hi, Fn&& fn) {
    Key hk(hi, 0);
    rocksdb::Slice upper = hk.slice();
    rocksdb::ReadOptions ro = ro_;
    ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
    Key lk(lo, 0);
    for (it->Seek(lk.slice()); it->Valid(); it->Next()) {
      const char* kd = it->key().data();
      double w = 1.0;
      if (weighted_ && it->value().size() == 8) memcpy(&w, it->value().data(), 8);
      fn(GetBE(kd), GetBE(kd + 8), w);
    }
    return FromRocks(it->status());
  }

  // Calls fn(dst, weight) for u's neighbors through `it` (Seek).
  template <typename Fn>
  void Neighbors(rocksdb::Iterator* it, VertexId u, Fn&& fn) {
    Key k(u, 0);
    for (it->Seek(k.slice()); it->Valid(); it->Next()) {
      const char* kd = it->key().data();
      if (GetBE(kd) != u) break;
      double w = 1.0;
      if (weighted_ && it->value().size() == 8) memcpy(&w, it->value().data(), 8);
      if (!fn(GetBE(kd + 8), w)) break;
    }
  }

  VertexId RangeBegin(int t) const { return bound_ * t / threads_; }

  // Parallel scan of the whole key space, one range of sources per thread.
  template <typename Fn>
  Status ScanAll(Fn&& fn) {
    std::vector<Status> st(threads_);
    Parallel(threads_, [&](int t) {
      st[t] = ScanRange(RangeBegin(t), RangeBegin(t + 1),
                        [&](VertexId u, VertexId v, double w) { fn(t, u, v, w); });
    });
    for (const Status& s : st) {
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  Status Bfs(VertexId source, Digest* d) override {
    const double t0 = NowSec();
    std::vector<int64_t> depth(bound_, -1);
    std::vector<VertexId> frontier{source}, next;
    depth[source] = 0;
    std::vector<std::vector<VertexId>> local(threads_);
    Status err;
    for (int64_t level = 0; !frontier.empty(); ++level) {
      Parallel(threads_, [&](int t) {
        std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_));
        std::vector<VertexId>& out = local[t];
        out.clear();
        const size_t b = frontier.size() * t / threads_, e = frontier.size() * (t + 1) / threads_;
        for (size_t i = b; i < e; ++i) {
          Neighbors(it.get(), frontier[i], [&](VertexId v, double) {
            std::atomic_ref<int64_t> dv(depth[v]);
            int64_t cur = -1;
            if (dv.load(std::memory_order_relaxed) == -1 &&
                dv.compare_exchange_strong(cur, level + 1, std::memory_order_relaxed)) {
              out.push_back(v);
            }
            return true;
          });
        }
      });
      next.clear();
      for (auto& l : local) next.insert(next.end(), l.begin(), l.end());
      frontier.swap(next);
    }
    d->seconds = NowSec() - t0;
    d->text = BfsDigest<int64_t>(depth.data(), depth.size(), -1);
    return err;
  }

  Status PageRank(int iterations, Digest* d) override {
    const double t0 = NowSec();
    std::vector<uint32_t> deg(bound_, 0);
    Status s = ScanAll([&](int, VertexId u, VertexId, double) { ++deg[u]; });
    if (!s.ok()) return s;
    uint64_t nv = 0;
    for (uint32_t x : deg) nv += x != 0;
    const double n = static_cast<double>(std::max<uint64_t>(1, nv));
    const double damp = 0.85;
    // Contributions in single precision, sums in double: as every system's PageRank here.
    std::vector<double> rank(bound_, 0.0), next(bound_, 0.0);
    std::vector<float> contrib(bound_, 0.0f);
    for (VertexId v = 0; v < bound_; ++v) {
      if (deg[v]) rank[v] = 1.0 / n;
    }
    for (int it = 0; it < iterations; ++it) {
      // Every existing vertex has an edge here, so there are no sinks.
      const double base = (1.0 - damp) / n;
      for (VertexId v = 0; v < bound_; ++v) {
        contrib[v] = deg[v] ? static_cast<float>(rank[v] / deg[v]) : 0.0f;
      }
      std::vector<VertexId> cur(threads_, std::numeric_limits<VertexId>::max());
      std::vector<double> acc(threads_, 0.0);
      s = ScanAll([&](int t, VertexId v, VertexId u, double) {
        if (v != cur[t]) {
          if (cur[t] != std::numeric_limits<VertexId>::max()) next[cur[t]] = base + damp * acc[t];
          cur[t] = v;
          acc[t] = 0;
        }
        acc[t] += contrib[u];
      });
      if (!s.ok()) return s;
      for (int t = 0; t < threads_; ++t) {
        if (cur[t] != std::numeric_limits<VertexId>::max()) next[cur[t]] = base + damp * acc[t];
      }
      rank.swap(next);
    }
    d->seconds = NowSec() - t0;
    d->text = PageRankDigest(rank.data(), rank.size());
    return Status::OK();
  }

  // Dijkstra with a binary heap: one Seek per settled vertex.
  Status Sssp(VertexId source, Digest* d) override {
    const double t0 = NowSec();
    std::vector<double> dist(bound_, std::numeric_limits<double>::infinity());
    using Item = std::pair<double, VertexId>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
    dist[source] = 0;
    pq.push({0.0, source});
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_));
    while (!pq.empty()) {
      auto [du, u] = pq.top();
      pq.pop();
      if (du > dist[u]) continue;
      Neighbors(it.get(), u, [&](VertexId v, double w) {
        if (du + w < dist[v]) {
          dist[v] = du + w;
          pq.push({dist[v], v});
        }
        return true;
      });
    }
    Status s = FromRocks(it->status());
    d->seconds = NowSec() - t0;
    d->text = SsspDigest(dist.data(), dist.size());
    return s;
  }

  // One parallel scan feeding a concurrent union-find (link by CAS, smaller root wins).
  Status Wcc(Digest* d) override {
    const double t0 = NowSec();
    const uint64_t none = std::numeric_limits<uint64_t>::max();
    std::vector<uint64_t> parent(bound_, none);
    auto find = [&](uint64_t x) {
      for (;;) {
        uint64_t p = std::atomic_ref<uint64_t>(parent[x]).load(std::memory_order_relaxed);
        if (p == x || p == none) return x;
        x = p;
      }
    };
    for (VertexId v = 0; v < bound_; ++v) parent[v] = v;
    std::vector<uint8_t> seen(bound_, 0);
    Status s = ScanAll([&](int, VertexId u, VertexId v, double) {
      seen[u] = 1;
      for (;;) {
        uint64_t a = find(u), b = find(v);
        if (a == b) return;
        if (a < b) std::swap(a, b);  // link the larger root under the smaller
        uint64_t expect = a;
        if (std::atomic_ref<uint64_t>(parent[a]).compare_exchange_strong(expect, b)) return;
      }
    });
    if (!s.ok()) return s;
    std::vector<uint64_t> label(bound_, none);
    for (VertexId v = 0; v < bound_; ++v) {
      if (seen[v]) label[v] = find(v);
    }
    d->seconds = NowSec() - t0;
    d->text = WccDigest<uint64_t>(label.data(), label.size(), none);
    return Status::OK();
  }

  // For every u (ranges in parallel): A = N(u) ∩ [0, u); for every v ∈ A, B = N(v) ∩ [0, v)
  // by a Seek; count |A ∩ B| (sorted merge).
  Status Tc(Digest* d) override {
    const double t0 = NowSec();
    std::atomic<uint64_t> total{0};
    std::vector<Status> st(threads_);
    Parallel(threads_, [&](int t) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_));
      std::vector<VertexId> a, b;
      VertexId cur = std::numeric_limits<VertexId>::max();
      uint64_t count = 0;
      auto finish = [&]() {
        for (size_t j = 1; j < a.size(); ++j) {
          const VertexId v = a[j];
          b.clear();
          Neighbors(it.get(), v, [&](VertexId w, double) {
            if (w >= v) return false;
            b.push_back(w);
            return true;
          });
          size_t i = 0, k = 0;
          while (i < j && k < b.size()) {
            if (a[i] < b[k]) {
              ++i;
            } else if (b[k] < a[i]) {
              ++k;
            } else {
              ++count;
              ++i;
              ++k;
            }
          }
        }
      };
      st[t] = ScanRange(RangeBegin(t), RangeBegin(t + 1), [&](VertexId u, VertexId v, double) {
        if (u != cur) {
          finish();
          a.clear();
          cur = u;
        }
        if (v < u) a.push_back(v);
      });
      finish();
      total += count;
    });
    for (const Status& s : st) {
      if (!s.ok()) return s;
    }
    d->seconds = NowSec() - t0;
    d->text = TcDigest(total.load());
    return Status::OK();
  }

  void SetThreads(int threads) override { threads_ = std::max(1, threads); }

  Status status() const override { return status_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snap_;
  rocksdb::ReadOptions ro_;
  std::unique_ptr<rocksdb::Iterator> it_;
  uint64_t bound_;
  bool weighted_;
  int threads_;
  Status status_;
  uint64_t sink_ = 0;
};

class RocksSystem : public System {
 public:
  std::string name() const override { return "rocksdb"; }

  Status Open(const SystemConfig& c) override {
    config_ = c;
    if (!c.reopen) {
      RemoveTree(c.dir);
      MakeDirs(c.dir);
    }
    rocksdb::Options o;  // defaults, apart from what a benchmark must set
    o.create_if_missing = true;
    if (c.write_buffer_bytes != 0) o.write_buffer_size = c.write_buffer_bytes;
    stats_ = rocksdb::CreateDBStatistics();
    // Tickers only (no histograms or timers): the cheapest level that counts bytes written.
    stats_->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);
    o.statistics = stats_;
    wo_.disableWAL = !c.wal;
    wo_.sync = c.wal;
    serialize_writes_ = false;
    switch (c.wal_setting) {  // the mapping is argued in adapter.h (WalSetting)
      case WalSetting::kDefault: break;
      case WalSetting::kOff: wo_.disableWAL = true; wo_.sync = false; break;
      case WalSetting::kGroup: wo_.disableWAL = false; wo_.sync = true; break;
      case WalSetting::kSync:
        wo_.disableWAL = false;
        wo_.sync = true;
        serialize_writes_ = true;
        break;
      case WalSetting::kBuffered: wo_.disableWAL = false; wo_.sync = false; break;
    }
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, c.dir, &db);
    if (!s.ok()) return FromRocks(s);
    db_.reset(db);
    return Status::OK();
  }

  Status Apply(const EdgeOp* ops, size_t n) override {
    thread_local rocksdb::WriteBatch b;
    b.Clear();
    VertexId top = 0;
    for (size_t i = 0; i < n; ++i) {
      const EdgeOp& op = ops[i];
      top = std::max(top, std::max(op.u, op.v) + 1);
      Key k1(op.u, op.v), k2(op.v, op.u);
      if (op.del) {
        b.Delete(k1.slice());
        if (op.u != op.v) b.Delete(k2.slice());
      } else {
        rocksdb::Slice val;
        if (config_.weighted) val = rocksdb::Slice(reinterpret_cast<const char*>(&op.w), 8);
        b.Put(k1.slice(), val);
        if (op.u != op.v) b.Put(k2.slice(), val);
      }
    }
    for (VertexId cur = bound_.load(std::memory_order_relaxed);
         cur < top && !bound_.compare_exchange_weak(cur, top);) {
    }
    if (counted_.load(std::memory_order_relaxed)) counted_.store(false);
    if (serialize_writes_) {
      std::lock_guard<std::mutex> g(write_mu_);
      return FromRocks(db_->Write(wo_, &b));
    }
    return FromRocks(db_->Write(wo_, &b));
  }

  Status Persist() override {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    rocksdb::Status s = db_->Flush(fo);
    if (!s.ok()) return FromRocks(s);
    // Let background compactions settle so later reads do not compete with them.
    const double t0 = NowSec();
    while (NowSec() - t0 < 300) {
      uint64_t pending = 0, running = 0;
      db_->GetIntProperty("rocksdb.compaction-pending", &pending);
      db_->GetIntProperty("rocksdb.num-running-compactions", &running);
      if (pending == 0 && running == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::OK();
  }

  Status CompactFull() override {
    rocksdb::CompactRangeOptions co;
    co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    return FromRocks(db_->CompactRange(co, nullptr, nullptr));
  }

  std::unique_ptr<View> NewView() override {
    return std::make_unique<RocksView>(db_.get(), bound_.load(), config_.weighted, config_.threads);
  }

  SystemStats Stats() override {
    SystemStats s;
    if (!counted_) {
      // Exact count of keys (the estimate property is approximate): one scan.
      rocksdb::ReadOptions ro;
      ro.fill_cache = false;
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
      uint64_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
      keys_ = n;
      counted_ = true;
    }
    s.stored_edges = keys_;
    s.disk_bytes = DirBytes(config_.dir);
    db_->GetIntProperty("rocksdb.live-sst-files-size", &s.data_bytes);
    s.write_bytes = stats_->getTickerCount(rocksdb::FLUSH_WRITE_BYTES) +
                    stats_->getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
    s.wal_bytes = stats_->getTickerCount(rocksdb::WAL_FILE_BYTES);
    s.stall_micros = stats_->getTickerCount(rocksdb::STALL_MICROS);
    uint64_t mem = 0;
    db_->GetIntProperty("rocksdb.cur-size-all-mem-tables", &mem);
    s.memory_bytes = 0;  // not comparable: RocksDB keeps the graph on disk
    std::string levels;
    db_->GetProperty("rocksdb.levelstats", &levels);
    s.note = "memtables=" + std::to_string(mem) + "\n" + levels;
    return s;
  }

  Status Close() override {
    if (!db_) return Status::OK();
    rocksdb::Status s = db_->Close();
    db_.reset();
    return FromRocks(s);
  }

 private:
  SystemConfig config_;
  std::shared_ptr<rocksdb::Statistics> stats_;
  rocksdb::WriteOptions wo_;
  bool serialize_writes_ = false;  // WalSetting::kSync: one Write (so one fsync) at a time
  std::mutex write_mu_;
  std::unique_ptr<rocksdb::DB> db_;
  std::atomic<VertexId> bound_{0};
  std::atomic<bool> counted_{false};
  uint64_t keys_ = 0;
};

}  // namespace

std::unique_ptr<System> NewRocksDbSystem() { return std::make_unique<RocksSystem>(); }

}  // namespace strata::bench
