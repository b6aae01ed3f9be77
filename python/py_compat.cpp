// What PyTorch programs need beyond dyn's own surface: devices, generators, and the raw ops
// (cumsum, sort, scatter, index_add) that python/dyn/_ops.py wraps with PyTorch's signatures.
#include <cstring>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/error.h"
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
    DYN_ENTRY("_check_device", f_check_device, "_check_device(fn, device): raises unless the device is the CPU"),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool init_compat(PyObject* module) { return PyModule_AddFunctions(module, compat_functions) == 0; }

}  // namespace dyn::py
