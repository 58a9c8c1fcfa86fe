// strata-bench fill: how the in-memory tier's load rate changes as it fills (issue 28;
// docs/benchmarks.md, "Issue 28: counts of two bytes"). One writer loads the first `fraction`
// of a Kronecker stream (Graph500 initiator, seed 1, shuffled, undirected, unweighted unless
// --weighted) into an Options::in_memory store in batches of `batch`, and prints each tenth's
// rate and CPU seconds and the last tenth's rate over the first's. Each tenth's batches are
// generated before its clock starts, so the rates are the store's alone.
//
//   strata-bench fill [--scale S] [--fraction F] [--batch B] [--weighted] [--verify]
//                     [--cart-threshold T] [--order shuffled|source] [--directed] [--paired R]
//                     [--pin] [--perf-ctl FIFO [--perf-ack FIFO] --perf-tenth K]
//
// Each tenth's line also gives the memgraph's bytes (allocated and resident, DBStats) and its
// live subgraph versions when the tenth ends.
//
// --pin: every odd tenth runs beside a snapshot taken at its start and dropped at its end (a
// reader that holds its snapshot and reads nothing), the even tenths beside none, so the cost
// of a held snapshot to the writer is the odd tenths' rates against their neighbours', at the
// same moments of the machine. With --verify the held snapshot must still count the entries
// stored before its tenth.
//
// --paired R: the last tenth is applied in R slices alternated with slices of the first tenth
// applied again to a second, fresh store, and the ratio of those two rates is printed too:
// both sides then see the machine of the same moments. On a shared VM the machine's speed
// drifts by tens of percent in the minute between the first tenth and the last, so the
// sequential ratio of one run can be off by as much (docs/benchmarks.md, "Issue 28: writers
// that steal; the fill ratio paired").
//
// --order source: the loaded part sorted by (source, destination) first, as an edge list sorted
// by source is read (a batch then holds a few vertices' whole lists and touches few subgraphs;
// the reverse entries of an undirected graph still scatter). --directed: GraphKind::kDirected
// (out-lists only). Both show what batching buys when a batch has locality, against the
// shuffled stream where a batch of 1024 touches about one entry per subgraph.
//
// --verify (small scales: it keeps every loaded edge in an ordered set): afterwards the store
// holds exactly the loaded edges, both directions of each, with the last weight written.
//
// --perf-ctl: `perf record --control fifo:CTL,ACK -D -1 ...` is told "enable" before tenth K
// (0-based) and "disable" after it, so a profile holds that tenth only (with --perf-ack, each
// command waits for perf's acknowledgement).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/util.h"
#include "graphio/generator.h"
#include "strata/db.h"
#include "strata/write_batch.h"

namespace strata::bench {

namespace {

// Sends `command` to perf's control FIFO and, when an acknowledgement FIFO is given, waits for
// perf's reply. False (with a message) when a FIFO cannot be opened.
bool PerfControl(const std::string& ctl, const std::string& ack, const char* command) {
  std::ofstream out(ctl);
  if (!out) {
    std::fprintf(stderr, "fill bench: cannot open perf control FIFO %s\n", ctl.c_str());
    return false;
  }
  out << command << '\n';
  out.close();
  if (ack.empty()) return true;
  std::ifstream in(ack);
  std::string reply;
  if (!in || !std::getline(in, reply)) {
    std::fprintf(stderr, "fill bench: no acknowledgement on %s\n", ack.c_str());
    return false;
  }
  return true;
}

}  // namespace

int RunFillBench(int argc, char** argv) {
  int scale = 21;
  double fraction = 0.8;
  uint64_t batch = 1024;
  uint32_t cart_threshold = Options().cart_threshold;
  std::string order = "shuffled";
  bool weighted = false, verify = false, directed = false;
  std::string perf_ctl, perf_ack;
  int perf_tenth = -1;
  int paired = 0;
  bool pin = false;
  CLI::App app("One writer loads a stream into strata-mem; the rate of each tenth.",
               "strata-bench fill");
  app.add_option("--scale", scale, "Kronecker scale (2^S vertices)")
      ->check(CLI::Range(1, 30))
      ->capture_default_str();
  app.add_option("--fraction", fraction, "part of the stream loaded, in (0, 1]")
      ->check(CLI::Range(std::nextafter(0.0, 1.0), 1.0))
      ->capture_default_str();
  app.add_option("--batch", batch, "edges per write batch")
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  app.add_flag("--weighted", weighted, "random weights");
  app.add_option("--cart-threshold", cart_threshold, "Options::cart_threshold")
      ->check(CLI::Range(uint32_t{4}, std::numeric_limits<uint32_t>::max()))  // as DB::Open
      ->capture_default_str();
  app.add_option("--order", order, "stream order")
      ->check(CLI::IsMember({"shuffled", "source"}))
      ->capture_default_str();
  app.add_flag("--directed", directed, "a directed graph (out-lists only)");
  app.add_flag("--verify", verify, "check the store against the loaded stream (small scales)");
  app.add_option("--paired", paired,
                 "then R rounds: a slice of the first tenth into a fresh store, a slice of the "
                 "last tenth again into a second store loaded to 90%, alternated")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--pin", pin, "odd tenths beside a snapshot held from the tenth's start to its end")
      ->excludes(app.get_option("--paired"));  // --paired's last tenth is odd and runs its own way
  CLI::Option* ctl = app.add_option("--perf-ctl", perf_ctl, "perf's control FIFO");
  app.add_option("--perf-ack", perf_ack, "perf's acknowledgement FIFO")->needs(ctl);
  CLI::Option* tenth_opt = app.add_option("--perf-tenth", perf_tenth, "the tenth to profile")
                               ->check(CLI::Range(0, 9));
  ctl->needs(tenth_opt);
  tenth_opt->needs(ctl);
  try {
    app.parse(argc - 1, argv + 1);  // argv[1] is "fill"
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help; or a usage error, 2 as in every subcommand
  }

  graphio::GeneratorOptions g;
  g.scale = scale;
  g.weighted = weighted;
  std::unique_ptr<graphio::EdgeGenerator> gen;
  Status s = graphio::EdgeGenerator::New(g, &gen);
  if (!s.ok()) {
    std::fprintf(stderr, "fill bench: %s\n", s.ToString().c_str());
    return 1;
  }
  Options o;
  o.graph_kind = directed ? GraphKind::kDirected : GraphKind::kUndirected;
  o.weighted = weighted;
  o.in_memory = true;
  o.cart_threshold = cart_threshold;
  std::unique_ptr<DB> db;
  s = DB::Open(o, "strata-mem", &db);
  if (!s.ok()) {
    std::fprintf(stderr, "fill bench: %s\n", s.ToString().c_str());
    return 1;
  }
  const uint64_t total = static_cast<uint64_t>(static_cast<double>(gen->num_edges()) * fraction);
  const uint64_t tenth = total / 10;
  if (tenth == 0) {
    std::fprintf(stderr, "fill bench: %g of a scale-%d stream is fewer than 10 edges\n",
                 fraction, scale);
    return 2;
  }
  std::printf("fill: scale %d, %s, %llu edges (%.0f%% of the stream, %s order) in batches of "
              "%llu, 1 writer\n",
              scale, directed ? "directed" : "undirected",
              static_cast<unsigned long long>(10 * tenth), 100 * fraction, order.c_str(),
              static_cast<unsigned long long>(batch));
  // --order source: the loaded part, sorted (its tenths are then slices of the sorted list).
  std::vector<graphio::Edge> sorted;
  if (order == "source") {
    sorted.reserve(10 * tenth);
    for (uint64_t q = 0; q < 10 * tenth; ++q) sorted.push_back(gen->EdgeAtPosition(q));
    std::sort(sorted.begin(), sorted.end(), [](const graphio::Edge& a, const graphio::Edge& b) {
      return a.src != b.src ? a.src < b.src : a.dst < b.dst;
    });
  }
  std::map<std::pair<VertexId, VertexId>, double> want;  // --verify: directed entries
  // Tenth t's batches (with --verify, its edges recorded in `want`).
  auto tenth_batches = [&](int t, bool record) {
    std::vector<WriteBatch> batches;
    const uint64_t end = (t + 1) * tenth;
    for (uint64_t p = t * tenth; p < end; p += batch) {
      WriteBatch b;
      for (uint64_t q = p; q < std::min(p + batch, end); ++q) {
        const graphio::Edge e = sorted.empty() ? gen->EdgeAtPosition(q) : sorted[q];
        b.InsertEdge(e.src, e.dst, e.weight);
        if (record) {
          want[{e.src, e.dst}] = e.weight;
          if (!directed) want[{e.dst, e.src}] = e.weight;
        }
      }
      batches.push_back(std::move(b));
    }
    return batches;
  };
  double seconds = 0, first = 0, last = 0;
  for (int t = 0; t < 10; ++t) {
    const uint64_t entries_before = want.size();  // --verify: what a snapshot taken now holds
    std::vector<WriteBatch> batches = tenth_batches(t, verify);
    if (t == 9 && paired > 0) {
      // The last tenth into this store, alternated with the first tenth again into a fresh
      // one, in `paired` rounds: both sides of the ratio see the machine of the same moments
      // (on a shared VM its speed drifts by tens of percent between the first tenth and the
      // last, a minute apart). Each slice is a few hundred milliseconds, so the fresh store's
      // small working set is back in cache within a millisecond of the switch.
      std::unique_ptr<DB> fresh;
      s = DB::Open(o, "strata-mem-paired", &fresh);
      if (!s.ok()) {
        std::fprintf(stderr, "fill bench: %s\n", s.ToString().c_str());
        return 1;
      }
      const std::vector<WriteBatch> again = tenth_batches(0, false);
      double sec_first = 0, sec_last = 0;
      std::vector<double> ratios;
      // Applies batches [b0, b1) of `bs` to `d`; returns the seconds.
      auto slice = [&](DB* d, const std::vector<WriteBatch>& bs, size_t b0, size_t b1,
                       double* sec) {
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t i = b0; i < b1; ++i) {
          s = d->Write(bs[i]);
          if (!s.ok()) return false;
        }
        *sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return true;
      };
      for (int r = 0; r < paired; ++r) {
        const size_t a0 = again.size() * r / paired, a1 = again.size() * (r + 1) / paired;
        const size_t l0 = batches.size() * r / paired, l1 = batches.size() * (r + 1) / paired;
        double sa = 0, sl = 0;
        // Alternate which side goes first, so neither always follows the other.
        auto first_side = [&] { return slice(fresh.get(), again, a0, a1, &sa); };
        auto last_side = [&] { return slice(db.get(), batches, l0, l1, &sl); };
        const bool ok = r % 2 == 0 ? first_side() && last_side() : last_side() && first_side();
        if (!ok) {
          std::fprintf(stderr, "fill bench: paired round %d: %s\n", r, s.ToString().c_str());
          return 1;
        }
        sec_first += sa;
        sec_last += sl;
        // Edges per slice: batches are full but the tenth's last.
        const double ea = static_cast<double>(std::min<uint64_t>(a1 * batch, tenth) - a0 * batch);
        const double el = static_cast<double>(std::min<uint64_t>(l1 * batch, tenth) - l0 * batch);
        ratios.push_back((el / sl) / (ea / sa));
      }
      const double rate_first = static_cast<double>(tenth) / sec_first;
      last = static_cast<double>(tenth) / sec_last;
      seconds += sec_last;
      std::printf("  tenth 9: %7.0f K edges/s (%.2f s; alternated with the first tenth again "
                  "into a fresh store: %.0f K edges/s)\n",
                  last / 1e3, sec_last, rate_first / 1e3);
      const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
      std::printf("fill: paired, %d rounds: last / first tenth %.2f (median of rounds %.2f, "
                  "rounds %.2f-%.2f)\n",
                  paired, last / rate_first, Median(ratios), *lo, *hi);
      std::fflush(stdout);
      continue;
    }
    const bool pinned = pin && t % 2 == 1;
    std::unique_ptr<Snapshot> held = pinned ? db->GetSnapshot() : nullptr;
    if (t == perf_tenth && !PerfControl(perf_ctl, perf_ack, "enable")) return 1;
    const double cpu0 = ProcessCpuSec();
    const auto t0 = std::chrono::steady_clock::now();
    for (const WriteBatch& b : batches) {
      s = db->Write(b);
      if (!s.ok()) {
        std::fprintf(stderr, "fill bench: tenth %d: %s\n", t, s.ToString().c_str());
        return 1;
      }
    }
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = ProcessCpuSec() - cpu0;
    if (t == perf_tenth && !PerfControl(perf_ctl, perf_ack, "disable")) return 1;
    const double rate = static_cast<double>(tenth) / sec;
    if (t == 0) first = rate;
    if (t == 9) last = rate;
    seconds += sec;
    if (held != nullptr && verify && held->NumEdges() != entries_before) {
      std::fprintf(stderr,
                   "fill bench: verify: the snapshot held through tenth %d counts %llu entries, "
                   "%llu were stored when it was taken\n",
                   t, static_cast<unsigned long long>(held->NumEdges()),
                   static_cast<unsigned long long>(entries_before));
      return 1;
    }
    const DBStats ts = db->GetStats(/*count_graph=*/false);
    held.reset();
    std::printf("  tenth %d: %7.0f K edges/s (%.2f s, cpu %.2f s)%s; memgraph %.1f MiB (%.1f "
                "resident), %llu versions\n",
                t, rate / 1e3, sec, cpu, pinned ? ", beside a held snapshot" : "",
                static_cast<double>(ts.memgraph_bytes) / (1 << 20),
                static_cast<double>(ts.memgraph_resident_bytes) / (1 << 20),
                static_cast<unsigned long long>(ts.memgraph_versions));
    std::fflush(stdout);
  }
  const DBStats st = db->GetStats(/*count_graph=*/true);
  if (!st.count_status.ok()) {
    std::fprintf(stderr, "fill bench: counting the graph: %s\n", st.count_status.ToString().c_str());
    return 1;
  }
  if (verify) {
    // The reference model: the store holds exactly `want`.
    if (st.num_edges != want.size()) {
      std::fprintf(stderr, "fill bench: verify: %llu stored directed entries, %zu expected\n",
                   static_cast<unsigned long long>(st.num_edges), want.size());
      return 1;
    }
    std::unique_ptr<Snapshot> snap = db->GetSnapshot();
    for (const auto& [edge, w] : want) {
      double got = 0;
      s = snap->GetEdge(edge.first, edge.second, &got);
      if (!s.ok() || got != w) {
        std::fprintf(stderr, "fill bench: verify: edge (%llu, %llu): %s, weight %g, expected %g\n",
                     static_cast<unsigned long long>(edge.first),
                     static_cast<unsigned long long>(edge.second), s.ToString().c_str(), got, w);
        return 1;
      }
    }
    std::printf("fill: verified %zu directed entries against the loaded stream\n", want.size());
  }
  std::printf("fill: %.0f K edges/s overall, last / first tenth %.2f, %.1f MiB of memgraph, "
              "%llu stored directed entries\n",
              static_cast<double>(10 * tenth) / seconds / 1e3, last / first,
              static_cast<double>(st.memgraph_bytes) / (1 << 20),
              static_cast<unsigned long long>(st.num_edges));
  return 0;
}

}  // namespace strata::bench
