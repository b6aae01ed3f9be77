// Kernels: elementwise over strided/broadcast inputs, reductions, matmul, random determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/api/api.h"
#include "core/error.h"
#include "core/random.h"
#include "core/thread_pool.h"

using namespace dyn;

namespace {
Tensor seq(int64_t n, DType d = DType::Float32) {
  return ops::arange(Scalar::from_int(0), Scalar::from_int(n), Scalar::from_int(1), d);
}
}  // namespace

TEST(Elementwise, BroadcastAddOverTransposedInput) {
  Tensor a = ops::view(seq(6), Dims{2, 3});
  Tensor t = ops::transpose(a, 0, 1);  // [[0,3],[1,4],[2,5]]
  Tensor b = ops::view(seq(2), Dims{1, 2});
  Tensor c = ops::binary(OpId::add, t, b);
  ASSERT_EQ(c.shape(), (Dims{3, 2}));
  const float want[] = {0, 4, 1, 5, 2, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.data<float>()[i], want[i]);
}

TEST(Elementwise, IntegerFloorDivisionAndRemainderFollowPython) {
  Tensor a = ops::from_ints({7, -7, 7, -7}, Dims{4}, DType::Int64);
  Tensor b = ops::from_ints({2, 2, -2, -2}, Dims{4}, DType::Int64);
  Tensor q = ops::binary(OpId::floor_divide, a, b);
  Tensor r = ops::binary(OpId::remainder, a, b);
  const int64_t wq[] = {3, -4, -4, 3}, wr[] = {1, 1, -1, -1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(q.data<int64_t>()[i], wq[i]);
    EXPECT_EQ(r.data<int64_t>()[i], wr[i]);
  }
  EXPECT_THROW(ops::binary(OpId::floor_divide, a, Scalar::from_int(0)), Error);
}

TEST(Elementwise, DivisionOfIntegersIsFloat) {
  Tensor a = ops::from_ints({1, 2}, Dims{2}, DType::Int64);
  Tensor d = ops::binary(OpId::div, a, Scalar::from_int(2));
  EXPECT_EQ(d.dtype(), DType::Float32);
  EXPECT_EQ(d.data<float>()[0], 0.5f);
}

TEST(Elementwise, LargeKernelIsThreadCountIndependent) {
  Tensor x = ops::randn(Dims{1 << 20}, DType::Float32);
  set_num_threads(1);
  Tensor a = ops::unary(OpId::tanh, x);
  Tensor s1 = ops::reduce(OpId::sum, x, Dims{}, false);
  set_num_threads(2);
  Tensor b = ops::unary(OpId::tanh, x);
  Tensor s2 = ops::reduce(OpId::sum, x, Dims{}, false);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.numel() * sizeof(float)), 0);
  EXPECT_EQ(s1.data<float>()[0], s2.data<float>()[0]);
}

TEST(Reduce, SumOverDimsWithKeepdim) {
  Tensor a = ops::view(seq(24), Dims{2, 3, 4});
  Tensor s = ops::reduce(OpId::sum, a, Dims{0, 2}, true);
  ASSERT_EQ(s.shape(), (Dims{1, 3, 1}));
  // sum over i,k of 12i + 4j + k = 2*(6) ... computed directly:
  for (int j = 0; j < 3; ++j) {
    double want = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) want += 12 * i + 4 * j + k;
    EXPECT_EQ(s.data<float>()[j], static_cast<float>(want));
  }
  EXPECT_EQ(ops::reduce(OpId::sum, ops::from_ints({1, 0, 1}, Dims{3}, DType::Bool), Dims{}, false).dtype(),
            DType::Int64);
  EXPECT_THROW(ops::reduce(OpId::mean, seq(3, DType::Int64), Dims{}, false), Error);
}

TEST(Reduce, MaxWithIndicesAndNaN) {
  Tensor a = ops::from_doubles({1, 5, 3, 2, NAN, 7}, Dims{2, 3}, DType::Float32);
  auto [v, i] = ops::max_dim(a, 1, false, false);
  EXPECT_EQ(v.data<float>()[0], 5.0f);
  EXPECT_EQ(i.data<int64_t>()[0], 1);
  EXPECT_TRUE(std::isnan(v.data<float>()[1]));
  EXPECT_EQ(i.data<int64_t>()[1], 1);
}

TEST(Matmul, BatchedBroadcastMatchesLoops) {
  Tensor a = ops::randn(Dims{2, 1, 3, 4}, DType::Float64);
  Tensor b = ops::randn(Dims{5, 4, 6}, DType::Float64);
  Tensor c = ops::matmul(a, b);
  ASSERT_EQ(c.shape(), (Dims{2, 5, 3, 6}));
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 5; ++q)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) {
          double want = 0;
          for (int k = 0; k < 4; ++k)
            want += a.data<double>()[p * 12 + i * 4 + k] * b.data<double>()[q * 24 + k * 6 + j];
          EXPECT_NEAR(c.data<double>()[((p * 5 + q) * 3 + i) * 6 + j], want, 1e-12);
        }
}

TEST(Matmul, DtypeMismatchIsAUserError) {
  try {
    ops::matmul(seq(4), seq(4, DType::Float64));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "expected m1 and m2 to have the same dtype, but got: float != double");
  }
}

TEST(Random, SameSeedSameNumbers) {
  manual_seed(7);
  Tensor a = ops::randn(Dims{100}, DType::Float32);
  manual_seed(7);
  Tensor b = ops::randn(Dims{100}, DType::Float32);
  Tensor c = ops::randn(Dims{100}, DType::Float32);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), 400), 0);
  EXPECT_NE(std::memcmp(b.raw_data(), c.raw_data(), 400), 0);
}

TEST(Random, PhiloxKnownAnswer) {
  // Random123's known-answer test for philox4x32-10 with counter 0 and key 0.
  auto w = philox4x32(0, 0);
  EXPECT_EQ(w[0], 0x6627e8d5u);
  EXPECT_EQ(w[1], 0xe169c58du);
  EXPECT_EQ(w[2], 0xbc57ac4cu);
  EXPECT_EQ(w[3], 0x9b00dbd8u);
}

TEST(Random, PhiloxWordsAreOneCounterAtATime) {
  // Eight counters at a time, then the rest one by one; across the carry out of the counter's low
  // word and the wrap of all 64 bits.
  const uint64_t keys[] = {0, 0xdeadbeefcafef00dull, 67280421310721ull};
  const uint64_t counters[] = {0, 12345, (uint64_t{1} << 32) - 5, ~uint64_t{0} - 6};
  std::vector<uint32_t> w(4 * 40);
  for (uint64_t key : keys)
    for (uint64_t c : counters)
      for (int64_t n = 0; n <= 40; ++n) {
        std::fill(w.begin(), w.end(), 0xAAAAAAAAu);
        philox4x32_words(key, c, n, w.data());
        for (int64_t j = 0; j < n; ++j) {
          auto want = philox4x32(key, c + static_cast<uint64_t>(j));
          for (int k = 0; k < 4; ++k)
            ASSERT_EQ(w[static_cast<size_t>(4 * j + k)], want[static_cast<size_t>(k)])
                << "key " << key << " counter " << c << " + " << j << " word " << k << " of n " << n;
        }
        for (size_t i = static_cast<size_t>(4 * n); i < w.size(); ++i) ASSERT_EQ(w[i], 0xAAAAAAAAu);  // nothing past n
      }
}

TEST(Random, ElementIReadsItsCountersWords) {
  // rand's float element i is word i % 4 of counter offset + i / 4 (24 bits); randint's element i
  // words 2 (i % 2) and 2 (i % 2) + 1 of counter offset + i / 2. Sizes that end inside a batch of
  // counters and inside one counter.
  for (int64_t n : {1, 5, 33, 1027, 5000}) {
    manual_seed(11);
    GeneratorState s = rng_state();
    Tensor r = ops::rand(Dims{n}, DType::Float32);
    for (int64_t i = 0; i < n; ++i) {
      auto w = philox4x32(s.seed, s.offset + static_cast<uint64_t>(i / 4));
      ASSERT_EQ(r.data<float>()[i], static_cast<float>(w[static_cast<size_t>(i % 4)] >> 8) * 0x1.0p-24f) << i;
    }
    s = rng_state();
    Tensor k = ops::randint(0, int64_t{1} << 40, Dims{n}, DType::Int64);
    for (int64_t i = 0; i < n; ++i) {
      auto w = philox4x32(s.seed, s.offset + static_cast<uint64_t>(i / 2));
      uint64_t bits =
          (static_cast<uint64_t>(w[static_cast<size_t>(2 * (i % 2))]) << 32) | w[static_cast<size_t>(2 * (i % 2) + 1)];
      ASSERT_EQ(k.data<int64_t>()[i], static_cast<int64_t>(bits % (uint64_t{1} << 40))) << i;
    }
  }
}
