// The float32 exp, tanh and erf of vmath, written once over a vector type V (V = AVX2 or AVX-512
// traits, vmath_avx2.h and vmath_avx512.cpp; private to core/ops). exp is within 0.78 ULP
// (SLEEF's bound is 1.0) with about a sixth fewer instructions than SLEEF's: softmax, sigmoid
// and silu spend most of their time in it. SLEEF's float erf carries
// double-float arithmetic for its bound and costs 2.3 ns an element (in cache, AVX-512): a tenth
// of an MLP with GELU; ours costs 0.6. SLEEF's float tanh is at 3.5 ULP; ours is a tenth faster
// (0.45 ns against 0.51) and within 1.6. These use one polynomial near 0 and exp elsewhere, all
// in float, measured over every float32 input (tests/cpp/test_vmath.cpp, DYN_VMATH_EXHAUSTIVE=1):
// tanh within 1.6 ULP (worst 1.51), erf within 2 (worst 1.93). Every operation is a single IEEE
// rounding (add, mul, div, fma), so AVX2 and AVX-512 give the same bits for every input.
//
// The coefficients were fitted for this file (Chebyshev fits in mpmath, rounded to float and
// checked in float): tanh(x) = x + x*s*Q(s), s = x*x, on |x| < 0.625; erf(x) = x + x*P(s) on
// |x| < 1 and 1 - exp(L(|x| - 2.5)), L ~ log(erfc), on 1 <= |x| < 4, past which erf rounds to 1;
// the sign is x's (odd functions, and -0 stays -0).
#pragma once
#include <cmath>

// The members of a vector traits struct V whose intrinsics differ only in their prefix (pfx:
// _mm256 or _mm512) and integer type suffix (si: si256 or si512). 2^n is for an integral n in
// [-126, 127], by the exponent bits.
#define DYN_VMATH_UNIFORM_OPS(Vec, pfx, si)                                                                         \
  using F = Vec;                                                                                                    \
  static F set(float v) { return pfx##_set1_ps(v); }                                                                \
  static F add(F a, F b) { return pfx##_add_ps(a, b); }                                                             \
  static F sub(F a, F b) { return pfx##_sub_ps(a, b); }                                                             \
  static F mul(F a, F b) { return pfx##_mul_ps(a, b); }                                                             \
  static F div(F a, F b) { return pfx##_div_ps(a, b); }                                                             \
  static F fma(F a, F b, F c) { return pfx##_fmadd_ps(a, b, c); }                                                   \
  static F min(F a, F b) { return pfx##_min_ps(a, b); }                                                             \
  static F max(F a, F b) { return pfx##_max_ps(a, b); }                                                             \
  static F pow2(F n) {                                                                                              \
    return pfx##_cast##si##_ps(pfx##_slli_epi32(pfx##_add_epi32(pfx##_cvtps_epi32(n), pfx##_set1_epi32(127)), 23)); \
  }                                                                                                                 \
  /* 2^n = *lo * *hi for an integral n in [-252, 254], each factor a normal float */                                \
  static void pow2_halves(F n, F* lo, F* hi) {                                                                      \
    auto k = pfx##_cvtps_epi32(n);                                                                                  \
    auto h = pfx##_srai_epi32(k, 1);                                                                                \
    auto bias = pfx##_set1_epi32(127);                                                                              \
    *lo = pfx##_cast##si##_ps(pfx##_slli_epi32(pfx##_add_epi32(h, bias), 23));                                      \
    *hi = pfx##_cast##si##_ps(pfx##_slli_epi32(pfx##_add_epi32(pfx##_sub_epi32(k, h), bias), 23));                  \
  }

namespace dyn::vmath::detail {

template <class V>
struct FloatMath {
  using F = typename V::F;

  // c[0] + u*(c[1] + u*(...)), by fma.
  template <int N>
  static F horner(F u, const float (&c)[N]) {
    F r = V::set(c[N - 1]);
    for (int i = N - 2; i >= 0; --i) r = V::fma(r, u, V::set(c[i]));
    return r;
  }

  // exp(y) for y <= 0 (Cody-Waite reduction by ln 2 in two parts, a degree-5 polynomial, then
  // 2^n by the exponent bits), clamped at -87 so that 2^n stays a normal float: the callers need
  // no smaller value. NaN propagates (max(c, y) returns y when y is NaN).
  static F exp_nonpositive(F y) {
    y = V::max(V::set(-87.0f), y);
    F n = V::round(V::mul(y, V::set(1.44269504088896341f)));
    F r = V::fma(n, V::set(-0.693359375f), y);
    r = V::fma(n, V::set(2.12194440e-4f), r);
    static const float kP[] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f,
                               8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
    F p = V::fma(horner(r, kP), V::mul(r, r), r);
    return V::mul(V::add(p, V::set(1.0f)), V::pow2(n));
  }

  // exp(x) over every float: the reduction and polynomial of exp_nonpositive, and 2^n applied as
  // two normal factors, so that results past FLT_MAX become inf and subnormal results are
  // rounded once (by the second product; the first is exact). x is clamped to [-104, 89], past
  // which exp is 0 or inf; NaN passes the clamps (min and max return their second operand).
  static F exp(F x) {
    F y = V::min(V::set(89.0f), V::max(V::set(-104.0f), x));
    F n = V::round(V::mul(y, V::set(1.44269504088896341f)));
    F r1 = V::fma(n, V::set(-0.693359375f), y);  // exact: n * ln2_hi has 17 bits
    F lo2 = V::set(2.12194440e-4f);
    F r = V::fma(n, lo2, r1);
    F d = V::fma(n, lo2, V::sub(r1, r));  // r's rounding error: r + d is x - n ln2
    // exp(r + d) = 1 + r + (r^2 P(r) + d), up to d r: with 1 + r kept as the exact pair s + sl
    // (Fast2Sum), the last add is the only rounding of the result's size. Evaluated as
    // 1 + fma(r^2, P, r), the bound was 1.01 ULP; this way it is 0.78 (worst 0.772).
    F s = V::add(V::set(1.0f), r);
    F sl = V::sub(r, V::sub(s, V::set(1.0f)));
    static const float kP[] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f,
                               8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
    F p = V::add(s, V::fma(horner(r, kP), V::mul(r, r), V::add(sl, d)));
    // Where every lane's 2^n is a normal float, one exact product; the two-factor form gives the
    // same bits there and is kept for the vectors that need it.
    if (!V::any(V::less(n, V::set(-126.0f))) && !V::any(V::less(V::set(127.0f), n))) return V::mul(p, V::pow2(n));
    F lo, hi;
    V::pow2_halves(n, &lo, &hi);
    // Below -104 the result rounds to +0 (exp(-104) < 2^-150): those lanes are set to 0 instead of
    // multiplied into the subnormal range, where every vector costs a microcode assist (2.5 times
    // the whole exponential; a causal mask's -inf logits take this path).
    auto zero = V::less(x, V::set(-104.0f));
    return V::select(zero, V::set(0.0f), V::mul(V::mul(p, lo), V::select(zero, V::set(1.0f), hi)));
  }

  static F tanh(F x) {
    F a = V::abs(x);
    F s = V::mul(x, x);
    static const float kQ[] = {-0.3333333432674408f,  0.13333304226398468f,   -0.05395940691232681f,
                               0.021769961342215538f, -0.008346980437636375f, 0.0022958412300795317f};
    F small = V::fma(a, V::mul(s, horner(s, kQ)), a);
    F e = exp_nonpositive(V::mul(a, V::set(-2.0f)));
    F big = V::div(V::sub(V::set(1.0f), e), V::add(V::set(1.0f), e));
    return V::copysign(V::select(V::less(a, V::set(0.625f)), small, big), x);
  }

  static F erf(F x) {
    F a = V::abs(x);
    F s = V::mul(x, x);
    static const float kP[] = {0.12837916612625122f,  -0.3761262595653534f,  0.11283597350120544f,
                               -0.02685432881116867f, 0.005189312156289816f, -0.0008018855005502701f,
                               7.882497448008507e-05f};
    F small = V::fma(a, horner(s, kP), a);
    static const float kL[] = {-7.806815147399902f,    -5.352680683135986f,      -0.9438936114311218f,
                               -0.010858165100216866f, 0.0021651603747159243f,   -0.00042070692870765924f,
                               7.739442662568763e-05f, -1.2976132893527392e-05f, 1.6140616025950294e-06f,
                               -6.5828579920435e-08f};
    F u = V::sub(V::min(V::set(4.0f), a), V::set(2.5f));
    F big = V::sub(V::set(1.0f), exp_nonpositive(horner(u, kL)));
    return V::copysign(V::select(V::less(a, V::set(1.0f)), small, big), x);
  }

  // The formulas of formulas.h built on exp and erf, operation for operation as their scalar steps
  // (elementwise.cpp ran them as three passes over a block: the same bits, about a third slower).
  static F sigmoid(F x) { return V::div(V::set(1.0f), V::add(V::set(1.0f), exp(V::neg(x)))); }
  static F silu(F x) { return V::div(x, V::add(V::set(1.0f), exp(V::neg(x)))); }
  static F gelu(F x) {
    F t = erf(V::mul(x, V::set(static_cast<float>(M_SQRT1_2))));
    return V::mul(V::mul(V::set(0.5f), x), V::add(V::set(1.0f), t));
  }
};

}  // namespace dyn::vmath::detail
