// stratagraph._core: the Python binding of include/strata/ and analytics/.
//
// Contracts kept by every binding here:
//  - the GIL is released around every call into the store that can take time (writes, scans,
//    kernels, open, close, flush, compaction, verification); Python objects are touched only
//    with the GIL held, so a Status is carried out of the released region and raised after;
//  - a DB or Snapshot object may be used from several Python threads at once; close() waits
//    for the calls in flight (a shared_mutex: calls hold it shared, close exclusive) and later
//    calls raise InvalidArgumentError "... is closed";
//  - DB.close() first closes every snapshot the DB handed out that is still open;
//  - results are numpy arrays that own the kernel's std::vector (moved, not copied);
//  - on a mapped store (<store>/IDMODE says ids=map: written by `strata ingest --ids map`,
//    docs/cli.md "ID modes") vertex IDs in and out are external IDs, translated through the
//    store's IDDICT (graphio::IdDictionary, loaded read-only at open); kernels return
//    (ids, values) over the vertices that exist, ascending by external ID.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "strata/analytics.h"
#include "python/src/py_util.h"
#include "strata/db.h"
#include "strata/options.h"
#include "strata/snapshot.h"
#include "strata/write_batch.h"
#include "strata/change_feed.h"
#include "strata/view.h"
#include "db/filename.h"  // IdModeFilePath, IdDictionaryFilePath (inline, no db/ code linked)
#include "graphio/id_dictionary.h"

namespace strata::py {

namespace {

using Kind = NumberView::Kind;

// --- State shared by the Python objects. ----------------------------------------------------

struct SnapState;
struct FeedState;

struct DbState {
  std::shared_mutex mu;  // shared: a call in flight; exclusive: close
  std::unique_ptr<DB> db;
  std::string path;
  GraphKind kind = GraphKind::kDirected;
  bool weighted = false;
  // Mapped store: the dictionary, read-only, shared with the snapshots. Null when dense.
  std::shared_ptr<const graphio::IdDictionary> dict;
  std::mutex snaps_mu;
  std::vector<std::weak_ptr<SnapState>> snaps;  // handed out, maybe closed
  std::vector<std::weak_ptr<FeedState>> feeds;  // subscriptions handed out, maybe closed
};

// A change-feed subscription (pull mode). Next runs under `mu` shared, for at most one wait
// slice; close (and DB.close) take it exclusive and drop the Subscription.
struct FeedState {
  std::shared_ptr<DbState> owner;
  std::shared_mutex mu;
  std::unique_ptr<Subscription> sub;
  std::shared_ptr<const graphio::IdDictionary> dict;
};

struct SnapState {
  // Declared first so that it is destroyed last: the snapshot goes before the DB it reads.
  std::shared_ptr<DbState> owner;  // keeps the DB open while the snapshot is
  std::shared_mutex mu;
  std::unique_ptr<Snapshot> snap;
  std::shared_ptr<const graphio::IdDictionary> dict;  // the owner's (null when dense)
  std::string view;  // the view it filters by, or empty
};

// --- Mapped IDs. -------------------------------------------------------------------------------

Status UnknownVertex(uint64_t ext) {
  return Status::NotFound("unknown vertex " + std::to_string(ext));
}

// The internal ID of `ext` (itself when dense); false when a mapped store does not map it.
bool ToInternal(const graphio::IdDictionary* dict, uint64_t ext, VertexId* v) {
  if (dict == nullptr) {
    *v = ext;
    return true;
  }
  return dict->Find(ext, v);
}

// Same, NotFound "unknown vertex X" when unmapped.
Status Internal(const graphio::IdDictionary* dict, uint64_t ext, VertexId* v) {
  return ToInternal(dict, ext, v) ? Status::OK() : UnknownVertex(ext);
}

// Replaces every internal ID in v by its external ID (NO_LABEL and unmapped IDs stay).
void ToExternal(const graphio::IdDictionary& dict, std::vector<uint64_t>* v) {
  for (uint64_t& x : *v) {
    uint64_t e;
    if (dict.ToExternal(x, &e)) x = e;
  }
}

// The vertices of snap as (external, internal) pairs, ascending by external ID.
Status MappedVertices(const Snapshot& snap, const graphio::IdDictionary& dict,
                      std::vector<std::pair<uint64_t, VertexId>>* out) {
  out->clear();
  out->reserve(snap.NumVertices());
  bool unmapped = false;
  VertexId first_unmapped = 0;
  Status s = snap.ScanVertices(0, snap.VertexIdBound(), [&](VertexId v) {
    uint64_t e;
    if (!dict.ToExternal(v, &e)) {
      unmapped = true;
      first_unmapped = v;
      return false;
    }
    out->emplace_back(e, v);
    return true;
  });
  if (!s.ok()) return s;
  if (unmapped) {
    return Status::Corruption(dict.path() + " does not map the store's vertex " +
                              std::to_string(first_unmapped) + " (internal ID)");
  }
  std::sort(out->begin(), out->end());
  return snap.status();
}

// A kernel's dense result (indexed by internal ID) on a mapped store: (ids, values) over the
// vertices that exist, ascending by external ID; `labels` maps values that are vertex IDs
// (wcc, cdlp) to external IDs too. `order` is MappedVertices' output.
template <typename T>
pb::object MappedResult(const graphio::IdDictionary& dict,
                        const std::vector<std::pair<uint64_t, VertexId>>& order,
                        const std::vector<T>& dense, bool labels = false) {
  std::vector<uint64_t> ids(order.size());
  std::vector<T> values(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    ids[i] = order[i].first;
    values[i] = order[i].second < dense.size() ? dense[order[i].second] : T{};
  }
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (labels) ToExternal(dict, &values);
  }
  return pb::make_tuple(ToNumpy(std::move(ids)), ToNumpy(std::move(values)));
}

Status Closed(const char* what) {
  return Status::InvalidArgument(std::string("stratagraph: the ") + what + " is closed");
}

// Runs fn(const Snapshot&) -> Status with the GIL released and the snapshot held open.
template <typename Fn>
void WithSnapshot(SnapState& st, Fn&& fn) {
  Status s;
  {
    pb::gil_scoped_release nogil;
    std::shared_lock lock(st.mu);
    s = st.snap ? fn(*st.snap) : Closed("snapshot");
  }
  Check(s);
}

// Runs fn(DB*) -> Status with the GIL released and the DB held open.
template <typename Fn>
void WithDb(DbState& st, Fn&& fn) {
  Status s;
  {
    pb::gil_scoped_release nogil;
    std::shared_lock lock(st.mu);
    s = st.db ? fn(st.db.get()) : Closed("store");
  }
  Check(s);
}

void CloseSnapshot(SnapState& st) {
  pb::gil_scoped_release nogil;
  std::unique_lock lock(st.mu);
  st.snap.reset();
  st.owner.reset();
}

Status CloseDb(DbState& st) {
  std::vector<std::shared_ptr<SnapState>> open;
  {
    std::lock_guard g(st.snaps_mu);
    for (auto& w : st.snaps) {
      if (auto p = w.lock()) open.push_back(std::move(p));
    }
    st.snaps.clear();
  }
  for (auto& p : open) {
    std::unique_lock lock(p->mu);
    p->snap.reset();
    // p->owner is this DbState: dropped by the Python object or below, not here, so the
    // state outlives this call.
  }
  std::vector<std::shared_ptr<FeedState>> feeds;
  {
    std::lock_guard g(st.snaps_mu);
    for (auto& w : st.feeds) {
      if (auto p = w.lock()) feeds.push_back(std::move(p));
    }
    st.feeds.clear();
  }
  for (auto& p : feeds) {
    std::unique_lock lock(p->mu);
    p->sub.reset();  // cancels: before the DB goes
  }
  std::unique_lock lock(st.mu);
  if (!st.db) return Status::OK();
  Status s = st.db->Close();
  st.db.reset();
  return s;
}

// s with `prefix` before its message (same kind).
Status WithPrefix(const Status& s, const std::string& prefix) {
  const std::string m = prefix + s.message();
  switch (s.code()) {
    case Status::Code::kOk: return s;
    case Status::Code::kNotFound: return Status::NotFound(m);
    case Status::Code::kCorruption: return Status::Corruption(m);
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(m);
    case Status::Code::kIOError: return Status::IOError(m);
    case Status::Code::kBusy: return Status::Busy(m);
    case Status::Code::kNotSupported: return Status::NotSupported(m);
    case Status::Code::kAborted: return Status::Aborted(m);
  }
  return s;
}

Direction ParseDirection(const std::string& d) {
  if (d == "out") return Direction::kOut;
  if (d == "in") return Direction::kIn;
  throw pb::value_error("direction: expected 'out' or 'in', got '" + d + "'");
}

const char* KindString(GraphKind k) {
  switch (k) {
    case GraphKind::kDirected: return "directed";
    case GraphKind::kDirectedWithInEdges: return "directed+in-edges";
    case GraphKind::kUndirected: return "undirected";
  }
  return "?";
}

// --- Python-facing classes. --------------------------------------------------------------------

class PyWriteBatch {
 public:
  WriteBatch batch;
};

// Appends edge ops for src[i], dst[i] (weights[i] or 1.0) for i in [begin, end).
void AppendEdges(WriteBatch* b, WriteBatch::OpType type, const NumberView& src,
                 const NumberView& dst, const NumberView* w, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    const VertexId u = src.Id(i), v = dst.Id(i);
    switch (type) {
      case WriteBatch::OpType::kInsertEdge: b->InsertEdge(u, v, w ? w->Real(i) : 1.0); break;
      case WriteBatch::OpType::kDeleteEdge: b->DeleteEdge(u, v); break;
      default: b->SetWeight(u, v, w->Real(i)); break;
    }
  }
}

// The views of an edge-array call, checked: same lengths, integer IDs >= 0, real weights.
struct EdgeArrays {
  std::unique_ptr<NumberView> src, dst, w;
  EdgeArrays(const pb::handle& s, const pb::handle& d, const pb::handle& weights) {
    src = std::make_unique<NumberView>(s, Kind::kSigned, "src");
    dst = std::make_unique<NumberView>(d, Kind::kSigned, "dst");
    if (!weights.is_none()) w = std::make_unique<NumberView>(weights, Kind::kReal, "weights");
  }
  // Lengths and signs; call without the GIL.
  Status Validate() const {
    if (src->size() != dst->size()) {
      return Status::InvalidArgument("src and dst differ in length (" +
                                     std::to_string(src->size()) + " and " +
                                     std::to_string(dst->size()) + ")");
    }
    if (w && w->size() != src->size()) {
      return Status::InvalidArgument("weights has length " + std::to_string(w->size()) +
                                     ", src and dst " + std::to_string(src->size()));
    }
    Status s = src->CheckNonNegative();
    return s.ok() ? dst->CheckNonNegative() : s;
  }
};

class PyDB;

class PySnapshot {
 public:
  explicit PySnapshot(std::shared_ptr<SnapState> st) : st_(std::move(st)) {}
  SnapState& st() { return *st_; }
  void Close() { CloseSnapshot(*st_); }
  bool closed() {
    std::shared_lock lock(st_->mu);
    return st_->snap == nullptr;
  }
  std::shared_ptr<SnapState> shared() { return st_; }
  // fn(const Snapshot&) for quick getters: keeps the GIL, holds the snapshot open.
  template <typename Fn>
  auto Get(Fn&& fn) {
    std::shared_lock lock(st_->mu);
    if (!st_->snap) {
      lock.unlock();
      Check(Closed("snapshot"));
    }
    return fn(*st_->snap);
  }

 private:
  std::shared_ptr<SnapState> st_;
};

class PyDB {
 public:
  explicit PyDB(std::shared_ptr<DbState> st) : st_(std::move(st)) {}
  DbState& st() { return *st_; }
  std::shared_ptr<DbState> shared() { return st_; }

  // Writes to a mapped store would have to add to IDDICT (persisted before the batch, as
  // `strata ingest --ids map` does); the package opens the dictionary read-only.
  void CheckWritable(const char* call) {
    if (!st_->dict) return;
    Check(Status::NotSupported(std::string(call) + ": store '" + st_->path +
                               "' maps its vertex IDs (IDMODE says ids=map) and the Python "
                               "package does not write mapped stores; add edges with "
                               "`strata ingest --ids map`, or use a store with internal IDs"));
  }

  void Close() {
    Status s;
    {
      pb::gil_scoped_release nogil;
      s = CloseDb(*st_);
    }
    Check(s);
  }

  // Writes ops of `type` for the edge arrays: one atomic batch (batch == 0) or batches of
  // `batch` edges each. Returns the number of edges written. On a failed batch, the batches
  // before it are committed; the error says how many edges.
  size_t WriteEdges(WriteBatch::OpType type, const pb::handle& src, const pb::handle& dst,
                    const pb::handle& weights, size_t batch, bool sync) {
    CheckWritable(type == WriteBatch::OpType::kDeleteEdge ? "delete_edges" : "insert_edges");
    EdgeArrays a(src, dst, weights);
    const size_t n = a.src->size();
    size_t done = 0;
    WithDb(*st_, [&](DB* db) {
      Status s = a.Validate();
      if (!s.ok()) return s;
      WriteOptions wo;
      wo.sync = sync;
      const size_t step = batch == 0 ? std::max<size_t>(n, 1) : batch;
      WriteBatch b;
      for (size_t i = 0; i < n; i += step) {
        const size_t end = std::min(n, i + step);
        b.Clear();
        AppendEdges(&b, type, *a.src, *a.dst, a.w.get(), i, end);
        s = db->Write(wo, b);
        if (!s.ok()) {
          return done == 0 ? s
                           : WithPrefix(s, std::to_string(done) +
                                               " edges committed by earlier batches; then ");
        }
        done = end;
      }
      return Status::OK();
    });
    return done;
  }

  size_t WriteVertices(bool add, const pb::handle& ids, bool sync) {
    CheckWritable(add ? "add_vertices" : "delete_vertices");
    NumberView v(ids, Kind::kSigned, "ids");
    WithDb(*st_, [&](DB* db) {
      Status s = v.CheckNonNegative();
      if (!s.ok()) return s;
      WriteBatch b;
      for (size_t i = 0; i < v.size(); ++i) add ? b.AddVertex(v.Id(i)) : b.DeleteVertex(v.Id(i));
      WriteOptions wo;
      wo.sync = sync;
      return db->Write(wo, b);
    });
    return v.size();
  }

  void Write(PyWriteBatch& b, bool sync) {
    CheckWritable("write");
    WithDb(*st_, [&](DB* db) {
      WriteOptions wo;
      wo.sync = sync;
      return db->Write(wo, b.batch);
    });
  }

  // A snapshot of the whole store, or of view `view` (DB::GetViewSnapshot) when given.
  PySnapshot NewSnapshot(const pb::object& view) {
    auto snap = std::make_shared<SnapState>();
    if (!view.is_none()) snap->view = view.cast<std::string>();
    WithDb(*st_, [&](DB* db) {
      if (!snap->view.empty()) return db->GetViewSnapshot(snap->view, &snap->snap);
      snap->snap = db->GetSnapshot();
      return Status::OK();
    });
    snap->owner = st_;
    snap->dict = st_->dict;
    std::lock_guard g(st_->snaps_mu);
    auto& v = st_->snaps;
    v.erase(std::remove_if(v.begin(), v.end(), [](auto& w) { return w.expired(); }), v.end());
    v.push_back(snap);
    return PySnapshot(snap);
  }

  bool closed() {
    std::shared_lock lock(st_->mu);
    return st_->db == nullptr;
  }

 private:
  std::shared_ptr<DbState> st_;
};

// The store's ID mode (IDMODE, graphio::ReadIdModeFile), read before the store is opened, as
// the CLI reads it: an IDDICT beside a missing or dense IDMODE is refused naming IDMODE (the
// engine would refuse a missing IDMODE it keeps, with less to say).
Status ReadIdMode(const std::string& path, bool* mapped) {
  bool present = false;
  Status s = graphio::ReadIdModeFile(IdModeFilePath(path), mapped, &present);
  if (!s.ok()) return s;
  return graphio::CheckIdModeAgainstDictionary(IdModeFilePath(path), IdDictionaryFilePath(path),
                                               *mapped, present);
}

// A mapped store: loads IDDICT read-only (a torn tail is left as found, as the CLI's readers
// do) and checks that it covers every vertex of the store, as tools/cmd_common.cc
// CheckDictionaryCovers does. Without the GIL.
Status LoadDictionary(DbState* st) {
  graphio::IdDictionaryOptions dopt;
  dopt.create_if_missing = false;
  dopt.read_only = true;
  std::unique_ptr<graphio::IdDictionary> dict;
  graphio::IdDictionaryLoadInfo info;
  Status s = graphio::IdDictionary::Open(IdDictionaryFilePath(st->path), dopt, &dict, &info);
  // A store whose first ingest stopped before creating IDDICT has no vertices to map (the
  // CLI's readers take it so too): a missing dictionary is an empty one, checked below.
  const bool missing = s.IsNotFound();
  if (missing) {
    dict = std::make_unique<graphio::IdDictionary>();
    s = Status::OK();
  }
  if (!s.ok()) return s;
  // Another store's IDDICT put in this one's place (the CLI refuses it too).
  s = graphio::CheckDictionaryOwner(dict->path(), st->db->GetStats(false).store_id, info.owner);
  if (!s.ok()) return s;
  std::unique_ptr<Snapshot> snap = st->db->GetSnapshot();
  const VertexId bound = snap->VertexIdBound();
  VertexId first = 0;
  bool found = false;
  if (bound > dict->size()) {
    s = snap->ScanVertices(dict->size(), bound, [&](VertexId v) {
      found = true;
      first = v;
      return false;
    });
    if (!s.ok()) return s;
  }
  if (found && missing) {
    return Status::Corruption("store '" + st->path +
                              "' maps its vertex IDs (IDMODE says ids=map) and holds "
                              "vertices, but has no IDDICT");
  }
  if (found) {
    return Status::Corruption(dict->path() + " maps " + std::to_string(dict->size()) +
                              " IDs but the store holds vertex " + std::to_string(first) +
                              " (internal ID): the dictionary is shorter than the store");
  }
  s = snap->status();
  if (s.ok()) st->dict = std::move(dict);
  return s;
}

PyDB Open(const std::string& path, bool directed, bool in_edges, bool weighted,
          pb::object memory_budget, pb::object memgraph_bytes, const std::string& wal,
          bool in_memory, bool read_only, bool create) {
  Options o;
  if (!directed && in_edges) throw pb::value_error("in_edges applies to directed graphs only");
  o.graph_kind = !directed ? GraphKind::kUndirected
                 : in_edges ? GraphKind::kDirectedWithInEdges
                            : GraphKind::kDirected;
  o.weighted = weighted;
  if (!memory_budget.is_none()) o.memory_budget = memory_budget.cast<size_t>();
  if (!memgraph_bytes.is_none()) o.memgraph_bytes = memgraph_bytes.cast<size_t>();
  if (wal == "off") {
    o.wal = WalMode::kOff;
  } else if (wal == "group") {
    o.wal = WalMode::kGroup;
  } else if (wal == "sync") {
    o.wal = WalMode::kSync;
  } else {
    throw pb::value_error("wal: expected 'off', 'group' or 'sync', got '" + wal + "'");
  }
  o.in_memory = in_memory;
  o.read_only = read_only;
  o.create_if_missing = create;
  auto st = std::make_shared<DbState>();
  st->path = path;
  st->kind = o.graph_kind;
  st->weighted = weighted;
  Status s;
  {
    pb::gil_scoped_release nogil;
    bool mapped = false;
    if (!in_memory) s = ReadIdMode(path, &mapped);
    if (s.ok()) s = DB::Open(o, path, &st->db);
    if (s.ok() && mapped) s = LoadDictionary(st.get());
    if (!s.ok() && st->db) {
      st->db->Close();
      st->db.reset();
    }
  }
  Check(s);
  return PyDB(std::move(st));
}

pb::dict StatsDict(const DBStats& x) {
  pb::dict d;
#define STRATA_STAT(f) d[#f] = x.f
  STRATA_STAT(last_committed);
  STRATA_STAT(num_vertices);
  STRATA_STAT(num_edges);
  STRATA_STAT(batches_committed);
  STRATA_STAT(ops_applied);
  STRATA_STAT(memgraph_bytes);
  STRATA_STAT(memgraph_resident_bytes);
  STRATA_STAT(memgraph_listed_bytes);
  STRATA_STAT(memgraph_versions);
  STRATA_STAT(versions_reclaimed);
  STRATA_STAT(hollow_versions);
  STRATA_STAT(versions_rebuilt);
  STRATA_STAT(active_readers);
  STRATA_STAT(sealed_memgraphs);
  STRATA_STAT(flushes);
  STRATA_STAT(compactions);
  STRATA_STAT(compaction_parts);
  STRATA_STAT(compactions_joined);
  STRATA_STAT(compaction_moves);
  STRATA_STAT(stall_micros);
  STRATA_STAT(stall_l0_micros);
  STRATA_STAT(stall_flush_micros);
  STRATA_STAT(disk_bytes);
  STRATA_STAT(l0_files);
  STRATA_STAT(level_files);
  STRATA_STAT(level_shape);
  STRATA_STAT(flush_bytes);
  STRATA_STAT(compaction_bytes);
  STRATA_STAT(vertex_index_bytes);
  STRATA_STAT(vertex_index_entries);
  STRATA_STAT(memory_budget);
  STRATA_STAT(memgraph_capacity);
  STRATA_STAT(resident_index_bytes);
  STRATA_STAT(block_cache_capacity);
  STRATA_STAT(block_cache_bytes);
  STRATA_STAT(block_cache_hits);
  STRATA_STAT(block_cache_misses);
#undef STRATA_STAT
  return d;
}

// Iterator over a snapshot's edges in chunks: each __next__ is one ScanAdjacency from where the
// previous one stopped (vertex `next_u_`, skipping its first `skip_` entries).
class EdgeIterator {
 public:
  EdgeIterator(std::shared_ptr<SnapState> st, size_t chunk, bool weights, bool unique)
      : st_(std::move(st)), chunk_(std::max<size_t>(chunk, 1)), weights_(weights),
        unique_(unique) {}

  pb::object Next() {
    if (done_) throw pb::stop_iteration();
    std::vector<VertexId> src, dst;
    std::vector<double> w;
    src.reserve(chunk_);
    dst.reserve(chunk_);
    if (weights_) w.reserve(chunk_);
    WithSnapshot(*st_, [&](const Snapshot& snap) {
      const VertexId start = next_u_;
      const uint64_t skip = skip_;
      VertexId cur = ~VertexId{0};
      uint64_t pos = 0;
      bool stopped = false;
      Status s = snap.ScanAdjacency(
          start, snap.VertexIdBound(), Direction::kOut, weights_,
          [](VertexId) { return true; },
          [&](VertexId u, const NeighborChunk& c) {
            if (u != cur) {
              cur = u;
              pos = 0;
            }
            for (size_t i = 0; i < c.size; ++i, ++pos) {
              if (u == start && pos < skip) continue;
              if (unique_ && c.dst[i] < u) continue;
              if (src.size() == chunk_) {
                next_u_ = u;
                skip_ = pos;
                stopped = true;
                return ScanStep::kStop;
              }
              src.push_back(u);
              dst.push_back(c.dst[i]);
              if (weights_) w.push_back(c.weight ? c.weight[i] : 1.0);
            }
            return ScanStep::kMore;
          });
      if (!stopped) done_ = true;
      return s.ok() ? snap.status() : s;
    });
    if (src.empty()) throw pb::stop_iteration();
    if (st_->dict) {
      ToExternal(*st_->dict, &src);
      ToExternal(*st_->dict, &dst);
    }
    if (weights_) return pb::make_tuple(ToNumpy(std::move(src)), ToNumpy(std::move(dst)),
                                        ToNumpy(std::move(w)));
    return pb::make_tuple(ToNumpy(std::move(src)), ToNumpy(std::move(dst)));
  }

 private:
  std::shared_ptr<SnapState> st_;
  size_t chunk_;
  bool weights_;
  bool unique_;
  VertexId next_u_ = 0;
  uint64_t skip_ = 0;
  bool done_ = false;
};

// --- Snapshot methods. -------------------------------------------------------------------------

pb::object Neighbors(PySnapshot& self, VertexId v, const std::string& direction, bool weights) {
  const Direction d = ParseDirection(direction);
  std::vector<VertexId> dst;
  std::vector<double> w;
  const graphio::IdDictionary* dict = self.st().dict.get();
  WithSnapshot(self.st(), [&](const Snapshot& snap) {
    VertexId iv;
    Status s = Internal(dict, v, &iv);
    if (!s.ok()) return s;
    s = snap.GetNeighbors(iv, &dst, weights ? &w : nullptr, d);
    if (s.ok() && dict) ToExternal(*dict, &dst);
    return s;
  });
  if (weights) return pb::make_tuple(ToNumpy(std::move(dst)), ToNumpy(std::move(w)));
  return ToNumpy(std::move(dst));
}

pb::object Degrees(PySnapshot& self, const std::string& direction) {
  const Direction d = ParseDirection(direction);
  std::vector<uint64_t> deg;
  std::vector<std::pair<uint64_t, VertexId>> order;
  const graphio::IdDictionary* dict = self.st().dict.get();
  WithSnapshot(self.st(), [&](const Snapshot& snap) {
    if (dict) {
      Status s = MappedVertices(snap, *dict, &order);
      if (!s.ok()) return s;
    }
    deg.assign(snap.VertexIdBound(), 0);
    Status s = snap.ScanAdjacency(0, snap.VertexIdBound(), d, /*weights=*/false,
                                  [](VertexId) { return true; },
                                  [&](VertexId u, const NeighborChunk& c) {
                                    deg[u] += c.size;
                                    return ScanStep::kMore;
                                  });
    return s.ok() ? snap.status() : s;
  });
  if (dict) return MappedResult(*dict, order, deg);
  return ToNumpy(std::move(deg));
}

pb::object Vertices(PySnapshot& self) {
  std::vector<VertexId> out;
  const graphio::IdDictionary* dict = self.st().dict.get();
  WithSnapshot(self.st(), [&](const Snapshot& snap) {
    if (dict) {
      std::vector<std::pair<uint64_t, VertexId>> order;
      Status s = MappedVertices(snap, *dict, &order);
      for (auto& p : order) out.push_back(p.first);
      return s;
    }
    out.reserve(snap.NumVertices());
    Status s = snap.ScanVertices(0, snap.VertexIdBound(), [&](VertexId v) {
      out.push_back(v);
      return true;
    });
    return s.ok() ? snap.status() : s;
  });
  return ToNumpy(std::move(out));
}

// Runs fn(snap, &dense) -> Status (dense indexed by internal ID) and returns the dense array,
// or (ids, values) on a mapped store (MappedResult; `labels`: values are vertex IDs).
template <typename T, typename Fn>
pb::object RunKernel(PySnapshot& s, bool labels, Fn&& fn) {
  std::vector<T> dense;
  std::vector<std::pair<uint64_t, VertexId>> order;
  const graphio::IdDictionary* dict = s.st().dict.get();
  WithSnapshot(s.st(), [&](const Snapshot& snap) {
    Status st = fn(snap, &dense);
    if (st.ok() && dict) st = MappedVertices(snap, *dict, &order);
    return st;
  });
  if (dict) return MappedResult(*dict, order, dense, labels);
  return ToNumpy(std::move(dense));
}

void BindSnapshot(pb::module_& m) {
  pb::class_<EdgeIterator>(m, "EdgeIterator", "Chunks of a snapshot's edges; see Snapshot.edges.")
      .def("__iter__", [](pb::object self) { return self; })
      .def("__next__", &EdgeIterator::Next);

  pb::class_<PySnapshot>(m, "Snapshot",
                         "A consistent, immutable view of the graph (DB.snapshot()). Use as a "
                         "context manager, or call close(); DB.close() closes it too.")
      .def("close", &PySnapshot::Close)
      .def_property_readonly("closed", &PySnapshot::closed)
      .def("__enter__", [](pb::object self) { return self; })
      .def("__exit__", [](PySnapshot& self, pb::args) { self.Close(); })
      .def_property_readonly("timestamp", [](PySnapshot& s) {
        return s.Get([](const Snapshot& x) { return x.timestamp(); });
      })
      .def_property_readonly("directed", [](PySnapshot& s) {
        return s.Get([](const Snapshot& x) { return x.kind() != GraphKind::kUndirected; });
      })
      .def_property_readonly("kind", [](PySnapshot& s) {
        return s.Get([](const Snapshot& x) { return KindString(x.kind()); });
      })
      .def_property_readonly("weighted", [](PySnapshot& s) {
        return s.Get([](const Snapshot& x) { return x.weighted(); });
      })
      .def_property_readonly("vertex_id_bound", [](PySnapshot& s) {
        return s.Get([](const Snapshot& x) { return x.VertexIdBound(); });
      })
      .def("num_vertices", [](PySnapshot& s) {
        uint64_t n = 0;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          n = snap.NumVertices();
          return snap.status();
        });
        return n;
      })
      .def("num_edges", [](PySnapshot& s) {
        uint64_t n = 0;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          n = snap.NumEdges();
          return snap.status();
        });
        return n;
      })
      .def_property_readonly("mapped", [](PySnapshot& s) { return s.st().dict != nullptr; })
      .def_property_readonly("view", [](PySnapshot& s) -> pb::object {
        if (s.st().view.empty()) return pb::none();
        return pb::str(s.st().view);
      })
      .def("has_vertex", [](PySnapshot& s, VertexId v) {
        bool r = false;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          r = ToInternal(s.st().dict.get(), v, &v) && snap.HasVertex(v);
          return snap.status();
        });
        return r;
      }, pb::arg("v"))
      .def("has_edge", [](PySnapshot& s, VertexId u, VertexId v) {
        bool r = false;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          double w;
          const graphio::IdDictionary* dict = s.st().dict.get();
          if (!ToInternal(dict, u, &u) || !ToInternal(dict, v, &v)) return Status::OK();
          Status st = snap.GetEdge(u, v, &w);
          r = st.ok();
          return st.IsNotFound() ? Status::OK() : st;
        });
        return r;
      }, pb::arg("u"), pb::arg("v"))
      .def("weight", [](PySnapshot& s, VertexId u, VertexId v) -> pb::object {
        double w = 0;
        bool found = false;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          const graphio::IdDictionary* dict = s.st().dict.get();
          if (!ToInternal(dict, u, &u) || !ToInternal(dict, v, &v)) return Status::OK();
          Status st = snap.GetEdge(u, v, &w);
          found = st.ok();
          return st.IsNotFound() ? Status::OK() : st;
        });
        return found ? pb::object(pb::float_(w)) : pb::object(pb::none());
      }, pb::arg("u"), pb::arg("v"))
      .def("degree", [](PySnapshot& s, VertexId v, const std::string& direction) {
        const Direction d = ParseDirection(direction);
        uint64_t r = 0;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          if (!ToInternal(s.st().dict.get(), v, &v)) return Status::OK();  // absent: 0
          r = snap.Degree(v, d);
          return snap.status();
        });
        return r;
      }, pb::arg("v"), pb::arg("direction") = "out")
      .def("degrees", &Degrees, pb::arg("direction") = "out")
      .def("vertices", &Vertices)
      .def("neighbors", &Neighbors, pb::arg("v"), pb::arg("direction") = "out",
           pb::arg("weights") = false)
      .def("edges", [](PySnapshot& s, size_t chunk_size, bool weights) {
        // The iterator shares the snapshot; closing the snapshot makes it raise.
        const bool undirected =
            s.Get([](const Snapshot& x) { return x.kind() == GraphKind::kUndirected; });
        return EdgeIterator(s.shared(), chunk_size, weights, undirected);
      }, pb::arg("chunk_size") = size_t{1} << 20, pb::arg("weights") = false)
      // Kernels (analytics/): dense arrays indexed by vertex ID, sized vertex_id_bound.
      .def("bfs", [](PySnapshot& s, VertexId source) {
        return RunKernel<int64_t>(s, false, [&](const Snapshot& snap, std::vector<int64_t>* out) {
          analytics::BfsParams p;
          Status st = Internal(s.st().dict.get(), source, &p.source);
          return st.ok() ? analytics::Bfs(snap, p, out) : st;
        });
      }, pb::arg("source"))
      .def("pagerank", [](PySnapshot& s, double damping, int iterations,
                          std::optional<int64_t> cache_bytes) {
        if (!(damping >= 0 && damping <= 1)) throw pb::value_error("damping: must be in [0, 1]");
        if (iterations < 1) throw pb::value_error("iterations: must be at least 1");
        if (cache_bytes && *cache_bytes < 0) {
          throw pb::value_error("cache_bytes: must be at least 0");
        }
        return RunKernel<double>(s, false, [&](const Snapshot& snap, std::vector<double>* out) {
          analytics::PageRankParams p;
          p.damping = damping;
          p.iterations = iterations;
          // None: the kernel's own sizing (analytics::AutoCacheBytes).
          if (cache_bytes) p.cache_bytes = static_cast<size_t>(*cache_bytes);
          return analytics::PageRank(snap, p, out);
        });
      }, pb::arg("damping") = 0.85, pb::arg("iterations") = 20, pb::arg("cache_bytes") = pb::none())
      .def("sssp", [](PySnapshot& s, VertexId source, double delta) {
        return RunKernel<double>(s, false, [&](const Snapshot& snap, std::vector<double>* out) {
          analytics::SsspParams p;
          Status st = Internal(s.st().dict.get(), source, &p.source);
          p.delta = delta;
          return st.ok() ? analytics::Sssp(snap, p, out) : st;
        });
      }, pb::arg("source"), pb::arg("delta") = 0.0)
      .def("wcc", [](PySnapshot& s) {
        return RunKernel<VertexId>(s, true, [&](const Snapshot& snap, std::vector<VertexId>* out) {
          return analytics::Wcc(snap, analytics::WccParams(), out);
        });
      })
      .def("cdlp", [](PySnapshot& s, int iterations) {
        if (iterations < 1) throw pb::value_error("iterations: must be at least 1");
        return RunKernel<uint64_t>(s, true, [&](const Snapshot& snap, std::vector<uint64_t>* out) {
          analytics::CdlpParams p;
          p.max_iterations = iterations;
          return analytics::Cdlp(snap, p, out);
        });
      }, pb::arg("iterations") = 10)
      .def("lcc", [](PySnapshot& s) {
        return RunKernel<double>(s, false, [&](const Snapshot& snap, std::vector<double>* out) {
          return analytics::Lcc(snap, out);
        });
      })
      .def("triangle_count", [](PySnapshot& s) {
        uint64_t t = 0;
        WithSnapshot(s.st(),
                     [&](const Snapshot& snap) { return analytics::TriangleCount(snap, &t); });
        return t;
      })
      .def("khop", [](PySnapshot& s, VertexId source, int k, const std::string& direction) {
        if (k < 0) throw pb::value_error("k: must be at least 0");
        const Direction d = ParseDirection(direction);
        std::vector<VertexId> out;
        const graphio::IdDictionary* dict = s.st().dict.get();
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          analytics::KHopParams p;
          Status st = Internal(dict, source, &p.source);
          if (!st.ok()) return st;
          p.k = k;
          p.direction = d;
          st = analytics::KHop(snap, p, &out);
          if (st.ok() && dict) {
            ToExternal(*dict, &out);
            std::sort(out.begin(), out.end());
          }
          return st;
        });
        return ToNumpy(std::move(out));
      }, pb::arg("source"), pb::arg("k") = 2, pb::arg("direction") = "out");
}

// --- Change feed. ------------------------------------------------------------------------------

// DB.subscribe's iterator: each chunk is a numpy structured array of ChangeRecords (the struct
// itself, exposed through the buffer protocol with named fields: no copy).
class ChangeFeed {
 public:
  explicit ChangeFeed(std::shared_ptr<FeedState> st) : st_(std::move(st)) {}

  // Records of whole batches, at most about `max` (never splits a batch); waits up to
  // `timeout` seconds (None: until some arrive) with the GIL released, checking for signals
  // every 100 ms. Empty on timeout. *ended when the subscription stopped with the store's
  // close or by close() and nothing is left.
  pb::object Poll(size_t max, const pb::object& timeout, bool* ended) {
    const bool forever = timeout.is_none();
    double left_ms = forever ? 0 : timeout.cast<double>() * 1000.0;
    std::vector<ChangeRecord> out;
    *ended = false;
    for (;;) {
      Status s;
      bool closed = false;
      const int slice = forever ? 100 : static_cast<int>(std::max(0.0, std::min(left_ms, 100.0)));
      {
        pb::gil_scoped_release nogil;
        std::shared_lock lock(st_->mu);
        if (!st_->sub) {
          closed = true;
        } else {
          s = st_->sub->Next(&out, std::max<size_t>(max, 1), slice);
        }
      }
      if (closed) {
        *ended = true;
        break;
      }
      if (!out.empty()) break;  // a status after them comes with the next call
      if (!s.ok()) Check(s);
      left_ms -= slice;
      if (!forever && left_ms <= 0) break;
      if (PyErr_CheckSignals() != 0) throw pb::error_already_set();
    }
    if (st_->dict) {
      for (ChangeRecord& r : out) {
        if (IsViewChange(r.kind)) continue;  // no vertex IDs
        uint64_t e;
        if (st_->dict->ToExternal(r.u, &e)) r.u = e;
        const bool edge = r.kind != ChangeKind::kAddVertex && r.kind != ChangeKind::kDeleteVertex;
        if (edge && st_->dict->ToExternal(r.v, &e)) r.v = e;
      }
    }
    return Records(std::move(out));
  }

  pb::object Next() {
    bool ended = false;
    pb::object chunk = Poll(size_t{1} << 16, pb::none(), &ended);
    if (ended) throw pb::stop_iteration();
    return chunk;
  }

  void Close() {
    pb::gil_scoped_release nogil;
    std::unique_lock lock(st_->mu);
    st_->sub.reset();
    st_->owner.reset();
  }

  template <typename Fn>
  auto Get(Fn&& fn) {
    std::shared_lock lock(st_->mu);
    if (!st_->sub) {
      lock.unlock();
      Check(Closed("subscription"));
    }
    return fn(*st_->sub);
  }

  // A buffer row: a ChangeRecord's plain fields. A view record (kind view_defined or
  // view_dropped) is its ts and kind here; its name and definition are not exposed.
  struct Row {
    Timestamp ts;
    ChangeKind kind;
    uint8_t pad[7];
    VertexId u, v;
    double old_weight, new_weight;
  };
  static pb::object Records(std::vector<ChangeRecord>&& v) {
    static_assert(sizeof(Row) == 48 && offsetof(Row, kind) == 8 && offsetof(Row, u) == 16 &&
                  offsetof(Row, new_weight) == 40);
    auto holder = std::make_shared<std::vector<Row>>();
    holder->reserve(v.size());
    for (const ChangeRecord& r : v) {
      holder->push_back(Row{r.ts, r.kind, {}, r.u, r.v, r.old_weight, r.new_weight});
    }
    static Row empty_slot{};
    Buffer b;
    b.data = holder->empty() ? &empty_slot : holder->data();
    b.size = static_cast<pb::ssize_t>(holder->size());
    b.itemsize = sizeof(Row);
    // Standard sizes, no implicit alignment: the 7 pad bytes are explicit.
    b.format = "T{=Q:ts:=B:kind:7x=Q:u:=Q:v:=d:old_weight:=d:new_weight:}";
    b.keep = std::move(holder);
    return WrapBuffer(std::move(b));
  }

 private:
  std::shared_ptr<FeedState> st_;
};

ChangeFeed Subscribe(PyDB& d, const pb::object& name, const pb::object& from_ts,
                     size_t queue_capacity, const std::string& overflow) {
  SubscribeOptions so;
  if (!name.is_none()) so.name = name.cast<std::string>();
  if (!from_ts.is_none()) so.from_ts = from_ts.cast<Timestamp>();
  so.queue_capacity = queue_capacity;
  if (overflow == "cancel") {
    so.overflow = OverflowPolicy::kCancel;
  } else if (overflow == "block") {
    so.overflow = OverflowPolicy::kBlock;
  } else {
    throw pb::value_error("overflow: expected 'cancel' or 'block', got '" + overflow + "'");
  }
  auto feed = std::make_shared<FeedState>();
  WithDb(d.st(), [&](DB* db) { return db->Subscribe(so, ChangeHandler(), &feed->sub); });
  feed->owner = d.shared();
  feed->dict = d.st().dict;
  std::lock_guard g(d.st().snaps_mu);
  auto& v = d.st().feeds;
  v.erase(std::remove_if(v.begin(), v.end(), [](auto& w) { return w.expired(); }), v.end());
  v.push_back(feed);
  return ChangeFeed(feed);
}

// --- Views. ------------------------------------------------------------------------------------

// A pair (src, dst) of 1-D ID arrays as edge pairs, mapped to internal IDs.
Status ViewEdges(const graphio::IdDictionary* dict, const pb::handle& obj, const char* what,
                 std::vector<std::pair<VertexId, VertexId>>* out) {
  // A tuple or list, not any sequence: a 2-row (m, 2) array must not pass as (src, dst).
  if (!(pb::isinstance<pb::tuple>(obj) || pb::isinstance<pb::list>(obj)) || pb::len(obj) != 2) {
    throw pb::type_error(std::string(what) + ": expected a pair (src, dst) of 1-D ID arrays");
  }
  pb::sequence seq = pb::reinterpret_borrow<pb::sequence>(obj);
  EdgeArrays a(seq[0], seq[1], pb::none());
  Status s = a.Validate();
  if (!s.ok()) return WithPrefix(s, std::string(what) + ": ");
  out->reserve(a.src->size());
  for (size_t i = 0; i < a.src->size(); ++i) {
    VertexId u, v;
    s = Internal(dict, a.src->Id(i), &u);
    if (s.ok()) s = Internal(dict, a.dst->Id(i), &v);
    if (!s.ok()) return WithPrefix(s, std::string(what) + ": ");
    out->emplace_back(u, v);
  }
  return Status::OK();
}

void CreateView(PyDB& d, const std::string& name, pb::object vertices, pb::object edges,
                pb::object exclude_edges, pb::object weight_range, pb::object union_,
                pb::object intersection, pb::object difference, bool replace) {
  ViewDefinition def;
  const graphio::IdDictionary* dict = d.st().dict.get();
  int setops = !union_.is_none() + !intersection.is_none() + !difference.is_none();
  const bool filter = !vertices.is_none() || !edges.is_none() || !exclude_edges.is_none() ||
                      !weight_range.is_none();
  if (setops > 1 || (setops == 1 && filter)) {
    throw pb::value_error("create_view: give one of union, intersection, difference, or "
                          "filters (vertices, edges / exclude_edges, weight_range)");
  }
  if (!edges.is_none() && !exclude_edges.is_none()) {
    throw pb::value_error("create_view: give edges or exclude_edges, not both");
  }
  if (setops == 1) {
    def.kind = !union_.is_none()          ? ViewDefinition::Kind::kUnion
               : !intersection.is_none() ? ViewDefinition::Kind::kIntersection
                                          : ViewDefinition::Kind::kDifference;
    pb::object ops = !union_.is_none() ? union_ : !intersection.is_none() ? intersection
                                                                          : difference;
    if (pb::isinstance<pb::str>(ops)) throw pb::type_error("create_view: operands: a list of view names");
    def.operands = ops.cast<std::vector<std::string>>();
  }
  if (!weight_range.is_none()) {
    auto r = weight_range.cast<std::pair<double, double>>();
    def.has_weight_range = true;
    def.weight_min = r.first;
    def.weight_max = r.second;
  }
  std::unique_ptr<NumberView> vv;
  if (!vertices.is_none()) vv = std::make_unique<NumberView>(vertices, Kind::kSigned, "vertices");
  Status s;
  if (!edges.is_none()) {
    def.edge_mode = ViewDefinition::EdgeMode::kInclude;
    s = ViewEdges(dict, edges, "edges", &def.edges);
  } else if (!exclude_edges.is_none()) {
    def.edge_mode = ViewDefinition::EdgeMode::kExclude;
    s = ViewEdges(dict, exclude_edges, "exclude_edges", &def.edges);
  }
  Check(s);
  WithDb(d.st(), [&](DB* db) {
    if (vv) {
      Status st = vv->CheckNonNegative();
      if (!st.ok()) return st;
      def.has_vertices = true;
      def.vertices.reserve(vv->size());
      for (size_t i = 0; i < vv->size(); ++i) {
        VertexId v;
        st = Internal(dict, vv->Id(i), &v);
        if (!st.ok()) return WithPrefix(st, "vertices: ");
        def.vertices.push_back(v);
      }
    }
    return db->CreateView(name, def, replace);
  });
}

const char* ViewKindName(ViewDefinition::Kind k) {
  switch (k) {
    case ViewDefinition::Kind::kFilter: return "filter";
    case ViewDefinition::Kind::kUnion: return "union";
    case ViewDefinition::Kind::kIntersection: return "intersection";
    case ViewDefinition::Kind::kDifference: return "difference";
  }
  return "?";
}

pb::list ListViews(PyDB& d) {
  std::vector<ViewInfo> views;
  WithDb(d.st(), [&](DB* db) { return db->ListViews(&views); });
  pb::list out;
  for (const ViewInfo& v : views) {
    pb::dict x;
    x["name"] = v.name;
    x["created"] = v.created;
    x["kind"] = ViewKindName(v.definition.kind);
    x["operands"] = v.definition.operands;
    x["description"] = v.definition.Describe();
    out.append(x);
  }
  return out;
}

void BindDb(pb::module_& m) {
  pb::class_<ChangeFeed>(m, "ChangeFeed",
                         "A change-feed subscription (DB.subscribe): iterate for chunks of "
                         "records (numpy structured arrays), or poll(max, timeout).")
      .def("__iter__", [](pb::object self) { return self; })
      .def("__next__", &ChangeFeed::Next)
      .def("poll", [](ChangeFeed& f, size_t max, pb::object timeout) {
        bool ended = false;
        return f.Poll(max, timeout, &ended);
      }, pb::arg("max") = size_t{1} << 16, pb::arg("timeout") = pb::none())
      .def("close", &ChangeFeed::Close)
      .def("__enter__", [](pb::object self) { return self; })
      .def("__exit__", [](ChangeFeed& f, pb::args) { f.Close(); })
      .def_property_readonly("delivered_ts", [](ChangeFeed& f) {
        return f.Get([](Subscription& s) { return s.delivered_ts(); });
      })
      .def_property_readonly("durable", [](ChangeFeed& f) {
        return f.Get([](Subscription& s) { return s.durable(); });
      });
  pb::class_<PyWriteBatch>(m, "WriteBatch", "Updates applied atomically by DB.write.")
      .def(pb::init<>())
      .def("insert_edge", [](PyWriteBatch& b, VertexId u, VertexId v, double w) {
        b.batch.InsertEdge(u, v, w);
      }, pb::arg("u"), pb::arg("v"), pb::arg("weight") = 1.0)
      .def("delete_edge", [](PyWriteBatch& b, VertexId u, VertexId v) { b.batch.DeleteEdge(u, v); },
           pb::arg("u"), pb::arg("v"))
      .def("set_weight", [](PyWriteBatch& b, VertexId u, VertexId v, double w) {
        b.batch.SetWeight(u, v, w);
      }, pb::arg("u"), pb::arg("v"), pb::arg("weight"))
      .def("add_vertex", [](PyWriteBatch& b, VertexId v) { b.batch.AddVertex(v); }, pb::arg("v"))
      .def("delete_vertex", [](PyWriteBatch& b, VertexId v) { b.batch.DeleteVertex(v); },
           pb::arg("v"))
      .def("insert_edges", [](PyWriteBatch& b, pb::handle src, pb::handle dst, pb::handle w) {
        EdgeArrays a(src, dst, w);
        Check(a.Validate());
        AppendEdges(&b.batch, WriteBatch::OpType::kInsertEdge, *a.src, *a.dst, a.w.get(), 0,
                    a.src->size());
      }, pb::arg("src"), pb::arg("dst"), pb::arg("weights") = pb::none())
      .def("delete_edges", [](PyWriteBatch& b, pb::handle src, pb::handle dst) {
        EdgeArrays a(src, dst, pb::none());
        Check(a.Validate());
        AppendEdges(&b.batch, WriteBatch::OpType::kDeleteEdge, *a.src, *a.dst, nullptr, 0,
                    a.src->size());
      }, pb::arg("src"), pb::arg("dst"))
      .def("clear", [](PyWriteBatch& b) { b.batch.Clear(); })
      .def("__len__", [](PyWriteBatch& b) { return b.batch.Count(); });

  pb::class_<PyDB>(m, "DB", "An open StrataGraph store (stratagraph.open). Use as a context "
                            "manager, or call close().")
      .def("close", &PyDB::Close)
      .def_property_readonly("closed", &PyDB::closed)
      .def("__enter__", [](pb::object self) { return self; })
      .def("__exit__", [](PyDB& self, pb::args) { self.Close(); })
      .def_property_readonly("path", [](PyDB& d) { return d.st().path; })
      .def_property_readonly("directed",
                             [](PyDB& d) { return d.st().kind != GraphKind::kUndirected; })
      .def_property_readonly("kind", [](PyDB& d) { return KindString(d.st().kind); })
      .def_property_readonly("weighted", [](PyDB& d) { return d.st().weighted; })
      .def("insert_edges", [](PyDB& d, pb::handle src, pb::handle dst, pb::handle weights,
                              size_t batch, bool sync) {
        return d.WriteEdges(WriteBatch::OpType::kInsertEdge, src, dst, weights, batch, sync);
      }, pb::arg("src"), pb::arg("dst"), pb::arg("weights") = pb::none(), pb::arg("batch") = 0,
         pb::arg("sync") = false)
      .def("delete_edges", [](PyDB& d, pb::handle src, pb::handle dst, size_t batch, bool sync) {
        return d.WriteEdges(WriteBatch::OpType::kDeleteEdge, src, dst, pb::none(), batch, sync);
      }, pb::arg("src"), pb::arg("dst"), pb::arg("batch") = 0, pb::arg("sync") = false)
      .def("add_vertices", [](PyDB& d, pb::handle ids, bool sync) {
        return d.WriteVertices(true, ids, sync);
      }, pb::arg("ids"), pb::arg("sync") = false)
      .def("delete_vertices", [](PyDB& d, pb::handle ids, bool sync) {
        return d.WriteVertices(false, ids, sync);
      }, pb::arg("ids"), pb::arg("sync") = false)
      .def("write", &PyDB::Write, pb::arg("batch"), pb::arg("sync") = false)
      .def_property_readonly("mapped", [](PyDB& d) { return d.st().dict != nullptr; })
      .def("snapshot", &PyDB::NewSnapshot, pb::kw_only(), pb::arg("view") = pb::none())
      .def("create_view", &CreateView, pb::arg("name"), pb::kw_only(),
           pb::arg("vertices") = pb::none(), pb::arg("edges") = pb::none(),
           pb::arg("exclude_edges") = pb::none(), pb::arg("weight_range") = pb::none(),
           pb::arg("union") = pb::none(), pb::arg("intersection") = pb::none(),
           pb::arg("difference") = pb::none(), pb::arg("replace") = false)
      .def("drop_view", [](PyDB& d, const std::string& name) {
        WithDb(d.st(), [&](DB* db) { return db->DropView(name); });
      }, pb::arg("name"))
      .def("views", &ListViews)
      .def("subscribe", &Subscribe, pb::arg("name") = pb::none(), pb::kw_only(),
           pb::arg("from_ts") = pb::none(), pb::arg("queue_capacity") = size_t{1} << 20,
           pb::arg("overflow") = "cancel")
      .def("commit_position", [](PyDB& d, const std::string& name, Timestamp ts) {
        WithDb(d.st(), [&](DB* db) { return db->CommitPosition(name, ts); });
      }, pb::arg("name"), pb::arg("ts"))
      .def("position", [](PyDB& d, const std::string& name) -> pb::object {
        Timestamp ts = 0;
        bool found = true;
        WithDb(d.st(), [&](DB* db) {
          Status s = db->GetPosition(name, &ts);
          found = s.ok();
          return s.IsNotFound() ? Status::OK() : s;
        });
        return found ? pb::object(pb::int_(ts)) : pb::object(pb::none());
      }, pb::arg("name"))
      .def("drop_subscription", [](PyDB& d, const std::string& name) {
        WithDb(d.st(), [&](DB* db) { return db->DropSubscription(name); });
      }, pb::arg("name"))
      .def("stats", [](PyDB& d, bool count_graph) {
        DBStats x;
        WithDb(d.st(), [&](DB* db) {
          x = db->GetStats(count_graph);
          return x.count_status;
        });
        return StatsDict(x);
      }, pb::arg("count_graph") = true)
      .def("flush", [](PyDB& d) { WithDb(d.st(), [](DB* db) { return db->Flush(); }); })
      .def("wait_idle", [](PyDB& d) { WithDb(d.st(), [](DB* db) { return db->WaitIdle(); }); })
      .def("compact", [](PyDB& d) { WithDb(d.st(), [](DB* db) { return db->CompactAll(); }); })
      .def("verify", [](PyDB& d) {
        WithDb(d.st(), [](DB* db) {
          std::string report;
          Status s = db->Verify(&report);
          if (s.ok() || report.empty()) return s;
          return Status::Corruption(report);
        });
      });

  m.def("open", &Open, pb::arg("path"), pb::kw_only(), pb::arg("directed") = true,
        pb::arg("in_edges") = false, pb::arg("weighted") = false,
        pb::arg("memory_budget") = pb::none(), pb::arg("memgraph_bytes") = pb::none(),
        pb::arg("wal") = "group", pb::arg("in_memory") = false, pb::arg("read_only") = false,
        pb::arg("create") = true);
}

}  // namespace

void InitModule(pb::module_& m) {
  m.doc() = "StrataGraph's C++ engine (include/strata/) and analytics kernels.";
  RegisterExceptions(m);
  RegisterBuffer(m);
  BindDb(m);
  BindSnapshot(m);
  m.attr("UNREACHABLE") = analytics::kUnreachable;
  m.attr("NO_LABEL") = analytics::kNoLabel;
  pb::list kinds;  // ChangeFeed records' `kind` field indexes this
  for (int k = 0; k <= static_cast<int>(ChangeKind::kViewDropped); ++k) {
    kinds.append(ChangeKindName(static_cast<ChangeKind>(k)));
  }
  m.attr("CHANGE_KINDS") = kinds;
}

}  // namespace strata::py

PYBIND11_MODULE(_core, m) { strata::py::InitModule(m); }
