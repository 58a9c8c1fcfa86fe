// Connected components maintained incrementally from the change feed, checked against the
// Wcc kernel recomputed from scratch on a snapshot.
//
// The store is undirected; two writer threads insert random edges while a subscription's
// handler — on the feed's own thread, never in the writers' commit path — unions the
// endpoints of every kInsertEdge in a union-find. Union-find handles inserts only: a delete
// record would need a recomputation (or a dynamic connectivity structure), so this example
// writes none and fails if it sees one. At the end it waits until the feed has delivered the
// last commit and compares its components with analytics::Wcc over a snapshot.
//
//   strata-example-cc [--vertices N] [--edges M] [--db DIR]
// Without --db the store is in memory. Exit status 0 when the two agree.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "strata/analytics.h"
#include "strata/change_feed.h"
#include "strata/db.h"

namespace {

class UnionFind {
 public:
  void Grow(uint64_t n) {
    while (parent_.size() < n) parent_.push_back(parent_.size());
  }
  uint64_t Find(uint64_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(uint64_t a, uint64_t b) {
    Grow(std::max(a, b) + 1);
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // the root is the smallest ID
  }
  uint64_t size() const { return parent_.size(); }

 private:
  std::vector<uint64_t> parent_;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t vertices = 5000, edges = 20000;
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--vertices")) vertices = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--edges")) edges = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--db")) dir = argv[i + 1];
  }
  strata::Options o;
  o.graph_kind = strata::GraphKind::kUndirected;
  o.in_memory = dir.empty();
  std::unique_ptr<strata::DB> db;
  strata::Status s = strata::DB::Open(o, dir.empty() ? "example" : dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }

  UnionFind uf;  // touched only by the handler thread (handler_threads = 1)
  std::vector<bool> present;
  std::atomic<uint64_t> unexpected{0};
  strata::SubscribeOptions so;
  so.overflow = strata::OverflowPolicy::kBlock;  // never drop: the components must be exact
  std::unique_ptr<strata::Subscription> sub;
  s = db->Subscribe(so, [&](const strata::ChangeRecord* r, size_t n) {
        for (size_t i = 0; i < n; ++i) {
          if (r[i].kind == strata::ChangeKind::kInsertEdge ||
              r[i].kind == strata::ChangeKind::kOverwriteEdge) {
            uf.Union(r[i].u, r[i].v);
            const uint64_t hi = std::max(r[i].u, r[i].v) + 1;
            if (present.size() < hi) present.resize(hi, false);
            present[r[i].u] = present[r[i].v] = true;
          } else {
            ++unexpected;
          }
        }
      }, &sub);
  if (!s.ok()) {
    std::fprintf(stderr, "subscribe: %s\n", s.ToString().c_str());
    return 1;
  }

  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(7 + w);
      strata::WriteBatch b;
      for (uint64_t i = w; i < edges; i += 2) {
        b.InsertEdge(rng() % vertices, rng() % vertices);
        if (b.Count() == 64) {
          if (!db->Write(b).ok()) std::abort();
          b.Clear();
        }
      }
      if (b.Count() != 0 && !db->Write(b).ok()) std::abort();
    });
  }
  for (auto& t : writers) t.join();
  const strata::Timestamp last = db->GetStats(false).last_committed;
  s = sub->WaitDelivered(last, 60000);
  if (!s.ok()) {
    std::fprintf(stderr, "feed: %s\n", s.ToString().c_str());
    return 1;
  }
  sub.reset();

  std::unique_ptr<strata::Snapshot> snap = db->GetSnapshot();
  std::vector<strata::VertexId> label;
  s = strata::analytics::Wcc(*snap, strata::analytics::WccParams(), &label);
  if (!s.ok()) {
    std::fprintf(stderr, "wcc: %s\n", s.ToString().c_str());
    return 1;
  }
  uint64_t mismatches = 0, components = 0, checked = 0;
  for (uint64_t v = 0; v < present.size(); ++v) {
    if (!present[v]) continue;
    ++checked;
    const uint64_t root = uf.Find(v);  // the smallest ID of v's component, as Wcc labels it
    if (root == v) ++components;
    if (v >= label.size() || label[v] != root) ++mismatches;
  }
  std::printf("incremental components: %llu over %llu vertices (feed up to ts %llu); "
              "mismatches against Wcc: %llu; unexpected records: %llu\n",
              static_cast<unsigned long long>(components), static_cast<unsigned long long>(checked),
              static_cast<unsigned long long>(last), static_cast<unsigned long long>(mismatches),
              static_cast<unsigned long long>(unexpected.load()));
  return mismatches == 0 && unexpected == 0 && checked > 0 ? 0 : 1;
}
