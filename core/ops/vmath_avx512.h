// The AVX-512 vector traits of vmath_float.h (private to core/ops): vmath_avx512.cpp maps whole
// arrays with them, and the AVX-512 row kernels (rows_avx512.cpp) inline FloatMath<Avx512>::exp.
// Only files built with -mavx512f include this; their functions run only where the CPU has it.
#pragma once
#include <immintrin.h>

#include "core/ops/vmath_float.h"

namespace dyn::vmath::detail {

// AVX-512F only (no DQ): the bitwise float ops go through the integer ones.
struct Avx512 {
  DYN_VMATH_UNIFORM_OPS(__m512, _mm512, si512)
  static F round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static __m512i bits(F a) { return _mm512_castps_si512(a); }
  static F abs(F a) { return _mm512_castsi512_ps(_mm512_andnot_si512(bits(_mm512_set1_ps(-0.0f)), bits(a))); }
  static F neg(F a) { return _mm512_castsi512_ps(_mm512_xor_si512(bits(_mm512_set1_ps(-0.0f)), bits(a))); }
  static F copysign(F mag, F sign) {
    __m512i bit = bits(_mm512_set1_ps(-0.0f));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(bit, bits(mag)), _mm512_and_si512(bit, bits(sign))));
  }
  using M = __mmask16;
  static M less(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static bool any(M m) { return m != 0; }
  static F select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
};

}  // namespace dyn::vmath::detail
