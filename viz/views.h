// Text views of what the engine captured: the REPL's :graphs, :graph, :breaks, :guards,
// :why-recompile, :events, :stats, :profile and :diff. Each returns the text (or throws a user error when
// an id or name does not exist); none keeps state of its own.
#pragma once
#include <string>
#include <vector>

namespace dyn {
struct GraphRecord;
struct ForeignGraph;
struct Event;
}  // namespace dyn

namespace dyn::viz {

// The graphs a target names: a graph id "fn[e].s", an entry "fn[e]" (its segments in order), or
// a function name (its newest entry). A user error, saying what is expected, when none exists.
std::vector<const GraphRecord*> resolve_graphs(const std::string& target);
// Another capture's graphs (PyTorch's Dynamo) a target names the same way; empty when none.
std::vector<const ForeignGraph*> foreign_graphs_of(const std::string& target);

// fn: a compiled function's name, or "" for all.
std::string graphs_table(const std::string& fn);
// target: a graph id "fn[e].s", an entry "fn[e]", or a function name (its newest entry).
std::string graph_text(const std::string& target, bool verbose);
std::string breaks_text(const std::string& fn);
std::string guards_text(const std::string& fn);
std::string why_recompile_text(const std::string& fn);
// kind: an event kind ("compile", "graph-break" or "graph_break", ...) or "".
std::string events_text(const std::string& kind, const std::string& fn);
std::string stats_text();
// Per entry: lifted (tier 2: calls skip the body) or why the body runs at each call, with the line.
std::string why_python_text(const std::string& fn);
// a, b: two graph ids or two cache entries.
std::string diff_text(const std::string& a, const std::string& b);

// One step of a compiled graph's plan with the time its runs took (:profile, dyn.debug.profile).
struct StepRow {
  const GraphRecord* graph = nullptr;  // valid until the next graph is logged
  std::string graph_id;
  int plan = 0;  // which of the segment's plans (a call keeping more values alive runs another)
  int step = 0;
  std::string kind;        // "kernel", "fused", ... ("node" for the eager backend)
  std::string what;        // as the plan prints it: "%4 = matmul(%2, %3)  f32[8, 16]"
  std::string file;        // the user's file of its (first) node, or "" when unknown
  std::vector<int> lines;  // its nodes' lines in that file, in node order (one for most steps)
  std::string text;        // the source text of the first line
  int64_t runs = 0;
  double seconds = 0;
};
// The steps that ran, of the graphs a target names ("" for every graph but dyn.debug.explain's),
// in graph and step order. Graphs sharing a segment (a recompile keeps the prefix it shares) list
// its steps once.
std::vector<StepRow> step_rows(const std::string& target);
// The steps by the time they took: of one graph or entry in step order, or the hottest of all.
std::string profile_text(const std::string& target);

// Names of compiled functions and ids of graphs and entries, for completion.
std::vector<std::string> function_names();
std::vector<std::string> graph_ids();

}  // namespace dyn::viz
