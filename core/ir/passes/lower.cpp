// lower_to_steps and plan_buffers: the kept nodes become steps, and each value is freed right after
// its last reader, so memory is reused as eagerly as in eager mode instead of held to the end.
#include "core/ir/passes/passes.h"

#include <algorithm>

#include "core/error.h"

namespace dyn {

std::vector<Step> lower_to_steps(const Graph& g, const std::vector<int>& order) {
  std::vector<Step> steps;
  steps.reserve(order.size());
  for (int k : order) {
    const Node& n = g.nodes[k];
    StepKind kind = n.target >= 0                       ? StepKind::InPlace
                    : op_def(n.op).cls == OpClass::View ? StepKind::View
                                                        : StepKind::Kernel;
    steps.push_back(Step{kind, k, 0, 0});
  }
  return steps;
}

void plan_buffers(const Graph& g, Plan* plan) {
  // The step after which each buffer is last read; graph outputs live on.
  std::vector<int> last(g.values.size(), -1);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const Step& s = plan->steps[i];
    const std::vector<int> one{s.node};
    for (int k : s.kind == StepKind::Fused ? fused_nodes(plan->loop(s)) : one) {
      const Node& n = g.nodes[k];
      for (int v : n.inputs) last[plan->remap[v]] = static_cast<int>(i);
      if (n.target >= 0) last[plan->remap[n.target]] = static_cast<int>(i);
      for (int v : n.outputs) last[plan->remap[v]] = std::max(last[plan->remap[v]], static_cast<int>(i));
    }
  }
  for (int o : g.outputs) last[plan->remap[o]] = -1;
  // A fused step's intermediates live in its blocks only: there is no buffer to free.
  for (const Step& s : plan->steps)
    if (s.kind == StepKind::Fused) {
      const std::vector<int>& outs = fused_outputs(plan->loop(s));
      std::vector<int> kept;  // the outputs' buffers, freed after their last reader as usual
      for (int v : outs) kept.push_back(last[v]);
      for (int k : fused_nodes(plan->loop(s))) last[g.nodes[k].outputs[0]] = -1;
      for (size_t i = 0; i < outs.size(); ++i) last[outs[i]] = kept[i];
    }
  // The values freed after step i, grouped by step in one array (counting sort: a long trace has
  // a free step after most of its steps, and a vector each cost 24 bytes and an allocation).
  std::vector<int> start(plan->steps.size() + 1, 0);
  for (size_t v = 0; v < last.size(); ++v)
    if (last[v] >= 0 && plan->remap[v] == static_cast<int>(v)) ++start[static_cast<size_t>(last[v]) + 1];
  for (size_t i = 0; i < plan->steps.size(); ++i) start[i + 1] += start[i];
  plan->freed.assign(static_cast<size_t>(start.back()), 0);
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (size_t v = 0; v < last.size(); ++v)
    if (last[v] >= 0 && plan->remap[v] == static_cast<int>(v)) plan->freed[fill[last[v]]++] = static_cast<int>(v);
  size_t frees = 0;
  for (size_t i = 0; i < plan->steps.size(); ++i) frees += start[i + 1] > start[i];
  std::vector<Step> steps;
  steps.reserve(plan->steps.size() + frees);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    steps.push_back(plan->steps[i]);
    if (start[i + 1] > start[i]) steps.push_back(Step{StepKind::Free, -1, start[i], start[i + 1] - start[i]});
  }
  plan->steps = std::move(steps);
}

}  // namespace dyn
