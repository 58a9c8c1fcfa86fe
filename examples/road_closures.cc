// strata-road-closures: the road-closure case study (docs/views.md).
//
//   strata-road-closures [ROWS COLS BATCHES PER_BATCH SEED]   (defaults 300 300 5 40 1)
//
// Builds a grid road network in an in-memory store, runs BFS and SSSP on the whole graph and
// on the "incident" view, then streams closures in batches and prints, after each, the
// monitored routes whose shortest travel time changed.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "examples/road_network.h"
#include "strata/analytics.h"

using namespace strata;

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int Check(const Status& s, const char* what) {
  if (s.ok()) return 0;
  std::fprintf(stderr, "strata-road-closures: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t rows = argc > 1 ? std::atoi(argv[1]) : 300;
  const uint32_t cols = argc > 2 ? std::atoi(argv[2]) : 300;
  const int batches = argc > 3 ? std::atoi(argv[3]) : 5;
  const int per_batch = argc > 4 ? std::atoi(argv[4]) : 40;
  const uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1;
  if (rows < 2 || cols < 2 || batches < 0 || per_batch < 0) {
    std::fprintf(stderr, "usage: strata-road-closures [ROWS COLS BATCHES PER_BATCH SEED]\n");
    return 2;
  }
  Options o;
  o.in_memory = true;
  o.graph_kind = GraphKind::kUndirected;
  o.weighted = true;
  std::unique_ptr<DB> db;
  Check(DB::Open(o, "roads", &db), "open");
  std::vector<examples::Segment> segments;
  auto t0 = std::chrono::steady_clock::now();
  Check(examples::BuildGridRoads(db.get(), rows, cols, seed, &segments), "build");
  std::printf("grid %ux%u: %zu segments, built in %.3f s\n", rows, cols, segments.size(),
              Seconds(t0));

  // Monitored routes: corner to corner, edge midpoints, a few random pairs.
  const VertexId n = static_cast<VertexId>(rows) * cols;
  auto id = [&](uint32_t r, uint32_t c) { return static_cast<VertexId>(r) * cols + c; };
  std::vector<examples::Route> routes = {{id(0, 0), id(rows - 1, cols - 1)},
                                         {id(0, cols - 1), id(rows - 1, 0)},
                                         {id(rows / 2, 0), id(rows / 2, cols - 1)},
                                         {id(0, cols / 2), id(rows - 1, cols / 2)}};
  std::mt19937_64 rng(seed + 1);
  for (int i = 0; i < 4; ++i) routes.push_back({rng() % n, rng() % n});
  examples::RouteMonitor monitor(db.get(), "incident", routes);
  Check(monitor.Start(), "start");

  // Closures: segments near the grid's center (an incident area), in batches.
  std::vector<examples::Segment> pool;
  for (const auto& s : segments) {
    const uint32_t r = s.first / cols, c = s.first % cols;
    if (r + r >= rows / 2 && r + r <= 3 * rows / 2 && c + c >= cols / 2 && c + c <= 3 * cols / 2) {
      pool.push_back(s);
    }
  }
  std::shuffle(pool.begin(), pool.end(), rng);
  for (int b = 0; b < batches; ++b) {
    std::vector<examples::Segment> batch;
    for (int i = 0; i < per_batch && !pool.empty(); ++i) {
      batch.push_back(pool.back());
      pool.pop_back();
    }
    std::vector<examples::RouteChange> changes;
    t0 = std::chrono::steady_clock::now();
    Check(monitor.CloseSegments(batch, &changes), "close");
    std::printf("batch %d: %zu segments closed (%zu in all), %zu routes changed, %.3f s\n", b + 1,
                batch.size(), monitor.closed().size(), changes.size(), Seconds(t0));
    for (const auto& c : changes) {
      const auto& r = monitor.routes()[c.route];
      std::printf("  route %zu (%" PRIu64 " -> %" PRIu64 "): %.3f -> %.3f\n", c.route, r.from,
                  r.to, c.before, c.after);
    }
  }

  // Whole graph against the view, same source.
  std::unique_ptr<Snapshot> base = db->GetSnapshot();
  std::unique_ptr<Snapshot> view;
  Check(db->OpenView(*base, "incident", &view), "view");
  const VertexId src = id(0, 0);
  for (const Snapshot* s : {base.get(), view.get()}) {
    const char* what = s == base.get() ? "whole graph" : "incident view";
    analytics::BfsParams bp;
    bp.source = src;
    std::vector<int64_t> depth;
    t0 = std::chrono::steady_clock::now();
    Check(analytics::Bfs(*s, bp, &depth), "bfs");
    const double bfs_s = Seconds(t0);
    analytics::SsspParams sp;
    sp.source = src;
    std::vector<double> dist;
    t0 = std::chrono::steady_clock::now();
    Check(analytics::Sssp(*s, sp, &dist), "sssp");
    const double sssp_s = Seconds(t0);
    int64_t max_depth = 0;
    for (int64_t d : depth) {
      if (d != analytics::kUnreachable) max_depth = std::max(max_depth, d);
    }
    std::printf("%s: %" PRIu64 " edges; bfs depth %" PRId64 " (%.3f s); sssp to far corner %.3f "
                "(%.3f s)\n",
                what, s->NumEdges() / 2, max_depth, bfs_s, dist[id(rows - 1, cols - 1)], sssp_s);
  }
  return 0;
}
