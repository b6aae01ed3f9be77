// The passes that build a plan, in the order compile_plan (core/ir/plan.cpp) runs them. Each
// lives in its own file of this folder.
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
// Rewrites runs of consecutive elementwise kernel steps over one shape and float dtype (the ops
// whose formula column is set) into one Fused step that walks memory once, block by block; only
// values read after the run are written out. Returns how many steps it replaced. fuse_elementwise.cpp
int fuse_elementwise(const Graph& g, Plan* plan);
// A Free step after the last reader of each buffer (graph outputs are never freed). lower.cpp
void plan_buffers(const Graph& g, Plan* plan);
// Turns same-dtype copies (cast) whose operand is freed right after them into Move steps, which
// take the operand's buffer at run time when nothing else holds it. Returns how many. move_copies.cpp
int move_dying_copies(const Graph& g, Plan* plan);

}  // namespace dyn
