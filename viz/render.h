// Rendering DOT with graphviz in-process (libgvc): SVG and PNG bytes.
#pragma once
#include <string>

namespace dyn::viz {

// Graphs with more nodes than this are not laid out (graphviz's dot layout is superlinear);
// render() says so, with what to do instead.
constexpr int kMaxRenderNodes = 2000;

// Lays out `dot` with graphviz's dot engine and renders it as "svg" or "png".
// Throws a user error for DOT graphviz rejects, an unknown format, or a graph that is too large.
std::string render(const std::string& dot, const std::string& format);
// Parses DOT text as graphviz does; returns "" when it parses, else graphviz's complaint.
std::string check_dot(const std::string& dot);

}  // namespace dyn::viz
