// vmath on AVX2 (the engine is built with -mavx2 -mfma), and the choice between it and AVX-512, made once per
// process so that every path of the process gives the same bits.
#include "core/ops/vmath.h"

#include <immintrin.h>
// clang-format off
#include <sleef.h>
// clang-format on

#include <cstdlib>
#include <cstring>

#include "core/ops/vmath_avx2.h"
#include "core/ops/vmath_impl.h"

namespace dyn::vmath {

namespace {

using F8 = decltype(&Sleef_expf8_u10avx2);  // declared const (no side effects)
using D4 = decltype(&Sleef_expd4_u10avx2);

DYN_VMATH_TABLE(F8, float_fn, f8, avx2)

DYN_VMATH_TABLE(D4, double_fn, d4, avx2)

// DYN_VMATH=avx2 keeps AVX2 on an AVX-512 machine (to reproduce another machine's bits).
const bool kAvx512 = [] {
  const char* want = std::getenv("DYN_VMATH");
  if (want && std::strcmp(want, "avx2") == 0) return false;
  return __builtin_cpu_supports("avx512f") != 0;
}();

template <__m256 (*fn)(__m256)>
void map_own(const float* in, float* out, int64_t n) {
  detail::each_vector<8>(in, out, n, [](const float* a, float* r) { _mm256_storeu_ps(r, fn(_mm256_loadu_ps(a))); });
}

}  // namespace

void detail::map_avx2(Fn f, const float* in, float* out, int64_t n) {
  if (f == Fn::exp) return map_own<detail::FloatMath<detail::Avx2>::exp>(in, out, n);
  if (f == Fn::tanh) return map_own<detail::FloatMath<detail::Avx2>::tanh>(in, out, n);
  if (f == Fn::erf) return map_own<detail::FloatMath<detail::Avx2>::erf>(in, out, n);
  F8 fn = float_fn(f);
  detail::each_vector<8>(in, out, n, [fn](const float* a, float* r) { _mm256_storeu_ps(r, fn(_mm256_loadu_ps(a))); });
}

void map(Fn f, const float* in, float* out, int64_t n) {
  if (kAvx512) return detail::map_avx512(f, in, out, n);
  detail::map_avx2(f, in, out, n);
}

void map(Fn f, const double* in, double* out, int64_t n) {
  if (kAvx512) return detail::map_avx512(f, in, out, n);
  D4 fn = double_fn(f);
  detail::each_vector<4>(in, out, n, [fn](const double* a, double* r) { _mm256_storeu_pd(r, fn(_mm256_loadu_pd(a))); });
}

float one(Fn f, float x) {
  float r;
  map(f, &x, &r, 1);
  return r;
}

double one(Fn f, double x) {
  double r;
  map(f, &x, &r, 1);
  return r;
}

const char* library() {
  return kAvx512 ? "SLEEF 3.5, AVX-512 (1.0 ULP; float exp 0.78, tanh 1.6, erf 2 ULP: our own)"
                 : "SLEEF 3.5, AVX2 (1.0 ULP; float exp 0.78, tanh 1.6, erf 2 ULP: our own)";
}

}  // namespace dyn::vmath
