#include "db/change_feed.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "db/filename.h"
#include "db/views.h"
#include "db/wal.h"
#include "util/coding.h"
#include "util/crc.h"

namespace strata {

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kInsertEdge: return "insert_edge";
    case ChangeKind::kOverwriteEdge: return "overwrite_edge";
    case ChangeKind::kDeleteEdge: return "delete_edge";
    case ChangeKind::kAddVertex: return "add_vertex";
    case ChangeKind::kDeleteVertex: return "delete_vertex";
    case ChangeKind::kPutEdge: return "put_edge";
    case ChangeKind::kDeleteEdgeOp: return "delete_edge_op";
    case ChangeKind::kViewDefined: return "view_defined";
    case ChangeKind::kViewDropped: return "view_dropped";
  }
  return "unknown";
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr char kSubsMagic[] = "SGSUBS01";
// 2: a set generation (u64) after the entry count (ChangeFeed::generation). 3: the store ID
// (u64) after it. Version 1 files (neither) are read as generation 0, version 2 without an
// owner to check; every write is version 3.
constexpr uint32_t kSubsVersion = 3;
constexpr uint32_t kSubsChecksumKind = 0x53;  // 'S'

// The batch's own effects, overlaid on the prior state: an open-addressing map of edges the
// batch wrote, and the vertices it deleted (with the op index).
struct Overlay {
  struct Slot {
    VertexId u, v;
    uint32_t seq;
    bool live;
    double w;
    bool used;
  };
  std::vector<Slot> slots;
  size_t mask = 0;
  std::vector<std::pair<VertexId, uint32_t>> deleted;  // (vertex, seq), few

  void Reset(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    if (slots.size() != cap) slots.assign(cap, Slot{});
    else for (Slot& s : slots) s.used = false;
    mask = cap - 1;
    deleted.clear();
  }
  Slot* Find(VertexId u, VertexId v, bool insert) {
    for (size_t h = static_cast<size_t>(((u * 0x9e3779b97f4a7c15ULL) ^ (v * 0xc2b2ae3d27d4eb4fULL)) >> 17) & mask;;
         h = (h + 1) & mask) {
      Slot& s = slots[h];
      if (!s.used) {
        if (!insert) return nullptr;
        s = Slot{u, v, 0, false, 0.0, true};
        return &s;
      }
      if (s.u == u && s.v == v) return &s;
    }
  }
};
thread_local Overlay overlay;

}  // namespace

void BuildLiveRecords(Timestamp ts, const WriteBatch& batch, GraphKind kind, bool weighted,
                      FunctionRef<bool(VertexId, VertexId, double*)> prior,
                      std::vector<ChangeRecord>* out) {
  out->clear();
  out->reserve(batch.Count());
  Overlay& ov = overlay;
  ov.Reset(batch.Count());
  const bool undirected = kind == GraphKind::kUndirected;
  const bool in_edges_go = kind != GraphKind::kDirected;  // a vertex delete removes in-edges too
  uint32_t seq = 0;
  for (const WriteBatch::Op& op : batch.ops()) {
    ChangeRecord r;
    r.ts = ts;
    r.u = op.u;
    if (op.type == WriteBatch::OpType::kAddVertex) {
      r.kind = ChangeKind::kAddVertex;
      out->push_back(r);
    } else if (op.type == WriteBatch::OpType::kDeleteVertex) {
      r.kind = ChangeKind::kDeleteVertex;
      out->push_back(r);
      ov.deleted.push_back({op.u, seq});
    } else {
      r.v = op.v;
      VertexId a = op.u, b = op.v;
      if (undirected && a > b) std::swap(a, b);
      // Prior state: the batch's latest op on the edge, unless a later vertex delete cleared
      // it; else the stored state (cleared by a vertex delete of this batch).
      int64_t cleared_at = -1;
      for (const auto& [x, s] : ov.deleted) {
        if (x == op.u || (in_edges_go && x == op.v)) cleared_at = std::max<int64_t>(cleared_at, s);
      }
      Overlay::Slot* slot = ov.Find(a, b, true);
      bool live;
      double old_w = 0;
      if (slot->seq != 0 && static_cast<int64_t>(slot->seq) - 1 > cleared_at) {
        live = slot->live;
        old_w = slot->w;
      } else if (cleared_at >= 0) {
        live = false;
      } else {
        live = prior(op.u, op.v, &old_w);
      }
      const double w = weighted ? op.weight : 1.0;
      slot->seq = seq + 1;
      if (op.type == WriteBatch::OpType::kDeleteEdge) {
        slot->live = false;
        if (!live) {
          ++seq;
          continue;  // deleting an absent edge changes nothing
        }
        r.kind = ChangeKind::kDeleteEdge;
        r.old_weight = old_w;
      } else {  // kInsertEdge, kSetWeight (which committed, so the edge was live)
        slot->live = true;
        slot->w = w;
        r.kind = live ? ChangeKind::kOverwriteEdge : ChangeKind::kInsertEdge;
        r.old_weight = live ? old_w : 0.0;
        r.new_weight = w;
      }
      out->push_back(r);
    }
    ++seq;
  }
}

void ReplayRecords(Timestamp ts, const WriteBatch& batch, std::vector<ChangeRecord>* out) {
  for (const WriteBatch::Op& op : batch.ops()) {
    ChangeRecord r;
    r.ts = ts;
    r.u = op.u;
    switch (op.type) {
      case WriteBatch::OpType::kAddVertex: r.kind = ChangeKind::kAddVertex; break;
      case WriteBatch::OpType::kDeleteVertex: r.kind = ChangeKind::kDeleteVertex; break;
      case WriteBatch::OpType::kInsertEdge:
      case WriteBatch::OpType::kSetWeight:
        r.kind = ChangeKind::kPutEdge;
        r.v = op.v;
        r.old_weight = kNaN;
        r.new_weight = op.weight;
        break;
      case WriteBatch::OpType::kDeleteEdge:
        r.kind = ChangeKind::kDeleteEdgeOp;
        r.v = op.v;
        r.old_weight = kNaN;
        break;
    }
    out->push_back(r);
  }
}

ChangeRecord ViewChangeRecord(Timestamp ts, const std::string& name, const ViewDefinition* def) {
  ChangeRecord r;
  r.ts = ts;
  r.kind = def != nullptr ? ChangeKind::kViewDefined : ChangeKind::kViewDropped;
  auto vc = std::make_shared<ViewChange>();
  vc->name = name;
  if (def != nullptr) vc->definition = *def;
  r.view = std::move(vc);
  return r;
}

Status ReplayLogRecord(std::string_view rec, bool weighted, Timestamp* ts,
                       std::vector<ChangeRecord>* out) {
  thread_local WriteBatch batch;
  std::string_view view_rec;
  Status s = DecodeLogRecord(rec, weighted, ts, &batch, &view_rec);
  if (!s.ok()) return s;
  if (view_rec.empty()) {
    ReplayRecords(*ts, batch, out);
    return Status::OK();
  }
  Timestamp vts;
  ViewCatalog::Op op;
  std::string name;
  ViewDefinition def;
  s = ViewCatalog::DecodeRecord(view_rec, &vts, &op, &name, &def);
  if (!s.ok()) return s;
  if (vts != *ts) return Status::Corruption("view record: timestamp differs from the commit's");
  out->push_back(ViewChangeRecord(*ts, name, op == ViewCatalog::Op::kCreate ? &def : nullptr));
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// One subscription. Queue items are whole batches; q holds what the threads (or Next) consume,
// `held` what the dispatcher delivered while the catch-up still runs.
struct ChangeFeed::Sub {
  struct Item {
    Timestamp ts;
    std::shared_ptr<const std::vector<ChangeRecord>> records;
  };
  std::string name;
  bool durable = false;
  size_t capacity = 0;
  OverflowPolicy policy = OverflowPolicy::kCancel;
  uint32_t nthreads = 1;
  ChangeHandler handler;
  Timestamp live_after = 0;  // the dispatcher gives it ts > live_after

  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> q;
  uint64_t base = 0;  // index of q.front()
  size_t q_records = 0;
  std::deque<Item> held;
  size_t held_records = 0;
  bool catching_up = false;
  Timestamp pin = 0;  // retention floor while catching up (under the feed's mu_)
  bool input_closed = false;  // no more input: consumers drain q, then end with `status`
  bool stop = false;          // consumers end now
  Status status;
  std::vector<uint64_t> cursor;
  std::vector<Timestamp> worker_ts;
  Timestamp delivered = 0;
  std::vector<std::thread> threads;
  std::thread catchup;
  std::mutex join_mu;

  bool drained_by_all() const {
    for (uint64_t c : cursor) if (c <= base) return false;
    return true;
  }
  // Under mu: pops what every consumer has passed and updates `delivered`.
  void Advance() {
    while (!q.empty() && drained_by_all()) {
      q_records -= q.front().records->size();
      q.pop_front();
      ++base;
    }
    Timestamp d = worker_ts[0];
    for (Timestamp t : worker_ts) d = std::min(d, t);
    delivered = std::max(delivered, d);
  }
  void Fail(const Status& s) {  // under mu
    if (status.ok()) status = s;
    input_closed = true;
    held.clear();
    held_records = 0;
    cv.notify_all();
  }
  void Worker(uint32_t k) {
    std::vector<ChangeRecord> local;
    std::unique_lock<std::mutex> l(mu);
    for (;;) {
      cv.wait(l, [&] { return stop || cursor[k] < base + q.size() || input_closed; });
      if (stop) return;
      if (cursor[k] >= base + q.size()) {
        if (input_closed) return;
        continue;
      }
      Item it = q[cursor[k] - base];
      l.unlock();
      if (nthreads == 1) {
        if (!it.records->empty()) handler(it.records->data(), it.records->size());
      } else {
        local.clear();
        for (const ChangeRecord& r : *it.records) {
          if (r.u % nthreads == k || IsViewChange(r.kind)) local.push_back(r);  // views: all
        }
        if (!local.empty()) handler(local.data(), local.size());
      }
      l.lock();
      ++cursor[k];
      worker_ts[k] = it.ts;
      Advance();
      cv.notify_all();
    }
  }
  void StopAndJoin() {
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
      input_closed = true;
      cv.notify_all();
    }
    std::lock_guard<std::mutex> j(join_mu);
    if (catchup.joinable() && catchup.get_id() != std::this_thread::get_id()) catchup.join();
    for (std::thread& t : threads) {
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
    }
  }
};

namespace {

class SubscriptionImpl final : public Subscription {
 public:
  SubscriptionImpl(std::shared_ptr<ChangeFeed::Sub> s, std::weak_ptr<ChangeFeed> feed)
      : s_(std::move(s)), feed_(std::move(feed)) {}
  ~SubscriptionImpl() override { Cancel(); }

  Status Next(std::vector<ChangeRecord>* out, size_t max, int timeout_ms) override {
    ChangeFeed::Sub& s = *s_;
    std::unique_lock<std::mutex> l(s.mu);
    if (s.handler) return Status::InvalidArgument("Next: this subscription has a handler");
    auto ready = [&] { return s.stop || s.cursor[0] < s.base + s.q.size() || s.input_closed; };
    if (!s.cv.wait_for(l, std::chrono::milliseconds(timeout_ms), ready)) return Status::OK();
    size_t got = 0;
    while (s.cursor[0] < s.base + s.q.size() && (got == 0 || got < max)) {
      const auto& it = s.q[s.cursor[0] - s.base];
      out->insert(out->end(), it.records->begin(), it.records->end());
      got += it.records->size();
      s.worker_ts[0] = it.ts;
      ++s.cursor[0];
    }
    s.Advance();
    s.cv.notify_all();
    if (got == 0 && (s.input_closed || s.stop)) {
      return s.status.ok() ? Status::Aborted("subscription cancelled") : s.status;
    }
    return Status::OK();
  }
  Status status() const override {
    std::lock_guard<std::mutex> g(s_->mu);
    return s_->status;
  }
  Timestamp delivered_ts() const override {
    std::lock_guard<std::mutex> g(s_->mu);
    return s_->delivered;
  }
  Status WaitDelivered(Timestamp ts, int timeout_ms) override {
    std::unique_lock<std::mutex> l(s_->mu);
    bool ok = s_->cv.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] {
      return s_->delivered >= ts || (s_->input_closed && s_->q.empty()) || s_->stop;
    });
    if (s_->delivered >= ts) return Status::OK();
    if (!s_->status.ok()) return s_->status;
    if (!ok) return Status::Busy("WaitDelivered: timed out at ts " + std::to_string(s_->delivered));
    return Status::Aborted("subscription ended at ts " + std::to_string(s_->delivered));
  }
  bool durable() const override { return s_->durable; }
  void Cancel() override {
    if (auto f = feed_.lock()) f->Remove(s_);
    s_->StopAndJoin();
  }

 private:
  std::shared_ptr<ChangeFeed::Sub> s_;
  std::weak_ptr<ChangeFeed> feed_;
};

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

ChangeFeed::ChangeFeed(ChangeFeedOptions o) : o_(std::move(o)) {}

ChangeFeed::~ChangeFeed() { Close(); }

Status ChangeFeed::ReadPositions(io::Env* env, const std::string& dir, uint64_t store_id,
                                 std::map<std::string, Position>* out, uint64_t* generation,
                                 uint32_t* version_out) {
  out->clear();
  if (generation != nullptr) *generation = 0;
  if (version_out != nullptr) *version_out = 0;
  const std::string path = SubscriptionsFilePath(dir);
  if (!env->FileExists(path)) return Status::OK();
  std::unique_ptr<io::RandomAccessFile> f;
  Status s = env->NewRandomAccessFile(path, &f);
  if (!s.ok()) return s;
  std::string data(f->Size(), '\0');
  s = f->Read(0, data.size(), data.data());
  if (!s.ok()) return s;
  auto bad = [&](const std::string& why) { return io::CorruptionAt(path, 0, why); };
  if (data.size() < 24 || data.compare(0, 8, kSubsMagic) != 0) return bad("bad magic");
  const uint64_t sum = DecodeFixed64(data.data() + data.size() - 8);
  if (Checksum64(data.data(), data.size() - 8, ChecksumSeed(kSubsChecksumKind, 0)) != sum) {
    return bad("checksum mismatch");
  }
  const uint32_t version = DecodeFixed32(data.data() + 8);
  if (version < 1 || version > kSubsVersion) return bad("unsupported version");
  const uint32_t n = DecodeFixed32(data.data() + 12);
  const char* p = data.data() + 16;
  if (version >= 2) {
    if (data.size() < (version >= 3 ? 40u : 32u)) return bad("truncated header");
    if (generation != nullptr) *generation = DecodeFixed64(p);
    p += 8;
  }
  if (version >= 3) {
    const uint64_t owner = DecodeFixed64(p);
    p += 8;
    if (store_id != 0 && owner != store_id) {
      // Another store's positions are its commit timestamps: a subscriber resumed from one
      // would skip this store's changes up to it.
      return io::CorruptionAt(path, 24, io::AnotherStore("SUBSCRIPTIONS", owner, store_id));
    }
  }
  if (version_out != nullptr) *version_out = version;
  const char* end = data.data() + data.size() - 8;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t len;
    p = DecodeVarint64(p, end, &len);
    if (p == nullptr || static_cast<uint64_t>(end - p) < len + 9) return bad("truncated entry");
    std::string name(p, len);
    p += len;
    Position pos;
    pos.ts = DecodeFixed64(p);
    pos.lost = p[8] != 0;
    p += 9;
    (*out)[name] = pos;
  }
  return Status::OK();
}

Status ChangeFeed::Open() {
  if (o_.durable) {
    Status s =
        ReadPositions(o_.env, o_.dir, o_.store_id, &positions_, &generation_, &file_version_);
    if (!s.ok()) return s;
  }
  dispatcher_ = std::thread([this] { DispatchLoop(); });
  return Status::OK();
}

void ChangeFeed::Close() {
  {
    std::lock_guard<std::mutex> g(stage_mu_);
    if (stop_) return;
    stop_ = true;
  }
  stage_cv_.notify_all();
  std::vector<std::shared_ptr<Sub>> subs;
  {
    std::lock_guard<std::mutex> g(mu_);
    closed_ = true;
    subs.swap(subs_);
    UpdateBlockCapacity();
    active_.store(0);
  }
  for (auto& s : subs) {
    std::lock_guard<std::mutex> g(s->mu);
    s->Fail(Status::Aborted("change feed: the store is closed"));
    s->stop = true;
  }
  {
    std::lock_guard<std::mutex> g(room_mu_);
    full_.store(0);
  }
  room_cv_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  for (auto& s : subs) s->StopAndJoin();
}

void ChangeFeed::WaitForRoom() {
  if (!MustWait()) return;
  std::unique_lock<std::mutex> l(room_mu_);
  room_cv_.wait_for(l, std::chrono::milliseconds(10), [&] { return !MustWait(); });
  while (MustWait()) {
    {
      std::lock_guard<std::mutex> g(stage_mu_);
      if (stop_) return;
    }
    room_cv_.wait_for(l, std::chrono::milliseconds(10), [&] { return !MustWait(); });
  }
}

void ChangeFeed::UpdateBlockCapacity() {
  int n = 0;
  size_t cap = ~size_t{0};
  for (const auto& s : subs_) {
    if (s->policy == OverflowPolicy::kBlock) {
      ++n;
      cap = std::min(cap, s->capacity);
    }
  }
  block_capacity_.store(cap);
  block_subs_.store(n);
}

void ChangeFeed::Stage(Timestamp ts, std::vector<ChangeRecord>* records) {
  auto shared = std::make_shared<std::vector<ChangeRecord>>();
  shared->swap(*records);
  staged_records_.fetch_add(shared->size(), std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(stage_mu_);
  staged_.push_back(Staged{ts, std::move(shared)});
}

void ChangeFeed::DispatchLoop() {
  std::vector<Staged> ready;
  std::vector<std::shared_ptr<Sub>> subs;
  for (;;) {
    ready.clear();
    {
      std::unique_lock<std::mutex> l(stage_mu_);
      auto deliverable = [&] {
        if (stop_) return true;
        const Timestamp tr = o_.clock->read_ts();
        for (const Staged& s : staged_) if (s.ts <= tr) return true;
        return false;
      };
      // Idle (nothing staged): sleep until a writer's Notify or Close. Staged but not yet
      // published: poll briefly (the writer notifies after it publishes, unlocked).
      stage_cv_.wait(l, [&] { return stop_ || !staged_.empty(); });
      stage_cv_.wait_for(l, std::chrono::microseconds(200), deliverable);
      if (stop_) return;
      // Every batch with ts <= t_r was staged before t_r reached it.
      const Timestamp tr = o_.clock->read_ts();
      auto mid = std::partition(staged_.begin(), staged_.end(),
                                [&](const Staged& s) { return s.ts > tr; });
      ready.assign(std::make_move_iterator(mid), std::make_move_iterator(staged_.end()));
      staged_.erase(mid, staged_.end());
    }
    if (ready.empty()) continue;
    size_t taken = 0;
    for (const Staged& st : ready) taken += st.records->size();
    staged_records_.fetch_sub(taken, std::memory_order_relaxed);
    if (block_subs_.load(std::memory_order_relaxed) != 0) {
      std::lock_guard<std::mutex> g(room_mu_);
      room_cv_.notify_all();
    }
    std::sort(ready.begin(), ready.end(),
              [](const Staged& a, const Staged& b) { return a.ts < b.ts; });
    {
      std::lock_guard<std::mutex> g(mu_);
      subs = subs_;
    }
    for (const Staged& st : ready) {
      for (const auto& sp : subs) {
        Sub& s = *sp;
        std::unique_lock<std::mutex> l(s.mu);
        if (s.input_closed || st.ts <= s.live_after) continue;
        const size_t n = st.records->size();
        auto count = [&] { return s.catching_up ? s.held_records : s.q_records; };
        if (count() > 0 && count() + n > s.capacity) {
          if (s.policy == OverflowPolicy::kCancel) {
            s.Fail(Status::Aborted("change feed: subscription" +
                                   (s.name.empty() ? std::string() : " '" + s.name + "'") +
                                   " cancelled: its queue of " + std::to_string(s.capacity) +
                                   " records was full at ts " + std::to_string(st.ts) +
                                   " (overflow policy kCancel); records up to ts " +
                                   std::to_string(st.ts - 1) + " are delivered"));
            continue;
          }
          full_.fetch_add(1);
          s.cv.wait(l, [&] {
            bool stopping;
            {
              std::lock_guard<std::mutex> g(stage_mu_);
              stopping = stop_;
            }
            return s.input_closed || count() == 0 || count() + n <= s.capacity || stopping;
          });
          {
            std::lock_guard<std::mutex> g(room_mu_);
            full_.fetch_sub(1);
          }
          room_cv_.notify_all();
          if (s.input_closed) continue;
        }
        (s.catching_up ? s.held : s.q).push_back(Sub::Item{st.ts, st.records});
        (s.catching_up ? s.held_records : s.q_records) += n;
        s.cv.notify_all();
      }
    }
  }
}

Status ChangeFeed::Subscribe(const SubscribeOptions& so, ChangeHandler handler,
                             std::unique_ptr<Subscription>* out) {
  if (!so.name.empty() && !o_.durable) {
    return Status::NotSupported(
        "Subscribe: durable subscription '" + so.name +
        "' needs the write-ahead log; this store has none (WAL off, in-memory or read-only): "
        "subscriptions are in-memory only (leave the name empty)");
  }
  if (!so.name.empty() && !ValidName(so.name)) {
    return Status::InvalidArgument("Subscribe: name '" + so.name +
                                   "' must be 1-64 letters, digits, '-', '_' or '.'");
  }
  if (so.queue_capacity == 0) return Status::InvalidArgument("Subscribe: queue_capacity is 0");
  if (so.handler_threads == 0 || so.handler_threads > 256) {
    return Status::InvalidArgument("Subscribe: handler_threads must be 1 to 256");
  }
  auto s = std::make_shared<Sub>();
  s->name = so.name;
  s->durable = !so.name.empty();
  s->capacity = so.queue_capacity;
  s->policy = so.overflow;
  s->handler = std::move(handler);
  s->nthreads = s->handler ? so.handler_threads : 1;
  s->cursor.assign(s->nthreads, 0);
  Timestamp from, t0;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (closed_) return Status::Aborted("Subscribe: the store is closed");
    Position* pos = nullptr;
    if (s->durable) {
      for (const auto& o : subs_) {
        if (o->name == so.name) return Status::Busy("Subscribe: '" + so.name + "' is subscribed already");
      }
      auto it = positions_.find(so.name);
      if (it != positions_.end()) {
        pos = &it->second;
        if (pos->lost) {
          return Status::Aborted("Subscribe: subscription '" + so.name +
                                 "' is lost: the logs it needed passed "
                                 "Options::feed_max_retained_wal_bytes and were deleted; drop "
                                 "and recreate it");
        }
      }
    }
    active_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    t0 = o_.clock->write_ts();
    from = so.from_ts != kFromNow ? so.from_ts : pos != nullptr ? pos->ts : t0;
    if (from < t0 && !o_.durable) {
      active_.fetch_sub(1);
      return Status::NotSupported("Subscribe: from_ts " + std::to_string(from) +
                                  " is in the past and this store keeps no write-ahead log to "
                                  "replay it from (in-memory subscriptions start now)");
    }
    s->live_after = std::max(from, t0);
    s->catching_up = from < t0;
    s->pin = s->catching_up ? from : kFromNow;  // only a catch-up holds logs
    s->delivered = from;
    s->worker_ts.assign(s->nthreads, from);
    if (s->durable && pos == nullptr) {
      positions_[so.name] = Position{from, false};
      ++generation_;
      Status p = PersistPositions();
      if (!p.ok()) {
        positions_.erase(so.name);
        --generation_;
        active_.fetch_sub(1);
        return p;
      }
    }
    subs_.push_back(s);
    UpdateBlockCapacity();
  }
  for (uint32_t k = 0; k < s->nthreads && s->handler; ++k) {
    s->threads.emplace_back([sp = s.get(), k] { sp->Worker(k); });
  }
  if (s->catching_up) {
    s->catchup = std::thread([this, s, from, t0] { CatchUp(s, from, t0); });
  }
  // The handle keeps the feed alive only weakly: DBImpl owns it.
  out->reset(new SubscriptionImpl(s, weak_from_this()));
  return Status::OK();
}

void ChangeFeed::CatchUp(const std::shared_ptr<Sub>& sp, Timestamp from, Timestamp to) {
  Sub& s = *sp;
  Status st;
  // Every commit <= to is in a log once it is published.
  while (o_.clock->read_ts() < to) std::this_thread::yield();
  std::vector<std::string> names;
  st = o_.env->GetChildren(o_.dir, &names);
  std::vector<std::pair<uint64_t, std::string>> logs;
  for (const std::string& n : names) {
    FileType type;
    uint64_t num;
    if (ParseFileName(n, &type, &num) && type == FileType::kWal) {
      logs.push_back({num, StoreFilePath(o_.dir, n)});
    }
  }
  std::sort(logs.begin(), logs.end());
  Timestamp next = from + 1;  // the oldest commit still to deliver
  bool first = true;
  // Batches and view changes alike: each log record is one commit.
  std::vector<std::pair<Timestamp, std::shared_ptr<std::vector<ChangeRecord>>>> batches;
  for (size_t i = 0; st.ok() && i < logs.size(); ++i) {
    batches.clear();
    uint64_t off = 0;
    bool more = false;
    st = WriteAheadLog::Tail(o_.env, logs[i].second, o_.store_id, &off,
                             [&](std::string_view rec) -> Status {
                               Timestamp ts;
                               auto recs = std::make_shared<std::vector<ChangeRecord>>();
                               Status d = ReplayLogRecord(rec, o_.weighted, &ts, recs.get());
                               if (!d.ok()) return d;
                               if (ts > from && ts <= to) batches.push_back({ts, std::move(recs)});
                               return Status::OK();
                             },
                             &more);
    if (!st.ok()) break;
    std::sort(batches.begin(), batches.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [ts, recs] : batches) {
      if (ts < next) continue;  // a batch in two logs (never expected): once
      if (first && ts > next) {
        st = Status::Aborted("change feed: commits " + std::to_string(next) + " to " +
                             std::to_string(ts - 1) +
                             " are no longer in the write-ahead log (flushed and deleted): "
                             "cannot start at ts " + std::to_string(from));
        break;
      }
      first = false;
      std::unique_lock<std::mutex> l(s.mu);
      s.cv.wait(l, [&] { return s.stop || s.q_records == 0 || s.q_records + recs->size() <= s.capacity; });
      if (s.stop) return;
      s.q_records += recs->size();
      s.q.push_back(Sub::Item{ts, std::move(recs)});
      s.cv.notify_all();
      next = ts + 1;
    }
  }
  if (st.ok() && next <= to && first) {
    st = Status::Aborted("change feed: commits " + std::to_string(next) + " to " +
                         std::to_string(to) + " are not in the write-ahead log: cannot start at ts " +
                         std::to_string(from));
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    s.pin = kFromNow;
    CollectRetained();
  }
  std::lock_guard<std::mutex> l(s.mu);
  if (!st.ok()) {
    s.Fail(st);
    return;
  }
  // An empty stretch counts as delivered.
  if (s.q.empty()) {
    for (Timestamp& t : s.worker_ts) t = std::max(t, to);
    s.delivered = std::max(s.delivered, to);
  }
  for (auto& it : s.held) s.q.push_back(std::move(it));
  s.q_records += s.held_records;
  s.held.clear();
  s.held_records = 0;
  s.catching_up = false;
  s.cv.notify_all();
}

void ChangeFeed::Remove(const std::shared_ptr<Sub>& s) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = std::find(subs_.begin(), subs_.end(), s);
  if (it == subs_.end()) return;
  subs_.erase(it);
  UpdateBlockCapacity();
  active_.fetch_sub(1);
  s->pin = kFromNow;
  CollectRetained();
}

Status ChangeFeed::CommitPosition(const std::string& name, Timestamp ts) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = positions_.find(name);
  if (it == positions_.end()) return Status::NotFound("CommitPosition: no subscription '" + name + "'");
  if (it->second.lost) return Status::Aborted("CommitPosition: subscription '" + name + "' is lost");
  if (ts > o_.clock->read_ts()) {
    return Status::InvalidArgument("CommitPosition: ts " + std::to_string(ts) +
                                   " is not committed yet");
  }
  if (ts <= it->second.ts) return Status::OK();
  it->second.ts = ts;
  Status s = PersistPositions();
  CollectRetained();
  return s;
}

Status ChangeFeed::GetPosition(const std::string& name, Timestamp* ts) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = positions_.find(name);
  if (it == positions_.end()) return Status::NotFound("no subscription '" + name + "'");
  if (it->second.lost) return Status::Aborted("subscription '" + name + "' is lost");
  *ts = it->second.ts;
  return Status::OK();
}

Status ChangeFeed::Drop(const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& o : subs_) {
    if (o->name == name) return Status::Busy("DropSubscription: '" + name + "' is subscribed");
  }
  if (positions_.erase(name) == 0) return Status::NotFound("DropSubscription: no subscription '" + name + "'");
  ++generation_;
  Status s = PersistPositions();
  CollectRetained();
  return s;
}

Status ChangeFeed::AddOwner() {
  std::lock_guard<std::mutex> g(mu_);
  if (!o_.durable || file_version_ == 0 || file_version_ >= kSubsVersion) return Status::OK();
  return PersistPositions();
}

Status ChangeFeed::PersistPositions() {
  if (!o_.durable) return Status::OK();
  std::string data(kSubsMagic, 8);
  PutFixed32(&data, kSubsVersion);
  PutFixed32(&data, static_cast<uint32_t>(positions_.size()));
  PutFixed64(&data, generation_);
  PutFixed64(&data, o_.store_id);
  for (const auto& [name, pos] : positions_) {
    PutVarint64(&data, name.size());
    data += name;
    PutFixed64(&data, pos.ts);
    data.push_back(pos.lost ? 1 : 0);
  }
  PutFixed64(&data, Checksum64(data.data(), data.size(), ChecksumSeed(kSubsChecksumKind, 0)));
  const std::string path = SubscriptionsFilePath(o_.dir);
  const std::string tmp = TempFilePath(path);
  std::unique_ptr<io::WritableFile> f;
  Status s = o_.env->NewWritableFile(tmp, &f);
  if (s.ok()) s = f->Append(data);
  if (s.ok()) s = f->Sync();
  if (s.ok()) s = f->Close();
  if (s.ok()) s = o_.env->RenameFile(tmp, path);
  if (s.ok()) s = o_.env->SyncDir(o_.dir);
  if (s.ok()) file_version_ = kSubsVersion;
  if (s.ok() && o_.persisted) o_.persisted(generation_);
  return s;
}

Timestamp ChangeFeed::RetentionFloor() const {
  Timestamp floor = kFromNow;
  for (const auto& [name, pos] : positions_) {
    if (!pos.lost) floor = std::min(floor, pos.ts);
  }
  for (const auto& s : subs_) floor = std::min(floor, s->pin);
  return floor;
}

void ChangeFeed::RetireLog(const std::string& path, Timestamp max_ts) {
  uint64_t bytes = 0;
  if (o_.env == nullptr || !o_.env->GetFileSize(path, &bytes).ok()) return;
  std::lock_guard<std::mutex> g(mu_);
  retained_.push_back(Retained{path, max_ts, bytes});
  retained_bytes_ += bytes;
  CollectRetained();
}

void ChangeFeed::CollectRetained() {
  const Timestamp floor = RetentionFloor();
  for (auto it = retained_.begin(); it != retained_.end();) {
    if (it->max_ts <= floor) {
      o_.env->RemoveFile(it->path);
      retained_bytes_ -= it->bytes;
      it = retained_.erase(it);
    } else {
      ++it;
    }
  }
  bool changed = false;
  while (retained_bytes_ > o_.max_retained_bytes && !retained_.empty()) {
    const Retained& r = retained_.front();
    bool pinned = false;
    for (const auto& s : subs_) pinned |= s->pin < r.max_ts;
    if (pinned) break;  // a running catch-up reads it: kept until it ends
    for (auto& [name, pos] : positions_) {
      if (!pos.lost && pos.ts < r.max_ts) {
        pos.lost = true;
        changed = true;
        if (o_.log) {
          o_.log("change feed: subscription '" + name + "' at ts " + std::to_string(pos.ts) +
                 " lost: retained logs passed feed_max_retained_wal_bytes (" +
                 std::to_string(o_.max_retained_bytes) + ")");
        }
        for (const auto& s : subs_) {
          if (s->name == name) {
            std::lock_guard<std::mutex> l(s->mu);
            s->Fail(Status::Aborted("change feed: subscription '" + name +
                                    "' lost: its logs passed feed_max_retained_wal_bytes"));
          }
        }
      }
    }
    o_.env->RemoveFile(r.path);
    retained_bytes_ -= r.bytes;
    retained_.pop_front();
  }
  if (changed) {
    ++generation_;
    (void)PersistPositions();
  }
}

uint64_t ChangeFeed::generation() const {
  std::lock_guard<std::mutex> g(mu_);
  return generation_;
}

uint64_t ChangeFeed::retained_bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return retained_bytes_;
}

size_t ChangeFeed::retained_logs() const {
  std::lock_guard<std::mutex> g(mu_);
  return retained_.size();
}

}  // namespace strata
