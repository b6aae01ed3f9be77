// The query interface: the one way the tools read what the engine captured — events, counters,
// graphs, compiled functions with their cache entries and guards — and the few things they may
// do to it (pause at a breakpoint, reset, listen). viz/, repl/, dyn.debug and --events go
// through here; everything handed out is const.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/capture/capture.h"
#include "core/capture/log.h"

namespace dyn::query {

const EventList& events();
// How many old events the bounded history dropped since the start or the last reset, and how many
// it keeps (0: every one).
int64_t events_dropped();
size_t event_limit();
void set_event_limit(size_t n);
const Counters& counters();

// Every compiled segment, in the order it was compiled.
std::vector<const GraphRecord*> graphs();
// A graph by id "fn[e].s"; nullptr when there is none.
const GraphRecord* find_graph(const std::string& id);
// The segment the running compiled call is recording now (while stopped at a recompile, what it
// kept of the entry it diverged from), or nullptr. Valid until the next call.
const GraphRecord* graph_in_progress();

// Another capture's graphs and cache entries (PyTorch's Dynamo under --real-torch), as text.
const std::vector<ForeignGraph>& foreign_graphs();
const std::vector<ForeignEntry>& foreign_entries();

// Compiled functions still alive, oldest first, and the newest one with a name.
std::vector<std::shared_ptr<const CompiledFunction>> functions();
std::shared_ptr<const CompiledFunction> find_function(const std::string& name);

// Forgets the step times of every graph (:profile --reset); graphs, plans and caches stay.
void clear_step_times();

// Called after every event is logged; the REPL's breakpoints and --events hook in here. The
// listener may throw: the engine unwinds cleanly.
void set_listener(CaptureLog::Listener l, void* ctx);

// Forgets every event, graph, plan and cache entry, and runs the hooks the layers above
// registered (the Python package forgets its definitions). A user error while a compiled
// function runs or the script is stopped.
void reset();
void on_reset(void (*hook)(void* ctx), void* ctx);

// While a Pause lives (the script stopped at a breakpoint) nothing syncs or records: lazy
// tensors show their pending node and reading their data is a user error.
class Pause {
 public:
  Pause() { Capture::set_paused(true, held_); }
  // The time stopped is the user's, not the capture's: a stopped call does not count it as tracing.
  ~Pause() {
    Capture::set_paused(false);
    CaptureLog::get().counters().paused_s += CaptureLog::get().now() - start_;
  }
  Pause(const Pause&) = delete;
  Pause& operator=(const Pause&) = delete;

 private:
  Capture* held_ = Capture::active();  // before eager_ takes it off the thread
  EagerScope eager_;
  double start_ = CaptureLog::get().now();
};
bool paused();

// The one serializer of events: a JSON object on one line (--events writes these; dyn.debug
// parses them).
std::string event_json(const Event& e);
std::string json_string(const std::string& s);  // quoted and escaped

}  // namespace dyn::query
