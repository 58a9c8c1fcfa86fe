#include "mvcc/walk_registry.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace strata::mvcc {

std::atomic<bool> WalkRegistry::asymmetric_{false};

namespace {

// Slots live in blocks chained by an atomic pointer, never freed (a writer may scan a slot
// while its thread exits); a slot is reused by a later thread once its owner has exited.
constexpr uint32_t kSlotsPerBlock = 64;
struct Block {
  WalkRegistry::Slot slots[kSlotsPerBlock];
  std::atomic<Block*> next{nullptr};
};

Block* First() {
  static Block* const first = new Block();  // never deleted: threads may outlive statics
  return first;
}

#if defined(__SANITIZE_THREAD__)
constexpr bool kMayUseMembarrier = false;  // ThreadSanitizer does not see its barriers
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kMayUseMembarrier = false;
#else
constexpr bool kMayUseMembarrier = true;
#endif
#else
constexpr bool kMayUseMembarrier = true;
#endif

bool RegisterMembarrier() {
  if (!kMayUseMembarrier) return false;
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

}  // namespace

// No walk is in progress when its thread exits. A walk after this (from a later thread-exit
// destructor) takes a slot of its own again rather than one another thread may now hold.
struct WalkRegistry::Owner {
  Slot* slot = nullptr;
  ~Owner() {
    if (slot == nullptr) return;
    tls_slot_ = nullptr;
    slot->taken.store(false, std::memory_order_release);
  }
};
thread_local WalkRegistry::Owner WalkRegistry::owner_;

// Once per process, before the first walk or grace period: with the barrier registered, walks
// use plain stores from the start instead of a fence each.
bool WalkRegistry::UseMembarrier() {
  static const bool registered = [] {
    const bool ok = RegisterMembarrier();
    if (ok) asymmetric_.store(true, std::memory_order_relaxed);
    return ok;
  }();
  return registered;
}

WalkRegistry::Slot* WalkRegistry::AcquireSlot() {
  UseMembarrier();
  for (Block* b = First();;) {
    for (Slot& s : b->slots) {
      bool expected = false;
      if (!s.taken.load(std::memory_order_relaxed) &&
          s.taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        tls_slot_ = &s;
        owner_.slot = &s;
        return &s;
      }
    }
    Block* next = b->next.load(std::memory_order_acquire);
    if (next == nullptr) {
      Block* fresh = new Block();
      if (b->next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel)) {
        next = fresh;
      } else {
        delete fresh;  // another thread appended first; `next` holds its block
      }
    }
    b = next;
  }
}

void WalkRegistry::ForEachSlot(void (*fn)(const Slot*, void*), void* arg) {
  for (const Block* b = First(); b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    for (const Slot& s : b->slots) fn(&s, arg);
  }
}

void WalkRegistry::Announce(Slot* slot, uint64_t odd) {
#if defined(__SANITIZE_THREAD__)
  slot->seq.exchange(odd, std::memory_order_seq_cst);  // ThreadSanitizer models no fences
#else
  slot->seq.store(odd, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

size_t WalkRegistry::SlotCount() {
  size_t n = 0;
  ForEachSlot([](const Slot*, void* arg) { ++*static_cast<size_t*>(arg); }, &n);
  return n;
}

bool WalkRegistry::Grace::Start() {
  busy_.clear();
  ok_ = false;
  if (UseMembarrier()) {
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) return false;
  } else {
#if defined(__SANITIZE_THREAD__)
    static std::atomic<uint64_t> order{0};
    order.fetch_add(1, std::memory_order_seq_cst);  // a full barrier on the hardware
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  }
  ForEachSlot(
      [](const Slot* s, void* arg) {
        const uint64_t seq = s->seq.load(std::memory_order_seq_cst);
        if (seq % 2 != 0) static_cast<Grace*>(arg)->busy_.emplace_back(s, seq);
      },
      this);
  ok_ = true;
  return true;
}

bool WalkRegistry::Grace::Passed() {
  if (!ok_) return false;
  size_t k = 0;
  for (const auto& [slot, seq] : busy_) {
    if (slot->seq.load(std::memory_order_acquire) == seq) busy_[k++] = {slot, seq};
  }
  busy_.resize(k);
  return busy_.empty();
}

}  // namespace strata::mvcc
