// Element types and PyTorch's type-promotion rules.
#pragma once
#include <cstdint>
#include <string_view>

namespace dyn {

// Ordered by promotion category: bool < integral < floating.
enum class DType : uint8_t { Bool, Int64, Float32, Float64 };
constexpr int kNumDTypes = 4;

size_t itemsize(DType t);
std::string_view dtype_name(DType t);  // "float32"
bool is_floating(DType t);
// 0 bool, 1 integral, 2 floating.
int dtype_category(DType t);

// The dtype new float tensors get (dyn.set_default_dtype).
DType default_float_dtype();
void set_default_float_dtype(DType t);

// Promotion of two tensor dtypes of equal standing.
DType promote_types(DType a, DType b);

// A Python number taking part in an op: promotes only across categories, as in PyTorch.
struct Scalar {
  enum Kind : uint8_t { Bool, Int, Float } kind = Float;
  double f = 0.0;
  int64_t i = 0;

  static Scalar from_double(double v) { return {Float, v, 0}; }
  static Scalar from_int(int64_t v) { return {Int, static_cast<double>(v), v}; }
  static Scalar from_bool(bool v) { return {Bool, v ? 1.0 : 0.0, v ? 1 : 0}; }
  double to_double() const { return kind == Float ? f : static_cast<double>(i); }
  int64_t to_int() const { return kind == Float ? static_cast<int64_t>(f) : i; }
  bool operator==(const Scalar& o) const { return kind == o.kind && (kind == Float ? f == o.f : i == o.i); }
};

// The dtype a Python scalar would get alone (float -> default float, int -> int64).
DType scalar_dtype(const Scalar& s);
// Result dtype of tensor (op) scalar, with the scalar standing below the tensor.
DType promote_with_scalar(DType t, const Scalar& s);

// Dispatch a generic lambda over the C++ type of a dtype: f(T{}) is called with T the element type.
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(bool{});
    case DType::Int64:
      return f(int64_t{});
    case DType::Float32:
      return f(float{});
    case DType::Float64:
      break;
  }
  return f(double{});
}

}  // namespace dyn
