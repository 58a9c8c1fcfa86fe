#include "db/log_tailer.h"

#include <algorithm>

#include "db/change_feed.h"
#include "db/filename.h"
#include "db/manifest.h"
#include "db/wal.h"
#include "io/env.h"
#include "util/clock.h"

namespace strata {

LogTailer::~LogTailer() = default;

Status LogTailer::Open(const std::string& dir, Timestamp from, std::unique_ptr<LogTailer>* out) {
  std::unique_ptr<LogTailer> t(new LogTailer());
  Status s = io::Env::Open(IoBackend::kPosix, &t->env_);
  if (!s.ok()) return s;
  if (!t->env_->FileExists(CurrentFilePath(dir))) {
    return Status::NotFound("'" + dir + "' is not a store (yet): no CURRENT");
  }
  StoreState st;
  RecordLogTail tail;
  std::string manifest_path;
  s = Manifest::ReadOnly(t->env_.get(), dir, &st, &tail, &manifest_path);
  if (!s.ok()) return s;
  t->dir_ = dir;
  t->store_id_ = st.store_id;
  t->weighted_ = st.weighted;
  t->from_now_ = from == kMaxTimestamp;
  t->next_ = t->from_now_ ? 0 : from + 1;
  *out = std::move(t);
  return Status::OK();
}

std::vector<std::string> LogTailer::TakeGaps() {
  std::vector<std::string> g;
  g.swap(gaps_);
  return g;
}

Status LogTailer::Poll(FunctionRef<void(Timestamp, const std::vector<ChangeRecord>&)> fn) {
  std::vector<std::string> names;
  Status s = env_->GetChildren(dir_, &names);
  if (!s.ok()) return s;
  std::vector<uint64_t> logs;
  for (const std::string& n : names) {
    FileType type;
    uint64_t num;
    if (ParseFileName(n, &type, &num) && type == FileType::kWal && num >= min_log_) logs.push_back(num);
  }
  std::sort(logs.begin(), logs.end());
  for (auto it = offsets_.begin(); it != offsets_.end();) {  // deleted logs: flushed
    if (!std::binary_search(logs.begin(), logs.end(), it->first)) {
      it = offsets_.erase(it);
    } else {
      ++it;
    }
  }
  for (uint64_t num : logs) {
    uint64_t& off = offsets_[num];
    bool more = false;
    s = WriteAheadLog::Tail(env_.get(), WalFilePath(dir_, num), store_id_, &off,
                            [&](std::string_view rec) -> Status {
                              Timestamp ts;
                              std::vector<ChangeRecord> recs;
                              Status d = ReplayLogRecord(rec, weighted_, &ts, &recs);
                              if (!d.ok()) return d;
                              if (from_now_ || ts >= next_) pending_[ts] = std::move(recs);
                              return Status::OK();
                            },
                            &more);
    if (s.IsNotFound() || (!s.ok() && !env_->FileExists(WalFilePath(dir_, num)))) {
      offsets_.erase(num);  // deleted between the listing and the read
      continue;
    }
    if (!s.ok()) return s;
  }
  if (!started_) {
    started_ = true;
    if (from_now_) {
      next_ = pending_.empty() ? 0 : pending_.rbegin()->first + 1;
      pending_.clear();
    } else if (!pending_.empty() && pending_.begin()->first > next_) {
      gaps_.push_back("commits " + std::to_string(next_) + " to " +
                      std::to_string(pending_.begin()->first - 1) +
                      ": no longer in the write-ahead logs (flushed and deleted)");
      next_ = pending_.begin()->first;
    }
  }
  if (next_ == 0 && !pending_.empty()) next_ = pending_.begin()->first;  // first commits of "now"
  for (;;) {
    while (!pending_.empty() && pending_.begin()->first <= next_) {
      if (pending_.begin()->first == next_) {
        fn(next_, pending_.begin()->second);
        ++next_;
      }
      pending_.erase(pending_.begin());
    }
    gap_since_ = pending_.empty() ? 0 : gap_since_;
    if (pending_.empty()) break;
    const uint64_t now = NowMicros();
    if (gap_since_ == 0) gap_since_ = now;
    if (now - gap_since_ < uint64_t{gap_wait_ms} * 1000) break;
    gaps_.push_back("commits " + std::to_string(next_) + " to " +
                    std::to_string(pending_.begin()->first - 1) +
                    ": not found in any log (deleted before they were read)");
    next_ = pending_.begin()->first;
    gap_since_ = 0;
  }
  return Status::OK();
}

}  // namespace strata
