// The io_uring back end (liburing).
//
// Rings: each UringEnv owns a RingSet; a thread's first I/O through that Env creates the
// thread's ring and registers it in the set. The thread finds it again through a thread_local
// list keyed by the Env's unique id (never by address, which a later Env could reuse). A ring
// is closed by whichever comes first: the thread exits (thread_local destructor) or the Env is
// destroyed (the RingSet goes away). Only its own thread ever submits to a ring, so rings need
// no locks; the mutex guards only the set's membership.
//
// Every operation — a single read, a MultiRead, a write, an fsync — runs to completion before
// the call returns: the ring keeps up to `ring_depth` operations in flight, reaps completions
// in batches, resubmits the remainder of short transfers and the operations that failed with
// EINTR or EAGAIN, and reports other failures per operation. The exception is a ReadQueue
// (UringReadQueue): its reads stay in flight across calls, on the same ring. Their user data
// has the low bit set (an Op* | 1; Run's ops carry index << 1), so a Run that reaps one of
// them hands it to the ring's `async_done` list, where the queue's next Reap finds it. At most
// `ring_depth` reads of queues and `ring_depth` ops of a Run are in flight at once, within the
// completion queue's 2 x depth entries.
#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "io/env.h"

namespace strata::io {

namespace {

constexpr int kMaxRetries = 1000;
// io_uring read/write lengths are 32-bit; longer transfers are split into pieces of this size.
constexpr size_t kMaxTransfer = size_t{1} << 30;

enum class OpKind : uint8_t { kRead, kWrite, kSync };

struct Op {
  OpKind kind;
  int fd;
  char* buf;
  size_t len;
  uint64_t offset;
  size_t done = 0;
  int err = 0;        // errno of a failure
  bool eof = false;   // a read reached end of file before len bytes
  int retries = 0;
};

class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (initialized_) io_uring_queue_exit(&ring_);
  }

  // Returns 0 or -errno. Only the creating thread ever submits, so the ring can defer
  // completion work to its submit-and-wait calls (less overhead); kernels before 6.1 reject
  // those flags and get a plain ring.
  int Init(unsigned depth) {
    int r = io_uring_queue_init(depth, &ring_,
                                IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    if (r == -EINVAL) r = io_uring_queue_init(depth, &ring_, 0);
    if (r < 0) return r;
    initialized_ = true;
    depth_ = depth;
    return 0;
  }

  // Runs every op to completion (success or a recorded error). Returns false if the ring
  // itself failed (io_uring_enter returned an unexpected error): then unfinished ops carry
  // err and the ring must not be used again.
  bool Run(Op* ops, size_t n) {
    size_t next = 0;              // first op never submitted
    std::vector<size_t> retry;    // ops to (re)submit for their remainder
    unsigned inflight = 0;
    while (true) {
      while (inflight < depth_ && (!retry.empty() || next < n)) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        if (sqe == nullptr) break;
        size_t i;
        if (!retry.empty()) {
          i = retry.back();
          retry.pop_back();
        } else {
          i = next++;
        }
        Prep(sqe, ops[i], i << 1);
        inflight++;
      }
      if (inflight == 0) return true;
      int r = io_uring_submit_and_wait(&ring_, 1);
      if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
        // Unexpected: the kernel may still own buffers of in-flight ops. Wait for what it
        // reports, then fail everything not finished.
        broken_ = true;
        for (size_t i = 0; i < n; i++) {
          if (ops[i].err == 0 && !ops[i].eof && ops[i].done < ops[i].len) ops[i].err = -r;
          if (ops[i].kind == OpKind::kSync && ops[i].err == 0) ops[i].err = -r;
        }
        return false;
      }
      io_uring_cqe* cqe;
      unsigned head, seen = 0;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        seen++;
        if (cqe->user_data & kAsyncTag) {  // a ReadQueue's read: kept for its next Reap
          async_done.push_back({cqe->user_data, cqe->res});
          continue;
        }
        inflight--;
        const uint64_t index = cqe->user_data >> 1;
        Op& op = ops[index];
        int res = cqe->res;
        if (res == -EINTR || res == -EAGAIN) {
          if (++op.retries < kMaxRetries) {
            retry.push_back(index);
          } else {
            op.err = -res;
          }
        } else if (res < 0) {
          op.err = -res;
        } else if (op.kind == OpKind::kSync) {
          op.done = op.len;
        } else if (res == 0) {
          if (op.kind == OpKind::kRead) {
            op.eof = true;
          } else if (++op.retries < kMaxRetries) {
            retry.push_back(index);
          } else {
            op.err = EIO;
          }
        } else {
          op.done += static_cast<size_t>(res);
          if (op.done < op.len) retry.push_back(index);
        }
      }
      io_uring_cq_advance(&ring_, seen);
    }
  }

  bool broken() const { return broken_; }
  void set_broken() { broken_ = true; }
  io_uring* raw() { return &ring_; }
  unsigned depth() const { return depth_; }

  // User data bit of a ReadQueue's reads.
  static constexpr uint64_t kAsyncTag = 1;
  struct AsyncCqe {
    uint64_t user_data;
    int res;
  };
  // Completions of ReadQueue reads reaped by Run, not yet taken by their queue.
  std::vector<AsyncCqe> async_done;

 private:
  static void Prep(io_uring_sqe* sqe, const Op& op, uint64_t user_data) {
    switch (op.kind) {
      case OpKind::kRead: {
        unsigned len = static_cast<unsigned>(std::min(op.len - op.done, kMaxTransfer));
        io_uring_prep_read(sqe, op.fd, op.buf + op.done, len, op.offset + op.done);
        break;
      }
      case OpKind::kWrite: {
        unsigned len = static_cast<unsigned>(std::min(op.len - op.done, kMaxTransfer));
        io_uring_prep_write(sqe, op.fd, op.buf + op.done, len, op.offset + op.done);
        break;
      }
      case OpKind::kSync:
        io_uring_prep_fsync(sqe, op.fd, IORING_FSYNC_DATASYNC);
        break;
    }
    io_uring_sqe_set_data64(sqe, user_data);
  }

  io_uring ring_{};
  unsigned depth_ = 0;
  bool initialized_ = false;
  bool broken_ = false;
};

// All rings of one Env. Shared (shared_ptr) between the Env and the thread_local lists, so
// whichever of "Env destroyed" and "thread exited" happens last frees the ring.
struct RingSet {
  std::mutex mu;
  std::vector<std::unique_ptr<Ring>> rings;

  void Remove(Ring* r) {
    std::lock_guard<std::mutex> l(mu);
    for (size_t i = 0; i < rings.size(); i++) {
      if (rings[i].get() == r) {
        rings[i] = std::move(rings.back());
        rings.pop_back();
        return;
      }
    }
  }
};

struct TlsEntry {
  uint64_t env_id;
  std::weak_ptr<RingSet> set;
  Ring* ring;      // nullptr: ring setup failed in this thread
  int init_error;  // -errno of the failed setup
};

struct TlsRings {
  std::vector<TlsEntry> entries;
  ~TlsRings() {
    for (TlsEntry& e : entries) {
      if (e.ring == nullptr) continue;
      if (std::shared_ptr<RingSet> s = e.set.lock()) s->Remove(e.ring);
    }
  }
};

thread_local TlsRings tls_rings;
std::atomic<uint64_t> next_env_id{1};

std::string ErrnoText(int err) { return std::string(std::strerror(err)); }

const char* OpVerb(OpKind k) {
  switch (k) {
    case OpKind::kRead: return "read";
    case OpKind::kWrite: return "write";
    case OpKind::kSync: return "fdatasync";
  }
  return "io";
}

Status OpStatus(const Op& op, const std::string& path) {
  if (op.err != 0) {
    return IOErrorAt(path, op.offset + op.done,
                     std::string(OpVerb(op.kind)) + " failed (io_uring): " + ErrnoText(op.err));
  }
  if (op.eof) {
    return IOErrorAt(path, op.offset + op.done,
                     "read past end of file (got " + std::to_string(op.done) + " of " +
                         std::to_string(op.len) + " bytes)");
  }
  return Status::OK();
}

class UringEnv final : public Env {
 public:
  UringEnv(const EnvOptions& o, bool allow_fallback)
      : options_(o),
        allow_fallback_(allow_fallback),
        id_(next_env_id.fetch_add(1)),
        set_(std::make_shared<RingSet>()) {}

  IoBackend backend() const override { return IoBackend::kIoUring; }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) override;
  Status NewRandomAccessFile(const std::string& path,
                             std::unique_ptr<RandomAccessFile>* out) override;
  std::unique_ptr<ReadQueue> NewReadQueue(bool random_access) override;

  // This thread's ring for this Env, created on first use. nullptr when it cannot be set up:
  // then *fallback tells whether the caller should use pread/pwrite (kAuto) or fail (kIoUring).
  Ring* ThreadRing(const std::string& path, bool* fallback, Status* error) {
    std::vector<TlsEntry>& v = tls_rings.entries;
    for (size_t i = 0; i < v.size(); i++) {
      if (v[i].env_id == id_) {
        if (v[i].ring != nullptr && !v[i].ring->broken()) return v[i].ring;
        return Unavailable(path, v[i].ring == nullptr ? v[i].init_error : -EIO, fallback, error);
      }
    }
    // Drop entries of Envs that are gone (their rings were freed with the RingSet).
    v.erase(std::remove_if(v.begin(), v.end(), [](const TlsEntry& e) { return e.set.expired(); }),
            v.end());
    auto ring = std::make_unique<Ring>();
    int r = ring->Init(options_.ring_depth);
    if (r < 0) {
      v.push_back(TlsEntry{id_, set_, nullptr, r});
      return Unavailable(path, r, fallback, error);
    }
    Ring* raw = ring.get();
    {
      std::lock_guard<std::mutex> l(set_->mu);
      set_->rings.push_back(std::move(ring));
    }
    v.push_back(TlsEntry{id_, set_, raw, 0});
    return raw;
  }

 private:
  Ring* Unavailable(const std::string& path, int err, bool* fallback, Status* error) {
    *fallback = allow_fallback_;
    if (!allow_fallback_) {
      *error = IOErrorAt(path, 0, "io_uring unavailable in this thread: " + ErrnoText(-err));
    }
    return nullptr;
  }

  const EnvOptions options_;
  const bool allow_fallback_;
  const uint64_t id_;
  std::shared_ptr<RingSet> set_;
};

class UringRandomAccessFile final : public RandomAccessFile {
 public:
  UringRandomAccessFile(UringEnv* env, std::string path, int fd, uint64_t size,
                        bool ring_single_reads)
      : env_(env), path_(std::move(path)), fd_(fd), size_(size),
        ring_single_reads_(ring_single_reads) {}
  ~UringRandomAccessFile() override {
    ::close(fd_);
    if (const int r = random_fd_.load(); r >= 0) ::close(r);
  }

  Status ReadRandom(uint64_t offset, size_t n, char* buf) const override {
    return detail::PosixReadFull(random_fd(), path_, offset, n, buf);
  }
  int random_fd() const { return detail::RandomAccessFd(path_, fd_, &random_fd_); }
  void WillNeed(uint64_t offset, uint64_t n) const override {
    (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(n), POSIX_FADV_WILLNEED);
  }

  Status Read(uint64_t offset, size_t n, char* buf) const override {
    if (n == 0) return Status::OK();
    if (!ring_single_reads_) return detail::PosixReadFull(fd_, path_, offset, n, buf);
    bool fallback = false;
    Status err;
    Ring* ring = env_->ThreadRing(path_, &fallback, &err);
    if (ring == nullptr) {
      return fallback ? detail::PosixReadFull(fd_, path_, offset, n, buf) : err;
    }
    Op op{OpKind::kRead, fd_, buf, n, offset};
    ring->Run(&op, 1);
    return OpStatus(op, path_);
  }

  Status MultiRead(ReadRequest* reqs, size_t n) const override {
    bool fallback = false;
    Status err;
    Ring* ring = n == 0 ? nullptr : env_->ThreadRing(path_, &fallback, &err);
    if (ring == nullptr) {
      Status first;
      for (size_t i = 0; i < n; i++) {
        reqs[i].status = fallback
                             ? detail::PosixReadFull(fd_, path_, reqs[i].offset, reqs[i].len,
                                                     reqs[i].buf)
                             : err;
        if (first.ok() && !reqs[i].status.ok()) first = reqs[i].status;
      }
      return first;
    }
    // Zero-length requests complete at once; only the others go to the ring.
    std::vector<Op> ops;
    std::vector<size_t> index;
    ops.reserve(n);
    index.reserve(n);
    for (size_t i = 0; i < n; i++) {
      if (reqs[i].len == 0) continue;
      ops.push_back(Op{OpKind::kRead, fd_, reqs[i].buf, reqs[i].len, reqs[i].offset});
      index.push_back(i);
    }
    ring->Run(ops.data(), ops.size());
    for (size_t i = 0; i < n; i++) reqs[i].status = Status::OK();
    for (size_t j = 0; j < ops.size(); j++) reqs[index[j]].status = OpStatus(ops[j], path_);
    Status first;
    for (size_t i = 0; i < n && first.ok(); i++) first = reqs[i].status;
    return first;
  }

  uint64_t Size() const override { return size_; }
  const std::string& path() const override { return path_; }
  int fd() const { return fd_; }
  const UringEnv* env() const { return env_; }

 private:
  UringEnv* const env_;
  const std::string path_;
  const int fd_;
  const uint64_t size_;
  const bool ring_single_reads_;
  mutable std::atomic<int> random_fd_{-1};  // ReadRandom's descriptor, opened on first use
};

class UringWritableFile final : public detail::BufferedWritableFile {
 public:
  UringWritableFile(UringEnv* env, std::string path, int fd, size_t buffer)
      : BufferedWritableFile(std::move(path), fd, buffer), env_(env) {}
  ~UringWritableFile() override { Close(); }

 protected:
  Status WriteRaw(uint64_t offset, const char* data, size_t n) override {
    if (n == 0) return Status::OK();
    bool fallback = false;
    Status err;
    Ring* ring = env_->ThreadRing(path_, &fallback, &err);
    if (ring == nullptr) {
      return fallback ? detail::PosixWriteFull(fd_, path_, offset, data, n) : err;
    }
    Op op{OpKind::kWrite, fd_, const_cast<char*>(data), n, offset};
    ring->Run(&op, 1);
    return OpStatus(op, path_);
  }

  Status SyncRaw() override {
    bool fallback = false;
    Status err;
    Ring* ring = env_->ThreadRing(path_, &fallback, &err);
    if (ring == nullptr) return fallback ? detail::PosixDataSync(fd_, path_) : err;
    Op op{OpKind::kSync, fd_, nullptr, 0, 0};
    ring->Run(&op, 1);
    return OpStatus(op, path_);
  }

 private:
  UringEnv* const env_;
};

// A ReadQueue on the calling thread's ring (see io/env.h and the top of this file).
class UringReadQueue final : public ReadQueue {
 public:
  UringReadQueue(UringEnv* env, bool random_access) : env_(env), random_access_(random_access) {}
  ~UringReadQueue() override {
    // The kernel may still write the buffers of reads in flight: wait for them.
    while (inflight_ != 0 && !ring_->broken()) Reap(/*wait=*/true, [](void*) {});
  }

  void Queue(const RandomAccessFile& f, ReadRequest* req, void* tag) override {
    req->status = Status::OK();
    const auto* uf = dynamic_cast<const UringRandomAccessFile*>(&f);
    Ring* ring = req->len == 0 || uf == nullptr || uf->env() != env_ ? nullptr : GetRing(f.path());
    if (ring == nullptr) {
      // Synchronous: nothing to read, a file of another Env, or no ring in this thread
      // (kAuto falls back to pread; kIoUring fails with the setup error).
      if (req->len != 0) {
        req->status = !ring_error_.ok() && uf != nullptr && uf->env() == env_ ? ring_error_
                      : random_access_ ? f.ReadRandom(req->offset, req->len, req->buf)
                                       : f.Read(req->offset, req->len, req->buf);
      }
      done_.push_back(tag);
      return;
    }
    Op* op;
    if (!free_.empty()) {
      op = free_.back();
      free_.pop_back();
    } else {
      op = &pool_.emplace_back();
    }
    *op = Op{req, tag, uf, random_access_ ? uf->random_fd() : uf->fd(), this, 0, 0, false};
    waiting_.push_back(op);
    // The queue is as deep as the ring: submit what fits, the rest waits for completions.
    if (waiting_.size() >= ring_->depth()) Submit();
  }

  void Submit() override {
    if (ring_ == nullptr || waiting_.empty()) return;
    if (Prepare() != 0) Enter(/*wait=*/false);
  }

  size_t Reap(bool wait, FunctionRef<void(void* tag)> done) override {
    if (ring_ != nullptr && !ring_->broken()) {
      Prepare();
      // One system call that submits, runs the completion work (a ring set up with
      // IORING_SETUP_DEFER_TASKRUN posts completions only when asked) and, when the caller
      // waits and nothing is done yet, waits for one completion.
      if (inflight_ != 0) Enter(/*wait=*/wait && done_.empty());
      Drain();
      while (wait && done_.empty() && !ring_->broken()) {
        Prepare();  // resubmissions (short reads, EINTR, EAGAIN) found by Drain
        if (inflight_ == 0) break;
        Enter(/*wait=*/true);
        Drain();
      }
      if (!ring_->broken() && Prepare() != 0) Enter(/*wait=*/false);  // the last resubmissions
    }
    return ReportDone(&done_, done);
  }

  size_t outstanding() const override { return waiting_.size() + inflight_ + done_.size(); }

 private:
  struct Op {
    ReadRequest* req;
    void* tag;
    const UringRandomAccessFile* file;
    int fd;  // the file's descriptor the read goes through
    const UringReadQueue* owner;
    size_t done;  // bytes read so far
    int retries;
    bool inflight;  // in a submission entry, not yet completed
  };

  Ring* GetRing(const std::string& path) {
    if (ring_ != nullptr) return ring_->broken() ? nullptr : ring_;
    if (!ring_error_.ok() || fallback_) return nullptr;
    bool fallback = false;
    Status err;
    ring_ = env_->ThreadRing(path, &fallback, &err);
    if (ring_ == nullptr) {
      fallback_ = fallback;
      ring_error_ = fallback ? Status::OK() : err;
    }
    return ring_;
  }

  // Moves waiting reads into submission entries while fewer than the ring's depth are in
  // flight; a full submission queue is submitted first. Returns the entries prepared.
  size_t Prepare() {
    size_t prepared = 0;
    while (head_ < waiting_.size() && inflight_ < ring_->depth() && !ring_->broken()) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring_->raw());
      if (sqe == nullptr) {
        Enter(/*wait=*/false);
        sqe = io_uring_get_sqe(ring_->raw());
        if (sqe == nullptr) break;  // the kernel took none (EBUSY): later
      }
      Op* op = waiting_[head_++];
      const size_t len = std::min(op->req->len - op->done, kMaxTransfer);
      io_uring_prep_read(sqe, op->fd, op->req->buf + op->done, static_cast<unsigned>(len),
                         op->req->offset + op->done);
      io_uring_sqe_set_data64(sqe, reinterpret_cast<uint64_t>(op) | Ring::kAsyncTag);
      op->inflight = true;
      ++inflight_;
      ++prepared;
    }
    if (head_ == waiting_.size()) {
      waiting_.clear();
      head_ = 0;
    }
    return prepared;
  }

  // One io_uring_enter: submits what is prepared and, with wait, waits for one completion;
  // without, runs pending completion work. An unexpected error breaks the ring: every read of
  // this queue then completes with it.
  void Enter(bool wait) {
    int r = wait ? io_uring_submit_and_wait(ring_->raw(), 1)
                 : io_uring_submit_and_get_events(ring_->raw());
    if (r >= 0 || r == -EINTR || r == -EAGAIN || r == -EBUSY || r == -ETIME) return;
    ring_->set_broken();
    Drain();  // what did complete keeps its own status
    for (size_t i = head_; i < waiting_.size(); ++i) Fail(waiting_[i], -r);
    waiting_.clear();
    head_ = 0;
    // In flight: the kernel may still own their buffers; nothing better can be done than
    // reporting them failed (Ring::Run does the same).
    for (Op& op : pool_) {
      if (op.inflight) {
        op.inflight = false;
        Fail(&op, -r);
      }
    }
    inflight_ = 0;
  }

  // Takes this queue's completions: those a Run set aside, then the completion queue's.
  void Drain() {
    std::vector<Ring::AsyncCqe>& aside = ring_->async_done;
    for (size_t i = 0; i < aside.size();) {
      Op* op = reinterpret_cast<Op*>(aside[i].user_data & ~Ring::kAsyncTag);
      if (op->owner == this) {
        Complete(op, aside[i].res);
        aside[i] = aside.back();
        aside.pop_back();
      } else {
        ++i;
      }
    }
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(ring_->raw(), head, cqe) {
      seen++;
      // Every entry outside a Run belongs to a queue: Run reaps its own before returning.
      assert(cqe->user_data & Ring::kAsyncTag);
      Op* op = reinterpret_cast<Op*>(cqe->user_data & ~Ring::kAsyncTag);
      if (op->owner == this) {
        Complete(op, cqe->res);
      } else {  // another queue of this thread (alive: a queue waits for its reads)
        aside.push_back({cqe->user_data, cqe->res});
      }
    }
    io_uring_cq_advance(ring_->raw(), seen);
  }

  // One completion of op's read: res bytes or -errno.
  void Complete(Op* op, int res) {
    --inflight_;
    op->inflight = false;
    if (res == -EINTR || res == -EAGAIN) {
      if (++op->retries < kMaxRetries) {
        waiting_.push_back(op);
      } else {
        Fail(op, -res);
      }
    } else if (res < 0) {
      Fail(op, -res);
    } else if (res == 0) {
      op->req->status =
          IOErrorAt(op->file->path(), op->req->offset + op->done,
                    "read past end of file (got " + std::to_string(op->done) + " of " +
                        std::to_string(op->req->len) + " bytes)");
      Finish(op);
    } else {
      op->done += static_cast<size_t>(res);
      if (op->done < op->req->len) {
        waiting_.push_back(op);  // a short read: the remainder
      } else {
        Finish(op);
      }
    }
  }
  void Fail(Op* op, int err) {
    op->req->status = IOErrorAt(op->file->path(), op->req->offset + op->done,
                                "read failed (io_uring): " + ErrnoText(err));
    Finish(op);
  }
  void Finish(Op* op) {
    done_.push_back(op->tag);
    free_.push_back(op);
  }

  UringEnv* const env_;
  const bool random_access_;
  Ring* ring_ = nullptr;
  Status ring_error_;      // the ring could not be set up and kIoUring forbids pread
  bool fallback_ = false;  // the ring could not be set up: pread
  std::deque<Op> pool_;    // every Op ever used (stable addresses: in-flight user data)
  std::vector<Op*> free_;
  std::vector<Op*> waiting_;  // queued or to resubmit, from waiting_[head_]
  size_t head_ = 0;
  size_t inflight_ = 0;    // prepared or submitted, not yet completed
  std::vector<void*> done_;  // tags of completed reads not yet reported
};

std::unique_ptr<ReadQueue> UringEnv::NewReadQueue(bool random_access) {
  return std::make_unique<UringReadQueue>(this, random_access);
}

Status UringEnv::NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* out) {
  int fd;
  Status s = detail::OpenFd(path, O_WRONLY | O_CREAT | O_TRUNC, &fd);
  if (!s.ok()) return s;
  *out = std::make_unique<UringWritableFile>(this, path, fd, options_.write_buffer);
  return Status::OK();
}

Status UringEnv::NewRandomAccessFile(const std::string& path,
                                     std::unique_ptr<RandomAccessFile>* out) {
  int fd;
  Status s = detail::OpenFd(path, O_RDONLY, &fd);
  if (!s.ok()) return s;
  struct stat st;
  if (::fstat(fd, &st) < 0) {
    int e = errno;
    ::close(fd);
    return IOErrorAt(path, 0, "fstat failed: " + ErrnoText(e));
  }
  *out = std::make_unique<UringRandomAccessFile>(this, path, fd, static_cast<uint64_t>(st.st_size),
                                                 options_.ring_single_reads);
  return Status::OK();
}

}  // namespace

bool Env::IoUringAvailable(std::string* why) {
  io_uring ring;
  int r = io_uring_queue_init(8, &ring, 0);
  if (r < 0) {
    if (why) *why = "io_uring_queue_init: " + ErrnoText(-r);
    return false;
  }
  bool ok = true;
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  if (probe == nullptr) {
    ok = false;
    if (why) *why = "io_uring probe unsupported";
  } else {
    for (int opcode : {IORING_OP_READ, IORING_OP_WRITE, IORING_OP_FSYNC, IORING_OP_NOP}) {
      if (!io_uring_opcode_supported(probe, opcode)) {
        ok = false;
        if (why) *why = "io_uring opcode " + std::to_string(opcode) + " unsupported";
      }
    }
    io_uring_free_probe(probe);
  }
  if (ok) {
    // A round trip: some sandboxes accept io_uring_setup but never complete anything.
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_nop(sqe);
    io_uring_cqe* cqe = nullptr;
    r = io_uring_submit_and_wait(&ring, 1);
    if (r < 0 || io_uring_peek_cqe(&ring, &cqe) != 0 || cqe->res != 0) {
      ok = false;
      if (why) *why = "io_uring NOP round trip failed";
    } else {
      io_uring_cqe_seen(&ring, cqe);
    }
  }
  io_uring_queue_exit(&ring);
  return ok;
}

namespace detail {

Status NewUringEnv(const EnvOptions& options, bool allow_fallback, std::unique_ptr<Env>* out) {
  if (!allow_fallback) {
    std::string why;
    if (!Env::IoUringAvailable(&why)) return Status::IOError("io_uring unavailable: " + why);
  }
  EnvOptions o = options;
  if (o.ring_depth < 8) o.ring_depth = 8;
  if (o.ring_depth > 4096) o.ring_depth = 4096;
  *out = std::make_unique<UringEnv>(o, allow_fallback);
  return Status::OK();
}

}  // namespace detail

}  // namespace strata::io
