// strata generate: a Graph500 Kronecker or uniform random edge stream, as a text edge list or a
// binary stream, to a file or stdout (graphio/generator.h has the recipe).
#include <atomic>
#include <memory>
#include <limits>
#include <string>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "graphio/edge_writer.h"
#include "graphio/generator.h"
#include "graphio/size_parse.h"

namespace strata::cli {

namespace {

struct GenerateArgs {
  std::string kind = "kron";
  int scale = 16;
  uint64_t edge_factor = 16;
  uint64_t seed = 1;
  uint64_t num_vertices = 0;
  uint64_t num_edges = 0;
  uint64_t shuffle_seed = 0;
  bool weights = false;
  bool no_shuffle = false;
  bool remove_self_loops = false;
  bool remove_duplicates = false;
  std::string format = "el";
  std::string out = "-";
  std::string progress = "auto";
  bool quiet = false;
};

// Parses an output format: el|text -> text, bin|binary -> binary.
Status ParseOutputFormat(const std::string& s, graphio::EdgeFormat* f) {
  if (s == "el" || s == "text" || s == "txt") {
    *f = graphio::EdgeFormat::kText;
  } else if (s == "bin" || s == "binary") {
    *f = graphio::EdgeFormat::kBinary;
  } else {
    return Status::InvalidArgument("--format: expected 'el' or 'bin', got '" + s + "'");
  }
  return Status::OK();
}

int RunGenerate(const GenerateArgs& a) {
  graphio::GeneratorOptions g;
  if (a.kind == "kron") {
    g.model = graphio::GraphModel::kKronecker;
  } else {
    Status s = graphio::ParseGraphModel(a.kind, &g.model);
    if (!s.ok()) {
      return Fail(kExitUsage, "--kind: expected 'kron' or 'uniform', got '" + a.kind + "'");
    }
  }
  graphio::EdgeFormat format = graphio::EdgeFormat::kText;
  Status s = ParseOutputFormat(a.format, &format);
  if (!s.ok()) return Fail(kExitUsage, s.message());
  g.scale = a.scale;
  g.edge_factor = a.edge_factor;
  g.seed = a.seed;
  g.num_vertices = a.num_vertices;
  g.num_edges = a.num_edges;
  g.shuffle_seed = a.shuffle_seed;
  g.weighted = a.weights;
  g.shuffle = !a.no_shuffle;
  g.remove_self_loops = a.remove_self_loops;
  g.remove_duplicates = a.remove_duplicates;
  std::unique_ptr<graphio::EdgeGenerator> gen;
  s = graphio::EdgeGenerator::New(g, &gen);
  if (!s.ok()) return Fail(kExitUsage, s.message());

  std::unique_ptr<graphio::EdgeWriter> w;
  graphio::EdgeWriterOptions wo;
  wo.format = format;
  wo.weighted = a.weights;
  s = graphio::EdgeWriter::Open(a.out, wo, &w);
  if (!s.ok()) return FailStatus(s, "--out " + a.out);

  const bool show = a.progress == "always" || (a.progress == "auto" && StderrIsTerminal());
  std::atomic<uint64_t> done{0};
  const uint64_t total = gen->num_edges();
  Stopwatch clock;
  ProgressLine progress(show, [&] {
    const uint64_t d = done.load(std::memory_order_relaxed);
    const double t = clock.Seconds();
    char pct[16];
    std::snprintf(pct, sizeof(pct), "%.0f%%", total ? 100.0 * d / total : 100.0);
    return "generate  " + HumanCount(d) + " / " + HumanCount(total) + " edges  " + pct + "  " +
           HumanCount(t > 0 ? d / t : 0) + " edges/s";
  });
  std::vector<graphio::Edge> batch;
  while (gen->NextBatch(&batch, 1 << 16)) {
    s = w->AddEdges(batch);
    if (!s.ok()) break;
    done.fetch_add(batch.size(), std::memory_order_relaxed);
  }
  if (s.ok()) s = w->Finish();
  progress.Stop();
  if (!s.ok()) return FailStatus(s, "writing " + a.out);
  if (!a.quiet) {
    const double t = clock.Seconds();
    const graphio::GeneratorStats& st = gen->stats();
    std::fprintf(stderr,
                 "generated %llu edges (%s, %llu vertices, seed %llu%s%s) in %s: %s edges/s, "
                 "%s\n",
                 static_cast<unsigned long long>(st.emitted), graphio::GraphModelName(g.model),
                 static_cast<unsigned long long>(gen->num_vertices()),
                 static_cast<unsigned long long>(g.seed), a.weights ? ", weighted" : "",
                 st.self_loops_removed + st.duplicates_removed
                     ? (", " + std::to_string(st.self_loops_removed + st.duplicates_removed) +
                        " removed")
                           .c_str()
                     : "",
                 HumanSeconds(t).c_str(), HumanCount(t > 0 ? st.emitted / t : 0).c_str(),
                 graphio::FormatSize(w->bytes()).c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterGenerate(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* c = app->add_subcommand(
      "generate", "Generate a Graph500 Kronecker or uniform random edge stream");
  c->add_option("--kind", a->kind, "kron (Graph500 Kronecker) or uniform")
      ->capture_default_str();
  c->add_option("--scale", a->scale, "2^scale vertices (1..62)")->check(SignedIn(1, 62))->capture_default_str();
  c->add_option("--edge-factor", a->edge_factor, "edges = edge_factor x 2^scale")
      ->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))
      ->capture_default_str();
  c->add_option("--seed", a->seed, "seed of everything random")
      ->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))->capture_default_str();
  c->add_flag("--weights", a->weights, "random weights in (0, 1] (otherwise none: 1.0)");
  c->add_option("--format", a->format, "el (text edge list) or bin (binary stream)")
      ->capture_default_str();
  c->add_option("--out", a->out, "output file, - for stdout")->capture_default_str();
  c->add_option("--num-vertices", a->num_vertices, "uniform only: n vertices instead of 2^scale")
      ->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()));
  c->add_option("--num-edges", a->num_edges, "exactly this many edges instead of edge_factor x n")
      ->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()));
  c->add_option("--shuffle-seed", a->shuffle_seed, "seed of the output order (0: from --seed)")
      ->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()));
  c->add_flag("--no-shuffle", a->no_shuffle, "keep the generation order");
  c->add_flag("--remove-self-loops", a->remove_self_loops, "drop (v, v) edges");
  c->add_flag("--remove-duplicates", a->remove_duplicates,
              "drop repeated (src, dst) pairs (keeps a hash set: not streaming)");
  c->add_option("--progress", a->progress, "auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  c->add_flag("-q,--quiet", a->quiet, "no summary on stderr");
  c->footer(HelpFooter(
      "Streams in O(1) memory, shuffled, deterministic for a given --seed (the same bytes on "
      "every platform). Keeps self-loops and duplicate edges like Graph500 unless asked not to. "
      "Text: 'src dst [weight]' per line; bin: the checksummed SGEDGES1 stream "
      "(docs/input-formats.md)."));
  commands->push_back({c, [a] { return RunGenerate(*a); }});
}

}  // namespace strata::cli
