// Matrix products through OpenBLAS, opened at run time (see Note [blas core] in blas.cpp).
#pragma once
#include <string>

namespace dyn {

struct BlasInfo {
  bool loaded = false;
  std::string library;  // the file opened, or why none was
  std::string core;     // the kernel set OpenBLAS chose ("SkylakeX")
  std::string float32;  // what runs float products past small_gemm's rows: dyn's AVX-512 kernels or BLAS
};

// Sets OPENBLAS_CORETYPE for this CPU unless the user set it. Call before anything loads OpenBLAS
// (numpy does too): dynrepl calls it first thing in main.
void select_blas_core();
const BlasInfo& blas_info();
void blas_set_threads(int n);

// Row-major C[M,N] = op(A)[M,K] @ op(B)[K,N]; trans_* means the operand is stored transposed.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc);

}  // namespace dyn
