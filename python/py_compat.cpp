// What PyTorch programs need beyond dyn's own surface: devices, generators, and the raw ops
// (cumsum, sort, scatter, index_add) that python/dyn/_ops.py wraps with PyTorch's signatures.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/error.h"
#include "core/ops/registry.h"
#include "core/random.h"
#include "python/py_common.h"

namespace dyn::py {

namespace {

std::string device_string(PyObject* o) {
  if (PyUnicode_Check(o)) return PyUnicode_AsUTF8(o);
  if (PyLong_Check(o)) return "cuda:" + std::to_string(PyLong_AsLong(o));  // torch: an int names a CUDA device
  throw_if_unsupported_dtype(o);
  PyObject* type = PyObject_GetAttrString(o, "type");
  if (!type || !PyUnicode_Check(type)) {
    Py_XDECREF(type);
    PyErr_Clear();
    throw_type_error(fmt::format("expected a device (a str like 'cpu' or a dyn.device), got {}", Py_TYPE(o)->tp_name));
  }
  std::string s = PyUnicode_AsUTF8(type);
  Py_DECREF(type);
  return s;
}

}  // namespace

void check_device(const char* fn, PyObject* o) {
  if (!o || o == Py_None) return;
  std::string s = device_string(o);
  std::string kind = s.substr(0, s.find(':'));
  if (kind == "cpu" || kind == "xla") return;
  if (kind == "cuda" || kind == "mps" || kind == "xpu" || kind == "meta" || kind == "hip")
    fail(ErrorKind::Runtime,
         "{}(): dyn runs on the CPU only, and device '{}' is not available here (torch.cuda.is_available() is "
         "False under dynrepl); use device='cpu', or pick the device with "
         "'cuda' if torch.cuda.is_available() else 'cpu'",
         fn, s);
  fail(ErrorKind::Runtime, "{}(): expected a device type like 'cpu', got '{}'", fn, s);
}

namespace {

uint64_t u64_attr(const char* fn, PyObject* o, const char* name) {
  PyObject* v = PyObject_GetAttrString(o, name);
  if (!v) {
    PyErr_Clear();
    throw_type_error(fmt::format("{}(): generator must be a dyn.Generator, got {}", fn, Py_TYPE(o)->tp_name));
  }
  uint64_t r = PyLong_AsUnsignedLongLongMask(v);
  Py_DECREF(v);
  if (PyErr_Occurred()) throw PythonErrorSet{};
  return r;
}

void set_u64_attr(PyObject* o, const char* name, uint64_t v) {
  PyObject* x = PyLong_FromUnsignedLongLong(v);
  if (x) PyObject_SetAttrString(o, name, x);
  Py_XDECREF(x);
}

}  // namespace

GeneratorScope::GeneratorScope(const char* fn, PyObject* generator) {
  if (!generator || generator == Py_None) return;
  GeneratorState mine{u64_attr(fn, generator, "_seed"), u64_attr(fn, generator, "_offset")};
  GeneratorState old = rng_state();
  saved_seed_ = old.seed, saved_offset_ = old.offset;
  set_rng_state(mine);
  gen_ = generator;
  Py_INCREF(gen_);
}

GeneratorScope::~GeneratorScope() {
  if (!gen_) return;
  GeneratorState now = rng_state();
  set_rng_state({saved_seed_, saved_offset_});
  // Keep an exception in flight intact while writing the generator's new position back.
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  set_u64_attr(gen_, "_offset", now.offset);
  PyErr_Clear();
  PyErr_Restore(t, v, tb);
  Py_DECREF(gen_);
}

namespace {

DYN_FAST(f_cumsum) {
  PyObject* a[3];
  parse_args("cumsum", args, nargs, kw, {"input", "dim", "reverse"}, 2, a);
  return wrap(ops::cumsum(tensor_arg("cumsum", "input", a[0]), int_arg("cumsum", "dim", a[1]),
                          bool_arg("cumsum", "reverse", a[2], false)));
}

DYN_FAST(f_layer_norm) {
  PyObject* a[5];
  const char* fn = "layer_norm";
  parse_args(fn, args, nargs, kw, {"input", "dims", "eps", "weight", "bias"}, 3, a);
  Scalar eps = scalar_arg(fn, "eps", a[2]);
  auto optional = [&](PyObject* o, const char* name) { return o && o != Py_None ? tensor_arg(fn, name, o) : Tensor(); };
  return wrap(ops::layer_norm(tensor_arg(fn, "input", a[0]), int_arg(fn, "dims", a[1]), eps.to_double(),
                              optional(a[3], "weight"), optional(a[4], "bias")));
}

DYN_FAST(f_sort) {
  PyObject* a[3];
  parse_args("sort", args, nargs, kw, {"input", "dim", "descending"}, 3, a);
  auto [v, i] = ops::sort(tensor_arg("sort", "input", a[0]), int_arg("sort", "dim", a[1]),
                          bool_arg("sort", "descending", a[2], false));
  return Py_BuildValue("(NN)", wrap(v), wrap(i));
}

// _scatter(base, dim, index, src, add): scatter_add when add, else scatter.
DYN_FAST(f_scatter) {
  PyObject* a[5];
  parse_args("scatter", args, nargs, kw, {"input", "dim", "index", "src", "add"}, 5, a);
  const char* fn = PyObject_IsTrue(a[4]) ? "scatter_add" : "scatter";
  const Tensor& base = tensor_arg(fn, "input", a[0]);
  int64_t dim = int_arg(fn, "dim", a[1]);
  const Tensor& idx = tensor_arg(fn, "index", a[2]);
  const Tensor& src = tensor_arg(fn, "src", a[3]);
  return wrap(PyObject_IsTrue(a[4]) ? ops::scatter_add(base, dim, idx, src) : ops::scatter(base, dim, idx, src));
}

DYN_FAST(f_index_add) {
  PyObject* a[4];
  parse_args("index_add", args, nargs, kw, {"input", "dim", "index", "source"}, 4, a);
  return wrap(ops::index_add(tensor_arg("index_add", "input", a[0]), int_arg("index_add", "dim", a[1]),
                             tensor_arg("index_add", "index", a[2]), tensor_arg("index_add", "source", a[3])));
}

// Methods written in Python (python/dyn/_ops.py) join dyn.Tensor's own: Tensor is a static type,
// which Python code may not set attributes on.
DYN_FAST(f_add_tensor_methods) {
  PyObject* a[1];
  parse_args("_add_tensor_methods", args, nargs, kw, {"methods"}, 1, a);
  if (!PyDict_Check(a[0])) throw_type_error("_add_tensor_methods(): expected a dict of name -> function");
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(a[0], &pos, &k, &v))
    if (PyDict_SetItem(TensorType.tp_dict, k, v) < 0) throw PythonErrorSet{};
  PyType_Modified(&TensorType);
  Py_RETURN_NONE;
}

// An instance of a Python subclass of dyn.Tensor (nn.Parameter) holding the same tensor.
DYN_FAST(f_as_subclass) {
  PyObject* a[2];
  parse_args("_as_subclass", args, nargs, kw, {"cls", "tensor"}, 2, a);
  if (!PyType_Check(a[0]) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(a[0]), &TensorType))
    throw_type_error("_as_subclass(): cls must be a subclass of dyn.Tensor");
  const Tensor& t = tensor_arg("_as_subclass", "tensor", a[1]);
  auto* cls = reinterpret_cast<PyTypeObject*>(a[0]);
  PyObject* o = cls->tp_alloc(cls, 0);
  if (!o) throw PythonErrorSet{};
  new (&reinterpret_cast<PyTensor*>(o)->t) Tensor(t);
  reinterpret_cast<PyTensor*>(o)->weakrefs = nullptr;
  return o;
}

DYN_FAST(f_check_device) {
  PyObject* a[2];
  parse_args("_check_device", args, nargs, kw, {"fn", "device"}, 2, a);
  check_device(PyUnicode_Check(a[0]) ? PyUnicode_AsUTF8(a[0]) : "device", a[1]);
  Py_RETURN_NONE;
}

DYN_FAST(f_promote_types) {
  PyObject* a[2];
  parse_args("promote_types", args, nargs, kw, {"type1", "type2"}, 2, a);
  auto t1 = dtype_arg("promote_types", a[0]), t2 = dtype_arg("promote_types", a[1]);
  if (!t1 || !t2) throw_type_error("promote_types(): both arguments must be dtypes");
  PyObject* r = dtype_object(promote_types(*t1, *t2));
  Py_INCREF(r);
  return r;
}

// torch.autocast's state: the dtype (float16 or bfloat16) or None. Reading it is free for trace
// once (the engine guards it with the default dtype); setting it keeps a compiled body running.
DYN_FAST(f_autocast_dtype) {
  parse_args("autocast_dtype", args, nargs, kw, {}, 0, nullptr);
  if (autocast_dtype() == kAutocastOff) Py_RETURN_NONE;
  PyObject* r = dtype_object(autocast_dtype());
  Py_INCREF(r);
  return r;
}

// a @ b as the op computes it, whatever autocast says: for code that has already cast its operands
// (linear's float16 path widens them to float32 on purpose).
DYN_FAST(f_matmul) {
  PyObject* a[2];
  parse_args("_matmul", args, nargs, kw, {"input", "other"}, 2, a);
  return wrap(ops::matmul(tensor_arg("_matmul", "input", a[0]), tensor_arg("_matmul", "other", a[1])));
}

// A value computed outside dyn's ops (LAPACK through numpy: torch.linalg) needs its operand's data:
// inside a compile region that is a graph break, whose reason names the function.
DYN_FAST(f_materialize) {
  PyObject* a[2];
  parse_args("_materialize", args, nargs, kw, {"input", "what"}, 2, a);
  const char* what = PyUnicode_AsUTF8(a[1]);
  if (!what) return nullptr;
  ensure_materialized(tensor_arg("_materialize", "input", a[0]), BreakKind::Numpy, what);
  Py_RETURN_NONE;
}

DYN_FAST(f_set_autocast) {
  PyObject* a[1];
  parse_args("_set_autocast", args, nargs, kw, {"dtype"}, 1, a);
  auto t = dtype_arg("_set_autocast", a[0]);
  DYN_CHECK(!t || is_reduced_float(*t), ErrorKind::Runtime,
            "In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast only "
            "supports dtype of torch.bfloat16, torch.float16 currently.");
  set_autocast_dtype(t ? *t : kAutocastOff);
  Py_RETURN_NONE;
}

// Owns a reference to a Python object from C++ (a callback kept by a grad node).
struct PyRef {
  PyObject* o;
  explicit PyRef(PyObject* x) : o(x) { Py_INCREF(o); }
  ~PyRef() {
    if (Py_IsInitialized()) Py_DECREF(o);
  }
};

std::vector<Tensor> tensor_list(const char* fn, PyObject* seq) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of tensors");
  if (!fast) throw PythonErrorSet{};
  std::vector<Tensor> v;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i)
    v.push_back(tensor_arg(fn, "tensors", PySequence_Fast_GET_ITEM(fast, i)));
  Py_DECREF(fast);
  return v;
}

// _custom_grad(inputs, outputs, name, backward): outputs get one grad node whose derivative calls
// backward(*grads) -> one gradient (or None) per input. torch.autograd.Function is built on it.
DYN_FAST(f_custom_grad) {
  PyObject* a[4];
  parse_args("_custom_grad", args, nargs, kw, {"inputs", "outputs", "name", "backward"}, 4, a);
  std::vector<Tensor> in = tensor_list("_custom_grad", a[0]);
  std::vector<Tensor> out = tensor_list("_custom_grad", a[1]);
  if (!PyUnicode_Check(a[2]) || !PyCallable_Check(a[3]))
    throw_type_error("_custom_grad(): expected a name (str) and a callable");
  std::string name = PyUnicode_AsUTF8(a[2]);
  auto fn = std::make_shared<PyRef>(a[3]);
  std::vector<Dims> in_shapes;
  for (const Tensor& t : in) in_shapes.push_back(t.shape());
  auto backward = [fn, name, in_shapes](std::span<const Tensor> gout, std::vector<Tensor>* gin) {
    PyObject* grads = PyTuple_New(static_cast<Py_ssize_t>(gout.size()));
    if (!grads) throw PythonErrorSet{};
    for (size_t i = 0; i < gout.size(); ++i) {
      PyObject* g = gout[i].defined() ? wrap(gout[i]) : (Py_INCREF(Py_None), Py_None);
      PyTuple_SET_ITEM(grads, static_cast<Py_ssize_t>(i), g);
    }
    PyObject* r = PyObject_CallObject(fn->o, grads);
    Py_DECREF(grads);
    if (!r) throw PythonErrorSet{};
    PyObject* fast = PySequence_Fast(r, "backward must return a gradient (or None) for each input");
    Py_DECREF(r);
    if (!fast) throw PythonErrorSet{};
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (static_cast<size_t>(n) != gin->size()) {
      Py_DECREF(fast);
      fail(ErrorKind::Runtime, "function {} returned an incorrect number of gradients (expected {}, got {})", name,
           gin->size(), n);
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* g = PySequence_Fast_GET_ITEM(fast, i);
      if (g == Py_None) continue;
      if (!is_tensor(g)) {
        std::string type = Py_TYPE(g)->tp_name;  // before the release: fast may hold g's only reference
        Py_DECREF(fast);
        throw_type_error(
            fmt::format("{}: backward returned a {} for input {}; expected a tensor or None", name, type, i));
      }
      // A copy: `fast` may hold the only reference to g, and the error path releases it.
      const Tensor t = unwrap(g);
      if (t.shape() != in_shapes[i]) {
        Py_DECREF(fast);
        fail(ErrorKind::Runtime, "function {} returned an invalid gradient at index {} - got {} but expected shape {}",
             name, i, dims_str(t.shape()), dims_str(in_shapes[i]));
      }
      (*gin)[i] = t;
    }
    Py_DECREF(fast);
  };
  return PyBool_FromLong(record_custom_grad(in, out, name, std::move(backward)));
}

PyMethodDef compat_functions[] = {
    DYN_ENTRY("_custom_grad", f_custom_grad, "_custom_grad(inputs, outputs, name, backward)"),
    DYN_ENTRY("_cumsum", f_cumsum, "_cumsum(input, dim, reverse=False)"),
    DYN_ENTRY("_layer_norm", f_layer_norm, "_layer_norm(input, dims, eps, weight=None, bias=None): one row kernel"),
    DYN_ENTRY("_sort", f_sort, "_sort(input, dim, descending) -> (values, indices), stable"),
    DYN_ENTRY("_scatter", f_scatter, "_scatter(input, dim, index, src, add)"),
    DYN_ENTRY("_index_add", f_index_add, "_index_add(input, dim, index, source)"),
    DYN_ENTRY("_add_tensor_methods", f_add_tensor_methods, "_add_tensor_methods({name: function})"),
    DYN_ENTRY("_as_subclass", f_as_subclass, "_as_subclass(cls, tensor): the tensor as an instance of cls"),
    DYN_ENTRY("autocast_dtype", f_autocast_dtype, "autocast_dtype(): torch.autocast's dtype now, or None"),
    DYN_ENTRY("_set_autocast", f_set_autocast, "_set_autocast(dtype or None)"),
    DYN_ENTRY("_matmul", f_matmul, "_matmul(input, other): the product without autocast"),
    DYN_ENTRY("_materialize", f_materialize, "_materialize(input, what): its data now (a graph break in a region)"),
    DYN_ENTRY("promote_types", f_promote_types, "promote_types(type1, type2): the smallest dtype both cast to"),
    DYN_ENTRY("_check_device", f_check_device, "_check_device(fn, device): raises unless the device is the CPU"),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

// ---- out= on torch functions ----
// torch.add(a, b, out=c) and the like: the function runs as without out=, then its result is
// written into `out` as PyTorch writes it (cast to out's dtype where PyTorch may cast, out resized
// with PyTorch's warning when its shape differs), and `out` itself is returned. A wrapper per
// function of the dyn namespace (the Tensor methods take no out=, as in PyTorch); a call without
// out= costs one vectorcall more.

namespace {

struct OutFunction {
  PyObject_HEAD PyObject* fn;
  PyObject* name;
  bool creates;  // zeros, arange, ...: the result is made in out's dtype (dtype= unless given)
  vectorcallfunc vectorcall;
};

bool can_cast_into(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

void write_out(const char* name, const Tensor& r, const Tensor& out) {
  DYN_CHECK(!(grad_enabled() && requires_grad(r)), ErrorKind::Runtime,
            "{}(): functions with out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad.",
            name);
  DYN_CHECK(can_cast_into(r.dtype(), out.dtype()), ErrorKind::Runtime,
            "result type {} can't be cast to the desired output type {}", legacy_dtype_name(r.dtype()),
            legacy_dtype_name(out.dtype()));
  if (r.shape() != out.shape()) {
    DYN_CHECK(!Capture::active() && !out.impl()->lazy(), ErrorKind::NotImplemented,
              "{}(out=...): an out tensor of shape {} for a result of shape {} would be resized, which dyn does "
              "not do inside a compiled region; pass an out tensor of the result's shape",
              name, dims_str(out.shape()), dims_str(r.shape()));
    if (out.numel() != 0) {
      std::string msg = fmt::format(
          "An output with one or more elements was resized since it had shape {}, which does not match the required "
          "output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will not be resized "
          "unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
          "elements with t.resize_(0).",
          dims_str(out.shape()), dims_str(r.shape()));
      if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw PythonErrorSet{};
    }
    // The out tensor takes a fresh buffer of the result's shape (its views keep the old one).
    Tensor fresh = Tensor::empty(r.shape(), out.dtype());
    TensorImpl* p = out.impl();
    fresh.storage()->retain();
    if (p->storage_) p->storage_->release();
    p->storage_ = fresh.storage();
    p->shape_ = fresh.shape();
    p->strides_ = fresh.strides();
    p->offset_ = 0;
  }
  NoGradScope no_grad;
  ops::copy_(const_cast<Tensor&>(out), r);
}

PyObject* out_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* f = reinterpret_cast<OutFunction*>(self);
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  Py_ssize_t at = -1;
  bool has_dtype = false;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_CompareWithASCIIString(k, "out") == 0) at = i;
    if (PyUnicode_CompareWithASCIIString(k, "dtype") == 0) has_dtype = true;
  }
  if (at < 0) return PyObject_Vectorcall(f->fn, args, nargsf, kwnames);
  PyObject* out = args[nargs + at];
  const char* name = PyUnicode_AsUTF8(f->name);
  if (out != Py_None && !is_tensor(out)) {
    PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be Tensor, not %s", name, Py_TYPE(out)->tp_name);
    return nullptr;
  }
  // The call without out= (and, for a creation function, with out's dtype).
  bool add_dtype = out != Py_None && f->creates && !has_dtype;
  std::vector<PyObject*> a(args, args + nargs);
  PyObject* names = PyTuple_New(nkw - 1 + (add_dtype ? 1 : 0));
  if (!names) return nullptr;
  Py_ssize_t j = 0;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    if (i == at) continue;
    PyObject* k = PyTuple_GET_ITEM(kwnames, i);
    Py_INCREF(k);
    PyTuple_SET_ITEM(names, j++, k);
    a.push_back(args[nargs + i]);
  }
  PyObject* dtype = nullptr;
  if (add_dtype) {
    dtype = PyObject_GetAttrString(out, "dtype");
    if (!dtype) {
      Py_DECREF(names);
      return nullptr;
    }
    PyTuple_SET_ITEM(names, j++, PyUnicode_FromString("dtype"));
    a.push_back(dtype);
  }
  PyObject* r =
      PyObject_Vectorcall(f->fn, a.data(), static_cast<size_t>(nargs), PyTuple_GET_SIZE(names) ? names : nullptr);
  Py_DECREF(names);
  Py_XDECREF(dtype);
  if (!r || out == Py_None) return r;
  try {
    if (!is_tensor(r)) {
      Py_DECREF(r);
      throw_type_error(fmt::format("{}(): out= is supported for a function that returns one tensor", name));
    }
    write_out(name, unwrap(r), unwrap(out));
  } catch (...) {
    Py_XDECREF(r);
    return translate_exception();
  }
  Py_DECREF(r);
  Py_INCREF(out);
  return out;
}

void out_dealloc(PyObject* self) {
  auto* f = reinterpret_cast<OutFunction*>(self);
  Py_XDECREF(f->fn);
  Py_XDECREF(f->name);
  Py_TYPE(self)->tp_free(self);
}

PyObject* out_repr(PyObject* self) {
  return PyUnicode_FromFormat("<built-in function %U>", reinterpret_cast<OutFunction*>(self)->name);
}

PyObject* out_get_doc(PyObject* self, void*) {
  return PyObject_GetAttrString(reinterpret_cast<OutFunction*>(self)->fn, "__doc__");
}
PyObject* out_get_name(PyObject* self, void*) {
  PyObject* n = reinterpret_cast<OutFunction*>(self)->name;
  Py_INCREF(n);
  return n;
}
PyObject* out_get_wrapped(PyObject* self, void*) {
  PyObject* f = reinterpret_cast<OutFunction*>(self)->fn;
  Py_INCREF(f);
  return f;
}

PyGetSetDef out_getset[] = {
    {"__doc__", out_get_doc, nullptr, nullptr, nullptr},
    {"__name__", out_get_name, nullptr, nullptr, nullptr},
    {"__qualname__", out_get_name, nullptr, nullptr, nullptr},
    {"__wrapped__", out_get_wrapped, nullptr, "the function without out=", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject OutFunctionType = [] {
  PyTypeObject t = new_type("dyn._OutFunction", sizeof(OutFunction), out_dealloc,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, nullptr);
  t.tp_vectorcall_offset = offsetof(OutFunction, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_repr = out_repr;
  t.tp_getset = out_getset;
  return t;
}();

// _with_out(fn, name, creates): fn with out= as torch functions take it.
DYN_FAST(f_with_out) {
  PyObject* a[3];
  parse_args("_with_out", args, nargs, kw, {"fn", "name", "creates"}, 3, a);
  if (!PyCallable_Check(a[0]) || !PyUnicode_Check(a[1]))
    throw_type_error("_with_out(): expected (callable, str, bool)");
  auto* f = PyObject_New(OutFunction, &OutFunctionType);
  if (!f) return nullptr;
  Py_INCREF(a[0]);
  Py_INCREF(a[1]);
  f->fn = a[0];
  f->name = a[1];
  f->creates = PyObject_IsTrue(a[2]);
  f->vectorcall = out_call;
  return reinterpret_cast<PyObject*>(f);
}

// ---- tensor hooks (register_hook, retain_grad) ----

DYN_FAST(f_add_grad_hook) {
  PyObject* a[2];
  parse_args("_add_grad_hook", args, nargs, kw, {"tensor", "hook"}, 2, a);
  const Tensor& t = tensor_arg("register_hook", "self", a[0]);
  if (!PyCallable_Check(a[1])) throw_type_error("register_hook(): hook must be callable");
  auto ref = std::make_shared<PyRef>(a[1]);
  std::string name = "hook";
  if (PyObject* n = PyObject_GetAttrString(a[1], "__name__"); n && PyUnicode_Check(n))
    name = PyUnicode_AsUTF8(n), Py_DECREF(n);
  else
    Py_XDECREF(n), PyErr_Clear();
  int64_t id = add_grad_hook(
      t,
      [ref](const Tensor& g) -> Tensor {
        PyObject* arg = wrap(g);
        PyObject* r = PyObject_CallOneArg(ref->o, arg);
        Py_DECREF(arg);
        if (!r) throw PythonErrorSet{};
        if (r == Py_None) {
          Py_DECREF(r);
          return Tensor();
        }
        if (!is_tensor(r)) {
          std::string type = Py_TYPE(r)->tp_name;
          Py_DECREF(r);
          throw_type_error(fmt::format("a hook must return None or a Tensor, not {}", type));
        }
        Tensor out = unwrap(r);
        Py_DECREF(r);
        return out;
      },
      name);
  return PyLong_FromLongLong(id);
}

DYN_FAST(f_remove_grad_hook) {
  PyObject* a[2];
  parse_args("_remove_grad_hook", args, nargs, kw, {"tensor", "id"}, 2, a);
  remove_grad_hook(tensor_arg("remove", "self", a[0]), int_arg("_remove_grad_hook", "id", a[1]));
  Py_RETURN_NONE;
}

DYN_FAST(f_grad_hook_ids) {
  PyObject* a[1];
  parse_args("_grad_hook_ids", args, nargs, kw, {"tensor"}, 1, a);
  std::vector<int64_t> ids = grad_hook_ids(tensor_arg("_backward_hooks", "self", a[0]));
  PyObject* l = PyList_New(0);
  for (int64_t id : ids) {
    PyObject* x = PyLong_FromLongLong(id);
    PyList_Append(l, x);
    Py_DECREF(x);
  }
  return l;
}

DYN_FAST(f_retain_grad) {
  PyObject* a[1];
  parse_args("_retain_grad", args, nargs, kw, {"tensor"}, 1, a);
  retain_grad(tensor_arg("retain_grad", "self", a[0]));
  Py_RETURN_NONE;
}

DYN_FAST(f_retains_grad) {
  PyObject* a[1];
  parse_args("_retains_grad", args, nargs, kw, {"tensor"}, 1, a);
  return PyBool_FromLong(retains_grad(tensor_arg("retains_grad", "self", a[0])));
}

PyMethodDef out_functions[] = {
    DYN_ENTRY("_with_out", f_with_out, "a torch function with out="),
    DYN_ENTRY("_add_grad_hook", f_add_grad_hook, "register_hook: a hook on a tensor's gradient; its id"),
    DYN_ENTRY("_remove_grad_hook", f_remove_grad_hook, "removes a hook by id"),
    DYN_ENTRY("_grad_hook_ids", f_grad_hook_ids, "the ids of a tensor's gradient hooks"),
    DYN_ENTRY("_retain_grad", f_retain_grad, "retain_grad: a non-leaf's .grad keeps its gradient"),
    DYN_ENTRY("_retains_grad", f_retains_grad, "whether a tensor retains its gradient"),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool init_compat(PyObject* module) {
  if (PyType_Ready(&OutFunctionType) < 0) return false;
  Py_INCREF(&OutFunctionType);
  if (PyModule_AddObject(module, "_OutFunction", reinterpret_cast<PyObject*>(&OutFunctionType)) < 0) return false;
  return PyModule_AddFunctions(module, compat_functions) == 0 && PyModule_AddFunctions(module, out_functions) == 0;
}

}  // namespace dyn::py
