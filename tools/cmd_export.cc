// strata export: a snapshot of a store as a text edge list or binary edge stream, in external
// IDs, in canonical order: ascending by (source, destination) external IDs; an undirected edge
// appears once, as (smaller, larger). Re-ingesting an export into a store of the same kind and
// exporting again gives the same bytes.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "graphio/edge_writer.h"
#include "graphio/size_parse.h"

namespace strata::cli {

namespace {

struct ExportArgs {
  std::string db;
  std::string format = "el";
  std::string out = "-";
  bool quiet = false;
};

int RunExport(const ExportArgs& a) {
  graphio::EdgeFormat format = graphio::EdgeFormat::kText;
  if (a.format == "el" || a.format == "text") {
    format = graphio::EdgeFormat::kText;
  } else if (a.format == "bin" || a.format == "binary") {
    format = graphio::EdgeFormat::kBinary;
  } else {
    return Fail(kExitUsage, "--format: expected 'el' or 'bin', got '" + a.format + "'");
  }
  Stopwatch clock;
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::ReadOnlyOpen(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  std::unique_ptr<Snapshot> snap = store->db()->GetSnapshot();

  std::unique_ptr<graphio::EdgeWriter> w;
  graphio::EdgeWriterOptions wo;
  wo.format = format;
  wo.weighted = store->weighted();
  s = graphio::EdgeWriter::Open(a.out, wo, &w);
  if (!s.ok()) return FailStatus(s, "--out " + a.out);

  std::vector<std::pair<uint64_t, VertexId>> order;
  s = store->SortedVertices(*snap, &order);
  if (!s.ok()) return FailStatus(s, "listing vertices");
  const bool undirected = store->kind() == GraphKind::kUndirected;
  const bool mapped = store->dictionary() != nullptr;
  std::vector<std::pair<uint64_t, double>> nbrs;
  for (const auto& [ext, v] : order) {
    nbrs.clear();
    s = snap->ScanNeighbors(v, [&](const NeighborChunk& c) {
      for (size_t i = 0; i < c.size; ++i) {
        const uint64_t x = store->ToExternal(c.dst[i]);
        if (undirected && x < ext) continue;  // emitted from the other endpoint
        nbrs.push_back({x, c.weight ? c.weight[i] : 1.0});
      }
      return true;
    });
    if (!s.ok()) return FailStatus(s, "reading vertex " + std::to_string(ext));
    if (mapped) std::sort(nbrs.begin(), nbrs.end());
    for (const auto& [x, wt] : nbrs) {
      s = w->Insert(ext, x, wt);
      if (!s.ok()) return FailStatus(s, "writing " + a.out);
    }
  }
  if (!snap->status().ok()) return FailStatus(snap->status());
  s = w->Finish();
  if (!s.ok()) return FailStatus(s, "writing " + a.out);
  snap.reset();
  s = store->Close();
  if (!s.ok()) return FailStatus(s, "close");
  if (!a.quiet) {
    std::fprintf(stderr, "exported %llu edges of %zu vertices (%s) in %s\n",
                 static_cast<unsigned long long>(w->records()), order.size(),
                 graphio::FormatSize(w->bytes()).c_str(), HumanSeconds(clock.Seconds()).c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterExport(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* c = app->add_subcommand(
      "export", "Write a snapshot as a text edge list or binary edge stream");
  c->add_option("--db", a->db, "store directory")->required();
  c->add_option("--format", a->format, "el (text) or bin (binary)")->capture_default_str();
  c->add_option("--out", a->out, "output file, - for stdout")->capture_default_str();
  c->add_flag("-q,--quiet", a->quiet, "no summary on stderr");
  c->footer(HelpFooter(
      "External IDs, ascending by (source, destination); an undirected edge once, as (smaller, "
      "larger); weights when the store is weighted. Isolated vertices are not part of an edge "
      "list. Exporting, ingesting into a new store of the same kind and exporting again gives "
      "the same bytes."));
  commands->push_back({c, [a] { return RunExport(*a); }});
}

}  // namespace strata::cli
