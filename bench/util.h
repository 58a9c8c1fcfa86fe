// Small measurement helpers of strata-bench: clocks, process counters (/proc), latency
// summaries, directory sizes, and the page-cache drop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::bench {

// Wall-clock seconds (steady clock).
double NowSec();
// CPU seconds (user + system) of the whole process so far.
double ProcessCpuSec();
// CPU seconds of the calling thread so far.
double ThreadCpuSec();

// Peak resident set size of this process (VmHWM), bytes.
uint64_t PeakRssBytes();
// Resets the peak (VmHWM) to the current RSS ("echo 5 > /proc/self/clear_refs"); false if refused.
bool ResetPeakRss();
// Current resident set size (VmRSS), bytes.
uint64_t CurrentRssBytes();

// Where the process's heap memory is, bytes: glibc malloc (what it holds from the OS and what
// is in use) and jemalloc (resident and allocated: the memgraph arenas, and every malloc when
// jemalloc is linked, as Debian's exports malloc; zero in sanitizer builds). Explains a
// resident set larger than what an engine accounts for (fragmentation, retained pages).
struct HeapBreakdown {
  uint64_t rss = 0;
  uint64_t glibc_from_os = 0;  // mallinfo2: arena + hblkhd
  uint64_t glibc_in_use = 0;   // uordblks + hblkhd
  uint64_t jemalloc_resident = 0;
  uint64_t jemalloc_allocated = 0;
};
HeapBreakdown ReadHeapBreakdown();

// /proc/self/io counters (bytes). write_bytes counts pages dirtied by this process (the whole
// thread group), cancelled_write_bytes those truncated before write-back.
struct IoCounters {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t cancelled_write_bytes = 0;
};
IoCounters ReadIoCounters();

// Total size of the regular files under `path` (recursive); 0 if it does not exist.
uint64_t DirBytes(const std::string& path);
// rm -rf path (no error if absent).
void RemoveTree(const std::string& path);
// mkdir -p.
bool MakeDirs(const std::string& path);

// sync(), then "echo 3 > /proc/sys/vm/drop_caches". True if the kernel accepted it.
bool DropPageCache();

// Latency summary of samples in microseconds. Sorts `us` in place.
struct LatencySummary {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  // (quantile, microseconds) points for a CDF plot, quantiles spaced on a log scale of the tail.
  std::vector<std::pair<double, double>> cdf;
};
LatencySummary Summarize(std::vector<float>* us);

// Median of a non-empty set of values (copies).
double Median(std::vector<double> v);

// Output of a shell command (trailing newline trimmed); "" on failure.
std::string RunCommand(const std::string& cmd);

// A file read whole; "" if it cannot be read.
std::string ReadFileText(const std::string& path);

}  // namespace strata::bench
