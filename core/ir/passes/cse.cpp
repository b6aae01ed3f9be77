// eliminate_common_subexpressions: one node for equal computations, where sharing stays invisible.
#include "core/ir/passes/passes.h"

#include <map>

#include "core/error.h"

namespace dyn {

namespace {
std::string cse_key(const Node& n, const std::vector<int>& remap) {
  std::string k;
  auto put = [&](const auto& v) { k.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(n.op);
  for (int i : n.inputs) put(remap[i]);
  put_attrs(n.attrs, true, &k);
  // Two nodes alike in the traced call but not in the next one (a size that is a symbol in one,
  // a constant of the same value in the other) are not one.
  for (const SymAttr& sa : n.sym_attrs) {
    put(sa.slot);
    put(sa.e.coef), put(sa.e.add), put(sa.e.a), put(sa.e.b);
  }
  k.push_back(';');
  return k;
}
}  // namespace

std::vector<int> eliminate_common_subexpressions(const Graph& g, const std::vector<bool>& live, Plan* plan) {
  std::vector<int> order;
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
      order.push_back(static_cast<int>(k));
      continue;
    }
    if (op_def(n.op).cls == OpClass::Random || value_scalars(n.op, n.attrs)) {
      // The generator state and float constants are inputs of the graph, not constants: two
      // draws (or two products with a number) that look alike in the traced call may differ in
      // the next one.
      order.push_back(static_cast<int>(k));
      continue;
    }
    std::string key = cse_key(n, plan->remap);
    auto it = seen.find(key);
    bool is_view = op_def(n.op).cls == OpClass::View;
    if (it != seen.end() && !is_view) {
      const Node& first = g.nodes[it->second];
      int a = root_of(g, first.outputs[0]), b = root_of(g, n.outputs[0]);
      if (mutated[a] || mutated[b] || (escapes[a] && escapes[b])) {
        order.push_back(static_cast<int>(k));
        continue;
      }
    }
    if (it != seen.end()) {
      const Node& first = g.nodes[it->second];
      for (size_t o = 0; o < n.outputs.size(); ++o) plan->remap[n.outputs[o]] = first.outputs[o];
      continue;
    }
    seen.emplace(std::move(key), static_cast<int>(k));
    order.push_back(static_cast<int>(k));
  }
  return order;
}

}  // namespace dyn
