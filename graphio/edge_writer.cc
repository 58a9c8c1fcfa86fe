#include "graphio/edge_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <charconv>
#include <cstring>
#include <ostream>
#include <utility>

namespace strata::graphio {

namespace {

constexpr size_t kFlushBytes = size_t{1} << 20;

class FdSink : public ByteSink {
 public:
  FdSink(int fd, std::string name, bool owned) : fd_(fd), name_(std::move(name)), owned_(owned) {}
  ~FdSink() override {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  Status Append(std::string_view data) override {
    if (fd_ < 0) return Status::IOError(name_ + ": append after close");
    while (!data.empty()) {
      ssize_t w = ::write(fd_, data.data(), data.size());
      if (w < 0) {
        if (errno == EINTR) continue;
        return Status::IOError(name_ + ": write: " + std::strerror(errno));
      }
      data.remove_prefix(static_cast<size_t>(w));
    }
    return Status::OK();
  }
  Status Sync() override {
    if (fd_ >= 0 && ::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
      // EINVAL/EROFS: pipes and terminals cannot be synced, and need not be.
      return Status::IOError(name_ + ": fsync: " + std::strerror(errno));
    }
    return Status::OK();
  }
  Status Close() override {
    if (fd_ < 0) return Status::OK();
    int fd = fd_;
    fd_ = -1;
    if (owned_ && ::close(fd) != 0) {
      return Status::IOError(name_ + ": close: " + std::strerror(errno));
    }
    return Status::OK();
  }
  const std::string& name() const override { return name_; }

 private:
  int fd_;
  std::string name_;
  bool owned_;
};

class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Append(std::string_view data) override {
    out_->append(data);
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }
  const std::string& name() const override { return name_; }

 private:
  std::string* out_;
  std::string name_ = "<string>";
};

class OstreamSink : public ByteSink {
 public:
  OstreamSink(std::ostream* out, std::string name) : out_(out), name_(std::move(name)) {}
  Status Append(std::string_view data) override {
    out_->write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!*out_) return Status::IOError(name_ + ": write failed");
    return Status::OK();
  }
  Status Close() override {
    out_->flush();
    if (!*out_) return Status::IOError(name_ + ": flush failed");
    return Status::OK();
  }
  const std::string& name() const override { return name_; }

 private:
  std::ostream* out_;
  std::string name_;
};

struct XxhStateDeleter {
  void operator()(XXH64_state_t* s) const { XXH64_freeState(s); }
};

}  // namespace

Status NewFileSink(const std::string& path, std::unique_ptr<ByteSink>* out) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(path + ": open: " + std::strerror(errno));
  *out = std::make_unique<FdSink>(fd, path, /*owned=*/true);
  return Status::OK();
}

std::unique_ptr<ByteSink> NewFdSink(int fd, std::string name) {
  return std::make_unique<FdSink>(fd, std::move(name), /*owned=*/false);
}

std::unique_ptr<ByteSink> NewStringSink(std::string* out) {
  return std::make_unique<StringSink>(out);
}

std::unique_ptr<ByteSink> NewOstreamSink(std::ostream* out, std::string name) {
  return std::make_unique<OstreamSink>(out, std::move(name));
}

// The block being built. Invariant: count == records.size() / record_size, and bitmap bit i is
// set iff record i of the block is a delete.
struct EdgeWriter::BinaryState {
  std::unique_ptr<XXH64_state_t, XxhStateDeleter> stream_hash{XXH64_createState()};
  size_t record_size = 16;
  uint64_t block_ordinal = 0;
  uint32_t count = 0;
  bool has_deletes = false;
  std::string records;
  uint8_t bitmap[edge_binary::kWriterBlockRecords / 8] = {};
};

EdgeWriter::EdgeWriter(const EdgeWriterOptions& options, std::unique_ptr<ByteSink> sink)
    : options_(options), sink_(std::move(sink)) {}

EdgeWriter::~EdgeWriter() = default;

Status EdgeWriter::Open(const std::string& path, const EdgeWriterOptions& options,
                        std::unique_ptr<EdgeWriter>* writer) {
  std::unique_ptr<ByteSink> sink;
  if (path == "-") {
    sink = NewFdSink(1, "<stdout>");
  } else {
    Status s = NewFileSink(path, &sink);
    if (!s.ok()) return s;
  }
  return ToSink(std::move(sink), options, writer);
}

Status EdgeWriter::ToSink(std::unique_ptr<ByteSink> sink, const EdgeWriterOptions& options,
                          std::unique_ptr<EdgeWriter>* writer) {
  using namespace edge_binary;
  if (options.format != EdgeFormat::kText && options.format != EdgeFormat::kBinary) {
    return Status::InvalidArgument("EdgeWriter needs format text or binary, not " +
                                   std::string(EdgeFormatName(options.format)));
  }
  std::unique_ptr<EdgeWriter> w(new EdgeWriter(options, std::move(sink)));
  w->out_.reserve(kFlushBytes + 4096);
  if (options.format == EdgeFormat::kBinary) {
    w->bin_ = std::make_unique<BinaryState>();
    w->bin_->record_size = RecordSize(options.weighted);
    w->bin_->records.reserve(kWriterBlockRecords * w->bin_->record_size);
    char h[kHeaderSize];
    std::memcpy(h, kMagic, sizeof(kMagic));
    StoreLE32(h + 8, options.weighted ? kFlagWeighted : 0);
    StoreLE32(h + 12, static_cast<uint32_t>(XXH64(h, 12, 0)));
    XXH64_reset(w->bin_->stream_hash.get(), 0);
    XXH64_update(w->bin_->stream_hash.get(), h, kHeaderSize);
    w->out_.append(h, kHeaderSize);
  }
  *writer = std::move(w);
  return Status::OK();
}

void EdgeWriter::AppendText(const EdgeRecord& r) {
  // Each field gets a bounded window: a u64 needs at most 20 chars, and the shortest
  // round-trip form of a double at most 24. So the line needs at most 2+20+1+20+1+32+1 bytes.
  char buf[96];
  char* p = buf;
  if (r.op == EdgeOp::kDelete) {
    *p++ = '-';
    *p++ = ' ';
  }
  p = std::to_chars(p, p + 20, r.src).ptr;
  *p++ = ' ';
  p = std::to_chars(p, p + 20, r.dst).ptr;
  if (r.op == EdgeOp::kInsert && options_.weighted) {
    *p++ = ' ';
    // Shortest representation that reads back to the same double.
    p = std::to_chars(p, p + 32, r.weight).ptr;
  }
  *p++ = '\n';
  out_.append(buf, static_cast<size_t>(p - buf));
}

void EdgeWriter::AppendBinary(const EdgeRecord& r) {
  using namespace edge_binary;
  BinaryState& b = *bin_;
  char rec[24];
  StoreLE64(rec, r.src);
  StoreLE64(rec + 8, r.dst);
  if (options_.weighted) StoreDoubleLE(rec + 16, r.op == EdgeOp::kDelete ? 0.0 : r.weight);
  b.records.append(rec, b.record_size);
  if (r.op == EdgeOp::kDelete) {
    b.bitmap[b.count >> 3] |= static_cast<uint8_t>(1u << (b.count & 7));
    b.has_deletes = true;
  }
  if (++b.count == kWriterBlockRecords) EmitBlock();
}

void EdgeWriter::EmitBlock() {
  using namespace edge_binary;
  BinaryState& b = *bin_;
  if (b.count == 0) return;
  const size_t start = out_.size();
  char h[kBlockHeaderSize];
  StoreLE32(h, b.count);
  StoreLE32(h + 4, b.has_deletes ? kBlockHasDeletes : 0);
  out_.append(h, kBlockHeaderSize);
  if (b.has_deletes) {
    out_.append(reinterpret_cast<const char*>(b.bitmap), (b.count + 7) / 8);
  }
  out_.append(b.records);
  char sum[kBlockChecksumSize];
  StoreLE64(sum, XXH64(out_.data() + start, out_.size() - start, b.block_ordinal));
  out_.append(sum, kBlockChecksumSize);
  XXH64_update(b.stream_hash.get(), out_.data() + start, out_.size() - start);
  b.block_ordinal++;
  b.count = 0;
  b.has_deletes = false;
  b.records.clear();
  std::memset(b.bitmap, 0, sizeof(b.bitmap));
}

Status EdgeWriter::FlushOut() {
  if (out_.empty()) return Status::OK();
  Status s = sink_->Append(out_);
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  flushed_bytes_ += out_.size();
  out_.clear();
  return Status::OK();
}

Status EdgeWriter::Add(const EdgeRecord& record) {
  if (!error_.ok()) return error_;
  if (finished_) return error_ = Status::InvalidArgument("EdgeWriter: Add after Finish");
  if (bin_) {
    AppendBinary(record);
  } else {
    AppendText(record);
  }
  records_++;
  if (out_.size() >= kFlushBytes) return FlushOut();
  return Status::OK();
}

Status EdgeWriter::AddEdges(const Edge* edges, size_t n) {
  for (size_t i = 0; i < n; i++) {
    Status s = Add(EdgeRecord{EdgeOp::kInsert, edges[i].src, edges[i].dst, edges[i].weight});
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status EdgeWriter::Finish() {
  using namespace edge_binary;
  if (!error_.ok()) return error_;
  if (finished_) return Status::OK();
  if (bin_) {
    EmitBlock();
    char t[kTrailerSize];
    StoreLE32(t, 0);
    StoreLE32(t + 4, 0);
    StoreLE64(t + 8, records_);
    StoreLE64(t + 16, XXH64_digest(bin_->stream_hash.get()));
    std::memcpy(t + 24, kEndMagic, sizeof(kEndMagic));
    out_.append(t, kTrailerSize);
  }
  Status s = FlushOut();
  if (s.ok() && options_.sync_on_finish) s = sink_->Sync();
  if (s.ok()) s = sink_->Close();
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  finished_ = true;
  return Status::OK();
}

}  // namespace strata::graphio
