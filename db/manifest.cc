#include "db/manifest.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "db/filename.h"
#include "segment/segment_format.h"
#include "util/coding.h"

namespace strata {

namespace {

constexpr char kMagic[] = "SGMANIF1";
constexpr uint32_t kChecksumKind = 0x4d;  // 'M'

enum Tag : uint8_t {
  kStoreInfo = 1,
  kNextFile = 2,
  kLastFlushed = 3,
  kNextVertex = 4,
  kAddFile = 5,
  kRemoveFile = 6,
  kAddLog = 7,
  kRemoveLog = 8,
  kListsLogs = 9,
  kKeepFiles = 10,
  kUnkeepFiles = 11,
  kKeptStamp = 12,  // 12 + KeptIndex: 12 VIEWS' stamp, 13 SUBSCRIPTIONS'
};

class Decoder {
 public:
  Decoder(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}
  bool Varint(uint64_t* v) {
    const char* q = DecodeVarint64(p_, end_, v);
    if (q == nullptr) return false;
    p_ = q;
    return true;
  }
  bool Byte(uint8_t* b) {
    if (p_ >= end_) return false;
    *b = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool Fixed64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    *v = DecodeFixed64(p_);
    p_ += 8;
    return true;
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace

void ManifestEdit::EncodeTo(std::string* dst) const {
  if (has_store_info) {
    dst->push_back(static_cast<char>(kStoreInfo));
    PutVarint64(dst, format_version);
    PutVarint64(dst, static_cast<uint64_t>(kind));
    PutVarint64(dst, weighted ? 1 : 0);
    if (format_version >= 2) PutVarint64(dst, store_id);
  }
  if (next_file_number) {
    dst->push_back(static_cast<char>(kNextFile));
    PutVarint64(dst, *next_file_number);
  }
  if (last_flushed_ts) {
    dst->push_back(static_cast<char>(kLastFlushed));
    PutVarint64(dst, *last_flushed_ts);
  }
  if (next_vertex_id) {
    dst->push_back(static_cast<char>(kNextVertex));
    PutVarint64(dst, *next_vertex_id);
  }
  for (const FileMeta& f : added) {
    dst->push_back(static_cast<char>(kAddFile));
    for (uint64_t v : {f.number, uint64_t{f.level}, f.size_bytes, f.min_src, f.max_src,
                       f.num_vertices, f.num_edges, f.max_ts, uint64_t{f.tag}}) {
      PutVarint64(dst, v);
    }
    PutFixed64(dst, f.tail_checksum);
  }
  for (uint64_t n : removed) {
    dst->push_back(static_cast<char>(kRemoveFile));
    PutVarint64(dst, n);
  }
  for (uint64_t n : logs_added) {
    dst->push_back(static_cast<char>(kAddLog));
    PutVarint64(dst, n);
  }
  for (uint64_t n : logs_removed) {
    dst->push_back(static_cast<char>(kRemoveLog));
    PutVarint64(dst, n);
  }
  if (lists_logs) dst->push_back(static_cast<char>(kListsLogs));
  if (kept_files_set != 0) {
    dst->push_back(static_cast<char>(kKeepFiles));
    PutVarint64(dst, kept_files_set);
  }
  if (kept_files_clear != 0) {
    dst->push_back(static_cast<char>(kUnkeepFiles));
    PutVarint64(dst, kept_files_clear);
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!kept_stamps[i]) continue;
    dst->push_back(static_cast<char>(kKeptStamp + i));
    PutVarint64(dst, *kept_stamps[i]);
  }
}

Status ManifestEdit::DecodeFrom(std::string_view src, const std::string& where) {
  *this = ManifestEdit();
  Decoder d(src);
  auto bad = [&](const char* what) {
    return Status::Corruption(where + ": manifest record: " + what);
  };
  while (!d.done()) {
    uint8_t tag = 0;
    d.Byte(&tag);
    uint64_t a, b, c;
    switch (tag) {
      case kStoreInfo:
        if (!d.Varint(&a) || !d.Varint(&b) || !d.Varint(&c) || b > 2 || c > 1) {
          return bad("bad store info");
        }
        has_store_info = true;
        format_version = static_cast<uint32_t>(a);
        kind = static_cast<GraphKind>(b);
        weighted = c != 0;
        if (format_version != kStoreFormatVersion) {
          // Version 1 has no store ID and shorter file entries: refused, not misread.
          return Status::NotSupported(
              where + ": store format version " + std::to_string(format_version) +
              "; this build reads version " + std::to_string(kStoreFormatVersion) +
              " only (export the store with the build that wrote it and ingest it again)");
        }
        if (!d.Varint(&store_id)) return bad("bad store id");
        break;
      case kNextFile:
        if (!d.Varint(&a)) return bad("bad next file number");
        next_file_number = a;
        break;
      case kLastFlushed:
        if (!d.Varint(&a)) return bad("bad last flushed timestamp");
        last_flushed_ts = a;
        break;
      case kNextVertex:
        if (!d.Varint(&a)) return bad("bad next vertex id");
        next_vertex_id = a;
        break;
      case kAddFile: {
        uint64_t v[9];
        for (uint64_t& x : v) {
          if (!d.Varint(&x)) return bad("bad file entry");
        }
        if (v[8] > 1) return bad("bad file tag");
        uint64_t sum = 0;
        if (!d.Fixed64(&sum)) return bad("bad file entry checksum");
        FileMeta f{v[0], static_cast<uint32_t>(v[1]), v[2], v[3], v[4], v[5], v[6], v[7],
                   static_cast<uint32_t>(v[8]), sum};
        added.push_back(f);
        break;
      }
      case kRemoveFile:
        if (!d.Varint(&a)) return bad("bad removed file");
        removed.push_back(a);
        break;
      case kAddLog:
        if (!d.Varint(&a)) return bad("bad added log");
        logs_added.push_back(a);
        break;
      case kRemoveLog:
        if (!d.Varint(&a)) return bad("bad removed log");
        logs_removed.push_back(a);
        break;
      case kListsLogs:
        lists_logs = true;
        break;
      case kKeepFiles:
      case kUnkeepFiles:
        if (!d.Varint(&a) || a > 0xffffffffu) return bad("bad kept files");
        (tag == kKeepFiles ? kept_files_set : kept_files_clear) = static_cast<uint32_t>(a);
        break;
      case kKeptStamp:
      case kKeptStamp + 1:
        if (!d.Varint(&a)) return bad("bad kept file stamp");
        kept_stamps[tag - kKeptStamp] = a;
        break;
      default:
        return bad("unknown tag");
    }
  }
  return Status::OK();
}

Status ManifestEdit::ApplyTo(StoreState* st, const std::string& where) const {
  if (has_store_info) {
    st->format_version = format_version;
    st->kind = kind;
    st->weighted = weighted;
    st->store_id = store_id;
  }
  if (next_file_number) st->next_file_number = *next_file_number;
  if (last_flushed_ts) st->last_flushed_ts = *last_flushed_ts;
  if (next_vertex_id) st->next_vertex_id = *next_vertex_id;
  for (uint64_t n : removed) {
    if (st->files.erase(n) == 0) {
      return Status::Corruption(where + ": manifest removes unknown file " + std::to_string(n));
    }
  }
  for (const FileMeta& f : added) {
    if (!st->files.emplace(f.number, f).second) {
      return Status::Corruption(where + ": manifest adds file " + std::to_string(f.number) +
                                " twice");
    }
    if (f.number >= st->next_file_number) st->next_file_number = f.number + 1;
  }
  if (lists_logs) st->lists_logs = true;
  st->kept_files = (st->kept_files & ~kept_files_clear) | kept_files_set;
  for (size_t i = 0; i < 2; ++i) {
    if (kept_stamps[i]) st->kept_stamps[i] = *kept_stamps[i];
  }
  for (uint64_t n : logs_removed) st->logs.erase(n);
  for (uint64_t n : logs_added) {
    if (!st->logs.insert(n).second) {
      return Status::Corruption(where + ": manifest lists log " + std::to_string(n) + " twice");
    }
  }
  return Status::OK();
}

ManifestEdit ManifestEdit::FullState(const StoreState& s) {
  ManifestEdit e;
  e.has_store_info = true;
  e.format_version = s.format_version;
  e.kind = s.kind;
  e.weighted = s.weighted;
  e.store_id = s.store_id;
  e.next_file_number = s.next_file_number;
  e.last_flushed_ts = s.last_flushed_ts;
  e.next_vertex_id = s.next_vertex_id;
  for (const auto& [n, f] : s.files) e.added.push_back(f);
  e.logs_added.assign(s.logs.begin(), s.logs.end());
  e.lists_logs = s.lists_logs;
  e.kept_files_set = s.kept_files;
  for (size_t i = 0; i < 2; ++i) {
    if (s.kept_stamps[i] != 0) e.kept_stamps[i] = s.kept_stamps[i];
  }
  return e;
}

Status Manifest::WriteNew(io::Env* env, const std::string& dir, const StoreState& state_in,
                          std::unique_ptr<Manifest>* out) {
  StoreState state = state_in;
  std::unique_ptr<Manifest> m(new Manifest(env, dir));
  m->number_ = state.next_file_number++;
  m->path_ = ManifestFilePath(dir, m->number_);
  Status s = env->NewWritableFile(m->path_, &m->file_);
  if (s.ok()) s = RecordWriter::Create(m->file_.get(), kMagic, kStoreFormatVersion, kChecksumKind,
                                       &m->writer_);
  std::string rec;
  ManifestEdit::FullState(state).EncodeTo(&rec);
  if (s.ok()) s = m->writer_->Add(rec);
  if (s.ok()) s = m->writer_->Sync();
  if (s.ok()) s = env->SyncDir(dir);
  // Switch CURRENT atomically.
  const std::string tmp = TempFilePath(CurrentFilePath(dir));
  if (s.ok()) {
    std::unique_ptr<io::WritableFile> cur;
    s = env->NewWritableFile(tmp, &cur);
    std::string name = m->path_.substr(dir.size() + 1) + "\n";
    if (s.ok()) s = cur->Append(name);
    if (s.ok()) s = cur->Sync();
    if (s.ok()) s = cur->Close();
  }
  if (s.ok()) s = env->RenameFile(tmp, CurrentFilePath(dir));
  if (s.ok()) s = env->SyncDir(dir);
  if (!s.ok()) return s;
  m->state_ = std::move(state);
  *out = std::move(m);
  return Status::OK();
}

Status Manifest::Create(io::Env* env, const std::string& dir, const StoreState& initial,
                        std::unique_ptr<Manifest>* out) {
  return WriteNew(env, dir, initial, out);
}

Status Manifest::ReadOnly(io::Env* env, const std::string& dir, StoreState* state,
                          RecordLogTail* tail, std::string* manifest_path) {
  std::unique_ptr<io::RandomAccessFile> cur;
  Status s = env->NewRandomAccessFile(CurrentFilePath(dir), &cur);
  if (!s.ok()) return s;
  std::string name(cur->Size(), '\0');
  s = cur->Read(0, name.size(), name.data());
  if (!s.ok()) return s;
  FileType type;
  uint64_t number;
  if (name.empty() || name.back() != '\n' || name.find('/') != std::string::npos ||
      !ParseFileName(name.substr(0, name.size() - 1), &type, &number) ||
      type != FileType::kManifest) {
    return io::CorruptionAt(CurrentFilePath(dir), 0, "CURRENT does not name a manifest");
  }
  name.pop_back();
  const std::string path = dir + "/" + name;
  if (manifest_path) *manifest_path = path;
  StoreState st;
  bool first = true;
  s = ReadRecordLog(env, path, kMagic, nullptr, kChecksumKind,
                    [&](std::string_view payload, uint64_t offset) {
                      const std::string where =
                          "file " + path + " offset " + std::to_string(offset);
                      ManifestEdit e;
                      Status d = e.DecodeFrom(payload, where);
                      if (!d.ok()) return d;
                      if (first && !e.has_store_info) {
                        return Status::Corruption(where + ": first record lacks store info");
                      }
                      first = false;
                      return e.ApplyTo(&st, where);
                    },
                    tail);
  if (!s.ok()) return s;
  if (first) return io::CorruptionAt(path, kRecordLogHeaderSize, "manifest holds no record");
  *state = std::move(st);
  return Status::OK();
}

Status Manifest::Recover(io::Env* env, const std::string& dir, StoreState* state,
                         RecordLogTail* tail, std::unique_ptr<Manifest>* out) {
  std::string old_path;
  StoreState st;
  Status s = ReadOnly(env, dir, &st, tail, &old_path);
  if (!s.ok()) return s;
  if (tail->cut_bytes != 0 && tail->whole_damaged) {
    // Written to its last byte, every sector of it, and still wrong: the record was synced
    // (the log files or segments it made obsolete may be gone), and cutting it would lose
    // them. Refuse before the rewrite below replaces the only copy.
    return io::CorruptionAt(old_path, tail->valid_bytes,
                            "the last record is damaged, not torn: all of it was written (no "
                            "zero-filled sector) and its checksum fails");
  }
  if (tail->cut_bytes != 0) {
    // A torn tail is a record that was never synced, so no file it made obsolete was deleted:
    // every file of the state before it still exists. A missing one means the last record was
    // whole and is damaged. Stop before the rewrite below replaces the only copy.
    for (const auto& [num, meta] : st.files) {
      const std::string seg = SegmentFileName(num);
      if (!env->FileExists(StoreFilePath(dir, seg))) {
        return io::CorruptionAt(old_path, tail->valid_bytes,
                                "the last record is damaged, not torn: without it the manifest "
                                "names " + seg + ", which is gone (" + tail->reason + ")");
      }
    }
    for (uint64_t num : st.logs) {
      const std::string log = WalFileName(num);
      if (!env->FileExists(StoreFilePath(dir, log))) {
        return io::CorruptionAt(old_path, tail->valid_bytes,
                                "the last record is damaged, not torn: without it the manifest "
                                "lists " + log + ", which is gone (" + tail->reason + ")");
      }
    }
  }
  s = WriteNew(env, dir, st, out);
  if (!s.ok()) return s;
  env->RemoveFile(old_path);  // best effort: CURRENT no longer names it
  *state = (*out)->state();
  return Status::OK();
}

uint64_t Manifest::NewStoreId() {
  std::random_device rd;
  uint64_t id = 0;
  while (id == 0) {
    id = (uint64_t{rd()} << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  }
  return id;
}

Status Manifest::LogAndApply(ManifestEdit edit, const std::function<Status()>& precheck) {
  std::lock_guard<std::mutex> g(mu_);
  if (precheck) {
    Status p = precheck();
    if (!p.ok()) return p;
  }
  StoreState next = state_;
  Status s = edit.ApplyTo(&next, path_);
  if (!s.ok()) return s;
  std::string rec;
  edit.EncodeTo(&rec);
  s = writer_->Add(rec);
  if (s.ok()) s = writer_->Sync();
  if (!s.ok()) return s;
  state_ = std::move(next);
  return Status::OK();
}

StoreState Manifest::state() const {
  std::lock_guard<std::mutex> g(mu_);
  return state_;
}

}  // namespace strata
