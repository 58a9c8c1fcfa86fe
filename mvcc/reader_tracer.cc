#include "mvcc/reader_tracer.h"

#include <algorithm>

namespace strata::mvcc {

ReaderTracer::Block::Block(uint32_t count)
    : n(count),
      words(new std::atomic<uint64_t>[count]),
      released(new std::atomic<uint64_t>[count]) {
  for (uint32_t i = 0; i < n; ++i) {
    words[i].store(0, std::memory_order_relaxed);
    released[i].store(0, std::memory_order_relaxed);
  }
}
ReaderTracer::Block::~Block() {
  delete[] words;
  delete[] released;
}

ReaderTracer::ReaderTracer(uint32_t slots_per_block, bool counted)
    : slots_per_block_(slots_per_block == 0 ? 64 : slots_per_block),
      head_(new Block(slots_per_block_)),
      counted_(counted) {}

ReaderTracer::~ReaderTracer() {
  Block* b = head_;
  while (b != nullptr) {
    Block* next = b->next.load(std::memory_order_relaxed);
    delete b;
    b = next;
  }
}

std::atomic<uint64_t>* ReaderTracer::Acquire(uint64_t value,
                                             std::atomic<uint64_t>** released) {
  for (Block* b = head_;;) {
    for (uint32_t i = 0; i < b->n; ++i) {
      uint64_t expected = 0;
      if (b->words[i].load(std::memory_order_relaxed) != 0) continue;
      // The scans read slot i from here on (see the top), before it can hold a reader.
      for (uint32_t u = b->used.load(std::memory_order_seq_cst); u < i + 1;) {
        if (b->used.compare_exchange_weak(u, i + 1, std::memory_order_seq_cst)) break;
      }
      if (b->words[i].compare_exchange_strong(expected, value, std::memory_order_seq_cst)) {
        *released = &b->released[i];
        return &b->words[i];
      }
    }
    Block* next = b->next.load(std::memory_order_acquire);
    if (next == nullptr) {
      Block* fresh = new Block(slots_per_block_);
      if (b->next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel)) {
        next = fresh;
      } else {
        delete fresh;  // someone else appended; `next` now holds theirs
      }
    }
    b = next;
  }
}

ReaderTracer::Slot ReaderTracer::Register(const CommitClock& clock) {
  Slot s;
  if (counted_) registered_.fetch_add(1, std::memory_order_seq_cst);  // before the slot's ts
  Timestamp t = clock.read_ts();
  s.word_ = Acquire(kInUse | t, &s.released_);
  for (;;) {
    Timestamp again = clock.read_ts();
    if (again == t) break;
    t = again;
    s.word_->store(kInUse | t, std::memory_order_seq_cst);
  }
  s.ts_ = t;
  return s;
}

void ReaderTracer::Unregister(const Slot& slot) {
  if (slot.word_ == nullptr) return;
  slot.released_->store(0, std::memory_order_relaxed);  // ordered before the free by the next store
  slot.word_->store(0, std::memory_order_seq_cst);
  if (counted_) registered_.fetch_sub(1, std::memory_order_seq_cst);
}

void ReaderTracer::Release(const Slot& slot, uint64_t below) {
  if (slot.released_ == nullptr) return;
  // Release order: the reader's reads of the subgraphs below happen before a GC that sees it.
  uint64_t cur = slot.released_->load(std::memory_order_relaxed);
  while (below > cur &&
         !slot.released_->compare_exchange_weak(cur, below, std::memory_order_release,
                                                std::memory_order_relaxed)) {
  }
}

void ReaderTracer::ActiveReaders(const CommitClock& clock, std::vector<Active>* out) const {
  out->clear();
  const Timestamp tr = clock.read_ts();
  if (NoneRegistered()) {
    out->push_back(Active{tr, 0});
    return;
  }
  for (Block* b = head_; b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    const uint32_t used = b->used.load(std::memory_order_seq_cst);  // after tr
    for (uint32_t i = 0; i < used; ++i) {
      const uint64_t w = b->words[i].load(std::memory_order_seq_cst);
      if ((w & kInUse) == 0 || (w & ~kInUse) >= tr) continue;
      out->push_back(Active{w & ~kInUse, b->released[i].load(std::memory_order_acquire)});
    }
  }
  std::sort(out->begin(), out->end(),
            [](const Active& a, const Active& b) { return a.ts < b.ts; });
  out->push_back(Active{tr, 0});  // above every other
}

Timestamp ReaderTracer::MinActive(const CommitClock& clock) const {
  Timestamp m = clock.read_ts();
  if (NoneRegistered()) return m;
  for (Block* b = head_; b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    const uint32_t used = b->used.load(std::memory_order_seq_cst);  // after the clock
    for (uint32_t i = 0; i < used; ++i) {
      uint64_t w = b->words[i].load(std::memory_order_seq_cst);
      if ((w & kInUse) != 0) {
        Timestamp t = w & ~kInUse;
        if (t < m) m = t;
      }
    }
  }
  return m;
}

uint64_t ReaderTracer::ActiveCount() const {
  uint64_t c = 0;
  for (Block* b = head_; b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    const uint32_t used = b->used.load(std::memory_order_relaxed);
    for (uint32_t i = 0; i < used; ++i) {
      if (b->words[i].load(std::memory_order_relaxed) & kInUse) ++c;
    }
  }
  return c;
}

}  // namespace strata::mvcc
