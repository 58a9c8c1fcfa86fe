#include "graphio/edge_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace strata::graphio {

namespace {

std::string Prefix(const std::string& name) { return name.empty() ? std::string() : name + ": "; }

// Printable excerpt of untrusted input for an error message.
std::string Excerpt(std::string_view s, size_t max = 100) {
  std::string out;
  size_t n = std::min(s.size(), max);
  out.reserve(n + 3);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out.push_back(c == '\t' || (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?');
  }
  if (s.size() > max) out += "...";
  return out;
}

const volatile std::sig_atomic_t* g_read_interrupt = nullptr;

class FdSource : public ByteSource {
 public:
  FdSource(int fd, std::string name, bool owned) : fd_(fd), name_(std::move(name)), owned_(owned) {}
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  Status Read(char* dst, size_t n, size_t* got) override {
    while (true) {
      ssize_t r = ::read(fd_, dst, n);
      if (r >= 0) {
        *got = static_cast<size_t>(r);
        return Status::OK();
      }
      if (errno == EINTR) {
        if (g_read_interrupt != nullptr && *g_read_interrupt != 0) {
          return Status::Aborted(Prefix(name_) + "read interrupted by a signal");
        }
        continue;
      }
      return Status::IOError(Prefix(name_) + "read: " + std::strerror(errno));
    }
  }
  const std::string& name() const override { return name_; }

 private:
  int fd_;
  std::string name_;
  bool owned_;
};

class StringSource : public ByteSource {
 public:
  StringSource(std::string data, std::string name) : data_(std::move(data)), name_(std::move(name)) {}
  Status Read(char* dst, size_t n, size_t* got) override {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(dst, data_.data() + pos_, k);
    pos_ += k;
    *got = k;
    return Status::OK();
  }
  const std::string& name() const override { return name_; }

 private:
  std::string data_;
  size_t pos_ = 0;
  std::string name_;
};

inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Parses an unsigned decimal at [*p, e). Stops at the first non-digit; false if there is no
// digit or the value overflows 64 bits.
inline bool ParseU64(const char** p, const char* e, uint64_t* out) {
  const char* s = *p;
  if (s == e || static_cast<unsigned>(*s - '0') > 9) return false;
  uint64_t v = 0;
  do {
    unsigned d = static_cast<unsigned>(*s - '0');
    if (d > 9) break;
    if (__builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, d, &v)) {
      return false;
    }
    s++;
  } while (s != e);
  *p = s;
  *out = v;
  return true;
}

inline const char* SkipBlanks(const char* p, const char* e) {
  while (p != e && IsBlank(*p)) p++;
  return p;
}

inline const char* TokenEnd(const char* p, const char* e) {
  while (p != e && !IsBlank(*p)) p++;
  return p;
}

struct XxhStateDeleter {
  void operator()(XXH64_state_t* s) const { XXH64_freeState(s); }
};

}  // namespace

const char* EdgeFormatName(EdgeFormat f) {
  switch (f) {
    case EdgeFormat::kAuto:
      return "auto";
    case EdgeFormat::kText:
      return "text";
    case EdgeFormat::kBinary:
      return "binary";
  }
  return "unknown";
}

Status ParseEdgeFormat(std::string_view name, EdgeFormat* format) {
  if (name == "auto") {
    *format = EdgeFormat::kAuto;
  } else if (name == "text" || name == "txt") {
    *format = EdgeFormat::kText;
  } else if (name == "binary" || name == "bin") {
    *format = EdgeFormat::kBinary;
  } else {
    return Status::InvalidArgument("unknown edge format '" + std::string(name) +
                                   "' (expected auto, text or binary)");
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Sources.

void SetReadInterruptFlag(const volatile std::sig_atomic_t* flag) { g_read_interrupt = flag; }

Status NewFileSource(const std::string& path, std::unique_ptr<ByteSource>* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string m = path + ": open: " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(m) : Status::IOError(m);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  *out = std::make_unique<FdSource>(fd, path, /*owned=*/true);
  return Status::OK();
}

std::unique_ptr<ByteSource> NewFdSource(int fd, std::string name) {
  return std::make_unique<FdSource>(fd, std::move(name), /*owned=*/false);
}

std::unique_ptr<ByteSource> NewStringSource(std::string data, std::string name) {
  return std::make_unique<StringSource>(std::move(data), std::move(name));
}

// ---------------------------------------------------------------------------------------------
// BufferedInput.

BufferedInput::BufferedInput(std::unique_ptr<ByteSource> source, size_t capacity)
    : source_(std::move(source)), buf_(new char[std::max<size_t>(capacity, 16)]),
      cap_(std::max<size_t>(capacity, 16)) {}

Status BufferedInput::Fill() {
  if (pos_ > 0) {
    std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == cap_ || at_end_) return Status::OK();
  size_t got = 0;
  Status s = source_->Read(buf_.get() + end_, cap_ - end_, &got);
  if (!s.ok()) return s;
  if (got == 0) at_end_ = true;
  end_ += got;
  return Status::OK();
}

Status BufferedInput::Ensure(size_t n) {
  if (available() >= n) return Status::OK();
  if (n > cap_) {
    size_t cap = std::max(n, 2 * cap_);
    std::unique_ptr<char[]> b(new char[cap]);
    std::memcpy(b.get(), data(), available());
    end_ -= pos_;
    pos_ = 0;
    buf_ = std::move(b);
    cap_ = cap;
  }
  while (available() < n && !at_end_) {
    Status s = Fill();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status BufferedInput::ReadMore() {
  if (at_end_) return Status::OK();
  if (pos_ == 0 && end_ == cap_) {
    // Full of unread bytes: grow so that the read has room.
    return Ensure(cap_ + 1);
  }
  size_t before = available();
  while (available() == before && !at_end_) {
    Status s = Fill();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// LineReader.

LineReader::LineReader(std::unique_ptr<ByteSource> source, size_t max_line)
    : input_(std::make_unique<BufferedInput>(std::move(source),
                                             std::max<size_t>(max_line, 16) + 1)),
      max_line_(std::max<size_t>(max_line, 16)) {}

LineReader::LineReader(std::unique_ptr<BufferedInput> input, size_t max_line)
    : input_(std::move(input)), max_line_(std::max<size_t>(max_line, 16)) {}

LineReader::~LineReader() = default;

Status LineReader::Next(std::string_view* line, bool* eof) {
  input_->Consume(pending_consume_);
  pending_consume_ = 0;
  size_t scanned = 0;  // bytes of data() known to hold no '\n'
  while (true) {
    const char* d = input_->data();
    size_t avail = input_->available();
    const char* nl = static_cast<const char*>(std::memchr(d + scanned, '\n', avail - scanned));
    size_t len = nl != nullptr ? static_cast<size_t>(nl - d) : avail;
    if (len > max_line_) break;  // too long
    if (nl != nullptr || input_->at_end()) {
      if (nl == nullptr && avail == 0) {
        *eof = true;
        return Status::OK();
      }
      line_number_++;
      pending_consume_ = nl != nullptr ? len + 1 : len;
      if (len > 0 && d[len - 1] == '\r') len--;
      *line = std::string_view(d, len);
      // A UTF-8 byte order mark (EF BB BF) that some editors put at the start of a text file
      // is not part of the first line.
      if (line_number_ == 1 && line->size() >= 3 && std::memcmp(d, "\xEF\xBB\xBF", 3) == 0) {
        line->remove_prefix(3);
      }
      *eof = false;
      return Status::OK();
    }
    scanned = avail;
    Status s = input_->ReadMore();
    if (!s.ok()) return s;
  }

  // The line does not fit: report it and discard it through its '\n'.
  line_number_++;
  std::string start = Excerpt(std::string_view(input_->data(), input_->available()), 40);
  while (true) {
    const char* d = input_->data();
    size_t avail = input_->available();
    const char* nl = static_cast<const char*>(std::memchr(d, '\n', avail));
    if (nl != nullptr) {
      input_->Consume(static_cast<size_t>(nl - d) + 1);
      break;
    }
    input_->Consume(avail);
    if (input_->at_end()) break;
    Status s = input_->Ensure(1);
    if (!s.ok()) return s;
  }
  return Status::InvalidArgument(Prefix(name()) + "line " + std::to_string(line_number_) +
                                 ": longer than " + std::to_string(max_line_) +
                                 " bytes (starts with '" + start + "')");
}

// ---------------------------------------------------------------------------------------------
// EdgeReader.

struct EdgeReader::BinaryState {
  std::unique_ptr<XXH64_state_t, XxhStateDeleter> stream_hash{XXH64_createState()};
  size_t record_size = 16;
  uint64_t block_ordinal = 0;  // of the next block to load
  uint32_t count = 0;          // records in the current block
  uint32_t index = 0;          // next record of the current block
  size_t block_bytes = 0;      // size of the current block, consumed when it is exhausted
  const char* bitmap = nullptr;   // null if the block has no deletes
  const char* records = nullptr;  // into in_'s buffer; valid until block_bytes are consumed
  bool finished = false;          // trailer verified
};

EdgeReader::EdgeReader(const EdgeReaderOptions& options) : options_(options) {}
EdgeReader::~EdgeReader() = default;

Status EdgeReader::Open(const std::string& path, const EdgeReaderOptions& options,
                        std::unique_ptr<EdgeReader>* reader) {
  std::unique_ptr<ByteSource> src;
  if (path == "-") {
    src = NewFdSource(0, "<stdin>");
  } else {
    Status s = NewFileSource(path, &src);
    if (!s.ok()) return s;
  }
  return FromSource(std::move(src), options, reader);
}

Status EdgeReader::FromSource(std::unique_ptr<ByteSource> source, const EdgeReaderOptions& options,
                              std::unique_ptr<EdgeReader>* reader) {
  using namespace edge_binary;
  if (options.buffer_bytes < 16) {
    return Status::InvalidArgument("EdgeReaderOptions::buffer_bytes must be at least 16");
  }
  if (options.weight_column < -1) {
    return Status::InvalidArgument("EdgeReaderOptions::weight_column must be >= -1");
  }
  std::unique_ptr<EdgeReader> r(new EdgeReader(options));
  auto in = std::make_unique<BufferedInput>(std::move(source), options.buffer_bytes + 1);
  const std::string where = Prefix(in->name());

  EdgeFormat format = options.format;
  if (format == EdgeFormat::kAuto) {
    Status s = in->Ensure(sizeof(kMagic));
    if (!s.ok()) return s;
    format = in->available() >= sizeof(kMagic) &&
                     std::memcmp(in->data(), kMagic, sizeof(kMagic)) == 0
                 ? EdgeFormat::kBinary
                 : EdgeFormat::kText;
  }
  r->format_ = format;

  if (format == EdgeFormat::kText) {
    r->weighted_ = options.weight_column >= 0;
    r->lines_ = std::make_unique<LineReader>(std::move(in), options.buffer_bytes);
  } else {
    Status s = in->Ensure(kHeaderSize);
    if (!s.ok()) return s;
    const char* h = in->data();
    if (in->available() < sizeof(kMagic) || std::memcmp(h, kMagic, sizeof(kMagic)) != 0) {
      return Status::Corruption(where + "not a binary edge stream (no \"SGEDGES1\" magic)");
    }
    if (in->available() < kHeaderSize) {
      return Status::Corruption(where + "truncated header (" + std::to_string(in->available()) +
                                " of " + std::to_string(kHeaderSize) + " bytes)");
    }
    uint32_t want = static_cast<uint32_t>(XXH64(h, 12, 0));
    if (LoadLE32(h + 12) != want) {
      return Status::Corruption(where + "header checksum mismatch at offset 0");
    }
    uint32_t flags = LoadLE32(h + 8);
    if ((flags & ~kKnownFlags) != 0) {
      return Status::NotSupported(where + "unknown header flags " + std::to_string(flags) +
                                  " (written by a newer version?)");
    }
    r->weighted_ = (flags & kFlagWeighted) != 0;
    r->bin_ = std::make_unique<BinaryState>();
    r->bin_->record_size = RecordSize(r->weighted_);
    XXH64_reset(r->bin_->stream_hash.get(), 0);
    XXH64_update(r->bin_->stream_hash.get(), h, kHeaderSize);
    in->Consume(kHeaderSize);
    r->in_ = std::move(in);
  }
  *reader = std::move(r);
  return Status::OK();
}

uint64_t EdgeReader::line_number() const { return lines_ ? lines_->line_number() : 0; }

uint64_t EdgeReader::bytes_consumed() const {
  if (lines_) return lines_->bytes_consumed();
  return in_->offset();
}

Status EdgeReader::Fail(Status s) {
  error_ = s;
  return s;
}

Status EdgeReader::Next(EdgeRecord* record, bool* eof) {
  if (!error_.ok()) return error_;
  return format_ == EdgeFormat::kText ? NextText(record, eof) : NextBinary(record, eof);
}

Status EdgeReader::NextBatch(std::vector<EdgeRecord>* batch, size_t max) {
  batch->clear();
  if (max == 0) max = 1;
  EdgeRecord rec;
  bool eof = false;
  while (batch->size() < max) {
    Status s = Next(&rec, &eof);
    if (!s.ok()) return s;
    if (eof) break;
    batch->push_back(rec);
  }
  return Status::OK();
}

bool EdgeReader::ParseLine(std::string_view line, EdgeRecord* record, bool* skip,
                           const char** why, bool* has_weight) const {
  const char* p = line.data();
  const char* e = p + line.size();
  p = SkipBlanks(p, e);
  *skip = false;
  *has_weight = false;
  if (p == e || *p == '#' || *p == '%') {
    *skip = true;
    return true;
  }
  EdgeOp op = EdgeOp::kInsert;
  if (*p == '-') {
    if (p + 1 == e || !IsBlank(p[1])) {
      *why = "'-' must be followed by a blank and 'src dst'";
      return false;
    }
    op = EdgeOp::kDelete;
    p = SkipBlanks(p + 1, e);
  }
  uint64_t src, dst;
  if (!ParseU64(&p, e, &src) || (p != e && !IsBlank(*p))) {
    *why = "src is not an unsigned 64-bit integer";
    return false;
  }
  p = SkipBlanks(p, e);
  if (p == e) {
    *why = "missing dst";
    return false;
  }
  if (!ParseU64(&p, e, &dst) || (p != e && !IsBlank(*p))) {
    *why = "dst is not an unsigned 64-bit integer";
    return false;
  }
  p = SkipBlanks(p, e);
  double weight = 1.0;
  if (op == EdgeOp::kDelete) {
    if (p != e) {
      *why = "a delete takes no weight or other fields";
      return false;
    }
  } else {
    for (int column = 0; p != e; column++) {
      const char* q = TokenEnd(p, e);
      if (column == options_.weight_column) {
        auto [end, ec] = std::from_chars(p, q, weight);
        if (ec == std::errc::result_out_of_range && end == q) {
          // Out of range: too close to zero for a double (1e-400) or too large (1e400).
          const std::string text(p, q);
          const double v = std::strtod(text.c_str(), nullptr);
          *why = std::fabs(v) < 1.0 ? "weight underflows: nonzero but smaller than the smallest "
                                      "double (about 4.9e-324); write 0 if zero is meant"
                                    : "weight overflows: larger than the largest double "
                                      "(about 1.8e308)";
          return false;
        }
        if (ec != std::errc() || end != q || !std::isfinite(weight)) {
          *why = "weight is not a finite number";
          return false;
        }
        *has_weight = true;
      } else if (!options_.allow_extra_columns) {
        *why = "too many fields";
        return false;
      }
      p = SkipBlanks(q, e);
    }
  }
  record->op = op;
  record->src = src;
  record->dst = dst;
  record->weight = op == EdgeOp::kDelete ? 0.0 : weight;
  return true;
}

Status EdgeReader::NextText(EdgeRecord* record, bool* eof) {
  while (true) {
    std::string_view line;
    bool end = false;
    Status s = lines_->Next(&line, &end);
    if (!s.ok()) {
      // Only an over-long line is an InvalidArgument here; I/O errors are never skipped.
      if (s.IsInvalidArgument() && options_.skip_bad_lines) {
        if (bad_lines_++ == 0) first_bad_line_ = s.message();
        continue;
      }
      return Fail(s);
    }
    if (end) {
      *eof = true;
      return Status::OK();
    }
    bool skip = false, has_weight = false;
    const char* why = "";
    if (ParseLine(line, record, &skip, &why, &has_weight)) {
      if (skip) continue;
      records_++;
      records_with_weight_ += has_weight ? 1 : 0;
      *eof = false;
      return Status::OK();
    }
    std::string_view trimmed = line.substr(std::min(line.find_first_not_of(" \t\r"), line.size()));
    const char* expected = trimmed.size() > 1 && trimmed[0] == '-' && IsBlank(trimmed[1])
                               ? "'- src dst'"
                               : "'src dst [weight]'";
    std::string msg = Prefix(lines_->name()) + "line " + std::to_string(lines_->line_number()) +
                      ": expected " + expected + ", got: '" + Excerpt(line) + "' (" + why + ")";
    if (options_.skip_bad_lines) {
      if (bad_lines_++ == 0) first_bad_line_ = msg;
      continue;
    }
    return Fail(Status::InvalidArgument(msg));
  }
}

Status EdgeReader::LoadBlock(bool* eof) {
  using namespace edge_binary;
  BinaryState& b = *bin_;
  const std::string where = Prefix(in_->name());
  if (b.block_bytes > 0) {
    in_->Consume(b.block_bytes);
    b.block_bytes = 0;
    b.count = b.index = 0;
  }
  const uint64_t off = in_->offset();
  const std::string at = " at offset " + std::to_string(off);
  Status s = in_->Ensure(kBlockHeaderSize);
  if (!s.ok()) return s;
  if (in_->available() == 0) {
    return Status::Corruption(where + "truncated: the stream ends" + at + " after " +
                              std::to_string(records_) + " records, without a trailer");
  }
  if (in_->available() < kBlockHeaderSize) {
    return Status::Corruption(where + "truncated block header" + at);
  }
  const uint32_t count = LoadLE32(in_->data());
  const uint32_t flags = LoadLE32(in_->data() + 4);

  if (count == 0) {  // the trailer
    s = in_->Ensure(kTrailerSize);
    if (!s.ok()) return s;
    if (in_->available() < kTrailerSize) return Status::Corruption(where + "truncated trailer" + at);
    const char* t = in_->data();
    if (flags != 0 || std::memcmp(t + 24, kEndMagic, sizeof(kEndMagic)) != 0) {
      return Status::Corruption(where + "bad trailer" + at);
    }
    const uint64_t count_written = LoadLE64(t + 8);
    const uint64_t hash_written = LoadLE64(t + 16);
    if (count_written != records_) {
      return Status::Corruption(where + "trailer" + at + " counts " +
                                std::to_string(count_written) + " records, the stream holds " +
                                std::to_string(records_));
    }
    if (hash_written != XXH64_digest(b.stream_hash.get())) {
      return Status::Corruption(where + "stream checksum mismatch (trailer" + at + ")");
    }
    in_->Consume(kTrailerSize);
    s = in_->Ensure(1);
    if (!s.ok()) return s;
    if (in_->available() > 0) {
      return Status::Corruption(where + "unexpected data after the trailer, at offset " +
                                std::to_string(in_->offset()));
    }
    b.finished = true;
    *eof = true;
    return Status::OK();
  }

  if (count > kMaxBlockRecords || (flags & ~kKnownBlockFlags) != 0) {
    return Status::Corruption(where + "bad block header" + at + " (count " +
                              std::to_string(count) + ", flags " + std::to_string(flags) + ")");
  }
  const size_t bitmap_bytes = (flags & kBlockHasDeletes) ? (count + 7) / 8 : 0;
  const size_t size =
      kBlockHeaderSize + bitmap_bytes + count * b.record_size + kBlockChecksumSize;
  s = in_->Ensure(size);
  if (!s.ok()) return s;
  if (in_->available() < size) {
    return Status::Corruption(where + "truncated block" + at + " (" +
                              std::to_string(in_->available()) + " of " + std::to_string(size) +
                              " bytes present)");
  }
  const char* d = in_->data();
  if (LoadLE64(d + size - kBlockChecksumSize) !=
      XXH64(d, size - kBlockChecksumSize, b.block_ordinal)) {
    return Status::Corruption(where + "checksum mismatch in block " +
                              std::to_string(b.block_ordinal) + at);
  }
  XXH64_update(b.stream_hash.get(), d, size);
  b.block_ordinal++;
  b.count = count;
  b.index = 0;
  b.block_bytes = size;
  b.bitmap = bitmap_bytes > 0 ? d + kBlockHeaderSize : nullptr;
  b.records = d + kBlockHeaderSize + bitmap_bytes;
  *eof = false;
  return Status::OK();
}

Status EdgeReader::NextBinary(EdgeRecord* record, bool* eof) {
  using namespace edge_binary;
  BinaryState& b = *bin_;
  if (b.finished) {
    *eof = true;
    return Status::OK();
  }
  if (b.index == b.count) {
    bool end = false;
    Status s = LoadBlock(&end);
    if (!s.ok()) return Fail(s);
    if (end) {
      *eof = true;
      return Status::OK();
    }
  }
  const uint32_t i = b.index++;
  const char* p = b.records + i * b.record_size;
  record->src = LoadLE64(p);
  record->dst = LoadLE64(p + 8);
  const bool del = b.bitmap != nullptr && ((static_cast<uint8_t>(b.bitmap[i >> 3]) >> (i & 7)) & 1);
  record->op = del ? EdgeOp::kDelete : EdgeOp::kInsert;
  if (del) {
    record->weight = 0.0;
  } else {
    record->weight = weighted_ ? LoadDoubleLE(p + 16) : 1.0;
  }
  records_++;
  *eof = false;
  return Status::OK();
}

}  // namespace strata::graphio
