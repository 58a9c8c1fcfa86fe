// Record logs and the manifest: round trips, reopen, torn tails at every offset, corruption in
// the middle named by file and offset, CURRENT switching.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <algorithm>

#include "db/filename.h"
#include "db/manifest.h"
#include "db/record_log.h"
#include "segment/segment_format.h"
#include "tests/util/file_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/strata-manifest-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using strata::testing::ReadAll;
using strata::testing::WriteAll;

class RecordLogTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == IoBackend::kIoUring && !io::Env::IoUringAvailable()) {
      GTEST_SKIP() << "io_uring refused here";
    }
    ASSERT_TRUE(io::Env::Open(GetParam(), &env_).ok());
  }
  std::unique_ptr<io::Env> env_;
};

std::vector<std::string> WriteLog(io::Env* env, const std::string& path, int n) {
  std::unique_ptr<io::WritableFile> f;
  EXPECT_TRUE(env->NewWritableFile(path, &f).ok());
  std::unique_ptr<RecordWriter> w;
  EXPECT_TRUE(RecordWriter::Create(f.get(), "TESTLOG1", 7, 9, &w).ok());
  std::vector<std::string> recs;
  for (int i = 0; i < n; ++i) {
    std::string r(static_cast<size_t>(i * 37 % 300), static_cast<char>('a' + i % 26));
    EXPECT_TRUE(w->Add(r).ok());
    recs.push_back(r);
  }
  EXPECT_TRUE(w->Sync().ok());
  EXPECT_TRUE(f->Close().ok());
  return recs;
}

Status ReadBack(io::Env* env, const std::string& path, std::vector<std::string>* out,
                RecordLogTail* tail) {
  out->clear();
  uint32_t version = 0;
  Status s = ReadRecordLog(env, path, "TESTLOG1", &version, 9,
                           [&](std::string_view p, uint64_t) {
                             out->emplace_back(p);
                             return Status::OK();
                           },
                           tail);
  if (s.ok()) {
    EXPECT_EQ(version, 7u);
  }
  return s;
}

TEST_P(RecordLogTest, RoundTripAndTornTailAtEveryOffset) {
  TempDir d;
  const std::string path = d.path() + "/log";
  auto recs = WriteLog(env_.get(), path, 20);
  std::vector<std::string> got;
  RecordLogTail tail;
  ASSERT_TRUE(ReadBack(env_.get(), path, &got, &tail).ok());
  EXPECT_EQ(got, recs);
  EXPECT_EQ(tail.cut_bytes, 0u);

  const std::string whole = ReadAll(path);
  // Record boundaries, to know how many whole records a prefix holds.
  std::vector<size_t> ends;
  size_t off = kRecordLogHeaderSize;
  for (const auto& r : recs) {
    off += kRecordHeaderSize + r.size();
    ends.push_back(off);
  }
  for (size_t cut = kRecordLogHeaderSize; cut < whole.size(); ++cut) {
    WriteAll(path, whole.substr(0, cut));
    Status s = ReadBack(env_.get(), path, &got, &tail);
    ASSERT_TRUE(s.ok()) << "cut at " << cut << ": " << s.ToString();
    size_t expect = std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin();
    ASSERT_EQ(got.size(), expect) << "cut at " << cut;
    EXPECT_EQ(tail.valid_bytes + tail.cut_bytes, cut);
    EXPECT_FALSE(tail.whole_damaged) << "a record cut short is torn, cut at " << cut;
    if (tail.valid_bytes != cut) {
      EXPECT_NE(tail.reason.find("offset"), std::string::npos);
    }
  }
}

TEST_P(RecordLogTest, FlippedByteInTheMiddleIsCorruptionNamingFileAndOffset) {
  TempDir d;
  const std::string path = d.path() + "/log";
  auto recs = WriteLog(env_.get(), path, 10);
  const std::string whole = ReadAll(path);
  const size_t last_start = whole.size() - kRecordHeaderSize - recs.back().size();
  int corrupt = 0, torn = 0;
  for (size_t pos = 0; pos < whole.size(); pos += 3) {
    std::string bad = whole;
    bad[pos] ^= 0x20;
    WriteAll(path, bad);
    std::vector<std::string> got;
    RecordLogTail tail;
    Status s = ReadBack(env_.get(), path, &got, &tail);
    if (pos >= last_start) {
      // Damage in the last record can only cut it.
      if (s.ok()) {
        ++torn;
        EXPECT_EQ(got.size(), recs.size() - 1) << pos;
        // Whole and with no zero sector: flagged as damage, which the manifest refuses.
        EXPECT_TRUE(tail.whole_damaged) << pos;
        continue;
      }
    }
    ASSERT_FALSE(s.ok()) << "flip at " << pos << " went unnoticed";
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("offset"), std::string::npos) << s.ToString();
    ++corrupt;
  }
  EXPECT_GT(corrupt, 0);
  EXPECT_GT(torn, 0);
}

// A last record of 1500 bytes whose payload fails its checksum: with one of its 512-byte
// sectors zero-filled (never written by a crashed append) it is torn; with only part of a
// sector zeroed, or a byte flipped, it was written whole and is flagged as damaged.
TEST_P(RecordLogTest, ZeroFilledSectorMakesAWholeLastRecordTorn) {
  TempDir d;
  const std::string path = d.path() + "/log";
  std::vector<std::string> recs = WriteLog(env_.get(), path, 3);
  std::string whole = ReadAll(path);
  {
    std::unique_ptr<io::WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(path, &f).ok());
    std::unique_ptr<RecordWriter> w;
    ASSERT_TRUE(RecordWriter::Create(f.get(), "TESTLOG1", 7, 9, &w).ok());
    for (const auto& r : recs) ASSERT_TRUE(w->Add(r).ok());
    ASSERT_TRUE(w->Add(std::string(1500, 'z')).ok());
    ASSERT_TRUE(w->Sync().ok());
  }
  whole = ReadAll(path);
  const uint64_t start = whole.size() - kRecordHeaderSize - 1500;
  const uint64_t sector = (start + kRecordHeaderSize + 511) / 512 * 512;  // first whole sector
  ASSERT_LE(sector + 512, whole.size());
  ASSERT_NE(whole.size() % 512, 0u) << "the last piece is shorter than a sector";
  struct Case {
    uint64_t from, to;
    bool damaged;
  };
  for (const Case& c : {Case{sector, sector + 512, false},              // a whole sector
                        Case{whole.size() / 512 * 512, whole.size(), false},  // the last piece
                        Case{sector, sector + 511, true},               // not a whole sector
                        Case{sector + 7, sector + 8, true}}) {          // one byte
    std::string bad = whole;
    for (uint64_t i = c.from; i < c.to; ++i) bad[i] = c.damaged && c.to - c.from == 1 ? 'y' : 0;
    WriteAll(path, bad);
    std::vector<std::string> got;
    RecordLogTail tail;
    ASSERT_TRUE(ReadBack(env_.get(), path, &got, &tail).ok()) << c.from;
    EXPECT_EQ(got, recs) << c.from;
    EXPECT_EQ(tail.valid_bytes, start) << c.from;
    EXPECT_EQ(tail.whole_damaged, c.damaged) << "bytes " << c.from << ".." << c.to;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, RecordLogTest,
                         ::testing::Values(IoBackend::kPosix, IoBackend::kIoUring),
                         [](const auto& i) { return i.param == IoBackend::kPosix ? "posix" : "io_uring"; });

FileMeta File(uint64_t n, uint32_t level) {
  FileMeta f;
  f.number = n;
  f.level = level;
  f.size_bytes = 1000 * n;
  f.min_src = n;
  f.max_src = n * 100;
  f.num_vertices = 10;
  f.num_edges = 20 * n;
  f.max_ts = 5 * n;
  return f;
}

TEST(Manifest, CreateApplyRecover) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  StoreState init;
  init.kind = GraphKind::kUndirected;
  init.weighted = true;
  std::unique_ptr<Manifest> m;
  ASSERT_TRUE(Manifest::Create(env.get(), d.path(), init, &m).ok());
  ManifestEdit e1;
  e1.added = {File(3, 0), File(4, 0)};
  e1.last_flushed_ts = 40;
  ASSERT_TRUE(m->LogAndApply(e1).ok());
  ManifestEdit e2;
  e2.removed = {3};
  e2.added = {File(7, 1)};
  e2.next_vertex_id = 123;
  ASSERT_TRUE(m->LogAndApply(e2).ok());
  ManifestEdit bad;
  bad.removed = {99};
  EXPECT_TRUE(m->LogAndApply(bad).IsCorruption());
  const std::string first_manifest = m->path();
  m.reset();

  StoreState st;
  RecordLogTail tail;
  ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
  EXPECT_EQ(st.kind, GraphKind::kUndirected);
  EXPECT_TRUE(st.weighted);
  EXPECT_EQ(st.last_flushed_ts, 40u);
  EXPECT_EQ(st.next_vertex_id, 123u);
  ASSERT_EQ(st.files.size(), 2u);
  EXPECT_EQ(st.files.at(4).num_edges, 80u);
  EXPECT_EQ(st.files.at(7).level, 1u);
  EXPECT_GT(st.next_file_number, 7u);
  EXPECT_NE(m->path(), first_manifest);
  EXPECT_FALSE(fs::exists(first_manifest)) << "old manifest removed after the switch";
  EXPECT_EQ(ReadAll(d.path() + "/CURRENT"), m->path().substr(d.path().size() + 1) + "\n");
}

// A manifest holding two edits: file 5 added, then `second`. Returns the manifest's path and,
// in *good, its size after the first edit.
std::string TwoEdits(io::Env* env, const std::string& dir, const ManifestEdit& second,
                     uint64_t* good) {
  std::unique_ptr<Manifest> m;
  EXPECT_TRUE(Manifest::Create(env, dir, StoreState(), &m).ok());
  ManifestEdit e1;
  e1.added = {File(5, 0)};
  EXPECT_TRUE(m->LogAndApply(e1).ok());
  *good = fs::file_size(m->path());
  EXPECT_TRUE(m->LogAndApply(second).ok());
  return m->path();
}

TEST(Manifest, TornLastEditIsCutAndEarlierStateKept) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  ManifestEdit e2;
  e2.added = {File(6, 0)};
  uint64_t good = 0;
  const std::string path = TwoEdits(env.get(), d.path(), e2, &good);
  const std::string whole = ReadAll(path);
  for (size_t cut = good; cut < whole.size(); ++cut) {
    WriteAll(path, whole.substr(0, cut));
    StoreState st;
    RecordLogTail tail;
    std::string p;
    ASSERT_TRUE(Manifest::ReadOnly(env.get(), d.path(), &st, &tail, &p).ok()) << cut;
    EXPECT_EQ(st.files.size(), 1u);
    EXPECT_EQ(tail.cut_bytes, cut - good);
  }
}

// A byte flipped in the last record, which was written whole: after a flush's edit (files
// added, `last_flushed_ts` advanced) the logs it covered are deleted, so cutting the edit would
// lose their commits although every file the state before it names still exists. Recover
// refuses, names the manifest and the offset, and leaves the manifest as it was.
TEST(Manifest, FlippedByteInLastEditIsCorruptionEvenWithEveryFilePresent) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  ManifestEdit flush;
  flush.added = {File(6, 0)};
  flush.last_flushed_ts = 90;
  uint64_t good = 0;
  const std::string path = TwoEdits(env.get(), d.path(), flush, &good);
  WriteAll(d.path() + "/" + SegmentFileName(5), "x");
  WriteAll(d.path() + "/" + SegmentFileName(6), "x");
  const std::string pristine = ReadAll(path);
  for (uint64_t pos = good; pos < pristine.size(); ++pos) {
    std::string bytes = pristine;
    bytes[pos] ^= 0x10;
    WriteAll(path, bytes);
    std::unique_ptr<Manifest> m;
    StoreState st;
    RecordLogTail tail;
    Status s = Manifest::Recover(env.get(), d.path(), &st, &tail, &m);
    ASSERT_TRUE(s.IsCorruption()) << pos << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("offset " + std::to_string(good)), std::string::npos) << s.ToString();
    EXPECT_EQ(ReadAll(path), bytes) << "the damaged manifest is kept as it was";
  }
  WriteAll(path, pristine);
  std::unique_ptr<Manifest> m;
  StoreState st;
  RecordLogTail tail;
  ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
  EXPECT_EQ(st.last_flushed_ts, 90u);
  EXPECT_EQ(st.files.size(), 2u);
}

// A last record that looks torn (one of its sectors zero-filled, as a crashed append leaves
// it) whose edit removed file 5, which is gone: the record was synced before 5 was deleted,
// so it is damaged. Cutting it would bring back a state naming a missing file, so Recover
// refuses, names the manifest, the offset and the file, and keeps the manifest. Had file 5
// still existed, the same record is a torn tail: the state before it is recovered.
TEST(Manifest, TornLookingLastEditNamingDeletedFileIsCorruptionAndKeepsTheManifest) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  ManifestEdit e2;
  e2.removed = {5};
  for (uint64_t n = 6; n < 200; ++n) e2.added.push_back(File(n, 1));  // a record over 1 KiB
  uint64_t good = 0;
  const std::string path = TwoEdits(env.get(), d.path(), e2, &good);
  std::unique_ptr<Manifest> m;
  std::string bytes = ReadAll(path);
  const uint64_t sector = (good + kRecordHeaderSize + 511) / 512 * 512;
  ASSERT_LE(sector + 512, bytes.size()) << "the record holds a whole sector";
  std::fill(bytes.begin() + sector, bytes.begin() + sector + 512, '\0');
  WriteAll(path, bytes);
  for (int round = 0; round < 2; ++round) {
    StoreState st;
    RecordLogTail tail;
    Status s = Manifest::Recover(env.get(), d.path(), &st, &tail, &m);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("offset " + std::to_string(good)), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("000005.seg"), std::string::npos) << s.ToString();
    EXPECT_EQ(ReadAll(path), bytes) << "the damaged manifest is kept as it was";
  }
  WriteAll(d.path() + "/" + SegmentFileName(5), "x");
  StoreState st;
  RecordLogTail tail;
  ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
  EXPECT_EQ(st.files.size(), 1u);
  EXPECT_EQ(st.files.count(5), 1u);
  EXPECT_GT(tail.cut_bytes, 0u);
  EXPECT_FALSE(tail.whole_damaged);
}

// Logs listed and unlisted (db/manifest.h, "Logs"): they round-trip through the record and the
// recovered state's rewrite; listing a listed log is Corruption; unlisting one not listed is a
// no-op (a store from before logs were listed unlists its replayed logs).
TEST(Manifest, LogsListedAndUnlistedRoundTrip) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  std::unique_ptr<Manifest> m;
  ASSERT_TRUE(Manifest::Create(env.get(), d.path(), StoreState(), &m).ok());
  EXPECT_FALSE(m->state().lists_logs);
  ManifestEdit e1;
  e1.logs_added = {3};
  e1.lists_logs = true;
  ASSERT_TRUE(m->LogAndApply(e1).ok());
  ManifestEdit e2;
  e2.logs_added = {8};
  e2.logs_removed = {3, 77};
  e2.added = {File(5, 0)};
  ASSERT_TRUE(m->LogAndApply(e2).ok());
  ManifestEdit twice;
  twice.logs_added = {8};
  EXPECT_TRUE(m->LogAndApply(twice).IsCorruption());
  ManifestEdit e3;
  e3.logs_added = {12};
  ASSERT_TRUE(m->LogAndApply(e3).ok());
  EXPECT_EQ(m->state().logs, (std::set<uint64_t>{8, 12}));
  m.reset();
  WriteAll(d.path() + "/" + WalFileName(8), "x");
  WriteAll(d.path() + "/" + WalFileName(12), "x");
  WriteAll(d.path() + "/" + SegmentFileName(5), "x");
  for (int round = 0; round < 2; ++round) {  // the second reads the rewritten full state
    StoreState st;
    RecordLogTail tail;
    ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
    EXPECT_EQ(st.logs, (std::set<uint64_t>{8, 12})) << round;
    EXPECT_TRUE(st.lists_logs) << round;
    EXPECT_EQ(st.files.size(), 1u);
    m.reset();
  }
}

// Kept files and their stamps (VIEWS' as-of timestamp, SUBSCRIPTIONS' set generation) survive
// the log of edits and the full-state rewrite; a repair's edit may lower a stamp (to 0: no
// file expected).
TEST(Manifest, KeptFilesAndTheirStampsRoundTrip) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  std::unique_ptr<Manifest> m;
  ASSERT_TRUE(Manifest::Create(env.get(), d.path(), StoreState(), &m).ok());
  EXPECT_EQ(m->state().kept_stamps[0], 0u);
  ManifestEdit e1;
  e1.kept_files_set = kKeptViews | kKeptSubscriptions;
  e1.kept_stamps[0] = 41;
  ASSERT_TRUE(m->LogAndApply(e1).ok());
  ManifestEdit e2;
  e2.kept_stamps[KeptIndex(kKeptViews)] = 1ull << 40;
  e2.kept_stamps[KeptIndex(kKeptSubscriptions)] = 7;
  ASSERT_TRUE(m->LogAndApply(e2).ok());
  ManifestEdit other;  // an edit without the field leaves it
  other.next_vertex_id = 9;
  ASSERT_TRUE(m->LogAndApply(other).ok());
  m.reset();
  for (int round = 0; round < 2; ++round) {  // the second reads the rewritten full state
    StoreState st;
    RecordLogTail tail;
    ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
    EXPECT_EQ(st.kept_stamps[0], 1ull << 40) << round;
    EXPECT_EQ(st.kept_stamps[1], 7u) << round;
    EXPECT_EQ(st.kept_files, kKeptViews | kKeptSubscriptions) << round;
    m.reset();
  }
  StoreState st;
  RecordLogTail tail;
  ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
  ManifestEdit repair;
  repair.kept_files_clear = kKeptViews;
  repair.kept_stamps[0] = 0;
  repair.kept_stamps[1] = 3;
  ASSERT_TRUE(m->LogAndApply(repair).ok());
  m.reset();
  ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
  EXPECT_EQ(st.kept_stamps[0], 0u);
  EXPECT_EQ(st.kept_stamps[1], 3u);
  EXPECT_EQ(st.kept_files, kKeptSubscriptions);
}

// A torn-looking last edit that unlisted a log which is gone (a flush's edit, then its log
// deleted) is damaged, not torn: cutting it would list a log that no longer exists. Refused
// naming the manifest and the log; with the log back, it is the torn tail it looks like.
TEST(Manifest, TornLookingLastEditUnlistingADeletedLogIsCorruption) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  std::unique_ptr<Manifest> m;
  ASSERT_TRUE(Manifest::Create(env.get(), d.path(), StoreState(), &m).ok());
  ManifestEdit listed;
  listed.logs_added = {4};
  ASSERT_TRUE(m->LogAndApply(listed).ok());
  const uint64_t good = fs::file_size(m->path());
  ManifestEdit flush;
  flush.logs_removed = {4};
  flush.last_flushed_ts = 50;
  for (uint64_t n = 6; n < 200; ++n) flush.added.push_back(File(n, 0));  // over 1 KiB
  ASSERT_TRUE(m->LogAndApply(flush).ok());
  const std::string path = m->path();
  m.reset();
  std::string bytes = ReadAll(path);
  const uint64_t sector = (good + kRecordHeaderSize + 511) / 512 * 512;
  ASSERT_LE(sector + 512, bytes.size());
  std::fill(bytes.begin() + sector, bytes.begin() + sector + 512, '\0');
  WriteAll(path, bytes);
  StoreState st;
  RecordLogTail tail;
  Status s = Manifest::Recover(env.get(), d.path(), &st, &tail, &m);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(WalFileName(4)), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadAll(path), bytes) << "the damaged manifest is kept as it was";
  WriteAll(d.path() + "/" + WalFileName(4), "x");
  ASSERT_TRUE(Manifest::Recover(env.get(), d.path(), &st, &tail, &m).ok());
  EXPECT_EQ(st.logs, (std::set<uint64_t>{4}));
  EXPECT_EQ(st.last_flushed_ts, 0u);
}

TEST(Manifest, GarbageCurrentIsCorruption) {
  TempDir d;
  std::unique_ptr<io::Env> env;
  ASSERT_TRUE(io::Env::Open(IoBackend::kPosix, &env).ok());
  WriteAll(d.path() + "/CURRENT", "../../etc/passwd\n");
  StoreState st;
  RecordLogTail tail;
  std::unique_ptr<Manifest> m;
  Status s = Manifest::Recover(env.get(), d.path(), &st, &tail, &m);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("CURRENT"), std::string::npos);
}

}  // namespace
}  // namespace strata
