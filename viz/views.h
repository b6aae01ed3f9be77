// Text views of what the engine captured: the REPL's :graphs, :graph, :breaks, :guards,
// :why-recompile, :events, :stats and :diff. Each returns the text (or throws a user error when
// an id or name does not exist); none keeps state of its own.
#pragma once
#include <string>
#include <vector>

namespace dyn {
struct GraphRecord;
struct Event;
}  // namespace dyn

namespace dyn::viz {

// The graphs a target names: a graph id "fn[e].s", an entry "fn[e]" (its segments in order), or
// a function name (its newest entry). A user error, saying what is expected, when none exists.
std::vector<const GraphRecord*> resolve_graphs(const std::string& target);

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
// a, b: two graph ids or two cache entries.
std::string diff_text(const std::string& a, const std::string& b);

// Names of compiled functions and ids of graphs and entries, for completion.
std::vector<std::string> function_names();
std::vector<std::string> graph_ids();

}  // namespace dyn::viz
