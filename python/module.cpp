// The built-in module _dyn: module functions (creation, joins, settings), dtypes, dyn.Size.
#include <vector>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/blas.h"
#include "core/error.h"
#include "core/random.h"
#include "core/storage.h"
#include "core/thread_pool.h"
#include "python/py_common.h"

namespace dyn::py {

// ---- dtypes ----

namespace {

PyObject* dtype_repr(PyObject* self) {
  return PyUnicode_FromFormat("dyn.%s", std::string(dtype_name(reinterpret_cast<PyDType*>(self)->t)).c_str());
}

PyObject* dtype_is_floating(PyObject* self, void*) {
  return PyBool_FromLong(is_floating(reinterpret_cast<PyDType*>(self)->t));
}
PyObject* dtype_itemsize(PyObject* self, void*) {
  return PyLong_FromSize_t(itemsize(reinterpret_cast<PyDType*>(self)->t));
}

PyObject* dtype_is_signed(PyObject* self, void*) {
  DType t = reinterpret_cast<PyDType*>(self)->t;
  return PyBool_FromLong(t != DType::Bool && t != DType::UInt8);
}
PyObject* dtype_false(PyObject*, void*) { Py_RETURN_FALSE; }

PyGetSetDef dtype_getset[] = {
    {"is_signed", dtype_is_signed, nullptr, "whether the dtype holds negative values", nullptr},
    {"is_complex", dtype_false, nullptr, "False: dyn has no complex dtypes", nullptr},
    {"is_floating_point", dtype_is_floating, nullptr, "float16, bfloat16, float32 or float64", nullptr},
    {"itemsize", dtype_itemsize, nullptr, "bytes per element", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyDType dtype_objects[kNumDTypes];

}  // namespace

PyTypeObject DTypeType = [] {
  PyTypeObject t = new_type("dyn.dtype", sizeof(PyDType), nullptr, Py_TPFLAGS_DEFAULT,
                            "An element type: dyn.float32, dyn.int64, dyn.bool, ... (dyn.float32.is_floating_point).");
  t.tp_repr = dtype_repr;
  t.tp_getset = dtype_getset;
  return t;
}();

PyObject* dtype_object(DType t) { return reinterpret_cast<PyObject*>(&dtype_objects[static_cast<int>(t)]); }

namespace {

// ---- module functions ----

// Splits f(*size, dtype=..., requires_grad=...) keyword arguments off a creation call.
struct CreationKw {
  std::optional<DType> dtype;
  bool requires_grad = false;
  PyObject* generator = nullptr;  // borrowed
  PyObject* size = nullptr;       // borrowed: size=... given by keyword
};

CreationKw creation_kw(const char* fn, Args args, Py_ssize_t nargs, PyObject* kw) {
  CreationKw c;
  if (!kw) return c;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kw); ++k) {
    PyObject* name = PyTuple_GET_ITEM(kw, k);
    PyObject* v = args[nargs + k];
    if (PyUnicode_CompareWithASCIIString(name, "dtype") == 0)
      c.dtype = dtype_arg(fn, v);
    else if (PyUnicode_CompareWithASCIIString(name, "requires_grad") == 0)
      c.requires_grad = bool_arg(fn, "requires_grad", v, false);
    else if (PyUnicode_CompareWithASCIIString(name, "device") == 0)
      check_device(fn, v);
    else if (PyUnicode_CompareWithASCIIString(name, "generator") == 0)
      c.generator = v;
    else if (PyUnicode_CompareWithASCIIString(name, "size") == 0)
      c.size = v;
    else if (PyUnicode_CompareWithASCIIString(name, "pin_memory") == 0 ||
             PyUnicode_CompareWithASCIIString(name, "layout") == 0 ||
             PyUnicode_CompareWithASCIIString(name, "memory_format") == 0)
      continue;  // meaningless on the CPU with dense tensors only
    else
      throw_type_error(fmt::format("{}() got an unexpected keyword argument '{}'", fn, PyUnicode_AsUTF8(name)));
  }
  return c;
}

PyObject* finish(Tensor t, const CreationKw& c) {
  if (c.requires_grad) set_requires_grad(t, true);
  return wrap(std::move(t));
}

// Shape from *size, or from size=... as a keyword (torch.empty(size=(2, 3))).
Dims creation_shape(const char* fn, Args args, Py_ssize_t nargs, const CreationKw& c) {
  if (!c.size) return shape_args(fn, args, nargs);
  if (nargs)
    throw_type_error(
        fmt::format("{}() got multiple values for argument 'size': give it by position or by keyword", fn));
  return dims_arg(fn, "size", c.size);
}

template <int Fill>
DYN_FAST(f_fill) {
  const char* fn = Fill == 0 ? "zeros" : Fill == 1 ? "ones" : "empty";
  CreationKw c = creation_kw(fn, args, nargs, kw);
  Dims shape = creation_shape(fn, args, nargs, c);
  DType d = c.dtype.value_or(default_float_dtype());
  Tensor t = Fill == 2 ? Tensor::empty(shape, d) : ops::full(shape, Scalar::from_int(Fill), d);
  return finish(t, c);
}

DYN_FAST(f_full) {
  PyObject* a[5];
  parse_args("full", args, nargs, kw, {"size", "fill_value", "dtype", "requires_grad", "device"}, 2, a);
  check_device("full", a[4]);
  Scalar v = scalar_arg("full", "fill_value", a[1]);
  CreationKw c;
  c.dtype = dtype_arg("full", a[2]);
  c.requires_grad = bool_arg("full", "requires_grad", a[3], false);
  Dims shape = dims_arg("full", "size", a[0]);
  return finish(ops::full(shape, v, c.dtype.value_or(scalar_dtype(v))), c);
}

template <int Kind>  // 0 rand, 1 randn
DYN_FAST(f_random) {
  const char* fn = Kind == 0 ? "rand" : "randn";
  CreationKw c = creation_kw(fn, args, nargs, kw);
  Dims shape = creation_shape(fn, args, nargs, c);
  DType d = c.dtype.value_or(default_float_dtype());
  GeneratorScope g(fn, c.generator);
  return finish(Kind == 0 ? ops::rand(shape, d) : ops::randn(shape, d), c);
}

DYN_FAST(f_randint) {
  PyObject* a[7];
  parse_args("randint", args, nargs, kw, {"low", "high", "size", "dtype", "requires_grad", "device", "generator"}, 0,
             a);
  check_device("randint", a[5]);
  GeneratorScope g("randint", a[6]);
  // PyTorch's two overloads, positional or by keyword: randint(high, size) and randint(low=0, high, size).
  int64_t low = 0, high;
  PyObject* size;
  if (!a[2]) {  // randint(high, size), both by position
    if (nargs < 2)
      throw_type_error(
          "randint() expects (high, size) or (low, high, size), e.g. randint(10, (3,)) or randint(0, 10, size=(3,))");
    if (PyLong_Check(a[1]))
      throw_type_error(fmt::format("randint(): argument 'size' (position 2) must be tuple of ints, not int"));
    high = int_arg("randint", "high", a[0]);
    size = a[1];
  } else if (!a[1]) {  // randint(high, size=...): the first argument positional is high
    if (!a[0] || nargs == 0) throw_type_error("randint() missing required argument 'high' (pos 2)");
    high = int_arg("randint", "high", a[0]);
    size = a[2];
  } else {  // randint(low=0, high, size)
    if (a[0]) low = int_arg("randint", "low", a[0]);
    high = int_arg("randint", "high", a[1]);
    size = a[2];
  }
  if (a[4] && PyObject_IsTrue(a[4]) == 1)
    fail(ErrorKind::Runtime, "Only Tensors of floating point and complex dtype can require gradients");
  return wrap(
      ops::randint(low, high, dims_arg("randint", "size", size), dtype_arg("randint", a[3]).value_or(DType::Int64)));
}

DYN_FAST(f_arange) {
  PyObject* a[6];
  parse_args("arange", args, nargs, kw, {"start", "end", "step", "dtype", "requires_grad", "device"}, 1, a);
  Scalar start = Scalar::from_int(0), end, step = Scalar::from_int(1);
  if (!a[1] || a[1] == Py_None) {
    end = scalar_arg("arange", "end", a[0]);
  } else {
    start = scalar_arg("arange", "start", a[0]);
    end = scalar_arg("arange", "end", a[1]);
  }
  if (a[2]) step = scalar_arg("arange", "step", a[2]);
  check_device("arange", a[5]);
  CreationKw c;
  c.requires_grad = bool_arg("arange", "requires_grad", a[4], false);
  return finish(ops::arange(start, end, step, dtype_arg("arange", a[3])), c);
}

// zeros_like and friends: Kind 0 zeros, 1 ones, 2 empty, 3 rand, 4 randn, 5 full
template <int Kind>
DYN_FAST(f_like) {
  static const char* names[] = {"zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like"};
  const char* fn = names[Kind];
  PyObject* a[5];
  if (Kind == 5)
    parse_args(fn, args, nargs, kw, {"input", "fill_value", "dtype", "requires_grad", "device"}, 2, a);
  else
    parse_args(fn, args, nargs, kw, {"input", "dtype", "requires_grad", "device"}, 1, a);
  check_device(fn, Kind == 5 ? a[4] : a[3]);
  const Tensor& like = tensor_arg(fn, "input", a[0]);
  PyObject* dt = Kind == 5 ? a[2] : a[1];
  PyObject* rg = Kind == 5 ? a[3] : a[2];
  DType d = dtype_arg(fn, dt).value_or(like.dtype());
  CreationKw c;
  c.requires_grad = bool_arg(fn, "requires_grad", rg, false);
  Tensor t;
  switch (Kind) {
    case 0:
      t = ops::full(like.shape(), Scalar::from_int(0), d);
      break;
    case 1:
      t = ops::full(like.shape(), Scalar::from_int(1), d);
      break;
    case 2:
      t = Tensor::empty(like.shape(), d);
      break;
    case 3:
      t = ops::rand(like.shape(), d);
      break;
    case 4:
      t = ops::randn(like.shape(), d);
      break;
    default:
      t = ops::full(like.shape(), scalar_arg(fn, "fill_value", a[1]), d);
      break;
  }
  return finish(t, c);
}

DYN_FAST(f_tensor) {
  PyObject* a[4];
  parse_args("tensor", args, nargs, kw, {"data", "dtype", "requires_grad", "device"}, 1, a);
  check_device("tensor", a[3]);
  CreationKw c;
  c.requires_grad = bool_arg("tensor", "requires_grad", a[2], false);
  return finish(tensor_from_data(a[0], dtype_arg("tensor", a[1])), c);
}

DYN_FAST(f_from_numpy) {
  PyObject* a[1];
  parse_args("from_numpy", args, nargs, kw, {"ndarray"}, 1, a);
  if (!PyObject_CheckBuffer(a[0]))
    throw_type_error(fmt::format("expected np.ndarray (got {})", Py_TYPE(a[0])->tp_name));
  return wrap(tensor_from_buffer(a[0]));
}

std::vector<Tensor> tensor_list(const char* fn, PyObject* seq_obj) {
  if (!PyList_Check(seq_obj) && !PyTuple_Check(seq_obj))
    throw_type_error(
        fmt::format("{}(): argument 'tensors' must be a sequence of Tensors, not {}", fn, Py_TYPE(seq_obj)->tp_name));
  PyObject* seq = PySequence_Fast(seq_obj, "");
  std::vector<Tensor> ts;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    PyObject* o = PySequence_Fast_GET_ITEM(seq, i);
    if (!is_tensor(o)) {
      Py_DECREF(seq);
      throw_type_error(fmt::format("expected Tensor as element {} in argument 0, but got {}", i, Py_TYPE(o)->tp_name));
    }
    ts.push_back(unwrap(o));
  }
  Py_DECREF(seq);
  return ts;
}

template <bool Stack>
DYN_FAST(f_cat) {
  const char* fn = Stack ? "stack" : "cat";
  PyObject* a[2];
  parse_args(fn, args, nargs, kw, {"tensors", "dim"}, 1, a);
  int64_t dim = a[1] ? int_arg(fn, "dim", a[1]) : 0;
  auto ts = tensor_list(fn, a[0]);
  return wrap(Stack ? ops::stack(ts, dim) : ops::cat(ts, dim));
}

DYN_FAST(f_where) {
  PyObject* a[3];
  parse_args("where", args, nargs, kw, {"condition", "input", "other"}, 3, a);
  auto arg = [](PyObject* o) {
    if (is_tensor(o)) return unwrap(o);
    Scalar s = scalar_arg("where", "input", o);
    return ops::full(Dims{}, s, scalar_dtype(s));
  };
  return wrap(ops::where(tensor_arg("where", "condition", a[0]), arg(a[1]), arg(a[2])));
}

DYN_FAST(f_manual_seed) {
  PyObject* a[1];
  parse_args("manual_seed", args, nargs, kw, {"seed"}, 1, a);
  manual_seed(static_cast<uint64_t>(int_arg("manual_seed", "seed", a[0])));
  Py_RETURN_NONE;
}

DYN_FAST(f_initial_seed) {
  parse_args("initial_seed", args, nargs, kw, {}, 0, nullptr);
  return PyLong_FromUnsignedLongLong(initial_seed());
}

DYN_FAST(f_set_num_threads) {
  PyObject* a[1];
  parse_args("set_num_threads", args, nargs, kw, {"num"}, 1, a);
  int64_t n = int_arg("set_num_threads", "num", a[0]);
  DYN_CHECK(n >= 1 && n <= 1024, ErrorKind::Runtime, "set_num_threads expects a positive integer, got {}", n);
  set_num_threads(static_cast<int>(n));
  blas_set_threads(static_cast<int>(n));
  Py_RETURN_NONE;
}

DYN_FAST(f_fail_allocation_after) {
  PyObject* a[1];
  parse_args("_fail_allocation_after", args, nargs, kw, {"n"}, 1, a);
  fail_allocation_after(int_arg("_fail_allocation_after", "n", a[0]));
  Py_RETURN_NONE;
}

DYN_FAST(f_get_num_threads) {
  parse_args("get_num_threads", args, nargs, kw, {}, 0, nullptr);
  return PyLong_FromLong(get_num_threads());
}

DYN_FAST(f_get_default_dtype) {
  parse_args("get_default_dtype", args, nargs, kw, {}, 0, nullptr);
  PyObject* d = dtype_object(default_float_dtype());
  Py_INCREF(d);
  return d;
}

DYN_FAST(f_set_default_dtype) {
  PyObject* a[1];
  parse_args("set_default_dtype", args, nargs, kw, {"d"}, 1, a);
  auto d = dtype_arg("set_default_dtype", a[0]);
  DYN_CHECK(d && is_floating(*d), ErrorKind::Type,
            "only floating-point types are supported as the default type (dyn.float32 or dyn.float64)");
  set_default_float_dtype(*d);
  Py_RETURN_NONE;
}

DYN_FAST(f_blas_info) {
  parse_args("blas_info", args, nargs, kw, {}, 0, nullptr);
  const BlasInfo& b = blas_info();
  return Py_BuildValue("{s:O,s:s,s:s,s:s}", "loaded", b.loaded ? Py_True : Py_False, "library", b.library.c_str(),
                       "core", b.core.c_str(), "float32", b.float32.c_str());
}

DYN_FAST(f_is_grad_enabled) {
  parse_args("is_grad_enabled", args, nargs, kw, {}, 0, nullptr);
  return PyBool_FromLong(grad_enabled());
}

DYN_FAST(f_set_grad_enabled) {
  PyObject* a[1];
  parse_args("_set_grad_enabled", args, nargs, kw, {"mode"}, 1, a);
  set_grad_enabled(bool_arg("set_grad_enabled", "mode", a[0], true));
  Py_RETURN_NONE;
}

DYN_FAST(f_is_tensor) {
  PyObject* a[1];
  parse_args("is_tensor", args, nargs, kw, {"obj"}, 1, a);
  return PyBool_FromLong(is_tensor(a[0]));
}

// The op table as data, for the checks that Python has every op the table promises.
DYN_FAST(f_op_table) {
  parse_args("_op_table", args, nargs, kw, {}, 0, nullptr);
  PyObject* list = PyList_New(0);
  if (!list) return nullptr;
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef& d = op_def(static_cast<OpId>(i));
    auto str = [](std::string_view v) {
      return PyUnicode_FromStringAndSize(v.data(), static_cast<Py_ssize_t>(v.size()));
    };
    PyObject* row = Py_BuildValue("{s:N,s:N,s:i,s:i,s:N,s:N,s:O,s:N}", "name", str(d.name), "class", str(d.class_name),
                                  "inputs", d.num_inputs, "outputs", d.num_outputs, "dtype", str(d.dtype_rule_name),
                                  "formula", str(d.formula_name), "differentiable",
                                  derivative_of(static_cast<OpId>(i)).fn ? Py_True : Py_False, "python", str(d.python));
    if (!row || PyList_Append(list, row) < 0) {
      Py_XDECREF(row);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(row);
  }
  return list;
}

PyMethodDef module_functions[] = {
    DYN_ENTRY("tensor", f_tensor, "tensor(data, dtype=None, requires_grad=False): a new tensor from data"),
    DYN_ENTRY("from_numpy", f_from_numpy, "from_numpy(ndarray): a tensor sharing the array's memory"),
    DYN_ENTRY("zeros", f_fill<0>, "zeros(*size, dtype=None)"),
    DYN_ENTRY("ones", f_fill<1>, "ones(*size, dtype=None)"),
    DYN_ENTRY("empty", f_fill<2>, "empty(*size, dtype=None): uninitialized"),
    DYN_ENTRY("full", f_full, "full(size, fill_value, dtype=None)"),
    DYN_ENTRY("rand", f_random<0>, "rand(*size, dtype=None): uniform in [0, 1)"),
    DYN_ENTRY("randn", f_random<1>, "randn(*size, dtype=None): standard normal"),
    DYN_ENTRY("randint", f_randint, "randint(low=0, high, size, dtype=dyn.int64)"),
    DYN_ENTRY("arange", f_arange, "arange(end) or arange(start, end, step=1, dtype=None)"),
    DYN_ENTRY("zeros_like", f_like<0>, "zeros_like(input, dtype=None)"),
    DYN_ENTRY("ones_like", f_like<1>, "ones_like(input, dtype=None)"),
    DYN_ENTRY("empty_like", f_like<2>, "empty_like(input, dtype=None)"),
    DYN_ENTRY("rand_like", f_like<3>, "rand_like(input, dtype=None)"),
    DYN_ENTRY("randn_like", f_like<4>, "randn_like(input, dtype=None)"),
    DYN_ENTRY("full_like", f_like<5>, "full_like(input, fill_value, dtype=None)"),
    DYN_ENTRY("cat", f_cat<false>, "cat(tensors, dim=0)"),
    DYN_ENTRY("stack", f_cat<true>, "stack(tensors, dim=0)"),
    DYN_ENTRY("where", f_where, "where(condition, input, other)"),
    DYN_ENTRY("manual_seed", f_manual_seed, "manual_seed(seed): reset the random generator"),
    DYN_ENTRY("initial_seed", f_initial_seed, "the seed of the random generator"),
    DYN_ENTRY("set_num_threads", f_set_num_threads, "set_num_threads(n): threads for large kernels"),
    DYN_ENTRY("_fail_allocation_after", f_fail_allocation_after,
              "_fail_allocation_after(n): tests only: the n-th tensor allocation from now raises MemoryError, once"),
    DYN_ENTRY("get_num_threads", f_get_num_threads, "threads used for large kernels"),
    DYN_ENTRY("get_default_dtype", f_get_default_dtype, "the dtype of new float tensors"),
    DYN_ENTRY("set_default_dtype", f_set_default_dtype, "set_default_dtype(d): dyn.float32 or dyn.float64"),
    DYN_ENTRY("blas_info", f_blas_info, "which BLAS library and kernel set matrix products use"),
    DYN_ENTRY("is_tensor", f_is_tensor, "is_tensor(obj)"),
    DYN_ENTRY("is_grad_enabled", f_is_grad_enabled, "whether ops record gradients"),
    DYN_ENTRY("_set_grad_enabled", f_set_grad_enabled, "turn gradient recording on or off"),
    DYN_ENTRY("_op_table", f_op_table, "the rows of the op table (core/ops/ops.def) as dicts"),
    {nullptr, nullptr, 0, nullptr},
};

PyObject* size_repr(PyObject* self) {
  PyObject* r = PyTuple_Type.tp_repr(self);
  if (!r) return nullptr;
  // "(2, 3)" -> "dyn.Size([2, 3])"
  std::string s = PyUnicode_AsUTF8(r);
  Py_DECREF(r);
  if (s.size() >= 2) s = s.substr(1, s.size() - 2);
  if (!s.empty() && s.back() == ',') s.pop_back();
  return PyUnicode_FromFormat("dyn.Size([%s])", s.c_str());
}

PyObject* size_numel(PyObject* self, PyObject*) {
  long long n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); ++i) n *= PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
  return PyLong_FromLongLong(n);
}

// Size + tuple and Size[a:b] are Sizes, as torch.Size's (tuple's own would give plain tuples).
PyObject* as_size(PyObject* t) {
  if (!t || !PyTuple_Check(t) || Py_TYPE(t) == SizeType) return t;
  PyObject* s = PyObject_CallOneArg(reinterpret_cast<PyObject*>(SizeType), t);
  Py_DECREF(t);
  return s;
}

PyObject* size_concat(PyObject* self, PyObject* other) {
  return as_size(PyTuple_Type.tp_as_sequence->sq_concat(self, other));
}

PyObject* size_subscript(PyObject* self, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
  return PySlice_Check(key) ? as_size(r) : r;
}

PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "product of the sizes"},
    {nullptr, nullptr, 0, nullptr},
};

PyStructSequence_Field max_fields[] = {
    {"values", "the extreme values"}, {"indices", "where they are"}, {nullptr, nullptr}};
PyStructSequence_Desc max_desc = {"dyn.return_types.max", "(values, indices) of max/min along a dim", max_fields, 2};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_dyn", "The engine of the dyn tensor library.", -1, module_functions};

}  // namespace

}  // namespace dyn::py

PyMODINIT_FUNC PyInit__dyn() {
  using namespace dyn::py;
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return nullptr;
  if (PyType_Ready(&DTypeType) < 0) return nullptr;
  static const char* dnames[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                 "int64", "float16", "bfloat16", "float32", "float64"};
  for (int i = 0; i < dyn::kNumDTypes; ++i) {
    PyObject* o = reinterpret_cast<PyObject*>(&dtype_objects[i]);
    PyObject_Init(o, &DTypeType);
    dtype_objects[i].t = static_cast<dyn::DType>(i);
    Py_INCREF(o);
    PyModule_AddObject(m, dnames[i], o);
  }
  static PyType_Slot size_slots[] = {{Py_tp_repr, reinterpret_cast<void*>(size_repr)},
                                     {Py_sq_concat, reinterpret_cast<void*>(size_concat)},
                                     {Py_mp_subscript, reinterpret_cast<void*>(size_subscript)},
                                     {Py_tp_methods, size_methods},
                                     {Py_tp_doc, const_cast<char*>("The shape of a tensor: a tuple of ints.")},
                                     {0, nullptr}};
  static PyType_Spec size_spec = {"dyn.Size", 0, 0, Py_TPFLAGS_DEFAULT, size_slots};
  PyObject* bases = PyTuple_Pack(1, reinterpret_cast<PyObject*>(&PyTuple_Type));
  SizeType = reinterpret_cast<PyTypeObject*>(PyType_FromSpecWithBases(&size_spec, bases));
  Py_DECREF(bases);
  if (!SizeType) return nullptr;
  Py_INCREF(SizeType);
  PyModule_AddObject(m, "Size", reinterpret_cast<PyObject*>(SizeType));
  MaxReturnType = PyStructSequence_NewType(&max_desc);
  if (!MaxReturnType) return nullptr;
  Py_INCREF(MaxReturnType);
  PyModule_AddObject(m, "max_return_type", reinterpret_cast<PyObject*>(MaxReturnType));
  if (!init_tensor_type(m)) return nullptr;
  if (!init_capture(m)) return nullptr;
  if (!init_lift(m)) return nullptr;
  if (!init_compat(m)) return nullptr;
  PyModule_AddStringConstant(m, "__version__", "0.1.0");
  return m;
}
