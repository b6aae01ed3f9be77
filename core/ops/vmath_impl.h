// What the per-instruction-set files of vmath share (private to vmath*.cpp): the block loop.
#pragma once
#include <cstdint>
#include <cstring>

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

namespace dyn::vmath {
enum class Fn : uint8_t;
}

namespace dyn::vmath::detail {
void map_avx512(Fn f, const float* in, float* out, int64_t n);
void map_avx512(Fn f, const double* in, double* out, int64_t n);
}  // namespace dyn::vmath::detail
