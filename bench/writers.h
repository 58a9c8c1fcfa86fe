// The benchmark's writers: a stream of edge ops split among writer threads, each applying its
// share in transactions of a fixed size through a System, timed per transaction.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "bench/adapter.h"
#include "strata/status.h"

namespace strata::bench {

inline uint64_t PairKey(uint64_t u, uint64_t v) {
  return std::min(u, v) << 32 | std::max(u, v);
}

// One writer thread's share of a stream, in stream order.
struct OpStream {
  std::vector<PackedEdge> e;
  std::vector<double> w;     // empty when unweighted
  std::vector<uint8_t> del;  // empty when insert-only
  size_t size() const { return e.size(); }
};

// What RunWriters applies: one stream per writer thread; with `steal`, a writer that has
// applied its own stream takes the not yet claimed ops of the others, from their ends.
struct WriterStreams {
  std::vector<OpStream> streams;
  bool steal = false;
};

// Each edge's ops to one of `threads` streams (by a hash of the unordered pair), in stream
// order.
std::vector<OpStream> Partition(const std::vector<PackedEdge>& e, const std::vector<double>& w,
                                const std::vector<uint8_t>& del, int threads);

// The streams of `threads` writers for the ops e (weights w, delete flags del): each edge's
// ops go to one writer, in stream order. Unweighted inserts commute (applying them in any
// order leaves the same graph), so their writers steal: none sits idle while another still
// has work. With a fixed share each, the writer that ran slower (a VM's vCPUs differ by
// several percent) finished alone at half the pair's rate — the last 0.75 s of a 14 s
// scale-20 load, the last tenth of the fill series (docs/benchmarks.md, "Issue 28: writers
// that steal"). Ops that do not commute (weights: the last insert of an edge sets its
// weight; deletes) are not stolen.
WriterStreams SplitForWriters(const std::vector<PackedEdge>& e, const std::vector<double>& w,
                              const std::vector<uint8_t>& del, int threads);

struct alignas(64) Counter {
  std::atomic<uint64_t> v{0};
};

struct WriteRun {
  double seconds = 0;
  double cpu_seconds = 0;
  uint64_t ops = 0;
  uint64_t inserts = 0;
  uint64_t txns = 0;
  std::vector<float> lat_us;  // per transaction
  std::vector<std::pair<double, uint64_t>> series;  // (seconds, ops applied)
  // With `deciles`: seconds from the start at which the writers together had applied
  // (d + 1) / 10 of the ops, d = 0..9 (the transaction that crossed the mark, timed when it
  // returned).
  std::vector<double> decile_at;
  // Seconds between the first writer's end and the last's: how long some writer sat idle.
  double finish_spread = 0;
};

// Applies the streams in transactions of `batch` ops, one writer thread per stream; with
// ws.steal, a writer whose stream is done takes ops from the back of another's, a multiple of
// `batch` and at least 1024 ops at a time. Every `series_interval` seconds the ops applied so
// far go to run->series; with `deciles`, run->decile_at. Returns the first error a writer met
// (the writers stop at it), or OK.
Status RunWriters(System* sys, const WriterStreams& ws, size_t batch, double series_interval,
                  bool deciles, WriteRun* run);

}  // namespace strata::bench
