#include "lsm/tier_reader.h"

#include <algorithm>

namespace strata::lsm {

namespace {

inline uint64_t SubgraphOf(VertexId v) { return v >> mem::kSubgraphBits; }
inline uint32_t LocalOf(VertexId v) { return static_cast<uint32_t>(v & (mem::kSubgraphSize - 1)); }

inline const mem::Adjacency* Adj(const mem::SubgraphVersion* sv, uint8_t dir) {
  return dir == 0 ? &sv->out : sv->in;
}

constexpr size_t kChunk = 512;

// Emits entries that are not tombstones as NeighborChunks.
class ChunkEmitter {
 public:
  ChunkEmitter(bool weighted, FunctionRef<bool(const NeighborChunk&)> fn)
      : weighted_(weighted), fn_(fn) {}
  bool Add(uint64_t k, double w) {
    dst_[n_] = k;
    w_[n_] = w;
    if (++n_ == kChunk) return Flush();
    return true;
  }
  bool Flush() {
    if (n_ == 0) return true;
    NeighborChunk c{dst_, weighted_ ? w_ : nullptr, n_};
    n_ = 0;
    return fn_(c);
  }

 private:
  bool weighted_;
  FunctionRef<bool(const NeighborChunk&)> fn_;
  uint64_t dst_[kChunk];
  double w_[kChunk];
  size_t n_ = 0;
};

struct Entry {
  uint64_t key;
  double w;
  bool tomb;
};

}  // namespace

bool TierReader::HasVertex(VertexId u) const {
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    uint32_t i = LocalOf(u);
    if ((sv->exists_mask >> i) & 1) return true;
    if ((sv->deleted_mask >> i) & 1) return false;
  }
  return false;
}

bool TierReader::GetEdge(uint8_t dir, VertexId u, VertexId x, double* weight) const {
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    uint32_t i = LocalOf(u);
    bool tomb = false;
    double w = 1.0;
    if (mem::FindEdge(*Adj(sv, dir), i, x, &w, &tomb)) {
      if (tomb) return false;
      if (weight) *weight = w;
      return true;
    }
    if ((sv->deleted_mask >> i) & 1) return false;
  }
  return false;
}

uint64_t TierReader::Degree(uint8_t dir, VertexId u) const {
  // Fast path: one tier decides alone when it is the only one holding the vertex, or it
  // hides the others, and it holds no tombstones (live == entries).
  const mem::SubgraphVersion* only = nullptr;
  int holders = 0;
  uint32_t i = LocalOf(u);
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    bool hides = (sv->deleted_mask >> i) & 1;
    if (Adj(sv, dir)->entries[i] != 0 || hides) {
      if (holders++ == 0) only = sv;
    }
    if (hides) break;
  }
  if (holders == 0) return 0;
  if (holders == 1) return Adj(only, dir)->live[i];
  uint64_t d = 0;
  ScanNeighbors(dir, u, [&](const NeighborChunk& c) {
    d += c.size;
    return true;
  });
  return d;
}

void TierReader::ScanNeighbors(uint8_t dir, VertexId u,
                               FunctionRef<bool(const NeighborChunk&)> fn) const {
  const uint32_t i = LocalOf(u);
  const bool weighted = v_->memgraphs.empty() ? false : v_->memgraphs[0]->options().weighted;
  const mem::Adjacency* lists[16];
  size_t nlists = 0;
  std::vector<const mem::Adjacency*> more;
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(u), ts_);
    if (sv == nullptr) continue;
    const mem::Adjacency* a = Adj(sv, dir);
    if (a->entries[i] != 0) {
      if (nlists < 16) lists[nlists++] = a; else more.push_back(a);
    }
    if ((sv->deleted_mask >> i) & 1) break;
  }
  if (nlists == 0) return;
  ChunkEmitter out(weighted, fn);
  if (nlists == 1) {
    const mem::Adjacency* a = lists[0];
    bool go = true;
    mem::ScanVertex(*a, i, [&](const uint64_t* k, const double* w, const uint8_t* tomb, size_t n) {
      if (tomb == nullptr) {
        if (!out.Flush()) return go = false;
        NeighborChunk c{k, weighted ? w : nullptr, n};
        go = fn(c);
        return go;
      }
      for (size_t j = 0; j < n; ++j) {
        if (!tomb[j] && !out.Add(k[j], w ? w[j] : 1.0)) return go = false;
      }
      return true;
    });
    if (go) out.Flush();
    return;
  }
  // Several tiers: materialize each (newest first) and merge; the newest entry of a key wins.
  std::vector<std::vector<Entry>> runs(nlists + more.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    const mem::Adjacency* a = r < nlists ? lists[r] : more[r - nlists];
    mem::ScanVertex(*a, i, [&](const uint64_t* k, const double* w, const uint8_t* tomb, size_t n) {
      for (size_t j = 0; j < n; ++j) runs[r].push_back({k[j], w ? w[j] : 1.0, tomb && tomb[j]});
      return true;
    });
  }
  std::vector<size_t> pos(runs.size(), 0);
  for (;;) {
    uint64_t best = 0;
    bool any = false;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (pos[r] < runs[r].size() && (!any || runs[r][pos[r]].key < best)) {
        best = runs[r][pos[r]].key;
        any = true;
      }
    }
    if (!any) break;
    const Entry* winner = nullptr;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (pos[r] < runs[r].size() && runs[r][pos[r]].key == best) {
        if (winner == nullptr) winner = &runs[r][pos[r]];
        ++pos[r];
      }
    }
    if (!winner->tomb && !out.Add(winner->key, winner->w)) return;
  }
  out.Flush();
}

VertexId TierReader::VertexIdBound() const {
  uint64_t b = 0;
  for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
    b = std::max<uint64_t>(b, v_->memgraphs[t]->subgraph_bound());
  }
  return b << mem::kSubgraphBits;
}

void TierReader::ScanVertices(VertexId begin, VertexId end, FunctionRef<bool(VertexId)> fn) const {
  end = std::min(end, VertexIdBound());
  for (VertexId base = begin & ~VertexId{mem::kSubgraphSize - 1}; base < end;
       base += mem::kSubgraphSize) {
    // Merge masks newest first: a vertex is decided by the newest tier that knows it.
    uint64_t exists = 0, decided = 0;
    for (size_t t = first_; t < v_->memgraphs.size(); ++t) {
      const mem::SubgraphVersion* sv = v_->memgraphs[t]->VersionAt(SubgraphOf(base), ts_);
      if (sv == nullptr) continue;
      uint64_t knows = sv->exists_mask | sv->deleted_mask;
      exists |= sv->exists_mask & ~decided;
      decided |= knows;
    }
    for (uint64_t m = exists; m != 0; m &= m - 1) {
      VertexId v = base + static_cast<VertexId>(__builtin_ctzll(m));
      if (v < begin || v >= end) continue;
      if (!fn(v)) return;
    }
  }
}

uint64_t TierReader::NumVertices() const {
  uint64_t n = 0;
  ScanVertices(0, VertexIdBound(), [&](VertexId) {
    ++n;
    return true;
  });
  return n;
}

uint64_t TierReader::NumEdges() const {
  uint64_t n = 0;
  ScanVertices(0, VertexIdBound(), [&](VertexId v) {
    n += Degree(0, v);
    return true;
  });
  return n;
}

}  // namespace strata::lsm
