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
  fo.persisted = [this](uint64_t gen) { RecordSubscriptions(gen); };
  const bool durable = fo.durable;
  feed_ = std::make_shared<ChangeFeed>(std::move(fo));
  Status s = feed_->Open();
  // Only a durable feed reads SUBSCRIPTIONS (and may write it).
  if (s.ok() && durable) s = CheckSubscriptionsGeneration();
  return s;
}

void DBImpl::RecordSubscriptions(uint64_t gen) {
  if (manifest_ == nullptr) return;
  const bool kept = (kept_files_.load(std::memory_order_acquire) & kKeptSubscriptions) != 0;
  if (kept && gen <= subscriptions_generation_.load(std::memory_order_acquire)) return;
  ManifestEdit edit;
  edit.kept_files_set = kKeptSubscriptions;
  edit.subscriptions_generation = gen;
  Status s = manifest_->LogAndApply(edit, [this] { return CheckLock(); });
  if (s.ok()) {
    kept_files_.fetch_or(kKeptSubscriptions, std::memory_order_acq_rel);
    subscriptions_generation_.store(gen, std::memory_order_release);
  } else {
    Log("manifest: recording SUBSCRIPTIONS at generation " + std::to_string(gen) +
        " failed (" + s.ToString() + "); retried at its next write");
  }
}

Status DBImpl::CheckSubscriptionsGeneration() {
  const StoreState st = manifest_->state();
  subscriptions_generation_.store(st.subscriptions_generation, std::memory_order_release);
  const std::string path = StoreFilePath(path_, kSubscriptionsFile);
  const uint64_t loaded = feed_->generation();
  // A missing SUBSCRIPTIONS the manifest expects was refused or repaired by CheckKeptFiles.
  if (loaded >= st.subscriptions_generation || !env_->FileExists(path)) return Status::OK();
  ManifestEdit lower;
  lower.subscriptions_generation = loaded;
  Status s = OlderCopyFound(
      path,
      "holds the durable subscriptions as of set generation " + std::to_string(loaded) +
          ", but the manifest records generation " + std::to_string(st.subscriptions_generation) +
          " (a subscription created, dropped or lost since)",
      ", whose subscribers could resume from now and skip changes", "its subscriptions", lower);
  if (s.ok()) subscriptions_generation_.store(loaded, std::memory_order_release);
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
