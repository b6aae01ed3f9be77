// Text views of the capture log and the compiled functions' caches.
#include "viz/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include "core/error.h"
#include "core/query/query.h"

namespace dyn::viz {

namespace {

std::string where_of(const SourceStack& w) {
  SourceLoc t = w.top();
  return t.known() ? t.str() : std::string();
}

std::string source_of(const SourceStack& w) {
  SourceLoc t = w.top();
  return t.known() ? source_line(*t.file, t.line) : std::string();
}

// Columns padded to their widest cell; the last column is not padded.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) line += i + 1 < r.size() ? fmt::format("{:<{}}  ", r[i], w[i]) : r[i];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

bool known_function(const std::string& fn) {
  if (query::find_function(fn)) return true;
  for (const auto& r : query::graphs())
    if (r->fn == fn) return true;
  for (const Event& e : query::events())
    if (e.fn == fn) return true;
  return false;
}

void check_function(const std::string& fn) {
  if (fn.empty() || known_function(fn)) return;
  std::string names;
  for (const std::string& n : function_names()) names += (names.empty() ? "" : ", ") + n;
  fail(ErrorKind::Value, "no compiled function named '{}'; known: {}", fn, names.empty() ? "none yet" : names);
}

}  // namespace

std::vector<const GraphRecord*> resolve_graphs(const std::string& target) {
  std::vector<const GraphRecord*> out;
  std::string fn;
  int entry = 0;
  if (target == ".") {
    if (const GraphRecord* r = query::graph_in_progress()) return {r};
    fail(ErrorKind::Value,
         "no trace is being recorded: '.' is the trace of a call stopped at a recompile (or a graph break) while it "
         "records; see :graphs for the cached ones");
  }
  if (const GraphRecord* r = query::find_graph(target)) return {r};
  if (parse_entry_id(target, &fn, &entry)) {
    for (const auto& r : query::graphs())
      if (r->fn == fn && r->entry == entry) out.push_back(r);
  } else {
    int newest = -1;
    for (const auto& r : query::graphs())
      if (r->fn == target) newest = std::max(newest, r->entry);
    for (const auto& r : query::graphs())
      if (r->fn == target && r->entry == newest) out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->segment < b->segment; });
  if (out.empty() && !foreign_graphs_of(target).empty())
    fail(ErrorKind::Value,
         "'{}' is a graph of PyTorch's torch.compile (Dynamo): :graph prints it; the pictures, :profile and :diff "
         "are for dyn's own graphs",
         target);
  if (out.empty())
    fail(ErrorKind::Value,
         "no graph '{}': expected a graph id like f[0].1, a cache entry like f[0] or a compiled function's name; "
         "see :graphs",
         target.size() > 60 ? target.substr(0, 60) + "..." : target);
  return out;
}

std::vector<const ForeignGraph*> foreign_graphs_of(const std::string& target) {
  std::vector<const ForeignGraph*> out;
  std::string fn;
  int entry = 0;
  bool is_entry = parse_entry_id(target, &fn, &entry);
  int newest = -1;
  for (const ForeignGraph& g : query::foreign_graphs())
    if (g.fn == target) newest = std::max(newest, g.entry);
  for (const ForeignGraph& g : query::foreign_graphs())
    if (g.id() == target || (is_entry && g.fn == fn && g.entry == entry) || (g.fn == target && g.entry == newest))
      out.push_back(&g);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->segment < b->segment; });
  return out;
}

namespace {

std::string short_text(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

// Step i of times p of graph r, described as :graph -v's plan does.
StepRow step_row(const GraphRecord& r, int plan_index, const PlanTimes& p, size_t i) {
  const Graph& g = *r.graph;
  StepRow row;
  row.graph = &r;
  row.graph_id = r.id();
  row.plan = plan_index;
  row.step = static_cast<int>(i);
  row.runs = p.steps[i].runs;
  row.seconds = p.steps[i].seconds;
  std::vector<int> nodes;
  if (p.plan) {
    const Step& s = p.plan->steps[i];
    row.kind = step_kind_name(s.kind);
    row.what = print_step(g, *p.plan, i);
    if (s.kind == StepKind::Fused)
      nodes = fused_nodes(p.plan->loop(s));
    else if (s.kind != StepKind::Free)
      nodes = {s.node};
  } else {
    row.kind = "node";
    row.what = print_node(g, g.nodes[i]);
    if (size_t hash = row.what.find("  #"); hash != std::string::npos) row.what.resize(hash);
    while (!row.what.empty() && row.what.back() == ' ') row.what.pop_back();
    nodes = {static_cast<int>(i)};
  }
  // A fused step's lines: those of the file its first node is in.
  for (int k : nodes) {
    SourceLoc t = g.nodes[static_cast<size_t>(k)].where.top();
    if (!t.known()) continue;
    if (row.file.empty()) {
      row.file = *t.file;
      row.text = source_line(*t.file, t.line);
    }
    if (*t.file == row.file && std::find(row.lines.begin(), row.lines.end(), t.line) == row.lines.end())
      row.lines.push_back(t.line);
  }
  return row;
}

// "a.py:12" or, for a fused step, "a.py:12,13,15" (at most four lines).
std::string where_text(const StepRow& r) {
  if (r.file.empty()) return "";
  SourceLoc first;
  first.file = &r.file;
  first.line = r.lines[0];
  std::string out = first.str();
  for (size_t i = 1; i < r.lines.size() && i < 4; ++i) out += "," + std::to_string(r.lines[i]);
  if (r.lines.size() > 4) out += ",...";
  return out;
}

// A step time: ms down to 1 ms, us below (as PyTorch's profiler prints).
// The graph id of a row, with its plan when the segment ran more than one.
std::string graph_cell(const StepRow& r) {
  return r.graph->times->plans.size() > 1 ? fmt::format("{} plan {}", r.graph->id(), r.plan + 1) : r.graph->id();
}

std::string ms(double s) { return s >= 1e-3 ? fmt::format("{:.3f} ms", s * 1e3) : fmt::format("{:.1f} us", s * 1e6); }

// Right-aligned to a fixed width, so that a table's columns do not move with the digits.
std::string share(double part, double whole) {
  return fmt::format("{:>7}", whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-");
}

std::string time_cell(double s) { return fmt::format("{:>11}", ms(s)); }

// Free steps only drop references: one row for all of them (Python's profile() lists each).
void add_free_row(std::span<const StepRow> rows, double whole, std::vector<std::vector<std::string>>* cells,
                  size_t graph_column) {
  double t = 0;
  int n = 0;
  for (const StepRow& r : rows)
    if (r.kind == "free") t += r.seconds, ++n;
  if (!n) return;
  std::vector<std::string> c = {share(t, whole),
                                time_cell(t),
                                "",
                                "",
                                "",
                                "free",
                                fmt::format("{} step{} releasing buffers", n, n == 1 ? "" : "s"),
                                ""};
  if (graph_column) c.insert(c.begin() + 4, "");
  cells->push_back(std::move(c));
}

std::string how_it_ends(const GraphRecord& r) {
  if (r.ends_in_break)
    return fmt::format("graph break ({}) at {}", break_kind_name(r.break_kind), where_of(r.break_where));
  for (const auto& other : query::graphs())
    if (other->fn == r.fn && other->entry == r.entry && other->segment == r.segment + 1) return "graph break";
  return "return";
}

}  // namespace

std::vector<std::string> function_names() {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& fn : query::functions())
    if (seen.insert(fn->name()).second) out.push_back(fn->name());
  for (const auto& r : query::graphs())
    if (seen.insert(r->fn).second) out.push_back(r->fn);
  for (const ForeignGraph& g : query::foreign_graphs())
    if (seen.insert(g.fn).second) out.push_back(g.fn);
  return out;
}

std::vector<std::string> graph_ids() {
  std::vector<std::string> out;
  std::set<std::string> entries;
  for (const auto& r : query::graphs()) {
    out.push_back(r->id());
    std::string e = r->fn + "[" + std::to_string(r->entry) + "]";
    if (entries.insert(e).second) out.push_back(e);
  }
  return out;
}

std::string graphs_table(const std::string& fn) {
  check_function(fn);
  std::vector<std::vector<std::string>> rows = {{"id", "function", "entry", "segment", "ops", "calls", "ends with"}};
  // dyn.debug.explain's one-off functions are listed when asked for by name, not among the program's.
  std::set<std::string> explained;
  for (const auto& r : query::graphs()) {
    if (!fn.empty() && r->fn != fn) continue;
    if (fn.empty() && r->fn.rfind("explain(", 0) == 0) {
      explained.insert(r->fn);
      continue;
    }
    rows.push_back({r->id(), r->fn, std::to_string(r->entry), std::to_string(r->segment),
                    std::to_string(r->graph->nodes.size()), std::to_string(r->calls), how_it_ends(*r)});
  }
  // Dynamo counts no calls of its graphs.
  for (const ForeignGraph& g : query::foreign_graphs())
    if (fn.empty() || g.fn == fn)
      rows.push_back(
          {g.id(), g.fn, std::to_string(g.entry), std::to_string(g.segment), std::to_string(g.ops), "-", g.ends});
  std::string note;
  for (const std::string& e : explained) note += (note.empty() ? "" : ", ") + e;
  if (!note.empty())
    note = "(not listed: the graphs of dyn.debug.explain runs, :graphs NAME shows them: " + note + ")\n";
  if (rows.size() == 1)
    return (fn.empty() ? "no graphs captured yet: call a dyn.compile'd function\n"
                       : fmt::format("'{}' has no graphs yet\n", fn)) +
           note;
  return table(rows) + note;
}

std::string graph_text(const std::string& target, bool verbose) {
  std::string out;
  if (auto foreign = foreign_graphs_of(target); !foreign.empty() && !query::find_graph(target)) {
    for (const ForeignGraph* g : foreign) {
      if (!out.empty()) out += "\n";
      out += fmt::format("graph {}  ({} ops, PyTorch Dynamo's, ends with {})\n", g->id(), g->ops, g->ends);
      for (const std::string& l : g->lines) out += "  " + l + "\n";
    }
    return out;
  }
  for (const GraphRecord* r : resolve_graphs(target)) {
    if (!out.empty()) out += "\n";
    out += fmt::format("graph {}  ({} ops, {} calls, ends with {})\n", r->id(), r->graph->nodes.size(), r->calls,
                       how_it_ends(*r));
    out += print_graph(*r->graph, verbose);
    if (verbose && r->plan) out += "plan:\n" + print_plan(*r->graph, *r->plan);
  }
  return out;
}

std::string breaks_text(const std::string& fn) {
  check_function(fn);
  std::string out;
  int n = 0;
  for (const Event& e : query::events()) {
    if (e.kind != EventKind::GraphBreak || (!fn.empty() && e.fn != fn)) continue;
    std::string text = source_of(e.where);
    out += fmt::format("{}. {}[{}] after segment {}  {}{}\n", ++n, e.fn, e.entry, e.segment, where_of(e.where),
                       text.empty() ? "" : "  " + text);
    out += fmt::format("   asked for: {}\n   reason:    {} [{}]\n", e.details, e.reason, break_kind_name(e.break_kind));
    if (!e.hint.empty()) out += fmt::format("   hint:      {}\n", e.hint);
  }
  if (n == 0) return fn.empty() ? "no graph breaks\n" : fmt::format("no graph breaks in '{}'\n", fn);
  return out;
}

std::string guards_text(const std::string& fn) {
  check_function(fn);
  std::string out;
  for (const auto& f : query::functions()) {
    if (!fn.empty() && f->name() != fn) continue;
    if (f->num_entries() == 0) continue;
    for (int e = 0; e < f->num_entries(); ++e) {
      auto lines = f->guard_lines(e);
      const Entry& entry = f->entries()[e];
      int64_t hits = entry.hits;
      out += fmt::format("{}[{}]: {} guards, {} hit{}{}\n", f->name(), e, lines.size() + entry.python_guards.size(),
                         hits, hits == 1 ? "" : "s",
                         entry.lifted ? fmt::format(" ({} without running the body)", entry.lifted_hits) : "");
      for (const std::string& l : lines) out += "  " + l + "\n";
      // Tier 2: what a lifted call checks instead of running the body (Python values, by source).
      for (const std::string& l : entry.python_guards) out += "  python: " + l + "\n";
    }
  }
  for (const ForeignEntry& e : query::foreign_entries()) {
    if (!fn.empty() && e.fn != fn) continue;
    out +=
        fmt::format("{}[{}]: {} guards (PyTorch Dynamo's entry; it counts no hits)\n", e.fn, e.entry, e.guards.size());
    for (const std::string& l : e.guards) out += "  " + l + "\n";
  }
  if (out.empty()) return fn.empty() ? "no cache entries yet\n" : fmt::format("'{}' has no cache entries\n", fn);
  return out;
}

namespace {
// One cause and the recompiles it made.
struct CauseGroup {
  Cause cause;
  std::vector<std::string> values;
  size_t count = 0;
};

// The summary :why-recompile starts with, per function: its recompiles grouped by cause.
std::string cause_summary(const std::string& fn) {
  std::map<std::string, std::vector<CauseGroup>> by_fn;
  std::vector<std::string> order;
  for (const Event& e : query::events()) {
    if (e.kind != EventKind::Recompile || (!fn.empty() && e.fn != fn)) continue;
    if (!by_fn.count(e.fn)) order.push_back(e.fn);
    auto& groups = by_fn[e.fn];
    Cause c = e.failures.size() == 1 && e.failures[0].entry < 0 ? Cause{"re-created", "", "", "", e.failures[0].hint}
                                                                : cause_of(e.failures, e.closest);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const CauseGroup& g) { return g.cause.key == c.key; });
    if (it == groups.end()) it = groups.insert(groups.end(), CauseGroup{c, {}, 0});
    // The newest recompile's hint: what holds now (a size the last recompile made dynamic).
    it->cause.hint = c.hint;
    if (!c.value.empty() && c.has_value) it->values.push_back(c.value);
    it->count++;
  }
  std::string out;
  for (const std::string& f : order) {
    const auto& groups = by_fn[f];
    size_t total = 0;
    for (const CauseGroup& g : groups) total += g.count;
    auto because = [](const CauseGroup& g) {
      if (g.cause.key == "re-created") return std::string("the compiled function was created anew");
      std::string s = g.cause.key;
      if (!g.cause.from.empty()) s += " (" + g.cause.from + ")";
      // "constant 'n' (local) of add changed" took the value 3: the verb comes once.
      if (!g.values.empty() && s.size() > 8 && s.compare(s.size() - 8, 8, " changed") == 0) s.resize(s.size() - 8);
      if (!g.values.empty()) {
        std::string vals;
        for (size_t i = 0; i < g.values.size(); ++i) vals += (i ? ", " : "") + g.values[i];
        s += fmt::format(" took {} {}", g.values.size() == 1 ? "the value" : "the values", vals);
      }
      std::string ctx;
      if (!g.cause.first.empty() && g.cause.has_value) ctx += "first traced with " + g.cause.first;
      if (!g.cause.where.empty() && g.cause.key.find(" at " + g.cause.where) == std::string::npos)
        ctx += (ctx.empty() ? "" : "; ") + std::string(g.cause.key[0] == '`' ? "used at " : "at ") + g.cause.where;
      return ctx.empty() ? s : s + " (" + ctx + ")";
    };
    auto recompiles = [](size_t n) { return fmt::format("{} recompile{}", n, n == 1 ? "" : "s"); };
    if (groups.size() == 1) {
      out += fmt::format("{}: {}, {}because {}\n", f, recompiles(total), total > 1 ? "all " : "", because(groups[0]));
      if (!groups[0].cause.hint.empty()) out += "  hint: " + groups[0].cause.hint + "\n";
    } else {
      out += fmt::format("{}: {} from {} causes\n", f, recompiles(total), groups.size());
      for (const CauseGroup& g : groups) {
        out += fmt::format("  {} because {}\n", recompiles(g.count), because(g));
        if (!g.cause.hint.empty()) out += "    hint: " + g.cause.hint + "\n";
      }
    }
    for (const Event& e : query::events())
      if (e.kind == EventKind::Recompile && e.fn == f && !e.dynamic.empty())
        out += fmt::format("  dynamic since {}[{}]: {}\n", f, e.entry, e.dynamic);
  }
  return out;
}
}  // namespace

std::string why_recompile_text(const std::string& fn) {
  check_function(fn);
  std::string out = cause_summary(fn);
  if (!out.empty()) out += "\n";
  for (const Event& e : query::events()) {
    if (e.kind != EventKind::Recompile || (!fn.empty() && e.fn != fn)) continue;
    auto f = query::find_function(e.fn);
    std::string defined = f && !f->defined_at.empty() ? " (compiled at " + f->defined_at + ")" : "";
    out += fmt::format("{}{}: {}\n", e.fn, defined, e.reason);
    for (const GuardFailure& g : e.failures) {
      std::string text = source_of(g.where);
      // Against any other entry more than one thing may differ: the closest one's failure is the cause.
      std::string closest = e.failures.size() > 1 && g.entry == e.closest ? " (the closest entry: the cause)" : "";
      if (g.entry >= 0)
        out += fmt::format("  {}[{}] failed {}{}: {}", e.fn, g.entry, guard_kind_name(g.kind), closest, g.what);
      else
        out += fmt::format("  {}", g.what);
      if (!g.expected.empty() || !g.actual.empty())
        out += fmt::format(": expected {}, actual {}", g.expected, g.actual);
      out += "\n";
      if (!g.cause_name.empty()) out += "      because " + g.cause() + "\n";
      if (g.where.top().known())
        out += fmt::format("      at {}{}\n", where_of(g.where), text.empty() ? "" : "  " + text);
      if (!g.hint.empty()) out += fmt::format("      hint: {}\n", g.hint);
    }
  }
  if (out.empty()) return fn.empty() ? "no recompiles\n" : fmt::format("no recompiles of '{}'\n", fn);
  return out;
}

std::string events_text(const std::string& kind_in, const std::string& fn) {
  std::string kind = kind_in;
  std::replace(kind.begin(), kind.end(), '-', '_');
  static const std::set<std::string> kinds = {"compile",   "cache_hit", "graph_break", "guard_failure",
                                              "recompile", "fallback",  "lift",        "lift_refused"};
  if (!kind.empty() && !kinds.count(kind))
    fail(
        ErrorKind::Value,
        "unknown event kind '{}'; expected one of compile, cache-hit, graph-break, guard-failure, recompile, fallback, "
        "lift, lift-refused",
        kind_in);
  check_function(fn);
  std::vector<std::vector<std::string>> rows = {{"#", "time", "kind", "where", "what"}};
  // Numbers count every event since the start (or :reset), so they stay the same as old ones go.
  int64_t i = query::events_dropped();
  for (const Event& e : query::events()) {
    ++i;
    if ((!kind.empty() && event_kind_name(e.kind) != kind) || (!fn.empty() && e.fn != fn)) continue;
    std::string id = e.entry >= 0 ? fmt::format("{}[{}]", e.fn, e.entry) : e.fn;
    if (e.segment >= 0 && (e.kind == EventKind::Compile || e.kind == EventKind::GraphBreak))
      id += "." + std::to_string(e.segment);
    std::string what = e.kind == EventKind::CacheHit  ? fmt::format("{} x{}", id, e.count)
                       : e.kind == EventKind::Compile ? e.details
                                                      : id + ": " + e.reason;
    std::string kname(event_kind_name(e.kind));
    std::replace(kname.begin(), kname.end(), '_', '-');
    rows.push_back({std::to_string(i), fmt::format("{:.4f}s", e.time), kname, where_of(e.where), what});
  }
  std::string note;
  if (int64_t dropped = query::events_dropped(); dropped > 0)
    note = fmt::format(
        "({} older event{} dropped: the history keeps the newest {}; dynrepl --event-limit N or "
        "dyn.debug.set_event_limit(n) changes that, 0 keeps every event, and --events FILE writes each one as it "
        "happens)\n",
        dropped, dropped == 1 ? " was" : "s were", query::event_limit());
  if (rows.size() == 1) return note + "no events\n";
  return note + table(rows);
}

std::vector<StepRow> step_rows(const std::string& target) {
  std::vector<const GraphRecord*> records;
  if (target.empty()) {
    // As in :graphs, dyn.debug.explain's one-off runs are shown when asked for by name.
    for (const auto& r : query::graphs())
      if (r->fn.rfind("explain(", 0) != 0) records.push_back(r);
  } else if (std::vector<const GraphRecord*> all = query::graphs();
             query::find_function(target) &&
             std::none_of(all.begin(), all.end(), [&](const GraphRecord* r) { return r->fn == target; })) {
    return {};  // a compiled function not called yet (or since a reset): no steps, not an error
  } else {
    records = resolve_graphs(target);
  }
  std::vector<StepRow> out;
  std::set<const SegmentTimes*> seen;
  for (const GraphRecord* r : records) {
    if (!r->times || !seen.insert(r->times.get()).second) continue;
    for (size_t p = 0; p < r->times->plans.size(); ++p) {
      const PlanTimes& t = r->times->plans[p];
      // Times belong to the record's own graph (CaptureLog::graph keeps the two together).
      bool fits = t.plan ? std::all_of(t.plan->steps.begin(), t.plan->steps.end(),
                                       [&](const Step& s) { return s.node < static_cast<int>(r->graph->nodes.size()); })
                         : t.steps.size() == r->graph->nodes.size();
      if (!fits) continue;
      for (size_t i = 0; i < t.steps.size(); ++i)
        if (t.steps[i].runs > 0) out.push_back(step_row(*r, static_cast<int>(p), t, i));
    }
  }
  return out;
}

std::string profile_text(const std::string& target) {
  std::vector<StepRow> rows = step_rows(target);
  if (rows.empty()) {
    if (target.empty() && query::graphs().empty())
      return query::foreign_graphs().empty() ? "no graphs captured yet: call a dyn.compile'd function\n"
                                             : "no step times: PyTorch's Dynamo does not expose them\n";
    return fmt::format("no plan steps{} have run yet (or since :profile --reset cleared the times)\n",
                       target.empty() ? "" : " of '" + target + "'");
  }
  auto row_cells = [](const StepRow& r, double whole) {
    std::string where = where_text(r);
    if (!where.empty() && !r.text.empty()) where += "  " + short_text(r.text, 50);
    return std::vector<std::string>{share(r.seconds, whole),
                                    time_cell(r.seconds),
                                    time_cell(r.seconds / static_cast<double>(r.runs)),
                                    std::to_string(r.runs),
                                    std::to_string(r.step),
                                    r.kind,
                                    short_text(r.what, 72),
                                    where};
  };
  std::string out;
  if (!target.empty()) {
    // One graph or entry: each graph's steps in plan order, the share of that graph's time.
    for (size_t a = 0; a < rows.size();) {
      size_t b = a;
      double whole = 0;
      while (b < rows.size() && rows[b].graph == rows[a].graph && rows[b].plan == rows[a].plan)
        whole += rows[b++].seconds;
      const GraphRecord& g = *rows[a].graph;
      const PlanTimes& t = g.times->plans[static_cast<size_t>(rows[a].plan)];
      if (!out.empty()) out += "\n";
      out += fmt::format("graph {}{}: {} run{}, {} in its steps, {} a run\n", g.id(),
                         g.times->plans.size() > 1
                             ? fmt::format(" (plan {} of {}{})", rows[a].plan + 1, g.times->plans.size(),
                                           t.plan == g.plan ? "" : ": for calls that keep more of its values alive")
                             : std::string(),
                         t.runs, t.runs == 1 ? "" : "s", ms(whole),
                         t.runs ? ms(whole / static_cast<double>(t.runs)) : "-");
      std::vector<std::vector<std::string>> cells = {
          {"share", "time", "a run", "runs", "step", "kind", "what", "where"}};
      for (size_t i = a; i < b; ++i)
        if (rows[i].kind != "free") cells.push_back(row_cells(rows[i], whole));
      add_free_row(std::span(rows.data() + a, b - a), whole, &cells, 0);
      std::string body = table(cells);
      for (size_t i = 0; i < body.size();) {  // indented under the graph's line
        size_t nl = body.find('\n', i);
        out += "  " + body.substr(i, nl - i + 1);
        i = nl + 1;
      }
      a = b;
    }
    return out;
  }
  // Every graph: the hottest steps, then each graph's total.
  double whole = 0;
  for (const StepRow& r : rows) whole += r.seconds;
  std::vector<const StepRow*> order;
  for (const StepRow& r : rows)
    if (r.kind != "free") order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](auto* x, auto* y) { return x->seconds > y->seconds; });
  constexpr size_t kTop = 15;
  out += order.size() <= kTop
             ? fmt::format("the {} that ran, by time ({} in all; :profile ID shows one graph's in order):\n",
                           order.size() == 1 ? std::string("step") : fmt::format("{} steps", order.size()), ms(whole))
             : fmt::format("the {} of {} steps that took the most time ({} in all; :profile ID shows one graph's):\n",
                           kTop, order.size(), ms(whole));
  std::vector<std::vector<std::string>> cells = {
      {"share", "time", "a run", "runs", "graph", "step", "kind", "what", "where"}};
  for (size_t i = 0; i < order.size() && i < kTop; ++i) {
    std::vector<std::string> c = row_cells(*order[i], whole);
    c.insert(c.begin() + 4, graph_cell(*order[i]));
    cells.push_back(std::move(c));
  }
  add_free_row(rows, whole, &cells, 1);
  out += table(cells);
  std::vector<std::vector<std::string>> graphs = {{"share", "time", "runs", "graph", "steps"}};
  for (size_t a = 0; a < rows.size();) {
    size_t b = a;
    double t = 0;
    while (b < rows.size() && rows[b].graph == rows[a].graph) t += rows[b++].seconds;
    int64_t runs = 0;
    for (const PlanTimes& p : rows[a].graph->times->plans) runs += p.runs;
    int steps = 0;
    for (size_t i = a; i < b; ++i) steps += rows[i].kind != "free";
    graphs.push_back({share(t, whole), time_cell(t), std::to_string(runs), rows[a].graph->id(), std::to_string(steps)});
    a = b;
  }
  out += "by graph:\n" + table(graphs);
  // By the user's line: a training step's backward is one line (loss.backward()), its optimizer
  // another, its forward a line per layer. A fused step's lines count as one place.
  std::map<std::string, std::pair<double, int>> lines;
  std::map<std::string, std::string> text;
  for (const StepRow& r : rows) {
    if (r.kind == "free") continue;
    std::string w = where_text(r);
    if (w.empty()) w = "<unknown>";
    auto& l = lines[w];
    l.first += r.seconds;
    ++l.second;
    text[w] = r.text;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> by_line(lines.begin(), lines.end());
  std::stable_sort(by_line.begin(), by_line.end(),
                   [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
  constexpr size_t kTopLines = 10;
  std::vector<std::vector<std::string>> line_cells = {{"share", "time", "steps", "where"}};
  for (size_t i = 0; i < by_line.size() && i < kTopLines; ++i) {
    const auto& [w, l] = by_line[i];
    const std::string& t = text[w];
    line_cells.push_back({share(l.first, whole), time_cell(l.first), std::to_string(l.second),
                          t.empty() ? w : w + "  " + short_text(t, 60)});
  }
  out += (by_line.size() > kTopLines
              ? fmt::format("by line (the {} of {} lines that took the most time):\n", kTopLines, by_line.size())
              : std::string("by line:\n")) +
         table(line_cells);
  return out;
}

std::string why_python_text(const std::string& fn) {
  check_function(fn);
  std::string out;
  for (const auto& f : query::functions()) {
    if (!fn.empty() && f->name() != fn) continue;
    if (f->num_entries() == 0) continue;
    if (!f->lift_on) {
      out += fmt::format("{}: tier 1 only: lifting is off for it (dyn.compile(lift=False) or DYN_LIFT=0)\n", f->name());
      continue;
    }
    for (int e = 0; e < f->num_entries(); ++e) {
      const Entry& entry = f->entries()[e];
      if (entry.lifted) {
        out += fmt::format("{}[{}]: lifted: {} of {} hits ran without the body; {} Python guard{} (:guards {})\n",
                           f->name(), e, entry.lifted_hits, entry.hits, entry.python_guards.size(),
                           entry.python_guards.size() == 1 ? "" : "s", f->name());
        if (!entry.last_miss.empty())
          out += fmt::format("  {} call{} it did not serve; the last: {}\n", entry.misses, entry.misses == 1 ? "" : "s",
                             entry.last_miss);
      } else if (!entry.tier1_reason.empty()) {
        out += fmt::format("{}[{}]: the body runs at each call: {}\n", f->name(), e, entry.tier1_reason);
        if (!entry.tier1_where.empty()) {
          std::string where = entry.tier1_where;
          size_t colon = where.rfind(':');
          std::string text;
          if (colon != std::string::npos) {
            try {
              text = source_line(where.substr(0, colon), std::stoi(where.substr(colon + 1)));
            } catch (...) {
              text.clear();
            }
          }
          size_t slash = where.rfind('/', colon);
          out += fmt::format("  at {}{}\n", slash == std::string::npos ? where : where.substr(slash + 1),
                             text.empty() ? "" : "  `" + text + "`");
        }
      } else {
        out += fmt::format(
            "{}[{}]: not analyzed yet: no call has replayed it (the analysis runs on the first "
            "call after the one that recorded it)\n",
            f->name(), e);
      }
    }
  }
  if (out.empty()) return fn.empty() ? "no cache entries yet\n" : fmt::format("'{}' has no cache entries\n", fn);
  {
    double s = 0;
    for (const auto& f : query::functions())
      if (fn.empty() || f->name() == fn) s += f->lift_s;
    if (s > 0) out += fmt::format("analysis time: {:.1f} ms in all\n", s * 1e3);
  }
  return out;
}

std::string stats_text() {
  const Counters& c = query::counters();
  std::string out = fmt::format(
      "calls {}  cache hits {}{}  compiles {}  recompiles {}  graph breaks {}  guard failures {}  fallbacks {}  "
      "graphs {}{}\n",
      c.calls, c.cache_hits,
      c.lifted_hits > 0 ? fmt::format(" ({} without running the body)", c.lifted_hits) : std::string(), c.compiles,
      c.recompiles, c.graph_breaks, c.guard_failures, c.fallbacks,
      query::graphs().size() + query::foreign_graphs().size(),
      query::events_dropped() > 0 ? fmt::format("  events dropped {} (the history keeps the newest {})",
                                                query::events_dropped(), query::event_limit())
                                  : std::string());
  out += fmt::format("time: trace {:.3f} ms  replay {:.3f} ms  compile {:.3f} ms  execute {:.3f} ms{}\n",
                     c.trace_s * 1e3, c.replay_s * 1e3, c.compile_s * 1e3, c.execute_s * 1e3,
                     c.paused_s > 0
                         ? fmt::format("  (stopped at breakpoints {:.3f} ms, counted in none)", c.paused_s * 1e3)
                         : std::string());
  {
    int lifted = 0, entries = 0;
    double analysis = 0;
    for (const auto& f : query::functions()) {
      analysis += f->lift_s;
      for (const Entry& e : f->entries()) {
        entries++;
        lifted += e.lifted ? 1 : 0;
      }
    }
    if (analysis > 0 && entries > 0)
      out += fmt::format(
          "trace once: {} of {} entries run without the body; their one-time analysis {:.3f} ms "
          "(:why-python)\n",
          lifted, entries, analysis * 1e3);
  }
  std::vector<std::vector<std::string>> rows = {{"function", "calls", "entries", "hits", "recompiles", ""}};
  for (const auto& f : query::functions()) {
    if (f->calls == 0 || f->name().rfind("explain(", 0) == 0) continue;
    int64_t hits = 0;
    for (const Entry& e : f->entries()) hits += e.hits;
    std::string hits_text = std::to_string(hits);
    if (f->lifted_hits > 0) hits_text += fmt::format(" ({} lifted)", f->lifted_hits);
    int64_t recompiles = f->recompiles;
    const auto& causes = f->recompile_causes;
    std::string flag;
    if (f->fallen_back())
      flag = "fell back to eager: cache_limit reached (see :events fallback " + f->name() + ")";
    else if (recompiles >= 2 && causes.size() == 1 && !causes.begin()->first.empty())
      // A storm with one root cause: the one thing to fix.
      flag = fmt::format("{} recompiles, one cause: {} (see :why-recompile {})", recompiles, causes.begin()->first,
                         f->name());
    else if (f->num_entries() >= 2 && f->num_entries() + 1 >= f->options().cache_limit)
      flag = fmt::format(
          "{} of cache_limit={} entries used: the next recompile falls back to eager (see "
          ":why-recompile {})",
          f->num_entries(), f->options().cache_limit, f->name());
    else if (recompiles >= 3)
      flag = fmt::format("{} recompiles from {} causes (see :why-recompile {})", recompiles, causes.size(), f->name());
    rows.push_back({f->name(), std::to_string(f->calls), std::to_string(f->num_entries()), hits_text,
                    std::to_string(recompiles), flag});
  }
  if (rows.size() > 1) out += table(rows);
  return out;
}

namespace {

// Lines of a and b aligned by their longest common subsequence: " x", "-x", "+x".
std::vector<std::string> line_diff(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> L(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;) L[i][j] = a[i] == b[j] ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  std::vector<std::string> out;
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) {
      out.push_back("  " + a[i]);
      ++i, ++j;
    } else if (L[i + 1][j] >= L[i][j + 1]) {
      out.push_back("- " + a[i++]);
    } else {
      out.push_back("+ " + b[j++]);
    }
  }
  while (i < n) out.push_back("- " + a[i++]);
  while (j < m) out.push_back("+ " + b[j++]);
  return out;
}

// Two columns of a line diff: unchanged lines on both sides (runs longer than 6 collapsed), a
// block of removed lines beside the block added in its place, each cell cut to width.
std::string side_by_side(const std::vector<std::string>& d, const std::string& a, const std::string& b) {
  struct Row {
    char mark;  // ' ' same, '~' changed, '-' only left, '+' only right
    std::string left, right;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < d.size();) {
    if (d[i][0] == ' ') {
      rows.push_back({' ', d[i].substr(2), d[i].substr(2)});
      ++i;
      continue;
    }
    std::vector<std::string> minus, plus;
    while (i < d.size() && d[i][0] == '-') minus.push_back(d[i++].substr(2));
    while (i < d.size() && d[i][0] == '+') plus.push_back(d[i++].substr(2));
    for (size_t k = 0; k < std::max(minus.size(), plus.size()); ++k)
      rows.push_back({k < minus.size() && k < plus.size() ? '~'
                      : k < minus.size()                  ? '-'
                                                          : '+',
                      k < minus.size() ? minus[k] : "", k < plus.size() ? plus[k] : ""});
  }
  const size_t kWidth = 58;
  auto cut = [&](const std::string& t) { return t.size() <= kWidth ? t : t.substr(0, kWidth - 3) + "..."; };
  std::string out = fmt::format("    {:<{}} | {}\n", cut(a), kWidth, cut(b));
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].mark == ' ') ++j;
    if (j - i > 6) {  // a long unchanged run: its ends, and how much is left out
      for (size_t k = i; k < i + 2; ++k)
        out += fmt::format("    {:<{}} | {}\n", cut(rows[k].left), kWidth, cut(rows[k].right));
      out += fmt::format("    {:<{}} | ...\n", fmt::format("... {} unchanged ...", j - i - 4), kWidth);
      for (size_t k = j - 2; k < j; ++k)
        out += fmt::format("    {:<{}} | {}\n", cut(rows[k].left), kWidth, cut(rows[k].right));
      i = j;
      continue;
    }
    const Row& r = rows[i];
    out += fmt::format("  {} {:<{}} | {}\n", r.mark, cut(r.left), kWidth, cut(r.right));
    ++i;
  }
  return out;
}

// A node without its value numbers' comment: what the diff compares.
std::vector<std::string> node_lines(const GraphRecord& r) {
  std::vector<std::string> out;
  for (int id : r.graph->inputs) {
    const Value& v = r.graph->values[id];
    out.push_back(fmt::format(
        "input {} {}", v.input_name().empty() ? "%" + std::to_string(id) : "'" + v.input_name() + "'", value_meta(v)));
  }
  for (const Node& n : r.graph->nodes) {
    std::string t = print_node(*r.graph, n);
    size_t hash = t.find("  # ");
    std::string src = hash == std::string::npos ? "" : t.substr(hash + 2);
    src = src.substr(0, src.find("  "));  // "# file:line": the source text is in the graph's listing
    t = hash == std::string::npos ? t : t.substr(0, hash);
    while (!t.empty() && t.back() == ' ') t.pop_back();
    out.push_back(src.empty() ? t : t + "  " + src);
  }
  return out;
}

std::vector<std::string> guard_lines_of(const std::string& entry_id) {
  std::string name;
  int e = 0;
  if (!parse_entry_id(entry_id, &name, &e)) return {};
  auto f = query::find_function(name);
  if (!f || e >= f->num_entries()) return {};
  return f->guard_lines(e);
}

}  // namespace

std::string diff_text(const std::string& a, const std::string& b) {
  auto ga = resolve_graphs(a), gb = resolve_graphs(b);
  auto label = [](const std::string& t, const std::vector<const GraphRecord*>& g) {
    return t == "." ? fmt::format(". ({}[{}].{} being recorded)", g[0]->fn, g[0]->entry, g[0]->segment) : t;
  };
  std::string la_ = label(a, ga), lb_ = label(b, gb);
  std::string out = fmt::format("--- {}\n+++ {}\n", la_, lb_);
  // Guards are an entry's: "." has none yet.
  bool entries = (ga.size() > 1 || gb.size() > 1 || a.back() == ']' || b.back() == ']') && a != "." && b != ".";
  if (entries) {
    auto la = guard_lines_of(a), lb = guard_lines_of(b);
    if (!la.empty() || !lb.empty()) {
      out += "guards:\n";
      for (const std::string& l : line_diff(la, lb))
        if (l[0] != ' ') out += "  " + l + "\n";
    }
  }
  // "." is one segment, the one being recorded: it is compared with the same segment of the other.
  size_t first = 0, segs = std::max(ga.size(), gb.size());
  if (a == "." || b == ".") {
    first = static_cast<size_t>((a == "." ? ga : gb)[0]->segment);
    segs = first + 1;
  }
  auto seg_of = [&](const std::vector<const GraphRecord*>& g, const std::string& t, size_t s) -> const GraphRecord* {
    if (t == ".") return g[0];
    for (const GraphRecord* r : g)
      if (static_cast<size_t>(r->segment) == s) return r;
    return nullptr;
  };
  for (size_t s = first; s < segs; ++s) {
    const GraphRecord* ra = seg_of(ga, a, s);
    const GraphRecord* rb = seg_of(gb, b, s);
    std::vector<std::string> na = ra ? node_lines(*ra) : std::vector<std::string>{};
    std::vector<std::string> nb = rb ? node_lines(*rb) : std::vector<std::string>{};
    auto d = line_diff(na, nb);
    size_t at = 0;
    while (at < d.size() && d[at][0] == ' ') ++at;
    bool same = at == d.size();
    // "." ends where the call left the entry: say so, the failed guard says what came instead.
    std::string note;
    if (a == "." || b == ".") {
      const GraphRecord* now = a == "." ? ra : rb;
      note = fmt::format(
          "  (. is being recorded: {} node{} so far; the call left the cached trace after them, where the "
          "failed guard says)\n",
          now->graph->nodes.size(), now->graph->nodes.size() == 1 ? "" : "s");
    }
    if (same) {
      out += fmt::format("segment {}: same nodes\n", s) + note;
      continue;
    }
    out += fmt::format("segment {}: nodes differ from line {} on (inputs first, then nodes)\n", s, at + 1);
    out += side_by_side(d, la_, lb_) + note;
  }
  return out;
}

}  // namespace dyn::viz
