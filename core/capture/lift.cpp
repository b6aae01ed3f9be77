// Tier 2: running a lifted entry's graph without the body (see lift.h).
#include "core/capture/lift.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/grad_mode.h"
#include "core/ops/registry.h"
#include "core/random.h"

namespace dyn {

std::shared_ptr<LiftedPlan> LiftedPlan::make(std::shared_ptr<CompiledFunction> fn, std::vector<int> inputs,
                                             std::vector<int> outputs, std::string* refusal, std::string* where) {
  // The line a refusal is about, as file:line (for :why-python and the lift-refused event).
  auto at = [&](const SourceStack& s) {
    SourceLoc top = s.top();
    if (where && top.known()) *where = fmt::format("{}:{}", *top.file, top.line);
  };
  int e = fn->last_entry;
  if (e < 0 || e >= fn->num_entries()) {
    *refusal = "the call was not served by a cache entry";
    return nullptr;
  }
  const Entry& entry = fn->entries()[e];
  // A trace that returns right after a break ends in an empty segment: still more than one.
  if (entry.segments.size() != 1) {
    const Segment& first = *entry.segments[0];
    *refusal = fmt::format("the trace has {} graphs: Python runs between them (a graph break, {}, at {})",
                           entry.segments.size(), break_kind_name(first.break_kind), first.break_where.str());
    at(first.break_where);
    return nullptr;
  }
  const std::shared_ptr<Segment>& seg = entry.segments[0];
  const Graph& g = seg->graph;
  if (g.dynamic || !entry.symbols.empty()) {
    std::string which;
    for (size_t i = 0; i < g.values.size() && which.empty(); ++i) {
      const Value& v = g.values[i];
      if (v.producer >= 0) continue;
      for (size_t d = 0; d < v.sym_shape().size(); ++d)
        if (v.sym_shape()[d].symbolic()) {
          which = fmt::format(" ({}.size({}) is dynamic)", v.input_name().empty() ? "an input" : v.input_name(), d);
          for (const Node& n : g.nodes)  // the line that reads it first
            if (std::find(n.inputs.begin(), n.inputs.end(), static_cast<int>(i)) != n.inputs.end()) {
              at(n.where);
              break;
            }
          break;
        }
    }
    *refusal = "the graph has dynamic sizes" + which + ": tier 2 binds static shapes only yet";
    return nullptr;
  }
  std::vector<bool> is_input(g.values.size(), false);
  for (int v : inputs) {
    if (v < 0 || v >= static_cast<int>(g.values.size()) || g.values[v].producer >= 0) {
      *refusal = fmt::format("internal: %{} is not an input of the graph", v);
      return nullptr;
    }
    is_input[v] = true;
  }
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].producer < 0 && !is_input[v]) {
      *refusal = fmt::format("input %{} of the graph has no source Python could fetch it from", v);
      return nullptr;
    }
  // A write into a tensor from outside runs in its memory, as tier 1's. An in-place op that gave
  // a tensor new history did so outside the graph's nodes: a lifted call could not again.
  if (fn->last_inplace_history) {
    *refusal = "an in-place op gave a tensor autograd history (x += y where either requires grad)";
    return nullptr;
  }
  // Results with autograd history: the call records the nodes the body's ops recorded, on this
  // call's values (record_lifted_history), when a write cannot have changed a value they save.
  bool history = !fn->last_history.empty();
  if (history && fn->last_grad_nodes.empty()) {
    *refusal = "a result has autograd history the graph's ops did not record (a custom autograd Function?)";
    return nullptr;
  }
  if (history && fn->last_backward) {
    // Its nodes saved values that backward() freed: a second backward through them raises, which
    // history recorded anew would not.
    *refusal = "a result keeps autograd history after backward() ran in the body";
    return nullptr;
  }
  std::vector<int> needed = outputs;
  if (history) {
    // A write into a value the history saves (or into the memory under it, through a view):
    // eager's backward() would raise, and history recorded after the run cannot tell.
    std::vector<bool> saved(g.values.size(), false);
    for (auto [k, mask] : fn->last_grad_nodes) {
      for (int v : g.nodes[k].inputs) saved[v] = saved[root_of(g, v)] = true;
      for (int v : g.nodes[k].outputs) saved[v] = saved[root_of(g, v)] = true;
    }
    for (const Node& n : g.nodes)
      if (n.target >= 0 && saved[root_of(g, n.target)]) {
        *refusal = fmt::format("{}_ at {} writes into a value autograd saves for the backward of a result",
                               op_name(n.op), n.where.str());
        at(n.where);
        return nullptr;
      }
    for (size_t v = 0; v < g.values.size(); ++v)
      if (saved[v] && g.values[v].producer >= 0) needed.push_back(static_cast<int>(v));
  }
  for (int v : outputs) {
    if (v < 0 || v >= static_cast<int>(g.values.size())) {
      *refusal = fmt::format("internal: %{} is not a value of the graph", v);
      return nullptr;
    }
  }
  auto lp = std::make_shared<LiftedPlan>();
  lp->fn_ = fn;
  lp->entry_ = e;
  lp->seg_ = seg;
  lp->patches_ = fn->last_patches;
  lp->default_dtype_ = entry.default_dtype;
  lp->autocast_ = entry.autocast;
  lp->grad_enabled_ = entry.grad_enabled;
  if (history) lp->grad_nodes_ = fn->last_grad_nodes;
  bool covered = std::all_of(needed.begin(), needed.end(), [&](int v) {
    return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
  });
  if (seg->plan && covered) {
    lp->plan_ = seg->plan;  // the plan the recording call ran: :profile counts its runs as one
  } else if (seg->plan) {
    Graph h = g;
    std::vector<int> outs = needed;
    std::sort(outs.begin(), outs.end());
    outs.erase(std::unique(outs.begin(), outs.end()), outs.end());
    h.outputs = outs;
    bool compiled = false;
    lp->plan_ = cached_plan(structure_key(h) + "|end", h, &compiled);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    int dup =
        static_cast<int>(std::find(inputs.begin(), inputs.begin() + static_cast<long>(i), inputs[i]) - inputs.begin());
    lp->dup_.push_back(dup < static_cast<int>(i) ? dup : -1);
    auto it = fn->last_shares.find(inputs[i]);
    int group = it == fn->last_shares.end() ? inputs[i] : it->second;
    int k = static_cast<int>(std::find(inputs.begin(), inputs.end(), group) - inputs.begin());
    lp->shares_.push_back(k < static_cast<int>(i) && dup >= static_cast<int>(i) ? k : static_cast<int>(i));
  }
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (op_def(g.nodes[k].op).cls == OpClass::Random) lp->random_.push_back(static_cast<int>(k));
  lp->writes_.assign(inputs.size(), 0);
  for (const Node& n : g.nodes) {
    if (n.target < 0) continue;
    int root = root_of(g, n.target);
    auto it = std::find(inputs.begin(), inputs.end(), root);
    if (it != inputs.end()) lp->writes_[it - inputs.begin()]++;
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    lp->released_.push_back(j < fn->last_released.size() ? fn->last_released[j] : nullptr);
    lp->out_grad_.push_back(j < fn->last_out_grad.size() && fn->last_out_grad[j]);
  }
  lp->inputs_ = std::move(inputs);
  lp->outputs_ = std::move(outputs);
  return lp;
}

int LiftedPlan::float_slot(const CompiledFunction& fn, int k, double v) {
  int e = fn.last_entry;
  if (e < 0 || e >= fn.num_entries() || fn.entries()[e].segments.size() != 1) return -1;
  const Graph& g = fn.entries()[e].segments[0]->graph;
  if (k < 0 || k >= static_cast<int>(g.nodes.size())) return -1;
  const Attrs& a = g.nodes[k].attrs.get();
  const Scalar* s[] = {&a.scalar, &a.scalar2, &a.scalar3};
  const NodePatch* p = find_patch(&fn.last_patches, k);
  // Only the numbers tier 1 reads at each call: not one that sets a size (arange's end).
  unsigned values = value_scalars(g.nodes[k].op, a);
  int found = -1;
  for (int j = 0; j < 3; ++j) {
    if (!(values >> j & 1)) continue;
    const Scalar& x = p && (p->values >> j & 1) ? p->scalar[j] : *s[j];
    if (x.kind == Scalar::Float && (x.f == v || (x.f != x.f && v != v)) && std::signbit(x.f) == std::signbit(v)) {
      if (found >= 0) return -1;  // two slots hold it: which one it is cannot be told
      found = j;
    }
  }
  return found;
}

bool LiftedPlan::valid() const {
  return entry_ < fn_->num_entries() && fn_->entries()[entry_].segments.size() == 1 &&
         fn_->entries()[entry_].segments[0] == seg_ && !fn_->fallen_back();
}

bool LiftedPlan::run(std::span<const Tensor> in, std::span<const double> floats, std::vector<Tensor>* out, bool count,
                     std::vector<Tensor>* values) {
  failure_.clear();
  if (Capture::active() || Capture::paused()) {
    failure_ = "a compile region is running";
    return false;
  }
  if (!valid()) {
    failure_ = "the entry is gone";
    return false;
  }
  if (grad_enabled() != grad_enabled_ || default_float_dtype() != default_dtype_ || autocast_dtype() != autocast_) {
    failure_ = grad_enabled() != grad_enabled_           ? "grad mode changed"
               : default_float_dtype() != default_dtype_ ? "the default dtype changed"
                                                         : "autocast changed";
    return false;
  }
  const Graph& g = seg_->graph;
  if (in.size() != inputs_.size() || floats.size() != float_slots_.size()) {
    failure_ = fmt::format("{} inputs and {} floats where the graph takes {} and {}", in.size(), floats.size(),
                           inputs_.size(), float_slots_.size());
    return false;
  }
  bound_.resize(g.values.size());
  bool ok = true;
  GuardFailure f;
  for (size_t i = 0; i < in.size() && ok; ++i) {
    const Tensor& t = in[i];
    // Inputs share memory exactly as in the traced call (the aliasing guard of tier 1): one graph
    // input fetched from two sources is one tensor again, distinct ones are distinct tensors.
    if (dup_[i] >= 0) {
      if (in[dup_[i]].impl() != t.impl()) {
        failure_ = fmt::format("inputs {} and {} are two tensors; the trace had one", dup_[i], i);
        ok = false;
        break;
      }
      continue;
    }
    size_t first = i;
    for (size_t j = 0; j < i; ++j)
      if (dup_[j] < 0 && (in[j].impl() == t.impl() || in[j].storage() == t.storage())) {
        first = j;
        break;
      }
    if (static_cast<int>(first) != shares_[i] || (first != i && in[first].impl() == t.impl())) {
      failure_ = fmt::format("input {} shares memory unlike in the traced call", i);
      ok = false;
      break;
    }
    if (writes_[i] > 0 && t.storage() && t.storage()->read_only) {
      failure_ = fmt::format("input {} is read-only memory the graph writes", i);  // tier 1 raises the error
      ok = false;
    } else if (!value_known(t)) {
      failure_ = fmt::format("input {} is pending in a graph", i);
      ok = false;
    } else if (!check_tensor_input(g.values[inputs_[i]], t, &f)) {
      failure_ = f.what + ": expected " + f.expected + ", got " + f.actual;
      ok = false;
    } else {
      bound_[inputs_[i]] = t;
    }
  }
  if (ok) {
    CaptureLog& log = CaptureLog::get();
    double t0 = log.now();
    try {
      EagerScope eager;
      PlanTimes* times = count ? seg_->times->of(plan_, plan_ ? plan_->steps.size() : g.nodes.size()) : nullptr;
      const NodePatches* patches = patches_.empty() ? nullptr : &patches_;
      if (!float_slots_.empty() || !random_.empty()) {
        run_patches_ = patches_;
        auto patch_of = [&](int k) -> NodePatch& {
          auto it = std::lower_bound(run_patches_.begin(), run_patches_.end(), k,
                                     [](const NodePatch& x, int node) { return x.node < node; });
          if (it == run_patches_.end() || it->node != k) {
            it = run_patches_.insert(it, NodePatch{});
            it->node = k;
          }
          return *it;
        };
        for (size_t i = 0; i < float_slots_.size(); ++i) {  // this call's floats, where the trace's were
          auto [k, j] = float_slots_[i];
          NodePatch& p = patch_of(k);
          p.values |= 1u << j;
          p.scalar[j] = Scalar::from_double(floats[i]);
        }
        // Each draw takes the generator's next blocks, in the order the body's draws took them.
        for (int k : random_) {
          const Node& n = g.nodes[k];
          const Attrs& a = n.attrs.get();
          int kind = n.op == OpId::rand ? 0 : n.op == OpId::randn ? 1 : 2;
          GeneratorState r = reserve_random(random_blocks(kind, a.dtype, numel_of(a.dims)));
          NodePatch& p = patch_of(k);
          p.rng = true;
          p.seed = r.seed;
          p.offset = r.offset;
        }
        patches = &run_patches_;
      }
      execute(g, plan_.get(), RunInputs{&bound_, patches, nullptr, times}, &slots_);
      used_patches_ = patches;
    } catch (...) {
      std::fill(bound_.begin(), bound_.end(), Tensor());
      slots_.clear();
      throw;
    }
    // Each write counts as a version of the written memory (autograd's check of saved values), as
    // dispatch counts an eager one.
    for (size_t i = 0; i < in.size(); ++i)
      if (writes_[i] > 0 && in[i].storage()) in[i].storage()->version += writes_[i];
    out->clear();
    for (size_t j = 0; j < outputs_.size(); ++j) {
      out->push_back(slots_[outputs_[j]]);
    }
    if (values && !grad_nodes_.empty()) {
      values->assign(g.values.size(), Tensor());
      for (size_t v = 0; v < g.values.size(); ++v)
        (*values)[v] = g.values[v].producer < 0 ? bound_[v] : v < slots_.size() ? slots_[v] : Tensor();
    }
    slots_.clear();
    std::fill(bound_.begin(), bound_.end(), Tensor());
    if (!count) return true;
    log.counters().execute_s += log.now() - t0;
    Entry& entry = fn_->entries_[entry_];
    entry.hits++;
    entry.lifted_hits++;
    fn_->calls++;
    fn_->lifted_hits++;
    log.counters().calls++;
    log.counters().cache_hits++;
    log.counters().lifted_hits++;
    for (const std::string& id : entry.graph_ids)
      if (GraphRecord* r = log.find_graph(id)) r->calls++;
    Event hit;
    hit.kind = EventKind::CacheHit;
    hit.fn = fn_->name();
    hit.entry = entry_;
    hit.details = "lifted";
    log.add_coalesced(std::move(hit));
  }
  std::fill(bound_.begin(), bound_.end(), Tensor());
  return ok;
}

}  // namespace dyn
