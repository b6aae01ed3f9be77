// Vector math: the transcendental functions of the elementwise formulas, evaluated by SLEEF's
// vector functions (AVX-512 where the CPU has it, else AVX2; Debian's libsleef). Every element, wherever it sits, goes
// through the same vector function: a tail shorter than a vector is padded, and a single value
// is a vector of one lane. So eager kernels, fused loops and threaded chunks give the same bits.
#pragma once
#include <cstdint>

namespace dyn::vmath {

enum class Fn : uint8_t { exp, expm1, log, log1p, sin, cos, tanh, erf };

// out[i] = f(in[i]) for i < n; out may be in.
void map(Fn f, const float* in, float* out, int64_t n);
void map(Fn f, const double* in, double* out, int64_t n);

// f(x) for one value, with the bits map gives it.
float one(Fn f, float x);
double one(Fn f, double x);

// Which library and instruction set: "SLEEF 3.5 (AVX2, 1.0 ULP)".
const char* library();

}  // namespace dyn::vmath
