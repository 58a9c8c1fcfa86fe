// BinUse: one small size class (bin) of a jemalloc arena as counted by
// jemalloc_stats::AddBin — plain data, with no jemalloc include, so that code built without
// jemalloc (sanitizer builds) can hold it.
#pragma once

#include <cstddef>

namespace strata::jemalloc_stats {

// A class's region size, its slabs, the regions in use, the slabs with a free region, and the
// bytes of its slabs no region in use holds (slabs * slab_bytes - regions * region_bytes:
// room in partly used slabs plus each slab's tail that no region fits).
struct BinUse {
  size_t region_bytes = 0;
  size_t slab_bytes = 0;
  size_t slabs = 0;
  size_t regions = 0;
  size_t nonfull_slabs = 0;
  size_t unused_bytes = 0;
};

}  // namespace strata::jemalloc_stats
