// The I/O layer's device faults (io::SetWriteLimitForTesting, io::SetSyncFailureForTesting)
// and its power-loss journal,
// cleared when a test's scope ends however it ends, so no later test in the process meets them.
#pragma once

#include "io/env.h"

namespace strata::testing {

struct ClearDeviceFaults {
  ClearDeviceFaults() = default;
  ClearDeviceFaults(const ClearDeviceFaults&) = delete;
  ClearDeviceFaults& operator=(const ClearDeviceFaults&) = delete;
  ~ClearDeviceFaults() {
    io::SetWriteLimitForTesting(-1);
    io::SetSyncFailureForTesting(-1);
    io::StopPowerLossJournalForTesting();
  }
};

}  // namespace strata::testing
