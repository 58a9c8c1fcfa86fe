#include "db/kept_files.h"

#include <map>
#include <memory>

#include "db/change_feed.h"
#include "db/filename.h"
#include "db/views.h"

namespace strata {

const char* KeptFileName(uint32_t bit) {
  switch (bit) {
    case kKeptViews: return kViewsFile;
    case kKeptSubscriptions: return kSubscriptionsFile;
    case kKeptIdMode: return kIdModeFile;
    default: return kIdDictionaryFile;
  }
}

const char* KeptFileContents(uint32_t bit) {
  switch (bit) {
    case kKeptViews: return "its view definitions";
    case kKeptSubscriptions: return "its durable subscriptions' positions";
    case kKeptIdMode: return "its ID mode (strata ingest --ids)";
    default: return "its external-ID dictionary";
  }
}

std::string KeptFileMissing(const std::string& dir, uint32_t bit) {
  std::string out = StoreFilePath(dir, KeptFileName(bit)) +
                    ": missing; the manifest records that the store keeps " +
                    KeptFileContents(bit) + " there; restore it";
  if (KeptFileRepairable(bit)) {
    return out + ", or open with Options::repair (strata repair) to go on without it";
  }
  // Without its ID files a mapped store reads as dense: no repair can say which it was.
  return out + " (a repair cannot: without it the store's vertex IDs cannot be told apart "
               "from the internal ones)";
}

std::string KeptFileOlder(const std::string& dir, uint32_t bit, uint64_t loaded,
                          uint64_t recorded) {
  const char* kind = bit == kKeptViews ? "commit ts " : "set generation ";
  return StoreFilePath(dir, KeptFileName(bit)) + " holds " + KeptFileContents(bit) + " as of " +
         kind + std::to_string(loaded) + ", but the manifest records " + kind +
         std::to_string(recorded) + ": an older copy of it";
}

namespace {

// The stamp the file at `dir` records (it exists).
Status ReadStamp(io::Env* env, const std::string& dir, uint64_t store_id, uint32_t bit,
                 uint64_t* stamp) {
  if (bit == kKeptViews) {
    ViewCatalog catalog;
    return catalog.Load(env, dir, store_id, stamp);
  }
  std::map<std::string, ChangeFeed::Position> positions;
  return ChangeFeed::ReadPositions(env, dir, store_id, &positions, stamp);
}

}  // namespace

std::vector<std::string> KeptFileProblems(io::Env* env, const std::string& dir,
                                          const StoreState& st) {
  std::vector<std::string> out;
  for (uint32_t bit : kKeptFileBits) {
    const std::string path = StoreFilePath(dir, KeptFileName(bit));
    if (!env->FileExists(path)) {
      if ((st.kept_files & bit) != 0) out.push_back(KeptFileMissing(dir, bit));
      continue;
    }
    if (!KeptFileHasStamp(bit)) continue;
    uint64_t stamp = 0;
    Status s = ReadStamp(env, dir, st.store_id, bit, &stamp);
    const uint64_t recorded = st.kept_stamps[KeptIndex(bit)];
    if (!s.ok()) {
      out.push_back(s.ToString());
    } else if (stamp < recorded) {
      out.push_back(KeptFileOlder(dir, bit, stamp, recorded));
    }
  }
  return out;
}

std::vector<std::string> KeptFileProblems(const std::string& dir, const StoreState& st) {
  std::unique_ptr<io::Env> env;
  Status s = io::Env::Open(IoBackend::kPosix, &env);
  if (!s.ok()) return {s.ToString()};
  return KeptFileProblems(env.get(), dir, st);
}

}  // namespace strata
