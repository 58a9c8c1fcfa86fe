// The process-wide jemalloc configuration of StrataGraph's binaries (the CLI, the benchmark,
// the tests). Linked into executables only, never into a library: a program that embeds the
// engine (the Python module, an application) keeps its own allocator settings.
//
// jemalloc reads malloc_conf once at startup; the MALLOC_CONF environment variable overrides
// it. Freed pages go back to the OS at once, without a "muzzy" stage: flushes, compactions and
// vertex-index installs free large buffers in bursts, and resident memory must stay near what
// Options::memory_budget allows. The memgraph arenas are the exception (they never purge; see
// NodeAllocator), and hot paths keep large temporaries as per-thread scratch (util/scratch.h).
// The measurements behind this choice are in docs/benchmarks.md ("Allocator").
extern "C" {
const char* malloc_conf = "dirty_decay_ms:0,muzzy_decay_ms:0";
}
