// The region: entering and leaving a compiled call (nesting, begin/end/abort), and what the rest
// of the engine asks a running capture (versions, pending values, aliases).
#include "core/capture/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

thread_local Capture* Capture::active_ = nullptr;
bool Capture::paused_ = false;
Capture* Capture::paused_capture_ = nullptr;
std::atomic<int> Capture::live_{0};

void capture_forget(TensorImpl* impl) { impl->capture_->forget(impl); }
std::string capture_describe(const TensorImpl* impl) { return impl->capture_->describe_pending(impl); }

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

bool Capture::graph_in_progress(GraphRecord* out) const {
  if (replaying() || new_entry_ < 0) return false;  // replaying, or a trace that will not be cached
  out->fn = fn_->name();
  out->entry = new_entry_;
  out->segment = segment_index_;
  auto g = std::make_shared<Graph>(seg_);
  for (Value& v : g->values) v.drop_input();  // a record keeps no user tensor alive
  out->graph = std::move(g);
  out->plan = nullptr;
  out->calls = 0;
  return true;
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
  c->autocast_at_start_ = autocast_dtype();
  CompiledFunction& f = *c->fn_;
  f.calls++;
  CaptureLog& log = CaptureLog::get();
  log.counters().calls++;
  c->start_ = log.now();
  c->paused_at_start_ = log.counters().paused_s;
  c->binds_.resize(f.entries_.size());
  for (int e = 0; e < f.num_entries(); ++e) {
    const Entry& entry = f.entries_[e];
    c->binds_[e].assign(entry.symbols.size(), -1);
    GuardFailure g;
    g.entry = e;
    g.kind = GuardKind::GlobalState;
    if (entry.default_dtype != default_float_dtype()) {
      g.what = "default dtype";
      g.expected = std::string(dtype_name(entry.default_dtype));
      g.actual = std::string(dtype_name(default_float_dtype()));
      g.hint = "dyn.set_default_dtype changed since the trace";
    } else if (entry.autocast != autocast_dtype()) {
      g.what = "autocast";
      g.expected = autocast_name(entry.autocast);
      g.actual = autocast_name(autocast_dtype());
      g.hint = "torch.autocast decides the dtype of matrix products; each autocast state gets its own entry";
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

void Capture::discard_results() {
  for (auto [p, v] : lazies_) poison(p);
  lazies_.clear();
  for (const std::string& id : new_graph_ids_) CaptureLog::get().remove_graph(id);
  new_graph_ids_.clear();
}

void Capture::close(Capture* c) {
  CaptureLog& log = CaptureLog::get();
  for (Storage* s : c->pending_) s->pending_writes = false;
  active_ = nullptr;
  double paused = log.counters().paused_s - c->paused_at_start_;
  double own = std::max(0.0, log.now() - c->start_ - c->compile_s_ - c->execute_s_ - paused);
  (c->replaying() ? log.counters().replay_s : log.counters().trace_s) += own;
  --live_;
  delete c;
}

void Capture::end() {
  Capture* c = active_;
  CaptureLog& log = CaptureLog::get();
  c->fn_->last_entry = -1;
  try {
    if (c->replaying()) c->replay_sync(true, BreakKind::ExplicitSync, SourceStack{}, Observation{});
    if (c->replaying()) {
      int e = c->candidates_.front();
      c->fn_->last_entry = e;
      c->fn_->entries_[e].hits++;
      for (const std::string& id : c->fn_->entries_[e].graph_ids)
        if (GraphRecord* r = log.find_graph(id)) r->calls++;
      Event hit = c->event(EventKind::CacheHit, e, SourceStack{});
      hit.segment = -1;  // the whole entry served the call
      c->emit(std::move(hit));
    } else {
      c->run_segment(true, nullptr, nullptr);
      c->register_entry();
      if (c->new_entry_ >= 0 && c->new_entry_ + 1 == c->fn_->num_entries()) c->fn_->last_entry = c->new_entry_;
    }
  } catch (...) {
    c->discard_results();
    c->retract_recompile();
    close(c);
    throw;
  }
  close(c);
}

void Capture::abort() {
  Capture* c = active_;
  if (!c) return;
  try {
    if (c->replaying()) {
      c->new_entry_ = -2;  // nothing this call recorded is kept
      c->switch_to_record();
    }
    c->run_segment(false, nullptr, nullptr);
    c->retract_recompile();
  } catch (...) {
    c->discard_results();
  }
  for (const std::string& id : c->new_graph_ids_) CaptureLog::get().remove_graph(id);
  close(c);
}

bool Capture::lift_snapshot(std::span<const Tensor> outs, std::span<const std::shared_ptr<GradNode>> released,
                            std::vector<std::pair<int, Tensor>>* inputs, std::vector<int>* out_ids) {
  if (segment_index_ != 0) return false;
  inputs->clear();
  out_ids->clear();
  if (replaying()) {
    const Graph& g = cached_segment().graph;
    for (size_t v = 0; v < bound_.size() && v < g.values.size(); ++v)
      if (bound_[v].defined() && g.values[v].producer < 0) inputs->emplace_back(static_cast<int>(v), bound_[v]);
    fn_->last_patches = patches_;
  } else {
    for (const auto& [impl, v] : inputs_) inputs->emplace_back(v, seg_.values[v].input());
    fn_->last_patches.clear();
  }
  std::sort(inputs->begin(), inputs->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  fn_->last_shares.clear();
  for (size_t i = 0; i < inputs->size(); ++i) {
    int group = (*inputs)[i].first;
    for (size_t j = 0; j < i; ++j)
      if ((*inputs)[j].second.storage() == (*inputs)[i].second.storage()) {
        group = fn_->last_shares[(*inputs)[j].first];
        break;
      }
    fn_->last_shares[(*inputs)[i].first] = group;
  }
  fn_->last_released.assign(outs.size(), nullptr);
  fn_->last_out_grad.assign(outs.size(), 0);
  fn_->last_history.clear();
  fn_->last_grad_nodes = grad_nodes_;
  fn_->last_backward = !grad_notes_.empty();
  fn_->last_inplace_history = inplace_history_;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& t = outs[i];
    int v = t.impl()->capture_ == this ? t.impl()->lazy_value_ : -1;
    out_ids->push_back(v);
    if (!t.impl()->requires_grad_) continue;
    fn_->last_out_grad[i] = 1;
    if (i < released.size() && released[i])
      fn_->last_released[i] = released[i];
    else if (v >= 0)
      fn_->last_history.push_back(v);
  }
  return true;
}

void Capture::note_grad_change(const TensorImpl* leaf, const Tensor& old, std::function<void()> restore) {
  for (const GradNote& n : grad_notes_)
    if (n.leaf == leaf) return;
  grad_notes_.push_back(GradNote{leaf, old, std::move(restore)});
}

std::vector<std::pair<Tensor, Tensor>> Capture::grad_changes_from(size_t k) const {
  std::vector<std::pair<Tensor, Tensor>> out;
  for (size_t i = k; i < grad_notes_.size(); ++i)
    out.emplace_back(Tensor::borrow(const_cast<TensorImpl*>(grad_notes_[i].leaf)), grad_notes_[i].old);
  return out;
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
        replaying() ? (root < static_cast<int>(bound_.size()) ? bound_[root] : Tensor()) : g.values[root].input();
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

void Capture::name_input(const Tensor& t, InputKind kind, const std::string& name) {
  auto it = names_.find(t.impl());
  if (it == names_.end())
    names_.emplace(t.impl(), std::make_pair(kind, name));
  else
    it->second.second += " = " + name;  // the same tensor passed twice
}

void Capture::forget(TensorImpl* impl) { lazies_.remove(impl); }

Tensor Capture::alias_lazy(const Tensor& t) {
  const TensorImpl* p = t.impl();
  auto* impl = new TensorImpl(nullptr, p->shape_, p->strides_, p->offset_, p->dtype_);
  impl->capture_ = this;
  impl->lazy_value_ = p->lazy_value_;
  lazies_.add(impl);
  return Tensor(impl);
}

}  // namespace dyn
