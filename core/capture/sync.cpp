// Sync points: a graph break or the end of a region runs the segment (cached plan or a new one)
// and turns the live lazy tensors into ordinary ones; a run that fails leaves what eager would.
#include "core/capture/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/run.h"

namespace dyn {

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

void Capture::settle_failed_run(const Graph& g, const std::vector<Tensor>& slots) {
  auto value_at = [&](int v) { return v >= 0 && v < static_cast<int>(slots.size()) ? slots[v] : Tensor(); };
  while (TensorImpl* p = lazies_.pop_front()) {
    int value = p->lazy_value_;
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
  std::vector<GradNote> notes;
  notes.swap(grad_notes_);
  for (GradNote& n : notes) n.restore();
  for (Storage* st : pending_) st->pending_writes = false;
  pending_.clear();
  seg_ = Graph{};
  inputs_.clear();
  writes_.clear();
  candidates_.clear();
  new_entry_ = -1;  // a trace that failed to run is not kept
}

void Capture::adopt_live(const Graph& g, std::vector<Tensor>& slots) {
  grad_notes_.clear();
  while (TensorImpl* p = lazies_.pop_front()) {
    const int v = p->lazy_value_;
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
    computed_[p] = {p->storage_, fmt::format("%{} of segment {}", v, segment_index_)};
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
    f.where = !where.empty() ? where : current_source();
    if (node_k_ < static_cast<int>(s.graph.nodes.size())) {
      const Node& n = s.graph.nodes[node_k_];
      f.what = fmt::format("the trace runs more ops in segment {} before its next sync", segment_index_);
      f.expected = std::string(op_name(n.op)) + " at " + n.where.str();
      f.actual = is_end ? "return" : "graph break (" + std::string(break_kind_name(kind)) + ")";
    } else {
      f.what = fmt::format("segment {} ends differently", segment_index_);
      f.expected = s.ends_in_break
                       ? fmt::format("graph break ({}) at {}", break_kind_name(s.break_kind), s.break_where.str())
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
  for (auto [p, v] : lazies_) live.insert(v);
  bool covered = std::all_of(live.begin(), live.end(), [&](int v) {
    return std::find(s.graph.outputs.begin(), s.graph.outputs.end(), v) != s.graph.outputs.end();
  });
  if (!covered && plan) {
    Graph g = s.graph;
    g.outputs.assign(live.begin(), live.end());
    bool compiled = false;
    plan = cached_plan(structure_key(g) + s.terminator(), g, &compiled);
  }
  double t1 = log.now();
  compile_s_ += t1 - t0;
  std::vector<Tensor> slots;
  try {
    EagerScope eager;
    size_t steps = plan ? plan->steps.size() : s.graph.nodes.size();
    RunInputs ri{&bound_, &patches_, s.graph.dynamic ? &binds_[candidates_.front()] : nullptr,
                 s.times->of(plan, steps)};
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
  patches_.clear();
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
  o.is_int = !o.is_bool && !is_floating(t->dtype()) && t->dtype() != DType::Bool;
  o.value = kern::to_double(*t);
  if (o.is_bool) o.value = o.value != 0 ? 1 : 0;
  return o;
}

// ---- sync ----

void Capture::graph_break(BreakKind kind, const std::string& what, const Tensor* observed) {
  check_not_naming();
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
  Event e = event(EventKind::GraphBreak, -1, current_source());
  e.break_kind = kind;
  e.reason = break_reason(kind, what);
  e.details = what;
  e.hint = break_hint(kind);
  run_segment(true, &e, nullptr);
  Observation o = observe(kind, observed);
  observed_.push_back(o);
  if (!new_segments_.empty()) {
    new_segments_.back()->observed = o;
    if (o.known && namer_) {
      Naming naming(this);
      new_segments_.back()->observed_name = namer_->stored_name();
    }
  }
}

void Capture::run_segment(bool commit, const Event* break_event, const Observation*) {
  CaptureLog& log = CaptureLog::get();
  std::set<int> outs;
  for (auto [p, v] : lazies_) outs.insert(v);
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
  generalize_segment();
  bool compiled = false;
  if (!fn_->options().eager_backend) {
    std::string key = structure_key(seg_) + seg->terminator();
    seg->plan = commit ? cached_plan(key, seg_, &compiled) : compile_plan(seg_);
  }
  double t1 = log.now();
  compile_s_ += t1 - t0;
  if (compiled) log.counters().compile_s += t1 - t0;

  std::vector<Tensor> slots;
  try {
    EagerScope eager;  // kernels call ops internally: those must run, not record
    PlanTimes* times = seg->times->of(seg->plan, seg->plan ? seg->plan->steps.size() : seg_.nodes.size());
    execute(seg_, seg->plan.get(), RunInputs{nullptr, nullptr, seg_.dynamic ? &sym_now_ : nullptr, times}, &slots);
  } catch (...) {
    settle_failed_run(seg_, slots);  // what ran stays done, as in eager; nothing runs twice
    throw;
  }
  double t2 = log.now();
  execute_s_ += t2 - t1;
  log.counters().execute_s += t2 - t1;
  adopt_live(seg_, slots);

  seg->graph = std::move(seg_);
  for (Value& v : seg->graph.values) v.drop_input();  // the cache must not keep user tensors alive
  if (commit && new_entry_ >= 0) {
    GraphRecord& rec =
        log.graph(fn_->name(), new_entry_, segment_index_, std::shared_ptr<const Graph>(seg, &seg->graph), fn_);
    rec.plan = seg->plan;
    rec.times = seg->times;
    rec.ends_in_break = seg->ends_in_break;
    rec.break_kind = seg->break_kind;
    rec.break_where = seg->break_where;
    rec.calls++;
    new_graph_ids_.push_back(rec.id());
    {
      if (compiled) log.counters().compiles++;  // plans compiled; an entry reusing a plan compiles none
      Event c = event(EventKind::Compile, new_entry_, seg->graph.nodes.front().where);
      c.reason = compiled || !seg->plan
                     ? "new graph"
                     : "new graph (structurally identical to one compiled before: its plan is reused)";
      size_t kept = seg->plan ? seg->plan->node_steps() : seg->graph.nodes.size();
      c.details = fmt::format("{}: {} ops, {} after dead-code and common-subexpression elimination", rec.id(),
                              seg->graph.nodes.size(), kept);
      emit(std::move(c));
    }
    if (break_event) {
      Event b = *break_event;
      b.entry = new_entry_;
      emit(std::move(b));
    }
  }
  new_segments_.push_back(seg);
  seg_ = Graph{};
  inputs_.clear();
  ++segment_index_;
}

}  // namespace dyn
