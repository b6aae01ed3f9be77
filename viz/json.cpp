// JSON of capture events.
#include "viz/json.h"

#include <fmt/format.h>

namespace dyn::viz {

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
  SourceLoc t = w.top();
  if (!t.known()) return "\"file\": null, \"line\": null, \"source\": null";
  return fmt::format("\"file\": {}, \"line\": {}, \"source\": {}", json_string(*t.file), t.line,
                     json_string(source_line(*t.file, t.line)));
}

std::string guard_json(const GuardFailure& g) {
  return fmt::format(
      "{{\"entry\": {}, \"guard\": {}, \"what\": {}, \"expected\": {}, \"actual\": {}, \"hint\": {}, {}}}", g.entry,
      json_string(std::string(guard_kind_name(g.kind))), json_string(g.what), json_string(g.expected),
      json_string(g.actual), json_string(g.hint), where_fields(g.where));
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
  }
  return s + "}";
}

}  // namespace dyn::viz
