#include "db/db_impl.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>

#include "compaction/compactor.h"
#include "compaction/flush.h"
#include "db/snapshot_impl.h"
#include "util/radix_sort.h"
#include "util/scratch.h"

namespace strata {

namespace {

// Memory the budget keeps for the buffers of one flush and one compaction running at once
// (stream windows of each input, the writers' blocks): a sixteenth of it, 64 KiB to 32 MiB.
size_t IoReserve(const Options& o) {
  return std::clamp<size_t>(o.memory_budget / 16, size_t{64} << 10, size_t{32} << 20);
}

// The reserve holds one flush and one compaction. A segment writer buffers about five extents
// (edges, weights, vertex and bloom blocks, the file's tail): the two writers take ~10/16 of
// the reserve. A compaction input holds about three read windows (edges, weights, vertex
// blocks): the inputs share a third of it. Both are clamped to [64 KiB, 1 MiB] (extents of at
// least 64 KiB keep reads large; at 1 GiB and more the reserve is not the limit).
size_t WriterExtent(const Options& o) {
  return std::clamp<size_t>(IoReserve(o) / 16, size_t{64} << 10, size_t{1} << 20);
}
size_t CompactionWindow(const Options& o, size_t inputs) {
  return std::clamp<size_t>(IoReserve(o) / 3 / (3 * std::max<size_t>(1, inputs)),
                            size_t{64} << 10, size_t{1} << 20);
}

// The block cache never gets less than this, even when the budget is spent elsewhere (reads
// would otherwise pay one small disk read per vertex lookup).
constexpr size_t kMinBlockCache = size_t{64} << 10;

// Memory the segment readers of v keep resident (their small block indexes).
size_t FileIndexBytes(const Version& v) {
  size_t bytes = 0;
  for (int dir = 0; dir < 2; ++dir) {
    for (const SegmentHandle* h : v.AllFiles(dir)) bytes += h->reader->MemoryUsage();
  }
  return bytes;
}

Status ValidateOptions(const Options& o) {
  if (o.l0_compaction_trigger < 1) {
    return Status::InvalidArgument("l0_compaction_trigger: must be at least 1");
  }
  if (o.l0_stall_trigger <= o.l0_compaction_trigger) {
    return Status::InvalidArgument(
        "l0_stall_trigger: must be greater than l0_compaction_trigger (" +
        std::to_string(o.l0_compaction_trigger) + "), or writers stall before a compaction is due");
  }
  if (o.memgraph_bytes < 4096) {
    return Status::InvalidArgument("memgraph_bytes: must be at least 4 KiB");
  }
  if (o.cart_threshold < 4) return Status::InvalidArgument("cart_threshold: must be at least 4");
  if (o.max_vertex_id == 0) return Status::InvalidArgument("max_vertex_id: must be positive");
  if (o.read_only && o.repair) {
    return Status::InvalidArgument("repair: a read-only open cannot repair (it changes no file)");
  }
  if (o.max_sealed_memgraphs < 1) {
    return Status::InvalidArgument("max_sealed_memgraphs: must be at least 1");
  }
  if (!o.in_memory &&
      o.memgraph_bytes * (1 + static_cast<size_t>(o.max_sealed_memgraphs)) + IoReserve(o) +
              kMinBlockCache >
          o.memory_budget) {
    return Status::InvalidArgument(
        "memgraph_bytes: the active and sealed memgraphs (memgraph_bytes x (1 + "
        "max_sealed_memgraphs) = " +
        std::to_string(o.memgraph_bytes * (1 + static_cast<size_t>(o.max_sealed_memgraphs))) +
        " bytes), the I/O reserve (" + std::to_string(IoReserve(o)) +
        " bytes) and a 64 KiB block cache must fit in memory_budget (" +
        std::to_string(o.memory_budget) + " bytes)");
  }
  return Status::OK();
}

// The tiers under the active memgraph, as the write path needs them.
class OlderTierView : public mem::OlderTiers {
 public:
  OlderTierView(const Version* v, bool weighted) : r_(v, kMaxTimestamp, weighted, 1) {}
  bool HasEdge(uint8_t dir, VertexId u, VertexId v) override { return r_.GetEdge(dir, u, v, nullptr); }
  void Neighbors(uint8_t dir, VertexId u, std::vector<VertexId>* out) override {
    Status s = r_.ScanNeighbors(dir, u, [&](const NeighborChunk& c) {
      out->insert(out->end(), c.dst, c.dst + c.size);
      return true;
    });
    (void)s;  // recorded in status()
  }
  Status status() const { return r_.status(); }

 private:
  TierReader r_;
};

uint64_t NowMicros() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

bool ParseNumbered(const std::string& name, const char* suffix, uint64_t* n) {
  size_t sl = strlen(suffix);
  if (name.size() <= sl || name.compare(name.size() - sl, sl, suffix) != 0) return false;
  std::string digits = name.substr(0, name.size() - sl);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  *n = std::stoull(digits);
  return true;
}

}  // namespace

DBImpl::DBImpl(const Options& options, std::string path)
    : options_(options),
      path_(std::move(path)),
      core_(std::make_shared<DBCore>(options.reader_slots)),
      memgraph_capacity_(options.memgraph_bytes) {}

DBImpl::~DBImpl() { Close(); }

std::shared_ptr<mem::MemGraph> DBImpl::NewMemGraph() {
  mem::MemGraphOptions mo;
  mo.kind = options_.graph_kind;
  mo.weighted = options_.weighted;
  mo.tombstones = !options_.in_memory;  // deletes must shadow older tiers
  mo.cart_threshold = options_.cart_threshold;
  return std::make_shared<mem::MemGraph>(mo, &core_->clock, &core_->tracer);
}

Status DBImpl::Init() {
  Status s = ValidateOptions(options_);
  if (!s.ok()) {
    closed_ = true;  // nothing was opened: the destructor must not flush or close anything
    return s;
  }
  if (options_.in_memory) {
    auto v = std::make_shared<Version>();
    v->memgraphs.push_back(NewMemGraph());
    current_ = std::move(v);
    return Status::OK();
  }
  s = OpenDisk();
  if (!s.ok()) {
    closed_ = true;
    if (lock_fd_ >= 0) {
      ::close(lock_fd_);
      lock_fd_ = -1;
    }
    if (dir_fd_ >= 0) {
      ::close(dir_fd_);
      dir_fd_ = -1;
    }
  }
  return s;
}

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
  const std::string p = path_ + "/LOCK";
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
  const std::string p = path_ + "/LOCK";
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
  // ClassifyFileWithoutCurrent (db/manifest.h) is the one list; strata ingest asks it too.
  for (const std::string& n : names) {
    if (ClassifyFileWithoutCurrent(n) == FileWithoutCurrent::kStoreData) {
      return io::CorruptionAt(path_ + "/" + n, 0,
                              "the directory has no CURRENT but holds store files (CURRENT lost?); "
                              "refusing to create a new store over them");
    }
  }
  // A first open that failed before CURRENT was renamed into place leaves a manifest (maybe
  // partial) and temporary files, nothing a store needs: removed, then the store is created.
  for (const std::string& n : names) {
    if (RemovedOnCreate(n)) {
      s = env_->RemoveFile(path_ + "/" + n);
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
    return io::CorruptionAt(path, hoff + 120,
                            "segment belongs to another store (store ID " +
                                std::to_string(h.store_id) + ", this store's is " +
                                std::to_string(store_id_) + ")");
  }
  if (h.file_number != f.number) {
    return bad(hoff + 16, "segment was written as " + SegmentFileName(h.file_number) +
                              ", not under this name");
  }
  if (r.file_size() != f.size_bytes) return bad(r.file_size(), differs("file size", r.file_size(), f.size_bytes));
  if (h.level != f.level) return bad(hoff + 8, differs("level", h.level, f.level));
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

void DBImpl::LogStall(std::atomic<uint64_t>* last, const std::string& why) {
  // One line per reason per second, however many writers stall.
  const uint64_t now = NowMicros();
  uint64_t prev = last->load(std::memory_order_relaxed);
  if (now - prev < 1000000 && prev != 0) return;
  if (!last->compare_exchange_strong(prev, now, std::memory_order_relaxed)) return;
  Log("stall: " + why);
}

void DBImpl::Log(const std::string& line) {
  std::lock_guard<std::mutex> g(log_mu_);
  if (!event_log_) return;
  char ts[64];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  localtime_r(&now, &tm);
  std::strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S ", &tm);
  event_log_->Append(std::string(ts) + line + "\n");
  event_log_->Flush();
}

Status DBImpl::OpenSegments(const std::vector<FileMeta>& files,
                            std::vector<std::shared_ptr<SegmentHandle>>* out) {
  for (const FileMeta& f : files) {
    auto h = std::make_shared<SegmentHandle>();
    h->env = env_;
    h->cache = cache_;
    h->meta = f;
    h->path = path_ + "/" + SegmentFileName(f.number);
    SegmentReaderOptions ro;
    ro.cache = cache_.get();
    Status s = SegmentReader::Open(env_.get(), h->path, ro, &h->reader);
    if (!s.ok()) return s;
    s = CheckSegment(*h->reader, h->path, f);
    if (!s.ok()) return s;
    out->push_back(std::move(h));
  }
  return Status::OK();
}

Status DBImpl::NewLog(std::unique_ptr<WriteAheadLog>* log) {
  return WriteAheadLog::Create(env_.get(), path_, next_file_.fetch_add(1), store_id_, options_.wal,
                               log);
}

Status DBImpl::OpenDisk() {
  std::unique_ptr<io::Env> env;
  Status s = io::Env::Open(options_.io_backend, &env);
  if (!s.ok()) return s;
  env_ = std::move(env);
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
  if (env_->FileExists(Manifest::CurrentPath(path_))) {
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
    s = Manifest::Create(env_.get(), path_, st, &manifest_);
    if (!s.ok()) return s;
    st = manifest_->state();
  }

  store_id_ = st.store_id;
  // Event log: the previous one is kept as LOG.old. A read-only open keeps none.
  if (!options_.read_only) {
    if (env_->FileExists(path_ + "/LOG")) env_->RenameFile(path_ + "/LOG", path_ + "/LOG.old");
    env_->NewWritableFile(path_ + "/LOG", &event_log_);
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
    uint64_t num;
    if (ParseNumbered(n, ".wal", &num) || ParseNumbered(n, ".seg", &num)) next = std::max(next, num + 1);
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
  const char* reads_env = std::getenv("STRATA_VERTEX_INDEX_READS");
  v->index_reads = options_.vertex_index_reads &&
                   !(reads_env != nullptr && std::string(reads_env) == "0");
  current_ = v;
  core_->clock.ResetTo(st.last_flushed_ts);
  next_id_ = st.next_vertex_id;

  if (!options_.read_only) RemoveObsoleteFiles(st);
  UpdateMemoryPlan();
  s = RecoverLogs(st);
  if (!s.ok()) return s;
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
    uint64_t num;
    bool stale = false;
    if (ParseNumbered(n, ".seg", &num)) stale = st.files.count(num) == 0;  // an unfinished flush
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0) stale = true;
    if (n.rfind("MANIFEST-", 0) == 0 && path_ + "/" + n != manifest_->path()) stale = true;
    if (stale) {
      env_->RemoveFile(path_ + "/" + n);
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
  const std::string tmp = path + ".tmp";
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
    uint64_t num;
    if (ParseNumbered(n, ".wal", &num)) logs.push_back({num, path_ + "/" + n});
  }
  std::sort(logs.begin(), logs.end());
  std::vector<std::pair<Timestamp, WriteBatch>> records;
  for (const auto& [num, p] : logs) {
    RecordLogTail tail;
    s = WriteAheadLog::Replay(env_.get(), p, store_id_,
                              [&](std::string_view rec, uint64_t off) -> Status {
                                Timestamp ts;
                                WriteBatch b;
                                Status d = DecodeBatchRecord(rec, options_.weighted, &ts, &b);
                                if (!d.ok()) {
                                  return io::CorruptionAt(p, off, d.message());
                                }
                                if (ts > st.last_flushed_ts) records.push_back({ts, std::move(b)});
                                return Status::OK();
                              },
                              &tail);
    if (!s.ok()) return s;
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
      Log("recovery: cut torn log tail (" + std::to_string(tail.cut_bytes) + " bytes): " +
          tail.reason);
    }
    active_replayed_.push_back(p);
  }
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  auto v = current();
  OlderTierView older(v.get(), options_.weighted);
  Timestamp last = st.last_flushed_ts;
  // Consecutive logged batches are replayed as one commit (up to kReplayOps ops) at the last
  // one's timestamp: applying batches in order inside one batch gives the same state, no
  // reader can hold the timestamps in between, and each container path is copied once per
  // group instead of once per batch. A group of 2^20 edge inserts expands to ~4M primitive ops
  // (~160 MB while it is applied); larger groups gained little in the recovery benchmark.
  constexpr size_t kReplayOps = 1 << 20;
  WriteBatch group;  // logged batches not yet applied; `last` is the newest one's timestamp
  // Two rewrites of a group's ops that keep its result and shrink the work. Every logged batch
  // committed, so each kPutIfExists found its edge when it ran, and finds it again at the same
  // point of the replay: it is a kPut (and Apply skips its backward search). Without a vertex
  // delete in the group, adding a vertex is idempotent and commutes with every other op: only
  // the first kAddVertex of each vertex is kept (an edge insert expands to two of them).
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

Status DBImpl::Expand(const WriteBatch& batch, std::vector<mem::PrimOp>* ops) const {
  using mem::PrimOp;
  const GraphKind kind = options_.graph_kind;
  ops->clear();
  ops->reserve(batch.Count() * (kind == GraphKind::kDirected ? 3 : 4));
  uint32_t seq = 0;
  auto bad_id = [&](VertexId id) {
    return Status::InvalidArgument("op " + std::to_string(seq) + ": vertex ID " +
                                   std::to_string(id) + " is not below max_vertex_id " +
                                   std::to_string(options_.max_vertex_id));
  };
  auto push = [&](PrimOp::Kind k, uint8_t dir, VertexId u, VertexId v, double w) {
    ops->push_back(PrimOp{k, dir, seq, u, v, w});
  };
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.u >= options_.max_vertex_id) return bad_id(op.u);
    if (WriteBatch::IsEdgeOp(op.type) && op.v >= options_.max_vertex_id) return bad_id(op.v);
    double w = options_.weighted ? op.weight : 1.0;
    if ((op.type == WriteBatch::OpType::kInsertEdge || op.type == WriteBatch::OpType::kSetWeight) &&
        options_.weighted && !std::isfinite(op.weight)) {
      return Status::InvalidArgument("op " + std::to_string(seq) + ": weight must be finite");
    }
    switch (op.type) {
      case WriteBatch::OpType::kAddVertex:
        push(PrimOp::kAddVertex, 0, op.u, 0, 0);
        break;
      case WriteBatch::OpType::kDeleteVertex:
        push(PrimOp::kDeleteVertex, 0, op.u, 0, 0);
        break;
      case WriteBatch::OpType::kInsertEdge:
        push(PrimOp::kAddVertex, 0, op.u, 0, 0);
        push(PrimOp::kAddVertex, 0, op.v, 0, 0);
        push(PrimOp::kPut, 0, op.u, op.v, w);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kPut, 1, op.v, op.u, w);
        if (kind == GraphKind::kUndirected) push(PrimOp::kPut, 0, op.v, op.u, w);
        break;
      case WriteBatch::OpType::kDeleteEdge:
        push(PrimOp::kDelete, 0, op.u, op.v, 0);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kDelete, 1, op.v, op.u, 0);
        if (kind == GraphKind::kUndirected) push(PrimOp::kDelete, 0, op.v, op.u, 0);
        break;
      case WriteBatch::OpType::kSetWeight:
        if (!options_.weighted) {
          return Status::InvalidArgument("op " + std::to_string(seq) +
                                         ": SetWeight on an unweighted store");
        }
        push(PrimOp::kPutIfExists, 0, op.u, op.v, w);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kPut, 1, op.v, op.u, w);
        if (kind == GraphKind::kUndirected) push(PrimOp::kPut, 0, op.v, op.u, w);
        break;
    }
    ++seq;
  }
  return Status::OK();
}

Status DBImpl::Write(const WriteOptions& wo, const WriteBatch& batch) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  if (options_.read_only) return Status::NotSupported("store '" + path_ + "' is open read-only");
  thread_local std::vector<mem::PrimOp> ops_scratch;
  ScopedScratch<mem::PrimOp> scoped_ops(&ops_scratch);
  std::vector<mem::PrimOp>& ops = scoped_ops.get();
  Status s = Expand(batch, &ops);
  if (!s.ok()) return s;
  Timestamp ts;
  if (options_.in_memory) {
    s = current()->memgraphs[0]->Apply(&ops, nullptr, &ts);
  } else {
    s = MakeRoom();
    if (!s.ok()) return s;
    std::shared_lock<std::shared_mutex> sl(seal_mu_);
    std::shared_ptr<const Version> v = current();
    OlderTierView older(v.get(), options_.weighted);
    std::string rec;
    WriteAheadLog* log = wal_.get();
    auto hook = [&](Timestamp t) -> Status {
      if (log == nullptr) return Status::OK();
      rec.clear();
      EncodeBatchRecord(t, batch, options_.weighted, &rec);
      return log->Append(rec);
    };
    FunctionRef<Status(Timestamp)> hook_ref(hook);
    s = v->memgraphs[0]->Apply(&ops, &older, &ts, &hook_ref);
    if (s.ok()) s = older.status();
  }
  if (!s.ok()) return s;
  batches_.fetch_add(1, std::memory_order_relaxed);
  ops_.fetch_add(batch.Count(), std::memory_order_relaxed);
  bool deletes = false;
  for (const WriteBatch::Op& op : batch.ops()) deletes |= op.type == WriteBatch::OpType::kDeleteVertex;
  const VertexId top = batch.VertexIdLimit();
  for (VertexId cur = next_id_.load(std::memory_order_relaxed);
       cur < top && !next_id_.compare_exchange_weak(cur, top);) {
  }
  if (deletes) {
    std::lock_guard<std::mutex> g(free_ids_mu_);
    for (const WriteBatch::Op& op : batch.ops()) {
      if (op.type == WriteBatch::OpType::kDeleteVertex) free_ids_.push_back(op.u);
    }
  }
  return Status::OK();
}

Status DBImpl::MakeRoom() {
  for (;;) {
    std::shared_ptr<const Version> v = current();
    if (options_.background_compaction &&
        v->l0[0].size() >= static_cast<size_t>(options_.l0_stall_trigger)) {
      // Level 0 piles up faster than compaction drains it: wait for a compaction.
      std::unique_lock<std::mutex> g(bg_mu_);
      if (!bg_error_.ok()) return bg_error_;
      const uint64_t t0 = NowMicros();
      LogStall(&last_l0_stall_log_, "level 0 has " + std::to_string(v->l0[0].size()) +
                                        " files (l0_stall_trigger " +
                                        std::to_string(options_.l0_stall_trigger) +
                                        "): writers wait for a compaction");
      compact_pending_ = true;
      compact_cv_.notify_all();
      room_cv_.wait_for(g, std::chrono::milliseconds(100));
      stall_l0_micros_.fetch_add(NowMicros() - t0, std::memory_order_relaxed);
      continue;
    }
    // An empty memgraph takes the write whatever its size says (a capacity the plan shrank
    // below an empty memgraph's own bytes must not stall writers for good).
    if (v->memgraphs[0]->bytes() < memgraph_capacity() || v->memgraphs[0]->max_ts() == 0) {
      return Status::OK();
    }
    {
      std::lock_guard<std::mutex> g(bg_mu_);
      if (!bg_error_.ok()) return bg_error_;
      if (stop_) return Status::Aborted("store is closing");
    }
    if (Seal(false)) continue;
    // Every sealed slot is taken: stall until a flush frees one (never fail, never grow).
    std::unique_lock<std::mutex> g(bg_mu_);
    const uint64_t t0 = NowMicros();
    if (sealed_.size() >= static_cast<size_t>(options_.max_sealed_memgraphs)) {
      LogStall(&last_flush_stall_log_,
               "the active memgraph is full and " + std::to_string(sealed_.size()) +
                   " sealed memgraph(s) (max_sealed_memgraphs " +
                   std::to_string(options_.max_sealed_memgraphs) +
                   ") wait for their flush: writers wait for the flush");
    }
    room_cv_.wait_for(g, std::chrono::milliseconds(100), [&] {
      return sealed_.size() < static_cast<size_t>(options_.max_sealed_memgraphs) ||
             !bg_error_.ok() || stop_;
    });
    stall_flush_micros_.fetch_add(NowMicros() - t0, std::memory_order_relaxed);
  }
}

bool DBImpl::Seal(bool force) {
  std::unique_lock<std::shared_mutex> ex(seal_mu_);  // no writer in flight from here on
  std::shared_ptr<const Version> v = current();
  const std::shared_ptr<mem::MemGraph>& active = v->memgraphs[0];
  if (active->max_ts() == 0) return false;  // nothing to seal
  if (!force && active->bytes() < memgraph_capacity()) return false;
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    if (sealed_.size() >= static_cast<size_t>(options_.max_sealed_memgraphs)) return false;
  }
  std::unique_ptr<WriteAheadLog> next_log;
  if (options_.wal != WalMode::kOff) {
    Status s = NewLog(&next_log);
    if (!s.ok()) {
      std::lock_guard<std::mutex> g(bg_mu_);
      if (bg_error_.ok()) bg_error_ = s;
      room_cv_.notify_all();
      return false;
    }
  }
  Sealed info;
  info.seal_ts = core_->clock.read_ts();  // == t_w: no writer in flight
  if (wal_) info.logs.push_back(std::move(wal_));
  info.replayed_logs = std::move(active_replayed_);
  active_replayed_.clear();
  wal_ = std::move(next_log);
  const uint64_t bytes = active->bytes();
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    sealed_[active.get()] = std::move(info);
  }
  {
    std::lock_guard<std::mutex> g(version_mu_);
    auto nv = std::make_shared<Version>(*current_);
    nv->memgraphs.insert(nv->memgraphs.begin(), NewMemGraph());
    current_ = std::move(nv);
  }
  bg_cv_.notify_all();
  Log("seal: memgraph of " + std::to_string(bytes) + " bytes at ts " +
      std::to_string(core_->clock.read_ts()));
  return true;
}

void DBImpl::FlushLoop() {
  std::unique_lock<std::mutex> g(bg_mu_);
  for (;;) {
    bg_cv_.wait(g, [&] { return stop_ || (!sealed_.empty() && bg_error_.ok()); });
    if (sealed_.empty() || !bg_error_.ok()) {
      if (stop_) return;
      continue;
    }
    flushing_ = true;
    g.unlock();
    Status s = FlushOldest();
    g.lock();
    flushing_ = false;
    if (!s.ok() && bg_error_.ok()) {
      bg_error_ = s;
      Log("flush failed: " + s.ToString());
    }
    room_cv_.notify_all();
  }
}

Status DBImpl::FlushOldest() {
  std::shared_ptr<mem::MemGraph> mg;
  Timestamp seal_ts;
  {
    std::shared_ptr<const Version> v = current();
    if (v->memgraphs.size() < 2) return Status::OK();
    mg = v->memgraphs.back();
    std::lock_guard<std::mutex> g(bg_mu_);
    seal_ts = sealed_.at(mg.get()).seal_ts;
  }
  const uint64_t t0 = NowMicros();
  compaction::FlushOptions fo;
  fo.dir = path_;
  fo.extent_bytes = WriterExtent(options_);
  fo.seal_ts = seal_ts;
  fo.store_id = store_id_;
  compaction::FlushResult r;
  uint64_t first_number = next_file_.fetch_add(2);
  uint64_t number = first_number;
  Status s = compaction::FlushMemGraph(*mg, fo, env_.get(), &number, &r);
  if (!s.ok()) return s;

  std::vector<std::shared_ptr<SegmentHandle>> handles;
  s = OpenSegments(r.files, &handles);
  if (!s.ok()) return s;
  ManifestEdit edit;
  edit.added = r.files;
  edit.last_flushed_ts = seal_ts;
  edit.next_file_number = next_file_.load();
  edit.next_vertex_id = next_id_.load();
  std::unique_lock<std::mutex> install(install_mu_);
  // Under install_mu_ no other install changes the files, so the index computed from
  // current() is the one the new Version must hold.
  index::VertexIndex new_index[2];
  const uint64_t index_t0 = NowMicros();
  {
    std::shared_ptr<const Version> base = current();
    for (int d = 0; d < 2; ++d) {
      s = IndexAfterFlush(*base, d, handles, &new_index[d]);
      if (!s.ok()) return s;  // the new files are unnamed: removed as leftovers on next open
    }
  }
  const uint64_t index_micros = NowMicros() - index_t0;
  s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
  if (!s.ok()) return s;  // the new files are unnamed: removed as leftovers on next open

  {
    std::lock_guard<std::mutex> g(version_mu_);
    auto nv = std::make_shared<Version>(*current_);
    nv->memgraphs.erase(std::find(nv->memgraphs.begin(), nv->memgraphs.end(), mg));
    retired_reclaimed_ += mg->reclaimed_versions();  // sealed: its counts are final
    retired_rebuilt_ += mg->rebuilt_versions();
    for (const auto& h : handles) nv->l0[h->meta.tag].insert(nv->l0[h->meta.tag].begin(), h);
    for (int d = 0; d < 2; ++d) nv->index[d] = std::move(new_index[d]);
    current_ = std::move(nv);
  }
  install.unlock();
  UpdateMemoryPlan();
  Sealed info;
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    info = std::move(sealed_.at(mg.get()));
    sealed_.erase(mg.get());
  }
  // The manifest now says these batches are in segments: their logs can go.
  for (auto& l : info.logs) {
    std::string p = l->path();
    l->Close();
    env_->RemoveFile(p);
  }
  for (const std::string& p : info.replayed_logs) env_->RemoveFile(p);
  flushes_.fetch_add(1, std::memory_order_relaxed);
  flush_bytes_.fetch_add(r.bytes_written, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    compact_pending_ = true;
  }
  compact_cv_.notify_all();
  Log("flush: ts " + std::to_string(seal_ts) + ", " + std::to_string(r.entries_written) +
      " entries, " + std::to_string(r.bytes_written) + " bytes, " +
      std::to_string(r.files.size()) + " files from #" + std::to_string(first_number) + ", " +
      std::to_string((NowMicros() - t0) / 1000) + " ms (vertex index " +
      std::to_string(index_micros / 1000) + " ms)");
  return Status::OK();
}

Status DBImpl::FlushAll() {
  if (options_.in_memory) return Status::OK();
  if (options_.read_only) return Status::NotSupported("store '" + path_ + "' is open read-only");
  for (;;) {
    {
      std::lock_guard<std::mutex> g(bg_mu_);
      if (!bg_error_.ok()) return bg_error_;
    }
    if (current()->memgraphs[0]->max_ts() == 0) break;
    if (Seal(true)) break;
    std::unique_lock<std::mutex> g(bg_mu_);
    room_cv_.wait_for(g, std::chrono::milliseconds(50));
  }
  return WaitForFlushes();
}

Status DBImpl::WaitForFlushes() {
  std::unique_lock<std::mutex> g(bg_mu_);
  room_cv_.wait(g, [&] { return (sealed_.empty() && !flushing_) || !bg_error_.ok(); });
  return bg_error_;
}

Status DBImpl::NewVertex(VertexId* id) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  std::lock_guard<std::mutex> g(free_ids_mu_);
  VertexId candidate = next_id_.load(std::memory_order_acquire);
  if (!holes_scanned_ && !options_.in_memory) {
    // After a reopen the free list is rebuilt from the holes below next_id_.
    std::unique_ptr<Snapshot> snap = GetSnapshot();
    for (VertexId v = 0; v < candidate; ++v) {
      if (!snap->HasVertex(v)) free_ids_.push_back(v);
    }
    holes_scanned_ = true;
  }
  if (!free_ids_.empty()) {
    std::unique_ptr<Snapshot> snap = GetSnapshot();
    while (!free_ids_.empty()) {
      VertexId f = free_ids_.front();
      free_ids_.pop_front();
      if (!snap->HasVertex(f)) {  // not re-created explicitly since its deletion
        candidate = f;
        break;
      }
    }
  }
  if (candidate >= options_.max_vertex_id) {
    return Status::InvalidArgument("NewVertex: vertex IDs exhausted (max_vertex_id)");
  }
  WriteBatch wb;
  wb.AddVertex(candidate);
  Status s = Write(WriteOptions(), wb);
  if (s.ok()) *id = candidate;
  return s;
}

std::unique_ptr<Snapshot> DBImpl::GetSnapshot() {
  std::lock_guard<std::mutex> g(version_mu_);
  mvcc::ReaderTracer::Slot slot = core_->tracer.Register(core_->clock);
  return std::make_unique<SnapshotImpl>(core_, slot, current_, options_.graph_kind,
                                        options_.weighted);
}

DBStats DBImpl::GetStats(bool count_graph) {
  DBStats st;
  std::unique_ptr<Snapshot> snap = GetSnapshot();
  st.last_committed = snap->timestamp();
  if (count_graph) {
    st.num_vertices = snap->NumVertices();
    st.num_edges = snap->NumEdges();
    st.count_status = snap->status();
  }
  snap.reset();
  st.batches_committed = batches_.load(std::memory_order_relaxed);
  st.ops_applied = ops_.load(std::memory_order_relaxed);
  std::shared_ptr<const Version> v;
  {
    std::lock_guard<std::mutex> g(version_mu_);
    v = current_;
    st.versions_reclaimed = retired_reclaimed_;
    st.versions_rebuilt = retired_rebuilt_;
  }
  for (const auto& m : v->memgraphs) {
    st.memgraph_bytes += m->bytes();
    st.memgraph_versions += m->live_versions();
    st.hollow_versions += m->hollow_versions();
    st.versions_reclaimed += m->reclaimed_versions();
    st.versions_rebuilt += m->rebuilt_versions();
  }
  st.sealed_memgraphs = v->memgraphs.empty() ? 0 : v->memgraphs.size() - 1;
  st.active_readers = core_->tracer.ActiveCount();
  st.flushes = flushes_.load(std::memory_order_relaxed);
  st.stall_l0_micros = stall_l0_micros_.load(std::memory_order_relaxed);
  st.stall_flush_micros = stall_flush_micros_.load(std::memory_order_relaxed);
  st.stall_micros = st.stall_l0_micros + st.stall_flush_micros;
  for (const auto& l : v->l0) {
    for (const auto& h : l) st.disk_bytes += h->meta.size_bytes;
    st.l0_files += l.size();
  }
  for (const auto& levels : v->levels) {
    for (const auto& l : levels) {
      for (const auto& h : l) st.disk_bytes += h->meta.size_bytes;
      st.level_files += l.size();
    }
  }
  st.flush_bytes = flush_bytes_.load(std::memory_order_relaxed);
  st.compactions = compactions_.load(std::memory_order_relaxed);
  st.compaction_bytes = compaction_bytes_.load(std::memory_order_relaxed);
  for (const auto& idx : v->index) {
    st.vertex_index_bytes += idx.bytes();
    st.vertex_index_entries += idx.vertices();
  }
  {
    auto shape = [](const char* name, const auto& files) {
      uint64_t bytes = 0;
      for (const auto& h : files) bytes += h->meta.size_bytes;
      char buf[96];
      snprintf(buf, sizeof(buf), "%s %zu files %.1f MiB", name, files.size(), bytes / 1048576.0);
      return std::string(buf);
    };
    st.level_shape = shape("L0", v->l0[0]);
    for (size_t k = 0; k < v->levels[0].size(); ++k) {
      st.level_shape += ", " + shape(("L" + std::to_string(k + 1)).c_str(), v->levels[0][k]);
    }
  }
  st.memory_budget = options_.memory_budget;
  st.memgraph_capacity = options_.in_memory ? options_.memgraph_bytes : memgraph_capacity();
  if (cache_) {
    st.resident_index_bytes = FileIndexBytes(*v);
    st.block_cache_capacity = cache_->capacity();
    st.block_cache_bytes = cache_->usage();
    st.block_cache_hits = cache_->hits();
    st.block_cache_misses = cache_->misses();
  }
  return st;
}

void DBImpl::UpdateMemoryPlan() {
  if (!cache_) return;
  std::lock_guard<std::mutex> plan(plan_mu_);
  std::shared_ptr<const Version> v = current();
  const size_t index = v->index[0].bytes() + v->index[1].bytes();
  const size_t resident = FileIndexBytes(*v) + index;
  // An install computes the new index beside the old one and the old pages go with the last
  // Version holding them: a compaction touching every vertex holds two copies for a moment.
  const size_t pinned = IoReserve(options_) + resident + index;
  const size_t slots = 1 + static_cast<size_t>(options_.max_sealed_memgraphs);
  const size_t floor = std::max<size_t>(4096, options_.memgraph_bytes / 8);
  const size_t room = options_.memory_budget > pinned + kMinBlockCache
                          ? options_.memory_budget - pinned - kMinBlockCache
                          : 0;
  const size_t mg = std::clamp(room / slots, floor, options_.memgraph_bytes);
  memgraph_capacity_.store(mg, std::memory_order_relaxed);
  const size_t fixed = slots * mg + pinned;
  const size_t cap = fixed + kMinBlockCache <= options_.memory_budget
                         ? options_.memory_budget - fixed
                         : kMinBlockCache;
  cache_->SetCapacity(cap);
  // LOG: capacity changes of an eighth or more, and entering or leaving "exceeded".
  const size_t last = logged_capacity_ == 0 ? options_.memgraph_bytes : logged_capacity_;
  if (mg != last && (mg < last - last / 8 || mg > last + last / 8 || mg == options_.memgraph_bytes)) {
    Log("memory: memgraph capacity " + std::to_string(mg) + " bytes (memgraph_bytes " +
        std::to_string(options_.memgraph_bytes) + "): resident indexes " +
        std::to_string(resident) + " bytes, vertex index " + std::to_string(index) +
        " bytes counted twice");
    logged_capacity_ = mg;
  }
  const bool over = fixed + kMinBlockCache > options_.memory_budget;
  if (over != logged_over_) {
    Log(over ? "memory: memory_budget (" + std::to_string(options_.memory_budget) +
                   " bytes) is exceeded by " +
                   std::to_string(fixed + kMinBlockCache - options_.memory_budget) +
                   " bytes: resident indexes " + std::to_string(resident) +
                   " bytes (vertex index " + std::to_string(index) +
                   " counted twice), memgraphs at their floor of memgraph_bytes / 8"
             : "memory: back within memory_budget");
    logged_over_ = over;
  }
}

Status DBImpl::Close() {
  if (closed_.exchange(true)) return Status::OK();
  if (options_.in_memory) return Status::OK();
  // Read-only: what was replayed stays in its logs (nothing is flushed, nothing deleted).
  Status s = options_.read_only ? Status::OK() : FlushAll();
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    stop_ = true;
  }
  bg_cv_.notify_all();
  room_cv_.notify_all();
  compact_cv_.notify_all();
  if (flush_thread_.joinable()) flush_thread_.join();
  if (compact_thread_.joinable()) compact_thread_.join();
  if (wal_) {
    std::string p = wal_->path();
    Status c = wal_->Close();
    // After a clean flush the active memgraph is empty: its log holds nothing to replay.
    if (s.ok() && c.ok() && current()->memgraphs[0]->max_ts() == 0) env_->RemoveFile(p);
    wal_.reset();
  }
  if (s.ok() && !options_.read_only) {
    for (const std::string& p : active_replayed_) env_->RemoveFile(p);
  }
  Log("close: " + s.ToString());
  manifest_.reset();
  {
    std::lock_guard<std::mutex> g(log_mu_);
    if (event_log_) event_log_->Close();
    event_log_.reset();
  }
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  if (dir_fd_ >= 0) {
    ::close(dir_fd_);
    dir_fd_ = -1;
  }
  return s;
}

}  // namespace strata

namespace strata {

Status DBImpl::Verify(std::string* report) {
  if (options_.in_memory) return Status::OK();
  std::vector<std::string> problems;
  auto note = [&](const Status& s) {
    if (!s.ok()) problems.push_back(s.ToString());
  };
  // The manifest as it is on disk.
  StoreState st;
  RecordLogTail tail;
  std::string mpath;
  std::unique_lock<std::mutex> install(install_mu_);  // manifest and version agree meanwhile
  Status s = Manifest::ReadOnly(env_.get(), path_, &st, &tail, &mpath);
  std::shared_ptr<const Version> v = current();
  install.unlock();
  note(s);
  if (s.ok() && tail.cut_bytes != 0) problems.push_back("manifest has a torn tail: " + tail.reason);
  // Every segment of the current version, every block — read afresh from its path (the file
  // there now, not the one opened earlier), and checked against the manifest on disk.
  for (int dir = 0; dir < 2; ++dir) {
    for (const SegmentHandle* h : v->AllFiles(dir)) {
      auto named = st.files.find(h->meta.number);
      if (s.ok() && named == st.files.end()) {
        problems.push_back("segment " + h->path + " is live but not named by the manifest");
      }
      std::unique_ptr<SegmentReader> fresh;
      SegmentReaderOptions ro;
      ro.pin_vertex_blocks = false;
      ro.pin_bloom = false;
      Status r = SegmentReader::Open(env_.get(), h->path, ro, &fresh);
      if (r.ok()) r = CheckSegment(*fresh, h->path, s.ok() && named != st.files.end() ? named->second : h->meta);
      if (r.ok()) r = fresh->Verify();
      note(r);
    }
  }
  // Each level above 0 holds disjoint, ascending vertex ranges.
  for (int dir = 0; dir < 2; ++dir) {
    for (size_t k = 0; k < v->levels[dir].size(); ++k) {
      const auto& l = v->levels[dir][k];
      for (size_t i = 1; i < l.size(); ++i) {
        if (l[i]->meta.min_src <= l[i - 1]->meta.max_src) {
          problems.push_back("level " + std::to_string(k + 1) + ": " + l[i - 1]->path + " and " +
                             l[i]->path + " overlap");
        }
      }
    }
  }
  // Every log still on disk replays cleanly — except the one being appended to now, whose
  // last record may be in flight.
  std::string active_log;
  {
    std::shared_lock<std::shared_mutex> sl(seal_mu_);
    if (wal_) active_log = wal_->path();
  }
  std::vector<std::string> names;
  note(env_->GetChildren(path_, &names));
  for (const std::string& n : names) {
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".wal") == 0 && path_ + "/" + n != active_log) {
      RecordLogTail lt;
      Status r = WriteAheadLog::Replay(env_.get(), path_ + "/" + n, store_id_,
                                       [&](std::string_view rec, uint64_t off) -> Status {
                                         Timestamp ts;
                                         WriteBatch b;
                                         Status d = DecodeBatchRecord(rec, options_.weighted, &ts, &b);
                                         if (!d.ok()) {
                                           return io::CorruptionAt(path_ + "/" + n, off, d.message());
                                         }
                                         return Status::OK();
                                       },
                                       &lt);
      // A flush that finished just before us deletes its logs after installing its segment:
      // a log that vanished meanwhile holds nothing the store still needs.
      if (!r.ok() && !env_->FileExists(path_ + "/" + n)) continue;
      note(r);
      if (r.ok() && lt.cut_bytes != 0) {
        problems.push_back(std::string(lt.whole_damaged ? "log's last record is damaged, not torn "
                                                          "(strata repair drops it): "
                                                        : "log has a torn tail: ") +
                           lt.reason);
      }
    }
  }
  if (problems.empty()) return Status::OK();
  if (report) {
    for (const std::string& p : problems) *report += p + "\n";
  }
  return Status::Corruption(std::to_string(problems.size()) + " problem(s) found; first: " +
                            problems[0]);
}

uint64_t DBImpl::LevelTarget(size_t k) const {
  uint64_t t = options_.level1_bytes;
  for (size_t i = 0; i < k; ++i) t *= static_cast<uint64_t>(options_.level_fanout);
  return t;
}

namespace {

// Whether levels k+1.. (indexes k..) of direction dir hold nothing.
bool DeeperEmpty(const Version& v, int dir, size_t k) {
  for (size_t i = k; i < v.levels[dir].size(); ++i) {
    if (!v.levels[dir][i].empty()) return false;
  }
  return true;
}

}  // namespace

void DBImpl::L0Job(const Version& v, int dir, CompactionJob* job) const {
  VertexId lo = ~VertexId{0}, hi = 0;
  for (const auto& h : v.l0[dir]) {
    if (h->meta.num_vertices == 0) continue;
    lo = std::min(lo, h->meta.min_src);
    hi = std::max(hi, h->meta.max_src);
  }
  *job = CompactionJob();
  job->dir = dir;
  job->output_level = 1;
  job->inputs = v.l0[dir];
  if (!v.levels[dir].empty()) {
    for (const auto& h : v.levels[dir][0]) {
      if (h->meta.max_src >= lo && h->meta.min_src <= hi) job->inputs.push_back(h);
    }
  }
  job->bottom = DeeperEmpty(v, dir, 1);
  job->why = std::to_string(v.l0[dir].size()) + " L0 files";
}

bool DBImpl::PickIdle(const Version& v, CompactionJob* job) const {
  const int dirs = options_.graph_kind == GraphKind::kDirectedWithInEdges ? 2 : 1;
  for (int dir = 0; dir < dirs; ++dir) {
    if (v.l0[dir].empty()) continue;
    L0Job(v, dir, job);
    job->why = "idle, " + job->why;
    return true;
  }
  return false;
}

bool DBImpl::PickCompaction(const Version& v, CompactionJob* job) {
  const int dirs = options_.graph_kind == GraphKind::kDirectedWithInEdges ? 2 : 1;
  for (int dir = 0; dir < dirs; ++dir) {
    // Scores: L0 files / l0_compaction_trigger, and each level's bytes / its target. The
    // highest score of at least 1 runs. (Always preferring L0 -> L1 while L0 refills faster
    // than it drains never moves L1 down: every L0 -> L1 then rewrites all of a growing L1.)
    double best = 1.0;
    size_t pick = 0;
    for (size_t k = 0; k + 1 < static_cast<size_t>(options_.max_levels) && k < v.levels[dir].size(); ++k) {
      uint64_t bytes = 0;
      for (const auto& h : v.levels[dir][k]) bytes += h->meta.size_bytes;
      double score = static_cast<double>(bytes) / static_cast<double>(LevelTarget(k));
      if (score > best) {
        best = score;
        pick = k + 1;
      }
    }
    const double l0_score = static_cast<double>(v.l0[dir].size()) /
                            static_cast<double>(std::max(1, options_.l0_compaction_trigger));
    if (v.l0[dir].size() >= static_cast<size_t>(options_.l0_compaction_trigger) &&
        (pick == 0 || l0_score >= best)) {
      L0Job(v, dir, job);
      return true;
    }
    // Li -> Li+1: one file of the fullest level over its target, round-robin by vertex range.
    if (pick == 0) continue;
    const size_t k = pick - 1;
    const auto& level = v.levels[dir][k];
    auto& cursor = compact_cursor_[dir];
    if (cursor.size() <= k) cursor.resize(k + 1, 0);
    size_t i = 0;
    while (i < level.size() && level[i]->meta.min_src < cursor[k]) ++i;
    if (i == level.size()) i = 0;
    const auto& h = level[i];
    cursor[k] = h->meta.max_src + 1;
    *job = CompactionJob();
    job->dir = dir;
    job->output_level = static_cast<uint32_t>(k + 2);
    job->inputs.push_back(h);
    if (v.levels[dir].size() > k + 1) {
      for (const auto& o : v.levels[dir][k + 1]) {
        if (o->meta.max_src >= h->meta.min_src && o->meta.min_src <= h->meta.max_src) {
          job->inputs.push_back(o);
        }
      }
    }
    job->bottom = DeeperEmpty(v, dir, k + 2);
    job->why = "level " + std::to_string(k + 1) + " at " + std::to_string(best).substr(0, 4) +
               "x its target";
    return true;
  }
  return false;
}

Status DBImpl::RunJob(const CompactionJob& job) {
  const uint64_t t0 = NowMicros();
  std::vector<const SegmentReader*> readers;
  compaction::CompactionOptions co;
  co.dir = path_;
  co.output_level = job.output_level;
  co.tag = static_cast<uint32_t>(job.dir);
  co.bottom = job.bottom;
  co.weighted = options_.weighted;
  co.target_file_bytes = options_.target_file_bytes;
  co.extent_bytes = WriterExtent(options_);
  co.read_window_bytes = CompactionWindow(options_, job.inputs.size());
  co.store_id = store_id_;
  if (!job.bottom) {
    // What is older than the inputs is on the levels below the output, which only this thread
    // changes (compactions are serialized; flushes add L0 files and move min_l0 only): the
    // current Version's multi-level index says which of them hold a vertex (no file is read).
    // The Version is taken per question, not held for the job: a Version pins its whole index,
    // and a flush installing during a long compaction would otherwise keep three at once.
    const int dir = job.dir;
    const uint32_t out_level = job.output_level;
    co.older_may_hold_vertex = [this, dir, out_level](VertexId u) {
      const std::shared_ptr<const Version> v = current();
      index::VertexIndex::Located loc;
      if (!v->index[dir].Find(u, &loc)) return false;
      for (uint32_t i = 0; i < loc.size(); ++i) {
        if (loc[i].level() > out_level) return true;
      }
      return false;
    };
  }
  for (const auto& h : job.inputs) {
    readers.push_back(h->reader.get());
    co.max_ts = std::max(co.max_ts, h->meta.max_ts);
  }
  compaction::CompactionResult r;
  Status s = compaction::RunCompaction(readers, co, env_.get(), &next_file_, &r);
  if (!s.ok()) return s;
  std::vector<std::shared_ptr<SegmentHandle>> outs;
  s = OpenSegments(r.outputs, &outs);
  if (!s.ok()) return s;
  ManifestEdit edit;
  edit.added = r.outputs;
  for (const auto& h : job.inputs) edit.removed.push_back(h->meta.number);
  edit.next_file_number = next_file_.load();
  std::unique_lock<std::mutex> install(install_mu_);
  index::VertexIndex new_index;  // see FlushOldest: current() is stable under install_mu_
  const uint64_t index_t0 = NowMicros();
  s = IndexAfterCompaction(*current(), job.dir, job.inputs, outs, job.output_level,
                                    &new_index);
  const uint64_t index_micros = NowMicros() - index_t0;
  if (s.ok()) s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
  if (!s.ok()) {
    for (auto& h : outs) h->obsolete = true;  // unnamed outputs go with their handles
    return s;
  }
  {
    std::lock_guard<std::mutex> g(version_mu_);
    auto nv = std::make_shared<Version>(*current_);
    nv->index[job.dir] = std::move(new_index);
    auto gone = [&](const std::shared_ptr<SegmentHandle>& h) {
      return std::find(job.inputs.begin(), job.inputs.end(), h) != job.inputs.end();
    };
    auto& l0 = nv->l0[job.dir];
    l0.erase(std::remove_if(l0.begin(), l0.end(), gone), l0.end());
    auto& levels = nv->levels[job.dir];
    for (auto& l : levels) l.erase(std::remove_if(l.begin(), l.end(), gone), l.end());
    if (levels.size() < job.output_level) levels.resize(job.output_level);
    auto& out = levels[job.output_level - 1];
    out.insert(out.end(), outs.begin(), outs.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a->meta.min_src < b->meta.min_src;
    });
    current_ = std::move(nv);
  }
  install.unlock();
  UpdateMemoryPlan();
  // The manifest no longer names the inputs: each file goes when its last reader does.
  for (const auto& h : job.inputs) h->obsolete = true;
  compactions_.fetch_add(1, std::memory_order_relaxed);
  compaction_bytes_.fetch_add(r.bytes_written, std::memory_order_relaxed);
  Log("compaction (" + job.why + "): " + std::to_string(job.inputs.size()) + " files, " +
      std::to_string(r.entries_in) + " entries, " + std::to_string(r.bytes_read) + " bytes -> L" +
      std::to_string(job.output_level) + " " + std::to_string(r.outputs.size()) + " files, " +
      std::to_string(r.entries_out) + " entries, " + std::to_string(r.bytes_written) +
      " bytes" + (job.bottom ? " (bottom)" : "") + ", " +
      std::to_string((NowMicros() - t0) / 1000) + " ms (vertex index " +
      std::to_string(index_micros / 1000) + " ms)");
  room_cv_.notify_all();
  return Status::OK();
}

void DBImpl::CompactLoop() {
  using Clock = std::chrono::steady_clock;
  const auto idle_after = std::chrono::milliseconds(options_.idle_compaction_ms);
  // Wake often enough to notice an idle period about when it completes.
  const auto tick = std::min<Clock::duration>(
      std::chrono::seconds(1),
      options_.idle_compaction_ms > 0 ? idle_after / 4 + std::chrono::milliseconds(1)
                                      : Clock::duration(std::chrono::seconds(1)));
  uint64_t seen_batches = batches_.load(std::memory_order_relaxed);
  Clock::time_point last_write = Clock::now();
  for (;;) {
    uint64_t ticket = 0;
    bool settling = false;
    {
      std::unique_lock<std::mutex> g(bg_mu_);
      compact_cv_.wait_for(g, tick, [&] { return stop_ || compact_pending_; });
      compact_pending_ = false;
      if (stop_) return;
      if (!bg_error_.ok()) continue;
      ticket = settle_requested_;
      settling = ticket > settled_;
    }
    std::lock_guard<std::mutex> cg(compact_mu_);
    Status s;
    for (;;) {
      CompactionJob job;
      bool have = PickCompaction(*current(), &job);
      if (!have && options_.idle_compaction_ms > 0) {
        const uint64_t b = batches_.load(std::memory_order_relaxed);
        if (b != seen_batches) {
          seen_batches = b;
          last_write = Clock::now();
        }
        bool flush_pending;
        {
          std::lock_guard<std::mutex> g(bg_mu_);
          flush_pending = !sealed_.empty() || flushing_;
        }
        if (!flush_pending && (settling || Clock::now() - last_write >= idle_after)) {
          have = PickIdle(*current(), &job);
        }
      }
      if (!have) break;
      s = RunJob(job);
      std::lock_guard<std::mutex> g(bg_mu_);
      if (!s.ok()) {
        if (bg_error_.ok()) bg_error_ = s;
        Log("compaction failed: " + s.ToString());
        room_cv_.notify_all();
        break;
      }
      if (stop_) break;
    }
    if (s.ok() && settling) {
      // Settled only if no flush is pending or running and none finished since this round
      // began (a finished flush leaves compact_pending_ set, and flushing_ stays true until
      // it has): its L0 file would still be due for merging.
      std::lock_guard<std::mutex> g(bg_mu_);
      if (sealed_.empty() && !flushing_ && !compact_pending_) {
        settled_ = ticket;
        room_cv_.notify_all();
      }
    }
  }
}

Status DBImpl::WaitIdle() {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  if (options_.in_memory || options_.read_only) return Status::OK();  // no background work
  if (!options_.background_compaction) return WaitForFlushes();  // no compaction thread
  std::unique_lock<std::mutex> g(bg_mu_);
  const uint64_t ticket = ++settle_requested_;
  compact_pending_ = true;
  compact_cv_.notify_all();
  room_cv_.wait(g, [&] { return settled_ >= ticket || !bg_error_.ok() || stop_; });
  if (!bg_error_.ok()) return bg_error_;
  if (settled_ < ticket) return Status::InvalidArgument("store closed while waiting for it to settle");
  return Status::OK();
}

Status DBImpl::CompactAll() {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  if (options_.in_memory) return Status::OK();
  if (options_.read_only) return Status::NotSupported("store '" + path_ + "' is open read-only");
  Status s = FlushAll();
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> cg(compact_mu_);
  std::shared_ptr<const Version> v = current();
  const int dirs = options_.graph_kind == GraphKind::kDirectedWithInEdges ? 2 : 1;
  for (int dir = 0; dir < dirs; ++dir) {
    CompactionJob job;
    job.dir = dir;
    job.bottom = true;
    job.why = "full";
    size_t deepest = 0;
    for (size_t k = 0; k < v->levels[dir].size(); ++k) {
      if (!v->levels[dir][k].empty()) deepest = k + 1;
    }
    job.output_level = static_cast<uint32_t>(std::max<size_t>(1, deepest));
    job.inputs = v->l0[dir];
    for (const auto& l : v->levels[dir]) job.inputs.insert(job.inputs.end(), l.begin(), l.end());
    if (job.inputs.empty()) continue;
    s = RunJob(job);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace strata
