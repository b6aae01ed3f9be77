// Compiling a segment into a plan, and running it with the eager kernels.
#pragma once
#include <memory>
#include <vector>

#include "core/ir/graph.h"

namespace dyn {

// The executable form of a segment: which nodes run, in order, and which values CSE merged.
// Fusion and buffer planning slot in here as further passes over the same steps.
struct Plan {
  std::vector<int> order;  // node indices, program order
  std::vector<int> remap;  // value id -> the value that replaces it
  // release[i]: values no step after order[i] reads; the executor drops them there, so memory is
  // reused as eagerly as in eager mode instead of held until the segment ends.
  std::vector<std::vector<int>> release;
  size_t nodes_before = 0;
};

// The value whose buffer v lives in: views and in-place results share their operand's.
int root_of(const Graph& g, int v);

// Fills plan->release from the last use of each value (graph outputs are never released).
void plan_releases(const Graph& g, Plan* plan);

// eliminate_dead_nodes then eliminate_common_subexpressions.
std::shared_ptr<Plan> compile_plan(const Graph& g);
// Keeps nodes that reach an output or write into a buffer (in-place ops).
std::vector<bool> eliminate_dead_nodes(const Graph& g);
// Merges nodes with the same op, operands and attributes; in-place ops are barriers.
void eliminate_common_subexpressions(const Graph& g, const std::vector<bool>& live, Plan* plan);

// What a replayed call supplies instead of the recorded graph's own: its input tensors (by value
// id) and its random generator state (by node index).
struct RunInputs {
  const std::vector<Tensor>* bound = nullptr;
  const std::vector<std::pair<int, std::pair<uint64_t, uint64_t>>>* rng = nullptr;
};

// Runs the plan (or, with plan == nullptr, every node in order: the "eager" backend) on the
// graph's inputs; fills *slots with a tensor for every value id (empty where not computed). When
// a node raises, *slots holds what ran before it and the error names that node's source line.
void execute(const Graph& g, const Plan* plan, RunInputs r, std::vector<Tensor>* slots);

}  // namespace dyn
