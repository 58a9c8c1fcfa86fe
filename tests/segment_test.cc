// Tests of the CSR segment format (segment/segment_writer.h, segment/segment_reader.h) on both I/O back
// ends: round trips against an in-memory model (empty neighbor lists, a vertex with 1,000,000
// edges, IDs near 2^64, weights, tombstones, timestamps, both pinning modes), the bloom filter,
// writer argument checks, and corruption: byte flips at many offsets and truncations must give
// Status::Corruption naming the file and an offset — never a crash, never a wrong answer.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <atomic>

#include <gtest/gtest.h>
#include <xxhash.h>

#include "segment/block_cache.h"
#include "segment/bloom.h"
#include "io/env.h"
#include "segment/scan_spares.h"
#include "segment/segment_format.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"
#include "segment/stream_window.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {
namespace {

constexpr VertexId kMax = std::numeric_limits<VertexId>::max();

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/strata_segment_test_XXXXXX";
    char* p = ::mkdtemp(tmpl);
    EXPECT_NE(p, nullptr);
    path_ = p ? p : "/tmp";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// ---- The model: what a segment should contain.

struct Edge {
  VertexId dst;
  double weight = 1.0;
  bool tomb = false;
  Timestamp ts = 0;
};
struct Vertex {
  VertexId src;
  uint8_t flags = 0;
  std::vector<Edge> edges;  // ascending dst
};
using Graph = std::vector<Vertex>;  // ascending src

struct Opts {
  bool weighted = false;
  bool ts = false;
  uint32_t block = 4096;
  uint32_t group = 64;
  uint32_t bloom_part = 4096;
  int bloom_bits = 10;
  size_t extent = 1 << 20;
};

// A random graph: `n` vertices with gaps between sources, degrees from `degree`.
Graph RandomGraph(uint64_t seed, size_t n, uint32_t max_degree, VertexId base = 0,
                  VertexId dst_space = 1 << 20) {
  std::mt19937_64 rng(seed);
  Graph g;
  VertexId src = base;
  for (size_t i = 0; i < n; i++) {
    src += 1 + rng() % 5;
    Vertex v{src, static_cast<uint8_t>(rng() % 8), {}};
    uint32_t d = static_cast<uint32_t>(rng() % (max_degree + 1));
    if (rng() % 4 == 0) d = 0;
    std::vector<VertexId> dsts;
    for (uint32_t k = 0; k < d; k++) dsts.push_back(rng() % dst_space);
    std::sort(dsts.begin(), dsts.end());
    dsts.erase(std::unique(dsts.begin(), dsts.end()), dsts.end());
    for (VertexId x : dsts) {
      Edge e{x, static_cast<double>(rng() % 1000) / 8.0, rng() % 7 == 0, 1000 + rng() % 5000};
      v.edges.push_back(e);
    }
    g.push_back(std::move(v));
  }
  return g;
}

Status WriteGraph(io::Env* env, const std::string& path, const Graph& g, const Opts& o,
                  SegmentWriteStats* stats = nullptr) {
  SegmentWriter w(env);
  SegmentWriterOptions wo;
  wo.weighted = o.weighted;
  wo.keep_timestamps = o.ts;
  wo.block_size = o.block;
  wo.vertex_group = o.group;
  wo.bloom_keys_per_partition = o.bloom_part;
  wo.bloom_bits_per_key = o.bloom_bits;
  wo.extent_bytes = o.extent;
  wo.level = 2;
  wo.file_number = 77;
  wo.timestamp = 3000;
  wo.user_tag = 5;
  Status s = w.Open(path, wo);
  if (!s.ok()) return s;
  for (const Vertex& v : g) {
    if (!(s = w.AddVertex(v.src, v.flags)).ok()) return s;
    for (const Edge& e : v.edges) {
      if (!(s = w.AddEdge(e.dst, e.weight, e.tomb, e.ts)).ok()) return s;
    }
  }
  return w.Finish(stats);
}

const char* BackendName(IoBackend b) { return b == IoBackend::kPosix ? "Posix" : "IoUring"; }

class SegmentTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == IoBackend::kIoUring && !io::Env::IoUringAvailable()) {
      GTEST_SKIP() << "io_uring is not available here";
    }
    io::EnvOptions eo;
    eo.backend = GetParam();
    eo.ring_single_reads = true;  // every read through the ring on the io_uring back end
    ASSERT_TRUE(io::Env::Open(eo, &env_).ok());
  }

  std::unique_ptr<SegmentReader> OpenReader(const std::string& path, bool pin = true,
                                            BlockCache* cache = nullptr) {
    SegmentReaderOptions ro;
    ro.cache = cache;
    ro.pin_vertex_blocks = pin;
    ro.pin_bloom = pin;
    ro.random_window = 8192;  // small windows: iterators refill many times
    ro.scan_window = 16384;
    std::unique_ptr<SegmentReader> r;
    Status s = SegmentReader::Open(env_.get(), path, ro, &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return r;
  }

  // Reads every vertex and edge back through every read path and compares with the model.
  void CheckAll(SegmentReader* r, const Graph& g, const Opts& o, uint64_t seed = 1) {
    const SegmentHeader& h = r->header();
    uint64_t edges = 0, tombs = 0;
    for (const Vertex& v : g) {
      edges += v.edges.size();
      for (const Edge& e : v.edges) tombs += e.tomb;
    }
    ASSERT_EQ(h.num_vertices, g.size());
    ASSERT_EQ(h.num_edges, edges);
    ASSERT_EQ(h.num_tombstones, tombs);
    ASSERT_EQ(h.level, 2u);
    ASSERT_EQ(h.file_number, 77u);
    ASSERT_EQ(h.timestamp, 3000u);
    ASSERT_EQ(h.user_tag, 5u);
    ASSERT_EQ(h.weighted(), o.weighted);
    ASSERT_EQ(h.has_timestamps(), o.ts);
    if (!g.empty()) {
      ASSERT_EQ(h.min_src, g.front().src);
      ASSERT_EQ(h.max_src, g.back().src);
    }
    Status vs = r->Verify();
    ASSERT_TRUE(vs.ok()) << vs.ToString();

    std::mt19937_64 rng(seed);
    ReadOptions ro;
    ro.weights = true;
    ro.timestamps = true;
    ro.max_batch = 200;  // rounded up to 256: batches of two chunks
    for (size_t i = 0; i < g.size(); i++) {
      const Vertex& v = g[i];
      VertexEntry e;
      Status s = r->FindVertex(v.src, &e);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(e.src, v.src);
      ASSERT_EQ(e.flags, v.flags);
      ASSERT_EQ(e.degree, v.edges.size());
      ASSERT_EQ(e.ordinal, i);
      bool any_tomb = false;
      for (const Edge& x : v.edges) any_tomb |= x.tomb;
      ASSERT_EQ(e.has_tombstones, any_tomb);
      if (i % 7 == 0) {
        VertexEntry e2;
        ASSERT_TRUE(r->VertexAt(i, &e2).ok());
        ASSERT_EQ(e2.src, v.src);
        ASSERT_EQ(e2.stream_offset, e.stream_offset);
      }
      // Full iteration.
      auto it = r->NewNeighborIterator(e, ro);
      EdgeBatch b;
      size_t k = 0;
      while (it->Next(&b)) {
        ASSERT_GT(b.size, 0u);
        for (size_t j = 0; j < b.size; j++, k++) {
          ASSERT_LT(k, v.edges.size());
          const Edge& x = v.edges[k];
          ASSERT_EQ(b.dst[j], x.dst);
          ASSERT_EQ(b.tombstone[j] != 0, x.tomb);
          ASSERT_EQ(b.weight[j], o.weighted ? x.weight : 1.0);
          ASSERT_EQ(b.ts[j], o.ts ? x.ts : 3000u);
        }
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      ASSERT_EQ(k, v.edges.size());
      // Seeks (forward and backward) on the same iterator.
      if (!v.edges.empty() && (i % 3 == 0 || v.edges.size() > 300)) {
        for (int q = 0; q < 4; q++) {
          VertexId target = q == 0 ? v.edges[rng() % v.edges.size()].dst
                                   : v.edges[rng() % v.edges.size()].dst + (q == 1 ? 1 : 0);
          if (q == 3) target = 0;
          ASSERT_TRUE(it->Seek(target).ok());
          auto lb = std::lower_bound(v.edges.begin(), v.edges.end(), target,
                                     [](const Edge& x, VertexId t) { return x.dst < t; });
          if (lb == v.edges.end()) {
            ASSERT_FALSE(it->Next(&b));
            ASSERT_TRUE(it->status().ok());
          } else {
            ASSERT_TRUE(it->Next(&b)) << it->status().ToString();
            ASSERT_EQ(b.dst[0], lb->dst);
            ASSERT_EQ(b.tombstone[0] != 0, lb->tomb);
            ASSERT_EQ(b.weight[0], o.weighted ? lb->weight : 1.0);
            if (b.size > 1 && lb + 1 != v.edges.end()) {
              ASSERT_EQ(b.dst[1], (lb + 1)->dst);
            }
          }
        }
      }
      // Point lookups: present and absent.
      if (!v.edges.empty() && (i % 2 == 0 || v.edges.size() > 300)) {
        for (int q = 0; q < 3; q++) {
          const Edge& x = v.edges[rng() % v.edges.size()];
          EdgeRecord rec;
          s = r->GetEdge(v.src, x.dst, &rec);
          ASSERT_TRUE(s.ok()) << s.ToString();
          ASSERT_EQ(rec.dst, x.dst);
          ASSERT_EQ(rec.tombstone, x.tomb);
          ASSERT_EQ(rec.weight, o.weighted ? x.weight : 1.0);
          ASSERT_EQ(rec.ts, o.ts ? x.ts : 3000u);
          VertexId absent = x.dst + 1;
          bool present = std::binary_search(
              v.edges.begin(), v.edges.end(), absent,
              [](const auto& a, const auto& b2) {
                if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Edge>) {
                  return a.dst < b2;
                } else {
                  return a < b2.dst;
                }
              });
          if (!present && absent != 0) {
            ASSERT_TRUE(r->GetEdge(v.src, absent, &rec).IsNotFound());
          }
        }
      }
    }
    // Batched reads (all block reads in flight at once), vertices in random order with
    // repeats; runs over 600 bytes take the streaming path.
    for (int round = 0; round < 3 && !g.empty(); round++) {
      std::vector<size_t> pick;
      for (size_t q = 0; q < std::min<size_t>(g.size(), 150); q++) pick.push_back(rng() % g.size());
      std::vector<VertexEntry> es(pick.size());
      for (size_t q = 0; q < pick.size(); q++) {
        ASSERT_TRUE(r->FindVertex(g[pick[q]].src, &es[q]).ok());
      }
      std::vector<size_t> got(pick.size(), 0);
      size_t last = 0;
      bool ordered = true, right = true;
      Status s = r->ReadNeighborsBatch(
          es.data(), es.size(), ro,
          [&](size_t q, const EdgeBatch& b) {
            ordered &= q >= last;
            last = q;
            const Vertex& v = g[pick[q]];
            for (size_t j = 0; j < b.size; j++, got[q]++) {
              const Edge& x = v.edges[got[q]];
              right &= b.dst[j] == x.dst && (b.tombstone[j] != 0) == x.tomb &&
                       b.weight[j] == (o.weighted ? x.weight : 1.0) &&
                       b.ts[j] == (o.ts ? x.ts : 3000u);
            }
            return true;
          },
          round == 0 ? 600 : uint64_t{256} << 10);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_TRUE(ordered);
      ASSERT_TRUE(right);
      for (size_t q = 0; q < pick.size(); q++) ASSERT_EQ(got[q], g[pick[q]].edges.size());
    }
    // Absent vertices.
    for (int q = 0; q < 50 && !g.empty(); q++) {
      const Vertex& v = g[rng() % g.size()];
      VertexId x = v.src + 1;
      bool present = std::binary_search(g.begin(), g.end(), x, [](const auto& a, const auto& b) {
        if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Vertex>) {
          return a.src < b;
        } else {
          return a < b.src;
        }
      });
      VertexEntry e;
      if (!present && x != 0) {
        ASSERT_TRUE(r->FindVertex(x, &e).IsNotFound());
      }
    }
    VertexEntry e;
    EdgeRecord rec;
    if (g.empty() || g.front().src > 0) {
      ASSERT_TRUE(r->FindVertex(0, &e).IsNotFound());
      ASSERT_TRUE(r->GetEdge(0, 0, &rec).IsNotFound());
    }
    if (g.empty() || g.back().src < kMax) {
      ASSERT_TRUE(r->FindVertex(kMax, &e).IsNotFound());
    }

    // Full scan, then a range scan, without weights.
    CheckScan(r, g, o, 0, kMax, true);
    if (g.size() > 4) {
      CheckScan(r, g, o, g[g.size() / 4].src, g[g.size() / 2].src, false);
      CheckScan(r, g, o, g[g.size() / 4].src + 1, g[g.size() / 2].src - 1, false);
    }
  }

  void CheckScan(SegmentReader* r, const Graph& g, const Opts& o, VertexId lo, VertexId hi,
                 bool weights) {
    ScanOptions so;
    so.min_src = lo;
    so.max_src = hi;
    so.read.weights = weights;
    auto sc = r->NewScanner(so);
    VertexEntry v;
    EdgeBatch b;
    size_t i = std::lower_bound(g.begin(), g.end(), lo,
                                [](const Vertex& x, VertexId s) { return x.src < s; }) -
               g.begin();
    size_t visited = 0;
    while (sc->NextVertex(&v)) {
      ASSERT_LT(i, g.size());
      ASSERT_EQ(v.src, g[i].src);
      ASSERT_EQ(v.degree, g[i].edges.size());
      // Skip the edges of every third vertex: the scanner must cope.
      if (visited++ % 3 != 2) {
        size_t k = 0;
        while (sc->NextEdges(&b)) {
          for (size_t j = 0; j < b.size; j++, k++) {
            ASSERT_EQ(b.dst[j], g[i].edges[k].dst);
            ASSERT_EQ(b.tombstone[j] != 0, g[i].edges[k].tomb);
            if (weights) {
              ASSERT_EQ(b.weight[j], o.weighted ? g[i].edges[k].weight : 1.0);
            } else {
              ASSERT_EQ(b.weight, nullptr);
            }
          }
        }
        ASSERT_EQ(k, g[i].edges.size());
      }
      i++;
    }
    ASSERT_TRUE(sc->status().ok()) << sc->status().ToString();
    size_t end = std::upper_bound(g.begin(), g.end(), hi,
                                  [](VertexId s, const Vertex& x) { return s < x.src; }) -
                 g.begin();
    ASSERT_EQ(i, std::max(end, i));
    ASSERT_EQ(i, end);
  }

  std::unique_ptr<io::Env> env_;
};

TEST_P(SegmentTest, EmptySegment) {
  TempDir dir;
  Opts o;
  Graph g;
  SegmentWriteStats st;
  ASSERT_TRUE(WriteGraph(env_.get(), dir.File("empty.seg"), g, o, &st).ok());
  EXPECT_EQ(st.num_vertices, 0u);
  auto r = OpenReader(dir.File("empty.seg"));
  ASSERT_NE(r, nullptr);
  CheckAll(r.get(), g, o);
  EXPECT_FALSE(r->MayContainEdge(1, 2));
}

TEST_P(SegmentTest, VerticesWithoutEdges) {
  TempDir dir;
  Opts o;
  o.group = 3;
  Graph g;
  for (VertexId v = 10; v < 40; v += 3) g.push_back(Vertex{v, kVertexDeleted, {}});
  g.push_back(Vertex{50, kVertexExists | kVertexAdded, {{7}, {9, 1.0, true}}});
  g.push_back(Vertex{51, kVertexExists, {}});
  ASSERT_TRUE(WriteGraph(env_.get(), dir.File("v.seg"), g, o).ok());
  auto r = OpenReader(dir.File("v.seg"));
  ASSERT_NE(r, nullptr);
  CheckAll(r.get(), g, o);
}

TEST_P(SegmentTest, RandomGraphsAllOptions) {
  TempDir dir;
  int round = 0;
  for (bool weighted : {false, true}) {
    for (bool ts : {false, true}) {
      for (uint32_t block : {512u, 4096u, 65536u}) {
        Opts o;
        o.weighted = weighted;
        o.ts = ts;
        o.block = block;
        o.group = round % 2 ? 5 : 64;
        o.bloom_part = round % 2 ? 97 : 4096;
        o.extent = round % 3 == 0 ? 1 : 64 << 10;  // one block per extent, or several
        Graph g = RandomGraph(100 + round, 400, 300);
        std::string path = dir.File("g" + std::to_string(round) + ".seg");
        SegmentWriteStats st;
        Status s = WriteGraph(env_.get(), path, g, o, &st);
        ASSERT_TRUE(s.ok()) << s.ToString();
        uint64_t size = 0;
        ASSERT_TRUE(env_->GetFileSize(path, &size).ok());
        EXPECT_EQ(size, st.file_size);
        EXPECT_EQ(st.file_size, st.edge_bytes + st.weight_bytes + st.vertex_bytes +
                                    st.bloom_bytes + st.metadata_bytes);
        for (bool pin : {true, false}) {
          SCOPED_TRACE("round " + std::to_string(round) + " pin " + std::to_string(pin));
          auto r = OpenReader(path, pin);
          ASSERT_NE(r, nullptr);
          CheckAll(r.get(), g, o, round);
        }
        round++;
      }
    }
  }
}

// With ReadOptions::first_batch = 16 a run's batches grow: its first 16 records, then pieces
// of its first chunk that double (16, 32, 64), then whole chunks up to max_batch (a segment with timestamps starts with
// the whole first chunk); without it every batch is whole chunks up to max_batch. A scanner
// whose reader stops after a vertex's first batch (an early-stopping kernel) leaves nothing
// behind for the next vertex.
TEST_P(SegmentTest, BatchesGrowFromAShortFirstPiece) {
  TempDir dir;
  for (bool ts : {false, true}) {
    Opts o;
    o.weighted = true;
    o.ts = ts;
    o.block = 512;  // runs cross many blocks
    Graph g = RandomGraph(7 + ts, 300, 700);
    std::string path = dir.File(ts ? "ts.seg" : "plain.seg");
    ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
    auto r = OpenReader(path, /*pin=*/false);
    ASSERT_NE(r, nullptr);
    size_t checked = 0;
    for (const Vertex& v : g) {
      if (v.edges.empty()) continue;
      VertexEntry e;
      ASSERT_TRUE(r->FindVertex(v.src, &e).ok());
      for (size_t first_batch : {size_t{0}, size_t{16}}) {
        ReadOptions ro;
        ro.weights = true;
        ro.max_batch = 512;
        ro.first_batch = first_batch;
        auto it = r->NewNeighborIterator(e, ro);
        EdgeBatch b;
        std::vector<size_t> sizes;
        size_t k = 0;
        while (it->Next(&b)) {
          sizes.push_back(b.size);
          for (size_t j = 0; j < b.size; j++, k++) {
            ASSERT_EQ(b.dst[j], v.edges[k].dst);
            ASSERT_EQ(b.tombstone[j] != 0, v.edges[k].tomb);
            ASSERT_EQ(b.weight[j], v.edges[k].weight);
          }
        }
        ASSERT_TRUE(it->status().ok()) << it->status().ToString();
        ASSERT_EQ(k, v.edges.size());
        const size_t d = v.edges.size();
        const bool piece = first_batch != 0 && !ts;
        const size_t first = first_batch == 0 ? std::min<size_t>(d, 512)
                             : ts            ? std::min<size_t>(d, 128)
                                             : std::min<size_t>(d, 16);
        ASSERT_EQ(sizes[0], first) << "degree " << d << " first_batch " << first_batch;
        // The first chunk's pieces end at 16, 32, 64 and 128 records (or the run's end).
        size_t q = 1;
        for (size_t at = 16; piece && at < std::min<size_t>(d, 128); at *= 2, ++q) {
          ASSERT_LT(q, sizes.size());
          ASSERT_EQ(sizes[q], std::min<size_t>({d, 128, 2 * at}) - at) << "degree " << d;
        }
        for (; q < sizes.size(); q++) ASSERT_LE(sizes[q], 512u);
      }
      checked += v.edges.size() > 128;
    }
    ASSERT_GT(checked, 10u);  // several runs of more than one chunk

    // A scan that reads only the first batch of every other vertex and all of the others.
    ScanOptions so;
    so.read.weights = true;
    so.read.first_batch = 16;
    auto sc = r->NewScanner(so);
    VertexEntry v;
    size_t i = 0;
    while (sc->NextVertex(&v)) {
      ASSERT_LT(i, g.size());
      ASSERT_EQ(v.src, g[i].src);
      EdgeBatch b;
      size_t k = 0;
      const bool whole = i % 2 == 1;
      while (sc->NextEdges(&b)) {
        for (size_t j = 0; j < b.size; j++, k++) {
          ASSERT_EQ(b.dst[j], g[i].edges[k].dst);
          ASSERT_EQ(b.tombstone[j] != 0, g[i].edges[k].tomb);
          ASSERT_EQ(b.weight[j], g[i].edges[k].weight);
        }
        if (!whole) break;
      }
      if (whole) {
        ASSERT_EQ(k, g[i].edges.size());
      }
      i++;
    }
    ASSERT_TRUE(sc->status().ok()) << sc->status().ToString();
    ASSERT_EQ(i, g.size());
  }
}

TEST_P(SegmentTest, MillionEdgeVertex) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  o.ts = true;
  Graph g;
  g.push_back(Vertex{5, kVertexExists, {{1}, {2}}});
  Vertex big{6, kVertexExists, {}};
  std::mt19937_64 rng(9);
  VertexId d = 0;
  for (int i = 0; i < 1000000; i++) {
    d += 1 + (i % 1000 == 0 ? rng() % 100000 : rng() % 8);
    big.edges.push_back(Edge{d, static_cast<double>(i), i % 997 == 0, Timestamp{5000} + (i % 13)});
  }
  g.push_back(std::move(big));
  g.push_back(Vertex{7, 0, {{3, 0.5}}});
  const std::string path = dir.File("big.seg");
  SegmentWriteStats st;
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o, &st).ok());
  std::printf("1M-edge vertex: %.2f bytes/edge in edge blocks, file %.2f bytes/edge\n",
              static_cast<double>(st.edge_bytes) / st.num_edges,
              static_cast<double>(st.file_size) / st.num_edges);
  for (bool pin : {true, false}) {
    auto r = OpenReader(path, pin);
    ASSERT_NE(r, nullptr);
    CheckAll(r.get(), g, o);
  }
}

TEST_P(SegmentTest, IdsNear2To64) {
  TempDir dir;
  for (bool weighted : {false, true}) {
    Opts o;
    o.weighted = weighted;
    o.ts = true;
    o.group = 2;
    Graph g;
    g.push_back(Vertex{0, kVertexExists, {{kMax}, }});
    g.push_back(Vertex{1, 0, {{0}, {1}, {kMax - 1}, {kMax}}});
    g.push_back(Vertex{kMax - 1000, 0, {{0, 2.0, false, 0}, {kMax, 3.0, true, kMax}}});
    Vertex v{kMax - 1, kVertexExists, {}};
    for (VertexId x = kMax - 300; x != 0; x++) v.edges.push_back(Edge{x, 1.5, x % 5 == 0, x});
    g.push_back(v);
    g.push_back(Vertex{kMax, kVertexDeleted, {{0}, {kMax / 2}, {kMax}}});
    const std::string path = dir.File("ids.seg");
    Status s = WriteGraph(env_.get(), path, g, o);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto r = OpenReader(path);
    ASSERT_NE(r, nullptr);
    CheckAll(r.get(), g, o);
    EdgeRecord rec;
    ASSERT_TRUE(r->GetEdge(kMax, kMax, &rec).ok());
    ASSERT_TRUE(r->GetEdge(0, kMax, &rec).ok());
    ASSERT_TRUE(r->GetEdge(kMax - 1000, kMax, &rec).ok());
    EXPECT_TRUE(rec.tombstone);
    EXPECT_EQ(rec.ts, kMax);
  }
}

TEST_P(SegmentTest, ManyVerticesFewEdges) {
  TempDir dir;
  Opts o;
  Graph g = RandomGraph(5, 100000, 3, 1000, 1u << 30);
  const std::string path = dir.File("many.seg");
  SegmentWriteStats st;
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o, &st).ok());
  auto r = OpenReader(path, false);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->Verify().ok());
  std::mt19937_64 rng(3);
  for (int q = 0; q < 20000; q++) {
    const Vertex& v = g[rng() % g.size()];
    VertexEntry e;
    ASSERT_TRUE(r->FindVertex(v.src, &e).ok());
    ASSERT_EQ(e.degree, v.edges.size());
  }
  CheckScan(r.get(), g, o, 0, kMax, false);
}

// SeekVertex lands where NextVertex would (the first vertex >= the target, within the scan's
// range), skipping whole vertex blocks when the target is far; the edges read after a seek
// are the model's, whether the seek skipped a little (read-ahead kept) or far past long runs
// (a sparse read: the windows read only the run).
// Gives every `every`-th vertex of g a long run: up to `draws` random destinations below 2^40
// (weight: destination mod 97).
void AddLongRuns(Graph* g, size_t every, int draws, uint64_t seed) {
  std::mt19937_64 fill(seed);
  for (size_t i = 0; i < g->size(); i += every) {
    std::vector<VertexId> d;
    for (int k = 0; k < draws; k++) d.push_back(fill() % (VertexId{1} << 40));
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    (*g)[i].edges.clear();
    for (VertexId x : d) (*g)[i].edges.push_back(Edge{x, static_cast<double>(x % 97), false, 0});
  }
}

TEST_P(SegmentTest, SeekVertexSkipsAheadAndReadsTheRightRuns) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  o.group = 16;  // many vertex blocks
  Graph g = RandomGraph(11, 20000, 40);
  // Long runs every 500 vertices: a seek past one skips more than the sparse gap.
  AddLongRuns(&g, 500, 30000, 12);
  const std::string path = dir.File("seek.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  for (bool pin : {true, false}) {
    auto r = OpenReader(path, pin);
    ASSERT_NE(r, nullptr);
    std::mt19937_64 rng(pin ? 13 : 14);
    for (int trial = 0; trial < 6; trial++) {
      ScanOptions so;
      so.min_src = trial < 3 ? 0 : g[g.size() / 5].src + 1;
      so.max_src = trial < 3 ? kMax : g[4 * g.size() / 5].src - 1;
      so.read.weights = trial % 2 == 0;
      auto sc = r->NewScanner(so);
      VertexEntry v;
      VertexId target = so.min_src;
      bool valid = true;
      while (valid) {
        // Steps of 1..4 sources (dense), or up to a tenth of the graph (sparse).
        const VertexId span = g.back().src / 10;
        target += rng() % 3 == 0 ? 1 + rng() % span : 1 + rng() % 4;
        valid = sc->SeekVertex(target, &v);
        const auto it = std::lower_bound(g.begin(), g.end(), target,
                                         [](const Vertex& x, VertexId t) { return x.src < t; });
        const bool expect = it != g.end() && it->src <= so.max_src;
        ASSERT_EQ(valid, expect) << "target " << target;
        if (!valid) break;
        ASSERT_EQ(v.src, it->src);
        ASSERT_EQ(v.degree, it->edges.size());
        target = v.src;
        if (rng() % 2 == 0) continue;  // leave its edges unread
        EdgeBatch b;
        size_t k = 0;
        while (sc->NextEdges(&b)) {
          for (size_t j = 0; j < b.size; j++, k++) {
            ASSERT_EQ(b.dst[j], it->edges[k].dst);
            if (so.read.weights) {
              ASSERT_EQ(b.weight[j], it->edges[k].weight);
            }
          }
        }
        ASSERT_EQ(k, it->edges.size()) << "vertex " << v.src;
      }
      ASSERT_TRUE(sc->status().ok()) << sc->status().ToString();
    }
  }
}

// SetVertex: a scanner handed entries found elsewhere (here FindVertex, in a store the
// multi-level index) reads their runs through its windows without loading a vertex block:
// dense and sparse steps, runs left unread, long runs skipped, weights or not, a sub-range
// (the windows stop at the range's last block).
TEST_P(SegmentTest, SetVertexReadsTheRunsOfEntriesGivenToIt) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  o.group = 16;
  Graph g = RandomGraph(21, 20000, 40);
  AddLongRuns(&g, 700, 20000, 22);
  const std::string path = dir.File("set.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  for (bool pin : {true, false}) {
    auto r = OpenReader(path, pin);
    ASSERT_NE(r, nullptr);
    std::mt19937_64 rng(pin ? 23 : 24);
    for (int trial = 0; trial < 6; trial++) {
      ScanOptions so;
      const size_t first = trial < 3 ? 0 : g.size() / 5;
      const size_t last = trial < 3 ? g.size() - 1 : 4 * g.size() / 5;
      so.min_src = g[first].src;
      so.max_src = g[last].src;
      so.read.weights = trial % 2 == 0;
      auto sc = r->NewScanner(so);
      VertexEntry e;
      size_t visited = 0;
      for (size_t i = first; i <= last; i += rng() % 3 == 0 ? 1 + rng() % 2000 : 1 + rng() % 4) {
        ASSERT_TRUE(r->FindVertex(g[i].src, &e).ok());
        sc->SetVertex(&e);
        ++visited;
        if (rng() % 2 == 0) continue;  // leave its edges unread
        EdgeBatch b;
        size_t k = 0;
        while (sc->NextEdges(&b)) {
          for (size_t j = 0; j < b.size; j++, k++) {
            ASSERT_LT(k, g[i].edges.size()) << "vertex " << g[i].src;
            ASSERT_EQ(b.dst[j], g[i].edges[k].dst);
            if (so.read.weights) {
              ASSERT_EQ(b.weight[j], g[i].edges[k].weight);
            }
          }
        }
        ASSERT_TRUE(sc->status().ok()) << sc->status().ToString();
        ASSERT_EQ(k, g[i].edges.size()) << "vertex " << g[i].src;
      }
      ASSERT_GT(visited, 10u);
    }
  }
}

TEST_P(SegmentTest, BloomHasNoFalseNegatives) {
  TempDir dir;
  Opts o;
  o.bloom_part = 1000;
  Graph g = RandomGraph(77, 3000, 100, 0, 1u << 30);
  const std::string path = dir.File("bloom.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  for (bool pin : {true, false}) {
    auto r = OpenReader(path, pin);
    ASSERT_NE(r, nullptr);
    uint64_t keys = 0;
    for (const Vertex& v : g) {
      for (const Edge& e : v.edges) {
        ASSERT_TRUE(r->MayContainEdge(v.src, e.dst));
        keys++;
      }
    }
    // False positives for keys that are absent (destinations far outside the used space).
    std::mt19937_64 rng(1);
    int fp = 0;
    const int probes = 100000;
    for (int q = 0; q < probes; q++) {
      const Vertex& v = g[rng() % g.size()];
      if (r->MayContainEdge(v.src, (VertexId{1} << 40) + rng() % (1u << 30))) fp++;
    }
    double rate = static_cast<double>(fp) / probes;
    std::printf("bloom: %llu keys, false-positive rate %.4f at 10 bits/key\n",
                static_cast<unsigned long long>(keys), rate);
    EXPECT_LT(rate, 0.03);
  }
  // The filter alone.
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 5000; i++) hashes.push_back(EdgeKeyHash(i, i * 7));
  std::string f;
  BuildBloomFilter(hashes.data(), hashes.size(), 10, BloomProbesFor(10), &f);
  for (uint64_t h : hashes) ASSERT_TRUE(BloomMayContain(f.data(), f.size(), BloomProbesFor(10), h));
}

// The filter's bits are part of the file format: the builder must set exactly the bits of the
// format's definition (docs/file-format.md): line from the hash's high 32 bits, probe i's bit
// the top 9 bits of low32 * 0x9E3779B9^i, as the reader tests them. The reference here is the
// definition written as the running product.
TEST(BloomFormat, BuilderSetsTheDefinedBits) {
  std::mt19937_64 rng(7);
  for (int bits_per_key : {1, 4, 10, 16, 20, 64}) {
    const int probes = BloomProbesFor(bits_per_key);
    for (size_t n : {size_t{1}, size_t{7}, size_t{300}, size_t{4096}}) {
      std::vector<uint64_t> hashes(n);
      for (uint64_t& h : hashes) h = rng();
      std::string built;
      BuildBloomFilter(hashes.data(), n, bits_per_key, probes, &built);
      const size_t lines = BloomLinesFor(n, bits_per_key);
      ASSERT_EQ(built.size(), lines * kBloomLineBytes);
      std::string want(lines * kBloomLineBytes, '\0');
      for (uint64_t hash : hashes) {
        const size_t line = static_cast<size_t>(((hash >> 32) * lines) >> 32);
        uint32_t h = static_cast<uint32_t>(hash);
        for (int p = 0; p < probes; p++) {
          const uint32_t bit = h >> 23;
          want[line * kBloomLineBytes + bit / 8] |= static_cast<char>(1u << (bit % 8));
          h *= 0x9E3779B9u;
        }
      }
      ASSERT_EQ(built, want) << "bits_per_key " << bits_per_key << ", n " << n;
      for (uint64_t h : hashes) ASSERT_TRUE(BloomMayContain(built.data(), built.size(), probes, h));
    }
  }
}

// EdgeKeyHash is the format's key hash: XXH3_64bits of src and dst as little-endian 64-bit
// words. bloom.cc compiles xxHash inline; the reference is the shared library's function.
TEST(BloomFormat, EdgeKeyHashIsTheLibrarysXxh3) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; i++) {
    const VertexId src = i < 4 ? static_cast<VertexId>(i) : rng();
    const VertexId dst = i < 4 ? ~VertexId{0} - static_cast<VertexId>(i) : rng();
    char key[16];
    EncodeFixed64(key, src);
    EncodeFixed64(key + 8, dst);
    ASSERT_EQ(EdgeKeyHash(src, dst), XXH3_64bits(key, sizeof(key))) << src << " " << dst;
  }
}

TEST_P(SegmentTest, WriterRejectsBadInput) {
  TempDir dir;
  {
    SegmentWriter w(env_.get());
    SegmentWriterOptions wo;
    wo.block_size = 1000;
    EXPECT_TRUE(w.Open(dir.File("a"), wo).IsInvalidArgument());
  }
  {
    SegmentWriter w(env_.get());
    ASSERT_TRUE(w.Open(dir.File("b"), SegmentWriterOptions()).ok());
    EXPECT_TRUE(w.AddEdge(1).IsInvalidArgument());  // before any vertex
    EXPECT_TRUE(w.AddVertex(5, 0x10).IsInvalidArgument());
    ASSERT_TRUE(w.AddVertex(5, 0).ok());
    ASSERT_TRUE(w.AddEdge(10).ok());
    EXPECT_TRUE(w.AddEdge(10).IsInvalidArgument());  // equal
    EXPECT_TRUE(w.AddEdge(3).IsInvalidArgument());   // descending
    ASSERT_TRUE(w.AddEdge(11).ok());
    EXPECT_TRUE(w.AddVertex(5, 0).IsInvalidArgument());  // equal
    EXPECT_TRUE(w.AddVertex(4, 0).IsInvalidArgument());  // descending
    ASSERT_TRUE(w.AddVertex(6, 0).ok());
    ASSERT_TRUE(w.AddEdge(0).ok());  // a new vertex starts a new order
    EXPECT_TRUE(w.AddVertex(6, 0).IsInvalidArgument());
    SegmentWriteStats st;
    ASSERT_TRUE(w.Finish(&st).ok());
    EXPECT_EQ(st.num_vertices, 2u);
    EXPECT_EQ(st.num_edges, 3u);
    EXPECT_FALSE(w.AddVertex(9, 0).ok());  // finished
    auto r = OpenReader(dir.File("b"));
    ASSERT_NE(r, nullptr);
    ASSERT_TRUE(r->Verify().ok());
  }
  {
    SegmentWriter w(env_.get());
    Status s = w.Open(dir.File("no/such/dir/c"), SegmentWriterOptions());
    ASSERT_TRUE(s.IsIOError());
    EXPECT_NE(s.message().find("no/such/dir/c"), std::string::npos);
  }
  {
    SegmentWriter w(env_.get());
    ASSERT_TRUE(w.Open(dir.File("d"), SegmentWriterOptions()).ok());
    ASSERT_TRUE(w.AddVertex(1, 0).ok());
    ASSERT_TRUE(w.Abandon().ok());
    EXPECT_FALSE(env_->FileExists(dir.File("d")));
  }
}

// AddEdges of n records writes what n single-record calls (AddEdge) write, byte for byte, for
// ranges that cross chunk (kChunkEdges) and bloom partition boundaries, with tombstones and
// timestamps inside them; a rejected range (out of order at its start or inside) writes nothing.
TEST_P(SegmentTest, AddEdgesWritesWhatAddEdgeWrites) {
  TempDir dir;
  auto slurp = [](const std::string& path) {
    std::string b;
    FILE* f = std::fopen(path.c_str(), "rb");
    EXPECT_NE(f, nullptr) << path;
    if (f == nullptr) return b;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) b.append(buf, n);
    std::fclose(f);
    return b;
  };
  std::mt19937_64 rng(1129);
  for (int round = 0; round < 6; ++round) {
    SegmentWriterOptions wo;
    wo.weighted = round % 2 == 0;
    wo.keep_timestamps = round % 3 == 1;
    wo.timestamp = 500;
    wo.bloom_keys_per_partition = round < 3 ? 100 : 4096;
    wo.vertex_group = 16;
    struct E {
      VertexId dst;
      double w;
      uint8_t tomb;
      Timestamp ts;
    };
    std::vector<std::pair<VertexId, std::vector<E>>> g;
    VertexId u = rng() % 10;
    for (int v = 0; v < 120; ++v, u += 1 + rng() % 5) {
      std::vector<E> es;
      const size_t deg = rng() % 8 == 0 ? rng() % 2000 : rng() % 40;
      VertexId d = rng() % 50;
      for (size_t k = 0; k < deg; ++k, d += 1 + rng() % 9) {
        es.push_back({d, static_cast<double>(rng() % 100) / 4.0,
                      static_cast<uint8_t>(rng() % 50 == 0), 400 + rng() % 200});
      }
      g.emplace_back(u, std::move(es));
    }
    SegmentWriter a(env_.get()), b(env_.get());
    ASSERT_TRUE(a.Open(dir.File("a"), wo).ok());
    ASSERT_TRUE(b.Open(dir.File("b"), wo).ok());
    uint64_t rejected = 0, ranges_with_tombs = 0;
    for (const auto& [src, es] : g) {
      ASSERT_TRUE(a.AddVertex(src, kVertexExists).ok());
      ASSERT_TRUE(b.AddVertex(src, kVertexExists).ok());
      for (const E& e : es) ASSERT_TRUE(a.AddEdge(e.dst, e.w, e.tomb != 0, e.ts).ok());
      std::vector<VertexId> d;
      std::vector<double> w;
      std::vector<uint8_t> t;
      std::vector<Timestamp> ts;
      for (size_t i = 0; i < es.size();) {
        const size_t j = std::min(es.size(), i + 1 + rng() % 300);
        d.clear();
        w.clear();
        t.clear();
        ts.clear();
        for (size_t k = i; k < j; ++k) {
          d.push_back(es[k].dst);
          w.push_back(es[k].w);
          t.push_back(es[k].tomb);
          ts.push_back(es[k].ts);
        }
        const bool tombs = std::count(t.begin(), t.end(), 1) > 0;
        ranges_with_tombs += tombs;
        if (i > 0 && rng() % 4 == 0) {  // starts at or before the last destination added
          std::vector<VertexId> bad = d;
          bad[0] = es[i - 1].dst;
          ASSERT_TRUE(b.AddEdges(bad.data(), w.data(), t.data(), bad.size(), ts.data())
                          .IsInvalidArgument());
          ++rejected;
        }
        if (d.size() > 2 && rng() % 4 == 0) {  // not ascending inside
          std::vector<VertexId> bad = d;
          std::swap(bad[1], bad[2]);
          ASSERT_TRUE(b.AddEdges(bad.data(), w.data(), t.data(), bad.size(), ts.data())
                          .IsInvalidArgument());
          ++rejected;
        }
        // Null arrays where they say the same: weights of an unweighted file, no tombstones,
        // timestamps not kept.
        const bool unit = !wo.weighted && rng() % 2 == 0;
        ASSERT_TRUE(b.AddEdges(d.data(), unit ? nullptr : w.data(),
                               !tombs && rng() % 2 == 0 ? nullptr : t.data(), d.size(),
                               wo.keep_timestamps ? ts.data() : nullptr)
                        .ok());
        i = j;
      }
    }
    EXPECT_GT(ranges_with_tombs, 10u);
    SegmentWriteStats sa, sb;
    ASSERT_TRUE(a.Finish(&sa).ok());
    ASSERT_TRUE(b.Finish(&sb).ok());
    EXPECT_GT(rejected, 10u);
    EXPECT_EQ(sa.num_edges, sb.num_edges);
    EXPECT_EQ(sa.num_tombstones, sb.num_tombstones);
    const std::string fa = slurp(dir.File("a")), fb = slurp(dir.File("b"));
    ASSERT_GT(fa.size(), 0u);
    // Byte for byte but the header's wall-clock creation time (and so its checksum).
    ASSERT_EQ(fa.size(), fb.size()) << "round " << round;
    ASSERT_GT(fa.size(), kHeaderSize + kFooterSize);
    const size_t h = fa.size() - kHeaderSize - kFooterSize;
    size_t at = 0;
    while (at < h && fa[at] == fb[at]) ++at;
    EXPECT_EQ(at, h) << "round " << round << ": first difference at offset " << at;
    EXPECT_TRUE(fa.compare(h + kHeaderSize, kFooterSize, fb, h + kHeaderSize, kFooterSize) == 0);
    SegmentHeader ha, hb;
    ASSERT_TRUE(ha.DecodeFrom(fa.data() + h));
    ASSERT_TRUE(hb.DecodeFrom(fb.data() + h));
    hb.creation_time_us = ha.creation_time_us;
    std::string ea(kHeaderSize, '\0'), eb(kHeaderSize, '\0');
    ha.EncodeTo(ea.data());
    hb.EncodeTo(eb.data());
    EXPECT_TRUE(ea == eb) << "round " << round << ": headers differ";
    auto r = OpenReader(dir.File("b"));
    ASSERT_NE(r, nullptr);
    ASSERT_TRUE(r->Verify().ok());
  }
  {
    SegmentWriter w(env_.get());
    ASSERT_TRUE(w.Open(dir.File("c"), SegmentWriterOptions()).ok());
    const VertexId d[2] = {1, 2};
    EXPECT_TRUE(w.AddEdges(d, nullptr, nullptr, 2).IsInvalidArgument());  // before any vertex
  }
}

TEST_P(SegmentTest, MissingFile) {
  TempDir dir;
  std::unique_ptr<SegmentReader> r;
  Status s = SegmentReader::Open(env_.get(), dir.File("nope.seg"), SegmentReaderOptions(), &r);
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find(dir.File("nope.seg")), std::string::npos);
}

// Every read path either gives the model's answer or fails: never a crash or a wrong answer.
// Returns the first error seen (OK if every answer was right and nothing failed).
Status ReadEverything(SegmentReader* r, const Graph& g) {
  ReadOptions ro;
  ro.weights = true;
  ro.timestamps = true;
  Status first;
  auto note = [&](const Status& s) {
    if (first.ok() && !s.ok()) first = s;
  };
  for (size_t i = 0; i < g.size(); i++) {
    const Vertex& v = g[i];
    VertexEntry e;
    Status s = r->FindVertex(v.src, &e);
    if (!s.ok()) {
      EXPECT_FALSE(s.IsNotFound()) << "vertex " << v.src << " lost: " << s.ToString();
      note(s);
      continue;
    }
    EXPECT_EQ(e.degree, v.edges.size());
    EXPECT_EQ(e.flags, v.flags);
    if (e.degree != v.edges.size()) return Status::Aborted("wrong degree");
    auto it = r->NewNeighborIterator(e, ro);
    EdgeBatch b;
    size_t k = 0;
    bool wrong = false;
    while (it->Next(&b)) {
      for (size_t j = 0; j < b.size && !wrong; j++, k++) {
        const Edge& x = v.edges[k];
        wrong = b.dst[j] != x.dst || (b.tombstone[j] != 0) != x.tomb || b.weight[j] != x.weight ||
                b.ts[j] != x.ts;
      }
    }
    EXPECT_FALSE(wrong) << "wrong edge of vertex " << v.src;
    if (wrong) return Status::Aborted("wrong edge");
    if (it->status().ok()) {
      EXPECT_EQ(k, v.edges.size());
    } else {
      note(it->status());
    }
    if (!v.edges.empty()) {
      const Edge& x = v.edges[v.edges.size() / 2];
      EdgeRecord rec;
      s = r->GetEdge(v.src, x.dst, &rec);
      if (s.ok()) {
        EXPECT_TRUE(rec.dst == x.dst && rec.tombstone == x.tomb && rec.weight == x.weight &&
                    rec.ts == x.ts);
      } else {
        EXPECT_FALSE(s.IsNotFound()) << "edge lost: " << s.ToString();
        note(s);
      }
    }
  }
  // All at once through the batched path.
  std::vector<VertexEntry> es;
  std::vector<size_t> which;
  for (size_t i = 0; i < g.size(); i++) {
    VertexEntry e;
    if (r->FindVertex(g[i].src, &e).ok() && e.degree == g[i].edges.size()) {
      es.push_back(e);
      which.push_back(i);
    }
  }
  std::vector<size_t> got(es.size(), 0);
  bool wrong = false;
  Status s = r->ReadNeighborsBatch(es.data(), es.size(), ro, [&](size_t q, const EdgeBatch& b) {
    const Vertex& v = g[which[q]];
    for (size_t j = 0; j < b.size && !wrong; j++, got[q]++) {
      const Edge& x = v.edges[got[q]];
      wrong = b.dst[j] != x.dst || (b.tombstone[j] != 0) != x.tomb || b.weight[j] != x.weight ||
              b.ts[j] != x.ts;
    }
    return !wrong;
  });
  EXPECT_FALSE(wrong) << "wrong edge from ReadNeighborsBatch";
  if (wrong) return Status::Aborted("wrong edge");
  note(s);
  return first;
}

void FlipByte(const std::string& path, uint64_t offset) {
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char c;
  ASSERT_EQ(::pread(fd, &c, 1, static_cast<off_t>(offset)), 1);
  c = static_cast<char>(c ^ 0x5a);
  ASSERT_EQ(::pwrite(fd, &c, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
}

bool NamesFileAndOffset(const Status& s, const std::string& path) {
  return s.message().find("file " + path + " offset ") != std::string::npos;
}

TEST_P(SegmentTest, ByteFlipsDetected) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  o.ts = true;
  o.block = 512;
  o.group = 4;
  o.bloom_part = 50;
  o.extent = 2048;
  Graph g = RandomGraph(11, 60, 40);
  // One multi-chunk vertex (skip table, chunk flags).
  Vertex big{g.back().src + 10, kVertexExists, {}};
  for (VertexId d = 0; d < 300; d++) big.edges.push_back(Edge{d * 3, d * 0.5, d % 11 == 0, d});
  g.push_back(big);
  const std::string path = dir.File("flip.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(path, &size).ok());
  {
    auto r = OpenReader(path);
    ASSERT_TRUE(ReadEverything(r.get(), g).ok());
  }
  // Offsets: every byte of the first 64 and of the last 1,024 (preamble and metadata), and
  // a stride through the rest.
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < size; i++) {
    if (i < 64 || i + 1024 >= size || i % 37 == 0) offsets.push_back(i);
  }
  int open_failed = 0, verify_failed = 0, read_failed = 0;
  for (uint64_t off : offsets) {
    FlipByte(path, off);
    for (bool pin : {true, false}) {
      SegmentReaderOptions ro;
      ro.pin_vertex_blocks = ro.pin_bloom = pin;
      std::unique_ptr<SegmentReader> r;
      Status s = SegmentReader::Open(env_.get(), path, ro, &r);
      if (!s.ok()) {
        ASSERT_TRUE(s.IsCorruption()) << off << ": " << s.ToString();
        ASSERT_TRUE(NamesFileAndOffset(s, path)) << s.ToString();
        open_failed += pin;
        continue;
      }
      Status rs = ReadEverything(r.get(), g);
      ASSERT_FALSE(rs.IsAborted()) << "wrong answer after flipping offset " << off;
      if (!rs.ok()) {
        ASSERT_TRUE(rs.IsCorruption()) << off << ": " << rs.ToString();
        ASSERT_TRUE(NamesFileAndOffset(rs, path)) << rs.ToString();
        read_failed += pin;
      }
      Status vs = r->Verify();
      ASSERT_TRUE(vs.IsCorruption()) << "flip at offset " << off << " not detected by Verify: "
                                     << vs.ToString();
      ASSERT_TRUE(NamesFileAndOffset(vs, path)) << vs.ToString();
      verify_failed += pin;
    }
    FlipByte(path, off);  // restore
  }
  std::printf("%zu flips of a %llu-byte file: %d caught at Open, %d more by reads, all by "
              "Verify\n",
              offsets.size(), static_cast<unsigned long long>(size), open_failed, read_failed);
  auto r = OpenReader(path);
  ASSERT_TRUE(r->Verify().ok());
}

TEST_P(SegmentTest, TruncationDetected) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  Graph g = RandomGraph(12, 200, 50);
  const std::string path = dir.File("full.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(path, &size).ok());
  std::string data(size, '\0');
  {
    std::unique_ptr<io::RandomAccessFile> f;
    ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
    ASSERT_TRUE(f->Read(0, size, data.data()).ok());
  }
  const std::string cut = dir.File("cut.seg");
  std::vector<uint64_t> lengths = {0, 1, 31, 4095, 4096, 4097, size / 2, size - 200,
                                   size - kFooterSize, size - 9, size - 1};
  for (uint64_t len : lengths) {
    {
      std::unique_ptr<io::WritableFile> w;
      ASSERT_TRUE(env_->NewWritableFile(cut, &w).ok());
      ASSERT_TRUE(w->Append(std::string_view(data).substr(0, len)).ok());
      ASSERT_TRUE(w->Close().ok());
    }
    std::unique_ptr<SegmentReader> r;
    Status s = SegmentReader::Open(env_.get(), cut, SegmentReaderOptions(), &r);
    ASSERT_TRUE(s.IsCorruption()) << len << ": " << s.ToString();
    ASSERT_TRUE(NamesFileAndOffset(s, cut)) << s.ToString();
  }
  // Garbage appended after a valid file: the footer is no longer at the end.
  {
    std::unique_ptr<io::WritableFile> w;
    ASSERT_TRUE(env_->NewWritableFile(cut, &w).ok());
    ASSERT_TRUE(w->Append(data).ok());
    ASSERT_TRUE(w->Append(std::string(100, 'x')).ok());
    ASSERT_TRUE(w->Close().ok());
    std::unique_ptr<SegmentReader> r;
    Status s = SegmentReader::Open(env_.get(), cut, SegmentReaderOptions(), &r);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  }
}

// Runs every read path and ignores the answers: for files whose contents are wrong but whose
// checksums match (a writer bug, or a checksum collision), where the only promise is no crash.
void Exercise(SegmentReader* r, const Graph& g) {
  ReadOptions ro;
  ro.weights = true;
  ro.timestamps = true;
  for (const Vertex& v : g) {
    VertexEntry e;
    if (!r->FindVertex(v.src, &e).ok()) continue;
    auto it = r->NewNeighborIterator(e, ro);
    EdgeBatch b;
    while (it->Next(&b)) {
    }
    if (!v.edges.empty()) {
      it->Seek(v.edges.back().dst).ok();
      while (it->Next(&b)) {
      }
      EdgeRecord rec;
      r->GetEdge(v.src, v.edges.front().dst, &rec).ok();
    }
  }
  std::vector<VertexEntry> es;
  for (uint64_t i = 0; i < r->num_vertices(); i++) {
    VertexEntry e;
    if (r->VertexAt(i, &e).ok()) es.push_back(e);
  }
  r->ReadNeighborsBatch(es.data(), es.size(), ro, [](size_t, const EdgeBatch&) { return true; })
      .ok();
  r->ReadNeighborsBatch(es.data(), es.size(), ro, [](size_t, const EdgeBatch&) { return true; },
                        100)
      .ok();
  ScanOptions so;
  so.read = ro;
  auto sc = r->NewScanner(so);
  VertexEntry v;
  EdgeBatch b;
  while (sc->NextVertex(&v)) {
    while (sc->NextEdges(&b)) {
    }
  }
  r->Verify().ok();
}

// Re-seals a modified block or section with a correct checksum, so only the decoders' own
// checks stand between the bytes and the caller.
void Reseal(std::string* file, uint64_t offset, uint64_t size_with_trailer, uint64_t seed) {
  char* p = file->data() + offset;
  uint64_t len = size_with_trailer - kBlockTrailerSize;
  EncodeFixed64(p + len, Checksum64(p, len, seed));
}

TEST_P(SegmentTest, ValidChecksumsOverBadContentNeverCrash) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  o.ts = true;
  o.block = 512;
  o.group = 4;
  o.bloom_part = 64;
  Graph g = RandomGraph(21, 40, 30);
  Vertex big{g.back().src + 3, kVertexExists, {}};
  for (VertexId d = 0; d < 400; d++) big.edges.push_back(Edge{d * 5, 1.0, d % 3 == 0, d});
  g.push_back(big);
  const std::string path = dir.File("good.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(path, &size).ok());
  std::string good(size, '\0');
  {
    std::unique_ptr<io::RandomAccessFile> f;
    ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
    ASSERT_TRUE(f->Read(0, size, good.data()).ok());
  }
  SegmentFooter footer;
  ASSERT_TRUE(footer.DecodeFrom(good.data() + size - kFooterSize));
  SegmentHeader header;
  ASSERT_TRUE(header.DecodeFrom(good.data() + footer.header.offset));
  const uint64_t payload = header.payload_per_block();
  const uint64_t blocks = (header.edge_stream_bytes + payload - 1) / payload;

  struct Target {
    uint64_t at;        // byte to change
    uint64_t block;     // start of the sealed unit
    uint64_t size;      // its size with the trailer
    uint64_t seed;
  };
  std::vector<Target> targets;
  // Edge blocks.
  for (uint64_t k = 0; k < blocks; k++) {
    uint64_t ext = DecodeFixed64(good.data() + footer.edge_extents.offset +
                                 8 * (k / header.blocks_per_extent));
    uint64_t off = ext + (k % header.blocks_per_extent) * header.block_size;
    uint64_t bsize = k + 1 < blocks ? header.block_size
                                    : header.edge_stream_bytes - k * payload + kBlockTrailerSize;
    for (uint64_t b = k % 7; b + kBlockTrailerSize < bsize; b += 41) {
      targets.push_back({off + b, off, bsize, ChecksumSeed(kSeedEdgeBlock, k)});
    }
  }
  // Vertex blocks.
  const uint64_t nvb = footer.vertex_index.size / kVertexIndexEntrySize;
  for (uint64_t j = 0; j < nvb; j++) {
    VertexIndexEntry e;
    e.DecodeFrom(good.data() + footer.vertex_index.offset + j * kVertexIndexEntrySize);
    for (uint64_t b = j % 2; b + kBlockTrailerSize < e.size; b += 2) {
      targets.push_back({e.offset + b, e.offset, e.size, ChecksumSeed(kSeedVertexBlock, j)});
    }
  }
  // Metadata sections (extent tables, indexes) and the header.
  const SegmentFooter::Section* secs[4] = {&footer.edge_extents, &footer.weight_extents,
                                           &footer.vertex_index, &footer.bloom_index};
  const uint32_t kinds[4] = {kSeedEdgeExtents, kSeedWeightExtents, kSeedVertexIndex,
                             kSeedBloomIndex};
  for (int i = 0; i < 4; i++) {
    for (uint64_t b = 0; b + kBlockTrailerSize < secs[i]->size; b += 7) {
      targets.push_back({secs[i]->offset + b, secs[i]->offset, secs[i]->size,
                         ChecksumSeed(kinds[i], 0)});
    }
  }
  for (uint64_t b = 0; b < kHeaderSize - 8; b++) {
    targets.push_back({footer.header.offset + b, footer.header.offset, kHeaderSize,
                       ChecksumSeed(kSeedHeader, 0)});
  }
  const std::string bad = dir.File("bad.seg");
  int opened = 0;
  const uint8_t patterns[3] = {0x01, 0x80, 0xff};
  for (size_t ti = 0; ti < targets.size(); ti++) {
    const Target& t = targets[ti];
    {
      const uint8_t x = patterns[ti % 3];
      std::string data = good;
      data[t.at] = static_cast<char>(data[t.at] ^ x);
      Reseal(&data, t.block, t.size, t.seed);
      {
        std::unique_ptr<io::WritableFile> w;
        ASSERT_TRUE(env_->NewWritableFile(bad, &w).ok());
        ASSERT_TRUE(w->Append(data).ok());
        ASSERT_TRUE(w->Close().ok());
      }
      std::unique_ptr<SegmentReader> r;
      SegmentReaderOptions ro;
      ro.pin_vertex_blocks = ro.pin_bloom = (t.at % 2 == 0);
      Status s = SegmentReader::Open(env_.get(), bad, ro, &r);
      if (!s.ok()) {
        ASSERT_TRUE(s.IsCorruption()) << s.ToString();
        continue;
      }
      opened++;
      Exercise(r.get(), g);
    }
  }
  std::printf("%zu resealed modifications, %d opened and exercised without a crash\n",
              targets.size(), opened);
}

TEST_P(SegmentTest, ConcurrentReaders) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  Graph g = RandomGraph(31, 2000, 400);
  const std::string path = dir.File("conc.seg");
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  BlockCache tiny(32 << 10);  // a few blocks: lookups race with evictions
  for (int mode = 0; mode < 3; mode++) {
    auto r = OpenReader(path, mode == 0, mode == 2 ? &tiny : nullptr);
    ASSERT_NE(r, nullptr);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(t);
        ReadOptions ro;
        ro.weights = true;
        for (int q = 0; q < 400; q++) {
          const Vertex& v = g[rng() % g.size()];
          VertexEntry e;
          if (!r->FindVertex(v.src, &e).ok() || e.degree != v.edges.size()) {
            wrong++;
            continue;
          }
          auto it = r->NewNeighborIterator(e, ro);
          EdgeBatch b;
          size_t k = 0;
          while (it->Next(&b)) {
            for (size_t j = 0; j < b.size; j++, k++) {
              if (b.dst[j] != v.edges[k].dst || b.weight[j] != v.edges[k].weight) wrong++;
            }
          }
          if (!it->status().ok() || k != v.edges.size()) wrong++;
          if (!v.edges.empty()) {
            EdgeRecord rec;
            const Edge& x = v.edges[rng() % v.edges.size()];
            if (!r->GetEdge(v.src, x.dst, &rec).ok() || rec.weight != x.weight) wrong++;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
  }
}

// Reads through a shared cache far smaller than the metadata give the same answers as pinned
// reads, keep the cache within its capacity, and leave nothing of a closed reader behind.
TEST_P(SegmentTest, ReadsThroughSmallSharedCache) {
  TempDir dir;
  Opts o;
  o.weighted = true;
  o.ts = true;
  o.bloom_part = 500;
  BlockCache cache(24 << 10);
  Graph g1 = RandomGraph(5, 4000, 30), g2 = RandomGraph(6, 3000, 50, 1u << 20);
  ASSERT_TRUE(WriteGraph(env_.get(), dir.File("a.seg"), g1, o).ok());
  ASSERT_TRUE(WriteGraph(env_.get(), dir.File("b.seg"), g2, o).ok());
  auto a = OpenReader(dir.File("a.seg"), true, &cache);
  auto b = OpenReader(dir.File("b.seg"), true, &cache);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->MemoryUsage(), OpenReader(dir.File("a.seg"), false)->MemoryUsage())
      << "a cached reader pins nothing";
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(ReadEverything(a.get(), g1).ok());
    ASSERT_TRUE(ReadEverything(b.get(), g2).ok());
    EXPECT_LE(cache.usage(), cache.capacity());
  }
  // Repeated lookups of one vertex hit.
  const uint64_t hits = cache.hits();
  VertexEntry e;
  for (int i = 0; i < 10; i++) ASSERT_TRUE(a->FindVertex(g1[7].src, &e).ok());
  EXPECT_GE(cache.hits(), hits + 9);
  b.reset();
  a.reset();
  EXPECT_EQ(cache.usage(), 0u) << "a closed reader's blocks leave the cache";
}

TEST_P(SegmentTest, EstimatedFileSizeTracksOutput) {
  TempDir dir;
  SegmentWriter w(env_.get());
  SegmentWriterOptions wo;
  wo.weighted = true;
  ASSERT_TRUE(w.Open(dir.File("est.seg"), wo).ok());
  std::mt19937_64 rng(5);
  for (VertexId v = 0; v < 20000; v++) {
    ASSERT_TRUE(w.AddVertex(v * 2, kVertexExists).ok());
    VertexId d = rng() % 100;
    for (int k = 0; k < 20; k++) {
      d += 1 + rng() % 1000;
      ASSERT_TRUE(w.AddEdge(d, 0.25).ok());
    }
  }
  uint64_t est = w.EstimatedFileSize();
  SegmentWriteStats st;
  ASSERT_TRUE(w.Finish(&st).ok());
  EXPECT_GT(est, st.file_size * 9 / 10);
  EXPECT_LT(est, st.file_size * 11 / 10);
}

// An RMAT ("Kronecker", Graph500 a=0.57 b=c=0.19) graph: bytes per edge on disk.
TEST_P(SegmentTest, SpaceOnKroneckerGraph) {
  TempDir dir;
  const int scale = 16;
  const uint64_t n_edges = uint64_t{16} << scale;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::pair<VertexId, VertexId>> edges;
  edges.reserve(n_edges);
  for (uint64_t i = 0; i < n_edges; i++) {
    VertexId s = 0, d = 0;
    for (int b = 0; b < scale; b++) {
      double x = u(rng);
      int q = x < 0.57 ? 0 : x < 0.76 ? 1 : x < 0.95 ? 2 : 3;
      s = (s << 1) | (q >> 1);
      d = (d << 1) | (q & 1);
    }
    edges.emplace_back(s, d);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  for (int bits : {10, 0}) {
    const std::string path = dir.File("kron.seg");
    SegmentWriter w(env_.get());
    SegmentWriterOptions wo;
    wo.bloom_bits_per_key = bits;
    ASSERT_TRUE(w.Open(path, wo).ok());
    VertexId cur = kMax;
    for (auto [s, d] : edges) {
      if (s != cur) {
        ASSERT_TRUE(w.AddVertex(s, kVertexExists).ok());
        cur = s;
      }
      ASSERT_TRUE(w.AddEdge(d).ok());
    }
    SegmentWriteStats st;
    ASSERT_TRUE(w.Finish(&st).ok());
    std::printf("kronecker scale %d: %llu edges, %llu vertices; bloom %d bits/key: %.3f "
                "bytes/edge on disk (edges %.3f, vertices %.3f, bloom %.3f, meta %.3f)\n",
                scale, static_cast<unsigned long long>(st.num_edges),
                static_cast<unsigned long long>(st.num_vertices), bits,
                static_cast<double>(st.file_size) / st.num_edges,
                static_cast<double>(st.edge_bytes) / st.num_edges,
                static_cast<double>(st.vertex_bytes) / st.num_edges,
                static_cast<double>(st.bloom_bytes) / st.num_edges,
                static_cast<double>(st.metadata_bytes) / st.num_edges);
    EXPECT_LT(static_cast<double>(st.edge_bytes + st.vertex_bytes) / st.num_edges, 4.0);
    auto r = OpenReader(path);
    ASSERT_NE(r, nullptr);
    auto t0 = std::chrono::steady_clock::now();
    auto sc = r->NewScanner(ScanOptions());
    VertexEntry v;
    EdgeBatch b;
    uint64_t seen = 0, checksum = 0;
    while (sc->NextVertex(&v)) {
      while (sc->NextEdges(&b)) {
        for (size_t i = 0; i < b.size; i++) checksum += b.dst[i];
        seen += b.size;
      }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(sc->status().ok());
    ASSERT_EQ(seen, edges.size());
    std::printf("  scan: %.1f M edges/s (warm page cache)\n", seen / secs / 1e6);
  }
}

// ---- Hints ahead of streamed scans (StreamWindow, SegmentScanner; RandomAccessFile::WillNeed).

// An Env whose files record what they are asked to read and to prefetch.
struct IoLog {
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> reads, hints;  // [begin, end) byte ranges
};

class RecordingFile final : public io::RandomAccessFile {
 public:
  RecordingFile(std::unique_ptr<io::RandomAccessFile> f, IoLog* log) : f_(std::move(f)), log_(log) {}
  Status Read(uint64_t offset, size_t n, char* buf) const override {
    Note(&IoLog::reads, offset, n);
    return f_->Read(offset, n, buf);
  }
  Status MultiRead(io::ReadRequest* reqs, size_t n) const override {
    for (size_t i = 0; i < n; i++) Note(&IoLog::reads, reqs[i].offset, reqs[i].len);
    return f_->MultiRead(reqs, n);
  }
  Status ReadRandom(uint64_t offset, size_t n, char* buf) const override {
    Note(&IoLog::reads, offset, n);
    return f_->ReadRandom(offset, n, buf);
  }
  void WillNeed(uint64_t offset, uint64_t n) const override {
    Note(&IoLog::hints, offset, n);
    f_->WillNeed(offset, n);
  }
  uint64_t Size() const override { return f_->Size(); }
  const std::string& path() const override { return f_->path(); }

 private:
  void Note(std::vector<std::pair<uint64_t, uint64_t>> IoLog::*v, uint64_t offset, uint64_t n) const {
    std::lock_guard<std::mutex> g(log_->mu);
    (log_->*v).emplace_back(offset, offset + n);
  }
  std::unique_ptr<io::RandomAccessFile> f_;
  IoLog* log_;
};

class RecordingEnv final : public io::Env {
 public:
  RecordingEnv(io::Env* base, IoLog* log) : base_(base), log_(log) {}
  IoBackend backend() const override { return base_->backend(); }
  Status NewWritableFile(const std::string& path, std::unique_ptr<io::WritableFile>* out) override {
    return base_->NewWritableFile(path, out);
  }
  Status NewRandomAccessFile(const std::string& path,
                             std::unique_ptr<io::RandomAccessFile>* out) override {
    std::unique_ptr<io::RandomAccessFile> f;
    Status s = base_->NewRandomAccessFile(path, &f);
    if (s.ok()) *out = std::make_unique<RecordingFile>(std::move(f), log_);
    return s;
  }

 private:
  io::Env* base_;
  IoLog* log_;
};

// Sorted, merged copy of a list of ranges.
std::vector<std::pair<uint64_t, uint64_t>> Merged(std::vector<std::pair<uint64_t, uint64_t>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto& r : v) {
    if (!out.empty() && r.first <= out.back().second) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

struct HintWindowsGuard {
  uint64_t saved = GetStreamHintWindows();
  ~HintWindowsGuard() { SetStreamHintWindows(saved); }
};

// A full scan with hints on names each block ahead of it once, names only bytes the scan then
// reads, and answers as without hints; with hints off it names nothing. A range scan names
// nothing past the range's vertex blocks and streams.
TEST_P(SegmentTest, ScanHintsNameWhatTheScanReadsNext) {
  HintWindowsGuard guard;
  TempDir dir;
  const std::string path = dir.File("hints.seg");
  Opts o;
  o.weighted = true;
  const Graph g = RandomGraph(41, 4000, 60);
  ASSERT_TRUE(WriteGraph(env_.get(), path, g, o).ok());
  uint64_t model = 0;
  for (const Vertex& v : g) {
    for (const Edge& e : v.edges) model += v.src * 31 + e.dst + static_cast<uint64_t>(e.weight * 8);
  }

  for (uint64_t windows : {uint64_t{0}, uint64_t{1}, uint64_t{4}}) {
    SCOPED_TRACE("hint windows " + std::to_string(windows));
    SetStreamHintWindows(windows);
    IoLog log;
    RecordingEnv env(env_.get(), &log);
    SegmentReaderOptions ro;
    ro.pin_vertex_blocks = false;  // vertex blocks are read (and hinted) by the scan
    ro.scan_window = 16384;
    std::unique_ptr<SegmentReader> r;
    ASSERT_TRUE(SegmentReader::Open(&env, path, ro, &r).ok());
    {
      std::lock_guard<std::mutex> l(log.mu);
      log.reads.clear();  // what Open read
      log.hints.clear();
    }
    ScanOptions so;
    so.read.weights = true;
    auto sc = r->NewScanner(so);
    VertexEntry v;
    EdgeBatch b;
    uint64_t sum = 0;
    while (sc->NextVertex(&v)) {
      while (sc->NextEdges(&b)) {
        for (size_t j = 0; j < b.size; j++) {
          sum += v.src * 31 + b.dst[j] + static_cast<uint64_t>(b.weight[j] * 8);
        }
      }
    }
    ASSERT_TRUE(sc->status().ok()) << sc->status().ToString();
    EXPECT_EQ(sum, model);
    if (windows == 0) {
      EXPECT_TRUE(log.hints.empty());
      continue;
    }
    ASSERT_GT(log.hints.size(), 10u);  // the file spans many windows
    // Each byte named at most once.
    std::vector<std::pair<uint64_t, uint64_t>> hints = log.hints;
    std::sort(hints.begin(), hints.end());
    for (size_t i = 1; i < hints.size(); i++) EXPECT_LE(hints[i - 1].second, hints[i].first);
    // Every named byte is read by the scan afterwards, none past the file's end.
    const auto reads = Merged(log.reads);
    for (const auto& h : hints) {
      EXPECT_LE(h.second, r->file_size());
      auto it = std::upper_bound(reads.begin(), reads.end(), std::make_pair(h.first, ~uint64_t{0}));
      ASSERT_NE(it, reads.begin()) << h.first;
      --it;
      EXPECT_LE(h.second, it->second) << "hint [" << h.first << ", " << h.second << ") not read";
    }

    // A range scan of the first quarter: its hints stay inside what a full scan of the range
    // reads, so none reaches the streams' bytes of the last half of the vertices.
    {
      std::lock_guard<std::mutex> l(log.mu);
      log.reads.clear();
      log.hints.clear();
    }
    ScanOptions half;
    half.max_src = g[g.size() / 4].src;
    auto sc2 = r->NewScanner(half);
    uint64_t n = 0;
    while (sc2->NextVertex(&v)) {
      while (sc2->NextEdges(&b)) n += b.size;
    }
    ASSERT_TRUE(sc2->status().ok());
    uint64_t want = 0;
    for (size_t i = 0; i <= g.size() / 4; i++) want += g[i].edges.size();
    EXPECT_EQ(n, want);
    const auto reads2 = Merged(log.reads);
    uint64_t hinted = 0, read = 0;
    for (const auto& h : log.hints) hinted += h.second - h.first;
    for (const auto& x : reads2) read += x.second - x.first;
    EXPECT_GT(hinted, 0u);
    EXPECT_LT(hinted, read + 4 * ro.scan_window) << "a quarter's scan named " << hinted << " bytes";
    EXPECT_LT(read + hinted, r->file_size() / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SegmentTest,
                         ::testing::Values(IoBackend::kPosix, IoBackend::kIoUring),
                         [](const ::testing::TestParamInfo<IoBackend>& p) {
                           return std::string(BackendName(p.param));
                         });

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(ScanSpares, KeepsFreedBuffersPerThreadWithinLimits) {
  using Spares = ScanSpares<std::unique_ptr<char[]>>;
  size_t bytes = 1;
  while (Spares::Take(&bytes) != nullptr) {
  }  // start from an empty list on this thread
  EXPECT_EQ(bytes, 0u);
  std::unique_ptr<char[]> a(new char[1 << 20]);
  char* const raw = a.get();
  Spares::Give(std::move(a), 1 << 20);
  std::unique_ptr<char[]> b = Spares::Take(&bytes);
  EXPECT_EQ(b.get(), raw);  // the same buffer comes back, with its capacity
  EXPECT_EQ(bytes, size_t{1} << 20);
  EXPECT_EQ(Spares::Take(&bytes), nullptr);
  EXPECT_EQ(bytes, 0u);

  // Another thread does not see this thread's spares.
  Spares::Give(std::move(b), 1 << 20);
  std::thread([] {
    size_t n = 1;
    EXPECT_EQ(Spares::Take(&n), nullptr);
    EXPECT_EQ(n, 0u);
  }).join();
  EXPECT_NE(Spares::Take(&bytes), nullptr);

  // At most kMaxObjects objects and kMaxBytes bytes are kept.
  for (size_t i = 0; i < Spares::kMaxObjects + 3; ++i) {
    Spares::Give(std::unique_ptr<char[]>(new char[16]), 16);
  }
  size_t kept = 0;
  while (Spares::Take(&bytes) != nullptr) ++kept;
  EXPECT_EQ(kept, Spares::kMaxObjects);
  Spares::Give(std::unique_ptr<char[]>(new char[16]), Spares::kMaxBytes + 1);
  EXPECT_EQ(Spares::Take(&bytes), nullptr);
}

}  // namespace
}  // namespace strata
