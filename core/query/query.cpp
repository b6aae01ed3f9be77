#include "core/query/query.h"

#include <fmt/format.h>

#include "core/error.h"

namespace dyn::query {

const EventList& events() { return CaptureLog::get().events(); }

int64_t events_dropped() { return CaptureLog::get().dropped(); }

size_t event_limit() { return CaptureLog::get().event_limit(); }

void set_event_limit(size_t n) { CaptureLog::get().set_event_limit(n); }

const Counters& counters() { return CaptureLog::get().counters(); }

std::vector<const GraphRecord*> graphs() {
  std::vector<const GraphRecord*> out;
  for (const auto& r : CaptureLog::get().graphs()) out.push_back(r.get());
  return out;
}

const GraphRecord* find_graph(const std::string& id) { return CaptureLog::get().find_graph(id); }

const std::vector<ForeignGraph>& foreign_graphs() { return CaptureLog::get().foreign_graphs(); }
const std::vector<ForeignEntry>& foreign_entries() { return CaptureLog::get().foreign_entries(); }

const GraphRecord* graph_in_progress() {
  static GraphRecord r;
  // While stopped, the stopped call's capture is off the thread (nothing may record): Pause holds it.
  Capture* c = Capture::active() ? Capture::active() : Capture::paused_capture();
  return c && c->graph_in_progress(&r) ? &r : nullptr;
}

std::vector<std::shared_ptr<const CompiledFunction>> functions() {
  auto live = CompiledFunction::live();
  return {live.begin(), live.end()};
}

std::shared_ptr<const CompiledFunction> find_function(const std::string& name) { return CompiledFunction::find(name); }

void set_listener(CaptureLog::Listener l, void* ctx) { CaptureLog::get().set_listener(l, ctx); }

namespace {
std::vector<std::pair<void (*)(void*), void*>>& reset_hooks() {
  static std::vector<std::pair<void (*)(void*), void*>> h;
  return h;
}
}  // namespace

void on_reset(void (*hook)(void* ctx), void* ctx) { reset_hooks().emplace_back(hook, ctx); }

void clear_step_times() {
  // Zeroed in place: a call stopped at a breakpoint may be holding one of these while it runs.
  for (const auto& r : CaptureLog::get().graphs())
    if (r->times)
      for (PlanTimes& p : r->times->plans) {
        p.runs = 0;
        for (StepTime& t : p.steps) t = StepTime{};
      }
}

void reset() {
  DYN_CHECK(Capture::live() == 0 && !Capture::paused(), ErrorKind::Runtime,
            "a reset cannot run while a compiled function is running (or stopped at a breakpoint); reset after the "
            "call returns");
  CaptureLog::get().reset();
  clear_plan_cache();
  CompiledFunction::reset_all();
  for (auto& [hook, ctx] : reset_hooks()) hook(ctx);
}

bool paused() { return Capture::paused(); }

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {
std::string where_fields(const SourceStack& w) {
  std::string stack = "[";
  for (size_t i = 0; i < w.frames().size(); ++i) {
    const SourceLoc& f = w.frames()[i];
    stack += fmt::format("{}[{}, {}, {}]", i ? ", " : "", json_string(*f.file), f.line,
                         json_string(f.function ? *f.function : "?"));
  }
  stack += "]";
  SourceLoc t = w.top();
  if (!t.known()) return "\"file\": null, \"line\": null, \"source\": null, \"stack\": " + stack;
  return fmt::format("\"file\": {}, \"line\": {}, \"source\": {}, \"stack\": {}", json_string(*t.file), t.line,
                     json_string(source_line(*t.file, t.line)), stack);
}

std::string guard_json(const GuardFailure& g) {
  return fmt::format(
      "{{\"entry\": {}, \"guard\": {}, \"what\": {}, \"expected\": {}, \"actual\": {}, \"hint\": {}, \"text\": {}, "
      "\"cause\": {}, {}}}",
      g.entry, json_string(std::string(guard_kind_name(g.kind))), json_string(g.what), json_string(g.expected),
      json_string(g.actual), json_string(g.hint), json_string(g.str()), json_string(g.cause()), where_fields(g.where));
}
}  // namespace

std::string event_json(const Event& e) {
  std::string s = fmt::format(
      "{{\"kind\": {}, \"time\": {:.6f}, \"fn\": {}, \"entry\": {}, \"segment\": {}, {}, "
      "\"reason\": {}, \"details\": {}",
      json_string(std::string(event_kind_name(e.kind))), e.time, json_string(e.fn), e.entry, e.segment,
      where_fields(e.where), json_string(e.reason), json_string(e.details));
  if (e.kind == EventKind::GraphBreak)
    s += fmt::format(", \"break_kind\": {}, \"hint\": {}", json_string(std::string(break_kind_name(e.break_kind))),
                     json_string(e.hint));
  if (e.kind == EventKind::GuardFailure) s += ", \"guard\": " + guard_json(e.guard);
  if (e.kind == EventKind::CacheHit) s += fmt::format(", \"count\": {}", e.count);
  if (e.kind == EventKind::Recompile) {
    s += ", \"failures\": [";
    for (size_t i = 0; i < e.failures.size(); ++i) s += (i ? ", " : "") + guard_json(e.failures[i]);
    s += "]";
    // The closest entry's hint: it explains why no trace fits.
    const GuardFailure* near = closest_failure(e.failures, e.closest);
    s += ", \"hint\": " + json_string(near ? near->hint : std::string());
    s += fmt::format(", \"closest\": {}", e.closest);
    // The one source the recompile is blamed on (the summary of :why-recompile groups by its key).
    Cause c = cause_of(e.failures, e.closest);
    s += ", \"dynamic\": " + json_string(e.dynamic);
    s += fmt::format(
        ", \"cause\": {{\"key\": {}, \"value\": {}, \"first\": {}, \"where\": {}, \"from\": {}, \"hint\": {}}}",
        json_string(c.key), json_string(c.value), json_string(c.first), json_string(c.where), json_string(c.from),
        json_string(c.hint));
  }
  return s + "}";
}

}  // namespace dyn::query
