// Float matrix products with at most a few rows in A, without OpenBLAS (small_gemm.cpp).
#pragma once
#include <cstdint>

namespace dyn {

constexpr int64_t kSmallGemmRows = 4;
// The largest row-major B (elements) taken; a transposed B (a Linear's weight) of any size is.
constexpr int64_t kSmallGemmRowMajorB = int64_t{1} << 18;

// Row-major C[M,N] = op(A)[M,K] @ op(B)[K,N], as gemm (blas.h) takes it, when 1 <= m <=
// kSmallGemmRows, n, k >= 1 and B is transposed or small; returns false, computing nothing,
// otherwise.
bool small_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace dyn
