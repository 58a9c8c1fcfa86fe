#include "examples/road_network.h"

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <utility>

#include "strata/analytics.h"
#include "strata/view.h"

namespace strata::examples {

Status BuildGridRoads(DB* db, uint32_t rows, uint32_t cols, uint64_t seed,
                      std::vector<Segment>* segments) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> time(1.0, 10.0);
  segments->clear();
  WriteBatch b;
  auto id = [&](uint32_t r, uint32_t c) { return static_cast<VertexId>(r) * cols + c; };
  auto add = [&](VertexId u, VertexId v) {
    double t = time(rng);
    if (rng() % 8 == 0) t /= 4;  // express road
    b.InsertEdge(u, v, t);
    segments->push_back({std::min(u, v), std::max(u, v)});
  };
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      b.AddVertex(id(r, c));
      if (c + 1 < cols) add(id(r, c), id(r, c + 1));
      if (r + 1 < rows) add(id(r, c), id(r + 1, c));
    }
    if (b.Count() >= 100000) {
      Status s = db->Write(b);
      if (!s.ok()) return s;
      b.Clear();
    }
  }
  return db->Write(b);
}

Status RouteMonitor::Start() {
  ViewDefinition d;
  d.edge_mode = ViewDefinition::EdgeMode::kExclude;  // no segment closed yet
  Status s = db_->CreateView(view_, d, /*replace=*/true);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> g(mu_);
    times_.assign(routes_.size(), analytics::kInfinity);
  }
  std::vector<RouteChange> ignored;
  return Reevaluate(&ignored);
}

Status RouteMonitor::CloseSegments(const std::vector<Segment>& segments,
                                   std::vector<RouteChange>* changes) {
  closed_.insert(closed_.end(), segments.begin(), segments.end());
  ViewDefinition d;
  d.edge_mode = ViewDefinition::EdgeMode::kExclude;
  d.edges = closed_;
  // One commit: snapshots from now on see every closure so far.
  Status s = db_->CreateView(view_, d, /*replace=*/true);
  if (!s.ok()) return s;
  return Reevaluate(changes);
}

Status RouteMonitor::Reevaluate(std::vector<RouteChange>* changes) {
  std::lock_guard<std::mutex> g(mu_);
  changes->clear();
  std::unique_ptr<Snapshot> snap;
  Status s = db_->GetViewSnapshot(view_, &snap);
  if (!s.ok()) return s;
  std::map<VertexId, std::vector<size_t>> by_source;
  for (size_t i = 0; i < routes_.size(); ++i) by_source[routes_[i].from].push_back(i);
  std::vector<double> now(routes_.size(), analytics::kInfinity);
  for (const auto& [src, idx] : by_source) {
    analytics::SsspParams p;
    p.source = src;
    std::vector<double> dist;
    s = analytics::Sssp(*snap, p, &dist);
    if (!s.ok()) return s;
    for (size_t i : idx) {
      const VertexId to = routes_[i].to;
      now[i] = to < dist.size() ? dist[to] : analytics::kInfinity;
    }
  }
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (now[i] != times_[i]) changes->push_back({i, times_[i], now[i]});
  }
  times_ = std::move(now);
  return Status::OK();
}

Status RouteMonitor::Follow() {
  SubscribeOptions so;  // live, in memory: a monitor restarts from the current times
  return db_->Subscribe(
      so, [this](const ChangeRecord* records, size_t n) { OnBatch(records, n); }, &sub_);
}

void RouteMonitor::OnBatch(const ChangeRecord* records, size_t n) {
  // One call holds whole batches; report per batch so each report names its commit.
  size_t i = 0;
  while (i < n) {
    const Timestamp ts = records[i].ts;
    // A vertex delete removes its segments too. View changes (closures included) are left to
    // CloseSegments, which evaluates its own commit and returns the changes to its caller.
    bool edges = false;
    for (; i < n && records[i].ts == ts; ++i) {
      edges |= records[i].kind != ChangeKind::kAddVertex && !IsViewChange(records[i].kind);
    }
    if (!edges) continue;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!status_.ok()) return;
    }
    std::vector<RouteChange> changes;
    Status s = Reevaluate(&changes);
    std::lock_guard<std::mutex> g(mu_);
    if (!s.ok()) {
      status_ = s;
      return;
    }
    for (const RouteChange& c : changes) reports_.push_back({ts, c});
  }
}

Status RouteMonitor::WaitFollowed(Timestamp ts, int timeout_ms) {
  if (!sub_) return Status::InvalidArgument("the monitor does not follow the feed (Follow)");
  return sub_->WaitDelivered(ts, timeout_ms);
}

std::vector<std::pair<Timestamp, RouteChange>> RouteMonitor::TakeReports() {
  std::lock_guard<std::mutex> g(mu_);
  return std::exchange(reports_, {});
}

Status RouteMonitor::status() const {
  std::lock_guard<std::mutex> g(mu_);
  return status_;
}

std::vector<double> RouteMonitor::times() const {
  std::lock_guard<std::mutex> g(mu_);
  return times_;
}

}  // namespace strata::examples
