// The command table: one row per command drives dispatch, :help, completion and "did you mean".
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/error.h"
#include "core/query/query.h"
#include "repl/session.h"
#include "repl/text.h"
#include "repl/write_file.h"
#include "viz/dot.h"
#include "viz/render.h"
#include "viz/report.h"
#include "viz/views.h"

namespace dyn::repl {

namespace {

using Args = std::vector<std::string>;

void at_most(const Args& a, size_t n, const char* usage) {
  if (a.size() > n) throw CommandError{fmt::format("too many arguments; usage: {}", usage)};
}

// The newest graph overall, for commands whose target is optional.
std::string newest_graph() {
  const auto g = query::graphs();
  if (g.empty()) throw CommandError{"no graphs captured yet: call a dyn.compile'd function first"};
  return g.back()->id();
}

void not_stopped_only(Session& s, const char* what) {
  if (s.stopped())
    throw CommandError{fmt::format("{} is not possible while the script is stopped; :continue first", what)};
  if (s.post_mortem_active())
    throw CommandError{fmt::format("{} is not possible in post-mortem; :quit leaves it first", what)};
}

void cmd_help(Session& s, const Args& a) {
  at_most(a, 1, ":help [CMD]");
  if (a.size() == 1) {
    const Command* c = find_command(a[0]);
    if (!c) {
      std::string hint = suggest_command(a[0]);
      throw CommandError{
          fmt::format("no command ':{}'; {}", shown(a[0]), hint.empty() ? ":help lists the commands" : hint)};
    }
    s.out(fmt::format(":{} {}\n  {}\n\n{}\n", c->name, c->args, c->summary, c->help));
    return;
  }
  std::string out = "commands (:help CMD for one in full; anything else is Python):\n";
  for (const Command& c : commands())
    out += fmt::format("  {:<34} {}\n", fmt::format(":{} {}", c.name, c.args), c.summary);
  s.out(out);
}

void cmd_run(Session& s, const Args& a) {
  if (a.empty()) throw CommandError{"usage: :run FILE [args...]"};
  not_stopped_only(s, ":run");
  struct stat st;
  if (stat(a[0].c_str(), &st) != 0)
    throw CommandError{fmt::format("cannot run '{}': no such file", shown(a[0], kPathChars))};
  if (S_ISDIR(st.st_mode))
    throw CommandError{fmt::format("cannot run '{}': it is a folder, not a script", shown(a[0], kPathChars))};
  if (!S_ISREG(st.st_mode))
    throw CommandError{fmt::format("cannot run '{}': not a regular file", shown(a[0], kPathChars))};
  int status = s.py().run_script(a[0], Args(a.begin() + 1, a.end()));
  if (s.quit_requested()) return;
  if (status != 0) s.out(fmt::format("(the script ended with status {})\n", status));
}

void cmd_graphs(Session& s, const Args& a) {
  at_most(a, 1, ":graphs [FN]");
  s.out(viz::graphs_table(a.empty() ? "" : a[0]));
}

void cmd_graph(Session& s, const Args& a) {
  bool verbose = false;
  Args rest;
  for (const std::string& x : a) {
    if (x == "-v")
      verbose = true;
    else
      rest.push_back(x);
  }
  at_most(rest, 1, ":graph [ID or FN] [-v]");
  s.out(viz::graph_text(rest.empty() ? newest_graph() : rest[0], verbose));
}

void cmd_breaks(Session& s, const Args& a) {
  at_most(a, 1, ":breaks [FN]");
  s.out(viz::breaks_text(a.empty() ? "" : a[0]));
}

void cmd_guards(Session& s, const Args& a) {
  at_most(a, 1, ":guards [FN]");
  s.out(viz::guards_text(a.empty() ? "" : a[0]));
}

void cmd_why(Session& s, const Args& a) {
  at_most(a, 1, ":why-recompile [FN]");
  s.out(viz::why_recompile_text(a.empty() ? "" : a[0]));
}

void cmd_why_python(Session& s, const Args& a) {
  at_most(a, 1, ":why-python [FN]");
  s.out(viz::why_python_text(a.empty() ? "" : a[0]));
}

void cmd_events(Session& s, const Args& a) {
  at_most(a, 2, ":events [KIND] [FN]");
  std::string kind, fn;
  for (const std::string& x : a) {
    if (parse_event_kind(x) && kind.empty())
      kind = x;
    else if (fn.empty())
      fn = x;
    else
      throw CommandError{"usage: :events [KIND] [FN]"};
  }
  s.out(viz::events_text(kind, fn));
}

void cmd_profile(Session& s, const Args& a) {
  Args rest;
  bool reset = false;
  for (const std::string& x : a) {
    if (x == "--reset")
      reset = true;
    else if (x.size() > 1 && x[0] == '-')
      throw CommandError{
          fmt::format("unknown option '{}'; usage: :profile [ID or FN]  or  :profile --reset", shown(x))};
    else
      rest.push_back(x);
  }
  if (reset) {
    if (!rest.empty()) throw CommandError{"--reset takes no graph: it clears every step time; usage: :profile --reset"};
    query::clear_step_times();
    s.out("step times cleared (graphs and plans stay); the next calls are timed afresh\n");
    return;
  }
  at_most(rest, 1, ":profile [ID or FN]");
  s.out(viz::profile_text(rest.empty() ? "" : rest[0]));
}

void cmd_stats(Session& s, const Args& a) {
  at_most(a, 0, ":stats");
  s.out(viz::stats_text());
}

void cmd_diff(Session& s, const Args& a) {
  if (a.size() != 2)
    throw CommandError{"usage: :diff A B  (two graph ids like f[0].0, or two cache entries like f[0])"};
  s.out(viz::diff_text(a[0], a[1]));
}

// Writes a file the user named and says so, or why it could not.
void save(Session& s, const std::string& path, const std::string& data) {
  std::string failure = write_file(path, data);
  if (!failure.empty()) throw CommandError{fmt::format("cannot write '{}': {}", shown(path, kPathChars), failure)};
  s.out(fmt::format("wrote {} ({} bytes)\n", shown(path, kPathChars), data.size()));
}

void cmd_dot(Session& s, const Args& a) {
  at_most(a, 2, ":dot [ID or FN] [FILE]");
  std::string target = a.empty() ? newest_graph() : a[0];
  std::string text = viz::dot_text(target);
  if (a.size() < 2) {
    s.out(text);
    return;
  }
  save(s, a[1], text);
}

std::string format_of(const std::string& file) {
  size_t dot = file.rfind('.');
  std::string ext = dot == std::string::npos ? "" : file.substr(dot + 1);
  if (ext != "svg" && ext != "png")
    throw CommandError{
        fmt::format("cannot tell the picture format of '{}': name the file .svg or .png", shown(file, kPathChars))};
  return ext;
}

void cmd_render(Session& s, const Args& a) {
  if (!a.empty() && a[0] == "--diff") {
    if (a.size() != 4) throw CommandError{"usage: :render --diff A B FILE.svg|.png"};
    save(s, a[3], viz::render(viz::dot_diff_text(a[1], a[2]), format_of(a[3])));
    return;
  }
  if (a.empty() || a.size() > 2)
    throw CommandError{"usage: :render [ID or FN] FILE.svg|.png  or  :render --diff A B FILE"};
  std::string file = a.back();
  std::string fmt_ = format_of(file);
  std::string target = a.size() == 2 ? a[0] : newest_graph();
  save(s, file, viz::render(viz::dot_text(target), fmt_));
}

void cmd_report(Session& s, const Args& a) {
  if (a.size() != 1) throw CommandError{"usage: :report FILE.html"};
  save(s, a[0], viz::html_report("dynrepl report"));
}

void cmd_break(Session& s, const Args& a) {
  if (a.empty() || a.size() > 2)
    throw CommandError{"usage: :break KIND [FN]  (KIND: graph-break, recompile, guard-failure, compile, fallback)"};
  const Breakpoint& bp = s.add_breakpoint(a[0], a.size() > 1 ? a[1] : "");
  std::string kind(event_kind_name(bp.kind));
  std::replace(kind.begin(), kind.end(), '_', '-');
  s.out(fmt::format("breakpoint {}: stop at the next {}{}\n", bp.id, kind, bp.fn.empty() ? "" : " of " + shown(bp.fn)));
  // A function compiled later is a fine target, but a typo should not wait silently forever.
  auto fns = query::functions();
  if (!bp.fn.empty() && std::none_of(fns.begin(), fns.end(), [&](const auto& f) { return f->name() == bp.fn; })) {
    std::string known;
    for (const auto& f : fns) known += (known.empty() ? "" : ", ") + f->name();
    s.out(fmt::format("  no compiled function is named '{}' yet; the breakpoint waits for one{}\n", shown(bp.fn),
                      known.empty() ? "" : " (compiled now: " + known + ")"));
  }
}

void cmd_breakpoints(Session& s, const Args& a) {
  at_most(a, 0, ":breakpoints");
  if (s.breakpoints().empty()) {
    s.out("no breakpoints; :break KIND [FN] sets one\n");
    return;
  }
  for (const Breakpoint& bp : s.breakpoints()) {
    std::string kind(event_kind_name(bp.kind));
    std::replace(kind.begin(), kind.end(), '_', '-');
    s.out(
        fmt::format("{:>3}  {:<13}  {:<12}  hits {}\n", bp.id, kind, bp.fn.empty() ? "(any)" : shown(bp.fn), bp.hits));
  }
}

void cmd_delete(Session& s, const Args& a) {
  if (a.size() != 1) throw CommandError{"usage: :delete N  (:breakpoints lists them)"};
  int id = 0;
  size_t used = 0;
  try {
    id = std::stoi(a[0], &used);
  } catch (...) {
  }
  // The whole argument: '1abc' is not breakpoint 1.
  if (used == 0 || used != a[0].size())
    throw CommandError{fmt::format("expected a breakpoint number, got '{}'", shown(a[0]))};
  auto& bps = s.breakpoints();
  auto it = std::find_if(bps.begin(), bps.end(), [&](const Breakpoint& b) { return b.id == id; });
  if (it == bps.end()) throw CommandError{fmt::format("no breakpoint {}; :breakpoints lists them", id)};
  bps.erase(it);
  s.out(fmt::format("deleted breakpoint {}\n", id));
}

void cmd_where(Session& s, const Args& a) {
  at_most(a, 0, ":where");
  if (!s.in_frames())
    throw CommandError{"not stopped: :where shows the stack when a breakpoint stops the script (or :pm)"};
  s.out(s.py().user_stack());
}

int positive_count(const Args& a, const char* cmd, const char* what) {
  if (a.empty()) return 1;
  try {
    size_t used = 0;
    int n = std::stoi(a[0], &used);
    if (used == a[0].size() && n >= 1) return n;
  } catch (...) {
  }
  throw CommandError{
      fmt::format("usage: {} [N]  (N: how many {}, a positive number; got '{}')", cmd, what, shown(a[0]))};
}

void move(Session& s, const Args& a, const char* cmd, int sign) {
  if (a.size() > 1) throw CommandError{fmt::format("too many arguments; usage: {} [N]", cmd)};
  if (!s.in_frames())
    throw CommandError{
        fmt::format("not stopped: {} moves between the frames of a stopped script (or of an exception, :pm)", cmd)};
  std::string r = s.py().move_frame(sign * positive_count(a, cmd, "frames"));
  if (r.rfind("error: ", 0) == 0) throw CommandError{r.substr(7)};
  s.out(r + "\n");
}

void cmd_up(Session& s, const Args& a) { move(s, a, ":up", 1); }
void cmd_down(Session& s, const Args& a) { move(s, a, ":down", -1); }

void cmd_list(Session& s, const Args& a) {
  at_most(a, 1, ":list [N]");
  if (!s.in_frames())
    throw CommandError{"not stopped: :list shows the source around the line a stopped script is at (or :pm)"};
  std::string r = s.py().list_source(a.empty() ? 5 : positive_count(a, ":list", "lines each side"));
  if (r.rfind("error: ", 0) == 0) throw CommandError{r.substr(7)};
  s.out(r);
}

void cmd_continue(Session& s, const Args& a) {
  at_most(a, 0, ":continue");
  if (s.post_mortem_active())
    throw CommandError{"the script has ended with an exception: nothing to resume (:quit leaves)"};
  if (!s.stopped()) throw CommandError{"not stopped: nothing to continue (:break KIND sets a breakpoint)"};
  s.request_continue();
}

void cmd_pm(Session& s, const Args& a) {
  at_most(a, 0, ":pm");
  if (s.in_frames()) throw CommandError{"already in a frame: :where shows it, :quit leaves"};
  s.post_mortem(true);
}

void cmd_reset(Session& s, const Args& a) {
  at_most(a, 0, ":reset");
  not_stopped_only(s, ":reset");
  try {
    query::reset();
  } catch (const dyn::Error& e) {
    throw CommandError{e.what()};
  }
  s.out("forgot every graph, event, counter and cache entry\n");
}

void cmd_quit(Session& s, const Args& a) {
  at_most(a, 0, ":quit");
  // Ending a stopped script is not a success: like pdb's quit, the status says it was cut short.
  s.request_quit(s.stopped() ? 1 : 0);
}

// Counted in characters: ':stats' with a zero-width space after it is one edit away.
int edit_distance(const std::u32string& a, const std::u32string& b) {
  std::vector<int> d(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) d[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int prev = d[0];
    d[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int t = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = t;
    }
  }
  return d[b.size()];
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"help", "[CMD]", "every command with a one-line summary; the full help of one",
       "Without an argument, lists every command. With one (with or without ':'), shows its arguments and what it "
       "does.",
       CompleteWith::Commands, cmd_help},
      {"run", "FILE [args]", "run a script in this session",
       "Runs FILE as __main__ with sys.argv = [FILE, args...], after forgetting earlier graphs and events (as "
       ":reset). Breakpoints stay set, so :break then :run stops the script at the event.",
       CompleteWith::Files, cmd_run},
      {"graphs", "[FN]", "every captured graph: id, function, entry, segment, ops, calls",
       "One line per graph: its id FN[ENTRY].SEGMENT, the function, the cache entry, the segment, its op count, how "
       "many calls it served, and how it ends (a graph break and where, or the return). Of compiled functions that "
       "no longer exist (dyn.compile applied anew in a loop) the newest 1000 graphs are kept (all with --event-limit "
       "0).",
       CompleteWith::Functions, cmd_graphs},
      {"graph", "[ID or FN] [-v]", "one graph, one node per line with its source line",
       "Shows a graph (ID like f[0].1), every segment of a cache entry (f[0]), or of a function's newest entry (f); "
       "without an argument the newest graph. Each node: value, dtype and shape, op, operands, and the user's "
       "file:line and source text; in a dynamic graph, sizes are symbols (f32[s0, 16]) and a node's size arguments "
       "show the forms they follow ({end=s0}). -v adds the callers of each node's line and the plan the graph runs as: "
       "what each "
       "pass did and its steps (kernel, view, in_place, fused, move, free).",
       CompleteWith::Graphs, cmd_graph},
      {"breaks", "[FN]", "every graph break: where, what Python asked for, why, a hint",
       "For each graph break: the function and cache entry, file:line with the source text, what Python asked for "
       "(bool(), .item(), print, ...), the reason and a hint to avoid it.",
       CompleteWith::Functions, cmd_breaks},
      {"guards", "[FN]", "the guards of each cache entry, one per line",
       "For each cache entry of FN (or of every compiled function): every check a call must pass to be served by it "
       "(tensor inputs by source, with symbols s0, s1 for dynamic sizes; shape_symbol: what each symbol is and its "
       "range; aliasing, ops, int and bool constants by name, float inputs read at each call, the bool() and .item() "
       "values Python reads at graph breaks (by the variable they are stored to; read at each call, not checked), "
       "global state), each with its source line. A lifted entry (tier 2) also lists its Python guards: the values "
       "the body read that a call skipping the body must see again (by source: self.training, len(self.layers), "
       "n), each with the line that read it.",
       CompleteWith::Functions, cmd_guards},
      {"why-python", "[FN]", "which entries run without the body (tier 2), and why the others run it",
       "For each cache entry: lifted (calls whose guards pass run the compiled graph without running the "
       "function's Python; how many did: training steps too, whose graph writes the parameters and the "
       "optimizer's state and whose .grad the call sets) or the reason the body runs at each call (a print, a "
       "store into an object from outside, a graph break, .item(), dynamic sizes, a C function not known to be "
       "pure) with the line that does it. Functions a script dropped are shown too (the newest 16). Ends with the "
       "time the one-time analyses took.",
       CompleteWith::Functions, cmd_why_python},
      {"why-recompile", "[FN]", "the recompiles grouped by cause, then which guard each older entry failed",
       "First a summary per function: its recompiles grouped by cause (the Python value or tensor property that "
       "changed, the values it took, where it is used, a hint). A recompile's cause is the failure of the entry "
       "that came closest (matched longest, or the one its dynamic sizes come from). Then for each recompile: the "
       "call that triggered it and the new entry, one line per older entry with the first guard it failed (kind, "
       "expected vs actual; the closest one marked), the source line, the Python value that changed since that "
       "entry was traced, and a hint when one is true for this call. A recompile that made sizes dynamic says "
       "which (x.size(0) became dynamic as s0), in the summary too.",
       CompleteWith::Functions, cmd_why},
      {"events", "[KIND] [FN]", "the event history, filterable",
       "Every capture event in order: compile, cache-hit (counted), graph-break, guard-failure, recompile, "
       "fallback, lift and lift-refused (tier 2's analysis of an entry); filter by kind and/or function. The history "
       "keeps the newest 10000 events (--event-limit N); "
       "a note above the table says when older ones were dropped.",
       CompleteWith::EventKinds, cmd_events},
      {"stats", "", "counters, time split, and functions that recompile too often",
       "Calls, cache hits, compiles, recompiles, graph breaks, guard failures, fallbacks and graphs; time spent "
       "tracing, replaying, compiling and executing; one line per compiled function, flagged when its recompiles "
       "share one cause, when it recompiles often, or when it fell back to eager.",
       CompleteWith::Nothing, cmd_stats},
      {"profile", "[ID or FN] [--reset]", "where compiled time goes: each plan step's time and source line",
       "Every compiled graph runs as the steps of its plan (:graph -v lists them); each step's wall time is added "
       "up over the calls that ran it. Without an argument: the 15 steps that took the most time over all graphs, "
       "then each graph's total and the 10 user lines whose steps took the most (a training step's backward is its "
       "loss.backward() line, its optimizer its opt.step() line). With a graph id (f[0].1), a cache entry (f[0]) or a "
       "function (its newest entry): "
       "every step that ran, in plan order, with its share of the graph's time, its time in all and a run, how "
       "often it ran, its kind (kernel, fused, view, in_place, move, free), what it runs and the user's line (a "
       "fused step lists its lines). The first run of a graph (when it was traced) is counted too: --reset clears "
       "every time, so that the next calls are measured warm.",
       CompleteWith::Graphs, cmd_profile},
      {"diff", "A B", "two graphs or two cache entries side by side",
       "A and B are graph ids (f[0].1), cache entries (f[0]) or '.', the trace a call stopped at a recompile or "
       "guard failure is recording (what it kept of the entry it diverged from, and what it recorded since). Shows the "
       "guards that differ (entries) "
       "and, per segment, the nodes side by side from the first difference on: '~' changed, '-' only in A, '+' only "
       "in B; long unchanged runs are collapsed.",
       CompleteWith::Graphs, cmd_diff},
      {"dot", "[ID or FN] [FILE]", "DOT text of a graph (or of an entry's segments as clusters)",
       "Prints graphviz DOT for a graph, or for every segment of a cache entry as clusters joined by their graph "
       "breaks; with FILE, writes it there. Render it with: dot -Tsvg FILE -o out.svg",
       CompleteWith::Graphs, cmd_dot},
      {"render", "[ID or FN] FILE", "the graph as a picture: FILE.svg or FILE.png (graphviz)",
       "Renders what :dot shows with graphviz, in process, as SVG or PNG (by the file's extension). "
       ":render --diff A B FILE draws B with what changed since A colored: green added, orange changed (same op, "
       "other arguments or shapes), red removed - the picture of a recompile. Graphs over 2000 nodes are not laid "
       "out: use :graph, or :dot ID FILE.",
       CompleteWith::Graphs, cmd_render},
      {"report", "FILE.html", "a self-contained HTML report of everything captured",
       "Writes one HTML file (no network, no external assets): counters and timings, every compiled function with "
       "its cache entries, guards and recompile reasons, every graph break with its source, every graph as an "
       "inline picture, and a table of contents. --report FILE writes it when dynrepl exits.",
       CompleteWith::Files, cmd_report},
      {"break", "KIND [FN]", "stop the running script at the next event of KIND",
       "KIND is graph-break, recompile, guard-failure, compile or fallback (KIND:FN also works). When the event "
       "happens the script stops inside the op call that raised it and a prompt opens in the user's frame: Python "
       "sees its locals, :where shows the stack, lazy tensors show their pending node, :continue resumes.",
       CompleteWith::EventKinds, cmd_break},
      {"breakpoints", "", "list breakpoints", "Each breakpoint: number, event kind, function and how often it hit.",
       CompleteWith::Nothing, cmd_breakpoints},
      {"delete", "N", "remove breakpoint N", "Removes the breakpoint numbered N (see :breakpoints).",
       CompleteWith::Nothing, cmd_delete},
      {"where", "", "while stopped: the user's Python stack at the event",
       "The user's frames, innermost first, each with file:line, function and source text; '>' marks the one "
       "Python lines run in (:up and :down move it). A name assigned at the prompt is written back to that frame, "
       "as in pdb.",
       CompleteWith::Nothing, cmd_where},
      {"up", "[N]", "while stopped: Python runs N frames further out",
       "Moves to the caller's frame (N frames out): Python lines then see its variables, and :list shows its "
       "source. :where marks the frame with '>'.",
       CompleteWith::Nothing, cmd_up},
      {"down", "[N]", "while stopped: Python runs N frames further in",
       "Moves back toward the frame the script stopped in (N frames in).", CompleteWith::Nothing, cmd_down},
      {"list", "[N]", "while stopped: the source around the current line",
       "The source of the frame Python runs in, N lines (default 5) each side of its current line, which is "
       "marked '->'.",
       CompleteWith::Nothing, cmd_list},
      {"pm", "", "post-mortem: Python in the frame of the last uncaught exception",
       "Opens a prompt in the user's frame that raised the last uncaught exception (of the script, :run, or a "
       "line typed here): its variables are Python names, :where lists the traceback's frames, :up/:down move "
       "along it, :list shows the source; Ctrl-D or :quit leaves. dynrepl --pm opens it when the script raises.",
       CompleteWith::Nothing, cmd_pm},
      {"continue", "", "while stopped: resume the script",
       "Leaves the stopped prompt; the script goes on where it was.", CompleteWith::Nothing, cmd_continue},
      {"reset", "", "forget caches, graphs and events",
       "Forgets every graph, event and counter, and every compiled function's cache entries.", CompleteWith::Nothing,
       cmd_reset},
      {"quit", "", "leave (also Ctrl-D)", "Ends the session; while stopped, ends the script too.",
       CompleteWith::Nothing, cmd_quit},
  };
  return table;
}

const Command* find_command(const std::string& name_in) {
  std::string name = !name_in.empty() && name_in[0] == ':' ? name_in.substr(1) : name_in;
  for (const Command& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

std::string suggest_command(const std::string& name_in) {
  std::string name = !name_in.empty() && name_in[0] == ':' ? name_in.substr(1) : name_in;
  const Command* best = nullptr;
  int best_d = 3;
  for (const Command& c : commands()) {
    std::string n = c.name;
    int d = edit_distance(code_points(name), code_points(n));
    if (n.rfind(name, 0) == 0 && !name.empty()) d = std::min(d, 1);
    if (d < best_d) best_d = d, best = &c;
  }
  return best ? fmt::format("did you mean ':{}'?", best->name) : std::string();
}

std::optional<EventKind> parse_event_kind(const std::string& s_in) {
  std::string s = s_in;
  std::replace(s.begin(), s.end(), '_', '-');
  if (s == "compile") return EventKind::Compile;
  if (s == "cache-hit") return EventKind::CacheHit;
  if (s == "graph-break") return EventKind::GraphBreak;
  if (s == "guard-failure") return EventKind::GuardFailure;
  if (s == "recompile") return EventKind::Recompile;
  if (s == "fallback") return EventKind::Fallback;
  if (s == "lift") return EventKind::Lift;
  if (s == "lift-refused") return EventKind::LiftRefused;
  return std::nullopt;
}

}  // namespace dyn::repl
