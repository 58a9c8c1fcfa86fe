// Tests of the tools' I/O library: generators, edge readers/writers, the ID dictionary,
// LDBC Graphalytics files and size parsing.
//
// The DISABLED_ perf tests print throughput; run them with
//   --gtest_also_run_disabled_tests --gtest_filter='ToolsIoPerf.*'

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "db/filename.h"
#include "graphio/edge_reader.h"
#include "graphio/edge_writer.h"
#include "graphio/generator.h"
#include "graphio/graphalytics_io.h"
#include "graphio/id_dictionary.h"
#include "graphio/size_parse.h"
#include "io/env.h"

#ifndef STRATA_TESTDATA_DIR
#error "STRATA_TESTDATA_DIR must be defined (the build sets it to <repo>/tests/data)"
#endif

namespace strata::graphio {
namespace {

// ---------------------------------------------------------------------------------------------
// Helpers.

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "/tools_io_XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  ASSERT_TRUE(out.good());
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_size);
}

std::unique_ptr<EdgeReader> ReaderFor(std::string data, EdgeReaderOptions o = {},
                                      std::string name = "") {
  std::unique_ptr<EdgeReader> r;
  Status s = EdgeReader::FromSource(NewStringSource(std::move(data), std::move(name)), o, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

// Reads everything; returns the first error (records read so far in *out).
Status ReadAllRecords(EdgeReader* r, std::vector<EdgeRecord>* out) {
  out->clear();
  while (true) {
    EdgeRecord rec;
    bool eof = false;
    Status s = r->Next(&rec, &eof);
    if (!s.ok()) return s;
    if (eof) return Status::OK();
    out->push_back(rec);
  }
}

Status ParseAll(std::string data, std::vector<EdgeRecord>* out, EdgeReaderOptions o = {}) {
  std::unique_ptr<EdgeReader> r;
  Status s = EdgeReader::FromSource(NewStringSource(std::move(data)), o, &r);
  if (!s.ok()) return s;
  return ReadAllRecords(r.get(), out);
}

std::string WriteRecords(const std::vector<EdgeRecord>& recs, EdgeFormat format, bool weighted) {
  std::string out;
  std::unique_ptr<EdgeWriter> w;
  EdgeWriterOptions o;
  o.format = format;
  o.weighted = weighted;
  EXPECT_TRUE(EdgeWriter::ToSink(NewStringSink(&out), o, &w).ok());
  for (const EdgeRecord& r : recs) EXPECT_TRUE(w->Add(r).ok());
  Status s = w->Finish();
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::vector<EdgeRecord> RandomRecords(size_t n, uint64_t seed, bool with_deletes) {
  SplitMix64 rng(seed);
  std::vector<EdgeRecord> recs(n);
  for (EdgeRecord& r : recs) {
    r.src = rng.Next() >> (rng.Next() % 64);
    r.dst = rng.Next() >> (rng.Next() % 64);
    r.op = with_deletes && rng.Next() % 7 == 0 ? EdgeOp::kDelete : EdgeOp::kInsert;
    r.weight = r.op == EdgeOp::kDelete ? 0.0 : std::ldexp(static_cast<double>(rng.Next() >> 11), -53 + static_cast<int>(rng.Next() % 40) - 20);
  }
  return recs;
}

std::vector<Edge> GenerateAll(const GeneratorOptions& o) {
  std::unique_ptr<EdgeGenerator> g;
  Status s = EdgeGenerator::New(o, &g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<Edge> all, batch;
  while (g->NextBatch(&batch, 1000)) all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

bool SameEdge(const Edge& a, const Edge& b) {
  return a.src == b.src && a.dst == b.dst && a.weight == b.weight;
}

std::vector<std::tuple<uint64_t, uint64_t, double>> Sorted(const std::vector<Edge>& edges) {
  std::vector<std::tuple<uint64_t, uint64_t, double>> v;
  for (const Edge& e : edges) v.emplace_back(e.src, e.dst, e.weight);
  std::sort(v.begin(), v.end());
  return v;
}

const std::string kExampleDir = std::string(STRATA_TESTDATA_DIR) + "/graphalytics/example";

// ---------------------------------------------------------------------------------------------
// size_parse

TEST(SizeParse, AcceptsUnits) {
  struct Case {
    const char* text;
    uint64_t bytes;
  } cases[] = {
      {"1024", 1024},
      {"0", 0},
      {"512M", 512ull << 20},
      {"64MiB", 64ull << 20},
      {"64mib", 64ull << 20},
      {"1G", 1ull << 30},
      {"1Gi", 1ull << 30},
      {"4k", 4096},
      {"10KB", 10000},
      {"3MB", 3000000},
      {"2 GiB", 2ull << 30},
      {"  7B  ", 7},
      {"1.5G", (1ull << 30) + (1ull << 29)},
      {"0.5K", 512},
      {"2T", 2ull << 40},
      {"15E", 15ull << 60},
      {"18446744073709551615", UINT64_MAX},
  };
  for (const Case& c : cases) {
    uint64_t v = 1234;
    Status s = ParseSize(c.text, &v);
    EXPECT_TRUE(s.ok()) << c.text << ": " << s.ToString();
    EXPECT_EQ(v, c.bytes) << c.text;
  }
}

TEST(SizeParse, RejectsAndNamesText) {
  for (const char* bad : {"", "  ", "abc", "12Q", "1.5", "-1", "1..5G", "M", "1.G", "5 M B",
                          "16E", "18446744073709551616", "99999999999999999999999", "1e3",
                          "12MiBs", "0x10"}) {
    uint64_t v = 1234;
    Status s = ParseSize(bad, &v);
    EXPECT_TRUE(s.IsInvalidArgument()) << "'" << bad << "' gave " << s.ToString();
    EXPECT_NE(s.message().find("'" + std::string(bad) + "'"), std::string::npos) << s.message();
    EXPECT_EQ(v, 1234u);
  }
}

TEST(SizeParse, Format) {
  EXPECT_EQ(FormatSize(0), "0 B");
  EXPECT_EQ(FormatSize(1023), "1023 B");
  EXPECT_EQ(FormatSize(64ull << 20), "64 MiB");
  EXPECT_EQ(FormatSize((1ull << 30) + (1ull << 29)), "1.5 GiB");
  uint64_t v = 0;
  ASSERT_TRUE(ParseSize(FormatSize(3ull << 40), &v).ok());
  EXPECT_EQ(v, 3ull << 40);
}

// ---------------------------------------------------------------------------------------------
// Generators

TEST(Generator, IndexPermutationIsBijective) {
  for (uint64_t n : {1ull, 2ull, 3ull, 5ull, 7ull, 8ull, 64ull, 1000ull, 1023ull, 1024ull,
                     1025ull, 65537ull}) {
    for (uint64_t seed : {0ull, 1ull, 99ull}) {
      IndexPermutation p(n, seed);
      std::vector<bool> hit(n, false);
      for (uint64_t x = 0; x < n; x++) {
        uint64_t y = p(x);
        ASSERT_LT(y, n);
        ASSERT_FALSE(hit[y]) << "n=" << n << " seed=" << seed << " x=" << x;
        hit[y] = true;
      }
    }
  }
  // Not the identity, and seeds matter.
  IndexPermutation a(1 << 16, 1), b(1 << 16, 2);
  int fixed = 0, same = 0;
  for (uint64_t x = 0; x < (1 << 16); x++) {
    fixed += a(x) == x;
    same += a(x) == b(x);
  }
  EXPECT_LT(fixed, 100);
  EXPECT_LT(same, 100);
}

TEST(Generator, DeterministicForSeed) {
  for (GraphModel model : {GraphModel::kKronecker, GraphModel::kUniform}) {
    GeneratorOptions o;
    o.model = model;
    o.scale = 10;
    o.weighted = true;
    o.seed = 42;
    std::vector<Edge> a = GenerateAll(o), b = GenerateAll(o);
    ASSERT_EQ(a.size(), 16u << 10);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); i++) ASSERT_TRUE(SameEdge(a[i], b[i])) << i;
    o.seed = 43;
    std::vector<Edge> c = GenerateAll(o);
    size_t same = 0;
    for (size_t i = 0; i < a.size(); i++) same += SameEdge(a[i], c[i]);
    EXPECT_LT(same, a.size() / 100);
  }
}

// Pins the exact output: benchmarks must see the same graph on every platform and build.
// If the generator's recipe changes on purpose, update these values and docs/input-formats.md.
TEST(Generator, GoldenOutput) {
  auto digest = [](const GeneratorOptions& o) {
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    for (const Edge& e : GenerateAll(o)) {
      uint64_t w[3] = {e.src, e.dst, std::bit_cast<uint64_t>(e.weight)};
      XXH64_update(st, w, sizeof(w));
    }
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
  };
  GeneratorOptions k;
  k.scale = 12;
  k.edge_factor = 4;
  k.weighted = true;
  k.seed = 7;
  GeneratorOptions u = k;
  u.model = GraphModel::kUniform;
  u.num_vertices = 5000;
  const uint64_t kron = digest(k), unif = digest(u);
  std::printf("golden kronecker %016llx uniform %016llx\n", static_cast<unsigned long long>(kron),
              static_cast<unsigned long long>(unif));
  EXPECT_EQ(kron, 0x00014912c2848ed2ull);
  EXPECT_EQ(unif, 0x30796d61f772fb19ull);
}

TEST(Generator, EdgeCountExactAndIdsInRange) {
  GeneratorOptions o;
  o.scale = 11;
  o.edge_factor = 8;
  std::unique_ptr<EdgeGenerator> g;
  ASSERT_TRUE(EdgeGenerator::New(o, &g).ok());
  EXPECT_EQ(g->num_vertices(), 2048u);
  EXPECT_EQ(g->num_edges(), 8u * 2048);
  std::vector<Edge> batch;
  uint64_t n = 0;
  while (g->NextBatch(&batch, 777)) {
    EXPECT_LE(batch.size(), 777u);
    for (const Edge& e : batch) {
      ASSERT_LT(e.src, 2048u);
      ASSERT_LT(e.dst, 2048u);
      ASSERT_EQ(e.weight, 1.0);
    }
    n += batch.size();
  }
  EXPECT_EQ(n, 8u * 2048);
  EXPECT_EQ(g->stats().generated, n);
  EXPECT_EQ(g->stats().emitted, n);
  EXPECT_TRUE(batch.empty());
  EXPECT_FALSE(g->NextBatch(&batch, 10));

  o.model = GraphModel::kUniform;
  o.num_vertices = 1000;
  o.num_edges = 12345;
  std::vector<Edge> u = GenerateAll(o);
  ASSERT_EQ(u.size(), 12345u);
  for (const Edge& e : u) ASSERT_TRUE(e.src < 1000 && e.dst < 1000);
}

TEST(Generator, KroneckerDegreeSkewAndUniformIsFlat) {
  GeneratorOptions o;
  o.scale = 14;
  o.edge_factor = 16;
  std::vector<uint64_t> deg(1 << 14, 0);
  for (const Edge& e : GenerateAll(o)) deg[e.src]++;
  const double avg = 16.0;
  const uint64_t max_deg = *std::max_element(deg.begin(), deg.end());
  const size_t isolated = std::count(deg.begin(), deg.end(), 0u);
  std::printf("kronecker scale 14: max out-degree %llu (avg %.0f), %zu of %d with none\n",
              static_cast<unsigned long long>(max_deg), avg, isolated, 1 << 14);
  EXPECT_GT(static_cast<double>(max_deg), 50 * avg);
  EXPECT_GT(isolated, deg.size() / 10);  // power-law: many vertices without out-edges

  o.model = GraphModel::kUniform;
  std::fill(deg.begin(), deg.end(), 0);
  for (const Edge& e : GenerateAll(o)) deg[e.src]++;
  const uint64_t umax = *std::max_element(deg.begin(), deg.end());
  std::printf("uniform scale 14: max out-degree %llu\n", static_cast<unsigned long long>(umax));
  EXPECT_LT(static_cast<double>(umax), 3 * avg);
}

TEST(Generator, KroneckerQuadrantProbabilities) {
  // Without the vertex permutation, each ID bit of an edge follows the initiator:
  // P(src bit = 0) = a + b = 0.76 and P(dst bit = 0) = a + c = 0.76, P(both 1) = d = 0.05.
  GeneratorOptions o;
  o.scale = 8;
  o.edge_factor = 256;  // 65536 edges
  o.permute_vertices = false;
  std::vector<Edge> edges = GenerateAll(o);
  for (int bit = 0; bit < 8; bit++) {
    size_t src0 = 0, dst0 = 0, both1 = 0;
    for (const Edge& e : edges) {
      src0 += ((e.src >> bit) & 1) == 0;
      dst0 += ((e.dst >> bit) & 1) == 0;
      both1 += ((e.src >> bit) & (e.dst >> bit) & 1);
    }
    const double n = static_cast<double>(edges.size());
    EXPECT_NEAR(src0 / n, 0.76, 0.01) << "bit " << bit;
    EXPECT_NEAR(dst0 / n, 0.76, 0.01) << "bit " << bit;
    EXPECT_NEAR(both1 / n, 0.05, 0.005) << "bit " << bit;
  }
}

TEST(Generator, ShuffleIsAPermutationOfTheSameEdges) {
  GeneratorOptions o;
  o.scale = 9;
  o.weighted = true;
  o.shuffle = false;
  std::vector<Edge> plain = GenerateAll(o);
  o.shuffle = true;
  std::vector<Edge> shuffled = GenerateAll(o);
  o.shuffle_seed = 12345;
  std::vector<Edge> reshuffled = GenerateAll(o);
  EXPECT_EQ(Sorted(plain), Sorted(shuffled));
  EXPECT_EQ(Sorted(plain), Sorted(reshuffled));
  size_t same = 0, same2 = 0;
  for (size_t i = 0; i < plain.size(); i++) {
    same += SameEdge(plain[i], shuffled[i]);
    same2 += SameEdge(shuffled[i], reshuffled[i]);
  }
  EXPECT_LT(same, plain.size() / 50);
  EXPECT_LT(same2, plain.size() / 50);
}

TEST(Generator, RangesConcatenate) {
  GeneratorOptions o;
  o.scale = 9;
  std::vector<Edge> all = GenerateAll(o);
  const uint64_t cut = all.size() * 8 / 10;
  o.end = cut;
  std::vector<Edge> head = GenerateAll(o);
  o.begin = cut;
  o.end = UINT64_MAX;
  std::vector<Edge> tail = GenerateAll(o);
  ASSERT_EQ(head.size() + tail.size(), all.size());
  for (size_t i = 0; i < head.size(); i++) ASSERT_TRUE(SameEdge(head[i], all[i]));
  for (size_t i = 0; i < tail.size(); i++) ASSERT_TRUE(SameEdge(tail[i], all[cut + i]));
  std::unique_ptr<EdgeGenerator> g;
  ASSERT_TRUE(EdgeGenerator::New(GeneratorOptions{.scale = 9}, &g).ok());
  EXPECT_TRUE(SameEdge(g->EdgeAtPosition(cut), all[cut]));
}

TEST(Generator, SelfLoopAndDuplicateRemoval) {
  for (GraphModel model : {GraphModel::kKronecker, GraphModel::kUniform}) {
    GeneratorOptions o;
    o.model = model;
    o.scale = 6;
    o.num_edges = 20000;
    if (model == GraphModel::kUniform) o.num_vertices = 100;  // forces repeats
    std::vector<Edge> raw = GenerateAll(o);
    o.remove_self_loops = true;
    o.remove_duplicates = true;
    std::unique_ptr<EdgeGenerator> g;
    ASSERT_TRUE(EdgeGenerator::New(o, &g).ok());
    std::vector<Edge> clean, batch;
    while (g->NextBatch(&batch, 512)) clean.insert(clean.end(), batch.begin(), batch.end());
    std::set<std::pair<uint64_t, uint64_t>> expected;
    size_t loops = 0;
    for (const Edge& e : raw) {
      if (e.src == e.dst) {
        loops++;
        continue;
      }
      expected.insert({e.src, e.dst});
    }
    std::set<std::pair<uint64_t, uint64_t>> got;
    for (const Edge& e : clean) {
      ASSERT_NE(e.src, e.dst);
      ASSERT_TRUE(got.insert({e.src, e.dst}).second) << "duplicate " << e.src << " " << e.dst;
    }
    EXPECT_EQ(got, expected);
    const GeneratorStats& st = g->stats();
    EXPECT_EQ(st.generated, raw.size());
    EXPECT_EQ(st.self_loops_removed, loops);
    EXPECT_EQ(st.emitted, clean.size());
    EXPECT_EQ(st.generated, st.emitted + st.self_loops_removed + st.duplicates_removed);
    EXPECT_GT(st.duplicates_removed, 0u);
    EXPECT_GT(loops, 0u);
  }
}

TEST(Generator, LargeIdsDeduplicateWithTwoWordPairs) {
  // 2^40 vertices: a pair needs 80 bits, so the duplicate set stores two words per pair.
  GeneratorOptions o;
  o.scale = 40;
  o.num_edges = 20000;
  o.a = 0.97;  // a very skewed initiator, so that pairs repeat even among 2^80
  o.b = 0.01;
  o.c = 0.01;
  o.remove_duplicates = true;
  std::unique_ptr<EdgeGenerator> g;
  ASSERT_TRUE(EdgeGenerator::New(o, &g).ok());
  std::set<std::pair<uint64_t, uint64_t>> seen;
  Edge e;
  while (g->Next(&e)) {
    ASSERT_LT(e.src, 1ull << 40);
    ASSERT_LT(e.dst, 1ull << 40);
    ASSERT_TRUE(seen.insert({e.src, e.dst}).second);
  }
  EXPECT_GT(g->stats().duplicates_removed, 0u);
  EXPECT_EQ(g->stats().emitted + g->stats().duplicates_removed, 20000u);
}

TEST(Generator, WeightsInUnitInterval) {
  GeneratorOptions o;
  o.scale = 10;
  o.weighted = true;
  std::set<double> distinct;
  double sum = 0;
  std::vector<Edge> edges = GenerateAll(o);
  for (const Edge& e : edges) {
    ASSERT_GT(e.weight, 0.0);
    ASSERT_LE(e.weight, 1.0);
    distinct.insert(e.weight);
    sum += e.weight;
  }
  EXPECT_GT(distinct.size(), edges.size() * 99 / 100);
  EXPECT_NEAR(sum / edges.size(), 0.5, 0.02);
}

TEST(Generator, RejectsBadOptions) {
  std::unique_ptr<EdgeGenerator> g;
  auto bad = [&](GeneratorOptions o) { return EdgeGenerator::New(o, &g).IsInvalidArgument(); };
  EXPECT_TRUE(bad(GeneratorOptions{.scale = 0}));
  EXPECT_TRUE(bad(GeneratorOptions{.scale = 63}));
  EXPECT_TRUE(bad(GeneratorOptions{.scale = 60, .edge_factor = 32}));
  EXPECT_TRUE(bad(GeneratorOptions{.model = GraphModel::kKronecker, .num_vertices = 5}));
  EXPECT_TRUE(bad(GeneratorOptions{.a = 0.6, .b = 0.3, .c = 0.3}));
  EXPECT_TRUE(bad(GeneratorOptions{.a = -0.1}));
  EXPECT_TRUE(bad(GeneratorOptions{.begin = 10, .end = 5}));
  GraphModel m;
  EXPECT_TRUE(ParseGraphModel("graph500", &m).ok());
  EXPECT_EQ(m, GraphModel::kKronecker);
  EXPECT_TRUE(ParseGraphModel("uniform", &m).ok());
  EXPECT_EQ(m, GraphModel::kUniform);
  EXPECT_TRUE(ParseGraphModel("smallworld", &m).IsInvalidArgument());
}

TEST(Generator, WritesTextAndBinaryStreams) {
  GeneratorOptions o;
  o.scale = 8;
  o.weighted = true;
  std::vector<Edge> expected = GenerateAll(o);
  for (EdgeFormat f : {EdgeFormat::kText, EdgeFormat::kBinary}) {
    std::unique_ptr<EdgeGenerator> g;
    ASSERT_TRUE(EdgeGenerator::New(o, &g).ok());
    std::ostringstream os;
    std::unique_ptr<EdgeWriter> w;
    ASSERT_TRUE(EdgeWriter::ToSink(NewOstreamSink(&os), {.format = f, .weighted = true}, &w).ok());
    uint64_t written = 0;
    ASSERT_TRUE(WriteGeneratedEdges(g.get(), w.get(), &written).ok());
    ASSERT_TRUE(w->Finish().ok());
    EXPECT_EQ(written, expected.size());
    std::vector<EdgeRecord> back;
    ASSERT_TRUE(ParseAll(os.str(), &back).ok());
    ASSERT_EQ(back.size(), expected.size());
    for (size_t i = 0; i < back.size(); i++) {
      ASSERT_EQ(back[i].op, EdgeOp::kInsert);
      ASSERT_EQ(back[i].src, expected[i].src);
      ASSERT_EQ(back[i].dst, expected[i].dst);
      ASSERT_EQ(back[i].weight, expected[i].weight);  // exact: shortest round-trip text
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Text edge lists

TEST(TextEdges, ParsesCommentsTabsDeletesWeights) {
  const std::string input =
      "# a comment\n"
      "% a Matrix-Market style comment\n"
      "\n"
      "1 2\n"
      "3\t4\t0.5\n"
      "  5   6  \t 1e-3  \n"
      "   \t \n"
      "- 7 8\n"
      "-\t9 10\r\n"
      "11 12 -2.5\r\n"
      "   # indented comment\n"
      "18446744073709551615 0 1\n"
      "13 14 7";  // no final newline
  std::vector<EdgeRecord> got;
  std::unique_ptr<EdgeReader> r = ReaderFor(input);
  ASSERT_EQ(r->format(), EdgeFormat::kText);
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  std::vector<EdgeRecord> want = {
      {EdgeOp::kInsert, 1, 2, 1.0},
      {EdgeOp::kInsert, 3, 4, 0.5},
      {EdgeOp::kInsert, 5, 6, 1e-3},
      {EdgeOp::kDelete, 7, 8, 0.0},
      {EdgeOp::kDelete, 9, 10, 0.0},
      {EdgeOp::kInsert, 11, 12, -2.5},
      {EdgeOp::kInsert, UINT64_MAX, 0, 1.0},
      {EdgeOp::kInsert, 13, 14, 7.0},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(r->records(), want.size());
  EXPECT_EQ(r->records_with_weight(), 5u);
  EXPECT_EQ(r->line_number(), 13u);
  EXPECT_EQ(r->bytes_consumed(), input.size());
  // Reading past the end keeps reporting the end.
  EdgeRecord rec;
  bool eof = false;
  EXPECT_TRUE(r->Next(&rec, &eof).ok());
  EXPECT_TRUE(eof);
}

TEST(TextEdges, EmptyInputs) {
  std::vector<EdgeRecord> got;
  for (const char* in : {"", "\n", "# only\n", "\r\n\r\n", "   "}) {
    ASSERT_TRUE(ParseAll(in, &got).ok()) << in;
    EXPECT_TRUE(got.empty());
  }
}

TEST(TextEdges, EachMalformedLineNamesItsNumberAndContent) {
  struct Case {
    const char* line;
    const char* expected_form;
    const char* reason;
  } cases[] = {
      {"1", "'src dst [weight]'", "missing dst"},
      {"1 ", "'src dst [weight]'", "missing dst"},
      {"a b", "'src dst [weight]'", "src is not"},
      {"1 b", "'src dst [weight]'", "dst is not"},
      {"1x 2", "'src dst [weight]'", "src is not"},
      {"1 2x", "'src dst [weight]'", "dst is not"},
      {"1 2 3 4", "'src dst [weight]'", "too many fields"},
      {"1 2 x", "'src dst [weight]'", "weight is not"},
      {"1 2 1.5x", "'src dst [weight]'", "weight is not"},
      {"1 2 nan", "'src dst [weight]'", "weight is not"},
      {"1 2 inf", "'src dst [weight]'", "weight is not"},
      {"1 -2", "'src dst [weight]'", "dst is not"},
      {"-1 2", "'src dst [weight]'", "'-' must be followed"},
      {"-", "'src dst [weight]'", "'-' must be followed"},
      {"- 1", "'- src dst'", "missing dst"},
      {"- 1 2 0.5", "'- src dst'", "a delete takes no weight"},
      {"18446744073709551616 1", "'src dst [weight]'", "src is not"},
      {"1,2", "'src dst [weight]'", "src is not"},
      {"+1 2", "'src dst [weight]'", "src is not"},
  };
  int k = 0;
  for (const Case& c : cases) {
    // Put the bad line after k good lines (and some comments), so line numbers vary.
    std::string input;
    int good = k % 5;
    for (int i = 0; i < good; i++) input += "10 20\n# c\n";
    input += std::string(c.line) + "\n7 8\n";
    const uint64_t line = 2 * good + 1;
    std::vector<EdgeRecord> got;
    std::unique_ptr<EdgeReader> r = ReaderFor(input, {}, "edges.txt");
    Status s = ReadAllRecords(r.get(), &got);
    ASSERT_TRUE(s.IsInvalidArgument()) << c.line << " -> " << s.ToString();
    const std::string want = "edges.txt: line " + std::to_string(line) + ": expected " +
                             c.expected_form + ", got: '" + c.line + "'";
    EXPECT_EQ(s.message().rfind(want, 0), 0u) << s.message() << "\nwanted prefix: " << want;
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.message();
    EXPECT_EQ(got.size(), static_cast<size_t>(good));
    // The error is sticky.
    EdgeRecord rec;
    bool eof = false;
    EXPECT_EQ(r->Next(&rec, &eof).message(), s.message());
    k++;
  }
}

TEST(TextEdges, SkipBadLinesCounts) {
  const std::string input = "1 2\nbad\n3 4 0.5\n5 x\n- 6\n\n7 8\n1 2 3 4\n";
  EdgeReaderOptions o;
  o.skip_bad_lines = true;
  std::unique_ptr<EdgeReader> r = ReaderFor(input, o);
  std::vector<EdgeRecord> got;
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].src, 7u);
  EXPECT_EQ(r->bad_lines(), 4u);
  EXPECT_EQ(r->first_bad_line().rfind("line 2: expected 'src dst [weight]', got: 'bad'", 0), 0u)
      << r->first_bad_line();
}

TEST(TextEdges, OverlongLines) {
  std::string longline(300, '7');
  const std::string input = "1 2\n" + longline + " 1\n3 4\n";
  EdgeReaderOptions o;
  o.buffer_bytes = 64;
  std::vector<EdgeRecord> got;
  std::unique_ptr<EdgeReader> r = ReaderFor(input, o);
  Status s = ReadAllRecords(r.get(), &got);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("line 2: longer than 64 bytes"), std::string::npos) << s.message();
  o.skip_bad_lines = true;
  r = ReaderFor(input, o);
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].src, 3u);
  EXPECT_EQ(r->bad_lines(), 1u);
  EXPECT_EQ(r->line_number(), 3u);
  // A line of exactly buffer_bytes is accepted (a 20-digit ID fills it).
  o.skip_bad_lines = false;
  o.buffer_bytes = 22;
  ASSERT_TRUE(ParseAll("18446744073709551615 1\n1 18446744073709551615", &got, o).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].dst, UINT64_MAX);
}

TEST(TextEdges, TinyBuffersGiveTheSameRecords) {
  std::vector<EdgeRecord> recs = RandomRecords(3000, 5, /*with_deletes=*/true);
  const std::string text = WriteRecords(recs, EdgeFormat::kText, /*weighted=*/true);
  for (size_t buf : {size_t{70}, size_t{71}, size_t{100}, size_t{4096}, size_t{1} << 22}) {
    std::vector<EdgeRecord> got;
    EdgeReaderOptions o;
    o.buffer_bytes = buf;
    ASSERT_TRUE(ParseAll(text, &got, o).ok()) << buf;
    ASSERT_EQ(got, recs) << buf;
  }
}

TEST(TextEdges, WeightColumnAndExtraColumns) {
  std::vector<EdgeRecord> got;
  EdgeReaderOptions o;
  o.weight_column = 1;
  o.allow_extra_columns = true;
  ASSERT_TRUE(ParseAll("1 2 9 0.25 x\n3 4 9\n", &got, o).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].weight, 0.25);
  EXPECT_EQ(got[1].weight, 1.0);
  o.weight_column = -1;
  o.allow_extra_columns = false;
  Status s = ParseAll("1 2 0.5\n", &got, o);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  o.allow_extra_columns = true;
  ASSERT_TRUE(ParseAll("1 2 0.5\n", &got, o).ok());
  EXPECT_EQ(got[0].weight, 1.0);
}

TEST(TextEdges, WriterRoundTripsExactly) {
  for (bool weighted : {false, true}) {
    std::vector<EdgeRecord> recs = RandomRecords(5000, 11, /*with_deletes=*/true);
    if (!weighted) {
      for (EdgeRecord& r : recs) r.weight = r.op == EdgeOp::kDelete ? 0.0 : 1.0;
    }
    const std::string text = WriteRecords(recs, EdgeFormat::kText, weighted);
    std::vector<EdgeRecord> got;
    ASSERT_TRUE(ParseAll(text, &got).ok());
    EXPECT_EQ(got, recs);
  }
  std::string out;
  std::unique_ptr<EdgeWriter> w;
  ASSERT_TRUE(EdgeWriter::ToSink(NewStringSink(&out), {.weighted = true}, &w).ok());
  ASSERT_TRUE(w->Insert(1, 2, 0.1).ok());
  ASSERT_TRUE(w->Delete(3, 4).ok());
  ASSERT_TRUE(w->Insert(5, 6).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(out, "1 2 0.1\n- 3 4\n5 6 1\n");
  EXPECT_TRUE(w->Insert(1, 1).IsInvalidArgument());  // after Finish
}

TEST(TextEdges, FilesAndMissingFiles) {
  TempDir dir;
  const std::string path = dir.File("e.txt");
  std::unique_ptr<EdgeWriter> w;
  ASSERT_TRUE(EdgeWriter::Open(path, {}, &w).ok());
  ASSERT_TRUE(w->Insert(1, 2).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(ReadAll(path), "1 2\n");
  std::unique_ptr<EdgeReader> r;
  ASSERT_TRUE(EdgeReader::Open(path, {}, &r).ok());
  std::vector<EdgeRecord> got;
  ASSERT_TRUE(ReadAllRecords(r.get(), &got).ok());
  EXPECT_EQ(got.size(), 1u);
  Status s = EdgeReader::Open(dir.File("missing"), {}, &r);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("missing"), std::string::npos);
  // A malformed line in a file names the file.
  WriteAll(path, "1 2\n3\n");
  ASSERT_TRUE(EdgeReader::Open(path, {}, &r).ok());
  s = ReadAllRecords(r.get(), &got);
  EXPECT_EQ(s.message().rfind(path + ": line 2: ", 0), 0u) << s.message();
}

// ---------------------------------------------------------------------------------------------
// Binary edge streams

TEST(BinaryEdges, RoundTrip) {
  for (bool weighted : {false, true}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097},
                     size_t{10000}}) {
      for (bool deletes : {false, true}) {
        std::vector<EdgeRecord> recs = RandomRecords(n, n + 17, deletes);
        if (!weighted) {
          for (EdgeRecord& r : recs) r.weight = r.op == EdgeOp::kDelete ? 0.0 : 1.0;
        }
        const std::string bin = WriteRecords(recs, EdgeFormat::kBinary, weighted);
        ASSERT_EQ(bin.compare(0, 8, "SGEDGES1"), 0);
        // Auto-detected, and explicitly binary.
        for (EdgeFormat f : {EdgeFormat::kAuto, EdgeFormat::kBinary}) {
          std::unique_ptr<EdgeReader> r = ReaderFor(bin, {.format = f});
          ASSERT_EQ(r->format(), EdgeFormat::kBinary);
          EXPECT_EQ(r->weighted(), weighted);
          std::vector<EdgeRecord> got;
          Status s = ReadAllRecords(r.get(), &got);
          ASSERT_TRUE(s.ok()) << s.ToString();
          ASSERT_EQ(got, recs) << "n=" << n << " weighted=" << weighted;
          EXPECT_EQ(r->bytes_consumed(), bin.size());
        }
      }
    }
  }
}

TEST(BinaryEdges, SizeIsAsDocumented) {
  // header 16 + one block (8 + 3 records * 24 + 8) + trailer 32.
  std::vector<EdgeRecord> recs = {{EdgeOp::kInsert, 1, 2, 0.5}, {EdgeOp::kInsert, 3, 4, 1.0},
                                  {EdgeOp::kInsert, 5, 6, 2.0}};
  EXPECT_EQ(WriteRecords(recs, EdgeFormat::kBinary, true).size(), 16u + 8 + 72 + 8 + 32);
  recs[1].op = EdgeOp::kDelete;  // adds a 1-byte op bitmap
  EXPECT_EQ(WriteRecords(recs, EdgeFormat::kBinary, true).size(), 16u + 8 + 1 + 72 + 8 + 32);
  EXPECT_EQ(WriteRecords(recs, EdgeFormat::kBinary, false).size(), 16u + 8 + 1 + 48 + 8 + 32);
}

Status ReadBinary(const std::string& data, std::vector<EdgeRecord>* got) {
  got->clear();
  std::unique_ptr<EdgeReader> r;
  Status s = EdgeReader::FromSource(NewStringSource(data, "e.bin"), {.format = EdgeFormat::kBinary},
                                    &r);
  if (!s.ok()) return s;
  return ReadAllRecords(r.get(), got);
}

TEST(BinaryEdges, EveryTruncationIsDetected) {
  std::vector<EdgeRecord> recs = RandomRecords(10, 3, /*with_deletes=*/true);
  const std::string bin = WriteRecords(recs, EdgeFormat::kBinary, true);
  std::vector<EdgeRecord> got;
  for (size_t len = 0; len < bin.size(); len++) {
    Status s = ReadBinary(bin.substr(0, len), &got);
    ASSERT_TRUE(s.IsCorruption()) << "len " << len << ": " << s.ToString();
    EXPECT_EQ(s.message().rfind("e.bin: ", 0), 0u) << s.message();
  }
  // A longer stream cut at random points, including block boundaries.
  recs = RandomRecords(9000, 4, true);
  const std::string big = WriteRecords(recs, EdgeFormat::kBinary, true);
  SplitMix64 rng(9);
  for (int i = 0; i < 60; i++) {
    size_t len = i < 3 ? big.size() - 32 - i : rng.Next() % big.size();
    Status s = ReadBinary(big.substr(0, len), &got);
    ASSERT_TRUE(s.IsCorruption()) << "len " << len << ": " << s.ToString();
    // No record is returned from a block that is not complete and verified.
    for (size_t j = 0; j < got.size(); j++) ASSERT_EQ(got[j], recs[j]);
  }
  Status s = ReadBinary(big.substr(0, big.size() - 32), &got);
  EXPECT_NE(s.message().find("without a trailer"), std::string::npos) << s.message();
  EXPECT_EQ(got.size(), recs.size());  // all blocks were complete; only the trailer was missing
}

TEST(BinaryEdges, EveryBitFlipIsDetected) {
  std::vector<EdgeRecord> recs = RandomRecords(10, 6, /*with_deletes=*/true);
  const std::string bin = WriteRecords(recs, EdgeFormat::kBinary, true);
  std::vector<EdgeRecord> got;
  for (size_t i = 0; i < bin.size(); i++) {
    for (int bit : {0, 3, 7}) {
      std::string bad = bin;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      Status s = ReadBinary(bad, &got);
      ASSERT_TRUE(s.IsCorruption() || s.IsNotSupported())
          << "byte " << i << " bit " << bit << ": " << s.ToString();
    }
  }
  std::string bad = bin;
  bad[16 + 8 + 2 + 5] ^= 1;  // inside the first record
  Status s = ReadBinary(bad, &got);
  EXPECT_NE(s.message().find("checksum mismatch in block 0 at offset 16"), std::string::npos)
      << s.message();
  EXPECT_TRUE(got.empty());
}

TEST(BinaryEdges, TrailingDataUnfinishedWriterAndBadHeader) {
  std::vector<EdgeRecord> recs = RandomRecords(100, 8, false);
  const std::string bin = WriteRecords(recs, EdgeFormat::kBinary, false);
  std::vector<EdgeRecord> got;
  Status s = ReadBinary(bin + "x", &got);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("after the trailer"), std::string::npos);

  std::string out;
  {
    std::unique_ptr<EdgeWriter> w;
    ASSERT_TRUE(EdgeWriter::ToSink(NewStringSink(&out), {.format = EdgeFormat::kBinary}, &w).ok());
    for (int i = 0; i < 100000; i++) ASSERT_TRUE(w->Insert(i, i + 1).ok());
    // Abandoned without Finish(): what reached the sink has no trailer.
  }
  ASSERT_GT(out.size(), 1u << 20);
  s = ReadBinary(out, &got);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_GT(got.size(), 0u);

  s = ReadBinary("SGEDGESX" + bin.substr(8), &got);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("magic"), std::string::npos);

  // An unknown flag with a valid header checksum: written by a newer version.
  std::string future = bin;
  edge_binary::StoreLE32(future.data() + 8, 0x80);
  edge_binary::StoreLE32(future.data() + 12, static_cast<uint32_t>(XXH64(future.data(), 12, 0)));
  s = ReadBinary(future, &got);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
}

TEST(BinaryEdges, FromFile) {
  TempDir dir;
  const std::string path = dir.File("e.bin");
  std::vector<EdgeRecord> recs = RandomRecords(20000, 21, true);
  std::unique_ptr<EdgeWriter> w;
  ASSERT_TRUE(EdgeWriter::Open(path, {.format = EdgeFormat::kBinary, .weighted = true,
                                      .sync_on_finish = true},
                               &w)
                  .ok());
  for (const EdgeRecord& r : recs) ASSERT_TRUE(w->Add(r).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(FileSize(path), w->bytes());
  std::unique_ptr<EdgeReader> r;
  ASSERT_TRUE(EdgeReader::Open(path, {.buffer_bytes = 1000}, &r).ok());
  std::vector<EdgeRecord> got;
  std::vector<EdgeRecord> batch;
  while (true) {
    ASSERT_TRUE(r->NextBatch(&batch, 999).ok());
    if (batch.empty()) break;
    got.insert(got.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(got, recs);
}

// ---------------------------------------------------------------------------------------------
// IdDictionary

TEST(IdDictionary, MapsDenseAndBack) {
  IdDictionary d;
  std::vector<uint64_t> ext = {1000000007, 5, UINT64_MAX, 0, 42};
  for (size_t i = 0; i < ext.size(); i++) {
    VertexId id;
    bool added = false;
    ASSERT_TRUE(d.GetOrAdd(ext[i], &id, &added).ok());
    EXPECT_TRUE(added);
    EXPECT_EQ(id, i);
  }
  VertexId id;
  bool added = true;
  ASSERT_TRUE(d.GetOrAdd(UINT64_MAX, &id, &added).ok());
  EXPECT_FALSE(added);
  EXPECT_EQ(id, 2u);
  EXPECT_TRUE(d.Find(0, &id));
  EXPECT_EQ(id, 3u);
  EXPECT_FALSE(d.Find(6, &id));
  uint64_t e;
  EXPECT_TRUE(d.ToExternal(4, &e));
  EXPECT_EQ(e, 42u);
  EXPECT_FALSE(d.ToExternal(5, &e));
  EXPECT_EQ(d.size(), 5u);
  EXPECT_TRUE(d.Persist().ok());  // memory-only: a no-op
}

TEST(IdDictionary, ManyIdsAndMemory) {
  const size_t n = 1'000'000;
  SplitMix64 rng(77);
  std::vector<uint64_t> ext(n);
  for (uint64_t& x : ext) x = rng.Next();
  for (bool reserve : {false, true}) {
    IdDictionary d;
    if (reserve) d.Reserve(n);
    for (size_t i = 0; i < n; i++) {
      VertexId id;
      ASSERT_TRUE(d.GetOrAdd(ext[i], &id).ok());
      ASSERT_EQ(id, i);
    }
    for (size_t i = 0; i < n; i += 7) {
      VertexId id;
      ASSERT_TRUE(d.Find(ext[i], &id));
      ASSERT_EQ(id, i);
      ASSERT_EQ(d.External(i), ext[i]);
    }
    const double per_entry = static_cast<double>(d.MemoryBytes()) / n;
    std::printf("IdDictionary: %zu entries, %.1f bytes/entry (%s)\n", n, per_entry,
                reserve ? "reserved" : "grown");
    // Slots are a power of two at most 70% full: 8 B + 4 B / (0.35..0.7) per entry, plus the
    // vector's growth slack when not reserved.
    EXPECT_LT(per_entry, reserve ? 20.0 : 28.0);
  }
}

TEST(IdDictionary, PersistAndReload) {
  TempDir dir;
  const std::string path = IdDictionaryFilePath(dir.path());
  std::vector<uint64_t> ext;
  SplitMix64 rng(3);
  {
    std::unique_ptr<IdDictionary> d;
    IdDictionaryLoadInfo info;
    ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
    EXPECT_TRUE(info.created);
    EXPECT_EQ(FileSize(path), 24u);
    for (int batch = 0; batch < 3; batch++) {
      for (int i = 0; i < 1000; i++) {
        uint64_t x = rng.Next();
        VertexId id;
        ASSERT_TRUE(d->GetOrAdd(x, &id).ok());
        ext.push_back(x);
        ASSERT_TRUE(d->GetOrAdd(ext[i], &id).ok());  // repeats are not new
      }
      EXPECT_EQ(d->persisted(), batch * 1000u);
      ASSERT_TRUE(d->Persist().ok());
      EXPECT_EQ(d->persisted(), (batch + 1) * 1000u);
      ASSERT_TRUE(d->Persist().ok());  // nothing new: no record
      EXPECT_EQ(FileSize(path), 24u + (batch + 1) * (32 + 8000u));
    }
    VertexId id;
    ASSERT_TRUE(d->GetOrAdd(999, &id).ok());  // never persisted: lost on reopen
  }
  std::unique_ptr<IdDictionary> d;
  IdDictionaryLoadInfo info;
  ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
  EXPECT_FALSE(info.created);
  EXPECT_EQ(info.entries, 3000u);
  EXPECT_EQ(info.records, 3u);
  EXPECT_EQ(info.bytes_cut, 0u);
  ASSERT_EQ(d->size(), ext.size());
  for (size_t i = 0; i < ext.size(); i++) {
    VertexId id;
    ASSERT_TRUE(d->Find(ext[i], &id));
    ASSERT_EQ(id, i);
  }
  VertexId id;
  EXPECT_FALSE(d->Find(999, &id));

  IdDictionaryOptions o;
  o.error_if_exists = true;
  EXPECT_TRUE(IdDictionary::Open(path, o, &d).IsInvalidArgument());
  o = {};
  o.create_if_missing = false;
  EXPECT_TRUE(IdDictionary::Open(dir.File("nope"), o, &d).IsNotFound());
}

// IDDICT's syncs go through io's (io::SyncFile, SyncDirectory), so injected failures reach
// them: a failed directory sync after the creation's rename fails the open (the file may not
// survive a power loss), a failed append sync fails Persist, which then counts nothing as
// persisted, and the next Persist writes the same entries again at the same offset.
TEST(IdDictionary, FailedSyncsAreReturnedAndPersistIsRetried) {
  TempDir dir;
  const std::string path = IdDictionaryFilePath(dir.path());
  std::unique_ptr<IdDictionary> d;
  io::SetSyncFailureForTesting(0, 1, EIO, /*directories_only=*/true);
  Status s = IdDictionary::Open(path, {}, &d);
  io::SetSyncFailureForTesting(-1);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(dir.path()), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("fsync of directory failed"), std::string::npos) << s.ToString();
  std::filesystem::remove(path);

  ASSERT_TRUE(IdDictionary::Open(path, {}, &d).ok());
  VertexId id;
  for (uint64_t x = 100; x < 110; ++x) ASSERT_TRUE(d->GetOrAdd(x, &id).ok());
  io::SetSyncFailureForTesting(0, 1, EIO);
  s = d->Persist();
  io::SetSyncFailureForTesting(-1);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("fdatasync failed"), std::string::npos) << s.ToString();
  EXPECT_EQ(d->persisted(), 0u);
  EXPECT_EQ(FileSize(path), 24u);  // the failed sync's bytes are not counted on
  ASSERT_TRUE(d->GetOrAdd(110, &id).ok());
  ASSERT_TRUE(d->Persist().ok());
  EXPECT_EQ(d->persisted(), 11u);
  EXPECT_EQ(FileSize(path), 24u + 32 + 8 * 11u);
  d.reset();
  IdDictionaryLoadInfo info;
  ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
  EXPECT_EQ(info.entries, 11u);
  EXPECT_EQ(info.records, 1u);
  ASSERT_TRUE(d->Find(110, &id));
  EXPECT_EQ(id, 10u);
}

// Builds a dictionary file with records of the given sizes; returns the record offsets.
std::vector<uint64_t> MakeDictionary(const std::string& path, std::vector<int> records,
                                     std::vector<uint64_t>* ext) {
  std::unique_ptr<IdDictionary> d;
  EXPECT_TRUE(IdDictionary::Open(path, {.sync = false}, &d).ok());
  std::vector<uint64_t> offsets;
  uint64_t off = 24;
  for (int n : records) {
    offsets.push_back(off);
    for (int i = 0; i < n; i++) {
      VertexId id;
      ext->push_back(1000 + 3 * ext->size());
      EXPECT_TRUE(d->GetOrAdd(ext->back(), &id).ok());
    }
    EXPECT_TRUE(d->Persist().ok());
    off += 32 + 8 * n;
  }
  EXPECT_EQ(FileSize(path), off);
  return offsets;
}

TEST(IdDictionary, TornTailIsCutAndReported) {
  TempDir dir;
  const std::string path = dir.File("dict");
  for (uint64_t cut : {1, 5, 8, 31, 32, 33, 32 + 8 * 50 - 1}) {
    std::vector<uint64_t> ext;
    ::unlink(path.c_str());
    std::vector<uint64_t> off = MakeDictionary(path, {100, 50}, &ext);
    const uint64_t size = FileSize(path);
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size - cut)), 0);
    std::unique_ptr<IdDictionary> d;
    IdDictionaryLoadInfo info;
    Status s = IdDictionary::Open(path, {}, &d, &info);
    ASSERT_TRUE(s.ok()) << "cut " << cut << ": " << s.ToString();
    EXPECT_EQ(info.entries, 100u);
    EXPECT_EQ(info.records, 1u);
    EXPECT_EQ(info.bytes_cut, size - cut - off[1]) << cut;
    EXPECT_EQ(FileSize(path), off[1]);
    // Appending continues cleanly after the cut.
    VertexId id;
    ASSERT_TRUE(d->GetOrAdd(7, &id).ok());
    EXPECT_EQ(id, 100u);
    ASSERT_TRUE(d->Persist().ok());
    d.reset();
    ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
    EXPECT_EQ(info.bytes_cut, 0u);
    EXPECT_EQ(d->size(), 101u);
    EXPECT_EQ(d->External(99), ext[99]);
    EXPECT_EQ(d->External(100), 7u);
  }
}

TEST(IdDictionary, ZeroFilledTailIsCut) {
  TempDir dir;
  const std::string path = dir.File("dict");
  std::vector<uint64_t> ext;
  MakeDictionary(path, {10, 20}, &ext);
  const uint64_t size = FileSize(path);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size + 4096)), 0);
  std::unique_ptr<IdDictionary> d;
  IdDictionaryLoadInfo info;
  ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
  EXPECT_EQ(info.entries, 30u);
  EXPECT_EQ(info.bytes_cut, 4096u);
  EXPECT_EQ(FileSize(path), size);
}

TEST(IdDictionary, ReadOnlyOpenLeavesATornTailAndWritesNothing) {
  TempDir dir;
  const std::string path = dir.File("dict");
  std::vector<uint64_t> ext;
  MakeDictionary(path, {10, 20}, &ext);
  const uint64_t size = FileSize(path);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size + 100)), 0);
  std::unique_ptr<IdDictionary> d;
  IdDictionaryLoadInfo info;
  IdDictionaryOptions ro;
  ro.read_only = true;
  ASSERT_TRUE(IdDictionary::Open(path, ro, &d, &info).ok());
  EXPECT_EQ(info.entries, 30u);
  EXPECT_EQ(info.torn_bytes, 100u);
  EXPECT_EQ(info.bytes_cut, 0u);
  EXPECT_EQ(info.file_bytes, size);
  EXPECT_EQ(FileSize(path), size + 100);
  const std::string note = TornTailNote(path, info);
  EXPECT_NE(note.find(path + ": torn tail of 100 bytes at offset " + std::to_string(size)),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("a writing command"), std::string::npos) << note;
  VertexId v;
  ASSERT_TRUE(d->GetOrAdd(12345, &v).ok());
  EXPECT_TRUE(d->Persist().IsNotSupported());
  EXPECT_TRUE(d->CutTornTail().IsNotSupported());
  EXPECT_EQ(FileSize(path), size + 100);
  d.reset();
  // Read-only never creates.
  EXPECT_TRUE(IdDictionary::Open(dir.File("none"), ro, &d).IsNotFound());
  EXPECT_FALSE(std::filesystem::exists(dir.File("none")));

  // A writable open that defers the cut: the tail stays until CutTornTail or Persist.
  IdDictionaryOptions deferred;
  deferred.cut_torn_tail = false;
  ASSERT_TRUE(IdDictionary::Open(path, deferred, &d, &info).ok());
  EXPECT_EQ(info.torn_bytes, 100u);
  EXPECT_EQ(info.bytes_cut, 0u);
  EXPECT_EQ(FileSize(path), size + 100);
  ASSERT_TRUE(d->GetOrAdd(12345, &v).ok());
  ASSERT_TRUE(d->Persist().ok());
  EXPECT_EQ(FileSize(path), size + 32 + 8);
  d.reset();
  ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
  EXPECT_EQ(info.entries, 31u);
  EXPECT_EQ(info.torn_bytes, 0u);
}

TEST(IdDictionary, CorruptionNamesFileAndOffset) {
  TempDir dir;
  const std::string path = dir.File("dict");
  struct Case {
    const char* what;
    int record;       // -1: file header
    uint64_t within;  // byte within the record (or header)
    const char* message;
  } cases[] = {
      {"file header", -1, 3, "bad magic at offset 0"},
      {"header checksum", -1, 20, "header checksum mismatch at offset 0"},
      {"record 0 header", 0, 9, "record header checksum mismatch at offset 24"},
      {"record 1 payload", 1, 40, "record payload checksum mismatch at offset "},
      {"last record payload", 2, 32, "record payload checksum mismatch at offset "},
      {"last record header", 2, 1, "record header checksum mismatch at offset "},
  };
  for (const Case& c : cases) {
    std::vector<uint64_t> ext;
    ::unlink(path.c_str());
    std::vector<uint64_t> off = MakeDictionary(path, {10, 20, 30}, &ext);
    std::string data = ReadAll(path);
    const uint64_t at = c.record < 0 ? c.within : off[c.record] + c.within;
    data[at] = static_cast<char>(data[at] ^ 0x10);
    WriteAll(path, data);
    std::unique_ptr<IdDictionary> d;
    Status s = IdDictionary::Open(path, {}, &d);
    ASSERT_TRUE(s.IsCorruption()) << c.what << ": " << s.ToString();
    EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
    std::string want = c.message;
    if (c.record > 0) want += std::to_string(off[c.record]);
    EXPECT_NE(s.message().find(want), std::string::npos) << c.what << ": " << s.message();
  }
  // Non-zero garbage after the last record is corruption, not a torn tail.
  std::vector<uint64_t> ext;
  ::unlink(path.c_str());
  MakeDictionary(path, {10}, &ext);
  WriteAll(path, ReadAll(path) + std::string(40, 'x'));
  std::unique_ptr<IdDictionary> d;
  Status s = IdDictionary::Open(path, {}, &d);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("at offset 136"), std::string::npos) << s.message();
}

// The file layout is the documented one: a hand-built file loads, and a file that maps one
// external ID twice (with valid checksums) is corrupt.
TEST(IdDictionary, HandBuiltFileMatchesDocumentedLayout) {
  using edge_binary::StoreLE32;
  using edge_binary::StoreLE64;
  auto header = [] {
    std::string h(24, '\0');
    std::memcpy(h.data(), "SGIDDICT", 8);
    StoreLE32(h.data() + 8, 1);
    StoreLE32(h.data() + 12, 0);
    StoreLE64(h.data() + 16, XXH64(h.data(), 16, 0));
    return h;
  };
  auto record = [](uint64_t first, std::vector<uint64_t> ext) {
    std::string r(32 + 8 * ext.size(), '\0');
    for (size_t j = 0; j < ext.size(); j++) StoreLE64(r.data() + 32 + 8 * j, ext[j]);
    StoreLE32(r.data(), static_cast<uint32_t>(ext.size()));
    StoreLE32(r.data() + 4, 1);
    StoreLE64(r.data() + 8, first);
    StoreLE64(r.data() + 16, XXH64(r.data() + 32, 8 * ext.size(), first));
    StoreLE64(r.data() + 24, XXH64(r.data(), 24, 0));
    return r;
  };
  TempDir dir;
  const std::string path = dir.File("dict");
  WriteAll(path, header() + record(0, {70, 80}) + record(2, {90}));
  std::unique_ptr<IdDictionary> d;
  ASSERT_TRUE(IdDictionary::Open(path, {}, &d).ok());
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ(d->External(2), 90u);

  WriteAll(path, header() + record(0, {70, 80}) + record(2, {70}));
  Status s = IdDictionary::Open(path, {}, &d);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("external ID 70 mapped twice (record at offset 72)"),
            std::string::npos)
      << s.message();

  WriteAll(path, header() + record(0, {70, 80}) + record(5, {90}));
  s = IdDictionary::Open(path, {}, &d);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("starts at internal ID 5, expected 2"), std::string::npos);

  WriteAll(path, "");  // creation is atomic, so an empty file is corrupt
  s = IdDictionary::Open(path, {}, &d);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("truncated header at offset 0"), std::string::npos);

  std::string h = header();
  StoreLE32(h.data() + 8, 2);
  StoreLE64(h.data() + 16, XXH64(h.data(), 16, 0));
  WriteAll(path, h);
  EXPECT_TRUE(IdDictionary::Open(path, {}, &d).IsNotSupported());
}

// The owner record: written with the header when IdDictionaryOptions::owner is set, reported by
// every load, mapping nothing; only as the first record, whole and non-zero. A file created
// without an owner keeps the old layout.
// A dictionary written before owner records (none in the file) gets one from AddOwner: the
// same entries after it, a torn tail cut first, appends going on into the new file, and
// nothing done for a file that has one, a read-only dictionary refused.
TEST(IdDictionary, AddOwnerNamesAnOlderFileAndKeepsItsEntries) {
  TempDir dir;
  const std::string path = dir.File("dict");
  {
    std::unique_ptr<IdDictionary> d;
    ASSERT_TRUE(IdDictionary::Open(path, {}, &d).ok());  // no owner: as before the records
    VertexId id;
    for (uint64_t e = 0; e < 3000; ++e) ASSERT_TRUE(d->GetOrAdd(1000 + 7 * e, &id).ok());
    ASSERT_TRUE(d->Persist().ok());
  }
  const uint64_t old_size = FileSize(path);
  {  // a torn tail: half a record header
    std::string bytes = ReadAll(path);
    WriteAll(path, bytes + std::string(16, '\x5a'));
  }
  {
    IdDictionaryOptions ro;
    ro.read_only = true;
    std::unique_ptr<IdDictionary> d;
    ASSERT_TRUE(IdDictionary::Open(path, ro, &d).ok());
    EXPECT_EQ(d->AddOwner(42).code(), Status::Code::kNotSupported);
  }
  {
    IdDictionaryOptions o;
    o.cut_torn_tail = false;
    std::unique_ptr<IdDictionary> d;
    IdDictionaryLoadInfo info;
    ASSERT_TRUE(IdDictionary::Open(path, o, &d, &info).ok());
    EXPECT_EQ(info.owner, 0u);
    EXPECT_EQ(info.torn_bytes, 16u);
    ASSERT_TRUE(d->AddOwner(42).ok());
    EXPECT_EQ(d->owner(), 42u);
    EXPECT_EQ(FileSize(path), old_size + 40) << "the owner record in, the torn tail out";
    ASSERT_TRUE(d->AddOwner(43).ok());  // has one: nothing changes
    EXPECT_EQ(d->owner(), 42u);
    VertexId id;
    ASSERT_TRUE(d->GetOrAdd(5, &id).ok());
    EXPECT_EQ(id, 3000u);
    ASSERT_TRUE(d->Persist().ok());  // into the new file
  }
  std::unique_ptr<IdDictionary> d;
  IdDictionaryLoadInfo info;
  ASSERT_TRUE(IdDictionary::Open(path, {}, &d, &info).ok());
  EXPECT_EQ(info.owner, 42u);
  EXPECT_EQ(info.entries, 3001u);
  EXPECT_EQ(info.torn_bytes, 0u);
  for (uint64_t e = 0; e < 3000; ++e) ASSERT_EQ(d->External(e), 1000 + 7 * e) << e;
  EXPECT_EQ(d->External(3000), 5u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(IdDictionary, OwnerRecordNamesTheStore) {
  using edge_binary::StoreLE32;
  using edge_binary::StoreLE64;
  TempDir dir;
  const std::string path = dir.File("dict");
  {
    IdDictionaryOptions o;
    o.owner = 0x1234567890abcdefull;
    std::unique_ptr<IdDictionary> d;
    IdDictionaryLoadInfo info;
    ASSERT_TRUE(IdDictionary::Open(path, o, &d, &info).ok());
    EXPECT_EQ(info.owner, o.owner);
    EXPECT_EQ(FileSize(path), 24u + 40u);
    VertexId id;
    ASSERT_TRUE(d->GetOrAdd(77, &id).ok());
    EXPECT_EQ(id, 0u);
    ASSERT_TRUE(d->Persist().ok());
    EXPECT_EQ(FileSize(path), 24u + 40u + 40u);
  }
  for (bool read_only : {false, true}) {
    IdDictionaryOptions o;  // no owner asked: the file's is reported
    o.read_only = read_only;
    std::unique_ptr<IdDictionary> d;
    IdDictionaryLoadInfo info;
    ASSERT_TRUE(IdDictionary::Open(path, o, &d, &info).ok());
    EXPECT_EQ(info.owner, 0x1234567890abcdefull);
    EXPECT_EQ(info.entries, 1u);
    EXPECT_EQ(info.records, 1u);
    EXPECT_EQ(d->External(0), 77u);
  }
  const std::string good = ReadAll(path);
  auto fails = [&](const std::string& bytes, const std::string& what) {
    WriteAll(path, bytes);
    std::unique_ptr<IdDictionary> d;
    Status s = IdDictionary::Open(path, {}, &d);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find("owner record"), std::string::npos) << what << ": " << s.message();
  };
  fails(good.substr(0, 24 + 36), "cut inside the owner record's payload");
  std::string zero = good;  // owner 0, checksums fixed
  StoreLE64(zero.data() + 24 + 32, 0);
  StoreLE64(zero.data() + 24 + 16, XXH64(zero.data() + 24 + 32, 8, 0));
  StoreLE64(zero.data() + 24 + 24, XXH64(zero.data() + 24, 24, 0));
  fails(zero, "owner 0");
  // The owner record after a mapping record.
  const std::string owner_rec = good.substr(24, 40), map_rec = good.substr(64, 40);
  fails(good.substr(0, 24) + map_rec + owner_rec, "owner record second");
  std::unique_ptr<IdDictionary> d;
  IdDictionaryLoadInfo info;
  ASSERT_TRUE(IdDictionary::Open(dir.File("plain"), {}, &d, &info).ok());
  EXPECT_EQ(info.owner, 0u);
  EXPECT_EQ(FileSize(dir.File("plain")), 24u);
}

// ---------------------------------------------------------------------------------------------
// LDBC Graphalytics files

TEST(Graphalytics, DirectedExampleProperties) {
  GraphalyticsProperties p;
  Status s = ReadGraphalyticsProperties(kExampleDir + "/example-directed.properties", &p);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(p.name, "example-directed");
  EXPECT_TRUE(p.directed);
  EXPECT_EQ(p.vertex_path, kExampleDir + "/example-directed.v");
  EXPECT_EQ(p.edge_path, kExampleDir + "/example-directed.e");
  EXPECT_EQ(p.meta_vertices, 10u);
  EXPECT_EQ(p.meta_edges, 17u);
  EXPECT_EQ(p.edge_property_names, std::vector<std::string>{"weight"});
  EXPECT_EQ(p.edge_property_types, std::vector<std::string>{"real"});
  EXPECT_EQ(p.algorithms, (std::vector<std::string>{"bfs", "cdlp", "lcc", "pr", "sssp", "wcc"}));
  EXPECT_TRUE(p.HasAlgorithm("PR"));
  EXPECT_FALSE(p.HasAlgorithm("tc"));
  EXPECT_EQ(p.bfs_source_vertex, 1u);
  EXPECT_EQ(p.cdlp_max_iterations, 2u);
  EXPECT_EQ(p.pr_damping_factor, 0.85);
  EXPECT_EQ(p.pr_num_iterations, 2u);
  EXPECT_EQ(p.sssp_weight_property, "weight");
  EXPECT_EQ(p.sssp_source_vertex, 1u);
  EXPECT_EQ(p.WeightColumn(), 0);
  EXPECT_EQ(p.raw.at("bfs.source-vertex"), "1");
  EXPECT_EQ(GraphalyticsOutputPath(p, "bfs"), kExampleDir + "/example-directed-BFS");
}

TEST(Graphalytics, UndirectedExampleProperties) {
  GraphalyticsProperties p;
  ASSERT_TRUE(ReadGraphalyticsProperties(kExampleDir + "/example-undirected.properties", &p).ok());
  EXPECT_EQ(p.name, "example-undirected");
  EXPECT_FALSE(p.directed);
  EXPECT_EQ(p.meta_vertices, 9u);
  EXPECT_EQ(p.meta_edges, 12u);
  EXPECT_EQ(p.bfs_source_vertex, 2u);
  EXPECT_EQ(p.sssp_source_vertex, 2u);
}

TEST(Graphalytics, ExampleGraphsLoadAndMatchAdjacencyLists) {
  for (const char* name : {"example-directed", "example-undirected"}) {
    GraphalyticsProperties p;
    ASSERT_TRUE(
        ReadGraphalyticsProperties(kExampleDir + "/" + name + ".properties", &p).ok());
    std::vector<uint64_t> vertices;
    Status s = ReadGraphalyticsVertices(p.vertex_path, &vertices);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(vertices.size(), *p.meta_vertices);
    EXPECT_TRUE(std::is_sorted(vertices.begin(), vertices.end()));
    std::vector<Edge> edges;
    s = ReadGraphalyticsEdges(p, &edges);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(edges.size(), *p.meta_edges);
    std::set<uint64_t> vset(vertices.begin(), vertices.end());
    std::map<uint64_t, std::set<uint64_t>> adj;
    for (const Edge& e : edges) {
      EXPECT_TRUE(vset.count(e.src) && vset.count(e.dst));
      EXPECT_NE(e.src, e.dst);
      EXPECT_GT(e.weight, 0.0);
      EXPECT_LE(e.weight, 1.0);
      adj[e.src].insert(e.dst);
      if (!p.directed) adj[e.dst].insert(e.src);
    }
    // The "-input" file is the same graph as adjacency lists "v n1 n2 ...".
    std::ifstream in(kExampleDir + "/" + name + "-input");
    std::string line;
    size_t lines = 0;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      uint64_t v, n;
      ls >> v;
      std::set<uint64_t> nbrs;
      while (ls >> n) nbrs.insert(n);
      EXPECT_EQ(nbrs, adj[v]) << name << " vertex " << v;
      lines++;
    }
    EXPECT_EQ(lines, vertices.size());
  }
  GraphalyticsProperties p;
  ASSERT_TRUE(ReadGraphalyticsProperties(kExampleDir + "/example-directed.properties", &p).ok());
  std::vector<Edge> edges;
  ASSERT_TRUE(ReadGraphalyticsEdges(p, &edges).ok());
  EXPECT_EQ(edges[0].src, 1u);
  EXPECT_EQ(edges[0].dst, 3u);
  EXPECT_EQ(edges[0].weight, 0.5);
}

TEST(Graphalytics, ExpectedOutputs) {
  std::vector<GraphalyticsValue> v;
  ASSERT_TRUE(ReadGraphalyticsOutput(kExampleDir + "/example-directed-BFS", &v).ok());
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0].vertex, 1u);
  EXPECT_TRUE(v[0].is_integer);
  EXPECT_EQ(v[0].integer, 0u);
  EXPECT_EQ(v[1].vertex, 2u);
  EXPECT_TRUE(v[1].is_integer);
  EXPECT_EQ(v[1].integer, 9223372036854775807ull);
  EXPECT_EQ(v[1].text, "9223372036854775807");

  ASSERT_TRUE(ReadGraphalyticsOutput(kExampleDir + "/example-directed-SSSP", &v).ok());
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0].real, 0.0);
  EXPECT_TRUE(std::isinf(v[1].real));
  EXPECT_FALSE(v[1].is_integer);
  EXPECT_NEAR(v[2].real, 0.5, 1e-12);

  ASSERT_TRUE(ReadGraphalyticsOutput(kExampleDir + "/example-undirected-PR", &v).ok());
  ASSERT_EQ(v.size(), 9u);
  double sum = 0;
  for (const GraphalyticsValue& x : v) sum += x.real;
  EXPECT_NEAR(sum, 1.0, 1e-3);
  for (const char* algo : {"BFS", "CDLP", "LCC", "PR", "SSSP", "WCC"}) {
    for (const char* g : {"example-directed", "example-undirected"}) {
      Status s = ReadGraphalyticsOutput(kExampleDir + "/" + g + "-" + algo, &v);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }
}

TEST(Graphalytics, MalformedFilesNameTheLine) {
  TempDir dir;
  const std::string props = dir.File("g.properties");
  WriteAll(props,
           "# c\ngraph.g.directed = true\ngraph.g.bfs.source-vertex = one\n");
  GraphalyticsProperties p;
  Status s = ReadGraphalyticsProperties(props, &p);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message().rfind(props + ": line 3: graph.g.bfs.source-vertex: expected", 0), 0u)
      << s.message();
  WriteAll(props, "graph.g.directed = maybe\n");
  EXPECT_TRUE(ReadGraphalyticsProperties(props, &p).IsInvalidArgument());
  WriteAll(props, "unrelated = 1\n");
  EXPECT_TRUE(ReadGraphalyticsProperties(props, &p).IsInvalidArgument());
  // Line continuations, ':' separators and a name that differs from the file name.
  WriteAll(props,
           "graph.other.directed: false\ngraph.other.algorithms = bfs, \\\n   wcc\n"
           "graph.other.edge-file = /abs/x.e\ngraph.other.meta.edges = 1\\\n");
  ASSERT_TRUE(ReadGraphalyticsProperties(props, &p).ok());
  EXPECT_EQ(p.name, "other");
  EXPECT_FALSE(p.directed);
  EXPECT_EQ(p.algorithms, (std::vector<std::string>{"bfs", "wcc"}));
  EXPECT_EQ(p.edge_path, "/abs/x.e");
  EXPECT_EQ(p.meta_edges, 1u);  // a continuation at the end of the file
  EXPECT_EQ(p.vertex_path, dir.path() + "/other.v");
  EXPECT_FALSE(p.weighted());

  const std::string vfile = dir.File("g.v");
  WriteAll(vfile, "1\n2\nx3\n");
  std::vector<uint64_t> vs;
  s = ReadGraphalyticsVertices(vfile, &vs);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), vfile + ": line 3: expected a vertex ID, got: 'x3'");

  const std::string out = dir.File("g-BFS");
  WriteAll(out, "1 0\n2\n");
  std::vector<GraphalyticsValue> v;
  s = ReadGraphalyticsOutput(out, &v);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), out + ": line 2: expected '<vertex-id> <value>', got: '2'");
}

// ---------------------------------------------------------------------------------------------
// Throughput (disabled by default; see the top of the file).

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int PerfScale() {
  const char* s = std::getenv("STRATA_PERF_SCALE");
  return s != nullptr ? std::atoi(s) : 20;
}

TEST(ToolsIoPerf, DISABLED_GenerateParseWrite) {
  const int scale = PerfScale();
  GeneratorOptions o;
  o.scale = scale;
  o.weighted = true;
  std::unique_ptr<EdgeGenerator> g;
  ASSERT_TRUE(EdgeGenerator::New(o, &g).ok());
  std::vector<Edge> batch;
  auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  uint64_t n = 0, checksum = 0;
  while (g->NextBatch(&batch, 1 << 16)) {
    n += batch.size();
    for (const Edge& e : batch) checksum += e.src ^ e.dst;
  }
  double t = Seconds(t0);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("generate kronecker scale %d (weighted): %llu edges in %.2f s = %.1f M edges/s "
              "(CPU time %.2f s = %.1f M edges/s; checksum %llx)\n",
              scale, static_cast<unsigned long long>(n), t, n / t / 1e6, cpu, n / cpu / 1e6,
              static_cast<unsigned long long>(checksum));

  TempDir dir;
  for (EdgeFormat f : {EdgeFormat::kText, EdgeFormat::kBinary}) {
    for (bool weighted : {false, true}) {
      const std::string path = dir.File("edges");
      o.weighted = weighted;
      ASSERT_TRUE(EdgeGenerator::New(o, &g).ok());
      std::unique_ptr<EdgeWriter> w;
      ASSERT_TRUE(EdgeWriter::Open(path, {.format = f, .weighted = weighted}, &w).ok());
      t0 = std::chrono::steady_clock::now();
      std::clock_t c = std::clock();
      ASSERT_TRUE(WriteGeneratedEdges(g.get(), w.get()).ok());
      ASSERT_TRUE(w->Finish().ok());
      t = Seconds(t0);
      double ct = static_cast<double>(std::clock() - c) / CLOCKS_PER_SEC;
      const uint64_t bytes = FileSize(path);
      std::printf("generate+write %s%s: %.2f s = %.1f M edges/s (CPU %.1f M edges/s), %.1f MB "
                  "(%.1f B/edge)\n",
                  EdgeFormatName(f), weighted ? " weighted" : "", t, n / t / 1e6, n / ct / 1e6,
                  bytes / 1e6, static_cast<double>(bytes) / n);

      std::unique_ptr<EdgeReader> r;
      ASSERT_TRUE(EdgeReader::Open(path, {}, &r).ok());
      std::vector<EdgeRecord> recs;
      uint64_t got = 0;
      t0 = std::chrono::steady_clock::now();
      c = std::clock();
      while (true) {
        ASSERT_TRUE(r->NextBatch(&recs, 1 << 16).ok());
        if (recs.empty()) break;
        got += recs.size();
      }
      t = Seconds(t0);
      ct = static_cast<double>(std::clock() - c) / CLOCKS_PER_SEC;
      ASSERT_EQ(got, n);
      std::printf("read %s%s: %.2f s = %.1f M edges/s, %.0f MB/s (CPU %.1f M edges/s)\n",
                  EdgeFormatName(f), weighted ? " weighted" : "", t, n / t / 1e6,
                  bytes / t / 1e6, n / ct / 1e6);
    }
  }
}

}  // namespace
}  // namespace strata::graphio
