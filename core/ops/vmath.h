// Vector math: the transcendental functions of the elementwise formulas, evaluated by SLEEF's
// vector functions (AVX-512 where the CPU has it, else AVX2; Debian's libsleef). Every element, wherever it sits, goes
// through the same vector function: a tail shorter than a vector is padded, and a single value
// is a vector of one lane. So eager kernels, fused loops and threaded chunks give the same bits.
#pragma once
#include <cstdint>

namespace dyn::vmath {

// The functions, each with SLEEF's accuracy variant: u10 is within 1.0 ULP, u15 within 1.5 (erfc,
// SLEEF's only one), u35 within 3.5 ULP (tanh: its u10 variant costs four times as much). The float32 exp, tanh and erf
// are not SLEEF's but ours (vmath_float.h: exp within 0.78 ULP and cheaper, erf 4x faster, tanh within 1.6 ULP);
// float64 is SLEEF's throughout.
// X(name, accuracy, args...) for each; the args are passed through.
// clang-format off
#define DYN_VMATH_FUNCTIONS(X, ...) \
  X(exp, u10, __VA_ARGS__) X(expm1, u10, __VA_ARGS__) X(log, u10, __VA_ARGS__) X(log1p, u10, __VA_ARGS__) \
  X(sin, u10, __VA_ARGS__) X(cos, u10, __VA_ARGS__) X(tanh, u35, __VA_ARGS__) X(erf, u10, __VA_ARGS__) \
  X(tan, u10, __VA_ARGS__) X(asin, u10, __VA_ARGS__) X(acos, u10, __VA_ARGS__) X(atan, u10, __VA_ARGS__) \
  X(sinh, u10, __VA_ARGS__) X(cosh, u10, __VA_ARGS__) X(asinh, u10, __VA_ARGS__) X(acosh, u10, __VA_ARGS__) \
  X(atanh, u10, __VA_ARGS__) X(erfc, u15, __VA_ARGS__)
// clang-format on

enum class Fn : uint8_t {
#define DYN_VMATH_ENUM(name, ...) name,
  DYN_VMATH_FUNCTIONS(DYN_VMATH_ENUM, )
#undef DYN_VMATH_ENUM
};

// out[i] = f(in[i]) for i < n; out may be in.
void map(Fn f, const float* in, float* out, int64_t n);
void map(Fn f, const double* in, double* out, int64_t n);

// The float formulas built on exp and erf, in one pass at the vector width: sigmoid 1 / (1 +
// exp(-x)), silu x / (1 + exp(-x)), gelu (0.5 x)(1 + erf(x sqrt(1/2))); each step one IEEE
// rounding, as formulas.h's scalar steps, so the bits are those of the steps done one by one.
enum class Formula : uint8_t { sigmoid, silu, gelu };
void map(Formula f, const float* in, float* out, int64_t n);

// f(x) for one value, with the bits map gives it.
float one(Fn f, float x);
double one(Fn f, double x);

// Which library and instruction set: "SLEEF 3.5 (AVX2, 1.0 ULP)".
const char* library();

// use_avx512() (core/isa.h): whether this process computes on AVX-512, chosen once, so that vmath,
// the row kernels (rows.h) and the float products take one instruction set for the whole run.
bool avx512();

}  // namespace dyn::vmath
