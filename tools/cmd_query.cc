// strata query: point reads on a snapshot of a store: neighbors V, degree V, edge U V, stats.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "graphio/size_parse.h"

namespace strata::cli {

namespace {

struct QueryArgs {
  std::string db;
  bool in = false;        // neighbors/degree: in-direction
  uint64_t v = 0;         // neighbors, degree
  uint64_t u = 0, w = 0;  // edge U V
  bool json = false;      // stats
};

enum class QueryKind { kNeighbors, kDegree, kEdge, kStats };

// The weight as text: integers without a fraction, others in the shortest exact form.
std::string WeightText(double w) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", w);
  // Prefer the shortest representation that reads back exactly.
  for (int p = 1; p <= 17; ++p) {
    char t[40];
    std::snprintf(t, sizeof(t), "%.*g", p, w);
    if (std::strtod(t, nullptr) == w) return t;
  }
  return buf;
}

int RunQuery(QueryKind kind, const QueryArgs& a) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(a.db, Store::ReadOnlyOpen(), &store);
  if (!s.ok()) return Fail(kExitError, OpenErrorMessage(a.db, s));
  std::unique_ptr<Snapshot> snap = store->db()->GetSnapshot();
  const Direction dir = a.in ? Direction::kIn : Direction::kOut;
  if (a.in && store->kind() == GraphKind::kDirected) {
    return Fail(kExitError, "--in: store '" + a.db +
                                "' is directed without in-edges (create it with --in-edges)");
  }
  switch (kind) {
    case QueryKind::kNeighbors: {
      VertexId v;
      s = store->ToInternal(*snap, a.v, &v);
      if (!s.ok()) return FailStatus(s);
      std::vector<VertexId> dst;
      std::vector<double> wt;
      s = snap->GetNeighbors(v, &dst, store->weighted() ? &wt : nullptr, dir);
      if (!s.ok()) return FailStatus(s);
      std::vector<std::pair<uint64_t, double>> out(dst.size());
      for (size_t i = 0; i < dst.size(); ++i) {
        out[i] = {store->ToExternal(dst[i]), wt.empty() ? 1.0 : wt[i]};
      }
      if (store->dictionary() != nullptr) std::sort(out.begin(), out.end());
      for (const auto& [x, w] : out) {
        if (store->weighted()) {
          std::printf("%" PRIu64 " %s\n", x, WeightText(w).c_str());
        } else {
          std::printf("%" PRIu64 "\n", x);
        }
      }
      break;
    }
    case QueryKind::kDegree: {
      VertexId v;
      s = store->ToInternal(*snap, a.v, &v);
      if (!s.ok()) return FailStatus(s);
      uint64_t d = snap->Degree(v, dir);
      if (!snap->status().ok()) return FailStatus(snap->status());
      std::printf("%" PRIu64 "\n", d);
      break;
    }
    case QueryKind::kEdge: {
      VertexId u, v;
      s = store->ToInternal(*snap, a.u, &u);
      if (s.ok()) s = store->ToInternal(*snap, a.w, &v);
      if (!s.ok()) return FailStatus(s);
      double w = 0;
      s = snap->GetEdge(u, v, &w);
      if (s.IsNotFound()) {
        return Fail(kExitNoEdge, "no edge (" + std::to_string(a.u) + ", " + std::to_string(a.w) +
                                     ")");
      }
      if (!s.ok()) return FailStatus(s);
      std::printf("%s\n", WeightText(w).c_str());
      break;
    }
    case QueryKind::kStats: {
      const Stopwatch clock;
      // The engine's counters, without its graph walk: DB::GetStats(true) counts on a snapshot
      // of its own (from the vertex entries' degrees). The counts are taken here on `snap`,
      // reading every edge block (a damaged one is an error, not a smaller count).
      DBStats st = store->db()->GetStats(false);
      GraphCounts counts;
      s = CountGraph(*snap, &counts);
      if (!s.ok()) return FailStatus(s, "reading the store for its counts");
      st.num_vertices = counts.vertices;
      st.num_edges = counts.entries;
      const StoreInfo& info = store->info();
      uint64_t segments = 0, segment_bytes = 0, entries = 0;
      for (const auto& [num, f] : info.state.files) {
        ++segments;
        segment_bytes += f.size_bytes;
        if (f.tag == 0) entries += f.num_edges;
      }
      const uint64_t disk = DirectoryBytes(a.db);
      char per_edge[32] = "-";
      if (counts.edges > 0) {
        std::snprintf(per_edge, sizeof(per_edge), "%.2f", double(disk) / counts.edges);
      }
      if (a.json) {
        std::printf(
            "{\"store\": \"%s\", \"kind\": \"%s\", \"weighted\": %s, \"ids\": \"%s\", "
            "\"mapped_ids\": %" PRIu64 ", \"vertices\": %" PRIu64 ", \"edges\": %" PRIu64
            ", \"stored_entries\": %" PRIu64 ", \"vertex_id_bound\": %" PRIu64
            ", \"last_committed\": %" PRIu64 ", \"last_flushed\": %" PRIu64
            ", \"segments\": %" PRIu64 ", \"segment_bytes\": %" PRIu64
            ", \"segment_edge_entries\": %" PRIu64
            ", \"disk_bytes\": %" PRIu64 ", \"disk_bytes_per_edge\": %s}\n",
            a.db.c_str(), KindName(store->kind()), store->weighted() ? "true" : "false",
            IdModeName(store->ids()),
            store->dictionary() ? store->dictionary()->size() : uint64_t{0}, st.num_vertices,
            counts.edges, st.num_edges, snap->VertexIdBound(), st.last_committed,
            info.state.last_flushed_ts, segments, segment_bytes, entries, disk,
            counts.edges > 0 ? per_edge : "null");
      } else {
        std::printf("store           %s\n", a.db.c_str());
        std::printf("kind            %s%s\n", KindName(store->kind()),
                    store->weighted() ? ", weighted" : ", unweighted");
        std::printf("ids             %s", IdModeName(store->ids()));
        if (store->dictionary()) {
          std::printf(" (%" PRIu64 " mapped, dictionary %s)", store->dictionary()->size(),
                      graphio::FormatSize(store->dictionary()->MemoryBytes()).c_str());
        }
        std::printf("\n");
        std::printf("vertices        %" PRIu64 "\n", st.num_vertices);
        std::printf("edges           %" PRIu64 "%s\n", counts.edges,
                    store->kind() == GraphKind::kUndirected ? " (undirected; stored both ways)"
                                                            : "");
        std::printf("vertex ID bound %" PRIu64 "\n", snap->VertexIdBound());
        std::printf("last committed  %" PRIu64 " (last flushed %" PRIu64 ")\n",
                    st.last_committed, info.state.last_flushed_ts);
        std::printf("segments        %" PRIu64 " (%s, %" PRIu64 " edge entries)\n", segments,
                    graphio::FormatSize(segment_bytes).c_str(), entries);
        std::printf("disk            %s (%s B per edge)\n", graphio::FormatSize(disk).c_str(),
                    per_edge);
        std::printf("engine          %s\n", st.ToString().c_str());
        std::printf("stats time      %s\n", HumanSeconds(clock.Seconds()).c_str());
      }
      break;
    }
  }
  snap.reset();
  if (std::fflush(stdout) != 0) return Fail(kExitError, "writing to stdout failed");
  s = store->Close();
  if (!s.ok()) return FailStatus(s, "close");
  return kExitOk;
}

}  // namespace

void RegisterQuery(CLI::App* app, CommandList* commands) {
  auto a = std::make_shared<QueryArgs>();
  CLI::App* q = app->add_subcommand(
      "query", "Point reads: neighbors V, degree V, edge U V, stats");
  q->add_option("--db", a->db, "store directory")->required();
  q->require_subcommand(1);
  q->footer(HelpFooter(
      "Vertex IDs are external IDs (as ingested); an unknown vertex is an error (exit 1). "
      "Usage: strata query --db DIR neighbors V | degree V | edge U V | stats"));

  CLI::App* n = q->add_subcommand("neighbors", "out-neighbors of V, one per line (with weight "
                                               "when the store is weighted), ascending");
  n->add_option("V", a->v, "vertex")->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))->required();
  n->add_flag("--in", a->in, "in-neighbors instead (needs in-edges or an undirected store)");
  n->fallthrough();
  commands->push_back({n, [a] { return RunQuery(QueryKind::kNeighbors, *a); }});

  CLI::App* d = q->add_subcommand("degree", "out-degree of V");
  d->add_option("V", a->v, "vertex")->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))->required();
  d->add_flag("--in", a->in, "in-degree instead (needs in-edges or an undirected store)");
  d->fallthrough();
  commands->push_back({d, [a] { return RunQuery(QueryKind::kDegree, *a); }});

  CLI::App* e = q->add_subcommand(
      "edge", "prints the weight of edge (U, V) (1 when unweighted); exit 3 if U and V exist "
              "but the edge does not");
  e->add_option("U", a->u, "source vertex")->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))->required();
  e->add_option("V", a->w, "destination vertex")->check(UnsignedIn(0, std::numeric_limits<uint64_t>::max()))->required();
  e->fallthrough();
  commands->push_back({e, [a] { return RunQuery(QueryKind::kEdge, *a); }});

  CLI::App* st = q->add_subcommand("stats", "store statistics (counts walk the snapshot)");
  st->add_flag("--json", a->json, "one JSON object");
  st->fallthrough();
  commands->push_back({st, [a] { return RunQuery(QueryKind::kStats, *a); }});
}

}  // namespace strata::cli
