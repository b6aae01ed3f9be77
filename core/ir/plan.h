// Plans: what a segment runs as. A plan is a list of steps built by passes (core/ir/passes/), each
// in its own file and run in a straight line by compile_plan, which logs what each did.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace dyn {

enum class StepKind : uint8_t {
  Kernel,   // run node's kernel into a fresh buffer
  View,     // node's output is a view of its input's buffer: no data moves
  InPlace,  // node writes into its target's buffer
  Free,     // drop the buffers of `values`: nothing after reads them
  Fused,    // run `fused`: several elementwise nodes in one pass over memory
  Move,     // a copy of a value that dies here: takes its buffer when nothing else holds it, else copies
};

struct FusedLoop;  // core/ir/passes/fuse_elementwise.cpp

// 16 bytes: a long trace's plan has a step per node before fusion and a free step after many.
struct Step {
  StepKind kind;
  int node = -1;  // the graph node it runs (all but Free; Fused: its first node)
  // Free: the value ids released are Plan::freed[first, first + count). Fused: Plan::loops[first].
  int first = 0, count = 0;
};

// The nodes a fused step runs, in order.
const std::vector<int>& fused_nodes(const FusedLoop& f);
// The values it writes out (read after it); its other nodes' values never leave its blocks.
const std::vector<int>& fused_outputs(const FusedLoop& f);
// What one node of a replayed call takes from the call instead of the recorded graph: its random
// generator state, and the float constants that are inputs of the graph (value_scalars).
struct NodePatch {
  int node = -1;
  bool rng = false;
  uint64_t seed = 0, offset = 0;
  unsigned values = 0;  // which of scalar, scalar2, scalar3 this call gives
  Scalar scalar[3];
  void apply(Attrs* a) const;
  bool differs(const Attrs& a) const;  // a value this call gives is not a's
};
using NodePatches = std::vector<NodePatch>;  // sorted by node
// The patch of node k, or nullptr.
const NodePatch* find_patch(const NodePatches* p, int k);

// Runs a fused step: reads its inputs from slots and stores a tensor for each of its outputs.
// False, having done nothing, when its in-place writes would overlap another operand's memory at
// this call: the caller then runs its nodes one by one.
// syms: a dynamic graph's sizes at this call.
bool run_fused(const FusedLoop& f, std::vector<Tensor>& slots, const NodePatches* patches = nullptr,
               const SymValues* syms = nullptr);
// "fused    %3 = mul(%0, %1); %4 = tanh(%3) -> %4 (block loop over f32[1024])"
std::string print_fused(const Graph& g, const FusedLoop& f);

// The executable form of a segment. Fusion and memory planning are further passes over steps.
struct Plan {
  std::vector<Step> steps;
  std::vector<int> freed;                               // what Free steps release
  std::vector<std::shared_ptr<const FusedLoop>> loops;  // what Fused steps run
  std::span<const int> freed_by(const Step& s) const { return {freed.data() + s.first, static_cast<size_t>(s.count)}; }
  const FusedLoop& loop(const Step& s) const { return *loops[static_cast<size_t>(s.first)]; }
  std::vector<int> remap;           // value id -> the value that replaces it (CSE merged them)
  std::vector<std::string> passes;  // one line per pass: what it changed
  size_t nodes_before = 0;
  size_t node_steps() const;  // steps that run a node
};

// The value whose buffer v lives in: views and in-place results share their operand's. With
// via_view, whether a view lies on the way (v is then not the whole buffer).
int root_of(const Graph& g, int v, bool* via_view = nullptr);

// Runs the passes over g: eliminate_dead_nodes, eliminate_common_subexpressions, lower_to_steps,
// plan_buffers.
std::shared_ptr<Plan> compile_plan(const Graph& g);
// The steps one per line, after the passes' log ("# eliminate_dead_nodes: 12 -> 9 nodes").
std::string print_plan(const Graph& g, const Plan& plan);
// Step i's kind ("kernel", "fused", ...) and what it runs, as print_plan shows it.
const char* step_kind_name(StepKind k);
std::string print_step(const Graph& g, const Plan& plan, size_t i);

// How long the steps of one plan took over the calls that ran it (`:profile`, dyn.debug.profile).
struct StepTime {
  int64_t runs = 0;
  double seconds = 0;
};
struct PlanTimes {
  std::shared_ptr<const Plan> plan;  // nullptr: the eager backend, whose steps are the graph's nodes
  int64_t runs = 0;                  // calls that ran it (a step that raised ends a run early)
  std::vector<StepTime> steps;
};
// A segment's timings, one PlanTimes per plan its calls ran: a call that keeps more of the trace's
// values alive than its outputs runs a plan of its own.
struct SegmentTimes {
  std::vector<PlanTimes> plans;
  // The times of `plan`, or nullptr past kMaxPlans (a call that keeps other values alive each time
  // would otherwise hold a plan per set of values for the segment's life).
  PlanTimes* of(const std::shared_ptr<const Plan>& plan, size_t steps);
  static constexpr size_t kMaxPlans = 8;
};

// What a replayed call supplies instead of the recorded graph's own: its input tensors (by value
// id), per node its random generator state and float constants, and its sizes.
struct RunInputs {
  const std::vector<Tensor>* bound = nullptr;
  const NodePatches* patches = nullptr;
  const SymValues* syms = nullptr;  // a dynamic graph: the values this call bound its symbols to
  PlanTimes* times = nullptr;       // where each step's time is added, when profiled
};

// Runs the plan (or, with plan == nullptr, every node in order: the "eager" backend) on the
// graph's inputs; fills *slots with a tensor for every value id (empty where not computed). When
// a node raises, *slots holds what ran before it and the error names that node's source line.
// With r.times, adds each step's wall time to it.
void execute(const Graph& g, const Plan* plan, RunInputs r, std::vector<Tensor>* slots);

}  // namespace dyn
