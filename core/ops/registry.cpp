// The op table and eager dispatch: infer, allocate, run the kernel.
#include "core/ops/registry.h"

#include <fmt/format.h>

#include <cassert>
#include <climits>
#include <utility>

#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/error.h"
#include "core/storage.h"

namespace dyn {

namespace {

struct Table {
  OpDef rows[kNumOps];
  Table() {
    int i = 0;
#define DYN_X(n, c, nin, nout) rows[i++] = OpDef{#n, OpClass::c, nin, nout};
    DYN_OPS(DYN_X)
#undef DYN_X
    register_elementwise_ops(rows);
    register_reduce_ops(rows);
    register_shape_ops(rows);
    register_matmul_ops(rows);
    register_derivatives(rows);
  }
};

const Table& table() {
  static const Table t;
  return t;
}

Tensor allocate(const OutMeta& m) { return Tensor::empty(m.shape, m.dtype); }

void check_arity(const OpDef& d, std::span<const Tensor> in) {
  assert(d.num_inputs < 0 || static_cast<int>(in.size()) >= d.num_inputs - 1);
  (void)d;
  // An input without data (its value was lost when a compiled function raised) raises here,
  // before any kernel or view touches it.
  for (const Tensor& t : in)
    if (!t.impl()->storage_) t.raw_data();
}

}  // namespace

DType result_type(std::span<const Tensor> ts) {
  bool have_dim = false, have_zero = false;
  DType dim_t = DType::Bool, zero_t = DType::Bool;
  for (const Tensor& t : ts) {
    if (t.ndim() > 0) {
      dim_t = have_dim ? promote_types(dim_t, t.dtype()) : t.dtype();
      have_dim = true;
    } else {
      zero_t = have_zero ? promote_types(zero_t, t.dtype()) : t.dtype();
      have_zero = true;
    }
  }
  if (!have_dim) return zero_t;
  if (!have_zero) return dim_t;
  return dtype_category(zero_t) > dtype_category(dim_t) ? zero_t : dim_t;
}

std::string_view legacy_dtype_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "Bool";
    case DType::Int64:
      return "Long";
    case DType::Float32:
      return "Float";
    case DType::Float64:
      break;
  }
  return "Double";
}

std::string format_scalar(const Scalar& s) {
  if (s.kind == Scalar::Bool) return s.i ? "True" : "False";
  if (s.kind == Scalar::Int) return std::to_string(s.i);
  std::string r = fmt::format("{}", s.f);
  if (r.find_first_of(".eni") == std::string::npos) r += ".0";  // 2 -> 2.0, as Python prints it
  return r;
}

std::string format_attrs(OpId op, const Attrs& a) {
  const OpDef& d = op_def(op);
  auto dims = [](const Dims& x) { return dims_str(x); };
  switch (d.cls) {
    case OpClass::Creation:
      if (op == OpId::arange)
        return fmt::format("{}, {}, {}, dtype={}", format_scalar(a.scalar), format_scalar(a.scalar2),
                           format_scalar(a.scalar3), dtype_name(a.dtype));
      return fmt::format("{}, {}, dtype={}", dims(a.dims), format_scalar(a.scalar), dtype_name(a.dtype));
    case OpClass::Random:
      if (op == OpId::randint)
        return fmt::format("{}, {}, {}, dtype={}, rng={}:{}", a.i0, a.i1, dims(a.dims), dtype_name(a.dtype), a.seed,
                           a.offset);
      return fmt::format("{}, dtype={}, rng={}:{}", dims(a.dims), dtype_name(a.dtype), a.seed, a.offset);
    case OpClass::Binary:
      return a.side == ScalarSide::None ? std::string() : format_scalar(a.scalar);
    case OpClass::Unary:
      if (op == OpId::cast) return fmt::format("dtype={}", dtype_name(a.dtype));
      if (op == OpId::clamp) {
        std::string r;
        if (a.has_lo) r += "min=" + format_scalar(a.scalar);
        if (a.has_hi) r += std::string(r.empty() ? "" : ", ") + "max=" + format_scalar(a.scalar2);
        return r;
      }
      return {};
    case OpClass::Reduce: {
      std::string r;
      if (op == OpId::sum || op == OpId::mean || op == OpId::amax || op == OpId::amin) {
        if (!a.dims.empty()) r = "dim=" + dims(a.dims);
        if (a.has_hi) r += std::string(r.empty() ? "" : ", ") + "dtype=" + std::string(dtype_name(a.dtype));
      } else if (a.has_lo) {
        r = fmt::format("dim={}", a.dim);
      }
      if (a.keepdim) r += std::string(r.empty() ? "" : ", ") + "keepdim=True";
      return r;
    }
    case OpClass::Normalize:
      return fmt::format("dim={}", a.dim);
    case OpClass::View:
      switch (op) {
        case OpId::view:
        case OpId::expand:
        case OpId::permute:
          return dims(a.dims);
        case OpId::select:
          return fmt::format("dim={}, index={}", a.dim, a.i0);
        case OpId::slice:
          return fmt::format("dim={}, {}:{}:{}", a.dim, a.i0, a.i1 == INT64_MAX ? std::string() : std::to_string(a.i1),
                             a.i2);
        case OpId::squeeze:
          return a.has_lo ? fmt::format("dim={}", a.dim) : std::string();
        default:
          return fmt::format("dim={}", a.dim);
      }
    case OpClass::Gather:
    case OpClass::Join:
      return fmt::format("dim={}", a.dim);
    default:
      return {};
  }
}

const OpDef& op_def(OpId op) { return table().rows[static_cast<int>(op)]; }

Tensor dispatch(OpId op, std::span<const Tensor> in, const Attrs& a) {
  Capture* c = Capture::active();
  Tensor out = c ? c->record(op, in, a) : dispatch_eager(op, in, a);
  if (grad_enabled()) record_grad(op, in, a, std::span<const Tensor>(&out, 1));
  return out;
}

std::pair<Tensor, Tensor> dispatch2(OpId op, std::span<const Tensor> in, const Attrs& a) {
  Capture* c = Capture::active();
  auto out = c ? c->record2(op, in, a) : dispatch2_eager(op, in, a);
  if (grad_enabled()) {
    const Tensor both[2] = {out.first, out.second};
    record_grad(op, in, a, both);
  }
  return out;
}

void dispatch_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  if (self.storage() && self.storage()->read_only)
    fail(ErrorKind::Runtime,
         "this tensor shares read-only memory (from a read-only numpy array or buffer): in-place ops cannot write "
         "it; make a copy first with .clone()");
  if (grad_enabled()) check_inplace_grad(self, in);
  if (Capture* c = Capture::active())
    c->record_into(op, in, a, self);
  else
    dispatch_into_eager(op, in, a, self);
  if (Storage* st = self.storage()) ++st->version;  // only once the write is certain
}

Tensor dispatch_eager(OpId op, std::span<const Tensor> in, const Attrs& a) {
  const OpDef& d = op_def(op);
  check_arity(d, in);
  assert(d.num_outputs == 1);
  OutMeta m;
  d.infer(in, a, &m);
  if (d.cls == OpClass::View) return in[0].as_strided(m.shape, m.strides, m.offset);
  Tensor out;
  if (d.cls != OpClass::DataDependent) out = allocate(m);
  NoGradScope no_grad;  // ops a kernel issues inside are implementation, not user history
  d.kernel(in, a, std::span<Tensor>(&out, 1));
  return out;
}

std::pair<Tensor, Tensor> dispatch2_eager(OpId op, std::span<const Tensor> in, const Attrs& a) {
  const OpDef& d = op_def(op);
  check_arity(d, in);
  assert(d.num_outputs == 2);
  OutMeta m[2];
  d.infer(in, a, m);
  Tensor out[2] = {allocate(m[0]), allocate(m[1])};
  NoGradScope no_grad;
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

namespace {
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

bool partially_overlap(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl() || a.numel() == 0 || b.numel() == 0) return false;
  if (!non_overlapping_and_dense(a) || !non_overlapping_and_dense(b)) return false;
  // Dense views with non-negative strides start at their offset and span numel elements.
  int64_t alo = a.offset(), ahi = a.offset() + a.numel(), blo = b.offset(), bhi = b.offset() + b.numel();
  if (alo == blo && ahi == bhi) return a.strides() != b.strides();
  return alo < bhi && blo < ahi;
}

void fail_partial_overlap() {
  fail(ErrorKind::Runtime,
       "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
       "memory location. Please clone() the tensor before performing the operation.");
}

void dispatch_into_eager(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  const OpDef& d = op_def(op);
  check_arity(d, in);
  check_partial_overlap(self, in);
  if (!self.impl()->storage_) self.raw_data();
  OutMeta m;
  d.infer(in, a, &m);
  check_into(m, self);
  NoGradScope no_grad;
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

}  // namespace dyn
