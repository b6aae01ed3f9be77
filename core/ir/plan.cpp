// Plans: dead-node and common-subexpression elimination, and the executor.
#include "core/ir/plan.h"

#include <map>

#include "core/error.h"
#include "core/ops/run.h"

namespace dyn {

std::vector<bool> eliminate_dead_nodes(const Graph& g) {
  std::vector<bool> live_value(g.values.size(), false), live(g.nodes.size(), false);
  for (int o : g.outputs) live_value[o] = true;
  for (int k = static_cast<int>(g.nodes.size()) - 1; k >= 0; --k) {
    const Node& n = g.nodes[k];
    bool needed = n.target >= 0;  // a write into a buffer is visible whether or not it is read
    for (int o : n.outputs) needed = needed || live_value[o];
    if (!needed) continue;
    live[k] = true;
    for (int i : n.inputs) live_value[i] = true;
    if (n.target >= 0) live_value[n.target] = true;
  }
  return live;
}

namespace {
std::string cse_key(const Node& n, const std::vector<int>& remap) {
  std::string k;
  auto put = [&](const auto& v) { k.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(n.op);
  for (int i : n.inputs) put(remap[i]);
  put_attrs(n.attrs, true, &k);
  return k;
}
}  // namespace

int root_of(const Graph& g, int v) {
  for (;;) {
    int p = g.values[v].producer;
    if (p < 0) return v;
    const Node& n = g.nodes[p];
    if (n.target >= 0)
      v = n.target;
    else if (op_def(n.op).cls == OpClass::View)
      v = n.inputs[0];
    else
      return v;
  }
}

void eliminate_common_subexpressions(const Graph& g, const std::vector<bool>& live, Plan* plan) {
  plan->remap.resize(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) plan->remap[i] = static_cast<int>(i);
  // Merging two equal values makes them share a buffer. That is only invisible if the buffer is
  // never written in place, and the program does not see both (as outputs or views of them).
  std::vector<bool> mutated(g.values.size(), false), escapes(g.values.size(), false);
  for (const Node& n : g.nodes)
    if (n.target >= 0) mutated[root_of(g, n.target)] = true;
  for (int o : g.outputs) escapes[root_of(g, o)] = true;
  std::map<std::string, int> seen;  // key -> node index
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (!live[k]) continue;
    const Node& n = g.nodes[k];
    if (n.target >= 0) {  // values may change under an in-place write: forget what we know
      seen.clear();
      plan->order.push_back(static_cast<int>(k));
      continue;
    }
    if (op_def(n.op).cls == OpClass::Random) {
      // The generator state is an input of the graph, not a constant: two draws that look alike
      // in the traced call may differ in the next one.
      plan->order.push_back(static_cast<int>(k));
      continue;
    }
    std::string key = cse_key(n, plan->remap);
    auto it = seen.find(key);
    bool is_view = op_def(n.op).cls == OpClass::View;
    if (it != seen.end() && !is_view) {
      const Node& first = g.nodes[it->second];
      int a = root_of(g, first.outputs[0]), b = root_of(g, n.outputs[0]);
      if (mutated[a] || mutated[b] || (escapes[a] && escapes[b])) {
        plan->order.push_back(static_cast<int>(k));
        continue;
      }
    }
    if (it != seen.end()) {
      const Node& first = g.nodes[it->second];
      for (size_t o = 0; o < n.outputs.size(); ++o) plan->remap[n.outputs[o]] = first.outputs[o];
      continue;
    }
    seen.emplace(std::move(key), static_cast<int>(k));
    plan->order.push_back(static_cast<int>(k));
  }
}

void plan_releases(const Graph& g, Plan* plan) {
  std::vector<int> last(g.values.size(), -1);
  for (size_t i = 0; i < plan->order.size(); ++i) {
    const Node& n = g.nodes[plan->order[i]];
    for (int v : n.inputs) last[plan->remap[v]] = static_cast<int>(i);
    if (n.target >= 0) last[plan->remap[n.target]] = static_cast<int>(i);
    for (int v : n.outputs) last[plan->remap[v]] = std::max(last[plan->remap[v]], static_cast<int>(i));
  }
  for (int o : g.outputs) last[plan->remap[o]] = -1;
  plan->release.assign(plan->order.size(), {});
  for (size_t v = 0; v < last.size(); ++v)
    if (last[v] >= 0 && plan->remap[v] == static_cast<int>(v)) plan->release[last[v]].push_back(static_cast<int>(v));
}

std::shared_ptr<Plan> compile_plan(const Graph& g) {
  auto plan = std::make_shared<Plan>();
  plan->nodes_before = g.nodes.size();
  std::vector<bool> live = eliminate_dead_nodes(g);
  eliminate_common_subexpressions(g, live, plan.get());
  plan_releases(g, plan.get());
  return plan;
}

namespace {
void run_node(const Graph& g, int k, const std::vector<int>* remap, std::vector<Tensor>& slots, const RunInputs& r) {
  const Node& n = g.nodes[k];
  const Attrs* attrs = &n.attrs;
  Attrs patched;
  if (r.rng)
    for (const auto& [node, state] : *r.rng)
      if (node == k) {
        patched = n.attrs;
        patched.seed = state.first;
        patched.offset = state.second;
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
    Tensor out = Tensor::empty(v.shape, v.dtype);
    d.kernel(in, *attrs, std::span<Tensor>(&out, 1));
    slots[n.outputs[0]] = std::move(out);
  } else {
    slots[n.outputs[0]] = run_op(n.op, in, *attrs);
  }
}
}  // namespace

namespace {
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
  for (int id : g.inputs) slots[id] = r.bound ? (*r.bound)[id] : g.values[id].input;
  auto fill_merged = [&] {
    if (!plan) return;
    for (size_t v = 0; v < slots.size(); ++v)
      if (!slots[v].defined() && plan->remap[v] != static_cast<int>(v)) slots[v] = slots[plan->remap[v]];
  };
  size_t count = plan ? plan->order.size() : g.nodes.size();
  for (size_t i = 0; i < count; ++i) {
    int k = plan ? plan->order[i] : static_cast<int>(i);
    try {
      run_node(g, k, plan ? &plan->remap : nullptr, slots, r);
    } catch (const Error& e) {
      fill_merged();
      rethrow_at(g, k, e);
    }
    if (plan && i < plan->release.size())
      for (int v : plan->release[i]) slots[v].reset();
  }
  fill_merged();
}

}  // namespace dyn
