// Plans: the pass pipeline that turns a segment's graph into steps, and the executor.
#include "core/ir/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/ir/passes/passes.h"
#include "core/ops/run.h"

namespace dyn {

int root_of(const Graph& g, int v, bool* via_view) {
  if (via_view) *via_view = false;
  for (;;) {
    int p = g.values[v].producer;
    if (p < 0) return v;
    const Node& n = g.nodes[p];
    if (n.target >= 0) {
      v = n.target;
    } else if (op_def(n.op).cls == OpClass::View) {
      if (via_view) *via_view = true;
      v = n.inputs[0];
    } else {
      return v;
    }
  }
}

std::shared_ptr<Plan> compile_plan(const Graph& g) {
  // The passes, in order; each says what it did in plan->passes (`:graph -v` prints it).
  auto plan = std::make_shared<Plan>();
  plan->nodes_before = g.nodes.size();
  std::vector<bool> live = eliminate_dead_nodes(g);
  size_t kept = static_cast<size_t>(std::count(live.begin(), live.end(), true));
  plan->passes.push_back(fmt::format("eliminate_dead_nodes: {} -> {} nodes", g.nodes.size(), kept));
  std::vector<int> order = eliminate_common_subexpressions(g, live, plan.get());
  plan->passes.push_back(fmt::format("eliminate_common_subexpressions: {} -> {} nodes", kept, order.size()));
  plan->steps = lower_to_steps(g, order);
  size_t before = plan->steps.size();
  int fused = fuse_elementwise(g, plan.get());
  size_t loops = fused ? plan->steps.size() + fused - before : 0;
  plan->passes.push_back(
      fmt::format("fuse_elementwise: {} kernel steps -> {} fused step{}", fused, loops, loops == 1 ? "" : "s"));
  plan_buffers(g, plan.get());
  plan->passes.push_back(fmt::format(
      "plan_buffers: {} free steps",
      std::count_if(plan->steps.begin(), plan->steps.end(), [](const Step& s) { return s.kind == StepKind::Free; })));
  int moves = move_dying_copies(g, plan.get());
  if (moves)
    plan->passes.push_back(
        fmt::format("move_dying_copies: {} cop{} may take their operand's buffer", moves, moves == 1 ? "y" : "ies"));
  return plan;
}

size_t Plan::node_steps() const {
  size_t n = 0;
  for (const Step& s : steps) n += s.kind == StepKind::Fused ? fused_nodes(loop(s)).size() : s.kind != StepKind::Free;
  return n;
}

const char* step_kind_name(StepKind k) {
  static const char* kinds[] = {"kernel", "view", "in_place", "free", "fused", "move"};
  return kinds[static_cast<int>(k)];
}

std::string print_step(const Graph& g, const Plan& plan, size_t i) {
  const Step& s = plan.steps[i];
  std::string what;
  if (s.kind == StepKind::Free) {
    for (int v : plan.freed_by(s)) what += (what.empty() ? "%" : ", %") + std::to_string(v);
  } else if (s.kind == StepKind::Fused) {
    what = print_fused(g, plan.loop(s));
  } else {
    what = print_node(g, g.nodes[s.node]);
    if (size_t hash = what.find("  #"); hash != std::string::npos) what.resize(hash);
    while (!what.empty() && what.back() == ' ') what.pop_back();
  }
  return what;
}

std::string print_plan(const Graph& g, const Plan& plan) {
  std::string out;
  for (const std::string& p : plan.passes) out += "# " + p + "\n";
  for (size_t i = 0; i < plan.steps.size(); ++i)
    out += fmt::format("step {:>3}  {:<8}  {}\n", i, step_kind_name(plan.steps[i].kind), print_step(g, plan, i));
  return out;
}

PlanTimes* SegmentTimes::of(const std::shared_ptr<const Plan>& plan, size_t steps) {
  for (PlanTimes& p : plans)
    if (p.plan == plan && p.steps.size() == steps) return &p;
  if (plans.size() >= kMaxPlans) return nullptr;
  plans.push_back(PlanTimes{plan, 0, std::vector<StepTime>(steps)});
  return &plans.back();
}

void NodePatch::apply(Attrs* a) const {
  if (rng) a->seed = seed, a->offset = offset;
  Scalar* s[] = {&a->scalar, &a->scalar2, &a->scalar3};
  for (int k = 0; k < 3; ++k)
    if (values >> k & 1) *s[k] = scalar[k];
}

bool NodePatch::differs(const Attrs& a) const {
  const Scalar* s[] = {&a.scalar, &a.scalar2, &a.scalar3};
  for (int k = 0; k < 3; ++k)
    if ((values >> k & 1) && !same_scalar(scalar[k], *s[k])) return true;
  return false;
}

const NodePatch* find_patch(const NodePatches* p, int k) {
  if (!p) return nullptr;
  // A call adds patches in node order: a graph of n float constants looks each up in log n.
  auto it = std::lower_bound(p->begin(), p->end(), k, [](const NodePatch& x, int node) { return x.node < node; });
  return it != p->end() && it->node == k ? &*it : nullptr;
}

namespace {
void run_node(const Graph& g, int k, const std::vector<int>* remap, std::vector<Tensor>& slots, const RunInputs& r) {
  const Node& n = g.nodes[k];
  const Attrs* attrs = &n.attrs.get();
  Attrs patched;
  const NodePatch* p = find_patch(r.patches, k);
  // Copying the attributes costs an allocation: only when the call's values differ.
  if (p && (p->rng || p->differs(n.attrs))) {
    patched = n.attrs;
    p->apply(&patched);
    attrs = &patched;
  }
  // A dynamic graph's size arguments are this call's.
  if (r.syms && !n.sym_attrs.empty()) {
    if (attrs != &patched) patched = n.attrs;
    for (const SymAttr& sa : n.sym_attrs)
      if (int64_t x; sym_eval(sa.e, *r.syms, &x)) set_int_slot(&patched, sa.slot, x);
    attrs = &patched;
  }
  std::vector<Tensor> in;
  in.reserve(n.inputs.size());
  for (int i : n.inputs) {
    in.push_back(slots[remap ? (*remap)[i] : i]);
    if (!in.back().defined())
      fail(ErrorKind::Runtime, "internal error: graph value %{} has no tensor when {} runs", i, op_name(n.op));
  }
  const OpDef& d = op_def(n.op);
  if (n.target >= 0) {
    Tensor self = slots[remap ? (*remap)[n.target] : n.target];
    if (!self.defined())
      fail(ErrorKind::Runtime, "internal error: graph value %{} has no tensor when {}_ runs", n.target, op_name(n.op));
    run_op_into(n.op, in, *attrs, self);
    slots[n.outputs[0]] = self;
    return;
  }
  if (d.num_outputs == 2) {
    auto two = run_op2(n.op, in, *attrs);
    slots[n.outputs[0]] = two.first;
    slots[n.outputs[1]] = two.second;
  } else if (d.cls != OpClass::View && d.cls != OpClass::DataDependent) {
    // The recorded value already says what infer would (the guards hold the inputs to what was
    // traced): allocate it and run the kernel, skipping inference on every replayed call.
    const Value& v = g.values[n.outputs[0]];
    Tensor out = Tensor::empty(eval_shape(v, r.syms), v.dtype);
    d.kernel(in, *attrs, std::span<Tensor>(&out, 1));
    slots[n.outputs[0]] = std::move(out);
  } else {
    slots[n.outputs[0]] = run_op(n.op, in, *attrs);
  }
}
}  // namespace

namespace {
// A Move step: the copy's operand dies here, so its buffer becomes the result if nothing but this
// slot holds the tensor or its storage (eager mode's view of the same memory would otherwise
// change with it) and it is laid out as a fresh contiguous result would be.
bool take_buffer(const Graph& g, int k, const std::vector<int>& remap, std::vector<Tensor>& slots) {
  const Node& n = g.nodes[k];
  Tensor& src = slots[remap[n.inputs[0]]];
  if (!src.defined() || !src.storage() || src.impl()->refs_.load() != 1 || src.storage()->use_count() != 1)
    return false;
  if (src.offset() != 0 || !src.is_contiguous() || src.dtype() != g.values[n.outputs[0]].dtype) return false;
  if (src.storage()->nbytes() != static_cast<size_t>(src.numel()) * itemsize(src.dtype())) return false;
  slots[n.outputs[0]] = std::move(src);
  return true;
}

// Where the failing node was recorded, appended to its error: the graph runs at a later line
// (the next sync), so Python's traceback alone would point there.
[[noreturn]] void rethrow_at(const Graph& g, int k, const Error& e) {
  const Node& n = g.nodes[k];
  SourceLoc top = n.where.top();
  std::string at = top.known() ? top.str() : std::string("<unknown>");
  std::string text = top.known() ? source_line(*top.file, top.line) : std::string();
  throw Error(e.kind(),
              fmt::format("{}\n  (raised by {}{} when the compiled graph ran; recorded at {}{})", e.what(),
                          op_name(n.op), n.target >= 0 ? "_" : "", at, text.empty() ? "" : "  `" + text + "`"));
}
}  // namespace

void execute(const Graph& g, const Plan* plan, RunInputs r, std::vector<Tensor>* out) {
  std::vector<Tensor>& slots = *out;
  slots.assign(g.values.size(), Tensor());
  for (int id : g.inputs) slots[id] = r.bound ? (*r.bound)[id] : g.values[id].input();
  auto fill_merged = [&] {
    if (!plan) return;
    for (size_t v = 0; v < slots.size(); ++v)
      if (!slots[v].defined() && plan->remap[v] != static_cast<int>(v)) slots[v] = slots[plan->remap[v]];
  };
  size_t count = plan ? plan->steps.size() : g.nodes.size();
  if (r.times && r.times->steps.size() != count) r.times = nullptr;  // not this plan's: not profiled
  using Clock = std::chrono::steady_clock;
  // Each step's time is the clock between the ends of consecutive steps: one read per step. Past
  // a plan's first kTimedRuns runs, one run in kSampleEvery is clocked and counts for that many:
  // the clock reads cost a sixth of a small plan's run (a lifted MLP at batch 1), and a plan run
  // that often has its profile by then. Run counts stay exact.
  constexpr int64_t kTimedRuns = 64, kSampleEvery = 16;
  const bool clocked =
      r.times && (r.times->runs < kTimedRuns || (r.times->runs - kTimedRuns) % kSampleEvery == 0);
  const double weight = r.times && r.times->runs >= kTimedRuns ? static_cast<double>(kSampleEvery) : 1.0;
  Clock::time_point last = clocked ? Clock::now() : Clock::time_point();
  auto account = [&](size_t i) {
    if (!r.times) return;
    StepTime& t = r.times->steps[i];
    ++t.runs;
    if (!clocked) return;
    Clock::time_point now = Clock::now();
    t.seconds += weight * std::chrono::duration<double>(now - last).count();
    last = now;
  };
  if (r.times) ++r.times->runs;  // calls that ran the plan, to its end or to a step that raised
  for (size_t i = 0; i < count; ++i) {
    if (plan && plan->steps[i].kind == StepKind::Free) {
      for (int v : plan->freed_by(plan->steps[i])) slots[v].reset();
      account(i);
      continue;
    }
    int k = plan ? plan->steps[i].node : static_cast<int>(i);
    try {
      if (plan && plan->steps[i].kind == StepKind::Fused) {
        if (!run_fused(plan->loop(plan->steps[i]), slots, r.patches, r.syms))
          for (int node : fused_nodes(plan->loop(plan->steps[i]))) {
            k = node;
            run_node(g, k, &plan->remap, slots, r);
          }
      } else if (plan && plan->steps[i].kind == StepKind::Move && take_buffer(g, k, plan->remap, slots)) {
      } else {
        run_node(g, k, plan ? &plan->remap : nullptr, slots, r);
      }
    } catch (const Error& e) {
      account(i);  // the step ran until it raised
      fill_merged();
      rethrow_at(g, k, e);
    }
    account(i);
  }
  fill_merged();
}

}  // namespace dyn
