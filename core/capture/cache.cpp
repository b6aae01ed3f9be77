// The cache of traces: compiled functions and their entries, the plan cache, and the guards of an
// entry as the tools list them.
#include "core/capture/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <deque>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

std::string Observation::str() const {
  if (!known) return "?";
  if (is_bool) return value != 0 ? "True" : "False";
  if (is_int) return format_scalar(Scalar::from_int(static_cast<int64_t>(value)));
  return format_scalar(Scalar::from_double(value));
}

namespace {
// Weak: a plan lives as long as a cached segment or a logged graph runs or shows it, so the
// memory kept stays proportional to the cached graphs, not to every structure ever compiled.
std::unordered_map<std::string, std::weak_ptr<Plan>>& plans() {
  static std::unordered_map<std::string, std::weak_ptr<Plan>> p;
  return p;
}
size_t g_sweep_at = 64;  // forget expired keys when the table has grown this large
}  // namespace

std::shared_ptr<Plan> cached_plan(const std::string& key, const Graph& g, bool* compiled) {
  auto& p = plans();
  if (auto it = p.find(key); it != p.end())
    if (std::shared_ptr<Plan> plan = it->second.lock()) {
      *compiled = false;
      return plan;
    }
  *compiled = true;
  auto plan = compile_plan(g);
  p[key] = plan;
  if (p.size() >= g_sweep_at) {
    std::erase_if(p, [](const auto& kv) { return kv.second.expired(); });
    g_sweep_at = std::max<size_t>(64, 2 * p.size());
  }
  return plan;
}

void clear_plan_cache() { plans().clear(); }

// ---- guards of an entry, for listing ----

namespace {
std::string strides_text(const Value& v) {
  if (v.sym_strides().empty()) return dims_str(v.strides);
  std::string s = "[";
  for (size_t i = 0; i < v.sym_strides().size(); ++i) s += (i ? ", " : "") + v.sym_strides()[i].str();
  return s + "]";
}
}  // namespace

std::vector<std::string> CompiledFunction::guard_lines(int entry) const {
  std::vector<std::string> out;
  const Entry& e = entries_.at(entry);
  out.push_back(fmt::format("global_state: default dtype is {}, grad mode {}{}", dtype_name(e.default_dtype),
                            e.grad_enabled ? "enabled" : "disabled",
                            e.autocast == kAutocastOff ? "" : ", autocast " + autocast_name(e.autocast)));
  // Dynamic sizes: each symbol is bound where the call first meets it, then checked everywhere.
  for (size_t i = 0; i < e.symbols.size(); ++i) {
    const SymInfo& s = e.symbols[i];
    std::string why = s.sample >= 0 ? fmt::format("sizes {} and {} seen", s.sample, s.traced)
                                    : fmt::format("marked dynamic, {} when traced", s.traced);
    out.push_back(
        fmt::format("shape_symbol: s{} = {}, 2 <= s{} ({}); every size that follows it is checked "
                    "against its form",
                    i, s.source, i, why));
  }
  for (size_t j = 0; j < e.segments.size(); ++j) {
    const Segment& s = *e.segments[j];
    const Graph& g = s.graph;
    std::vector<int> first_use(g.values.size(), -1);
    for (size_t k = 0; k < g.nodes.size(); ++k)
      for (int i : g.nodes[k].inputs)
        if (first_use[i] < 0) first_use[i] = static_cast<int>(k);
    for (int id : g.inputs) {
      const Value& v = g.values[id];
      std::string line = fmt::format("tensor_input: {} is %{} {} with strides {}, requires_grad={}", input_label(g, id),
                                     id, value_meta(v), strides_text(v), v.requires_grad ? "True" : "False");
      if (first_use[id] >= 0) line += "  # " + g.nodes[first_use[id]].where.str();
      out.push_back(line);
    }
    if (g.inputs.size() > 1)
      out.push_back(fmt::format("aliasing: the {} tensor inputs of segment {} are distinct tensors  # {}",
                                g.inputs.size(), j, g.nodes.empty() ? std::string() : g.nodes.front().where.str()));
    // Each node's scalar inputs by field, found once: a search per node made :guards quadratic.
    // Named constants share the table: a field is either read at each call or a constant.
    std::vector<const ScalarInput*> scalar_of(g.nodes.size() * 3, nullptr);
    for (const ScalarInput& si : g.scalar_inputs)
      if (si.node >= 0 && static_cast<size_t>(si.node) < g.nodes.size() && si.field < 3 &&
          !scalar_of[static_cast<size_t>(si.node) * 3 + static_cast<size_t>(si.field)])
        scalar_of[static_cast<size_t>(si.node) * 3 + static_cast<size_t>(si.field)] = &si;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const Node& n = g.nodes[k];
      std::string a = format_attrs(n.op, n.attrs);
      bool constant = (op_def(n.op).cls == OpClass::Binary && n.attrs->side != ScalarSide::None) ||
                      n.op == OpId::clamp || n.op == OpId::full || n.op == OpId::arange;
      unsigned values = value_scalars(n.op, n.attrs);
      const Scalar* sc[] = {&n.attrs->scalar, &n.attrs->scalar2, &n.attrs->scalar3};
      // A float read at each call is guarded only to be a float (an int would change the dtype).
      for (int f = 0; f < 3; ++f)
        if (values >> f & 1) {
          std::string label = scalar_label(scalar_of[k * 3 + static_cast<size_t>(f)]);
          if (label.rfind("the literal ", 0) == 0)  // its value is in the label and in the code
            out.push_back(fmt::format("scalar_input: {} reads {}  # {}", op_name(n.op), label, n.where.str()));
          else
            out.push_back(fmt::format("scalar_input: {} reads {}, a float read at each call ({} when traced)  # {}",
                                      op_name(n.op), label, format_scalar(*sc[f]), n.where.str()));
        }
      // A constant by the name it has in the code: compared at each call, another value is another
      // graph. Unnamed (a literal, or nobody can tell): the op's numbers as the graph prints them.
      // A number that follows a size (x + x.shape[0], dynamic) is checked against its form instead.
      unsigned constants = constant_scalars(n.op, n.attrs);
      for (const SymAttr& sa : n.sym_attrs)
        if (sa.slot >= kMaxDims + 4) constants &= ~(1u << (sa.slot - kMaxDims - 4));
      bool named = false;
      for (int f = 0; f < 3; ++f) {
        const ScalarInput* si = scalar_of[k * 3 + static_cast<size_t>(f)];
        if (!(constants >> f & 1) || !si || !si->constant || !si->named()) continue;
        out.push_back(fmt::format("constant: {} == {}, checked at each call (a number {} bakes into the graph)  # {}",
                                  scalar_label(si), format_scalar(*sc[f]), op_name(n.op), n.where.str()));
        named = true;
      }
      if (constant && !values && !named)
        out.push_back(fmt::format("constant: {} uses {}  # {}", op_name(n.op), a, n.where.str()));
      out.push_back(fmt::format("op: {}", print_node(g, n)));
    }
    if (s.ends_in_break) {
      const Observation& ob = j < e.observed.size() ? e.observed[j] : s.observed;
      // Not a value guard: Python reads the value at each call and what it does with it shows in
      // the ops after the break, which are checked.
      if (ob.known)
        out.push_back(fmt::format(
            "branch: {}{} here is read at each call ({} when traced): the ops after it are checked, not its value  "
            "# {}",
            s.observed_name.empty() ? "" : "`" + s.observed_name + "` = ",
            s.break_kind == BreakKind::Item ? ".item()" : "bool() of a tensor", ob.str(), s.break_where.str()));
      else
        out.push_back(fmt::format("graph_break: {} here  # {}", break_kind_name(s.break_kind), s.break_where.str()));
    }
  }
  return out;
}

// ---- compiled functions ----

namespace {
std::vector<std::weak_ptr<CompiledFunction>>& all_functions() {
  static std::vector<std::weak_ptr<CompiledFunction>> all;
  return all;
}
}  // namespace

std::shared_ptr<CompiledFunction> CompiledFunction::create(CompileOptions o) {
  auto fn = std::make_shared<CompiledFunction>(std::move(o));
  auto& all = all_functions();
  all.erase(std::remove_if(all.begin(), all.end(), [](const auto& w) { return w.expired(); }), all.end());
  all.push_back(fn);
  return fn;
}

std::deque<std::shared_ptr<CompiledFunction>>& retired() {
  static std::deque<std::shared_ptr<CompiledFunction>> r;
  return r;
}

void CompiledFunction::retire(std::shared_ptr<CompiledFunction> fn) {
  if (!fn || (fn->entries_.empty() && fn->calls == 0)) return;
  auto& r = retired();
  r.push_back(std::move(fn));
  if (r.size() > kRetired) r.pop_front();
}

std::vector<std::shared_ptr<CompiledFunction>> CompiledFunction::live() {
  std::vector<std::shared_ptr<CompiledFunction>> out;
  for (auto& w : all_functions())
    if (auto fn = w.lock()) out.push_back(fn);
  return out;
}

std::shared_ptr<CompiledFunction> CompiledFunction::find(const std::string& name) {
  auto all = live();
  for (auto it = all.rbegin(); it != all.rend(); ++it)  // the newest: after a reset a name is reused
    if ((*it)->name() == name) return *it;
  return nullptr;
}

void CompiledFunction::reset_all() {
  retired().clear();
  for (auto& w : all_functions())
    if (auto fn = w.lock()) {
      fn->entries_.clear();
      fn->fallback_ = false;
      fn->fallback_reason_.clear();
      fn->calls = 0;
      fn->recompiles = 0;
      fn->recompile_causes.clear();
    }
}

void Capture::register_entry() {
  if (new_entry_ < 0) return;
  Entry e;
  e.segments = prefix_;
  e.segments.insert(e.segments.end(), new_segments_.begin(), new_segments_.end());
  e.default_dtype = default_float_dtype();
  e.autocast = autocast_at_start_;
  e.grad_enabled = grad_enabled_at_start_;
  e.observed = observed_;
  e.symbols = syms_;
  if (namer_) {
    Naming naming(this);
    e.values = namer_->values();
  }
  if (e.segments.empty()) {  // the function ran no op at all: nothing to cache, nothing recompiled
    retract_recompile();
    return;
  }
  for (size_t k = 0; k < e.segments.size(); ++k)
    e.graph_ids.push_back(fmt::format("{}[{}].{}", fn_->name(), new_entry_, k));
  fn_->entries_.push_back(std::move(e));
}

// The moment a call stops matching every entry (or a re-created function starts afresh), it
// will record a new trace: that is the recompile, logged here so a breakpoint on it stops in the
// frame where the call diverged.

}  // namespace dyn
