// Per-thread scratch buffers that outlive one call.
//
// A hot path that needs a large temporary (a batch's sort buffer, a page rebuild's decode
// array) keeps it in a thread_local vector and clears it instead of freeing it: the process
// heap returns freed memory to the OS at once (util/malloc_conf.cc), so
// a fresh buffer of that size per call costs an madvise on free and a page fault per page on
// the next use. A buffer one unusually large call grew past kScratchKeepBytes is released by
// ReleaseScratch, so what a thread keeps between calls stays bounded.
#pragma once

#include <cstddef>
#include <vector>

namespace strata {

inline constexpr size_t kScratchKeepBytes = size_t{8} << 20;

// Empties *v for the next call; frees its buffer only if it is larger than kScratchKeepBytes.
template <class T>
void ReleaseScratch(std::vector<T>* v) {
  v->clear();
  if (v->capacity() * sizeof(T) > kScratchKeepBytes) std::vector<T>().swap(*v);
}

// Clears a scratch vector for use in a scope and releases it (ReleaseScratch) when the scope
// ends, on every return path.
template <class T>
class ScopedScratch {
 public:
  explicit ScopedScratch(std::vector<T>* v) : v_(v) { v_->clear(); }
  ~ScopedScratch() { ReleaseScratch(v_); }
  ScopedScratch(const ScopedScratch&) = delete;
  ScopedScratch& operator=(const ScopedScratch&) = delete;
  std::vector<T>& get() { return *v_; }

 private:
  std::vector<T>* v_;
};

}  // namespace strata
