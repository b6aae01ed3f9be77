// Tier 2 of the cache (trace once): a cache entry served without running the function's body.
// The Python side (dyn/_lift/) decides whether an entry can be lifted and checks its Python
// guards; the engine checks the tensor guards and global state, and runs the entry's graph on
// the inputs Python fetched. See DESIGN.md, "Guards, cache, recompiles".
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/capture/capture.h"

namespace dyn {

class LiftedPlan {
 public:
  // The entry fn's last call was served by (CompiledFunction::last_entry), run with `inputs`
  // (graph value ids, in the order run() takes them) and giving `outputs` (value ids). Null, with
  // the reason in *refusal, when the graph is one tier 2 cannot run yet.
  static std::shared_ptr<LiftedPlan> make(std::shared_ptr<CompiledFunction> fn, std::vector<int> inputs,
                                          std::vector<int> outputs, std::string* refusal, std::string* where = nullptr);
  // The scalar slot (0-2) of node k of the last call's entry that holds the float v at that call,
  // or -1 (none, or more than one: then the float is guarded instead of read at each call).
  static int float_slot(const CompiledFunction& fn, int k, double v);
  // Floats read at each call: run() takes their values, in this order, for these (node, slot).
  void set_float_slots(std::vector<std::pair<int, int>> slots) { float_slots_ = std::move(slots); }
  // Runs the graph when every tensor guard and global-state guard holds; false (nothing ran, no
  // count changed) when one fails: the call then goes to tier 1.
  // count=false (verify mode's shadow run): no counter, hit or event changes.
  // values: when the results get autograd history (grad_nodes()), every graph value of the run
  // by id, for record_lifted_history (autograd's layer, above this one).
  bool run(std::span<const Tensor> in, std::span<const double> floats, std::vector<Tensor>* out, bool count = true,
           std::vector<Tensor>* values = nullptr);
  const std::vector<std::pair<int, uint32_t>>& grad_nodes() const { return grad_nodes_; }
  // Result j required grad when traced (a detached alias of a graph value did not).
  bool out_requires_grad(size_t j) const { return out_grad_[j]; }
  const Graph& graph() const { return seg_->graph; }
  const NodePatches* used_patches() const { return used_patches_; }
  // The guard that failed at the last run() that returned false, as one line.
  const std::string& last_failure() const { return failure_; }
  int entry() const { return entry_; }
  // The history output j is given (the binding attaches it; see autograd.h), or null.
  const std::shared_ptr<GradNode>& released(size_t j) const { return released_[j]; }
  bool draws_random() const { return !random_.empty(); }
  // The inputs (run()'s positions) the graph writes into: verify mode restores them.
  std::vector<int> written_inputs() const {
    std::vector<int> out;
    for (size_t i = 0; i < writes_.size(); ++i)
      if (writes_[i] > 0) out.push_back(static_cast<int>(i));
    return out;
  }
  // The entry still exists (a reset or a new function state drops it).
  bool valid() const;

 private:
  std::shared_ptr<CompiledFunction> fn_;
  int entry_ = -1;
  std::shared_ptr<Segment> seg_;
  std::shared_ptr<Plan> plan_;
  std::vector<int> inputs_, outputs_;
  // Per input (run()'s order): the earlier position of the same graph input (-1: first), and the
  // position of the first distinct input sharing its memory (itself when none does).
  std::vector<int> dup_, shares_;
  std::vector<std::pair<int, uint32_t>> grad_nodes_;  // nodes whose autograd node a run records
  std::vector<char> out_grad_;
  const NodePatches* used_patches_ = nullptr;
  std::vector<int> random_;                          // the nodes that draw random numbers, in order
  std::vector<int64_t> writes_;                      // per input: the graph's in-place writes into it
  std::vector<std::shared_ptr<GradNode>> released_;  // per output: the history it is given, if any
  NodePatches patches_, run_patches_;
  std::vector<std::pair<int, int>> float_slots_;
  DType default_dtype_ = DType::Float32;
  DType autocast_ = kAutocastOff;
  bool grad_enabled_ = true;
  std::string failure_;
  std::vector<Tensor> bound_, slots_;  // reused between runs: a hit allocates no vector
};

}  // namespace dyn
