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
    steps.push_back(Step{kind, k, {}});
  }
  return steps;
}

void plan_buffers(const Graph& g, Plan* plan) {
  // The step after which each buffer is last read; graph outputs live on.
  std::vector<int> last(g.values.size(), -1);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const Step& s = plan->steps[i];
    const std::vector<int> one{s.node};
    for (int k : s.kind == StepKind::Fused ? fused_nodes(*s.fused) : one) {
      const Node& n = g.nodes[k];
      for (int v : n.inputs) last[plan->remap[v]] = static_cast<int>(i);
      if (n.target >= 0) last[plan->remap[n.target]] = static_cast<int>(i);
      for (int v : n.outputs) last[plan->remap[v]] = std::max(last[plan->remap[v]], static_cast<int>(i));
    }
  }
  for (int o : g.outputs) last[plan->remap[o]] = -1;
  // A fused step's intermediates live in its blocks only: there is no buffer to free.
  for (const Step& s : plan->steps)
    if (s.kind == StepKind::Fused)
      for (int k : fused_nodes(*s.fused)) {
        int v = g.nodes[k].outputs[0];
        const std::vector<int>& outs = fused_outputs(*s.fused);
        if (std::find(outs.begin(), outs.end(), v) == outs.end()) last[v] = -1;
      }
  std::vector<std::vector<int>> free_after(plan->steps.size());
  for (size_t v = 0; v < last.size(); ++v)
    if (last[v] >= 0 && plan->remap[v] == static_cast<int>(v)) free_after[last[v]].push_back(static_cast<int>(v));
  std::vector<Step> steps;
  steps.reserve(2 * plan->steps.size());
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    steps.push_back(std::move(plan->steps[i]));
    if (!free_after[i].empty()) steps.push_back(Step{StepKind::Free, -1, std::move(free_after[i])});
  }
  plan->steps = std::move(steps);
}

}  // namespace dyn
