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
//  - results are numpy arrays that own the kernel's std::vector (moved, not copied).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <mutex>
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

namespace strata::py {

namespace {

using Kind = NumberView::Kind;

// --- State shared by the Python objects. ----------------------------------------------------

struct SnapState;

struct DbState {
  std::shared_mutex mu;  // shared: a call in flight; exclusive: close
  std::unique_ptr<DB> db;
  std::string path;
  GraphKind kind = GraphKind::kDirected;
  bool weighted = false;
  std::mutex snaps_mu;
  std::vector<std::weak_ptr<SnapState>> snaps;  // handed out, maybe closed
};

struct SnapState {
  // Declared first so that it is destroyed last: the snapshot goes before the DB it reads.
  std::shared_ptr<DbState> owner;  // keeps the DB open while the snapshot is
  std::shared_mutex mu;
  std::unique_ptr<Snapshot> snap;
};

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
    WithDb(*st_, [&](DB* db) {
      WriteOptions wo;
      wo.sync = sync;
      return db->Write(wo, b.batch);
    });
  }

  PySnapshot NewSnapshot() {
    auto snap = std::make_shared<SnapState>();
    WithDb(*st_, [&](DB* db) {
      snap->snap = db->GetSnapshot();
      return Status::OK();
    });
    snap->owner = st_;
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
    s = DB::Open(o, path, &st->db);
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
  STRATA_STAT(memgraph_versions);
  STRATA_STAT(versions_reclaimed);
  STRATA_STAT(hollow_versions);
  STRATA_STAT(versions_rebuilt);
  STRATA_STAT(active_readers);
  STRATA_STAT(sealed_memgraphs);
  STRATA_STAT(flushes);
  STRATA_STAT(compactions);
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
  WithSnapshot(self.st(), [&](const Snapshot& snap) {
    return snap.GetNeighbors(v, &dst, weights ? &w : nullptr, d);
  });
  if (weights) return pb::make_tuple(ToNumpy(std::move(dst)), ToNumpy(std::move(w)));
  return ToNumpy(std::move(dst));
}

pb::object Degrees(PySnapshot& self, const std::string& direction) {
  const Direction d = ParseDirection(direction);
  std::vector<uint64_t> deg;
  WithSnapshot(self.st(), [&](const Snapshot& snap) {
    deg.assign(snap.VertexIdBound(), 0);
    Status s = snap.ScanAdjacency(0, snap.VertexIdBound(), d, /*weights=*/false,
                                  [](VertexId) { return true; },
                                  [&](VertexId u, const NeighborChunk& c) {
                                    deg[u] += c.size;
                                    return ScanStep::kMore;
                                  });
    return s.ok() ? snap.status() : s;
  });
  return ToNumpy(std::move(deg));
}

pb::object Vertices(PySnapshot& self) {
  std::vector<VertexId> out;
  WithSnapshot(self.st(), [&](const Snapshot& snap) {
    out.reserve(snap.NumVertices());
    Status s = snap.ScanVertices(0, snap.VertexIdBound(), [&](VertexId v) {
      out.push_back(v);
      return true;
    });
    return s.ok() ? snap.status() : s;
  });
  return ToNumpy(std::move(out));
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
      .def("has_vertex", [](PySnapshot& s, VertexId v) {
        bool r = false;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          r = snap.HasVertex(v);
          return snap.status();
        });
        return r;
      }, pb::arg("v"))
      .def("has_edge", [](PySnapshot& s, VertexId u, VertexId v) {
        bool r = false;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          double w;
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
        std::vector<int64_t> depth;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          analytics::BfsParams p;
          p.source = source;
          return analytics::Bfs(snap, p, &depth);
        });
        return ToNumpy(std::move(depth));
      }, pb::arg("source"))
      .def("pagerank", [](PySnapshot& s, double damping, int iterations) {
        if (!(damping >= 0 && damping <= 1)) throw pb::value_error("damping: must be in [0, 1]");
        if (iterations < 1) throw pb::value_error("iterations: must be at least 1");
        std::vector<double> rank;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          analytics::PageRankParams p;
          p.damping = damping;
          p.iterations = iterations;
          return analytics::PageRank(snap, p, &rank);
        });
        return ToNumpy(std::move(rank));
      }, pb::arg("damping") = 0.85, pb::arg("iterations") = 20)
      .def("sssp", [](PySnapshot& s, VertexId source, double delta) {
        std::vector<double> dist;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          analytics::SsspParams p;
          p.source = source;
          p.delta = delta;
          return analytics::Sssp(snap, p, &dist);
        });
        return ToNumpy(std::move(dist));
      }, pb::arg("source"), pb::arg("delta") = 0.0)
      .def("wcc", [](PySnapshot& s) {
        std::vector<VertexId> label;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          return analytics::Wcc(snap, analytics::WccParams(), &label);
        });
        return ToNumpy(std::move(label));
      })
      .def("cdlp", [](PySnapshot& s, int iterations) {
        if (iterations < 1) throw pb::value_error("iterations: must be at least 1");
        std::vector<uint64_t> label;
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          analytics::CdlpParams p;
          p.max_iterations = iterations;
          return analytics::Cdlp(snap, p, &label);
        });
        return ToNumpy(std::move(label));
      }, pb::arg("iterations") = 10)
      .def("lcc", [](PySnapshot& s) {
        std::vector<double> lcc;
        WithSnapshot(s.st(), [&](const Snapshot& snap) { return analytics::Lcc(snap, &lcc); });
        return ToNumpy(std::move(lcc));
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
        WithSnapshot(s.st(), [&](const Snapshot& snap) {
          analytics::KHopParams p;
          p.source = source;
          p.k = k;
          p.direction = d;
          return analytics::KHop(snap, p, &out);
        });
        return ToNumpy(std::move(out));
      }, pb::arg("source"), pb::arg("k") = 2, pb::arg("direction") = "out");
}

void BindDb(pb::module_& m) {
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
      .def("snapshot", &PyDB::NewSnapshot)
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
}

}  // namespace strata::py

PYBIND11_MODULE(_core, m) { strata::py::InitModule(m); }
