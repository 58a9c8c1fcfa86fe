// The I/O layer: files for large sequential appends and for random reads with many in flight.
//
// Two back ends implement it (docs/design.md, "I/O layer"):
//   - io_uring (io/env_uring.cc): one long-lived ring per (Env, thread), created lazily the first
//     time a thread does I/O through that Env and closed when the thread exits or the Env is
//     destroyed. Rings are never shared between Envs, so two stores in one process share nothing.
//     A MultiRead keeps up to the ring depth of reads in flight in one submission; writes and
//     fdatasync go through the ring; a lone Read uses pread unless ring_single_reads is set.
//   - posix (io/env_posix.cc): pread/pwrite/fdatasync.
// IoBackend::kAuto picks io_uring when a ring can be set up and supports the operations used
// (containers often refuse io_uring_setup), else posix. kIoUring fails Env::Open when it cannot.
//
// Both back ends retry EINTR and EAGAIN and continue short reads and writes. Every error is a
// Status::IOError whose message starts "file <path> offset <n>: ".
//
// Threading: an Env and the files it opened may be used from any number of threads at once,
// except that one WritableFile must be used by one thread at a time. An Env must outlive every
// file it opened.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/function_ref.h"
#include "strata/options.h"
#include "strata/status.h"

namespace strata::io {

// "file <path> offset <offset>: <what>" — the one spelling of an error about bytes of a file.
std::string FileErrorMessage(std::string_view path, uint64_t offset, std::string_view what);
Status IOErrorAt(std::string_view path, uint64_t offset, std::string_view what);
Status CorruptionAt(std::string_view path, uint64_t offset, std::string_view what);
// "<what> belongs to another store (store ID <theirs>, this store's is <ours>)": the one
// spelling of a store file (segment, log, VIEWS, SUBSCRIPTIONS) naming another store's ID.
std::string AnotherStore(std::string_view what, uint64_t theirs, uint64_t ours);

// Testing: a full disk. Once `bytes` more bytes have been written through the WritableFiles of
// every Env in the process, each write fails as the kernel's does when a file system fills: the
// bytes up to the limit are written (a short write), then IOError "... write failed: No space
// left on device". Once no byte is left, creating a file and renaming one fail the same way
// (as they may on a full file system: a directory that needs a block) unless
// `refuse_creation` is false (a file system with room left in its directories: files are
// created, empty, and their first write fails). Negative: no limit (the default). Reads,
// syncs and removals are not affected.
void SetWriteLimitForTesting(int64_t bytes, bool refuse_creation = true);
// Testing: a failing device. After `syncs` more successful syncs (a WritableFile's Sync, an
// Env's SyncDir) the next `failures` fail with `error` (EIO: "... fdatasync failed:
// Input/output error"; ENOSPC: the late "No space left on device" of a file system that
// allocates blocks at writeback), then syncs succeed again; a file whose sync failed loses
// what was written to it since its last good sync (it is cut back there: what a crash after
// the failure would leave, since the kernel may drop the dirty pages a failed fdatasync could
// not write, and report the next fdatasync as a success). `syncs` negative: no failures (the
// default). With `directories_only`, only directory syncs count and fail.
void SetSyncFailureForTesting(int64_t syncs, int64_t failures = INT64_MAX, int error = EIO,
                              bool directories_only = false);

// Testing: a power loss. While a journal is on, every Env of the process records in the file
// `journal` (on the store's file system: hard links are kept beside it, in `journal`.kept) what
// a power loss could still undo: the files it creates, the bytes of each that a sync made
// durable, renames and removals (keeping a link to the file they replace or remove), and syncs
// of directories. A process killed while recording leaves its journal behind, and
// SimulatePowerLossForTesting then undoes what was not durable when it died: every creation,
// rename and removal that no sync of its directory followed (newest first), then every
// created file's bytes past its last good sync. What the engine does outside Env and the
// functions below is not recorded and so counts as durable (LOCK; a file or directory removed
// that way stays removed). The simulation adds what it undid to *undone, and removes the
// journal and its links.
Status StartPowerLossJournalForTesting(const std::string& journal);
void StopPowerLossJournalForTesting();
struct PowerLossUndone {
  uint64_t entries = 0;    // creations, renames and removals undone
  uint64_t files_cut = 0;  // files cut back to their last good sync
  uint64_t bytes_cut = 0;
};
Status SimulatePowerLossForTesting(const std::string& journal, PowerLossUndone* undone);

// For a file the engine writes in place, outside a WritableFile (graphio's IDDICT: records
// appended with pwrite, a torn tail cut with ftruncate): the operations of every Env, with the
// same test hooks (the full disk's refused creations and renames, the failing syncs, the
// power-loss journal). Env's SyncDir, RenameFile and RemoveFile are these.
// open(2) with O_CLOEXEC; O_CREAT is a creation (refused on a full disk, journaled).
Status OpenFile(const std::string& path, int flags, int* fd);
// pwrite(2) of all n bytes at `offset` (EINTR and short writes continued); on a full disk the
// bytes that fit are written, then IOError "... write failed: No space left on device".
Status WriteFileAt(int fd, const std::string& path, uint64_t offset, const char* data, size_t n);
// fdatasync of a file whose first `size` bytes are written and whose first `synced` were made
// durable by the last good sync: on success `size` are (journaled); an injected failure cuts
// the file back to `synced`, as BufferedWritableFile's does.
Status SyncFile(int fd, const std::string& path, uint64_t synced, uint64_t size);
Status SyncDirectory(const std::string& dir);
Status RenameFile(const std::string& from, const std::string& to);
Status RemoveFile(const std::string& path);

// One read of a MultiRead. The caller owns `buf` (at least `len` bytes).
struct ReadRequest {
  uint64_t offset = 0;
  size_t len = 0;
  char* buf = nullptr;
  Status status;  // set by MultiRead: OK, or IOError naming the file and offset
};

// A file opened for reading at arbitrary offsets. All methods are thread-safe.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;

  // Reads exactly n bytes at `offset`. Reaching the end of the file first is an IOError
  // ("read past end of file"): callers that know the file size never see it unless the file
  // changed underneath them.
  virtual Status Read(uint64_t offset, size_t n, char* buf) const = 0;

  // Performs every request, with many in flight at once (io_uring) or one after the other
  // (posix). Sets each request's status and returns the first failure (in request order), or OK.
  virtual Status MultiRead(ReadRequest* reqs, size_t n) const = 0;

  // Read, for reads at scattered offsets: through a second descriptor of the file, opened on
  // first use with POSIX_FADV_RANDOM, so the kernel does not read ahead of them (readahead
  // serves the scans; on a disk with large readahead it multiplies what scattered reads
  // fetch). The second descriptor is opened by path: callers must not replace the file under
  // that path with another one while it is open (segment files never are: their numbers are
  // not reused); a file removed since (a compacted-away segment an old snapshot still reads)
  // cannot be opened, and then, as on any failure to open, the first descriptor is used.
  virtual Status ReadRandom(uint64_t offset, size_t n, char* buf) const {
    return Read(offset, n, buf);
  }

  // Asks the OS to start reading [offset, offset + n) into its page cache and returns without
  // waiting (posix_fadvise POSIX_FADV_WILLNEED). A hint: errors are ignored and a backend
  // without one does nothing. A streamed scan names the window after the one it reads, so the
  // device reads it while the scan decodes.
  virtual void WillNeed(uint64_t offset, uint64_t n) const {
    (void)offset;
    (void)n;
  }

  // Size of the file when it was opened.
  virtual uint64_t Size() const = 0;
  virtual const std::string& path() const = 0;
};

// A file opened for appending (created, or truncated if it exists). Small appends are buffered
// (EnvOptions::write_buffer bytes) and reach the file as large writes; an append of at least half
// the buffer is written directly, without a copy. One thread at a time.
class WritableFile {
 public:
  virtual ~WritableFile() = default;  // closes without syncing; errors ignored

  virtual Status Append(std::string_view data) = 0;
  // Hands buffered bytes to the kernel.
  virtual Status Flush() = 0;
  // Flush, then fdatasync: everything appended so far is durable (the directory entry of a new
  // file needs Env::SyncDir as well).
  virtual Status Sync() = 0;
  // Flush and close. Does not sync. Further calls fail.
  virtual Status Close() = 0;
  // Asks the kernel to drop the file's synced pages from the page cache (a hint: never fails).
  // Call after Sync: a finished segment is read back through the store's own caches, so its
  // written pages need not stay in memory.
  virtual void DropCache() {}

  // Bytes appended so far (buffered or not): the offset of the next Append.
  virtual uint64_t Size() const = 0;
  virtual const std::string& path() const = 0;
};

// Reads queued without waiting for them, completed by polling: a thread keeps reads of many
// files in flight while it does other work (the frontier reads' coroutines, db/tier_reader.cc).
//
//   std::unique_ptr<ReadQueue> q = env->NewReadQueue();
//   q->Queue(*file, &req, tag);                 // req.buf stays valid until req is reaped
//   q->Reap(/*wait=*/true, [](void* tag) { ... });   // req.status is set by then
//
// Contracts:
// - One thread: a queue is used by the thread that created it (io_uring: that thread's ring of
//   the Env, shared with the thread's MultiRead and ring reads, which hand back the queue's
//   completions they see instead of losing them).
// - Every queued read is reported exactly once by Reap, through its tag, with its
//   ReadRequest::status set: OK (all `len` bytes read: short reads are continued, EINTR and
//   EAGAIN resubmitted) or an IOError "file <path> offset <n>: ..." (also "read past end of
//   file"). A zero-length read completes at once.
// - random_access (NewReadQueue's argument): reads go through the file's no-readahead
//   descriptor (RandomAccessFile::ReadRandom); else through the one MultiRead uses.
// - io_uring: at most the ring depth of the queue's reads are in flight; more wait in the queue
//   and are submitted as earlier ones complete. posix (and a file of another Env, and a thread
//   whose ring could not be set up under IoBackend::kAuto): the read is performed by Queue
//   itself, and reported by the next Reap.
// - The destructor returns only when none of the queue's reads is in flight any more (the
//   kernel may write their buffers until then); what is still unreported is dropped.
class ReadQueue {
 public:
  virtual ~ReadQueue() = default;
  // Queues a read of req->len bytes at req->offset of f into req->buf.
  virtual void Queue(const RandomAccessFile& f, ReadRequest* req, void* tag) = 0;
  // Hands every queued read to the device (io_uring: one system call for all; posix: no-op).
  virtual void Submit() = 0;
  // Submits, then calls done(tag) for every read completed since the last Reap. With `wait`,
  // blocks until at least one read completes if none has and some are outstanding. Returns the
  // number of reads reported.
  virtual size_t Reap(bool wait, FunctionRef<void(void* tag)> done) = 0;
  // Reads queued and not yet reported by Reap.
  virtual size_t outstanding() const = 0;

 protected:
  // Reports the tags in *done (their reads completed) and empties it, keeping its capacity;
  // a callback may add tags (reads it queued that completed at once), reported next time.
  static size_t ReportDone(std::vector<void*>* done, FunctionRef<void(void* tag)> fn) {
    std::vector<void*> ready;
    ready.swap(*done);
    for (void* tag : ready) fn(tag);
    const size_t n = ready.size();
    if (done->empty()) {
      ready.clear();
      done->swap(ready);
    }
    return n;
  }
};

struct EnvOptions {
  IoBackend backend = IoBackend::kAuto;
  // Submission queue entries of each ring: the most reads one thread keeps in flight.
  unsigned ring_depth = 256;
  // Buffer of each WritableFile.
  size_t write_buffer = size_t{1} << 20;
  // io_uring back end: send a lone RandomAccessFile::Read through the ring too. Off by
  // default: one blocking read gains nothing from a ring (a page-cache hit is slower through
  // it), while MultiRead, which always uses the ring, gains from many reads in flight
  // (docs/benchmarks.md, "Measurements behind design choices").
  bool ring_single_reads = false;
};

// Files and the few file-system operations the engine needs.
class Env {
 public:
  // Creates an Env with the requested back end; kAuto resolves here (see backend()).
  static Status Open(const EnvOptions& options, std::unique_ptr<Env>* out);
  static Status Open(IoBackend backend, std::unique_ptr<Env>* out);

  // Whether io_uring can be used by this process right now: a ring of `depth` entries can be set
  // up and supports read, write and fsync. `why` (optional) says why not.
  static bool IoUringAvailable(std::string* why = nullptr);

  virtual ~Env() = default;
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The back end in use: kIoUring or kPosix, never kAuto.
  virtual IoBackend backend() const = 0;
  const char* BackendName() const {
    return backend() == IoBackend::kIoUring ? "io_uring" : "posix";
  }

  virtual Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) = 0;
  virtual Status NewRandomAccessFile(const std::string& path,
                                     std::unique_ptr<RandomAccessFile>* out) = 0;
  // A queue of reads for the calling thread (see ReadQueue). The base version performs each
  // read at Queue (RandomAccessFile::Read); the io_uring back end queues on the thread's ring.
  virtual std::unique_ptr<ReadQueue> NewReadQueue(bool random_access = true);

  // fsync of a directory: makes creations, renames and removals inside it durable.
  virtual Status SyncDir(const std::string& dir);
  virtual Status RemoveFile(const std::string& path);
  // Atomically replaces `to` with `from` (rename(2)).
  virtual Status RenameFile(const std::string& from, const std::string& to);
  virtual Status GetFileSize(const std::string& path, uint64_t* size);
  virtual bool FileExists(const std::string& path);
  // Creates the directory; OK if it already exists.
  virtual Status CreateDir(const std::string& path);
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* names);
};

}  // namespace strata::io

// ---- Shared by the two back ends (io/env_posix.cc, io/env_uring.cc); not for other callers.
namespace strata::io::detail {

// Buffering, offsets and error stickiness of a WritableFile; a back end supplies the raw calls.
class BufferedWritableFile : public WritableFile {
 public:
  BufferedWritableFile(std::string path, int fd, size_t buffer_size);
  ~BufferedWritableFile() override;

  Status Append(std::string_view data) override;
  Status Flush() override;
  Status Sync() override;
  Status Close() override;
  void DropCache() override;
  uint64_t Size() const override { return size_; }
  const std::string& path() const override { return path_; }

 protected:
  // Writes all n bytes at `offset` or fails with an IOError naming path and offset.
  virtual Status WriteRaw(uint64_t offset, const char* data, size_t n) = 0;
  // fdatasync of fd_.
  virtual Status SyncRaw() = 0;

  const std::string path_;
  int fd_;

 private:
  Status WriteThrough(const char* data, size_t n);

  // Appends that grow the buffer to this size take a pooled buffer of buffer_size_.
  static constexpr size_t kPooledFrom = size_t{64} << 10;

  std::string buf_;        // bytes appended but not yet written; at most buffer_size_
  size_t buffer_size_;
  uint64_t written_ = 0;   // bytes handed to the kernel: the file offset of buf_[0]
  uint64_t synced_ = 0;    // bytes durable as of the last successful Sync
  uint64_t size_ = 0;      // written_ + buf_.size()
  Status error_;           // first write error; every later call returns it
  bool closed_ = false;
};

// pread/pwrite loops with EINTR/EAGAIN retries and short-transfer continuation.
Status PosixReadFull(int fd, const std::string& path, uint64_t offset, size_t n, char* buf);
Status PosixWriteFull(int fd, const std::string& path, uint64_t offset, const char* data, size_t n);
Status PosixDataSync(int fd, const std::string& path);
// open(2) with O_CLOEXEC; returns the fd or an IOError.
Status OpenFd(const std::string& path, int flags, int* fd);

// The synchronous ReadQueue: Queue performs the read at once (f.Read), Reap reports it.
class SyncReadQueue final : public ReadQueue {
 public:
  explicit SyncReadQueue(bool random_access) : random_access_(random_access) {}
  void Queue(const RandomAccessFile& f, ReadRequest* req, void* tag) override;
  void Submit() override {}
  size_t Reap(bool wait, FunctionRef<void(void* tag)> done) override;
  size_t outstanding() const override { return done_.size(); }

 private:
  const bool random_access_;
  std::vector<void*> done_;  // tags of completed reads not yet reported
};

// The no-readahead descriptor of `path` (ReadRandom): *slot if set, else opened now with
// POSIX_FADV_RANDOM and published in *slot (one wins a race; the loser closes its own).
// `fallback` when it cannot be opened. The owner closes *slot when it is not -1.
int RandomAccessFd(const std::string& path, int fallback, std::atomic<int>* slot);

// The power-loss journal's records (io/power_loss.cc); each a no-op while no journal is on.
bool PowerLossJournalOn();
void JournalCreate(const std::string& path, bool existed);
void JournalSync(const std::string& path, uint64_t durable);
void JournalSyncDir(const std::string& dir);
// Before a rename over `path` or its removal: a hard link to keep the file for the undo.
std::string JournalKeep(const std::string& path);
void JournalRename(const std::string& from, const std::string& to, const std::string& kept);
void JournalRemove(const std::string& path, const std::string& kept);
// After a failed rename or removal: the link JournalKeep made.
void JournalDropKept(const std::string& kept);

std::unique_ptr<Env> NewPosixEnv(const EnvOptions& options);
// allow_fallback: a thread whose ring cannot be set up uses pread/pwrite instead of failing.
Status NewUringEnv(const EnvOptions& options, bool allow_fallback, std::unique_ptr<Env>* out);

}  // namespace strata::io::detail
