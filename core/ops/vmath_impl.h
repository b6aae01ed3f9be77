// What the per-instruction-set files of vmath share (private to vmath*.cpp): the block loop.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/ops/vmath.h"

namespace dyn::vmath::detail {

// Whole vectors of W lanes straight from memory; the tail through one padded vector (padding 1:
// finite for every function of vmath).
template <int W, typename T, typename Call>
void each_vector(const T* in, T* out, int64_t n, Call call) {
  int64_t i = 0;
  for (; i + W <= n; i += W) call(in + i, out + i);
  if (i < n) {
    T a[W], r[W];
    for (int k = 0; k < W; ++k) a[k] = k < n - i ? in[i + k] : T(1);
    call(a, r);
    std::memcpy(out + i, r, static_cast<size_t>(n - i) * sizeof(T));
  }
}

}  // namespace dyn::vmath::detail

// Ret fn(Fn f): the SLEEF function of each vmath function for one vector width and instruction
// set, e.g. Sleef_expf8_u10avx2 for (f8, avx2).
#define DYN_VMATH_CASE(name, accuracy, width, isa) \
  case Fn::name:                                   \
    return Sleef_##name##width##_##accuracy##isa;
#define DYN_VMATH_TABLE(Ret, fn, width, isa)                       \
  Ret fn(Fn f) {                                                   \
    switch (f) { DYN_VMATH_FUNCTIONS(DYN_VMATH_CASE, width, isa) } \
    return nullptr;                                                \
  }

namespace dyn::vmath::detail {
// One instruction set each (tests compare them; map chooses).
void map_avx2(Fn f, const float* in, float* out, int64_t n);
void map_avx512(Fn f, const float* in, float* out, int64_t n);
void map_avx512(Fn f, const double* in, double* out, int64_t n);
void map_avx2(Formula f, const float* in, float* out, int64_t n);
void map_avx512(Formula f, const float* in, float* out, int64_t n);
}  // namespace dyn::vmath::detail
