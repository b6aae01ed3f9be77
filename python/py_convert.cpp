// Conversions between Python objects and engine values, argument binding and error translation.
#include <cstring>
#include <functional>
#include <new>
#include <vector>

#include "core/api/api.h"
#include "core/capture/capture.h"
#include "core/error.h"
#include "python/py_common.h"

namespace dyn::py {

PyTypeObject* SizeType = nullptr;
PyTypeObject* MaxReturnType = nullptr;

PyObject* wrap(Tensor t) {
  auto* o = reinterpret_cast<PyTensor*>(TensorType.tp_alloc(&TensorType, 0));
  if (!o) throw PythonErrorSet{};
  new (&o->t) Tensor(std::move(t));
  o->weakrefs = nullptr;
  return reinterpret_cast<PyObject*>(o);
}

PyObject* make_size(const Dims& d) {
  PyObject* tup = PyTuple_New(d.size());
  if (!tup) throw PythonErrorSet{};
  for (int i = 0; i < d.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(d[i]));
  PyObject* args = PyTuple_Pack(1, tup);
  Py_DECREF(tup);
  PyObject* s = PyTuple_Type.tp_new(SizeType, args, nullptr);
  Py_DECREF(args);
  if (!s) throw PythonErrorSet{};
  return s;
}

PyObject* translate_exception() {
  try {
    throw;
  } catch (const PythonErrorSet&) {
  } catch (const ExitRequest& x) {
    PyObject* code = PyLong_FromLong(x.code);
    PyErr_SetObject(PyExc_SystemExit, code);
    Py_XDECREF(code);
  } catch (const Error& e) {
    // The Python class of each ErrorKind, in its order.
    PyObject* const* kTypes[] = {&PyExc_RuntimeError, &PyExc_ValueError,          &PyExc_IndexError,
                                 &PyExc_TypeError,    &PyExc_NotImplementedError, &GraphBreakError};
    PyObject* type = *kTypes[static_cast<int>(e.kind())];
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError, "dyn: out of memory");
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "dyn internal error: %s", e.what());
  }
  return nullptr;
}

void throw_type_error(const std::string& msg) {
  PyErr_SetString(PyExc_TypeError, msg.c_str());
  throw PythonErrorSet{};
}

void parse_args(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                std::initializer_list<const char*> names, int required, PyObject** out) {
  const int n = static_cast<int>(names.size());
  for (int i = 0; i < n; ++i) out[i] = nullptr;
  if (nargs > n) throw_type_error(fmt::format("{}() takes at most {} positional arguments ({} given)", fn, n, nargs));
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  if (kwnames) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; ++k) {
      const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
      int slot = -1;
      int i = 0;
      for (const char* nm : names) {
        if (std::strcmp(nm, key) == 0) slot = i;
        ++i;
      }
      if (slot < 0) throw_type_error(fmt::format("{}() got an unexpected keyword argument '{}'", fn, key));
      if (out[slot]) throw_type_error(fmt::format("{}() got multiple values for argument '{}'", fn, key));
      out[slot] = args[nargs + k];
    }
  }
  int i = 0;
  for (const char* nm : names) {
    if (i < required && !out[i])
      throw_type_error(fmt::format("{}() missing required argument '{}' (pos {})", fn, nm, i + 1));
    ++i;
  }
}

bool to_scalar(PyObject* o, Scalar* out) {
  if (PyBool_Check(o)) {
    *out = Scalar::from_bool(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
      throw PythonErrorSet{};
    }
    *out = Scalar::from_int(v);
    return true;
  }
  if (PyFloat_Check(o)) {
    *out = Scalar::from_double(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (is_tensor(o)) return false;
  // numpy scalars: integers expose __index__, floats __float__.
  PyNumberMethods* nb = Py_TYPE(o)->tp_as_number;
  if (!nb) return false;
  if (nb->nb_index) {
    // numpy float scalars have the slot too but refuse; they are floats then.
    if (PyObject* i = PyNumber_Index(o)) {
      long long v = PyLong_AsLongLong(i);
      Py_DECREF(i);
      if (v == -1 && PyErr_Occurred()) throw PythonErrorSet{};
      *out = Scalar::from_int(v);
      return true;
    }
    PyErr_Clear();
  }
  if (nb->nb_float) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw PythonErrorSet{};
    *out = Scalar::from_double(v);
    return true;
  }
  return false;
}

Scalar scalar_arg(const char* fn, const char* arg, PyObject* o) {
  Scalar s;
  if (!to_scalar(o, &s))
    throw_type_error(fmt::format("{}(): argument '{}' must be a number, not {}", fn, arg, Py_TYPE(o)->tp_name));
  return s;
}

int64_t int_arg(const char* fn, const char* arg, PyObject* o) {
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow) return v;
  }
  if (!PyFloat_Check(o) && !is_tensor(o) && PyIndex_Check(o)) {
    PyObject* i = PyNumber_Index(o);
    if (!i) throw PythonErrorSet{};
    long long v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (!(v == -1 && PyErr_Occurred())) return v;
    throw PythonErrorSet{};
  }
  if (is_tensor(o) && unwrap(o).numel() == 1 && !is_floating(unwrap(o).dtype())) {
    ensure_materialized(unwrap(o), BreakKind::Item, "a tensor passed where an int is expected");
    return ops::item_int(unwrap(o));
  }
  throw_type_error(fmt::format("{}(): argument '{}' must be int, not {}", fn, arg, Py_TYPE(o)->tp_name));
}

bool bool_arg(const char* fn, const char* arg, PyObject* o, bool dflt) {
  if (!o) return dflt;
  if (PyBool_Check(o)) return o == Py_True;
  throw_type_error(fmt::format("{}(): argument '{}' must be bool, not {}", fn, arg, Py_TYPE(o)->tp_name));
}

void throw_if_unsupported_dtype(PyObject* o) {
  // dyn.float16 and friends (python/dyn/__init__.py) carry the message that says what to use.
  PyObject* msg = PyObject_GetAttrString(o, "_unsupported_message");
  if (!msg) {
    PyErr_Clear();
    return;
  }
  std::string m = PyUnicode_Check(msg) ? PyUnicode_AsUTF8(msg) : "unsupported dtype";
  Py_DECREF(msg);
  throw_type_error(m);
}

std::optional<DType> dtype_arg(const char* fn, PyObject* o) {
  if (!o || o == Py_None) return std::nullopt;
  if (Py_TYPE(o) == &DTypeType) return reinterpret_cast<PyDType*>(o)->t;
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return default_float_dtype();
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  throw_if_unsupported_dtype(o);
  throw_type_error(
      fmt::format("{}(): argument 'dtype' must be dyn.dtype (dyn.float32, dyn.int64, dyn.bool, ...), not {}", fn,
                  Py_TYPE(o)->tp_name));
}

const Tensor& tensor_arg(const char* fn, const char* arg, PyObject* o) {
  if (!o || !is_tensor(o))
    throw_type_error(
        fmt::format("{}(): argument '{}' must be Tensor, not {}", fn, arg, o ? Py_TYPE(o)->tp_name : "nothing"));
  return unwrap(o);
}

Dims dims_arg(const char* fn, const char* arg, PyObject* o) {
  Dims d;
  if (PyTuple_Check(o) || PyList_Check(o)) {
    PyObject* seq = PySequence_Fast(o, "");
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    try {
      if (n > kMaxDims) fail(ErrorKind::Runtime, "dyn supports at most {} dimensions, got {}", kMaxDims, n);
      for (Py_ssize_t i = 0; i < n; ++i) d.push_back(int_arg(fn, arg, PySequence_Fast_GET_ITEM(seq, i)));
    } catch (...) {
      Py_DECREF(seq);
      throw;
    }
    Py_DECREF(seq);
    return d;
  }
  if (PyFloat_Check(o) || (!PyLong_Check(o) && !PyIndex_Check(o)))
    throw_type_error(fmt::format("{}(): argument '{}' must be tuple of ints, not {}", fn, arg, Py_TYPE(o)->tp_name));
  d.push_back(int_arg(fn, arg, o));
  return d;
}

Dims shape_args(const char* fn, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) return dims_arg(fn, "size", args[0]);
  if (nargs > kMaxDims) fail(ErrorKind::Runtime, "dyn supports at most {} dimensions, got {}", kMaxDims, nargs);
  Dims d;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (PyFloat_Check(args[i]) || is_tensor(args[i]) || !PyIndex_Check(args[i]))
      throw_type_error(
          fmt::format("{}(): argument 'size' must be tuple of ints, but found element of type {} at "
                      "pos {}",
                      fn, Py_TYPE(args[i])->tp_name, i));
    d.push_back(int_arg(fn, "size", args[i]));
  }
  return d;
}

// ---- from data ----

namespace {

struct Collected {
  Dims shape;
  std::vector<double> f;
  std::vector<int64_t> i;
  bool any_float = false, all_bool = true, any_value = false;

  void add(const Scalar& s) {
    any_value = true;
    any_float |= s.kind == Scalar::Float;
    all_bool &= s.kind == Scalar::Bool;
    f.push_back(s.to_double());
    i.push_back(s.to_int());
  }
};

void collect(PyObject* o, int depth, Collected* c) {
  if (is_tensor(o)) {
    const Tensor& t = unwrap(o);
    DYN_CHECK(t.numel() == 1 && t.ndim() == 0, ErrorKind::Value,
              "only one element tensors can be converted to Python scalars");
    ensure_materialized(t, BreakKind::Item, "dyn.tensor() of a list holding tensors");
    Scalar s;
    s = is_floating(t.dtype())     ? Scalar::from_double(ops::item_double(t))
        : t.dtype() == DType::Bool ? Scalar::from_bool(ops::item_int(t) != 0)
                                   : Scalar::from_int(ops::item_int(t));
    if (depth != c->shape.size()) fail(ErrorKind::Value, "expected sequence at dim {} (got a number)", depth);
    c->add(s);
    return;
  }
  Scalar s;
  if (to_scalar(o, &s)) {
    if (depth != c->shape.size())
      fail(ErrorKind::Value, "expected sequence of length {} at dim {} (got a number)", c->shape[depth], depth);
    c->add(s);
    return;
  }
  if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o))
    throw_type_error(fmt::format("Could not infer dtype of {}", Py_TYPE(o)->tp_name));
  PyObject* seq = PySequence_Fast(o, "expected a sequence");
  if (!seq) throw PythonErrorSet{};
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  try {
    if (depth == c->shape.size()) {
      if (depth > 0 && c->any_value)
        fail(ErrorKind::Value, "expected a number at dim {} but got a sequence of length {}", depth, n);
      c->shape.push_back(n);
    } else if (c->shape[depth] != n) {
      fail(ErrorKind::Value, "expected sequence of length {} at dim {} (got {})", c->shape[depth], depth, n);
    }
    for (Py_ssize_t k = 0; k < n; ++k) collect(PySequence_Fast_GET_ITEM(seq, k), depth + 1, c);
  } catch (...) {
    Py_DECREF(seq);
    throw;
  }
  Py_DECREF(seq);
}

// dtype of a buffer's format string, if dyn has it.
std::optional<DType> format_dtype(const char* fmt, Py_ssize_t itemsize) {
  while (*fmt == '@' || *fmt == '=' || *fmt == '<') ++fmt;
  if (fmt[0] == 0 || fmt[1] != 0) return std::nullopt;
  switch (fmt[0]) {
    case 'f':
      return DType::Float32;
    case 'd':
      return DType::Float64;
    case 'e':
      return DType::Float16;
    case '?':
      return DType::Bool;
    case 'B':
      return DType::UInt8;
    case 'b':
      return DType::Int8;
    case 'h':
      return DType::Int16;
    case 'i':
    case 'l':
    case 'q':
      // The C type's size decides: numpy's int32 is 'i' here, its int64 'l'.
      if (itemsize == 4) return DType::Int32;
      if (itemsize == 8) return DType::Int64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

struct BufferHold {
  Py_buffer view;
};

void release_buffer(void* ctx) {
  PyGILState_STATE g = PyGILState_Ensure();
  auto* h = static_cast<BufferHold*>(ctx);
  PyBuffer_Release(&h->view);
  delete h;
  PyGILState_Release(g);
}

// The dyn tensor whose memory a numpy array (or a view of one) was exported from, if any: walks
// .base (array -> array -> memoryview -> tensor). Borrowed; nullptr when there is none.
PyObject* exporting_tensor(PyObject* obj) {
  PyObject* cur = obj;
  Py_INCREF(cur);
  for (int depth = 0; depth < 64 && cur; ++depth) {
    if (is_tensor(cur)) {
      Py_DECREF(cur);  // obj's chain keeps it alive
      return cur;
    }
    PyObject* next = nullptr;
    if (PyMemoryView_Check(cur)) {
      next = PyMemoryView_GET_BUFFER(cur)->obj;
      Py_XINCREF(next);
    } else if (PyObject_HasAttrString(cur, "base")) {
      next = PyObject_GetAttrString(cur, "base");
      if (!next) PyErr_Clear();
      if (next == Py_None) Py_CLEAR(next);
    }
    Py_DECREF(cur);
    cur = next;
  }
  Py_XDECREF(cur);
  return nullptr;
}

// Wraps an object's buffer as a tensor sharing its memory.
Tensor buffer_tensor(PyObject* obj) {
  auto* h = new BufferHold();
  bool read_only = false;
  if (PyObject_GetBuffer(obj, &h->view, PyBUF_RECORDS) != 0) {
    // Read-only memory (np.load(mmap_mode="r"), bytes): shared, but in-place ops refuse it.
    PyErr_Clear();
    if (PyObject_GetBuffer(obj, &h->view, PyBUF_RECORDS_RO) != 0) {
      delete h;
      throw PythonErrorSet{};
    }
    read_only = true;
  }
  Py_buffer& v = h->view;
  auto dt = format_dtype(v.format ? v.format : "B", v.itemsize);
  if (!dt) {
    std::string f = v.format ? v.format : "B";
    PyBuffer_Release(&v);
    delete h;
    throw_type_error(
        fmt::format("can't convert an array with buffer format '{}' to a dyn tensor: dyn supports "
                    "float16, float32, float64, uint8, int8, int16, int32, int64 and bool (no uint16, uint32, uint64 "
                    "or complex); convert it first, e.g. arr.astype(numpy.int64)",
                    f));
  }
  Dims shape, strides;
  try {
    for (int i = 0; i < v.ndim; ++i) {
      shape.push_back(v.shape[i]);
      if (v.strides[i] % v.itemsize != 0)
        fail(ErrorKind::Value, "array strides are not a multiple of its element size");
      strides.push_back(v.strides[i] / v.itemsize);
    }
  } catch (...) {
    PyBuffer_Release(&v);
    delete h;
    throw;
  }
  // Negative strides (a[::-1]) point below buf: give the storage its lowest address.
  int64_t low = 0;
  for (int i = 0; i < shape.size(); ++i)
    if (strides[i] < 0 && shape[i] > 0) low += strides[i] * (shape[i] - 1);
  char* base = static_cast<char*>(v.buf) + low * v.itemsize;
  // Memory a dyn tensor lent to numpy comes back as a view of the same Storage, not a second
  // Storage over the same bytes: recorded writes and versions must be seen through both.
  if (PyObject* owner = exporting_tensor(obj)) {
    const Tensor& src = unwrap(owner);
    Storage* own = src.storage();
    char* lo = own ? static_cast<char*>(own->data()) : nullptr;
    if (own && low == 0 && base >= lo && base + v.len <= lo + own->nbytes() && (base - lo) % v.itemsize == 0 &&
        static_cast<int64_t>(itemsize(src.dtype())) == v.itemsize && *dt == src.dtype()) {
      own->retain();
      Tensor t(new TensorImpl(own, shape, strides, (base - lo) / v.itemsize, *dt));
      PyBuffer_Release(&v);
      delete h;
      return t;
    }
  }
  Storage* st = Storage::wrap(base, static_cast<size_t>(v.len), release_buffer, h);
  st->read_only = read_only;
  return Tensor(new TensorImpl(st, shape, strides, -low, *dt));
}

}  // namespace

Tensor tensor_from_buffer(PyObject* obj) { return buffer_tensor(obj); }

Tensor tensor_from_data(PyObject* data, std::optional<DType> dtype) {
  if (is_tensor(data)) {
    Tensor t = ops::clone(unwrap(data));  // recorded as a node inside a compile region
    return dtype ? ops::to_dtype(t, *dtype) : t;
  }
  if (PyObject_CheckBuffer(data) && !PyBytes_Check(data) && !PyByteArray_Check(data)) {
    Tensor shared = buffer_tensor(data);
    Tensor t = ops::clone(shared);
    return dtype ? ops::to_dtype(t, *dtype) : t;
  }
  Collected c;
  collect(data, 0, &c);
  DType inferred = c.any_float ? default_float_dtype() : (c.all_bool && c.any_value) ? DType::Bool : DType::Int64;
  if (!c.any_value && !c.any_float) inferred = default_float_dtype();  // dyn.tensor([]) is float, as in PyTorch
  DType d = dtype.value_or(inferred);
  if (c.any_float) return ops::from_doubles(c.f, c.shape, d);
  return ops::from_ints(c.i, c.shape, d);
}

Tensor autocast_matmul(const Tensor& a, const Tensor& b) {
  DType ac = autocast_dtype();
  if (ac == kAutocastOff) return ops::matmul(a, b);
  auto cast = [ac](const Tensor& t) { return t.dtype() == DType::Float32 ? ops::to_dtype(t, ac) : t; };
  return ops::matmul(cast(a), cast(b));
}

PyObject* tensor_to_list(const Tensor& t) {
  auto elem = [&](int64_t off) -> PyObject* {
    return visit_dtype_all(t.dtype(), [&](auto tag) -> PyObject* {
      using T = decltype(tag);
      T v = t.data<T>()[off];
      if constexpr (std::is_same_v<T, bool>)
        return PyBool_FromLong(v);
      else if constexpr (std::is_integral_v<T>)
        return PyLong_FromLongLong(v);
      else if constexpr (kReducedFloat<T>)
        return PyFloat_FromDouble(static_cast<double>(static_cast<float>(v)));
      else
        return PyFloat_FromDouble(static_cast<double>(v));
    });
  };
  std::function<PyObject*(int, int64_t)> rec = [&](int d, int64_t off) -> PyObject* {
    if (d == t.ndim()) return elem(off);
    PyObject* l = PyList_New(t.size(d));
    if (!l) throw PythonErrorSet{};
    for (int64_t i = 0; i < t.size(d); ++i) {
      PyObject* x = rec(d + 1, off + i * t.strides()[d]);
      if (!x) {
        Py_DECREF(l);
        throw PythonErrorSet{};
      }
      PyList_SET_ITEM(l, i, x);
    }
    return l;
  };
  return rec(0, 0);
}

}  // namespace dyn::py
