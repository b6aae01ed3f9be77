// eliminate_dead_nodes: keep the nodes whose results the program still sees or that write a buffer.
#include "core/ir/passes/passes.h"

#include <map>

#include "core/error.h"

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

}  // namespace dyn
