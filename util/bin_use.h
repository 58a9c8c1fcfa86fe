// BinUse: one small size class (bin) of a jemalloc arena as counted by
// jemalloc_stats::AddBin — plain data, with no jemalloc include, so that code built without
// jemalloc (sanitizer builds) can hold it.
#pragma once

#include <cstddef>

namespace strata::jemalloc_stats {

// A class's region size, its slabs, the regions in use and the slabs with a free region
// (counts summed over the arenas added).
struct BinUse {
  size_t region_bytes = 0;
  size_t slab_bytes = 0;
  size_t slabs = 0;
  size_t regions = 0;
  size_t nonfull_slabs = 0;
  // The bytes of the slabs no region in use holds: room in partly used slabs plus each slab's
  // tail that no region fits.
  size_t UnusedBytes() const { return slabs * slab_bytes - regions * region_bytes; }
};

}  // namespace strata::jemalloc_stats
