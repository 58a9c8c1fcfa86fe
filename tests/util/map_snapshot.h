// MapSnapshot: a test-only Snapshot backed by ordered maps — the reference model of the graph
// a snapshot shows (docs/design.md, "Data model" and "Merged reads"), simple enough to be
// obviously right.
//
// Semantics modeled:
//  - vertices are a set of IDs; VertexIdBound() = 1 + the largest ID ever added (it never
//    shrinks, as in a store that recycles IDs), so deleted IDs leave holes;
//  - an edge (u, v) is unique; PutEdge on an existing edge overwrites its weight and creates
//    missing endpoints; unweighted snapshots store and report 1.0 (chunks carry weight == null);
//  - kUndirected stores {u, v} as (u, v) and (v, u) (a self-loop once); NumEdges counts stored
//    entries, and Direction::kIn reads as kOut;
//  - kDirectedWithInEdges answers kIn from a mirrored in-edge map; kDirected answers kIn with
//    NotSupported (Degree(kIn) records NotSupported in status() and returns 0);
//  - DeleteVertex removes the vertex and its out-edges; also its in-edges for kUndirected and
//    kDirectedWithInEdges. A kDirected store keeps edges into a deleted vertex (the engine cannot
//    find them without a full scan), so neighbors may name absent vertices; reusing the ID
//    revives those edges.
//
// Reads are thread-safe (const map lookups); mutations must not overlap reads. Test knobs: the
// chunk size of ScanNeighbors, and read-error injection (a failed read returns IOError and
// records it in status(), as a disk read error would).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "strata/snapshot.h"

namespace strata {

class MapSnapshot : public Snapshot {
 public:
  explicit MapSnapshot(GraphKind kind, bool weighted = false) : kind_(kind), weighted_(weighted) {}

  // ---- Mutation.
  void AddVertex(VertexId v) {
    vertices_.insert(v);
    bound_ = std::max(bound_, v + 1);
  }

  // Removes v and its out-edges, and its in-edges unless the kind is kDirected (which has no
  // in-edge index: edges into v stay, pointing at an absent vertex, and come back to life if the
  // ID is reused — docs/architecture.md). False if v does not exist.
  bool DeleteVertex(VertexId v) {
    if (!vertices_.erase(v)) return false;
    if (const std::map<VertexId, double>* out = Find(out_, v)) {
      const std::map<VertexId, double> nbrs = *out;
      for (const auto& [u, w] : nbrs) DeleteEdge(v, u);
    }
    if (kind_ != GraphKind::kDirected) {
      if (const std::map<VertexId, double>* in = Find(in_, v)) {
        const std::map<VertexId, double> nbrs = *in;
        for (const auto& [u, w] : nbrs) DeleteEdge(u, v);
      }
    }
    return true;
  }

  // Inserts (u, v) or overwrites its weight; adds missing endpoints.
  void PutEdge(VertexId u, VertexId v, double weight = 1.0) {
    if (!weighted_) weight = 1.0;
    AddVertex(u);
    AddVertex(v);
    Put(u, v, weight);
    if (kind_ == GraphKind::kUndirected && u != v) Put(v, u, weight);
  }

  // Removes (u, v) (both directions when undirected); false if absent.
  bool DeleteEdge(VertexId u, VertexId v) {
    if (!Erase(u, v)) return false;
    if (kind_ == GraphKind::kUndirected && u != v) Erase(v, u);
    return true;
  }

  // ---- Test knobs.
  void set_chunk_size(size_t n) { chunk_ = std::max<size_t>(1, n); }
  void set_timestamp(Timestamp t) { ts_ = t; }
  // After `n` more successful reads (ScanVertices / ScanNeighbors / GetEdge calls), every read
  // fails with IOError and the error is recorded in status().
  void InjectReadError(uint64_t n) {
    reads_left_.store(n);
    inject_.store(true);
  }
  void ClearReadError() {
    inject_.store(false);
    std::lock_guard<std::mutex> lock(mu_);
    status_ = Status::OK();
  }

  // ---- Snapshot.
  using Snapshot::ScanNeighbors;  // keep the out-direction overload visible
  Timestamp timestamp() const override { return ts_; }
  GraphKind kind() const override { return kind_; }
  bool weighted() const override { return weighted_; }

  bool HasVertex(VertexId v) const override { return vertices_.count(v) != 0; }
  VertexId VertexIdBound() const override { return bound_; }
  uint64_t NumVertices() const override { return vertices_.size(); }
  Status ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const override {
    if (Fail()) return ReadError();
    for (auto it = vertices_.lower_bound(begin); it != vertices_.end() && *it < end; ++it) {
      if (!fn(*it)) break;
    }
    return Status::OK();
  }

  Status GetEdge(VertexId u, VertexId v, double* weight) const override {
    if (Fail()) return ReadError();
    const std::map<VertexId, double>* n = Find(out_, u);
    if (n == nullptr) return Status::NotFound("no such edge");
    auto it = n->find(v);
    if (it == n->end()) return Status::NotFound("no such edge");
    *weight = it->second;
    return Status::OK();
  }
  uint64_t NumEdges() const override { return num_entries_; }

  uint64_t Degree(VertexId u, Direction d = Direction::kOut) const override {
    const std::map<VertexId, double>* n = nullptr;
    if (!Select(d, u, &n)) {
      Record(Status::NotSupported("Degree(kIn) on a store without in-edges"));
      return 0;
    }
    return n ? n->size() : 0;
  }

  Status ScanNeighbors(VertexId u, Direction d,
                       FunctionRef<bool(const NeighborChunk&)> fn) const override {
    const std::map<VertexId, double>* n = nullptr;
    if (!Select(d, u, &n)) return Status::NotSupported("kIn on a store without in-edges");
    if (Fail()) return ReadError();
    if (n == nullptr) return Status::OK();
    std::vector<VertexId> dst;
    std::vector<double> w;
    dst.reserve(std::min(chunk_, n->size()));
    w.reserve(dst.capacity());
    for (auto it = n->begin(); it != n->end();) {
      dst.clear();
      w.clear();
      for (; it != n->end() && dst.size() < chunk_; ++it) {
        dst.push_back(it->first);
        w.push_back(it->second);
      }
      NeighborChunk c{dst.data(), weighted_ ? w.data() : nullptr, dst.size()};
      if (!fn(c)) break;
    }
    return Status::OK();
  }

  Status status() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  using Adj = std::map<VertexId, std::map<VertexId, double>>;

  static const std::map<VertexId, double>* Find(const Adj& a, VertexId u) {
    auto it = a.find(u);
    return it == a.end() ? nullptr : &it->second;
  }

  // The map answering direction d for u (null: no neighbors); false if d is unsupported.
  bool Select(Direction d, VertexId u, const std::map<VertexId, double>** n) const {
    if (d == Direction::kIn && kind_ == GraphKind::kDirected) return false;
    const bool use_in = d == Direction::kIn && kind_ == GraphKind::kDirectedWithInEdges;
    *n = Find(use_in ? in_ : out_, u);
    return true;
  }

  void Put(VertexId u, VertexId v, double w) {
    auto [it, inserted] = out_[u].insert_or_assign(v, w);
    (void)it;
    if (inserted) ++num_entries_;
    in_[v][u] = w;
  }

  bool Erase(VertexId u, VertexId v) {
    auto it = out_.find(u);
    if (it == out_.end() || it->second.erase(v) == 0) return false;
    --num_entries_;
    in_[v].erase(u);
    return true;
  }

  // Counts one read; true when it must fail (and records the error).
  bool Fail() const {
    if (!inject_.load(std::memory_order_relaxed)) return false;
    uint64_t left = reads_left_.load();
    while (left > 0) {
      if (reads_left_.compare_exchange_weak(left, left - 1)) return false;
    }
    Record(ReadError());
    return true;
  }
  static Status ReadError() { return Status::IOError("MapSnapshot: injected read error"); }
  void Record(const Status& s) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = s;
  }

  GraphKind kind_;
  bool weighted_;
  size_t chunk_ = 64;
  Timestamp ts_ = 0;
  std::set<VertexId> vertices_;
  VertexId bound_ = 0;
  Adj out_;  // u -> {v -> weight}: every stored entry (both directions when undirected)
  Adj in_;   // v -> {u -> weight}: mirror of out_ (exposed only for kDirectedWithInEdges)
  uint64_t num_entries_ = 0;
  mutable std::atomic<bool> inject_{false};
  mutable std::atomic<uint64_t> reads_left_{0};
  mutable std::mutex mu_;
  mutable Status status_;
};

}  // namespace strata
