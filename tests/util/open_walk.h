// A chain walk (mvcc::WalkRegistry::Walk) held open on a thread of its own until Release: what
// a reader preempted inside MemGraph::VersionAt looks like to a writer's grace period.
#pragma once

#include <future>
#include <thread>

#include "mvcc/walk_registry.h"

namespace strata::testing {

class OpenWalk {
 public:
  OpenWalk()
      : t_([this] {
          mvcc::WalkRegistry::Walk walk;
          entered_.set_value();
          release_.get_future().wait();
        }) {
    entered_.get_future().wait();
  }
  ~OpenWalk() { Release(); }
  OpenWalk(const OpenWalk&) = delete;
  OpenWalk& operator=(const OpenWalk&) = delete;
  void Release() {
    if (t_.joinable()) {
      release_.set_value();
      t_.join();
    }
  }

 private:
  std::promise<void> entered_, release_;
  std::thread t_;  // last: starts once the promises exist
};

}  // namespace strata::testing
