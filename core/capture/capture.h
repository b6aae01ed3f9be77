// Capture: lazy tracing inside compile regions, the cache of traces, and replay.
// Ops record nodes into the current segment; a sync point (graph break or region exit) compiles
// the segment, runs it with the eager kernels and turns every lazy tensor still referenced into
// an ordinary tensor. A call that a cached trace can serve replays it: each op is only checked
// against the trace, and the cached plans run at the sync points. See Note [capture] and
// Note [replay] in capture.cpp.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/capture/guards.h"
#include "core/capture/log.h"
#include "core/ir/plan.h"

namespace dyn {

struct CompileOptions {
  std::string name;
  bool fullgraph = false;
  int cache_limit = 8;
  bool eager_backend = false;  // backend="eager": run graphs node by node, no passes
  // Dynamic shapes, as torch.compile's dynamic=: -1 (None) a size that changes makes its dim
  // dynamic at the recompile; 0 (False) every size gets its own entry; 1 (True) the dims of
  // tensor arguments are dynamic from the first call.
  int dynamic = -1;
};

// What Python saw at a graph break: the value it asked for, when it is one number.
struct Observation {
  bool known = false;
  double value = 0;
  bool is_bool = false;
  bool is_int = false;  // .item() of an integer tensor: prints as Python would, 1 and not 1.0
  std::string str() const;
};

// One segment of a cached trace: its graph (input tensors stripped), plan, and how it ended.
struct Segment {
  Graph graph;
  std::shared_ptr<Plan> plan;
  std::shared_ptr<SegmentTimes> times = std::make_shared<SegmentTimes>();  // its steps' times (:profile)
  bool ends_in_break = false;
  BreakKind break_kind = BreakKind::ExplicitSync;
  SourceStack break_where;
  Observation observed;
  // The variable Python stored the observed value to, as written (`longest`), or "".
  std::string observed_name;
  // How the segment ends, as part of its plan-cache key: "|end" or "|break:item".
  std::string terminator() const {
    return ends_in_break ? "|break:" + std::string(break_kind_name(break_kind)) : "|end";
  }
};

// A Python value the call can see by name, as text: for explaining what changed between calls.
struct NamedValue {
  std::string name;   // "steps", "opt.param_groups[0]['lr']"
  std::string value;  // "3"
  std::string where;  // its first use in the compiled function, "a.py:12", or ""
  bool is_float = false;
};

// Names what enters a trace from outside as the user would write it (`model.fc.weight`,
// `opt.param_groups[0]['lr']`). The binding layer installs one for each call; the engine asks
// only while recording or explaining a failure, so a replayed call pays nothing for names.
class SourceNamer {
 public:
  virtual ~SourceNamer() = default;
  virtual bool tensor(const Tensor& t, InputKind* kind, std::string* name) = 0;
  // The expression the number `s` of the op being issued came from (side: where a binary
  // operator has it); false when unknown.
  virtual bool scalar(const Scalar& s, ScalarSide side, InputKind* kind, std::string* name) = 0;
  // The plain Python values (numbers, bools, strings) the call can see by name.
  virtual std::vector<NamedValue> values() = 0;
  // The variable the value Python reads at this graph break is stored to (`longest` for
  // `longest = int(t.item())`), or "".
  virtual std::string stored_name() { return {}; }
};

// A cache entry: one trace. Entries that share a prefix share its Segment objects (a trace tree).
struct Entry {
  std::vector<std::shared_ptr<Segment>> segments;
  // What Python saw at each graph break of this trace (segments are shared, observations are not).
  std::vector<Observation> observed;
  std::vector<std::string> graph_ids;    // "fn[e].k" of each segment, as the log lists them
  std::vector<NamedValue> values;        // the Python values the traced call saw
  std::vector<SymInfo> symbols;          // its dynamic sizes, s0, s1, ... (dynamic shapes)
  DType default_dtype = DType::Float32;  // global state the trace depends on
  DType autocast = kAutocastOff;
  bool grad_enabled = true;
  int64_t hits = 0;
  int64_t lifted_hits = 0;  // of hits: served by tier 2, without running the body
  // Tier 2, as dyn/_lift/ found it: lifted (with its Python guards, "text  # file:line"), or
  // why the body must run (reason, where); neither when no analysis ran.
  bool lifted = false;
  std::vector<std::string> python_guards;
  std::string tier1_reason, tier1_where;
  std::string last_miss;  // the Python guard that failed when it last did not serve a call
  int64_t misses = 0;
};

struct GradNode;

// The engine's state of one dyn.compile'd function: its options and its cache entries.
class CompiledFunction {
 public:
  explicit CompiledFunction(CompileOptions o) : opts_(std::move(o)) {}
  // A new compiled function, known to reset_all() and live().
  static std::shared_ptr<CompiledFunction> create(CompileOptions o);
  // Every compiled function still alive, in creation order, with the newest few whose Python
  // object died (retire()): the views explain a function a script dropped (a training step made
  // inside main()) after the script ended.
  static std::vector<std::shared_ptr<CompiledFunction>> live();
  // Its Python object died: kept for the views while it is among the newest kRetired so kept.
  static void retire(std::shared_ptr<CompiledFunction> fn);
  static constexpr size_t kRetired = 16;
  static std::shared_ptr<CompiledFunction> find(const std::string& name);
  // Forgets every compiled function's cache entries (dyn.debug.reset, :reset).
  static void reset_all();
  const CompileOptions& options() const { return opts_; }
  const std::string& name() const { return opts_.name; }
  const std::vector<Entry>& entries() const { return entries_; }
  // For recording what the lift analysis found about an entry (tier 2's notes, nothing else).
  Entry& entry_for_notes(int e) { return entries_[e]; }
  int num_entries() const { return static_cast<int>(entries_.size()); }
  // After cache_limit entries the function runs eagerly (with one warning).
  bool fallen_back() const { return fallback_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  // Every guard of one entry, one line each, with its source line.
  std::vector<std::string> guard_lines(int entry) const;
  // True once, right after the call that made the function fall back (for the one warning).
  bool take_fallback_warning() {
    bool w = fallback_ && !fallback_warned_;
    fallback_warned_ = fallback_warned_ || fallback_;
    return w;
  }
  int64_t calls = 0;
  // Recompiles logged for this function, those a raising call took back excepted: views count
  // them here, not in the event history, which keeps only the newest events.
  int64_t recompiles = 0;
  int64_t lifted_hits = 0;  // calls tier 2 served (without running the body)
  bool lift_on = false;     // tier 2 is enabled for it (dyn.compile(lift=...), DYN_LIFT)
  double lift_s = 0;        // the one-time analyses of its entries (the concolic pass and codegen)
  std::map<std::string, int64_t> recompile_causes;  // cause key (cause_of) -> the recompiles it made
  // How many functions were compiled before this one from the same definition (dyn.compile in a
  // loop re-creates the function, and with it every trace).
  int recreated = 0;
  std::string defined_at;
  // The entry that served the last call that ended (recorded or replayed), -1: none; and what
  // that call patched into its graph (its floats), for lifting it (core/capture/lift.h).
  int last_entry = -1;
  NodePatches last_patches;
  // and, per graph input of that call (by value id), the value id of the first input that
  // shares its memory (itself when none does): a lifted call must alias its inputs the same way.
  std::map<int, int> last_shares;
  // and, per result of that call (in the order lift_snapshot took them), the node named as its
  // grad_fn when a backward() in the body consumed its history (null otherwise), for a lifted
  // call to give its results (see autograd.h), and whether it required grad;
  std::vector<std::shared_ptr<GradNode>> last_released;
  std::vector<char> last_out_grad;
  std::vector<int> last_history;  // the results (value ids) whose history is there to backward through
  // The nodes that made an autograd node in that call, each with which of its inputs required
  // grad then (a detached alias of a value did not), and whether a backward() set a .grad.
  std::vector<std::pair<int, uint32_t>> last_grad_nodes;
  bool last_backward = false;
  bool last_inplace_history = false;  // an in-place op gave a tensor new history (autograd.h)

 private:
  friend class Capture;
  friend class LiftedPlan;
  CompileOptions opts_;
  std::vector<Entry> entries_;
  bool fallback_ = false;
  bool fallback_warned_ = false;
  std::string fallback_reason_;
};

// The live lazy tensors of a capture, linked through the tensors themselves: adding one (every
// op's output) and dropping one (a temporary going away) allocates nothing, which the replay of a
// small graph notices. Iterating yields (tensor, its value id) in order of addition.
class LazyList {
 public:
  LazyList() = default;
  LazyList(const LazyList&) = delete;
  LazyList& operator=(const LazyList&) = delete;
  ~LazyList() { clear(); }
  void add(TensorImpl* p) {
    if (p->lazy_listed_) return;
    p->lazy_listed_ = true;
    p->lazy_prev_ = tail_;
    p->lazy_next_ = nullptr;
    (tail_ ? tail_->lazy_next_ : head_) = p;
    tail_ = p;
  }
  void remove(TensorImpl* p) {
    if (!p->lazy_listed_) return;
    (p->lazy_prev_ ? p->lazy_prev_->lazy_next_ : head_) = p->lazy_next_;
    (p->lazy_next_ ? p->lazy_next_->lazy_prev_ : tail_) = p->lazy_prev_;
    p->lazy_prev_ = p->lazy_next_ = nullptr;
    p->lazy_listed_ = false;
  }
  void clear() {
    for (TensorImpl* p = head_; p;) {
      TensorImpl* next = p->lazy_next_;
      p->lazy_prev_ = p->lazy_next_ = nullptr;
      p->lazy_listed_ = false;
      p = next;
    }
    head_ = tail_ = nullptr;
  }
  // Unlinks and returns the first tensor, or nullptr: loops that hand every lazy tensor its value
  // take them out one at a time, so an exception halfway leaves the list true.
  TensorImpl* pop_front() {
    TensorImpl* p = head_;
    if (p) remove(p);
    return p;
  }
  struct iterator {
    TensorImpl* p;
    std::pair<TensorImpl*, int> operator*() const { return {p, p->lazy_value_}; }
    iterator& operator++() {
      p = p->lazy_next_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return p != o.p; }
  };
  iterator begin() const { return {head_}; }
  iterator end() const { return {nullptr}; }

 private:
  TensorImpl* head_ = nullptr;
  TensorImpl* tail_ = nullptr;
};

class Capture {
  friend class EagerScope;

 public:
  // The capture of the running region on this thread, or nullptr (eager).
  static Capture* active() { return active_; }

  // Starts a region for fn; returns false when one is already active (the caller then simply
  // calls the function: it is inlined into the outer trace) or fn has fallen back to eager.
  static bool begin(std::shared_ptr<CompiledFunction> fn);
  // Runs the last segment and ends the region. Throws what the run throws (the region still ends).
  static void end();
  // Ends the region after an exception: lazy tensors still referenced are computed if possible,
  // else poisoned; nothing is cached.
  static void abort();

  // Tags a tensor entering the graph (an argument, a parameter) for printing and guards.
  void name_input(const Tensor& t, InputKind kind, const std::string& name);
  // Who names what this call did not tag itself; lives until the region ends (nullptr: nobody).
  void set_namer(SourceNamer* n) { namer_ = n; }

  Tensor record(OpId op, std::span<const Tensor> in, const Attrs& a);
  std::pair<Tensor, Tensor> record2(OpId op, std::span<const Tensor> in, const Attrs& a);
  void record_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);

  // A graph break: Python needs a value (of `observed`, when given). With fullgraph=True this
  // throws instead.
  void graph_break(BreakKind kind, const std::string& what, const Tensor* observed = nullptr);

  void forget(TensorImpl* impl);
  // The in-place write count of a lazy tensor's buffer, as Storage::version counts it for a
  // concrete one (autograd's check that a saved value was not modified; see Note [versions]).
  int64_t version_of(const Tensor& t) const;
  // A leaf's .grad is about to change inside the region. If a graph fails to run, restore() puts
  // back what eager mode would have left (autograd knows how; the capture only keeps the note).
  void note_grad_change(const TensorImpl* leaf, const Tensor& old, std::function<void()> restore);
  // The op just recorded or replayed made an autograd node (dispatch tells, with which inputs
  // required grad): for lifting.
  // An in-place op gave a tensor new history, which a lifted call cannot record again.
  void note_inplace_history() { inplace_history_ = true; }
  void note_grad_node(uint32_t inputs_requiring_grad) {
    int k = lift_nodes() - 1;
    if (k >= 0) grad_nodes_.emplace_back(k, inputs_requiring_grad);
  }
  // For lifting: the leaves whose .grad changed first after the k-th such change of this segment,
  // each with the .grad it had before (undefined: None). grad_changes() counts them.
  size_t grad_changes() const { return grad_notes_.size(); }
  std::vector<std::pair<Tensor, Tensor>> grad_changes_from(size_t k) const;
  // Some op recorded in the current segment reads this memory (numpy() must run them first).
  bool reads_storage(const Storage* s) const;
  const CompiledFunction& function() const { return *fn_; }
  // For lifting (tier 2), before the region ends: the graph inputs of the current segment, by
  // value id, and the value id of each tensor in outs (-1: not a pending value of it). False
  // after a graph break (only a one-segment trace is lifted).
  // released[i]: the history out i is to have on a lifted call, when a backward() consumed it
  // (autograd makes it: released_copy_of_history).
  bool lift_snapshot(std::span<const Tensor> outs, std::span<const std::shared_ptr<GradNode>> released,
                     std::vector<std::pair<int, Tensor>>* inputs, std::vector<int>* out_ids);
  // The nodes of the current segment so far (recorded or replayed), -1 after a graph break: the
  // lift maps a Python float to the node whose scalar it is.
  int lift_nodes() const {
    return segment_index_ != 0 ? -1 : replaying() ? node_k_ : static_cast<int>(seg_.nodes.size());
  }
  // Another handle to a lazy tensor's pending value, without its history (autograd's saved values).
  Tensor alias_lazy(const Tensor& t);
  // For in-place ops with history: a and b live in the same buffer.
  bool same_buffer(const Tensor& a, const Tensor& b) { return buffer_of(a) == buffer_of(b); }

  // While the script is stopped at a breakpoint nothing may sync: a lazy tensor shows its
  // pending node instead, and reading its data is a user error.
  static void set_paused(bool p, Capture* held = nullptr) {
    paused_ = p;
    paused_capture_ = p ? held : nullptr;
  }
  static bool paused() { return paused_; }
  // The capture whose call is stopped (its region is not active while the prompt runs), or nullptr.
  static Capture* paused_capture() { return paused_capture_; }
  // Regions running now on any thread (a reset must wait until none is).
  static int live() { return live_.load(); }
  // "%12 f32[4, 8] pending  # add(%10, %11) at file.py:7" for a lazy tensor of this capture.
  std::string describe_pending(const TensorImpl* impl) const;
  // The segment this call is recording now (nullptr while it replays), as a record "fn[e].s" with
  // the nodes recorded so far: what :diff calls ".".
  bool graph_in_progress(GraphRecord* out) const;

 private:
  explicit Capture(std::shared_ptr<CompiledFunction> fn);

  // ---- record mode ----
  int value_of(const Tensor& t);
  // self: the target of an in-place op (its node writes self's buffer), else nullptr.
  std::vector<Tensor> record_node(OpId op, std::span<const Tensor> in, const Attrs& a, const OutMeta* metas,
                                  const Tensor* self);
  // Compiles and runs the current segment, materializes live lazy tensors, starts a new segment.
  void run_segment(bool commit, const Event* break_event, const Observation* observed);

  // ---- replay mode ----
  bool replaying() const { return !candidates_.empty(); }
  // Checks one op against every candidate entry; returns false when none is left (then the call
  // records from here on). Fills *out with the lazy results on success.
  bool replay_op(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor* self, std::vector<Tensor>* out);
  // metas: what the op gives at this call (inferred when a candidate is dynamic, else nullptr).
  bool check_node(int entry, OpId op, std::span<const Tensor> in, const Attrs& a, const Tensor* self,
                  const OutMeta* metas, GuardFailure* f);
  // tentative: tensors this node's check already placed (a tensor passed twice to one op).
  int replay_value_of(const Tensor& t, int expected, const Graph& g, SymValues* syms, GuardFailure* f,
                      std::vector<std::pair<const TensorImpl*, int>>* tentative);
  // The candidates that end their segment here with this kind of break (or the trace, for end).
  void replay_sync(bool is_end, BreakKind kind, const SourceStack& where, const Observation& observed);
  // No candidate is left: keep the matched prefix and record from here.
  void switch_to_record();
  void drop_candidate(size_t i, GuardFailure f);
  // Operands of a binary op whose count changed: which one became a number (or a tensor), by name.
  void explain_swap(const Graph& g, const Node& n, std::span<const Tensor> in, const Attrs& a, GuardFailure* f);
  const Segment& cached_segment() const;
  void log_recompile();
  // In fn_'s counts, as the recompile is logged.
  void count_recompile(const std::vector<GuardFailure>& failures, int closest);
  // The one event builder: what every event of this call has (function, entry, segment, where).
  Event event(EventKind kind, int entry, SourceStack where) const;
  // Counts the event in the counters and logs it.
  void emit(Event e);
  // The call raised before its new entry existed: its recompile event is taken back.
  void retract_recompile();
  void register_entry();
  // A call that failed keeps nothing: its lazy tensors are poisoned and its new graphs unlisted.
  void discard_results();
  // Leaves the region: pending writes are settled, the time is counted and the capture deleted.
  static void close(Capture* c);

  void adopt_live(const Graph& g, std::vector<Tensor>& slots);
  // bound_ holds a slot for every value of every candidate's current segment.
  void size_bound();
  // metas: the geometry this call gives them (a dynamic graph), else the graph's.
  void make_lazy_outputs(const Graph& g, const Node& n, std::vector<Tensor>* out, const OutMeta* metas = nullptr);
  // Dynamic shapes: makes the segment being compiled dynamic where it can (an earlier entry of the
  // same ops with other sizes, or sizes marked dynamic) and says so in the recompile event.
  void generalize_segment();
  void bind_target(Tensor& self, int value);
  // The storage of the outside tensor a value is (a view of), if any: writes to it must be seen.
  Storage* outside_storage_of(int value);
  // After a segment's run failed at some node: what ran keeps its value (as eager mode would
  // have left it), outside tensors keep their memory, .grad changes that never ran are undone,
  // and only tensors made after the failing op stay without a value. Never run again.
  void settle_failed_run(const Graph& g, const std::vector<Tensor>& slots);
  // The user errors an in-place op raises at record time: value checks and partial overlap.
  void check_record(OpId op, std::span<const Tensor> in, const Attrs& a, const Tensor* self);
  // Which buffer a tensor lives in: an outside storage, or (lazy, made in the region) a root value.
  std::pair<const Storage*, int> buffer_of(const Tensor& t);
  const Graph& current_graph() const { return replaying() ? cached_segment().graph : seg_; }
  Observation observe(BreakKind kind, const Tensor* t);

  static thread_local Capture* active_;
  static bool paused_;
  static Capture* paused_capture_;
  static std::atomic<int> live_;
  std::shared_ptr<CompiledFunction> fn_;
  int segment_index_ = 0;
  // live lazy tensors, each with its value id (in seg_ while recording, in the cached segment while replaying)
  LazyList lazies_;
  // The output list replay_op fills, kept between ops so that a replayed op allocates none (taken
  // while in use: a nested record finds it empty and makes its own).
  std::vector<Tensor> spare_out_;
  // The failure record replay_op's checks fill, reused: check_node writes it only when a check
  // fails (then it is moved out and reset), and making its nine strings for every replayed op
  // cost a twentieth of the op.
  GuardFailure scratch_failure_;
  std::unordered_map<TensorImpl*, int> inputs_;  // external tensors of this segment -> input value id
  std::unordered_map<TensorImpl*, std::pair<InputKind, std::string>> names_;
  SourceNamer* namer_ = nullptr;
  // While the namer runs: an op issued then (user code it ran) must not land mid-record.
  bool naming_ = false;
  struct Naming {
    explicit Naming(Capture* c) : c_(c) { c_->naming_ = true; }
    ~Naming() { c_->naming_ = false; }
    Capture* c_;
  };
  void check_not_naming() const;
  // What each earlier segment of this call computed, by the tensor that now holds it (and its
  // storage, so that a new tensor at a freed address is not taken for it): "%7 of segment 0".
  std::unordered_map<const TensorImpl*, std::pair<const Storage*, std::string>> computed_;
  // The source of a tensor entering the graph: tagged, else asked of the namer.
  void source_of(const Tensor& t, InputKind* kind, std::string* name);
  // Why each failed entry failed, in the Python values that changed since it was traced.
  void explain_causes();
  std::vector<Storage*> pending_;            // storages with recorded writes not yet run
  std::vector<Observation> observed_;        // what Python saw at each break of this call
  std::unordered_map<int, int64_t> writes_;  // root value of the current segment -> in-place writes
  struct GradNote {
    const TensorImpl* leaf;
    Tensor old;  // the .grad before (undefined: None)
    std::function<void()> restore;
  };
  std::vector<GradNote> grad_notes_;                  // per leaf, first change
  std::vector<std::pair<int, uint32_t>> grad_nodes_;  // nodes of segment 0 that made an autograd node
  bool inplace_history_ = false;

  // record mode
  Graph seg_;
  // The attributes recorded so far this call, by their hash: equal ones share one copy (Note
  // [compact graphs]). Bounded: a trace of all-different attributes only stops sharing.
  std::unordered_multimap<size_t, AttrsRef> attrs_pool_;
  AttrsRef share_attrs(const Attrs& a);
  std::vector<std::shared_ptr<Segment>> new_segments_;  // recorded by this call
  std::vector<std::shared_ptr<Segment>> prefix_;        // replayed segments the new entry shares
  int new_entry_ = -1;
  std::vector<std::string> new_graph_ids_;
  std::vector<GuardFailure> failures_;  // why each older entry did not serve this call

  // replay mode
  std::vector<int> candidates_;
  int node_k_ = 0;                // ops matched in the current segment
  std::vector<Tensor> bound_;     // value id -> tensor bound to a graph input of the cached segment
  NodePatches patches_;           // per node: this call's generator state and float constants
  int last_failed_ = -1;          // the entry that matched longest
  int closest_ = -1;              // the entry the recompile starts from (switch_to_record)
  std::vector<SymValues> binds_;  // per entry: what this call bound its symbols to

  // dynamic shapes of the entry being recorded: its symbols, their values at this call, and the
  // earlier entry whose segments it was generalized against (-1: none)
  std::vector<SymInfo> syms_;
  SymValues sym_now_;
  int pair_entry_ = -1;
  int64_t recompile_event_ = -1;       // the number in the log of the recompile this call emitted
  std::vector<int64_t> guard_events_;  // and of the guard failures logged with it
  std::string recompile_cause_;        // and its cause's key

  double start_ = 0, compile_s_ = 0, execute_s_ = 0;
  double paused_at_start_ = 0;  // the log's paused_s when the call began
  bool grad_enabled_at_start_ = true;
  DType autocast_at_start_ = kAutocastOff;
};

// While a derivative formula issues its ops (backward() inside a region), the numbers it writes
// (1/N of a mean, gelu's constants) are named after it rather than after the user's line.
class DerivativeScope {
 public:
  explicit DerivativeScope(OpId op) : saved_(current_) { current_ = static_cast<int>(op); }
  ~DerivativeScope() { current_ = saved_; }
  DerivativeScope(const DerivativeScope&) = delete;
  DerivativeScope& operator=(const DerivativeScope&) = delete;
  // The op whose derivative is running, or -1.
  static int current() { return current_; }

 private:
  int saved_;
  static thread_local int current_;
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
