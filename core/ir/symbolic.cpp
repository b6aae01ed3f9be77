// Dynamic shapes: symbolic forms of a graph's ints, and how a trace becomes a dynamic one.
//
// Note [dynamic shapes]
// Python runs on every call, so every op of a call is issued with concrete sizes and concrete
// arguments (x.shape[1] is an int in Python). A dynamic graph is then not a graph of symbolic
// shape formulas but a trace whose ints are written as forms in a few symbols: a replayed call
// binds each symbol the first time it meets it (an input's size, a view's argument), and checks
// every other int against its form. When everything fits, this call's trace is the cached trace
// with its symbols at other values, and the cached plan runs with the sizes it bound; when an int
// does not fit, that is a guard failure like any other. A wrong form can thus cost a recompile,
// never a wrong result.
//
// The forms come from two traces of the same ops (automatic dynamic shapes): a call whose input
// size differs from an entry's records its own trace, and where the two traces' ints differ, a
// form that gives both is taken (s0, 16*s0, s0*s1, s0 - 1). A size marked dynamic before the first
// call has one trace only: ints equal to its value are taken to follow it, and a second size
// corrects any guess that was wrong. Sizes 0 and 1 stay specialized, as in PyTorch (broadcasting
// depends on them).
#include "core/ir/symbolic.h"

#include <fmt/format.h>

#include <cmath>

#include "core/ir/graph.h"

namespace dyn {

std::string SymExpr::str() const {
  if (!symbolic()) return std::to_string(add);
  std::string s = coef == 1 ? "" : coef == -1 ? "-" : std::to_string(coef) + "*";
  s += "s" + std::to_string(a);
  if (b >= 0) s += "*s" + std::to_string(b);
  if (add > 0) s += " + " + std::to_string(add);
  if (add < 0) s += " - " + std::to_string(-add);
  return s;
}

bool int_slot(const Attrs& a, int s, int64_t* out) {
  if (s < kMaxDims) {
    if (s >= a.dims.size()) return false;
    *out = a.dims[s];
    return true;
  }
  switch (s - kMaxDims) {
    case 0:
      *out = a.dim;
      return true;
    case 1:
      *out = a.i0;
      return true;
    case 2:
      *out = a.i1;
      return true;
    case 3:
      *out = a.i2;
      return true;
    default: {
      const Scalar* sc[] = {&a.scalar, &a.scalar2, &a.scalar3};
      const Scalar& x = *sc[s - kMaxDims - 4];
      if (x.kind != Scalar::Int) return false;
      *out = x.i;
      return true;
    }
  }
}

void set_int_slot(Attrs* a, int s, int64_t v) {
  if (s < kMaxDims) {
    a->dims[s] = v;
    return;
  }
  switch (s - kMaxDims) {
    case 0:
      a->dim = v;
      return;
    case 1:
      a->i0 = v;
      return;
    case 2:
      a->i1 = v;
      return;
    case 3:
      a->i2 = v;
      return;
    default: {
      Scalar* sc[] = {&a->scalar, &a->scalar2, &a->scalar3};
      *sc[s - kMaxDims - 4] = Scalar::from_int(v);
      return;
    }
  }
}

std::string int_slot_name(OpId op, int s) {
  if (s < kMaxDims) return fmt::format("size argument {} of {}", s, op_name(op));
  static const char* kNames[] = {"dim", "start", "stop", "step"};
  if (s - kMaxDims < 4) {
    const char* n = op == OpId::select && s == kMaxDims + 1 ? "index" : kNames[s - kMaxDims];
    return fmt::format("the {} argument of {}", n, op_name(op));
  }
  return fmt::format("number {} of {}", s - kMaxDims - 3, op_name(op));
}

std::string sym_attrs_str(OpId op, const std::vector<SymAttr>& attrs) {
  std::string s;
  for (const SymAttr& sa : attrs) {
    std::string name;
    if (sa.slot < kMaxDims) {
      name = fmt::format("size[{}]", sa.slot);
    } else if (sa.slot >= kMaxDims + 4) {
      static const char* kArange[] = {"start", "end", "step"};
      name = op == OpId::arange ? kArange[sa.slot - kMaxDims - 4] : fmt::format("number{}", sa.slot - kMaxDims - 3);
    } else {
      static const char* kNames[] = {"dim", "start", "stop", "step"};
      name = op == OpId::select && sa.slot == kMaxDims + 1 ? "index" : kNames[sa.slot - kMaxDims];
    }
    s += (s.empty() ? "" : ", ") + name + "=" + sa.e.str();
  }
  return s;
}

namespace {
// A symbol index this call has a value slot for (a form from another numbering never reads past it).
bool known_index(int i, const SymValues& v) { return i >= 0 && i < static_cast<int>(v.size()); }
}  // namespace

bool sym_eval(const SymExpr& e, const SymValues& v, int64_t* out) {
  if (!e.symbolic()) {
    *out = e.add;
    return true;
  }
  if (!known_index(e.a, v) || (e.b >= 0 && !known_index(e.b, v))) return false;
  int64_t x = v[e.a];
  if (x < 0) return false;
  if (e.b >= 0) {
    if (v[e.b] < 0 || __builtin_mul_overflow(x, v[e.b], &x)) return false;
  }
  return !__builtin_mul_overflow(e.coef, x, &x) && !__builtin_add_overflow(x, e.add, out);
}

bool sym_match(const SymExpr& e, int64_t x, SymValues* v) {
  int64_t y;
  if (!e.symbolic()) return x == e.add;
  if (!known_index(e.a, *v) || (e.b >= 0 && !known_index(e.b, *v))) return false;
  if (sym_eval(e, *v, &y)) return x == y;
  if ((*v)[e.a] >= 0 && (e.b < 0 || (*v)[e.b] >= 0)) return false;  // bound, but the value overflows
  // One symbol unbound: x decides it, if it is a whole size of at least 2.
  int free_sym = (*v)[e.a] < 0 ? e.a : e.b;
  int64_t known = 1;
  if (e.b >= 0) {
    int other = free_sym == e.a ? e.b : e.a;
    if ((*v)[other] < 0 && other != free_sym) return false;  // two unknowns: not decided here
    known = other == free_sym ? 0 : (*v)[other];
  }
  int64_t r;
  if (__builtin_sub_overflow(x, e.add, &r)) return false;
  int64_t s;
  if (known == 0) {  // s*s: a square
    if (e.coef == 0 || r % e.coef) return false;
    r /= e.coef;
    if (r < 4) return false;
    s = static_cast<int64_t>(std::sqrt(static_cast<long double>(r)));
    while (s > 0 && (s > r / s)) --s;  // s*s <= r without overflowing
    while (s + 1 <= r / (s + 1)) ++s;
    if (s * s != r) return false;
  } else {
    int64_t den;
    if (__builtin_mul_overflow(e.coef, known, &den) || den == 0 || r % den) return false;
    s = r / den;
  }
  if (s < 2) return false;
  (*v)[free_sym] = s;
  return true;
}

std::string sym_expected(const SymExpr& e, const SymValues& v) {
  if (!e.symbolic()) return e.str();
  int64_t y;
  if (sym_eval(e, v, &y)) return fmt::format("{} (= {})", e.str(), y);
  return e.str() + " (a size >= 2)";
}

std::string value_meta(const Value& v) {
  if (v.sym_shape().empty()) return meta_str(v.dtype, v.shape);
  std::string s = meta_str(v.dtype, Dims{});
  s.pop_back();
  for (size_t i = 0; i < v.sym_shape().size(); ++i) s += (i ? ", " : "") + v.sym_shape()[i].str();
  return s + "]";
}

Dims eval_shape(const Value& val, const SymValues* v) {
  if (val.sym_shape().empty() || !v) return val.shape;
  Dims d = val.shape;
  for (int i = 0; i < d.size(); ++i) {
    int64_t x;
    if (sym_eval(val.sym_shape()[i], *v, &x)) d[i] = x;
  }
  return d;
}

namespace {

// A form in the symbols that gives `a` in the earlier trace and `b` in this one.
bool fit_pair(int64_t a, int64_t b, const std::vector<SymInfo>& syms, SymExpr* out) {
  const int n = static_cast<int>(syms.size());
  auto usable = [&](int i) { return syms[i].sample >= 2 && syms[i].traced >= 2; };
  for (int i = 0; i < n; ++i)  // s, c*s
    if (usable(i) && a % syms[i].sample == 0 && b % syms[i].traced == 0 && a / syms[i].sample == b / syms[i].traced) {
      *out = SymExpr{a / syms[i].sample, 0, static_cast<int8_t>(i), -1};
      return true;
    }
  for (int i = 0; i < n; ++i)  // c*s*t
    for (int j = i; j < n; ++j) {
      if (!usable(i) || !usable(j)) continue;
      int64_t pa = syms[i].sample * syms[j].sample, pb = syms[i].traced * syms[j].traced;
      if (a % pa == 0 && b % pb == 0 && a / pa == b / pb) {
        *out = SymExpr{a / pa, 0, static_cast<int8_t>(i), static_cast<int8_t>(j)};
        return true;
      }
    }
  // c*s + d with c >= 1 (a shifted sequence, a padded one, numel - 1 of a [s, 3] tensor). Two
  // samples fit any line, so a falling one is not believed: -23*s0 + 216 through (8, 32) and
  // (9, 9) is a coincidence, not a form.
  for (int i = 0; i < n; ++i) {
    if (!usable(i)) continue;
    int64_t ds = syms[i].traced - syms[i].sample;
    if (ds == 0 || (b - a) % ds) continue;
    int64_t c = (b - a) / ds;
    if (c < 1) continue;
    *out = SymExpr{c, a - c * syms[i].sample, static_cast<int8_t>(i), -1};
    return true;
  }
  return false;
}

// A form in the symbols that gives x at this call, guessed from one trace.
bool fit_value(int64_t x, const std::vector<SymInfo>& syms, const SymValues& now, bool products, SymExpr* out) {
  const int n = static_cast<int>(syms.size());
  if (x < 2) return false;
  for (int i = 0; i < n; ++i)
    if (now[i] >= 2 && x == now[i]) {
      *out = SymExpr{1, 0, static_cast<int8_t>(i), -1};
      return true;
    }
  for (int i = 0; i < n && products; ++i)
    for (int j = i; j < n; ++j)
      if (now[i] >= 2 && now[j] >= 2 && x == now[i] * now[j]) {
        *out = SymExpr{1, 0, static_cast<int8_t>(i), static_cast<int8_t>(j)};
        return true;
      }
  // Not a multiple c*s: a hidden size of 64 beside a batch of 8 would be taken for 8*s0.
  return false;
}

std::string symbol_source(const Graph& g, int id, int d) {
  const Value& v = g.values[id];
  if (!v.input_name().empty() && v.input_name()[0] != '%') return fmt::format("{}.size({})", v.input_name(), d);
  if (!v.input_name().empty()) return fmt::format("dim {} of {}", d, v.input_name());  // "%3 of segment 0"
  return fmt::format("dim {} of input %{}", d, id);
}

// Slots whose int is a size or a position in one (a single trace guesses only those: a dim index
// that happens to equal a size is not one).
bool size_like(OpId op, int s) {
  switch (op) {
    case OpId::full:
    case OpId::rand:
    case OpId::randn:
    case OpId::randint:
    case OpId::view:
    case OpId::expand:
      return s < kMaxDims;
    case OpId::slice:
      return s == kMaxDims + 1 || s == kMaxDims + 2;
    case OpId::select:
      return s == kMaxDims + 1;
    case OpId::arange:
      return s == kMaxDims + 4 || s == kMaxDims + 5;
    default:
      return false;
  }
}

void mark_dynamic_flag(Graph* g) {
  g->dynamic = false;
  for (const Value& v : g->values) {
    for (const SymExpr& e : v.sym_shape()) g->dynamic |= e.symbolic();
    for (const SymExpr& e : v.sym_strides()) g->dynamic |= e.symbolic();
  }
  for (const Node& n : g->nodes) g->dynamic |= !n.sym_attrs.empty();
}

// Sets v's form of dim d (and fills the rest with constants on first use).
void set_dim_form(std::vector<SymExpr>* forms, const Dims& concrete, int d, SymExpr e) {
  if (forms->empty())
    for (int i = 0; i < concrete.size(); ++i) forms->push_back(SymExpr::constant(concrete[i]));
  (*forms)[d] = e;
}

}  // namespace

bool generalize_pair(const Graph& old, Graph* g, std::vector<SymInfo>* syms, SymValues* now) {
  // The same ops, wiring and dtypes: only ints may differ. A dynamic old trace is compared by the
  // sizes it was traced with.
  if (g->dynamic || old.values.size() != g->values.size() || old.nodes.size() != g->nodes.size() ||
      old.inputs != g->inputs)
    return false;
  for (size_t i = 0; i < g->values.size(); ++i) {
    const Value &a = old.values[i], &b = g->values[i];
    if (a.dtype != b.dtype || a.shape.size() != b.shape.size() || a.producer != b.producer) return false;
  }
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    const Node &a = old.nodes[k], &b = g->nodes[k];
    if (a.op != b.op || a.inputs != b.inputs || a.outputs != b.outputs || a.target != b.target) return false;
    Attrs same = b.attrs;
    for (int s = 0; s < kIntSlots; ++s) {
      int64_t x, y;
      bool hx = int_slot(a.attrs, s, &x), hy = int_slot(b.attrs, s, &y);
      if (hx != hy) return false;
      if (hx) set_int_slot(&same, s, x);
    }
    if (!attrs_equal_but_values(a.op, a.attrs, same)) return false;
  }
  // Symbols: input dims that differ, both sizes at least 2; dims that differ alike share one.
  size_t before = syms->size();
  for (int id : g->inputs) {
    const Value &a = old.values[id], &b = g->values[id];
    for (int d = 0; d < b.shape.size(); ++d) {
      int64_t x = a.shape[d], y = b.shape[d];
      if (x == y || x < 2 || y < 2) continue;
      bool known = false;
      for (const SymInfo& s : *syms) known |= s.sample == x && s.traced == y;
      if (!known && syms->size() < kMaxSymbols) {
        syms->push_back(SymInfo{symbol_source(*g, id, d), y, x});
        now->push_back(y);
      }
    }
  }
  // A size argument that differs while no input's size does (a tensor read only for its shape:
  // ones(x.shape[0])) is a symbol of its own, bound by the argument itself.
  for (size_t k = 0; k < g->nodes.size(); ++k)
    for (int s = 0; s < kIntSlots; ++s) {
      int64_t x, y;
      SymExpr e;
      if (!size_like(g->nodes[k].op, s) || !int_slot(old.nodes[k].attrs, s, &x) ||
          !int_slot(g->nodes[k].attrs, s, &y) || x == y || x < 2 || y < 2 || fit_pair(x, y, *syms, &e))
        continue;
      syms->push_back(SymInfo{fmt::format("{} (%{})", int_slot_name(g->nodes[k].op, s),
                                          g->nodes[k].outputs.empty() ? -1 : g->nodes[k].outputs[0]),
                              y, x});
      now->push_back(y);
    }
  if (syms->size() == before && before == 0) return false;
  // Every int that differs, written in them; one that fits no form stays this trace's constant.
  auto form = [&](int64_t x, int64_t y, SymExpr* e) { return x != y && fit_pair(x, y, *syms, e); };
  for (size_t i = 0; i < g->values.size(); ++i) {
    const Value& a = old.values[i];
    Value& b = g->values[i];
    for (int d = 0; d < b.shape.size(); ++d)
      // An input's size 0 or 1 stays specialized: it is not a point of a line.
      if (SymExpr e; !(b.producer < 0 && (a.shape[d] < 2 || b.shape[d] < 2)) && form(a.shape[d], b.shape[d], &e))
        set_dim_form(&b.extra().sym_shape, b.shape, d, e);
    if (b.producer < 0 && a.strides.size() == b.strides.size())
      for (int d = 0; d < b.strides.size(); ++d)
        if (SymExpr e; form(a.strides[d], b.strides[d], &e)) set_dim_form(&b.extra().sym_strides, b.strides, d, e);
  }
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    const Node& a = old.nodes[k];
    Node& b = g->nodes[k];
    for (int s = 0; s < kIntSlots; ++s) {
      int64_t x, y;
      SymExpr e;
      if (int_slot(a.attrs, s, &x) && int_slot(b.attrs, s, &y) && form(x, y, &e))
        b.sym_attrs.push_back(SymAttr{static_cast<int8_t>(s), e});
    }
  }
  mark_dynamic_flag(g);
  return g->dynamic;
}

bool generalize_by_value(Graph* g, std::vector<SymInfo>* syms, SymValues* now) {
  for (int id : g->inputs) {
    const Value& v = g->values[id];
    for (int d = 0; d < v.shape.size(); ++d) {
      if (!(v.dynamic_dims >> d & 1) || v.shape[d] < 2) continue;
      bool known = false;
      for (size_t i = 0; i < syms->size(); ++i) known |= (*now)[i] == v.shape[d];
      if (!known && syms->size() < kMaxSymbols) {
        syms->push_back(SymInfo{symbol_source(*g, id, d), v.shape[d], -1});
        now->push_back(v.shape[d]);
      }
    }
  }
  if (syms->empty()) return false;
  for (Value& v : g->values) {
    // A parameter's or buffer's size is its own (a 16-row embedding is not s0*s0 at a batch of 4).
    bool state = v.producer < 0 && (v.input_kind == InputKind::Parameter || v.input_kind == InputKind::Attribute ||
                                    v.input_kind == InputKind::OptimizerState);
    if (state) continue;
    for (int d = 0; d < v.shape.size(); ++d)
      if (SymExpr e; (v.sym_shape().empty() || !v.sym_shape()[d].symbolic()) &&
                     fit_value(v.shape[d], *syms, *now, v.producer >= 0, &e))
        set_dim_form(&v.extra().sym_shape, v.shape, d, e);
    if (v.producer < 0)
      for (int d = 0; d < v.strides.size(); ++d)
        if (SymExpr e; (v.sym_strides().empty() || !v.sym_strides()[d].symbolic()) &&
                       fit_value(v.strides[d], *syms, *now, true, &e))
          set_dim_form(&v.extra().sym_strides, v.strides, d, e);
  }
  for (Node& n : g->nodes)
    for (int s = 0; s < kIntSlots; ++s) {
      int64_t x;
      if (!size_like(n.op, s) || !int_slot(n.attrs, s, &x)) continue;
      bool has = false;
      for (const SymAttr& sa : n.sym_attrs) has |= sa.slot == s;
      if (SymExpr e; !has && fit_value(x, *syms, *now, true, &e))
        n.sym_attrs.push_back(SymAttr{static_cast<int8_t>(s), e});
    }
  mark_dynamic_flag(g);
  return g->dynamic;
}

void clear_symbols(Graph* g) {
  for (Value& v : g->values) v.clear_symbols();
  for (Node& n : g->nodes) n.sym_attrs.clear();
  g->dynamic = false;
}

void instantiate(Graph* g, int nodes, const SymValues& v, const std::vector<Tensor>& bound) {
  // The inputs as this call bound them, then each node's outputs inferred again in order.
  std::vector<Tensor> meta(g->values.size());
  auto make = [&](int id) {
    const Value& val = g->values[id];
    meta[id] = Tensor(new TensorImpl(nullptr, val.shape, val.strides, val.offset, val.dtype));
  };
  for (int id : g->inputs) {
    Value& val = g->values[id];
    if (id < static_cast<int>(bound.size()) && bound[id].defined()) {
      val.shape = bound[id].shape();
      val.strides = bound[id].strides();
      val.offset = bound[id].offset();
    }
    make(id);
  }
  for (int k = 0; k < nodes; ++k) {
    Node& n = g->nodes[k];
    for (const SymAttr& sa : n.sym_attrs)
      if (int64_t x; sym_eval(sa.e, v, &x)) set_int_slot(&n.attrs.mut(), sa.slot, x);
    std::vector<Tensor> in;
    for (int i : n.inputs) in.push_back(meta[i]);
    if (n.target >= 0) {
      const Value& t = g->values[n.target];
      Value& o = g->values[n.outputs[0]];
      o.shape = t.shape, o.strides = t.strides, o.offset = t.offset;
      make(n.outputs[0]);
      continue;
    }
    const OpDef& d = op_def(n.op);
    OutMeta m[2];
    d.infer(in, n.attrs, m);
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      Value& val = g->values[n.outputs[o]];
      val.shape = m[o].shape;
      if (d.cls == OpClass::View) {
        val.strides = m[o].strides;
        val.offset = m[o].offset;
      } else {
        val.strides = contiguous_strides(val.shape);
      }
      make(n.outputs[o]);
    }
  }
}

}  // namespace dyn
