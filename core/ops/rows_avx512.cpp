// The row kernels of rows.h at AVX-512 width (built with -mavx512f; called only where the CPU has
// it). See Note [rows at two widths] for why each gives its AVX2 twin's bits.
#include <immintrin.h>

#include <cstring>
#include <limits>

#include "core/ops/rows.h"
#include "core/ops/vmath_avx512.h"

namespace dyn::rows {

namespace {

using FM = vmath::detail::FloatMath<vmath::detail::Avx512>;

// The 8 doubles of a (8 lanes of AVX2's two registers lo, hi) combined as reduce.cpp does.
double fold8(__m512d a) {
  alignas(64) double l[8];
  _mm512_store_pd(l, a);
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

__m512d low_pd(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
__m512d high_pd(__m512 v) { return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))); }

void store(float* out, __m512 v, bool stream) {
  if (stream) {  // the streaming rows are 32-byte aligned (reduce.cpp's stream_rows), not 64
    _mm256_stream_ps(out, _mm512_castps512_ps256(v));
    _mm256_stream_ps(out + 8, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  } else {
    _mm512_storeu_ps(out, v);
  }
}

template <bool Copy>
float max_impl(const float* row, int64_t r, float* copy) {
  float mx = row[0];
  bool nan = false;
  int64_t k = 0;
  if (r >= 16) {
    // four independent maxima, so that no max waits on the one before
    __m512 m[4];
    __mmask16 bad = 0;
    for (auto& v : m) v = _mm512_loadu_ps(row);
    if constexpr (Copy) _mm512_storeu_ps(copy, m[0]);
    for (k = 16; k + 64 <= r; k += 64)
      for (int a = 0; a < 4; ++a) {
        __m512 v = _mm512_loadu_ps(row + k + 16 * a);
        if constexpr (Copy) _mm512_storeu_ps(copy + k + 16 * a, v);
        bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        m[a] = _mm512_max_ps(v, m[a]);
      }
    for (; k + 16 <= r; k += 16) {
      __m512 v = _mm512_loadu_ps(row + k);
      if constexpr (Copy) _mm512_storeu_ps(copy + k, v);
      bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      m[0] = _mm512_max_ps(v, m[0]);
    }
    bad |= _mm512_cmp_ps_mask(m[0], m[0], _CMP_UNORD_Q);
    nan = bad != 0;
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, _mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
    for (float v : lanes) mx = v > mx ? v : mx;
  }
  for (; k < r; ++k) {
    if constexpr (Copy) copy[k] = row[k];
    nan |= row[k] != row[k];
    mx = row[k] > mx ? row[k] : mx;
  }
  if (nan) return std::numeric_limits<float>::quiet_NaN();
  return mx == 0 ? 0.0f : mx;  // which zero wins a tie depends on the order: +0 for both widths
}

}  // namespace

float max_avx512(const float* row, int64_t r, float* copy) {
  return copy ? max_impl<true>(row, r, copy) : max_impl<false>(row, r, nullptr);
}

double exp_shifted_sum_avx512(const float* row, int64_t r, float shift, float* e, const float* next) {
  // one accumulator of 8 lanes, each element added to lane k % 8 in index order: AVX2's lo and hi
  __m512d acc = _mm512_setzero_pd();
  const __m512 c = _mm512_set1_ps(shift);
  int64_t k = 0;
  for (; k + 16 <= r; k += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T0);
    __m512 y = FM::exp(_mm512_sub_ps(_mm512_loadu_ps(row + k), c));
    if (e) _mm512_storeu_ps(e + k, y);
    acc = _mm512_add_pd(acc, low_pd(y));
    acc = _mm512_add_pd(acc, high_pd(y));
  }
  if (k + 8 <= r) {  // 8 more: a 256-bit load and store (the upper lanes are zeros, unused)
    __m512 y = FM::exp(_mm512_sub_ps(_mm512_zextps256_ps512(_mm256_loadu_ps(row + k)), c));
    if (e) _mm256_storeu_ps(e + k, _mm512_castps512_ps256(y));
    acc = _mm512_add_pd(acc, low_pd(y));
    k += 8;
  }
  double tail = 0;
  if (k < r) {  // one padded vector; lanes do not affect each other
    int64_t n = r - k;
    alignas(64) float a[16] = {}, y[16];
    for (int64_t j = 0; j < n; ++j) a[j] = row[k + j] - shift;
    _mm512_store_ps(y, FM::exp(_mm512_load_ps(a)));
    for (int64_t j = 0; j < n; ++j) {
      if (e) e[k + j] = y[j];
      tail += static_cast<double>(y[j]);
    }
  }
  return fold8(acc) + tail;
}

void scale_avx512(const float* e, int64_t r, float inv, float* out, bool stream) {
  const __m512 s = _mm512_set1_ps(inv);
  int64_t k = 0;
  for (; k + 16 <= r; k += 16) store(out + k, _mm512_mul_ps(_mm512_loadu_ps(e + k), s), stream);
  for (; k < r; ++k) out[k] = e[k] * inv;  // (the last few by ordinary stores; the caller fences)
}

namespace {

// reduce.cpp's lane_sum_impl at AVX-512 width: its 32 lanes are four registers of 8 doubles
// (lane j takes elements j, j + 32, ...), combined by the same tree.
template <bool Square>
double lane_sum_impl(const float* row, int64_t r, double center, const float* next, float* copy = nullptr) {
  __m512d acc[4];
  for (auto& a : acc) a = _mm512_setzero_pd();
  const __m512d c = _mm512_set1_pd(center);
  auto term = [&](__m512d x) {
    if constexpr (Square) {
      __m512d d = _mm512_sub_pd(x, c);
      return _mm512_mul_pd(d, d);
    } else {
      return x;
    }
  };
  int64_t k = 0;
  for (; k + 32 <= r; k += 32) {
    if (next) {
      _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(next + k) + 64, _MM_HINT_T0);
    }
    __m512 v0 = _mm512_loadu_ps(row + k), v1 = _mm512_loadu_ps(row + k + 16);
    if (copy) _mm512_storeu_ps(copy + k, v0), _mm512_storeu_ps(copy + k + 16, v1);
    acc[0] = _mm512_add_pd(acc[0], term(low_pd(v0)));
    acc[1] = _mm512_add_pd(acc[1], term(high_pd(v0)));
    acc[2] = _mm512_add_pd(acc[2], term(low_pd(v1)));
    acc[3] = _mm512_add_pd(acc[3], term(high_pd(v1)));
  }
  double tail = 0;
  for (; k < r; ++k) {
    if (copy) copy[k] = row[k];
    double x = static_cast<double>(row[k]);
    tail += Square ? (x - center) * (x - center) : x;
  }
  // AVX2's tree over its eight registers of 4: registers a and a + 4, then a and a + 2, then 0
  // and 1, then the four lanes pairwise
  __m512d h0 = _mm512_add_pd(acc[0], acc[2]), h1 = _mm512_add_pd(acc[1], acc[3]);
  __m512d q = _mm512_add_pd(h0, h1);
  __m256d s = _mm256_add_pd(_mm512_castpd512_pd256(q), _mm512_extractf64x4_pd(q, 1));
  alignas(32) double l[4];
  _mm256_store_pd(l, s);
  return ((l[0] + l[1]) + (l[2] + l[3])) + tail;
}

}  // namespace

double lane_sum_avx512(const float* row, int64_t r, float* copy) {
  return lane_sum_impl<false>(row, r, 0.0, nullptr, copy);
}

double lane_square_sum_avx512(const float* row, int64_t r, double center, const float* next) {
  return lane_sum_impl<true>(row, r, center, next);
}

void layer_norm_out_avx512(const float* row, int64_t r, float m, float rstd, const float* w, const float* b, float* out,
                           bool stream) {
  const __m512 vm = _mm512_set1_ps(m), vs = _mm512_set1_ps(rstd);
  int64_t k = 0;
  for (; k + 16 <= r; k += 16) {
    __m512 y = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + k), vm), vs);
    if (w) y = _mm512_mul_ps(y, _mm512_loadu_ps(w + k));
    if (b) y = _mm512_add_ps(y, _mm512_loadu_ps(b + k));
    store(out + k, y, stream);
  }
  for (; k < r; ++k) {
    float y = (row[k] - m) * rstd;
    if (w) y = y * w[k];
    if (b) y = y + b[k];
    out[k] = y;
  }
}

}  // namespace dyn::rows
