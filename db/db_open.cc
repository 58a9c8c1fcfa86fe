// DBImpl's open and recovery: the directory lock, the manifest, the segments, the multi-level
// index, WAL replay (see db_impl.h).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <string>

#include "db/db_impl.h"
#include "db/filename.h"
#include "db/kept_files.h"
#include "util/buffer_pool.h"
#include "util/radix_sort.h"

namespace strata {

Status DBImpl::LockDir() {
  const int how = (options_.read_only ? LOCK_SH : LOCK_EX) | LOCK_NB;
  auto busy = [&] {
    return Status::Busy("store '" + path_ + "' is already open (its LOCK is held by another process)");
  };
  // The directory's own lock: LOCK can be unlinked (and recreated) while its holder runs, the
  // directory cannot while it holds the store. The caller closes the descriptors on failure.
  dir_fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) return io::IOErrorAt(path_, 0, std::string("open directory: ") + strerror(errno));
  if (::flock(dir_fd_, how) != 0) {
    if (errno == EWOULDBLOCK) return busy();
    return io::IOErrorAt(path_, 0, std::string("flock: ") + strerror(errno));
  }
  const std::string p = LockFilePath(path_);
  if (options_.read_only) {
    lock_fd_ = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (lock_fd_ < 0 && errno == ENOENT) return Status::OK();  // nothing to share
  } else {
    lock_fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  }
  if (lock_fd_ < 0) return io::IOErrorAt(p, 0, std::string("open: ") + strerror(errno));
  // LOCK too, for openers that lock only it (builds before the directory lock).
  if (::flock(lock_fd_, how) != 0) {
    if (errno == EWOULDBLOCK) return busy();
    return io::IOErrorAt(p, 0, std::string("flock: ") + strerror(errno));
  }
  if (options_.read_only) return Status::OK();
  struct stat st;
  if (::fstat(lock_fd_, &st) != 0) return io::IOErrorAt(p, 0, std::string("fstat: ") + strerror(errno));
  lock_dev_ = static_cast<uint64_t>(st.st_dev);
  lock_ino_ = static_cast<uint64_t>(st.st_ino);
  return CheckLock();  // the file locked is still the one the path names
}

Status DBImpl::CheckLock() const {
  const std::string p = LockFilePath(path_);
  struct stat st;
  if (::stat(p.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_dev) != lock_dev_ ||
      static_cast<uint64_t>(st.st_ino) != lock_ino_) {
    return io::IOErrorAt(p, 0,
                         "LOCK was removed or replaced while the store was open (this process "
                         "holds its lock on another file; another process may have opened the "
                         "store): refusing to write the manifest");
  }
  return Status::OK();
}

Status DBImpl::PrepareCreate() {
  std::vector<std::string> names;
  Status s = env_->GetChildren(path_, &names);
  if (!s.ok()) return s;
  // ClassifyFileWithoutCurrent (db/filename.h) is the one list; strata ingest asks it too.
  for (const std::string& n : names) {
    if (ClassifyFileWithoutCurrent(n) == FileWithoutCurrent::kStoreData) {
      return io::CorruptionAt(StoreFilePath(path_, n), 0,
                              "the directory has no CURRENT but holds store files (CURRENT lost?); "
                              "refusing to create a new store over them");
    }
  }
  // A first open that failed before CURRENT was renamed into place leaves a manifest (maybe
  // partial) and temporary files, nothing a store needs: removed, then the store is created.
  for (const std::string& n : names) {
    if (RemovedOnCreate(n)) {
      s = env_->RemoveFile(StoreFilePath(path_, n));
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

Status DBImpl::CheckSegment(const SegmentReader& r, const std::string& path,
                            const FileMeta& f) const {
  const SegmentHeader& h = r.header();
  const uint64_t hoff = r.file_size() >= kFooterSize + kHeaderSize
                            ? r.file_size() - kFooterSize - kHeaderSize
                            : 0;
  auto bad = [&](uint64_t off, const std::string& what) {
    return io::CorruptionAt(path, off, what + " (the manifest's entry for " +
                                           SegmentFileName(f.number) + ")");
  };
  auto differs = [&](const char* what, uint64_t got, uint64_t want) {
    return std::string(what) + " " + std::to_string(got) + ", the manifest records " +
           std::to_string(want);
  };
  if (h.store_id != store_id_) {
    return io::CorruptionAt(path, hoff + 120, io::AnotherStore("segment", h.store_id, store_id_));
  }
  if (h.file_number != f.number) {
    return bad(hoff + 16, "segment was written as " + SegmentFileName(h.file_number) +
                              ", not under this name");
  }
  if (r.file_size() != f.size_bytes) return bad(r.file_size(), differs("file size", r.file_size(), f.size_bytes));
  // A file keeps the level it was written at; a move (Options::compaction_moves) takes a file
  // of level >= 1 deeper by a manifest edit alone, never up, and never a level-0 file.
  if (h.level == 0 ? f.level != 0 : f.level < h.level) {
    return bad(hoff + 8, differs("level", h.level, f.level) +
                             (h.level == 0 ? "" : " (a file only moves down)"));
  }
  if (h.user_tag != f.tag) return bad(hoff + 116, differs("adjacency tag", h.user_tag, f.tag));
  if (h.num_vertices != f.num_vertices) {
    return bad(hoff + 40, differs("vertex entries", h.num_vertices, f.num_vertices));
  }
  if (h.num_edges != f.num_edges) return bad(hoff + 48, differs("edge entries", h.num_edges, f.num_edges));
  if (h.min_src != f.min_src || h.max_src != f.max_src) {
    return bad(hoff + 64, differs("min source", h.min_src, f.min_src) + "; " +
                              differs("max source", h.max_src, f.max_src));
  }
  if (h.timestamp != f.max_ts) return bad(hoff + 24, differs("timestamp", h.timestamp, f.max_ts));
  if (r.tail_checksum() != f.tail_checksum) {
    return bad(hoff, "metadata checksum " + std::to_string(r.tail_checksum()) +
                         " differs from the manifest's " + std::to_string(f.tail_checksum) +
                         " (another file under this name)");
  }
  return Status::OK();
}

Status DBImpl::OpenSegments(const std::vector<FileMeta>& files,
                            std::vector<std::shared_ptr<SegmentHandle>>* out,
                            compaction::FlushResult* flushed) {
  for (size_t k = 0; k < files.size(); ++k) {
    const FileMeta& f = files[k];
    auto h = std::make_shared<SegmentHandle>();
    h->env = env_;
    h->cache = cache_;
    h->meta = f;
    h->path = SegmentFilePath(path_, f.number);
    SegmentReaderOptions ro;
    ro.cache = cache_.get();
    std::unique_ptr<SegmentReader> reader;
    Status s = SegmentReader::Open(env_.get(), h->path, ro, &reader);
    if (!s.ok() && !env_->FileExists(h->path)) {
      return Status::Corruption("file " + h->path + ": missing; the manifest names this segment " +
                                "(level " + std::to_string(f.level) + ", " +
                                std::to_string(f.num_edges) + " edge entries); restore it (" +
                                s.ToString() + ")");
    }
    if (!s.ok()) return s;
    h->reader = std::move(reader);
    s = CheckSegment(*h->reader, h->path, f);
    if (!s.ok()) return s;
    if (f.level == 0 && index_reads_) {  // the presence serves reads through the index
      if (flushed != nullptr && k < flushed->presence_known.size() && flushed->presence_known[k]) {
        h->presence = std::move(flushed->presence[k]);
      } else {
        s = index::L0Presence::Build(*h->reader, &h->presence);
        if (!s.ok()) return s;
      }
    }
    out->push_back(std::move(h));
  }
  return Status::OK();
}

Status DBImpl::NewLog(std::unique_ptr<WriteAheadLog>* log) {
  std::unique_ptr<WriteAheadLog> made;
  Status s = WriteAheadLog::Create(env_.get(), path_, next_file_.fetch_add(1), store_id_,
                                   options_.wal, &made);
  if (!s.ok()) return s;
  ManifestEdit edit;
  edit.logs_added.push_back(made->number());
  s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
  if (!s.ok()) {
    // Unlisted, it would only be replayed (empty); removed so that it is not left behind.
    const std::string p = made->path();
    made->Close();
    env_->RemoveFile(p);
    return s;
  }
  *log = std::move(made);
  return Status::OK();
}

void DBImpl::RecordKeptFile(uint32_t bit, uint64_t stamp) {
  if (manifest_ == nullptr) return;
  assert(stamp == 0 || KeptFileHasStamp(bit));
  // Only a file with a stamp has a slot in kept_stamps_ (KeptIndex).
  std::atomic<uint64_t>* recorded = stamp != 0 ? &kept_stamps_[KeptIndex(bit)] : nullptr;
  const bool kept = (kept_files_.load(std::memory_order_acquire) & bit) != 0;
  if (kept && (recorded == nullptr || stamp <= recorded->load(std::memory_order_acquire))) return;
  ManifestEdit edit;
  edit.kept_files_set = bit;
  if (stamp != 0) edit.kept_stamps[KeptIndex(bit)] = stamp;
  Status s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
  if (!s.ok()) {
    Log(std::string("manifest: recording ") + KeptFileName(bit) + " (stamp " +
        std::to_string(stamp) + ") failed (" + s.ToString() + "); retried at its next write");
    return;
  }
  kept_files_.fetch_or(bit, std::memory_order_acq_rel);
  if (recorded != nullptr) recorded->store(stamp, std::memory_order_release);
}

Status DBImpl::CheckKeptStamp(uint32_t bit, uint64_t loaded) {
  // A missing kept file was refused, or its stamp cleared by a repair, in CheckKeptFiles.
  std::atomic<uint64_t>& recorded = kept_stamps_[KeptIndex(bit)];
  const uint64_t want = recorded.load(std::memory_order_acquire);
  if (loaded >= want) return Status::OK();
  const std::string what = KeptFileOlder(path_, bit, loaded, want);
  if (!options_.repair) {
    return Status::Corruption("file " + what +
                              " (restored?); restore the newest copy, or open with "
                              "Options::repair (strata repair) to go on with this one");
  }
  Log("repair: " + what + "; going on with it");
  recorded.store(loaded, std::memory_order_release);
  if (options_.read_only) return Status::OK();
  ManifestEdit lower;
  lower.kept_stamps[KeptIndex(bit)] = loaded;
  return manifest_->LogAndApply(lower, [this] { return CheckLock(); });
}

void DBImpl::RecordFoundKeptFiles() {
  if (options_.read_only) return;
  bool synced = false;
  for (uint32_t bit : kKeptFileBits) {
    if ((kept_files_.load(std::memory_order_acquire) & bit) != 0) continue;
    if (!env_->FileExists(StoreFilePath(path_, KeptFileName(bit)))) continue;
    // A file another writer made (the CLI's IDDICT) is recorded only once its directory entry
    // is durable: recorded while a power loss could still undo its creation, it would make the
    // store refuse to open ("missing; the manifest records ..."). Not recorded now, it is at
    // the next open that finds it.
    if (!synced && !env_->SyncDir(path_).ok()) return;
    synced = true;
    RecordKeptFile(bit, 0);
  }
}

Status DBImpl::CheckKeptFiles(const StoreState& st) {
  kept_files_.store(st.kept_files, std::memory_order_release);
  for (uint32_t bit : kKeptFileBits) {
    if (KeptFileHasStamp(bit)) {
      kept_stamps_[KeptIndex(bit)].store(st.kept_stamps[KeptIndex(bit)],
                                         std::memory_order_release);
    }
    const std::string path = StoreFilePath(path_, KeptFileName(bit));
    const bool here = env_->FileExists(path);
    if ((st.kept_files & bit) == 0) continue;  // recorded below if it is here
    if (here) continue;
    if (!options_.repair || !KeptFileRepairable(bit)) {
      return Status::Corruption("file " + KeptFileMissing(path_, bit));
    }
    Log("repair: " + path + " is missing; going on without " + KeptFileContents(bit));
    // The file will hold changes from now on only: the stamp recorded goes too.
    kept_stamps_[KeptIndex(bit)].store(0, std::memory_order_release);
    if (!options_.read_only) {
      ManifestEdit edit;
      edit.kept_files_clear = bit;
      edit.kept_stamps[KeptIndex(bit)] = 0;
      Status s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
      if (!s.ok()) return s;
      kept_files_.fetch_and(~bit, std::memory_order_acq_rel);
    }
  }
  RecordFoundKeptFiles();
  return Status::OK();
}

Status DBImpl::UnlistLogs(const std::vector<std::string>& paths) {
  if (paths.empty()) return Status::OK();
  ManifestEdit edit;
  for (const std::string& p : paths) edit.logs_removed.push_back(WalNumberOfPath(p));
  return manifest_->LogAndApply(edit, [this] { return CheckLock(); });
}

Status DBImpl::OpenDisk() {
  const char* reads_env = std::getenv("STRATA_VERTEX_INDEX_READS");
  index_reads_ = options_.vertex_index_reads &&
                 !(reads_env != nullptr && std::string(reads_env) == "0");
  std::unique_ptr<io::Env> env;
  // The store's I/O buffers come out of its I/O reserve (db/memory_plan.h): a file's write
  // buffer is one writer extent (1 MiB from a 256 MiB budget up, 64 KiB at 16 MiB), and the
  // buffers kept between files are bounded by the reserve.
  io::EnvOptions eo;
  eo.backend = options_.io_backend;
  eo.write_buffer = WriterExtent(options_);
  Status s = io::Env::Open(eo, &env);
  if (!s.ok()) return s;
  env_ = std::move(env);
  LimitBufferPool(IoReserve(options_));
  cache_ = std::make_shared<BlockCache>(kMinBlockCache);
  if (!env_->FileExists(path_)) {
    if (!options_.create_if_missing || options_.read_only) {
      return Status::NotFound("store directory '" + path_ + "' does not exist");
    }
    s = env_->CreateDir(path_);
    if (!s.ok()) return s;
  }
  s = LockDir();
  if (!s.ok()) return s;

  StoreState st;
  std::string manifest_tail;  // a torn manifest tail, reported once the event log is open
  if (env_->FileExists(CurrentFilePath(path_))) {
    if (options_.error_if_exists) {
      return Status::InvalidArgument("store '" + path_ + "' already exists (error_if_exists)");
    }
    RecordLogTail tail;
    if (options_.read_only) {
      // The manifest as it is: a torn tail is left for the next writable open to cut.
      std::string mpath;
      s = Manifest::ReadOnly(env_.get(), path_, &st, &tail, &mpath);
      if (s.ok() && tail.cut_bytes != 0 && tail.whole_damaged) {
        s = io::CorruptionAt(mpath, tail.valid_bytes,
                             "the last record is damaged, not torn: all of it was written (no "
                             "zero-filled sector) and its checksum fails");
      }
      // A crashed (or short, on a full disk) edit never acknowledged: Verify does not count it.
      if (s.ok() && tail.cut_bytes != 0) torn_at_open_[mpath] = tail.valid_bytes;
    } else {
      s = Manifest::Recover(env_.get(), path_, &st, &tail, &manifest_);
    }
    if (!s.ok()) return s;
    if (st.format_version != kStoreFormatVersion) {
      return Status::NotSupported("store format version " + std::to_string(st.format_version));
    }
    if (st.kind != options_.graph_kind || st.weighted != options_.weighted) {
      return Status::InvalidArgument(
          std::string("graph kind mismatch: the store is ") + GraphKindName(st.kind) +
          (st.weighted ? ", weighted" : ", unweighted") + "; the options say " +
          GraphKindName(options_.graph_kind) + (options_.weighted ? ", weighted" : ", unweighted"));
    }
    if (tail.cut_bytes != 0) manifest_tail = "manifest: cut torn tail: " + tail.reason;
  } else {
    if (!options_.create_if_missing || options_.read_only) {
      return Status::NotFound("no store at '" + path_ + "' (no CURRENT file)");
    }
    s = PrepareCreate();
    if (!s.ok()) return s;
    st.kind = options_.graph_kind;
    st.weighted = options_.weighted;
    st.store_id = Manifest::NewStoreId();
    st.lists_logs = true;
    s = Manifest::Create(env_.get(), path_, st, &manifest_);
    if (!s.ok()) return s;
    st = manifest_->state();
  }

  store_id_ = st.store_id;
  // Event log: the previous one is kept as LOG.old. A read-only open keeps none.
  if (!options_.read_only) {
    if (env_->FileExists(EventLogPath(path_))) env_->RenameFile(EventLogPath(path_), OldEventLogPath(path_));
    env_->NewWritableFile(EventLogPath(path_), &event_log_);
  }
  Log(std::string("open: kind=") + GraphKindName(st.kind) + " weighted=" +
      (st.weighted ? "1" : "0") + " files=" + std::to_string(st.files.size()) +
      " last_flushed_ts=" + std::to_string(st.last_flushed_ts) + " io=" + env_->BackendName());
  if (!manifest_tail.empty()) Log(manifest_tail);

  // File numbers continue past everything in the directory (logs are numbered too).
  uint64_t next = st.next_file_number;
  std::vector<std::string> names;
  s = env_->GetChildren(path_, &names);
  if (!s.ok()) return s;
  for (const std::string& n : names) {
    FileType type;
    uint64_t num;
    if (ParseFileName(n, &type, &num) && (type == FileType::kWal || type == FileType::kSegment)) {
      next = std::max(next, num + 1);
    }
  }
  next_file_ = next;

  auto v = std::make_shared<Version>();
  v->memgraphs.push_back(NewMemGraph());
  std::vector<FileMeta> metas;
  for (const auto& [num, meta] : st.files) metas.push_back(meta);
  std::vector<std::shared_ptr<SegmentHandle>> opened;
  s = OpenSegments(metas, &opened);
  if (!s.ok()) return s;
  for (const auto& h : opened) {
    const FileMeta& meta = h->meta;
    if (meta.level == 0) {
      v->l0[meta.tag].push_back(h);
    } else {
      auto& levels = v->levels[meta.tag];
      if (levels.size() < meta.level) levels.resize(meta.level);
      levels[meta.level - 1].push_back(h);
    }
  }
  for (auto& levels : v->levels) {
    for (auto& l : levels) {
      std::sort(l.begin(), l.end(), [](const auto& a, const auto& b) {
        return a->meta.min_src < b->meta.min_src;
      });
    }
  }
  for (auto& l : v->l0) {
    std::sort(l.begin(), l.end(), [](const auto& a, const auto& b) {
      return a->meta.number > b->meta.number;
    });
  }
  // Recovery order: manifest -> segments -> multi-level index -> WAL replay.
  s = RebuildIndex(v.get());
  if (!s.ok()) return s;
  v->index_reads = index_reads_;
  versions_.Reset(v);
  core_->clock.ResetTo(st.last_flushed_ts);
  next_id_ = st.next_vertex_id;

  UpdateMemoryPlan();
  s = CheckKeptFiles(st);
  if (!s.ok()) return s;
  s = RecoverLogs(st);
  if (!s.ok()) return s;
  // Leftovers go only once the logs are found whole: a store refused for a missing log (say,
  // its manifest replaced by an older copy, which no longer names the last flush's segments)
  // keeps every file for its repair. The replay applies to the active memgraph only (no flush):
  // `st` still names every segment.
  if (!options_.read_only) RemoveObsoleteFiles(st);
  // Views after the logs: the clock continues past every view change too (a definition
  // committed after the last logged batch, or whose batches a WAL mode without sync lost).
  Timestamp views_ts = 0;
  s = views_.Load(env_.get(), path_, store_id_, &views_ts);
  if (!s.ok()) return s;
  // Before the logged change is applied: the log may hold the newest change an older copy
  // lacks, but not the ones before it.
  s = CheckKeptStamp(kKeptViews, views_ts);
  if (!s.ok()) return s;
  s = RecoverViewChange(&views_ts);
  if (!s.ok()) return s;
  // A VIEWS from before files named their store: named from now on (once the checks passed).
  if (!options_.read_only) s = views_.AddOwner();
  if (!s.ok()) return s;
  if (views_ts > core_->clock.read_ts()) core_->clock.ResetTo(views_ts);
  if (options_.read_only) return Status::OK();  // no log of its own, no background work
  if (options_.wal != WalMode::kOff) {
    s = NewLog(&wal_);
    if (!s.ok()) return s;
  }
  flush_thread_ = std::thread([this] { FlushLoop(); });
  if (options_.background_compaction) compact_thread_ = std::thread([this] { CompactLoop(); });
  return Status::OK();
}

void DBImpl::RemoveObsoleteFiles(const StoreState& st) {
  std::vector<std::string> names;
  if (!env_->GetChildren(path_, &names).ok()) return;
  for (const std::string& n : names) {
    FileType type;
    uint64_t num;
    if (!ParseFileName(n, &type, &num)) continue;
    bool stale = false;
    if (type == FileType::kSegment) stale = st.files.count(num) == 0;  // an unfinished flush
    if (type == FileType::kTemp) stale = true;
    if (type == FileType::kManifest && StoreFilePath(path_, n) != manifest_->path()) stale = true;
    if (stale) {
      env_->RemoveFile(StoreFilePath(path_, n));
      Log("open: removed leftover file " + n);
    }
  }
}

Status DBImpl::TruncateLog(const std::string& path, uint64_t bytes) {
  std::unique_ptr<io::RandomAccessFile> in;
  Status s = env_->NewRandomAccessFile(path, &in);
  if (!s.ok()) return s;
  std::string data(bytes, '\0');
  s = in->Read(0, bytes, data.data());
  if (!s.ok()) return s;
  const std::string tmp = TempFilePath(path);
  std::unique_ptr<io::WritableFile> out;
  s = env_->NewWritableFile(tmp, &out);
  if (s.ok()) s = out->Append(data);
  if (s.ok()) s = out->Sync();
  if (s.ok()) s = out->Close();
  if (s.ok()) s = env_->RenameFile(tmp, path);
  if (s.ok()) s = env_->SyncDir(path_);
  return s;
}

Status DBImpl::RecoverLogs(const StoreState& st) {
  std::vector<std::string> names;
  Status s = env_->GetChildren(path_, &names);
  if (!s.ok()) return s;
  std::vector<std::pair<uint64_t, std::string>> logs;
  for (const std::string& n : names) {
    FileType type;
    uint64_t num;
    if (ParseFileName(n, &type, &num) && type == FileType::kWal) {
      logs.push_back({num, StoreFilePath(path_, n)});
    }
  }
  std::sort(logs.begin(), logs.end());
  // Every log the manifest lists must be here (db/manifest.h, "Logs"): one that is gone held
  // acknowledged batches, so opening without it would answer without them.
  std::vector<uint64_t> dropped;
  for (uint64_t num : st.logs) {
    const bool here = std::binary_search(
        logs.begin(), logs.end(), std::make_pair(num, WalFilePath(path_, num)));
    if (here) continue;
    if (!options_.repair) {
      return Status::Corruption(
          "file " + WalFilePath(path_, num) +
          ": missing; the manifest lists this log as holding batches newer than the last "
          "flush (ts " + std::to_string(st.last_flushed_ts) +
          "), which are lost without it; restore it, or open with Options::repair "
          "(strata repair) to go on without them");
    }
    dropped.push_back(num);
    Log("repair: log " + WalFilePath(path_, num) +
        " listed in the manifest is missing; its batches are lost");
  }
  if (!dropped.empty() && !options_.read_only) {
    ManifestEdit edit;
    edit.logs_removed = dropped;
    s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
    if (!s.ok()) return s;
  }
  std::vector<std::pair<Timestamp, WriteBatch>> records;
  for (const auto& [num, p] : logs) {
    RecordLogTail tail;
    const size_t records_before = records.size();
    s = WriteAheadLog::Replay(env_.get(), p, store_id_,
                              [&](std::string_view rec, uint64_t off) -> Status {
                                Timestamp ts;
                                WriteBatch b;
                                std::string_view view_rec;
                                Status d = DecodeLogRecord(rec, options_.weighted, &ts, &b, &view_rec);
                                if (!d.ok()) {
                                  return io::CorruptionAt(p, off, d.message());
                                }
                                if (!view_rec.empty()) {
                                  // A view change: VIEWS holds the definitions; only the newest
                                  // one may be missing there (RecoverViewChange).
                                  if (ts > st.last_flushed_ts && ts > logged_view_ts_) {
                                    logged_view_ts_ = ts;
                                    logged_view_.assign(view_rec.data(), view_rec.size());
                                  }
                                  return Status::OK();
                                }
                                if (ts > st.last_flushed_ts) records.push_back({ts, std::move(b)});
                                return Status::OK();
                              },
                              &tail);
    if (!s.ok()) return s;
    if (st.lists_logs && st.logs.count(num) == 0 && records.size() > records_before) {
      // Nothing is written to a log before it is listed, and the edit that unlists it flushed
      // its batches: the manifest is older than this log. Opening would drop the segments it
      // does not name as leftovers; no repair can tell what else it lacks.
      Timestamp lo = ~Timestamp{0}, hi = 0;
      for (size_t i = records_before; i < records.size(); ++i) {
        lo = std::min(lo, records[i].first);
        hi = std::max(hi, records[i].first);
      }
      return io::CorruptionAt(
          p, 0,
          "holds batches after the manifest's last flushed timestamp (ts " + std::to_string(lo) +
              ".." + std::to_string(hi) + " > " + std::to_string(st.last_flushed_ts) +
              ") but the manifest that " + CurrentFilePath(path_) +
              " names does not list it: the manifest is older than its logs (an older copy "
              "restored?); restore the manifest that lists it. No file was removed");
    }
    if (st.logs.count(num) != 0 && tail.valid_bytes <= kRecordLogHeaderSize) {
      // Listed only once its header and identity record were synced: without them it was
      // emptied or overwritten since, and whatever batches it held are gone.
      const std::string why = "the manifest lists this log, but its header and identity record "
                              "(synced before it was listed) are not whole: " + tail.reason;
      if (!options_.repair) {
        return io::CorruptionAt(p, tail.valid_bytes,
                                why + "; its batches are lost without it; restore it, or open "
                                      "with Options::repair (strata repair) to go on without them");
      }
      Log("repair: " + p + ": " + why + "; its batches are lost");
    }
    if (tail.cut_bytes != 0 && tail.whole_damaged) {
      // Written whole (no zero-filled sector) with a wrong checksum: not a crashed append but
      // damage to a record that was synced, so an acknowledged batch. Only an explicit repair
      // drops it.
      if (!options_.repair) {
        return io::CorruptionAt(p, tail.valid_bytes,
                                "the last record is damaged, not torn: all of its " +
                                    std::to_string(tail.cut_bytes) +
                                    " bytes were written and its checksum fails (an acknowledged "
                                    "batch); open with Options::repair (strata repair) to drop it");
      }
      s = TruncateLog(p, tail.valid_bytes);
      if (!s.ok()) return s;
      Log("repair: dropped the damaged last record of " + p + " (" +
          std::to_string(tail.cut_bytes) + " bytes at offset " + std::to_string(tail.valid_bytes) +
          "): " + tail.reason);
    } else if (!tail.reason.empty()) {
      // The bytes stay in the log (which is deleted once its batches are flushed); replay,
      // appends (to a new log) and Verify all stop at valid_bytes.
      Log("recovery: torn log tail: replayed up to offset " + std::to_string(tail.valid_bytes) +
          ", ignored the " + std::to_string(tail.cut_bytes) + " bytes after it: " + tail.reason);
      if (tail.cut_bytes != 0) torn_at_open_[p] = tail.valid_bytes;
    }
    active_replayed_.push_back(p);
  }
  if (!st.lists_logs && !options_.read_only) {
    // A store written before logs were listed: the logs here are all it has; listed now
    // (unlisted with the flush of what they hold), and from here on every log is.
    ManifestEdit edit;
    edit.lists_logs = true;
    for (const auto& [num, p] : logs) {
      if (st.logs.count(num) == 0) edit.logs_added.push_back(num);
    }
    s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
    if (!s.ok()) return s;
    Log("open: the manifest now lists the store's write-ahead logs (" +
        std::to_string(edit.logs_added.size()) + " found)");
  }
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  auto v = current();
  OlderTierView older(v.get(), options_.weighted);
  Timestamp last = st.last_flushed_ts;
  // Consecutive logged batches are replayed as one commit (up to kReplayOps ops) at the last
  // one's timestamp: applying batches in order inside one batch gives the same state, no
  // reader can hold the timestamps in between, and each container path is copied once per
  // group instead of once per batch. A group of 2^20 edge inserts expands to ~2M primitive ops
  // (~80 MB while it is applied).
  constexpr size_t kReplayOps = 1 << 20;
  WriteBatch group;  // logged batches not yet applied; `last` is the newest one's timestamp
  // Two rewrites of a group's ops that keep its result and shrink the work. Every logged batch
  // committed, so each kPutIfExists found its edge when it ran, and finds it again at the same
  // point of the replay: it is a kPut (and Apply skips its backward search). Without a vertex
  // delete in the group, adding a vertex is idempotent and commutes with every other op: only
  // the first kAddVertex of each vertex is kept (a vertex added again, or a directed store's
  // insert, adds one each time).
  // Returns whether the group has a vertex delete.
  std::vector<VertexId> seen;  // open-addressing set of vertex IDs; kNoVertex marks a free slot
  constexpr VertexId kNoVertex = ~VertexId{0};  // never a valid ID (IDs < max_vertex_id)
  auto shrink = [&](std::vector<mem::PrimOp>* ops) {
    size_t adds = 0;
    bool vertex_delete = false;
    for (mem::PrimOp& op : *ops) {
      if (op.kind == mem::PrimOp::kPutIfExists) op.kind = mem::PrimOp::kPut;
      adds += op.kind == mem::PrimOp::kAddVertex;
      vertex_delete |= op.kind == mem::PrimOp::kDeleteVertex;
    }
    if (vertex_delete || adds < 2) return vertex_delete;
    const size_t mask = std::bit_ceil(adds * 2) - 1;
    seen.assign(mask + 1, kNoVertex);
    auto first_add = [&](VertexId u) {
      for (size_t h = static_cast<size_t>((u * 0x9e3779b97f4a7c15ULL) >> 20) & mask;; h = (h + 1) & mask) {
        if (seen[h] == u) return false;
        if (seen[h] == kNoVertex) {
          seen[h] = u;
          return true;
        }
      }
    };
    std::erase_if(*ops, [&](const mem::PrimOp& op) {
      return op.kind == mem::PrimOp::kAddVertex && !first_add(op.u);
    });
    return false;
  };
  // Without a vertex delete, ops on different subgraphs never interact (only a vertex delete
  // derives ops on other subgraphs), so a group is applied as slices of whole subgraphs, each
  // one Apply at the group's timestamp: Apply sorts and locks per slice, not per group. Ops are
  // grouped by subgraph with a stable sort, which keeps each subgraph's ops in batch order (the
  // order Apply needs).
  constexpr size_t kSliceOps = 1 << 14;
  std::vector<mem::PrimOp> slice;
  RadixSortScratch<mem::PrimOp> sort_scratch;
  auto apply = [&](std::vector<mem::PrimOp>* ops) -> Status {
    core_->clock.ResetTo(last - 1);
    Timestamp got;
    Status e = v->memgraphs[0]->Apply(ops, &older, &got);
    if (!e.ok()) return Status::Corruption("recovery: replaying batches up to ts " + std::to_string(last) + ": " + e.ToString());
    return Status::OK();
  };
  auto apply_sliced = [&](std::vector<mem::PrimOp>* ops) -> Status {
    StableRadixSort(ops, [](const mem::PrimOp& op) { return op.u >> mem::kSubgraphBits; },
                    &sort_scratch);
    const std::vector<mem::PrimOp>& sorted = *ops;
    for (size_t b = 0; b < sorted.size();) {
      size_t e = std::min(b + kSliceOps, sorted.size());
      while (e < sorted.size() && (sorted[e].u >> mem::kSubgraphBits) == (sorted[e - 1].u >> mem::kSubgraphBits)) ++e;
      slice.assign(sorted.begin() + static_cast<ptrdiff_t>(b), sorted.begin() + static_cast<ptrdiff_t>(e));
      Status st = apply(&slice);
      if (!st.ok()) return st;
      b = e;
    }
    return Status::OK();
  };
  auto apply_group = [&]() -> Status {
    if (group.empty()) return Status::OK();
    std::vector<mem::PrimOp> ops;
    Status e = Expand(group, &ops);
    if (!e.ok()) return Status::Corruption("recovery: logged batch up to ts " + std::to_string(last) + ": " + e.message());
    e = shrink(&ops) ? apply(&ops) : apply_sliced(&ops);
    if (!e.ok()) return e;
    group.Clear();
    return Status::OK();
  };
  for (auto& [ts, batch] : records) {
    group.Append(batch);
    next_id_ = std::max<VertexId>(next_id_, batch.VertexIdLimit());
    last = ts;
    if (group.Count() >= kReplayOps) {
      s = apply_group();
      if (!s.ok()) return s;
    }
  }
  s = apply_group();
  if (!s.ok()) return s;
  core_->clock.ResetTo(last);
  if (!records.empty()) {
    Log("recovery: replayed " + std::to_string(records.size()) + " batches from " +
        std::to_string(logs.size()) + " logs, up to ts " + std::to_string(last));
  }
  return older.status();
}
Status DBImpl::RecoverViewChange(Timestamp* views_ts) {
  if (logged_view_.empty()) return Status::OK();
  const Timestamp ts = logged_view_ts_;
  Timestamp vts;
  ViewCatalog::Op op;
  std::string name;
  ViewDefinition def;
  Status s = ViewCatalog::DecodeRecord(logged_view_, &vts, &op, &name, &def);
  if (s.ok() && vts != ts) s = Status::Corruption("view record: timestamp differs from the commit's");
  if (!s.ok()) return Status::Corruption("recovery: logged view change at ts " + std::to_string(ts) + ": " + s.message());
  logged_view_.clear();
  // View changes are serialized and each rewrites VIEWS before the next is logged, so every
  // logged change but the newest is in VIEWS (or pruned from it after a later change). The
  // newest is there iff VIEWS has an entry at its timestamp — or, for a drop (which VIEWS
  // forgets once no snapshot needs it), iff the view is gone.
  if (ts > *views_ts) {
    ViewInfo info;
    const bool exists = views_.Get(name, kMaxTimestamp, &info).ok();
    if (op == ViewCatalog::Op::kCreate || exists) {
      s = views_.Commit(ts, op, name, op == ViewCatalog::Op::kCreate ? &def : nullptr, ts,
                        /*write_file=*/!options_.read_only);
      if (!s.ok()) return s;
      if (!options_.read_only) RecordKeptFile(kKeptViews, ts);
      Log("recovery: view '" + name + "' " + (op == ViewCatalog::Op::kCreate ? "definition" : "drop") +
          " at ts " + std::to_string(ts) + " was logged but not in VIEWS (a crash between the two): applied");
    }
  }
  *views_ts = std::max(*views_ts, ts);
  return Status::OK();
}

}  // namespace strata
