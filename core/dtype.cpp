// Element types and PyTorch's type-promotion rules.
#include "core/dtype.h"

#include <algorithm>

#include "core/error.h"

namespace dyn {

namespace {
DType g_default_float = DType::Float32;
}

size_t itemsize(DType t) {
  static constexpr size_t kSizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return kSizes[static_cast<int>(t)];
}

std::string_view dtype_name(DType t) {
  static constexpr std::string_view kNames[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                                "int64", "float16", "bfloat16", "float32", "float64"};
  return kNames[static_cast<int>(t)];
}

bool is_floating(DType t) { return t >= DType::Float16; }

int dtype_category(DType t) {
  if (t == DType::Bool) return 0;
  if (t < DType::Float16) return 1;
  return 2;
}

void fail_reduced_float_kernel(DType t) {
  fail(ErrorKind::Runtime, "internal error: a kernel was given a {} tensor; it should have been computed in float32",
       dtype_name(t));
}

DType default_float_dtype() { return g_default_float; }
void set_default_float_dtype(DType t) { g_default_float = t; }

namespace {
DType g_autocast = kAutocastOff;
}
namespace detail {
std::atomic<bool> g_reduced_floats_used{false};
}
DType autocast_dtype() { return g_autocast; }
void set_autocast_dtype(DType t) { g_autocast = t; }
std::string autocast_name(DType t) { return t == kAutocastOff ? "off" : std::string(dtype_name(t)); }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (dtype_category(a) != dtype_category(b)) return dtype_category(a) > dtype_category(b) ? a : b;
  // Neither of the pair holds every value of the other: the smallest type that does.
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int16;
  if (is_reduced_float(a) && is_reduced_float(b)) return DType::Float32;
  // Otherwise the wider one (uint8 is below every signed type but int8).
  return std::max(a, b);
}

bool fits_dtype(DType t, const Scalar& s) {
  if (t == DType::Bool || is_floating(t)) return true;
  double lo, hi;
  switch (t) {
    case DType::UInt8:
      lo = -255, hi = 255;
      break;
    case DType::Int8:
      lo = -128, hi = 127;
      break;
    case DType::Int16:
      lo = -32768, hi = 32767;
      break;
    case DType::Int32:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    default:
      return s.kind != Scalar::Float || !(s.f < -9.2233720368547758e18 || s.f >= 9.2233720368547758e18);
  }
  if (s.kind != Scalar::Float) return s.i >= static_cast<int64_t>(lo) && s.i <= static_cast<int64_t>(hi);
  return !(s.f < lo || s.f > hi);  // NaN passes, as in c10
}

DType scalar_dtype(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Bool:
      return DType::Bool;
    case Scalar::Int:
      return DType::Int64;
    case Scalar::Float:
      break;
  }
  return default_float_dtype();
}

DType promote_with_scalar(DType t, const Scalar& s) {
  DType sd = scalar_dtype(s);
  return dtype_category(sd) > dtype_category(t) ? sd : t;
}

}  // namespace dyn
