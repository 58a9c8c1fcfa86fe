// Monotonic time for durations and rate limits.
#pragma once

#include <chrono>
#include <cstdint>

namespace strata {

// Microseconds on the steady clock (arbitrary epoch: only differences mean anything).
inline uint64_t NowMicros() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace strata
