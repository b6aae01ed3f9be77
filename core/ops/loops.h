// Strided N-operand iteration shared by the elementwise kernels (private to core/ops).
#pragma once
#include <cstring>

#include "core/tensor.h"
#include "core/thread_pool.h"

namespace dyn {

// Elements per parallel chunk: below this a kernel runs on the calling thread.
constexpr int64_t kElementwiseGrain = 32768;

// Operand 0 is the output; inputs are broadcast to its shape. Strides are in bytes. Dims are
// coalesced so a contiguous tensor of any shape iterates as one run.
template <int N>
struct LoopPlan {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];
  char* base[N];

  LoopPlan(const Tensor* ops[N]) {
    const Dims& out = ops[0]->shape();
    Dims st[N];
    for (int k = 0; k < N; ++k) {
      st[k] = broadcast_strides(ops[k]->shape(), ops[k]->strides(), out);
      base[k] = static_cast<char*>(ops[k]->raw_data());
    }
    // Drop size-1 dims, then merge dims that are contiguous with their inner neighbour in every operand.
    for (int d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      if (ndim > 0) {
        bool merge = true;
        for (int k = 0; k < N; ++k)
          if (strides[k][ndim - 1] != st[k][d] * out[d] * static_cast<int64_t>(itemsize(ops[k]->dtype())))
            merge = false;
        if (merge) {
          shape[ndim - 1] *= out[d];
          for (int k = 0; k < N; ++k) strides[k][ndim - 1] = st[k][d] * static_cast<int64_t>(itemsize(ops[k]->dtype()));
          continue;
        }
      }
      shape[ndim] = out[d];
      for (int k = 0; k < N; ++k) strides[k][ndim] = st[k][d] * static_cast<int64_t>(itemsize(ops[k]->dtype()));
      ++ndim;
    }
    if (ndim == 0) {  // a single element
      shape[0] = 1;
      for (int k = 0; k < N; ++k) strides[k][0] = 0;
      ndim = 1;
    }
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }

  // Calls inner(ptrs, inner_strides, n) for each run along the innermost dim covering
  // linear indices [begin, end).
  template <typename Inner>
  void run_range(int64_t begin, int64_t end, Inner& inner) const {
    int64_t idx[kMaxDims];
    int64_t rem = begin;
    for (int d = ndim - 1; d >= 0; --d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
    }
    int64_t inner_len = shape[ndim - 1];
    int64_t istr[N];
    for (int k = 0; k < N; ++k) istr[k] = strides[k][ndim - 1];
    // Offsets are carried from run to run rather than recomputed from the index: a permuted copy
    // walks runs of a few elements, where the recomputation cost more than the copying.
    int64_t off[N];
    for (int k = 0; k < N; ++k) {
      off[k] = 0;
      for (int d = 0; d < ndim; ++d) off[k] += idx[d] * strides[k][d];
    }
    int64_t pos = begin;
    while (pos < end) {
      char* p[N];
      for (int k = 0; k < N; ++k) p[k] = base[k] + off[k];
      int64_t n = std::min(inner_len - idx[ndim - 1], end - pos);
      inner(p, istr, n);
      pos += n;
      idx[ndim - 1] += n;
      for (int k = 0; k < N; ++k) off[k] += n * istr[k];
      for (int d = ndim - 1; d > 0 && idx[d] >= shape[d]; --d) {
        for (int k = 0; k < N; ++k) off[k] += strides[k][d - 1] - idx[d] * strides[k][d];
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  }

  template <typename Inner>
  void run(Inner inner) const {
    int64_t n = numel();
    parallel_for(0, n, kElementwiseGrain, [&](int64_t b, int64_t e) { run_range(b, e, inner); });
  }
};

template <typename T>
inline T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace dyn
