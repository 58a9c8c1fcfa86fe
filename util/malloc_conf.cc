// The process-wide jemalloc configuration of StrataGraph's binaries (the CLI, the benchmark,
// the tests). Linked into executables only, never into a library: a program that embeds the
// engine (the Python module, an application) keeps its own allocator settings.
//
// jemalloc reads malloc_conf once at startup; the MALLOC_CONF environment variable overrides
// it. Freed pages go back to the OS at once, without a "muzzy" stage: flushes, compactions and
// vertex-index installs free large buffers in bursts, and resident memory must stay near what
// Options::memory_budget allows. The memgraph arenas are the exception (they keep freed pages
// an hour; see NodeAllocator), the kernels' arena keeps freed arrays for a few seconds for
// the next kernel (analytics/kernel_memory.h), and hot paths keep large temporaries as
// per-thread scratch (util/scratch.h). Background threads return those arenas' expired pages
// on time even when the process allocates nothing more (they run only while some arena has
// pages to decay).
// oversize_threshold:0 turns off jemalloc's dedicated arena for requests of 8 MiB and more,
// whose pages are purged at once whatever arena was asked for: the kernel arena's per-vertex
// arrays are that large from 2^20 vertices. The default arenas purge at once anyway.
// lg_extent_max_active_fit:20 lets a request split a kept (dirty) extent of any size: the
// arenas that keep pages coalesce a kernel's freed blocks into extents of tens of MiB, and
// under the default limit (64x the request) the next kernel's blocks took fresh pages beside
// them (SSSP's list cache faulted in every run: docs/benchmarks.md, "what SSSP over a memgraph
// snapshot still pays").
// The measurements behind this choice are in docs/benchmarks.md ("Allocator").
extern "C" {
const char* malloc_conf =
    "dirty_decay_ms:0,muzzy_decay_ms:0,background_thread:true,oversize_threshold:0,"
    "lg_extent_max_active_fit:20";
}
