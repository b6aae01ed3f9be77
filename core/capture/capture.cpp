// Capture: lazy tracing inside compile regions, the cache of traces, and replay.
//
// Note [capture]
// Inside a region, dispatch() hands every op to the Capture. Recording runs the op's own infer
// function (so shape and dtype errors surface at the user's line, exactly as in eager mode),
// appends a node, and returns a lazy tensor: a TensorImpl with the geometry eager mode would give
// but no data. Tensors from outside the region enter the segment as graph inputs the first time
// they are used. In-place ops record a node that writes into its target's buffer when the segment
// runs; the target (even a parameter from outside) is then lazy until the next sync, and its
// storage is flagged so that any other view of it syncs before being read.
//
// A sync point (graph break or region exit) runs the segment: the live lazy tensors are its
// outputs; dead nodes are dropped, common subexpressions merged, and the remaining nodes run in
// program order with the eager kernels. Each live lazy TensorImpl then adopts the storage and
// geometry of its computed value and is an ordinary tensor again. Because the same infer and the
// same kernels run in the same order on the same inputs, results are bitwise equal to eager mode.
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

#include <algorithm>
#include <cassert>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

thread_local Capture* Capture::active_ = nullptr;
bool Capture::paused_ = false;
std::atomic<int> Capture::live_{0};

void capture_forget(TensorImpl* impl) { impl->capture_->forget(impl); }

std::string Observation::str() const {
  if (!known) return "?";
  if (is_bool) return value != 0 ? "True" : "False";
  return format_scalar(Scalar::from_double(value));
}

// ---- plan cache ----

namespace {
std::unordered_map<std::string, std::shared_ptr<Plan>>& plans() {
  static std::unordered_map<std::string, std::shared_ptr<Plan>> p;
  return p;
}

std::string where_str(const SourceStack& w) {
  SourceLoc top = w.top();
  if (!top.known()) return "<unknown>";
  std::string text = source_line(*top.file, top.line);
  return text.empty() ? top.str() : top.str() + " `" + text + "`";
}

std::string terminator(const Segment& s) {
  return s.ends_in_break ? "|break:" + std::string(break_kind_name(s.break_kind)) : "|end";
}
}  // namespace

std::shared_ptr<Plan> cached_plan(const std::string& key, const Graph& g, bool* compiled) {
  auto& p = plans();
  auto it = p.find(key);
  *compiled = it == p.end();
  if (!*compiled) return it->second;
  auto plan = compile_plan(g);
  p.emplace(key, plan);
  return plan;
}

void clear_plan_cache() { plans().clear(); }

// ---- breaks ----

std::string break_reason(BreakKind kind, const std::string& what) {
  switch (kind) {
    case BreakKind::DataDependentBranch:
      return "Python needed the truth value of a tensor (data-dependent control flow)";
    case BreakKind::Item:
      return "Python needed the value of a tensor as a number (" + what + ")";
    case BreakKind::ToList:
      return "Python needed the values of a tensor as a list (.tolist())";
    case BreakKind::Numpy:
      return "Python needed the data of a tensor as a numpy array (" + what + ")";
    case BreakKind::Print:
      return "Python needed the values of a tensor to print it (" + what + ")";
    case BreakKind::UnsupportedOp:
      return "op '" + what + "' has no lazy form: its output shape depends on the data";
    case BreakKind::ExplicitSync:
      break;
  }
  return "explicit sync (dyn.sync())";
}

std::string break_hint(BreakKind kind) {
  switch (kind) {
    case BreakKind::DataDependentBranch:
      return "compute both branches and pick with dyn.where(cond, a, b), or move the check out of the compiled "
             "function";
    case BreakKind::Item:
      return "keep the value as a tensor inside the compiled function; call .item() on what it returns";
    case BreakKind::ToList:
    case BreakKind::Numpy:
      return "return the tensor from the compiled function and convert it outside";
    case BreakKind::Print:
      return "print after the compiled function returns, or look at the graph with dyn.debug.graphs()";
    case BreakKind::UnsupportedOp:
      return "keep shapes static, e.g. dyn.where(mask, x, 0) instead of x[mask]";
    case BreakKind::ExplicitSync:
      break;
  }
  return "dyn.sync() cuts the graph on purpose; remove it to keep one graph";
}

void ensure_materialized(const Tensor& t, BreakKind kind, const char* what) {
  TensorImpl* p = t.impl();
  if (Capture::paused() && (p->capture_ || (p->storage_ && p->storage_->pending_writes)))
    fail(ErrorKind::Runtime,
         "{} needs the value of a tensor that is still pending in the graph being captured; the script is "
         "stopped before that graph runs: :continue first, or look at the graph with :graph",
         what);
  if (p->capture_) {
    p->capture_->graph_break(kind, what, &t);
  } else if (p->storage_ && p->storage_->pending_writes) {
    if (Capture* c = Capture::active()) c->graph_break(kind, what, &t);
  } else if (kind == BreakKind::Numpy && p->storage_) {
    // The memory escapes to numpy, which may write it at any later line: the recorded ops that
    // read it must run first, as they did in eager mode.
    if (Capture* c = Capture::active(); c && c->reads_storage(p->storage_)) c->graph_break(kind, what, &t);
  }
}

// ---- guards of an entry, for listing ----

std::vector<std::string> CompiledFunction::guard_lines(int entry) const {
  std::vector<std::string> out;
  const Entry& e = entries_.at(entry);
  out.push_back(fmt::format("global_state: default dtype is {}, grad mode {}", dtype_name(e.default_dtype),
                            e.grad_enabled ? "enabled" : "disabled"));
  for (size_t j = 0; j < e.segments.size(); ++j) {
    const Segment& s = *e.segments[j];
    const Graph& g = s.graph;
    std::vector<int> first_use(g.values.size(), -1);
    for (size_t k = 0; k < g.nodes.size(); ++k)
      for (int i : g.nodes[k].inputs)
        if (first_use[i] < 0) first_use[i] = static_cast<int>(k);
    for (int id : g.inputs) {
      const Value& v = g.values[id];
      std::string label = v.input_name.empty() ? "tensor" : "tensor '" + v.input_name + "'";
      std::string line =
          fmt::format("tensor_input: {} %{} is {} with strides {}, requires_grad={}", label, id,
                      meta_str(v.dtype, v.shape), dims_str(v.strides), v.requires_grad ? "True" : "False");
      if (first_use[id] >= 0) line += "  # " + where_str(g.nodes[first_use[id]].where);
      out.push_back(line);
    }
    if (g.inputs.size() > 1)
      out.push_back(fmt::format("aliasing: the {} tensor inputs of segment {} are distinct tensors  # {}",
                                g.inputs.size(), j,
                                g.nodes.empty() ? std::string() : where_str(g.nodes.front().where)));
    for (const Node& n : g.nodes) {
      std::string a = format_attrs(n.op, n.attrs);
      bool constant = (op_def(n.op).cls == OpClass::Binary && n.attrs.side != ScalarSide::None) ||
                      n.op == OpId::clamp || n.op == OpId::full || n.op == OpId::arange;
      if (constant) out.push_back(fmt::format("constant: {} uses {}  # {}", op_name(n.op), a, where_str(n.where)));
      out.push_back(fmt::format("op: {}", print_node(g, n)));
    }
    if (s.ends_in_break) {
      const Observation& ob = j < e.observed.size() ? e.observed[j] : s.observed;
      if (ob.known)
        out.push_back(
            fmt::format("branch: Python observed {} at the graph break  # {}", ob.str(), where_str(s.break_where)));
      else
        out.push_back(
            fmt::format("graph_break: {} here  # {}", break_kind_name(s.break_kind), where_str(s.break_where)));
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
  for (auto& w : all_functions())
    if (auto fn = w.lock()) {
      fn->entries_.clear();
      fn->fallback_ = false;
      fn->fallback_reason_.clear();
      fn->calls = 0;
    }
}

std::string Capture::describe_pending(const TensorImpl* impl) const {
  int v = impl->lazy_value_;
  const Graph& g = replaying() ? cached_segment().graph : seg_;
  if (v < 0 || v >= static_cast<int>(g.values.size())) return "pending";
  const Value& val = g.values[v];
  std::string s = fmt::format("%{} {} pending", v, meta_str(val.dtype, val.shape));
  if (val.producer >= 0) {
    const Node& n = g.nodes[val.producer];
    std::string args = format_attrs(n.op, n.attrs);
    std::string ops;
    for (int i : n.inputs) ops += (ops.empty() ? "%" : ", %") + std::to_string(i);
    if (!args.empty()) ops += (ops.empty() ? "" : ", ") + args;
    s += fmt::format(": {}({})", op_name(n.op), ops);
    if (n.where.top().known()) s += " at " + n.where.top().str();
  }
  return s;
}

// ---- region ----

Capture::Capture(std::shared_ptr<CompiledFunction> fn) : fn_(std::move(fn)) {}

bool Capture::begin(std::shared_ptr<CompiledFunction> fn) {
  // Inside a region: inlined. While the script is stopped at a breakpoint: run eagerly (a nested
  // capture would take cache entries the stopped call is building).
  if (active_ || paused_) return false;
  if (fn->fallback_) {  // runs eagerly, but it is still a call
    fn->calls++;
    CaptureLog::get().counters().calls++;
    return false;
  }
  auto* c = new Capture(std::move(fn));
  c->grad_enabled_at_start_ = grad_enabled();
  CompiledFunction& f = *c->fn_;
  f.calls++;
  CaptureLog& log = CaptureLog::get();
  log.counters().calls++;
  c->start_ = log.now();
  for (int e = 0; e < f.num_entries(); ++e) {
    const Entry& entry = f.entries_[e];
    GuardFailure g;
    g.entry = e;
    g.kind = GuardKind::GlobalState;
    if (entry.default_dtype != default_float_dtype()) {
      g.what = "default dtype";
      g.expected = std::string(dtype_name(entry.default_dtype));
      g.actual = std::string(dtype_name(default_float_dtype()));
      g.hint = "dyn.set_default_dtype changed since the trace";
    } else if (entry.grad_enabled != grad_enabled()) {
      g.what = "grad mode";
      g.expected = entry.grad_enabled ? "enabled" : "disabled (no_grad)";
      g.actual = grad_enabled() ? "enabled" : "disabled (no_grad)";
      g.hint = "the trace records (or skips) autograd history; each grad mode gets its own entry";
    } else {
      c->candidates_.push_back(e);
      continue;
    }
    g.where = current_source();
    c->failures_.push_back(std::move(g));
  }
  // An entry that failed a global-state guard matched nothing of this call: the new trace shares
  // no prefix with it (last_failed_ stays -1).

  active_ = c;
  ++live_;
  if (c->candidates_.empty())
    c->switch_to_record();
  else
    c->size_bound();
  return true;
}

void Capture::size_bound() {
  size_t n = 0;
  for (int e : candidates_) {
    const Entry& entry = fn_->entries_[e];
    if (segment_index_ < static_cast<int>(entry.segments.size()))
      n = std::max(n, entry.segments[segment_index_]->graph.values.size());
  }
  bound_.assign(n, Tensor());
}

namespace {

void poison(TensorImpl* p) {
  p->capture_ = nullptr;
  p->lazy_value_ = p->storage_ ? -1 : TensorImpl::kPoisoned;
}

}  // namespace

void Capture::end() {
  Capture* c = active_;
  CaptureLog& log = CaptureLog::get();
  auto finish = [&] {
    for (Storage* s : c->pending_) s->pending_writes = false;
    active_ = nullptr;
    double own = std::max(0.0, log.now() - c->start_ - c->compile_s_ - c->execute_s_);
    (c->replaying() ? log.counters().replay_s : log.counters().trace_s) += own;
    --live_;
    delete c;
  };
  try {
    if (c->replaying()) c->replay_sync(true, BreakKind::ExplicitSync, SourceStack{}, Observation{});
    if (c->replaying()) {
      int e = c->candidates_.front();
      c->fn_->entries_[e].hits++;
      for (const std::string& id : c->fn_->entries_[e].graph_ids)
        if (GraphRecord* r = log.find_graph(id)) r->calls++;
      log.counters().cache_hits++;
      Event hit;
      hit.kind = EventKind::CacheHit;
      hit.fn = c->fn_->name();
      hit.entry = e;
      log.add_coalesced(std::move(hit));
    } else {
      c->run_segment(true, nullptr, nullptr);
      c->register_entry();
    }
  } catch (...) {
    for (auto& [p, v] : c->lazies_) poison(p);
    c->lazies_.clear();
    for (const std::string& id : c->new_graph_ids_) log.remove_graph(id);
    if (c->recompile_event_ >= 0) {  // the announced entry was never made
      log.counters().recompiles--;
      log.erase_event(c->recompile_event_);
    }
    finish();
    throw;
  }
  finish();
}

void Capture::abort() {
  Capture* c = active_;
  if (!c) return;
  CaptureLog& log = CaptureLog::get();
  try {
    if (c->replaying()) {
      c->new_entry_ = -2;  // nothing this call recorded is kept
      c->switch_to_record();
    }
    c->run_segment(false, nullptr, nullptr);
    if (c->recompile_event_ >= 0) {
      // The call that diverged raised before its trace was complete: no new entry after all, so
      // no recompile either (its guard_failure events stay as the record of what happened).
      log.counters().recompiles--;
      log.erase_event(c->recompile_event_);
    }
  } catch (...) {
    for (auto& [p, v] : c->lazies_) poison(p);
    c->lazies_.clear();
  }
  for (const std::string& id : c->new_graph_ids_) log.remove_graph(id);
  for (Storage* s : c->pending_) s->pending_writes = false;
  active_ = nullptr;
  log.counters().trace_s += std::max(0.0, log.now() - c->start_ - c->compile_s_ - c->execute_s_);
  --live_;
  delete c;
}

void Capture::settle_failed_run(const Graph& g, const std::vector<Tensor>& slots) {
  auto value_at = [&](int v) { return v >= 0 && v < static_cast<int>(slots.size()) ? slots[v] : Tensor(); };
  for (auto& [p, v] : lazies_) {
    int value = v;
    p->capture_ = nullptr;
    p->lazy_value_ = -1;
    Tensor r = value_at(value);
    if (r.defined() && r.impl() == p) continue;  // an outside in-place target: its memory is current
    if (!r.defined() && p->storage_) continue;   // an outside target whose write never ran: unchanged
    if (!r.defined()) {
      // A view of a buffer that exists is that view, whether or not the view op itself ran.
      Tensor root = value_at(root_of(g, value));
      if (!root.defined() || !root.storage()) {
        p->lazy_value_ = TensorImpl::kPoisoned;  // made after the failing op: eager never made it
        continue;
      }
      root.storage()->retain();
      p->storage_ = root.storage();
      continue;
    }
    r.storage()->retain();
    if (p->storage_) p->storage_->release();
    p->storage_ = r.storage();
    p->strides_ = r.strides();
    p->offset_ = r.offset();
  }
  lazies_.clear();
  // A .grad that backward() set after the failing op never got its value: put back the one
  // eager mode would have left (backward never ran there).
  std::vector<std::pair<const TensorImpl*, std::function<void()>>> notes;
  notes.swap(grad_notes_);
  for (auto& [leaf, restore] : notes) restore();
  for (Storage* st : pending_) st->pending_writes = false;
  pending_.clear();
  seg_ = Graph{};
  inputs_.clear();
  writes_.clear();
  candidates_.clear();
  new_entry_ = -1;  // a trace that failed to run is not kept
}

void Capture::note_grad_change(const TensorImpl* leaf, std::function<void()> restore) {
  for (const auto& [l, r] : grad_notes_)
    if (l == leaf) return;
  grad_notes_.emplace_back(leaf, std::move(restore));
}

bool Capture::reads_storage(const Storage* st) const {
  for (const auto& [impl, id] : inputs_)
    if (impl->storage_ == st) return true;
  return false;
}

// Note [versions]
// Autograd saves a tensor's version with it and compares at backward(). A concrete tensor's
// version is its storage's write count. A lazy tensor has no storage yet: its version is the
// write count of the buffer it will live in — the outside storage it is a view of, or the root
// value of the current segment (writes_). When the segment runs, each root's storage starts at
// that count, so a version saved while lazy compares correctly after the sync too.
int64_t Capture::version_of(const Tensor& t) const {
  const TensorImpl* p = t.impl();
  if (p->capture_ != this) return p->storage_ ? p->storage_->version : -1;
  const Graph& g = current_graph();
  int v = p->lazy_value_;
  if (v < 0 || v >= static_cast<int>(g.values.size())) return -1;
  int root = root_of(g, v);
  if (g.values[root].producer < 0) {
    const Tensor& in =
        replaying() ? (root < static_cast<int>(bound_.size()) ? bound_[root] : Tensor()) : g.values[root].input;
    return in.defined() && in.storage() ? in.storage()->version : -1;
  }
  auto it = writes_.find(root);
  return it == writes_.end() ? 0 : it->second;
}

std::pair<const Storage*, int> Capture::buffer_of(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (p->capture_ != this) return {p->storage_, -1};
  const Graph& g = current_graph();
  int root = root_of(g, p->lazy_value_);
  if (g.values[root].producer < 0) return {outside_storage_of(p->lazy_value_), -1};
  return {nullptr, root};
}

void Capture::check_record(OpId op, std::span<const Tensor> in, const Attrs& a, const Tensor* self) {
  const OpDef& d = op_def(op);
  if (d.check_values) {
    EagerScope eager;  // reading an index tensor may make it contiguous: host work, not the trace's
    d.check_values(in, a);
  }
  if (!self) return;
  auto target = buffer_of(*self);
  for (const Tensor& t : in)
    if (buffer_of(t) == target && (target.first || target.second >= 0) && partially_overlap(*self, t))
      fail_partial_overlap();
}

void Capture::name_input(const Tensor& t, InputKind kind, const std::string& name) {
  auto it = names_.find(t.impl());
  if (it == names_.end())
    names_.emplace(t.impl(), std::make_pair(kind, name));
  else
    it->second.second += " = " + name;  // the same tensor passed twice
}

void Capture::forget(TensorImpl* impl) { lazies_.erase(impl); }

Tensor Capture::alias_lazy(const Tensor& t) {
  const TensorImpl* p = t.impl();
  auto* impl = new TensorImpl(nullptr, p->shape_, p->strides_, p->offset_, p->dtype_);
  impl->capture_ = this;
  impl->lazy_value_ = p->lazy_value_;
  lazies_.emplace(impl, p->lazy_value_);
  return Tensor(impl);
}

// ---- recording ----

int Capture::value_of(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (p->capture_ == this) return p->lazy_value_;
  auto it = inputs_.find(p);
  if (it != inputs_.end()) return it->second;
  InputKind kind = segment_index_ > 0 ? InputKind::Materialized : InputKind::External;
  std::string name;
  auto n = names_.find(p);
  if (n != names_.end()) {
    kind = n->second.first;
    name = n->second.second;
  }
  int id = seg_.add_input(t, kind, std::move(name));
  inputs_.emplace(p, id);
  return id;
}

std::vector<Tensor> Capture::record_node(OpId op, std::span<const Tensor> in, const Attrs& a, const OutMeta* metas,
                                         const Tensor* self) {
  const OpDef& d = op_def(op);
  Node n;
  n.op = op;
  n.attrs = a;
  // Everything this node adds comes after values_before, the target's first entry included: a
  // call that diverges at this node keeps exactly the values before it.
  n.values_before = static_cast<int>(seg_.values.size());
  n.where = current_source();
  n.inputs.reserve(in.size());
  for (const Tensor& t : in) n.inputs.push_back(value_of(t));
  int target = self ? value_of(*self) : -1;
  n.target = target;
  int k = static_cast<int>(seg_.nodes.size());
  for (int o = 0; o < d.num_outputs; ++o) {
    Value v;
    v.dtype = metas[o].dtype;
    v.shape = metas[o].shape;
    if (d.cls == OpClass::View || target >= 0) {
      v.strides = metas[o].strides;
      v.offset = metas[o].offset;
    } else {
      v.strides = contiguous_strides(v.shape);
    }
    v.producer = k;
    seg_.values.push_back(std::move(v));
    n.outputs.push_back(static_cast<int>(seg_.values.size()) - 1);
  }
  seg_.nodes.push_back(std::move(n));
  std::vector<Tensor> outs;
  if (target < 0) make_lazy_outputs(seg_, seg_.nodes.back(), &outs);
  return outs;
}

void Capture::make_lazy_outputs(const Graph& g, const Node& n, std::vector<Tensor>* out) {
  for (int id : n.outputs) {
    const Value& v = g.values[id];
    auto* impl = new TensorImpl(nullptr, v.shape, v.strides, v.offset, v.dtype);
    impl->capture_ = this;
    impl->lazy_value_ = id;
    lazies_.emplace(impl, id);
    out->emplace_back(impl);
  }
}

Storage* Capture::outside_storage_of(int v) {
  const Graph& g = replaying() ? cached_segment().graph : seg_;
  if (v < 0 || v >= static_cast<int>(g.values.size())) return nullptr;
  int root = root_of(g, v);
  if (g.values[root].producer >= 0) return nullptr;  // a buffer made inside the region
  const Tensor& t =
      replaying() ? (root < static_cast<int>(bound_.size()) ? bound_[root] : Tensor()) : seg_.values[root].input;
  return t.defined() ? t.storage() : nullptr;
}

void Capture::bind_target(Tensor& self, int value) {
  TensorImpl* p = self.impl();
  // A tensor from outside the region (or a view of one): its memory changes when the segment
  // runs, so any other view of it must sync before it is read.
  Storage* outside = p->capture_ != this ? p->storage_ : outside_storage_of(p->lazy_value_);
  if (outside && !outside->pending_writes) {
    outside->pending_writes = true;
    pending_.push_back(outside);
  }
  p->capture_ = this;
  p->lazy_value_ = value;
  lazies_[p] = value;
}

Tensor Capture::record(OpId op, std::span<const Tensor> in, const Attrs& a) {
  const OpDef& d = op_def(op);
  if (d.cls == OpClass::DataDependent) {
    graph_break(BreakKind::UnsupportedOp, std::string(d.name));
    EagerScope eager;  // the op runs now, on the inputs the break just computed
    return run_op(op, in, a);
  }
  check_record(op, in, a, nullptr);
  std::vector<Tensor> out;
  if (replaying() && replay_op(op, in, a, nullptr, &out)) return out[0];
  OutMeta m;
  d.infer(in, a, &m);
  return record_node(op, in, a, &m, nullptr)[0];
}

std::pair<Tensor, Tensor> Capture::record2(OpId op, std::span<const Tensor> in, const Attrs& a) {
  check_record(op, in, a, nullptr);
  std::vector<Tensor> out;
  if (!(replaying() && replay_op(op, in, a, nullptr, &out))) {
    OutMeta m[2];
    op_def(op).infer(in, a, m);
    out = record_node(op, in, a, m, nullptr);
  }
  return {out[0], out[1]};
}

void Capture::record_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  check_record(op, in, a, &self);
  // A write into a lazy tensor's buffer counts as a version of that buffer (Note [versions]); a
  // concrete target's storage is counted by dispatch_into.
  auto count_write = [&](bool was_lazy) {
    if (!was_lazy) return;
    const Graph& g = current_graph();
    int root = root_of(g, self.impl()->lazy_value_);
    if (g.values[root].producer >= 0)
      ++writes_[root];
    else if (Storage* st = outside_storage_of(root))
      ++st->version;
  };
  bool was_lazy = self.impl()->capture_ == this;
  if (replaying() && replay_op(op, in, a, &self, nullptr)) return count_write(was_lazy);
  OutMeta m;
  op_def(op).infer(in, a, &m);
  check_into(m, self);
  OutMeta geom{self.dtype(), self.shape(), self.strides(), self.offset()};
  record_node(op, in, a, &geom, &self);
  bind_target(self, seg_.nodes.back().outputs[0]);
  count_write(was_lazy);
}

// ---- replay ----

const Segment& Capture::cached_segment() const { return *fn_->entries_[candidates_.front()].segments[segment_index_]; }

int Capture::replay_value_of(const Tensor& t, int expected, const Graph& g, GuardFailure* f,
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
  if (!check_tensor_input(g.values[expected], t, f)) return -2;
  tentative->push_back({p, expected});
  return expected;
}

bool Capture::check_node(int entry, OpId op, std::span<const Tensor> in, const Attrs& a, const Tensor* self,
                         GuardFailure* f) {
  const Entry& e = fn_->entries_[entry];
  const Segment& s = *e.segments[segment_index_];
  const Graph& g = s.graph;
  f->entry = entry;
  if (node_k_ >= static_cast<int>(g.nodes.size())) {
    f->kind = GuardKind::TraceEnd;
    f->what = fmt::format("the trace {} after {} ops of segment {}; this call runs more ops first",
                          s.ends_in_break ? "breaks" : "returns", g.nodes.size(), segment_index_);
    f->expected = s.ends_in_break ? "graph break at " + where_str(s.break_where) : "return";
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
    f->what = n.op == op ? fmt::format("operands of {} changed (a tensor and a Python number swapped?)", op_name(op))
                         : fmt::format("op {} of segment {} changed", node_k_, segment_index_);
    if (n.op == op) {
      f->expected = shape_of_call(n.op, n.inputs.size(), n.attrs, n.target >= 0) + " at " + where_str(n.where);
      f->actual = shape_of_call(op, in.size(), a, self != nullptr);
    } else {
      f->expected = std::string(op_name(n.op)) + (n.target >= 0 ? "_" : "") + " at " + where_str(n.where);
      f->actual = std::string(op_name(op)) + (self ? "_" : "");
    }
    f->where = current_source();
    return false;
  }
  std::vector<std::pair<const TensorImpl*, int>> tentative;
  auto operand = [&](const Tensor& t, int expected) {
    int v = replay_value_of(t, expected, g, f, &tentative);
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
      return val.input_name.empty() ? fmt::format("input %{}", id) : fmt::format("input '{}'", val.input_name);
    };
    f->expected = label(expected);
    f->actual = label(v);
    f->where = current_source();
    return false;
  };
  // Operands first: a tensor enters the graph before the op applies its constants to it.
  for (size_t i = 0; i < in.size(); ++i)
    if (!operand(in[i], n.inputs[i])) return false;
  if (self && !operand(*self, n.target)) return false;
  if (!attrs_match(n.attrs, a)) {
    explain_attrs(op, n.attrs, a, f);
    f->where = current_source();
    return false;
  }
  return true;
}

void Capture::drop_candidate(size_t i, GuardFailure f) {
  int e = candidates_[i];
  const Entry& entry = fn_->entries_[e];
  // If Python saw another value at an earlier break, that is why the trace went another way.
  for (int j = 0;
       j < segment_index_ && j < static_cast<int>(observed_.size()) && j < static_cast<int>(entry.observed.size());
       ++j) {
    const Observation& was = entry.observed[j];
    if (was.known && observed_[j].known && was.value != observed_[j].value) {
      f = GuardFailure{};
      f.entry = e;
      f.kind = GuardKind::Branch;
      f.what = fmt::format("value Python observed at graph break {} changed", j);
      f.expected = was.str();
      f.actual = observed_[j].str();
      f.where = entry.segments[j]->break_where;
      f.hint = "data-dependent control flow: each outcome gets its own trace; dyn.where keeps one graph";
      break;
    }
  }
  failures_.push_back(std::move(f));
  last_failed_ = e;
  candidates_.erase(candidates_.begin() + static_cast<long>(i));
}

bool Capture::replay_op(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor* self, std::vector<Tensor>* out) {
  for (size_t i = 0; i < candidates_.size();) {
    GuardFailure f;
    if (check_node(candidates_[i], op, in, a, self, &f))
      ++i;
    else
      drop_candidate(i, std::move(f));
  }
  if (candidates_.empty()) {
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
  if (op_def(op).cls == OpClass::Random) rng_.push_back({node_k_, {a.seed, a.offset}});
  ++node_k_;
  if (self) {
    bind_target(*self, n.outputs[0]);
  } else if (op_def(op).cls == OpClass::View) {
    // Storage offsets are not guarded (a slice x[i:i+b] would recompile for every i): a view's
    // geometry comes from this call's input, as eager mode would give it.
    OutMeta m;
    op_def(op).infer(in, a, &m);
    make_lazy_outputs(g, n, out);
    TensorImpl* p = out->back().impl();
    p->strides_ = m.strides;
    p->offset_ = m.offset;
  } else {
    make_lazy_outputs(g, n, out);
  }
  return true;
}

void Capture::switch_to_record() {
  CaptureLog& log = CaptureLog::get();
  bool aborting = new_entry_ == -2;
  // The prefix comes from an entry that still matches (when the call is aborted mid-replay), else
  // from the one that matched longest.
  int best_entry = !candidates_.empty() ? candidates_.front() : last_failed_;
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
        v.input = id < static_cast<int>(bound_.size()) ? bound_[id] : Tensor();
        assert(v.input.defined() && "a kept input was bound by the replayed prefix");
        auto n = names_.find(v.input.impl());
        if (n != names_.end()) {
          v.input_kind = n->second.first;
          v.input_name = n->second.second;
        }
      }
    for (auto& [k, rng] : rng_) {
      seg_.nodes[k].attrs.seed = rng.first;
      seg_.nodes[k].attrs.offset = rng.second;
    }
  } else if (best_entry >= 0) {
    const Entry& best = fn_->entries_[best_entry];
    prefix_.assign(best.segments.begin(), best.segments.end());
  }
  candidates_.clear();
  bound_.clear();
  rng_.clear();
  if (aborting) return;
  if (!failures_.empty()) {
    log.counters().guard_failures += static_cast<int64_t>(failures_.size());
    for (const GuardFailure& f : failures_) {
      Event ev;
      ev.kind = EventKind::GuardFailure;
      ev.fn = fn_->name();
      ev.entry = f.entry;
      ev.segment = segment_index_;
      ev.where = f.where;
      ev.reason = fmt::format("{}: {}", guard_kind_name(f.kind), f.str());
      ev.details = std::string(guard_kind_name(f.kind));
      ev.guard = f;
      log.add(std::move(ev));
    }
  }
  if (fn_->num_entries() >= fn_->opts_.cache_limit) {
    // Too many traces: from now on the function runs eagerly. This call finishes uncached.
    fn_->fallback_ = true;
    fn_->fallback_reason_ = failures_.empty() ? std::string("?") : failures_.back().str();
    log.counters().fallbacks++;
    Event ev;
    ev.kind = EventKind::Fallback;
    ev.fn = fn_->name();
    ev.where = failures_.empty() ? SourceStack{} : failures_.back().where;
    ev.reason =
        fmt::format("cache_limit ({}) reached: '{}' runs eagerly from now on", fn_->opts_.cache_limit, fn_->name());
    ev.details = fn_->fallback_reason_;
    log.add(std::move(ev));
    new_entry_ = -1;
    return;
  }
  new_entry_ = fn_->num_entries();
  // The segments this call shares with the entry it diverged from are listed under the new one too.
  for (size_t j = 0; j < prefix_.size(); ++j) {
    Graph copy = prefix_[j]->graph;
    GraphRecord& r = log.graph(fn_->name(), new_entry_, static_cast<int>(j), std::move(copy));
    r.calls++;
    new_graph_ids_.push_back(r.id());
  }
  log_recompile();
}

void Capture::adopt_live(const Graph& g, std::vector<Tensor>& slots) {
  grad_notes_.clear();
  for (auto& [p, v] : lazies_) {
    const Tensor& r = slots[v];
    p->capture_ = nullptr;
    p->lazy_value_ = -1;
    if (r.impl() == p) continue;  // an in-place target from outside: already holds its data
    if (!r.defined() || r.shape() != p->shape_ || r.dtype() != p->dtype_)
      fail(ErrorKind::Runtime, "internal error: a graph computed {} for %{} where {} was inferred",
           r.defined() ? meta_str(r.dtype(), r.shape()) : "nothing", v, meta_str(p->dtype_, p->shape_));

    r.storage()->retain();
    if (p->storage_) p->storage_->release();
    p->storage_ = r.storage();
    p->strides_ = r.strides();
    p->offset_ = r.offset();
    // Note [versions]: a buffer made by the graph counts the region's writes into it, not the
    // ones its kernel made while filling it (cat copies into slices of its output).
    int root = root_of(g, v);
    if (g.values[root].producer >= 0) {
      auto w = writes_.find(root);
      p->storage_->version = w == writes_.end() ? 0 : w->second;
    }
  }
  writes_.clear();
  lazies_.clear();
  for (Storage* s : pending_) s->pending_writes = false;
  pending_.clear();
}

void Capture::replay_sync(bool is_end, BreakKind kind, const SourceStack& where, const Observation&) {
  for (size_t i = 0; i < candidates_.size();) {
    const Segment& s = *fn_->entries_[candidates_[i]].segments[segment_index_];
    bool ok = node_k_ == static_cast<int>(s.graph.nodes.size()) &&
              (is_end ? !s.ends_in_break : (s.ends_in_break && s.break_kind == kind));
    if (ok) {
      ++i;
      continue;
    }
    GuardFailure f;
    f.entry = candidates_[i];
    f.kind = GuardKind::TraceEnd;
    f.where = !where.frames.empty() ? where : current_source();
    if (node_k_ < static_cast<int>(s.graph.nodes.size())) {
      const Node& n = s.graph.nodes[node_k_];
      f.what = fmt::format("the trace runs more ops in segment {} before its next sync", segment_index_);
      f.expected = std::string(op_name(n.op)) + " at " + where_str(n.where);
      f.actual = is_end ? "return" : "graph break (" + std::string(break_kind_name(kind)) + ")";
    } else {
      f.what = fmt::format("segment {} ends differently", segment_index_);
      f.expected = s.ends_in_break
                       ? fmt::format("graph break ({}) at {}", break_kind_name(s.break_kind), where_str(s.break_where))
                       : "return";
      f.actual = is_end ? "return" : "graph break (" + std::string(break_kind_name(kind)) + ")";
    }
    drop_candidate(i, std::move(f));
  }
  if (candidates_.empty()) {
    switch_to_record();
    return;
  }
  const Segment& s = cached_segment();
  CaptureLog& log = CaptureLog::get();
  double t0 = log.now();
  // The cached plan computes the trace's outputs; if this call keeps other values alive, plan for those.
  std::shared_ptr<Plan> plan = s.plan;
  std::set<int> live;
  for (auto& [p, v] : lazies_) live.insert(v);
  bool covered = std::all_of(live.begin(), live.end(), [&](int v) {
    return std::find(s.graph.outputs.begin(), s.graph.outputs.end(), v) != s.graph.outputs.end();
  });
  if (!covered && plan) {
    Graph g = s.graph;
    g.outputs.assign(live.begin(), live.end());
    bool compiled = false;
    plan = cached_plan(structure_key(g) + terminator(s), g, &compiled);
  }
  double t1 = log.now();
  compile_s_ += t1 - t0;
  std::vector<Tensor> slots;
  try {
    EagerScope eager;
    RunInputs ri{&bound_, &rng_};
    execute(s.graph, plan.get(), ri, &slots);
  } catch (...) {
    settle_failed_run(s.graph, slots);
    throw;
  }
  double t2 = log.now();
  execute_s_ += t2 - t1;
  log.counters().execute_s += t2 - t1;
  adopt_live(s.graph, slots);
  inputs_.clear();
  rng_.clear();
  ++segment_index_;
  node_k_ = 0;
  if (!is_end) size_bound();
}

Observation Capture::observe(BreakKind kind, const Tensor* t) {
  Observation o;
  if (!t || !(kind == BreakKind::DataDependentBranch || kind == BreakKind::Item)) return o;
  if (t->impl()->lazy() || !t->impl()->storage_ || t->numel() != 1) return o;
  EagerScope eager;
  o.known = true;
  o.is_bool = kind == BreakKind::DataDependentBranch;
  o.value = kern::to_double(*t);
  if (o.is_bool) o.value = o.value != 0 ? 1 : 0;
  return o;
}

// ---- sync ----

void Capture::graph_break(BreakKind kind, const std::string& what, const Tensor* observed) {
  // Nothing recorded since the last sync (dyn.sync(), or an op with no lazy form right after a
  // break): nothing to cut, recording or replaying alike.
  if (replaying() ? node_k_ == 0 : seg_.nodes.empty()) return;
  if (fn_->options().fullgraph) {
    SourceStack where = current_source();
    SourceLoc top = where.top();
    std::string text = top.known() ? source_line(*top.file, top.line) : std::string();
    std::string hint = break_hint(kind);
    throw Error(ErrorKind::GraphBreak,
                fmt::format("graph break in '{}' compiled with fullgraph=True, at {}{}\n  {} [Python asked for {}]{}",
                            fn_->name(), top.str(), text.empty() ? "" : "  `" + text + "`", break_reason(kind, what),
                            what, hint.empty() ? "" : "\n  Hint: " + hint));
  }
  if (replaying()) {
    replay_sync(false, kind, SourceStack{}, Observation{});
    if (replaying()) {  // an entry ends its segment here: its plan ran
      observed_.push_back(observe(kind, observed));
      return;
    }
    // No entry breaks here: the call now records, with the matched prefix; break as a recording.
  }
  Event e;
  e.kind = EventKind::GraphBreak;
  e.fn = fn_->name();
  e.segment = segment_index_;
  e.where = current_source();
  e.break_kind = kind;
  e.reason = break_reason(kind, what);
  e.details = what;
  e.hint = break_hint(kind);
  run_segment(true, &e, nullptr);
  Observation o = observe(kind, observed);
  observed_.push_back(o);
  if (!new_segments_.empty()) new_segments_.back()->observed = o;
}

void Capture::run_segment(bool commit, const Event* break_event, const Observation*) {
  CaptureLog& log = CaptureLog::get();
  std::set<int> outs;
  for (auto& [p, v] : lazies_) outs.insert(v);
  seg_.outputs.assign(outs.begin(), outs.end());
  if (seg_.nodes.empty()) {
    if (break_event || !commit) return;  // an explicit sync with nothing recorded cuts nothing
    // The trace returns right after a break: an empty last segment marks where it ends.
    if (!new_segments_.empty() || !prefix_.empty()) new_segments_.push_back(std::make_shared<Segment>());
    return;
  }
  double t0 = log.now();
  std::string problem = verify_graph(seg_);
  if (!problem.empty()) fail(ErrorKind::Runtime, "internal error: malformed graph: {}", problem);
  auto seg = std::make_shared<Segment>();
  seg->ends_in_break = break_event != nullptr;
  if (break_event) {
    seg->break_kind = break_event->break_kind;
    seg->break_where = break_event->where;
  }
  bool compiled = false;
  if (!fn_->options().eager_backend) {
    std::string key = structure_key(seg_) + terminator(*seg);
    seg->plan = commit ? cached_plan(key, seg_, &compiled) : compile_plan(seg_);
  }
  double t1 = log.now();
  compile_s_ += t1 - t0;
  if (compiled) log.counters().compile_s += t1 - t0;

  std::vector<Tensor> slots;
  try {
    EagerScope eager;  // kernels call ops internally: those must run, not record
    execute(seg_, seg->plan.get(), RunInputs{}, &slots);
  } catch (...) {
    settle_failed_run(seg_, slots);  // what ran stays done, as in eager; nothing runs twice
    throw;
  }
  double t2 = log.now();
  execute_s_ += t2 - t1;
  log.counters().execute_s += t2 - t1;
  adopt_live(seg_, slots);

  seg->graph = std::move(seg_);
  for (Value& v : seg->graph.values) v.input = Tensor();  // the cache must not keep user tensors alive
  if (commit && new_entry_ >= 0) {
    GraphRecord& rec = log.graph(fn_->name(), new_entry_, segment_index_, seg->graph);
    rec.calls++;
    new_graph_ids_.push_back(rec.id());
    {
      if (compiled) log.counters().compiles++;
      Event c;
      c.kind = EventKind::Compile;
      c.fn = fn_->name();
      c.entry = new_entry_;
      c.segment = segment_index_;
      c.where = seg->graph.nodes.front().where;
      c.reason = compiled || !seg->plan
                     ? "new graph"
                     : "new graph (structurally identical to one compiled before: its plan is reused)";
      size_t kept = seg->plan ? seg->plan->order.size() : seg->graph.nodes.size();
      c.details = fmt::format("{}: {} ops, {} after dead-code and common-subexpression elimination", rec.id(),
                              seg->graph.nodes.size(), kept);
      log.add(std::move(c));
    }
    if (break_event) {
      Event b = *break_event;
      b.entry = new_entry_;
      log.counters().graph_breaks++;
      log.add(std::move(b));
    }
  }
  new_segments_.push_back(seg);
  seg_ = Graph{};
  inputs_.clear();
  ++segment_index_;
}

void Capture::register_entry() {
  if (new_entry_ < 0) return;
  Entry e;
  e.segments = prefix_;
  e.segments.insert(e.segments.end(), new_segments_.begin(), new_segments_.end());
  e.default_dtype = default_float_dtype();
  e.grad_enabled = grad_enabled_at_start_;
  e.observed = observed_;
  if (e.segments.empty()) return;  // the function ran no op at all: nothing to cache
  for (size_t k = 0; k < e.segments.size(); ++k)
    e.graph_ids.push_back(fmt::format("{}[{}].{}", fn_->name(), new_entry_, k));
  fn_->entries_.push_back(std::move(e));
}

// The moment a call stops matching every entry (or a re-created function starts afresh), it
// will record a new trace: that is the recompile, logged here so a breakpoint on it stops in the
// frame where the call diverged.
void Capture::log_recompile() {
  CaptureLog& log = CaptureLog::get();
  if (failures_.empty() && !(new_entry_ == 0 && fn_->recreated > 0)) return;
  log.counters().recompiles++;
  Event ev;
  ev.kind = EventKind::Recompile;
  ev.fn = fn_->name();
  ev.entry = new_entry_;
  ev.segment = segment_index_;
  if (failures_.empty()) {
    // Not a recompile of this function, but the same definition compiled anew, again.
    ev.where = current_source();
    ev.reason = fmt::format("'{}' was compiled again: dyn.compile was applied to the same function {} times",
                            fn_->name(), fn_->recreated + 1);
    GuardFailure f;
    f.kind = GuardKind::Op;
    f.what = "a new compiled function starts with an empty cache";
    f.where = ev.where;
    f.hint = "it is being re-created each time (dyn.compile inside a loop or a function?); compile it once" +
             (fn_->defined_at.empty() ? std::string() : " (compiled at " + fn_->defined_at + ")") + " and reuse it";
    ev.details = f.hint;
    ev.failures = {f};
    log.add(std::move(ev));
    recompile_event_ = static_cast<int>(log.events().size()) - 1;
    return;
  }
  ev.where = failures_.back().where;
  ev.reason = fmt::format("call {} of '{}': no cache entry served it; new entry {}[{}]", fn_->calls, fn_->name(),
                          fn_->name(), new_entry_);
  std::string lines;
  std::vector<GuardFailure> firsts;  // one per older entry, in entry order
  for (int k = 0; k < fn_->num_entries(); ++k)
    for (const GuardFailure& f : failures_)
      if (f.entry == k) {
        lines += fmt::format("{}{}[{}] failed {}: {}", lines.empty() ? "" : "\n", fn_->name(), k,
                             guard_kind_name(f.kind), f.str());
        firsts.push_back(f);
        break;
      }
  ev.details = lines;
  ev.failures = firsts;
  log.add(std::move(ev));
  recompile_event_ = static_cast<int>(log.events().size()) - 1;
}

}  // namespace dyn
