// The pread/pwrite back end, the buffered WritableFile both back ends share, the file-system
// operations of Env, and Env::Open (back end selection).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "io/env.h"
#include "util/buffer_pool.h"

namespace strata::io {

namespace {

// Retries of EAGAIN, and of writes that make no progress, before giving up.
constexpr int kMaxRetries = 1000;
// Linux transfers at most 0x7ffff000 bytes per read/write call.
constexpr size_t kMaxTransfer = size_t{1} << 30;

std::string ErrnoText(int err) { return std::string(std::strerror(err)); }

}  // namespace

std::string FileErrorMessage(std::string_view path, uint64_t offset, std::string_view what) {
  std::string m = "file ";
  m.append(path);
  m += " offset ";
  m += std::to_string(offset);
  m += ": ";
  m.append(what);
  return m;
}

Status IOErrorAt(std::string_view path, uint64_t offset, std::string_view what) {
  return Status::IOError(FileErrorMessage(path, offset, what));
}

Status CorruptionAt(std::string_view path, uint64_t offset, std::string_view what) {
  return Status::Corruption(FileErrorMessage(path, offset, what));
}

std::string AnotherStore(std::string_view what, uint64_t theirs, uint64_t ours) {
  return std::string(what) + " belongs to another store (store ID " + std::to_string(theirs) +
         ", this store's is " + std::to_string(ours) + ")";
}

namespace detail {

namespace {
// SetWriteLimitForTesting's bytes left; negative: no limit.
std::atomic<int64_t> write_room{-1};
std::atomic<bool> full_refuses_creation{true};

// Whether the simulated disk is full and refuses new files and renames (SetWriteLimitForTesting).
bool DiskFull() {
  return write_room.load(std::memory_order_relaxed) == 0 &&
         full_refuses_creation.load(std::memory_order_relaxed);
}
}  // namespace

Status OpenFd(const std::string& path, int flags, int* fd) {
  if ((flags & O_CREAT) != 0 && DiskFull()) {
    return IOErrorAt(path, 0, "open failed: " + ErrnoText(ENOSPC));
  }
  const bool journal = (flags & O_CREAT) != 0 && PowerLossJournalOn();
  const bool existed = journal && ::access(path.c_str(), F_OK) == 0;
  int r;
  do {
    r = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return IOErrorAt(path, 0, "open failed: " + ErrnoText(errno));
  if (journal) JournalCreate(path, existed);
  *fd = r;
  return Status::OK();
}

Status PosixReadFull(int fd, const std::string& path, uint64_t offset, size_t n, char* buf) {
  size_t done = 0;
  int retries = 0;
  while (done < n) {
    size_t want = std::min(n - done, kMaxTransfer);
    ssize_t r = ::pread(fd, buf + done, want, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && ++retries < kMaxRetries) continue;
      return IOErrorAt(path, offset + done, "read failed: " + ErrnoText(errno));
    }
    if (r == 0) {
      return IOErrorAt(path, offset + done,
                       "read past end of file (got " + std::to_string(done) + " of " +
                           std::to_string(n) + " bytes)");
    }
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status PosixWriteFull(int fd, const std::string& path, uint64_t offset, const char* data,
                      size_t n) {
  size_t done = 0;
  int retries = 0;
  while (done < n) {
    size_t want = std::min(n - done, kMaxTransfer);
    ssize_t r = ::pwrite(fd, data + done, want, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && ++retries < kMaxRetries) continue;
      return IOErrorAt(path, offset + done, "write failed: " + ErrnoText(errno));
    }
    if (r == 0) {
      if (++retries < kMaxRetries) continue;
      return IOErrorAt(path, offset + done, "write made no progress");
    }
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status PosixDataSync(int fd, const std::string& path) {
  int r;
  do {
    r = ::fdatasync(fd);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return IOErrorAt(path, 0, "fdatasync failed: " + ErrnoText(errno));
  return Status::OK();
}

// ---- BufferedWritableFile

BufferedWritableFile::BufferedWritableFile(std::string path, int fd, size_t buffer_size)
    : path_(std::move(path)), fd_(fd), buffer_size_(std::max<size_t>(buffer_size, 4096)) {
  // No reserve: segment writers append whole extents, which bypass the buffer, so it grows
  // only for files written in small pieces (logs, the manifest, a segment's tail).
}

BufferedWritableFile::~BufferedWritableFile() {
  // Subclasses flush in their own destructor if they want; here only the fd is released.
  if (fd_ >= 0) ::close(fd_);
  ReturnBuffer(&buf_);
}

namespace {
// SetSyncFailureForTesting's syncs left to succeed (negative: no failures), then the failures
// left. Set while no file syncs (a test's setting between its phases).
std::atomic<int64_t> syncs_left{-1};
std::atomic<int64_t> failures_left{0};
std::atomic<int> sync_error{EIO};
std::atomic<bool> sync_fault_directories_only{false};

// How many of n bytes a write may place before the disk is "full" (n when there is no limit).
size_t TakeWriteRoom(size_t n) {
  int64_t room = write_room.load(std::memory_order_relaxed);
  for (;;) {
    if (room < 0) return n;
    const int64_t take = std::min<int64_t>(room, static_cast<int64_t>(n));
    if (write_room.compare_exchange_weak(room, room - take, std::memory_order_relaxed)) {
      return static_cast<size_t>(take);
    }
  }
}

// Whether this sync (of a directory: `dir`) is to fail (SetSyncFailureForTesting).
bool SyncFails(bool dir) {
  if (!dir && sync_fault_directories_only.load(std::memory_order_relaxed)) return false;
  int64_t left = syncs_left.load(std::memory_order_relaxed);
  for (;;) {
    if (left < 0) return false;
    if (left == 0) break;
    if (syncs_left.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return false;
  }
  int64_t fails = failures_left.load(std::memory_order_relaxed);
  for (;;) {
    if (fails <= 0) return false;
    if (failures_left.compare_exchange_weak(fails, fails - 1, std::memory_order_relaxed)) {
      return true;
    }
  }
}
// SetSyncFailureForTesting's failure of a file's sync, when this one is to fail: the bytes
// after the last good sync (`synced`) are gone, as a crash after a real failure may find (the
// kernel may drop the pages it could not write), and *s says the sync failed.
bool FailSyncForTesting(int fd, const std::string& path, uint64_t synced, Status* s) {
  if (!SyncFails(/*dir=*/false)) return false;
  if (fd >= 0) (void)::ftruncate(fd, static_cast<off_t>(synced));
  *s = IOErrorAt(path, synced, "fdatasync failed: " + ErrnoText(sync_error.load()));
  return true;
}
}  // namespace

Status BufferedWritableFile::WriteThrough(const char* data, size_t n) {
  const size_t room = TakeWriteRoom(n);
  if (room < n) {
    Status s = room == 0 ? Status::OK() : WriteRaw(written_, data, room);
    if (s.ok()) {
      written_ += room;
      s = IOErrorAt(path_, written_, "write failed: " + ErrnoText(ENOSPC));
    }
    error_ = s;
    return s;
  }
  Status s = WriteRaw(written_, data, n);
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  written_ += n;
  return s;
}

Status BufferedWritableFile::Append(std::string_view data) {
  if (!error_.ok()) return error_;
  if (closed_) return IOErrorAt(path_, size_, "append to a closed file");
  size_ += data.size();
  if (data.size() >= buffer_size_ / 2) {
    // Large: write what is buffered, then the data itself, without copying it.
    if (!buf_.empty()) {
      Status s = WriteThrough(buf_.data(), buf_.size());
      buf_.clear();
      if (!s.ok()) return s;
    }
    return WriteThrough(data.data(), data.size());
  }
  if (buf_.size() + data.size() > buffer_size_) {
    Status s = WriteThrough(buf_.data(), buf_.size());
    buf_.clear();
    if (!s.ok()) return s;
  }
  if (buf_.size() + data.size() >= kPooledFrom) {
    // A file written in pieces this large (a segment's partial extents) takes a whole buffer,
    // kept from an earlier file if one is free, instead of growing a string by doubling.
    ReserveFromPool(&buf_, buffer_size_);
  }
  buf_.append(data);
  return Status::OK();
}

Status BufferedWritableFile::Flush() {
  if (!error_.ok()) return error_;
  if (closed_) return IOErrorAt(path_, size_, "flush of a closed file");
  if (buf_.empty()) return Status::OK();
  Status s = WriteThrough(buf_.data(), buf_.size());
  buf_.clear();
  return s;
}

Status BufferedWritableFile::Sync() {
  Status s = Flush();
  if (!s.ok()) return s;
  if (!FailSyncForTesting(fd_, path_, synced_, &s)) s = SyncRaw();
  if (!s.ok()) {
    error_ = s;  // after a failed fsync the page cache state is unknown: stay failed
    return s;
  }
  synced_ = written_;
  if (PowerLossJournalOn()) JournalSync(path_, synced_);
  return s;
}

void BufferedWritableFile::DropCache() {
  if (fd_ >= 0) (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
}

Status BufferedWritableFile::Close() {
  if (closed_) return error_.ok() ? Status::OK() : error_;
  Status s = Flush();
  closed_ = true;
  ReturnBuffer(&buf_);
  if (fd_ >= 0) {
    if (::close(fd_) < 0 && s.ok()) {
      s = IOErrorAt(path_, size_, "close failed: " + ErrnoText(errno));
    }
    fd_ = -1;
  }
  return s;
}

// ---- posix back end

namespace {

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixRandomAccessFile() override {
    ::close(fd_);
    if (const int r = random_fd_.load(); r >= 0) ::close(r);
  }

  Status Read(uint64_t offset, size_t n, char* buf) const override {
    return PosixReadFull(fd_, path_, offset, n, buf);
  }
  Status ReadRandom(uint64_t offset, size_t n, char* buf) const override {
    return PosixReadFull(RandomAccessFd(path_, fd_, &random_fd_), path_, offset, n, buf);
  }
  void WillNeed(uint64_t offset, uint64_t n) const override {
    (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(n), POSIX_FADV_WILLNEED);
  }
  Status MultiRead(ReadRequest* reqs, size_t n) const override {
    Status first;
    for (size_t i = 0; i < n; i++) {
      reqs[i].status = PosixReadFull(fd_, path_, reqs[i].offset, reqs[i].len, reqs[i].buf);
      if (first.ok() && !reqs[i].status.ok()) first = reqs[i].status;
    }
    return first;
  }
  uint64_t Size() const override { return size_; }
  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const int fd_;
  const uint64_t size_;
  mutable std::atomic<int> random_fd_{-1};  // ReadRandom's descriptor, opened on first use
};

class PosixWritableFile final : public BufferedWritableFile {
 public:
  using BufferedWritableFile::BufferedWritableFile;
  ~PosixWritableFile() override { Close(); }

 protected:
  Status WriteRaw(uint64_t offset, const char* data, size_t n) override {
    return PosixWriteFull(fd_, path_, offset, data, n);
  }
  Status SyncRaw() override { return PosixDataSync(fd_, path_); }
};

class PosixEnv final : public Env {
 public:
  explicit PosixEnv(const EnvOptions& o) : options_(o) {}
  IoBackend backend() const override { return IoBackend::kPosix; }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) override {
    int fd;
    Status s = OpenFd(path, O_WRONLY | O_CREAT | O_TRUNC, &fd);
    if (!s.ok()) return s;
    *out = std::make_unique<PosixWritableFile>(path, fd, options_.write_buffer);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& path,
                             std::unique_ptr<RandomAccessFile>* out) override {
    int fd;
    Status s = OpenFd(path, O_RDONLY, &fd);
    if (!s.ok()) return s;
    struct stat st;
    if (::fstat(fd, &st) < 0) {
      int e = errno;
      ::close(fd);
      return IOErrorAt(path, 0, "fstat failed: " + ErrnoText(e));
    }
    *out = std::make_unique<PosixRandomAccessFile>(path, fd, static_cast<uint64_t>(st.st_size));
    return Status::OK();
  }

 private:
  const EnvOptions options_;
};

}  // namespace

int RandomAccessFd(const std::string& path, int fallback, std::atomic<int>* slot) {
  int fd = slot->load(std::memory_order_acquire);
  if (fd >= 0) return fd;
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fallback;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);  // a hint: failure changes nothing
  int expected = -1;
  if (!slot->compare_exchange_strong(expected, fd, std::memory_order_acq_rel)) {
    ::close(fd);
    return expected;
  }
  return fd;
}

void SyncReadQueue::Queue(const RandomAccessFile& f, ReadRequest* req, void* tag) {
  req->status = req->len == 0 ? Status::OK()
                : random_access_ ? f.ReadRandom(req->offset, req->len, req->buf)
                                 : f.Read(req->offset, req->len, req->buf);
  done_.push_back(tag);
}

size_t SyncReadQueue::Reap(bool, FunctionRef<void(void* tag)> done) {
  // Reported in queue order; a callback may queue more reads (reported by the next Reap).
  return ReportDone(&done_, done);
}

std::unique_ptr<Env> NewPosixEnv(const EnvOptions& options) {
  return std::make_unique<PosixEnv>(options);
}

}  // namespace detail

void SetWriteLimitForTesting(int64_t bytes, bool refuse_creation) {
  detail::full_refuses_creation.store(refuse_creation, std::memory_order_relaxed);
  detail::write_room.store(bytes < 0 ? -1 : bytes, std::memory_order_relaxed);
}

void SetSyncFailureForTesting(int64_t syncs, int64_t failures, int error, bool directories_only) {
  detail::sync_error.store(error, std::memory_order_relaxed);
  detail::sync_fault_directories_only.store(directories_only, std::memory_order_relaxed);
  detail::failures_left.store(failures, std::memory_order_relaxed);
  detail::syncs_left.store(syncs < 0 ? -1 : syncs, std::memory_order_relaxed);
}

// ---- Files outside a WritableFile (io/env.h), and the Env operations that are these

Status OpenFile(const std::string& path, int flags, int* fd) {
  return detail::OpenFd(path, flags, fd);
}

Status WriteFileAt(int fd, const std::string& path, uint64_t offset, const char* data, size_t n) {
  const size_t room = detail::TakeWriteRoom(n);
  Status s = room == 0 ? Status::OK() : detail::PosixWriteFull(fd, path, offset, data, room);
  if (s.ok() && room < n) s = IOErrorAt(path, offset + room, "write failed: " + ErrnoText(ENOSPC));
  return s;
}

Status SyncFile(int fd, const std::string& path, uint64_t synced, uint64_t size) {
  Status s;
  if (detail::FailSyncForTesting(fd, path, synced, &s)) return s;
  s = detail::PosixDataSync(fd, path);
  if (s.ok() && detail::PowerLossJournalOn()) detail::JournalSync(path, size);
  return s;
}

Status SyncDirectory(const std::string& dir) {
  if (detail::SyncFails(/*dir=*/true)) {
    return IOErrorAt(dir, 0, "fsync of directory failed: " + ErrnoText(detail::sync_error.load()));
  }
  int fd;
  Status s = detail::OpenFd(dir, O_RDONLY | O_DIRECTORY, &fd);
  if (!s.ok()) return s;
  int r;
  do {
    r = ::fsync(fd);
  } while (r < 0 && errno == EINTR);
  int e = errno;
  ::close(fd);
  if (r < 0) return IOErrorAt(dir, 0, "fsync of directory failed: " + ErrnoText(e));
  if (detail::PowerLossJournalOn()) detail::JournalSyncDir(dir);
  return Status::OK();
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (detail::DiskFull()) {
    return IOErrorAt(from, 0, "rename to " + to + " failed: " + ErrnoText(ENOSPC));
  }
  const bool journal = detail::PowerLossJournalOn();
  const std::string kept = journal ? detail::JournalKeep(to) : std::string();
  if (::rename(from.c_str(), to.c_str()) < 0) {
    const int e = errno;
    if (journal) detail::JournalDropKept(kept);
    return IOErrorAt(from, 0, "rename to " + to + " failed: " + ErrnoText(e));
  }
  if (journal) detail::JournalRename(from, to, kept);
  return Status::OK();
}

Status RemoveFile(const std::string& path) {
  const bool journal = detail::PowerLossJournalOn();
  const std::string kept = journal ? detail::JournalKeep(path) : std::string();
  if (::unlink(path.c_str()) < 0) {
    const int e = errno;
    if (journal) detail::JournalDropKept(kept);
    return IOErrorAt(path, 0, "unlink failed: " + ErrnoText(e));
  }
  if (journal) detail::JournalRemove(path, kept);
  return Status::OK();
}

// ---- Env: file-system operations (the same system calls for both back ends)

std::unique_ptr<ReadQueue> Env::NewReadQueue(bool random_access) {
  return std::make_unique<detail::SyncReadQueue>(random_access);
}

Status Env::SyncDir(const std::string& dir) { return SyncDirectory(dir); }

Status Env::RemoveFile(const std::string& path) { return io::RemoveFile(path); }

Status Env::RenameFile(const std::string& from, const std::string& to) {
  return io::RenameFile(from, to);
}

Status Env::GetFileSize(const std::string& path, uint64_t* size) {
  struct stat st;
  if (::stat(path.c_str(), &st) < 0) return IOErrorAt(path, 0, "stat failed: " + ErrnoText(errno));
  *size = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

bool Env::FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Status Env::CreateDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) < 0 && errno != EEXIST) {
    return IOErrorAt(path, 0, "mkdir failed: " + ErrnoText(errno));
  }
  return Status::OK();
}

Status Env::GetChildren(const std::string& dir, std::vector<std::string>* names) {
  names->clear();
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return IOErrorAt(dir, 0, "opendir failed: " + ErrnoText(errno));
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names->emplace_back(e->d_name);
  }
  ::closedir(d);
  return Status::OK();
}

// ---- back end selection

Status Env::Open(const EnvOptions& options, std::unique_ptr<Env>* out) {
  switch (options.backend) {
    case IoBackend::kPosix:
      *out = detail::NewPosixEnv(options);
      return Status::OK();
    case IoBackend::kIoUring:
      return detail::NewUringEnv(options, /*allow_fallback=*/false, out);
    case IoBackend::kAuto:
      if (IoUringAvailable()) {
        Status s = detail::NewUringEnv(options, /*allow_fallback=*/true, out);
        if (s.ok()) return s;
      }
      *out = detail::NewPosixEnv(options);
      return Status::OK();
  }
  return Status::InvalidArgument("io_backend: unknown value");
}

Status Env::Open(IoBackend backend, std::unique_ptr<Env>* out) {
  EnvOptions o;
  o.backend = backend;
  return Open(o, out);
}

}  // namespace strata::io
