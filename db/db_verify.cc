// DBImpl::Verify: every check a store can make of itself while open (see DB::Verify).
#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

#include "db/change_feed.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/kept_files.h"

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
  std::unique_lock<std::mutex> install = versions_.LockInstalls();  // manifest and version agree
  Status s = Manifest::ReadOnly(env_.get(), path_, &st, &tail, &mpath);
  std::shared_ptr<const Version> v = current();
  install.unlock();
  note(s);
  // A torn tail a read-only open found (and left for the next writable open to cut) is the
  // crash's or the full disk's, not damage; one that appeared since is counted.
  if (s.ok() && tail.cut_bytes != 0 && !TornAtOpen(mpath, tail)) {
    problems.push_back("manifest has a torn tail: " + tail.reason);
  }
  // VIEWS and SUBSCRIPTIONS as they are on disk (each replaced by rename, so read whole),
  // against what the manifest records of them (nothing, when it could not be read).
  for (std::string& p : KeptFileProblems(env_.get(), path_, st)) problems.push_back(std::move(p));
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
    FileType type;
    uint64_t number;
    if (ParseFileName(n, &type, &number) && type == FileType::kWal &&
        StoreFilePath(path_, n) != active_log) {
      RecordLogTail lt;
      Status r = WriteAheadLog::Replay(env_.get(), path_ + "/" + n, store_id_,
                                       [&](std::string_view rec, uint64_t off) -> Status {
                                         Timestamp ts;
                                         WriteBatch b;
                                         std::string_view vrec;
                                         Status d = DecodeLogRecord(rec, options_.weighted, &ts, &b, &vrec);
                                         if (d.ok() && !vrec.empty()) {  // a view change
                                           Timestamp vts;
                                           ViewCatalog::Op op;
                                           std::string name;
                                           ViewDefinition def;
                                           d = ViewCatalog::DecodeRecord(vrec, &vts, &op, &name, &def);
                                           if (d.ok() && vts != ts) d = Status::Corruption("view record: timestamp differs from the commit's");
                                         }
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
      // The torn tail of a crashed append that open already read past, still there until
      // the log's batches are flushed: the crash's, not damage.
      if (r.ok() && lt.cut_bytes != 0 && !TornAtOpen(path_ + "/" + n, lt)) {
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

}  // namespace strata
