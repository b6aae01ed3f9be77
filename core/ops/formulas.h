// Per-element formulas of the elementwise ops: formula::name for every row of ops.def whose
// formula column is unary or binary. Eager kernels are generated from them and fused loops
// evaluate exactly these functions, so both produce the same bits.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/half.h"
#include "core/ops/vmath.h"

namespace dyn::formula {

template <typename T>
constexpr bool kFloat = std::is_floating_point_v<T>;

// ---- unary ----
template <typename T>
T neg(T x) {
  return -x;
}
template <typename T>
T abs(T x) {
  if constexpr (kFloat<T>)
    return std::fabs(x);
  else if constexpr (std::is_unsigned_v<T>)
    return x;
  else
    return static_cast<T>(x < 0 ? -x : x);
}
// The transcendental formulas go through vmath (SLEEF), one value at a time here and a block at a
// time in the kernels (kernels.h), with the same bits either way. Integers never reach them: their
// ops promote to a floating type first.
#define DYN_VMATH_FORMULA(name)                      \
  template <typename T>                              \
  T name(T x) {                                      \
    static_assert(kFloat<T>, #name " takes floats"); \
    return vmath::one(vmath::Fn::name, x);           \
  }
// Rounding is the identity on integers.
#define DYN_ROUNDING_FORMULA(name) \
  template <typename T>            \
  T name(T x) {                    \
    if constexpr (kFloat<T>)       \
      return std::name(x);         \
    else                           \
      return x;                    \
  }
DYN_VMATH_FORMULA(exp)
DYN_VMATH_FORMULA(expm1)
DYN_VMATH_FORMULA(log)
DYN_VMATH_FORMULA(log1p)
DYN_VMATH_FORMULA(sin)
DYN_VMATH_FORMULA(cos)
DYN_VMATH_FORMULA(tanh)
DYN_VMATH_FORMULA(erf)
DYN_VMATH_FORMULA(erfc)
DYN_VMATH_FORMULA(tan)
DYN_VMATH_FORMULA(asin)
DYN_VMATH_FORMULA(acos)
DYN_VMATH_FORMULA(atan)
DYN_VMATH_FORMULA(sinh)
DYN_VMATH_FORMULA(cosh)
DYN_VMATH_FORMULA(asinh)
DYN_VMATH_FORMULA(acosh)
DYN_VMATH_FORMULA(atanh)
DYN_ROUNDING_FORMULA(floor)
DYN_ROUNDING_FORMULA(ceil)
#undef DYN_VMATH_FORMULA
#undef DYN_ROUNDING_FORMULA

template <typename T>
T sqrt(T x) {
  return std::sqrt(x);  // correctly rounded: the vector instruction gives the same bits
}
template <typename T>
T rsqrt(T x) {
  return T(1) / std::sqrt(x);
}
template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + exp(-x));
}
template <typename T>
T relu(T x) {
  if constexpr (kFloat<T>)
    if (std::isnan(x)) return x;
  return x > T(0) ? x : T(0);
}
template <typename T>
T gelu(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(M_SQRT1_2)));
}
template <typename T>
T silu(T x) {
  return x / (T(1) + exp(-x));
}

// ---- binary ----
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return a + b;
}
template <typename T>
T sub(T a, T b) {
  return a - b;
}
template <typename T>
T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else
    return a * b;
}
template <typename T>
T div(T a, T b) {
  return a / b;
}

// Python's floor division and modulo; for floats numpy's npy_divmod, step for step.
template <typename T>
T floor_divide(T a, T b) {
  if constexpr (kFloat<T>) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T d = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) d -= T(1);
    if (d == 0) return std::copysign(T(0), a / b);
    T fd = std::floor(d);
    if (d - fd > T(0.5)) fd += T(1);
    return fd;
  } else {
    if constexpr (std::is_signed_v<T>)  // INT64_MIN / -1 traps on x86
      if (b == T(-1)) return static_cast<T>(0 - static_cast<uint64_t>(a));
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
}
template <typename T>
T remainder(T a, T b) {
  if constexpr (kFloat<T>) {
    T mod = std::fmod(a, b);
    if (b == 0) return mod;
    if (mod != 0) {
      if ((b < 0) != (mod < 0)) mod += b;
    } else {
      mod = std::copysign(T(0), b);
    }
    return mod;
  } else {
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return T(0);
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
// C's remainder: the sign of the dividend (remainder takes the divisor's).
template <typename T>
T fmod(T a, T b) {
  if constexpr (kFloat<T>) {
    return std::fmod(a, b);
  } else {
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return T(0);  // INT64_MIN % -1 overflows
    return static_cast<T>(a % b);
  }
}
template <typename T>
T hypot(T a, T b) {
  return std::hypot(a, b);
}
// As PyTorch's CPU kernel: the larger plus log1p(exp(-|a - b|)); equal infinities stay themselves.
template <typename T>
T logaddexp(T a, T b) {
  if constexpr (!kFloat<T>) {
    return static_cast<T>(logaddexp<double>(a, b));  // never run: ints promote to a float first
  } else {
    if (std::isinf(a) && a == b) return a;
    T m = std::max(a, b);
    return m + log1p(exp(-std::abs(a - b)));
  }
}
template <typename T>
T pow(T a, T b) {
  if constexpr (kFloat<T>) {
    // The exponents PyTorch's CPU kernel special-cases, computed the way it does.
    if (b == T(2)) return a * a;
    if (b == T(3)) return a * a * a;
    if (b == T(0.5)) return std::sqrt(a);
    if (b == T(-1)) return T(1) / a;
    if (b == T(-2)) return T(1) / (a * a);
    return std::pow(a, b);
  } else {
    T r = 1, base = a;
    auto e = static_cast<uint64_t>(b);  // negative exponents are rejected before the kernel runs
    while (e) {
      if (e & 1) r = static_cast<T>(static_cast<uint64_t>(r) * static_cast<uint64_t>(base));
      base = static_cast<T>(static_cast<uint64_t>(base) * static_cast<uint64_t>(base));
      e >>= 1;
    }
    return r;
  }
}
template <typename T>
T atan2(T a, T b) {
  return std::atan2(a, b);
}
template <typename T>
T maximum(T a, T b) {
  if constexpr (kFloat<T>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a > b ? a : b;
}
template <typename T>
T minimum(T a, T b) {
  if constexpr (kFloat<T>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a < b ? a : b;
}
template <typename T>
bool eq(T a, T b) {
  return a == b;
}
template <typename T>
bool ne(T a, T b) {
  return a != b;
}
template <typename T>
bool lt(T a, T b) {
  return a < b;
}
template <typename T>
bool le(T a, T b) {
  return a <= b;
}
template <typename T>
bool gt(T a, T b) {
  return a > b;
}
template <typename T>
bool ge(T a, T b) {
  return a >= b;
}
template <typename T>
bool logical_and(T a, T b) {
  return (a != T(0)) && (b != T(0));
}
template <typename T>
bool logical_or(T a, T b) {
  return (a != T(0)) || (b != T(0));
}
template <typename T>
bool logical_xor(T a, T b) {
  return (a != T(0)) != (b != T(0));
}
template <typename T>
bool logical_not(T a) {
  return a == T(0);
}
// Bitwise ops take integers and bools; floats are rejected before a kernel runs.
template <typename T>
T bitwise_and(T a, T b) {
  if constexpr (kFloat<T>)
    return T(0);
  else
    return static_cast<T>(a & b);
}
template <typename T>
T bitwise_or(T a, T b) {
  if constexpr (kFloat<T>)
    return T(0);
  else
    return static_cast<T>(a | b);
}
template <typename T>
T bitwise_xor(T a, T b) {
  if constexpr (kFloat<T>)
    return T(0);
  else
    return static_cast<T>(a ^ b);
}
template <typename T>
T bitwise_not(T a) {
  if constexpr (kFloat<T>)
    return T(0);
  else if constexpr (std::is_same_v<T, bool>)
    return !a;
  else
    return static_cast<T>(~a);
}

template <typename T>
T clamp(T x, T lo, T hi, bool has_lo, bool has_hi) {
  if constexpr (kFloat<T>)
    if (std::isnan(x)) return x;
  if (has_lo && x < lo) x = lo;
  if (has_hi && x > hi) x = hi;
  return x;
}

// Conversion between element types, as PyTorch's CPU casts on x86. A float goes to int64 or, as
// c10 does for uint8, through int64 to uint8; to the signed narrower types through int32. Out of
// range and NaN give the x86 instruction's INT64_MIN or INT32_MIN instead of C++'s undefined
// behaviour, then truncate (int8 of 3e9 is 0, of -129.7 is 127: PyTorch's values). The 16-bit
// floats convert through float32 both ways (a double or an int64 rounds twice on its way to
// float16, as in PyTorch).
template <typename To, typename From>
To convert(From v) {
  if constexpr (kReducedFloat<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (kReducedFloat<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if constexpr (sizeof(To) == 8 || std::is_unsigned_v<To>) {
      if (!(v >= From(-9.2233720368547758e18) && v < From(9.2233720368547758e18)))
        return static_cast<To>(std::numeric_limits<int64_t>::min());
      return static_cast<To>(static_cast<int64_t>(v));
    } else {
      if (!(v > From(-2147483649.0) && v < From(2147483648.0)))
        return static_cast<To>(std::numeric_limits<int32_t>::min());
      return static_cast<To>(static_cast<int32_t>(v));
    }
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace dyn::formula
