// Matrix products through OpenBLAS, opened at run time; float products with few rows in A (at most
// 16) run on small_gemm.cpp instead, and the others on packed_gemm.cpp where the process computes
// on AVX-512.
// Note [blas core]: Debian's OpenBLAS picks its kernels from the CPU id when it loads. On cloud VMs
// with a generic CPU model it falls back to old SSE3 kernels, ~4x slower than the AVX-512 ones the
// CPU supports. OpenBLAS reads OPENBLAS_CORETYPE in its load-time constructor, so the variable must
// be set before the library is loaded: we do not link it, we dlopen it after select_blas_core().
#include "core/blas.h"

#include <cpuid.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/isa.h"
#include "core/packed_gemm.h"
#include "core/small_gemm.h"
#include "core/thread_pool.h"

namespace dyn {

namespace {

enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                         int);
using SetThreadsFn = void (*)(int);
using CoreNameFn = char* (*)();

struct Blas {
  BlasInfo info;
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  SetThreadsFn set_threads = nullptr;
};

bool cpu_has_avx512() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
  return f && dq && bw && vl;
}

bool cpu_has_avx2_fma() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  bool fma = c & (1u << 12);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return fma && (b & (1u << 5));
}

Blas& blas() {
  static Blas* g = [] {
    auto* bl = new Blas();
    select_blas_core();
    const char* names[] = {"libopenblas.so.0", "libopenblas.so"};
    void* h = nullptr;
    for (const char* n : names) {
      h = dlopen(n, RTLD_NOW | RTLD_GLOBAL);
      if (h) {
        bl->info.library = n;
        break;
      }
    }
    if (!h) {
      bl->info.library = "none (install libopenblas0); using the built-in loops";
      bl->info.float32 = use_avx512() ? "dyn AVX-512" : "the built-in loops";
      return bl;
    }
    bl->sgemm = reinterpret_cast<SgemmFn>(dlsym(h, "cblas_sgemm"));
    bl->dgemm = reinterpret_cast<DgemmFn>(dlsym(h, "cblas_dgemm"));
    bl->set_threads = reinterpret_cast<SetThreadsFn>(dlsym(h, "openblas_set_num_threads"));
    auto core = reinterpret_cast<CoreNameFn>(dlsym(h, "openblas_get_corename"));
    if (core) bl->info.core = core();
    bl->info.loaded = bl->sgemm && bl->dgemm;
    bl->info.float32 = use_avx512() ? "dyn AVX-512" : bl->info.library;
    if (bl->set_threads) bl->set_threads(get_num_threads());
    return bl;
  }();
  return *g;
}

template <typename T>
void naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = s;
    }
}

}  // namespace

void select_blas_core() {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  if (cpu_has_avx512())
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  else if (cpu_has_avx2_fma())
    setenv("OPENBLAS_CORETYPE", "Haswell", 0);
}

const BlasInfo& blas_info() { return blas().info; }

void blas_set_threads(int n) {
  if (blas().set_threads) blas().set_threads(n);
}

namespace {

// cblas_sgemm and cblas_dgemm differ only in T; without a library the loops above stand in.
template <typename T, typename Fn>
void call_gemm(Fn fn, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
               int64_t ldb, T* c, int64_t ldc) {
  if (!fn) return naive_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  auto i = [](int64_t v) { return static_cast<int>(v); };
  fn(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, i(m), i(n), i(k), T(1), a, i(lda), b, i(ldb), T(0), c,
     i(ldc));
}

}  // namespace

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float* c, int64_t ldc) {
  if (small_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) return;
  // Note [one chain per element] (packed_gemm.cpp); DYN_VMATH=avx2 gives OpenBLAS's products too.
  if (use_avx512() && packed_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) return;
  call_gemm(blas().sgemm, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb,
          double* c, int64_t ldc) {
  call_gemm(blas().dgemm, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace dyn
