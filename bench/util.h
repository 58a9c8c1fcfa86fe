// Small measurement helpers of strata-bench: clocks, process counters (/proc), latency
// summaries, directory sizes, and the page-cache drop.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "util/bin_use.h"

namespace strata::bench {

// Wall-clock seconds (steady clock).
double NowSec();
// CPU seconds (user + system) of the whole process so far.
double ProcessCpuSec();
// Minor page faults of the process so far (getrusage).
uint64_t ProcessMinorFaults();
// CPU seconds of the calling thread so far.
double ThreadCpuSec();

// Peak resident set size of this process (VmHWM), bytes.
uint64_t PeakRssBytes();
// Resets the peak (VmHWM) to the current RSS ("echo 5 > /proc/self/clear_refs"); false if refused.
bool ResetPeakRss();
// Current resident set size (VmRSS), bytes.
uint64_t CurrentRssBytes();

// The process's heap, bytes: jemalloc's resident and allocated totals. jemalloc is the
// process's malloc whenever it is linked (Debian's build exports malloc), so this is every
// heap allocation, memgraph arenas included; zero in sanitizer builds (not linked). Explains a
// resident set larger than what an engine accounts for (fragmentation, untracked allocations).
struct HeapBreakdown {
  uint64_t rss = 0;
  uint64_t jemalloc_resident = 0;
  uint64_t jemalloc_allocated = 0;
  // Of jemalloc_resident: the arenas made with arenas.create (the memgraphs' node arenas, the
  // kernels' arena), what they hold allocated, and jemalloc's own metadata.
  uint64_t private_resident = 0;
  uint64_t private_allocated = 0;
  // Of private_resident: freed pages those arenas keep (pdirty: not yet purged; the memgraph
  // arenas keep them for an hour). The rest of it less private_allocated is partly used slabs.
  uint64_t private_dirty = 0;
  // Of the private_* figures: the kernels' arena's (analytics/kernel_memory.h: PageRank's list
  // cache and arrays). The rest of them is the memgraphs' arenas.
  uint64_t kernel_resident = 0;
  uint64_t kernel_allocated = 0;
  uint64_t metadata = 0;
  // The private arenas' small size classes, summed over the arenas (the kernels' arena
  // allocates blocks of 16 KiB and more only, none of them small: these are the memgraphs'),
  // the classes whose slabs hold the most unused room first; empty without jemalloc.
  std::vector<jemalloc_stats::BinUse> private_bins;
};
HeapBreakdown ReadHeapBreakdown();
// The first `top` of h.private_bins as text: each class's region size, unused MiB, slabs and
// slabs with room.
std::string PrivateBinsText(const HeapBreakdown& h, size_t top);

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
// A thread that calls `sample` every `interval` seconds until Stop(), which wakes it at once:
// a monitor that slept its interval out after the timed work had ended kept the caller
// waiting up to that long before the next phase (ingest_large's Persist started up to 0.5 s
// late, and that wait was counted in its rate). Stop() joins; the destructor stops.
class PeriodicSampler {
 public:
  PeriodicSampler(double interval, std::function<void()> sample);
  ~PeriodicSampler() { Stop(); }
  PeriodicSampler(const PeriodicSampler&) = delete;
  PeriodicSampler& operator=(const PeriodicSampler&) = delete;
  void Stop();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

struct LatencySummary {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  // (quantile, microseconds) points for a CDF plot, quantiles spaced on a log scale of the tail.
  std::vector<std::pair<double, double>> cdf;
};
LatencySummary Summarize(std::vector<float>* us);

// Latencies counted in log-linear buckets, for runs too long to keep every sample: a writer
// of the mixed workload records tens of millions, whose sample arrays (4 bytes each, copied
// once more to be sorted) were counted in the workload's peak RSS. Nanoseconds below 256 are
// exact; above, each power of two is split into 128 buckets, so a bucket's middle is within
// 0.4% of every value in it. 58 KiB whatever the count; Record never allocates.
class LatencyHistogram {
 public:
  LatencyHistogram();
  void Record(double seconds);
  void Merge(const LatencyHistogram& o);
  void Clear();

 private:
  friend LatencySummary Summarize(const LatencyHistogram& h);
  static constexpr int kSubBits = 7;
  static constexpr size_t kBuckets = (65 - kSubBits) << kSubBits;  // through 2^64 - 1
  static size_t BucketOf(uint64_t ns);
  static double MiddleOf(size_t bucket);  // in nanoseconds
  std::vector<uint64_t> n_;
  uint64_t count_ = 0;
  double sum_ns_ = 0;
  uint64_t max_ns_ = 0;
};
// The summary Summarize(vector) gives, from buckets: every quantile is the middle of the
// bucket holding its sample (the same nearest-rank rule), the max exact.
LatencySummary Summarize(const LatencyHistogram& h);

// Median of a non-empty set of values (copies).
double Median(std::vector<double> v);

// Output of a shell command (trailing newline trimmed); "" on failure.
std::string RunCommand(const std::string& cmd);

// A file read whole; "" if it cannot be read.
std::string ReadFileText(const std::string& path);

}  // namespace strata::bench
