// Float matrix products with few rows in A (at most 16), without OpenBLAS (small_gemm.cpp).
#pragma once
#include <cstdint>

namespace dyn {

constexpr int64_t kSmallGemmRows = 4;      // rows of a register tile
constexpr int64_t kSmallGemmMaxRows = 16;  // rows taken, a tile at a time (half with a row-major B)
// The largest row-major B (elements) taken; a transposed B (a Linear's weight) of any size is.
constexpr int64_t kSmallGemmRowMajorB = int64_t{1} << 18;

// Row-major C[M,N] = op(A)[M,K] @ op(B)[K,N], as gemm (blas.h) takes it, when n, k >= 1 and
// either B is transposed and 1 <= m <= kSmallGemmMaxRows, or B is row-major, at most
// kSmallGemmRowMajorB elements, and 1 <= m <= kSmallGemmMaxRows / 2; returns false, computing
// nothing, otherwise.
bool small_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace dyn
