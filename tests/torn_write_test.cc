// Torn writes in a real store (docs/design.md, "Crash safety"): what a crash can leave
// half-written is cut and reported, never half-applied; damage that a crash cannot explain is
// Corruption naming the file, never a crash.
//
//   WAL:       the log of a crashed store cut at every interesting offset (0, inside the file
//              header, each record boundary, inside a record's header, right after it, inside
//              the payload, one byte short). Reopened, the store holds exactly the batches of
//              the whole records before the cut (compared with the reference model), and LOG
//              reports the cut unless it fell on a record boundary.
//   Manifest:  the manifest cut at the same kinds of offsets, with the store's logs as they
//              were before each flush (a flush deletes its log only after its manifest edit is
//              synced, so a torn edit always finds that log). Cut inside the first record, the
//              open fails with Corruption naming the manifest; anywhere later, every batch is
//              back and LOG reports a cut that is not on a boundary.
//   Segments:  a segment named by the manifest cut short is Corruption naming the file.
//   Leftovers: temporary files of an interrupted flush, compaction or CURRENT switch are
//              removed on open.
//   Replay:    a log of many batches (one replay group spanning many slices of subgraphs),
//              with and without vertex deletes, replays to the reference state.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>

#include "db/record_log.h"
#include "strata/db.h"
#include "tests/util/file_util.h"
#include "tests/util/in_child.h"
#include "tests/util/reference_graph.h"
#include "tests/util/temp_dir.h"
#include "util/coding.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::ReferenceGraph;

constexpr VertexId kVertices = 120;

using testing::InChild;
using testing::ReadAll;
using testing::WriteAll;

Options StoreOptions(GraphKind kind, WalMode wal) {
  Options o;
  o.graph_kind = kind;
  o.weighted = true;
  o.wal = wal;
  o.memgraph_bytes = 8 << 20;  // no flush unless asked
  o.memory_budget = 64 << 20;
  o.background_compaction = false;
  return o;
}

// A random batch the reference accepts (applied to `ref`), of `ops` ops on [0, n).
WriteBatch NextBatch(std::mt19937_64& rng, ReferenceGraph* ref, int ops, VertexId n,
                     bool vertex_deletes) {
  for (;;) {
    WriteBatch b;
    for (int i = 0; i < ops; ++i) {
      const VertexId u = rng() % n, v = rng() % n;
      const double w = static_cast<double>(rng() % 1000) / 8;
      const int r = static_cast<int>(rng() % 100);
      if (r < 60) {
        b.InsertEdge(u, v, w);
      } else if (r < 75) {
        b.DeleteEdge(u, v);
      } else if (r < 85) {
        auto it = ref->edges().lower_bound({u, v});
        if (it != ref->edges().end()) b.SetWeight(it->first.first, it->first.second, w);
      } else if (r < 97 || !vertex_deletes) {
        b.AddVertex(u);
      } else {
        b.DeleteVertex(u);
      }
    }
    if (!b.empty() && ref->Apply(b)) return b;
  }
}

std::string LogText(const std::string& dir) { return ReadAll(dir + "/LOG"); }

std::string OnlyFile(const std::string& dir, const std::string& suffix_or_prefix) {
  std::string found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename();
    const bool match = n.rfind(suffix_or_prefix, 0) == 0 ||
                       (n.size() > suffix_or_prefix.size() &&
                        n.compare(n.size() - suffix_or_prefix.size(), suffix_or_prefix.size(),
                                  suffix_or_prefix) == 0);
    if (match) {
      EXPECT_TRUE(found.empty()) << "two files match " << suffix_or_prefix;
      found = n;
    }
  }
  return found;
}

// Record boundaries of a record log: the end of its header, then the end of each record.
std::vector<uint64_t> Boundaries(const std::string& data) {
  std::vector<uint64_t> b{kRecordLogHeaderSize};
  while (b.back() + kRecordHeaderSize <= data.size()) {
    const uint64_t next = b.back() + kRecordHeaderSize + DecodeFixed32(data.data() + b.back());
    if (next > data.size()) break;
    b.push_back(next);
  }
  EXPECT_EQ(b.back(), data.size()) << "log does not end on a record boundary";
  return b;
}

// The interesting cuts: 0, inside the header, and around and inside every record.
std::vector<uint64_t> Cuts(const std::vector<uint64_t>& bounds) {
  std::vector<uint64_t> cuts = {0, 1, kRecordLogHeaderSize - 1};
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const uint64_t b = bounds[i], e = bounds[i + 1];
    for (uint64_t c : {b, b + 1, b + 9, b + kRecordHeaderSize, (b + kRecordHeaderSize + e) / 2, e - 1}) {
      if (c < e && (cuts.empty() || c > cuts.back())) cuts.push_back(c);
    }
  }
  cuts.push_back(bounds.back());
  return cuts;
}

void ExpectState(DB* db, const ReferenceGraph& ref, const std::string& what) {
  auto snap = db->GetSnapshot();
  const std::string diff = ref.Compare(*snap, kVertices);
  EXPECT_EQ(diff, "") << what;
  ASSERT_TRUE(snap->status().ok()) << what << ": " << snap->status().ToString();
}

// A child opens a store of `kind` at `path` with a synchronous WAL, writes `batches` and
// dies without closing it: the batches are in its log only.
void WriteThenCrash(GraphKind kind, const std::string& path,
                    const std::vector<WriteBatch>& batches) {
  InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), path, &db).ok());
    for (const WriteBatch& b : batches) ASSERT_TRUE(db->Write(b).ok());
    db.release();  // NOLINT: the crash: no clean close
  });
}

class TornWal : public ::testing::TestWithParam<GraphKind> {};

TEST_P(TornWal, CutAtEveryInterestingOffsetReplaysWholeRecordsOnly) {
  const GraphKind kind = GetParam();
  testing::TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  std::vector<WriteBatch> batches;
  {
    std::mt19937_64 rng(7);
    ReferenceGraph ref(kind, true);
    for (int i = 0; i < 24; ++i) batches.push_back(NextBatch(rng, &ref, 1 + i % 7, kVertices, true));
  }
  WriteThenCrash(kind, pristine, batches);
  const std::string wal = OnlyFile(pristine, ".wal");
  ASSERT_FALSE(wal.empty());
  const std::string data = ReadAll(pristine + "/" + wal);
  const std::vector<uint64_t> bounds = Boundaries(data);
  ASSERT_EQ(bounds.size(), batches.size() + 2) << "the log's identity, then one record per batch";

  int opened = 0;
  for (uint64_t cut : Cuts(bounds)) {
    const std::string work = dir.path() + "/w";
    fs::remove_all(work);
    fs::copy(pristine, work);
    WriteAll(work + "/" + wal, data.substr(0, cut));
    // Whole batch records before the cut (the first record is the log's identity).
    const size_t whole = static_cast<size_t>(std::max<ptrdiff_t>(
        0, std::upper_bound(bounds.begin() + 1, bounds.end(), cut) - (bounds.begin() + 2)));
    ReferenceGraph ref(kind, true);
    for (size_t i = 0; i < whole; ++i) ASSERT_TRUE(ref.Apply(batches[i]));
    const std::string what = "cut at " + std::to_string(cut) + " (" + std::to_string(whole) + " whole records)";
    std::unique_ptr<DB> db;
    Status s = DB::Open(StoreOptions(kind, WalMode::kSync), work, &db);
    if (cut < bounds[1]) {
      // The manifest lists the log only once its header and identity record are synced
      // (db/manifest.h, "Logs"), so a listed log cut inside them was damaged after the fact:
      // Corruption naming it. (A crash inside Create leaves a log not yet listed:
      // UnlistedLogs.TornInsideItsHeaderIsReplayedEmpty.)
      ASSERT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
      EXPECT_NE(s.ToString().find(wal), std::string::npos) << what << ": " << s.ToString();
      continue;
    }
    ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
    ExpectState(db.get(), ref, what);
    // The torn tail open found and went past is the crash's, not damage: Verify does not
    // count it (it did, while the replayed log stayed until the next flush).
    std::string report;
    EXPECT_TRUE(db->Verify(&report).ok()) << what << "\n" << report;
    ASSERT_TRUE(db->Close().ok()) << what;
    db.reset();
    const bool on_boundary = std::find(bounds.begin(), bounds.end(), cut) != bounds.end();
    const std::string log = LogText(work);
    const size_t at = log.find("recovery: torn log tail");
    EXPECT_EQ(at != std::string::npos, !on_boundary) << what << "\n" << log;
    if (at != std::string::npos) {
      EXPECT_NE(log.find(wal, at), std::string::npos) << what << "\n" << log;
    }
    // The reopened store is whole: a second open replays nothing torn.
    s = DB::Open(StoreOptions(kind, WalMode::kSync), work, &db);
    ASSERT_TRUE(s.ok()) << what << ": second open: " << s.ToString();
    ExpectState(db.get(), ref, what + ", second open");
    db.reset();
    EXPECT_EQ(LogText(work).find("cut torn"), std::string::npos) << what;
    ++opened;
  }
  EXPECT_GT(opened, 100);
}

INSTANTIATE_TEST_SUITE_P(Kinds, TornWal,
                         ::testing::Values(GraphKind::kDirectedWithInEdges, GraphKind::kUndirected));

TEST(TornManifest, CutAtEveryInterestingOffset) {
  const GraphKind kind = GraphKind::kDirectedWithInEdges;
  testing::TempDir dir;
  const std::string pristine = dir.path() + "/pristine", saved = dir.path() + "/saved";
  fs::create_directories(saved);
  std::vector<WriteBatch> batches;
  ReferenceGraph all(kind, true);
  {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 30; ++i) batches.push_back(NextBatch(rng, &all, 4, kVertices, true));
  }
  // Three groups of batches; the first two are flushed (a manifest edit each), the third is
  // only in the log at the crash. Each log is saved before the flush that deletes it.
  InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), pristine, &db).ok());
    for (size_t i = 0; i < batches.size(); ++i) {
      ASSERT_TRUE(db->Write(batches[i]).ok());
      if (i == 9 || i == 19) {
        for (const auto& e : fs::directory_iterator(pristine)) {
          if (e.path().extension() == ".wal") fs::copy(e.path(), saved / e.path().filename(), fs::copy_options::overwrite_existing);
        }
        ASSERT_TRUE(db->Flush().ok());
      }
    }
    db.release();  // NOLINT: the crash: no clean close
  });
  const std::string manifest = OnlyFile(pristine, "MANIFEST-");
  ASSERT_FALSE(manifest.empty());
  const std::string data = ReadAll(pristine + "/" + manifest);
  const std::vector<uint64_t> bounds = Boundaries(data);
  ASSERT_GE(bounds.size(), 4u) << "the state record and two flush edits";
  // Records that list a log (a first tag 7, db/manifest.cc): a log is listed before anything
  // is written to it, so no crash leaves a log holding batches beside a manifest cut before
  // its listing. Such cuts (the logs restored here hold batches) are refused, naming the log.
  std::vector<bool> lists_a_log;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    lists_a_log.push_back(data[bounds[i] + kRecordHeaderSize] == 7);
  }
  ASSERT_GE(std::count(lists_a_log.begin(), lists_a_log.end(), true), 3);

  int opened = 0, refused = 0, refused_unlisted = 0;
  for (uint64_t cut : Cuts(bounds)) {
    const std::string work = dir.path() + "/w";
    fs::remove_all(work);
    fs::copy(pristine, work);
    for (const auto& e : fs::directory_iterator(saved)) {
      if (!fs::exists(work / e.path().filename())) fs::copy(e.path(), work / e.path().filename());
    }
    WriteAll(work + "/" + manifest, data.substr(0, cut));
    const std::string what = "manifest cut at " + std::to_string(cut);
    std::unique_ptr<DB> db;
    Status s = DB::Open(StoreOptions(kind, WalMode::kSync), work, &db);
    if (cut < bounds[1]) {
      // No whole state record: nothing a crash can leave (a manifest is synced before CURRENT
      // names it), so corruption, naming the manifest.
      ASSERT_FALSE(s.ok()) << what;
      EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
      EXPECT_NE(s.ToString().find(manifest), std::string::npos) << what << ": " << s.ToString();
      ++refused;
      continue;
    }
    bool drops_a_listing = false;  // a listing record not whole before the cut
    for (size_t i = 0; i + 1 < bounds.size(); ++i) {
      drops_a_listing |= lists_a_log[i] && bounds[i + 1] > cut;
    }
    if (!s.ok() && drops_a_listing) {
      EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
      EXPECT_NE(s.ToString().find("does not list it"), std::string::npos) << what << ": "
                                                                          << s.ToString();
      ++refused_unlisted;
      continue;
    }
    ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
    ExpectState(db.get(), all, what);
    std::string report;
    s = db->Verify(&report);
    EXPECT_TRUE(s.ok()) << what << ": " << s.ToString() << "\n" << report;
    ASSERT_TRUE(db->Close().ok());
    db.reset();
    const bool on_boundary = std::find(bounds.begin(), bounds.end(), cut) != bounds.end();
    const std::string log = LogText(work);
    EXPECT_EQ(log.find("manifest: cut torn tail") != std::string::npos, !on_boundary) << what << "\n" << log;
    ++opened;
  }
  EXPECT_GT(refused, 3);
  EXPECT_GT(refused_unlisted, 3);
  EXPECT_GT(opened, 5);  // the cuts inside the last flush's edit, and the whole manifest
}

// A manifest edit cut short (a crash, or a full disk's short write: the edit was never
// acknowledged) is a torn tail the next writable open cuts. A read-only open leaves it, and
// its Verify does not count the tail that open found (`strata verify` after a full disk once
// said "manifest has a torn tail", exit 1, of a store with nothing wrong); a torn tail that
// appears after the open is counted.
TEST(TornManifest, AReadOnlyOpensTornTailIsNotCountedByVerify) {
  const GraphKind kind = GraphKind::kDirectedWithInEdges;
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), path, &db).ok());
    WriteBatch b;
    b.InsertEdge(1, 2);
    ASSERT_TRUE(db->Write(b).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  const std::string manifest = path + "/" + OnlyFile(path, "MANIFEST-");
  const std::string data = ReadAll(manifest);
  // Ten bytes of a record header: an edit cut inside its header.
  const std::string torn(10, '\x07');
  Options ro = StoreOptions(kind, WalMode::kSync);
  ro.read_only = true;
  ro.create_if_missing = false;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(ro, path, &db).ok());
    std::string report;
    EXPECT_TRUE(db->Verify(&report).ok()) << report;
    WriteAll(manifest, data + torn);  // after the open: counted
    report.clear();
    Status v = db->Verify(&report);
    EXPECT_TRUE(v.IsCorruption()) << v.ToString();
    EXPECT_NE(report.find("manifest has a torn tail"), std::string::npos) << report;
  }
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(ro, path, &db).ok());  // found by this open: not counted
    std::string report;
    Status v = db->Verify(&report);
    EXPECT_TRUE(v.ok()) << v.ToString() << "\n" << report;
    EXPECT_TRUE(db->GetSnapshot()->HasEdge(1, 2));
  }
  EXPECT_EQ(ReadAll(manifest), data + torn) << "a read-only open changed the manifest";
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), path, &db).ok());  // cuts it
    std::string report;
    EXPECT_TRUE(db->Verify(&report).ok()) << report;
    EXPECT_TRUE(db->GetSnapshot()->HasEdge(1, 2));
    ASSERT_TRUE(db->Close().ok());
  }
}

// A byte flipped in the last manifest record of a real store, a flush's edit: the flush
// deleted the log its segment replaced once the edit was synced, so opening without the edit
// would lose those batches without an error. Every flip is refused as Corruption naming the
// manifest (the flaky case of Corruption.FlippedBytesInEveryFileKindAreNamed, made certain).
TEST(DamagedManifest, FlipInALastFlushEditIsCorruptionNotLoss) {
  const GraphKind kind = GraphKind::kUndirected;
  testing::TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  ReferenceGraph all(kind, true);
  std::vector<WriteBatch> batches;
  {
    std::mt19937_64 rng(13);
    for (int i = 0; i < 20; ++i) batches.push_back(NextBatch(rng, &all, 4, kVertices, false));
  }
  InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), pristine, &db).ok());
    for (size_t i = 0; i < batches.size(); ++i) {
      ASSERT_TRUE(db->Write(batches[i]).ok());
      if (i == 14) {
        ASSERT_TRUE(db->Flush().ok());
      }
    }
    db.release();  // NOLINT: the crash: no clean close
  });
  const std::string manifest = OnlyFile(pristine, "MANIFEST-");
  const std::string data = ReadAll(pristine + "/" + manifest);
  const std::vector<uint64_t> bounds = Boundaries(data);
  ASSERT_EQ(bounds.size(), 5u)
      << "the state record, the first log listed, the next listed at the seal, the flush's edit";
  const uint64_t last = bounds[3], end = bounds[4];
  std::mt19937_64 rng(17);
  for (int t = 0; t < 12; ++t) {
    const uint64_t pos = last + rng() % (end - last);
    const std::string work = dir.path() + "/w";
    fs::remove_all(work);
    fs::copy(pristine, work);
    std::string bad = data;
    bad[pos] = static_cast<char>(bad[pos] ^ (1 + rng() % 255));
    WriteAll(work + "/" + manifest, bad);
    std::unique_ptr<DB> db;
    Status s = DB::Open(StoreOptions(kind, WalMode::kSync), work, &db);
    ASSERT_TRUE(s.IsCorruption()) << "flip at " << pos << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(manifest), std::string::npos) << s.ToString();
    EXPECT_EQ(ReadAll(work + "/" + manifest), bad) << "the manifest is kept for repair";
  }
  // Undamaged, the same store opens with every batch.
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), pristine, &db).ok());
  ExpectState(db.get(), all, "undamaged");
}

TEST(TruncatedSegment, IsCorruptionNamingTheFile) {
  const GraphKind kind = GraphKind::kDirected;
  testing::TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  {
    std::mt19937_64 rng(5);
    ReferenceGraph ref(kind, true);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kOff), pristine, &db).ok());
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 20; ++j) ASSERT_TRUE(db->Write(NextBatch(rng, &ref, 10, kVertices, false)).ok());
      ASSERT_TRUE(db->Flush().ok());
    }
    ASSERT_TRUE(db->Close().ok());
  }
  std::vector<std::string> segs;
  for (const auto& e : fs::directory_iterator(pristine)) {
    if (e.path().extension() == ".seg") segs.push_back(e.path().filename());
  }
  ASSERT_GE(segs.size(), 3u);
  int checked = 0;
  for (const std::string& seg : segs) {
    const std::string data = ReadAll(pristine + "/" + seg);
    for (uint64_t cut : {uint64_t{0}, uint64_t{1}, uint64_t{data.size() / 2}, uint64_t{data.size() - 8},
                         uint64_t{data.size() - 1}}) {
      const std::string work = dir.path() + "/w";
      fs::remove_all(work);
      fs::copy(pristine, work);
      WriteAll(work + "/" + seg, data.substr(0, cut));
      const std::string what = seg + " cut at " + std::to_string(cut) + " of " + std::to_string(data.size());
      std::unique_ptr<DB> db;
      Status s = DB::Open(StoreOptions(kind, WalMode::kOff), work, &db);
      ASSERT_FALSE(s.ok()) << what << ": opened";
      EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
      EXPECT_NE(s.ToString().find(seg), std::string::npos) << what << ": " << s.ToString();
      EXPECT_NE(s.ToString().find("offset"), std::string::npos) << what << ": " << s.ToString();
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(segs.size()) * 5);
}

// A crash inside WriteAheadLog::Create leaves a log the manifest does not list yet (it is
// listed only once its header and identity record are synced): cut anywhere inside them, it
// held no batch, and it is replayed as an empty log with a torn tail, beside the listed one.
TEST(UnlistedLogs, TornInsideItsHeaderIsReplayedEmpty) {
  const GraphKind kind = GraphKind::kDirectedWithInEdges;
  testing::TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  std::vector<WriteBatch> batches;
  ReferenceGraph ref(kind, true);
  {
    std::mt19937_64 rng(29);
    for (int i = 0; i < 10; ++i) batches.push_back(NextBatch(rng, &ref, 5, kVertices, true));
  }
  WriteThenCrash(kind, pristine, batches);
  const std::string wal = OnlyFile(pristine, ".wal");
  ASSERT_FALSE(wal.empty());
  const std::string data = ReadAll(pristine + "/" + wal);
  const std::vector<uint64_t> bounds = Boundaries(data);
  ASSERT_GT(bounds.size(), 2u);
  const std::string unlisted = "999999.wal";  // numbered past everything, as the next log is
  // (Not at the header's end: a whole header with no record is a boundary, not a torn tail.)
  for (uint64_t cut : {uint64_t{0}, uint64_t{1}, kRecordLogHeaderSize - 1,
                       kRecordLogHeaderSize + 5, bounds[1] - 1}) {
    const std::string what = "unlisted log cut at " + std::to_string(cut);
    const std::string work = dir.path() + "/w";
    fs::remove_all(work);
    fs::copy(pristine, work);
    WriteAll(work + "/" + unlisted, data.substr(0, cut));
    std::unique_ptr<DB> db;
    Status s = DB::Open(StoreOptions(kind, WalMode::kSync), work, &db);
    ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
    ExpectState(db.get(), ref, what);
    ASSERT_TRUE(db->Close().ok()) << what;
    db.reset();
    const std::string log = LogText(work);
    EXPECT_NE(log.find("recovery: torn log tail"), std::string::npos) << what << "\n" << log;
    EXPECT_NE(log.find(unlisted), std::string::npos) << what << "\n" << log;
  }
}

TEST(Leftovers, RemovedOnOpen) {
  const GraphKind kind = GraphKind::kDirected;
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::mt19937_64 rng(3);
  ReferenceGraph ref(kind, true);
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kGroup), path, &db).ok());
    for (int j = 0; j < 20; ++j) ASSERT_TRUE(db->Write(NextBatch(rng, &ref, 10, kVertices, true)).ok());
    ASSERT_TRUE(db->Flush().ok());
    for (int j = 0; j < 5; ++j) ASSERT_TRUE(db->Write(NextBatch(rng, &ref, 10, kVertices, true)).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  // What a crash leaves: a flush or compaction output the manifest never named, a CURRENT
  // switch that did not happen (CURRENT.tmp is rewritten and renamed by the open's own switch),
  // the manifest it would have named, any other temporary file.
  const std::vector<std::string> leftovers = {"999990.seg", "MANIFEST-999991", "000017.tmp"};
  for (const std::string& n : leftovers) WriteAll(path + "/" + n, "partial");
  WriteAll(path + "/CURRENT.tmp", "MANIFEST-999991\n");
  std::unique_ptr<DB> db;
  Status s = DB::Open(StoreOptions(kind, WalMode::kGroup), path, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectState(db.get(), ref, "after removing leftovers");
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  EXPECT_FALSE(fs::exists(path + "/CURRENT.tmp"));
  const std::string log = LogText(path);
  for (const std::string& n : leftovers) {
    EXPECT_FALSE(fs::exists(path + "/" + n)) << n;
    EXPECT_NE(log.find("removed leftover file " + n), std::string::npos) << n << "\n" << log;
  }
}

// One replay group of ~20K ops over 3000 vertices: sliced by subgraph without vertex deletes,
// applied whole with them.
class LargeReplay : public ::testing::TestWithParam<std::tuple<GraphKind, bool>> {};

TEST_P(LargeReplay, MatchesReference) {
  const auto [kind, vertex_deletes] = GetParam();
  constexpr VertexId kMany = 3000;
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::mt19937_64 rng(vertex_deletes ? 21 : 22);
  ReferenceGraph ref(kind, true);
  std::vector<WriteBatch> batches;
  for (int i = 0; i < 80; ++i) batches.push_back(NextBatch(rng, &ref, 250, kMany, vertex_deletes));
  InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(StoreOptions(kind, WalMode::kSync), path, &db).ok());
    for (const WriteBatch& b : batches) ASSERT_TRUE(db->Write(b).ok());
    db.release();  // NOLINT: the crash: no clean close
  });
  std::unique_ptr<DB> db;
  Status s = DB::Open(StoreOptions(kind, WalMode::kSync), path, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto snap = db->GetSnapshot();
  EXPECT_EQ(ref.Compare(*snap, kMany), "");
  EXPECT_NE(LogText(path).find("replayed 80 batches"), std::string::npos) << LogText(path);
}

INSTANTIATE_TEST_SUITE_P(
    KindsAndDeletes, LargeReplay,
    ::testing::Combine(::testing::Values(GraphKind::kDirected, GraphKind::kDirectedWithInEdges,
                                         GraphKind::kUndirected),
                       ::testing::Bool()));

}  // namespace
}  // namespace strata
