// strata analyze: runs one analytics kernel (analytics/) on a snapshot of a store and prints the
// result in the LDBC Graphalytics output format, "<external-id> <value>" per line, ascending by
// external ID; a timing summary goes to stderr.
#include <tbb/global_control.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "graphio/size_parse.h"
#include "strata/analytics.h"

namespace strata::cli {

namespace {

struct AnalyzeArgs {
  std::string db;
  std::string algo;
  bool has_source = false;
  uint64_t source = 0;
  int iterations = -1;  // -1: the algorithm's default
  double damping = 0.85;
  int k = 2;
  std::string direction = "out";
  double delta = 0;
  std::string out = "-";
  int threads = 0;
  std::string cache_bytes;  // empty: each kernel's default
  bool quiet = false;
  bool stats = false;  // bfs: the layout time and each step on stderr
  std::string view;    // run on this view's subgraph (empty: the whole graph)
};

// Buffered output to a file or stdout.
class Output {
 public:
  Status Open(const std::string& path) {
    if (path == "-") {
      f_ = stdout;
      name_ = "<stdout>";
      return Status::OK();
    }
    f_ = std::fopen(path.c_str(), "we");
    name_ = path;
    if (f_ == nullptr) {
      return Status::IOError("cannot create " + path + ": " + std::strerror(errno));
    }
    own_ = true;
    return Status::OK();
  }
  FILE* f() { return f_; }
  Status Close() {
    bool bad = std::ferror(f_) != 0;
    if (own_) {
      bad = std::fclose(f_) != 0 || bad;
    } else {
      bad = std::fflush(f_) != 0 || bad;
    }
    f_ = nullptr;
    return bad ? Status::IOError("writing " + name_ + " failed") : Status::OK();
  }
  ~Output() {
    if (f_ != nullptr && own_) std::fclose(f_);
  }

 private:
  FILE* f_ = nullptr;
  bool own_ = false;
  std::string name_;
};

// Graphalytics prints reals as "%.15e" and SSSP's unreachable as "Infinity".
void PrintReal(FILE* f, uint64_t ext, double v) {
  if (std::isinf(v)) {
    std::fprintf(f, "%" PRIu64 " %sInfinity\n", ext, v < 0 ? "-" : "");
  } else {
    std::fprintf(f, "%" PRIu64 " %.15e\n", ext, v);
  }
}

int RunAnalyze(const AnalyzeArgs& a) {
  static const char* kAlgos[] = {"bfs", "pr", "sssp", "wcc", "cdlp", "lcc", "tc", "khop", "scan"};
  bool known = false;
  for (const char* x : kAlgos) known = known || a.algo == x;
  if (!known) {
    return Fail(kExitUsage,
                "--algo: expected bfs, pr, sssp, wcc, cdlp, lcc, tc, khop or scan, got '" +
                    a.algo + "'");
  }
  const bool needs_source = a.algo == "bfs" || a.algo == "sssp" || a.algo == "khop";
  if (needs_source && !a.has_source) {
    return Fail(kExitUsage, "--algo " + a.algo + " needs --source EXTID");
  }
  if (!needs_source && a.has_source) {
    return Fail(kExitUsage, "--source applies to bfs, sssp and khop only");
  }
  if (a.iterations != -1 && a.algo != "pr" && a.algo != "cdlp") {
    return Fail(kExitUsage, "--iterations applies to pr and cdlp only");
  }
  if (a.iterations < -1 || a.iterations == 0) {
    return Fail(kExitUsage, "--iterations: must be at least 1");
  }
  if (!(a.damping >= 0 && a.damping <= 1)) return Fail(kExitUsage, "--damping: must be in [0, 1]");
  if (a.k < 0) return Fail(kExitUsage, "--k: must be at least 0");
  if (a.stats && a.algo != "bfs") return Fail(kExitUsage, "--stats applies to bfs only");
  uint64_t cache_bytes = 0;
  const bool has_cache = !a.cache_bytes.empty();
  if (has_cache) {
    if (a.algo != "bfs" && a.algo != "pr" && a.algo != "sssp" && a.algo != "wcc") {
      return Fail(kExitUsage, "--cache-bytes applies to bfs, pr, sssp and wcc only");
    }
    Status ps = graphio::ParseSize(a.cache_bytes, &cache_bytes);
    if (!ps.ok()) return Fail(kExitUsage, "--cache-bytes: " + ps.message());
  }
  std::unique_ptr<tbb::global_control> threads;
  if (a.threads > 0) {
    threads = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    a.threads);
  }

  Stopwatch total;
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::ReadOnlyOpen(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  const double open_secs = total.Seconds();
  // The kernel reads `snap`: the whole graph, or the view's subgraph (a filter over a new
  // snapshot, which it owns).
  std::unique_ptr<Snapshot> snap;
  if (a.view.empty()) {
    snap = store->db()->GetSnapshot();
  } else {
    s = store->db()->GetViewSnapshot(a.view, &snap);
    if (!s.ok()) return FailStatus(s, "--view");
  }

  VertexId source = 0;
  if (needs_source) {
    s = store->ToInternal(*snap, a.source, &source);
    if (!s.ok() && !a.view.empty() && s.IsNotFound()) {
      return Fail(kExitError, "--source: vertex " + std::to_string(a.source) +
                                  " is not in view '" + a.view + "'");
    }
    if (!s.ok()) return FailStatus(s, "--source");
  }
  Direction dir = Direction::kOut;
  if (a.direction == "in") dir = Direction::kIn;

  Output out;
  s = out.Open(a.out);
  if (!s.ok()) return FailStatus(s);

  // Run the kernel.
  Stopwatch kernel;
  std::vector<int64_t> depth;
  std::vector<double> real;
  std::vector<uint64_t> label;
  std::vector<VertexId> set;
  uint64_t triangles = 0;
  analytics::ScanResult scan;
  std::vector<uint64_t> ext_labels;  // CDLP: initial labels = external IDs (map mode)
  std::string params;
  const bool is_pr = a.algo == "pr";
  analytics::PageRankStats pr_stats;
  const int iterations = a.iterations > 0 ? a.iterations : 10;
  if (a.algo == "bfs") {
    analytics::BfsParams p;
    p.source = source;
    if (has_cache) p.cache_bytes = cache_bytes;
    analytics::BfsStats stats;
    if (a.stats) p.stats = &stats;
    s = analytics::Bfs(*snap, p, &depth);
    params = "source " + std::to_string(a.source);
    if (s.ok() && a.stats) {
      std::fprintf(stderr, "bfs layout: %.3f s\n", stats.layout_seconds);
      for (size_t k = 0; k < stats.steps.size(); ++k) {
        const analytics::BfsStep& st = stats.steps[k];
        std::fprintf(stderr, "bfs step %zu %s: frontier %llu, found %llu, %.3f s\n", k,
                     st.bottom_up ? "bottom-up" : "top-down",
                     static_cast<unsigned long long>(st.frontier),
                     static_cast<unsigned long long>(st.found), st.seconds);
      }
    }
  } else if (is_pr) {
    analytics::PageRankParams p;
    p.damping = a.damping;
    p.iterations = iterations;
    if (has_cache) p.cache_bytes = cache_bytes;
    p.stats = &pr_stats;
    s = analytics::PageRank(*snap, p, &real);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "damping %g, %d iterations", a.damping, iterations);
    params = buf;
  } else if (a.algo == "sssp") {
    analytics::SsspParams p;
    p.source = source;
    p.delta = a.delta;
    if (has_cache) p.cache_bytes = cache_bytes;
    s = analytics::Sssp(*snap, p, &real);
    params = "source " + std::to_string(a.source);
  } else if (a.algo == "wcc") {
    analytics::WccParams p;
    if (has_cache) p.cache_bytes = cache_bytes;
    s = analytics::Wcc(*snap, p, &label);
  } else if (a.algo == "cdlp") {
    analytics::CdlpParams p;
    p.max_iterations = iterations;
    if (store->dictionary() != nullptr) {
      // Ties go to the smallest label: seed labels with the external IDs, as Graphalytics does.
      const VertexId bound = snap->VertexIdBound();
      ext_labels.resize(bound);
      for (VertexId v = 0; v < bound; ++v) ext_labels[v] = store->ToExternal(v);
      p.initial_labels = &ext_labels;
    }
    s = analytics::Cdlp(*snap, p, &label);
    params = std::to_string(iterations) + " iterations";
  } else if (a.algo == "lcc") {
    s = analytics::Lcc(*snap, &real);
  } else if (a.algo == "tc") {
    s = analytics::TriangleCount(*snap, &triangles);
  } else if (a.algo == "khop") {
    analytics::KHopParams p;
    p.source = source;
    p.k = a.k;
    p.direction = dir;
    s = analytics::KHop(*snap, p, &set);
    params = "source " + std::to_string(a.source) + ", k " + std::to_string(a.k) + ", " +
             a.direction;
  } else if (a.algo == "scan") {
    s = analytics::Scan(*snap, dir, &scan);
    params = a.direction + "-edges";
  }
  const double kernel_secs = kernel.Seconds();
  if (!s.ok()) return FailStatus(s, a.algo);

  // Print, ascending by external ID.
  Stopwatch printing;
  FILE* f = out.f();
  uint64_t lines = 0;
  uint64_t nv = 0;  // vertices in the output (counting them separately would walk the graph)
  if (a.algo == "tc") {
    std::fprintf(f, "triangles %" PRIu64 "\n", triangles);
    lines = 1;
  } else if (a.algo == "scan") {
    std::fprintf(f, "vertices %" PRIu64 "\nedges %" PRIu64 "\ndst_sum %" PRIu64
                 "\nweight_sum %.15e\n",
                 scan.vertices, scan.edges, scan.dst_sum, scan.weight_sum);
    lines = 4;
  } else if (a.algo == "khop") {
    std::vector<uint64_t> ext(set.size());
    for (size_t i = 0; i < set.size(); ++i) ext[i] = store->ToExternal(set[i]);
    std::sort(ext.begin(), ext.end());
    for (uint64_t e : ext) std::fprintf(f, "%" PRIu64 "\n", e);
    lines = ext.size();
  } else {
    std::vector<std::pair<uint64_t, VertexId>> order;
    s = store->SortedVertices(*snap, &order);
    if (!s.ok()) return FailStatus(s, "listing vertices");
    if (a.algo == "wcc") {
      // Label each component by its smallest external ID (Graphalytics' reference labels).
      // `order` ascends by external ID, so the first vertex seen of a component is its minimum.
      std::vector<uint64_t> min_ext(snap->VertexIdBound(), UINT64_MAX);
      for (const auto& [ext, v] : order) {
        const VertexId root = label[v];
        if (root < min_ext.size() && min_ext[root] == UINT64_MAX) min_ext[root] = ext;
      }
      for (const auto& [ext, v] : order) {
        const VertexId root = label[v];
        std::fprintf(f, "%" PRIu64 " %" PRIu64 "\n", ext,
                     root < min_ext.size() ? min_ext[root] : root);
      }
    } else if (a.algo == "cdlp") {
      // With external initial labels the labels are external IDs already; dense: identical.
      for (const auto& [ext, v] : order) {
        std::fprintf(f, "%" PRIu64 " %" PRIu64 "\n", ext, label[v]);
      }
    } else if (a.algo == "bfs") {
      for (const auto& [ext, v] : order) {
        std::fprintf(f, "%" PRIu64 " %" PRId64 "\n", ext, depth[v]);
      }
    } else {
      for (const auto& [ext, v] : order) PrintReal(f, ext, real[v]);
    }
    lines = order.size();
    nv = order.size();
  }
  s = out.Close();
  if (!s.ok()) return FailStatus(s);
  const double print_secs = printing.Seconds();
  snap.reset();
  s = store->Close();
  if (!s.ok()) return FailStatus(s, "close");

  if (!a.quiet) {
    std::string summary = a.algo;
    if (!a.view.empty()) summary += " on view " + a.view;
    if (!params.empty()) summary += " (" + params + ")";
    summary += ": ";
    if (nv > 0) summary += std::to_string(nv) + " vertices; ";
    if (a.algo == "scan") summary += std::to_string(scan.vertices) + " vertices; ";
    summary += "kernel " + HumanSeconds(kernel_secs) +
               ", open " + HumanSeconds(open_secs) + ", output " + HumanSeconds(print_secs) +
               " (" + std::to_string(lines) + " lines), total " + HumanSeconds(total.Seconds());
    if (a.algo == "bfs") {
      uint64_t reached = 0;
      int64_t max_depth = 0;
      for (int64_t d : depth) {
        if (d != analytics::kUnreachable) {
          ++reached;
          max_depth = std::max(max_depth, d);
        }
      }
      summary += "; reached " + std::to_string(reached) + ", depth " + std::to_string(max_depth);
    } else if (a.algo == "wcc") {
      uint64_t comps = 0;
      for (VertexId v = 0; v < label.size(); ++v) comps += label[v] == v;
      summary += "; " + std::to_string(comps) + " components";
    } else if (is_pr && iterations > 1) {
      // Where the iterations read the lists from: a run that streams some is slower, and
      // --cache-bytes says how much memory keeping them takes.
      auto mib = [](size_t b) { return std::to_string((b + (size_t{1} << 19)) >> 20) + " MiB"; };
      summary += "; list cache " + mib(pr_stats.cache_bytes) + " of " + mib(pr_stats.cache_budget);
      if (pr_stats.packed_blocks != 0) {
        summary += ", " + std::to_string(pr_stats.packed_blocks) + " blocks packed";
      }
      if (pr_stats.streamed_blocks != 0) {
        summary += " (" + std::to_string(pr_stats.streamed_blocks) +
                   " blocks of 4096 vertices did not fit: streamed every iteration)";
      }
      char phases[96];
      std::snprintf(phases, sizeof(phases), "; layout and list cache %.3f s, iterations %.3f s",
                    pr_stats.prepare_seconds, pr_stats.iterate_seconds);
      summary += phases;
    }
    std::fprintf(stderr, "%s\n", summary.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterAnalyze(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<AnalyzeArgs>();
  CLI::App* c = app->add_subcommand(
      "analyze", "Run a graph algorithm on a snapshot; Graphalytics-format output");
  c->add_option("--db", a->db, "store directory")->required();
  c->add_option("--algo", a->algo, "bfs, pr, sssp, wcc, cdlp, lcc, tc, khop or scan")
      ->required();
  c->add_option("--source", a->source, "source vertex (external ID): bfs, sssp, khop")
      ->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))
      ->each([a](const std::string&) { a->has_source = true; });
  c->add_option("--iterations", a->iterations, "pr and cdlp: iterations (default 10)")
      ->check(SignedIn(1, std::numeric_limits<int>::max()));
  c->add_option("--damping", a->damping, "pr: damping factor")->capture_default_str();
  c->add_option("--k", a->k, "khop: hops")->check(SignedIn(0, std::numeric_limits<int>::max()))->capture_default_str();
  c->add_option("--direction", a->direction, "khop, scan: out or in")
      ->check(CLI::IsMember({"out", "in"}))
      ->capture_default_str();
  c->add_option("--delta", a->delta, "sssp: delta-stepping bucket width (0: automatic)")
      ->check(RealAtLeast(0));
  c->add_option("--out", a->out, "result file, - for stdout")->capture_default_str();
  c->add_option("--threads", a->threads, "worker threads (0: all cores)")
      ->check(SignedIn(0, std::numeric_limits<int>::max()));
  c->add_option("--cache-bytes", a->cache_bytes,
                "bfs, pr, sssp, wcc: decoded lists kept in memory between passes, e.g. 256M "
                "(0: stream every pass; default: pr a quarter of the available memory, at "
                "least 256M; sssp 256M; bfs and wcc 0)");
  c->add_option("--view", a->view,
                "run on the subgraph of this view (strata view; docs/views.md): output lists "
                "the view's vertices only");
  c->add_flag("-q,--quiet", a->quiet, "no timing summary on stderr");
  c->add_flag("--stats", a->stats,
              "bfs: the layout time and each step (direction, frontier, vertices found, "
              "seconds) on stderr");
  c->footer(HelpFooter(
      "Output: '<vertex> <value>' per line (LDBC Graphalytics format), ascending by external "
      "vertex ID, to --out or stdout; a timing summary on stderr.\n"
      "  bfs   hops from --source (9223372036854775807: unreachable)\n"
      "  pr    PageRank (Graphalytics: --damping 0.85, --iterations 10 by default)\n"
      "  sssp  shortest-path length from --source over weights (Infinity: unreachable)\n"
      "  wcc   weakly connected components: the smallest vertex ID of the component\n"
      "  cdlp  community label after --iterations rounds of label propagation (default 10)\n"
      "  lcc   local clustering coefficient\n"
      "  tc    one line 'triangles N'\n"
      "  khop  the vertices within --k hops of --source (one per line)\n"
      "  scan  every neighbor read once: vertices, edges, dst_sum, weight_sum"));
  commands->push_back({c, [a] { return RunAnalyze(*a); }});
}

}  // namespace strata::cli
