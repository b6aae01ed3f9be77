// dyn.Tensor: the Python type over engine tensors. Hot operators use the C number protocol
// directly (no generic dispatcher) so a tiny op costs little more than its kernel.

#include <unordered_map>
#include <vector>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/error.h"
#include "core/format.h"
#include "python/py_common.h"

namespace dyn::py {

namespace {

using ops::binary;

inline PyObject* self_ref(PyObject* self) {
  Py_INCREF(self);
  return self;
}

// ---- number protocol ----

PyObject* binary_op(OpId op, PyObject* a, PyObject* b) {
  DYN_TRY
  Scalar s;
  if (is_tensor(a)) {
    if (is_tensor(b)) return wrap(binary(op, unwrap(a), unwrap(b)));
    if (to_scalar(b, &s)) return wrap(binary(op, unwrap(a), s, false));
  } else if (to_scalar(a, &s)) {
    return wrap(binary(op, unwrap(b), s, true));
  }
  Py_RETURN_NOTIMPLEMENTED;
  DYN_CATCH
}

PyObject* inplace_op(OpId op, PyObject* self, PyObject* b) {
  DYN_TRY
  Tensor& t = reinterpret_cast<PyTensor*>(self)->t;
  Scalar s;
  if (is_tensor(b))
    ops::binary_(op, t, unwrap(b));
  else if (to_scalar(b, &s))
    ops::binary_(op, t, s);
  else
    Py_RETURN_NOTIMPLEMENTED;
  return self_ref(self);
  DYN_CATCH
}

#define DYN_NB(name, op) \
  PyObject* nb_##name(PyObject* a, PyObject* b) { return binary_op(OpId::op, a, b); }
DYN_NB(add, add)
DYN_NB(sub, sub)
DYN_NB(mul, mul)
DYN_NB(truediv, div)
DYN_NB(floordiv, floor_divide)
DYN_NB(rem, remainder)
#undef DYN_NB
#define DYN_NBI(name, op) \
  PyObject* nb_i##name(PyObject* a, PyObject* b) { return inplace_op(OpId::op, a, b); }
DYN_NBI(add, add)
DYN_NBI(sub, sub)
DYN_NBI(mul, mul)
DYN_NBI(truediv, div)
#undef DYN_NBI

PyObject* nb_pow(PyObject* a, PyObject* b, PyObject*) { return binary_op(OpId::pow, a, b); }

// & | ^ of bools are the logical ops (what graphs of masks print); of integers (or an integer and
// a bool) the bitwise ones, which reject floats as PyTorch does.
PyObject* logical_or_bitwise(OpId logical, OpId bitwise, PyObject* a, PyObject* b) {
  DYN_TRY
  auto is_bool = [](PyObject* o) { return is_tensor(o) ? unwrap(o).dtype() == DType::Bool : PyBool_Check(o) != 0; };
  return binary_op(is_bool(a) && is_bool(b) ? logical : bitwise, a, b);
  DYN_CATCH
}
PyObject* nb_and(PyObject* a, PyObject* b) { return logical_or_bitwise(OpId::logical_and, OpId::bitwise_and, a, b); }
PyObject* nb_or(PyObject* a, PyObject* b) { return logical_or_bitwise(OpId::logical_or, OpId::bitwise_or, a, b); }
PyObject* nb_xor(PyObject* a, PyObject* b) { return logical_or_bitwise(OpId::logical_xor, OpId::bitwise_xor, a, b); }

PyObject* nb_neg(PyObject* a) {
  DYN_TRY return wrap(ops::unary(OpId::neg, unwrap(a)));
  DYN_CATCH
}
PyObject* nb_pos(PyObject* a) { return self_ref(a); }
PyObject* nb_abs(PyObject* a) {
  DYN_TRY return wrap(ops::unary(OpId::abs, unwrap(a)));
  DYN_CATCH
}
PyObject* nb_invert(PyObject* a) {
  DYN_TRY
  const Tensor& t = unwrap(a);
  DYN_CHECK(!is_floating(t.dtype()), ErrorKind::Type,
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return wrap(ops::unary(t.dtype() == DType::Bool ? OpId::logical_not : OpId::bitwise_not, t));
  DYN_CATCH
}

PyObject* nb_matmul(PyObject* a, PyObject* b) {
  if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
  DYN_TRY return wrap(autocast_matmul(unwrap(a), unwrap(b)));
  DYN_CATCH
}

void check_one_element(const Tensor& t, const char* what) {
  DYN_CHECK(t.numel() == 1, ErrorKind::Runtime, "{} of Tensor with more than one value is ambiguous", what);
}

int nb_bool(PyObject* a) {
  try {
    check_one_element(unwrap(a), "Boolean value");
    ensure_materialized(unwrap(a), BreakKind::DataDependentBranch, "bool()");
    return ops::item_double(unwrap(a)) != 0.0;
  } catch (...) {
    translate_exception();
    return -1;
  }
}

PyObject* nb_float(PyObject* a) {
  DYN_TRY
  ensure_materialized(unwrap(a), BreakKind::Item, "float()");
  return PyFloat_FromDouble(ops::item_double(unwrap(a)));
  DYN_CATCH
}
PyObject* nb_int(PyObject* a) {
  DYN_TRY
  ensure_materialized(unwrap(a), BreakKind::Item, "int()");
  return PyLong_FromLongLong(ops::item_int(unwrap(a)));
  DYN_CATCH
}
PyObject* nb_index(PyObject* a) {
  DYN_TRY
  const Tensor& t = unwrap(a);
  DYN_CHECK(!is_floating(t.dtype()) && t.numel() == 1, ErrorKind::Type,
            "only integer tensors of a single element can be converted to an index");
  ensure_materialized(t, BreakKind::Item, "a tensor used as an index (__index__)");
  return PyLong_FromLongLong(ops::item_int(t));
  DYN_CATCH
}

PyNumberMethods number_methods = [] {
  PyNumberMethods m{};
  m.nb_add = nb_add;
  m.nb_subtract = nb_sub;
  m.nb_multiply = nb_mul;
  m.nb_true_divide = nb_truediv;
  m.nb_floor_divide = nb_floordiv;
  m.nb_remainder = nb_rem;
  m.nb_power = nb_pow;
  m.nb_negative = nb_neg;
  m.nb_positive = nb_pos;
  m.nb_absolute = nb_abs;
  m.nb_invert = nb_invert;
  m.nb_and = nb_and;
  m.nb_or = nb_or;
  m.nb_xor = nb_xor;
  m.nb_bool = nb_bool;
  m.nb_float = nb_float;
  m.nb_int = nb_int;
  m.nb_index = nb_index;
  m.nb_matrix_multiply = nb_matmul;
  m.nb_inplace_add = nb_iadd;
  m.nb_inplace_subtract = nb_isub;
  m.nb_inplace_multiply = nb_imul;
  m.nb_inplace_true_divide = nb_itruediv;
  return m;
}();

PyObject* richcompare(PyObject* a, PyObject* b, int op) {
  static const OpId ids[] = {OpId::lt, OpId::le, OpId::eq, OpId::ne, OpId::gt, OpId::ge};
  Scalar s;
  if (!is_tensor(b) && !to_scalar(b, &s)) {
    if (PyErr_Occurred()) return nullptr;
    // t == "x" is False like any other object comparison, not an error.
    if (op == Py_EQ) Py_RETURN_FALSE;
    if (op == Py_NE) Py_RETURN_TRUE;
    Py_RETURN_NOTIMPLEMENTED;
  }
  return binary_op(ids[op], a, b);
}

// ---- indexing ----

struct IndexPlan {
  Tensor view;                 // after basic indexing
  std::optional<Tensor> tidx;  // an int64 tensor index, applied along tdim
  int tdim = 0;
  std::optional<Tensor> mask;  // a bool mask over the whole tensor
  // Several int64 tensor indices (x[rows, cols]): (dim of view, index), in order; tidx is unset.
  std::vector<std::pair<int, Tensor>> several;
};

Tensor index_tensor_from(PyObject* o) {
  if (is_tensor(o)) return unwrap(o);
  if (PyRange_Check(o)) {  // x[range(2, 5)] indexes as the list of its ints
    PyObject* list = PySequence_List(o);
    if (!list) throw PythonErrorSet{};
    Tensor t;
    try {
      t = tensor_from_data(list, DType::Int64);
    } catch (...) {
      Py_DECREF(list);
      throw;
    }
    Py_DECREF(list);
    return t;
  }
  return tensor_from_data(o, std::nullopt);  // a list of ints
}

IndexPlan plan_index(const Tensor& self, PyObject* index) {
  std::vector<PyObject*> items;
  if (PyTuple_Check(index)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); ++i) items.push_back(PyTuple_GET_ITEM(index, i));
  } else {
    items.push_back(index);
  }
  IndexPlan p;
  // A bool mask covering the tensor selects its elements (a data-dependent shape). A uint8 one
  // still does in PyTorch, with a deprecation warning.
  if (items.size() == 1 && is_tensor(items[0]) &&
      (unwrap(items[0]).dtype() == DType::Bool || unwrap(items[0]).dtype() == DType::UInt8)) {
    Tensor m = unwrap(items[0]);
    if (m.dtype() == DType::UInt8) {
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                       1) < 0)
        throw PythonErrorSet{};
      m = ops::to_dtype(m, DType::Bool);
    }
    DYN_CHECK(m.shape() == self.shape(), ErrorKind::Index,
              "The shape of the mask {} does not match the shape of the indexed tensor {}", dims_str(m.shape()),
              dims_str(self.shape()));
    p.mask = m;
    p.view = self;
    return p;
  }
  int consumed = 0, ellipses = 0;
  for (PyObject* it : items) {
    if (it == Py_Ellipsis)
      ++ellipses;
    else if (it != Py_None)
      ++consumed;
  }
  DYN_CHECK(ellipses <= 1, ErrorKind::Index, "an index can only have a single ellipsis ('...')");
  DYN_CHECK(consumed <= self.ndim(), ErrorKind::Index, "too many indices for tensor of dimension {}", self.ndim());
  Tensor r = self;
  int dim = 0;
  for (PyObject* it : items) {
    if (it == Py_None) {
      r = ops::unsqueeze(r, dim++);
    } else if (it == Py_Ellipsis) {
      dim += self.ndim() - consumed;
    } else if (PySlice_Check(it)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) throw PythonErrorSet{};
      DYN_CHECK(step > 0, ErrorKind::Value, "step must be greater than zero");
      auto* sl = reinterpret_cast<PySliceObject*>(it);
      std::optional<int64_t> b, e;
      if (sl->start != Py_None) b = start;
      if (sl->stop != Py_None) e = stop;
      r = ops::slice(r, dim++, b, e, step);
    } else if (PyLong_Check(it) || (!is_tensor(it) && !PyFloat_Check(it) && PyIndex_Check(it) && !PyBool_Check(it))) {
      r = ops::select(r, dim, int_arg("__getitem__", "index", it));
    } else if (is_tensor(it) || PyList_Check(it) || PyRange_Check(it)) {
      Tensor t = index_tensor_from(it);
      DYN_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32, ErrorKind::Index,
                "tensors used as indices must be long, int, byte or bool tensors (got {}; a byte or bool mask "
                "must cover the whole tensor)",
                dtype_name(t.dtype()));
      if (p.tidx) {  // a second one: all go to `several`
        p.several.emplace_back(p.tdim, *p.tidx);
        p.tidx.reset();
      }
      if (!p.several.empty())
        p.several.emplace_back(dim, t);
      else
        p.tidx = t, p.tdim = dim;
      ++dim;
    } else {
      fail(ErrorKind::Index,
           "only integers, slices (`:`), ellipsis (`...`), None and long or boolean tensors are valid indices (got "
           "{})",
           Py_TYPE(it)->tp_name);
    }
  }
  p.view = r;
  return p;
}

// x[i1, ..., ik] with k int64 tensor indices, as PyTorch (NumPy's advanced indexing): the indices
// broadcast to one shape B and pick elements pointwise; B stands where the indexed dims stood if
// they are adjacent, else first. Composed of differentiable ops: the indexed dims are moved to the
// front, the first index selects rows and each further one gathers along the next dim.
Tensor index_several(const Tensor& view, const std::vector<std::pair<int, Tensor>>& several) {
  int nd = view.ndim();
  Dims B = several[0].second.shape();
  for (size_t j = 1; j < several.size(); ++j) {
    const Dims& s = several[j].second.shape();
    bool ok = true;
    for (int k = 1; k <= std::min(B.size(), s.size()); ++k) {
      int64_t a = B[B.size() - k], b = s[s.size() - k];
      ok = ok && (a == b || a == 1 || b == 1);
    }
    if (!ok) {
      std::string shapes;
      for (const auto& [d, t] : several) shapes += (shapes.empty() ? "" : ", ") + dims_str(t.shape());
      fail(ErrorKind::Index, "shape mismatch: indexing tensors could not be broadcast together with shapes {}", shapes);
    }
    B = broadcast_shapes(B, s);
  }
  int64_t n = numel_of(B);
  bool adjacent = true;
  std::vector<bool> indexed(static_cast<size_t>(nd), false);
  Dims perm;
  for (size_t j = 0; j < several.size(); ++j) {
    adjacent = adjacent && several[j].first == several[0].first + static_cast<int>(j);
    indexed[static_cast<size_t>(several[j].first)] = true;
    perm.push_back(several[j].first);
  }
  for (int d = 0; d < nd; ++d)
    if (!indexed[static_cast<size_t>(d)]) perm.push_back(d);
  Tensor y = ops::permute(view, perm);
  auto flat_index = [&](const Tensor& t, int64_t size) {
    Tensor e = ops::reshape(ops::contiguous(ops::expand(t, B)), Dims{n});
    // Negative indices count from the end; out of range is the kernel's error.
    return ops::where(ops::binary(OpId::lt, e, Scalar::from_int(0)), ops::binary(OpId::add, e, Scalar::from_int(size)),
                      e);
  };
  y = ops::index(y, 0, flat_index(several[0].second, view.size(several[0].first)));
  for (size_t j = 1; j < several.size(); ++j) {
    Tensor idx = flat_index(several[j].second, view.size(several[j].first));
    Dims ones{n};
    for (int d = 1; d < y.ndim(); ++d) ones.push_back(1);
    Dims picked = y.shape();
    picked[1] = 1;
    y = ops::squeeze(ops::gather(y, 1, ops::expand(ops::reshape(idx, ones), picked)), 1);
  }
  // (N, rest...) -> B + rest, and B moved to where the indexed dims were when they were adjacent.
  Dims shape = B;
  for (int d = 1; d < y.ndim(); ++d) shape.push_back(y.size(d));
  y = ops::reshape(y, shape);
  int before = adjacent ? several[0].first : 0;
  if (before > 0) {
    int nb = B.size();
    Dims back;
    for (int d = 0; d < before; ++d) back.push_back(nb + d);
    for (int d = 0; d < nb; ++d) back.push_back(d);
    for (int d = nb + before; d < y.ndim(); ++d) back.push_back(d);
    y = ops::permute(y, back);
  }
  return y;
}

// x[i1, ..., ik] = v: element by element, as the one-index assignment (the indices' values are
// needed: a graph break inside a compile region); a repeated position takes the last value, as
// PyTorch's CPU index_put_.
void assign_several(const Tensor& view, std::vector<std::pair<int, Tensor>> several, bool is_scalar, Scalar s,
                    const Tensor& v) {
  // The target's shape (and the index errors) as reading it gives them.
  Tensor probe = index_several(view, several);
  for (const auto& entry : several)
    ensure_materialized(entry.second, BreakKind::Item, "assignment through index tensors");
  Dims B = several[0].second.shape();
  for (size_t j = 1; j < several.size(); ++j) B = broadcast_shapes(B, several[j].second.shape());
  int64_t n = numel_of(B);
  std::vector<Tensor> idx;
  {
    EagerScope eager;
    for (const auto& entry : several) idx.push_back(ops::contiguous(ops::expand(entry.second, B)));
  }
  // The value, broadcast to the target, with B first and flattened: one row per position.
  Tensor src;
  if (!is_scalar) {
    src = ops::expand(v, probe.shape());
    bool adjacent = true;
    for (size_t j = 0; j < several.size(); ++j)
      adjacent = adjacent && several[j].first == several[0].first + static_cast<int>(j);
    int before = adjacent ? several[0].first : 0;
    int nb = B.size();
    if (before > 0) {
      Dims front;
      for (int d = 0; d < nb; ++d) front.push_back(before + d);
      for (int d = 0; d < before; ++d) front.push_back(d);
      for (int d = before + nb; d < src.ndim(); ++d) front.push_back(d);
      src = ops::permute(src, front);
    }
    Dims rows{n};
    for (int d = nb; d < src.ndim(); ++d) rows.push_back(src.size(d));
    src = ops::reshape(src, rows);
  }
  // Select the later dims first, so that the earlier ones keep their numbers.
  std::vector<size_t> order(several.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = order.size() - 1 - j;
  for (int64_t k = 0; k < n; ++k) {
    Tensor dst = view;
    for (size_t j : order) dst = ops::select(dst, several[j].first, idx[j].data<int64_t>()[k]);
    if (is_scalar)
      ops::fill_(dst, s);
    else
      ops::copy_(dst, ops::select(src, 0, k));
  }
}

// shape broadcasts to target (without growing it).
bool broadcasts_to(const Dims& shape, const Dims& target) {
  int n = shape.size(), m = target.size();
  if (n > m) return false;
  for (int k = 1; k <= n; ++k)
    if (shape[n - k] != 1 && shape[n - k] != target[m - k]) return false;
  return true;
}

PyObject* mp_subscript(PyObject* self, PyObject* index) {
  DYN_TRY
  IndexPlan p = plan_index(unwrap(self), index);
  if (!p.several.empty()) return wrap(index_several(p.view, p.several));
  if (p.mask) return wrap(ops::masked_select(p.view, *p.mask));
  if (p.tidx) return wrap(ops::index(p.view, p.tdim, *p.tidx));
  return wrap(p.view);
  DYN_CATCH
}

int mp_ass_subscript(PyObject* self, PyObject* index, PyObject* value) {
  try {
    if (!value) throw_type_error("dyn tensors do not support item deletion");
    Tensor& base = reinterpret_cast<PyTensor*>(self)->t;
    IndexPlan p = plan_index(base, index);
    // The assignment loops below read the index values as int64.
    if (p.tidx && p.tidx->dtype() != DType::Int64) p.tidx = ops::to_dtype(*p.tidx, DType::Int64);
    for (auto& [d, t] : p.several)
      if (t.dtype() != DType::Int64) t = ops::to_dtype(t, DType::Int64);
    Scalar s;
    bool is_scalar = !is_tensor(value) && to_scalar(value, &s);
    Tensor v = is_scalar ? Tensor() : (is_tensor(value) ? unwrap(value) : tensor_from_data(value, base.dtype()));
    // As PyTorch's assignment: the value's leading size-1 dims are dropped before it broadcasts
    // (buf[i] = v[None]).
    if (v.defined() && v.ndim() > 0 && v.shape()[0] == 1) {
      const Dims& d = v.shape();
      int lead = 0;
      while (lead < d.size() && d[lead] == 1) ++lead;
      Dims rest;
      for (int i = lead; i < d.size(); ++i) rest.push_back(d[i]);
      v = ops::reshape(v, rest);
    }
    if (!p.several.empty()) {
      assign_several(p.view, p.several, is_scalar, s, v);
    } else if (p.mask && !is_scalar && !broadcasts_to(v.shape(), base.shape())) {
      // x[mask] = values, one per true element (PyTorch's index_put_ with a mask): the mask's
      // positions as index tensors, one per dim it covers.
      ensure_materialized(*p.mask, BreakKind::Item, "assignment of values through a mask");
      std::vector<std::pair<int, Tensor>> several;
      {
        EagerScope eager;
        Tensor m = ops::contiguous(ops::to_dtype(*p.mask, DType::Bool));
        const bool* on = m.data<bool>();
        std::vector<std::vector<int64_t>> at(m.ndim());
        Dims i = Dims::filled(m.ndim(), 0);
        for (int64_t k = 0, n = m.numel(); k < n; ++k) {
          if (on[k])
            for (int d = 0; d < m.ndim(); ++d) at[d].push_back(i[d]);
          for (int d = m.ndim() - 1; d >= 0 && ++i[d] == m.size(d); --d) i[d] = 0;
        }
        for (int d = 0; d < m.ndim(); ++d) {
          Tensor t = Tensor::empty(Dims{static_cast<int64_t>(at[d].size())}, DType::Int64);
          std::copy(at[d].begin(), at[d].end(), t.data<int64_t>());
          several.emplace_back(d, t);
        }
      }
      assign_several(p.view, several, false, s, v);
    } else if (p.mask) {
      Tensor src = is_scalar ? ops::full(Dims{}, s, base.dtype()) : v;
      Tensor merged = ops::where(*p.mask, src, base);
      ops::copy_(base, merged);
    } else if (p.tidx) {
      ensure_materialized(*p.tidx, BreakKind::Item, "assignment through an index tensor");
      Tensor idx;
      {
        EagerScope eager;
        idx = ops::contiguous(*p.tidx);
      }
      DYN_CHECK(idx.ndim() <= 1, ErrorKind::NotImplemented,
                "dyn supports assignment through a 1-D index tensor only; got {} dims", idx.ndim());
      Tensor target_shape_probe = ops::index(p.view, p.tdim, idx);
      Tensor src = is_scalar ? Tensor() : ops::expand(v, target_shape_probe.shape());
      for (int64_t k = 0; k < idx.numel(); ++k) {
        int64_t i = idx.data<int64_t>()[k];
        Tensor dst = ops::select(p.view, p.tdim, i);
        if (is_scalar)
          ops::fill_(dst, s);
        else
          ops::copy_(dst, idx.ndim() == 0 ? src : ops::select(src, p.tdim, k));
      }
    } else if (is_scalar) {
      ops::fill_(p.view, s);
    } else {
      ops::copy_(p.view, v);
    }
    return 0;
  } catch (...) {
    translate_exception();
    return -1;
  }
}

Py_ssize_t mp_length(PyObject* self) {
  const Tensor& t = unwrap(self);
  if (t.ndim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return t.size(0);
}

PyMappingMethods mapping_methods = {mp_length, mp_subscript, mp_ass_subscript};

PyObject* tp_iter(PyObject* self) {
  DYN_TRY
  const Tensor& t = unwrap(self);
  DYN_CHECK(t.ndim() > 0, ErrorKind::Type, "iteration over a 0-d tensor");
  PyObject* list = PyList_New(t.size(0));
  if (!list) return nullptr;
  for (int64_t i = 0; i < t.size(0); ++i) PyList_SET_ITEM(list, i, wrap(ops::select(t, 0, i)));
  PyObject* it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
  DYN_CATCH
}

// ---- buffer protocol: numpy.asarray(t) shares memory ----

int bf_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  const Tensor& t = unwrap(self);
  try {
    ensure_materialized(t, BreakKind::Numpy, "the buffer protocol (numpy.asarray)");
    if (!t.impl()->storage_) t.raw_data();  // raises for a poisoned tensor
  } catch (...) {
    translate_exception();
    view->obj = nullptr;
    return -1;
  }
  static const char* formats[] = {"?", "B", "b", "h", "i", "q", "e", nullptr, "f", "d"};
  if (t.dtype() == DType::BFloat16) {
    // Neither the buffer protocol nor numpy has a bfloat16 format.
    PyErr_SetString(PyExc_TypeError, "Got unsupported ScalarType BFloat16");
    return -1;
  }
  int nd = t.ndim();
  auto* dims = new Py_ssize_t[2 * (nd ? nd : 1)];
  for (int i = 0; i < nd; ++i) {
    dims[i] = t.size(i);
    dims[nd + i] = t.strides()[i] * static_cast<Py_ssize_t>(itemsize(t.dtype()));
  }
  view->buf = t.raw_data();
  view->obj = self_ref(self);
  view->len = t.numel() * static_cast<Py_ssize_t>(itemsize(t.dtype()));
  view->readonly = t.storage() && t.storage()->read_only ? 1 : 0;
  view->itemsize = static_cast<Py_ssize_t>(itemsize(t.dtype()));
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(formats[static_cast<int>(t.dtype())]) : nullptr;
  view->ndim = nd;
  view->shape = dims;
  view->strides = dims + nd;
  view->suboffsets = nullptr;
  view->internal = dims;
  return 0;
}

void bf_releasebuffer(PyObject*, Py_buffer* view) { delete[] static_cast<Py_ssize_t*>(view->internal); }

PyBufferProcs buffer_procs = {bf_getbuffer, bf_releasebuffer};

// ---- lifetime, repr ----

void tp_dealloc(PyObject* self) {
  auto* o = reinterpret_cast<PyTensor*>(self);
  if (o->weakrefs) PyObject_ClearWeakRefs(self);
  o->t.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

PyObject* tp_repr(PyObject* self) {
  DYN_TRY
  const Tensor& t = unwrap(self);
  if (Capture::paused() && t.impl()->capture_) {  // stopped at a breakpoint: show, do not sync
    std::string s = "tensor(" + t.impl()->capture_->describe_pending(t.impl()) + ")";
    return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
  }
  ensure_materialized(t, BreakKind::Print, "repr()/print()");
  EagerScope eager;  // formatting takes views of data that is already there
  auto fn = grad_fn_of(t);
  std::string s = format_tensor(t, fn ? "grad_fn=<" + fn->name() + ">" : requires_grad(t) ? "requires_grad=True" : "");
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
  DYN_CATCH
}

PyObject* tp_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  DYN_TRY
  if (kwargs && PyDict_Size(kwargs) > 0)
    throw_type_error("dyn.Tensor() takes no keyword arguments; use dyn.tensor(data, dtype=...)");
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n == 1 && (PyList_Check(PyTuple_GET_ITEM(args, 0)) || is_tensor(PyTuple_GET_ITEM(args, 0))))
    return wrap(tensor_from_data(PyTuple_GET_ITEM(args, 0), default_float_dtype()));
  return wrap(
      ops::full(shape_args("Tensor", &PyTuple_GET_ITEM(args, 0), n), Scalar::from_double(0), default_float_dtype()));
  DYN_CATCH
}

Py_hash_t tp_hash(PyObject* self) { return _Py_HashPointer(self); }

// ---- attributes ----

PyObject* get_shape(PyObject* self, void*) {
  DYN_TRY return make_size(unwrap(self).shape());
  DYN_CATCH
}
PyObject* get_dtype(PyObject* self, void*) { return self_ref(dtype_object(unwrap(self).dtype())); }
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLong(unwrap(self).ndim()); }
PyObject* get_T(PyObject* self, void*) {
  DYN_TRY
  const Tensor& t = unwrap(self);
  Dims perm;
  for (int i = t.ndim() - 1; i >= 0; --i) perm.push_back(i);
  return wrap(ops::permute(t, perm));
  DYN_CATCH
}
PyObject* get_requires_grad(PyObject* self, void*) { return PyBool_FromLong(requires_grad(unwrap(self))); }
int set_requires_grad(PyObject* self, PyObject* v, void*) {
  if (!v || !PyBool_Check(v)) {
    PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
    return -1;
  }
  try {
    dyn::set_requires_grad(unwrap(self), v == Py_True);
  } catch (...) {
    translate_exception();
    return -1;
  }
  return 0;
}
PyObject* get_grad(PyObject* self, void*) {
  const Tensor& g = grad_of(unwrap(self));
  if (!g.defined()) Py_RETURN_NONE;
  DYN_TRY return wrap(g);
  DYN_CATCH
}
int set_grad_attr(PyObject* self, PyObject* v, void*) {
  try {
    if (!v || v == Py_None)
      set_grad(unwrap(self), Tensor());
    else if (is_tensor(v))
      set_grad(unwrap(self), unwrap(v));
    else
      throw_type_error("assigned grad expected to be a Tensor or None");
  } catch (...) {
    translate_exception();
    return -1;
  }
  return 0;
}
PyObject* get_is_leaf(PyObject* self, void*) { return PyBool_FromLong(is_leaf(unwrap(self))); }

// grad_fn: a small object naming the backward node, as torch's (repr "<MulBackward0>", .name()).
struct PyGradFn {
  PyObject_HEAD std::shared_ptr<GradNode> node;
};
void gradfn_dealloc(PyObject* self) {
  reinterpret_cast<PyGradFn*>(self)->node.~shared_ptr();
  Py_TYPE(self)->tp_free(self);
}
PyObject* gradfn_repr(PyObject* self) {
  return PyUnicode_FromFormat("<%s>", reinterpret_cast<PyGradFn*>(self)->node->name().c_str());
}
PyObject* gradfn_name(PyObject* self, PyObject*) {
  return PyUnicode_FromString(reinterpret_cast<PyGradFn*>(self)->node->name().c_str());
}
PyMethodDef gradfn_methods[] = {{"name", gradfn_name, METH_NOARGS, "the node's name"}, {nullptr, nullptr, 0, nullptr}};
PyTypeObject GradFnType = [] {
  // A base type: each node name is a subclass of it.
  PyTypeObject t =
      new_type("dyn.GradFn", sizeof(PyGradFn), gradfn_dealloc, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, nullptr);
  t.tp_repr = gradfn_repr;
  t.tp_methods = gradfn_methods;
  return t;
}();
PyObject* get_grad_fn(PyObject* self, void*) {
  auto fn = grad_fn_of(unwrap(self));
  if (!fn) Py_RETURN_NONE;
  // One Python class per node name (MulBackward0, AccumulateGrad), made on first use: code
  // checks type(t.grad_fn).__name__ as it does with PyTorch.
  static std::unordered_map<std::string, PyTypeObject*> classes;
  std::string name = fn->name();
  auto it = classes.find(name);
  if (it == classes.end()) {
    PyObject* type =
        PyObject_CallFunction(reinterpret_cast<PyObject*>(&PyType_Type), "s(O){s:(),s:s}", name.c_str(),
                              reinterpret_cast<PyObject*>(&GradFnType), "__slots__", "__module__", "dyn.autograd");
    if (!type) return nullptr;
    it = classes.emplace(name, reinterpret_cast<PyTypeObject*>(type)).first;  // kept for the process
  }
  PyTypeObject* cls = it->second;
  PyObject* o = cls->tp_alloc(cls, 0);
  if (!o) return nullptr;
  new (&reinterpret_cast<PyGradFn*>(o)->node) std::shared_ptr<GradNode>(fn);
  return o;
}
PyObject* get_device(PyObject*, void*) { return PyUnicode_FromString("cpu"); }
PyObject* get_version(PyObject* self, void*) {
  DYN_TRY
  return PyLong_FromLongLong(tensor_version(unwrap(self)));
  DYN_CATCH
}
PyObject* get_base(PyObject* self, void*) {
  TensorImpl* b = unwrap(self).impl()->view_base_;
  if (!b) Py_RETURN_NONE;
  return wrap(Tensor::borrow(b));
}

PyGetSetDef getset[] = {
    {"shape", get_shape, nullptr, "the size of each dimension, a dyn.Size", nullptr},
    {"dtype", get_dtype, nullptr, "element type", nullptr},
    {"ndim", get_ndim, nullptr, "number of dimensions", nullptr},
    {"T", get_T, nullptr, "the tensor with its dimensions reversed", nullptr},
    {"requires_grad", get_requires_grad, set_requires_grad, "whether autograd records ops on this tensor", nullptr},
    {"grad", get_grad, set_grad_attr, "the gradient accumulated by backward(), or None", nullptr},
    {"is_leaf", get_is_leaf, nullptr, "created by the user (not by an op that requires grad)", nullptr},
    {"grad_fn", get_grad_fn, nullptr, "the backward node of the op that made this tensor, or None", nullptr},
    {"device", get_device, nullptr, "always 'cpu'", nullptr},
    {"_version", get_version, nullptr, "how many in-place writes its memory has had (autograd checks it)", nullptr},
    {"_base", get_base, nullptr, "the tensor this view (made by a view op) shares memory with, or None", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace

PyMethodDef* tensor_methods();  // py_functions.cpp

PyTypeObject TensorType = [] {
  // A base type: nn.Parameter is a subclass.
  PyTypeObject t = new_type("dyn.Tensor", sizeof(PyTensor), tp_dealloc, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                            "A multi-dimensional array of float32, float64, int64 or bool, like torch.Tensor.");
  t.tp_repr = tp_repr;
  t.tp_as_number = &number_methods;
  t.tp_as_mapping = &mapping_methods;
  t.tp_as_buffer = &buffer_procs;
  t.tp_hash = tp_hash;
  t.tp_richcompare = richcompare;
  t.tp_weaklistoffset = offsetof(PyTensor, weakrefs);
  t.tp_iter = tp_iter;
  t.tp_getset = getset;
  t.tp_new = tp_new;
  return t;
}();

bool init_tensor_type(PyObject* module) {
  TensorType.tp_methods = tensor_methods();  // after static initialization: it reads other files' tables
  if (PyType_Ready(&TensorType) < 0 || PyType_Ready(&GradFnType) < 0) return false;
  // numpy defers binary operators to us, as it does for torch tensors.
  PyObject* prio = PyFloat_FromDouble(1000.0);
  PyDict_SetItemString(TensorType.tp_dict, "__array_priority__", prio);
  Py_DECREF(prio);
  PyType_Modified(&TensorType);
  Py_INCREF(&TensorType);
  return PyModule_AddObject(module, "Tensor", reinterpret_cast<PyObject*>(&TensorType)) == 0;
}

}  // namespace dyn::py
