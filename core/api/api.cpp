// The op API: builds each op's attributes and dispatches it.
#include "core/api/api.h"

#include <cmath>

#include "core/capture/capture.h"
#include "core/dispatch/dispatch.h"
#include "core/error.h"
#include "core/ops/formulas.h"
#include "core/ops/run.h"
#include "core/random.h"

namespace dyn {
bool view_possible(const Tensor& t, const Dims& shape);  // shape_ops.cpp
}

namespace dyn::ops {

namespace {

Tensor run(OpId op, std::initializer_list<Tensor> in, const Attrs& a = {}) {
  return dispatch(op, std::span<const Tensor>(in.begin(), in.size()), a);
}

Attrs with_dims(const Dims& d) {
  Attrs a;
  a.dims = d;
  return a;
}

Attrs with_dim(int64_t d) {
  Attrs a;
  a.dim = d;
  return a;
}

}  // namespace

// ---- creation ----

Tensor full(const Dims& shape, Scalar value, DType dtype) {
  Attrs a = with_dims(shape);
  a.scalar = value;
  a.dtype = dtype;
  return run(OpId::full, {}, a);
}

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype) {
  Attrs a;
  a.scalar = start, a.scalar2 = end, a.scalar3 = step;
  bool any_float = start.kind == Scalar::Float || end.kind == Scalar::Float || step.kind == Scalar::Float;
  a.dtype = dtype ? *dtype : (any_float ? default_float_dtype() : DType::Int64);
  return run(OpId::arange, {}, a);
}

namespace {
Tensor random_op(OpId op, int kind, const Dims& shape, DType dtype, Attrs a) {
  a.dims = shape;
  a.dtype = dtype;
  GeneratorState g = reserve_random(random_blocks(kind, dtype, numel_of(shape)));
  a.seed = g.seed;
  a.offset = g.offset;
  return run(op, {}, a);
}
}  // namespace

Tensor rand(const Dims& shape, DType dtype) {
  DYN_CHECK(is_floating(dtype), ErrorKind::Runtime, "\"check_uniform_bounds\" not implemented for '{}'",
            legacy_dtype_name(dtype));
  return random_op(OpId::rand, 0, shape, dtype, {});
}

Tensor randn(const Dims& shape, DType dtype) {
  DYN_CHECK(is_floating(dtype), ErrorKind::Runtime, "\"normal_kernel_cpu\" not implemented for '{}'",
            legacy_dtype_name(dtype));
  return random_op(OpId::randn, 1, shape, dtype, {});
}

Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype) {
  DYN_CHECK(low < high, ErrorKind::Runtime, "random_ expects 'from' to be less than 'to', but got from={} >= to={}",
            low, high);
  DYN_CHECK(dtype != DType::Bool, ErrorKind::Runtime, "randint is not implemented for bool");
  Attrs a;
  a.i0 = low, a.i1 = high;
  return random_op(OpId::randint, 2, shape, dtype, a);
}

Tensor from_doubles(const std::vector<double>& v, const Dims& shape, DType dtype) {
  for (double x : v)
    DYN_CHECK(fits_dtype(dtype, Scalar::from_double(x)), ErrorKind::Runtime,
              "value cannot be converted to type {} without overflow", dtype_name(dtype));
  Tensor t = Tensor::empty(shape, DType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return to_dtype(t, dtype);
}

Tensor from_ints(const std::vector<int64_t>& v, const Dims& shape, DType dtype) {
  for (int64_t x : v)
    DYN_CHECK(fits_dtype(dtype, Scalar::from_int(x)), ErrorKind::Runtime,
              "value cannot be converted to type {} without overflow", dtype_name(dtype));
  Tensor t = Tensor::empty(shape, DType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return to_dtype(t, dtype);
}

// ---- elementwise ----

Tensor unary(OpId op, const Tensor& a) { return run(op, {a}); }

Tensor binary(OpId op, const Tensor& a, const Tensor& b) { return run(op, {a, b}); }

Tensor binary(OpId op, const Tensor& a, Scalar s, bool scalar_lhs) {
  Attrs at;
  at.scalar = s;
  at.side = scalar_lhs ? ScalarSide::Lhs : ScalarSide::Rhs;
  return run(op, {a}, at);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) { return run(OpId::where, {cond, a, b}); }

namespace {
Attrs clamp_attrs(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Attrs at;
  at.has_lo = lo.has_value();
  at.has_hi = hi.has_value();
  if (lo) at.scalar = *lo;
  if (hi) at.scalar2 = *hi;
  return at;
}
}  // namespace

Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return run(OpId::clamp, {a}, clamp_attrs(lo, hi));
}

Tensor to_dtype(const Tensor& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  Attrs at;
  at.dtype = dtype;
  return run(OpId::cast, {a}, at);
}

Tensor clone(const Tensor& a) {
  Attrs at;
  at.dtype = a.dtype();
  return run(OpId::cast, {a}, at);
}

Tensor contiguous(const Tensor& a) { return a.is_contiguous() ? a : clone(a); }

// ---- in place ----

Tensor& unary_(OpId op, Tensor& self) {
  const Tensor in[1] = {self};
  dispatch_into(op, in, Attrs{}, self);
  return self;
}

Tensor& clamp_(Tensor& self, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Attrs at = clamp_attrs(lo, hi);
  const Tensor in[1] = {self};
  dispatch_into(OpId::clamp, in, at, self);
  return self;
}

Tensor& binary_(OpId op, Tensor& self, const Tensor& b) {
  const Tensor in[2] = {self, b};
  dispatch_into(op, in, Attrs{}, self);
  return self;
}

Tensor& binary_(OpId op, Tensor& self, Scalar s) {
  Attrs at;
  at.scalar = s;
  at.side = ScalarSide::Rhs;
  const Tensor in[1] = {self};
  dispatch_into(op, in, at, self);
  return self;
}

Tensor& fill_(Tensor& self, Scalar v) {
  Attrs at = with_dims(self.shape());
  at.scalar = v;
  at.dtype = self.dtype();
  dispatch_into(OpId::full, {}, at, self);
  return self;
}

Tensor& copy_(Tensor& self, const Tensor& src) {
  // src broadcasts to self's shape; the cast kernel reads it through broadcast strides.
  Dims b = broadcast_shapes(self.shape(), src.shape());
  DYN_CHECK(b == self.shape(), ErrorKind::Runtime, "output with shape {} doesn't match the broadcast shape {}",
            dims_str(self.shape()), dims_str(b));
  Tensor s = src;
  // A source sharing memory with self would be overwritten while it is read. Lazy tensors have no
  // memory yet to compare, so any lazy side is copied first (correct, if sometimes a copy too many).
  if (s.lazy() || self.lazy() || (s.storage() && s.same_storage(self))) s = clone(s);
  Tensor e = expand(s, self.shape());
  Attrs at;
  at.dtype = self.dtype();
  const Tensor in[1] = {e};
  dispatch_into(OpId::cast, in, at, self);
  return self;
}

// ---- reductions ----

Tensor reduce(OpId op, const Tensor& a, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  Attrs at = with_dims(dims);
  at.keepdim = keepdim;
  if (dtype) at.has_hi = true, at.dtype = *dtype;
  return run(op, {a}, at);
}

std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim, bool is_min) {
  Attrs at = with_dim(dim);
  at.keepdim = keepdim;
  at.has_lo = true;
  const Tensor in[1] = {a};
  return dispatch2(is_min ? OpId::min_dim : OpId::max_dim, in, at);
}

Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_min) {
  Attrs at;
  at.keepdim = keepdim;
  at.has_lo = dim.has_value();
  at.dim = dim.value_or(0);
  return run(is_min ? OpId::argmin : OpId::argmax, {a}, at);
}

Tensor softmax(const Tensor& a, int64_t dim, bool log) {
  return run(log ? OpId::log_softmax : OpId::softmax, {a}, with_dim(dim));
}

Tensor layer_norm(const Tensor& x, int64_t dims, double eps, const Tensor& weight, const Tensor& bias) {
  Attrs a;
  a.i0 = dims;
  a.scalar = Scalar::from_double(eps);
  a.has_lo = weight.defined();
  a.has_hi = bias.defined();
  std::vector<Tensor> in{x};
  if (a.has_lo) in.push_back(weight);
  if (a.has_hi) in.push_back(bias);
  return dispatch(OpId::layer_norm, std::span<const Tensor>(in.data(), in.size()), a);
}

Tensor matmul(const Tensor& a, const Tensor& b) { return run(OpId::matmul, {a, b}); }

// ---- views ----

Tensor view(const Tensor& a, const Dims& shape) { return run(OpId::view, {a}, with_dims(shape)); }

Tensor reshape(const Tensor& a, const Dims& shape) {
  // Resolving -1 needs the numel; let view's infer do it on a contiguous copy when a view is impossible.
  Dims probe = shape;
  int64_t known = 1;
  int infer = -1;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1)
      infer = i;
    else
      known *= shape[i];
  }
  if (infer >= 0 && known > 0 && a.numel() % known == 0) probe[infer] = a.numel() / known;
  if (numel_of(probe) == a.numel() && !view_possible(a, probe)) return view(clone(a), shape);
  return view(a, shape);
}

Tensor flatten(const Tensor& a, int64_t start, int64_t end) {
  if (a.ndim() == 0) return reshape(a, Dims{1});
  int s = wrap_dim(start, a.ndim()), e = wrap_dim(end, a.ndim());
  DYN_CHECK(s <= e, ErrorKind::Runtime, "flatten() has invalid args: start_dim cannot come after end_dim");
  Dims shape;
  for (int i = 0; i < s; ++i) shape.push_back(a.size(i));
  int64_t m = 1;
  for (int i = s; i <= e; ++i) m *= a.size(i);
  shape.push_back(m);
  for (int i = e + 1; i < a.ndim(); ++i) shape.push_back(a.size(i));
  return reshape(a, shape);
}

Tensor permute(const Tensor& a, const Dims& perm) { return run(OpId::permute, {a}, with_dims(perm)); }

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) {
  if (a.ndim() == 0) {
    wrap_dim(d0, 0), wrap_dim(d1, 0);
    return a;
  }
  int x = wrap_dim(d0, a.ndim()), y = wrap_dim(d1, a.ndim());
  Dims perm;
  for (int i = 0; i < a.ndim(); ++i) perm.push_back(i);
  std::swap(perm[x], perm[y]);
  return permute(a, perm);
}

Tensor unsqueeze(const Tensor& a, int64_t dim) { return run(OpId::unsqueeze, {a}, with_dim(dim)); }

Tensor squeeze(const Tensor& a, std::optional<int64_t> dim) {
  Attrs at = with_dim(dim.value_or(0));
  at.has_lo = dim.has_value();
  return run(OpId::squeeze, {a}, at);
}

Tensor expand(const Tensor& a, const Dims& shape) { return run(OpId::expand, {a}, with_dims(shape)); }

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  Attrs at = with_dim(dim);
  at.i0 = index;
  return run(OpId::select, {a}, at);
}

Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  Attrs at = with_dim(dim);
  at.i0 = start.value_or(0);
  at.i1 = stop.value_or(INT64_MAX);
  at.i2 = step;
  return run(OpId::slice, {a}, at);
}

// ---- gathers and joins ----

Tensor index(const Tensor& a, int64_t dim, const Tensor& idx) { return run(OpId::index, {a, idx}, with_dim(dim)); }

Tensor gather(const Tensor& a, int64_t dim, const Tensor& idx) { return run(OpId::gather, {a, idx}, with_dim(dim)); }

Tensor masked_select(const Tensor& a, const Tensor& mask) { return run(OpId::masked_select, {a, mask}); }

Tensor index_add(const Tensor& base, int64_t dim, const Tensor& idx, const Tensor& src) {
  return run(OpId::index_add, {base, idx, src}, with_dim(dim));
}

Tensor scatter_add(const Tensor& base, int64_t dim, const Tensor& idx, const Tensor& src) {
  return run(OpId::scatter_add, {base, idx, src}, with_dim(dim));
}

Tensor scatter(const Tensor& base, int64_t dim, const Tensor& idx, const Tensor& src) {
  return run(OpId::scatter, {base, idx, src}, with_dim(dim));
}

Tensor cumsum(const Tensor& a, int64_t dim, bool reverse) {
  Attrs at = with_dim(dim);
  at.reverse = reverse;
  return run(OpId::cumsum, {a}, at);
}

std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending) {
  Attrs at = with_dim(dim);
  at.reverse = descending;
  Tensor in[] = {a};
  return dispatch2(OpId::sort, in, at);
}

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  return dispatch(OpId::cat, std::span<const Tensor>(ts.data(), ts.size()), with_dim(dim));
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  DYN_CHECK(!ts.empty(), ErrorKind::Runtime, "stack expects a non-empty TensorList");
  for (size_t i = 1; i < ts.size(); ++i)
    DYN_CHECK(ts[i].shape() == ts[0].shape(), ErrorKind::Runtime,
              "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
              dims_str(ts[0].shape()), dims_str(ts[i].shape()), i);
  int d = wrap_dim(dim, ts[0].ndim() + 1);
  std::vector<Tensor> us;
  us.reserve(ts.size());
  for (const Tensor& t : ts) us.push_back(unsqueeze(t, d));
  return cat(us, d);
}

// ---- host access ----

double item_double(const Tensor& a) {
  ensure_materialized(a, BreakKind::Item, ".item()");
  return kern::to_double(a);
}

int64_t item_int(const Tensor& a) {
  ensure_materialized(a, BreakKind::Item, ".item()");
  DYN_CHECK(a.numel() == 1, ErrorKind::Runtime, "a Tensor with {} elements cannot be converted to Scalar", a.numel());
  return visit_dtype_all(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return formula::convert<int64_t>(*a.data<T>());
  });
}

}  // namespace dyn::ops
