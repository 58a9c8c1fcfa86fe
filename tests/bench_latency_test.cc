// The benchmark's latency buckets (bench/util.h LatencyHistogram) against the exact summary of
// the same samples; its periodic sampler (PeriodicSampler).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <random>
#include <vector>

#include "bench/util.h"

namespace strata::bench {
namespace {

// Within the bucket's promise: exact below 256 ns, else within 0.4% (half a bucket of 1/128).
void ExpectClose(double got_us, double want_us, const char* what) {
  const double want_ns = want_us * 1e3;
  if (want_ns < 255.5) {
    EXPECT_NEAR(got_us * 1e3, std::round(want_ns), 1e-9) << what;
  } else {
    EXPECT_LE(std::abs(got_us - want_us), want_us * 0.004 + 1e-12) << what << ": " << got_us << " for " << want_us;
  }
}

TEST(LatencyHistogram, SingleValuesAcrossTheRangeComeBackWithinTheBucket) {
  // Every power of two from 1 ns to ~2^62 ns, and values around each boundary.
  for (int e = 0; e < 62; ++e) {
    for (double f : {1.0, 1.0 + 1.0 / 256, 1.3, 1.5, 1.99, 2.0 - 1.0 / 1024}) {
      const double ns = std::floor(std::ldexp(f, e));
      LatencyHistogram h;
      h.Record(ns / 1e9);
      const LatencySummary s = Summarize(h);
      ASSERT_EQ(s.count, 1u);
      ExpectClose(s.p50, ns / 1e3, "p50");
      EXPECT_DOUBLE_EQ(s.max, ns / 1e3);
    }
  }
}

TEST(LatencyHistogram, QuantilesMatchTheExactSummary) {
  std::mt19937_64 rng(7);
  // Log-uniform from 0.1 ns to 10 s, with a heavy body near 2 us as the writers see it.
  std::uniform_real_distribution<double> lg(-1, 10), body(1.5, 3.0);
  std::vector<float> us;
  LatencyHistogram h, a, b;
  for (int i = 0; i < 200000; ++i) {
    const double ns = i % 4 ? body(rng) * 1e3 : std::pow(10.0, lg(rng));
    const double rounded = std::round(ns);  // the histogram's unit
    us.push_back(static_cast<float>(rounded / 1e3));
    h.Record(ns / 1e9);
    (i % 2 ? a : b).Record(ns / 1e9);
  }
  const LatencySummary got = Summarize(h);
  const LatencySummary want = Summarize(&us);
  ASSERT_EQ(got.count, want.count);
  ExpectClose(got.p50, want.p50, "p50");
  ExpectClose(got.p90, want.p90, "p90");
  ExpectClose(got.p99, want.p99, "p99");
  ExpectClose(got.p999, want.p999, "p99.9");
  EXPECT_NEAR(got.max, want.max, want.max * 1e-6);
  EXPECT_NEAR(got.mean, want.mean, want.mean * 1e-4);
  ASSERT_EQ(got.cdf.size(), want.cdf.size());
  for (size_t i = 0; i < got.cdf.size(); ++i) {
    EXPECT_EQ(got.cdf[i].first, want.cdf[i].first);
    ExpectClose(got.cdf[i].second, want.cdf[i].second, "cdf point");
  }
  // Two halves merged are the whole; a cleared histogram is empty.
  a.Merge(b);
  const LatencySummary merged = Summarize(a);
  EXPECT_EQ(merged.count, got.count);
  EXPECT_EQ(merged.p50, got.p50);
  EXPECT_EQ(merged.p999, got.p999);
  EXPECT_EQ(merged.max, got.max);
  a.Clear();
  EXPECT_EQ(Summarize(a).count, 0u);
  EXPECT_TRUE(Summarize(a).cdf.empty());
}

// Samples repeat at the interval, and Stop() wakes the sampler at once: with an hour's interval
// it returns without a sample (a sampler that slept its interval out would hang the test).
TEST(PeriodicSampler, SamplesUntilStoppedAndStopsAtOnce) {
  std::atomic<int> n{0};
  {
    PeriodicSampler s(0.001, [&] { n.fetch_add(1); });
    while (n.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s.Stop();
    const int stopped_at = n.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(n.load(), stopped_at) << "a sample after Stop()";
  }
  std::atomic<int> m{0};
  PeriodicSampler slow(3600, [&] { m.fetch_add(1); });
  slow.Stop();
  slow.Stop();  // idempotent
  EXPECT_EQ(m.load(), 0);
}

}  // namespace
}  // namespace strata::bench
