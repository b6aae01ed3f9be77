// vmath on AVX2 (the engine is built with -mavx2 -mfma), and the choice between it and AVX-512, made once per
// process so that every path of the process gives the same bits.
#include "core/ops/vmath.h"

#include <immintrin.h>
// clang-format off
#include <sleef.h>
// clang-format on

#include <cmath>
#include <limits>
#include <vector>

#include "core/isa.h"
#include "core/ops/vmath_avx2.h"
#include "core/ops/vmath_impl.h"

namespace dyn::vmath {

namespace {

using F8 = decltype(&Sleef_expf8_u10avx2);  // declared const (no side effects)
using D4 = decltype(&Sleef_expd4_u10avx2);

DYN_VMATH_TABLE(F8, float_fn, f8, avx2)

DYN_VMATH_TABLE(D4, double_fn, d4, avx2)

const bool kAvx512 = use_avx512();

// SLEEF's u10 sinh and cosh overflow before their results do (|x| > 88.5 in float, 709 in
// double), and asinh and acosh before x*x + 1 can be formed (|x| > 1.8e19, 1.3e154). Such lanes
// get forms that stay finite: sinh, cosh = (e / 2) * e with e = exp(|x| / 2) (exp(-|x|) is far
// below the result's last bit there), asinh, acosh = log(|x|) + ln 2 (1 / x^2 likewise). Worked
// out before the vector pass, which may write over the input.
struct Large {
  int64_t i;
  double r;
};
template <typename T>
std::vector<Large> large_lanes(Fn f, const T* in, int64_t n) {
  std::vector<Large> fix;
  bool hyper = f == Fn::sinh || f == Fn::cosh;
  if (!hyper && f != Fn::asinh && f != Fn::acosh) return fix;
  const T big = hyper ? (sizeof(T) == 4 ? T(88) : T(709)) : (sizeof(T) == 4 ? T(1e18) : T(1e150));
  for (int64_t i = 0; i < n; ++i) {
    T a = std::fabs(in[i]);
    if (!(a > big) || std::isinf(a)) continue;
    T r;
    if (hyper) {
      T e = one(Fn::exp, a / 2);
      r = (e / 2) * e;
      if (f == Fn::sinh) r = std::copysign(r, in[i]);
    } else {
      r = one(Fn::log, a) + T(M_LN2);
      if (f == Fn::asinh) r = std::copysign(r, in[i]);
      if (f == Fn::acosh && in[i] < 0) r = std::numeric_limits<T>::quiet_NaN();
    }
    fix.push_back({i, static_cast<double>(r)});
  }
  return fix;
}
template <typename T>
void put_large(const std::vector<Large>& fix, T* out) {
  for (const Large& l : fix) out[l.i] = static_cast<T>(l.r);
}

template <__m256 (*fn)(__m256)>
void map_own(const float* in, float* out, int64_t n) {
  detail::each_vector<8>(in, out, n, [](const float* a, float* r) { _mm256_storeu_ps(r, fn(_mm256_loadu_ps(a))); });
}

}  // namespace

bool avx512() { return kAvx512; }

void detail::map_avx2(Fn f, const float* in, float* out, int64_t n) {
  if (f == Fn::exp) return map_own<detail::FloatMath<detail::Avx2>::exp>(in, out, n);
  if (f == Fn::tanh) return map_own<detail::FloatMath<detail::Avx2>::tanh>(in, out, n);
  if (f == Fn::erf) return map_own<detail::FloatMath<detail::Avx2>::erf>(in, out, n);
  F8 fn = float_fn(f);
  detail::each_vector<8>(in, out, n, [fn](const float* a, float* r) { _mm256_storeu_ps(r, fn(_mm256_loadu_ps(a))); });
}

void detail::map_avx2(Formula f, const float* in, float* out, int64_t n) {
  using M = detail::FloatMath<detail::Avx2>;
  if (f == Formula::sigmoid) return map_own<M::sigmoid>(in, out, n);
  if (f == Formula::silu) return map_own<M::silu>(in, out, n);
  map_own<M::gelu>(in, out, n);
}

void map(Formula f, const float* in, float* out, int64_t n) {
  if (kAvx512)
    detail::map_avx512(f, in, out, n);
  else
    detail::map_avx2(f, in, out, n);
}

void map(Fn f, const float* in, float* out, int64_t n) {
  std::vector<Large> fix = large_lanes(f, in, n);
  if (kAvx512)
    detail::map_avx512(f, in, out, n);
  else
    detail::map_avx2(f, in, out, n);
  put_large(fix, out);
}

void map(Fn f, const double* in, double* out, int64_t n) {
  std::vector<Large> fix = large_lanes(f, in, n);
  if (kAvx512) {
    detail::map_avx512(f, in, out, n);
  } else {
    D4 fn = double_fn(f);
    detail::each_vector<4>(in, out, n,
                           [fn](const double* a, double* r) { _mm256_storeu_pd(r, fn(_mm256_loadu_pd(a))); });
  }
  put_large(fix, out);
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
