// Fault injection in the tools layer (issue 29, items 3, 4, 6, 7, 9, 10): each test damages a
// store or feeds the `strata` binary bad input or a signal, and checks what the CLI does —
// exit code, one-line message naming the file, line or option, and what the store holds after.
// ctest label "fault" (CMakeLists.txt); docs/reliability.md has the table of faults.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/util/cli_run.h"
#include "tests/util/temp_dir.h"
#include "tools/cli_commands.h"
#include "tools/cli_common.h"

namespace strata {
namespace {

using testing::CliProcess;
using testing::CliResult;
using testing::CliRunOptions;
using testing::DescribeRun;
using testing::ReadWholeFile;
using testing::RunStrata;
using testing::TempDir;
using testing::WriteWholeFile;

const std::string kExample = std::string(STRATA_TESTDATA_DIR) + "/graphalytics/example";

CliResult Ok(const std::vector<std::string>& args, const std::string& input = "") {
  CliResult r = RunStrata(args, input);
  EXPECT_TRUE(r.exited && r.code == 0) << DescribeRun(args, r);
  return r;
}

// Expects exit `code` and exactly one line on stderr holding every needle.
CliResult Fails(int code, const std::vector<std::string>& args,
                const std::vector<std::string>& needles, const std::string& input = "") {
  CliResult r = RunStrata(args, input);
  EXPECT_TRUE(r.exited) << DescribeRun(args, r);
  EXPECT_EQ(r.code, code) << DescribeRun(args, r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line:\n" << r.err;
  for (const std::string& n : needles) {
    EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
  }
  return r;
}

void CopyStore(const std::string& from, const std::string& to) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
}

// ---------------------------------------------------------------------------------------------
// Item 3: a shortened IDDICT.

// 40 edges between 80 distinct sparse IDs, 10 edges a batch: each batch persists one
// dictionary record of 20 IDs.
std::string SparseEdges(int n, uint64_t base) {
  std::string in;
  for (int i = 0; i < n; ++i) {
    in += std::to_string(base + 1000003ull * i) + " " + std::to_string(base + 7 + 1000003ull * i) +
          "\n";
  }
  return in;
}

TEST(FaultTools, ShortenedIdDictionaryIsCorruptionNamingTheFile) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  Ok({"ingest", "--db", db, "--input", "-", "--ids", "map", "--batch", "10"},
     SparseEdges(40, 1ull << 40));
  Ok({"verify", "--db", db});
  // Header 24 B; each record 32 B + 20 x 8 B = 192 B.
  ASSERT_EQ(std::filesystem::file_size(db + "/IDDICT"), 24u + 4 * 192u);
  int copy = 0;
  // At a record boundary, and inside a record (which the loader takes for a torn tail).
  for (uint64_t cut : {24u + 192u, 24u + 2 * 192u + 100u, 24u}) {
    SCOPED_TRACE("IDDICT cut to " + std::to_string(cut) + " bytes");
    const std::string d = tmp.path() + "/copy" + std::to_string(copy++);
    CopyStore(db, d);
    std::filesystem::resize_file(d + "/IDDICT", cut);
    Fails(1, {"verify", "--db", d}, {"Corruption", d + "/IDDICT", "holds vertex"});
    Fails(1, {"query", "--db", d, "stats"}, {"Corruption", "IDDICT"});
    Fails(1, {"export", "--db", d}, {"Corruption", "IDDICT"});
    Fails(1, {"analyze", "--db", d, "--algo", "wcc"}, {"Corruption", "IDDICT"});
    // A later ingest must not map new IDs onto internal IDs that carry edges.
    const auto before = std::filesystem::file_size(d + "/IDDICT");
    Fails(1, {"ingest", "--db", d, "--input", "-"}, {"Corruption", "IDDICT"}, "5 6\n");
    EXPECT_EQ(std::filesystem::file_size(d + "/IDDICT"), before);
  }
  // A missing IDDICT in a mapped store that holds vertices: ingest does not start a new one.
  const std::string d = tmp.path() + "/nodict";
  CopyStore(db, d);
  std::filesystem::remove(d + "/IDDICT");
  Fails(1, {"ingest", "--db", d, "--input", "-"}, {"Corruption", "no IDDICT"}, "5 6\n");
  EXPECT_FALSE(std::filesystem::exists(d + "/IDDICT"));
  Fails(1, {"verify", "--db", d}, {"no IDDICT"});
  // The intact store still reads and grows.
  Ok({"ingest", "--db", db, "--input", "-"}, "5 6\n");
  Ok({"verify", "--db", db});
}

// ---------------------------------------------------------------------------------------------
// Item 4: `query stats` with a damaged edge block.

std::string FirstSegment(const std::string& db) {
  std::string seg;
  for (const auto& e : std::filesystem::directory_iterator(db)) {
    if (e.path().extension() == ".seg") seg = e.path().string();
  }
  return seg;
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c;
  f.read(&c, 1);
  c ^= 0x40;
  f.seekp(offset);
  f.write(&c, 1);
}

TEST(FaultTools, QueryStatsReportsADamagedEdgeBlock) {
  TempDir tmp;
  const std::string db = tmp.path() + "/db", g = tmp.path() + "/g.el";
  Ok({"generate", "--scale", "9", "--edge-factor", "4", "--out", g, "-q"});
  Ok({"ingest", "--db", db, "--input", g});
  CliResult good = Ok({"query", "--db", db, "stats", "--json"});
  const std::string seg = FirstSegment(db);
  ASSERT_FALSE(seg.empty());
  FlipByte(seg, 4096 + 100);  // the first edge block
  Fails(1, {"query", "--db", db, "stats"}, {"Corruption"});
  Fails(1, {"query", "--db", db, "stats", "--json"}, {"Corruption"});
  FlipByte(seg, 4096 + 100);  // repaired: the same counts as before
  EXPECT_EQ(Ok({"query", "--db", db, "stats", "--json"}).out.substr(0, 200),
            good.out.substr(0, 200));
}

// ---------------------------------------------------------------------------------------------
// Item 6: SIGINT/SIGTERM during `strata ingest`.

std::string Chain(uint64_t first, uint64_t n) {
  std::string in;
  for (uint64_t i = first; i < first + n; ++i) {
    in += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  }
  return in;
}

// Feeds `lines` edges through a fifo the CLI reads as stdin, keeps the fifo open (the CLI
// blocks reading it), sends `sig` once the CLI has consumed every byte, and returns the result.
CliResult IngestAndSignal(const std::string& dir, const std::vector<std::string>& args,
                          const std::string& data, int sig) {
  const std::string fifo = dir + "/in.fifo";
  unlink(fifo.c_str());
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  CliRunOptions o;
  o.stdin_path = fifo;
  CliProcess p(args, o);
  const int w = open(fifo.c_str(), O_WRONLY);  // waits for the child to open its end
  EXPECT_GE(w, 0);
  EXPECT_EQ(write(w, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  // Wait until the pipe is drained, then give the CLI time to parse and block in read().
  for (int i = 0; i < 2000; ++i) {
    int unread = -1;
    ioctl(w, FIONREAD, &unread);
    if (unread == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(p.pid(), sig);
  CliResult r = p.Wait();
  close(w);
  unlink(fifo.c_str());
  return r;
}

TEST(FaultTools, InterruptedIngestStoresWhatWasReadAndExits130) {
  struct Case {
    const char* wal;
    int sig;
  };
  for (const Case& c : {Case{"off", SIGINT}, Case{"group", SIGTERM}, Case{"sync", SIGINT}}) {
    SCOPED_TRACE(std::string("--wal ") + c.wal + ", signal " + std::to_string(c.sig));
    TempDir tmp;
    const std::string db = tmp.path() + "/db";
    // Two full batches of 100 and a partial one of 50.
    const std::vector<std::string> args = {"ingest", "--db", db, "--input", "-", "--batch",
                                           "100", "--wal", c.wal};
    CliResult r = IngestAndSignal(tmp.path(), args, Chain(0, 250), c.sig);
    ASSERT_TRUE(r.exited) << DescribeRun(args, r);
    EXPECT_EQ(r.code, 130) << DescribeRun(args, r);
    EXPECT_NE(r.err.find("interrupted by " + std::string(c.sig == SIGINT ? "SIGINT" : "SIGTERM")),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("ingested 250 edge records"), std::string::npos) << r.err;
    // The store holds every record read, the partial batch too.
    CliResult st = Ok({"query", "--db", db, "stats", "--json"});
    EXPECT_NE(st.out.find("\"edges\": 250,"), std::string::npos) << st.out;
    EXPECT_EQ(Ok({"query", "--db", db, "degree", "249"}).out, "1\n");
    Ok({"verify", "--db", db});
    // And the store takes more.
    Ok({"ingest", "--db", db, "--input", "-"}, Chain(250, 10));
    EXPECT_NE(Ok({"query", "--db", db, "stats", "--json"}).out.find("\"edges\": 260,"),
              std::string::npos);
  }
  // -q: no summary, one line saying what is stored.
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  const std::vector<std::string> args = {"ingest", "--db", db, "--input", "-", "-q",
                                         "--wal", "off"};
  CliResult r = IngestAndSignal(tmp.path(), args, Chain(0, 30), SIGINT);
  ASSERT_TRUE(r.exited) << DescribeRun(args, r);
  EXPECT_EQ(r.code, 130);
  EXPECT_EQ(r.err, "strata ingest: interrupted by SIGINT: the 30 edge records read are stored\n");
  EXPECT_NE(Ok({"query", "--db", db, "stats", "--json"}).out.find("\"edges\": 30,"),
            std::string::npos);
}

}  // namespace
}  // namespace strata
