// Guards: checks and their explanations.
#include "core/capture/guards.h"

#include <fmt/format.h>

#include <cstring>

namespace dyn {

std::string_view guard_kind_name(GuardKind k) {
  static constexpr std::string_view kNames[] = {"tensor_input", "aliasing",     "op",       "constant",
                                                "branch",       "global_state", "trace_end"};
  return kNames[static_cast<int>(k)];
}

std::string GuardFailure::str() const {
  std::string s = what;
  if (!expected.empty() || !actual.empty()) s += fmt::format(", expected {}, actual {}", expected, actual);
  SourceLoc top = where.top();
  if (top.known()) {
    std::string text = source_line(*top.file, top.line);
    s += fmt::format(" at {}", top.str());
    if (!text.empty()) s += fmt::format(" `{}`", text);
  }
  if (!hint.empty()) s += "; hint: " + hint;
  return s;
}

namespace {
std::string input_label(const Value& v) {
  static const char* kinds[] = {"argument", "parameter", "global or closure", "from an earlier graph"};
  std::string name = v.input_name.empty() ? "tensor" : "tensor '" + v.input_name + "'";
  return fmt::format("{} ({})", name, kinds[static_cast<int>(v.input_kind)]);
}
}  // namespace

bool check_tensor_input(const Value& traced, const Tensor& t, GuardFailure* f) {
  if (t.dtype() != traced.dtype) {
    f->what = input_label(traced) + " dtype";
    f->expected = std::string(dtype_name(traced.dtype));
    f->actual = std::string(dtype_name(t.dtype()));
  } else if (t.ndim() != traced.shape.size()) {
    f->what = input_label(traced) + " number of dimensions";
    f->expected = std::to_string(traced.shape.size()) + " " + dims_str(traced.shape);
    f->actual = std::to_string(t.ndim()) + " " + dims_str(t.shape());
  } else if (t.shape() != traced.shape) {
    int d = 0;
    while (t.shape()[d] == traced.shape[d]) ++d;
    f->what = fmt::format("{} size mismatch at dim {}", input_label(traced), d);
    f->expected = std::to_string(traced.shape[d]);
    f->actual = std::to_string(t.shape()[d]);
    f->hint = fmt::format(
        "dim {} changes between calls and every size gets its own graph; pad to a few fixed sizes "
        "to bound recompiles",
        d);
  } else if (t.strides() != traced.strides) {
    f->what = input_label(traced) + " strides (memory layout)";
    f->expected = dims_str(traced.strides);
    f->actual = dims_str(t.strides());
    f->hint = "pass tensors with the same layout, e.g. call .contiguous() before the compiled function";
  } else if (t.impl()->requires_grad_ != traced.requires_grad) {
    f->what = input_label(traced) + " requires_grad";
    f->expected = traced.requires_grad ? "True" : "False";
    f->actual = t.impl()->requires_grad_ ? "True" : "False";
  } else {
    return true;
  }
  f->kind = GuardKind::TensorInput;
  return false;
}

bool attrs_match(const Attrs& a, const Attrs& b) { return attrs_equal(a, b, false); }

void explain_attrs(OpId op, const Attrs& traced, const Attrs& now, GuardFailure* f) {
  std::string name(op_name(op));
  auto scalar_changed = [&](const Scalar& x, const Scalar& y) {
    f->kind = GuardKind::Constant;
    f->what = fmt::format("constant of {} changed", name);
    f->expected = format_scalar(x);
    f->actual = format_scalar(y);
    f->hint = "a Python number is baked into the graph; pass it as a tensor to reuse one graph for all values";
  };
  if (!same_scalar(traced.scalar, now.scalar)) return scalar_changed(traced.scalar, now.scalar);
  if (!same_scalar(traced.scalar2, now.scalar2)) return scalar_changed(traced.scalar2, now.scalar2);
  if (!same_scalar(traced.scalar3, now.scalar3)) return scalar_changed(traced.scalar3, now.scalar3);
  f->kind = GuardKind::Op;
  f->what = fmt::format("arguments of {} changed", name);
  f->expected = format_attrs(op, traced);
  f->actual = format_attrs(op, now);
  if (f->expected.empty()) f->expected = "(none)";
  if (f->actual.empty()) f->actual = "(none)";
}

}  // namespace dyn
