// jemalloc's statistics of one arena, read through mallctl: for the builds that link jemalloc
// (the memgraph arenas, the kernels' arena, the bench's heap breakdown). Include it only
// where STRATA_NO_JEMALLOC is not defined. Each figure is as of the last Refresh(), a
// process-wide step: for statistics, never for a write or read path.
#pragma once

#include <jemalloc/jemalloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "util/bin_use.h"

namespace strata::jemalloc_stats {

// Makes jemalloc take a new snapshot of its statistics (they are cached until then).
inline void Refresh() {
  uint64_t epoch = 1;
  size_t sz = sizeof(epoch);
  mallctl("epoch", &epoch, &sz, &epoch, sz);
}

// jemalloc's page size; 0 if it does not say.
inline size_t PageBytes() {
  static const size_t page = [] {
    size_t p = 0;
    size_t sz = sizeof(p);
    return mallctl("arenas.page", &p, &sz, nullptr, 0) == 0 ? p : size_t{0};
  }();
  return page;
}

// The size_t statistic stats.arenas.<arena>.<field>; false (and *out untouched) if jemalloc
// has none, e.g. for a destroyed arena.
inline bool ArenaStat(unsigned arena, const char* field, size_t* out) {
  char name[96];
  snprintf(name, sizeof(name), "stats.arenas.%u.%s", arena, field);
  size_t sz = sizeof(*out);
  return mallctl(name, out, &sz, nullptr, 0) == 0;
}
inline size_t ArenaStat(unsigned arena, const char* field) {
  size_t v = 0;
  return ArenaStat(arena, field, &v) ? v : 0;
}

// What one arena holds, in bytes: its resident pages, what it has handed out (small and large
// allocations at their class sizes), its pages in use (whole slabs and extents however full)
// and the freed pages it keeps (not yet purged).
struct ArenaMemory {
  size_t resident = 0;
  size_t allocated = 0;
  size_t active = 0;
  size_t dirty = 0;
};
// false (all 0) if jemalloc has no such arena.
inline bool ReadArena(unsigned arena, ArenaMemory* m) {
  *m = ArenaMemory();
  if (!ArenaStat(arena, "resident", &m->resident)) return false;
  m->allocated = ArenaStat(arena, "small.allocated") + ArenaStat(arena, "large.allocated");
  m->active = ArenaStat(arena, "pactive") * PageBytes();
  m->dirty = ArenaStat(arena, "pdirty") * PageBytes();
  return true;
}

// The number of small size classes; 0 if jemalloc does not say.
inline unsigned BinCount() {
  unsigned n = 0;
  size_t sz = sizeof(n);
  return mallctl("arenas.nbins", &n, &sz, nullptr, 0) == 0 ? n : 0u;
}

// Bin `bin` of `arena` added into *b (region and slab sizes set, counts summed: call it once per
// arena to total several); false if jemalloc has no such arena or bin.
inline bool AddBin(unsigned arena, unsigned bin, BinUse* b) {
  char name[96];
  size_t region = 0, slab = 0;
  size_t sz = sizeof(size_t);
  snprintf(name, sizeof(name), "arenas.bin.%u.size", bin);
  if (mallctl(name, &region, &sz, nullptr, 0) != 0) return false;
  sz = sizeof(size_t);
  snprintf(name, sizeof(name), "arenas.bin.%u.slab_size", bin);
  if (mallctl(name, &slab, &sz, nullptr, 0) != 0) return false;
  char field[64];
  snprintf(field, sizeof(field), "bins.%u.curslabs", bin);
  size_t slabs = 0;
  if (!ArenaStat(arena, field, &slabs)) return false;
  snprintf(field, sizeof(field), "bins.%u.curregs", bin);
  const size_t regions = ArenaStat(arena, field);
  snprintf(field, sizeof(field), "bins.%u.nonfull_slabs", bin);
  const size_t nonfull = ArenaStat(arena, field);
  b->region_bytes = region;
  b->slab_bytes = slab;
  b->slabs += slabs;
  b->regions += regions;
  b->nonfull_slabs += nonfull;
  return true;
}

}  // namespace strata::jemalloc_stats
