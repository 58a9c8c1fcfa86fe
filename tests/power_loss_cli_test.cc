// A power loss under `strata ingest --ids map`: the CLI's own files with the store's.
//
// A mapped store keeps two files of the CLI beside the engine's: IDMODE ("ids=map"), written
// before the store is created, and IDDICT, the external -> internal ID dictionary, created
// after it and appended to before each batch that uses new IDs (graphio/id_dictionary.h's
// durability contract: the mappings are synced before the batch is written). Both go through
// io's file operations, so the power-loss journal (io::StartPowerLossJournalForTesting) sees
// them as it sees the segments and logs.
//
// Each round a child process runs the CLI's ingest command in-process with the journal on and
// is SIGKILLed at a random moment; the parent undoes what no sync made durable
// (io::SimulatePowerLossForTesting), then asks the `strata` binary, as a user would: `verify`
// must pass (IDMODE and IDDICT present, the dictionary covering every vertex the store holds),
// and `export` must list, in the input's own IDs, what the store held after the previous round
// plus whole batches from the start of this round's input — no edge under a wrong ID, no
// batch partly, nothing once held lost. The next round ingests the next part of the input
// into the same store; at the end an uninterrupted ingest of every part must store them all.
// STRATA_DIFF_SEEDS=N runs N stores (seeds from STRATA_DIFF_SEED_FIRST).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io/env.h"
#include "tests/util/cli_in_process.h"
#include "tests/util/cli_run.h"
#include "tests/util/random_batch.h"
#include "tests/util/temp_dir.h"

namespace strata {
namespace {

using testing::CliResult;
using testing::DescribeRun;
using testing::RunStrata;

constexpr int kRounds = 12;
constexpr int kEdgesPerPart = 2400;
constexpr int kBatch = 20;

using Edge = std::pair<uint64_t, uint64_t>;

// Sparse external IDs, far above any dense bound: vertex i of the stream.
uint64_t External(uint64_t i) { return 1'000'000'000'000ULL + i * 7'919ULL; }

// Part p of the input: edge j of the whole stream goes from a new vertex to one seen before (or
// itself), so every batch adds mappings and no edge repeats.
std::vector<Edge> Part(int p, uint64_t seed) {
  std::mt19937_64 rng(seed * 31 + static_cast<uint64_t>(p));
  std::vector<Edge> edges;
  for (int k = 0; k < kEdgesPerPart; ++k) {
    const uint64_t j = static_cast<uint64_t>(p) * kEdgesPerPart + static_cast<uint64_t>(k);
    edges.emplace_back(External(j), External(rng() % (j + 1)));
  }
  return edges;
}

std::string Text(const std::vector<Edge>& edges) {
  std::string s;
  for (const Edge& e : edges) s += std::to_string(e.first) + " " + std::to_string(e.second) + "\n";
  return s;
}

std::vector<std::string> IngestArgs(const std::string& db, const std::string& input,
                                    const std::string& wal = "sync") {
  return {"ingest", "--db", db, "--input", input, "--ids", "map", "--batch",
          std::to_string(kBatch), "--wal", wal, "--memgraph-bytes",
          wal == "off" ? "8K" : "64K",  // without a log, flushes within a part
          "--memory-budget", "1M", "-q"};
}

// A failing device in the child: after `syncs` good syncs, `failures` fail with EIO (of
// directories only with directories_only); syncs < 0: none fail.
struct SyncFaults {
  int64_t syncs = -1;
  int64_t failures = 0;
  bool directories_only = false;
};

// The CLI's ingest command in this (forked) process, with the journal on when one is named,
// its stderr to `err` ("": thrown away).
[[noreturn]] void IngestInChild(const std::vector<std::string>& args, const std::string& journal,
                                const SyncFaults& faults = {}, const std::string& err = "") {
  testing::RunCliInThisProcess(args, "", err, [&] {
    if (!journal.empty() && !io::StartPowerLossJournalForTesting(journal).ok()) _exit(120);
    if (faults.syncs >= 0) {
      io::SetSyncFailureForTesting(faults.syncs, faults.failures, EIO, faults.directories_only);
    }
  });
}

std::set<Edge> Exported(const std::string& db) {
  const std::vector<std::string> args = {"export", "--db", db, "--out", "-", "-q"};
  CliResult r = RunStrata(args, "");
  EXPECT_TRUE(r.exited && r.code == 0) << DescribeRun(args, r);
  std::set<Edge> out;
  std::istringstream in(r.out);
  uint64_t a, b;
  while (in >> a >> b) out.emplace(a, b);
  return out;
}

// Seconds one part takes to ingest, uninterrupted, into a fresh store: the kills' range.
double PartSeconds(const std::string& dir, const std::string& wal) {
  const std::string db = dir + "/timing", input = dir + "/timing.el";
  testing::WriteWholeFile(input, Text(Part(0, 0)));
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) IngestInChild(IngestArgs(db, input, wal), "");
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// with_faults: in each round syncs start failing after a random number of good ones (one sync
// or every one; of files and directories, or of directories only), so the ingest may stop on a
// failed sync of the log or of IDDICT (exit 1, naming the failure) before the kill.
// wal: the ingest's --wal (without a log a store keeps what its flushes made durable: still
// whole batches from the start of each round's part).
void Rounds(bool with_faults, const std::string& wal = "sync") {
  testing::TempDir scratch;
  const double part_seconds = PartSeconds(scratch.path(), wal);
  int cut_mid_part = 0;  // rounds whose store kept some but not all of the round's batches
  int stopped_by_fault = 0;  // with_faults: rounds whose ingest stopped on a failed sync
  io::PowerLossUndone undone;
  for (int seed = testing::DiffSeedFirst(); seed < testing::DiffSeedEnd(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::TempDir dir;
    const std::string db = dir.path() + "/db", journal = dir.path() + "/journal";
    std::mt19937_64 rng(1'000'003ULL * static_cast<uint64_t>(seed) + 17);
    std::set<Edge> held;  // what the store exported after the previous round
    bool created = false;  // the store was there after an earlier round
    for (int round = 0; round < kRounds; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      const std::vector<Edge> part = Part(round, static_cast<uint64_t>(seed));
      const std::string input = dir.path() + "/part.el";
      testing::WriteWholeFile(input, Text(part));
      // Kills from before the store (or its dictionary) exists to past the part's end.
      std::uniform_real_distribution<double> delay(0.0, 1.1 * part_seconds);
      SyncFaults faults;
      if (with_faults) {
        // A part syncs about 250 times (the log and IDDICT once a batch): most rounds' syncs
        // start failing before their kill.
        faults.syncs = static_cast<int64_t>(rng() % 30);
        faults.failures = round % 2 == 0 ? 1 : INT64_MAX;
        faults.directories_only = round % 4 == 3;
      }
      const std::string err = dir.path() + "/err";
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) IngestInChild(IngestArgs(db, input, wal), journal, faults, err);
      const double wait = delay(rng);
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      kill(pid, SIGKILL);
      int st = 0;
      waitpid(pid, &st, 0);
      if (with_faults && WIFEXITED(st) && WEXITSTATUS(st) == 1) {
        const std::string msg = testing::ReadWholeFile(err);
        EXPECT_TRUE(msg.find("fdatasync failed: Input/output error") != std::string::npos ||
                    msg.find("fsync of directory failed: Input/output error") !=
                        std::string::npos)
            << msg;
        ++stopped_by_fault;
      } else {
        ASSERT_TRUE(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
            << "the ingest failed before the kill: status " << st << ": "
            << testing::ReadWholeFile(err);
      }
      // No journal: the child was killed before it started one, and so before doing anything.
      if (std::filesystem::exists(journal)) {
        const Status lost = io::SimulatePowerLossForTesting(journal, &undone);
        ASSERT_TRUE(lost.ok()) << lost.ToString();
      }

      if (!std::filesystem::exists(db + "/CURRENT")) {
        // Killed before the store's creation was durable: a later round creates it (and
        // removes what this attempt left), so nothing here may be a store's data (a log or a
        // segment without CURRENT is a store that lost it: ingest refuses the directory). A
        // store seen after an earlier round stays.
        ASSERT_FALSE(created) << "the store seen after an earlier round is gone";
        if (std::filesystem::exists(db)) {
          for (const auto& e : std::filesystem::directory_iterator(db)) {
            const std::string n = e.path().filename();
            ASSERT_TRUE(n.find(".wal") == std::string::npos && n.find(".seg") == std::string::npos)
                << n << " without CURRENT after an unfinished creation; the ingest said: "
                << testing::ReadWholeFile(err);
          }
        }
        continue;
      }
      created = true;
      const std::vector<std::string> verify = {"verify", "--db", db};
      CliResult v = RunStrata(verify, "");
      ASSERT_TRUE(v.exited && v.code == 0) << DescribeRun(verify, v);
      const std::set<Edge> now = Exported(db);
      for (const Edge& e : held) {
        ASSERT_TRUE(now.count(e)) << "edge " << e.first << " -> " << e.second
                                  << " was stored before this round and is gone";
      }
      // This round's edges in the store: a prefix of the part, whole batches (the last batch
      // may be short).
      size_t kept = 0;
      while (kept < part.size() && now.count(part[kept])) ++kept;
      for (size_t k = kept; k < part.size(); ++k) {
        ASSERT_FALSE(now.count(part[k])) << "edge " << k << " of the part is stored but edge "
                                         << kept << " is not";
      }
      ASSERT_TRUE(kept % kBatch == 0 || kept == part.size())
          << kept << " edges of the part stored: a batch of " << kBatch << " partly";
      ASSERT_EQ(now.size(), held.size() + kept)
          << "edges in the store that no input line had (a wrong mapping?)";
      if (kept > 0 && kept < part.size()) ++cut_mid_part;
      held = now;
    }
  }
  // And the CLI still works on what the losses left: every part ingested again, to the end,
  // leaves every edge of the input in the store, under its own IDs.
  {
    testing::TempDir dir;
    const std::string db = dir.path() + "/db";
    std::set<Edge> all;
    for (int round = 0; round < kRounds; ++round) {
      const std::vector<Edge> part = Part(round, 7);
      all.insert(part.begin(), part.end());
      const std::string input = dir.path() + "/part.el";
      testing::WriteWholeFile(input, Text(part));
      const std::vector<std::string> args = IngestArgs(db, input, wal);
      CliResult r = RunStrata(args, "");
      ASSERT_TRUE(r.exited && r.code == 0) << DescribeRun(args, r);
    }
    EXPECT_TRUE(Exported(db) == all) << "an uninterrupted ingest did not store its input";
  }
  EXPECT_GT(cut_mid_part, 0) << "no round's store kept part of the round's batches";
  if (with_faults) {
    EXPECT_GT(stopped_by_fault, 0) << "no ingest stopped on a failed sync";
  }
  std::printf("power loss under the CLI: %d rounds cut mid-part, %d stopped by a failed sync; "
              "undid %llu directory entries and cut %llu files by %llu bytes\n",
              cut_mid_part, stopped_by_fault, static_cast<unsigned long long>(undone.entries),
              static_cast<unsigned long long>(undone.files_cut),
              static_cast<unsigned long long>(undone.bytes_cut));
  EXPECT_GT(undone.files_cut, 0u) << "no power loss undid anything";
}

TEST(PowerLossCli, KillDuringMappedIngest) { Rounds(false); }
// The same after syncs start failing: a failed sync made nothing durable, so the power loss
// undoes what it was to cover; the ingest stops before writing a batch whose mappings' sync
// failed, and a log that failed its sync takes no more batches.
TEST(PowerLossCli, AfterFailingSyncsDuringMappedIngest) { Rounds(true); }
TEST(PowerLossCli, KillDuringMappedIngestGroupWal) { Rounds(false, "group"); }
TEST(PowerLossCli, KillDuringMappedIngestNoWal) { Rounds(false, "off"); }

}  // namespace
}  // namespace strata
