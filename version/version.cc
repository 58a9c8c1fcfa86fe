#include "version/version.h"

#include <unistd.h>

namespace strata::version {

SegmentHandle::~SegmentHandle() {
  reader.reset();
  if (obsolete.load(std::memory_order_acquire)) ::unlink(path.c_str());
}

}  // namespace strata::version
