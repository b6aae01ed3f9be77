// Float products of every size past small_gemm's, at AVX-512 width (this file is built with
// -mavx512f). OpenBLAS reaches about 147 GFLOP/s on a Linear's 256 x 512 x 512 on this machine's
// Xeon and splits its work over its own threads, which compete with dyn's pool; these kernels use
// dyn's pool and the whole vector width.
//
// The layout is GotoBLAS's, one panel at a time: B is packed into panels of kCols columns by
// kDepth rows of k (64 KiB, in the L2 cache), and the tiles of kRows rows of C run down each
// panel. A tile keeps kRows x kCols sums in registers and adds, at each step over k, one row of
// the panel times one broadcast element of A per row; A is read in place.
//
// Note [one chain per element]: every element of C is a single chain of FMAs over k, in order,
// from zero; a block of k after the first starts from what C holds, which is exact (a float sum
// stored and loaded back). So the bits do not depend on kDepth, the tile, or how the rows
// are split over threads, and a product's bits are the same at any thread count.
#include "core/packed_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <new>

#include "core/thread_pool.h"

namespace dyn {

namespace {

constexpr int kRows = 6;
constexpr int kVecs = 4;
constexpr int64_t kCols = 16 * kVecs;
constexpr int64_t kDepth = 256;

__mmask16 lanes(int64_t n) {
  if (n <= 0) return 0;
  if (n >= 16) return 0xFFFF;
  return static_cast<__mmask16>((1u << n) - 1);
}

// C[r, q] (r < R, q < w <= 16 * V) over k in [0, kc): A's element (r, p) at a[r * lda + p], or at
// a[p * lda + r] when A is transposed (TA), the panel's row p at bp + p * kCols (zero past w).
template <int R, int V, bool TA>
void tile(int64_t kc, const float* a, int64_t lda, const float* bp, float* c, int64_t ldc, int64_t w, bool first) {
  __m512 s[R][V];
  __mmask16 m[V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) m[v] = lanes(w - 16 * v);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      s[r][v] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m[v], c + r * ldc + 16 * v);
  for (int64_t p = 0; p < kc; ++p) {
    const float* bq = bp + p * kCols;
    __m512 y[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) y[v] = _mm512_load_ps(bq + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m512 x = _mm512_set1_ps(TA ? a[p * lda + r] : a[r * lda + p]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) s[r][v] = _mm512_fmadd_ps(x, y[v], s[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) _mm512_mask_storeu_ps(c + r * ldc + 16 * v, m[v], s[r][v]);
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int64_t, bool);

// kTiles[ta][rows][vectors]: a panel narrower than kCols runs only the vectors it fills.
template <bool TA, int R>
constexpr std::array<TileFn, kVecs + 1> tiles_of_rows() {
  return {nullptr, tile<R, 1, TA>, tile<R, 2, TA>, tile<R, 3, TA>, tile<R, 4, TA>};
}
template <bool TA>
constexpr std::array<std::array<TileFn, kVecs + 1>, kRows + 1> tiles_of() {
  return {std::array<TileFn, kVecs + 1>{}, tiles_of_rows<TA, 1>(), tiles_of_rows<TA, 2>(), tiles_of_rows<TA, 3>(),
          tiles_of_rows<TA, 4>(),          tiles_of_rows<TA, 5>(), tiles_of_rows<TA, 6>()};
}
constexpr std::array<std::array<std::array<TileFn, kVecs + 1>, kRows + 1>, 2> kTiles = {tiles_of<false>(),
                                                                                        tiles_of<true>()};
static_assert(kRows == 6 && kVecs == 4, "kTiles lists a kernel per row and vector count");

// r[i][j] = r[j][i] for 16 vectors of 16 floats: pairs of rows interleaved, then quads within each
// 128-bit lane (r[4g + c]'s lane L then holds rows 4g..4g+3 of column 4L + c), then the lanes.
void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int c = 0; c < 4; ++c) {
    __m512 u0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44), u1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
    __m512 v0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44), v1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
    t[c] = _mm512_shuffle_f32x4(u0, v0, 0x88);
    t[4 + c] = _mm512_shuffle_f32x4(u0, v0, 0xDD);
    t[8 + c] = _mm512_shuffle_f32x4(u1, v1, 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(u1, v1, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// op(B)[p0 + p, j0 + q] for p < kc, q < w into one panel, zero past w.
void pack_panel(bool tb, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t w, float* bp) {
  if (!tb) {
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + (p0 + p) * ldb + j0;
      for (int v = 0; v < kVecs; ++v)
        _mm512_store_ps(bp + p * kCols + 16 * v, _mm512_maskz_loadu_ps(lanes(w - 16 * v), src + 16 * v));
    }
    return;
  }
  // B transposed: column j0 + q of op(B) is contiguous at b + (j0 + q) * ldb. 16 of them are
  // read 16 floats at a time and transposed in registers. (Stored a float at a time, the panel
  // cost more than the product's arithmetic; gathered 16 floats at a time, 8% of a 256 x 512 x
  // 512 product: 0.33 ns a float.)
  for (int v = 0; v < kVecs; ++v) {
    const int64_t nq = std::clamp<int64_t>(w - 16 * v, 0, 16);
    for (int64_t p = 0; p < kc; p += 16) {
      const int64_t np = std::min<int64_t>(16, kc - p);
      __m512 r[16];
      for (int q = 0; q < 16; ++q)
        r[q] = q < nq ? _mm512_maskz_loadu_ps(lanes(np), b + (j0 + 16 * v + q) * ldb + p0 + p) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t i = 0; i < np; ++i) _mm512_store_ps(bp + (p + i) * kCols + 16 * v, r[i]);
    }
  }
}

// One panel of B, kDepth rows of kCols floats, for each thread (64 KiB, allocated on first use).
struct Panel {
  float* data = nullptr;
  Panel() {
    data = static_cast<float*>(std::aligned_alloc(64, sizeof(float) * kDepth * kCols));
    if (!data) throw std::bad_alloc();
  }
  ~Panel() { std::free(data); }
};

}  // namespace

bool packed_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return false;
  const int64_t tiles = (m + kRows - 1) / kRows;
  const int64_t panels = (n + kCols - 1) / kCols;
  // A task is a panel's columns of C for a group of row tiles, over all of k: it packs its panel a
  // block of k at a time and runs its tiles across it. Panels alone make enough tasks for the
  // threads but on narrow products, which also split their rows (and pack the panel once per
  // group). Rows are grouped too so that a group's rows of A stay in the L2 cache across its
  // panels (a group's tasks come one after another). Tasks are claimed one at a time, so a thread
  // that wakes late takes fewer. Below about 4 us of arithmetic a second thread costs more than
  // it saves.
  // Past the L2 cache this is slower than GotoBLAS's shared packed block of B: 4096 x 1024 x 1024
  // runs at about 139 GFLOP/s where OpenBLAS reaches 155. OpenBLAS's bits there depend on the
  // thread count (1500 x 600 x 20 does); these do not.
  const int64_t threads = m * n * k < (int64_t{1} << 18) ? 1 : get_num_threads();
  constexpr int64_t kGroupBytes = int64_t{1} << 20;
  const int64_t by_size = (m * k * int64_t{sizeof(float)} + kGroupBytes - 1) / kGroupBytes;
  const int64_t by_threads = threads == 1 || panels >= 2 * threads ? 1 : (2 * threads + panels - 1) / panels;
  const int64_t wanted = std::min(tiles, std::max(by_size, by_threads));
  const int64_t group_tiles = (tiles + wanted - 1) / wanted;
  const int64_t groups = (tiles + group_tiles - 1) / group_tiles;  // none of them empty
  auto task = [&](int64_t id) {
    thread_local Panel panel;
    const int64_t g = id / panels, q = id % panels;
    const int64_t j0 = q * kCols, w = std::min(kCols, n - j0);
    const int64_t t1 = std::min(tiles, (g + 1) * group_tiles);
    for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
      const int64_t kc = std::min(kDepth, k - p0);
      pack_panel(tb, b, ldb, p0, kc, j0, w, panel.data);
      for (int64_t t = g * group_tiles; t < t1; ++t) {
        const int64_t i0 = t * kRows;
        const float* ap = ta ? a + p0 * lda + i0 : a + i0 * lda + p0;
        kTiles[ta][std::min<int64_t>(kRows, m - i0)][(w + 15) / 16](kc, ap, lda, panel.data, c + i0 * ldc + j0, ldc, w,
                                                                    p0 == 0);
      }
    }
  };
  parallel_for(0, panels * groups, threads == 1 ? panels * groups : 1, [&](int64_t id0, int64_t id1) {
    for (int64_t id = id0; id < id1; ++id) task(id);
  });
  return true;
}

}  // namespace dyn
