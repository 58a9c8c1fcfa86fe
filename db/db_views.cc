// DBImpl's views: definition changes as commits, and view snapshots (see db/views.h and
// db/view_snapshot.h).
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/view_snapshot.h"

namespace strata {

Status DBImpl::CommitView(ViewCatalog::Op op, const std::string& name, const ViewDefinition* def,
                          bool replace) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  if (options_.read_only) return Status::NotSupported("store '" + path_ + "' is open read-only");
  std::lock_guard<std::mutex> g(view_mu_);
  Status s = views_.Check(op, name, def, replace, options_.max_vertex_id);
  if (!s.ok()) return s;
  // A commit without graph changes: its timestamp orders it with the batches. seal_mu_ shared
  // keeps Seal's "no commit in flight" (t_r == t_w) true, as for a writer.
  std::shared_lock<std::shared_mutex> sl(seal_mu_, std::defer_lock);
  if (!options_.in_memory) sl.lock();
  // Read before the commit timestamp is taken: no reader, now or later, is older.
  const Timestamp min_active = core_->tracer.MinActive(core_->clock);
  const Timestamp ts = core_->clock.NextCommit();
  // The change is logged like a batch, in commit order (docs/change-feed.md, "View definition
  // changes"): the log record is the commit point when the WAL is on. It is appended and
  // synced (both WAL modes sync before Append returns) before VIEWS is rewritten, so every
  // change in VIEWS is in the log; a crash between the two leaves it in the log only, and the
  // next open applies it to VIEWS (DBImpl::RecoverViewChange).
  if (wal_ != nullptr) {
    std::string vrec, rec;
    ViewCatalog::EncodeRecord(ts, op, name, def, &vrec);
    EncodeViewRecord(ts, vrec, &rec);
    s = wal_->Append(rec);
  }
  // The entry becomes visible to snapshots at ts or later only; none exists before Publish.
  if (s.ok()) s = views_.Commit(ts, op, name, def, min_active);
  // Staged before ts is published, like a batch's records (read after ts was taken).
  bool staged = false;
  if (s.ok() && feed_->active()) {
    std::vector<ChangeRecord> recs;
    recs.push_back(ViewChangeRecord(ts, name, op == ViewCatalog::Op::kCreate ? def : nullptr));
    feed_->Stage(ts, &recs);
    staged = true;
  }
  core_->clock.Publish(ts);  // taken, so published even when the commit failed (an empty one)
  if (staged) feed_->Notify();
  if (sl.owns_lock()) sl.unlock();  // a seal need not wait for the manifest's fsync
  // VIEWS is rewritten; under view_mu_ still, so the manifest's as-of only grows.
  if (s.ok() && !options_.in_memory) RecordKeptFile(kKeptViews, ts);
  return s;
}

Status DBImpl::CreateView(const std::string& name, const ViewDefinition& def, bool replace) {
  return CommitView(ViewCatalog::Op::kCreate, name, &def, replace);
}

Status DBImpl::DropView(const std::string& name) {
  return CommitView(ViewCatalog::Op::kDrop, name, nullptr, false);
}

Status DBImpl::ListViews(std::vector<ViewInfo>* views) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  *views = views_.List(core_->clock.read_ts());
  return Status::OK();
}

Status DBImpl::GetViewSnapshot(const std::string& name, std::unique_ptr<Snapshot>* out) {
  out->reset();
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  std::unique_ptr<Snapshot> base = GetSnapshot();
  std::shared_ptr<const CompiledView> cv;
  Status s = views_.Compile(name, *base, &cv);
  if (!s.ok()) return s;
  const Snapshot* b = base.get();
  *out = std::make_unique<ViewSnapshot>(b, std::move(base), std::move(cv));
  return Status::OK();
}

Status DBImpl::OpenView(const Snapshot& base, const std::string& name,
                        std::unique_ptr<Snapshot>* out) {
  out->reset();
  std::shared_ptr<const CompiledView> cv;
  Status s = views_.Compile(name, base, &cv);
  if (!s.ok()) return s;
  *out = std::make_unique<ViewSnapshot>(&base, nullptr, std::move(cv));
  return Status::OK();
}

Status DB::OpenAdHocView(const Snapshot& base, const ViewDefinition& def,
                         std::unique_ptr<Snapshot>* out) {
  out->reset();
  std::shared_ptr<const CompiledView> cv;
  Status s = ViewCatalog::CompileFilter(def, base, &cv);
  if (!s.ok()) return s;
  *out = std::make_unique<ViewSnapshot>(&base, nullptr, std::move(cv));
  return Status::OK();
}

}  // namespace strata
