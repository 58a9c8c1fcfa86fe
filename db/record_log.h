// Record logs: the framing shared by the manifest and the write-ahead log.
//
// File = header, then records.
//   header:  magic (8 bytes, names the file kind) | format version (u32) |
//            header check (u32: low 32 bits of Checksum64(first 12 bytes, seed(kind, 0)))
//   record:  length (u32) | length check (u32) | checksum (u64) | payload (length bytes)
// length check = low 32 bits of Checksum64(length bytes, seed); checksum = Checksum64(payload,
// seed); seed = ChecksumSeed(kind, offset of the record), so a record that is intact but sits
// at another offset fails too. All integers little-endian. The length check tells a damaged
// length (corruption) from a record cut short by a crash (torn tail).
//
// Reading stops at the first record that is not whole. It is a torn tail — reported in
// RecordLogTail and cut, never half-applied — when it is the last thing in the file: a partial
// header, a record whose (checked) length runs past the end, a last record whose payload fails
// its checksum, or a zero-filled remainder. Anything else — a bad length check or a bad payload
// followed by more bytes — is corruption in the middle of the log: Status::Corruption naming
// the file and the offset.
//
// A cut last record whose length is all in the file but whose payload fails its checksum is
// also flagged `whole_damaged` when none of its 512-byte sector pieces (the record's bytes
// split at file offsets that are multiples of 512) is all zero. A crash leaves a record short,
// or with sectors that were never written and read as zeros; a record present to its last byte
// with every sector written and a wrong checksum was damaged after it was written. The reader
// still cuts it; a caller for which losing a synced record is worse than refusing to open (the
// manifest) treats the flag as corruption.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "io/env.h"
#include "strata/function_ref.h"

namespace strata {

inline constexpr size_t kRecordLogHeaderSize = 16;
inline constexpr size_t kRecordHeaderSize = 16;
inline constexpr uint32_t kMaxRecordBytes = 1u << 30;

class RecordWriter {
 public:
  // Takes a new, empty file and writes the header.
  static Status Create(io::WritableFile* file, std::string_view magic, uint32_t version,
                       uint32_t checksum_kind, std::unique_ptr<RecordWriter>* out);
  // Appends one record (buffered; call Sync or Flush to push it).
  Status Add(std::string_view payload);
  Status Flush() { return file_->Flush(); }
  Status Sync() { return file_->Sync(); }
  uint64_t size() const { return file_->Size(); }
  io::WritableFile* file() const { return file_; }

 private:
  RecordWriter(io::WritableFile* f, uint32_t kind) : file_(f), kind_(kind) {}
  io::WritableFile* file_;
  uint32_t kind_;
  std::string scratch_;
};

struct RecordLogTail {
  uint64_t valid_bytes = 0;  // header + whole records
  uint64_t cut_bytes = 0;    // torn tail ignored after them
  std::string reason;        // why the tail was cut (empty when cut_bytes == 0)
  bool whole_damaged = false;  // the cut record was whole and damaged, not torn (see above)
};

// Reads every whole record in order, calling fn(payload, offset). A non-OK status from fn stops
// the read and is returned.
Status ReadRecordLog(io::Env* env, const std::string& path, std::string_view magic,
                     uint32_t* version, uint32_t checksum_kind,
                     FunctionRef<Status(std::string_view payload, uint64_t offset)> fn,
                     RecordLogTail* tail);

}  // namespace strata
