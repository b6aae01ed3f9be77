// vmath's own float32 exp, tanh and erf (core/ops/vmath_float.h): their error bound against the double
// C library over a sweep of every float32 magnitude (all of them with DYN_VMATH_EXHAUSTIVE=1),
// the same bits from the AVX2 and AVX-512 code, odd symmetry and the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "core/ops/vmath.h"
#include "core/ops/vmath_impl.h"

using dyn::vmath::Fn;

namespace {

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// |got - truth| in units of the float spacing at truth.
double ulps(float got, double truth) {
  float t = static_cast<float>(std::fabs(truth));
  double spacing = static_cast<double>(std::nextafter(t, std::numeric_limits<float>::infinity())) - t;
  if (t > 0 && static_cast<double>(t) > std::fabs(truth))  // truth rounded up: the spacing below it
    spacing = t - static_cast<double>(std::nextafter(t, 0.0f));
  return std::fabs(static_cast<double>(got) - truth) / spacing;
}

struct Sweep {
  double worst = 0;
  float worst_at = 0;
  int64_t checked = 0, isa_diffs = 0;
};

// Every `stride`-th positive finite float (and its negative), in chunks through both instruction sets.
// An odd function's negatives must be the negated results; another's are measured like the rest.
Sweep sweep(Fn f, double (*truth)(double), uint32_t stride, bool odd = true) {
  Sweep s;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::vector<float> in, out2, out512, neg, outneg;
  const uint32_t end = 0x7f800000u;  // +inf
  for (uint64_t start = 0; start < end;) {
    in.clear();
    for (; start < end && in.size() < 65536; start += stride) in.push_back(bits_to_float(static_cast<uint32_t>(start)));
    const auto n = static_cast<int64_t>(in.size());
    out2.resize(in.size()), out512.resize(in.size()), neg.resize(in.size()), outneg.resize(in.size());
    dyn::vmath::detail::map_avx2(f, in.data(), out2.data(), n);
    if (avx512) dyn::vmath::detail::map_avx512(f, in.data(), out512.data(), n);
    for (size_t i = 0; i < in.size(); ++i) neg[i] = -in[i];
    dyn::vmath::detail::map_avx2(f, neg.data(), outneg.data(), n);
    auto measure = [&](float x, float got) {
      double e = ulps(got, truth(static_cast<double>(x)));
      if (e > s.worst) s.worst = e, s.worst_at = x;
    };
    for (size_t i = 0; i < in.size(); ++i) {
      measure(in[i], out2[i]);
      if (avx512 && float_to_bits(out2[i]) != float_to_bits(out512[i])) ++s.isa_diffs;
      if (odd)
        EXPECT_EQ(float_to_bits(outneg[i]), float_to_bits(-out2[i])) << "not odd at " << in[i];
      else
        measure(neg[i], outneg[i]);
    }
    if (!odd && avx512) {
      dyn::vmath::detail::map_avx512(f, neg.data(), out512.data(), n);
      for (size_t i = 0; i < in.size(); ++i) s.isa_diffs += float_to_bits(outneg[i]) != float_to_bits(out512[i]);
    }
    s.checked += n;
  }
  std::printf("worst %.3f ULP at %.9g over %lld inputs and their negatives\n", s.worst, static_cast<double>(s.worst_at),
              static_cast<long long>(s.checked));
  return s;
}

uint32_t stride() { return std::getenv("DYN_VMATH_EXHAUSTIVE") ? 1u : 127u; }

float avx2_one(Fn f, float x) {
  float r;
  dyn::vmath::detail::map_avx2(f, &x, &r, 1);
  return r;
}

}  // namespace

TEST(VmathFloat, TanhWithin1Point6UlpEverywhere) {
  Sweep s = sweep(
      Fn::tanh, [](double x) { return std::tanh(x); }, stride());
  EXPECT_LE(s.worst, 1.6) << "worst at " << s.worst_at << " over " << s.checked;
  EXPECT_EQ(s.isa_diffs, 0);
}

TEST(VmathFloat, ErfWithinTwoUlpEverywhere) {
  Sweep s = sweep(
      Fn::erf, [](double x) { return std::erf(x); }, stride());
  EXPECT_LE(s.worst, 2.0) << "worst at " << s.worst_at << " over " << s.checked;
  EXPECT_EQ(s.isa_diffs, 0);
}

TEST(VmathFloat, ExpWithinOneUlpEverywhere) {
  Sweep s = sweep(
      Fn::exp, [](double x) { return std::exp(x); }, stride(), /*odd=*/false);
  EXPECT_LE(s.worst, 1.0) << "worst at " << s.worst_at << " over " << s.checked;
  EXPECT_EQ(s.isa_diffs, 0);
}

TEST(VmathFloat, ExpSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(avx2_one(Fn::exp, inf), inf);
  EXPECT_EQ(float_to_bits(avx2_one(Fn::exp, -inf)), 0u);
  EXPECT_TRUE(std::isnan(avx2_one(Fn::exp, nan)));
  EXPECT_EQ(avx2_one(Fn::exp, 0.0f), 1.0f);
  EXPECT_EQ(avx2_one(Fn::exp, -0.0f), 1.0f);
  // Near the largest finite result (ln FLT_MAX = 88.7228391...) and in the subnormal results
  // (exp(-100) = 3.7e-44 is 26.6 times the smallest subnormal), rounded once.
  for (float x : {88.72283f, 88.0f, -87.3f, -100.0f, -103.9f}) {
    float got = avx2_one(Fn::exp, x);
    EXPECT_TRUE(std::isfinite(got)) << x;
    EXPECT_LE(ulps(got, std::exp(static_cast<double>(x))), 1.0) << x;
  }
  EXPECT_EQ(avx2_one(Fn::exp, 88.7229f), inf);
  EXPECT_EQ(float_to_bits(avx2_one(Fn::exp, -110.0f)), 0u);
  // A vector that mixes lanes past -104 (zeroed, not computed: a causal mask's -inf) with
  // subnormal, normal and NaN results: each lane as it is alone.
  const float mixed[8] = {-inf, 1.0f, -104.5f, -100.0f, -103.9f, nan, -200.0f, 0.5f};
  float got[8];
  dyn::vmath::detail::map_avx2(Fn::exp, mixed, got, 8);
  for (int j = 0; j < 8; ++j) {
    float alone = avx2_one(Fn::exp, mixed[j]);
    if (std::isnan(alone))
      EXPECT_TRUE(std::isnan(got[j])) << j;
    else
      EXPECT_EQ(float_to_bits(got[j]), float_to_bits(alone)) << mixed[j];
  }
  EXPECT_GT(got[3], 0.0f);
  EXPECT_EQ(float_to_bits(got[0]), 0u);
  EXPECT_EQ(float_to_bits(got[2]), 0u);
}

TEST(VmathFloat, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (Fn f : {Fn::tanh, Fn::erf}) {
    SCOPED_TRACE(f == Fn::tanh ? "tanh" : "erf");
    EXPECT_EQ(avx2_one(f, inf), 1.0f);
    EXPECT_EQ(avx2_one(f, -inf), -1.0f);
    EXPECT_TRUE(std::isnan(avx2_one(f, nan)));
    EXPECT_EQ(float_to_bits(avx2_one(f, -0.0f)), float_to_bits(-0.0f));
    EXPECT_EQ(float_to_bits(avx2_one(f, 0.0f)), 0u);
    EXPECT_EQ(avx2_one(f, 1e30f), 1.0f);
  }
  // Below the float spacing of x*x, tanh(x) is x (also for subnormals); erf(x) = x*2/sqrt(pi).
  EXPECT_EQ(avx2_one(Fn::tanh, 1e-30f), 1e-30f);
  EXPECT_EQ(avx2_one(Fn::tanh, 1e-40f), 1e-40f);
  EXPECT_EQ(avx2_one(Fn::erf, 1e-20f), static_cast<float>(static_cast<double>(1e-20f) * 2 / std::sqrt(M_PI)));
}
