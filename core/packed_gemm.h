// Float matrix products on AVX-512 kernels of our own (packed_gemm.cpp), for the shapes
// small_gemm.h does not take.
#pragma once
#include <cstdint>

namespace dyn {

// Row-major C[M,N] = op(A)[M,K] @ op(B)[K,N], as gemm (blas.h) takes it, when m, n, k >= 1;
// returns false, computing nothing, otherwise. Call it only where use_avx512() (isa.h) holds: it is
// built for AVX-512.
// Each element of C is one chain of FMAs over k in order, so the result does not depend on the
// blocking or on the number of threads.
bool packed_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace dyn
