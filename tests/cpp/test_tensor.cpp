// Storage, views, strides, broadcasting and type promotion.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>

#include "core/api/api.h"
#include "core/error.h"

using namespace dyn;

TEST(Dims, ContiguousStridesAndNumel) {
  Dims s{2, 3, 4};
  EXPECT_EQ(numel_of(s), 24);
  EXPECT_EQ(contiguous_strides(s), (Dims{12, 4, 1}));
  EXPECT_EQ(numel_of(Dims{}), 1);
  EXPECT_EQ(numel_of(Dims{3, 0}), 0);
}

TEST(Dims, TooManyDimsIsAUserError) {
  Dims d;
  for (int i = 0; i < kMaxDims; ++i) d.push_back(1);
  EXPECT_THROW(d.push_back(1), Error);
}

TEST(Broadcast, ShapesAndMessage) {
  EXPECT_EQ(broadcast_shapes(Dims{3, 1}, Dims{1, 4}), (Dims{3, 4}));
  EXPECT_EQ(broadcast_shapes(Dims{}, Dims{2, 3}), (Dims{2, 3}));
  EXPECT_EQ(broadcast_shapes(Dims{5, 1, 3}, Dims{4, 1}), (Dims{5, 4, 3}));
  try {
    broadcast_shapes(Dims{2, 3}, Dims{2, 4});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  }
}

TEST(Promotion, TensorsAndScalars) {
  EXPECT_EQ(promote_types(DType::Int64, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int64), DType::Int64);
  EXPECT_EQ(promote_with_scalar(DType::Int64, Scalar::from_double(2.5)), DType::Float32);
  EXPECT_EQ(promote_with_scalar(DType::Float32, Scalar::from_double(2.5)), DType::Float32);
  EXPECT_EQ(promote_with_scalar(DType::Bool, Scalar::from_int(2)), DType::Int64);
  EXPECT_EQ(promote_with_scalar(DType::Float64, Scalar::from_int(2)), DType::Float64);
}

TEST(Promotion, ZeroDimTensorsStandBelowDimensionedOnes) {
  Tensor f32 = ops::full(Dims{3}, Scalar::from_int(1), DType::Float32);
  Tensor f64_0d = ops::full(Dims{}, Scalar::from_int(1), DType::Float64);
  Tensor i64 = ops::full(Dims{3}, Scalar::from_int(1), DType::Int64);
  EXPECT_EQ(ops::binary(OpId::add, f32, f64_0d).dtype(), DType::Float32);
  EXPECT_EQ(ops::binary(OpId::add, i64, f64_0d).dtype(), DType::Float64);
  EXPECT_EQ(ops::binary(OpId::add, i64, f32).dtype(), DType::Float32);
}

TEST(Views, ShareStorageAndWriteThrough) {
  Tensor a = ops::arange(Scalar::from_int(0), Scalar::from_int(12), Scalar::from_int(1), DType::Float32);
  Tensor m = ops::view(a, Dims{3, 4});
  Tensor col = ops::select(m, 1, 2);  // m[:, 2]
  EXPECT_TRUE(col.same_storage(a));
  EXPECT_EQ(col.shape(), (Dims{3}));
  EXPECT_EQ(col.strides(), (Dims{4}));
  ops::fill_(col, Scalar::from_double(-1));
  EXPECT_EQ(a.data<float>()[2], -1.0f);
  EXPECT_EQ(a.data<float>()[6], -1.0f);
  EXPECT_EQ(a.data<float>()[10], -1.0f);
  EXPECT_EQ(a.data<float>()[3], 3.0f);
}

TEST(Views, TransposeIsNotContiguousAndViewFails) {
  Tensor a = ops::full(Dims{2, 3}, Scalar::from_int(0), DType::Float32);
  Tensor t = ops::transpose(a, 0, 1);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_THROW(ops::view(t, Dims{6}), Error);
  Tensor r = ops::reshape(t, Dims{6});  // a copy
  EXPECT_FALSE(r.same_storage(a));
  EXPECT_TRUE(ops::reshape(a, Dims{3, 2}).same_storage(a));
}

TEST(Views, SliceWithStepAndNegativeBounds) {
  Tensor a = ops::arange(Scalar::from_int(0), Scalar::from_int(10), Scalar::from_int(1), DType::Int64);
  Tensor s = ops::slice(a, 0, -8, -1, 3);  // a[-8:-1:3] = [2, 5, 8]
  ASSERT_EQ(s.shape(), (Dims{3}));
  Tensor c = ops::contiguous(s);
  EXPECT_EQ(c.data<int64_t>()[0], 2);
  EXPECT_EQ(c.data<int64_t>()[1], 5);
  EXPECT_EQ(c.data<int64_t>()[2], 8);
}

TEST(Views, ExpandHasZeroStrideAndInPlaceOnItIsRejected) {
  Tensor a = ops::full(Dims{3, 1}, Scalar::from_int(1), DType::Float32);
  Tensor e = ops::expand(a, Dims{3, 4});
  EXPECT_EQ(e.strides()[1], 0);
  EXPECT_THROW(ops::binary_(OpId::add, e, Scalar::from_int(1)), Error);
}

// The software float16 conversion against the F16C instructions PyTorch uses on x86: every 97th
// float (all exponents, both signs, NaN payloads, subnormals, the rounding ties), then every half.
__attribute__((target("f16c"))) uint16_t f16c_from(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float f16c_to(uint16_t h) { return _cvtsh_ss(h); }

TEST(Half, ConvertsAsF16C) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this processor";
  int bad = 0;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 97) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(i));
    bad += Half(f).bits != f16c_from(f);
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    Half x;
    x.bits = static_cast<uint16_t>(h);
    bad += std::bit_cast<uint32_t>(static_cast<float>(x)) != std::bit_cast<uint32_t>(f16c_to(x.bits));
  }
  EXPECT_EQ(bad, 0);
}

TEST(Half, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3F808000u)).bits, 0x3F80);  // a tie: to the even one
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3F818000u)).bits, 0x3F82);  // a tie: up to the even one
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0xFFC12345u)).bits, 0x7FC0);  // every NaN, as c10's
  EXPECT_EQ(static_cast<float>(BFloat16(3.0f)), 3.0f);
}

TEST(DType, PromotionTable) {
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int8), DType::Int16);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Int32, DType::Float16), DType::Float16);
  EXPECT_EQ(promote_types(DType::Bool, DType::UInt8), DType::UInt8);
  EXPECT_EQ(promote_types(DType::Int16, DType::Int64), DType::Int64);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float64), DType::Float64);
}
