// move_dying_copies: a copy of a value that nothing reads afterwards (a clone, a .contiguous() of
// what already is, the copy that makes a leaf's .grad its own) becomes a Move step: at run time
// it takes the value's buffer instead of copying it, when nothing else holds that buffer.
#include "core/ir/passes/passes.h"

#include "core/ops/registry.h"

namespace dyn {

int move_dying_copies(const Graph& g, Plan* plan) {
  int moves = 0;
  for (size_t i = 0; i + 1 < plan->steps.size(); ++i) {
    Step& s = plan->steps[i];
    if (s.kind != StepKind::Kernel) continue;
    const Node& n = g.nodes[s.node];
    if (n.op != OpId::cast || n.inputs.size() != 1) continue;
    int v = plan->remap[n.inputs[0]];
    const Value& from = g.values[v];
    const Value& to = g.values[n.outputs[0]];
    // Made in this graph (an input's buffer is the caller's), laid out as the copy would be (a
    // permuted view needs the copy), and freed by the step right after this one: this copy is its
    // last reader.
    if (g.values[root_of(g, v)].producer < 0 || from.dtype != to.dtype || from.shape != to.shape) continue;
    if (from.offset != 0 || from.strides != contiguous_strides(from.shape)) continue;
    const Step& next = plan->steps[i + 1];
    if (next.kind != StepKind::Free) continue;
    bool dies = false;
    for (int f : plan->freed_by(next)) dies = dies || f == v;
    if (!dies) continue;
    s.kind = StepKind::Move;
    ++moves;
  }
  return moves;
}

}  // namespace dyn
