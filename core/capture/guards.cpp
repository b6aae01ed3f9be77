// Guards: checks and their explanations.
#include "core/capture/guards.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

namespace dyn {

std::string_view guard_kind_name(GuardKind k) {
  static constexpr std::string_view kNames[] = {"tensor_input", "aliasing",     "op",       "constant",
                                                "branch",       "global_state", "trace_end"};
  return kNames[static_cast<int>(k)];
}

std::string GuardFailure::cause() const {
  if (cause_name.empty()) return {};
  std::string s = cause_from.empty()
                      ? fmt::format("`{}` changed from {} to {}", cause_name, cause_old, cause_new)
                      : fmt::format("`{}` ({}) changed from {} to {}", cause_name, cause_from, cause_old, cause_new);
  if (!cause_where.empty()) s += " (used at " + cause_where + ")";
  return s;
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
  // Named already ("constant 'k' (argument) of mul changed"): the values say the rest.
  if (!cause_name.empty() && what.find("'" + cause_name + "'") == std::string::npos) s += "; because " + cause();
  if (!hint.empty()) s += "; hint: " + hint;
  return s;
}

const GuardFailure* closest_failure(const std::vector<GuardFailure>& failures, int closest) {
  for (const GuardFailure& f : failures)
    if (f.entry == closest && closest >= 0) return &f;
  return failures.empty() ? nullptr : &failures.front();
}

Cause cause_of(const std::vector<GuardFailure>& failures, int closest) {
  Cause c;
  const GuardFailure* fp = closest_failure(failures, closest);
  if (!fp) return c;
  const GuardFailure& f = *fp;
  // A Python value that changed explains why the closest entry failed.
  if (!f.cause_name.empty()) {
    c.key = "`" + f.cause_name + "`";
    c.value = f.cause_new;
    c.first = f.cause_old;
    c.where = f.cause_where;
    c.from = f.cause_from;
    c.hint = f.kind == GuardKind::Constant
                 ? "it is baked into the graph as a constant; pass it as a tensor (or a float) to reuse one graph"
             : f.kind == GuardKind::Branch ? f.hint
             : f.kind == GuardKind::Op || f.kind == GuardKind::TraceEnd
                 ? "it decides which ops run, so each value gets its own graph; keep it fixed, or move the "
                   "Python control flow it drives out of the compiled function"
                 : f.hint;
    return c;
  }
  c.key = f.subject.empty() ? f.what : f.subject;
  c.value = f.actual;
  c.first = f.expected;
  SourceLoc top = f.where.top();
  if (top.known()) c.where = top.str();
  c.hint = f.hint;
  if (f.kind == GuardKind::Op || f.kind == GuardKind::TraceEnd || f.kind == GuardKind::Aliasing) {
    c.key += " at " + c.where;  // the same words at another line is another cause
    c.has_value = false;
  }
  return c;
}

std::string failure_lines(const std::string& fn, const std::vector<GuardFailure>& failures) {
  std::string lines;
  for (const GuardFailure& f : failures)
    lines +=
        fmt::format("{}{}[{}] failed {}: {}", lines.empty() ? "" : "\n", fn, f.entry, guard_kind_name(f.kind), f.str());
  return lines;
}

namespace {
bool to_int(const std::string& s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}
}  // namespace

std::string size_hint(const GuardFailure& f, int dynamic, bool made_dynamic, const std::string& fn) {
  std::string mark = fmt::format("dyn.mark_dynamic({}, {})", f.size_input.empty() ? "t" : f.size_input, f.size_dim);
  int64_t was = 0, is = 0;
  bool numbers = to_int(f.expected, &was) && to_int(f.actual, &is);
  if (dynamic == 0)
    return fmt::format(
        "'{}' was compiled with dynamic=False, so every size of dim {} gets a graph of its own ({} is not "
        "honoured either); leave dynamic= unset to make a size that changes dynamic at its first recompile",
        fn, f.size_dim, mark);
  if (numbers && (was < 2 || is < 2))
    return fmt::format(
        "sizes 0 and 1 are specialized (as in PyTorch: broadcasting depends on them), so the graph traced with "
        "size {} cannot serve size {}; each gets a graph of its own",
        was, is);
  if (made_dynamic)
    return fmt::format(
        "the recompile made dim {} dynamic: one graph now serves every size >= 2 of it; {} before the first call "
        "saves the recompile",
        f.size_dim, mark);
  return fmt::format(
      "when two traces differ only in sizes, the recompile makes those sizes dynamic (one graph for all sizes >= "
      "2); {} before the first call makes dim {} dynamic from the start",
      mark, f.size_dim);
}

namespace {
std::string input_label(const Value& v) {
  std::string name = v.input_name().empty() ? "tensor" : "tensor '" + v.input_name() + "'";
  return fmt::format("{} ({})", name, input_kind_name(v.input_kind));
}
}  // namespace

namespace {
// A dynamic input's sizes (or strides) against their forms: binds the symbols met first here.
// Returns the first dim that does not fit, or -1.
int unfit_dim(const std::vector<SymExpr>& forms, const Dims& traced, const Dims& now, SymValues* syms) {
  for (int d = 0; d < now.size(); ++d) {
    bool ok = forms.empty() || !syms ? now[d] == traced[d] : sym_match(forms[d], now[d], syms);
    if (!ok) return d;
  }
  return -1;
}
}  // namespace

bool check_tensor_input(const Value& traced, const Tensor& t, GuardFailure* f, SymValues* syms) {
  int bad = -1;
  if (t.dtype() != traced.dtype) {
    f->what = input_label(traced) + " dtype";
    f->subject = "the dtype of " + input_label(traced);
    f->expected = std::string(dtype_name(traced.dtype));
    f->actual = std::string(dtype_name(t.dtype()));
  } else if (t.ndim() != traced.shape.size()) {
    f->what = input_label(traced) + " number of dimensions";
    f->subject = "the number of dimensions of " + input_label(traced);
    f->expected = std::to_string(traced.shape.size()) + " " + dims_str(traced.shape);
    f->actual = std::to_string(t.ndim()) + " " + dims_str(t.shape());
  } else if ((bad = unfit_dim(traced.sym_shape(), traced.shape, t.shape(), syms)) >= 0) {
    int d = bad;
    f->what = fmt::format("{} size mismatch at dim {}", input_label(traced), d);
    f->subject = fmt::format("dim {} of {}", d, input_label(traced));
    f->actual = std::to_string(t.shape()[d]);
    if (!traced.sym_shape().empty() && traced.sym_shape()[d].symbolic()) {
      const SymExpr& e = traced.sym_shape()[d];
      f->expected = sym_expected(e, *syms);
      int64_t was;
      f->hint = !sym_eval(e, *syms, &was) && t.shape()[d] < 2
                    ? "sizes 0 and 1 are specialized (as in PyTorch: broadcasting depends on them); this size gets "
                      "a graph of its own"
                    : "the trace had this size follow another one; a call where they differ gets a graph of its own";
    } else {
      f->expected = std::to_string(traced.shape[d]);
      // The hint depends on the function's dynamic= and on what the recompile makes of this
      // size: settled then (size_hint). The name is what dyn.mark_dynamic would take.
      f->size_dim = d;
      f->size_input = traced.input_name();
    }
  } else if ((bad = unfit_dim(traced.sym_strides(), traced.strides, t.strides(), syms)) >= 0) {
    f->what = input_label(traced) + " strides (memory layout)";
    f->subject = "the strides of " + input_label(traced);
    f->expected = dims_str(traced.strides);
    f->actual = dims_str(t.strides());
    f->hint = "pass tensors with the same layout, e.g. call .contiguous() before the compiled function";
  } else if (t.impl()->requires_grad_ != traced.requires_grad) {
    f->what = input_label(traced) + " requires_grad";
    f->subject = "requires_grad of " + input_label(traced);
    f->expected = traced.requires_grad ? "True" : "False";
    f->actual = t.impl()->requires_grad_ ? "True" : "False";
  } else {
    return true;
  }
  f->kind = GuardKind::TensorInput;
  return false;
}

bool attrs_match(OpId op, const Attrs& traced, const Attrs& now) { return attrs_equal_but_values(op, traced, now); }

void explain_attrs(OpId op, const Attrs& traced, const Attrs& now, GuardFailure* f) {
  std::string name(op_name(op));
  auto scalar_changed = [&](const Scalar& x, const Scalar& y) {
    f->kind = GuardKind::Constant;
    f->what = fmt::format("constant of {} changed", name);
    f->expected = format_scalar(x);
    f->actual = format_scalar(y);
    f->hint = op == OpId::arange && x.kind == Scalar::Int && y.kind == Scalar::Int
                  ? "arange's bounds set a size: when they follow an input's size, a recompile makes it dynamic "
                    "(sizes 0 and 1 stay specialized, as in PyTorch), or mark that dim with dyn.mark_dynamic"
              : x.kind != y.kind ? "the number changed type (int, float, bool), which can change the result's dtype; "
                                   "pass numbers of one type"
              : x.kind == Scalar::Float
                  ? "this float decides a shape or a range, so it is part of the graph"
                  : "an int or bool is baked into the graph; pass it as a tensor to reuse one graph for all values";
  };
  // A float constant that is a graph input may take any float value; only its kind is guarded.
  unsigned values = value_scalars(op, traced);
  const Scalar* was[] = {&traced.scalar, &traced.scalar2, &traced.scalar3};
  const Scalar* is[] = {&now.scalar, &now.scalar2, &now.scalar3};
  for (int k = 0; k < 3; ++k) {
    if ((values >> k & 1) && was[k]->kind == is[k]->kind) continue;
    if (!same_scalar(*was[k], *is[k])) return scalar_changed(*was[k], *is[k]);
  }
  f->kind = GuardKind::Op;
  f->what = fmt::format("arguments of {} changed", name);
  f->expected = format_attrs(op, traced);
  f->actual = format_attrs(op, now);
  if (f->expected.empty()) f->expected = "(none)";
  if (f->actual.empty()) f->actual = "(none)";
}

}  // namespace dyn
