// Capture: lazy tracing inside compile regions.
//
// Note [capture]
// Inside a region, dispatch() hands every op to Capture::record. Record runs the op's own infer
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
#include "core/capture/capture.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"

namespace dyn {

thread_local Capture* Capture::active_ = nullptr;

void capture_forget(TensorImpl* impl) { impl->capture_->forget(impl); }

// ---- trace tree ----

// Note [trace tree]: an entry is the list of its segments' structure keys, each ending in how the
// segment ended ("|break:kind" or "|end"), so no complete trace is a prefix of another. A call
// follows the entry that has its path so far as a prefix; past the end of an entry that stops
// one key short (one this call, or an earlier one, was still building), it extends it; otherwise
// the call has diverged and a new entry starts with the shared prefix.
int CompiledFunction::entry_for(const std::vector<std::string>& path, bool* created) {
  *created = false;
  for (size_t e = 0; e < entries_.size(); ++e) {
    const auto& keys = entries_[e];
    if (keys.size() >= path.size() && std::equal(path.begin(), path.end(), keys.begin()))
      return static_cast<int>(e);
  }
  for (size_t e = 0; e < entries_.size(); ++e) {
    auto& keys = entries_[e];
    if (keys.size() + 1 == path.size() && std::equal(keys.begin(), keys.end(), path.begin())) {
      keys.push_back(path.back());
      return static_cast<int>(e);
    }
  }
  *created = true;
  entries_.push_back(path);
  return static_cast<int>(entries_.size()) - 1;
}

// ---- plan cache ----

namespace {
std::unordered_map<std::string, std::shared_ptr<Plan>>& plans() {
  static std::unordered_map<std::string, std::shared_ptr<Plan>> p;
  return p;
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
  return {};
}

void ensure_materialized(const Tensor& t, BreakKind kind, const char* what) {
  TensorImpl* p = t.impl();
  if (p->capture_) {
    p->capture_->graph_break(kind, what);
  } else if (p->storage_ && p->storage_->pending_writes) {
    if (Capture* c = Capture::active()) c->graph_break(kind, what);
  }
}

// ---- region ----

Capture::Capture(std::shared_ptr<CompiledFunction> fn) : fn_(std::move(fn)) {}

bool Capture::begin(std::shared_ptr<CompiledFunction> fn) {
  if (active_) return false;
  auto* c = new Capture(std::move(fn));
  c->fn_->calls++;
  CaptureLog& log = CaptureLog::get();
  log.counters().calls++;
  c->start_ = log.now();
  active_ = c;
  return true;
}

namespace {

void poison(TensorImpl* p) {
  p->capture_ = nullptr;
  p->lazy_value_ = p->storage_ ? -1 : TensorImpl::kPoisoned;
}

void finish(Capture* c, double start, double compile_s, double execute_s) {
  CaptureLog& log = CaptureLog::get();
  Counters& k = log.counters();
  k.trace_s += std::max(0.0, log.now() - start - compile_s - execute_s);
  delete c;
}

}  // namespace

void Capture::end() {
  Capture* c = active_;
  try {
    if (c->run_segment(true, nullptr).empty() && !c->path_.empty()) {
      // Nothing ran after the last break: the trace still ends here.
      c->path_.push_back("|end");
      bool created = false;
      c->fn_->entry_for(c->path_, &created);
    }
  } catch (...) {
    for (auto& [p, v] : c->lazies_) poison(p);
    c->lazies_.clear();
    for (Storage* s : c->pending_) s->pending_writes = false;
    active_ = nullptr;
    finish(c, c->start_, c->compile_s_, c->execute_s_);
    throw;
  }
  active_ = nullptr;
  finish(c, c->start_, c->compile_s_, c->execute_s_);
}

void Capture::abort() {
  Capture* c = active_;
  if (!c) return;
  try {
    c->run_segment(false, nullptr);
  } catch (...) {
    for (auto& [p, v] : c->lazies_) poison(p);
    c->lazies_.clear();
  }
  for (Storage* s : c->pending_) s->pending_writes = false;
  active_ = nullptr;
  finish(c, c->start_, c->compile_s_, c->execute_s_);
}

void Capture::name_input(const Tensor& t, InputKind kind, std::string name) {
  names_.emplace(t.impl(), std::make_pair(kind, std::move(name)));
}

void Capture::forget(TensorImpl* impl) { lazies_.erase(impl); }

// ---- recording ----

int Capture::value_of(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (p->capture_ == this) return p->lazy_value_;
  auto it = inputs_.find(p);
  if (it != inputs_.end()) return it->second;
  InputKind kind = InputKind::External;
  std::string name;
  auto n = names_.find(p);
  if (n != names_.end()) {
    kind = n->second.first;
    name = n->second.second;
  } else if (materialized_.count(p)) {
    kind = InputKind::Materialized;
  }
  int id = seg_.add_input(t, kind, std::move(name));
  inputs_.emplace(p, id);
  return id;
}

std::vector<Tensor> Capture::record_node(OpId op, std::span<const Tensor> in, const Attrs& a, const OutMeta* metas,
                                         int target) {
  const OpDef& d = op_def(op);
  Node n;
  n.op = op;
  n.attrs = a;
  n.target = target;
  n.where = current_source();
  n.inputs.reserve(in.size());
  for (const Tensor& t : in) n.inputs.push_back(value_of(t));
  int k = static_cast<int>(seg_.nodes.size());
  std::vector<Tensor> outs;
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
    int id = static_cast<int>(seg_.values.size()) - 1;
    n.outputs.push_back(id);
    if (target >= 0) continue;  // record_into rebinds the target instead
    const Value& val = seg_.values.back();
    auto* impl = new TensorImpl(nullptr, val.shape, val.strides, val.offset, val.dtype);
    impl->capture_ = this;
    impl->lazy_value_ = id;
    lazies_.emplace(impl, id);
    outs.emplace_back(impl);
  }
  seg_.nodes.push_back(std::move(n));
  return outs;
}

Tensor Capture::record(OpId op, std::span<const Tensor> in, const Attrs& a) {
  const OpDef& d = op_def(op);
  if (d.cls == OpClass::DataDependent) {
    graph_break(BreakKind::UnsupportedOp, std::string(d.name));
    EagerScope eager;  // the op runs now, on the inputs the break just computed
    return dispatch_eager(op, in, a);
  }
  OutMeta m;
  d.infer(in, a, &m);
  return record_node(op, in, a, &m, -1)[0];
}

std::pair<Tensor, Tensor> Capture::record2(OpId op, std::span<const Tensor> in, const Attrs& a) {
  OutMeta m[2];
  op_def(op).infer(in, a, m);
  auto outs = record_node(op, in, a, m, -1);
  return {outs[0], outs[1]};
}

void Capture::record_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  OutMeta m;
  op_def(op).infer(in, a, &m);
  check_into(m, self);
  int target = value_of(self);
  OutMeta geom{self.dtype(), self.shape(), self.strides(), self.offset()};
  record_node(op, in, a, &geom, target);
  int out = seg_.nodes.back().outputs[0];
  TensorImpl* p = self.impl();
  if (p->capture_ != this && p->storage_) {
    // A tensor from outside the region: its memory changes when the segment runs.
    p->storage_->pending_writes = true;
    pending_.push_back(p->storage_);
  }
  p->capture_ = this;
  p->lazy_value_ = out;
  lazies_[p] = out;
}

// ---- sync ----

void Capture::graph_break(BreakKind kind, const std::string& what) {
  Event e;
  e.kind = EventKind::GraphBreak;
  e.fn = fn_->name();
  e.segment = segment_index_;
  e.where = current_source();
  e.break_kind = kind;
  e.reason = break_reason(kind, what);
  e.details = what;
  e.hint = break_hint(kind);
  if (fn_->options().fullgraph) {
    SourceLoc top = e.where.top();
    std::string text = top.known() ? source_line(*top.file, top.line) : std::string();
    throw Error(ErrorKind::GraphBreak,
                fmt::format("graph break in '{}' compiled with fullgraph=True, at {}{}{}: {}{}", fn_->name(),
                            top.str(), text.empty() ? "" : "  ", text, e.reason,
                            e.hint.empty() ? "" : ". Hint: " + e.hint));
  }
  run_segment(true, &e);
}

std::string Capture::run_segment(bool commit, const Event* break_event) {
  CaptureLog& log = CaptureLog::get();
  std::set<int> outs;
  for (auto& [p, v] : lazies_) outs.insert(v);
  seg_.outputs.assign(outs.begin(), outs.end());
  if (seg_.nodes.empty()) return {};

  double t0 = log.now();
  std::string problem = verify_graph(seg_);
  if (!problem.empty()) fail(ErrorKind::Runtime, "internal error: malformed graph: {}", problem);
  std::string key = structure_key(seg_);
  key += break_event ? "|break:" + std::string(break_kind_name(break_event->break_kind)) : "|end";
  bool compiled = false;
  std::shared_ptr<Plan> plan;
  if (!fn_->options().eager_backend) plan = commit ? cached_plan(key, seg_, &compiled) : compile_plan(seg_);
  double t1 = log.now();
  compile_s_ += t1 - t0;
  if (compiled) log.counters().compile_s += t1 - t0;

  std::vector<Tensor> slots;
  {
    EagerScope eager;  // kernels call ops internally: those must run, not record
    slots = execute(seg_, plan.get());
  }
  double t2 = log.now();
  execute_s_ += t2 - t1;
  log.counters().execute_s += t2 - t1;

  for (auto& [p, v] : lazies_) {
    const Tensor& r = slots[v];
    p->capture_ = nullptr;
    p->lazy_value_ = -1;
    materialized_.insert(p);
    if (r.impl() == p) continue;  // an in-place target from outside: already holds its data
    if (r.shape() != p->shape_ || r.dtype() != p->dtype_)
      fail(ErrorKind::Runtime, "internal error: {} computed {} where {} was inferred", op_name(seg_.nodes.back().op),
           meta_str(r.dtype(), r.shape()), meta_str(p->dtype_, p->shape_));
    r.storage()->retain();
    if (p->storage_) p->storage_->release();
    p->storage_ = r.storage();
    p->strides_ = r.strides();
    p->offset_ = r.offset();
  }
  lazies_.clear();
  for (Storage* s : pending_) s->pending_writes = false;
  pending_.clear();

  std::string id;
  if (commit) {
    path_.push_back(key);
    bool created = false;
    int entry = fn_->entry_for(path_, &created);
    if (created) {
      // A new entry shares the segments this call ran before it diverged: list them under it too.
      for (size_t j = 0; j < graph_ids_.size(); ++j)
        if (GraphRecord* prev = log.find_graph(graph_ids_[j])) {
          Graph copy = prev->graph;
          log.graph(fn_->name(), entry, static_cast<int>(j), std::move(copy)).calls++;
        }
    }
    GraphRecord* found =
        log.find_graph(fn_->name() + "[" + std::to_string(entry) + "]." + std::to_string(segment_index_));
    bool is_new = found == nullptr;
    if (is_new) {
      Graph stored = seg_;
      for (Value& v : stored.values) v.input = Tensor();  // the log must not keep user tensors alive
      found = &log.graph(fn_->name(), entry, segment_index_, std::move(stored));
    }
    GraphRecord& rec = *found;
    rec.calls++;
    id = rec.id();
    graph_ids_.push_back(id);
    if (is_new) {
      if (compiled) log.counters().compiles++;
      Event c;
      c.kind = EventKind::Compile;
      c.fn = fn_->name();
      c.entry = entry;
      c.segment = segment_index_;
      c.where = seg_.nodes.front().where;
      c.reason = compiled || !plan ? "new graph" : "new graph (structurally identical to one compiled before: plan reused)";
      size_t kept = plan ? plan->order.size() : seg_.nodes.size();
      c.details = fmt::format("{}: {} ops, {} after dead-code and common-subexpression elimination", id,
                              seg_.nodes.size(), kept);
      log.add(std::move(c));
      if (break_event) {
        Event b = *break_event;
        b.entry = entry;
        log.counters().graph_breaks++;
        log.add(std::move(b));
      }
    }
  }
  seg_ = Graph{};
  inputs_.clear();
  ++segment_index_;
  return id;
}

}  // namespace dyn
