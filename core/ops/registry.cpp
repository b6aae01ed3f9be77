// The op table, filled from ops.def and the files of each op class.
#include "core/ops/registry.h"

#include <fmt/format.h>

#include <cassert>
#include <climits>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops/run.h"

namespace dyn {

namespace {

// The kernels as the op files registered them, before the adapter below wraps them.
KernelFn g_float32_kernels[kNumOps];

// float16 and bfloat16 operands run in float32: every 16-bit input is widened (exactly), the
// kernel computes in float32, and each 16-bit output is rounded once from its float32 result.
// That is what PyTorch's CPU kernels do for these types (they load, compute and reduce in float
// and round on store), and it keeps one kernel per op: eager, a plan step and a replay all come
// here, so compiled equals eager for these dtypes as for the others.
double round_to(DType t, double v) {
  return t == DType::Float16 ? static_cast<float>(Half(static_cast<float>(v)))
                             : static_cast<float>(BFloat16(static_cast<float>(v)));
}

void run_in_float32(OpId op, KernelFn k, std::span<const Tensor> in, const Attrs& a, std::span<Tensor> out) {
  if (!reduced_floats_used()) return k(in, a, out);
  bool reduced = false;
  for (const Tensor& t : in) reduced = reduced || (t.defined() && is_reduced_float(t.dtype()));
  for (const Tensor& t : out) reduced = reduced || (t.defined() && is_reduced_float(t.dtype()));
  if (!reduced) return k(in, a, out);
  const OpClass cls = op_def(op).cls;
  Attrs a32 = a;
  // The dtype the operands meet in, which PyTorch rounds each of them to first: a Python float, a
  // 0-dim float32 tensor or an int compared with a float16 tensor is a float16 value (h == 1.0001
  // is true where h is 1).
  DType meet = DType::Float32;
  if (cls == OpClass::Binary)
    meet = a.side == ScalarSide::None ? result_type(in) : promote_with_scalar(in[0].dtype(), a.scalar);
  else if (cls == OpClass::Reduce && a.has_hi)  // sum(dtype=float16) rounds its input to float16
    meet = a.dtype;
  if (is_reduced_float(meet) && a.side != ScalarSide::None && a.scalar.kind == Scalar::Float)
    a32.scalar.f = round_to(meet, a.scalar.f);
  std::vector<Tensor> in32, out32;
  for (const Tensor& t : in) {
    Tensor x = t;
    if (x.defined() && is_reduced_float(meet) && x.dtype() != meet && x.dtype() != DType::Bool) x = kern::cast(x, meet);
    in32.push_back(x.defined() && is_reduced_float(x.dtype()) ? kern::cast(x, DType::Float32) : x);
  }
  for (const Tensor& t : out)
    out32.push_back(t.defined() && is_reduced_float(t.dtype()) ? Tensor::empty(t.shape(), DType::Float32) : t);
  if (is_reduced_float(a32.dtype)) a32.dtype = DType::Float32;
  k(std::span<const Tensor>(in32.data(), in32.size()), a32, std::span<Tensor>(out32.data(), out32.size()));
  if (op == OpId::rand && is_reduced_float(out[0].dtype())) {
    // As PyTorch's: a uniform float16 (bfloat16) is k / 2^11 (2^8), which rounding cannot carry
    // up to 1.0 as it could the float32 draw.
    const float scale = out[0].dtype() == DType::Float16 ? 2048.0f : 256.0f;
    float* p = out32[0].data<float>();
    for (int64_t i = 0; i < out32[0].numel(); ++i) p[i] = std::floor(p[i] * scale) / scale;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined()) {
      // A data-dependent op (masked_select) allocates its own output, of its input's dtype.
      out[i] =
          out32[i].defined() && !in.empty() && is_reduced_float(in[0].dtype()) && out32[i].dtype() == DType::Float32
              ? kern::cast(out32[i], in[0].dtype())
              : out32[i];
    } else if (is_reduced_float(out[i].dtype())) {
      kern::copy_into(out[i], out32[i]);
    }
  }
}

template <int I>
void float32_adapter(std::span<const Tensor> in, const Attrs& a, std::span<Tensor> out) {
  run_in_float32(static_cast<OpId>(I), g_float32_kernels[I], in, a, out);
}

constexpr KernelFn kAdapters[] = {
#define DYN_OP(n, ...) &float32_adapter<static_cast<int>(OpId::n)>,
#include "core/ops/ops.def"
#undef DYN_OP
};

struct Table {
  OpDef rows[kNumOps];
  Table() {
    int i = 0;
#define DYN_OP(n, cls, nin, nout, rule, formula, deriv, saved, python) \
  rows[i++] = OpDef{#n, OpClass::cls, nin, nout, DTypeRule::rule, FormulaKind::formula, #python, #cls, #rule, #formula};
#include "core/ops/ops.def"
#undef DYN_OP
    register_elementwise_ops(rows);
    register_reduce_ops(rows);
    register_shape_ops(rows);
    register_matmul_ops(rows);
    register_scan_ops(rows);
    register_random_ops(rows);
    // cast converts the 16-bit floats itself; views have no kernel.
    for (int k = 0; k < kNumOps; ++k) {
      if (!rows[k].kernel || static_cast<OpId>(k) == OpId::cast) continue;
      g_float32_kernels[k] = rows[k].kernel;
      rows[k].kernel = kAdapters[k];
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
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
  static constexpr std::string_view kNames[] = {"Bool", "Byte", "Char",     "Short", "Int",
                                                "Long", "Half", "BFloat16", "Float", "Double"};
  return kNames[static_cast<int>(t)];
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
      if (op == OpId::layer_norm)
        return fmt::format("dims={}, eps={}{}{}", a.i0, a.scalar.to_double(), a.has_lo ? ", weight" : "",
                           a.has_hi ? ", bias" : "");
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
    case OpClass::Scan:
      if (!a.reverse) return fmt::format("dim={}", a.dim);
      return fmt::format("dim={}, {}", a.dim, op == OpId::sort ? "descending=True" : "reverse=True");
    default:
      return {};
  }
}

namespace {
template <typename T>
void put_bytes(std::string* k, const T& v) {
  k->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
void put_field(std::string* k, const Scalar& s) {
  put_bytes(k, s.kind);
  if (s.kind == Scalar::Float)
    put_bytes(k, s.f);
  else
    put_bytes(k, s.i);
}
void put_field(std::string* k, const Dims& d) {
  put_bytes(k, static_cast<int8_t>(d.size()));
  for (int64_t x : d) put_bytes(k, x);
}
template <typename T>
void put_field(std::string* k, const T& v) {
  put_bytes(k, v);
}

bool same_field(const Scalar& a, const Scalar& b) { return same_scalar(a, b); }
template <typename T>
bool same_field(const T& a, const T& b) {
  return a == b;
}
}  // namespace

bool same_scalar(const Scalar& a, const Scalar& b) {
  if (a.kind != b.kind) return false;
  if (a.kind != Scalar::Float) return a.i == b.i;
  return std::memcmp(&a.f, &b.f, sizeof(double)) == 0;
}

void put_attrs(const Attrs& a, bool with_rng, std::string* key) {
  visit_attrs(a, a, [&](const char*, const auto& x, const auto&, bool rng) {
    if (!rng || with_rng) put_field(key, x);
  });
}

bool attrs_equal(const Attrs& a, const Attrs& b, bool with_rng) {
  bool same = true;
  visit_attrs(a, b, [&](const char*, const auto& x, const auto& y, bool rng) {
    if (!rng || with_rng) same = same && same_field(x, y);
  });
  return same;
}

unsigned value_scalars(OpId op, const Attrs& a) {
  unsigned m = 0;
  if (op_def(op).cls == OpClass::Binary ? a.side != ScalarSide::None : op == OpId::full || op == OpId::layer_norm)
    m = 1;
  else if (op == OpId::clamp)
    m = (a.has_lo ? 1u : 0u) | (a.has_hi ? 2u : 0u);
  const Scalar* s[] = {&a.scalar, &a.scalar2, &a.scalar3};
  for (int k = 0; k < 3; ++k)
    if (s[k]->kind != Scalar::Float) m &= ~(1u << k);
  return m;
}

unsigned constant_scalars(OpId op, const Attrs& a) {
  unsigned m = op_def(op).cls == OpClass::Binary ? (a.side != ScalarSide::None ? 1u : 0u)
               : op == OpId::full                ? 1u
               : op == OpId::clamp               ? (a.has_lo ? 1u : 0u) | (a.has_hi ? 2u : 0u)
               : op == OpId::arange              ? 7u
                                                 : 0u;
  return m & ~value_scalars(op, a);
}

bool attrs_equal_but_values(OpId op, const Attrs& traced, const Attrs& now) {
  unsigned m = value_scalars(op, traced);
  if (!m) return attrs_equal(traced, now, false);
  const Scalar* a[] = {&traced.scalar, &traced.scalar2, &traced.scalar3};
  const Scalar* b[] = {&now.scalar, &now.scalar2, &now.scalar3};
  for (int k = 0; k < 3; ++k)
    if ((m >> k & 1) ? a[k]->kind != b[k]->kind : !same_scalar(*a[k], *b[k])) return false;
  bool same = true;
  visit_attrs(traced, now, [&](const char*, const auto& x, const auto& y, bool rng) {
    if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, Scalar>)
      if (!rng) same = same && same_field(x, y);
  });
  return same;
}

unsigned changed_values(OpId op, const Attrs& traced, const Attrs& now) {
  unsigned m = value_scalars(op, traced), changed = 0;
  const Scalar* a[] = {&traced.scalar, &traced.scalar2, &traced.scalar3};
  const Scalar* b[] = {&now.scalar, &now.scalar2, &now.scalar3};
  for (int k = 0; k < 3; ++k)
    if ((m >> k & 1) && !same_scalar(*a[k], *b[k])) changed |= 1u << k;
  return changed;
}

namespace detail {
std::atomic<const OpDef*> op_rows{nullptr};
const OpDef* op_rows_init() {
  const OpDef* rows = table().rows;
  op_rows.store(rows, std::memory_order_release);
  return rows;
}
}  // namespace detail

}  // namespace dyn
