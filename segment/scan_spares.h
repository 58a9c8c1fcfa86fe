// ScanSpares: per-thread reuse of the large buffers a scan allocates (SpareString: a string
// borrowed from them for a scope).
//
// The process's allocator returns freed pages to the kernel at once (memgraph/node_allocator.cc:
// jemalloc with dirty_decay_ms:0, so that Options::memory_budget holds). A full-graph analytics
// pass opens thousands of short range scans, each allocating ~1-3 MiB of windows and decoded
// entries; without reuse every scan faults those pages in again and every free madvises them
// away: the cost is the churn, not the work.
//
// A thread keeps at most kMaxObjects freed objects of each type, holding at most kMaxBytes
// together; anything larger is freed. Objects move between threads freely (a buffer freed on
// another thread joins that thread's spares).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace strata {

template <typename T>
class ScanSpares {
 public:
  static constexpr size_t kMaxObjects = 8;
  static constexpr size_t kMaxBytes = size_t{8} << 20;

  // A spare object (with its capacity), or a default-constructed one. *bytes: its capacity.
  static T Take(size_t* bytes) {
    List& l = Local();
    if (l.items.empty()) {
      *bytes = 0;
      return T();
    }
    Item it = std::move(l.items.back());
    l.items.pop_back();
    l.bytes -= it.bytes;
    *bytes = it.bytes;
    return std::move(it.obj);
  }
  // Keeps t (holding `bytes` of capacity) for this thread's next Take, if it fits the limits.
  static void Give(T&& t, size_t bytes) {
    if (bytes == 0) return;
    List& l = Local();
    if (l.items.size() >= kMaxObjects || l.bytes + bytes > kMaxBytes) return;
    l.items.push_back(Item{std::move(t), bytes});
    l.bytes += bytes;
  }

 private:
  struct Item {
    T obj;
    size_t bytes;
  };
  struct List {
    std::vector<Item> items;
    size_t bytes = 0;
  };
  static List& Local() {
    thread_local List l;
    return l;
  }
};

// A string taken from this thread's spares (emptied, its capacity kept) and given back when
// the object dies.
struct SpareString {
  std::string s;
  SpareString() {
    size_t unused;
    s = ScanSpares<std::string>::Take(&unused);
    s.clear();
  }
  ~SpareString() {
    const size_t cap = s.capacity();
    ScanSpares<std::string>::Give(std::move(s), cap);
  }
  SpareString(const SpareString&) = delete;
  SpareString& operator=(const SpareString&) = delete;
};

}  // namespace strata
