// Strided N-operand iteration shared by the elementwise kernels (private to core/ops).
#pragma once
#include <algorithm>
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
  int64_t item[N];  // bytes per element

  LoopPlan(const Tensor* ops[N]) {
    const Dims& out = ops[0]->shape();
    Dims st[N];
    for (int k = 0; k < N; ++k) {
      st[k] = broadcast_strides(ops[k]->shape(), ops[k]->strides(), out);
      base[k] = static_cast<char*>(ops[k]->raw_data());
      item[k] = static_cast<int64_t>(itemsize(ops[k]->dtype()));
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
    const int last = ndim - 1;
    // Past the end of dim `from` (and of the dims it fills up): on to the next index outside.
    auto carry = [&](int from) {
      for (int d = from; d > 0 && idx[d] >= shape[d]; --d) {
        for (int k = 0; k < N; ++k) off[k] += strides[k][d - 1] - idx[d] * strides[k][d];
        idx[d] = 0;
        ++idx[d - 1];
      }
    };
    while (pos < end) {
      char* p[N];
      for (int k = 0; k < N; ++k) p[k] = base[k] + off[k];
      // Whole rows of the innermost dim, as many as follow along the next one: a window of a
      // larger tensor (a convolution's shifted inputs) is runs of a few dozen elements, where
      // the index carry below cost as much as the copying.
      if (last > 0 && idx[last] == 0 && end - pos >= inner_len) {
        const int64_t rows = std::min(shape[last - 1] - idx[last - 1], (end - pos) / inner_len);
        int64_t rstr[N];
        for (int k = 0; k < N; ++k) rstr[k] = strides[k][last - 1];
        for (int64_t r = 0; r < rows; ++r) {
          inner(p, istr, inner_len);
          for (int k = 0; k < N; ++k) p[k] += rstr[k];
        }
        pos += rows * inner_len;
        idx[last - 1] += rows;
        for (int k = 0; k < N; ++k) off[k] += rows * rstr[k];
        carry(last - 1);
        continue;
      }
      int64_t n = std::min(inner_len - idx[ndim - 1], end - pos);
      inner(p, istr, n);
      pos += n;
      idx[ndim - 1] += n;
      for (int k = 0; k < N; ++k) off[k] += n * istr[k];
      carry(last);
    }
  }

  template <typename Inner>
  void run(Inner inner) const {
    int64_t n = numel();
    parallel_for(0, n, kElementwiseGrain, [&](int64_t b, int64_t e) { run_range(b, e, inner); });
  }
  // run, or for a transposing walk (below) run_tiles: for an element function, not a block
  // function, which would be called on runs of kTileL elements.
  template <typename Inner>
  void run_tiled(Inner inner) const {
    if constexpr (N == 2) {
      int across = transposed_dim();
      if (across >= 0) return run_tiles(across, inner);
    }
    run(inner);
  }

  // A copy-like walk (one input) whose input runs along another dim than the output (a
  // transpose, NCHW to NHWC): the dim along which the input is contiguous, or -1. Walked row by
  // row, each output row reads a column of the input, a cache line per element; a 512 x 512
  // float transpose took 480 us. In tiles of kTileA input-contiguous by kTileL output-contiguous
  // elements it takes 140 us: few enough lines per tile that a power-of-two row stride, which
  // maps a column's lines to a few cache sets, does not evict them (16 wide was faster at 512
  // but 2.2x slower at 1024). Every element is still computed alone: the order changes no result.
  static constexpr int64_t kTileA = 64, kTileL = 8;
  int transposed_dim() const {
    const int last = ndim - 1;
    if (ndim < 2 || strides[0][last] != item[0] || strides[1][last] < 64 || shape[last] < kTileL) return -1;
    if (numel() < 4096) return -1;
    for (int d = last - 1; d >= 0; --d)
      if (strides[1][d] == item[1] && shape[d] >= kTileL) return d;
    return -1;
  }
  template <typename Inner>
  void run_tiles(int across, Inner& inner) const {
    const int last = ndim - 1;
    const int64_t tiles_a = (shape[across] + kTileA - 1) / kTileA, tiles_l = (shape[last] + kTileL - 1) / kTileL;
    int64_t rest = 1;  // the other dims, as one index
    for (int d = 0; d < last; ++d)
      if (d != across) rest *= shape[d];
    const int64_t istr[N] = {strides[0][last], strides[1][last]};
    parallel_for(0, rest * tiles_a * tiles_l, std::max<int64_t>(1, kElementwiseGrain / (kTileA * kTileL)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t t = b; t < e; ++t) {
                     int64_t tl = t % tiles_l, ta = t / tiles_l % tiles_a, r = t / tiles_l / tiles_a;
                     int64_t off[N] = {0, 0};
                     for (int d = last - 1; d >= 0; --d) {
                       if (d == across) continue;
                       int64_t i = r % shape[d];
                       r /= shape[d];
                       for (int k = 0; k < N; ++k) off[k] += i * strides[k][d];
                     }
                     const int64_t a0 = ta * kTileA, a1 = std::min(shape[across], a0 + kTileA);
                     const int64_t l0 = tl * kTileL, n = std::min(shape[last], l0 + kTileL) - l0;
                     for (int64_t a = a0; a < a1; ++a) {
                       char* p[N];
                       for (int k = 0; k < N; ++k) p[k] = base[k] + off[k] + a * strides[k][across] + l0 * istr[k];
                       inner(p, istr, n);
                     }
                   }
                 });
  }
};

template <typename T>
inline T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace dyn
