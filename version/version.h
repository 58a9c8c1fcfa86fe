// Version: the set of tiers a reader sees, pinned by reference count (brief §5, "version
// chain"). Immutable once installed; the DB swaps in a new Version when a memgraph is sealed
// or a flush completes. A snapshot holds a shared_ptr to the Version it started with, so
// memgraphs (and, with the disk tier, segment files) it uses are freed only after it ends.
#pragma once

#include <memory>
#include <vector>

#include "memgraph/memgraph.h"

namespace strata::version {

struct Version {
  // Newest first: tiers[0] is the active memgraph, then sealed ones waiting for flush.
  std::vector<std::shared_ptr<mem::MemGraph>> memgraphs;
};

}  // namespace strata::version
