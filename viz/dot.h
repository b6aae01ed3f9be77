// DOT (graphviz) text of captured graphs: one graph, or every segment of a cache entry as clusters.
#pragma once
#include <string>

namespace dyn::viz {

// target: a graph id "fn[e].s", an entry "fn[e]", or a function name (its newest entry).
// Stable: the same graph gives the same text. Throws a user error for an unknown target.
std::string dot_text(const std::string& target);
// The picture of a recompile: B drawn with what changed from A colored — nodes added (green),
// changed (orange: same op, other arguments or shapes) and removed (red, dashed ghosts).
// a, b: two graph ids, or two cache entries (their segments paired in order).
std::string dot_diff_text(const std::string& a, const std::string& b);
// Text escaped for a double-quoted DOT string (quotes, backslashes, newlines).
std::string dot_escape(const std::string& s);

}  // namespace dyn::viz
