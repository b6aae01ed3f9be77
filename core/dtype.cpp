// Element types and PyTorch's type-promotion rules.
#include "core/dtype.h"

#include <algorithm>

namespace dyn {

namespace {
DType g_default_float = DType::Float32;
}

size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::Float32:
      return 4;
    default:
      return 8;
  }
}

std::string_view dtype_name(DType t) {
  static constexpr std::string_view kNames[] = {"bool", "int64", "float32", "float64"};
  return kNames[static_cast<int>(t)];
}

bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }

int dtype_category(DType t) {
  if (t == DType::Bool) return 0;
  if (t == DType::Int64) return 1;
  return 2;
}

DType default_float_dtype() { return g_default_float; }
void set_default_float_dtype(DType t) { g_default_float = t; }

DType promote_types(DType a, DType b) {
  // The enum order is the promotion lattice for the dtypes we have.
  return static_cast<DType>(std::max(static_cast<int>(a), static_cast<int>(b)));
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
