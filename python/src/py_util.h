// Shared machinery of the stratagraph._core extension: Status -> Python exception, numpy arrays
// that own a std::vector's buffer, and typed views of the integer and real buffers callers pass.
//
// The extension does not use pybind11's numpy layer (pybind11 2.10 predates numpy 2's ABI):
// inputs are read through the buffer protocol (PEP 3118) and outputs are _Buffer objects that
// numpy.asarray wraps without copying.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/status.h"
#include "strata/types.h"

namespace strata::py {

namespace pb = pybind11;

// Creates the exception classes (stratagraph.Error and one subclass per Status kind) in `m`.
void RegisterExceptions(pb::module_& m);

// Raises the exception of s's kind, carrying s.ToString(), as pb::error_already_set. Requires
// the GIL. No-op for OK.
void Check(const Status& s);

// A contiguous block of memory a numpy array views: `keep` owns it.
struct Buffer {
  std::shared_ptr<void> keep;
  void* data = nullptr;
  pb::ssize_t size = 0;
  pb::ssize_t itemsize = 0;
  std::string format;
};

// Registers the _Buffer class numpy arrays returned by the module view.
void RegisterBuffer(pb::module_& m);

// Wraps b in a numpy array (numpy.asarray: no copy; the array keeps b alive). Requires the GIL.
pb::object WrapBuffer(Buffer b);

// A numpy array owning v's buffer: v is moved, never copied. Requires the GIL.
template <typename T>
pb::object ToNumpy(std::vector<T>&& v) {
  auto holder = std::make_shared<std::vector<T>>(std::move(v));
  static T empty_slot{};  // numpy wants a non-null pointer even for size 0
  Buffer b;
  b.data = holder->empty() ? &empty_slot : holder->data();
  b.size = static_cast<pb::ssize_t>(holder->size());
  b.itemsize = sizeof(T);
  b.format = pb::format_descriptor<T>::format();
  b.keep = std::move(holder);
  return WrapBuffer(std::move(b));
}

// A read-only view of a 1-D buffer of integers (any width, signed or not) or reals (float32,
// float64), read element by element with conversion. Construct with the GIL held; the view
// holds the buffer until destroyed (which also needs the GIL). Reading needs no GIL.
class NumberView {
 public:
  enum class Kind { kSigned, kUnsigned, kReal };

  // TypeError unless `obj` exports a 1-D buffer (numpy array, array.array, memoryview) of
  // `want` (kSigned also admits kUnsigned: both are "integers"). `what` names the argument.
  NumberView(const pb::handle& obj, Kind want, const char* what);

  size_t size() const { return size_; }
  Kind kind() const { return kind_; }

  VertexId Id(size_t i) const {
    const char* p = base_ + static_cast<pb::ssize_t>(i) * stride_;
    switch (code_) {
      case 'b': return static_cast<VertexId>(*reinterpret_cast<const int8_t*>(p));
      case 'B': return *reinterpret_cast<const uint8_t*>(p);
      case 'h': return static_cast<VertexId>(*reinterpret_cast<const int16_t*>(p));
      case 'H': return *reinterpret_cast<const uint16_t*>(p);
      case 'i': return static_cast<VertexId>(*reinterpret_cast<const int32_t*>(p));
      case 'I': return *reinterpret_cast<const uint32_t*>(p);
      case 'q': return static_cast<VertexId>(*reinterpret_cast<const int64_t*>(p));
      default: return *reinterpret_cast<const uint64_t*>(p);  // 'Q'
    }
  }
  double Real(size_t i) const {
    const char* p = base_ + static_cast<pb::ssize_t>(i) * stride_;
    return code_ == 'f' ? *reinterpret_cast<const float*>(p) : *reinterpret_cast<const double*>(p);
  }
  // For signed views: InvalidArgument naming `what` and the first negative element's position.
  Status CheckNonNegative() const;

 private:
  pb::buffer_info info_;
  const char* base_ = nullptr;
  pb::ssize_t stride_ = 0;
  size_t size_ = 0;
  char code_ = 'Q';  // normalized struct code: b B h H i I q Q f d
  Kind kind_ = Kind::kUnsigned;
  std::string what_;
};

}  // namespace strata::py
