// Capture: lazy tracing inside compile regions. Ops record nodes into the current segment; a
// sync point (graph break or region exit) compiles the segment, runs it with the eager kernels
// and turns every lazy tensor still referenced into an ordinary tensor.
// See Note [capture] in capture.cpp.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/capture/log.h"
#include "core/capture/plan.h"

namespace dyn {

struct CompileOptions {
  std::string name;
  bool fullgraph = false;
  int cache_limit = 8;
  bool eager_backend = false;  // backend="eager": run graphs node by node, no passes
};

// The engine's state of one dyn.compile'd function: its options and its trace tree.
class CompiledFunction {
 public:
  explicit CompiledFunction(CompileOptions o) : opts_(std::move(o)) {}
  const CompileOptions& options() const { return opts_; }
  const std::string& name() const { return opts_.name; }

  // The cache entry whose first segments have these structure keys; a new one if none has.
  int entry_for(const std::vector<std::string>& path, bool* created);
  int num_entries() const { return static_cast<int>(entries_.size()); }
  int64_t calls = 0;

 private:
  CompileOptions opts_;
  std::vector<std::vector<std::string>> entries_;
};

class Capture {
  friend class EagerScope;

 public:
  // The capture of the running region on this thread, or nullptr (eager).
  static Capture* active() { return active_; }

  // Starts a region for fn; returns false when one is already active (the caller then simply
  // calls the function: it is inlined into the outer trace).
  static bool begin(std::shared_ptr<CompiledFunction> fn);
  // Runs the last segment and ends the region. Throws what the run throws (the region still ends).
  static void end();
  // Ends the region after an exception: lazy tensors still referenced are computed if possible,
  // else poisoned; nothing is cached.
  static void abort();

  // Tags a tensor entering the graph (an argument, a parameter) for printing and guards.
  void name_input(const Tensor& t, InputKind kind, std::string name);

  Tensor record(OpId op, std::span<const Tensor> in, const Attrs& a);
  std::pair<Tensor, Tensor> record2(OpId op, std::span<const Tensor> in, const Attrs& a);
  void record_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);

  // A graph break: Python needs a value. With fullgraph=True this throws instead.
  void graph_break(BreakKind kind, const std::string& what);

  void forget(TensorImpl* impl);
  const CompiledFunction& function() const { return *fn_; }

 private:
  explicit Capture(std::shared_ptr<CompiledFunction> fn);
  int value_of(const Tensor& t);
  std::vector<Tensor> record_node(OpId op, std::span<const Tensor> in, const Attrs& a, const OutMeta* metas,
                                  int target);
  // Compiles and runs the current segment, materializes live lazy tensors, starts a new segment.
  // Returns the id of the graph record, or "" when the segment was empty.
  std::string run_segment(bool log_events, const Event* break_event);

  static thread_local Capture* active_;
  std::shared_ptr<CompiledFunction> fn_;
  Graph seg_;
  int segment_index_ = 0;
  std::vector<std::string> path_;       // structure keys of this call's segments so far
  std::vector<std::string> graph_ids_;  // the graph records they ran as
  std::unordered_map<TensorImpl*, int> lazies_;  // live lazy tensors -> value id
  std::unordered_map<TensorImpl*, int> inputs_;  // external tensors -> input value id
  std::unordered_map<TensorImpl*, std::pair<InputKind, std::string>> names_;
  std::unordered_set<TensorImpl*> materialized_;
  std::vector<Storage*> pending_;  // storages with recorded writes not yet run
  double start_ = 0, compile_s_ = 0, execute_s_ = 0;
};

// Ops run now while this lives, even inside a region: for host-side work on tensors whose data
// is already there (printing, reading an index tensor) and for running plans.
class EagerScope {
 public:
  EagerScope() : saved_(Capture::active_) { Capture::active_ = nullptr; }
  ~EagerScope() { Capture::active_ = saved_; }
  EagerScope(const EagerScope&) = delete;
  EagerScope& operator=(const EagerScope&) = delete;

 private:
  Capture* saved_;
};

// Makes t's data readable. A lazy tensor, or one whose memory has recorded writes pending,
// forces a graph break of `kind`; `what` is what Python asked for (".item()").
void ensure_materialized(const Tensor& t, BreakKind kind, const char* what);
// The readable reason and the hint for a break kind.
std::string break_reason(BreakKind kind, const std::string& what);
std::string break_hint(BreakKind kind);

// The plan cache: structurally identical segments share one compiled plan.
std::shared_ptr<Plan> cached_plan(const std::string& key, const Graph& g, bool* compiled);
void clear_plan_cache();

}  // namespace dyn
