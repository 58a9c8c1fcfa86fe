// DBImpl: the store. Owns the commit clock, the reader tracer, the current Version and the
// write path (WriteBatch -> primitive memgraph ops -> MV2PL commit).
//
// This revision keeps every tier in memory (one active memgraph); the disk tier (seal, flush,
// segments, manifest) plugs in behind the same Version/TierReader seams.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "lsm/tier_reader.h"
#include "strata/db.h"
#include "version/commit_clock.h"
#include "version/reader_tracer.h"
#include "version/version.h"

namespace strata::lsm {

// What snapshots share with the DB and must outlive it if a snapshot does.
struct DBCore {
  explicit DBCore(uint32_t reader_slots) : tracer(reader_slots) {}
  version::CommitClock clock;
  version::ReaderTracer tracer;
};

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string path);
  ~DBImpl() override;

  Status Init();

  Status Write(const WriteOptions& wo, const WriteBatch& batch) override;
  Status NewVertex(VertexId* id) override;
  std::unique_ptr<Snapshot> GetSnapshot() override;
  DBStats GetStats() override;
  Status Close() override;

  // Expands a batch into primitive ops (exposed for tests).
  Status Expand(const WriteBatch& batch, std::vector<mem::PrimOp>* ops) const;

 private:
  std::shared_ptr<const version::Version> current() const {
    std::lock_guard<std::mutex> g(version_mu_);
    return current_;
  }

  const Options options_;
  const std::string path_;
  std::shared_ptr<DBCore> core_;
  mutable std::mutex version_mu_;
  std::shared_ptr<const version::Version> current_;

  std::mutex free_ids_mu_;
  std::deque<VertexId> free_ids_;  // IDs of deleted vertices, reused by NewVertex

  std::atomic<VertexId> next_id_{0};  // above every ID ever written
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> ops_{0};
};

}  // namespace strata::lsm
