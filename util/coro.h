// Interleaved execution of independent work items as C++20 coroutines (GastCoCo §5.1): each
// item's coroutine issues a software prefetch for the next thing it will read and suspends
// (`co_await PrefetchAndSuspend(p)`); a per-thread round-robin Scheduler resumes the other
// items of its group meanwhile, so one thread keeps up to `group` cache misses in flight.
//
//   Scheduler sched(16);                          // group size, fixed per scheduler
//   Status st = sched.Run(n, [&](size_t i) -> Task<Status> { return Item(i); });
//
//   Task<Status> Item(size_t i) {
//     co_await PrefetchAndSuspend(&table[key[i]]);
//     co_return Use(table[key[i]]);
//   }
//
// Contracts:
// - Frames come from the scheduler's FrameArena (fixed-size slots on a free list, one slot
//   per group member, allocated once when the scheduler is built): starting or finishing an
//   item allocates nothing. A coroutine whose frame does not fit a slot (or one created
//   outside Run) falls back to the heap; fallbacks() counts those, so a caller (and the tests)
//   can check that the hot path never does. Frames must therefore be created by the `make`
//   callback of Run, on the scheduler's thread.
// - Items start in index order; at most `group` are live at once; live items are resumed
//   round-robin in slot order; a finished item's slot starts the next index. group == 1 runs
//   the items one after another (each still suspends; callers that want no coroutine at all
//   for group 1 dispatch to their sequential code themselves).
// - Task<Status>: Run returns the first non-OK status in completion order (deterministic:
//   scheduling depends only on the items); after it, no new item starts, live items run to
//   completion. An exception thrown by an item is rethrown by Run after every live frame has
//   been destroyed.
// - A Scheduler is single-threaded and not reentrant; use one per thread (e.g. thread_local or
//   one per parallel task).
//
// I/O (cold frontier reads, docs/design.md "Coroutine interleaving"): an item queues reads on
// a queue whose completions decrement an IoWait (tag = &wait, IoWait::Done), then
// `co_await AwaitIo{&wait}`: it suspends unless every read already completed. Such an item is
// skipped by the round-robin until wait.pending is 0. After each pass over the slots in which
// some item waits, the scheduler calls its IoPoller (the third argument of Run): Poll(false)
// (submit, reap what is done) while other items can run, Poll(true) (submit, block until a read
// completes) when every live item waits. Items that never await I/O are scheduled exactly as
// without a poller.
#pragma once

#include <cassert>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "strata/status.h"

namespace strata::coro {

// Fixed-size frame slots on a free list. Each block carries a header naming its arena (null:
// from the heap), so a frame is freed where it came from whichever thread-local state is
// current when it is destroyed.
class FrameArena {
 public:
  FrameArena(size_t slot_bytes, size_t slots)
      : slot_bytes_(RoundUp(slot_bytes) + kHeader),
        storage_(new std::byte[slot_bytes_ * slots]) {
    free_.reserve(slots);
    for (size_t i = slots; i-- > 0;) free_.push_back(storage_.get() + i * slot_bytes_);
  }
  FrameArena(const FrameArena&) = delete;
  FrameArena& operator=(const FrameArena&) = delete;

  void* Allocate(size_t n) {
    if (n + kHeader <= slot_bytes_ && !free_.empty()) {
      std::byte* b = free_.back();
      free_.pop_back();
      *reinterpret_cast<FrameArena**>(b) = this;
      return b + kHeader;
    }
    ++fallbacks_;
    return HeapAllocate(n);
  }
  static void* HeapAllocate(size_t n) {
    std::byte* b = static_cast<std::byte*>(::operator new(n + kHeader));
    *reinterpret_cast<FrameArena**>(b) = nullptr;
    return b + kHeader;
  }
  static void Free(void* p) {
    std::byte* b = static_cast<std::byte*>(p) - kHeader;
    FrameArena* a = *reinterpret_cast<FrameArena**>(b);
    if (a == nullptr) {
      ::operator delete(b);
    } else {
      a->free_.push_back(b);
    }
  }

  // Frames that did not fit a slot or found no free slot, since construction.
  size_t fallbacks() const { return fallbacks_; }
  size_t slot_bytes() const { return slot_bytes_ - kHeader; }

  // The arena frames created on this thread are taken from (set by Scheduler::Run).
  static FrameArena*& Current() {
    thread_local FrameArena* current = nullptr;
    return current;
  }

 private:
  static constexpr size_t kHeader = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  static size_t RoundUp(size_t n) { return (n + kHeader - 1) / kHeader * kHeader; }

  size_t slot_bytes_;
  std::unique_ptr<std::byte[]> storage_;
  std::vector<std::byte*> free_;
  size_t fallbacks_ = 0;
};

namespace detail {

struct PromiseBase {
  static void* operator new(size_t n) {
    FrameArena* a = FrameArena::Current();
    return a != nullptr ? a->Allocate(n) : FrameArena::HeapAllocate(n);
  }
  static void operator delete(void* p) { FrameArena::Free(p); }

  std::suspend_always initial_suspend() noexcept { return {}; }
  std::suspend_always final_suspend() noexcept { return {}; }
  void unhandled_exception() { error = std::current_exception(); }

  std::exception_ptr error;
};

template <typename T>
struct Promise;

}  // namespace detail

// An owning handle to a suspended-at-start coroutine; the Scheduler resumes and destroys it.
// T is void or Status.
template <typename T = void>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  ~Task() {
    if (h_) h_.destroy();
  }

  Handle release() { return std::exchange(h_, {}); }

 private:
  Handle h_;
};

namespace detail {

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() {
    return Task<void>(std::coroutine_handle<Promise>::from_promise(*this));
  }
  void return_void() {}
  Status status() const { return Status::OK(); }
};

template <>
struct Promise<Status> : PromiseBase {
  Task<Status> get_return_object() {
    return Task<Status>(std::coroutine_handle<Promise>::from_promise(*this));
  }
  void return_value(Status s) { result = std::move(s); }
  Status status() const { return result; }

  Status result;
};

}  // namespace detail

// Prefetches the cache line at p for reading. An asm statement, not __builtin_prefetch: GCC
// deletes a loop whose only effect is __builtin_prefetch (a side-effect-free loop under
// -ffinite-loops), e.g. a loop over a list's neighbors in a prefetch callback.
inline void Prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 (%0)" : : "r"(p));  // never faults, even for null
#else
  __builtin_prefetch(p);
#endif
}

// Prefetches every cache line of [p, p + bytes) for reading.
inline void PrefetchRange(const void* p, size_t bytes) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
  const uintptr_t e = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t a = b; a < e; a += 64) Prefetch(reinterpret_cast<const void*>(a));
}

// Prefetches the cache line at p (for reading) and suspends; the scheduler resumes the other
// items of the group before coming back, by which time the line is (ideally) in cache.
struct PrefetchAndSuspend {
  explicit PrefetchAndSuspend(const void* p) { Prefetch(p); }
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};

// Suspends without a prefetch (after the caller issued several).
struct Suspend {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};

// Reads an item waits for. The item sets `pending` to the number of reads it queued (before
// they can complete); each completion calls Done(tag) with tag == this.
struct IoWait {
  size_t pending = 0;
  static void Done(void* tag) {
    IoWait* w = static_cast<IoWait*>(tag);
    assert(w->pending > 0);
    --w->pending;
  }
};

// Completes the reads items wait for (see Scheduler::Run). Poll(wait) submits queued reads and
// calls IoWait::Done for each completed one. With wait, it returns only after at least one
// completion, or with an error after completing every outstanding read (with error statuses):
// the scheduler never waits on a read that cannot finish.
class IoPoller {
 public:
  virtual ~IoPoller() = default;
  virtual Status Poll(bool wait) = 0;
};

namespace detail {
// The IoWait of the coroutine that just suspended in AwaitIo (read and cleared by the
// scheduler right after each resume, so nested schedulers on one thread do not mix them up).
inline IoWait*& SuspendedOnIo() {
  thread_local IoWait* w = nullptr;
  return w;
}
}  // namespace detail

// Suspends the item until its IoWait's reads are done (not at all if they already are).
struct AwaitIo {
  IoWait* wait;
  bool await_ready() const noexcept { return wait->pending == 0; }
  void await_suspend(std::coroutine_handle<>) const noexcept { detail::SuspendedOnIo() = wait; }
  void await_resume() const noexcept {}
};

class Scheduler {
 public:
  // group: items live at once (>= 1). frame_bytes: the largest frame served from the arena.
  explicit Scheduler(size_t group, size_t frame_bytes = 512)
      : group_(group == 0 ? 1 : group), arena_(frame_bytes, group_), slots_(group_),
        waits_(group_, nullptr) {}

  size_t group() const { return group_; }
  const FrameArena& arena() const { return arena_; }

  // Runs make(i) for i in [0, n) interleaved, `group` at a time (see the contracts above).
  // make(i) returns Task<void> or Task<Status>. io: completes the reads of items that await
  // I/O (required if any does); a failed Poll is returned like an item's status (first error).
  template <typename Make>
  Status Run(size_t n, Make&& make, IoPoller* io = nullptr) {
    using TaskT = decltype(make(size_t{0}));
    using Handle = typename TaskT::Handle;
    assert(slots_.size() == group_);
    struct ArenaScope {
      FrameArena* saved;
      explicit ArenaScope(FrameArena* a) : saved(FrameArena::Current()) { FrameArena::Current() = a; }
      ~ArenaScope() { FrameArena::Current() = saved; }
    } scope(&arena_);
    Status first;
    std::exception_ptr error;
    size_t next = 0, live = 0;
    auto start = [&](size_t slot) -> bool {
      if (next >= n || !first.ok() || error) return false;
      slots_[slot] = make(next++).release().address();
      ++live;
      return true;
    };
    for (size_t s = 0; s < group_; ++s) {
      if (!start(s)) break;
    }
    while (live != 0) {
      size_t waiting = 0;  // live items waiting on I/O after this pass
      for (size_t s = 0; s < group_; ++s) {
        if (slots_[s] == nullptr) continue;
        if (waits_[s] != nullptr) {
          if (waits_[s]->pending != 0) {
            ++waiting;
            continue;
          }
          waits_[s] = nullptr;
        }
        Handle h = Handle::from_address(slots_[s]);
        detail::SuspendedOnIo() = nullptr;
        h.resume();
        if (!h.done()) {
          if ((waits_[s] = std::exchange(detail::SuspendedOnIo(), nullptr)) != nullptr) ++waiting;
          continue;
        }
        auto& p = h.promise();
        if (p.error) {
          if (!error) error = p.error;
        } else if (first.ok()) {
          Status st = p.status();
          if (!st.ok()) first = std::move(st);
        }
        h.destroy();
        slots_[s] = nullptr;
        --live;
        start(s);
      }
      if (waiting != 0) {
        // Every live item waits: block until a read completes; else only collect what is done.
        assert(io != nullptr && "an item awaited I/O but Run has no IoPoller");
        if (io == nullptr) std::terminate();
        Status ps = io->Poll(/*wait=*/waiting == live);
        if (!ps.ok() && first.ok()) first = std::move(ps);
      }
    }
    if (error) std::rethrow_exception(error);
    return first;
  }

 private:
  size_t group_;
  FrameArena arena_;
  std::vector<void*> slots_;  // live coroutine handles' addresses, null when free
  std::vector<IoWait*> waits_;  // the IoWait slot s's item suspended on, until it is resumed
};

// This thread's scheduler for one call site, kept between calls and made anew when the group
// size asked for changes or a larger frame is asked for: PerThread<struct SiteTag>(group,
// frame_bytes). Each
// tag type has its own scheduler, so a site never finds another's mid-Run (a Scheduler is not
// reentrant).
template <typename Tag>
Scheduler& PerThread(size_t group, size_t frame_bytes) {
  thread_local std::unique_ptr<Scheduler> sched;
  if (sched == nullptr || sched->group() != group || sched->arena().slot_bytes() < frame_bytes) {
    sched = std::make_unique<Scheduler>(group, frame_bytes);
  }
  return *sched;
}

}  // namespace strata::coro
