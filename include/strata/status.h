// Status: the result of every public call. No exception crosses the API.
#pragma once

#include <string>
#include <string_view>

namespace strata {

class Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,
    kCorruption,
    kInvalidArgument,
    kIOError,
    kBusy,          // e.g. the store is locked by another process
    kNotSupported,
    kAborted,
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string_view m) { return Status(Code::kNotFound, m); }
  static Status Corruption(std::string_view m) { return Status(Code::kCorruption, m); }
  static Status InvalidArgument(std::string_view m) { return Status(Code::kInvalidArgument, m); }
  static Status IOError(std::string_view m) { return Status(Code::kIOError, m); }
  static Status Busy(std::string_view m) { return Status(Code::kBusy, m); }
  static Status NotSupported(std::string_view m) { return Status(Code::kNotSupported, m); }
  static Status Aborted(std::string_view m) { return Status(Code::kAborted, m); }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsAborted() const { return code_ == Code::kAborted; }

  Code code() const { return code_; }
  const std::string& message() const { return msg_; }
  // "OK" or "<Kind>: <message>".
  std::string ToString() const;

 private:
  Status(Code c, std::string_view m) : code_(c), msg_(m) {}
  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace strata
