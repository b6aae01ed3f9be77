// Replay: each op of a call is checked against the cached entries still matching.
//
// Note [replay]
// Python runs on every call, so a cached trace is not guessed from the arguments: each op the
// call issues is checked against every entry still matching (op, constants, operands, and the
// metadata of each tensor the first time it enters), and no graph is built. At a sync point the
// entries that end their segment there run its cached plan on this call's inputs. The first
// check an entry fails is kept as its guard failure. When no entry is left, the call copies the
// matched prefix of the current segment from the entry that matched longest and records from
// there: nothing is re-run. Its trace becomes a new entry (a recompile), sharing the segments
// before the divergence with that entry.
#include "core/capture/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

// ---- replay ----

const Segment& Capture::cached_segment() const { return *fn_->entries_[candidates_.front()].segments[segment_index_]; }

int Capture::replay_value_of(const Tensor& t, int expected, const Graph& g, SymValues* syms, GuardFailure* f,
                             std::vector<std::pair<const TensorImpl*, int>>* tentative) {
  TensorImpl* p = t.impl();
  if (p->capture_ == this) return p->lazy_value_;
  auto it = inputs_.find(p);
  if (it != inputs_.end()) return it->second;
  for (const auto& [impl, id] : *tentative)
    if (impl == p) return id;
  for (const auto& [impl, id] : *tentative)
    if (id == expected) return -1;  // the trace had one tensor twice here; this call passes two
  // A tensor entering the graph for the first time: it must stand where the trace had a new input.
  if (expected < 0 || expected >= static_cast<int>(g.values.size()) || g.values[expected].producer >= 0 ||
      bound_[expected].defined())
    return -1;
  if (!check_tensor_input(g.values[expected], t, f, syms)) {
    if (!g.values[expected].input_name().empty()) f->came = t;
    auto c = computed_.find(p);
    f->came_computed = c != computed_.end() && c->second.first == p->storage_;
    return -2;
  }
  tentative->push_back({p, expected});
  return expected;
}

bool Capture::check_node(int entry, OpId op, std::span<const Tensor> in, const Attrs& a, const Tensor* self,
                         const OutMeta* metas, GuardFailure* f) {
  const Entry& e = fn_->entries_[entry];
  const Segment& s = *e.segments[segment_index_];
  const Graph& g = s.graph;
  f->entry = entry;
  if (node_k_ >= static_cast<int>(g.nodes.size())) {
    f->kind = GuardKind::TraceEnd;
    f->what = fmt::format("the trace {} after {} ops of segment {}; this call runs more ops first",
                          s.ends_in_break ? "breaks" : "returns", g.nodes.size(), segment_index_);
    f->expected = s.ends_in_break ? "graph break at " + s.break_where.str() : "return";
    f->actual = std::string(op_name(op));
    f->where = current_source();
    return false;
  }
  const Node& n = g.nodes[node_k_];
  if (n.op != op || n.inputs.size() != in.size() || (n.target >= 0) != (self != nullptr)) {
    auto shape_of_call = [](OpId o, size_t tensors, const Attrs& at, bool inplace) {
      std::string s = std::string(op_name(o)) + (inplace ? "_" : "");
      s += fmt::format(" of {} tensor{}", tensors, tensors == 1 ? "" : "s");
      if (op_def(o).cls == OpClass::Binary && at.side != ScalarSide::None)
        s += " and the number " + format_scalar(at.scalar);
      return s;
    };
    f->kind = GuardKind::Op;
    f->what = n.op == op ? fmt::format("operands of {} changed", op_name(op))
                         : fmt::format("op {} of segment {} changed", node_k_, segment_index_);
    if (n.op == op) {
      f->expected = shape_of_call(n.op, n.inputs.size(), n.attrs, n.target >= 0) + " at " + n.where.str();
      f->actual = shape_of_call(op, in.size(), a, self != nullptr);
      explain_swap(g, n, in, a, f);
    } else {
      f->expected = std::string(op_name(n.op)) + (n.target >= 0 ? "_" : "") + " at " + n.where.str();
      f->actual = std::string(op_name(op)) + (self ? "_" : "");
    }
    f->where = current_source();
    return false;
  }
  std::vector<std::pair<const TensorImpl*, int>> tentative;
  auto operand = [&](const Tensor& t, int expected) {
    int v = replay_value_of(t, expected, g, &binds_[entry], f, &tentative);
    if (v == expected) return true;
    if (v == -2) {  // a tensor input guard failed; f is filled
      f->where = current_source();
      return false;
    }
    f->kind = GuardKind::Aliasing;
    f->what =
        fmt::format("operand of {} is another tensor than when traced (aliasing or data flow changed)", op_name(op));
    auto label = [&](int id) {
      if (id < 0) return std::string("a new input");
      const Value& val = g.values[id];
      if (val.producer >= 0) return fmt::format("%{} (computed)", id);
      return val.input_name().empty() ? fmt::format("input %{}", id) : fmt::format("input '{}'", val.input_name());
    };
    f->expected = label(expected);
    f->actual = label(v);
    if (auto c = computed_.find(t.impl()); v < 0 && c != computed_.end() && c->second.first == t.impl()->storage_)
      f->actual = c->second.second + " (computed by this call)";
    f->where = current_source();
    return false;
  };
  // Operands first: a tensor enters the graph before the op applies its constants to it.
  for (size_t i = 0; i < in.size(); ++i)
    if (!operand(in[i], n.inputs[i])) return false;
  if (self && !operand(*self, n.target)) return false;
  // The default dtype and autocast after the operands: when the sizes of an input change the ops a
  // call runs (a roll by 0 records none), an op of another line stands where the traced one did,
  // under another default dtype maybe; the input that changed is the cause to name.
  if (n.default_dtype != default_float_dtype()) {
    f->kind = GuardKind::Op;
    f->what =
        fmt::format("the default dtype at op {} of segment {} ({}) changed", node_k_, segment_index_, op_name(op));
    f->subject = "the default dtype";
    f->expected = std::string(dtype_name(n.default_dtype));
    f->actual = std::string(dtype_name(default_float_dtype()));
    f->hint = "dyn.set_default_dtype ran inside the call with another dtype than when traced";
    f->where = current_source();
    return false;
  }
  if (n.autocast != autocast_dtype()) {
    f->kind = GuardKind::Op;
    f->what = fmt::format("autocast at op {} of segment {} ({}) changed", node_k_, segment_index_, op_name(op));
    f->subject = "autocast";
    f->expected = autocast_name(n.autocast);
    f->actual = autocast_name(autocast_dtype());
    f->hint = "a torch.autocast block was entered or left inside the call where the trace had not";
    f->where = current_source();
    return false;
  }
  // A dynamic graph's size arguments: each must fit its form (binding a symbol met first here),
  // and is then compared as if it were the traced one.
  const Attrs* now = &a;
  std::optional<Attrs> as_traced;  // built only for a dynamic graph's size arguments
  if (!n.sym_attrs.empty()) {
    as_traced.emplace(a);
    for (const SymAttr& sa : n.sym_attrs) {
      int64_t x = 0, was = 0;
      if (!int_slot(a, sa.slot, &x) || !sym_match(sa.e, x, &binds_[entry])) {
        f->kind = GuardKind::Op;
        f->what = fmt::format("{} does not follow the sizes it followed when traced", int_slot_name(op, sa.slot));
        f->subject = int_slot_name(op, sa.slot);
        f->expected = sym_expected(sa.e, binds_[entry]);
        f->actual = std::to_string(x);
        f->where = current_source();
        return false;
      }
      int_slot(n.attrs, sa.slot, &was);
      set_int_slot(&*as_traced, sa.slot, was);
    }
    now = &*as_traced;
  }
  if (!attrs_match(op, n.attrs, *now)) {
    explain_attrs(op, n.attrs, *now, f);
    if (f->kind == GuardKind::Constant) {
      // Named later, and only if no entry serves the call (naming runs Python; a call that
      // another entry serves must not pay for it): which field changed.
      const Scalar* was[] = {&n.attrs->scalar, &n.attrs->scalar2, &n.attrs->scalar3};
      const Scalar* is[] = {&a.scalar, &a.scalar2, &a.scalar3};
      f->constant_field = 0;
      while (f->constant_field < 2 && same_scalar(*was[f->constant_field], *is[f->constant_field])) ++f->constant_field;
    }
    f->where = current_source();
    return false;
  }
  // What the op makes of this call's sizes must be what the trace's forms say (a size the trace
  // took to follow a symbol may not; the graph's plan relies on the sizes it fused alike).
  if (metas && g.dynamic && n.target < 0)
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const Value& v = g.values[n.outputs[o]];
      int bad = -1;
      for (int d = 0; d < metas[o].shape.size() && bad < 0; ++d) {
        bool ok = v.sym_shape().empty() ? metas[o].shape[d] == v.shape[d]
                                        : sym_match(v.sym_shape()[d], metas[o].shape[d], &binds_[entry]);
        if (!ok) bad = d;
      }
      if (bad < 0) continue;
      f->kind = GuardKind::Op;
      f->what =
          fmt::format("the result of {} has another size than the trace's forms give at dim {}", op_name(op), bad);
      f->subject = fmt::format("dim {} of the result of {}", bad, op_name(op));
      f->expected =
          v.sym_shape().empty() ? std::to_string(v.shape[bad]) : sym_expected(v.sym_shape()[bad], binds_[entry]);
      f->actual = std::to_string(metas[o].shape[bad]);
      f->where = current_source();
      return false;
    }
  return true;
}

namespace {
std::string number_kind(const Scalar& s) {
  return s.kind == Scalar::Float ? "a Python float" : s.kind == Scalar::Int ? "a Python int" : "a Python bool";
}

std::string swap_hint(const std::string& who) {
  return fmt::format(
      "a tensor is an input of the graph and a Python number a constant or scalar input of it, so each kind "
      "gets its own trace; pass {} as the same kind at every call",
      who);
}

void name_swap(GuardFailure* f, const std::string& name, const std::string& kind) {
  f->what = fmt::format("`{}` ({}) of {} is {}", name, kind, f->swap_op, f->swap_kinds);
  f->subject = fmt::format("`{}` ({}) is {}", name, kind, f->swap_kinds);
  f->hint = swap_hint("`" + name + "`");
}

bool same_line(const SourceStack& a, const SourceStack& b) {
  SourceLoc x = a.top(), y = b.top();
  return x.known() && y.known() && x.line == y.line && *x.file == *y.file;
}
}  // namespace

void Capture::explain_swap(const Graph& g, const Node& n, std::span<const Tensor> in, const Attrs& a, GuardFailure* f) {
  // A binary op's operand that was a tensor when traced and is a number now, or the other way.
  if (op_def(n.op).cls != OpClass::Binary || n.target >= 0) return;
  bool to_number = n.inputs.size() == 2 && in.size() == 1 && a.side != ScalarSide::None;
  bool to_tensor = n.inputs.size() == 1 && in.size() == 2 && n.attrs->side != ScalarSide::None;
  if (!to_number && !to_tensor) return;
  size_t pos = (to_number ? a.side : n.attrs->side) == ScalarSide::Lhs ? 0 : 1;
  // The name is the operand's as this call writes it: the traced tensor's own name would be wrong
  // where the expression picks another value (`s = w if use_w else 0.5`). Asked of the namer only
  // if no entry serves the call (naming runs Python); the trace's name for its number stands when
  // this call issues the op at the same line.
  std::string name, kind;
  if (to_number) {
    const Value& v = g.values[n.inputs[pos]];
    f->expected = fmt::format("a tensor {} at {}", value_meta(v), n.where.str());
    f->actual = number_kind(a.scalar) + " (" + format_scalar(a.scalar) + ")";
    f->swap_number = true;
  } else {
    if (same_line(n.where, current_source()))
      for (const ScalarInput& si : g.scalar_inputs)
        if (si.node == node_k_ && si.field == 0 && si.named() && si.kind != InputKind::Literal)
          name = *si.name, kind = input_kind_name(si.kind);
    f->expected =
        fmt::format("{} ({}) at {}", number_kind(n.attrs->scalar), format_scalar(n.attrs->scalar), n.where.str());
    f->actual = "a tensor " + meta_str(in[pos].dtype(), in[pos].shape());
    if (name.empty()) f->swapped = in[pos];  // named by explain_causes if no entry serves the call
  }
  std::string now = to_number ? number_kind(a.scalar) : std::string("a tensor");
  std::string was = to_number ? std::string("a tensor") : number_kind(n.attrs->scalar);
  f->swap_kinds = now + " where the trace had " + was;
  f->swap_op = std::string(op_name(n.op));
  f->what = fmt::format("operand {} of {} is {}", pos, f->swap_op, f->swap_kinds);
  f->hint = swap_hint("this operand");
  if (!name.empty()) name_swap(f, name, kind);
}

void Capture::drop_candidate(size_t i, GuardFailure f) {
  int e = candidates_[i];
  const Entry& entry = fn_->entries_[e];
  // If Python saw another value at an earlier break, that is why the ops went another way: what
  // the ops do (which ones, their constants, where the trace ends) can follow from it; a tensor's
  // metadata, aliasing or the global state cannot (a dynamic entry serves a new length read by
  // .item(), and then a new size of x is the cause). Of several, the latest int or bool: a float
  // is read at each call, and decides the trace only through a branch that follows it.
  bool downstream = f.kind == GuardKind::Op || f.kind == GuardKind::TraceEnd || f.kind == GuardKind::Constant ||
                    f.kind == GuardKind::Aliasing || (f.kind == GuardKind::TensorInput && f.came_computed);
  int pick = -1, pick_float = -1;
  for (int j = std::min({segment_index_, static_cast<int>(observed_.size()), static_cast<int>(entry.observed.size())});
       downstream && j-- > 0;) {
    const Observation& was = entry.observed[j];
    if (!was.known || !observed_[j].known || was.value == observed_[j].value) continue;
    if (was.is_bool || was.is_int) {
      pick = j;
      break;
    }
    if (pick_float < 0) pick_float = j;
  }
  if (pick < 0) pick = pick_float;
  if (pick >= 0) {
    const int j = pick;
    const Observation& was = entry.observed[j];
    {
      const Segment& s = *entry.segments[j];
      f = GuardFailure{};
      f.entry = e;
      f.kind = GuardKind::Branch;
      f.expected = was.str();
      f.actual = observed_[j].str();
      f.where = s.break_where;
      std::string read = s.break_kind == BreakKind::Item ? ".item()" : "bool()";
      std::string at = s.break_where.top().known() ? " at " + s.break_where.top().str() : std::string();
      if (!s.observed_name.empty()) {
        // The variable Python stored it to: the cause, by its name.
        f.what =
            fmt::format("`{}`, read from a tensor by {}{} (graph break {}), changed", s.observed_name, read, at, j);
        f.subject = "`" + s.observed_name + "`";
        f.cause_name = s.observed_name;
        f.cause_old = f.expected;
        f.cause_new = f.actual;
        f.cause_from = "from " + read + at;
      } else {
        f.what = fmt::format("the value of {}{} (graph break {}) changed", read, at, j);
        f.subject = "the value of " + read + at;
      }
      f.hint = s.break_kind == BreakKind::Item
                   ? "the ops after it depend on this number (as a size, an index or a constant), so a value that "
                     "changes them needs a trace of its own; keeping the computation in tensors avoids the break"
                   : "data-dependent control flow: each outcome gets its own trace; dyn.where keeps one graph";
    }
  }
  failures_.push_back(std::move(f));
  last_failed_ = e;
  candidates_.erase(candidates_.begin() + static_cast<long>(i));
}

bool Capture::replay_op(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor* self, std::vector<Tensor>* out) {
  // A dynamic candidate checks the sizes this call gives: infer once for all of them. (Built only
  // then: two OutMetas are four Dims to zero on every replayed op.)
  struct Metas {
    OutMeta m[2];
  };
  std::optional<Metas> inferred;
  for (int e : candidates_)
    if (!self && fn_->entries_[e].segments[segment_index_]->graph.dynamic) {
      op_def(op).infer(in, a, inferred.emplace().m);
      break;
    }
  const OutMeta* metas = inferred ? inferred->m : nullptr;
  for (size_t i = 0; i < candidates_.size();) {
    if (check_node(candidates_[i], op, in, a, self, metas, &scratch_failure_)) {
      ++i;
    } else {
      drop_candidate(i, std::move(scratch_failure_));
      scratch_failure_ = GuardFailure{};
    }
  }
  if (candidates_.empty()) {
    // The call records from here: name the constants that failed at this op, whose numbers the
    // op's own frame still shows.
    if (namer_)
      for (GuardFailure& f : failures_)
        if (f.constant_field >= 0 && f.where.top().line == current_source().top().line) {
          const Scalar* is[] = {&a.scalar, &a.scalar2, &a.scalar3};
          InputKind kind;
          std::string name;
          Naming naming(this);
          if (namer_->scalar(*is[f.constant_field], f.constant_field == 0 ? a.side : ScalarSide::None, &kind, &name) &&
              kind != InputKind::Literal)
            f.what = fmt::format("constant '{}' ({}) of {} changed", name, input_kind_name(kind), op_name(op));
          f.constant_field = -1;
        }
    // ... and a number that stands where the trace had a tensor.
    if (namer_)
      for (GuardFailure& f : failures_)
        if (f.swap_number && f.where.top().line == current_source().top().line) {
          InputKind kind;
          std::string name;
          Naming naming(this);
          if (namer_->scalar(a.scalar, a.side, &kind, &name) && kind != InputKind::Literal && !name.empty())
            name_swap(&f, name, std::string(input_kind_name(kind)));
          f.swap_number = false;
        }
    switch_to_record();
    return false;
  }
  const Graph& g = cached_segment().graph;
  const Node& n = g.nodes[node_k_];
  auto bind = [&](const Tensor& t, int id) {
    if (t.impl()->capture_ == this || inputs_.count(t.impl())) return;
    inputs_.emplace(t.impl(), id);
    bound_[id] = t;
  };
  for (size_t i = 0; i < in.size(); ++i) bind(in[i], n.inputs[i]);
  if (self) bind(*self, n.target);
  bool random = op_def(op).cls == OpClass::Random;
  unsigned values = value_scalars(op, a);
  // A patch only when some candidate was traced with other numbers (an lr that moved): whichever
  // candidate ends up running then reads this call's; the common replay needs none.
  bool moved = false;
  for (size_t i = 0; values && !moved && i < candidates_.size(); ++i)
    moved =
        changed_values(op, fn_->entries_[candidates_[i]].segments[segment_index_]->graph.nodes[node_k_].attrs, a) != 0;
  // An int number that follows the sizes (x * x.shape[0]) is this call's too, fused or not.
  unsigned sized = 0;
  for (int e : candidates_)
    for (const SymAttr& sa : fn_->entries_[e].segments[segment_index_]->graph.nodes[node_k_].sym_attrs)
      if (sa.slot >= kMaxDims + 4) sized |= 1u << (sa.slot - kMaxDims - 4);
  if (random || moved || sized) {
    NodePatch p;
    p.node = node_k_;
    p.rng = random;
    p.seed = a.seed, p.offset = a.offset;
    p.values = (moved ? values : 0) | sized;
    p.scalar[0] = a.scalar, p.scalar[1] = a.scalar2, p.scalar[2] = a.scalar3;
    patches_.push_back(p);
  }
  ++node_k_;
  if (self) {
    bind_target(*self, n.outputs[0]);
  } else if (op_def(op).cls == OpClass::View) {
    // Storage offsets are not guarded (a slice x[i:i+b] would recompile for every i): a view's
    // geometry comes from this call's input, as eager mode would give it.
    OutMeta m;
    op_def(op).infer(in, a, &m);
    make_lazy_outputs(g, n, out, metas);
    TensorImpl* p = out->back().impl();
    p->strides_ = m.strides;
    p->offset_ = m.offset;
  } else {
    make_lazy_outputs(g, n, out, metas);
  }
  return true;
}

void Capture::explain_causes() {
  // A tensor that failed a named input's guard: if it is another argument or global than the one
  // traced, the failure is not that tensor's metadata but which tensor the op read.
  for (GuardFailure& f : failures_) {
    if (f.swapped.defined()) {
      Tensor t = std::move(f.swapped);
      f.swapped = Tensor();
      InputKind kind;
      std::string name;
      bool named = false;
      if (namer_) {
        Naming naming(this);
        named = namer_->tensor(t, &kind, &name) && !name.empty();
      }
      if (named) name_swap(&f, name, std::string(input_kind_name(kind)));
    }
    if (!f.came.defined()) continue;
    Tensor t = std::move(f.came);
    f.came = Tensor();
    if (!namer_ || f.entry < 0 || f.entry >= fn_->num_entries()) continue;
    InputKind kind;
    std::string name;
    bool named;
    {
      Naming naming(this);
      named = namer_->tensor(t, &kind, &name) && !name.empty();
    }
    // The failure's text starts with the traced input's label: the same name means the same input.
    if (named && f.what.rfind("tensor '" + name + "' (", 0) == 0) continue;
    // Not reachable by any name (an argument, a global, an attribute) while the traced input was:
    // a tensor the call made itself (t = dyn.tensor(...)) stands where the trace read that input.
    if (!named && f.what.rfind("tensor '", 0) != 0) continue;
    f.kind = GuardKind::Aliasing;
    f.expected = "the input traced there (" + f.what + ")";
    f.actual = named ? "'" + name + "' (" + input_kind_name(kind) + ")"
                     : std::string("a tensor this call made (no argument, global or attribute holds it)");
    f.what = "an op read another tensor than when traced (data flow changed)";
    f.subject = "the tensor the op read";
    f.hint =
        "Python control flow chose another tensor (an argument, a global) for this op; each data flow "
        "gets its own trace";
  }
  if (!namer_ || failures_.empty()) return;
  std::vector<NamedValue> now;
  {
    Naming naming(this);
    now = namer_->values();
  }
  for (GuardFailure& f : failures_) {
    // A tensor's metadata, grad mode and the default dtype at the call are causes of their own: a
    // Python value that changed too is no reason that such an entry failed.
    if (f.kind == GuardKind::TensorInput || f.kind == GuardKind::GlobalState || f.entry < 0 ||
        f.entry >= fn_->num_entries() || !f.cause_from.empty())
      continue;
    // An int, bool or string that changed decides control flow or a constant; a float is an input
    // of the graph and explains a failure only when nothing else changed.
    const NamedValue* best = nullptr;
    const NamedValue* was_best = nullptr;
    for (const NamedValue& was : fn_->entries_[f.entry].values)
      for (const NamedValue& v : now)
        // Only values the function reads itself (a counter passed along and never read is no
        // cause). A float is a graph input: it explains a failure only where Python decided on
        // it, never a branch on a tensor's value (which is not among these), and an int or bool
        // that changed comes first.
        if (v.name == was.name && v.value != was.value && !v.where.empty() &&
            !(v.is_float && f.kind == GuardKind::Branch) && (!best || (best->is_float && !v.is_float))) {
          best = &v;
          was_best = &was;
        }
    if (!best) continue;
    f.cause_name = best->name;
    f.cause_old = was_best->value;
    f.cause_new = best->value;
    f.cause_where = best->where;
  }
}

void Capture::switch_to_record() {
  CaptureLog& log = CaptureLog::get();
  bool aborting = new_entry_ == -2;
  // The prefix comes from an entry that still matches (when the call is aborted mid-replay), else
  // from the one that matched longest.
  int best_entry = !candidates_.empty() ? candidates_.front() : last_failed_;
  // Entries that failed a global-state guard matched nothing: of those, the newest is as close.
  closest_ = best_entry >= 0 ? best_entry : failures_.empty() ? -1 : failures_.back().entry;
  if (best_entry >= 0 && segment_index_ < static_cast<int>(fn_->entries_[best_entry].segments.size())) {
    // Keep what matched: the segments before this one, and this segment's first node_k_ nodes.
    const Entry& best = fn_->entries_[best_entry];
    prefix_.assign(best.segments.begin(), best.segments.begin() + segment_index_);
    const Graph& g = best.segments[segment_index_]->graph;
    int vb =
        node_k_ < static_cast<int>(g.nodes.size()) ? g.nodes[node_k_].values_before : static_cast<int>(g.values.size());
    seg_ = Graph{};
    seg_.values.assign(g.values.begin(), g.values.begin() + vb);
    seg_.nodes.assign(g.nodes.begin(), g.nodes.begin() + node_k_);
    for (int id : g.inputs)
      if (id < vb) {
        seg_.inputs.push_back(id);
        Value& v = seg_.values[id];
        ValueExtra& x = v.extra();
        x.input = id < static_cast<int>(bound_.size()) ? bound_[id] : Tensor();
        assert(x.input.defined() && "a kept input was bound by the replayed prefix");
        source_of(x.input, &v.input_kind, &x.input_name);
      }
    for (const ScalarInput& si : g.scalar_inputs)
      if (si.node < node_k_) seg_.scalar_inputs.push_back(si);
    // The kept nodes carry this call's generator state and constants, as if it had recorded them.
    for (const NodePatch& p : patches_) p.apply(&seg_.nodes[p.node].attrs.mut());
    // ... and its sizes.
    if (g.dynamic) instantiate(&seg_, node_k_, binds_[best_entry], bound_);
  } else if (best_entry >= 0) {
    const Entry& best = fn_->entries_[best_entry];
    prefix_.assign(best.segments.begin(), best.segments.end());
  }
  // The new entry shares the symbols of the prefix it keeps, at this call's values, if what it
  // keeps uses them (else it starts afresh, and may become dynamic by other sizes).
  bool keeps_symbols = false;
  for (const auto& seg : prefix_) keeps_symbols |= seg->graph.dynamic;
  for (const Value& v : seg_.values) {
    for (const SymExpr& e : v.sym_shape()) keeps_symbols |= e.symbolic();
    for (const SymExpr& e : v.sym_strides()) keeps_symbols |= e.symbolic();
  }
  for (const Node& n : seg_.nodes) keeps_symbols |= !n.sym_attrs.empty();
  if (!keeps_symbols) clear_symbols(&seg_);  // no form may name a symbol the new entry lacks
  if (keeps_symbols && best_entry >= 0 && !fn_->entries_[best_entry].symbols.empty()) {
    syms_ = fn_->entries_[best_entry].symbols;
    sym_now_ = binds_[best_entry];
    for (size_t i = 0; i < syms_.size(); ++i)
      if (sym_now_[i] >= 0) syms_[i].traced = sym_now_[i];  // one this call has not met keeps its own
  }
  candidates_.clear();
  bound_.clear();
  patches_.clear();
  if (aborting) return;
  explain_causes();
  // What a size failure's hint may promise depends on the function's dynamic= (settled here) and
  // on whether the recompile makes the size dynamic (amended by generalize_segment).
  for (GuardFailure& f : failures_) {
    if (f.size_dim >= 0) f.hint = size_hint(f, fn_->options().dynamic, false, fn_->name());
    // arange's hint promises a dynamic size, which dynamic=False never makes.
    if (fn_->options().dynamic == 0 && f.kind == GuardKind::Constant && f.what.find(" of arange ") != std::string::npos)
      f.hint = fmt::format(
          "arange's bounds set a size, and '{}' was compiled with dynamic=False: each range gets a "
          "graph of its own",
          fn_->name());
  }
  for (const GuardFailure& f : failures_) {
    Event ev = event(EventKind::GuardFailure, f.entry, f.where);
    ev.reason = fmt::format("{}: {}", guard_kind_name(f.kind), f.str());
    ev.details = std::string(guard_kind_name(f.kind));
    ev.guard = f;
    emit(std::move(ev));
    guard_events_.push_back(log.last_event_number());
  }
  if (fn_->num_entries() >= fn_->opts_.cache_limit) {
    // Too many traces: from now on the function runs eagerly. This call finishes uncached.
    fn_->fallback_ = true;
    fn_->fallback_reason_ = failures_.empty() ? std::string("?") : failures_.back().str();
    Event ev = event(EventKind::Fallback, -1, failures_.empty() ? SourceStack{} : failures_.back().where);
    ev.segment = -1;
    ev.reason =
        fmt::format("cache_limit ({}) reached: '{}' runs eagerly from now on", fn_->opts_.cache_limit, fn_->name());
    ev.details = fn_->fallback_reason_;
    emit(std::move(ev));
    new_entry_ = -1;
    return;
  }
  new_entry_ = fn_->num_entries();
  // The segments this call shares with the entry it diverged from are listed under the new one too.
  for (size_t j = 0; j < prefix_.size(); ++j) {
    const std::shared_ptr<Segment>& s = prefix_[j];
    GraphRecord& r =
        log.graph(fn_->name(), new_entry_, static_cast<int>(j), std::shared_ptr<const Graph>(s, &s->graph), fn_);
    r.plan = s->plan;
    r.times = s->times;
    r.ends_in_break = s->ends_in_break;
    r.break_kind = s->break_kind;
    r.break_where = s->break_where;
    r.calls++;
    new_graph_ids_.push_back(r.id());
  }
  log_recompile();
}

}  // namespace dyn
