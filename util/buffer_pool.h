// Large byte buffers kept between the files that use them.
//
// A segment writer fills an extent buffer per stream (1 MiB by default) and its file a write
// buffer, for every file a flush or compaction writes. The process heap returns a freed buffer
// to the OS at once (util/malloc_conf.cc), so each new file faulted its buffers in again, page
// by page: at scale 18, 39 K of an ingest's 93 K page faults (docs/benchmarks.md, "Issue 28:
// spare memgraph arenas"). Buffers handed back here are kept, up to kBufferPoolBytes of
// capacity in all, for the next TakeBuffer. Thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace strata {

inline constexpr size_t kBufferPoolBytes = size_t{8} << 20;

// Lowers the pool's bound (kBufferPoolBytes to begin with) to `bytes` if that is less, and
// frees kept buffers past it. A store opened with a memory budget bounds it by its I/O reserve
// (db/memory_plan.h): the kept buffers are that reserve's buffers between files. The bound
// is process-wide and only falls.
void LimitBufferPool(size_t bytes);

// An empty string with capacity for at least `bytes`: a kept buffer if one is large enough,
// else a new one.
std::string TakeBuffer(size_t bytes);

// Gives *s capacity for at least `bytes`, keeping its contents: if it has less, its contents
// move into TakeBuffer(bytes) (and its old storage is freed).
void ReserveFromPool(std::string* s, size_t bytes);

// Keeps *s's storage for a later TakeBuffer if the pool has room; *s is left empty, without
// storage, either way.
void ReturnBuffer(std::string* s);

// Capacity bytes kept now (for tests and statistics).
size_t PooledBufferBytes();

}  // namespace strata
