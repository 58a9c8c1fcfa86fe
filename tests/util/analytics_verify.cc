#include "tests/util/analytics_verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>

namespace strata::analytics {

Status LoadRefGraph(const Snapshot& snap, RefGraph* g) {
  g->kind = snap.kind();
  g->bound = snap.VertexIdBound();
  g->exists.assign(g->bound, 0);
  g->out.assign(g->bound, {});
  g->in.assign(g->bound, {});
  g->num_vertices = 0;
  Status s = snap.ScanVertices(0, g->bound, [&](VertexId v) {
    g->exists[v] = 1;
    ++g->num_vertices;
    return true;
  });
  for (VertexId v = 0; v < g->bound && s.ok(); ++v) {
    if (!g->exists[v]) continue;
    s = snap.ScanNeighbors(v, Direction::kOut, [&](const NeighborChunk& c) {
      for (size_t i = 0; i < c.size; ++i) {
        g->out[v].emplace_back(c.dst[i], c.weight ? c.weight[i] : 1.0);
      }
      return true;
    });
    for (auto& [u, w] : g->out[v]) {
      if (u >= g->bound) return Status::Corruption("reference: neighbor >= VertexIdBound()");
    }
    // Analytics see the graph induced by existing vertices: drop edges into absent vertices.
    std::erase_if(g->out[v], [&](const std::pair<VertexId, double>& e) { return !g->exists[e.first]; });
    for (auto& [u, w] : g->out[v]) g->in[u].push_back(v);  // v ascending: in-lists ascending
  }
  return s.ok() ? snap.status() : s;
}

namespace {

// N_out(v) ∪ N_in(v) \ {v}, ascending.
std::vector<VertexId> Undirected(const RefGraph& g, VertexId v) {
  std::set<VertexId> n;
  for (auto& [u, w] : g.out[v]) n.insert(u);
  for (VertexId u : g.in[v]) n.insert(u);
  n.erase(v);
  return {n.begin(), n.end()};
}

bool HasOut(const RefGraph& g, VertexId u, VertexId w) {
  auto it = std::lower_bound(g.out[u].begin(), g.out[u].end(), std::make_pair(w, -kInfinity));
  return it != g.out[u].end() && it->first == w;
}

}  // namespace

Status ReferenceBfs(const Snapshot& snap, VertexId source, std::vector<int64_t>* depth) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  depth->assign(g.bound, kUnreachable);
  if (source >= g.bound || !g.exists[source]) return Status::InvalidArgument("BFS: no source");
  std::deque<VertexId> q{source};
  (*depth)[source] = 0;
  while (!q.empty()) {
    const VertexId v = q.front();
    q.pop_front();
    for (auto& [u, w] : g.out[v]) {
      if ((*depth)[u] == kUnreachable) {
        (*depth)[u] = (*depth)[v] + 1;
        q.push_back(u);
      }
    }
  }
  return Status::OK();
}

Status ReferencePageRank(const Snapshot& snap, const PageRankParams& params,
                         std::vector<double>* rank) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  std::vector<double>& r = *rank;
  r.assign(g.bound, 0.0);
  if (g.num_vertices == 0) return Status::OK();
  const double n = static_cast<double>(g.num_vertices), d = params.damping;
  for (VertexId v = 0; v < g.bound; ++v) {
    if (g.exists[v]) r[v] = 1.0 / n;
  }
  std::vector<double> next(g.bound, 0.0);
  for (int i = 0; i < params.iterations; ++i) {
    double sink_sum = 0;
    for (VertexId w = 0; w < g.bound; ++w) {
      if (g.exists[w] && g.out[w].empty()) sink_sum += r[w];
    }
    for (VertexId v = 0; v < g.bound; ++v) {
      if (!g.exists[v]) continue;
      double sum = 0;
      for (VertexId u : g.in[v]) sum += r[u] / static_cast<double>(g.out[u].size());
      next[v] = (1 - d) / n + d * sum + d / n * sink_sum;
    }
    r.swap(next);
  }
  return Status::OK();
}

Status ReferenceSssp(const Snapshot& snap, VertexId source, std::vector<double>* dist) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  dist->assign(g.bound, kInfinity);
  if (source >= g.bound || !g.exists[source]) return Status::InvalidArgument("SSSP: no source");
  using Item = std::pair<double, VertexId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  (*dist)[source] = 0;
  heap.emplace(0.0, source);
  while (!heap.empty()) {
    auto [dv, v] = heap.top();
    heap.pop();
    if (dv > (*dist)[v]) continue;
    for (auto& [u, w] : g.out[v]) {
      if (!(w >= 0)) return Status::InvalidArgument("SSSP: negative or NaN weight");
      if ((*dist)[u] > dv + w) {
        (*dist)[u] = dv + w;
        heap.emplace(dv + w, u);
      }
    }
  }
  return Status::OK();
}

Status ReferenceWcc(const Snapshot& snap, std::vector<VertexId>* label) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  label->assign(g.bound, kNoLabel);
  // A search from each unlabeled vertex in ascending order: the start is its component's minimum.
  for (VertexId root = 0; root < g.bound; ++root) {
    if (!g.exists[root] || (*label)[root] != kNoLabel) continue;
    std::vector<VertexId> stack{root};
    (*label)[root] = root;
    while (!stack.empty()) {
      const VertexId v = stack.back();
      stack.pop_back();
      for (VertexId u : Undirected(g, v)) {
        if ((*label)[u] == kNoLabel) {
          (*label)[u] = root;
          stack.push_back(u);
        }
      }
    }
  }
  return Status::OK();
}

Status ReferenceCdlp(const Snapshot& snap, const CdlpParams& params, std::vector<uint64_t>* label) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  std::vector<uint64_t>& l = *label;
  l.assign(g.bound, kNoLabel);
  for (VertexId v = 0; v < g.bound; ++v) {
    if (g.exists[v]) l[v] = params.initial_labels ? (*params.initial_labels)[v] : v;
  }
  std::vector<uint64_t> next = l;
  for (int i = 0; i < params.max_iterations; ++i) {
    for (VertexId v = 0; v < g.bound; ++v) {
      if (!g.exists[v]) continue;
      std::map<uint64_t, uint64_t> histogram;
      // Spec: labels of N_in(v), then of N_out(v); for undirected graphs N_in = N_out.
      for (auto& [u, w] : g.out[v]) ++histogram[l[u]];
      if (g.kind == GraphKind::kUndirected) {
        for (auto& [u, w] : g.out[v]) ++histogram[l[u]];
      } else {
        for (VertexId u : g.in[v]) ++histogram[l[u]];
      }
      uint64_t best = l[v], freq = 0;
      for (auto& [lab, c] : histogram) {  // ascending labels: the first maximum is the smallest
        if (c > freq) {
          freq = c;
          best = lab;
        }
      }
      next[v] = best;
    }
    l = next;
  }
  return Status::OK();
}

Status ReferenceLcc(const Snapshot& snap, std::vector<double>* lcc) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  lcc->assign(g.bound, 0.0);
  for (VertexId v = 0; v < g.bound; ++v) {
    if (!g.exists[v]) continue;
    const std::vector<VertexId> n = Undirected(g, v);
    const uint64_t d = n.size();
    if (d < 2) continue;
    uint64_t t = 0;
    for (VertexId u : n) {
      for (VertexId w : n) {
        if (u != w && HasOut(g, u, w)) ++t;
      }
    }
    (*lcc)[v] = static_cast<double>(t) / static_cast<double>(d * (d - 1));
  }
  return Status::OK();
}

Status ReferenceTriangleCount(const Snapshot& snap, uint64_t* triangles) {
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  std::vector<std::vector<VertexId>> adj(g.bound);
  for (VertexId v = 0; v < g.bound; ++v) {
    if (g.exists[v]) adj[v] = Undirected(g, v);
  }
  *triangles = 0;
  for (VertexId u = 0; u < g.bound; ++u) {
    for (VertexId v : adj[u]) {
      if (v <= u) continue;
      for (VertexId w : adj[v]) {
        if (w > v && std::binary_search(adj[u].begin(), adj[u].end(), w)) ++*triangles;
      }
    }
  }
  return Status::OK();
}

Status ReferenceKHop(const Snapshot& snap, const KHopParams& params, std::vector<VertexId>* out) {
  out->clear();
  if (params.direction == Direction::kIn && snap.kind() == GraphKind::kDirected) {
    return Status::NotSupported("k-hop: in-edges not kept");
  }
  RefGraph g;
  Status s = LoadRefGraph(snap, &g);
  if (!s.ok()) return s;
  if (params.source >= g.bound || !g.exists[params.source]) {
    return Status::InvalidArgument("k-hop: no source");
  }
  const bool use_in = params.direction == Direction::kIn && g.kind != GraphKind::kUndirected;
  std::vector<int64_t> depth(g.bound, kUnreachable);
  std::deque<VertexId> q{params.source};
  depth[params.source] = 0;
  while (!q.empty()) {
    const VertexId v = q.front();
    q.pop_front();
    if (depth[v] >= params.k) continue;
    auto visit = [&](VertexId u) {
      if (depth[u] == kUnreachable) {
        depth[u] = depth[v] + 1;
        q.push_back(u);
      }
    };
    if (use_in) {
      for (VertexId u : g.in[v]) visit(u);
    } else {
      for (auto& [u, w] : g.out[v]) visit(u);
    }
  }
  for (VertexId v = 0; v < g.bound; ++v) {
    if (depth[v] != kUnreachable) out->push_back(v);
  }
  return Status::OK();
}

Status ReferenceScan(const Snapshot& snap, Direction direction, ScanResult* result) {
  // SCAN reports what the store returns (edges into absent vertices included).
  *result = ScanResult{};
  std::vector<VertexId> vertices;
  Status s = snap.ScanVertices(0, snap.VertexIdBound(), [&](VertexId v) {
    vertices.push_back(v);
    return true;
  });
  for (VertexId v : vertices) {
    if (!s.ok()) break;
    ++result->vertices;
    s = snap.ScanNeighbors(v, direction, [&](const NeighborChunk& c) {
      for (size_t i = 0; i < c.size; ++i) {
        ++result->edges;
        result->dst_sum += c.dst[i];
        result->weight_sum += c.weight ? c.weight[i] : 1.0;
      }
      return true;
    });
  }
  return s.ok() ? snap.status() : s;
}

// ---------------------------------------------------------------------------------------------

namespace {

Status SizeMismatch(std::string_view what, size_t e, size_t a) {
  return Status::InvalidArgument(std::string(what) + ": expected " + std::to_string(e) +
                                 " values, got " + std::to_string(a));
}

template <typename T>
Status Exact(const std::vector<T>& e, const std::vector<T>& a, std::string_view what) {
  if (e.size() != a.size()) return SizeMismatch(what, e.size(), a.size());
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i] != a[i]) {
      return Status::Corruption(std::string(what) + ": vertex " + std::to_string(i) +
                                " expected " + std::to_string(e[i]) + ", got " +
                                std::to_string(a[i]));
    }
  }
  return Status::OK();
}

}  // namespace

Status CheckExact(const std::vector<int64_t>& expected, const std::vector<int64_t>& actual,
                  std::string_view what) {
  return Exact(expected, actual, what);
}

Status CheckExact(const std::vector<uint64_t>& expected, const std::vector<uint64_t>& actual,
                  std::string_view what) {
  return Exact(expected, actual, what);
}

Status CheckEpsilon(const std::vector<double>& expected, const std::vector<double>& actual,
                    double epsilon, std::string_view what) {
  if (expected.size() != actual.size()) return SizeMismatch(what, expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const double r = expected[i], s = actual[i];
    const bool match = (std::isinf(r) || std::isinf(s)) ? r == s
                                                        : std::fabs(r - s) <= epsilon * std::fabs(r);
    if (!match) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), ": vertex %zu expected %.15e, got %.15e", i, r, s);
      return Status::Corruption(std::string(what) + buf);
    }
  }
  return Status::OK();
}

Status CheckEquivalent(const std::vector<uint64_t>& expected, const std::vector<uint64_t>& actual,
                       std::string_view what) {
  if (expected.size() != actual.size()) return SizeMismatch(what, expected.size(), actual.size());
  std::unordered_map<uint64_t, uint64_t> forward, backward;
  for (size_t i = 0; i < expected.size(); ++i) {
    auto [f, fnew] = forward.emplace(expected[i], actual[i]);
    auto [b, bnew] = backward.emplace(actual[i], expected[i]);
    if (f->second != actual[i] || b->second != expected[i]) {
      return Status::Corruption(std::string(what) + ": vertex " + std::to_string(i) +
                                " breaks the label bijection (expected " +
                                std::to_string(expected[i]) + ", got " +
                                std::to_string(actual[i]) + ")");
    }
  }
  return Status::OK();
}

}  // namespace strata::analytics
