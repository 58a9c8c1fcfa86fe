// The change feed: every committed batch as change records, in commit order, pushed to a
// handler or pulled (docs/change-feed.md).
//
//   strata::SubscribeOptions so;
//   so.name = "degree-alerts";  // durable: its position survives a restart (needs the WAL)
//   std::unique_ptr<strata::Subscription> sub;
//   db->Subscribe(so, [&](const strata::ChangeRecord* r, size_t n) { ... }, &sub);
//
// Contracts:
//   - Records come in commit-timestamp order; the records of one batch come in the batch's op
//     order, and one handler call (or one Next) never splits a batch (with handler_threads > 1,
//     see there).
//   - Handlers run on the subscription's own threads, never in a writer's commit path. A
//     writer hands its records to a bounded queue; what happens when it is full is
//     SubscribeOptions::overflow.
//   - Live records (kinds kInsertEdge ... kDeleteVertex) carry the exact prior state: an insert
//     of an existing edge is kOverwriteEdge with its old weight, a delete of an absent edge
//     produces no record. Records replayed from the write-ahead log (a from_ts in the past, a
//     durable resume, `strata watch`) are the ops as written (kPutEdge, kDeleteEdgeOp): the
//     log holds ops, not prior states. docs/change-feed.md lists which fields are exact when.
//   - A view definition change (DB::CreateView, DB::DropView) is a commit too: it yields one
//     record (kViewDefined or kViewDropped, with the view's name and new definition) at its
//     commit timestamp, in order with the batches' records, live and replayed alike; with
//     handler_threads > 1 every thread gets it.
//   - A durable subscription (a name) keeps its position (the newest timestamp whose records it
//     has processed, set by DB::CommitPosition) in the store directory and resumes after it:
//     at-least-once; exactly-once for a handler that keeps the timestamp of the last record it
//     applied in its own state and passes it back as from_ts. It needs the write-ahead log:
//     with WalMode::kOff, in-memory and read-only stores, subscriptions are in-memory only
//     (live, from now) and a name is NotSupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "strata/status.h"
#include "strata/types.h"
#include "strata/view.h"

namespace strata {

enum class ChangeKind : uint8_t {
  // Live records: exact.
  kInsertEdge = 0,     // (u,v) was absent; now new_weight
  kOverwriteEdge = 1,  // (u,v) was live with old_weight; now new_weight (maybe the same)
  kDeleteEdge = 2,     // (u,v) was live with old_weight; now absent
  kAddVertex = 3,      // an AddVertex op, as written (the vertex may have existed)
  kDeleteVertex = 4,   // a DeleteVertex op; the edges it removes get no record of their own
  // Records replayed from the write-ahead log: the op as written, old_weight NaN.
  kPutEdge = 5,       // InsertEdge or SetWeight: insert or overwrite with new_weight
  kDeleteEdgeOp = 6,  // DeleteEdge: the edge may have been absent
  // View definition changes (live and replayed alike; ChangeRecord::view says which view).
  kViewDefined = 7,  // CreateView, or CreateView with replace: `view` holds the new definition
  kViewDropped = 8,  // DropView
};

// Whether a record is a view definition change rather than a graph change.
inline bool IsViewChange(ChangeKind kind) {
  return kind == ChangeKind::kViewDefined || kind == ChangeKind::kViewDropped;
}

// The view a kViewDefined / kViewDropped record is about.
struct ViewChange {
  std::string name;
  ViewDefinition definition;  // kViewDefined: the definition from the record's ts on
};

// "insert_edge", "overwrite_edge", ... (the JSON names `strata watch` prints).
const char* ChangeKindName(ChangeKind kind);

struct ChangeRecord {
  Timestamp ts = 0;  // the batch's commit timestamp
  ChangeKind kind = ChangeKind::kInsertEdge;
  VertexId u = 0;
  VertexId v = 0;            // 0 for vertex records
  double old_weight = 0.0;   // kOverwriteEdge, kDeleteEdge; NaN for replayed kinds; else 0
  double new_weight = 0.0;   // kInsertEdge, kOverwriteEdge, kPutEdge; else 0
  // kViewDefined, kViewDropped only (u and v are 0); null for graph changes. Shared, never
  // changed: copies of a record share it.
  std::shared_ptr<const ViewChange> view;
};

// What a subscription does when its queue is full.
enum class OverflowPolicy : uint8_t {
  // The subscription ends: status() becomes Aborted naming the timestamp, its threads stop,
  // writers never wait. A durable subscriber subscribes again and resumes from its position.
  kCancel = 0,
  // Backpressure: writers wait, before they take a commit timestamp, until the queue has room.
  // A handler of such a subscription must not write to the store (it would wait for itself).
  kBlock = 1,
};

// from_ts value: start with the next commit.
inline constexpr Timestamp kFromNow = std::numeric_limits<Timestamp>::max();

struct SubscribeOptions {
  // Empty: in-memory subscription. Set: durable (letters, digits, '-', '_', '.'; at most 64).
  std::string name;
  // Deliver records of commits with ts > from_ts. kFromNow: from the next commit; for a durable
  // name that exists, from its committed position. An explicit value overrides the position.
  // A past value needs the write-ahead log still to hold those commits.
  Timestamp from_ts = kFromNow;
  // Records queued and not yet handled before the overflow policy applies (soft by at most one
  // batch per concurrent writer).
  size_t queue_capacity = size_t{1} << 20;
  OverflowPolicy overflow = OverflowPolicy::kCancel;
  // Handler threads. With n > 1 each record goes to thread u % n: order is kept per source
  // vertex, and a call holds the records of whole batches that thread owns.
  uint32_t handler_threads = 1;
};

// Called on a subscription thread with records of one or more whole batches.
using ChangeHandler = std::function<void(const ChangeRecord* records, size_t n)>;

class Subscription {
 public:
  virtual ~Subscription() = default;  // cancels (waits for a running handler call to return)

  // Pull mode (Subscribe without a handler): appends records of whole batches (at least one
  // batch when there is one, then more while fewer than `max` records) and returns; waits up
  // to timeout_ms when none is queued. The status of the subscription (Aborted after an
  // overflow, the store's close) once everything before it was returned.
  virtual Status Next(std::vector<ChangeRecord>* out, size_t max, int timeout_ms) = 0;

  // OK while running; why it ended otherwise.
  virtual Status status() const = 0;
  // The newest commit timestamp whose records every handler thread has returned from (pull
  // mode: returned by Next). Starts at the subscription's start point.
  virtual Timestamp delivered_ts() const = 0;
  // Waits until delivered_ts() >= ts, the subscription ends, or timeout_ms passes.
  virtual Status WaitDelivered(Timestamp ts, int timeout_ms) = 0;
  // True when the position persists (a name on a store with a write-ahead log).
  virtual bool durable() const = 0;
  // Stops delivery; idempotent. Must not be called from the subscription's own handler.
  virtual void Cancel() = 0;
};

}  // namespace strata
