// How much memory this process may still take: what kernels size their working memory by when
// the caller leaves it to them (PageRankParams::cache_bytes = kAutoCacheBytes).
#pragma once

#include <cstdint>
#include <string_view>

namespace strata {

// MemAvailable of a /proc/meminfo text, in bytes; 0 when the line is missing or malformed.
uint64_t ParseMemAvailable(std::string_view meminfo);

// Room left under one cgroup level: its limit minus its usage, given both files' texts
// (cgroup v2: memory.max and memory.current; v1: memory.limit_in_bytes and
// memory.usage_in_bytes); UINT64_MAX when the limit is "max" (v2's "none") or either text is
// not a number, 0 when the group is at or over its limit.
uint64_t CgroupHeadroom(std::string_view limit_text, std::string_view usage_text);

// The process's cgroup path in a /proc/self/cgroup text: with controller empty, the cgroup v2
// one (the "0::/path" line); else the v1 hierarchy that has that controller ("4:memory:/path",
// or a line listing it among others, "3:cpu,memory:/path"). Empty when there is none.
std::string_view CgroupPath(std::string_view proc_self_cgroup, std::string_view controller);

// Bytes this process may still allocate: the system's MemAvailable, lowered to the smallest
// headroom of the process's memory cgroup and its ancestors, v2 or v1 (a container's limit,
// which MemAvailable does not show; usage there counts the group's page cache, so the headroom
// is on the low side). 0 when MemAvailable cannot be read. Reads a few small files: for once
// per kernel run, not per call in a loop.
uint64_t AvailableMemoryBytes();

}  // namespace strata
