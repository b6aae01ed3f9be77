// Ops that walk one dim in order: cumsum (a running sum) and sort (stable, with indices).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/ops/loops.h"
#include "core/ops/run.h"

namespace dyn {

namespace {

using InSpan = std::span<const Tensor>;
using OutSpan = std::span<Tensor>;

// The input with `dim` moved last, contiguous: rows of n elements each.
struct Rows {
  Tensor x;
  int64_t rows = 1, n = 1;
  Dims perm;  // applied to the input; its inverse puts results back
};

Rows rows_along(const Tensor& t, int dim) {
  Rows r;
  int nd = t.ndim();
  if (nd == 0) {
    r.x = kern::contiguous(t);
    return r;
  }
  for (int d = 0; d < nd; ++d)
    if (d != dim) r.perm.push_back(d), r.rows *= t.size(d);
  r.perm.push_back(dim);
  r.n = t.size(dim);
  r.x = kern::contiguous(kern::permute(t, r.perm));
  return r;
}

// Writes a [rows, n] result laid out like Rows::x back into out, in the input's dim order.
void put_back(const Rows& r, const Tensor& buf, Tensor& out) {
  if (r.perm.empty()) return kern::copy_into(out, buf);
  Dims inv = Dims::filled(r.perm.size(), 0);
  for (int i = 0; i < r.perm.size(); ++i) inv[r.perm[i]] = i;
  kern::copy_into(out, kern::permute(buf, inv));
}

template <typename F>
void for_rows(int64_t rows, int64_t n, F f) {
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

void infer_cumsum(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  wrap_dim(a.dim, t.ndim());
  m->shape = t.shape();
  m->dtype = is_floating(t.dtype()) ? t.dtype() : DType::Int64;
}

// Accumulates in double for floats (as PyTorch's CPU kernel does), in int64 for integers and bools.
void kernel_cumsum(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& t = in[0];
  if (t.numel() == 0) return;
  Rows r = rows_along(t, wrap_dim(a.dim, t.ndim()));
  Tensor buf = Tensor::empty(r.x.shape(), out[0].dtype());
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using O = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* p = r.x.data<T>();
    O* o = buf.data<O>();
    int64_t n = r.n;
    for_rows(r.rows, n, [&](int64_t i) {
      Acc acc = 0;
      for (int64_t k = 0; k < n; ++k) {
        int64_t j = a.reverse ? n - 1 - k : k;
        acc += static_cast<Acc>(p[i * n + j]);
        o[i * n + j] = static_cast<O>(acc);
      }
    });
  });
  put_back(r, buf, out[0]);
}

void infer_sort(InSpan in, const Attrs& a, OutMeta* m) {
  const Tensor& t = in[0];
  wrap_dim(a.dim, t.ndim());
  m[0] = OutMeta{t.dtype(), t.shape()};
  m[1] = OutMeta{DType::Int64, t.shape()};
}

// Stable, NaN after every number (ascending) or before (descending), as PyTorch orders them.
void kernel_sort(InSpan in, const Attrs& a, OutSpan out) {
  const Tensor& t = in[0];
  if (t.numel() == 0) return;
  Rows r = rows_along(t, wrap_dim(a.dim, t.ndim()));
  Tensor vals = Tensor::empty(r.x.shape(), t.dtype());
  Tensor idxs = Tensor::empty(r.x.shape(), DType::Int64);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = r.x.data<T>();
    T* v = vals.data<T>();
    int64_t* ix = idxs.data<int64_t>();
    int64_t n = r.n;
    for_rows(r.rows, n, [&](int64_t i) {
      const T* row = p + i * n;
      int64_t* irow = ix + i * n;
      std::iota(irow, irow + n, int64_t{0});
      auto nan = [](T x) {
        if constexpr (std::is_floating_point_v<T>)
          return std::isnan(x);
        else
          return false;
      };
      auto before = [&](int64_t x, int64_t y) {
        T l = row[x], rr = row[y];
        if (a.reverse) return nan(l) ? !nan(rr) : (!nan(rr) && rr < l);
        return nan(l) ? false : (nan(rr) || l < rr);
      };
      std::stable_sort(irow, irow + n, before);
      for (int64_t k = 0; k < n; ++k) v[i * n + k] = row[irow[k]];
    });
  });
  put_back(r, vals, out[0]);
  put_back(r, idxs, out[1]);
}

}  // namespace

void register_scan_ops(OpDef* t) {
  set_kernel(t, OpId::cumsum, infer_cumsum, kernel_cumsum);
  set_kernel(t, OpId::sort, infer_sort, kernel_sort);
}

}  // namespace dyn
