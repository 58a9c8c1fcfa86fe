#include "graphio/id_dictionary.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "graphio/edge_reader.h"  // BufferedInput, little-endian helpers
#include "io/env.h"

namespace strata::graphio {

namespace {

using edge_binary::LoadLE32;
using edge_binary::LoadLE64;
using edge_binary::StoreLE32;
using edge_binary::StoreLE64;

// File layout (little-endian):
//   header  := "SGIDDICT" | u32 version | u32 flags (0) | u64 XXH64(header[0..16), seed 0)
//   record  := u32 count (1..kMaxRecordEntries) | u32 type (kMappingRecord)
//              | u64 first internal ID (== entries before this record)
//              | u64 XXH64(payload, seed = first internal ID)
//              | u64 XXH64(record[0..24), seed 0)
//              | payload: count x u64 external ID; entry j maps to first + j
//   owner record (optional, only first): the same framing with type kOwnerRecord, count 1,
//              first 0, payload the owner (u64, non-zero); it maps nothing
constexpr char kMagic[8] = {'S', 'G', 'I', 'D', 'D', 'I', 'C', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 24;
constexpr size_t kRecordHeaderSize = 32;
constexpr uint32_t kMappingRecord = 1;
constexpr uint32_t kOwnerRecord = 2;
constexpr uint32_t kMaxRecordEntries = uint32_t{1} << 20;

inline uint64_t HashId(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Status ErrnoStatus(const std::string& path, const char* op) {
  return Status::IOError(path + ": " + op + ": " + std::strerror(errno));
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The header, and the owner record when `owner` is not 0, into `h`: their size.
constexpr size_t kStartBytes = kHeaderSize + kRecordHeaderSize + 8;
size_t EncodeStart(uint64_t owner, char (&h)[kStartBytes]) {
  std::memcpy(h, kMagic, sizeof(kMagic));
  StoreLE32(h + 8, kVersion);
  StoreLE32(h + 12, 0);
  StoreLE64(h + 16, XXH64(h, 16, 0));
  size_t n = kHeaderSize;
  if (owner != 0) {
    char* r = h + kHeaderSize;
    StoreLE32(r, 1);
    StoreLE32(r + 4, kOwnerRecord);
    StoreLE64(r + 8, 0);
    StoreLE64(r + kRecordHeaderSize, owner);
    StoreLE64(r + 16, XXH64(r + kRecordHeaderSize, 8, 0));
    StoreLE64(r + 24, XXH64(r, 24, 0));
    n += kRecordHeaderSize + 8;
  }
  return n;
}

// Writes a file at `path` holding `start`, then the bytes [from, to) of `copy_fd` (none when
// to <= from), atomically: temporary, fdatasync, rename, fsync of the directory. Through io's
// file operations, so the test hooks (failing syncs, the power-loss journal) see it as they
// see the store's own files. An error from the directory's sync is returned though the rename
// was done: the new file may not survive a power loss, and the caller must not act as if it
// would.
Status WriteFileAtomically(const std::string& path, std::string_view start, int copy_fd = -1,
                           uint64_t from = 0, uint64_t to = 0) {
  const std::string tmp = path + ".tmp";
  int fd;
  Status s = io::OpenFile(tmp, O_WRONLY | O_CREAT | O_TRUNC, &fd);
  if (!s.ok()) return s;
  s = io::WriteFileAt(fd, tmp, 0, start.data(), start.size());
  uint64_t out = start.size();
  std::string buf;
  for (uint64_t off = from; s.ok() && off < to;) {
    buf.resize(static_cast<size_t>(std::min<uint64_t>(to - off, uint64_t{1} << 20)));
    const ssize_t r = ::pread(copy_fd, buf.data(), buf.size(), static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      s = r < 0 ? ErrnoStatus(path, "pread") : Status::IOError(path + ": shorter than read");
      break;
    }
    s = io::WriteFileAt(fd, tmp, out, buf.data(), static_cast<size_t>(r));
    off += static_cast<uint64_t>(r);
    out += static_cast<uint64_t>(r);
  }
  if (s.ok()) s = io::SyncFile(fd, tmp, 0, out);
  ::close(fd);
  if (s.ok()) s = io::RenameFile(tmp, path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return io::SyncDirectory(DirName(path));
}

// A new dictionary file at `path`: the header, the owner record when `owner` is not 0, then
// the bytes [from, to) of `copy_fd`.
Status WriteDictionaryAtomically(const std::string& path, uint64_t owner, int copy_fd = -1,
                                 uint64_t from = 0, uint64_t to = 0) {
  char h[kStartBytes];
  const size_t n = EncodeStart(owner, h);
  return WriteFileAtomically(path, std::string_view(h, n), copy_fd, from, to);
}

// True if every byte from the current position to the end of `in` is zero.
Status RestIsZero(BufferedInput* in, bool* zero) {
  *zero = true;
  while (true) {
    Status s = in->Ensure(1);
    if (!s.ok()) return s;
    if (in->available() == 0) return Status::OK();
    const char* d = in->data();
    for (size_t i = 0; i < in->available(); i++) {
      if (d[i] != 0) {
        *zero = false;
        return Status::OK();
      }
    }
    in->Consume(in->available());
  }
}

}  // namespace

Status ReadIdModeFile(const std::string& path, bool* mapped, bool* present) {
  *mapped = false;
  *present = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::OK();
    return ErrnoStatus(path, "open");
  }
  char buf[64] = {0};
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  const int err = errno;
  ::close(fd);
  if (n < 0) {
    errno = err;
    return ErrnoStatus(path, "read");
  }
  std::string_view t(buf, static_cast<size_t>(n));
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) {
    t.remove_suffix(1);
  }
  if (t == "ids=map") {
    *mapped = true;
  } else if (t != "ids=dense") {
    return Status::Corruption(path + ": expected 'ids=dense' or 'ids=map', got '" +
                              std::string(t.substr(0, 40)) + "'");
  }
  *present = true;
  return Status::OK();
}

Status WriteIdModeFile(const std::string& path, bool mapped) {
  return WriteFileAtomically(path, mapped ? "ids=map\n" : "ids=dense\n");
}

Status CheckDictionaryOwner(const std::string& dictionary_path, uint64_t store_id,
                            uint64_t owner) {
  if (owner == 0 || owner == store_id) return Status::OK();
  return Status::Corruption(dictionary_path + " belongs to another store (its owner record " +
                            "names store ID " + std::to_string(owner) + ", this store's is " +
                            std::to_string(store_id) +
                            "): its IDs would answer for other vertices; restore this store's "
                            "IDDICT");
}

Status CheckIdModeAgainstDictionary(const std::string& id_mode_path,
                                    const std::string& dictionary_path, bool mapped,
                                    bool present) {
  struct stat st;
  if (mapped || ::stat(dictionary_path.c_str(), &st) != 0) return Status::OK();
  return Status::Corruption(
      "file " + id_mode_path + ": " + (present ? "says ids=dense" : "missing") + ", but " +
      dictionary_path +
      " exists: the store maps external IDs through it, and reading them as internal IDs "
      "would answer for other vertices; restore IDMODE (one line: ids=map)");
}

std::string TornTailNote(const std::string& path, const IdDictionaryLoadInfo& info) {
  if (info.torn_bytes == 0 || info.bytes_cut != 0) return "";
  return path + ": torn tail of " + std::to_string(info.torn_bytes) + " bytes at offset " +
         std::to_string(info.file_bytes) +
         " (a crash while an ingest added mappings no stored batch uses); left as it is by this "
         "read-only open, a writing command (ingest, compact) would cut it";
}

IdDictionary::IdDictionary() { Rehash(16); }

IdDictionary::~IdDictionary() {
  if (fd_ >= 0) ::close(fd_);
}

size_t IdDictionary::Probe(uint64_t external) const {
  const size_t mask = slots_.size() - 1;
  size_t i = static_cast<size_t>(HashId(external) >> slot_shift_);
  while (true) {
    const uint32_t s = slots_[i];
    if (s == kEmptySlot || ext_[s] == external) return i;
    i = (i + 1) & mask;
  }
}

void IdDictionary::Rehash(size_t slots) {
  slots_.assign(slots, kEmptySlot);
  slots_.shrink_to_fit();
  slot_shift_ = 64 - __builtin_ctzll(slots);
  for (size_t id = 0; id < ext_.size(); id++) {
    slots_[Probe(ext_[id])] = static_cast<uint32_t>(id);
  }
}

void IdDictionary::Reserve(uint64_t n) {
  n = std::min(n, kMaxEntries);
  ext_.reserve(n);
  size_t slots = slots_.size();
  while (n * 10 > slots * 7) slots *= 2;
  if (slots != slots_.size()) Rehash(slots);
}

bool IdDictionary::Find(uint64_t external, VertexId* internal) const {
  const uint32_t s = slots_[Probe(external)];
  if (s == kEmptySlot) return false;
  *internal = s;
  return true;
}

Status IdDictionary::GetOrAdd(uint64_t external, VertexId* internal, bool* added) {
  size_t i = Probe(external);
  if (slots_[i] != kEmptySlot) {
    *internal = slots_[i];
    if (added != nullptr) *added = false;
    return Status::OK();
  }
  if (ext_.size() >= kMaxEntries) {
    return Status::InvalidArgument("ID dictionary is full (" + std::to_string(kMaxEntries) +
                                   " entries)");
  }
  // Invariant kept here: size * 10 <= slots * 7, so probing always meets an empty slot.
  if ((ext_.size() + 1) * 10 > slots_.size() * 7) {
    Rehash(slots_.size() * 2);
    i = Probe(external);
  }
  const uint32_t id = static_cast<uint32_t>(ext_.size());
  slots_[i] = id;
  ext_.push_back(external);
  *internal = id;
  if (added != nullptr) *added = true;
  return Status::OK();
}

size_t IdDictionary::MemoryBytes() const {
  return sizeof(*this) + ext_.capacity() * sizeof(uint64_t) +
         slots_.capacity() * sizeof(uint32_t) + path_.capacity();
}

Status IdDictionary::Open(const std::string& path, const IdDictionaryOptions& options,
                          std::unique_ptr<IdDictionary>* dict, IdDictionaryLoadInfo* info) {
  IdDictionaryLoadInfo local;
  if (info == nullptr) info = &local;
  *info = IdDictionaryLoadInfo();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (options.error_if_exists) {
      return Status::InvalidArgument(path + ": ID dictionary exists (error_if_exists)");
    }
  } else if (errno == ENOENT) {
    if (!options.create_if_missing || options.read_only) {
      return Status::NotFound(path + ": no ID dictionary");
    }
    Status s = WriteDictionaryAtomically(path, options.owner);
    if (!s.ok()) return s;
    info->created = true;
  } else {
    return ErrnoStatus(path, "stat");
  }

  std::unique_ptr<IdDictionary> d(new IdDictionary());
  d->path_ = path;
  d->options_ = options;
  d->fd_ = ::open(path.c_str(), (options.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (d->fd_ < 0) return ErrnoStatus(path, "open");
  Status s = d->Load(info);
  if (!s.ok()) return s;
  *dict = std::move(d);
  return Status::OK();
}

Status IdDictionary::Load(IdDictionaryLoadInfo* info) {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus(path_, "fstat");
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  // Reads through the descriptor's own offset, which nothing else uses (writes are pwrite).
  BufferedInput in(NewFdSource(fd_, path_), size_t{1} << 20);

  Status s = in.Ensure(kHeaderSize);
  if (!s.ok()) return s;
  const char* h = in.data();
  // Creation is atomic, so even an empty file is corrupt, not a torn creation.
  if (in.available() < kHeaderSize) {
    return Status::Corruption(path_ + ": truncated header at offset 0 (" +
                              std::to_string(in.available()) + " bytes)");
  }
  if (std::memcmp(h, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption(path_ + ": not an ID dictionary (bad magic at offset 0)");
  }
  if (LoadLE64(h + 16) != XXH64(h, 16, 0)) {
    return Status::Corruption(path_ + ": header checksum mismatch at offset 0");
  }
  const uint32_t version = LoadLE32(h + 8);
  if (version != kVersion || LoadLE32(h + 12) != 0) {
    return Status::NotSupported(path_ + ": ID dictionary version " + std::to_string(version) +
                                " (this build reads version " + std::to_string(kVersion) + ")");
  }
  in.Consume(kHeaderSize);

  uint64_t torn_at = UINT64_MAX;  // offset of the torn tail, if any
  uint64_t records = 0;
  while (true) {
    const uint64_t off = in.offset();
    const std::string at = " at offset " + std::to_string(off);
    s = in.Ensure(kRecordHeaderSize);
    if (!s.ok()) return s;
    if (in.available() == 0) break;
    if (in.available() < kRecordHeaderSize) {
      torn_at = off;
      break;
    }
    const char* r = in.data();
    if (LoadLE64(r + 24) != XXH64(r, 24, 0)) {
      bool zero = false;
      s = RestIsZero(&in, &zero);
      if (!s.ok()) return s;
      if (zero) {
        torn_at = off;
        break;
      }
      return Status::Corruption(path_ + ": record header checksum mismatch" + at);
    }
    const uint32_t count = LoadLE32(r);
    const uint32_t type = LoadLE32(r + 4);
    const uint64_t first = LoadLE64(r + 8);
    const uint64_t payload_sum = LoadLE64(r + 16);
    if (type == kOwnerRecord) {
      // Written with the header at creation: only there, once, and whole.
      if (off != kHeaderSize || count != 1 || first != 0) {
        return Status::Corruption(path_ + ": bad owner record" + at +
                                  " (only the first record, count 1, first 0)");
      }
      const size_t need = kRecordHeaderSize + 8;
      s = in.Ensure(need);
      if (!s.ok()) return s;
      if (in.available() < need) {
        return Status::Corruption(path_ + ": truncated owner record" + at);
      }
      const char* payload = in.data() + kRecordHeaderSize;
      if (XXH64(payload, 8, 0) != payload_sum || LoadLE64(payload) == 0) {
        return Status::Corruption(path_ + ": owner record payload checksum mismatch" + at);
      }
      info->owner = owner_ = LoadLE64(payload);
      in.Consume(need);
      continue;
    }
    if (type != kMappingRecord) {
      return Status::NotSupported(path_ + ": unknown record type " + std::to_string(type) + at);
    }
    if (count == 0 || count > kMaxRecordEntries) {
      return Status::Corruption(path_ + ": bad record" + at + " (count " +
                                std::to_string(count) + ")");
    }
    if (first != ext_.size()) {
      return Status::Corruption(path_ + ": record" + at + " starts at internal ID " +
                                std::to_string(first) + ", expected " +
                                std::to_string(ext_.size()));
    }
    if (ext_.size() + count > kMaxEntries) {
      return Status::Corruption(path_ + ": record" + at + " exceeds the maximum entries");
    }
    const size_t need = kRecordHeaderSize + size_t{count} * 8;
    s = in.Ensure(need);
    if (!s.ok()) return s;
    if (in.available() < need) {
      torn_at = off;
      break;
    }
    const char* payload = in.data() + kRecordHeaderSize;
    if (XXH64(payload, size_t{count} * 8, first) != payload_sum) {
      return Status::Corruption(path_ + ": record payload checksum mismatch" + at);
    }
    for (uint32_t j = 0; j < count; j++) {
      const uint64_t external = LoadLE64(payload + 8 * j);
      VertexId id;
      bool added = false;
      s = GetOrAdd(external, &id, &added);
      if (!s.ok()) return s;
      if (!added) {
        return Status::Corruption(path_ + ": external ID " + std::to_string(external) +
                                  " mapped twice (record" + at + ")");
      }
    }
    in.Consume(need);
    records++;
  }

  file_end_ = torn_at != UINT64_MAX ? torn_at : in.offset();
  if (torn_at != UINT64_MAX) {
    info->torn_bytes = torn_bytes_ = file_size - torn_at;
    if (!options_.read_only && options_.cut_torn_tail) {
      s = CutTornTail(&info->bytes_cut);
      if (!s.ok()) return s;
    }
  }
  persisted_ = ext_.size();
  info->entries = ext_.size();
  info->records = records;
  info->file_bytes = file_end_;
  return Status::OK();
}

Status IdDictionary::CutTornTail(uint64_t* bytes_cut) {
  if (bytes_cut != nullptr) *bytes_cut = 0;
  if (torn_bytes_ == 0 || fd_ < 0) return Status::OK();
  if (options_.read_only) {
    return Status::NotSupported(path_ + ": ID dictionary opened read-only; torn tail not cut");
  }
  // Appends continue from the last good record.
  if (::ftruncate(fd_, static_cast<off_t>(file_end_)) != 0) return ErrnoStatus(path_, "ftruncate");
  Status s = io::SyncFile(fd_, path_, file_end_, file_end_);
  if (!s.ok()) return s;
  if (bytes_cut != nullptr) *bytes_cut = torn_bytes_;
  torn_bytes_ = 0;
  return Status::OK();
}

Status IdDictionary::AddOwner(uint64_t owner) {
  if (fd_ < 0 || owner == 0 || owner_ != 0) return Status::OK();
  if (options_.read_only) {
    return Status::NotSupported(path_ + ": ID dictionary opened read-only; owner not added");
  }
  Status s = CutTornTail();
  if (!s.ok()) return s;
  // The records do not depend on their offsets (their checksums are seeded by their first
  // internal ID): the new file is the owner record put between the header and them.
  s = WriteDictionaryAtomically(path_, owner, fd_, kHeaderSize, file_end_);
  if (!s.ok()) return s;
  const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path_, "open");
  ::close(fd_);
  fd_ = fd;
  file_end_ += kRecordHeaderSize + 8;
  owner_ = owner;
  return Status::OK();
}

Status IdDictionary::Persist() {
  if (fd_ < 0) {
    persisted_ = ext_.size();
    return Status::OK();
  }
  if (persisted_ == ext_.size()) return Status::OK();
  if (options_.read_only) {
    return Status::NotSupported(path_ + ": ID dictionary opened read-only; " +
                                std::to_string(ext_.size() - persisted_) +
                                " new mappings not written");
  }
  const uint64_t pending = ext_.size() - persisted_;
  const uint64_t nrecords = (pending + kMaxRecordEntries - 1) / kMaxRecordEntries;
  std::string buf;
  buf.resize(nrecords * kRecordHeaderSize + pending * 8);
  char* p = buf.data();
  for (uint64_t first = persisted_; first < ext_.size();) {
    const uint32_t count =
        static_cast<uint32_t>(std::min<uint64_t>(kMaxRecordEntries, ext_.size() - first));
    char* payload = p + kRecordHeaderSize;
    for (uint32_t j = 0; j < count; j++) StoreLE64(payload + 8 * j, ext_[first + j]);
    StoreLE32(p, count);
    StoreLE32(p + 4, kMappingRecord);
    StoreLE64(p + 8, first);
    StoreLE64(p + 16, XXH64(payload, size_t{count} * 8, first));
    StoreLE64(p + 24, XXH64(p, 24, 0));
    p = payload + size_t{count} * 8;
    first += count;
  }
  Status s = CutTornTail();
  if (!s.ok()) return s;
  s = io::WriteFileAt(fd_, path_, file_end_, buf.data(), buf.size());
  if (s.ok() && options_.sync) s = io::SyncFile(fd_, path_, file_end_, file_end_ + buf.size());
  if (!s.ok()) return s;
  file_end_ += buf.size();
  persisted_ = ext_.size();
  return Status::OK();
}

}  // namespace strata::graphio
