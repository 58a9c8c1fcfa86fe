// Tests of the I/O layer (io/env.h) on both back ends: round trips, MultiRead with hundreds of
// requests in flight, error messages naming the file and offset, ring lifetimes across threads
// and Envs, and the automatic fallback to pread/pwrite when io_uring is refused (simulated with
// a seccomp filter in a child process).
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "io/env.h"
#include "tests/util/device_faults.h"
#include "tests/util/file_util.h"

namespace strata::io {
namespace {

using strata::testing::ReadAll;
using strata::testing::ResidentPages;
using strata::testing::WriteAll;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/strata_io_test_XXXXXX";
    char* p = ::mkdtemp(tmpl);
    EXPECT_NE(p, nullptr);
    path_ = p ? p : "/tmp";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>(rng());
  return s;
}

const char* Name(IoBackend b) {
  switch (b) {
    case IoBackend::kAuto: return "Auto";
    case IoBackend::kIoUring: return "IoUring";
    case IoBackend::kPosix: return "Posix";
  }
  return "?";
}

class IoTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == IoBackend::kIoUring && !Env::IoUringAvailable()) {
      GTEST_SKIP() << "io_uring is not available here";
    }
    EnvOptions o;
    o.backend = GetParam();
    o.write_buffer = 64 << 10;
    o.ring_single_reads = true;  // every read through the ring on the io_uring back end
    ASSERT_TRUE(Env::Open(o, &env_).ok());
  }

  // Writes `data` through appends of varied sizes, syncs and closes.
  void WriteFile(const std::string& path, const std::string& data) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(path, &f).ok());
    std::mt19937_64 rng(7);
    size_t pos = 0;
    const size_t sizes[] = {1, 7, 4096, 65536, 65535, 300000, 13};
    while (pos < data.size()) {
      size_t n = std::min(data.size() - pos, sizes[rng() % 7]);
      Status s = f->Append(std::string_view(data).substr(pos, n));
      ASSERT_TRUE(s.ok()) << s.ToString();
      pos += n;
      ASSERT_EQ(f->Size(), pos);
    }
    ASSERT_TRUE(f->Sync().ok());
    ASSERT_TRUE(f->Close().ok());
  }

  std::unique_ptr<Env> env_;
};

TEST_P(IoTest, BackendResolved) {
  if (GetParam() == IoBackend::kPosix) {
    EXPECT_EQ(env_->backend(), IoBackend::kPosix);
  }
  if (GetParam() == IoBackend::kIoUring) {
    EXPECT_EQ(env_->backend(), IoBackend::kIoUring);
  }
  if (GetParam() == IoBackend::kAuto) {
    EXPECT_EQ(env_->backend(),
              Env::IoUringAvailable() ? IoBackend::kIoUring : IoBackend::kPosix);
  }
  std::string why;
  bool avail = Env::IoUringAvailable(&why);
  std::printf("io_uring available: %s %s; backend in use: %s\n", avail ? "yes" : "no",
              why.c_str(), env_->BackendName());
}

TEST_P(IoTest, WriteReadRoundTrip) {
  TempDir dir;
  const std::string path = dir.File("data");
  const std::string data = RandomBytes(3 << 20, 1);
  WriteFile(path, data);

  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  ASSERT_EQ(f->Size(), data.size());
  std::string back(data.size(), '\0');
  ASSERT_TRUE(f->Read(0, back.size(), back.data()).ok());
  EXPECT_TRUE(back == data);

  std::mt19937_64 rng(2);
  for (int i = 0; i < 200; i++) {
    uint64_t off = rng() % data.size();
    size_t n = std::min<size_t>(data.size() - off, rng() % 20000);
    std::string buf(n, '\0');
    ASSERT_TRUE(f->Read(off, n, buf.data()).ok());
    ASSERT_EQ(buf, data.substr(off, n));
  }
  // Zero-length read.
  ASSERT_TRUE(f->Read(data.size(), 0, nullptr).ok());
}

// DropCache after Sync takes a written file's pages out of the page cache (the store's
// segment writers do this so flushes and compactions do not fill memory with written data).
TEST_P(IoTest, DropCacheAfterSyncReleasesWrittenPages) {
  TempDir dir;
  struct statfs fs;
  if (::statfs(dir.path().c_str(), &fs) == 0 && fs.f_type == 0x01021994 /* TMPFS_MAGIC */) {
    GTEST_SKIP() << "tmpfs pages are the file itself: nothing to drop";
  }
  const size_t size = 8 << 20;
  const std::string data = RandomBytes(size, 3);
  for (bool drop : {false, true}) {
    const std::string path = dir.File(drop ? "dropped" : "kept");
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(path, &f).ok());
    ASSERT_TRUE(f->Append(data).ok());
    ASSERT_TRUE(f->Sync().ok());
    if (drop) f->DropCache();
    ASSERT_TRUE(f->Close().ok());
    const size_t resident = ResidentPages(path, 0, size);
    const size_t pages = size / static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::printf("%s: %zu of %zu pages resident\n", path.c_str(), resident, pages);
    if (drop) {
      EXPECT_LT(resident, pages / 10);
    } else if (resident < pages / 2) {
      GTEST_SKIP() << "written pages do not stay cached on this file system";
    }
  }
}

TEST_P(IoTest, SingleReadsDefaultPolicy) {
  // Default options: on io_uring a lone Read uses pread, MultiRead the ring; same results.
  TempDir dir;
  std::unique_ptr<Env> env;
  ASSERT_TRUE(Env::Open(GetParam(), &env).ok());
  const std::string path = dir.File("data");
  const std::string data = RandomBytes(100000, 12);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env->NewRandomAccessFile(path, &f).ok());
  std::string a(5000, '\0'), b(5000, '\0');
  ASSERT_TRUE(f->Read(1234, 5000, a.data()).ok());
  ReadRequest req{1234, 5000, b.data(), {}};
  ASSERT_TRUE(f->MultiRead(&req, 1).ok());
  EXPECT_EQ(a, data.substr(1234, 5000));
  EXPECT_EQ(b, a);
  Status s = f->Read(99999, 2, a.data());
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find("file " + path + " offset 100000"), std::string::npos)
      << s.ToString();
}

TEST_P(IoTest, EmptyFile) {
  TempDir dir;
  const std::string path = dir.File("empty");
  WriteFile(path, "");
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  EXPECT_EQ(f->Size(), 0u);
  char c;
  Status s = f->Read(0, 1, &c);
  EXPECT_TRUE(s.IsIOError());
}

TEST_P(IoTest, MultiReadHundreds) {
  TempDir dir;
  const std::string path = dir.File("data");
  const std::string data = RandomBytes(8 << 20, 3);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());

  std::mt19937_64 rng(4);
  const size_t kReqs = 1000;  // more than the ring depth: the ring refills as reads complete
  std::vector<ReadRequest> reqs(kReqs);
  std::vector<std::string> bufs(kReqs);
  for (size_t i = 0; i < kReqs; i++) {
    uint64_t off = rng() % data.size();
    size_t n = i % 50 == 0 ? 0 : std::min<size_t>(data.size() - off, 1 + rng() % 70000);
    bufs[i].assign(n, '\0');
    reqs[i].offset = off;
    reqs[i].len = n;
    reqs[i].buf = bufs[i].data();
  }
  Status s = f->MultiRead(reqs.data(), reqs.size());
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < kReqs; i++) {
    ASSERT_TRUE(reqs[i].status.ok());
    ASSERT_EQ(bufs[i], data.substr(reqs[i].offset, reqs[i].len)) << i;
  }
}

TEST_P(IoTest, MultiReadSmallRing) {
  TempDir dir;
  EnvOptions o;
  o.backend = GetParam();
  o.ring_depth = 8;
  std::unique_ptr<Env> env;
  ASSERT_TRUE(Env::Open(o, &env).ok());
  const std::string path = dir.File("data");
  const std::string data = RandomBytes(1 << 20, 5);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env->NewRandomAccessFile(path, &f).ok());
  std::vector<ReadRequest> reqs(300);
  std::vector<std::string> bufs(reqs.size());
  for (size_t i = 0; i < reqs.size(); i++) {
    bufs[i].assign(3000, '\0');
    reqs[i] = ReadRequest{i * 3000, 3000, bufs[i].data(), Status()};
  }
  ASSERT_TRUE(f->MultiRead(reqs.data(), reqs.size()).ok());
  for (size_t i = 0; i < reqs.size(); i++) ASSERT_EQ(bufs[i], data.substr(i * 3000, 3000));
}

TEST_P(IoTest, MultiReadPastEndFailsOnlyThatRequest) {
  TempDir dir;
  const std::string path = dir.File("short");
  const std::string data = RandomBytes(10000, 6);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  std::string a(100, '\0'), b(200, '\0'), c(100, '\0');
  ReadRequest reqs[3] = {
      {0, 100, a.data(), {}}, {9900, 200, b.data(), {}}, {500, 100, c.data(), {}}};
  Status s = f->MultiRead(reqs, 3);
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("offset 10000"), std::string::npos) << s.ToString();
  EXPECT_TRUE(reqs[0].status.ok());
  EXPECT_TRUE(reqs[1].status.IsIOError());
  EXPECT_TRUE(reqs[2].status.ok());
  EXPECT_EQ(a, data.substr(0, 100));
  EXPECT_EQ(c, data.substr(500, 100));

  std::string d(50, '\0');
  s = f->Read(9990, 50, d.data());
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find("file " + path + " offset 10000"), std::string::npos)
      << s.ToString();
}

TEST_P(IoTest, MissingFileNamed) {
  TempDir dir;
  const std::string path = dir.File("does-not-exist");
  std::unique_ptr<RandomAccessFile> f;
  Status s = env_->NewRandomAccessFile(path, &f);
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  std::unique_ptr<WritableFile> w;
  s = env_->NewWritableFile(dir.File("no/such/dir/file"), &w);
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find("no/such/dir/file"), std::string::npos) << s.ToString();
  uint64_t size;
  EXPECT_TRUE(env_->GetFileSize(path, &size).IsIOError());
  EXPECT_FALSE(env_->FileExists(path));
}

TEST_P(IoTest, FileSystemOps) {
  TempDir dir;
  ASSERT_TRUE(env_->CreateDir(dir.File("sub")).ok());
  ASSERT_TRUE(env_->CreateDir(dir.File("sub")).ok());  // exists: still OK
  WriteFile(dir.File("sub/a"), "hello");
  ASSERT_TRUE(env_->RenameFile(dir.File("sub/a"), dir.File("sub/b")).ok());
  ASSERT_TRUE(env_->SyncDir(dir.File("sub")).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(env_->GetChildren(dir.File("sub"), &names).ok());
  ASSERT_EQ(names, std::vector<std::string>{"b"});
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(dir.File("sub/b"), &size).ok());
  EXPECT_EQ(size, 5u);
  ASSERT_TRUE(env_->RemoveFile(dir.File("sub/b")).ok());
  EXPECT_FALSE(env_->FileExists(dir.File("sub/b")));
  Status s = env_->SyncDir(dir.File("missing"));
  EXPECT_TRUE(s.IsIOError());
}

TEST_P(IoTest, ClosedFileRejectsAppends) {
  TempDir dir;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("x"), &f).ok());
  ASSERT_TRUE(f->Append("abc").ok());
  ASSERT_TRUE(f->Close().ok());
  EXPECT_FALSE(f->Append("d").ok());
  uint64_t size;
  ASSERT_TRUE(env_->GetFileSize(dir.File("x"), &size).ok());
  EXPECT_EQ(size, 3u);
}

// SetWriteLimitForTesting: the write that passes the limit is short, then fails with ENOSPC
// naming the file and the offset where the room ended; the file stays failed; with no room
// left files can be neither created nor renamed; a file made after the limit is lifted writes
// again.
TEST_P(IoTest, WriteLimitIsAFullDisk) {
  testing::ClearDeviceFaults clear;
  TempDir dir;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("x"), &f).ok());
  const std::string data = RandomBytes(200000, 3);
  SetWriteLimitForTesting(100000 + 123);
  ASSERT_TRUE(f->Append(std::string_view(data).substr(0, 100000)).ok());  // large: written through
  ASSERT_TRUE(f->Flush().ok());
  Status s = f->Append(std::string_view(data).substr(100000));
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(dir.File("x") + " offset 100123: write failed: No space left on device"),
            std::string::npos)
      << s.ToString();
  EXPECT_FALSE(f->Append("more").ok());
  EXPECT_FALSE(f->Sync().ok());
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(dir.File("x"), &size).ok());
  EXPECT_EQ(size, 100123u);  // the short write's bytes are there
  std::unique_ptr<RandomAccessFile> r;
  ASSERT_TRUE(env_->NewRandomAccessFile(dir.File("x"), &r).ok());
  std::string back(100123, '\0');
  ASSERT_TRUE(r->Read(0, back.size(), back.data()).ok());
  EXPECT_TRUE(back == data.substr(0, 100123));
  // No room at all: creating a file, or renaming one, fails too.
  std::unique_ptr<WritableFile> g;
  s = env_->NewWritableFile(dir.File("y"), &g);
  ASSERT_TRUE(s.IsIOError());
  EXPECT_NE(s.ToString().find("open failed: No space left on device"), std::string::npos)
      << s.ToString();
  EXPECT_FALSE(env_->FileExists(dir.File("y")));
  s = env_->RenameFile(dir.File("x"), dir.File("w"));
  EXPECT_TRUE(s.IsIOError());
  EXPECT_NE(s.ToString().find("No space left on device"), std::string::npos) << s.ToString();
  EXPECT_TRUE(env_->FileExists(dir.File("x")));
  // Room for nothing but the file: a buffered file fails at its first write of its buffer.
  SetWriteLimitForTesting(1);
  ASSERT_TRUE(env_->NewWritableFile(dir.File("y"), &g).ok());
  ASSERT_TRUE(g->Append("abc").ok());  // buffered: nothing written yet
  EXPECT_TRUE(g->Sync().IsIOError());
  // A full disk that still creates files: they are made (empty) and renamed; writes fail.
  SetWriteLimitForTesting(0, /*refuse_creation=*/false);
  std::unique_ptr<WritableFile> e;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("empty"), &e).ok());
  ASSERT_TRUE(e->Append("abc").ok());
  s = e->Sync();
  EXPECT_NE(s.ToString().find(dir.File("empty") + " offset 0: write failed: No space left on device"),
            std::string::npos)
      << s.ToString();
  EXPECT_TRUE(env_->RenameFile(dir.File("empty"), dir.File("renamed")).ok());
  ASSERT_TRUE(env_->GetFileSize(dir.File("renamed"), &size).ok());
  EXPECT_EQ(size, 0u);
  SetWriteLimitForTesting(-1);
  std::unique_ptr<WritableFile> h;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("z"), &h).ok());
  ASSERT_TRUE(h->Append("abc").ok());
  ASSERT_TRUE(h->Sync().ok());
  ASSERT_TRUE(h->Close().ok());
}

// SetSyncFailureForTesting: after the good syncs a sync fails with EIO naming the file, and the
// file is cut back to its last good sync (what a crash after the failure may leave); the file
// stays failed; a transient fault lets later files sync again.
TEST_P(IoTest, SyncFailureLosesTheUnsyncedBytes) {
  testing::ClearDeviceFaults clear;
  TempDir dir;
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("x"), &f).ok());
  SetSyncFailureForTesting(1, /*failures=*/1);
  ASSERT_TRUE(f->Append("durable").ok());
  ASSERT_TRUE(f->Sync().ok());  // the one good sync
  ASSERT_TRUE(f->Append("lost").ok());
  Status s = f->Sync();
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find(dir.File("x") + " offset 7: fdatasync failed: Input/output error"),
            std::string::npos)
      << s.ToString();
  uint64_t size = 0;
  ASSERT_TRUE(env_->GetFileSize(dir.File("x"), &size).ok());
  EXPECT_EQ(size, 7u);
  EXPECT_FALSE(f->Append("more").ok());  // the file stays failed though the device is back
  EXPECT_FALSE(f->Sync().ok());
  std::unique_ptr<WritableFile> g;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("y"), &g).ok());
  ASSERT_TRUE(g->Append("abc").ok());
  ASSERT_TRUE(g->Sync().ok());
  ASSERT_TRUE(env_->SyncDir(dir.path()).ok());
  // A lasting fault fails directory syncs too.
  SetSyncFailureForTesting(0);
  EXPECT_TRUE(env_->SyncDir(dir.path()).IsIOError());
  EXPECT_TRUE(g->Sync().IsIOError());
  // A late ENOSPC (delayed allocation): the same loss, said as a full disk.
  SetSyncFailureForTesting(0, 1, ENOSPC);
  std::unique_ptr<WritableFile> h;
  ASSERT_TRUE(env_->NewWritableFile(dir.File("z"), &h).ok());
  ASSERT_TRUE(h->Append("written, never durable").ok());
  s = h->Sync();
  EXPECT_NE(s.ToString().find(dir.File("z") + " offset 0: fdatasync failed: No space left on device"),
            std::string::npos)
      << s.ToString();
  ASSERT_TRUE(env_->GetFileSize(dir.File("z"), &size).ok());
  EXPECT_EQ(size, 0u);
}

// The power-loss journal: what no sync made durable is undone — a file's bytes past its last
// good sync, creations, renames and removals no sync of their directory followed (newest
// first, a renamed-over or removed file restored) — and what a sync made durable stays.
TEST_P(IoTest, PowerLossUndoesWhatNoSyncMadeDurable) {
  testing::ClearDeviceFaults clear;
  TempDir dir;
  const std::string journal = dir.File("journal");
  const std::string d = dir.File("d");
  ASSERT_TRUE(env_->CreateDir(d).ok());
  WriteFile(d + "/old", "old content");   // before the journal: durable
  WriteFile(d + "/gone", "removed file");
  ASSERT_TRUE(StartPowerLossJournalForTesting(journal).ok());
  EXPECT_TRUE(StartPowerLossJournalForTesting(journal).IsInvalidArgument());
  auto write = [&](const std::string& name, const std::string& synced, const std::string& more) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(d + "/" + name, &f).ok());
    ASSERT_TRUE(f->Append(synced).ok());
    if (!synced.empty()) {
      ASSERT_TRUE(f->Sync().ok());
    }
    ASSERT_TRUE(f->Append(more).ok());
    ASSERT_TRUE(f->Close().ok());
  };
  write("a", "synced bytes", " unsynced bytes");  // created, then its entry synced
  write("new.tmp", "new content", "");
  ASSERT_TRUE(env_->SyncDir(d + "/").ok());
  write("b", "synced but no directory sync", "");
  ASSERT_TRUE(env_->RenameFile(d + "/new.tmp", d + "/old").ok());  // over "old", not synced
  ASSERT_TRUE(env_->RemoveFile(d + "/gone").ok());
  write("c", "", "never synced");
  ASSERT_TRUE(env_->SyncDir(dir.path()).ok());  // another directory's sync changes nothing in d
  StopPowerLossJournalForTesting();
  // Before the power loss, every change is there.
  EXPECT_EQ(ReadAll(d + "/a"), "synced bytes unsynced bytes");
  EXPECT_EQ(ReadAll(d + "/old"), "new content");
  EXPECT_FALSE(env_->FileExists(d + "/gone"));

  PowerLossUndone undone;
  ASSERT_TRUE(SimulatePowerLossForTesting(journal, &undone).ok());
  EXPECT_EQ(ReadAll(d + "/a"), "synced bytes");
  EXPECT_FALSE(env_->FileExists(d + "/b"));
  EXPECT_FALSE(env_->FileExists(d + "/c"));
  EXPECT_EQ(ReadAll(d + "/old"), "old content");
  EXPECT_EQ(ReadAll(d + "/new.tmp"), "new content");
  EXPECT_EQ(ReadAll(d + "/gone"), "removed file");
  EXPECT_EQ(undone.entries, 4u);  // b, the rename, the removal, c
  EXPECT_EQ(undone.files_cut, 1u);
  EXPECT_EQ(undone.bytes_cut, std::string(" unsynced bytes").size());
  // The journal and its links are gone; nothing else is left beside the directory.
  std::vector<std::string> names;
  ASSERT_TRUE(env_->GetChildren(dir.path(), &names).ok());
  EXPECT_EQ(names, std::vector<std::string>{"d"});

  // A journal whose directory syncs came after every change undoes nothing, and a torn last
  // record (a process killed inside its write) is ignored.
  ASSERT_TRUE(StartPowerLossJournalForTesting(journal).ok());
  write("e", "all synced", "");
  ASSERT_TRUE(env_->RemoveFile(d + "/a").ok());
  ASSERT_TRUE(env_->SyncDir(d).ok());
  StopPowerLossJournalForTesting();
  {
    std::string j = ReadAll(journal);
    j += "U\t" + d + "/e";  // no newline: torn
    WriteAll(journal, j);
  }
  undone = PowerLossUndone{};
  ASSERT_TRUE(SimulatePowerLossForTesting(journal, &undone).ok());
  EXPECT_EQ(undone.entries, 0u);
  EXPECT_EQ(undone.files_cut, 0u);
  EXPECT_EQ(ReadAll(d + "/e"), "all synced");
  EXPECT_FALSE(env_->FileExists(d + "/a"));

  // What is done outside the Env is durable: a file renamed then unlinked directly stays gone
  // (the rename is not undone), and removals in a directory removed directly are not put back.
  ASSERT_TRUE(StartPowerLossJournalForTesting(journal).ok());
  write("f.tmp", "f", "");
  ASSERT_TRUE(env_->RenameFile(d + "/f.tmp", d + "/e").ok());  // over e: kept
  ASSERT_EQ(::unlink((d + "/e").c_str()), 0);
  const std::string sub = d + "/sub";
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  WriteFile(sub + "/x", "x");
  ASSERT_TRUE(env_->RemoveFile(sub + "/x").ok());  // kept
  std::filesystem::remove_all(sub);
  StopPowerLossJournalForTesting();
  undone = PowerLossUndone{};
  const Status lost = SimulatePowerLossForTesting(journal, &undone);
  ASSERT_TRUE(lost.ok()) << lost.ToString();
  EXPECT_FALSE(env_->FileExists(d + "/e"));
  EXPECT_FALSE(env_->FileExists(d + "/f.tmp"));
  EXPECT_FALSE(env_->FileExists(sub));
}

TEST_P(IoTest, ConcurrentReadersOwnRings) {
  TempDir dir;
  const std::string path = dir.File("data");
  const std::string data = RandomBytes(2 << 20, 8);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int round = 0; round < 20; round++) {
        std::vector<ReadRequest> reqs(64);
        std::vector<std::string> bufs(64);
        for (size_t i = 0; i < reqs.size(); i++) {
          uint64_t off = rng() % (data.size() - 5000);
          bufs[i].assign(1 + rng() % 4999, '\0');
          reqs[i] = ReadRequest{off, bufs[i].size(), bufs[i].data(), {}};
        }
        if (!f->MultiRead(reqs.data(), reqs.size()).ok()) bad++;
        for (size_t i = 0; i < reqs.size(); i++) {
          if (bufs[i] != data.substr(reqs[i].offset, reqs[i].len)) bad++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// Rings of two Envs in one thread are distinct, and a ring outliving its Env (thread still
// running) or its thread (Env still open) is released cleanly — ASan checks the rest.
TEST_P(IoTest, RingLifetimes) {
  TempDir dir;
  const std::string path = dir.File("data");
  const std::string data = RandomBytes(100000, 9);
  WriteFile(path, data);
  for (int round = 0; round < 3; round++) {
    std::unique_ptr<Env> e1, e2;
    ASSERT_TRUE(Env::Open(GetParam(), &e1).ok());
    ASSERT_TRUE(Env::Open(GetParam(), &e2).ok());
    std::unique_ptr<RandomAccessFile> f1, f2;
    ASSERT_TRUE(e1->NewRandomAccessFile(path, &f1).ok());
    ASSERT_TRUE(e2->NewRandomAccessFile(path, &f2).ok());
    std::string b1(1000, '\0'), b2(1000, '\0');
    ASSERT_TRUE(f1->Read(10, 1000, b1.data()).ok());
    ASSERT_TRUE(f2->Read(20, 1000, b2.data()).ok());
    EXPECT_EQ(b1, data.substr(10, 1000));
    EXPECT_EQ(b2, data.substr(20, 1000));
    std::thread t([&] {
      std::string b(500, '\0');
      EXPECT_TRUE(f1->Read(5, 500, b.data()).ok());
      EXPECT_EQ(b, data.substr(5, 500));
    });
    t.join();  // thread exits: its ring for e1 is closed now
    f1.reset();
    f2.reset();
    e1.reset();  // this thread's ring for e1 is closed now
  }
}

// ReadQueue (queued reads, completions by polling) against MultiRead: random reads over three
// files, more than the ring's depth queued at once, zero-length reads, Reap calls with and
// without waiting between the Queue calls, and MultiReads and ring reads of the same thread
// while the queue's reads are in flight (they reap the queue's completions and must hand them
// back). Every read is reported exactly once, with the bytes MultiRead gives.
TEST_P(IoTest, ReadQueueMatchesMultiRead) {
  for (bool random_access : {true, false}) {
  SCOPED_TRACE(random_access ? "random access" : "with readahead");
  TempDir dir;
  EnvOptions o;
  o.backend = GetParam();
  o.ring_depth = 8;
  o.ring_single_reads = true;  // io_uring: Read goes through the ring too
  std::unique_ptr<Env> env;
  ASSERT_TRUE(Env::Open(o, &env).ok());
  std::vector<std::string> data;
  std::vector<std::unique_ptr<RandomAccessFile>> files;
  for (int k = 0; k < 3; ++k) {
    data.push_back(RandomBytes((size_t{1} << 20) + 777 * k, 20 + k));
    WriteFile(dir.File("q" + std::to_string(k)), data.back());
    files.emplace_back();
    ASSERT_TRUE(env->NewRandomAccessFile(dir.File("q" + std::to_string(k)), &files.back()).ok());
  }
  std::mt19937_64 rng(21);
  const size_t kReqs = 600;
  std::vector<ReadRequest> q(kReqs), m(kReqs);
  std::vector<std::string> qbuf(kReqs), mbuf(kReqs);
  std::vector<int> file(kReqs);
  for (size_t i = 0; i < kReqs; ++i) {
    file[i] = static_cast<int>(rng() % 3);
    const std::string& d = data[file[i]];
    const uint64_t off = rng() % d.size();
    const size_t n = i % 37 == 0 ? 0 : std::min<size_t>(d.size() - off, 1 + rng() % 20000);
    qbuf[i].assign(n, 'x');
    mbuf[i].assign(n, 'y');
    q[i] = ReadRequest{off, n, qbuf[i].data(), Status::Corruption("unset")};
    m[i] = ReadRequest{off, n, mbuf[i].data(), Status()};
  }
  std::vector<int> reported(kReqs, 0);
  auto done = [&](void* tag) { ++reported[static_cast<ReadRequest*>(tag) - q.data()]; };
  std::unique_ptr<ReadQueue> queue = env->NewReadQueue(random_access);
  size_t n_reported = 0;
  for (size_t i = 0; i < kReqs; ++i) {
    queue->Queue(*files[file[i]], &q[i], &q[i]);
    if (i % 50 == 49) n_reported += queue->Reap(/*wait=*/false, done);
    if (i % 100 == 99) n_reported += queue->Reap(/*wait=*/true, done);
    if (i % 64 == 10) {
      // A MultiRead and a single read on this thread while queued reads are in flight.
      ReadRequest r[2] = {{1000, 5000, mbuf[0].data(), {}}, {0, 10, mbuf[0].data(), {}}};
      std::string keep = mbuf[0];
      mbuf[0].assign(std::max<size_t>(mbuf[0].size(), 5000), '\0');
      r[0].buf = r[1].buf = mbuf[0].data();
      ASSERT_TRUE(files[1]->MultiRead(r, 2).ok());
      ASSERT_EQ(std::string(mbuf[0].data(), 10), data[1].substr(0, 10));
      ASSERT_TRUE(files[2]->Read(77, 100, mbuf[0].data()).ok());
      ASSERT_EQ(std::string(mbuf[0].data(), 100), data[2].substr(77, 100));
      mbuf[0] = keep;
      m[0].buf = mbuf[0].data();
    }
  }
  while (queue->outstanding() != 0) {
    const size_t got = queue->Reap(/*wait=*/true, done);
    ASSERT_GT(got, 0u) << "Reap(wait) returned nothing with reads outstanding";
    n_reported += got;
  }
  EXPECT_EQ(queue->Reap(/*wait=*/true, done), 0u);  // nothing outstanding: returns at once
  EXPECT_EQ(n_reported, kReqs);
  for (size_t i = 0; i < kReqs; ++i) {
    ASSERT_TRUE(files[file[i]]->MultiRead(&m[i], 1).ok());
    ASSERT_EQ(reported[i], 1) << "read " << i << " reported " << reported[i] << " times";
    ASSERT_TRUE(q[i].status.ok()) << i << ": " << q[i].status.ToString();
    ASSERT_EQ(qbuf[i], mbuf[i]) << "read " << i;
    ASSERT_EQ(qbuf[i], data[file[i]].substr(q[i].offset, q[i].len)) << "read " << i;
  }
  }
}

// A file removed after it was opened (a compacted-away segment an old snapshot still reads):
// the queue's no-readahead descriptor cannot be opened by path any more, and its reads go
// through the first descriptor instead, with the right bytes.
TEST_P(IoTest, ReadQueueOfRemovedFile) {
  TempDir dir;
  const std::string path = dir.File("gone");
  const std::string data = RandomBytes(200000, 27);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  ASSERT_TRUE(env_->RemoveFile(path).ok());
  std::unique_ptr<ReadQueue> queue = env_->NewReadQueue(/*random_access=*/true);
  std::vector<ReadRequest> q(50);
  std::vector<std::string> b(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    b[i].assign(1000 + i, '\0');
    q[i] = ReadRequest{i * 3001, b[i].size(), b[i].data(), {}};
    queue->Queue(*f, &q[i], &q[i]);
  }
  size_t got = 0;
  while (queue->outstanding() != 0) got += queue->Reap(true, [](void*) {});
  ASSERT_EQ(got, q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    ASSERT_TRUE(q[i].status.ok()) << q[i].status.ToString();
    ASSERT_EQ(b[i], data.substr(q[i].offset, q[i].len));
  }
}

// Reads past the end of a file, and of a file truncated after it was opened: IOErrors naming
// the file and the offset where the bytes ran out, the same as MultiRead's; the other reads of
// the queue are unaffected.
TEST_P(IoTest, ReadQueuePastEndAndTruncatedFile) {
  TempDir dir;
  const std::string path = dir.File("trunc");
  const std::string data = RandomBytes(10000, 26);
  WriteFile(path, data);
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  std::unique_ptr<ReadQueue> queue = env_->NewReadQueue();
  auto check = [&](std::vector<std::pair<uint64_t, size_t>> reads,
                   std::vector<std::string> errors) {
    std::vector<ReadRequest> q(reads.size()), m(reads.size());
    std::vector<std::string> qb(reads.size()), mb(reads.size());
    for (size_t i = 0; i < reads.size(); ++i) {
      qb[i].assign(reads[i].second, '\0');
      mb[i].assign(reads[i].second, '\0');
      q[i] = ReadRequest{reads[i].first, reads[i].second, qb[i].data(), {}};
      m[i] = ReadRequest{reads[i].first, reads[i].second, mb[i].data(), {}};
      queue->Queue(*f, &q[i], &q[i]);
    }
    (void)f->MultiRead(m.data(), m.size());
    size_t got = 0;
    while (queue->outstanding() != 0) got += queue->Reap(true, [](void*) {});
    ASSERT_EQ(got, reads.size());
    for (size_t i = 0; i < reads.size(); ++i) {
      if (errors[i].empty()) {
        ASSERT_TRUE(q[i].status.ok()) << i << ": " << q[i].status.ToString();
        ASSERT_EQ(qb[i], mb[i]);
        continue;
      }
      ASSERT_TRUE(q[i].status.IsIOError()) << i << ": " << q[i].status.ToString();
      EXPECT_NE(q[i].status.message().find("file " + path + " offset " + errors[i]),
                std::string::npos)
          << q[i].status.ToString();
      EXPECT_EQ(q[i].status.ToString(), m[i].status.ToString());
    }
  };
  check({{0, 100}, {9900, 200}, {500, 100}, {10000, 1}}, {"", "10000", "", "10000"});
  ASSERT_EQ(::truncate(path.c_str(), 5000), 0);
  check({{4000, 2000}, {100, 100}, {6000, 100}}, {"5000", "", "6000"});
}

// WillNeed brings the named range into the page cache (where the file system lets pages be
// dropped at all: not on tmpfs) and nothing before it, and is harmless past the end.
TEST_P(IoTest, WillNeedReadsTheRangeAhead) {
  TempDir dir;
  const std::string path = dir.File("hint");
  const size_t kBytes = 8 << 20;
  WriteFile(path, std::string(kBytes, 'h'));
  {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (ResidentPages(path, 0, kBytes) > kBytes / page / 4) {
    GTEST_SKIP() << "this file system keeps the file's pages in memory (tmpfs?)";
  }
  std::unique_ptr<RandomAccessFile> f;
  ASSERT_TRUE(env_->NewRandomAccessFile(path, &f).ok());
  f->WillNeed(4 << 20, 2 << 20);
  f->WillNeed(kBytes - 4096, 1 << 20);  // past the end: ignored
  // The hint starts the reads; they finish on the device's time. Readahead is best effort: a
  // page the kernel cannot allocate at once (a page cache full of other files) is skipped, not
  // retried, so the hint is given again every 0.5 s of the wait (a hint that reads nothing
  // still fails below).
  size_t in = 0;
  for (int i = 0; i < 400 && (in = ResidentPages(path, 4 << 20, 2 << 20)) < (2 << 20) / page; ++i) {
    if (i % 50 == 49) f->WillNeed(4 << 20, 2 << 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(in, (2u << 20) / page);
  EXPECT_LT(ResidentPages(path, 0, 2 << 20), (2u << 20) / page / 2) << "named bytes only";
  std::string buf(4096, '\0');
  ASSERT_TRUE(f->Read(5 << 20, buf.size(), buf.data()).ok());
  EXPECT_EQ(buf, std::string(4096, 'h'));
}

INSTANTIATE_TEST_SUITE_P(Backends, IoTest,
                         ::testing::Values(IoBackend::kPosix, IoBackend::kIoUring,
                                           IoBackend::kAuto),
                         [](const ::testing::TestParamInfo<IoBackend>& p) {
                           return std::string(Name(p.param));
                         });

// ---- Fallback: refuse io_uring_setup with a seccomp filter (as container runtimes do) in a
// child process, then check what each IoBackend does.

bool DenyIoUringSetup() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])),
                            filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// Runs fn in a forked child; returns its exit code (0 = all checks passed).
int RunInChild(int (*fn)(const std::string&), const std::string& dir) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) _exit(fn(dir));
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

int RoundTrip(Env* env, const std::string& path) {
  std::unique_ptr<WritableFile> w;
  if (!env->NewWritableFile(path, &w).ok()) return 10;
  if (!w->Append("fallback works").ok() || !w->Sync().ok() || !w->Close().ok()) return 11;
  std::unique_ptr<RandomAccessFile> r;
  if (!env->NewRandomAccessFile(path, &r).ok()) return 12;
  char buf[14];
  ReadRequest req{0, 14, buf, {}};
  if (!r->MultiRead(&req, 1).ok()) return 13;
  if (std::string(buf, 14) != "fallback works") return 14;
  return 0;
}

int ChildRefusedAtOpen(const std::string& dir) {
  if (!DenyIoUringSetup()) return 1;
  if (Env::IoUringAvailable()) return 2;
  std::unique_ptr<Env> env;
  if (!Env::Open(IoBackend::kAuto, &env).ok()) return 3;
  if (env->backend() != IoBackend::kPosix) return 4;
  std::unique_ptr<Env> forced;
  Status s = Env::Open(IoBackend::kIoUring, &forced);
  if (!s.IsIOError()) return 5;
  return RoundTrip(env.get(), dir + "/auto");
}

// The Env was created while io_uring worked; a thread created later cannot set up its ring.
int ChildRefusedInThread(const std::string& dir) {
  std::unique_ptr<Env> autoenv, forced;
  if (!Env::Open(IoBackend::kAuto, &autoenv).ok()) return 1;
  if (!Env::Open(IoBackend::kIoUring, &forced).ok()) return 2;
  if (!DenyIoUringSetup()) return 3;
  int rc = 0;
  std::thread t([&] {
    rc = RoundTrip(autoenv.get(), dir + "/thread");  // falls back to pread/pwrite
    if (rc != 0) return;
    std::unique_ptr<WritableFile> w;
    if (!forced->NewWritableFile(dir + "/forced", &w).ok()) {
      rc = 20;
      return;
    }
    Status s = w->Append(std::string(2 << 20, 'x'));  // larger than the buffer: hits the ring
    if (!s.IsIOError() || s.message().find("io_uring unavailable") == std::string::npos) rc = 21;
  });
  t.join();
  return rc;
}

TEST(IoFallbackTest, AutoFallsBackWhenSetupRefused) {
  TempDir dir;
  EXPECT_EQ(RunInChild(ChildRefusedAtOpen, dir.path()), 0);
}

TEST(IoFallbackTest, AutoFallsBackPerThread) {
  if (!Env::IoUringAvailable()) GTEST_SKIP() << "io_uring is not available here";
  TempDir dir;
  EXPECT_EQ(RunInChild(ChildRefusedInThread, dir.path()), 0);
}

}  // namespace
}  // namespace strata::io
