// End-to-end tests of the `strata` command-line tool: every test drives the binary
// ($STRATA_BIN_DIR/strata) through fork/exec and checks its exit status, stdout and stderr.
//
//  - generate -> ingest -> query -> analyze -> export -> re-ingest -> export: equal bytes;
//  - the LDBC Graphalytics example graphs ($STRATA_TESTDATA_DIR/graphalytics/example) ingested
//    through the CLI reproduce the expected BFS, PR, WCC (and SSSP, CDLP, LCC) outputs under the
//    specification's comparison rules;
//  - every bad input tried below (options, numbers, files, stores) gives one line on stderr and
//    a non-zero exit.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strata/db.h"
#include "tests/util/cli_run.h"
#include "tests/util/file_util.h"
#include "tests/util/temp_dir.h"
#include "graphio/graphalytics_io.h"

namespace strata {
namespace {

using testing::CliResult;
using testing::DescribeRun;
using testing::ReadWholeFile;
using testing::RunStrata;
using testing::TempDir;
using testing::WriteWholeFile;

const std::string kExample = std::string(STRATA_TESTDATA_DIR) + "/graphalytics/example";

// Runs and expects exit code 0.
CliResult Ok(const std::vector<std::string>& args, const std::string& input = "") {
  CliResult r = RunStrata(args, input);
  EXPECT_EQ(r.code, 0) << DescribeRun(args, r);
  return r;
}

// Runs and expects a failure with `code` and exactly one line on stderr containing every
// string of `needles`.
CliResult Fails(int code, const std::vector<std::string>& args,
                const std::vector<std::string>& needles, const std::string& input = "") {
  CliResult r = RunStrata(args, input);
  EXPECT_EQ(r.code, code) << DescribeRun(args, r);
  EXPECT_FALSE(r.err.empty()) << DescribeRun(args, r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line:\n" << r.err;
  if (!r.err.empty()) {
    EXPECT_EQ(r.err.back(), '\n');
  }
  for (const std::string& n : needles) {
    EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
  }
  return r;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The edge set of a text edge list (inserts and deletes applied in order; weights ignored).
std::set<std::pair<uint64_t, uint64_t>> EdgeSet(const std::string& text, bool undirected) {
  std::set<std::pair<uint64_t, uint64_t>> s;
  for (const std::string& l : Lines(text)) {
    if (l.empty() || l[0] == '#') continue;
    std::istringstream in(l);
    std::string a;
    in >> a;
    bool del = a == "-";
    uint64_t u, v;
    if (del) {
      in >> u >> v;
    } else {
      u = std::stoull(a);
      in >> v;
    }
    if (undirected && u > v) std::swap(u, v);
    if (del) {
      s.erase({u, v});
    } else {
      s.insert({u, v});
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------------

TEST(CliTest, HelpAndUsage) {
  for (const char* cmd : {"generate", "ingest", "analyze", "query", "export", "compact",
                          "inspect", "verify"}) {
    CliResult r = Ok({cmd, "--help"});
    EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << cmd;
  }
  CliResult r = Ok({"--help"});
  EXPECT_NE(r.out.find("ingest"), std::string::npos);
  Fails(2, {}, {"subcommand"});
  Fails(2, {"frobnicate"}, {"unknown command"});
}

// ingest --drop-written-pages reaches the store: its segments leave the page cache after their
// fsync (but for what the store reads back), without the flag they stay.
TEST(CliTest, IngestDropWrittenPages) {
  TempDir tmp;
  if (testing::OnTmpfs(tmp.path())) GTEST_SKIP() << "tmpfs pages cannot be dropped";
  const std::string g = tmp.path() + "/g.el";
  Ok({"generate", "--kind", "kron", "--scale", "14", "--edge-factor", "16", "--seed", "3",
      "--format", "el", "--out", g, "-q"});
  double share[2] = {0, 0};
  for (int drop = 0; drop < 2; ++drop) {
    const std::string db = tmp.path() + (drop ? "/dropped" : "/kept");
    std::vector<std::string> args = {"ingest", "--db", db, "--input", g, "--format", "el",
                                     "--memory-budget", "8M", "--memgraph-bytes", "1M",
                                     "--wal", "off", "-q"};
    if (drop) args.push_back("--drop-written-pages");
    Ok(args);
    const auto [resident, pages] = testing::SegmentPages(db);
    ASSERT_GT(pages, 64u);
    share[drop] = static_cast<double>(resident) / static_cast<double>(pages);
    std::printf("%s: %zu of %zu segment pages resident\n", db.c_str(), resident, pages);
  }
  if (share[0] < 0.9) GTEST_SKIP() << "written pages do not stay cached on this file system";
  EXPECT_LT(share[1], share[0] / 2);
}

TEST(CliTest, GenerateIngestQueryAnalyzeExportRoundTrip) {
  TempDir tmp;
  const std::string g = tmp.path() + "/g.el", s1 = tmp.path() + "/s1", s2 = tmp.path() + "/s2";
  Ok({"generate", "--kind", "kron", "--scale", "10", "--edge-factor", "8", "--seed", "7",
      "--weights", "--format", "el", "--out", g});
  const std::string text = ReadWholeFile(g);
  ASSERT_EQ(Lines(text).size(), 8192u);
  // Deterministic: the same seed gives the same bytes (to stdout this time).
  EXPECT_EQ(Ok({"generate", "--kind", "kron", "--scale", "10", "--edge-factor", "8", "--seed",
                "7", "--weights", "--format", "el", "--out", "-", "-q"})
                .out,
            text);
  const auto edges = EdgeSet(text, false);

  CliResult ing = Ok({"ingest", "--db", s1, "--input", g, "--format", "el", "--weighted",
                   "--batch", "1000", "--memory-budget", "8M", "--memgraph-bytes", "256K"});
  EXPECT_NE(ing.err.find("ingested 8192 edge records"), std::string::npos) << ing.err;

  // query: degree and neighbors against the edge list.
  std::map<uint64_t, std::vector<uint64_t>> adj;
  for (const auto& [u, v] : edges) adj[u].push_back(v);
  const auto& [hub, hub_nbrs] = *std::max_element(
      adj.begin(), adj.end(),
      [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  EXPECT_EQ(Ok({"query", "--db", s1, "degree", std::to_string(hub)}).out,
            std::to_string(hub_nbrs.size()) + "\n");
  std::vector<std::string> nl =
      Lines(Ok({"query", "--db", s1, "neighbors", std::to_string(hub)}).out);
  ASSERT_EQ(nl.size(), hub_nbrs.size());
  for (size_t i = 0; i < nl.size(); ++i) {
    EXPECT_EQ(nl[i].substr(0, nl[i].find(' ')), std::to_string(hub_nbrs[i]));
  }
  // edge U V prints the weight; the last insert of a duplicate wins.
  std::map<std::pair<uint64_t, uint64_t>, std::string> weight;
  for (const std::string& l : Lines(text)) {
    std::istringstream in(l);
    uint64_t u, v;
    std::string w;
    in >> u >> v >> w;
    weight[{u, v}] = w;
  }
  const auto& [e0, w0] = *weight.begin();
  EXPECT_EQ(std::stod(Ok({"query", "--db", s1, "edge", std::to_string(e0.first),
                          std::to_string(e0.second)})
                          .out),
            std::stod(w0));
  CliResult st = Ok({"query", "--db", s1, "stats"});
  EXPECT_NE(st.out.find("edges           " + std::to_string(edges.size())), std::string::npos)
      << st.out;
  CliResult js = Ok({"query", "--db", s1, "stats", "--json"});
  EXPECT_NE(js.out.find("\"edges\": " + std::to_string(edges.size())), std::string::npos);

  // analyze: every algorithm runs and prints one line per vertex, ascending.
  const std::string src = std::to_string(hub);
  for (std::vector<std::string> a : std::vector<std::vector<std::string>>{
           {"pr"}, {"bfs", "--source", src}, {"wcc"}, {"sssp", "--source", src},
           {"cdlp", "--iterations", "3"}, {"lcc"}}) {
    std::vector<std::string> args = {"analyze", "--db", s1, "--algo"};
    args.insert(args.end(), a.begin(), a.end());
    CliResult r = Ok(args);
    std::vector<std::string> lines = Lines(r.out);
    std::set<uint64_t> vertices;
    for (const auto& [u, v] : edges) vertices.insert(u), vertices.insert(v);
    ASSERT_EQ(lines.size(), vertices.size()) << a[0];
    uint64_t prev = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      uint64_t id = std::stoull(lines[i]);
      if (i > 0) {
        EXPECT_LT(prev, id) << a[0];
      }
      prev = id;
    }
    EXPECT_NE(r.err.find("kernel"), std::string::npos) << r.err;
  }
  // --cache-bytes changes where lists are read from, never the result (PageRank sums each list
  // in the same order either way: bit-identical output).
  const std::string pr_default = Ok({"analyze", "--db", s1, "--algo", "pr", "-q"}).out;
  EXPECT_EQ(Ok({"analyze", "--db", s1, "--algo", "pr", "-q", "--cache-bytes", "0"}).out,
            pr_default);
  EXPECT_EQ(Ok({"analyze", "--db", s1, "--algo", "pr", "-q", "--cache-bytes", "4K"}).out,
            pr_default);
  // The summary says where the iterations read the lists from: all kept by default (the budget
  // sized from the machine, at least 256 MiB), streamed when they do not fit.
  {
    const std::string err = Ok({"analyze", "--db", s1, "--algo", "pr"}).err;
    EXPECT_NE(err.find("; list cache "), std::string::npos) << err;
    EXPECT_EQ(err.find("did not fit"), std::string::npos) << err;
    const size_t of = err.find(" MiB of ");
    ASSERT_NE(of, std::string::npos) << err;
    EXPECT_GE(std::stoull(err.substr(of + 8)), 256u) << err;
    // Then the run's two phases.
    const size_t ph = err.find("; layout and list cache ");
    ASSERT_NE(ph, std::string::npos) << err;
    EXPECT_NE(err.find(" s, iterations ", ph), std::string::npos) << err;
    const std::string small =
        Ok({"analyze", "--db", s1, "--algo", "pr", "--cache-bytes", "4K"}).err;
    EXPECT_NE(small.find("list cache 0 MiB of 0 MiB ("), std::string::npos) << small;
    EXPECT_NE(small.find("blocks of 4096 vertices did not fit: streamed every iteration)"),
              std::string::npos) << small;
  }
  EXPECT_EQ(Ok({"analyze", "--db", s1, "--algo", "wcc", "-q", "--cache-bytes", "1M"}).out,
            Ok({"analyze", "--db", s1, "--algo", "wcc", "-q"}).out);
  Fails(2, {"analyze", "--db", s1, "--algo", "pr", "--cache-bytes", "lots"}, {"--cache-bytes"});
  Fails(2, {"analyze", "--db", s1, "--algo", "tc", "--cache-bytes", "1M"},
        {"--cache-bytes applies to bfs, pr, sssp and wcc only"});
  EXPECT_NE(Ok({"analyze", "--db", s1, "--algo", "tc"}).out.find("triangles "), std::string::npos);
  // --stats: the same depths, and one "bfs step" line per depth reached, the first expanding
  // the source alone; the found counts add up to the reached vertices other than the source.
  {
    CliResult plain = Ok({"analyze", "--db", s1, "--algo", "bfs", "--source", src, "-q"});
    CliResult st = Ok({"analyze", "--db", s1, "--algo", "bfs", "--source", src, "-q", "--stats"});
    EXPECT_EQ(st.out, plain.out);
    int64_t max_depth = -1;
    uint64_t reached = 0;
    for (const std::string& l : Lines(plain.out)) {
      const int64_t dep = std::stoll(l.substr(l.find(' ') + 1));
      if (dep == INT64_MAX) continue;
      ++reached;
      max_depth = std::max(max_depth, dep);
    }
    ASSERT_GE(max_depth, 1);
    EXPECT_NE(st.err.find("bfs layout: "), std::string::npos) << st.err;
    uint64_t steps = 0, found = 0;
    for (const std::string& l : Lines(st.err)) {
      if (l.rfind("bfs step ", 0) != 0) continue;
      if (steps == 0) {
        EXPECT_NE(l.find("frontier 1,"), std::string::npos) << l;
      }
      const size_t f = l.find("found ");
      ASSERT_NE(f, std::string::npos) << l;
      found += std::stoull(l.substr(f + 6));
      ++steps;
    }
    EXPECT_EQ(steps, static_cast<uint64_t>(max_depth) + 1) << st.err;
    EXPECT_EQ(found + 1, reached) << st.err;
  }
  Fails(2, {"analyze", "--db", s1, "--algo", "pr", "--stats"}, {"--stats applies to bfs only"});
  std::vector<std::string> hop1 = Lines(Ok({"analyze", "--db", s1, "--algo", "khop", "--source",
                                            src, "--k", "1"})
                                            .out);
  // Within one hop: the hub and its distinct out-neighbors (the hub once, even with a self-loop).
  const bool self_loop = std::find(hub_nbrs.begin(), hub_nbrs.end(), hub) != hub_nbrs.end();
  EXPECT_EQ(hop1.size(), hub_nbrs.size() + (self_loop ? 0 : 1));
  CliResult scan = Ok({"analyze", "--db", s1, "--algo", "scan"});
  EXPECT_NE(scan.out.find("edges " + std::to_string(edges.size()) + "\n"), std::string::npos);

  // export -> re-ingest -> export: equal, in text and binary.
  const std::string x1 = tmp.path() + "/x1.el", x2 = tmp.path() + "/x2.el";
  Ok({"export", "--db", s1, "--format", "el", "--out", x1});
  EXPECT_EQ(EdgeSet(ReadWholeFile(x1), false), edges);
  Ok({"ingest", "--db", s2, "--input", x1, "--format", "el", "--weighted"});
  Ok({"export", "--db", s2, "--format", "el", "--out", x2});
  EXPECT_EQ(ReadWholeFile(x1), ReadWholeFile(x2));
  const std::string b1 = tmp.path() + "/x1.bin", s3 = tmp.path() + "/s3";
  Ok({"export", "--db", s1, "--format", "bin", "--out", b1});
  Ok({"ingest", "--db", s3, "--input", b1, "--format", "bin", "--weighted"});
  EXPECT_EQ(Ok({"export", "--db", s3, "--format", "el", "--out", "-", "-q"}).out,
            ReadWholeFile(x1));

  // A later ingest reads kind and weights from the store: no flags needed. Deletes too.
  const auto& [d0, dw] = *weight.rbegin();
  const std::string del = "- " + std::to_string(d0.first) + " " + std::to_string(d0.second) + "\n";
  Ok({"ingest", "--db", s2, "--input", "-", "--format", "el"}, del);
  Fails(3, {"query", "--db", s2, "edge", std::to_string(d0.first), std::to_string(d0.second)},
        {"no edge"});

  // inspect, verify, compact.
  CliResult ins = Ok({"inspect", "--db", s1});
  EXPECT_NE(ins.out.find("level "), std::string::npos) << ins.out;
  EXPECT_NE(ins.out.find("WAL"), std::string::npos) << ins.out;
  EXPECT_NE(ins.out.find("bytes per vertex"), std::string::npos) << ins.out;
  CliResult insj = Ok({"inspect", "--db", s1, "--json"});
  EXPECT_EQ(insj.out.front(), '{');
  EXPECT_NE(insj.out.find("\"levels\""), std::string::npos);
  // Every segment inspect names is a file in the store, in both forms of its output.
  size_t named = 0;
  for (const std::string* out : {&ins.out, &insj.out}) {
    for (size_t at = out->find(".seg"); at != std::string::npos; at = out->find(".seg", at + 4)) {
      size_t b = at;
      while (b > 0 && std::isdigit(static_cast<unsigned char>((*out)[b - 1]))) --b;
      const std::string name = out->substr(b, at + 4 - b);
      EXPECT_TRUE(std::filesystem::exists(s1 + "/" + name)) << name << " is not in " << s1;
      ++named;
    }
  }
  EXPECT_GT(named, 0u);
  Ok({"verify", "--db", s1});
  CliResult c = RunStrata({"compact", "--db", s1, "--full"});
  if (c.code != 0) {
    EXPECT_EQ(c.code, 1);
    EXPECT_NE(c.err.find("NotSupported"), std::string::npos) << c.err;
  }
  EXPECT_EQ(Ok({"export", "--db", s1, "--out", "-", "-q"}).out, ReadWholeFile(x1));
  Ok({"verify", "--db", s1});
}

TEST(CliTest, StdinAndBinaryGenerate) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  CliResult gen = Ok({"generate", "--kind", "uniform", "--scale", "8", "--edge-factor", "4",
                   "--format", "bin", "--out", "-", "-q"});
  ASSERT_EQ(gen.out.substr(0, 8), "SGEDGES1");
  Ok({"ingest", "--db", db, "--input", "-", "--format", "bin", "--undirected"}, gen.out);
  CliResult st = Ok({"query", "--db", db, "stats"});
  EXPECT_NE(st.out.find("undirected"), std::string::npos);
  // Undirected: each logical edge once in the export, smaller ID first.
  for (const std::string& l : Lines(Ok({"export", "--db", db, "-q"}).out)) {
    std::istringstream in(l);
    uint64_t u, v;
    in >> u >> v;
    EXPECT_LE(u, v);
  }
}

// ---------------------------------------------------------------------------------------------
// The Graphalytics examples through the CLI.

std::map<uint64_t, graphio::GraphalyticsValue> ReadValues(const std::string& path) {
  std::vector<graphio::GraphalyticsValue> v;
  Status s = graphio::ReadGraphalyticsOutput(path, &v);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::map<uint64_t, graphio::GraphalyticsValue> m;
  for (const auto& x : v) m[x.vertex] = x;
  return m;
}

void CheckGraphalytics(const std::string& name, bool undirected) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  graphio::GraphalyticsProperties props;
  ASSERT_TRUE(
      graphio::ReadGraphalyticsProperties(kExample + "/" + name + ".properties", &props).ok());
  std::vector<std::string> args = {"ingest", "--db", db, "--format", "graphalytics", "--vertices",
                                   props.vertex_path, "--edges", props.edge_path, "--weighted"};
  args.push_back(undirected ? "--undirected" : "--directed");
  Ok(args);

  auto run = [&](const std::string& algo, std::vector<std::string> extra) {
    const std::string out = tmp.path() + "/" + algo + ".out";
    std::vector<std::string> a = {"analyze", "--db", db, "--algo", algo, "--out", out};
    a.insert(a.end(), extra.begin(), extra.end());
    Ok(a);
    return ReadValues(out);
  };
  auto expected = [&](const char* suffix) {
    return ReadValues(kExample + "/" + name + "-" + suffix);
  };

  // BFS and CDLP: exact.
  {
    auto got = run("bfs", {"--source", std::to_string(*props.bfs_source_vertex)});
    auto want = expected("BFS");
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [v, w] : want) EXPECT_EQ(got[v].text, w.text) << name << " BFS vertex " << v;
  }
  {
    auto got = run("cdlp", {"--iterations", std::to_string(*props.cdlp_max_iterations)});
    auto want = expected("CDLP");
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [v, w] : want) EXPECT_EQ(got[v].integer, w.integer) << name << " CDLP " << v;
  }
  // PR, SSSP, LCC: within 1e-4 relative (equal infinities match).
  auto close = [&](const char* algo, const std::map<uint64_t, graphio::GraphalyticsValue>& got,
                   const std::map<uint64_t, graphio::GraphalyticsValue>& want) {
    ASSERT_EQ(got.size(), want.size()) << algo;
    for (const auto& [v, w] : want) {
      const double r = w.real, s = got.at(v).real;
      if (std::isinf(r)) {
        EXPECT_EQ(r, s) << name << " " << algo << " vertex " << v;
      } else {
        EXPECT_LE(std::fabs(r - s), 1e-4 * std::fabs(r)) << name << " " << algo << " vertex " << v;
      }
    }
  };
  char damping[32];
  std::snprintf(damping, sizeof(damping), "%.17g", *props.pr_damping_factor);
  close("PR",
        run("pr", {"--iterations", std::to_string(*props.pr_num_iterations), "--damping", damping}),
        expected("PR"));
  close("SSSP", run("sssp", {"--source", std::to_string(*props.sssp_source_vertex)}),
        expected("SSSP"));
  close("LCC", run("lcc", {}), expected("LCC"));
  // WCC: equivalent up to relabelling (a bijection between labels).
  {
    auto got = run("wcc", {});
    auto want = expected("WCC");
    ASSERT_EQ(got.size(), want.size());
    std::map<uint64_t, uint64_t> fwd, back;
    for (const auto& [v, w] : want) {
      const uint64_t a = w.integer, b = got[v].integer;
      auto [f, fi] = fwd.insert({a, b});
      auto [bk, bi] = back.insert({b, a});
      EXPECT_EQ(f->second, b) << name << " WCC vertex " << v;
      EXPECT_EQ(bk->second, a) << name << " WCC vertex " << v;
    }
  }
  // Map mode: queries take the dataset's IDs.
  CliResult d = Ok({"query", "--db", db, "degree", std::to_string(*props.bfs_source_vertex)});
  EXPECT_FALSE(d.out.empty());
}

TEST(CliTest, GraphalyticsExampleDirected) { CheckGraphalytics("example-directed", false); }
TEST(CliTest, GraphalyticsExampleUndirected) { CheckGraphalytics("example-undirected", true); }

TEST(CliTest, GraphalyticsFromPropertiesFile) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--format", "graphalytics", "--properties",
      kExample + "/example-undirected.properties"});
  CliResult st = Ok({"query", "--db", db, "stats"});
  EXPECT_NE(st.out.find("undirected, weighted"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("ids             map"), std::string::npos) << st.out;
}

// ---------------------------------------------------------------------------------------------
// Bad input: one line on stderr, a non-zero exit.

TEST(CliTest, MalformedLineStopsAndKeepsWhatPrecedes) {
  TempDir tmp;
  const std::string in = tmp.path() + "/bad.el", db = tmp.path() + "/db";
  WriteWholeFile(in, "1 2\n2 3\n# comment\n3 x 0.5\n4 5\n");
  Fails(1, {"ingest", "--db", db, "--input", in, "--batch", "1"},
        {"line 4", "'3 x 0.5'", "the 2 records before it are stored"});
  EXPECT_EQ(Ok({"export", "--db", db, "-q"}).out, "1 2\n2 3\n");
  // With a batch larger than the input, the partial batch before the bad line is kept too.
  const std::string db2 = tmp.path() + "/db2";
  Fails(1, {"ingest", "--db", db2, "--input", in}, {"line 4", "3 x"});
  EXPECT_EQ(Ok({"export", "--db", db2, "-q"}).out, "1 2\n2 3\n");
  // A delete that carries a weight is malformed too.
  Fails(1, {"ingest", "--db", db2, "--input", "-"}, {"line 2", "- 1 2 0.5"}, "5 6\n- 1 2 0.5\n");
}

TEST(CliTest, SkipBadLinesCounts) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  CliResult r = Ok({"ingest", "--db", db, "--input", "-", "--skip-bad-lines"},
                "1 2\nfoo\n2 3\n1 2 3 4\n3 4\n");
  EXPECT_NE(r.err.find("skipped 2 bad lines"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
  EXPECT_EQ(Ok({"export", "--db", db, "-q"}).out, "1 2\n2 3\n3 4\n");
}

TEST(CliTest, MissingAndNonStoreDirectories) {
  TempDir tmp;
  const std::string missing = tmp.path() + "/nope";
  for (const char* cmd : {"query", "analyze", "export", "verify", "compact", "inspect"}) {
    std::vector<std::string> args = {cmd, "--db", missing};
    if (std::string(cmd) == "query") args.push_back("stats");
    if (std::string(cmd) == "analyze") args.insert(args.end(), {"--algo", "pr"});
    Fails(1, args, {"does not exist"});
  }
  const std::string other = tmp.path() + "/other";
  std::filesystem::create_directories(other);
  WriteWholeFile(other + "/notes.txt", "not a store");
  Fails(1, {"query", "--db", other, "stats"}, {"not a StrataGraph store"});
  Fails(1, {"inspect", "--db", other}, {"not a StrataGraph store"});
  // ingest creates stores only in new or empty directories.
  Fails(1, {"ingest", "--db", other, "--input", "-"}, {"not a StrataGraph store"}, "1 2\n");
  EXPECT_FALSE(std::filesystem::exists(other + "/CURRENT"));
  // A missing input file does not create a store.
  const std::string db = tmp.path() + "/db";
  Fails(1, {"ingest", "--db", db, "--input", tmp.path() + "/missing.el"}, {"missing.el"});
  EXPECT_FALSE(std::filesystem::exists(db + "/CURRENT"));
}

TEST(CliTest, StoreOpenByAnotherProcess) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--input", "-"}, "1 2\n");
  {
    // This test process holds the store; the CLI is another process.
    Options o;
    o.create_if_missing = false;
    std::unique_ptr<DB> held;
    ASSERT_TRUE(DB::Open(o, db, &held).ok());
    Fails(1, {"query", "--db", db, "degree", "1"}, {"in use"});
    Fails(1, {"ingest", "--db", db, "--input", "-"}, {"in use"}, "2 3\n");
    Fails(1, {"analyze", "--db", db, "--algo", "wcc"}, {"in use"});
    // inspect reads the manifest without the lock.
    Ok({"inspect", "--db", db});
  }
  EXPECT_EQ(Ok({"query", "--db", db, "degree", "1"}).out, "1\n");
}

TEST(CliTest, GraphKindMismatch) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--input", "-", "--directed"}, "1 2\n");
  Fails(2, {"ingest", "--db", db, "--input", "-", "--undirected"}, {"mismatch", "directed"},
        "2 3\n");
  Fails(2, {"ingest", "--db", db, "--input", "-", "--weighted"}, {"mismatch", "unweighted"},
        "2 3\n");
  Fails(2, {"ingest", "--db", db, "--input", "-", "--in-edges"}, {"mismatch"}, "2 3\n");
  Fails(2, {"ingest", "--db", db, "--input", "-", "--ids", "map"}, {"mismatch", "dense"}, "2 3\n");
  // Matching flags (or none) are accepted.
  Ok({"ingest", "--db", db, "--input", "-", "--directed"}, "2 3\n");
  EXPECT_EQ(Ok({"query", "--db", db, "degree", "2"}).out, "1\n");
  // In-neighbors need in-edges.
  Fails(1, {"query", "--db", db, "neighbors", "2", "--in"}, {"in-edges"});
  const std::string db2 = tmp.path() + "/db2";
  Ok({"ingest", "--db", db2, "--input", "-", "--in-edges"}, "1 2\n3 2\n");
  EXPECT_EQ(Ok({"query", "--db", db2, "neighbors", "2", "--in"}).out, "1\n3\n");
}

TEST(CliTest, UnknownVertex) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--input", "-"}, "1 2\n");
  Fails(1, {"query", "--db", db, "degree", "77"}, {"unknown vertex 77"});
  Fails(1, {"query", "--db", db, "neighbors", "0"}, {"unknown vertex 0"});
  Fails(1, {"query", "--db", db, "edge", "1", "99"}, {"unknown vertex 99"});
  Fails(1, {"analyze", "--db", db, "--algo", "bfs", "--source", "5"}, {"unknown vertex 5"});
  Fails(3, {"query", "--db", db, "edge", "2", "1"}, {"no edge (2, 1)"});
  EXPECT_EQ(Ok({"query", "--db", db, "edge", "1", "2"}).out, "1\n");
}

// An undirected store's logical edges: each pair once whichever way it came, a self-loop (one
// stored entry, where another edge is two) included. (Half the stored entries, as before, said
// 2 here.)
TEST(CliTest, StatsCountUndirectedEdgesWithSelfLoops) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--input", "-", "--undirected"}, "1 1\n1 2\n2 1\n3 4\n7 7\n");
  CliResult st = Ok({"query", "--db", db, "stats"});
  EXPECT_NE(st.out.find("edges           4 (undirected"), std::string::npos) << st.out;
  CliResult js = Ok({"query", "--db", db, "stats", "--json"});
  EXPECT_NE(js.out.find("\"edges\": 4, \"stored_entries\": 6,"), std::string::npos) << js.out;
  WriteWholeFile(tmp.path() + "/v.txt", "1\n2\n3\n");
  Ok({"view", "--db", db, "create", "low", "--vertices", tmp.path() + "/v.txt"});
  CliResult sh = Ok({"view", "--db", db, "show", "low"});
  EXPECT_NE(sh.out.find("vertices 3\nedges 2\nentries 3\n"), std::string::npos) << sh.out;
}

TEST(CliTest, UnknownOptionAndBadValues) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--input", "-"}, "1 2\n");
  Fails(2, {"query", "--db", db, "--bogus", "stats"}, {"--bogus"});
  Fails(2, {"ingest", "--db", db, "--input", "-", "--frob"}, {"--frob"});
  Fails(2, {"analyze", "--db", db, "--algo", "nope"}, {"--algo"});
  Fails(2, {"analyze", "--db", db, "--algo", "bfs"}, {"--source"});
  Fails(2, {"ingest", "--db", db, "--input", "-", "--memory-budget", "12Q"}, {"12Q"});
  Fails(2, {"ingest", "--db", db, "--input", "-", "--wal", "sometimes"}, {"--wal"});
  Fails(2, {"ingest", "--db", db, "--input", "-", "--memory-budget", "1M", "--memgraph-bytes",
            "1M"},
        {"--memory-budget"});
  Fails(2, {"ingest", "--db", db, "--input", "-", "--directed", "--undirected"}, {"--undirected"});
  Fails(2, {"query", "--db", db, "degree", "minus-one"}, {"minus-one"});
  Fails(2, {"generate", "--kind", "smallworld"}, {"--kind"});
  Fails(2, {"inspect"}, {"--db"});
}

TEST(CliTest, DenseAndMappedIds) {
  TempDir tmp;
  const std::string dense = tmp.path() + "/dense", mapped = tmp.path() + "/mapped";
  const std::string sparse = "1 18000000000000000000 0.5\n18000000000000000000 42 2\n";
  Fails(1, {"ingest", "--db", dense, "--input", "-", "--weighted"}, {"--ids map", "too large"},
        sparse);
  Ok({"ingest", "--db", mapped, "--input", "-", "--weighted", "--ids", "map"}, sparse);
  // A second ingest reuses the store's dictionary: old IDs keep their mapping.
  Ok({"ingest", "--db", mapped, "--input", "-"}, "42 1 3\n- 1 18000000000000000000\n");
  EXPECT_EQ(Ok({"query", "--db", mapped, "neighbors", "18000000000000000000"}).out, "42 2\n");
  EXPECT_EQ(Ok({"query", "--db", mapped, "edge", "42", "1"}).out, "3\n");
  Fails(3, {"query", "--db", mapped, "edge", "1", "18000000000000000000"}, {"no edge"});
  EXPECT_EQ(Ok({"export", "--db", mapped, "-q"}).out, "42 1 3\n18000000000000000000 42 2\n");
  CliResult bfs =
      Ok({"analyze", "--db", mapped, "--algo", "bfs", "--source", "18000000000000000000"});
  EXPECT_EQ(bfs.out, "1 2\n42 1\n18000000000000000000 0\n");
  Ok({"verify", "--db", mapped});
}

TEST(CliTest, VerifyAndInspectDetectCorruption) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"generate", "--scale", "9", "--edge-factor", "4", "--out", tmp.path() + "/g.el", "-q"});
  Ok({"ingest", "--db", db, "--input", tmp.path() + "/g.el"});
  Ok({"verify", "--db", db});
  std::string seg;
  for (const auto& e : std::filesystem::directory_iterator(db)) {
    if (e.path().extension() == ".seg") seg = e.path().string();
  }
  ASSERT_FALSE(seg.empty());
  CliResult ok = Ok({"inspect", "--segment", seg});
  EXPECT_NE(ok.out.find("verify          OK"), std::string::npos) << ok.out;
  EXPECT_NE(Ok({"inspect", "--segment", seg, "--json"}).out.find("\"ok\": true"),
            std::string::npos);
  // Flip one byte in the middle of the data region (an edge block).
  {
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(4096 + 100);
    char c;
    f.read(&c, 1);
    c ^= 0x40;
    f.seekp(4096 + 100);
    f.write(&c, 1);
  }
  CliResult bad = RunStrata({"inspect", "--segment", seg});
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  CliResult v = RunStrata({"verify", "--db", db});
  EXPECT_EQ(v.code, 1) << v.out << v.err;
  EXPECT_NE(v.err.find("Corruption"), std::string::npos) << v.err;
}

}  // namespace
}  // namespace strata
