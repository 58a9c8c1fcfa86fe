#include "db/record_log.h"

#include <algorithm>
#include <vector>

#include "util/coding.h"
#include "util/crc.h"

namespace strata {

Status RecordWriter::Create(io::WritableFile* file, std::string_view magic, uint32_t version,
                            uint32_t checksum_kind, std::unique_ptr<RecordWriter>* out) {
  if (magic.size() != 8) return Status::InvalidArgument("record log magic must be 8 bytes");
  std::string h(magic);
  PutFixed32(&h, version);
  PutFixed32(&h, static_cast<uint32_t>(Checksum64(h.data(), 12, ChecksumSeed(checksum_kind, 0))));
  Status s = file->Append(h);
  if (!s.ok()) return s;
  out->reset(new RecordWriter(file, checksum_kind));
  return Status::OK();
}

Status RecordWriter::Add(std::string_view payload) {
  if (payload.size() > kMaxRecordBytes) return Status::InvalidArgument("record too large");
  const uint64_t offset = file_->Size();
  const uint64_t seed = ChecksumSeed(kind_, offset);
  scratch_.clear();
  PutFixed32(&scratch_, static_cast<uint32_t>(payload.size()));
  PutFixed32(&scratch_, static_cast<uint32_t>(Checksum64(scratch_.data(), 4, seed)));
  PutFixed64(&scratch_, Checksum64(payload.data(), payload.size(), seed));
  scratch_.append(payload);
  return file_->Append(scratch_);
}

namespace {

// Whether some piece of the record at file offset `off` (its bytes split at multiples of
// kSectorBytes) is all zero: a sector a crash may have left unwritten.
constexpr uint64_t kSectorBytes = 512;
bool HasZeroSector(const char* rec, uint64_t off, uint64_t n) {
  for (uint64_t b = 0; b < n;) {
    const uint64_t e = std::min(n, (off + b) / kSectorBytes * kSectorBytes + kSectorBytes - off);
    if (std::all_of(rec + b, rec + e, [](char c) { return c == 0; })) return true;
    b = e;
  }
  return false;
}

}  // namespace

Status ReadRecordLog(io::Env* env, const std::string& path, std::string_view magic,
                     uint32_t* version, uint32_t checksum_kind,
                     FunctionRef<Status(std::string_view, uint64_t)> fn, RecordLogTail* tail) {
  std::unique_ptr<io::RandomAccessFile> f;
  Status s = env->NewRandomAccessFile(path, &f);
  if (!s.ok()) return s;
  const uint64_t size = f->Size();
  RecordLogTail t;
  if (size < kRecordLogHeaderSize) {
    return io::CorruptionAt(path, 0, "file shorter than its header (" + std::to_string(size) +
                                         " bytes)");
  }
  char h[kRecordLogHeaderSize];
  s = f->Read(0, kRecordLogHeaderSize, h);
  if (!s.ok()) return s;
  if (std::string_view(h, 8) != magic) {
    return io::CorruptionAt(path, 0, "bad magic: not a " + std::string(magic) + " file");
  }
  if (DecodeFixed32(h + 12) != static_cast<uint32_t>(Checksum64(h, 12, ChecksumSeed(checksum_kind, 0)))) {
    return io::CorruptionAt(path, 8, "header checksum mismatch");
  }
  if (version) *version = DecodeFixed32(h + 8);

  // Sequential read through a window buffer.
  std::vector<char> buf;
  uint64_t buf_start = 0;
  auto load = [&](uint64_t off, size_t n) -> Status {
    if (off >= buf_start && off + n <= buf_start + buf.size()) return Status::OK();
    size_t want = static_cast<size_t>(std::min<uint64_t>(std::max<size_t>(n, 1 << 20), size - off));
    buf.resize(want);
    buf_start = off;
    return f->Read(off, want, buf.data());
  };
  uint64_t off = kRecordLogHeaderSize;
  while (off < size) {
    std::string why;
    uint32_t len = 0;
    if (size - off < kRecordHeaderSize) {
      why = "partial record header";
    } else {
      s = load(off, kRecordHeaderSize);
      if (!s.ok()) return s;
      const char* p = buf.data() + (off - buf_start);
      const uint64_t seed = ChecksumSeed(checksum_kind, off);
      len = DecodeFixed32(p);
      uint32_t len_check = DecodeFixed32(p + 4);
      uint64_t sum = DecodeFixed64(p + 8);
      if (len_check != static_cast<uint32_t>(Checksum64(p, 4, seed)) || len > kMaxRecordBytes) {
        why = "bad record length";
      } else if (size - off - kRecordHeaderSize < len) {
        why = "record runs past end of file";
      } else {
        s = load(off, kRecordHeaderSize + len);
        if (!s.ok()) return s;
        const char* payload = buf.data() + (off - buf_start) + kRecordHeaderSize;
        if (Checksum64(payload, len, seed) != sum) {
          why = "checksum mismatch";
          t.whole_damaged = !HasZeroSector(buf.data() + (off - buf_start), off,
                                           kRecordHeaderSize + len);
        } else {
          s = fn(std::string_view(payload, len), off);
          if (!s.ok()) return s;
          off += kRecordHeaderSize + len;
          continue;
        }
      }
    }
    // A bad record: a torn tail if it is the last thing in the file, else corruption.
    uint64_t end_of_bad = why == "checksum mismatch" ? off + kRecordHeaderSize + len : size;
    if (why == "bad record length") {
      // Torn only if the rest is zero-filled (space a crash left unwritten).
      bool zeros = true;
      std::vector<char> tmp;
      for (uint64_t z = off; z < size && zeros;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(size - z, 1 << 20));
        tmp.resize(n);
        s = f->Read(z, n, tmp.data());
        if (!s.ok()) return s;
        zeros = std::all_of(tmp.begin(), tmp.end(), [](char c) { return c == 0; });
        z += n;
      }
      if (zeros) {
        why = "zero-filled tail";
      } else {
        end_of_bad = off;  // damaged length in the middle: corruption
      }
    }
    if (end_of_bad < size) {
      return io::CorruptionAt(path, off, why + " (followed by " +
                                             std::to_string(size - end_of_bad) + " more bytes)");
    }
    t.cut_bytes = size - off;
    t.reason = "file " + path + " offset " + std::to_string(off) + ": " + why;
    break;
  }
  t.valid_bytes = off;
  if (tail) *tail = t;
  return Status::OK();
}

}  // namespace strata
