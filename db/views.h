// The view catalog: every view definition of a store with its history, the VIEWS file that
// persists it, and the compilation of a definition into the filter a ViewSnapshot applies
// (docs/views.md; the file's layout is in docs/file-format.md).
//
// History: name -> the definitions it had, oldest first, each with the commit timestamp it
// took effect at (a drop is an entry too). A snapshot at ts sees, for each name, the newest
// entry with entry.ts <= ts. Entries are appended by one committer at a time (the caller
// serializes commits: DBImpl's view_mu_), in increasing timestamp order.
//
// Invariant kept by Check (run against the newest state before every commit): every state of
// the history is closed — each operand of a live set operation names a live view, and the
// operand graph has no cycle. So resolving any view at any timestamp succeeds.
//
// VIEWS is rewritten whole (VIEWS.tmp, fsync, rename, directory fsync) on each commit: a crash
// leaves the old file or the new one, never a torn one, so any damage is Corruption naming the
// file and the offset. It holds the history as pruned at the last commit (see Commit); loading
// keeps only each name's newest entry (no snapshot taken before an open can exist after it)
// and drops names whose newest entry is a drop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "io/env.h"
#include "strata/snapshot.h"
#include "strata/status.h"
#include "strata/view.h"

namespace strata {

// A definition resolved at one timestamp for one snapshot: the vertex set V as a bitmap over
// [0, bound) and, when E is not simply the subgraph induced by V, an edge predicate.
class CompiledView {
 public:
  // Edge predicate node (a small expression tree; only views that need one evaluate it).
  struct Expr {
    enum class Op : uint8_t { kAnd, kOr, kNot, kInside, kWeightRange, kInSet, kNotInSet };
    Op op;
    std::vector<std::unique_ptr<Expr>> kids;       // kAnd, kOr, kNot
    std::shared_ptr<const std::vector<uint64_t>> inside;  // kInside: both endpoints in this set
    double lo = 0, hi = 0;                         // kWeightRange
    std::shared_ptr<const std::vector<std::pair<VertexId, VertexId>>> set;  // sorted, normalized
  };

  VertexId bound() const { return bound_; }
  const uint64_t* words() const { return bits_->data(); }
  size_t num_words() const { return bits_->size(); }
  bool undirected() const { return undirected_; }
  // u in V (u < bound; IDs at or above it are never in V).
  bool Contains(VertexId u) const {
    return u < bound_ && (((*bits_)[u >> 6] >> (u & 63)) & 1) != 0;
  }
  // Whether the view has an edge predicate (else E is induced by V).
  bool has_predicate() const { return pred_ != nullptr; }
  // Whether the predicate reads weights.
  bool needs_weights() const { return needs_weights_; }
  // The predicate on logical edge (u -> v) of weight w; u and v already known to be in V.
  // Stored weights are finite; a NaN w means the weight is unknown (an edge delete read from
  // a log) and passes every weight range.
  bool Pass(VertexId u, VertexId v, double w) const { return Eval(*pred_, u, v, w); }
  // Whether the predicate is a weight range alone, [weight_lo(), weight_hi()] (the filter's
  // inline fast path).
  bool weight_range_only() const {
    return pred_ != nullptr && pred_->op == Expr::Op::kWeightRange;
  }
  double weight_lo() const { return pred_->lo; }
  double weight_hi() const { return pred_->hi; }

 private:
  friend class ViewCatalog;
  bool Eval(const Expr& e, VertexId u, VertexId v, double w) const;
  VertexId bound_ = 0;
  bool undirected_ = false;
  std::shared_ptr<const std::vector<uint64_t>> bits_;
  std::unique_ptr<Expr> pred_;
  bool needs_weights_ = false;
};

// What compiling a view needs of the store besides the definitions: the vertex ID bound (the
// bitmap covers [0, bound)) and whether edges are undirected.
struct ViewShape {
  VertexId bound = 0;
  GraphKind kind = GraphKind::kDirected;
};

class ViewCatalog {
 public:
  enum class Op : uint8_t { kCreate = 1, kDrop = 2 };

  // Loads `dir`/VIEWS if it exists (nothing otherwise). *max_ts: the file's as-of timestamp
  // (as_of_; 0 when there is no file); the store's clock must not start below it. Corruption
  // naming the file and offset when the file is damaged, or when it names a store other than
  // `store_id` (0: not checked; a file written before it named its store is not either).
  Status Load(io::Env* env, const std::string& dir, uint64_t store_id, Timestamp* max_ts);
  // Rewrites a loaded VIEWS that does not name its store (versions 1 and 2) as the current
  // version, which does; nothing otherwise. For writable opens.
  Status AddOwner();
  // In-memory stores: nothing is read or written.
  void SetInMemory() { env_ = nullptr; }

  // Whether op `op` on `name` with `def` (kCreate) may commit now: valid name and definition,
  // the name free (or `replace`), every operand live, no cycle; for kDrop, the view exists and
  // no live set operation names it. `vertex_limit`: IDs must be below it.
  Status Check(Op op, const std::string& name, const ViewDefinition* def, bool replace,
               VertexId vertex_limit) const;
  // Appends the entry at `ts` (greater than every entry's) and, for a persistent catalog,
  // rewrites VIEWS before the entry becomes visible to Resolve and List. First drops the
  // entries no reader can select any more: `min_active` is at most every registered reader's
  // timestamp and every later reader's (ReaderTracer::MinActive), so per name the newest
  // entry at or before it and everything after are kept (a name whose kept entry is a drop
  // goes). History, in memory and in VIEWS, is bounded by the live snapshots' span.
  // write_file false: memory only (a read-only open applying a logged change VIEWS lacks).
  Status Commit(Timestamp ts, Op op, const std::string& name, const ViewDefinition* def,
                Timestamp min_active, bool write_file = true);

  // The view `name` as of `ts`: NotFound "no view 'name'" when it does not exist then.
  Status Get(const std::string& name, Timestamp ts, ViewInfo* info) const;
  std::vector<ViewInfo> List(Timestamp ts) const;
  // Compiles `name` as of base.timestamp() for `base` (resolving operands at that timestamp).
  Status Compile(const std::string& name, const Snapshot& base,
                 std::shared_ptr<const CompiledView>* out) const;
  // Same, as of `ts`, for a store of that shape (no snapshot: strata watch filters another
  // process's log records).
  Status CompileAt(const std::string& name, Timestamp ts, const ViewShape& shape,
                   std::shared_ptr<const CompiledView>* out) const;
  // Compiles a filter definition with no operands (set operations need names): for ad-hoc
  // views.
  static Status CompileFilter(const ViewDefinition& def, const Snapshot& base,
                              std::shared_ptr<const CompiledView>* out);

  // Record encoding (exposed for tests).
  static void EncodeRecord(Timestamp ts, Op op, const std::string& name,
                           const ViewDefinition* def, std::string* out);
  static Status DecodeRecord(std::string_view in, Timestamp* ts, Op* op, std::string* name,
                             ViewDefinition* def);

 private:
  struct Entry {
    Timestamp ts = 0;
    bool dropped = false;
    ViewDefinition def;
  };
  // The entry of `name` in effect at ts, or null. Needs mu_.
  const Entry* Find(const std::string& name, Timestamp ts) const;
  Status WriteFile();  // needs mu_; writes the current version
  struct Node;
  Status CompileNode(const ViewDefinition& def, Timestamp ts, const ViewShape& shape, int depth,
                     Node* out) const;  // needs mu_ (for operands)

  io::Env* env_ = nullptr;
  std::string dir_;
  uint64_t store_id_ = 0;  // VIEWS (version 3) names its store
  mutable std::mutex mu_;  // history_; a leaf
  uint32_t file_version_ = 0;  // of VIEWS as loaded or last written; 0 none. Needs mu_.
  std::map<std::string, std::vector<Entry>> history_;
  // The as-of timestamp: the commit timestamp of the newest change the catalog holds — a
  // create, a replace or a drop (which, unlike the others, VIEWS forgets once no snapshot
  // needs it, so the newest entry's timestamp can go back; this never does). VIEWS (version 2)
  // records it, and so does the manifest (its stamp, db/kept_files.h), so a restored older
  // copy of VIEWS is told from the current one. A version-1 file gives its newest entry's
  // timestamp. Needs mu_.
  Timestamp as_of_ = 0;
};

}  // namespace strata
