// The AVX2 vector traits of vmath_float.h (private to core/ops): vmath.cpp maps whole arrays with
// them, and row kernels (reduce.cpp) inline FloatMath<Avx2>::exp into their own loops. Both are
// built with -mavx2 -mfma; the AVX-512 traits (vmath_avx512.cpp) give the same bits.
#pragma once
#include <immintrin.h>

#include "core/ops/vmath_float.h"

namespace dyn::vmath::detail {

struct Avx2 {
  DYN_VMATH_UNIFORM_OPS(__m256, _mm256, si256)
  static F round(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static F neg(F a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }
  static F copysign(F mag, F sign) {
    F bit = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(bit, mag), _mm256_and_ps(bit, sign));
  }
  using M = __m256;
  static M less(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
  static F select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
};

}  // namespace dyn::vmath::detail
