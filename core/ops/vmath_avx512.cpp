// vmath on AVX-512 (built with -mavx512f; called only where the CPU has it, see vmath.cpp).
#include <immintrin.h>
// clang-format off
#include <sleef.h>
// clang-format on

#include "core/ops/vmath.h"
#include "core/ops/vmath_avx512.h"
#include "core/ops/vmath_impl.h"

namespace dyn::vmath::detail {

namespace {

using F16 = decltype(&Sleef_expf16_u10avx512f);  // declared const (no side effects)
using D8 = decltype(&Sleef_expd8_u10avx512f);

DYN_VMATH_TABLE(F16, float_fn, f16, avx512f)

DYN_VMATH_TABLE(D8, double_fn, d8, avx512f)

template <__m512 (*fn)(__m512)>
void map_own(const float* in, float* out, int64_t n) {
  each_vector<16>(in, out, n, [](const float* a, float* r) { _mm512_storeu_ps(r, fn(_mm512_loadu_ps(a))); });
}

}  // namespace

void map_avx512(Fn f, const float* in, float* out, int64_t n) {
  if (f == Fn::exp) return map_own<FloatMath<Avx512>::exp>(in, out, n);
  if (f == Fn::tanh) return map_own<FloatMath<Avx512>::tanh>(in, out, n);
  if (f == Fn::erf) return map_own<FloatMath<Avx512>::erf>(in, out, n);
  F16 fn = float_fn(f);
  each_vector<16>(in, out, n, [fn](const float* a, float* r) { _mm512_storeu_ps(r, fn(_mm512_loadu_ps(a))); });
}

void map_avx512(Formula f, const float* in, float* out, int64_t n) {
  using M = FloatMath<Avx512>;
  if (f == Formula::sigmoid) return map_own<M::sigmoid>(in, out, n);
  if (f == Formula::silu) return map_own<M::silu>(in, out, n);
  map_own<M::gelu>(in, out, n);
}

void map_avx512(Fn f, const double* in, double* out, int64_t n) {
  D8 fn = double_fn(f);
  each_vector<8>(in, out, n, [fn](const double* a, double* r) { _mm512_storeu_pd(r, fn(_mm512_loadu_pd(a))); });
}

}  // namespace dyn::vmath::detail
