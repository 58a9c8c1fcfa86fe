// StrataGraph behind the adapter: the whole store on disk ("strata") or the in-memory tier alone
// ("strata-mem"). Reads go through a Snapshot; analytics are the kernels of analytics/.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "bench/adapter.h"
#include "bench/digest.h"
#include "bench/util.h"
#include "strata/analytics.h"
#include "strata/db.h"

namespace strata::bench {

namespace {

class StrataView : public View {
 public:
  StrataView(std::unique_ptr<Snapshot> snap, std::optional<size_t> pr_cache_bytes,
             std::optional<analytics::ListPacking> pr_packing, std::optional<bool> pr_group_by_degree)
      : snap_(std::move(snap)),
        pr_cache_bytes_(pr_cache_bytes),
        pr_packing_(pr_packing),
        pr_group_by_degree_(pr_group_by_degree) {}

  bool SearchEdge(VertexId u, VertexId v) override {
    double w;
    Status s = snap_->GetEdge(u, v, &w);
    if (s.ok()) return true;
    if (!s.IsNotFound() && status_.ok()) status_ = s;
    return false;
  }

  uint64_t ScanNeighbors(VertexId u) override {
    uint64_t n = 0, sum = 0;
    Status s = snap_->ScanNeighbors(u, [&](const NeighborChunk& c) {
      n += c.size;
      for (size_t i = 0; i < c.size; ++i) sum += c.dst[i];
      return true;
    });
    if (!s.ok() && status_.ok()) status_ = s;
    sink_ += sum;
    return n;
  }

  Status Bfs(VertexId source, Digest* d) override {
    analytics::BfsParams p;
    p.source = source;
    std::vector<int64_t> depth;
    const double t0 = NowSec();
    Status s = analytics::Bfs(*snap_, p, &depth);
    d->seconds = NowSec() - t0;
    if (s.ok()) d->text = BfsDigest<int64_t>(depth.data(), depth.size(), analytics::kUnreachable);
    return s;
  }

  Status PageRank(int iterations, Digest* d) override { return RunPageRank(iterations, false, d); }
  Status PageRankLast(int iterations, Digest* d) override { return RunPageRank(iterations, true, d); }

  Status Sssp(VertexId source, Digest* d) override {
    analytics::SsspParams p;
    p.source = source;
    std::vector<double> dist;
    const double t0 = NowSec();
    Status s = analytics::Sssp(*snap_, p, &dist);
    d->seconds = NowSec() - t0;
    if (s.ok()) d->text = SsspDigest(dist.data(), dist.size());
    return s;
  }

  Status Wcc(Digest* d) override {
    analytics::WccParams p;
    std::vector<VertexId> label;
    const double t0 = NowSec();
    Status s = analytics::Wcc(*snap_, p, &label);
    d->seconds = NowSec() - t0;
    if (s.ok()) d->text = WccDigest<VertexId>(label.data(), label.size(), analytics::kNoLabel);
    return s;
  }

  Status Tc(Digest* d) override {
    uint64_t t = 0;
    const double t0 = NowSec();
    Status s = analytics::TriangleCount(*snap_, &t);
    d->seconds = NowSec() - t0;
    if (s.ok()) d->text = TcDigest(t);
    return s;
  }

  Status status() const override { return status_; }

 private:
  // last: the view's snapshot goes to the kernel (PageRankLast).
  Status RunPageRank(int iterations, bool last, Digest* d) {
    if (snap_ == nullptr) return Status::InvalidArgument("bench: the view's snapshot was released");
    analytics::PageRankParams p;
    p.iterations = iterations;
    if (pr_cache_bytes_) p.cache_bytes = *pr_cache_bytes_;
    if (pr_packing_) p.packing = *pr_packing_;
    if (pr_group_by_degree_) p.group_by_degree = *pr_group_by_degree_;
    analytics::PageRankStats stats;
    p.stats = &stats;
    std::vector<double> rank;
    const double t0 = NowSec();
    Status s = last ? analytics::PageRank(std::move(snap_), p, &rank)
                    : analytics::PageRank(*snap_, p, &rank);
    d->seconds = NowSec() - t0;
    d->snapshot_released = last && stats.snapshot_released ? 1 : 0;
    d->list_cache_budget = static_cast<int64_t>(stats.cache_budget);
    d->list_cache_bytes = static_cast<int64_t>(stats.cache_bytes);
    d->list_cache_packed_blocks = static_cast<int64_t>(stats.packed_blocks);
    d->list_cache_streamed_blocks = static_cast<int64_t>(stats.streamed_blocks);
    d->prepare_seconds = stats.prepare_seconds;
    d->iterate_seconds = stats.iterate_seconds;
    if (stats.grouped) d->group_seconds = stats.group_seconds;
    if (s.ok()) d->text = PageRankDigest(rank.data(), rank.size());
    return s;
  }

  std::unique_ptr<Snapshot> snap_;
  std::optional<size_t> pr_cache_bytes_;  // unset: the kernel's default
  std::optional<analytics::ListPacking> pr_packing_;  // unset: the kernel's default
  std::optional<bool> pr_group_by_degree_;            // unset: the kernel's default
  Status status_;
  uint64_t sink_ = 0;
};

class StrataSystem : public System {
 public:
  explicit StrataSystem(bool in_memory) : in_memory_(in_memory) {}
  std::string name() const override { return in_memory_ ? "strata-mem" : "strata"; }

  Status Open(const SystemConfig& c) override {
    config_ = c;
    Options o;
    o.graph_kind = GraphKind::kUndirected;
    o.weighted = c.weighted;
    o.in_memory = in_memory_;
    o.memory_budget = c.memory_budget;
    o.memgraph_bytes = c.memgraph_bytes;
    o.wal = c.wal ? WalMode::kGroup : WalMode::kOff;
    switch (c.wal_setting) {
      case WalSetting::kDefault: break;
      case WalSetting::kOff: o.wal = WalMode::kOff; break;
      case WalSetting::kGroup: o.wal = WalMode::kGroup; break;
      case WalSetting::kSync: o.wal = WalMode::kSync; break;
      case WalSetting::kBuffered:
        return Status::NotSupported("strata has no buffered (unsynced) WAL mode");
    }
    if (!in_memory_ && !c.reopen) {
      RemoveTree(c.dir);
      MakeDirs(c.dir);
    }
    return DB::Open(o, in_memory_ ? std::string("strata-mem") : c.dir, &db_);
  }

  Status Apply(const EdgeOp* ops, size_t n) override {
    thread_local WriteBatch b;
    b.Clear();
    for (size_t i = 0; i < n; ++i) {
      if (ops[i].del) {
        b.DeleteEdge(ops[i].u, ops[i].v);
      } else {
        b.InsertEdge(ops[i].u, ops[i].v, ops[i].w);
      }
    }
    return db_->Write(b);
  }

  // Flush, then let background work settle (WaitIdle: flushes, compactions due by score, and
  // the idle merge of level 0), as the RocksDB adapter waits for its compactions.
  Status Persist() override {
    Status s = db_->Flush();
    return s.ok() ? db_->WaitIdle() : s;
  }

  Status CompactFull() override { return db_->CompactAll(); }

  std::unique_ptr<View> NewView() override {
    return std::make_unique<StrataView>(db_->GetSnapshot(), config_.pr_cache_bytes,
                                        config_.pr_packing, config_.pr_group_by_degree);
  }

  SystemStats Stats() override {
    DBStats st = db_->GetStats();
    if (!st.count_status.ok()) {  // the counts below would be short: a report must not use them
      std::fprintf(stderr, "[%s] FAILED: counting the graph: %s\n", name().c_str(),
                   st.count_status.ToString().c_str());
      std::fflush(stderr);
      std::_Exit(3);
    }
    SystemStats s;
    s.stored_edges = st.num_edges;
    s.memory_bytes = st.memgraph_bytes;
    s.listed_bytes = st.memgraph_listed_bytes;
    s.disk_bytes = in_memory_ ? 0 : DirBytes(config_.dir);
    s.data_bytes = st.disk_bytes;  // segment files
    s.write_bytes = st.flush_bytes + st.compaction_bytes;
    s.stall_micros = st.stall_micros;
    s.note = st.ToString();
    return s;
  }

  Status Close() override {
    if (!db_) return Status::OK();
    Status s = db_->Close();
    db_.reset();
    return s;
  }

 private:
  bool in_memory_;
  SystemConfig config_;
  std::unique_ptr<DB> db_;
};

}  // namespace

std::unique_ptr<System> NewStrataSystem(bool in_memory) {
  return std::make_unique<StrataSystem>(in_memory);
}

const char* WalSettingName(WalSetting w) {
  switch (w) {
    case WalSetting::kDefault: return "default";
    case WalSetting::kOff: return "off";
    case WalSetting::kGroup: return "group";
    case WalSetting::kSync: return "sync";
    case WalSetting::kBuffered: return "buffered";
  }
  return "?";
}

std::unique_ptr<System> System::Create(const std::string& name) {
  if (name == "strata") return NewStrataSystem(false);
  if (name == "strata-mem") return NewStrataSystem(true);
  if (name == "rocksdb") return NewRocksDbSystem();
  if (name == "csr") return NewCsrSystem();
  return nullptr;
}

}  // namespace strata::bench
