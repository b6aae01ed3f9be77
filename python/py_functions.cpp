// dyn.Tensor methods and dyn module functions: argument binding around the eager op API.
#include <vector>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/blas.h"
#include "core/capture/capture.h"
#include "core/error.h"
#include "core/random.h"
#include "core/thread_pool.h"
#include "python/py_common.h"

namespace dyn::py {

namespace {

const Tensor& T(PyObject* self) { return unwrap(self); }
Tensor& Tm(PyObject* self) { return reinterpret_cast<PyTensor*>(self)->t; }

// ---- methods: elementwise ----

template <OpId Op>
DYN_FAST(m_unary) {
  parse_args(op_name(Op).data(), args, nargs, kw, {}, 0, nullptr);
  return wrap(ops::unary(Op, T(self)));
}

template <OpId Op>
DYN_FAST(m_unary_) {
  parse_args(op_name(Op).data(), args, nargs, kw, {}, 0, nullptr);
  ops::unary_(Op, Tm(self));
  Py_INCREF(self);
  return self;
}

// other * alpha, in float32 when other is float16/bfloat16: PyTorch's add keeps alpha and the
// product in float32 and rounds only the sum (p.add_(grad, alpha=-lr) rounds once).
Tensor scaled(const Tensor& other, const Scalar& alpha) {
  return ops::binary(OpId::mul, is_reduced_float(other.dtype()) ? ops::to_dtype(other, DType::Float32) : other, alpha);
}

// other: a tensor or a Python number; alpha (add/sub) scales other first, as torch.add does.
Tensor binary_with(OpId op, const Tensor& a, PyObject* other, PyObject* alpha) {
  Scalar s;
  if (alpha && alpha != Py_None) {
    Scalar al = scalar_arg(op_name(op).data(), "alpha", alpha);
    Tensor o;
    if (is_tensor(other)) {
      o = unwrap(other);
    } else {
      Scalar v = scalar_arg(op_name(op).data(), "other", other);
      o = ops::full(Dims{}, v, scalar_dtype(v));
    }
    const Tensor both[2] = {a, o};
    DType r = result_type(both);
    Tensor out = ops::binary(op, a, scaled(o, al));
    return is_reduced_float(r) && out.dtype() != r ? ops::to_dtype(out, r) : out;
  }
  if (is_tensor(other)) return ops::binary(op, a, unwrap(other));
  if (to_scalar(other, &s)) return ops::binary(op, a, s);
  throw_type_error(
      fmt::format("{}(): argument 'other' must be Tensor or Number, not {}", op_name(op), Py_TYPE(other)->tp_name));
}

template <OpId Op>
DYN_FAST(m_binary) {
  PyObject* a[2];
  parse_args(op_name(Op).data(), args, nargs, kw, {"other", "alpha"}, 1, a);
  if (a[1] && Op != OpId::add && Op != OpId::sub)
    throw_type_error(fmt::format("{}() got an unexpected keyword argument 'alpha'", op_name(Op)));
  return wrap(binary_with(Op, T(self), a[0], a[1]));
}

template <OpId Op>
DYN_FAST(m_binary_) {
  PyObject* a[2];
  parse_args(op_name(Op).data(), args, nargs, kw, {"other", "alpha"}, 1, a);
  Scalar s;
  if (a[1] && a[1] != Py_None) {
    Tensor other = binary_with(OpId::add, ops::full(Dims{}, Scalar::from_int(0), DType::Bool), a[0], nullptr);
    ops::binary_(Op, Tm(self), scaled(other, scalar_arg(op_name(Op).data(), "alpha", a[1])));
  } else if (is_tensor(a[0])) {
    ops::binary_(Op, Tm(self), unwrap(a[0]));
  } else {
    ops::binary_(Op, Tm(self), scalar_arg(op_name(Op).data(), "other", a[0]));
  }
  Py_INCREF(self);
  return self;
}

DYN_FAST(m_zero_) {
  parse_args("zero_", args, nargs, kw, {}, 0, nullptr);
  ops::fill_(Tm(self), Scalar::from_int(0));
  Py_INCREF(self);
  return self;
}

DYN_FAST(m_fill_) {
  PyObject* a[1];
  parse_args("fill_", args, nargs, kw, {"value"}, 1, a);
  if (is_tensor(a[0]))
    ops::copy_(Tm(self), unwrap(a[0]));
  else
    ops::fill_(Tm(self), scalar_arg("fill_", "value", a[0]));
  Py_INCREF(self);
  return self;
}

DYN_FAST(m_copy_) {
  PyObject* a[1];
  parse_args("copy_", args, nargs, kw, {"src"}, 1, a);
  ops::copy_(Tm(self), tensor_arg("copy_", "src", a[0]));
  Py_INCREF(self);
  return self;
}

Tensor as_tensor_like(PyObject* o, const Tensor& like) {
  if (is_tensor(o)) return unwrap(o);
  Scalar s = scalar_arg("where", "other", o);
  // A Python number stands as a 0-dim tensor of its own kind, so promotion treats it as a scalar.
  (void)like;
  return ops::full(Dims{}, s, scalar_dtype(s));
}

DYN_FAST(m_where) {
  PyObject* a[2];
  parse_args("where", args, nargs, kw, {"condition", "other"}, 2, a);
  return wrap(ops::where(tensor_arg("where", "condition", a[0]), T(self), as_tensor_like(a[1], T(self))));
}

template <bool InPlace>
DYN_FAST(m_clamp) {
  PyObject* a[2];
  const char* fn = InPlace ? "clamp_" : "clamp";
  parse_args(fn, args, nargs, kw, {"min", "max"}, 0, a);
  std::optional<Scalar> lo, hi;
  if (a[0] && a[0] != Py_None) lo = scalar_arg(fn, "min", a[0]);
  if (a[1] && a[1] != Py_None) hi = scalar_arg(fn, "max", a[1]);
  if (!InPlace) return wrap(ops::clamp(T(self), lo, hi));
  ops::clamp_(Tm(self), lo, hi);
  Py_INCREF(self);
  return self;
}

// ---- methods: reductions ----

template <OpId Op>
DYN_FAST(m_reduce) {
  PyObject* a[3];
  const char* fn = op_name(Op).data();
  parse_args(fn, args, nargs, kw, {"dim", "keepdim", "dtype"}, 0, a);
  Dims dims = a[0] && a[0] != Py_None ? dims_arg(fn, "dim", a[0]) : Dims{};
  DYN_CHECK(!(a[0] && a[0] != Py_None && dims.empty()) || Op == OpId::sum || Op == OpId::mean, ErrorKind::Runtime,
            "{}(): dim must not be empty", fn);
  return wrap(ops::reduce(Op, T(self), dims, bool_arg(fn, "keepdim", a[1], false), dtype_arg(fn, a[2])));
}

PyObject* make_max_return(std::pair<Tensor, Tensor> r) {
  PyObject* o = PyStructSequence_New(MaxReturnType);
  if (!o) throw PythonErrorSet{};
  PyStructSequence_SetItem(o, 0, wrap(std::move(r.first)));
  PyStructSequence_SetItem(o, 1, wrap(std::move(r.second)));
  return o;
}

template <bool IsMin>
DYN_FAST(m_max) {
  PyObject* a[2];
  const char* fn = IsMin ? "min" : "max";
  parse_args(fn, args, nargs, kw, {"dim", "keepdim"}, 0, a);
  if (!a[0] || a[0] == Py_None) {
    const Tensor& t = T(self);
    DYN_CHECK(t.numel() > 0, ErrorKind::Runtime,
              "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
              "the 'dim' argument.",
              fn);
    return wrap(ops::reduce(IsMin ? OpId::amin : OpId::amax, t, Dims{}, false));
  }
  if (is_tensor(a[0])) return wrap(ops::binary(IsMin ? OpId::minimum : OpId::maximum, T(self), unwrap(a[0])));
  return make_max_return(ops::max_dim(T(self), int_arg(fn, "dim", a[0]), bool_arg(fn, "keepdim", a[1], false), IsMin));
}

// all()/any(): whether every/some element is nonzero, as a bool tensor (reduced like amin/amax).
template <bool Any>
DYN_FAST(m_all) {
  PyObject* a[2];
  const char* fn = Any ? "any" : "all";
  parse_args(fn, args, nargs, kw, {"dim", "keepdim"}, 0, a);
  Dims dims = a[0] && a[0] != Py_None ? dims_arg(fn, "dim", a[0]) : Dims{};
  Tensor b = ops::to_dtype(T(self), DType::Bool);
  if (b.numel() == 0) return wrap(ops::full(Dims{}, Scalar::from_bool(!Any), DType::Bool));
  return wrap(ops::reduce(Any ? OpId::amax : OpId::amin, b, dims, bool_arg(fn, "keepdim", a[1], false)));
}

template <bool IsMin>
DYN_FAST(m_argmax) {
  PyObject* a[2];
  const char* fn = IsMin ? "argmin" : "argmax";
  parse_args(fn, args, nargs, kw, {"dim", "keepdim"}, 0, a);
  std::optional<int64_t> dim;
  if (a[0] && a[0] != Py_None) dim = int_arg(fn, "dim", a[0]);
  return wrap(ops::argmax(T(self), dim, bool_arg(fn, "keepdim", a[1], false), IsMin));
}

template <bool Log>
DYN_FAST(m_softmax) {
  PyObject* a[2];
  const char* fn = Log ? "log_softmax" : "softmax";
  parse_args(fn, args, nargs, kw, {"dim", "dtype"}, 1, a);
  Tensor x = T(self);
  if (auto d = dtype_arg(fn, a[1])) x = ops::to_dtype(x, *d);
  return wrap(ops::softmax(x, int_arg(fn, "dim", a[0]), Log));
}

DYN_FAST(m_matmul) {
  PyObject* a[1];
  parse_args("matmul", args, nargs, kw, {"other"}, 1, a);
  return wrap(autocast_matmul(T(self), tensor_arg("matmul", "other", a[0])));
}

// ---- methods: shapes and views ----

DYN_FAST(m_view) {
  if (kw) throw_type_error("view() takes the shape as positional arguments");
  if (nargs == 1 && Py_TYPE(args[0]) == &DTypeType) {
    // The bytes as another dtype: a view of the same memory, outside autograd (as in PyTorch,
    // where view(dtype) is not differentiable). Its value must be there: a compiled region breaks.
    DType d = reinterpret_cast<PyDType*>(args[0])->t;
    if (d == T(self).dtype()) return wrap(ops::view(T(self), T(self).shape()));
    ensure_materialized(T(self), BreakKind::Numpy, ".view(dtype)");
    return wrap(T(self).reinterpret(d));
  }
  return wrap(ops::view(T(self), shape_args("view", args, nargs)));
}

DYN_FAST(m_reshape) {
  if (kw) throw_type_error("reshape() takes the shape as positional arguments");
  return wrap(ops::reshape(T(self), shape_args("reshape", args, nargs)));
}

DYN_FAST(m_expand) {
  if (kw) throw_type_error("expand() takes the sizes as positional arguments");
  return wrap(ops::expand(T(self), shape_args("expand", args, nargs)));
}

DYN_FAST(m_expand_as) {
  PyObject* a[1];
  parse_args("expand_as", args, nargs, kw, {"other"}, 1, a);
  return wrap(ops::expand(T(self), tensor_arg("expand_as", "other", a[0]).shape()));
}

DYN_FAST(m_permute) {
  if (kw) throw_type_error("permute() takes the dims as positional arguments");
  return wrap(ops::permute(T(self), shape_args("permute", args, nargs)));
}

DYN_FAST(m_transpose) {
  PyObject* a[2];
  parse_args("transpose", args, nargs, kw, {"dim0", "dim1"}, 2, a);
  return wrap(ops::transpose(T(self), int_arg("transpose", "dim0", a[0]), int_arg("transpose", "dim1", a[1])));
}

DYN_FAST(m_t) {
  parse_args("t", args, nargs, kw, {}, 0, nullptr);
  DYN_CHECK(T(self).ndim() <= 2, ErrorKind::Runtime, "t() expects a tensor with <= 2 dimensions, but self is {}D",
            T(self).ndim());
  return wrap(T(self).ndim() < 2 ? T(self) : ops::transpose(T(self), 0, 1));
}

DYN_FAST(m_flatten) {
  PyObject* a[2];
  parse_args("flatten", args, nargs, kw, {"start_dim", "end_dim"}, 0, a);
  int64_t s = a[0] ? int_arg("flatten", "start_dim", a[0]) : 0;
  int64_t e = a[1] ? int_arg("flatten", "end_dim", a[1]) : -1;
  return wrap(ops::flatten(T(self), s, e));
}

DYN_FAST(m_unsqueeze) {
  PyObject* a[1];
  parse_args("unsqueeze", args, nargs, kw, {"dim"}, 1, a);
  return wrap(ops::unsqueeze(T(self), int_arg("unsqueeze", "dim", a[0])));
}

DYN_FAST(m_squeeze) {
  PyObject* a[1];
  parse_args("squeeze", args, nargs, kw, {"dim"}, 0, a);
  std::optional<int64_t> d;
  if (a[0] && a[0] != Py_None) d = int_arg("squeeze", "dim", a[0]);
  return wrap(ops::squeeze(T(self), d));
}

DYN_FAST(m_contiguous) {
  parse_args("contiguous", args, nargs, kw, {}, 0, nullptr);
  return wrap(ops::contiguous(T(self)));
}

DYN_FAST(m_is_contiguous) {
  parse_args("is_contiguous", args, nargs, kw, {}, 0, nullptr);
  return PyBool_FromLong(T(self).is_contiguous());
}

DYN_FAST(m_size) {
  PyObject* a[1];
  parse_args("size", args, nargs, kw, {"dim"}, 0, a);
  const Tensor& t = T(self);
  if (!a[0] || a[0] == Py_None) return make_size(t.shape());
  return PyLong_FromLongLong(t.size(wrap_dim(int_arg("size", "dim", a[0]), t.ndim())));
}

DYN_FAST(m_stride) {
  PyObject* a[1];
  parse_args("stride", args, nargs, kw, {"dim"}, 0, a);
  const Tensor& t = T(self);
  if (a[0] && a[0] != Py_None)
    return PyLong_FromLongLong(t.strides()[wrap_dim(int_arg("stride", "dim", a[0]), t.ndim())]);
  PyObject* tup = PyTuple_New(t.ndim());
  for (int i = 0; i < t.ndim(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(t.strides()[i]));
  return tup;
}

DYN_FAST(m_storage_offset) {
  parse_args("storage_offset", args, nargs, kw, {}, 0, nullptr);
  return PyLong_FromLongLong(T(self).offset());
}

DYN_FAST(m_dim) {
  parse_args("dim", args, nargs, kw, {}, 0, nullptr);
  return PyLong_FromLong(T(self).ndim());
}

DYN_FAST(m_numel) {
  parse_args("numel", args, nargs, kw, {}, 0, nullptr);
  return PyLong_FromLongLong(T(self).numel());
}

DYN_FAST(m_gather) {
  PyObject* a[2];
  parse_args("gather", args, nargs, kw, {"dim", "index"}, 2, a);
  return wrap(ops::gather(T(self), int_arg("gather", "dim", a[0]), tensor_arg("gather", "index", a[1])));
}

DYN_FAST(m_index_select) {
  PyObject* a[2];
  parse_args("index_select", args, nargs, kw, {"dim", "index"}, 2, a);
  const Tensor& idx = tensor_arg("index_select", "index", a[1]);
  DYN_CHECK(idx.ndim() <= 1, ErrorKind::Index, "index_select(): Index is supposed to be a vector");
  return wrap(ops::index(T(self), int_arg("index_select", "dim", a[0]), idx));
}

// ---- methods: conversion ----

DYN_FAST(m_to) {
  // to(dtype), to(device), to(device, dtype), to(other), with non_blocking= and copy= as PyTorch.
  PyObject* a[5];
  parse_args("to", args, nargs, kw, {"dtype", "device", "non_blocking", "copy", "memory_format"}, 0, a);
  PyObject* d = a[0];
  if (d && d != Py_None && !is_tensor(d) && Py_TYPE(d) != &DTypeType) {  // a device first
    check_device("to", d);
    d = a[1] && Py_TYPE(a[1]) == &DTypeType ? a[1] : nullptr;
  } else {
    check_device("to", a[1]);
  }
  if (a[3] && PyObject_IsTrue(a[3])) {
    std::optional<DType> want = d && is_tensor(d) ? std::optional<DType>(unwrap(d).dtype()) : dtype_arg("to", d);
    return wrap(ops::to_dtype(ops::clone(T(self)), want.value_or(T(self).dtype())));
  }
  // No change asked for: the tensor itself, as in PyTorch (in-place edits of the result reach it).
  auto same = [&] {
    Py_INCREF(self);
    return self;
  };
  if (d && is_tensor(d))
    return unwrap(d).dtype() == T(self).dtype() ? same() : wrap(ops::to_dtype(T(self), unwrap(d).dtype()));
  auto dt = dtype_arg("to", d);
  return !dt || *dt == T(self).dtype() ? same() : wrap(ops::to_dtype(T(self), *dt));
}

template <DType D>
DYN_FAST(m_as) {
  parse_args("to", args, nargs, kw, {}, 0, nullptr);
  if (T(self).dtype() == D) {  // x.float() of a float tensor is x, as in PyTorch
    Py_INCREF(self);
    return self;
  }
  return wrap(ops::to_dtype(T(self), D));
}

DYN_FAST(m_clone) {
  parse_args("clone", args, nargs, kw, {}, 0, nullptr);
  return wrap(ops::clone(T(self)));
}

DYN_FAST(m_detach) {
  parse_args("detach", args, nargs, kw, {}, 0, nullptr);
  return wrap(dyn::detach(T(self)));
}

DYN_FAST(m_backward) {
  PyObject* a[4];
  parse_args("backward", args, nargs, kw, {"gradient", "retain_graph", "create_graph", "inputs"}, 0, a);
  bool create_graph = a[2] && a[2] != Py_None && PyObject_IsTrue(a[2]);
  const Tensor* g = a[0] && a[0] != Py_None ? &tensor_arg("backward", "gradient", a[0]) : nullptr;
  std::vector<Tensor> inputs;
  bool has_inputs = a[3] && a[3] != Py_None;
  if (has_inputs && is_tensor(a[3])) {
    inputs.push_back(unwrap(a[3]));
  } else if (has_inputs) {
    PyObject* fast = PySequence_Fast(a[3], "backward(): inputs must be a tensor or a sequence of tensors");
    if (!fast) return nullptr;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
      PyObject* o = PySequence_Fast_GET_ITEM(fast, i);
      if (!is_tensor(o)) {
        Py_DECREF(fast);
        throw_type_error("backward(): inputs must be a tensor or a sequence of tensors");
      }
      inputs.push_back(unwrap(o));
    }
    Py_DECREF(fast);
  }
  // retain_graph defaults to create_graph, as PyTorch's
  bool retain = a[1] && a[1] != Py_None ? PyObject_IsTrue(a[1]) : create_graph;
  dyn::backward(T(self), g, retain, has_inputs ? &inputs : nullptr, create_graph);
  Py_RETURN_NONE;
}

DYN_FAST(m_grad_fn) {
  parse_args("_grad_fn_name", args, nargs, kw, {}, 0, nullptr);
  auto fn = grad_fn_of(T(self));
  if (!fn) Py_RETURN_NONE;
  return PyUnicode_FromString(fn->name().c_str());
}

DYN_FAST(m_item) {
  parse_args("item", args, nargs, kw, {}, 0, nullptr);
  const Tensor& t = T(self);
  ensure_materialized(t, BreakKind::Item, ".item()");
  if (is_floating(t.dtype())) return PyFloat_FromDouble(ops::item_double(t));
  if (t.dtype() == DType::Bool) return PyBool_FromLong(ops::item_int(t));
  return PyLong_FromLongLong(ops::item_int(t));
}

DYN_FAST(m_tolist) {
  parse_args("tolist", args, nargs, kw, {}, 0, nullptr);
  ensure_materialized(T(self), BreakKind::ToList, ".tolist()");
  return tensor_to_list(T(self));
}

DYN_FAST(m_numpy) {
  parse_args("numpy", args, nargs, kw, {}, 0, nullptr);
  // The array would share memory autograd does not see writes to: PyTorch refuses too.
  DYN_CHECK(!requires_grad(T(self)), ErrorKind::Runtime,
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  ensure_materialized(T(self), BreakKind::Numpy, ".numpy()");
  if (T(self).dtype() == DType::BFloat16) throw_type_error("Got unsupported ScalarType BFloat16");  // numpy has none
  static PyObject* asarray = nullptr;
  if (!asarray) {
    PyObject* np = PyImport_ImportModule("numpy");
    if (!np) return nullptr;
    asarray = PyObject_GetAttrString(np, "asarray");
    Py_DECREF(np);
    if (!asarray) return nullptr;
  }
  return PyObject_CallOneArg(asarray, self);
}

DYN_FAST(m_requires_grad_) {
  PyObject* a[1];
  parse_args("requires_grad_", args, nargs, kw, {"requires_grad"}, 0, a);
  if (PyObject_SetAttrString(self, "requires_grad", a[0] ? a[0] : Py_True) < 0) return nullptr;
  Py_INCREF(self);
  return self;
}

}  // namespace

namespace {

// The methods of the op table's elementwise rows: x.name(...) and, where the python column says
// I, x.name_(...) in place. Every other method below is bound by hand.
template <OpId Op>
PyCFunction out_of_place() {
  if constexpr (formula_of(Op) == FormulaKind::unary) return fast_cfunction<m_unary<Op>>();
  return fast_cfunction<m_binary<Op>>();
}
template <OpId Op>
PyCFunction in_place() {
  if constexpr (formula_of(Op) == FormulaKind::unary) return fast_cfunction<m_unary_<Op>>();
  return fast_cfunction<m_binary_<Op>>();
}
struct TableMethods {
  OpId op;
  PyCFunction fn, fn_;
};

PyMethodDef hand_methods[] = {
    DYN_ENTRY("zero_", m_zero_, "fill with zeros in place"),
    DYN_ENTRY("fill_", m_fill_, "fill with a value in place"),
    DYN_ENTRY("copy_", m_copy_, "copy (broadcast, cast) src into this tensor"),
    DYN_ENTRY("where", m_where, "where(condition, other): self where condition else other"),
    DYN_ENTRY("clamp", m_clamp<false>, "clamp(min=None, max=None)"),
    DYN_ENTRY("clamp_", m_clamp<true>, "clamp(min=None, max=None) in place"),
    DYN_ENTRY("clip", m_clamp<false>, "alias of clamp"),
    DYN_ENTRY("sum", m_reduce<OpId::sum>, "sum(dim=None, keepdim=False, dtype=None)"),
    DYN_ENTRY("mean", m_reduce<OpId::mean>, "mean(dim=None, keepdim=False, dtype=None)"),
    DYN_ENTRY("amax", m_reduce<OpId::amax>, "amax(dim=None, keepdim=False)"),
    DYN_ENTRY("amin", m_reduce<OpId::amin>, "amin(dim=None, keepdim=False)"),
    DYN_ENTRY("max", m_max<false>, "max() or max(dim, keepdim=False) -> (values, indices)"),
    DYN_ENTRY("min", m_max<true>, "min() or min(dim, keepdim=False) -> (values, indices)"),
    DYN_ENTRY("all", m_all<false>, "all(dim=None, keepdim=False): every element nonzero"),
    DYN_ENTRY("any", m_all<true>, "any(dim=None, keepdim=False): some element nonzero"),
    DYN_ENTRY("argmax", m_argmax<false>, "argmax(dim=None, keepdim=False)"),
    DYN_ENTRY("argmin", m_argmax<true>, "argmin(dim=None, keepdim=False)"),
    DYN_ENTRY("softmax", m_softmax<false>, "softmax(dim)"),
    DYN_ENTRY("log_softmax", m_softmax<true>, "log_softmax(dim)"),
    DYN_ENTRY("matmul", m_matmul, "matrix product with broadcasting"),
    DYN_ENTRY("view", m_view, "view(*shape) or view(dtype): same data, new shape or dtype of its size (no copy)"),
    DYN_ENTRY("reshape", m_reshape, "reshape(*shape): a view when possible, else a copy"),
    DYN_ENTRY("expand", m_expand, "expand(*sizes): broadcast view"),
    DYN_ENTRY("expand_as", m_expand_as, "expand_as(other)"),
    DYN_ENTRY("permute", m_permute, "permute(*dims)"),
    DYN_ENTRY("transpose", m_transpose, "transpose(dim0, dim1)"),
    DYN_ENTRY("t", m_t, "transpose of a <= 2-D tensor"),
    DYN_ENTRY("flatten", m_flatten, "flatten(start_dim=0, end_dim=-1)"),
    DYN_ENTRY("unsqueeze", m_unsqueeze, "unsqueeze(dim)"),
    DYN_ENTRY("squeeze", m_squeeze, "squeeze(dim=None)"),
    DYN_ENTRY("contiguous", m_contiguous, "a contiguous tensor with the same values"),
    DYN_ENTRY("is_contiguous", m_is_contiguous, "whether the elements are laid out densely in row-major order"),
    DYN_ENTRY("size", m_size, "size(dim=None)"),
    DYN_ENTRY("stride", m_stride, "stride(dim=None)"),
    DYN_ENTRY("storage_offset", m_storage_offset, "offset into the storage, in elements"),
    DYN_ENTRY("dim", m_dim, "number of dimensions"),
    DYN_ENTRY("numel", m_numel, "number of elements"),
    DYN_ENTRY("gather", m_gather, "gather(dim, index)"),
    DYN_ENTRY("index_select", m_index_select, "index_select(dim, index)"),
    DYN_ENTRY("to", m_to, "to(dtype)"),
    DYN_ENTRY("float", m_as<DType::Float32>, "to(dyn.float32)"),
    DYN_ENTRY("double", m_as<DType::Float64>, "to(dyn.float64)"),
    DYN_ENTRY("long", m_as<DType::Int64>, "to(dyn.int64)"),
    DYN_ENTRY("bool", m_as<DType::Bool>, "to(dyn.bool)"),
    DYN_ENTRY("int", m_as<DType::Int32>, "to(dyn.int32)"),
    DYN_ENTRY("short", m_as<DType::Int16>, "to(dyn.int16)"),
    DYN_ENTRY("char", m_as<DType::Int8>, "to(dyn.int8)"),
    DYN_ENTRY("byte", m_as<DType::UInt8>, "to(dyn.uint8)"),
    DYN_ENTRY("half", m_as<DType::Float16>, "to(dyn.float16)"),
    DYN_ENTRY("bfloat16", m_as<DType::BFloat16>, "to(dyn.bfloat16)"),
    DYN_ENTRY("clone", m_clone, "a copy with its own storage"),
    DYN_ENTRY("detach", m_detach, "the same data, outside autograd"),
    DYN_ENTRY("item", m_item, "the value of a one-element tensor as a Python number"),
    DYN_ENTRY("tolist", m_tolist, "nested Python lists"),
    DYN_ENTRY("numpy", m_numpy, "a numpy array sharing this tensor's memory"),
    DYN_ENTRY("requires_grad_", m_requires_grad_, "set requires_grad in place"),
    DYN_ENTRY("backward", m_backward,
              "backward(gradient=None, retain_graph=None, create_graph=False, inputs=None): accumulate gradients into leaves' "
              ".grad (only into inputs' when given)"),
    DYN_ENTRY("_grad_fn_name", m_grad_fn, "the name of the node that made this tensor, or None"),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

PyMethodDef* tensor_methods() {
  static std::vector<PyMethodDef> all = [] {
    const TableMethods kTableMethods[] = {
#define DYN_OP(n, ...) {OpId::n, out_of_place<OpId::n>(), in_place<OpId::n>()},
#include "core/ops/ops.def"
#undef DYN_OP
    };
    static std::vector<std::string> names;  // PyMethodDef keeps the pointers
    names.reserve(2 * kNumOps);
    std::vector<PyMethodDef> v;
    for (const TableMethods& m : kTableMethods) {
      const OpDef& d = op_def(m.op);
      if (d.formula == FormulaKind::none) continue;
      if (d.python.find('M') != std::string_view::npos) {
        names.emplace_back(d.name);
        v.push_back({names.back().c_str(), m.fn, METH_FASTCALL | METH_KEYWORDS, "elementwise, as torch.Tensor's"});
      }
      if (d.python.find('I') != std::string_view::npos) {
        names.emplace_back(std::string(d.name) + "_");
        v.push_back({names.back().c_str(), m.fn_, METH_FASTCALL | METH_KEYWORDS, "in place, as torch.Tensor's"});
      }
    }
    for (PyMethodDef* h = hand_methods; h->ml_name; ++h) v.push_back(*h);
    v.push_back({nullptr, nullptr, 0, nullptr});
    return v;
  }();
  return all.data();
}

}  // namespace dyn::py
