#include "bench/util.h"

#include <fcntl.h>
#ifndef STRATA_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "strata/analytics.h"
#ifndef STRATA_NO_JEMALLOC
#include "util/jemalloc_stats.h"
#endif

namespace strata::bench {

double NowSec() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double ProcessCpuSec() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

uint64_t ProcessMinorFaults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_minflt);
}

double ThreadCpuSec() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {

uint64_t StatusField(const char* name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = strlen(name);
  while (std::getline(in, line)) {
    if (line.compare(0, n, name) == 0 && line.size() > n && line[n] == ':') {
      return std::strtoull(line.c_str() + n + 1, nullptr, 10) * 1024;  // kB
    }
  }
  return 0;
}

}  // namespace

uint64_t PeakRssBytes() { return StatusField("VmHWM"); }
uint64_t CurrentRssBytes() { return StatusField("VmRSS"); }

HeapBreakdown ReadHeapBreakdown() {
  HeapBreakdown h;
  h.rss = CurrentRssBytes();
#ifndef STRATA_NO_JEMALLOC
  // GetKernelMemoryStats refreshes jemalloc's statistics: the figures below are of the same
  // snapshot as the kernels' (a second refresh would date them apart).
  const analytics::KernelMemoryStats k = analytics::GetKernelMemoryStats();
  h.kernel_resident = k.resident;
  h.kernel_allocated = k.allocated;
  size_t v = 0;
  size_t sz = sizeof(v);
  if (mallctl("stats.resident", &v, &sz, nullptr, 0) == 0) h.jemalloc_resident = v;
  sz = sizeof(v);
  if (mallctl("stats.allocated", &v, &sz, nullptr, 0) == 0) h.jemalloc_allocated = v;
  sz = sizeof(v);
  if (mallctl("stats.metadata", &v, &sz, nullptr, 0) == 0) h.metadata = v;
  // Automatic arenas are [0, opt.narenas); the rest were made by arenas.create.
  unsigned automatic = 0, all = 0;
  sz = sizeof(unsigned);
  if (mallctl("opt.narenas", &automatic, &sz, nullptr, 0) != 0) return h;
  sz = sizeof(unsigned);
  if (mallctl("arenas.narenas", &all, &sz, nullptr, 0) != 0) return h;
  for (unsigned i = automatic; i < all; ++i) {
    jemalloc_stats::ArenaMemory m;
    if (!jemalloc_stats::ReadArena(i, &m)) continue;  // destroyed
    h.private_resident += m.resident;
    h.private_allocated += m.allocated;
    h.private_dirty += m.dirty;
  }
  const unsigned nbins = jemalloc_stats::BinCount();
  for (unsigned b = 0; b < nbins; ++b) {
    jemalloc_stats::BinUse u;
    for (unsigned i = automatic; i < all; ++i) jemalloc_stats::AddBin(i, b, &u);
    if (u.slabs != 0) h.private_bins.push_back(u);
  }
  std::sort(h.private_bins.begin(), h.private_bins.end(),
            [](const jemalloc_stats::BinUse& a, const jemalloc_stats::BinUse& b) {
              return a.UnusedBytes() > b.UnusedBytes();
            });
#endif
  return h;
}

std::string PrivateBinsText(const HeapBreakdown& h, size_t top) {
  std::string out;
  uint64_t unused = 0;
  for (const jemalloc_stats::BinUse& b : h.private_bins) unused += b.UnusedBytes();
  char buf[160];
  snprintf(buf, sizeof(buf), "%.1f MiB unused in slabs of %zu classes", unused / 1048576.0,
           h.private_bins.size());
  out = buf;
  for (size_t i = 0; i < std::min(top, h.private_bins.size()); ++i) {
    const jemalloc_stats::BinUse& b = h.private_bins[i];
    snprintf(buf, sizeof(buf), "%s%llu B: %.1f MiB unused, %llu slabs (%llu with room)",
             i == 0 ? "; " : ", ", static_cast<unsigned long long>(b.region_bytes),
             b.UnusedBytes() / 1048576.0, static_cast<unsigned long long>(b.slabs),
             static_cast<unsigned long long>(b.nonfull_slabs));
    out += buf;
  }
  return out;
}

bool ResetPeakRss() {
  int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, "5\n", 2) == 2;
  ::close(fd);
  return ok;
}

IoCounters ReadIoCounters() {
  IoCounters c;
  std::ifstream in("/proc/self/io");
  std::string key;
  uint64_t value;
  while (in >> key >> value) {
    if (key == "read_bytes:") c.read_bytes = value;
    if (key == "write_bytes:") c.write_bytes = value;
    if (key == "cancelled_write_bytes:") c.cancelled_write_bytes = value;
  }
  return c;
}

uint64_t DirBytes(const std::string& path) {
  std::error_code ec;
  uint64_t total = 0;
  if (!std::filesystem::exists(path, ec)) return 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return total;
}

PeriodicSampler::PeriodicSampler(double interval, std::function<void()> sample) {
  const auto period = std::chrono::duration<double>(interval);
  thread_ = std::thread([this, period, sample = std::move(sample)] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, period, [this] { return stop_; })) {
      lk.unlock();
      sample();
      lk.lock();
    }
  });
}

void PeriodicSampler::Stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

bool MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  return !ec;
}

bool DropPageCache() {
  sync();
  int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, "3\n", 2) == 2;
  ::close(fd);
  return ok;
}

namespace {

// The quantiles and CDF points of a summary from q(p), the sample of nearest rank
// floor(p * (count - 1) + 0.5): 0..0.9 linearly, then 1 - 10^-k for the tail, then the max.
template <typename Q>
void FillQuantiles(LatencySummary* s, Q q) {
  s->p50 = q(0.5);
  s->p90 = q(0.9);
  s->p99 = q(0.99);
  s->p999 = q(0.999);
  for (int i = 0; i <= 9; ++i) s->cdf.emplace_back(i / 10.0, q(i / 10.0));
  for (double t : {0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999}) {
    if (static_cast<double>(s->count) * (1 - t) >= 1) s->cdf.emplace_back(t, q(t));
  }
  s->cdf.emplace_back(1.0, s->max);
}

uint64_t NearestRank(double p, uint64_t count) {
  return std::min<uint64_t>(static_cast<uint64_t>(std::floor(p * static_cast<double>(count - 1) + 0.5)),
                            count - 1);
}

}  // namespace

LatencySummary Summarize(std::vector<float>* us) {
  LatencySummary s;
  std::vector<float>& v = *us;
  s.count = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (float x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.max = v.back();
  FillQuantiles(&s, [&](double p) { return static_cast<double>(v[NearestRank(p, v.size())]); });
  return s;
}

LatencyHistogram::LatencyHistogram() : n_(kBuckets, 0) {}

// Values below 2^(kSubBits+1) are their own bucket; a value with its highest bit at e > kSubBits
// keeps its top kSubBits + 1 bits: bucket (e - kSubBits) * 2^kSubBits + (v >> (e - kSubBits)),
// which continues the exact buckets without a gap.
size_t LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < (uint64_t{2} << kSubBits)) return static_cast<size_t>(ns);
  const int e = 63 - __builtin_clzll(ns);
  const int shift = e - kSubBits;
  return (static_cast<size_t>(shift) << kSubBits) + static_cast<size_t>(ns >> shift);
}

double LatencyHistogram::MiddleOf(size_t b) {
  if (b < (size_t{2} << kSubBits)) return static_cast<double>(b);
  const int shift = static_cast<int>(b >> kSubBits) - 1;
  const uint64_t lo = static_cast<uint64_t>(b - (static_cast<size_t>(shift) << kSubBits)) << shift;
  return static_cast<double>(lo) + static_cast<double>((uint64_t{1} << shift) - 1) / 2.0;
}

void LatencyHistogram::Record(double seconds) {
  const double x = seconds * 1e9;
  const uint64_t ns = x <= 0 ? 0 : x >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(x + 0.5);
  ++n_[BucketOf(ns)];
  ++count_;
  sum_ns_ += static_cast<double>(ns);
  max_ns_ = std::max(max_ns_, ns);
}

void LatencyHistogram::Merge(const LatencyHistogram& o) {
  for (size_t b = 0; b < kBuckets; ++b) n_[b] += o.n_[b];
  count_ += o.count_;
  sum_ns_ += o.sum_ns_;
  max_ns_ = std::max(max_ns_, o.max_ns_);
}

void LatencyHistogram::Clear() {
  std::fill(n_.begin(), n_.end(), 0);
  count_ = 0;
  sum_ns_ = 0;
  max_ns_ = 0;
}

LatencySummary Summarize(const LatencyHistogram& h) {
  LatencySummary s;
  s.count = h.count_;
  if (h.count_ == 0) return s;
  s.mean = h.sum_ns_ / static_cast<double>(h.count_) / 1e3;
  s.max = static_cast<double>(h.max_ns_) / 1e3;
  FillQuantiles(&s, [&](double p) {
    const uint64_t i = NearestRank(p, h.count_);
    uint64_t seen = 0;
    for (size_t b = 0; b < LatencyHistogram::kBuckets; ++b) {
      seen += h.n_[b];
      if (seen > i) return std::min(LatencyHistogram::MiddleOf(b) / 1e3, s.max);
    }
    return s.max;
  });
  return s;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string RunCommand(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace strata::bench
