// matmul: 1-D and 2-D operands, and batched with broadcasting, on BLAS for floats.
#include <algorithm>
#include <limits>
#include <optional>

#include "core/blas.h"
#include "core/error.h"
#include "core/ops/loops.h"
#include "core/ops/run.h"

namespace dyn {

namespace {

using InSpan = std::span<const Tensor>;
using OutSpan = std::span<Tensor>;

std::string_view c_type_name(DType t) {
  static constexpr std::string_view kNames[] = {"bool",     "unsigned char", "signed char",   "short int", "int",
                                                "long int", "c10::Half",     "c10::BFloat16", "float",     "double"};
  return kNames[static_cast<int>(t)];
}

// Batch shape, M, K, N of a matmul; shapes of the 1-D cases are widened to matrices.
struct MatmulShape {
  Dims batch;
  int64_t m, k, n;
};

MatmulShape matmul_shape(const Tensor& a, const Tensor& b) {
  DYN_CHECK(a.ndim() >= 1 && b.ndim() >= 1, ErrorKind::Runtime,
            "both arguments to matmul need to be at least 1D, but they are {}D and {}D", a.ndim(), b.ndim());
  DYN_CHECK(a.dtype() == b.dtype(), ErrorKind::Runtime, "expected m1 and m2 to have the same dtype, but got: {} != {}",
            c_type_name(a.dtype()), c_type_name(b.dtype()));
  DYN_CHECK(a.dtype() != DType::Bool, ErrorKind::NotImplemented, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
  MatmulShape s;
  s.m = a.ndim() >= 2 ? a.size(a.ndim() - 2) : 1;
  s.k = a.size(a.ndim() - 1);
  int64_t kb = b.ndim() >= 2 ? b.size(b.ndim() - 2) : b.size(0);
  s.n = b.ndim() >= 2 ? b.size(b.ndim() - 1) : 1;
  if (s.k != kb) {
    if (a.ndim() == 1 && b.ndim() == 1)
      fail(ErrorKind::Runtime,
           "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but "
           "got {} and {} elements respectively",
           s.k, kb, s.k, kb);
    fail(ErrorKind::Runtime, "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", s.m, s.k, kb, s.n);
  }
  Dims ba, bb;
  for (int i = 0; i + 2 < a.ndim(); ++i) ba.push_back(a.size(i));
  for (int i = 0; i + 2 < b.ndim(); ++i) bb.push_back(b.size(i));
  s.batch = broadcast_shapes(ba, bb);
  return s;
}

void infer_matmul(InSpan in, const Attrs&, OutMeta* m) {
  MatmulShape s = matmul_shape(in[0], in[1]);
  m->dtype = in[0].dtype();
  m->shape = s.batch;
  if (in[0].ndim() >= 2) m->shape.push_back(s.m);
  if (in[1].ndim() >= 2) m->shape.push_back(s.n);
}

// A matrix operand BLAS can read in place: row-major (ld = row stride) or transposed.
struct MatView {
  bool trans;
  int64_t ld;
};

std::optional<MatView> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(1, cols)) return MatView{false, rs};
  if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(1, rows)) return MatView{true, cs};
  return std::nullopt;
}

void kernel_matmul(InSpan in, const Attrs&, OutSpan out) {
  const Tensor& a0 = in[0];
  const Tensor& b0 = in[1];
  MatmulShape s = matmul_shape(a0, b0);
  // Widen to [batch..., M, K] and [batch..., K, N] views.
  Tensor a = a0.ndim() == 1 ? kern::unsqueeze(a0, 0) : a0;
  Tensor b = b0.ndim() == 1 ? kern::unsqueeze(b0, 1) : b0;
  Dims ea = s.batch, eb = s.batch;
  ea.push_back(s.m), ea.push_back(s.k);
  eb.push_back(s.k), eb.push_back(s.n);
  a = kern::expand(a, ea);
  b = kern::expand(b, eb);
  int nb = s.batch.size();
  auto layout_or_copy = [&](Tensor& t, int64_t rows, int64_t cols) {
    auto l = blas_layout(rows, cols, t.strides()[nb], t.strides()[nb + 1]);
    if (l) return *l;
    t = kern::contiguous(t);
    return MatView{false, std::max<int64_t>(1, cols)};
  };
  MatView la = layout_or_copy(a, s.m, s.k);
  MatView lb = layout_or_copy(b, s.k, s.n);
  int64_t batches = numel_of(s.batch);
  // One matrix B for every batch (a Linear's weight under [batch, seq, features]) and A's rows
  // evenly spaced across the batches: one product of batches * M rows, as PyTorch folds it. One
  // BLAS call instead of one per batch (an 8 x 32-row batch: 36 -> 30 us), and the output is laid
  // out the same way.
  if (batches > 1 && !la.trans) {
    bool rows_even = true;
    int64_t step = s.m * la.ld;
    for (int d = nb - 1; d >= 0 && rows_even; --d) {
      if (s.batch[d] != 1 && (b.strides()[d] != 0 || a.strides()[d] != step)) rows_even = false;
      step *= s.batch[d];
    }
    if (rows_even && s.m * batches <= std::numeric_limits<int>::max()) {  // BLAS takes int sizes
      s.m *= batches;
      batches = 1;
    }
  }
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T* c = out[0].data<T>();
      for (int64_t bi = 0; bi < batches; ++bi) {
        int64_t oa = 0, ob = 0, rem = bi;
        for (int d = nb - 1; d >= 0; --d) {
          int64_t i = rem % s.batch[d];
          rem /= s.batch[d];
          oa += i * a.strides()[d];
          ob += i * b.strides()[d];
        }
        const T* pa = a.data<T>() + oa;
        const T* pb = b.data<T>() + ob;
        T* pc = c + bi * s.m * s.n;
        if (s.m == 0 || s.n == 0) continue;
        if (s.k == 0) {
          std::fill(pc, pc + s.m * s.n, T(0));
          continue;
        }
        if constexpr (std::is_floating_point_v<T>) {
          gemm(la.trans, lb.trans, s.m, s.n, s.k, pa, la.ld, pb, lb.ld, pc, std::max<int64_t>(1, s.n));
        } else {
          for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
              T acc = 0;
              for (int64_t p = 0; p < s.k; ++p)
                acc += (la.trans ? pa[p * la.ld + i] : pa[i * la.ld + p]) *
                       (lb.trans ? pb[j * lb.ld + p] : pb[p * lb.ld + j]);
              pc[i * s.n + j] = acc;
            }
        }
      }
    }
  });
}

}  // namespace

void register_matmul_ops(OpDef* t) {
  t[static_cast<int>(OpId::matmul)].infer = infer_matmul;
  t[static_cast<int>(OpId::matmul)].kernel = kernel_matmul;
}

}  // namespace dyn
