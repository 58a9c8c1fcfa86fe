#include "strata/status.h"

#include "strata/types.h"

namespace strata {

std::string Status::ToString() const {
  const char* kind = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: kind = "NotFound"; break;
    case Code::kCorruption: kind = "Corruption"; break;
    case Code::kInvalidArgument: kind = "InvalidArgument"; break;
    case Code::kIOError: kind = "IOError"; break;
    case Code::kBusy: kind = "Busy"; break;
    case Code::kNotSupported: kind = "NotSupported"; break;
    case Code::kAborted: kind = "Aborted"; break;
  }
  std::string s(kind);
  if (!msg_.empty()) {
    s += ": ";
    s += msg_;
  }
  return s;
}

const char* GraphKindName(GraphKind k) {
  switch (k) {
    case GraphKind::kDirected: return "directed";
    case GraphKind::kDirectedWithInEdges: return "directed+in";
    case GraphKind::kUndirected: return "undirected";
  }
  return "unknown";
}

}  // namespace strata
