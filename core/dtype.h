// Element types and PyTorch's type-promotion rules.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/half.h"

namespace dyn {

// Ordered by category (bool < integral < floating), then by width; promote_types has PyTorch's
// table, which the order alone does not give (uint8 with int8 is int16, float16 with bfloat16 is
// float32).
enum class DType : uint8_t { Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64 };
constexpr int kNumDTypes = 10;

size_t itemsize(DType t);
std::string_view dtype_name(DType t);  // "float32"
bool is_floating(DType t);
// float16 and bfloat16: stored in 16 bits, computed in float32 (core/half.h).
inline bool is_reduced_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
// Whether the process has made a float16 or bfloat16 tensor: until it does, no kernel call needs
// to look for one (the adapter in ops/registry.cpp skips its check: 100 tiny ops cost 0.2 us less).
namespace detail {
extern std::atomic<bool> g_reduced_floats_used;
}
inline bool reduced_floats_used() { return detail::g_reduced_floats_used.load(std::memory_order_relaxed); }
// 0 bool, 1 integral, 2 floating.
int dtype_category(DType t);

// The dtype new float tensors get (dyn.set_default_dtype).
DType default_float_dtype();
void set_default_float_dtype(DType t);

// torch.autocast("cpu", dtype=...): the 16-bit float that float32 matrix products compute in while
// it is on; DType::Bool when off. Global state a trace depends on, as the default dtype is.
constexpr DType kAutocastOff = DType::Bool;
DType autocast_dtype();
void set_autocast_dtype(DType t);
std::string autocast_name(DType t);  // "off", "bfloat16"

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

// Whether a number can be stored in an integer dtype, by c10's rule: within the type's range, where
// an unsigned type also takes the negatives of its values (uint8 takes -255, as 255 + 1 - 255).
// Floats and bool take every number.
bool fits_dtype(DType t, const Scalar& s);

// The dtype a Python scalar would get alone (float -> default float, int -> int64).
DType scalar_dtype(const Scalar& s);
// Result dtype of tensor (op) scalar, with the scalar standing below the tensor.
DType promote_with_scalar(DType t, const Scalar& s);

// A kernel was handed a float16 or bfloat16 tensor: the registry's adapter should have given it
// float32 (an internal error, raised rather than reading 16-bit data as another type).
[[noreturn]] void fail_reduced_float_kernel(DType t);

// Dispatch a generic lambda over the C++ type of a dtype: f(T{}) is called with T the element
// type. Kernels compute: the 16-bit floats never reach them (see is_reduced_float).
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(bool{});
    case DType::UInt8:
      return f(uint8_t{});
    case DType::Int8:
      return f(int8_t{});
    case DType::Int16:
      return f(int16_t{});
    case DType::Int32:
      return f(int32_t{});
    case DType::Int64:
      return f(int64_t{});
    case DType::Float32:
      return f(float{});
    case DType::Float16:
    case DType::BFloat16:
      fail_reduced_float_kernel(t);
    case DType::Float64:
      break;
  }
  return f(double{});
}

// visit_dtype with the 16-bit floats too, as Half and BFloat16 (core/half.h), for the code that
// only converts elements: casts, item(), printing, Python lists.
template <typename F>
decltype(auto) visit_dtype_all(DType t, F&& f) {
  if (t == DType::Float16) return f(Half{});
  if (t == DType::BFloat16) return f(BFloat16{});
  return visit_dtype(t, std::forward<F>(f));
}

}  // namespace dyn
