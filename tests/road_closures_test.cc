// The road-closure case study (examples/road_network.*) on a small grid: after every closure
// batch, the routes the monitor reports as changed are exactly those whose shortest travel
// time, recomputed here by Dijkstra on the grid minus the closed segments, changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <set>

#include "examples/road_network.h"
#include "strata/analytics.h"

namespace strata {
namespace {

using examples::Segment;

// Shortest times from `src` over `roads` without `closed` (a plain Dijkstra).
std::vector<double> Dijkstra(VertexId n, const std::map<Segment, double>& roads,
                             const std::set<Segment>& closed, VertexId src) {
  std::vector<std::vector<std::pair<VertexId, double>>> adj(n);
  for (const auto& [s, w] : roads) {
    if (closed.count(s)) continue;
    adj[s.first].push_back({s.second, w});
    adj[s.second].push_back({s.first, w});
  }
  std::vector<double> dist(n, std::numeric_limits<double>::infinity());
  using Item = std::pair<double, VertexId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q;
  dist[src] = 0;
  q.push({0, src});
  while (!q.empty()) {
    auto [d, u] = q.top();
    q.pop();
    if (d > dist[u]) continue;
    for (auto [v, w] : adj[u]) {
      if (dist[u] + w < dist[v]) {
        dist[v] = dist[u] + w;
        q.push({dist[v], v});
      }
    }
  }
  return dist;
}

TEST(RoadClosures, ReportedRouteChangesMatchRecomputation) {
  const uint32_t rows = 12, cols = 12;
  const VertexId n = rows * cols;
  Options o;
  o.in_memory = true;
  o.graph_kind = GraphKind::kUndirected;
  o.weighted = true;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, "roads", &db).ok());
  std::vector<Segment> segments;
  ASSERT_TRUE(examples::BuildGridRoads(db.get(), rows, cols, 3, &segments).ok());
  ASSERT_EQ(segments.size(), 2u * rows * cols - rows - cols);
  // The weights as stored.
  std::map<Segment, double> roads;
  std::unique_ptr<Snapshot> snap = db->GetSnapshot();
  for (const Segment& s : segments) {
    double w;
    ASSERT_TRUE(snap->GetEdge(s.first, s.second, &w).ok());
    roads[s] = w;
  }
  std::mt19937_64 rng(17);
  std::vector<examples::Route> routes;
  for (int i = 0; i < 12; ++i) routes.push_back({rng() % n, rng() % n});
  routes.push_back({0, n - 1});
  examples::RouteMonitor monitor(db.get(), "incident", routes);
  ASSERT_TRUE(monitor.Start().ok());
  std::unique_ptr<Snapshot> open_roads = db->GetSnapshot();  // the view with nothing closed
  std::set<Segment> closed;
  auto expected_times = [&] {
    std::vector<double> t;
    for (const auto& r : routes) t.push_back(Dijkstra(n, roads, closed, r.from)[r.to]);
    return t;
  };
  std::vector<double> before = expected_times();
  EXPECT_EQ(monitor.times(), before);
  std::shuffle(segments.begin(), segments.end(), rng);
  size_t next = 0, total_changes = 0;
  for (int batch = 0; batch < 10; ++batch) {
    std::vector<Segment> close(segments.begin() + next, segments.begin() + next + 12);
    next += 12;
    closed.insert(close.begin(), close.end());
    std::vector<examples::RouteChange> changes;
    ASSERT_TRUE(monitor.CloseSegments(close, &changes).ok());
    const std::vector<double> after = expected_times();
    std::vector<examples::RouteChange> want;
    for (size_t i = 0; i < routes.size(); ++i) {
      if (after[i] != before[i]) want.push_back({i, before[i], after[i]});
    }
    ASSERT_EQ(changes.size(), want.size()) << "batch " << batch;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(changes[i].route, want[i].route);
      EXPECT_EQ(changes[i].before, want[i].before);
      EXPECT_EQ(changes[i].after, want[i].after);
    }
    total_changes += changes.size();
    before = after;
  }
  EXPECT_GT(total_changes, 0u);  // the instance exercises the reporting
  // A snapshot taken before the closures still routes over the whole grid.
  std::unique_ptr<Snapshot> view;
  EXPECT_TRUE(db->OpenView(*snap, "incident", &view).IsNotFound());  // before the view
  ASSERT_TRUE(db->OpenView(*open_roads, "incident", &view).ok());
  EXPECT_EQ(view->NumEdges(), 2 * segments.size());
  std::unique_ptr<Snapshot> now;
  ASSERT_TRUE(db->GetViewSnapshot("incident", &now).ok());
  EXPECT_EQ(now->NumEdges(), 2 * (segments.size() - closed.size()));

  // Traffic through the change feed: each round slows a few open segments in one batch; the
  // feed's handler re-evaluates, and its reports, tagged with the batch's commit, are exactly
  // the routes whose recomputed time changed.
  ASSERT_TRUE(monitor.Follow().ok());
  std::vector<Segment> open_segments(segments.begin() + next, segments.end());
  size_t feed_changes = 0;
  for (int round = 0; round < 8; ++round) {
    WriteBatch b;
    for (int k = 0; k < 6; ++k) {
      const Segment& s = open_segments[rng() % open_segments.size()];
      roads[s] *= 3;  // congestion: three times the travel time
      b.InsertEdge(s.first, s.second, roads[s]);
    }
    ASSERT_TRUE(db->Write(b).ok());
    const Timestamp ts = db->GetSnapshot()->timestamp();
    ASSERT_TRUE(monitor.WaitFollowed(ts, 30000).ok());
    ASSERT_TRUE(monitor.status().ok()) << monitor.status().ToString();
    const std::vector<double> after = expected_times();
    std::vector<std::pair<Timestamp, examples::RouteChange>> got = monitor.TakeReports();
    std::vector<examples::RouteChange> want;
    for (size_t i = 0; i < routes.size(); ++i) {
      if (after[i] != before[i]) want.push_back({i, before[i], after[i]});
    }
    ASSERT_EQ(got.size(), want.size()) << "round " << round;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].first, ts) << "round " << round;
      EXPECT_EQ(got[i].second.route, want[i].route);
      EXPECT_EQ(got[i].second.before, want[i].before);
      EXPECT_EQ(got[i].second.after, want[i].after);
    }
    feed_changes += got.size();
    before = after;
  }
  EXPECT_GT(feed_changes, 0u);
  EXPECT_EQ(monitor.times(), before);
}

}  // namespace
}  // namespace strata
