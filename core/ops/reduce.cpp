// Reductions (sum, mean, amax, amin, max/min with indices, argmax/argmin) and softmax.
// Note [deterministic reduction]: a row is summed in fixed blocks, each block in 8 interleaved
// lanes, blocks combined in order. The order depends only on the row length, never on threads.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/ops/blocks.h"
#include "core/ops/formulas.h"
#include "core/ops/loops.h"
#include "core/ops/rows.h"
#include "core/ops/run.h"
#include "core/ops/vmath.h"
#include "core/ops/vmath_avx2.h"

namespace dyn {

namespace {

using InSpan = std::span<const Tensor>;
using OutSpan = std::span<Tensor>;

constexpr int64_t kSumBlock = 1 << 16;

// Which dims a reduction removes: attrs.dims, or every dim when empty.
std::vector<bool> reduced_mask(const Tensor& t, const Dims& dims) {
  int nd = t.ndim();
  std::vector<bool> mask(std::max(nd, 1), dims.empty());
  for (int64_t d : dims) {
    int w = wrap_dim(d, nd);
    DYN_CHECK(!mask[w] || dims.empty(), ErrorKind::Runtime, "dim {} appears multiple times in the list of dims", w);
    mask[w] = true;
  }
  return mask;
}

Dims reduced_shape(const Tensor& t, const std::vector<bool>& mask, bool keepdim) {
  Dims out;
  for (int d = 0; d < t.ndim(); ++d) {
    if (!mask[d])
      out.push_back(t.size(d));
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// The input as a contiguous [rows, R] block with the reduced dims innermost.
Tensor rows_layout(const Tensor& t, const std::vector<bool>& mask, int64_t* rows, int64_t* r) {
  Dims perm;
  int64_t kept = 1, red = 1;
  for (int d = 0; d < t.ndim(); ++d)
    if (!mask[d]) perm.push_back(d), kept *= t.size(d);
  for (int d = 0; d < t.ndim(); ++d)
    if (mask[d]) perm.push_back(d), red *= t.size(d);
  *rows = kept;
  *r = red;
  return kern::contiguous(t.ndim() ? kern::permute(t, perm) : t);
}

template <typename Acc, typename T>
Acc sum_lanes(const T* p, int64_t n) {
  Acc acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<Acc>(p[i + j]);
  for (int j = 0; i < n; ++i, ++j) acc[j] += static_cast<Acc>(p[i]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <typename Acc, typename T>
Acc sum_row(const T* p, int64_t n) {
  if (n <= kSumBlock) return sum_lanes<Acc>(p, n);
  int64_t nb = (n + kSumBlock - 1) / kSumBlock;
  std::vector<Acc> part(nb);
  parallel_for(0, nb, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) part[k] = sum_lanes<Acc>(p + k * kSumBlock, std::min(kSumBlock, n - k * kSumBlock));
  });
  Acc total = 0;
  for (Acc v : part) total += v;
  return total;
}

// sum_row of every column of a contiguous [R, C] block (R <= kSumBlock), without first copying the
// columns into rows: each column's element k goes to lane k % 8 and the lanes combine as in
// sum_lanes, so the bits are sum_row's. A bias gradient (sum over batch and time) reads its
// input once instead of transposing it.
template <typename T>
void sum_columns(const T* p, int64_t R, int64_t C, bool mean, T* o) {
  constexpr int64_t kTile = 256;
  int64_t grain = std::max<int64_t>(kTile, kElementwiseGrain / std::max<int64_t>(R, 1));
  parallel_for(0, C, grain, [&](int64_t b, int64_t e) {
    for (int64_t jb = b; jb < e; jb += kTile) {
      const int64_t w = std::min(kTile, e - jb);
      double acc[8][kTile] = {};
      for (int64_t k = 0; k < R; ++k) {
        double* lane = acc[k & 7];
        const T* row = p + k * C + jb;
        for (int64_t j = 0; j < w; ++j) lane[j] += static_cast<double>(row[j]);
      }
      for (int64_t j = 0; j < w; ++j) {
        double s =
            ((acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j])) + ((acc[4][j] + acc[5][j]) + (acc[6][j] + acc[7][j]));
        o[jb + j] = static_cast<T>(mean ? s / static_cast<double>(R) : s);
      }
    }
  });
}

// The reduced dims are the leading dims of a contiguous tensor: a [R, C] block reduced over R.
bool leading_reduction(const Tensor& t, const std::vector<bool>& mask, int64_t* R, int64_t* C) {
  if (!t.is_contiguous() || t.ndim() < 2 || !mask[0]) return false;
  int p = 0;
  while (p < t.ndim() && mask[p]) ++p;
  for (int d = p; d < t.ndim(); ++d)
    if (mask[d]) return false;
  if (p == t.ndim()) return false;
  *R = *C = 1;
  for (int d = 0; d < t.ndim(); ++d) (d < p ? *R : *C) *= t.size(d);
  return *R <= kSumBlock && *R > 0 && *C > 1;
}

// Calls f(row) for every row, in parallel when there is enough work.
template <typename F>
void for_rows(int64_t rows, int64_t r, F f) {
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(r, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// Whether a row kernel streams its output (block::kStreamBytes): large, rows of whole 32-byte
// vectors from an aligned start, and short enough for a scratch row that stays in L1 or L2.
template <typename T>
bool stream_rows(const T* out, int64_t rows, int64_t r) {
  const auto row_bytes = r * static_cast<int64_t>(sizeof(T));
  return rows * row_bytes >= block::kStreamBytes && row_bytes % 32 == 0 && row_bytes <= (int64_t{64} << 10) &&
         reinterpret_cast<uintptr_t>(out) % 32 == 0;
}

// for_rows with a scratch row per chunk of rows when `scratch` (else f gets null): a streaming
// row kernel computes a row there, where its passes hit the cache, and then streams it out.
template <typename T, typename F>
void for_rows_scratch(int64_t rows, int64_t r, bool scratch, F f) {
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(r, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    // on a cache line, so that the passes over it make whole-line vector loads
    struct Free {
      void operator()(T* q) const { ::operator delete[](q, std::align_val_t{64}); }
    };
    std::unique_ptr<T[], Free> buf(scratch ? new (std::align_val_t{64}) T[static_cast<size_t>(r)] : nullptr);
    for (int64_t i = b; i < e; ++i) f(i, buf.get());
    if (scratch) _mm_sfence();  // this chunk's streamed rows are visible when the op ends
  });
}

// Whether rows of r floats from p are all on 64-byte boundaries (else the AVX-512 rows copy each to
// an aligned scratch row in their first pass).
inline bool aligned_rows(const float* p, int64_t r) { return reinterpret_cast<uintptr_t>(p) % 64 == 0 && r % 16 == 0; }

void infer_reduce(OpId op, InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  auto mask = reduced_mask(t, a.dims);
  m->shape = reduced_shape(t, mask, a.keepdim);
  DType d = a.has_hi ? a.dtype : t.dtype();  // has_hi: an explicit dtype= was given
  if (op == OpId::sum) {
    m->dtype = is_floating(d) || a.has_hi ? d : DType::Int64;  // integers sum as int64 unless dtype= says
  } else if (op == OpId::mean) {
    DYN_CHECK(is_floating(d), ErrorKind::NotImplemented,
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
              "Got: {}",
              legacy_dtype_name(d));
    m->dtype = d;
  } else {
    for (int i = 0; i < t.ndim(); ++i)
      DYN_CHECK(!(mask[i] && t.size(i) == 0), ErrorKind::Index,
                "{}(): Expected reduction dim {} to have non-zero size.", op_name(op), i);
    m->dtype = d;
  }
}

template <OpId Op>
void infer_reduce_op(InSpan in, const Attrs& a, OutMeta* m) {
  infer_reduce(Op, in, a, m);
}

template <OpId Op>
void kernel_reduce(InSpan in, const Attrs& a, OutSpan out) {
  DType od = out[0].dtype();
  Tensor src = in[0];
  if (a.has_hi && src.dtype() != a.dtype) src = kern::cast(src, a.dtype);
  if (Op == OpId::sum && od == DType::Int64 && src.dtype() != DType::Int64) src = kern::cast(src, DType::Int64);
  auto mask = reduced_mask(src, a.dims);
  int64_t rows, r;
  if constexpr (Op == OpId::sum || Op == OpId::mean)
    if (is_floating(od) && od == src.dtype() && leading_reduction(src, mask, &r, &rows)) {
      if (od == DType::Float32)
        sum_columns(src.data<float>(), r, rows, Op == OpId::mean, out[0].data<float>());
      else
        sum_columns(src.data<double>(), r, rows, Op == OpId::mean, out[0].data<double>());
      return;
    }
  Tensor x = rows_layout(src, mask, &rows, &r);
  visit_dtype(od, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool> || Op == OpId::amax || Op == OpId::amin) {
      const T* p = x.data<T>();
      T* o = out[0].data<T>();
      for_rows(rows, r, [&](int64_t i) {
        const T* row = p + i * r;
        if constexpr (Op == OpId::sum || Op == OpId::mean) {
          if constexpr (std::is_floating_point_v<T>) {
            double s = sum_row<double>(row, r);
            o[i] = static_cast<T>(Op == OpId::mean ? s / static_cast<double>(r) : s);
          } else {
            o[i] = static_cast<T>(sum_row<int64_t>(row, r));
          }
        } else {
          T best = row[0];
          for (int64_t k = 1; k < r; ++k) {
            T v = row[k];
            if constexpr (std::is_floating_point_v<T>)
              if (std::isnan(best)) break;
            if constexpr (std::is_floating_point_v<T>)
              if (std::isnan(v)) {
                best = v;
                break;
              }
            if (Op == OpId::amax ? v > best : v < best) best = v;
          }
          o[i] = best;
        }
      });
    }
  });
}

// ---- max/min with indices, argmax/argmin ----

void infer_index_reduce(OpId op, InSpan in, const Attrs& a, OutMeta* m, int nout) {
  const Tensor& t = in[0];
  Dims dims;
  if (a.has_lo) dims.push_back(a.dim);
  auto mask = reduced_mask(t, dims);
  for (int i = 0; i < t.ndim(); ++i)
    DYN_CHECK(!(mask[i] && t.size(i) == 0), ErrorKind::Index,
              "argmax(): Expected reduction dim {} to have non-zero size.", i);
  if (!a.has_lo && t.numel() == 0)
    fail(ErrorKind::Runtime, "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  Dims shape = reduced_shape(t, mask, a.keepdim);
  DYN_CHECK(t.dtype() != DType::Bool || nout == 2, ErrorKind::NotImplemented, "{}(): does not support bool input",
            op_name(op));
  if (nout == 2) {
    m[0] = OutMeta{t.dtype(), shape};
    m[1] = OutMeta{DType::Int64, shape};
  } else {
    m[0] = OutMeta{DType::Int64, shape};
  }
}

template <OpId Op>
void infer_index_reduce_op(InSpan in, const Attrs& a, OutMeta* m) {
  infer_index_reduce(Op, in, a, m, (Op == OpId::max_dim || Op == OpId::min_dim) ? 2 : 1);
}

template <OpId Op>
void kernel_index_reduce(InSpan in, const Attrs& a, OutSpan out) {
  constexpr bool kMax = Op == OpId::max_dim || Op == OpId::argmax;
  Dims dims;
  if (a.has_lo) dims.push_back(a.dim);
  auto mask = reduced_mask(in[0], dims);
  int64_t rows, r;
  Tensor x = rows_layout(in[0], mask, &rows, &r);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    int64_t* idx = out[out.size() - 1].data<int64_t>();
    T* vals = out.size() == 2 ? out[0].data<T>() : nullptr;
    for_rows(rows, r, [&](int64_t i) {
      const T* row = p + i * r;
      int64_t bi = 0;
      T best = row[0];
      for (int64_t k = 1; k < r; ++k) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(best)) break;
          if (std::isnan(row[k])) {
            best = row[k], bi = k;
            break;
          }
        }
        if (kMax ? row[k] > best : row[k] < best) best = row[k], bi = k;
      }
      idx[i] = bi;
      if (vals) vals[i] = best;
    });
  });
}

// ---- softmax ----

template <OpId Op>
void infer_softmax(InSpan in, const Attrs& a, OutMeta* m) {
  wrap_dim(a.dim, in[0].ndim());
  DYN_CHECK(is_floating(in[0].dtype()), ErrorKind::Runtime, "\"{}_lastdim_kernel_impl\" not implemented for '{}'",
            op_name(Op), legacy_dtype_name(in[0].dtype()));
  m->shape = in[0].shape();
  m->dtype = in[0].dtype();
}

// The largest element of a row, NaN if any is NaN. Max is exact, so lanes (8 floats or 4 doubles
// per AVX register) give the same value as a left-to-right scan.
template <typename T>
T row_max(const T* row, int64_t r) {
  constexpr int W = 32 / sizeof(T);
  auto load = [](const T* p) {
    if constexpr (std::is_same_v<T, float>)
      return _mm256_loadu_ps(p);
    else
      return _mm256_loadu_pd(p);
  };
  using V = decltype(load(row));
  auto vmax = [](V a, V b) {
    if constexpr (std::is_same_v<T, float>)
      return _mm256_max_ps(a, b);
    else
      return _mm256_max_pd(a, b);
  };
  auto unordered = [](V a) {
    if constexpr (std::is_same_v<T, float>)
      return _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
    else
      return _mm256_cmp_pd(a, a, _CMP_UNORD_Q);
  };
  auto vor = [](V a, V b) {
    if constexpr (std::is_same_v<T, float>)
      return _mm256_or_ps(a, b);
    else
      return _mm256_or_pd(a, b);
  };
  T mx = row[0];
  bool nan = false;
  int64_t k = 0;
  if (r >= W) {
    // Four independent maxima: one would wait on the previous max's latency every vector.
    V m[4], bad[4];
    for (int a = 0; a < 4; ++a) m[a] = load(row), bad[a] = unordered(m[a]);
    for (k = W; k + 4 * W <= r; k += 4 * W)
      for (int a = 0; a < 4; ++a) {
        V v = load(row + k + a * W);
        bad[a] = vor(bad[a], unordered(v));
        m[a] = vmax(v, m[a]);
      }
    for (; k + W <= r; k += W) {
      V v = load(row + k);
      bad[0] = vor(bad[0], unordered(v));
      m[0] = vmax(v, m[0]);
    }
    // The four maxima folded as vectors first: with a scan over their 32 lanes, a row of 32
    // floats spent as long finding its maximum as exponentiating it.
    V m0 = vmax(vmax(m[0], m[1]), vmax(m[2], m[3]));
    V bad0 = vor(vor(bad[0], bad[1]), vor(bad[2], bad[3]));
    if constexpr (std::is_same_v<T, float>)
      nan = _mm256_movemask_ps(bad0) != 0;
    else
      nan = _mm256_movemask_pd(bad0) != 0;
    T lanes[W];
    std::memcpy(lanes, &m0, sizeof(V));
    for (int j = 0; j < W; ++j) mx = lanes[j] > mx ? lanes[j] : mx;
  }
  for (; k < r; ++k) {
    nan |= row[k] != row[k];
    mx = row[k] > mx ? row[k] : mx;
  }
  if (nan) return std::numeric_limits<T>::quiet_NaN();
  return mx == 0 ? T(0) : mx;  // which zero wins a tie depends on the order: +0 at every width
}

// Sums of a row in double over 32 lanes (lane j takes elements j, j+32, ...: eight AVX registers
// of 4 doubles, so no add waits on the one before), combined in a fixed order at the end. Square:
// the sum of (x - center)^2 instead of x. The order of additions depends only on the row length.
template <bool Square, typename T>
double lane_sum_impl(const T* row, int64_t r, double center, const T* next = nullptr) {
  constexpr int R = 8;  // registers
  __m256d acc[R];
  for (int a = 0; a < R; ++a) acc[a] = _mm256_setzero_pd();
  const __m256d c = _mm256_set1_pd(center);
  auto term = [&](__m256d x) {
    if constexpr (Square) {
      __m256d d = _mm256_sub_pd(x, c);
      return _mm256_mul_pd(d, d);
    } else {
      return x;
    }
  };
  int64_t k = 0;
  for (; k + 4 * R <= r; k += 4 * R) {
    if (next)
      for (size_t b = 0; b < 4 * R * sizeof(T); b += 64)
        _mm_prefetch(reinterpret_cast<const char*>(next + k) + b, _MM_HINT_T0);
    for (int a = 0; a < R; a += 2) {
      __m256d x0, x1;
      if constexpr (std::is_same_v<T, float>) {
        __m256 v = _mm256_loadu_ps(row + k + 4 * a);
        x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
        x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      } else {
        x0 = _mm256_loadu_pd(row + k + 4 * a);
        x1 = _mm256_loadu_pd(row + k + 4 * a + 4);
      }
      acc[a] = _mm256_add_pd(acc[a], term(x0));
      acc[a + 1] = _mm256_add_pd(acc[a + 1], term(x1));
    }
  }
  double tail = 0;
  for (; k < r; ++k) {
    double x = static_cast<double>(row[k]);
    tail += Square ? (x - center) * (x - center) : x;
  }
  // The lanes combined as a fixed tree (a chain of 32 adds would cost as much as a short row).
  for (int width = R / 2; width >= 1; width /= 2)
    for (int a = 0; a < width; ++a) acc[a] = _mm256_add_pd(acc[a], acc[a + width]);
  double lanes[4];
  _mm256_storeu_pd(lanes, acc[0]);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + tail;
}
template <typename T>
double lane_sum(const T* row, int64_t r) {
  return lane_sum_impl<false>(row, r, 0.0);
}

// exp(row[k] - shift) for k < r (stored to e when Store) and their sum in double: element k of
// the whole vectors goes to lane k % 8 (two registers of 4 doubles), the tail after them is added
// in order, and the lanes are combined as a fixed tree, so the order depends only on r. The
// exponential is inlined into the pass that sums it (one pass where subtracting, exponentiating
// and summing took three), and two accumulators leave the exponential's constants registers: with
// lane_sum's eight they spilled, and the pass was slower than the three.
template <bool Store>
double exp_shifted_sum(const float* row, int64_t r, float shift, float* e, const float* next) {
  using FM = vmath::detail::FloatMath<vmath::detail::Avx2>;
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  const __m256 c = _mm256_set1_ps(shift);
  int64_t k = 0;
  for (; k + 8 <= r; k += 8) {
    _mm_prefetch(reinterpret_cast<const char*>(next + k), _MM_HINT_T0);
    __m256 y = FM::exp(_mm256_sub_ps(_mm256_loadu_ps(row + k), c));
    if constexpr (Store) _mm256_storeu_ps(e + k, y);
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(y)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(y, 1)));
  }
  double tail = 0;
  if (k < r) {  // one padded vector; lanes do not affect each other
    int64_t n = r - k;
    alignas(32) float a[8], y[8];
    for (int j = 0; j < 8; ++j) a[j] = j < n ? row[k + j] - shift : 0.0f;
    _mm256_store_ps(y, FM::exp(_mm256_load_ps(a)));
    for (int j = 0; j < n; ++j) {
      if constexpr (Store) e[k + j] = y[j];
      tail += static_cast<double>(y[j]);
    }
  }
  alignas(32) double lanes[8];
  _mm256_store_pd(lanes, lo);
  _mm256_store_pd(lanes + 4, hi);
  return (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))) + tail;
}

// log of a row's sum of exponentials for log_softmax. A NaN sum (a NaN or an inf - inf in the
// row) is passed on as it is: SLEEF's log gives NaNs of another sign at AVX2 and at AVX-512 width,
// and PyTorch's log_softmax keeps the row's NaN.
template <typename T>
T log_of_sum(double s) {
  return s != s ? static_cast<T>(s) : formula::log(static_cast<T>(s));
}

template <OpId Op>
void kernel_softmax(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& t = in[0];
  if (t.numel() == 0) return;
  int nd = t.ndim();
  int dim = wrap_dim(a.dim, nd);
  std::vector<bool> mask(std::max(nd, 1), false);
  mask[nd ? dim : 0] = true;
  int64_t rows, r;
  Tensor x = rows_layout(t, mask, &rows, &r);
  bool direct = nd == 0 || dim == nd - 1;  // the rows layout is the output's own layout
  Tensor dst = direct ? out[0] : Tensor::empty(x.shape(), t.dtype());
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* p = x.data<T>();
      T* o = dst.data<T>();
      const bool stream = direct && stream_rows(o, rows, r);
      if constexpr (std::is_same_v<T, float>) {
        if (vmath::avx512()) {  // Note [rows at two widths]: the same bits
          // A misaligned row is copied to the scratch row by the max's pass; the others read that.
          const bool copy = !aligned_rows(p, r) && r >= 16;
          for_rows_scratch<T>(rows, r, stream || copy, [&](int64_t i, T* scratch) {
            const float* row = p + i * r;
            float* orow = o + i * r;
            const float* next = i + 1 < rows ? row + r : row;
            float mx = rows::max_avx512(row, r, copy ? scratch : nullptr);
            const float* src = copy ? scratch : row;
            float* e = scratch ? scratch : orow;  // holds exp(x - max) until it is scaled (src may be e)
            if constexpr (Op == OpId::softmax) {
              double s = rows::exp_shifted_sum_avx512(src, r, mx, e, next);
              rows::scale_avx512(e, r, 1.0f / static_cast<float>(s), orow, stream);
            } else {
              double s = rows::exp_shifted_sum_avx512(src, r, mx, nullptr, next);
              float ls = log_of_sum<float>(s);
              for (int64_t k = 0; k < r; ++k) e[k] = src[k] - mx - ls;
              if (stream)
                block::stream_copy(e, orow, r * static_cast<int64_t>(sizeof(T)));
              else if (e != orow)
                std::memcpy(orow, e, static_cast<size_t>(r) * sizeof(float));
            }
          });
          return;
        }
      }
      for_rows_scratch<T>(rows, r, stream, [&](int64_t i, T* scratch) {
        const T* row = p + i * r;
        T* orow = o + i * r;
        T* e = scratch ? scratch : orow;  // holds exp(x - max) until it is scaled
        T mx = row_max(row, r);
        // The sum of exp(x - max) in double over fixed lanes, so the order of additions depends
        // only on the row length. log_softmax needs the sum only.
        double s;
        if constexpr (std::is_same_v<T, float>) {
          const float* next = i + 1 < rows ? row + r : row;
          s = Op == OpId::softmax ? exp_shifted_sum<true>(row, r, mx, e, next)
                                  : exp_shifted_sum<false>(row, r, mx, e, next);
        } else {
          for (int64_t k = 0; k < r; ++k) e[k] = row[k] - mx;
          vmath::map(vmath::Fn::exp, e, e, r);
          s = lane_sum(e, r);
        }
        if constexpr (Op == OpId::softmax) {
          // times the reciprocal, as PyTorch's CPU kernel: a division per element costs more
          // than the exponential
          T inv = T(1) / static_cast<T>(s);
          for (int64_t k = 0; k < r; ++k) e[k] = e[k] * inv;
        } else {
          T ls = log_of_sum<T>(s);
          for (int64_t k = 0; k < r; ++k) e[k] = row[k] - mx - ls;
        }
        if (scratch) block::stream_copy(e, orow, r * static_cast<int64_t>(sizeof(T)));
      });
    }
  });
  if (!direct) {
    // dst holds [kept..., dim]; move dim back to its place.
    Dims perm;  // dst dims are [kept..., dim]: put the last one back at `dim`
    for (int d = 0; d + 1 < nd; ++d) perm.push_back(d);
    perm.insert(dim, nd - 1);
    Dims shape_perm;
    for (int d = 0; d < nd; ++d)
      if (d != dim) shape_perm.push_back(t.size(d));
    shape_perm.push_back(t.size(dim));
    Tensor v = kern::permute(kern::view(dst, shape_perm), perm);
    kern::copy_into(out[0], v);
  }
}

}  // namespace

// ---- layer_norm: one pass per row for the moments, one for the output ----

// Inputs: x, then weight if has_lo, then bias if has_hi, each of the normalized shape (the last
// i0 dims of x); eps in scalar.
void infer_layer_norm(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& x = in[0];
  DYN_CHECK(is_floating(x.dtype()), ErrorKind::Runtime, "layer_norm expects a floating-point input, got {}",
            dtype_name(x.dtype()));
  DYN_CHECK(a.i0 >= 1 && a.i0 <= x.ndim(), ErrorKind::Runtime,
            "layer_norm: cannot normalize the last {} dims of a {}-d input", a.i0, x.ndim());
  DYN_CHECK(in.size() == 1 + size_t{a.has_lo} + size_t{a.has_hi}, ErrorKind::Runtime,
            "layer_norm: expected {} inputs, got {}", 1 + int{a.has_lo} + int{a.has_hi}, in.size());
  Dims norm;
  for (int d = x.ndim() - static_cast<int>(a.i0); d < x.ndim(); ++d) norm.push_back(x.size(d));
  for (size_t i = 1; i < in.size(); ++i) {
    DYN_CHECK(in[i].shape() == norm, ErrorKind::Runtime, "layer_norm: {} of shape {} does not match {}",
              i == 1 && a.has_lo ? "weight" : "bias", dims_str(in[i].shape()), dims_str(norm));
    DYN_CHECK(in[i].dtype() == x.dtype(), ErrorKind::Runtime, "layer_norm: expected {} to be {}, got {}",
              i == 1 && a.has_lo ? "weight" : "bias", dtype_name(x.dtype()), dtype_name(in[i].dtype()));
  }
  m->shape = x.shape();
  m->dtype = x.dtype();
}

void kernel_layer_norm(InSpan in, const Attrs& a, OutSpan out) {
  Tensor x = kern::contiguous(in[0]);
  Tensor w = a.has_lo ? kern::contiguous(in[1]) : Tensor();
  Tensor b = a.has_hi ? kern::contiguous(in[1 + int{a.has_lo}]) : Tensor();
  int64_t r = 1;
  for (int d = x.ndim() - static_cast<int>(a.i0); d < x.ndim(); ++d) r *= x.size(d);
  if (x.numel() == 0 || r == 0) return;
  int64_t rows = x.numel() / r;
  double eps = a.scalar.to_double();
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* p = x.data<T>();
      const T* wp = w.defined() ? w.data<T>() : nullptr;
      const T* bp = b.defined() ? b.data<T>() : nullptr;
      T* o = out[0].data<T>();
      bool stream = stream_rows(o, rows, r);
      if constexpr (std::is_same_v<T, float>) {
        if (vmath::avx512()) {  // Note [rows at two widths]: the same bits, streamed straight out
          // A misaligned row is copied to the scratch row by the first pass; the others read that. (A
          // scratch row also gives each chunk the fence its streamed stores need.)
          const bool copy = !aligned_rows(p, r) && r >= 32;
          for_rows_scratch<T>(rows, r, stream || copy, [&](int64_t i, T* scratch) {
            const float* row = p + i * r;
            const float* next = i + 1 < rows ? row + r : row;
            double mean = rows::lane_sum_avx512(row, r, copy ? scratch : nullptr) / static_cast<double>(r);
            const float* src = copy ? scratch : row;
            double var = rows::lane_square_sum_avx512(src, r, mean, next) / static_cast<double>(r);
            rows::layer_norm_out_avx512(src, r, static_cast<float>(mean),
                                        static_cast<float>(1.0 / std::sqrt(var + eps)), wp, bp, o + i * r, stream);
          });
          return;
        }
      }
      for_rows_scratch<T>(rows, r, stream, [&](int64_t i, T* scratch) {
        const T* row = p + i * r;
        T* orow = scratch ? scratch : o + i * r;
        // Moments in double, in fixed lanes: the mean, then the mean of squared deviations.
        double mean = lane_sum(row, r) / static_cast<double>(r);
        // The pass over a row in cache fetches the next: its first read from memory then
        // overlaps this row's arithmetic instead of following it.
        double var = lane_sum_impl<true>(row, r, mean, i + 1 < rows ? row + r : row) / static_cast<double>(r);
        T m = static_cast<T>(mean), rstd = static_cast<T>(1.0 / std::sqrt(var + eps));
        // One pass, each element rounded step by step as ((x - m) * rstd) * w + b.
        if (wp && bp)
          for (int64_t k = 0; k < r; ++k) orow[k] = (row[k] - m) * rstd * wp[k] + bp[k];
        else if (wp)
          for (int64_t k = 0; k < r; ++k) orow[k] = (row[k] - m) * rstd * wp[k];
        else if (bp)
          for (int64_t k = 0; k < r; ++k) orow[k] = (row[k] - m) * rstd + bp[k];
        else
          for (int64_t k = 0; k < r; ++k) orow[k] = (row[k] - m) * rstd;
        if (scratch) block::stream_copy(orow, o + i * r, r * static_cast<int64_t>(sizeof(T)));
      });
    }
  });
}

void register_reduce_ops(OpDef* t) {
#define DYN_R(n) set_kernel(t, OpId::n, infer_reduce_op<OpId::n>, kernel_reduce<OpId::n>);
  DYN_R(sum)
  DYN_R(mean)
  DYN_R(amax)
  DYN_R(amin)
#undef DYN_R
#define DYN_I(n) set_kernel(t, OpId::n, infer_index_reduce_op<OpId::n>, kernel_index_reduce<OpId::n>);
  DYN_I(max_dim)
  DYN_I(min_dim)
  DYN_I(argmax)
  DYN_I(argmin)
#undef DYN_I
  set_kernel(t, OpId::softmax, infer_softmax<OpId::softmax>, kernel_softmax<OpId::softmax>);
  set_kernel(t, OpId::log_softmax, infer_softmax<OpId::log_softmax>, kernel_softmax<OpId::log_softmax>);
  set_kernel(t, OpId::layer_norm, infer_layer_norm, kernel_layer_norm);
}

}  // namespace dyn
