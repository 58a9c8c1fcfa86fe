// Crash and corruption tests of the whole store.
//
// Crash: a child process ingests numbered batches and reports each acknowledged one through a
// pipe; the parent SIGKILLs it at a random moment (during writes, seals, flushes and
// compactions — the memgraph and levels are tiny so all of them happen constantly), reopens
// the store and checks that every acknowledged batch is present, that no batch is partly
// present, and that the store verifies clean. Rounds with WAL `sync` and with `group` and two
// concurrent writers.
//
// Corruption: flipped bytes in every kind of file are reported as Corruption naming the file,
// at open, on read or by Verify — never a crash or a silently wrong answer.
#include <gtest/gtest.h>
#include <signal.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include "strata/db.h"
#include "tests/util/file_util.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

constexpr int kEdgesPerBatch = 6;

Options CrashOptions(WalMode wal) {
  Options o;
  o.graph_kind = GraphKind::kDirectedWithInEdges;
  o.wal = wal;
  o.memgraph_bytes = 16 << 10;
  o.memory_budget = 1 << 20;
  o.l0_compaction_trigger = 2;
  o.level1_bytes = 32 << 10;
  o.level_fanout = 2;
  o.max_levels = 4;
  o.target_file_bytes = 16 << 10;
  return o;
}

// Batch k: edges (k, k+1+j) for j < kEdgesPerBatch, all or nothing.
WriteBatch Batch(uint64_t k) {
  WriteBatch b;
  for (int j = 0; j < kEdgesPerBatch; ++j) b.InsertEdge(k, k + 1 + static_cast<uint64_t>(j));
  return b;
}

int CountOf(const Snapshot& s, uint64_t k) {
  int n = 0;
  for (int j = 0; j < kEdgesPerBatch; ++j) n += s.HasEdge(k, k + 1 + static_cast<uint64_t>(j));
  return n;
}

[[noreturn]] void Child(const std::string& path, WalMode wal, int writers, uint64_t first, int fd) {
  std::unique_ptr<DB> db;
  if (!DB::Open(CrashOptions(wal), path, &db).ok()) _exit(3);
  std::atomic<uint64_t> next{first};
  auto work = [&]() {
    for (;;) {
      uint64_t k = next.fetch_add(1);
      if (!db->Write(Batch(k * 8)).ok()) _exit(4);
      if (write(fd, &k, sizeof(k)) != sizeof(k)) _exit(5);
    }
  };
  std::vector<std::thread> ts;
  for (int i = 1; i < writers; ++i) ts.emplace_back(work);
  work();
  _exit(0);
}

void RunRounds(WalMode wal, int writers, int rounds, uint64_t seed) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/db";
  std::mt19937_64 rng(seed);
  std::set<uint64_t> acked;
  uint64_t next_first = 0;
  for (int round = 0; round < rounds; ++round) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(p[0]);
      Child(path, wal, writers, next_first, p[1]);
    }
    close(p[1]);
    // Every fourth round kills the child a random while after the fork, wherever it is (often
    // inside Open's recovery). The others wait for its first acknowledged batch, then kill it
    // a random while later: a slow build (TSan) or a loaded machine still writes every round.
    const bool after_first_ack = round % 4 != 3;
    if (after_first_ack) {
      pollfd pfd{p[0], POLLIN, 0};
      ASSERT_EQ(poll(&pfd, 1, 120000), 1) << "round " << round << ": no batch acknowledged in 120 s";
      usleep(static_cast<useconds_t>(rng() % 400000));
    } else {
      usleep(static_cast<useconds_t>(rng() % 300000));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited by itself with " << WEXITSTATUS(status);
    uint64_t k;
    uint64_t round_acks = 0;
    while (read(p[0], &k, sizeof(k)) == sizeof(k)) {
      acked.insert(k);
      ++round_acks;
    }
    close(p[0]);
    uint64_t top = acked.empty() ? 0 : *acked.rbegin();
    next_first = top + 1000;  // the next child starts past anything this one may have written

    std::unique_ptr<DB> db;
    Status s = DB::Open(CrashOptions(wal), path, &db);
    ASSERT_TRUE(s.ok()) << "round " << round << ": reopen: " << s.ToString();
    auto snap = db->GetSnapshot();
    for (uint64_t a : acked) {
      ASSERT_EQ(CountOf(*snap, a * 8), kEdgesPerBatch) << "acknowledged batch " << a
                                                       << " lost in round " << round;
    }
    // No batch is partly present, acknowledged or not.
    for (uint64_t b = 0; b < next_first; ++b) {
      int c = CountOf(*snap, b * 8);
      ASSERT_TRUE(c == 0 || c == kEdgesPerBatch) << "batch " << b << " partly present: " << c;
    }
    std::string report;
    s = db->Verify(&report);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << report;
    if (after_first_ack) {
      EXPECT_GT(round_acks, 0u) << "round " << round << " acknowledged nothing";
    }
    snap.reset();
    ASSERT_TRUE(db->Close().ok());
  }
  std::cerr << "crash: " << acked.size() << " acknowledged batches over " << rounds << " rounds\n";
  EXPECT_GT(acked.size(), 50u);
}

TEST(Crash, KillDuringIngestSyncWal) { RunRounds(WalMode::kSync, 1, 8, 1); }
TEST(Crash, KillDuringIngestGroupWalTwoWriters) { RunRounds(WalMode::kGroup, 2, 6, 2); }

// --- Corruption.

using testing::ReadAll;
using testing::WriteAll;

// Builds a store with segments on two levels and a log with records in it.
void BuildStore(const std::string& path, WalMode wal) {
  std::unique_ptr<DB> db;
  Options o = CrashOptions(wal);
  ASSERT_TRUE(DB::Open(o, path, &db).ok());
  for (uint64_t k = 0; k < 400; ++k) ASSERT_TRUE(db->Write(Batch(k * 8)).ok());
  ASSERT_TRUE(db->CompactAll().ok());
  for (uint64_t k = 400; k < 500; ++k) ASSERT_TRUE(db->Write(Batch(k * 8)).ok());
  ASSERT_TRUE(db->Flush().ok());
  for (uint64_t k = 500; k < 520; ++k) ASSERT_TRUE(db->Write(Batch(k * 8)).ok());
  // Leave the last batches only in the log: a crash-like stop without Close.
  db.release();  // NOLINT: deliberately leaked to skip the clean shutdown
}

// Opens, reads everything, verifies; returns the first error seen (OK if none).
// `tail_may_go`: a flip in a log's last record is Corruption naming the log when the record
// reads as written whole (db/record_log.h: no zero-filled sector, wrong checksum; only
// Options::repair drops it), but a flip that leaves it looking torn (a sector piece that is
// now all zero) cuts it as a torn append is cut, so only the final batch may then be missing.
// A flip in the manifest's last record is Corruption.
Status OpenReadVerify(const std::string& path, WalMode wal, bool tail_may_go) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(CrashOptions(wal), path, &db);
  if (!s.ok()) return s;
  auto snap = db->GetSnapshot();
  for (uint64_t k = 0; k < 520; ++k) {
    int c = CountOf(*snap, k * 8);
    if (!snap->status().ok()) return snap->status();
    if (c != kEdgesPerBatch && !(tail_may_go && k == 519 && c == 0)) {
      return Status::Aborted("batch " + std::to_string(k) + " wrong without an error");
    }
  }
  std::string report;
  return db->Verify(&report);
}

TEST(Corruption, FlippedBytesInEveryFileKindAreNamed) {
  testing::TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  // The store is built in a child so that its leaked DB (and its lock) die with it.
  pid_t pid = fork();
  if (pid == 0) {
    BuildStore(pristine, WalMode::kSync);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(pristine)) {
    std::string n = e.path().filename();
    if (n.find(".seg") != std::string::npos || n.find(".wal") != std::string::npos ||
        n.rfind("MANIFEST-", 0) == 0) {
      files.push_back(n);
    }
  }
  int kinds = 0;
  for (const char* ext : {".seg", ".wal", "MANIFEST-"}) {
    for (const auto& f : files) kinds += f.find(ext) != std::string::npos ? 1 : 0;
  }
  ASSERT_GE(files.size(), 3u);
  std::mt19937_64 rng(9);
  int detected = 0, trials = 0;
  for (const std::string& f : files) {
    const std::string data = ReadAll(pristine + "/" + f);
    if (data.empty()) continue;
    for (int t = 0; t < 12; ++t) {
      const std::string work = dir.path() + "/w" + std::to_string(trials);
      fs::copy(pristine, work);
      std::string bad = data;
      size_t pos = rng() % bad.size();
      bad[pos] = static_cast<char>(bad[pos] ^ (1 + rng() % 255));
      WriteAll(work + "/" + f, bad);
      const bool last_record = f.find(".wal") != std::string::npos &&
                               pos + 16 + 64 >= bad.size();
      Status s = OpenReadVerify(work, WalMode::kSync, last_record);
      ++trials;
      if (!s.ok()) {
        ASSERT_FALSE(s.IsAborted()) << f << " flip at " << pos << ": wrong answer without error";
        // A flip in the log's unsynced-looking tail may only cut the tail (reported in
        // LOG); everything else must name the file.
        EXPECT_NE(s.ToString().find(f), std::string::npos) << f << " at " << pos << ": "
                                                           << s.ToString();
        ++detected;
      }
      // An undetected flip passed OpenReadVerify: every answer was still right.
      fs::remove_all(work);
    }
  }
  std::cerr << "corruption: " << detected << " of " << trials << " flips detected in " << files.size() << " files\n";
  EXPECT_GT(detected, trials / 2) << detected << " of " << trials << " flips detected";
}

}  // namespace
}  // namespace strata
