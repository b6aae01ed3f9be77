// The passes that build a plan, in the order compile_plan (core/ir/plan.cpp) runs them. Each
// lives in its own file of this folder. The next one, fuse_elementwise, runs after lowering: it
// rewrites runs of elementwise kernel steps (the ops whose formula column is set) into one step.
#pragma once
#include <vector>

#include "core/ir/plan.h"

namespace dyn {

// Keeps nodes that reach an output or write into a buffer (in-place ops). dead_nodes.cpp
std::vector<bool> eliminate_dead_nodes(const Graph& g);
// Merges nodes with the same op, operands and attributes (in-place ops are barriers); fills
// plan->remap and returns the kept nodes in program order. cse.cpp
std::vector<int> eliminate_common_subexpressions(const Graph& g, const std::vector<bool>& live, Plan* plan);
// One step per kept node. lower.cpp
std::vector<Step> lower_to_steps(const Graph& g, const std::vector<int>& order);
// A Free step after the last reader of each buffer (graph outputs are never freed). lower.cpp
void plan_buffers(const Graph& g, Plan* plan);

}  // namespace dyn
