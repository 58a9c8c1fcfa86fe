#include "db/wal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "db/filename.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

namespace {
constexpr char kMagic[] = "SGWAL001";
constexpr uint32_t kChecksumKind = 0x57;  // 'W'
constexpr uint32_t kWalVersion = 2;
constexpr char kIdentityTag = 'I';  // first record: 'I' | store ID (fixed64) | file number (varint)

// The number in a log's file name ("<number>.wal"), or ~0 when the name is not one.
uint64_t NumberOfPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  FileType type;
  uint64_t number;
  if (!ParseFileName(name, &type, &number) || type != FileType::kWal) return ~uint64_t{0};
  return number;
}
}  // namespace

void EncodeBatchRecord(Timestamp ts, const WriteBatch& batch, bool weighted, std::string* dst) {
  PutVarint64(dst, ts);
  PutVarint64(dst, batch.Count());
  for (const WriteBatch::Op& op : batch.ops()) {
    dst->push_back(static_cast<char>(op.type));
    PutVarint64(dst, op.u);
    if (WriteBatch::IsEdgeOp(op.type)) {
      PutVarint64(dst, op.v);
    }
    if (weighted && (op.type == WriteBatch::OpType::kInsertEdge ||
                     op.type == WriteBatch::OpType::kSetWeight)) {
      uint64_t bits;
      std::memcpy(&bits, &op.weight, 8);
      PutFixed64(dst, bits);
    }
  }
}

Status DecodeBatchRecord(std::string_view src, bool weighted, Timestamp* ts, WriteBatch* batch) {
  const char* p = src.data();
  const char* end = p + src.size();
  uint64_t n = 0;
  batch->Clear();
  if ((p = DecodeVarint64(p, end, ts)) == nullptr || (p = DecodeVarint64(p, end, &n)) == nullptr) {
    return Status::Corruption("batch record: bad header");
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (p >= end) return Status::Corruption("batch record: truncated");
    auto type = static_cast<WriteBatch::OpType>(*p++);
    uint64_t u = 0, v = 0;
    double w = 1.0;
    if (static_cast<uint8_t>(type) > 4) return Status::Corruption("batch record: bad op type");
    if ((p = DecodeVarint64(p, end, &u)) == nullptr) return Status::Corruption("batch record: bad id");
    bool edge = WriteBatch::IsEdgeOp(type);
    if (edge && (p = DecodeVarint64(p, end, &v)) == nullptr) {
      return Status::Corruption("batch record: bad id");
    }
    if (weighted && (type == WriteBatch::OpType::kInsertEdge || type == WriteBatch::OpType::kSetWeight)) {
      if (end - p < 8) return Status::Corruption("batch record: truncated weight");
      uint64_t bits = DecodeFixed64(p);
      std::memcpy(&w, &bits, 8);
      p += 8;
    }
    switch (type) {
      case WriteBatch::OpType::kAddVertex: batch->AddVertex(u); break;
      case WriteBatch::OpType::kDeleteVertex: batch->DeleteVertex(u); break;
      case WriteBatch::OpType::kInsertEdge: batch->InsertEdge(u, v, w); break;
      case WriteBatch::OpType::kDeleteEdge: batch->DeleteEdge(u, v); break;
      case WriteBatch::OpType::kSetWeight: batch->SetWeight(u, v, w); break;
    }
  }
  if (p != end) return Status::Corruption("batch record: trailing bytes");
  return Status::OK();
}

namespace {
constexpr char kViewTag = 'V';  // after a zero op count: a view definition change
}  // namespace

void EncodeViewRecord(Timestamp ts, std::string_view view_record, std::string* dst) {
  PutVarint64(dst, ts);
  PutVarint64(dst, 0);
  dst->push_back(kViewTag);
  dst->append(view_record.data(), view_record.size());
}

Status DecodeLogRecord(std::string_view src, bool weighted, Timestamp* ts, WriteBatch* batch,
                       std::string_view* view_record) {
  *view_record = std::string_view();
  const char* p = src.data();
  const char* end = p + src.size();
  uint64_t n = 0;
  if ((p = DecodeVarint64(p, end, ts)) != nullptr && (p = DecodeVarint64(p, end, &n)) != nullptr &&
      n == 0 && p != end) {
    batch->Clear();
    if (*p != kViewTag) return Status::Corruption("log record: unknown commit tag");
    if (end - p < 2) return Status::Corruption("view record: empty");
    *view_record = std::string_view(p + 1, static_cast<size_t>(end - p - 1));
    return Status::OK();
  }
  return DecodeBatchRecord(src, weighted, ts, batch);
}

struct WriteAheadLog::Waiter {
  std::string_view record;
  bool done = false;
  Status status;
  std::condition_variable cv;
};

Status WriteAheadLog::Create(io::Env* env, const std::string& dir, uint64_t number,
                             uint64_t store_id, WalMode mode,
                             std::unique_ptr<WriteAheadLog>* out) {
  std::unique_ptr<WriteAheadLog> w(new WriteAheadLog());
  w->mode_ = mode;
  w->number_ = number;
  w->path_ = WalFilePath(dir, number);
  Status s = env->NewWritableFile(w->path_, &w->file_);
  if (s.ok()) s = RecordWriter::Create(w->file_.get(), kMagic, kWalVersion, kChecksumKind, &w->writer_);
  std::string id(1, kIdentityTag);
  PutFixed64(&id, store_id);
  PutVarint64(&id, number);
  if (s.ok()) s = w->writer_->Add(id);
  if (s.ok()) s = w->writer_->Sync();
  if (s.ok()) s = env->SyncDir(dir);
  if (!s.ok()) return s;
  *out = std::move(w);
  return Status::OK();
}

WriteAheadLog::~WriteAheadLog() { Close(); }

uint64_t WriteAheadLog::bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return writer_ ? writer_->size() : 0;
}

Status WriteAheadLog::WriteGroup(std::vector<Waiter*>* group) {
  Status s;
  for (Waiter* w : *group) {
    s = writer_->Add(w->record);
    if (!s.ok()) break;
  }
  if (s.ok()) s = writer_->Sync();
  return s;
}

Status WriteAheadLog::Append(std::string_view record) {
  if (mode_ == WalMode::kSync) {
    std::lock_guard<std::mutex> g(mu_);
    if (!sticky_.ok()) return sticky_;
    Status s = writer_->Add(record);
    if (s.ok()) s = writer_->Sync();
    ++syncs_;
    if (!s.ok()) sticky_ = s;
    return s;
  }
  Waiter me;
  me.record = record;
  std::unique_lock<std::mutex> lk(mu_);
  queue_.push_back(&me);
  while (!me.done && queue_.front() != &me) me.cv.wait(lk);
  if (me.done) return me.status;
  // Leader: take everything queued so far, write it with one sync outside the lock. Followers
  // that arrive meanwhile queue behind the group and wait for the next leader.
  std::vector<Waiter*> group(queue_.begin(), queue_.end());
  Status s = sticky_;
  if (s.ok()) {
    lk.unlock();
    s = WriteGroup(&group);
    lk.lock();
    ++syncs_;
    if (!s.ok()) sticky_ = s;
  }
  for (Waiter* w : group) {
    queue_.pop_front();
    if (w != &me) {
      w->status = s;
      w->done = true;
      w->cv.notify_one();
    }
  }
  if (!queue_.empty()) queue_.front()->cv.notify_one();
  return s;
}

Status WriteAheadLog::Sync() {
  std::lock_guard<std::mutex> g(mu_);
  if (!writer_) return Status::OK();
  Status s = writer_->Sync();
  if (!s.ok()) sticky_ = s;
  return s;
}

Status WriteAheadLog::Close() {
  std::lock_guard<std::mutex> g(mu_);
  if (!file_) return Status::OK();
  Status s = writer_->Sync();
  Status c = file_->Close();
  writer_.reset();
  file_.reset();
  return s.ok() ? c : s;
}

Status WriteAheadLog::Replay(io::Env* env, const std::string& path, uint64_t store_id,
                             FunctionRef<Status(std::string_view, uint64_t)> fn,
                             RecordLogTail* tail) {
  // Create syncs a log's header before any record is appended, so a log shorter than its
  // header, or zero-filled from its start, was cut by a crash inside Create and never held a
  // record: an empty log with a torn tail, not corruption.
  {
    std::unique_ptr<io::RandomAccessFile> f;
    Status s = env->NewRandomAccessFile(path, &f);
    if (!s.ok()) return s;
    const uint64_t size = f->Size();
    bool torn = size < kRecordLogHeaderSize;
    std::string buf(kRecordLogHeaderSize, '\0');
    for (uint64_t off = 0; off < size && !torn;) {  // scans on only while it reads zeros
      const size_t n = static_cast<size_t>(std::min<uint64_t>(size - off, buf.size()));
      s = f->Read(off, n, buf.data());
      if (!s.ok()) return s;
      if (!std::all_of(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n), [](char c) { return c == 0; })) break;
      off += n;
      torn = off == size;
      buf.resize(1 << 20);
    }
    if (torn) {
      if (tail != nullptr) {
        tail->valid_bytes = 0;
        tail->cut_bytes = size;
        tail->reason = "file " + path + " offset 0: " +
                       (size < kRecordLogHeaderSize ? "partial log header (" + std::to_string(size) + " bytes)"
                                                    : std::string("zero-filled log"));
      }
      return Status::OK();
    }
  }
  uint32_t version = 0;
  bool first = true;
  Status s = ReadRecordLog(
      env, path, kMagic, &version, kChecksumKind,
      [&](std::string_view rec, uint64_t off) -> Status {
        if (version != kWalVersion) {
          return io::CorruptionAt(path, 8, "unsupported WAL version " + std::to_string(version) +
                                               " (this build writes and reads version " +
                                               std::to_string(kWalVersion) + ")");
        }
        if (!first) return fn(rec, off);
        first = false;
        uint64_t id = 0, number = 0;
        if (rec.size() < 10 || rec[0] != kIdentityTag ||
            DecodeVarint64(rec.data() + 9, rec.data() + rec.size(), &number) == nullptr) {
          return io::CorruptionAt(path, off, "first record is not the log's identity");
        }
        id = DecodeFixed64(rec.data() + 1);
        if (id != store_id) {
          return io::CorruptionAt(path, off + kRecordHeaderSize + 1,
                                  io::AnotherStore("log", id, store_id));
        }
        if (number != NumberOfPath(path)) {
          return io::CorruptionAt(path, off + kRecordHeaderSize + 9,
                                  "log was written as " + WalFileName(number) + ", not under this name");
        }
        return Status::OK();
      },
      tail);
  if (s.ok() && version != kWalVersion) {
    return io::CorruptionAt(path, 8, "unsupported WAL version " + std::to_string(version));
  }
  return s;
}

Status WriteAheadLog::Tail(io::Env* env, const std::string& path, uint64_t store_id,
                           uint64_t* offset, FunctionRef<Status(std::string_view)> fn,
                           bool* more) {
  *more = false;
  std::unique_ptr<io::RandomAccessFile> f;
  Status s = env->NewRandomAccessFile(path, &f);
  if (!s.ok()) return s;
  const uint64_t size = f->Size();
  std::string buf;
  // Reads the record at `off` into rec; false when it is not whole (yet).
  auto read_record = [&](uint64_t off, std::string_view* rec) -> Status {
    *rec = {};
    if (size - off < kRecordHeaderSize) return Status::OK();
    char h[kRecordHeaderSize];
    Status r = f->Read(off, kRecordHeaderSize, h);
    if (!r.ok()) return r;
    const uint64_t seed = ChecksumSeed(kChecksumKind, off);
    const uint32_t len = DecodeFixed32(h);
    if (DecodeFixed32(h + 4) != static_cast<uint32_t>(Checksum64(h, 4, seed)) ||
        len > kMaxRecordBytes || size - off - kRecordHeaderSize < len) {
      return Status::OK();
    }
    buf.resize(len);
    r = f->Read(off + kRecordHeaderSize, len, buf.data());
    if (!r.ok()) return r;
    if (Checksum64(buf.data(), len, seed) != DecodeFixed64(h + 8)) return Status::OK();
    *rec = std::string_view(buf.data(), len);
    return Status::OK();
  };
  uint64_t off = *offset;
  if (off == 0) {
    if (size < kRecordLogHeaderSize) {
      *more = size != 0;
      return Status::OK();
    }
    char h[kRecordLogHeaderSize];
    s = f->Read(0, kRecordLogHeaderSize, h);
    if (!s.ok()) return s;
    if (std::string_view(h, 8) != std::string_view(kMagic, 8) ||
        DecodeFixed32(h + 12) != static_cast<uint32_t>(Checksum64(h, 12, ChecksumSeed(kChecksumKind, 0)))) {
      // Create writes header and identity in one append: a header not yet whole is pending.
      if (std::all_of(h, h + sizeof(h), [](char c) { return c == 0; })) {
        *more = true;
        return Status::OK();
      }
      return io::CorruptionAt(path, 0, "not a write-ahead log (bad magic or header check)");
    }
    if (DecodeFixed32(h + 8) != kWalVersion) {
      return io::CorruptionAt(path, 8, "unsupported WAL version " + std::to_string(DecodeFixed32(h + 8)));
    }
    std::string_view rec;
    s = read_record(kRecordLogHeaderSize, &rec);
    if (!s.ok()) return s;
    if (rec.data() == nullptr) {
      *more = size > kRecordLogHeaderSize;
      return Status::OK();
    }
    if (rec.size() < 9 || rec[0] != kIdentityTag) {
      return io::CorruptionAt(path, kRecordLogHeaderSize, "first record is not the log's identity");
    }
    if (DecodeFixed64(rec.data() + 1) != store_id) {
      return io::CorruptionAt(path, kRecordLogHeaderSize, "log belongs to another store");
    }
    off = kRecordLogHeaderSize + kRecordHeaderSize + rec.size();
    *offset = off;
  }
  while (off < size) {
    std::string_view rec;
    s = read_record(off, &rec);
    if (!s.ok()) return s;
    if (rec.data() == nullptr) {
      *more = true;
      return Status::OK();
    }
    s = fn(rec);
    if (!s.ok()) return s;
    off += kRecordHeaderSize + rec.size();
    *offset = off;
  }
  return Status::OK();
}

}  // namespace strata
