// Fault injection on the store layer: each test breaks a store the way a user or an attacker
// could and checks that the store refuses or repairs explicitly instead of answering wrong
// (docs/design.md, "Nothing silently wrong on disk"; docs/reliability.md has the table of
// faults). Each fails without the fix it holds.
//
//   Lock:      LOCK unlinked (and recreated) while the store is open: a second opener is
//              Busy; the first opener refuses to write its manifest under a replaced LOCK.
//   Segments:  segment files swapped, copied from another store, or replaced while open are
//              Corruption naming the file (on open and in Verify), never data; so is a
//              header level the manifest's entry cannot have (a file only moves down).
//   Wal:       a damaged (not torn) last WAL record is Corruption naming the log and offset;
//              Options::repair drops it for good; a torn one is still cut. A WAL of another
//              store is Corruption, never replayed.
//   ReadOnly:  a read-only open changes no byte of the directory, replays logs in memory,
//              refuses writes, shares the lock with other readers and excludes writers.
//   Create:    a first open that failed before CURRENT leaves a directory that opens.
//   Bloom:     a damaged bloom partition: pinned (a bare SegmentReader), Open fails; in a
//              store (nothing pinned) the reads that touch it fail and Verify reports it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "io/env.h"
#include "db/kept_files.h"
#include "db/manifest.h"
#include "db/record_log.h"
#include "segment/segment_format.h"
#include "segment/segment_reader.h"
#include "strata/db.h"
#include "tests/util/file_util.h"
#include "tests/util/in_child.h"
#include "tests/util/temp_dir.h"
#include "util/coding.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::InChild;
using testing::ReadAll;
using testing::WriteAll;

Options Opts() {
  Options o;
  o.graph_kind = GraphKind::kDirected;
  o.wal = WalMode::kSync;
  o.memgraph_bytes = 8 << 20;  // no flush unless asked
  o.memory_budget = 64 << 20;
  o.background_compaction = false;
  return o;
}

Options ReadOnlyOpts() {
  Options o = Opts();
  o.read_only = true;
  return o;
}

std::vector<std::string> FilesWith(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename();
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Batch k: edges (k, k+1+j) for j < 4.
WriteBatch Batch(VertexId k) {
  WriteBatch b;
  for (VertexId j = 0; j < 4; ++j) b.InsertEdge(k, k + 1 + j);
  return b;
}

bool HasBatch(const Snapshot& snap, VertexId k) {
  for (VertexId j = 0; j < 4; ++j) {
    if (!snap.GetEdge(k, k + 1 + j, nullptr).ok()) return false;
  }
  return true;
}

// A store with `flushes` L0 files, each holding batches [10f, 10f+10).
void BuildFlushed(const std::string& dir, int flushes) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(Opts(), dir, &db).ok());
  for (int f = 0; f < flushes; ++f) {
    const VertexId first = 10 * static_cast<VertexId>(f);
    for (VertexId k = first; k < first + 10; ++k) ASSERT_TRUE(db->Write(Batch(k)).ok());
    ASSERT_TRUE(db->Flush().ok());
  }
  ASSERT_TRUE(db->Close().ok());
}

// A crashed store: `batches` batches only in its WAL (no flush, no clean close).
void BuildCrashed(const std::string& dir, int batches) {
  InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), dir, &db).ok());
    for (VertexId k = 0; k < static_cast<VertexId>(batches); ++k) ASSERT_TRUE(db->Write(Batch(k)).ok());
    db.release();  // NOLINT: the crash
  });
}

// A store of one flushed segment (batches 0..9): the segment's path, its bytes and its
// decoded footer.
void BuildOneSegment(const std::string& dir, std::string* seg, std::string* data,
                     SegmentFooter* footer) {
  BuildFlushed(dir, 1);
  *seg = dir + "/" + FilesWith(dir, ".seg")[0];
  *data = ReadAll(*seg);
  ASSERT_TRUE(footer->DecodeFrom(data->data() + data->size() - kFooterSize));
}

// Batches 10..14 written onto an existing store and left only in its log (a crash).
void BuildCrashedOnto(const std::string& dir) {
  InChild([&] {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), dir, &db).ok());
    for (VertexId k = 10; k < 15; ++k) ASSERT_TRUE(db->Write(Batch(k)).ok());
    db.release();  // NOLINT
  });
}

// Opens the store at `path` with `o`, expecting Corruption with a message holding each of
// `needles`.
void ExpectOpenCorruption(const Options& o, const std::string& path,
                          const std::vector<std::string>& needles) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(o, path, &db);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  for (const std::string& n : needles) {
    EXPECT_NE(s.ToString().find(n), std::string::npos) << s.ToString();
  }
}

// Every file of the directory with its bytes, mode and modification time.
std::map<std::string, std::string> DirState(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    struct stat st;
    ::stat(e.path().c_str(), &st);
    out[e.path().filename()] = ReadAll(e.path()) + "|" + std::to_string(st.st_mode) + "|" +
                               std::to_string(st.st_mtim.tv_sec) + "." +
                               std::to_string(st.st_mtim.tv_nsec);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Item 1: the lock does not depend on LOCK surviving.

TEST(Lock, SecondOpenerFailsAfterLockIsUnlinked) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::unique_ptr<DB> a;
  ASSERT_TRUE(DB::Open(Opts(), path, &a).ok());
  ASSERT_TRUE(a->Write(Batch(1)).ok());
  ASSERT_EQ(::unlink((path + "/LOCK").c_str()), 0);
  std::unique_ptr<DB> b;
  Status s = DB::Open(Opts(), path, &b);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  // LOCK recreated by hand: still Busy, and a read-only opener is refused too.
  WriteAll(path + "/LOCK", "");
  s = DB::Open(Opts(), path, &b);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  s = DB::Open(ReadOnlyOpts(), path, &b);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  a.reset();
  ASSERT_TRUE(DB::Open(Opts(), path, &b).ok()) << "the lock goes with its holder";
  auto snap = b->GetSnapshot();
  EXPECT_TRUE(HasBatch(*snap, 1));
}

TEST(Lock, ReplacedLockStopsManifestWrites) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::unique_ptr<DB> a;
  ASSERT_TRUE(DB::Open(Opts(), path, &a).ok());
  ASSERT_TRUE(a->Write(Batch(1)).ok());
  ASSERT_EQ(::unlink((path + "/LOCK").c_str()), 0);
  WriteAll(path + "/LOCK", "");  // another file under the name
  ASSERT_TRUE(a->Write(Batch(2)).ok());
  Status s = a->Flush();  // writes a manifest edit
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(path + "/LOCK"), std::string::npos) << s.ToString();
  a.reset();
  // Nothing acknowledged is lost: the batches are still in the log.
  std::unique_ptr<DB> b;
  ASSERT_TRUE(DB::Open(Opts(), path, &b).ok());
  auto snap = b->GetSnapshot();
  EXPECT_TRUE(HasBatch(*snap, 1));
  EXPECT_TRUE(HasBatch(*snap, 2));
}

// ---------------------------------------------------------------------------------------------
// Item 2: segment files are checked against the manifest.

TEST(Segments, SwappedSegmentsAreCorruption) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 2);
  const auto segs = FilesWith(path, ".seg");
  ASSERT_EQ(segs.size(), 2u);
  fs::rename(path + "/" + segs[0], path + "/x");
  fs::rename(path + "/" + segs[1], path + "/" + segs[0]);
  fs::rename(path + "/x", path + "/" + segs[1]);
  for (bool ro : {false, true}) {
    ASSERT_NO_FATAL_FAILURE(ExpectOpenCorruption(ro ? ReadOnlyOpts() : Opts(), path,
                                                 {".seg offset ", "written as"}));
  }
}

// A segment's header records the level it was written at; the manifest may place a file of
// level >= 1 deeper (a move, Options::compaction_moves), never shallower, and never a level-0
// file anywhere but level 0. The header is rewritten here with a valid checksum, so the level
// check is what refuses it (before the tail checksum, which the manifest also records).
void RewriteHeaderLevel(const std::string& seg, uint32_t level) {
  std::string data = ReadAll(seg);
  SegmentFooter footer;
  ASSERT_TRUE(footer.DecodeFrom(data.data() + data.size() - kFooterSize));
  SegmentHeader h;
  ASSERT_TRUE(h.DecodeFrom(data.data() + footer.header.offset));
  h.level = level;
  h.EncodeTo(data.data() + footer.header.offset);
  WriteAll(seg, data);
}

TEST(Segments, HeaderLevelBelowOrBesideTheManifestsIsCorruption) {
  testing::TempDir dir;
  const std::string l0 = dir.path() + "/l0", l1 = dir.path() + "/l1";
  BuildFlushed(l0, 1);
  BuildFlushed(l1, 1);
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), l1, &db).ok());
    ASSERT_TRUE(db->CompactAll().ok());  // the one file, rewritten to level 1
    ASSERT_TRUE(db->Close().ok());
  }
  const std::string seg0 = l0 + "/" + FilesWith(l0, ".seg")[0];
  const std::string seg1 = l1 + "/" + FilesWith(l1, ".seg")[0];
  const std::string data0 = ReadAll(seg0), data1 = ReadAll(seg1);
  struct Case {
    std::string store, seg, data;
    uint32_t level;
    std::string needle;
  };
  for (const Case& c : {Case{l0, seg0, data0, 1, "level 1, the manifest records 0"},
                        Case{l1, seg1, data1, 2, "level 2, the manifest records 1 (a file only"},
                        Case{l1, seg1, data1, 0, "level 0, the manifest records 1"}}) {
    SCOPED_TRACE(c.needle);
    ASSERT_NO_FATAL_FAILURE(RewriteHeaderLevel(c.seg, c.level));
    ASSERT_NO_FATAL_FAILURE(ExpectOpenCorruption(Opts(), c.store, {c.seg, c.needle}));
    WriteAll(c.seg, c.data);
  }
  // Both stores open again with their files as written.
  for (const std::string& p : {l0, l1}) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Opts(), p, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (VertexId k = 0; k < 10; ++k) EXPECT_TRUE(HasBatch(*db->GetSnapshot(), k)) << k;
  }
}

TEST(Segments, SegmentOfAnotherStoreIsCorruption) {
  testing::TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  BuildFlushed(a, 1);
  BuildFlushed(b, 1);  // same shape, same file numbers, another store
  const auto segs = FilesWith(a, ".seg");
  ASSERT_EQ(segs, FilesWith(b, ".seg"));
  fs::copy_file(b + "/" + segs[0], a + "/" + segs[0], fs::copy_options::overwrite_existing);
  ASSERT_NO_FATAL_FAILURE(ExpectOpenCorruption(Opts(), a, {a + "/" + segs[0], "another store"}));
}

TEST(Segments, VerifyReadsTheFileNowAtThePath) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 2);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ReadOnlyOpts(), path, &db).ok());
  std::string report;
  ASSERT_TRUE(db->Verify(&report).ok()) << report;
  // Replaced while open: the open handle still reads the old file, Verify reads the new one.
  const auto segs = FilesWith(path, ".seg");
  fs::copy_file(path + "/" + segs[0], path + "/x");
  fs::rename(path + "/x", path + "/" + segs[1]);
  report.clear();
  Status s = db->Verify(&report);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(report.find(path + "/" + segs[1]), std::string::npos) << report;
}

TEST(Segments, SameNameSameShapeOtherContentIsCorruption) {
  // A copy of the store (same store ID) that went its own way: its next flush writes a file
  // of the same number, the same size and the same counts and source range, other edges. Only
  // the tail checksum the manifest records tells the two apart.
  testing::TempDir dir;
  const std::string path = dir.path() + "/db", twin = dir.path() + "/twin";
  BuildFlushed(path, 1);
  fs::copy(path, twin, fs::copy_options::recursive);
  auto flush = [](const std::string& p, const WriteBatch& b) {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), p, &db).ok());
    ASSERT_TRUE(db->Write(b).ok());
    ASSERT_TRUE(db->Close().ok());
  };
  WriteBatch mine, theirs;
  // Vertices 100..105 in both; 100 -> 101..104 here, 100 -> 101..103, 105 there.
  for (VertexId j = 1; j <= 4; ++j) mine.InsertEdge(100, 100 + j);
  mine.AddVertex(105);
  for (VertexId j = 1; j <= 3; ++j) theirs.InsertEdge(100, 100 + j);
  theirs.InsertEdge(100, 105);
  theirs.AddVertex(104);
  flush(path, mine);
  flush(twin, theirs);
  const auto segs = FilesWith(path, ".seg");
  ASSERT_EQ(segs, FilesWith(twin, ".seg"));
  const std::string name = segs.back();
  ASSERT_EQ(fs::file_size(path + "/" + name), fs::file_size(twin + "/" + name));
  fs::copy_file(twin + "/" + name, path + "/" + name, fs::copy_options::overwrite_existing);
  ASSERT_NO_FATAL_FAILURE(
      ExpectOpenCorruption(Opts(), path, {path + "/" + name + " offset ", "metadata checksum"}));
}

// ---------------------------------------------------------------------------------------------
// Item 5: a damaged last WAL record is an error; repair is explicit.

TEST(Wal, DamagedLastRecordIsCorruptionUntilRepair) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildCrashed(path, 20);
  const auto wals = FilesWith(path, ".wal");
  ASSERT_EQ(wals.size(), 1u);
  const std::string wal = path + "/" + wals[0];
  std::string data = ReadAll(wal);
  // The last record's start.
  uint64_t off = kRecordLogHeaderSize, last = off;
  while (off + kRecordHeaderSize <= data.size()) {
    last = off;
    off += kRecordHeaderSize + DecodeFixed32(data.data() + off);
  }
  ASSERT_EQ(off, data.size());
  data[data.size() - 2] ^= 0x5a;  // inside the last record's payload
  WriteAll(wal, data);
  {
    std::unique_ptr<io::Env> env;
    ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
    RecordLogTail tail;
    ASSERT_TRUE(ReadRecordLog(env.get(), wal, "SGWAL001", nullptr, 0x57,
                                   [](std::string_view, uint64_t) { return Status::OK(); }, &tail)
                    .ok());
    ASSERT_TRUE(tail.whole_damaged) << "precondition: the flip reads as damage, not a tear";
  }
  for (bool ro : {false, true}) {
    ASSERT_NO_FATAL_FAILURE(ExpectOpenCorruption(
        ro ? ReadOnlyOpts() : Opts(), path, {wal + " offset " + std::to_string(last), "repair"}));
  }
  // Repair drops the record and says so in LOG.
  Options rep = Opts();
  rep.repair = true;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(rep, path, &db).ok());
    auto snap = db->GetSnapshot();
    for (VertexId k = 0; k < 19; ++k) EXPECT_TRUE(HasBatch(*snap, k)) << k;
    EXPECT_FALSE(HasBatch(*snap, 19));
    const std::string log = ReadAll(path + "/LOG");
    EXPECT_NE(log.find("repair: dropped the damaged last record of " + wal), std::string::npos) << log;
  }
}

TEST(Wal, RepairIsDurableAndTornTailStillCut) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildCrashed(path, 20);
  const std::string wal = path + "/" + FilesWith(path, ".wal")[0];
  std::string data = ReadAll(wal);
  const std::string pristine = data;
  data[data.size() - 2] ^= 0x5a;
  WriteAll(wal, data);
  Options rep = Opts();
  rep.repair = true;
  InChild([&] {  // repair, then crash before any flush
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(rep, path, &db).ok());
    db.release();  // NOLINT
  });
  {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Opts(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto snap = db->GetSnapshot();
    EXPECT_TRUE(HasBatch(*snap, 18));
    EXPECT_FALSE(HasBatch(*snap, 19));
  }
  // A torn last record (cut short) is still cut without repair.
  testing::TempDir dir2;
  const std::string p2 = dir2.path() + "/db";
  BuildCrashed(p2, 20);
  const std::string wal2 = p2 + "/" + FilesWith(p2, ".wal")[0];
  std::string d2 = ReadAll(wal2);
  WriteAll(wal2, d2.substr(0, d2.size() - 3));
  std::unique_ptr<DB> db;
  Status s = DB::Open(Opts(), p2, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto snap = db->GetSnapshot();
  EXPECT_TRUE(HasBatch(*snap, 18));
  EXPECT_FALSE(HasBatch(*snap, 19));
}

TEST(Wal, LogOfAnotherStoreIsCorruption) {
  testing::TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  BuildFlushed(a, 1);
  BuildCrashed(b, 5);
  const auto wals = FilesWith(b, ".wal");
  ASSERT_EQ(wals.size(), 1u);
  // Same name as a log of `a` would have: only the store ID tells them apart.
  fs::copy_file(b + "/" + wals[0], a + "/" + wals[0]);
  for (bool ro : {true, false}) {
    ASSERT_NO_FATAL_FAILURE(ExpectOpenCorruption(ro ? ReadOnlyOpts() : Opts(), a,
                                                 {a + "/" + wals[0], "another store"}));
  }
}

// ---------------------------------------------------------------------------------------------
// Item 8: read-only opens.

TEST(ReadOnly, ChangesNothingAndReplaysInMemory) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 1);  // batches 0..9 in a segment
  InChild([&] {           // batches 10..14 only in a log, then a crash
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
    for (VertexId k = 10; k < 15; ++k) ASSERT_TRUE(db->Write(Batch(k)).ok());
    db.release();  // NOLINT
  });
  WriteAll(path + "/000099.seg", "leftover of an unfinished flush");
  WriteAll(path + "/CURRENT.tmp", "MANIFEST-000077\n");
  const auto before = DirState(path);
  {
    std::unique_ptr<DB> db, db2;
    Status s = DB::Open(ReadOnlyOpts(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(DB::Open(ReadOnlyOpts(), path, &db2).ok()) << "readers share the lock";
    std::unique_ptr<DB> w;
    EXPECT_TRUE(DB::Open(Opts(), path, &w).IsBusy()) << "a writer waits for the readers";
    auto snap = db->GetSnapshot();
    for (VertexId k = 0; k < 15; ++k) EXPECT_TRUE(HasBatch(*snap, k)) << k;
    snap.reset();
    EXPECT_TRUE(db->Write(Batch(20)).IsNotSupported());
    EXPECT_TRUE(db->Flush().IsNotSupported());
    EXPECT_TRUE(db->CompactAll().IsNotSupported());
    EXPECT_TRUE(db->WaitIdle().ok());
    std::string report;
    EXPECT_TRUE(db->Verify(&report).ok()) << report;
    EXPECT_TRUE(db->Close().ok());
    EXPECT_TRUE(db2->Close().ok());
  }
  EXPECT_EQ(DirState(path), before) << "a read-only open wrote, renamed or removed a file";
  // A writable open still cleans up and keeps everything.
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
  EXPECT_FALSE(fs::exists(path + "/000099.seg"));
  auto snap = db->GetSnapshot();
  for (VertexId k = 0; k < 15; ++k) EXPECT_TRUE(HasBatch(*snap, k)) << k;
}

TEST(ReadOnly, WorksOnAReadOnlyDirectory) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 1);
  InChild([&] {  // batch 20 only in a log
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
    ASSERT_TRUE(db->Write(Batch(20)).ok());
    db.release();  // NOLINT
  });
  // Everything read-only: files 0444, the directory 0555. Permission bits do not stop root,
  // so as root the files are given to "nobody" and the check runs as nobody.
  const bool root = geteuid() == 0;
  for (const auto& e : fs::directory_iterator(path)) {
    fs::permissions(e.path(), fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                    fs::perm_options::replace);
    if (root) {
      ASSERT_EQ(::chown(e.path().c_str(), 65534, 65534), 0);
    }
  }
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
  if (root) {
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_exec, fs::perm_options::replace);
  }
  InChild([&] {
    if (root) {
      ASSERT_EQ(::setgid(65534), 0);
      ASSERT_EQ(::setuid(65534), 0);
    }
    ASSERT_NE(::access(path.c_str(), W_OK), 0) << "precondition: the directory is read-only";
    std::unique_ptr<DB> db;
    Status s = DB::Open(Opts(), path, &db);
    ASSERT_FALSE(s.ok()) << "a writable open needs a writable directory";
    s = DB::Open(ReadOnlyOpts(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto snap = db->GetSnapshot();
    EXPECT_TRUE(HasBatch(*snap, 3));
    EXPECT_TRUE(HasBatch(*snap, 20));
    snap.reset();
    std::string report;
    EXPECT_TRUE(db->Verify(&report).ok()) << report;
    EXPECT_TRUE(db->Close().ok());
  });
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
}

TEST(ReadOnly, NeverCreates) {
  testing::TempDir dir;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(ReadOnlyOpts(), dir.path() + "/none", &db).IsNotFound());
  EXPECT_FALSE(fs::exists(dir.path() + "/none"));
  EXPECT_TRUE(DB::Open(ReadOnlyOpts(), dir.path(), &db).IsNotFound());
  EXPECT_TRUE(fs::is_empty(dir.path()));
  Options bad = ReadOnlyOpts();
  bad.repair = true;
  EXPECT_TRUE(DB::Open(bad, dir.path(), &db).IsInvalidArgument());
}

// ---------------------------------------------------------------------------------------------
// Item 7 (store part): creation is resumable.

TEST(Create, FailedFirstOpenCanBeRetried) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  // What a first open that failed between the manifest and CURRENT leaves: LOCK, a partial
  // manifest, a partial CURRENT.tmp (and a manifest numbered past the one a retry writes).
  fs::create_directory(path);
  WriteAll(path + "/LOCK", "");
  WriteAll(path + "/MANIFEST-000001", "SGMANIF1\x02");
  WriteAll(path + "/MANIFEST-000003", std::string(40, '\0'));
  WriteAll(path + "/CURRENT.tmp", "MANIF");
  {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Opts(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(db->Write(Batch(1)).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  EXPECT_FALSE(fs::exists(path + "/MANIFEST-000003"));
  EXPECT_FALSE(fs::exists(path + "/CURRENT.tmp"));
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ReadOnlyOpts(), path, &db).ok());
  auto snap = db->GetSnapshot();
  EXPECT_TRUE(HasBatch(*snap, 1));
}

TEST(Create, StoreFilesWithoutCurrentAreRefused) {
  // No CURRENT but a log: not an unfinished creation (logs come after CURRENT). Creating a
  // new store over it would drop or misread the log; Open refuses, naming the file.
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildCrashed(path, 3);
  ASSERT_TRUE(fs::remove(path + "/CURRENT"));
  const auto wals = FilesWith(path, ".wal");
  ASSERT_FALSE(wals.empty());
  ASSERT_NO_FATAL_FAILURE(ExpectOpenCorruption(Opts(), path, {"no CURRENT"}));
  EXPECT_TRUE(fs::exists(path + "/" + wals[0]));
}

// ---------------------------------------------------------------------------------------------
// Item 12: a damaged bloom partition, pinned and in a store.

TEST(Bloom, DamagedPartitionPinnedFailsOpenInAStoreFailsReads) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::string seg, data;
  SegmentFooter footer;
  ASSERT_NO_FATAL_FAILURE(BuildOneSegment(path, &seg, &data, &footer));
  ASSERT_GE(footer.bloom_index.size, kBloomIndexEntrySize + 8);
  BloomIndexEntry e;
  e.DecodeFrom(data.data() + footer.bloom_index.offset);
  data[e.offset + 3] ^= 0x10;  // inside partition 0's filter bits
  WriteAll(seg, data);
  const std::string where = seg + " offset " + std::to_string(e.offset);

  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  std::unique_ptr<SegmentReader> r;
  Status s = SegmentReader::Open(env.get(), seg, SegmentReaderOptions(), &r);
  ASSERT_TRUE(s.IsCorruption()) << "pinned: Open reads every partition: " << s.ToString();
  EXPECT_NE(s.ToString().find(where), std::string::npos) << s.ToString();

  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ReadOnlyOpts(), path, &db).ok()) << "a store pins nothing";
  auto snap = db->GetSnapshot();
  s = snap->GetEdge(0, 1, nullptr);
  ASSERT_TRUE(s.IsCorruption()) << "a read through the partition fails: " << s.ToString();
  EXPECT_NE(s.ToString().find(where), std::string::npos) << s.ToString();
  snap.reset();
  std::string report;
  s = db->Verify(&report);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(report.find(where), std::string::npos) << report;
}

// ---------------------------------------------------------------------------------------------
// Counts over a damaged vertex block: Snapshot::NumVertices/NumEdges record the scan's error
// (status()), and DB::GetStats(true) reports it in DBStats::count_status.

TEST(Stats, CountsOverADamagedVertexBlockReportTheError) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::string seg, data;
  SegmentFooter footer;
  ASSERT_NO_FATAL_FAILURE(BuildOneSegment(path, &seg, &data, &footer));
  ASSERT_GE(footer.vertex_index.size, kVertexIndexEntrySize + 8);
  VertexIndexEntry e;
  e.DecodeFrom(data.data() + footer.vertex_index.offset);
  // Open reads every vertex block (Corruption on open), so the byte flips under the open
  // store, in place (the same inode): damage the disk does later, which the walk must report.
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ReadOnlyOpts(), path, &db).ok());
  {
    const char c = static_cast<char>(data[e.offset + 1] ^ 0x20);  // inside vertex block 0
    const int fd = ::open(seg.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &c, 1, static_cast<off_t>(e.offset + 1)), 1);
    ::close(fd);
  }
  {
    auto snap = db->GetSnapshot();
    ASSERT_TRUE(snap->status().ok());
    snap->NumVertices();
    Status s = snap->status();
    ASSERT_TRUE(s.IsCorruption()) << "NumVertices: " << s.ToString();
    EXPECT_NE(s.ToString().find(seg), std::string::npos) << s.ToString();
  }
  {
    auto snap = db->GetSnapshot();
    snap->NumEdges();
    EXPECT_TRUE(snap->status().IsCorruption()) << "NumEdges: " << snap->status().ToString();
  }
  DBStats st = db->GetStats(true);
  ASSERT_TRUE(st.count_status.IsCorruption()) << st.count_status.ToString();
  EXPECT_NE(st.count_status.ToString().find(seg), std::string::npos) << st.count_status.ToString();
  EXPECT_NE(st.ToString().find("count_status="), std::string::npos);
  EXPECT_TRUE(db->GetStats(false).count_status.ok());
  ASSERT_TRUE(db->Close().ok());

  // The intact store counts with an OK status.
  const std::string good = dir.path() + "/good";
  BuildFlushed(good, 1);
  ASSERT_TRUE(DB::Open(ReadOnlyOpts(), good, &db).ok());
  st = db->GetStats(true);
  EXPECT_TRUE(st.count_status.ok()) << st.count_status.ToString();
  EXPECT_EQ(st.num_edges, 40u);
  EXPECT_EQ(st.num_vertices, 14u);  // sources 0..9 and destinations up to 13
}

// ---------------------------------------------------------------------------------------------
// Old formats are refused with a clear error, not misread.

TEST(Format, StoreOfVersion1IsRefused) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 1);
  // Rewrite the manifest's store info to say version 1 (a build before store IDs).
  std::string cur = ReadAll(path + "/CURRENT");
  cur.pop_back();
  const std::string m = path + "/" + cur;
  std::string data = ReadAll(m);
  const size_t rec = kRecordLogHeaderSize;
  std::string payload = data.substr(rec + kRecordHeaderSize, DecodeFixed32(data.data() + rec));
  ASSERT_EQ(payload[0], 1);  // kStoreInfo
  ASSERT_EQ(payload[1], 2);  // format version 2
  payload[1] = 1;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  std::unique_ptr<io::WritableFile> f;
  ASSERT_TRUE(env->NewWritableFile(m, &f).ok());
  std::unique_ptr<RecordWriter> w;
  ASSERT_TRUE(RecordWriter::Create(f.get(), "SGMANIF1", 1, 0x4d, &w).ok());
  ASSERT_TRUE(w->Add(payload).ok());
  ASSERT_TRUE(f->Close().ok());
  std::unique_ptr<DB> db;
  Status s = DB::Open(Opts(), path, &db);
  ASSERT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.ToString().find("store format version 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(m), std::string::npos) << s.ToString();
}


// A store written before the manifest listed its logs (its manifest without them, rewritten
// here by the Manifest API) opens with every batch — its unlisted log is not taken for a
// stale manifest's — and lists that log; a crash after that open, and the next open, lose
// nothing either.
TEST(Format, StoreWrittenBeforeLogsWereListedListsThemAtItsFirstOpen) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 1);
  BuildCrashedOnto(path);  // batches 10..14 only in the log
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  {
    StoreState st;
    RecordLogTail tail;
    std::unique_ptr<Manifest> m;
    ASSERT_TRUE(Manifest::Recover(env.get(), path, &st, &tail, &m).ok());
    ASSERT_TRUE(st.lists_logs);
    ASSERT_EQ(st.logs.size(), 1u);
    st.lists_logs = false;
    st.logs.clear();
    m.reset();
    ASSERT_TRUE(Manifest::Create(env.get(), path, st, &m).ok());  // CURRENT names it
  }
  InChild([&] {
    std::unique_ptr<DB> db;
    Status s = DB::Open(Opts(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    auto snap = db->GetSnapshot();
    for (VertexId k = 0; k < 15; ++k) ASSERT_TRUE(HasBatch(*snap, k)) << k;
    snap.reset();
    for (VertexId k = 15; k < 20; ++k) ASSERT_TRUE(db->Write(Batch(k)).ok());
    db.release();  // NOLINT: crashed again, the old log still unflushed
  });
  EXPECT_NE(ReadAll(path + "/LOG").find("now lists the store's write-ahead logs (1 found)"),
            std::string::npos);
  {
    StoreState st;
    RecordLogTail tail;
    std::string mpath;
    ASSERT_TRUE(Manifest::ReadOnly(env.get(), path, &st, &tail, &mpath).ok());
    EXPECT_TRUE(st.lists_logs);
    EXPECT_EQ(st.logs.size(), 2u) << "the old log and the one its first open made";
  }
  std::unique_ptr<DB> db;
  Status s = DB::Open(Opts(), path, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto snap = db->GetSnapshot();
  for (VertexId k = 0; k < 20; ++k) EXPECT_TRUE(HasBatch(*snap, k)) << k;
}

// The kept-file bits the store's manifest records.
uint32_t KeptFilesOf(const std::string& path) {
  std::unique_ptr<io::Env> env;
  EXPECT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  StoreState st;
  RecordLogTail tail;
  std::string mpath;
  EXPECT_TRUE(Manifest::ReadOnly(env.get(), path, &st, &tail, &mpath).ok());
  return st.kept_files;
}

// A kept file another writer made (the CLI's IDDICT) is recorded only once a sync of the store's
// directory succeeds: its creator's own directory sync may have failed, and a record of a file
// whose entry a power loss could still undo would make the store refuse to open. Unrecorded at
// a close whose directory sync failed, it is recorded by the next open.
TEST(KeptIdFiles, FoundFileRecordedOnlyAfterADirectorySync) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
    WriteAll(path + "/IDDICT", "the CLI's dictionary (the engine does not read it)");
    // Nothing to flush: the close's only directory sync is the one before the record.
    io::SetSyncFailureForTesting(0, INT64_MAX, EIO, /*directories_only=*/true);
    db->Close();
    io::SetSyncFailureForTesting(-1);
  }
  EXPECT_EQ(KeptFilesOf(path) & kKeptIdDictionary, 0u)
      << "recorded though its directory sync failed";
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  EXPECT_NE(KeptFilesOf(path) & kKeptIdDictionary, 0u) << "not recorded by the next open";
}

// The CLI's ID files are kept files without stamps: an IDMODE there at creation is recorded by
// the creating open, an IDDICT written while the store is open by its close; a store that had
// them before they were kept records them at its first writable open (not a read-only one).
// Once recorded, one gone is Corruption naming it, read-only and under repair too (going on
// would read a mapped store as dense); nothing is changed, and the file back, the store opens.
TEST(KeptIdFiles, RecordedOnceHereThenAMissingOneIsRefusedEvenByRepair) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  fs::create_directories(path);
  WriteAll(path + "/IDMODE", "ids=map\n");
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  auto kept = [&] { return KeptFilesOf(path); };
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
    EXPECT_EQ(kept(), kKeptIdMode) << "recorded by the creating open";
    ASSERT_TRUE(db->Write(Batch(0)).ok());
    WriteAll(path + "/IDDICT", "the CLI's dictionary (the engine does not read it)");
    ASSERT_TRUE(db->Close().ok());
  }
  EXPECT_EQ(kept(), kKeptIdMode | kKeptIdDictionary) << "IDDICT recorded by the close";
  for (const char* name : {"IDMODE", "IDDICT"}) {
    SCOPED_TRACE(name);
    const std::string file = path + "/" + name;
    const std::string bytes = ReadAll(file);
    fs::remove(file);
    const auto before = DirState(path);
    const std::vector<std::string> needles = {file + ": missing",
                                              "manifest records that the store keeps",
                                              "a repair cannot"};
    ExpectOpenCorruption(Opts(), path, needles);
    ExpectOpenCorruption(ReadOnlyOpts(), path, needles);
    Options repair = Opts();
    repair.repair = true;
    ExpectOpenCorruption(repair, path, needles);
    EXPECT_EQ(kept(), kKeptIdMode | kKeptIdDictionary) << "the repair kept both";
    // The logs and segments are as they were (a writable open rewrites the manifest and
    // rotates LOG before it finds what is missing, as for any file it refuses).
    auto data = [&](std::map<std::string, std::string> files) {
      std::erase_if(files, [](const auto& f) {
        return f.first.starts_with("LOG") || f.first.starts_with("MANIFEST-") ||
               f.first == "CURRENT";
      });
      return files;
    };
    EXPECT_EQ(data(DirState(path)), data(before));
    std::unique_ptr<DB> db;
    std::vector<std::string> problems;
    WriteAll(file, bytes);
    Status s = DB::Open(Opts(), path, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(HasBatch(*db->GetSnapshot(), 0));
    ASSERT_TRUE(db->Close().ok());
    fs::remove(file);
    // Verify of the files without opening (as inspect reads them) names it too.
    StoreState st;
    RecordLogTail tail;
    std::string mpath;
    ASSERT_TRUE(Manifest::ReadOnly(env.get(), path, &st, &tail, &mpath).ok());
    problems = KeptFileProblems(env.get(), path, st);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find(file + ": missing"), std::string::npos) << problems[0];
    WriteAll(file, bytes);
  }
  // A store that had them before they were kept: a read-only open records nothing, the first
  // writable open records both.
  {
    StoreState st;
    RecordLogTail tail;
    std::unique_ptr<Manifest> m;
    ASSERT_TRUE(Manifest::Recover(env.get(), path, &st, &tail, &m).ok());
    st.kept_files = 0;
    m.reset();
    ASSERT_TRUE(Manifest::Create(env.get(), path, st, &m).ok());
  }
  ASSERT_EQ(kept(), 0u);
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(ReadOnlyOpts(), path, &db).ok());
  }
  EXPECT_EQ(kept(), 0u);
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(Opts(), path, &db).ok());
  }
  EXPECT_EQ(kept(), kKeptIdMode | kKeptIdDictionary);
}

// ---------------------------------------------------------------------------------------------
// The command-line tool: reading commands open read-only; repair is explicit.

namespace cli {

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

CliRun Strata(const std::string& args) {
  CliRun r;
  FILE* p = ::popen((std::string(STRATA_BIN_DIR) + "/strata " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(Cli, ReadingCommandsChangeNothingRepairIsExplicit) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 1);
  BuildCrashedOnto(path);
  const auto before = DirState(path);
  CliRun r = Strata("verify --db " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  r = Strata("query --db " + path + " degree 12");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "4\n");
  r = Strata("export --db " + path + " --out " + dir.path() + "/out.el");
  EXPECT_EQ(r.code, 0) << r.out;
  r = Strata("analyze --db " + path + " --algo wcc --out " + dir.path() + "/wcc.txt");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(DirState(path), before) << "a reading command changed the store";

  // A damaged last log record: every command refuses, naming the log; repair drops it.
  const std::string wal = path + "/" + FilesWith(path, ".wal")[0];
  std::string data = ReadAll(wal);
  data[data.size() - 2] ^= 0x5a;
  WriteAll(wal, data);
  r = Strata("verify --db " + path);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(wal), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("repair"), std::string::npos) << r.out;
  r = Strata("repair --db " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  r = Strata("verify --db " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  r = Strata("query --db " + path + " degree 13");
  EXPECT_EQ(r.out, "4\n") << r.out;
  EXPECT_TRUE(FilesWith(path, ".wal").empty()) << "repair flushed what it replayed";
}

// A log the manifest lists, deleted: every command refuses naming it (the batches only it held
// would be missing without an error), inspect lists it as missing, and repair goes on without
// it, saying so, after which the store verifies and the flushed batches are all there.
TEST(Cli, MissingListedLogIsNamedAndRepairGoesOnWithoutIt) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  BuildFlushed(path, 1);
  BuildCrashedOnto(path);  // batches 10..14 only in the log
  const std::vector<std::string> wals = FilesWith(path, ".wal");
  ASSERT_EQ(wals.size(), 1u);
  const std::string wal = wals[0];
  CliRun r = Strata("query --db " + path + " degree 12");
  EXPECT_EQ(r.out, "4\n") << r.out;
  std::filesystem::remove(path + "/" + wal);
  const auto before = DirState(path);
  r = Strata("verify --db " + path);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(wal), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("repair"), std::string::npos) << r.out;
  r = Strata("query --db " + path + " degree 12");
  EXPECT_NE(r.code, 0) << "answered without the log's batches: " << r.out;
  r = Strata("inspect --db " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("listed in the manifest but missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(wal), std::string::npos) << r.out;
  r = Strata("inspect --json --db " + path);
  EXPECT_NE(r.out.find("\"wal_missing\": [\"" + wal + "\"]"), std::string::npos) << r.out;
  EXPECT_EQ(DirState(path), before) << "a reading command changed the store";
  r = Strata("repair --db " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(ReadAll(path + "/LOG").find("its batches are lost"), std::string::npos);
  r = Strata("verify --db " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  r = Strata("inspect --db " + path);
  EXPECT_EQ(r.out.find("missing"), std::string::npos) << r.out;
  r = Strata("query --db " + path + " degree 3");
  EXPECT_EQ(r.out, "4\n") << "a flushed batch: " << r.out;
  r = Strata("query --db " + path + " degree 12");
  EXPECT_EQ(r.out, "0\n") << "a batch only the deleted log held: " << r.out;
}

}  // namespace cli

}  // namespace
}  // namespace strata
