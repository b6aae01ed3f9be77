#include "core/ops/run.h"

#include <cassert>

#include "core/error.h"
#include "core/ops/formulas.h"

namespace dyn {

namespace {

Tensor allocate(const OutMeta& m) { return Tensor::empty(m.shape, m.dtype); }

void check_arity(const OpDef& d, std::span<const Tensor> in) {
  assert(d.num_inputs < 0 || static_cast<int>(in.size()) >= d.num_inputs - 1);
  (void)d;
  // An input without data (its value was lost when a compiled function raised) raises here,
  // before any kernel or view touches it.
  for (const Tensor& t : in)
    if (!t.impl()->storage_) t.raw_data();
}

// PyTorch's is_non_overlapping_and_dense: some permutation of the dims is contiguous.
bool non_overlapping_and_dense(const Tensor& t) {
  int nd = t.ndim();
  int perm[kMaxDims];
  int n = 0;
  for (int i = 0; i < nd; ++i)
    if (t.size(i) != 1) perm[n++] = i;
  for (int k = 1; k < n; ++k)  // insertion sort by stride: at most kMaxDims dims
    for (int j = k; j > 0 && t.strides()[perm[j]] < t.strides()[perm[j - 1]]; --j) std::swap(perm[j], perm[j - 1]);
  int64_t expected = 1;
  for (int k = 0; k < n; ++k) {
    if (t.strides()[perm[k]] != expected) return false;
    expected *= t.size(perm[k]);
  }
  return true;
}

void check_partial_overlap(const Tensor& self, std::span<const Tensor> in) {
  if (!self.storage()) return;
  for (const Tensor& t : in)
    if (t.storage() == self.storage() && partially_overlap(self, t)) fail_partial_overlap();
}

}  // namespace

Tensor run_op(OpId op, std::span<const Tensor> in, const Attrs& a) {
  const OpDef& d = op_def(op);
  check_arity(d, in);
  assert(d.num_outputs == 1);
  OutMeta m;
  d.infer(in, a, &m);
  if (d.cls == OpClass::View) return in[0].as_strided(m.shape, m.strides, m.offset);
  Tensor out;
  if (d.cls != OpClass::DataDependent) out = allocate(m);
  d.kernel(in, a, std::span<Tensor>(&out, 1));
  return out;
}

std::pair<Tensor, Tensor> run_op2(OpId op, std::span<const Tensor> in, const Attrs& a) {
  const OpDef& d = op_def(op);
  check_arity(d, in);
  assert(d.num_outputs == 2);
  OutMeta m[2];
  d.infer(in, a, m);
  Tensor out[2] = {allocate(m[0]), allocate(m[1])};
  d.kernel(in, a, std::span<Tensor>(out, 2));
  return {out[0], out[1]};
}

void check_into(const OutMeta& m, const Tensor& self) {
  if (m.shape != self.shape())
    fail(ErrorKind::Runtime, "output with shape {} doesn't match the broadcast shape {}", dims_str(self.shape()),
         dims_str(m.shape));
  for (int i = 0; i < self.ndim(); ++i)
    if (self.strides()[i] == 0 && self.shape()[i] > 1)
      fail(ErrorKind::Runtime,
           "unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.");
  if (m.dtype != self.dtype() && dtype_category(m.dtype) > dtype_category(self.dtype()))
    fail(ErrorKind::Runtime, "result type {} can't be cast to the desired output type {}", legacy_dtype_name(m.dtype),
         legacy_dtype_name(self.dtype()));
}

bool partially_overlap(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl() || a.numel() == 0 || b.numel() == 0) return false;
  if (!non_overlapping_and_dense(a) || !non_overlapping_and_dense(b)) return false;
  // Dense views with non-negative strides start at their offset and span numel elements.
  int64_t alo = a.offset(), ahi = a.offset() + a.numel(), blo = b.offset(), bhi = b.offset() + b.numel();
  if (alo == blo && ahi == bhi) return a.strides() != b.strides();
  return alo < bhi && blo < ahi;
}

void fail_read_only_write() {
  fail(ErrorKind::Runtime,
       "this tensor shares read-only memory (from a read-only numpy array or buffer): in-place ops cannot write "
       "it; make a copy first with .clone()");
}

void fail_partial_overlap() {
  fail(ErrorKind::Runtime,
       "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
       "memory location. Please clone() the tensor before performing the operation.");
}

void run_op_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  const OpDef& d = op_def(op);
  check_arity(d, in);
  check_partial_overlap(self, in);
  if (!self.impl()->storage_) self.raw_data();
  OutMeta m;
  d.infer(in, a, &m);
  check_into(m, self);
  if (m.dtype == self.dtype()) {
    d.kernel(in, a, std::span<Tensor>(&self, 1));
    return;
  }
  // Computed in the promoted dtype, then cast into self: what eager PyTorch does too.
  Tensor tmp = allocate(m);
  d.kernel(in, a, std::span<Tensor>(&tmp, 1));
  Attrs ca;
  ca.dtype = self.dtype();
  const Tensor src[1] = {tmp};
  op_def(OpId::cast).kernel(std::span<const Tensor>(src, 1), ca, std::span<Tensor>(&self, 1));
}

namespace kern {

namespace {
Tensor run1(OpId op, const Tensor& t, const Attrs& a) {
  const Tensor in[1] = {t};
  return run_op(op, in, a);
}
}  // namespace

Tensor cast(const Tensor& t, DType d) {
  if (t.dtype() == d) return t;
  Attrs a;
  a.dtype = d;
  return run1(OpId::cast, t, a);
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Attrs a;
  a.dtype = t.dtype();
  return run1(OpId::cast, t, a);
}

Tensor permute(const Tensor& t, const Dims& perm) {
  Attrs a;
  a.dims = perm;
  return run1(OpId::permute, t, a);
}

Tensor view(const Tensor& t, const Dims& shape) {
  Attrs a;
  a.dims = shape;
  return run1(OpId::view, t, a);
}

Tensor expand(const Tensor& t, const Dims& shape) {
  Attrs a;
  a.dims = shape;
  return run1(OpId::expand, t, a);
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  Attrs a;
  a.dim = dim;
  return run1(OpId::unsqueeze, t, a);
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  Attrs a;
  a.dim = dim;
  a.i0 = start, a.i1 = stop, a.i2 = step;
  return run1(OpId::slice, t, a);
}

void copy_into(const Tensor& dst, const Tensor& src) {
  Attrs a;
  a.dtype = dst.dtype();
  const Tensor in[1] = {expand(src, dst.shape())};
  Tensor out = dst;
  run_op_into(OpId::cast, in, a, out);
}

double to_double(const Tensor& t) {
  DYN_CHECK(t.numel() == 1, ErrorKind::Runtime, "a Tensor with {} elements cannot be converted to Scalar", t.numel());
  return visit_dtype_all(t.dtype(), [&](auto tag) { return formula::convert<double>(*t.data<decltype(tag)>()); });
}

}  // namespace kern

}  // namespace dyn
