// Elementwise ops: creation, unary, binary, where, clamp and cast — inference and kernels.
#include <immintrin.h>

#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/ops/blocks.h"
#include "core/ops/formulas.h"
#include "core/ops/loops.h"
#include "core/ops/run.h"

namespace dyn {

namespace {

using InSpan = std::span<const Tensor>;
using OutSpan = std::span<Tensor>;

Tensor cast_to(const Tensor& t, DType d) { return kern::cast(t, d); }

template <typename T>
T scalar_as(const Scalar& s) {
  if (s.kind == Scalar::Float) return formula::convert<T>(s.f);
  return formula::convert<T>(s.i);
}

// ---- loops ----

template <typename To, typename F>
void run_fill(const Tensor& out, F f) {
  const Tensor* ops[1] = {&out};
  LoopPlan<1> plan(ops);
  plan.run([&](char** p, const int64_t* s, int64_t n) {
    // Contiguous: a loop the compiler vectorizes. The per-element copy took 5% of a training step
    // (the zeros of select and index backward).
    if (s[0] == sizeof(To)) {
      To* o = reinterpret_cast<To*>(p[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = f();
      return;
    }
    char* o = p[0];
    const int64_t so = s[0];
    for (int64_t i = 0; i < n; ++i) {
      To v = f();
      std::memcpy(o + i * so, &v, sizeof(To));
    }
  });
}

template <typename To, typename Ti, typename F>
void run_unary(const Tensor& out, const Tensor& a, F f) {
  const Tensor* ops[2] = {&out, &a};
  LoopPlan<2> plan(ops);
  plan.run_tiled([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(To) && s[1] == sizeof(Ti)) {
      To* o = reinterpret_cast<To*>(p[0]);
      const Ti* x = reinterpret_cast<const Ti*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else {
      // Pointers and strides in locals: a store through char* may alias them, and the compiler
      // reloaded both every element (a transpose spent half its time there).
      char* o = p[0];
      const char* x = p[1];
      const int64_t so = s[0], sx = s[1];
      for (int64_t i = 0; i < n; ++i) {
        To v = f(load<Ti>(x + i * sx));
        std::memcpy(o + i * so, &v, sizeof(To));
      }
    }
  });
}

// Like run_unary, for a block function f(x, o, n) over contiguous arrays (same dtype in and out):
// contiguous runs go straight through, strided ones through a gathered block.
template <typename T, typename F>
void run_unary_blocks(const Tensor& out, const Tensor& a, F f) {
  const Tensor* ops[2] = {&out, &a};
  LoopPlan<2> plan(ops);
  plan.run([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T))
      return f(reinterpret_cast<const T*>(p[1]), reinterpret_cast<T*>(p[0]), n);
    T buf[block::kBlock];
    char* o = p[0];
    const char* x = p[1];
    const int64_t so = s[0], sx = s[1];
    for (int64_t b = 0; b < n; b += block::kBlock) {
      int64_t m = std::min<int64_t>(block::kBlock, n - b);
      for (int64_t i = 0; i < m; ++i) buf[i] = load<T>(x + (b + i) * sx);
      f(buf, buf, m);
      for (int64_t i = 0; i < m; ++i) std::memcpy(o + (b + i) * so, &buf[i], sizeof(T));
    }
  });
}

// Like run_binary, for a block function f(x, y, o, n) (same dtype in and out): contiguous runs go
// straight through; broadcast and strided operands are gathered into blocks first. Every element
// then goes through the one function a fused loop calls too, so even which NaN an op returns when
// both operands are NaN is the same.
template <typename T, typename F>
void run_binary_blocks(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const Tensor* ops[3] = {&out, &a, &b};
  LoopPlan<3> plan(ops);
  plan.run([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == sizeof(T))
      return f(reinterpret_cast<const T*>(p[1]), reinterpret_cast<const T*>(p[2]), reinterpret_cast<T*>(p[0]), n);
    T bx[block::kBlock], by[block::kBlock];
    // A contiguous operand is read in place and a broadcast one (stride 0) filled once.
    bool dense[2] = {s[1] == sizeof(T), s[2] == sizeof(T)};
    const int64_t filled = std::min<int64_t>(block::kBlock, n);
    if (s[1] == 0) std::fill_n(bx, filled, load<T>(p[1]));
    if (s[2] == 0) std::fill_n(by, filled, load<T>(p[2]));
    for (int64_t b0 = 0; b0 < n; b0 += block::kBlock) {
      int64_t m = std::min<int64_t>(block::kBlock, n - b0);
      const T* x = dense[0] ? reinterpret_cast<const T*>(p[1]) + b0 : bx;
      const T* y = dense[1] ? reinterpret_cast<const T*>(p[2]) + b0 : by;
      if (!dense[0] && s[1] != 0)
        for (int64_t i = 0; i < m; ++i) bx[i] = load<T>(p[1] + (b0 + i) * s[1]);
      if (!dense[1] && s[2] != 0)
        for (int64_t i = 0; i < m; ++i) by[i] = load<T>(p[2] + (b0 + i) * s[2]);
      if (s[0] == sizeof(T)) {
        f(x, y, reinterpret_cast<T*>(p[0]) + b0, m);
      } else {
        T r[block::kBlock];
        f(x, y, r, m);
        for (int64_t i = 0; i < m; ++i) std::memcpy(p[0] + (b0 + i) * s[0], &r[i], sizeof(T));
      }
    }
  });
}

template <typename To, typename Ti, typename F>
void run_binary(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const Tensor* ops[3] = {&out, &a, &b};
  LoopPlan<3> plan(ops);
  plan.run([&](char** p, const int64_t* s, int64_t n) {
    To* o = reinterpret_cast<To*>(p[0]);
    const Ti* x = reinterpret_cast<const Ti*>(p[1]);
    const Ti* y = reinterpret_cast<const Ti*>(p[2]);
    if (s[0] == sizeof(To) && s[1] == sizeof(Ti) && s[2] == sizeof(Ti)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == sizeof(To) && s[1] == sizeof(Ti) && s[2] == 0) {
      const Ti yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else if (s[0] == sizeof(To) && s[1] == 0 && s[2] == sizeof(Ti)) {
      const Ti xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
    } else {
      char* po = p[0];
      const char *px = p[1], *py = p[2];
      const int64_t so = s[0], sx = s[1], sy = s[2];
      for (int64_t i = 0; i < n; ++i) {
        To v = f(load<Ti>(px + i * sx), load<Ti>(py + i * sy));
        std::memcpy(po + i * so, &v, sizeof(To));
      }
    }
  });
}

// ---- creation ----

void infer_full(InSpan, const Attrs& a, OutMeta* m) {
  check_new_shape(a.dims);
  DYN_CHECK(fits_dtype(a.dtype, a.scalar), ErrorKind::Runtime,
            "value cannot be converted to type {}_t without overflow", dtype_name(a.dtype));
  m->dtype = a.dtype;
  m->shape = a.dims;
}

void kernel_full(InSpan, const Attrs& a, OutSpan out) {
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T v = scalar_as<T>(a.scalar);
    run_fill<T>(out[0], [v] { return v; });
  });
}

int64_t arange_length(const Attrs& a) {
  double start = a.scalar.to_double(), end = a.scalar2.to_double(), step = a.scalar3.to_double();
  DYN_CHECK(step != 0, ErrorKind::Runtime, "arange: step must be nonzero");
  DYN_CHECK(std::isfinite(start) && std::isfinite(end), ErrorKind::Runtime, "arange: unsupported range: {} -> {}",
            start, end);
  DYN_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), ErrorKind::Runtime,
            "arange: upper bound and larger bound inconsistent with step sign");
  double len = std::ceil((end - start) / step);
  DYN_CHECK(len < 9.0e15, ErrorKind::Runtime, "arange: a range of {} elements is too large", len);
  return static_cast<int64_t>(len);
}

void infer_arange(InSpan, const Attrs& a, OutMeta* m) {
  m->dtype = a.dtype;
  m->shape = Dims{arange_length(a)};
}

void kernel_arange(InSpan, const Attrs& a, OutSpan out) {
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out[0].data<T>();
    int64_t n = out[0].numel();
    if constexpr (std::is_integral_v<T>) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(a.scalar.to_int() + i * a.scalar3.to_int());
    } else {
      double start = a.scalar.to_double(), step = a.scalar3.to_double();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + step * static_cast<double>(i));
    }
  });
}

// ---- unary ----

constexpr DTypeRule rule_of(OpId op) { return dtype_rule_of(op); }

template <OpId Op>
void infer_unary(InSpan in, const Attrs&, OutMeta* m) {
  DType t = in[0].dtype();
  m->shape = in[0].shape();
  if constexpr (Op == OpId::logical_not) {
    m->dtype = DType::Bool;
  } else if constexpr (Op == OpId::bitwise_not) {
    DYN_CHECK(!is_floating(t), ErrorKind::NotImplemented, "\"bitwise_not_cpu\" not implemented for '{}'",
              legacy_dtype_name(t));
    m->dtype = t;  // ~ of a bool is its negation
  } else if (rule_of(Op) == DTypeRule::floating) {
    m->dtype = is_floating(t) ? t : default_float_dtype();
  } else {
    if (t == DType::Bool) {
      // PyTorch's messages, and the kernel names they carry.
      if (Op == OpId::neg)
        fail(ErrorKind::NotImplemented,
             "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
             "use the `~` or `logical_not()` operator instead.");
      if (Op == OpId::relu) fail(ErrorKind::NotImplemented, "Boolean inputs not supported for relu");
      fail(ErrorKind::NotImplemented, "\"{}{}\" not implemented for 'Bool'", op_name(Op),
           Op == OpId::floor || Op == OpId::ceil ? "_vml_cpu" : "_cpu");
    }
    m->dtype = t;
  }
}

// The formula column: formula::name for each row marked unary (or binary below).
#define DYN_FORMULA_none(n)
#define DYN_FORMULA_binary(n)
#define DYN_FORMULA_unary(n) \
  if constexpr (Op == OpId::n) return formula::n(x);
#define DYN_OP(n, cls, nin, nout, rule, formula, ...) DYN_FORMULA_##formula(n)
template <OpId Op, typename T>
T apply_unary(T x) {
#include "core/ops/ops.def"
  return x;
}
#undef DYN_FORMULA_unary
#undef DYN_FORMULA_binary

// The vmath function of an op whose formula is one, or nothing.
constexpr std::optional<vmath::Fn> vmath_fn(OpId op) {
  switch (op) {
#define DYN_VMATH_OP(name, ...) \
  case OpId::name:              \
    return vmath::Fn::name;
    DYN_VMATH_FUNCTIONS(DYN_VMATH_OP, )
#undef DYN_VMATH_OP
    default:
      return std::nullopt;
  }
}

// formula::name over n contiguous elements, with the bits of formula::name on each: the vmath
// call is made once for the block, and the formulas built on exp and erf (sigmoid, silu, gelu)
// run as one vector function in float (vmath::Formula), in double as steps around the call.
template <OpId Op, typename T>
void unary_block(const T* x, T* o, int64_t n) {
  if constexpr (formula::kFloat<T> && vmath_fn(Op).has_value()) {
    vmath::map(*vmath_fn(Op), x, o, n);
  } else if constexpr (std::is_same_v<T, float> && (Op == OpId::sigmoid || Op == OpId::silu || Op == OpId::gelu)) {
    vmath::map(Op == OpId::sigmoid ? vmath::Formula::sigmoid
               : Op == OpId::silu  ? vmath::Formula::silu
                                   : vmath::Formula::gelu,
               x, o, n);
  } else if constexpr (formula::kFloat<T> && (Op == OpId::sigmoid || Op == OpId::silu || Op == OpId::gelu)) {
    T t[block::kBlock];
    for (int64_t b = 0; b < n; b += block::kBlock) {
      int64_t m = std::min<int64_t>(block::kBlock, n - b);
      const T* xb = x + b;
      if constexpr (Op == OpId::gelu) {
        for (int64_t i = 0; i < m; ++i) t[i] = xb[i] * T(M_SQRT1_2);
        vmath::map(vmath::Fn::erf, t, t, m);
        for (int64_t i = 0; i < m; ++i) o[b + i] = T(0.5) * xb[i] * (T(1) + t[i]);
      } else {
        for (int64_t i = 0; i < m; ++i) t[i] = -xb[i];
        vmath::map(vmath::Fn::exp, t, t, m);
        if constexpr (Op == OpId::sigmoid)
          for (int64_t i = 0; i < m; ++i) o[b + i] = T(1) / (T(1) + t[i]);
        else
          for (int64_t i = 0; i < m; ++i) o[b + i] = xb[i] / (T(1) + t[i]);
      }
    }
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = apply_unary<Op>(x[i]);
  }
}

template <OpId Op>
void kernel_unary(InSpan in, const Attrs&, OutSpan out) {
  if constexpr (Op == OpId::logical_not) {
    visit_dtype(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      run_unary<bool, T>(out[0], in[0], [](T x) { return formula::logical_not(x); });
    });
  } else if (Op == OpId::bitwise_not && in[0].dtype() == DType::Bool) {
    run_unary<bool, bool>(out[0], in[0], [](bool x) { return !x; });
  } else {
    DType t = out[0].dtype();
    Tensor x = cast_to(in[0], t);
    visit_dtype(t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) {
        if constexpr (std::is_integral_v<T>) {
          if constexpr (rule_of(Op) != DTypeRule::floating)
            run_unary<T, T>(out[0], x, [](T v) { return apply_unary<Op>(v); });
        } else {
          run_unary_blocks<T>(out[0], x, unary_block<Op, T>);
        }
      }
    });
  }
}

// ---- binary ----

constexpr bool is_bool_result(OpId op) { return rule_of(op) == DTypeRule::to_bool; }

// The dtype the formula runs in.
DType binary_compute_dtype(OpId op, InSpan in, const Attrs& a) {
  DType t = a.side == ScalarSide::None ? result_type(in) : promote_with_scalar(in[0].dtype(), a.scalar);
  if (rule_of(op) == DTypeRule::to_float && !is_floating(t)) t = default_float_dtype();
  if (rule_of(op) == DTypeRule::int_math && t == DType::Bool) t = DType::Int64;
  return t;
}

template <OpId Op>
void infer_binary(InSpan in, const Attrs& a, OutMeta* m) {
  m->shape = a.side == ScalarSide::None ? broadcast_shapes(in[0].shape(), in[1].shape()) : in[0].shape();
  DType t = binary_compute_dtype(Op, in, a);
  if constexpr (Op == OpId::sub) {
    DYN_CHECK(t != DType::Bool, ErrorKind::Runtime,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  }
  if constexpr (Op == OpId::pow) {
    if (dtype_category(t) == 1 && a.side == ScalarSide::Rhs && a.scalar.kind != Scalar::Float)
      DYN_CHECK(a.scalar.i >= 0, ErrorKind::Runtime, "Integers to negative integer powers are not allowed.");
  }
  if constexpr (Op == OpId::bitwise_and || Op == OpId::bitwise_or || Op == OpId::bitwise_xor) {
    DYN_CHECK(!is_floating(t), ErrorKind::NotImplemented, "\"{}_cpu\" not implemented for '{}'", op_name(Op),
              legacy_dtype_name(t));
  }
  if constexpr (Op == OpId::floor_divide || Op == OpId::remainder || Op == OpId::fmod) {
    // Bools only divide once promoted, which these ops do not do.
    DYN_CHECK(
        (a.side == ScalarSide::None ? result_type(in) : promote_with_scalar(in[0].dtype(), a.scalar)) != DType::Bool,
        ErrorKind::NotImplemented, "\"{}_cpu\" not implemented for 'Bool'",
        Op == OpId::floor_divide ? "div_floor" : op_name(Op));
    // The divisor as the kernel will see it: 256 is 0 for an int8 tensor.
    if (dtype_category(t) == 1 && a.side == ScalarSide::Rhs)
      DYN_CHECK(visit_dtype(t, [&](auto tag) { return scalar_as<decltype(tag)>(a.scalar) != decltype(tag)(0); }),
                ErrorKind::Runtime, "ZeroDivisionError");
  }
  m->dtype = is_bool_result(Op) ? DType::Bool : t;
}

#define DYN_FORMULA_unary(n)
#define DYN_FORMULA_binary(n) \
  if constexpr (Op == OpId::n) return formula::n(x, y);
template <OpId Op, typename T>
auto apply_binary(T x, T y) {
#include "core/ops/ops.def"
}
#undef DYN_FORMULA_unary
#undef DYN_FORMULA_binary
#undef DYN_OP

template <OpId Op, typename T>
void binary_block(const T* x, const T* y, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply_binary<Op, T>(x[i], y[i]);
}

template <OpId Op, typename T>
void unary_erased(const void* x, void* o, int64_t n) {
  unary_block<Op, T>(static_cast<const T*>(x), static_cast<T*>(o), n);
}
template <OpId Op, typename T>
void binary_erased(const void* x, const void* y, void* o, int64_t n) {
  binary_block<Op, T>(static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(o), n);
}

// Integer division by zero and negative integer powers are errors, found before the kernel runs.
void check_int_operand(OpId op, const Tensor& y) {
  if (dtype_category(y.dtype()) != 1 || y.numel() == 0) return;
  if (op != OpId::floor_divide && op != OpId::remainder && op != OpId::fmod && op != OpId::pow) return;
  Tensor c = kern::contiguous(kern::cast(y, DType::Int64));  // exact from every integer dtype
  const int64_t* p = c.data<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    if (op == OpId::pow) {
      DYN_CHECK(p[i] >= 0, ErrorKind::Runtime, "Integers to negative integer powers are not allowed.");
    } else {
      DYN_CHECK(p[i] != 0, ErrorKind::Runtime, "ZeroDivisionError");
    }
  }
}

// At record time: the divisor (or exponent) of an integer floor_divide/remainder/pow, when its
// values are known.
void check_binary_values(InSpan in, const Attrs& a, OpId op) {
  DType t = binary_compute_dtype(op, in, a);
  if (dtype_category(t) != 1) return;
  const Tensor* y = a.side == ScalarSide::None ? &in[1] : a.side == ScalarSide::Lhs ? &in[0] : nullptr;
  if (y && value_known(*y)) check_int_operand(op, cast_to(*y, t));
}
template <OpId Op>
void check_binary(InSpan in, const Attrs& a) {
  check_binary_values(in, a, Op);
}

template <OpId Op>
void kernel_binary(InSpan in, const Attrs& a, OutSpan out) {
  DType t = binary_compute_dtype(Op, in, a);
  // The output's dtype was inferred when the op was called: int / int and int * 2.5 take the
  // default dtype of then, not of when a compiled graph runs (a region may change it between).
  if constexpr (!is_bool_result(Op)) t = out[0].dtype();
  Tensor x = cast_to(in[0], t);
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> &&
                  (Op == OpId::sub || rule_of(Op) == DTypeRule::to_float || rule_of(Op) == DTypeRule::int_math)) {
      return;  // rejected by infer
    } else {
      using To = decltype(apply_binary<Op, T>(T{}, T{}));
      auto f = [](T u, T v) { return apply_binary<Op, T>(u, v); };
      if constexpr (std::is_same_v<To, T> && formula::kFloat<T>) {
        // Through the block function a fused loop uses (see run_binary_blocks).
        Tensor y = a.side == ScalarSide::None ? cast_to(in[1], t) : Tensor::empty(Dims{}, t);
        if (a.side != ScalarSide::None) *y.data<T>() = scalar_as<T>(a.scalar);
        if (a.side == ScalarSide::Lhs)
          run_binary_blocks<T>(out[0], y, x, binary_block<Op, T>);
        else
          run_binary_blocks<T>(out[0], x, y, binary_block<Op, T>);
      } else if (a.side == ScalarSide::None) {
        Tensor y = cast_to(in[1], t);
        check_int_operand(Op, y);
        run_binary<To, T>(out[0], x, y, f);
      } else {
        const T s = scalar_as<T>(a.scalar);
        if (a.side == ScalarSide::Lhs) check_int_operand(Op, x);  // 3 % t: t is the divisor
        if (a.side == ScalarSide::Rhs)
          run_unary<To, T>(out[0], x, [s](T u) { return apply_binary<Op, T>(u, s); });
        else
          run_unary<To, T>(out[0], x, [s](T u) { return apply_binary<Op, T>(s, u); });
      }
    }
  });
}

// ---- where, clamp, cast ----

void infer_where(InSpan in, const Attrs&, OutMeta* m) {
  DYN_CHECK(in[0].dtype() == DType::Bool, ErrorKind::Runtime,
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            legacy_dtype_name(in[0].dtype()));
  m->shape = broadcast_shapes(broadcast_shapes(in[0].shape(), in[1].shape()), in[2].shape());
  m->dtype = result_type(in.subspan(1, 2));
}

void kernel_where(InSpan in, const Attrs&, OutSpan out) {
  DType t = out[0].dtype();
  Tensor x = cast_to(in[1], t), y = cast_to(in[2], t);
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    const Tensor* ops[4] = {&out[0], &in[0], &x, &y};
    LoopPlan<4> plan(ops);
    plan.run([&](char** p, const int64_t* s, int64_t n) {
      char* o = p[0];
      const char *c = p[1], *x = p[2], *y = p[3];
      const int64_t so = s[0], sc = s[1], sx = s[2], sy = s[3];
      for (int64_t i = 0; i < n; ++i) {
        T v = load<bool>(c + i * sc) ? load<T>(x + i * sx) : load<T>(y + i * sy);
        std::memcpy(o + i * so, &v, sizeof(T));
      }
    });
  });
}

// A bound beyond an integer type's range clamps nothing on that side (uint8's clamp(-1, 3) leaves
// 0 alone): saturated into the range rather than wrapped into it.
template <typename T>
T clamp_bound(const Scalar& s) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (s.kind != Scalar::Float) {
      int64_t v = std::clamp<int64_t>(s.i, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      return static_cast<T>(v);
    }
  }
  return scalar_as<T>(s);
}

void infer_clamp(InSpan in, const Attrs& a, OutMeta* m) {
  DYN_CHECK(a.has_lo || a.has_hi, ErrorKind::Runtime, "torch.clamp: At least one of 'min' or 'max' must not be None");
  DType t = in[0].dtype();
  if (a.has_lo) t = promote_with_scalar(t, a.scalar);
  if (a.has_hi) t = promote_with_scalar(t, a.scalar2);
  DYN_CHECK(t != DType::Bool, ErrorKind::NotImplemented, "\"clamp_scalar_cpu\" not implemented for 'Bool'");
  m->shape = in[0].shape();
  m->dtype = t;
}

void kernel_clamp(InSpan in, const Attrs& a, OutSpan out) {
  DType t = out[0].dtype();
  Tensor x = cast_to(in[0], t);
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T lo = clamp_bound<T>(a.scalar), hi = clamp_bound<T>(a.scalar2);
      bool hl = a.has_lo, hh = a.has_hi;
      run_unary<T, T>(out[0], x, [=](T v) { return formula::clamp(v, lo, hi, hl, hh); });
    }
  });
}

void infer_cast(InSpan in, const Attrs& a, OutMeta* m) {
  m->shape = in[0].shape();
  m->dtype = a.dtype;
}

void kernel_cast(InSpan in, const Attrs&, OutSpan out) {
  visit_dtype_all(out[0].dtype(), [&](auto to_tag) {
    using To = decltype(to_tag);
    visit_dtype_all(in[0].dtype(), [&](auto from_tag) {
      using Ti = decltype(from_tag);
      run_unary<To, Ti>(out[0], in[0], [](Ti v) { return formula::convert<To>(v); });
    });
  });
}

}  // namespace

namespace block {

void stream_copy(const void* src, void* dst, int64_t bytes) {
  const auto* s = static_cast<const float*>(src);
  auto* d = static_cast<float*>(dst);
  for (int64_t k = 0; k < bytes / 4; k += 8) _mm256_stream_ps(d + k, _mm256_loadu_ps(s + k));
}

UnaryFn unary_fn(OpId op, DType t) {
  if (t != DType::Float32 && t != DType::Float64) return nullptr;
  bool f32 = t == DType::Float32;
  switch (op) {
#define DYN_FORMULA_none(n)
#define DYN_FORMULA_binary(n)
#define DYN_FORMULA_unary(n)                                                     \
  case OpId::n:                                                                  \
    if constexpr (OpId::n != OpId::logical_not)                                  \
      return f32 ? unary_erased<OpId::n, float> : unary_erased<OpId::n, double>; \
    break;
#define DYN_OP(n, cls, nin, nout, rule, formula, ...) DYN_FORMULA_##formula(n)
#include "core/ops/ops.def"
#undef DYN_FORMULA_unary
#undef DYN_FORMULA_binary
    default:
      break;
  }
  return nullptr;
}

BinaryFn binary_fn(OpId op, DType t) {
  if (t != DType::Float32 && t != DType::Float64) return nullptr;
  bool f32 = t == DType::Float32;
  switch (op) {
#define DYN_FORMULA_unary(n)
#define DYN_FORMULA_binary(n)                                                              \
  case OpId::n:                                                                            \
    if constexpr (std::is_same_v<decltype(apply_binary<OpId::n, float>(0.f, 0.f)), float>) \
      return f32 ? binary_erased<OpId::n, float> : binary_erased<OpId::n, double>;         \
    break;
#include "core/ops/ops.def"
#undef DYN_FORMULA_unary
#undef DYN_FORMULA_binary
#undef DYN_FORMULA_none
#undef DYN_OP
    default:
      break;
  }
  return nullptr;
}

}  // namespace block

void register_elementwise_ops(OpDef* t) {
  // clang-format off
#define DYN_KERNEL(n) set_kernel(t, OpId::n, infer_##n, kernel_##n);
  DYN_KERNEL(full) DYN_KERNEL(arange) DYN_KERNEL(where) DYN_KERNEL(clamp) DYN_KERNEL(cast)
#undef DYN_KERNEL
  // clang-format on
#define DYN_FORMULA_none(n)
#define DYN_FORMULA_unary(n) set_kernel(t, OpId::n, infer_unary<OpId::n>, kernel_unary<OpId::n>);
#define DYN_FORMULA_binary(n) set_kernel(t, OpId::n, infer_binary<OpId::n>, kernel_binary<OpId::n>);
#define DYN_OP(n, cls, nin, nout, rule, formula, ...) DYN_FORMULA_##formula(n)
#include "core/ops/ops.def"
#undef DYN_OP
#undef DYN_FORMULA_none
#undef DYN_FORMULA_unary
#undef DYN_FORMULA_binary
      t[static_cast<int>(OpId::floor_divide)]
          .check_values = check_binary<OpId::floor_divide>;
  t[static_cast<int>(OpId::remainder)].check_values = check_binary<OpId::remainder>;
  t[static_cast<int>(OpId::fmod)].check_values = check_binary<OpId::fmod>;
  t[static_cast<int>(OpId::pow)].check_values = check_binary<OpId::pow>;
}

}  // namespace dyn
