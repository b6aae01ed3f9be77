// DOT text of captured graphs.
#include "viz/dot.h"

#include <fmt/format.h>

#include <regex>

#include "core/capture/capture.h"
#include "core/error.h"

namespace dyn::viz {

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
  return out;
}

namespace {

std::vector<const GraphRecord*> resolve(const std::string& target) {
  CaptureLog& log = CaptureLog::get();
  if (const GraphRecord* r = log.find_graph(target)) return {r};
  static const std::regex entry_re(R"((.+)\[(\d+)\])");
  std::smatch m;
  std::string fn = target;
  int entry = -1;
  if (std::regex_match(target, m, entry_re)) {
    fn = m[1].str();
    entry = std::stoi(m[2].str());
  } else {
    for (const auto& r : log.graphs())
      if (r->fn == fn) entry = std::max(entry, r->entry);
  }
  std::vector<const GraphRecord*> out;
  for (const auto& r : log.graphs())
    if (r->fn == fn && r->entry == entry) out.push_back(r.get());
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->segment < b->segment; });
  if (out.empty())
    fail(ErrorKind::Value,
         "no graph '{}': expected a graph id like f[0].1, a cache entry like f[0] or a compiled function's name; "
         "see :graphs",
         target);
  return out;
}

void emit_segment(std::string& out, const GraphRecord& r, const std::string& p, const std::string& indent) {
  const Graph& g = r.graph;
  static const char* kinds[] = {"argument", "parameter", "global/closure", "from earlier graph"};
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    std::string name = v.input_name.empty() ? fmt::format("%{}", id) : v.input_name;
    out += fmt::format("{}{}v{} [shape=ellipse, label=\"{}\\n{}\\n{}\"];\n", indent, p, id, dot_escape(name),
                       meta_str(v.dtype, v.shape), kinds[static_cast<int>(v.input_kind)]);
  }
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    const Value& o = g.values[n.outputs[0]];
    std::string args = format_attrs(n.op, n.attrs);
    SourceLoc top = n.where.top();
    std::string loc = top.known() ? top.str() : std::string();
    std::string text = top.known() ? source_line(*top.file, top.line) : std::string();
    std::string label = fmt::format("{}{}{}\\n%{} {}{}", op_name(n.op), n.target >= 0 ? "_" : "",
                                    args.empty() ? "" : " " + dot_escape(args), n.outputs[0], meta_str(o.dtype, o.shape),
                                    loc.empty() ? "" : "\\n" + dot_escape(loc));
    std::string style = n.target >= 0 ? ", style=filled, fillcolor=\"#fde0dd\"" : "";
    out += fmt::format("{}{}n{} [label=\"{}\", tooltip=\"{}\"{}];\n", indent, p, k, label, dot_escape(text), style);
  }
  // Edges from each value's producer (or the input) to its users.
  auto src = [&](int v) {
    int prod = g.values[v].producer;
    return prod < 0 ? fmt::format("{}v{}", p, v) : fmt::format("{}n{}", p, prod);
  };
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    for (int i : n.inputs) out += fmt::format("{}{} -> {}n{};\n", indent, src(i), p, k);
    if (n.target >= 0 && std::find(n.inputs.begin(), n.inputs.end(), n.target) == n.inputs.end())
      out += fmt::format("{}{} -> {}n{} [style=dashed, label=\"writes\"];\n", indent, src(n.target), p, k);
  }
  for (int o : g.outputs) {
    out += fmt::format("{}{}out{} [shape=plaintext, label=\"out %{}\"];\n", indent, p, o, o);
    out += fmt::format("{}{} -> {}out{};\n", indent, src(o), p, o);
  }
}

std::string break_label(const GraphRecord& r) {
  for (const Event& e : CaptureLog::get().events())
    if (e.kind == EventKind::GraphBreak && e.fn == r.fn && e.entry == r.entry && e.segment == r.segment) {
      SourceLoc t = e.where.top();
      return fmt::format("graph break: {}\\n{}", dot_escape(std::string(break_kind_name(e.break_kind))),
                         t.known() ? dot_escape(t.str()) : std::string());
    }
  return "graph break";
}

}  // namespace

std::string dot_text(const std::string& target) {
  auto graphs = resolve(target);
  std::string out = fmt::format("digraph \"{}\" {{\n", dot_escape(target));
  out += "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontsize=9];\n";
  if (graphs.size() == 1 && graphs[0]->id() == target) {
    emit_segment(out, *graphs[0], "", "  ");
    return out + "}\n";
  }
  for (size_t s = 0; s < graphs.size(); ++s) {
    std::string p = fmt::format("s{}_", s);
    out += fmt::format("  subgraph cluster_{} {{\n    label=\"{}\";\n", s, dot_escape(graphs[s]->id()));
    emit_segment(out, *graphs[s], p, "    ");
    out += "  }\n";
  }
  for (size_t s = 0; s + 1 < graphs.size(); ++s) {
    // A graph break between two clusters: an edge from the first's last node to the next's first.
    const Graph& a = graphs[s]->graph;
    const Graph& b = graphs[s + 1]->graph;
    if (a.nodes.empty() || b.nodes.empty()) continue;
    out += fmt::format("  s{}_n{} -> s{}_n0 [style=bold, color=red, label=\"{}\", ltail=cluster_{}, lhead=cluster_{}];\n",
                       s, a.nodes.size() - 1, s + 1, break_label(*graphs[s]), s, s + 1);
  }
  return out + "}\n";
}

}  // namespace dyn::viz
