// vmath on AVX-512 (built with -mavx512f; called only where the CPU has it, see vmath.cpp).
#include <immintrin.h>
// clang-format off
#include <sleef.h>
// clang-format on

#include "core/ops/vmath.h"
#include "core/ops/vmath_impl.h"

namespace dyn::vmath::detail {

namespace {

using F16 = decltype(&Sleef_expf16_u10avx512f);  // declared const (no side effects)
using D8 = decltype(&Sleef_expd8_u10avx512f);

F16 float_fn(Fn f) {
  switch (f) {
    case Fn::exp: return Sleef_expf16_u10avx512f;
    case Fn::expm1: return Sleef_expm1f16_u10avx512f;
    case Fn::log: return Sleef_logf16_u10avx512f;
    case Fn::log1p: return Sleef_log1pf16_u10avx512f;
    case Fn::sin: return Sleef_sinf16_u10avx512f;
    case Fn::cos: return Sleef_cosf16_u10avx512f;
    case Fn::tanh: return Sleef_tanhf16_u35avx512f;
    case Fn::erf: return Sleef_erff16_u10avx512f;
  }
  return Sleef_expf16_u10avx512f;
}

D8 double_fn(Fn f) {
  switch (f) {
    case Fn::exp: return Sleef_expd8_u10avx512f;
    case Fn::expm1: return Sleef_expm1d8_u10avx512f;
    case Fn::log: return Sleef_logd8_u10avx512f;
    case Fn::log1p: return Sleef_log1pd8_u10avx512f;
    case Fn::sin: return Sleef_sind8_u10avx512f;
    case Fn::cos: return Sleef_cosd8_u10avx512f;
    case Fn::tanh: return Sleef_tanhd8_u35avx512f;
    case Fn::erf: return Sleef_erfd8_u10avx512f;
  }
  return Sleef_expd8_u10avx512f;
}

}  // namespace

void map_avx512(Fn f, const float* in, float* out, int64_t n) {
  F16 fn = float_fn(f);
  each_vector<16>(in, out, n, [fn](const float* a, float* r) { _mm512_storeu_ps(r, fn(_mm512_loadu_ps(a))); });
}

void map_avx512(Fn f, const double* in, double* out, int64_t n) {
  D8 fn = double_fn(f);
  each_vector<8>(in, out, n, [fn](const double* a, double* r) { _mm512_storeu_pd(r, fn(_mm512_loadu_pd(a))); });
}

}  // namespace dyn::vmath::detail
