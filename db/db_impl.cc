#include "db/db_impl.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string>

#include "compaction/compactor.h"
#include "compaction/flush.h"
#include "db/filename.h"
#include "db/snapshot_impl.h"
#include "util/clock.h"
#include "util/scratch.h"

namespace strata {

namespace {

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
  if (o.max_subcompactions < 1 || o.max_subcompactions > 64) {
    return Status::InvalidArgument("max_subcompactions: must be in [1, 64]");
  }
  if (!o.in_memory) return CheckMemoryBudget(o);
  return Status::OK();
}

}  // namespace

DBImpl::DBImpl(const Options& options, std::string path)
    : options_(options),
      path_(std::move(path)),
      core_(std::make_shared<DBCore>(options.reader_slots)),
      picker_(options_),
      planner_(options_) {}

DBImpl::~DBImpl() { Close(); }

std::shared_ptr<mem::MemGraph> DBImpl::NewMemGraph() {
  mem::MemGraphOptions mo;
  mo.kind = options_.graph_kind;
  mo.weighted = options_.weighted;
  mo.tombstones = !options_.in_memory;  // deletes must shadow older tiers
  mo.cart_threshold = options_.cart_threshold;
  if (!options_.in_memory) {
    // The plan counts a memgraph at its capacity, as bytes(); what the writers' free lists
    // hold is outside it (10-13 MiB a 64 MiB memgraph at seal with 8 MiB lists: ingest_large
    // scale 23). A sixty-fourth of the capacity per list (and per class of the lists' depot,
    // NodeAllocator): that run's peak RSS 543-553 -> 531 MiB, the rate unchanged
    // (docs/benchmarks.md, "the free lists bounded").
    mo.free_list_class_bytes = std::min(mem::NodeAllocator::kPoolClassBytes,
                                        std::max<size_t>(size_t{64} << 10, memgraph_capacity() / 64));
    // Sealed and flushed at its capacity, its arena reset whole: its slabs' fill does not
    // last, and the caches made its load ~7% faster. The in-memory store's one memgraph lives
    // as long as the store, and keeps its slabs compact without them.
    mo.thread_caches = true;
  }
  auto mg = std::make_shared<mem::MemGraph>(mo, &core_->clock, &core_->tracer);
  if (!options_.in_memory) mg->set_spare_arena(planner_.keep_spare());
  return mg;
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
    versions_.Reset(std::move(v));
    return OpenFeed();
  }
  s = OpenDisk();
  if (s.ok()) {
    s = OpenFeed();
    // OpenDisk started the flush and compaction threads: a failed open stops them (a thread
    // still joinable at destruction ends the process). Nothing is flushed: the replayed
    // batches stay in their logs, as after a crash.
    if (!s.ok()) StopBackgroundThreads();
  }
  if (!s.ok()) {
    closed_ = true;
    ReleaseLock();
  }
  return s;
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

Status DBImpl::Expand(const WriteBatch& batch, std::vector<mem::PrimOp>* ops) const {
  using mem::PrimOp;
  const GraphKind kind = options_.graph_kind;
  ops->clear();
  ops->reserve(batch.Count() * 2);
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
        // A kPut adds the vertex whose list it writes, so v needs a kAddVertex of its own only
        // where no put names it (out-lists alone): the ops of an insert are half of what they
        // were, and so is the batch's sort by subgraph (docs/benchmarks.md, "Issue 28: edge
        // inserts without vertex ops").
        push(PrimOp::kPut, 0, op.u, op.v, w);
        if (kind == GraphKind::kDirectedWithInEdges) push(PrimOp::kPut, 1, op.v, op.u, w);
        if (kind == GraphKind::kUndirected) push(PrimOp::kPut, 0, op.v, op.u, w);
        if (kind == GraphKind::kDirected) push(PrimOp::kAddVertex, 0, op.v, 0, 0);
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
  feed_->WaitForRoom();
  // Records are staged in the commit hook (under the batch's locks, in commit order) only
  // while a subscription exists; the dispatcher is woken once the batch is applied.
  // No Version is copied unless the batch needs one (VersionSet::active(), OlderTierView): a
  // copy took version_mu_ and the Version's reference count, which every writer shared.
  bool staged = false;
  std::shared_ptr<const Version> pinned;  // for the change feed, when a subscription exists
  auto stage = [&](Timestamp t) {
    if (feed_->active()) {
      if (pinned == nullptr) pinned = current();  // its active memgraph is the one written
      StageChanges(t, batch, pinned.get());
      staged = true;
    }
  };
  if (options_.in_memory) {
    mem::MemGraph* active = versions_.active();  // an in-memory store never seals
    auto hook = [&](Timestamp t) -> Status {
      stage(t);
      return Status::OK();
    };
    FunctionRef<Status(Timestamp)> hook_ref(hook);
    s = active->Apply(&ops, nullptr, &ts, &hook_ref);
  } else {
    std::shared_lock<std::shared_mutex> sl(seal_mu_);
    while (!HasRoom()) {
      sl.unlock();
      s = MakeRoom();
      if (!s.ok()) return s;
      sl.lock();
    }
    mem::MemGraph* active = versions_.active();  // no seal while sl is held
    OlderTierView older(&versions_, options_.weighted);
    std::string rec;
    WriteAheadLog* log = wal_.get();
    auto hook = [&](Timestamp t) -> Status {
      if (log != nullptr) {
        rec.clear();
        EncodeBatchRecord(t, batch, options_.weighted, &rec);
        Status a = log->Append(rec);
        if (!a.ok()) return a;
      }
      stage(t);
      return Status::OK();
    };
    FunctionRef<Status(Timestamp)> hook_ref(hook);
    s = active->Apply(&ops, &older, &ts, &hook_ref);
    if (s.ok()) s = older.status();
  }
  if (!s.ok()) return s;
  if (staged) feed_->Notify();
  batches_.Add(1);
  ops_.Add(static_cast<int64_t>(batch.Count()));
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

bool DBImpl::L0Stalls(size_t l0_files) const {
  return options_.background_compaction &&
         l0_files >= static_cast<size_t>(options_.l0_stall_trigger);
}

bool DBImpl::HasRoom() const {
  if (L0Stalls(versions_.l0_files())) return false;
  // An empty memgraph takes the write whatever its size says (a capacity the plan shrank
  // below an empty memgraph's own bytes must not stall writers for good).
  const mem::MemGraph* active = versions_.active();
  const size_t bytes = active->bytes(), cap = memgraph_capacity();
  if (bytes < cap || !active->HasCommits()) return true;
  // Between capacity and 1.25x it (writers' work in flight included) the seal check comes
  // when predicted (seal_check_at_ops_); past 1.25x at every write, whatever the prediction.
  if (bytes >= cap + cap / 4) return false;
  const uint64_t check_at = seal_check_at_ops_.load(std::memory_order_relaxed);
  return check_at != 0 && ops_.Count() < check_at;
}

Status DBImpl::MakeRoom() {
  for (;;) {
    const size_t l0_files = versions_.l0_files();
    if (L0Stalls(l0_files)) {
      // Level 0 piles up faster than compaction drains it: wait for a compaction.
      std::unique_lock<std::mutex> g(bg_mu_);
      if (!bg_error_.ok()) return bg_error_;
      const uint64_t t0 = NowMicros();
      LogStall(&last_l0_stall_log_, "level 0 has " + std::to_string(l0_files) +
                                        " files (l0_stall_trigger " +
                                        std::to_string(options_.l0_stall_trigger) +
                                        "): writers wait for a compaction");
      compact_pending_ = true;
      compact_cv_.notify_all();
      l0_waiters_.fetch_add(1, std::memory_order_relaxed);
      room_cv_.wait_for(g, std::chrono::milliseconds(100));
      l0_waiters_.fetch_sub(1, std::memory_order_relaxed);
      stall_l0_micros_.fetch_add(NowMicros() - t0, std::memory_order_relaxed);
      continue;
    }
    // A memgraph's bytes swing by what writers have in flight (the versions their builds
    // allocate before they commit and those their commits free after: up to 2-3 MiB with two
    // writers of 1024-edge batches). The seal check sees the contents alone, since it drains
    // the writers; one that finds them short of capacity lets the write go ahead and says
    // when to check again (seal_check_at_ops_; HasRoom). Before, a quick ingest_large (4 MiB
    // memgraphs) checked 570 times for 50 seals, each check draining both writers (506 ms in
    // all), and a writer whose check found the memgraph not full still stalled on the
    // previous one's flush (docs/benchmarks.md, "the seal check").
    const mem::MemGraph* full;
    {
      std::shared_lock<std::shared_mutex> sl(seal_mu_);
      if (HasRoom()) return Status::OK();
      if (L0Stalls(versions_.l0_files())) continue;
      full = versions_.active();
    }
    {
      std::lock_guard<std::mutex> g(bg_mu_);
      if (!bg_error_.ok()) return bg_error_;
      if (stop_) return Status::Aborted("store is closing");
    }
    const SealResult sealed = Seal(false, full);
    if (sealed == SealResult::kSealed) continue;
    if (sealed == SealResult::kNotFull) return Status::OK();  // the write goes ahead
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

DBImpl::SealResult DBImpl::Seal(bool force, const mem::MemGraph* full) {
  std::unique_lock<std::shared_mutex> ex(seal_mu_);  // no writer in flight from here on
  std::shared_ptr<const Version> v = current();
  const std::shared_ptr<mem::MemGraph>& active = v->memgraphs[0];
  if (!active->HasCommits()) return SealResult::kNotFull;  // nothing to seal
  if (!force) {
    if (active.get() != full) return SealResult::kNotFull;  // sealed meanwhile: a new one
    const size_t bytes = active->bytes();
    const size_t cap = memgraph_capacity();
    if (bytes < cap - cap / 32) {
      // The room left, at the highest bytes per op a check found in this memgraph: the first
      // checks come while its contents still grow as new edges make them grow (a subgraph's
      // first version in a memgraph is its dearest, so the rate then is at least an op's
      // now), and a later phase of ops that add little cannot lower it. So the next check
      // comes no later than the contents can reach capacity, and each leaves less room,
      // down to the 1/32 that seals.
      const uint64_t now = ops_.Count();
      const uint64_t in = now > active_first_ops_ ? now - active_first_ops_ : 0;
      const double rate =
          static_cast<double>(bytes) / static_cast<double>(std::max<uint64_t>(in, 1));
      active_bytes_per_op_ = std::max(active_bytes_per_op_, rate);
      const uint64_t more = std::max<uint64_t>(
          1, static_cast<uint64_t>(static_cast<double>(cap - bytes) / active_bytes_per_op_));
      seal_check_at_ops_.store(now + more, std::memory_order_relaxed);
      return SealResult::kNotFull;
    }
  }
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    if (sealed_.size() >= static_cast<size_t>(options_.max_sealed_memgraphs)) {
      return SealResult::kNoSlot;
    }
  }
  std::unique_ptr<WriteAheadLog> next_log;
  if (options_.wal != WalMode::kOff) {
    Status s = NewLog(&next_log);
    if (!s.ok()) {
      std::lock_guard<std::mutex> g(bg_mu_);
      if (bg_error_.ok()) bg_error_ = s;
      room_cv_.notify_all();
      return SealResult::kNoSlot;  // MakeRoom's wait sees the error and returns it
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
  versions_.PushActiveMemGraph(NewMemGraph());
  seal_check_at_ops_.store(0, std::memory_order_relaxed);
  active_first_ops_ = ops_.Count();
  active_bytes_per_op_ = 0;
  bg_cv_.notify_all();
  Log("seal: memgraph of " + std::to_string(bytes) + " bytes at ts " +
      std::to_string(core_->clock.read_ts()));
  return SealResult::kSealed;
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
  fo.drop_page_cache = options_.drop_written_pages;
  compaction::FlushResult r;
  {
    // The plan learns what this memgraph's nodes cost in pages, and decides whether its
    // arena is kept for the next memgraph (MemoryPlanner).
    const size_t before = memgraph_capacity();
    planner_.NoteSealedPages(mg->arena_pages_bytes(), mg->bytes(), cache_.get(),
                             [this](const std::string& l) { Log(l); });
    mg->set_spare_arena(planner_.keep_spare());
    if (memgraph_capacity() < before) seal_check_at_ops_.store(0, std::memory_order_relaxed);
  }
  uint64_t first_number = next_file_.fetch_add(2);
  uint64_t number = first_number;
  Status s = compaction::FlushMemGraph(*mg, fo, env_.get(), &number, &r);
  if (!s.ok()) return s;

  std::vector<std::shared_ptr<SegmentHandle>> handles;
  const uint64_t open_t0 = NowMicros();
  s = OpenSegments(r.files, &handles, &r);  // with the presence the flush made
  if (!s.ok()) return s;
  const uint64_t open_micros = NowMicros() - open_t0;
  ManifestEdit edit;
  edit.added = r.files;
  edit.last_flushed_ts = seal_ts;
  {
    // The same edit unlists the logs whose batches it makes obsolete (retired below).
    std::lock_guard<std::mutex> g(bg_mu_);
    const Sealed& sealed = sealed_.at(mg.get());
    for (const auto& l : sealed.logs) edit.logs_removed.push_back(l->number());
    for (const std::string& p : sealed.replayed_logs) {
      edit.logs_removed.push_back(WalNumberOfPath(p));
    }
  }
  edit.next_file_number = next_file_.load();
  edit.next_vertex_id = next_id_.load();
  VersionChange change;
  change.kind = VersionChange::kFlush;
  change.flushed = mg;
  change.added = handles;
  // On failure the new files are unnamed: removed as leftovers on the next open.
  s = versions_.LogAndApply(manifest_.get(), edit, [this] { return CheckLock(); }, change);
  if (!s.ok()) return s;
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
    RetireLog(p, seal_ts);
  }
  for (const std::string& p : info.replayed_logs) RetireLog(p, seal_ts);
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
      std::to_string((NowMicros() - t0) / 1000) + " ms (opening with level-0 presence " +
      std::to_string(open_micros / 1000) + " ms)");
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
    if (!current()->memgraphs[0]->HasCommits()) break;
    if (Seal(true) == SealResult::kSealed) break;
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
  return versions_.WithCurrent([&](const std::shared_ptr<const Version>& v) {
    mvcc::ReaderTracer::Slot slot = core_->tracer.Register(core_->clock);
    return std::make_unique<SnapshotImpl>(core_, slot, v, options_.graph_kind, options_.weighted);
  });
}

void DBImpl::UpdateMemoryPlan() {
  if (!cache_) return;
  const size_t before = memgraph_capacity();
  planner_.Update(versions_, cache_.get(), [this](const std::string& line) { Log(line); });
  // A seal check predicted from a larger capacity could come after the contents pass the
  // smaller one.
  if (memgraph_capacity() < before) seal_check_at_ops_.store(0, std::memory_order_relaxed);
}

Status DBImpl::Close() {
  if (closed_.exchange(true)) return Status::OK();
  if (feed_) feed_->Close();  // ends subscriptions first: a kBlock one could hold writers
  if (options_.in_memory) return Status::OK();
  // Read-only: what was replayed stays in its logs (nothing is flushed, nothing deleted).
  Status s = options_.read_only ? Status::OK() : FlushAll();
  StopBackgroundThreads();
  // After a clean flush the active memgraph is empty: its log holds no batch to replay, but
  // maybe view changes committed since the flush, which a durable subscription may still
  // need: retired like a flushed log (RetireLog), not deleted outright. The logs replayed at
  // open go too. Each is unlisted from the manifest first; if that fails they stay (and are
  // replayed, holding nothing newer than the flush, at the next open).
  std::vector<std::string> retire;
  if (wal_) {
    std::string p = wal_->path();
    Status c = wal_->Close();
    if (s.ok() && c.ok() && !current()->memgraphs[0]->HasCommits()) retire.push_back(p);
    wal_.reset();
  }
  if (s.ok() && !options_.read_only) {
    retire.insert(retire.end(), active_replayed_.begin(), active_replayed_.end());
  }
  if (!retire.empty() && UnlistLogs(retire).ok()) {
    for (const std::string& p : retire) RetireLog(p, core_->clock.read_ts());
  }
  if (s.ok()) RecordFoundKeptFiles();
  Log("close: " + s.ToString());
  manifest_.reset();
  {
    std::lock_guard<std::mutex> g(log_mu_);
    if (event_log_) event_log_->Close();
    event_log_.reset();
  }
  ReleaseLock();
  return s;
}

void DBImpl::StopBackgroundThreads() {
  {
    std::lock_guard<std::mutex> g(bg_mu_);
    stop_ = true;
  }
  bg_cv_.notify_all();
  room_cv_.notify_all();
  compact_cv_.notify_all();
  if (flush_thread_.joinable()) flush_thread_.join();
  if (compact_thread_.joinable()) compact_thread_.join();
}

void DBImpl::ReleaseLock() {
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  if (dir_fd_ >= 0) {
    ::close(dir_fd_);
    dir_fd_ = -1;
  }
}

Status DBImpl::InstallCompaction(const CompactionJob& job,
                                 const std::vector<std::shared_ptr<SegmentHandle>>& outs,
                                 uint64_t* index_micros) {
  ManifestEdit edit;
  for (const auto& h : job.inputs) edit.removed.push_back(h->meta.number);
  for (const auto& h : outs) edit.added.push_back(h->meta);
  edit.next_file_number = next_file_.load();
  VersionChange change;
  change.kind = VersionChange::kCompaction;
  change.dir = job.dir;
  change.level = job.output_level;
  change.added = outs;
  change.removed = job.inputs;
  Status s = versions_.LogAndApply(manifest_.get(), edit, [this] { return CheckLock(); }, change,
                                   index_micros);
  if (!s.ok()) return s;
  UpdateMemoryPlan();
  compactions_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status DBImpl::MoveJob(const CompactionJob& job) {
  const uint64_t t0 = NowMicros();
  const std::shared_ptr<SegmentHandle>& in = job.inputs[0];
  auto h = std::make_shared<SegmentHandle>();
  h->env = in->env;
  h->cache = in->cache;
  h->meta = in->meta;
  h->meta.level = job.output_level;
  h->path = in->path;
  h->reader = in->reader;
  uint64_t index_micros = 0;
  // The edit removes the file, then adds it at its new level; neither handle is marked
  // obsolete: the manifest still names the file.
  Status s = InstallCompaction(job, {h}, &index_micros);
  if (!s.ok()) return s;
  compaction_moves_.fetch_add(1, std::memory_order_relaxed);
  Log("compaction (" + job.why + "): moved " + SegmentFileName(in->meta.number) + " (" +
      std::to_string(in->meta.size_bytes) + " bytes, " + std::to_string(in->meta.num_edges) +
      " entries) L" + std::to_string(in->meta.level) + " -> L" +
      std::to_string(job.output_level) + ", nothing there overlaps it" +
      (job.bottom ? " (bottom)" : "") + ", " + std::to_string((NowMicros() - t0) / 1000) +
      " ms (vertex index " + std::to_string(index_micros / 1000) + " ms)");
  room_cv_.notify_all();
  return Status::OK();
}

Status DBImpl::RunJob(const CompactionJob& job, const compaction::PartPlan& plan) {
  if (job.move) return MoveJob(job);
  const int threads = plan.MaxThreads();  // segment writers and read windows at once
  const uint64_t t0 = NowMicros();
  std::vector<const SegmentReader*> readers;
  compaction::CompactionOptions co;
  co.dir = path_;
  co.output_level = job.output_level;
  co.tag = static_cast<uint32_t>(job.dir);
  co.bottom = job.bottom;
  co.weighted = options_.weighted;
  co.target_file_bytes = options_.target_file_bytes;
  co.extent_bytes = WriterExtent(options_, threads);
  // Every part reads every input: the I/O reserve's share is split among the parts merging
  // at once.
  co.read_window_bytes =
      CompactionWindow(options_, job.inputs.size() * static_cast<size_t>(std::max(threads, 1)));
  co.store_id = store_id_;
  co.drop_page_cache = options_.drop_written_pages;
  if (!job.bottom) {
    // What is older than the inputs is on the levels below the output, which only this thread
    // changes (compactions are serialized; flushes add L0 files, which the index does not
    // hold): the
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
  Status s = compaction::RunCompactionParts(readers, co, plan, env_.get(), &next_file_, &r,
                                           compaction::MinPartEdges());
  if (!s.ok()) return s;
  std::vector<std::shared_ptr<SegmentHandle>> outs;
  s = OpenSegments(r.outputs, &outs);
  if (!s.ok()) return s;
  uint64_t index_micros = 0;
  s = InstallCompaction(job, outs, &index_micros);
  if (!s.ok()) {
    for (auto& h : outs) h->obsolete = true;  // unnamed outputs go with their handles
    return s;
  }
  // The manifest no longer names the inputs: each file goes when its last reader does.
  for (const auto& h : job.inputs) h->obsolete = true;
  compaction_parts_.fetch_add(static_cast<uint64_t>(r.parts), std::memory_order_relaxed);
  if (r.threads > plan.threads) compactions_joined_.fetch_add(1, std::memory_order_relaxed);
  compaction_bytes_.fetch_add(r.bytes_written, std::memory_order_relaxed);
  Log("compaction (" + job.why + "): " + std::to_string(job.inputs.size()) + " files, " +
      std::to_string(r.entries_in) + " entries, " + std::to_string(r.bytes_read) + " bytes -> L" +
      std::to_string(job.output_level) + " " + std::to_string(r.outputs.size()) + " files, " +
      std::to_string(r.entries_out) + " entries, " + std::to_string(r.bytes_written) +
      " bytes" + (job.bottom ? " (bottom)" : "") + ", " +
      (r.parts > 1
           ? std::to_string(r.parts) + " parts on " + std::to_string(r.threads) +
                 (r.threads > plan.threads ? " threads (one joined: writers stalled or WaitIdle), "
                                           : " threads, ")
           : "") +
      std::to_string((NowMicros() - t0) / 1000) + " ms (vertex index " +
      std::to_string(index_micros / 1000) + " ms)");
  room_cv_.notify_all();
  return Status::OK();
}

compaction::PartPlan DBImpl::BesideWriters(const CompactionJob& job) const {
  // Only a merge of level 0 is what stalled writers wait for; the deeper ones stay one part
  // (parts cut outputs at their boundaries: more, smaller files).
  if (options_.max_subcompactions <= 1 || job.output_level != 1) return {1, 1, {}};
  // A second thread joins once someone waits on the merge: writers stalled on level 0, or a
  // WaitIdle caller (the load has ended; ingest_large quick's last merge of the load ran
  // alone for ~0.4 s while the other core idled: docs/benchmarks.md, "settling merges").
  return {2 * options_.max_subcompactions, 1, [this] {
            return l0_waiters_.load(std::memory_order_relaxed) > 0 ||
                   settle_waiters_.load(std::memory_order_relaxed) > 0;
          }};
}

void DBImpl::CompactLoop() {
  using Clock = std::chrono::steady_clock;
  const auto idle_after = std::chrono::milliseconds(options_.idle_compaction_ms);
  // Wake often enough to notice an idle period about when it completes.
  const auto tick = std::min<Clock::duration>(
      std::chrono::seconds(1),
      options_.idle_compaction_ms > 0 ? idle_after / 4 + std::chrono::milliseconds(1)
                                      : Clock::duration(std::chrono::seconds(1)));
  int64_t seen_batches = batches_.Sum();
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
      bool have = picker_.Pick(*current(), &job);
      // Parts on more than one thread from the start only where the merge takes no core from
      // a writer: the store is settling (WaitIdle) or idle, or writers are stalled on level 0
      // anyway. While writers run, a second merging thread took as much from them as it gave
      // the merge (ingest_large quick: the last merges 0.84-0.92 -> 0.32-0.40 s, the ingest
      // before them 4.5-4.8 -> 4.9-5.0 s); such a merge gets its second thread only if
      // writers come to wait on level 0 while it runs (BesideWriters).
      bool alone = settling || (have && L0Stalls(current()->l0[job.dir].size()));
      if (!have && options_.idle_compaction_ms > 0) {
        const int64_t b = batches_.Sum();
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
          have = picker_.PickIdle(*current(), &job);
          alone = true;
        }
      }
      if (!have) break;
      s = RunJob(job, alone ? compaction::PartPlan::AllAtOnce(options_.max_subcompactions)
                            : BesideWriters(job));
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
  settle_waiters_.fetch_add(1, std::memory_order_relaxed);
  room_cv_.wait(g, [&] { return settled_ >= ticket || !bg_error_.ok() || stop_; });
  settle_waiters_.fetch_sub(1, std::memory_order_relaxed);
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
    if (!picker_.PickFull(*v, dir, &job)) continue;
    s = RunJob(job, compaction::PartPlan::AllAtOnce(options_.max_subcompactions));
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace strata
