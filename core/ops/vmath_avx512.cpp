// vmath on AVX-512 (built with -mavx512f; called only where the CPU has it, see vmath.cpp).
#include <immintrin.h>
// clang-format off
#include <sleef.h>
// clang-format on

#include "core/ops/vmath.h"
#include "core/ops/vmath_float.h"
#include "core/ops/vmath_impl.h"

namespace dyn::vmath::detail {

namespace {

using F16 = decltype(&Sleef_expf16_u10avx512f);  // declared const (no side effects)
using D8 = decltype(&Sleef_expd8_u10avx512f);

DYN_VMATH_TABLE(F16, float_fn, f16, avx512f)

DYN_VMATH_TABLE(D8, double_fn, d8, avx512f)

// AVX-512F only (no DQ): the bitwise float ops go through the integer ones.
struct Avx512 {
  DYN_VMATH_UNIFORM_OPS(__m512, _mm512, si512)
  static F round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static __m512i bits(F a) { return _mm512_castps_si512(a); }
  static F abs(F a) { return _mm512_castsi512_ps(_mm512_andnot_si512(bits(_mm512_set1_ps(-0.0f)), bits(a))); }
  static F copysign(F mag, F sign) {
    __m512i bit = bits(_mm512_set1_ps(-0.0f));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(bit, bits(mag)), _mm512_and_si512(bit, bits(sign))));
  }
  using M = __mmask16;
  static M less(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static bool any(M m) { return m != 0; }
  static F select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
};

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

void map_avx512(Fn f, const double* in, double* out, int64_t n) {
  D8 fn = double_fn(f);
  each_vector<8>(in, out, n, [fn](const double* a, double* r) { _mm512_storeu_pd(r, fn(_mm512_loadu_pd(a))); });
}

}  // namespace dyn::vmath::detail
