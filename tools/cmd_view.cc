// strata view: create, drop, list and show the views of a store (include/strata/view.h,
// docs/views.md). Vertex IDs in the files given are external IDs (through the ID dictionary in
// a --ids map store); every vertex named must exist in the store.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"

namespace strata::cli {

namespace {

struct ViewArgs {
  std::string db;
  std::string name;
  std::string vertices;  // file
  std::string edges;     // file
  bool include = false;  // --edges lists the view's edges (default: the edges excluded)
  bool has_min = false, has_max = false;
  double weight_min = 0, weight_max = 0;
  std::string union_of, intersect_of, minus_of;
  bool replace = false;
};

std::vector<std::string> SplitNames(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream ss(s);
  while (std::getline(ss, cur, ',')) out.push_back(cur);
  return out;
}

// Reads whitespace-separated unsigned integers, `per_line` per line (blank lines and lines
// starting with '#' or '%' skipped).
Status ReadIdLines(const std::string& path, int per_line,
                   std::vector<std::vector<uint64_t>>* out) {
  std::ifstream f(path);
  if (!f) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  std::string line;
  uint64_t n = 0;
  while (std::getline(f, line)) {
    ++n;
    size_t i = line.find_first_not_of(" \t\r");
    if (i == std::string::npos || line[i] == '#' || line[i] == '%') continue;
    std::istringstream ls(line);
    std::vector<uint64_t> ids;
    std::string tok;
    while (ls >> tok) {
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
      if (tok[0] == '-' || errno != 0 || *end != '\0') {
        return Status::InvalidArgument(path + " line " + std::to_string(n) +
                                       ": not a vertex ID: '" + tok + "'");
      }
      ids.push_back(v);
    }
    if (static_cast<int>(ids.size()) != per_line) {
      return Status::InvalidArgument(path + " line " + std::to_string(n) + ": expected " +
                                     std::to_string(per_line) + (per_line == 1 ? " ID" : " IDs"));
    }
    out->push_back(std::move(ids));
  }
  return Status::OK();
}

int RunCreate(const ViewArgs& a) {
  int ops = 0;
  ops += !a.union_of.empty();
  ops += !a.intersect_of.empty();
  ops += !a.minus_of.empty();
  const bool filter = !a.vertices.empty() || !a.edges.empty() || a.has_min || a.has_max;
  if (ops > 1 || (ops == 1 && filter)) {
    return Fail(kExitUsage,
                "give one of --union, --intersect, --minus, or filters (--vertices, --edges, "
                "--weight-min, --weight-max), not both");
  }
  if (ops == 0 && !filter) {
    return Fail(kExitUsage,
                "nothing defines the view: give --vertices, --edges, --weight-min/--weight-max, "
                "--union, --intersect or --minus");
  }
  if (a.include && a.edges.empty()) return Fail(kExitUsage, "--include-edges needs --edges");
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::OpenOptions(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  std::unique_ptr<Snapshot> snap = store->db()->GetSnapshot();
  ViewDefinition d;
  if (ops == 1) {
    d.kind = !a.union_of.empty()       ? ViewDefinition::Kind::kUnion
             : !a.intersect_of.empty() ? ViewDefinition::Kind::kIntersection
                                       : ViewDefinition::Kind::kDifference;
    d.operands = SplitNames(!a.union_of.empty()       ? a.union_of
                            : !a.intersect_of.empty() ? a.intersect_of
                                                      : a.minus_of);
  }
  if (!a.vertices.empty()) {
    std::vector<std::vector<uint64_t>> rows;
    s = ReadIdLines(a.vertices, 1, &rows);
    if (!s.ok()) return FailStatus(s, "--vertices");
    d.has_vertices = true;
    for (const auto& r : rows) {
      VertexId v;
      s = store->ToInternal(*snap, r[0], &v);
      if (!s.ok()) return FailStatus(s, "--vertices");
      d.vertices.push_back(v);
    }
  }
  if (!a.edges.empty()) {
    std::vector<std::vector<uint64_t>> rows;
    s = ReadIdLines(a.edges, 2, &rows);
    if (!s.ok()) return FailStatus(s, "--edges");
    d.edge_mode = a.include ? ViewDefinition::EdgeMode::kInclude : ViewDefinition::EdgeMode::kExclude;
    for (const auto& r : rows) {
      VertexId u, v;
      s = store->ToInternal(*snap, r[0], &u);
      if (s.ok()) s = store->ToInternal(*snap, r[1], &v);
      if (!s.ok()) return FailStatus(s, "--edges");
      d.edges.emplace_back(u, v);
    }
  }
  if (a.has_min || a.has_max) {
    d.has_weight_range = true;
    d.weight_min = a.has_min ? a.weight_min : -std::numeric_limits<double>::infinity();
    d.weight_max = a.has_max ? a.weight_max : std::numeric_limits<double>::infinity();
  }
  snap.reset();
  s = store->db()->CreateView(a.name, d, a.replace);
  if (!s.ok()) return FailStatus(s);
  s = store->Close();
  if (!s.ok()) return FailStatus(s, "close");
  std::fprintf(stderr, "view %s: %s\n", a.name.c_str(), d.Describe().c_str());
  return kExitOk;
}

int RunDrop(const ViewArgs& a) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::OpenOptions(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  s = store->db()->DropView(a.name);
  if (!s.ok()) return FailStatus(s);
  s = store->Close();
  if (!s.ok()) return FailStatus(s, "close");
  return kExitOk;
}

int RunList(const ViewArgs& a) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::ReadOnlyOpen(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  std::vector<ViewInfo> views;
  s = store->db()->ListViews(&views);
  if (!s.ok()) return FailStatus(s);
  for (const ViewInfo& v : views) {
    std::printf("%s\t%s\n", v.name.c_str(), v.definition.Describe().c_str());
  }
  s = store->Close();
  return s.ok() ? kExitOk : FailStatus(s, "close");
}

int RunShow(const ViewArgs& a) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::ReadOnlyOpen(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  std::unique_ptr<Snapshot> snap;
  s = store->db()->GetViewSnapshot(a.name, &snap);
  if (!s.ok()) return FailStatus(s);
  std::vector<ViewInfo> views;
  s = store->db()->ListViews(&views);
  if (!s.ok()) return FailStatus(s);
  for (const ViewInfo& v : views) {
    if (v.name != a.name) continue;
    std::printf("name %s\ndefinition %s\ncreated_ts %" PRIu64 "\n", v.name.c_str(),
                v.definition.Describe().c_str(), v.created);
  }
  GraphCounts counts;
  s = CountGraph(*snap, &counts);
  if (!s.ok()) return FailStatus(s, "reading the view for its counts");
  std::printf("snapshot_ts %" PRIu64 "\nvertices %" PRIu64 "\nedges %" PRIu64
              "\nentries %" PRIu64 "\n",
              snap->timestamp(), counts.vertices, counts.edges, counts.entries);
  snap.reset();
  s = store->Close();
  return s.ok() ? kExitOk : FailStatus(s, "close");
}

}  // namespace

void RegisterView(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<ViewArgs>();
  CLI::App* v = app->add_subcommand("view", "Named subgraphs: create, drop, list, show");
  v->add_option("--db", a->db, "store directory")->required();
  v->require_subcommand(1);
  v->footer(HelpFooter(
      "A view is a vertex set and/or edge filter, or a set operation over other views; "
      "`strata analyze --view NAME` runs a kernel on it (docs/views.md). Vertex IDs in files are "
      "external IDs, one vertex (--vertices) or one 'U V' edge (--edges) per line.\n"
      "Usage: strata view --db DIR create NAME [filters | --union A,B | --intersect A,B | "
      "--minus A,B] | drop NAME | list | show NAME"));

  CLI::App* c = v->add_subcommand("create", "define view NAME");
  c->add_option("name", a->name, "view name ([A-Za-z0-9_.-], up to 128)")->required();
  c->add_option("--vertices", a->vertices, "file of the view's vertices, one per line");
  c->add_option("--edges", a->edges,
                "file of edges 'U V', one per line: excluded from the view (closures), or its "
                "only edges with --include-edges");
  c->add_flag("--include-edges", a->include, "--edges lists the view's edges, not excluded ones");
  c->add_option("--weight-min", a->weight_min, "keep edges of weight >= X")
      ->each([a](const std::string&) { a->has_min = true; });
  c->add_option("--weight-max", a->weight_max, "keep edges of weight <= Y")
      ->each([a](const std::string&) { a->has_max = true; });
  c->add_option("--union", a->union_of, "A,B,...: the union of views");
  c->add_option("--intersect", a->intersect_of, "A,B,...: the intersection of views");
  c->add_option("--minus", a->minus_of, "A,B,...: A's vertices, A's edges not in B, ...");
  c->add_flag("--replace", a->replace, "redefine NAME if it exists");
  commands->push_back({c, [a] { return RunCreate(*a); }});

  CLI::App* d = v->add_subcommand("drop", "drop view NAME");
  d->add_option("name", a->name, "view name")->required();
  commands->push_back({d, [a] { return RunDrop(*a); }});

  CLI::App* l = v->add_subcommand("list", "the views, one per line: name, tab, definition");
  commands->push_back({l, [a] { return RunList(*a); }});

  CLI::App* s = v->add_subcommand(
      "show", "view NAME: definition, creation timestamp, vertices and edges now");
  s->add_option("name", a->name, "view name")->required();
  commands->push_back({s, [a] { return RunShow(*a); }});
}

}  // namespace strata::cli
