// The road-closure case study (docs/views.md): a grid road network in a store, an "incident"
// view that closes road segments, and a monitor that reports which monitored routes change as
// closures stream in. Uses the public API only (include/strata/).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "strata/change_feed.h"
#include "strata/db.h"

namespace strata::examples {

using Segment = std::pair<VertexId, VertexId>;  // a road segment (undirected), u < v

// A rows x cols grid of intersections, vertex r * cols + c, each linked to its right and lower
// neighbor by a segment with a travel time in [1, 10) drawn from `seed`; about one segment in
// eight is an express road (time / 4). `db` must be a weighted undirected store. *segments
// gets every segment written.
Status BuildGridRoads(DB* db, uint32_t rows, uint32_t cols, uint64_t seed,
                      std::vector<Segment>* segments);

struct Route {
  VertexId from = 0;
  VertexId to = 0;
};

struct RouteChange {
  size_t route = 0;  // index into the monitor's routes
  double before = 0;  // shortest travel time (infinity: unreachable)
  double after = 0;
};

// Keeps the shortest travel time of each monitored route on view `view` of `db` (an exclude
// list of closed segments) and reports the routes whose time changes.
//
// The handler is Reevaluate. Two streams call it: closures are view changes, which
// CloseSegments commits and re-evaluates at once, so that it returns their changes (the feed
// carries them too, as kViewDefined records, which Follow's handler skips); travel-time
// updates and new or removed segments are graph changes, which Follow's change-feed handler
// re-evaluates batch by batch on the feed's own thread.
class RouteMonitor {
 public:
  RouteMonitor(DB* db, std::string view, std::vector<Route> routes)
      : db_(db), view_(std::move(view)), routes_(std::move(routes)) {}

  // Creates the view (no segment closed) and computes every route's time.
  Status Start();
  // Closes `segments` in one view change (the view is redefined with every closure so far)
  // and reports the routes whose time changed, in route order.
  Status CloseSegments(const std::vector<Segment>& segments, std::vector<RouteChange>* changes);
  // Recomputes every route on the view as of now (one SSSP per distinct source) and reports
  // the changes since the last evaluation. Thread-safe.
  Status Reevaluate(std::vector<RouteChange>* changes);

  // Subscribes to the store's change feed from now on: after each delivered batch that
  // changes an edge, Reevaluate runs on the feed's handler thread and its changes are queued
  // for TakeReports with the batch's commit timestamp. A failed evaluation ends reporting
  // (status()).
  Status Follow();
  // Waits until the feed has handled every commit up to `ts`.
  Status WaitFollowed(Timestamp ts, int timeout_ms);
  // The reports queued since the last call, in commit order.
  std::vector<std::pair<Timestamp, RouteChange>> TakeReports();
  Status status() const;

  const std::vector<Route>& routes() const { return routes_; }
  std::vector<double> times() const;
  const std::vector<Segment>& closed() const { return closed_; }

 private:
  void OnBatch(const ChangeRecord* records, size_t n);

  DB* db_;
  std::string view_;
  std::vector<Route> routes_;
  std::vector<Segment> closed_;
  mutable std::mutex mu_;  // times_, reports_, status_; held across an evaluation
  std::vector<double> times_;
  std::vector<std::pair<Timestamp, RouteChange>> reports_;
  Status status_;
  // Last: destroyed first, so no handler runs on a half-destroyed monitor.
  std::unique_ptr<Subscription> sub_;
};

}  // namespace strata::examples
