// Storage, views, strides, broadcasting and type promotion.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/api/api.h"

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
