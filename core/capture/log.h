// The capture log: every event, the counters, every compiled graph and every compiled function.
// The one store that dyn.debug, the REPL and the pictures read; none keeps its own copy.
#pragma once
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/capture/guards.h"
#include "core/ir/graph.h"
#include "core/ir/plan.h"

namespace dyn {

// Lift / LiftRefused: tier 2's one-time analysis of an entry (it serves calls without the body,
// or why not, and where).
enum class EventKind : uint8_t { Compile, CacheHit, GraphBreak, GuardFailure, Recompile, Fallback, Lift, LiftRefused };
std::string_view event_kind_name(EventKind k);  // "graph_break"

// Why a segment was cut. The names are stable: tests and tools match on them.
enum class BreakKind : uint8_t { DataDependentBranch, Item, ToList, Numpy, Print, UnsupportedOp, ExplicitSync };
std::string_view break_kind_name(BreakKind k);  // "data_dependent_branch"

struct Event {
  EventKind kind;
  double time = 0;  // seconds since the log started
  std::string fn;
  int entry = -1;
  int segment = -1;
  SourceStack where;
  std::string reason;   // readable
  std::string details;  // compile: graph id and size; graph_break: what Python asked for
  // graph_break only
  BreakKind break_kind = BreakKind::ExplicitSync;
  std::string hint;
  // guard_failure: the failed guard; recompile: the first guard each older entry failed
  GuardFailure guard;
  std::vector<GuardFailure> failures;
  int64_t count = 1;  // cache_hit events of one entry in a row are counted in one record
  // recompile: the sizes it made dynamic ("x.size(0) became dynamic as s0 (sizes 4 and 8 seen)")
  std::string dynamic;
  // recompile: the older entry that came closest (the longest matched prefix, or the one the
  // dynamic-shape step started from): its failure is the recompile's cause. -1: none.
  int closest = -1;
};

// "fn[3]" -> ("fn", 3); false for anything else.
bool parse_entry_id(const std::string& s, std::string* fn, int* entry);

// One compiled segment as the tools show it: id "fn[entry].segment".
class CompiledFunction;

struct GraphRecord {
  std::string fn;
  int entry = 0;
  int segment = 0;
  // The cached segment's own graph (shared with it): a long trace is not held twice.
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const Plan> plan;  // what it runs as (none with backend="eager")
  // How long its steps took: the segment's, so graphs that share the segment share them too.
  std::shared_ptr<SegmentTimes> times;
  int64_t calls = 0;  // calls it served
  // The compiled function it belongs to: expired once that is gone (CaptureLog::graph trims).
  std::weak_ptr<const CompiledFunction> owner;
  // How the segment ends, as the segment says: a graph shared from the entry a call diverged from
  // ends as it does there, and the break events of other entries are not this graph's.
  bool ends_in_break = false;
  BreakKind break_kind = BreakKind::ExplicitSync;
  SourceStack break_where;
  std::string id() const { return fn + "[" + std::to_string(entry) + "]." + std::to_string(segment); }
};

// A graph and a cache entry of another capture, as text: PyTorch's own torch.compile (Dynamo) under
// dynrepl --real-torch (python/dyn/_real_torch.py). dyn cannot run or picture them; the views
// list them beside its own.
struct ForeignGraph {
  std::string fn;
  int entry = 0;
  int segment = 0;
  int ops = 0;
  std::vector<std::string> lines;  // one node per line, with the user's source line
  std::string ends;                // "return", or the graph break that cut it
  std::string id() const { return fn + "[" + std::to_string(entry) + "]." + std::to_string(segment); }
};
struct ForeignEntry {
  std::string fn;
  int entry = 0;
  std::vector<std::string> guards;  // one per line: source, kind, check, user line
};

struct Counters {
  int64_t calls = 0, cache_hits = 0, lifted_hits = 0, compiles = 0, recompiles = 0, graph_breaks = 0,
          guard_failures = 0, fallbacks = 0;
  double trace_s = 0, replay_s = 0, compile_s = 0, execute_s = 0;
  double paused_s = 0;  // stopped at breakpoints (counted in none of the above)
};

// The event history: the newest events, oldest first. Bounded (CaptureLog::set_event_limit): a
// program that keeps recompiling (dyn.compile in a loop) must not grow the log without end.
using EventList = std::deque<Event>;
constexpr size_t kDefaultEventLimit = 10000;
// Graphs of compiled functions that no longer exist (dyn.compile in a loop, each one dropped) are
// kept up to this many, the newest; every graph while the event limit is 0 (keep everything).
constexpr size_t kDeadFunctionGraphs = 1000;

class CaptureLog {
 public:
  static CaptureLog& get();

  void add(Event e);
  // add, after bumping the counter of e's kind (compiles are counted where a plan is compiled, so
  // a Compile event bumps none).
  void add_counted(Event e);
  // Like add, but a cache hit of the same entry as the last event only bumps its count.
  void add_coalesced(Event e);
  const EventList& events() const { return events_; }
  // Events are numbered from 0 in the order they happened, dropped ones included: events()[k]
  // is event number dropped() + k.
  int64_t dropped() const { return dropped_; }
  int64_t last_event_number() const { return dropped_ + static_cast<int64_t>(events_.size()) - 1; }
  // Keeps the newest `limit` events (0: all of them), dropping older ones now and from now on.
  void set_event_limit(size_t limit);
  size_t event_limit() const { return limit_; }
  // Only for the capture's amendments to an event it emitted (a recompile that made sizes
  // dynamic); nullptr when it was dropped since.
  Event* mutable_event(int64_t number) {
    int64_t i = number - dropped_;
    return i >= 0 && i < static_cast<int64_t>(events_.size()) ? &events_[static_cast<size_t>(i)] : nullptr;
  }
  // Only for Capture::retract_recompile.
  void erase_event(int64_t number) {
    int64_t i = number - dropped_;
    if (i >= 0 && i < static_cast<int64_t>(events_.size())) events_.erase(events_.begin() + i);
  }
  Counters& counters() { return counters_; }
  // Stores a compiled graph of `owner` once per id; returns the stored record.
  GraphRecord& graph(const std::string& fn, int entry, int segment, std::shared_ptr<const Graph> g,
                     std::weak_ptr<const CompiledFunction> owner);
  const std::vector<std::unique_ptr<GraphRecord>>& graphs() const { return graphs_; }
  GraphRecord* find_graph(const std::string& id);
  void remove_graph(const std::string& id);
  // Another capture's graphs and entries: stored as given; a later one with the same id replaces.
  void add_foreign_graph(ForeignGraph g);
  void add_foreign_entry(ForeignEntry e);
  const std::vector<ForeignGraph>& foreign_graphs() const { return foreign_graphs_; }
  const std::vector<ForeignEntry>& foreign_entries() const { return foreign_entries_; }
  void reset();
  double now() const;
  // Called after every event is logged (a coalesced cache hit only the first time): the REPL's
  // breakpoints and --events hook in here. The listener may throw; the engine unwinds cleanly.
  using Listener = void (*)(const Event& e, void* ctx);
  void set_listener(Listener l, void* ctx) {
    listener_ = l;
    listener_ctx_ = ctx;
  }

 private:
  CaptureLog();
  EventList events_;
  int64_t dropped_ = 0;
  size_t limit_ = kDefaultEventLimit;
  void trim();
  void trim_dead_graphs();
  Counters counters_;
  std::vector<std::unique_ptr<GraphRecord>> graphs_;
  std::map<std::string, GraphRecord*> by_id_;
  std::vector<ForeignGraph> foreign_graphs_;
  std::vector<ForeignEntry> foreign_entries_;
  Listener listener_ = nullptr;
  void* listener_ctx_ = nullptr;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dyn
