// The random ops (rand, randn, randint): counter-based draws, so element i of a call depends only
// on the generator's key and offset, never on the thread that computes it.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/ops/vmath.h"
#include "core/random.h"

namespace dyn {

namespace {

using InSpan = std::span<const Tensor>;
using OutSpan = std::span<Tensor>;

// Uniform in [0, 1) with 24 (float) or 53 (double) random bits.
inline float u24(uint32_t w) { return static_cast<float>(w >> 8) * 0x1.0p-24f; }
inline double u53(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((static_cast<uint64_t>(hi) << 32) | lo) >> 11) * 0x1.0p-53;
}

// Element i of a draw reads the words of Philox counter offset + i / kPer, starting at word
// (i % kPer) * (4 / kPer): gen(words) makes the element from them. Counters are generated a batch
// at a time (philox4x32_words), so each is computed once however many elements share it.
template <int kPer, typename T, typename Gen>
void run_random(const Tensor& out, const Attrs& a, Gen gen) {
  T* o = out.data<T>();
  parallel_for(0, out.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    constexpr int64_t kCounters = 256;
    uint32_t w[4 * kCounters];
    for (int64_t i = b; i < e;) {
      int64_t first = i / kPer, last = std::min((e - 1) / kPer + 1, first + kCounters);
      philox4x32_words(a.seed, a.offset + static_cast<uint64_t>(first), last - first, w);
      for (int64_t stop = std::min(e, last * kPer); i < stop; ++i)
        o[i] = gen(w + 4 * (i / kPer - first) + (i % kPer) * (4 / kPer));
    }
  });
}

void kernel_rand(InSpan, const Attrs& a, OutSpan out) {
  if (out[0].dtype() == DType::Float64)
    run_random<2, double>(out[0], a, [](const uint32_t* w) { return u53(w[0], w[1]); });
  else
    run_random<4, float>(out[0], a, [](const uint32_t* w) { return u24(w[0]); });
}

// Box-Muller, sqrt(-2 log u1) cos(2 pi u2), in double for both dtypes: the logarithms and cosines
// of a batch go through vmath (SLEEF's double functions, within 1 ULP) a vector at a time. One
// element at a time through libm they cost 33 ns an element, ten times PyTorch's randn.
template <typename T>
void randn_into(const Tensor& out, const Attrs& a) {
  constexpr double kTwoPi = 6.283185307179586;
  constexpr int64_t kPer = sizeof(T) == 8 ? 1 : 2;  // elements per Philox counter (4 words)
  constexpr int64_t kBatch = 256;                   // elements
  // Every chunk and batch then starts on a counter's first element.
  static_assert(kElementwiseGrain % kBatch == 0 && kBatch % kPer == 0);
  T* o = out.data<T>();
  parallel_for(0, out.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    alignas(64) uint32_t w[4 * kBatch / kPer];
    alignas(64) double lg[kBatch], cs[kBatch];
    for (int64_t i = b; i < e;) {
      const int64_t first = i / kPer, n = std::min(kBatch, e - i);
      philox4x32_words(a.seed, a.offset + static_cast<uint64_t>(first), (n + kPer - 1) / kPer, w);
      for (int64_t j = 0; j < n; ++j) {
        const uint32_t* x = w + (kPer == 1 ? 4 * j : 2 * j);  // element j: words 2j, 2j+1 when two share
        if constexpr (kPer == 1) {
          lg[j] = 1.0 - u53(x[0], x[1]);  // (0, 1]: log is finite
          cs[j] = kTwoPi * u53(x[2], x[3]);
        } else {
          lg[j] = 1.0 - static_cast<double>(u24(x[0]));
          cs[j] = kTwoPi * static_cast<double>(u24(x[1]));
        }
      }
      vmath::map(vmath::Fn::log, lg, lg, n);
      vmath::map(vmath::Fn::cos, cs, cs, n);
      for (int64_t j = 0; j < n; ++j) o[i + j] = static_cast<T>(std::sqrt(-2.0 * lg[j]) * cs[j]);
      i += n;
    }
  });
}

void kernel_randn(InSpan, const Attrs& a, OutSpan out) {
  if (out[0].dtype() == DType::Float64)
    randn_into<double>(out[0], a);
  else
    randn_into<float>(out[0], a);
}

void kernel_randint(InSpan, const Attrs& a, OutSpan out) {
  auto range = static_cast<uint64_t>(a.i1 - a.i0);
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      run_random<2, T>(out[0], a, [&](const uint32_t* w) {
        uint64_t r = (static_cast<uint64_t>(w[0]) << 32) | w[1];
        return static_cast<T>(a.i0 + static_cast<int64_t>(r % range));
      });
    }
  });
}

// randint's range must hold in the dtype: PyTorch's check, with its C type names.
void check_randint_range(const Attrs& a) {
  static constexpr const char* kCName[] = {"bool", "unsigned char", "signed char",   "short", "int",
                                           "long", "c10::Half",     "c10::BFloat16", "float", "double"};
  const char* name = kCName[static_cast<int>(a.dtype)];
  if (is_floating(a.dtype)) return;  // draws beyond 2^digits lose precision but stay in range
  DYN_CHECK(fits_dtype(a.dtype, Scalar::from_int(a.i0)) && (a.dtype != DType::UInt8 || a.i0 >= 0), ErrorKind::Runtime,
            "from is out of bounds for {}", name);
  DYN_CHECK(fits_dtype(a.dtype, Scalar::from_int(a.i1 - 1)) && (a.dtype != DType::UInt8 || a.i1 - 1 >= 0),
            ErrorKind::Runtime, "to - 1 is out of bounds for {}", name);
}

void infer_random(InSpan, const Attrs& a, OutMeta* m) {
  check_new_shape(a.dims);
  m->dtype = a.dtype;
  m->shape = a.dims;
}

void infer_randint(InSpan in, const Attrs& a, OutMeta* m) {
  check_randint_range(a);
  infer_random(in, a, m);
}

}  // namespace

void register_random_ops(OpDef* t) {
  // clang-format off
#define DYN_RANDOM(n) set_kernel(t, OpId::n, infer_random, kernel_##n);
  DYN_RANDOM(rand) DYN_RANDOM(randn)
#undef DYN_RANDOM
      // clang-format on
      set_kernel(t, OpId::randint, infer_randint, kernel_randint);
}

}  // namespace dyn
