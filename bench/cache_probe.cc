#include "bench/cache_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/util.h"

namespace strata::bench {

// From sysfs rather than sysconf(_SC_LEVEL3_CACHE_SIZE): on the EPYC VM glibc's CPUID answer is
// 320 MiB (the host's), sysfs the 32 MiB the guest's cores share.
size_t LastLevelCacheBytes() {
  size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level_text = ReadFileText(dir + "level");
    const std::string size = ReadFileText(dir + "size");  // "32768K"
    char* end = nullptr;
    const int level = static_cast<int>(std::strtol(level_text.c_str(), nullptr, 10));
    size_t bytes = std::strtoull(size.c_str(), &end, 10);
    if (level <= 0 || bytes == 0) continue;
    if (*end == 'K') bytes <<= 10;
    if (*end == 'M') bytes <<= 20;
    if (level > best_level) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

namespace {

std::atomic<uint64_t> sink{0};

// The largest power of two <= max(n, 8): a buffer of whole 8-byte words that a mask indexes.
size_t FloorPow2(size_t n) {
  size_t p = 8;
  while (p <= n / 2) p *= 2;
  return p;
}

// Random read-modify-writes over `bytes` (a power of two) for `seconds` on `threads` threads;
// accesses/s. Each thread fills its buffer first; the clock runs from when all are ready.
double Round(int threads, size_t bytes, double seconds) {
  const size_t mask = bytes / sizeof(uint64_t) - 1;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, stop{false};
  std::vector<uint64_t> counts(static_cast<size_t>(threads), 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<uint64_t> buf(mask + 1, 1);
      uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(t + 1);
      uint64_t n = 0;
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      do {
        for (int i = 0; i < 4096; ++i) {  // xorshift64: a random word each step
          x ^= x << 13;
          x ^= x >> 7;
          x ^= x << 17;
          buf[x & mask] += x;  // a mask, not a division: the round measures the memory
        }
        n += 4096;
      } while (!stop.load(std::memory_order_relaxed));
      uint64_t sum = 0;  // read back, so the writes are not dead
      for (uint64_t w : buf) sum += w;
      sink.fetch_add(sum, std::memory_order_relaxed);
      counts[static_cast<size_t>(t)] = n;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::thread& th : pool) th.join();
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return static_cast<double>(total) / std::max(secs, 1e-9);
}

}  // namespace

CacheProbeResult ProbeCaches(int threads, double seconds, size_t small_bytes, size_t large_bytes) {
  CacheProbeResult r;
  r.threads = std::max(1, threads);
  r.seconds = seconds;
  if (large_bytes == 0) {
    const size_t llc = LastLevelCacheBytes();
    large_bytes = (llc != 0 ? llc / 2 : size_t{16} << 20) / static_cast<size_t>(r.threads);
  }
  r.small_bytes = FloorPow2(small_bytes);
  r.large_bytes = FloorPow2(large_bytes);
  r.small_per_s = Round(r.threads, r.small_bytes, seconds);
  r.large_per_s = Round(r.threads, r.large_bytes, seconds);
  return r;
}

}  // namespace strata::bench
