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

DYN_VMATH_TABLE(F16, float_fn, f16, avx512f)

DYN_VMATH_TABLE(D8, double_fn, d8, avx512f)

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
