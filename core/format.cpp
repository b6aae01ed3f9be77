// repr() of a tensor, following PyTorch's _tensor_str.py: the same modes (integer-valued,
// fixed with 4 decimals, scientific), widths, line wrapping at 80 columns and summarization.
#include "core/format.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace dyn {

namespace {

// t[i]: a view of one row, as select(t, 0, i) gives it (printing works on data that is there).
Tensor row(const Tensor& t, int64_t i) {
  Dims shape, strides;
  for (int d = 1; d < t.ndim(); ++d) shape.push_back(t.size(d)), strides.push_back(t.strides()[d]);
  return t.as_strided(shape, strides, t.offset() + i * t.strides()[0]);
}

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

double value_at(const Tensor& t, int64_t linear) {
  // linear index into t's logical row-major order
  int64_t off = 0, rem = linear;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (rem % t.size(d)) * t.strides()[d];
    rem /= t.size(d);
  }
  return visit_dtype_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(static_cast<std::conditional_t<kReducedFloat<T>, float, T>>(t.data<T>()[off]));
  });
}

// The values the formatter sizes itself on: all, or the edges when summarizing.
void collect(const Tensor& t, bool summarize, std::vector<double>* out) {
  if (t.ndim() == 0) {
    out->push_back(value_at(t, 0));
    return;
  }
  int64_t n = t.size(0);
  auto take = [&](int64_t i) {
    Tensor s = row(t, i);
    collect(s, summarize, out);
  };
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) take(i);
    for (int64_t i = n - kEdgeItems; i < n; ++i) take(i);
  } else {
    for (int64_t i = 0; i < n; ++i) take(i);
  }
}

class Formatter {
 public:
  Formatter(DType dtype, const std::vector<double>& vals) : dtype_(dtype) {
    if (!is_floating(dtype)) {
      for (double v : vals) width_ = std::max(width_, static_cast<int>(plain(v).size()));
      return;
    }
    std::vector<double> nz;
    for (double v : vals)
      if (std::isfinite(v) && v != 0) nz.push_back(v);
    if (nz.empty()) return;
    double mn = INFINITY, mx = 0;
    for (double v : nz) mn = std::min(mn, std::fabs(v)), mx = std::max(mx, std::fabs(v));
    for (double v : nz)
      if (v != std::ceil(v)) {
        int_mode_ = false;
        break;
      }
    if (int_mode_) {
      if (mx / mn > 1000.0 || mx > 1.0e8) {
        sci_ = true;
        for (double v : nz) width_ = std::max(width_, static_cast<int>(fmt::format("{:.{}e}", v, kPrecision).size()));
      } else {
        for (double v : nz) width_ = std::max(width_, static_cast<int>(fmt::format("{:.0f}", v).size()) + 1);
      }
    } else if (mx / mn > 1000.0 || mx > 1.0e8 || mn < 1.0e-4) {
      sci_ = true;
      for (double v : nz) width_ = std::max(width_, static_cast<int>(fmt::format("{:.{}e}", v, kPrecision).size()));
    } else {
      for (double v : nz) width_ = std::max(width_, static_cast<int>(fmt::format("{:.{}f}", v, kPrecision).size()));
    }
  }

  int width() const { return width_; }

  std::string format(double v) const {
    std::string s;
    if (is_floating(dtype_)) {
      if (sci_) {
        s = fmt::format("{:.{}e}", v, kPrecision);
      } else if (int_mode_) {
        s = fmt::format("{:.0f}", v);
        if (std::isfinite(v)) s += ".";
      } else {
        s = fmt::format("{:.{}f}", v, kPrecision);
      }
      s = python_nonfinite(v, s);
    } else {
      s = plain(v);
    }
    if (static_cast<int>(s.size()) < width_) s = std::string(width_ - s.size(), ' ') + s;
    return s;
  }

 private:
  std::string plain(double v) const {
    if (dtype_ == DType::Bool) return v != 0 ? "True" : "False";
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  static std::string python_nonfinite(double v, const std::string& s) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return s;
  }

  DType dtype_;
  bool int_mode_ = true;
  bool sci_ = false;
  int width_ = 1;
};

std::string vector_str(const Tensor& t, int indent, bool summarize, const Formatter& f) {
  int element_length = f.width() + 2;
  int per_line = std::max(1, (kLineWidth - indent) / element_length);
  std::vector<std::string> data;
  int64_t n = t.size(0);
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) data.push_back(f.format(value_at(t, i)));
    data.push_back(" ...");
    for (int64_t i = n - kEdgeItems; i < n; ++i) data.push_back(f.format(value_at(t, i)));
  } else {
    for (int64_t i = 0; i < n; ++i) data.push_back(f.format(value_at(t, i)));
  }
  std::string out = "[";
  for (size_t i = 0; i < data.size(); ++i) {
    if (i > 0) {
      if (i % per_line == 0)
        out.append(",\n").append(indent + 1, ' ');
      else
        out += ", ";
    }
    out += data[i];
  }
  return out + "]";
}

std::string tensor_str(const Tensor& t, int indent, bool summarize, const Formatter& f) {
  int dim = t.ndim();
  if (dim == 0) return f.format(value_at(t, 0));
  if (dim == 1) return vector_str(t, indent, summarize, f);
  std::vector<std::string> slices;
  int64_t n = t.size(0);
  auto add = [&](int64_t i) { slices.push_back(tensor_str(row(t, i), indent + 1, summarize, f)); };
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) add(i);
    slices.push_back("...");
    for (int64_t i = n - kEdgeItems; i < n; ++i) add(i);
  } else {
    for (int64_t i = 0; i < n; ++i) add(i);
  }
  std::string sep(1, ',');  // built by appends: GCC 12 warns falsely on "," + std::string
  sep.append(dim - 1, '\n');
  sep.append(indent + 1, ' ');
  std::string out = "[";
  for (size_t i = 0; i < slices.size(); ++i) {
    if (i) out += sep;
    out += slices[i];
  }
  return out + "]";
}

std::string shape_tuple(const Dims& d) {
  std::string s = "(";
  for (int i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  if (d.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

std::string format_tensor(const Tensor& t, const std::string& extra_suffix) {
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  std::string body;
  auto dtype_str = [&] { return fmt::format("dtype=dyn.{}", dtype_name(t.dtype())); };
  if (t.numel() == 0) {
    if (t.ndim() != 1) suffixes.push_back("size=" + shape_tuple(t.shape()));
    if (t.dtype() != default_float_dtype()) suffixes.push_back(dtype_str());
    body = "[]";
  } else {
    bool default_like = t.dtype() == default_float_dtype() || t.dtype() == DType::Int64 || t.dtype() == DType::Bool;
    if (!default_like) suffixes.push_back(dtype_str());
    bool summarize = t.numel() > kThreshold;
    std::vector<double> vals;
    collect(t, summarize, &vals);
    Formatter f(t.dtype(), vals);
    body = tensor_str(t, indent, summarize, f);
  }
  if (!extra_suffix.empty()) suffixes.push_back(extra_suffix);
  std::string out = prefix + body;
  size_t nl = out.rfind('\n');
  int last_line_len = static_cast<int>(nl == std::string::npos ? out.size() + 2 : out.size() - nl + 1);
  for (const std::string& s : suffixes) {
    int len = static_cast<int>(s.size());
    if (last_line_len + len + 2 > kLineWidth) {
      out.append(",\n").append(indent, ' ').append(s);
      last_line_len = indent + len;
    } else {
      out += ", " + s;
      last_line_len += len + 2;
    }
  }
  return out + ")";
}

}  // namespace dyn
