// DBImpl's change-feed parts: opening the feed, the records a commit stages, log retirement,
// and the DB methods (docs/change-feed.md).
#include "db/db_impl.h"
#include "db/filename.h"

namespace strata {

Status DBImpl::OpenFeed() {
  ChangeFeedOptions fo;
  fo.env = options_.in_memory ? nullptr : env_.get();
  fo.dir = path_;
  fo.store_id = store_id_;
  fo.weighted = options_.weighted;
  fo.kind = options_.graph_kind;
  fo.durable = !options_.in_memory && !options_.read_only && options_.wal != WalMode::kOff;
  fo.max_retained_bytes = options_.feed_max_retained_wal_bytes;
  fo.clock = &core_->clock;
  fo.log = [this](const std::string& line) { Log(line); };
  fo.persisted = [this](uint64_t gen) { RecordKeptFile(kKeptSubscriptions, gen); };
  const bool durable = fo.durable;
  feed_ = std::make_shared<ChangeFeed>(std::move(fo));
  Status s = feed_->Open();
  // Only a durable feed reads SUBSCRIPTIONS (and may write it).
  if (s.ok() && durable) s = CheckKeptStamp(kKeptSubscriptions, feed_->generation());
  // A SUBSCRIPTIONS from before files named their store: named from now on.
  if (s.ok() && durable) s = feed_->AddOwner();
  return s;
}

void DBImpl::StageChanges(Timestamp ts, const WriteBatch& batch, const Version* v) {
  // The newest state of every tier: the active memgraph's heads of the subgraphs this batch
  // writes are its prior state (the writer holds their locks; its versions are not linked yet).
  TierReader r(v, kMaxTimestamp, options_.weighted, 0);
  thread_local std::vector<ChangeRecord> records;
  BuildLiveRecords(ts, batch, options_.graph_kind, options_.weighted,
                   [&](VertexId u, VertexId x, double* w) { return r.GetEdge(0, u, x, w); },
                   &records);
  feed_->Stage(ts, &records);
}

void DBImpl::RetireLog(const std::string& path, Timestamp max_ts) {
  if (feed_) {
    feed_->RetireLog(path, max_ts);
  } else {
    env_->RemoveFile(path);
  }
}

Status DBImpl::Subscribe(const SubscribeOptions& options, ChangeHandler handler,
                         std::unique_ptr<Subscription>* out) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  return feed_->Subscribe(options, std::move(handler), out);
}

Status DBImpl::CommitPosition(const std::string& name, Timestamp ts) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  return feed_->CommitPosition(name, ts);
}

Status DBImpl::GetPosition(const std::string& name, Timestamp* ts) {
  return feed_->GetPosition(name, ts);
}

Status DBImpl::DropSubscription(const std::string& name) {
  if (closed_.load(std::memory_order_acquire)) return Status::InvalidArgument("store is closed");
  return feed_->Drop(name);
}

}  // namespace strata
