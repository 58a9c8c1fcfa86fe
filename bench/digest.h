// Digests of analytics results, computed the same way for every system so the driver can check
// that all systems computed the same thing:
//   BFS   vertices reached, sum and max of depths
//   SSSP  vertices reached, sum of distances
//   PR    the highest-ranked vertex and its rank (3 significant digits: systems without a vertex
//         table do not count vertices whose edges were all deleted, which shifts ranks slightly)
//   WCC   components of two or more vertices and the size of the largest (singletons are left
//         out for the same reason)
//   TC    the triangle count
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace strata::bench {

template <typename Depth>
std::string BfsDigest(const Depth* depth, size_t n, Depth unreachable) {
  uint64_t reached = 0, sum = 0;
  int64_t mx = 0;
  for (size_t v = 0; v < n; ++v) {
    if (depth[v] == unreachable || depth[v] < 0) continue;
    ++reached;
    sum += static_cast<uint64_t>(depth[v]);
    if (static_cast<int64_t>(depth[v]) > mx) mx = static_cast<int64_t>(depth[v]);
  }
  char buf[128];
  snprintf(buf, sizeof(buf), "reached=%llu depth_sum=%llu max_depth=%lld",
           static_cast<unsigned long long>(reached), static_cast<unsigned long long>(sum),
           static_cast<long long>(mx));
  return buf;
}

inline std::string SsspDigest(const double* dist, size_t n) {
  uint64_t reached = 0;
  double sum = 0;
  for (size_t v = 0; v < n; ++v) {
    if (!std::isfinite(dist[v])) continue;
    ++reached;
    sum += dist[v];
  }
  char buf[128];
  snprintf(buf, sizeof(buf), "reached=%llu dist_sum=%.6g", static_cast<unsigned long long>(reached),
           sum);
  return buf;
}

inline std::string PageRankDigest(const double* rank, size_t n) {
  size_t top = 0;
  for (size_t v = 1; v < n; ++v) {
    if (rank[v] > rank[top]) top = v;
  }
  char buf[128];
  snprintf(buf, sizeof(buf), "top=%zu rank=%.3g", top, n ? rank[top] : 0.0);
  return buf;
}

template <typename Label>
std::string WccDigest(const Label* label, size_t n, Label none) {
  std::vector<uint32_t> size(n, 0);
  for (size_t v = 0; v < n; ++v) {
    if (label[v] != none && static_cast<uint64_t>(label[v]) < n) ++size[label[v]];
  }
  uint64_t comps = 0, largest = 0;
  for (size_t v = 0; v < n; ++v) {
    if (size[v] >= 2) {
      ++comps;
      if (size[v] > largest) largest = size[v];
    }
  }
  char buf[128];
  snprintf(buf, sizeof(buf), "components_ge2=%llu largest=%llu",
           static_cast<unsigned long long>(comps), static_cast<unsigned long long>(largest));
  return buf;
}

inline std::string TcDigest(uint64_t triangles) {
  return "triangles=" + std::to_string(triangles);
}

}  // namespace strata::bench
