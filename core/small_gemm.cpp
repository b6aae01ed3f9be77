// Float products with few rows in A: a batch-1 forward, one token through a Linear, a few
// sequences decoding at once. OpenBLAS's gemm packs all of B before any arithmetic (for one
// output row it copies the whole weight) and spends about ten thousand instructions getting
// there; these kernels read B in place, in register tiles of up to kSmallGemmRows rows.
//
// Every element of C is computed by one thread in an order that depends only on k, so results do
// not depend on how the columns are split into blocks or over threads. FMA instructions are
// explicit here, as in the vector math; the compiler fuses nothing (-ffp-contract=off).
#include "core/small_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "core/thread_pool.h"

namespace dyn {

namespace {

// The first n (< 8) lanes of p, the others 0.
__m256 load_first(const float* p, int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
  return _mm256_maskload_ps(p, mask);
}

void store_first(float* p, int64_t n, __m256 v) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
  _mm256_maskstore_ps(p, mask, v);
}

// The 8 lanes of v added as a fixed tree.
float lane_total(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);                  // lanes j + j+4
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));         // + j+2
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));  // + j+1
  return _mm_cvtss_f32(s);
}

// B stored transposed (column j of B at b + j*ldb, contiguous): C[i, j] is a dot product of A's
// row i with that column, lane l summing elements l, l+8, ... by FMA (the tail in the first k%8
// lanes), the lanes added as a fixed tree. A tile of R rows by C columns keeps R*C sums in flight
// and reads each vector of A and B once for all of them; the arithmetic of an element is the same
// in any tile.
template <int R, int C>
void dot_tile(int64_t i0, int64_t j, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc) {
  __m256 s[R][C];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < C; ++q) s[r][q] = _mm256_setzero_ps();
  auto step = [&](int64_t p, int64_t w) {
    __m256 x[R], y[C];
    for (int r = 0; r < R; ++r)
      x[r] = w == 8 ? _mm256_loadu_ps(a + (i0 + r) * lda + p) : load_first(a + (i0 + r) * lda + p, w);
    for (int q = 0; q < C; ++q)
      y[q] = w == 8 ? _mm256_loadu_ps(b + (j + q) * ldb + p) : load_first(b + (j + q) * ldb + p, w);
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < C; ++q) s[r][q] = _mm256_fmadd_ps(x[r], y[q], s[r][q]);
  };
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) step(p, 8);
  if (p < k) step(p, k - p);
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < C; ++q) c[(i0 + r) * ldc + j + q] = lane_total(s[r][q]);
}

template <int R>
void columns_contiguous(int64_t i0, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda, const float* b,
                        int64_t ldb, float* c, int64_t ldc) {
  constexpr int C = R <= 2 ? 4 : 2;
  int64_t j = j0;
  for (; j + C <= j1; j += C) dot_tile<R, C>(i0, j, k, a, lda, b, ldb, c, ldc);
  for (; j < j1; ++j) dot_tile<R, 1>(i0, j, k, a, lda, b, ldb, c, ldc);
}

// B row-major (row p of B at b + p*ldb, contiguous): row i of C is the sum over p of A[i, p]
// times row p of B, in order of p. A tile of R rows by V vectors of 8 columns reads each row of B
// once for all R rows of A, over rows [p0, p1) of B, starting from zero at p0 = 0 and else from
// what C holds: storing a float sum and loading it back is exact, so the arithmetic of an element
// is the same in any tile and any chunking of k.
template <int R, int V>
void axpy_tile(int64_t i0, int64_t j, int64_t w, int64_t p0, int64_t p1, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc) {
  auto at = [&](float* base, int v, auto full, auto part) {
    return w >= 8 * (v + 1) ? full(base + 8 * v) : part(base + 8 * v, w - 8 * v);
  };
  __m256 s[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      s[r][v] = p0 == 0 ? _mm256_setzero_ps()
                        : at(
                              c + (i0 + r) * ldc + j, v, [](float* q) { return _mm256_loadu_ps(q); },
                              [](float* q, int64_t n) { return load_first(q, n); });
  for (int64_t p = p0; p < p1; ++p) {
    const float* br = b + p * ldb + j;
    __m256 y[V];
    for (int v = 0; v < V; ++v)
      y[v] = w >= 8 * (v + 1) ? _mm256_loadu_ps(br + 8 * v) : load_first(br + 8 * v, w - 8 * v);
    for (int r = 0; r < R; ++r) {
      __m256 x = _mm256_set1_ps(a[(i0 + r) * lda + p]);
      for (int v = 0; v < V; ++v) s[r][v] = _mm256_fmadd_ps(x, y[v], s[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) {
      float* cr = c + (i0 + r) * ldc + j + 8 * v;
      if (w >= 8 * (v + 1))
        _mm256_storeu_ps(cr, s[r][v]);
      else
        store_first(cr, w - 8 * v, s[r][v]);
    }
}

template <int R>
void rows_contiguous(int64_t i0, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda, const float* b,
                     int64_t ldb, float* c, int64_t ldc) {
  constexpr int V = R <= 2 ? 4 : 2;
  // B's rows a chunk at a time, swept across all the columns: the chunk's pages and lines stay in
  // the TLB and the L2 cache, where a tile running down all of k touches a new page every row.
  constexpr int64_t kRowsOfB = 16;
  for (int64_t p0 = 0; p0 < k; p0 += kRowsOfB) {
    int64_t p1 = std::min(k, p0 + kRowsOfB);
    int64_t j = j0;
    for (; j + 8 * V <= j1; j += 8 * V) axpy_tile<R, V>(i0, j, 8 * V, p0, p1, a, lda, b, ldb, c, ldc);
    for (; j < j1; j += 8) axpy_tile<R, 1>(i0, j, std::min<int64_t>(8, j1 - j), p0, p1, a, lda, b, ldb, c, ldc);
  }
}

template <int R>
void rows_of_c(bool tb, int64_t i0, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc) {
  if (tb)
    columns_contiguous<R>(i0, j0, j1, k, a, lda, b, ldb, c, ldc);
  else
    rows_contiguous<R>(i0, j0, j1, k, a, lda, b, ldb, c, ldc);
}

}  // namespace

bool small_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc) {
  static_assert(kSmallGemmRows == 4, "the switch below has a kernel per row count");
  // Up to 16 rows against a transposed B (8, 12 and 16 rows of a 512 x 512 or 4096 x 1024 weight:
  // 1.2x to 2x OpenBLAS's speed), 8 against a row-major one (at 16 OpenBLAS was faster).
  if (m > (tb ? kSmallGemmMaxRows : kSmallGemmMaxRows / 2) || m <= 0 || n <= 0 || k <= 0) return false;
  // A row-major B is read in rows of n floats; past a megabyte its rows fall on a few cache sets
  // (n a multiple of 1024 puts them 4 KiB apart) and OpenBLAS, which packs B first, is faster.
  if (!tb && n * k > kSmallGemmRowMajorB) return false;
  // A's rows are read as vectors: a transposed A (m <= 4 columns in memory) is copied out first.
  std::vector<float> rows;
  if (ta) {
    rows.resize(static_cast<size_t>(m * k));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) rows[static_cast<size_t>(i * k + p)] = a[p * lda + i];
    a = rows.data(), lda = k;
  }
  // Blocks of columns over the threads once there is enough work; a column's sum is one thread's.
  const int64_t grain = std::max<int64_t>(32, (int64_t{1} << 18) / std::max<int64_t>(m * k, 1) / 32 * 32);
  // More rows than a tile holds go a tile at a time over each block of columns, which is still in
  // cache for the next tile: B is read from memory once. (Batched rows folded into one product,
  // [8, 1, k] @ W, ran 8 passes over W on this kernel and paid OpenBLAS's packing as one product.)
  parallel_for(0, n, grain, [&](int64_t j0, int64_t j1) {
    for (int64_t i0 = 0; i0 < m; i0 += kSmallGemmRows) {
      switch (std::min(m - i0, kSmallGemmRows)) {
        case 1:
          rows_of_c<1>(tb, i0, j0, j1, k, a, lda, b, ldb, c, ldc);
          break;
        case 2:
          rows_of_c<2>(tb, i0, j0, j1, k, a, lda, b, ldb, c, ldc);
          break;
        case 3:
          rows_of_c<3>(tb, i0, j0, j1, k, a, lda, b, ldb, c, ldc);
          break;
        default:
          rows_of_c<4>(tb, i0, j0, j1, k, a, lda, b, ldb, c, ldc);
      }
    }
  });
  return true;
}

}  // namespace dyn
