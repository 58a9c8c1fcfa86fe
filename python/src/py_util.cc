#include "python/src/py_util.h"

#include <Python.h>

#include <string>

namespace strata::py {

namespace {

// Exception classes by Status::Code, created once by RegisterExceptions and never freed.
PyObject* g_error = nullptr;
PyObject* g_by_code[8] = {};

PyObject* NewException(pb::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qual = std::string("stratagraph.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw pb::error_already_set();
  m.attr(name) = pb::handle(cls);
  return cls;
}

PyObject* Subclass(pb::module_& m, const char* name, PyObject* extra, const char* doc) {
  PyObject* bases = extra ? PyTuple_Pack(2, g_error, extra) : PyTuple_Pack(1, g_error);
  if (bases == nullptr) throw pb::error_already_set();
  PyObject* cls = NewException(m, name, bases, doc);
  Py_DECREF(bases);
  return cls;
}

}  // namespace

void RegisterExceptions(pb::module_& m) {
  g_error = NewException(m, "Error", PyExc_Exception,
                         "A StrataGraph call failed; the message is the C++ Status.");
  using C = Status::Code;
  g_by_code[int(C::kNotFound)] = Subclass(m, "NotFoundError", nullptr, "Status::NotFound.");
  g_by_code[int(C::kCorruption)] = Subclass(m, "CorruptionError", nullptr, "Status::Corruption.");
  g_by_code[int(C::kInvalidArgument)] =
      Subclass(m, "InvalidArgumentError", PyExc_ValueError, "Status::InvalidArgument.");
  g_by_code[int(C::kIOError)] = Subclass(m, "StorageIOError", PyExc_OSError, "Status::IOError.");
  g_by_code[int(C::kBusy)] = Subclass(m, "BusyError", nullptr, "Status::Busy.");
  g_by_code[int(C::kNotSupported)] =
      Subclass(m, "NotSupportedError", nullptr, "Status::NotSupported.");
  g_by_code[int(C::kAborted)] = Subclass(m, "AbortedError", nullptr, "Status::Aborted.");
}

void Check(const Status& s) {
  if (s.ok()) return;
  const int code = static_cast<int>(s.code());
  PyObject* cls = (code > 0 && code < 8 && g_by_code[code]) ? g_by_code[code] : g_error;
  PyErr_SetString(cls, s.ToString().c_str());
  throw pb::error_already_set();
}

void RegisterBuffer(pb::module_& m) {
  pb::class_<Buffer>(m, "_Buffer", pb::buffer_protocol(),
                     "Memory owned by the extension that a numpy array views.")
      .def_buffer([](Buffer& b) {
        return pb::buffer_info(b.data, b.itemsize, b.format, 1, {b.size}, {b.itemsize},
                               /*readonly=*/false);
      });
}

pb::object WrapBuffer(Buffer b) {
  pb::object owner = pb::cast(std::move(b));
  return pb::module_::import("numpy").attr("asarray")(owner);
}

NumberView::NumberView(const pb::handle& obj, Kind want, const char* what) : what_(what) {
  if (!PyObject_CheckBuffer(obj.ptr())) {
    throw pb::type_error(std::string(what) + ": expected a 1-D numpy array, got " +
                         std::string(pb::str(pb::type::handle_of(obj).attr("__name__"))));
  }
  info_ = pb::reinterpret_borrow<pb::buffer>(obj).request();
  if (info_.ndim != 1) {
    throw pb::type_error(std::string(what) + ": expected a 1-D array, got " +
                         std::to_string(info_.ndim) + " dimensions");
  }
  std::string f = info_.format;
  if (!f.empty() && (f[0] == '<' || f[0] == '@' || f[0] == '=')) f.erase(0, 1);
  char c = f.size() == 1 ? f[0] : '?';
  // Normalize the platform-sized codes to the fixed-width ones by item size.
  if (c == 'l' || c == 'n') c = info_.itemsize == 8 ? 'q' : 'i';
  if (c == 'L' || c == 'N') c = info_.itemsize == 8 ? 'Q' : 'I';
  if (c == 'e') c = '?';  // float16: not accepted
  switch (c) {
    case 'b': case 'h': case 'i': case 'q': kind_ = Kind::kSigned; break;
    case 'B': case 'H': case 'I': case 'Q': kind_ = Kind::kUnsigned; break;
    case 'f': case 'd': kind_ = Kind::kReal; break;
    default:
      throw pb::type_error(std::string(what) + ": unsupported element type '" + info_.format + "'");
  }
  const bool want_int = want != Kind::kReal;
  if (want_int != (kind_ != Kind::kReal)) {
    throw pb::type_error(std::string(what) + (want_int ? ": expected integers" : ": expected reals") +
                         ", got element type '" + info_.format + "'");
  }
  code_ = c;
  base_ = static_cast<const char*>(info_.ptr);
  stride_ = info_.strides[0];
  size_ = static_cast<size_t>(info_.shape[0]);
}

Status NumberView::CheckNonNegative() const {
  if (kind_ != Kind::kSigned) return Status::OK();
  for (size_t i = 0; i < size_; ++i) {
    if (static_cast<int64_t>(Id(i)) < 0) {
      return Status::InvalidArgument(what_ + "[" + std::to_string(i) + "] is negative (" +
                                     std::to_string(static_cast<int64_t>(Id(i))) +
                                     "): vertex IDs are non-negative");
    }
  }
  return Status::OK();
}

}  // namespace strata::py
