// DOT text of captured graphs.
#include "viz/dot.h"

#include <fmt/format.h>

#include <cstdio>
#include <set>

#include <algorithm>

#include "core/error.h"
#include "core/query/query.h"
#include "viz/views.h"

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

void emit_inputs(std::string& out, const Graph& g, const std::string& p, const std::string& indent) {
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    std::string name = v.input_name().empty() ? fmt::format("%{}", id) : v.input_name();
    out += fmt::format("{}{}v{} [shape=ellipse, label=\"{}\\n{}\\n{}\"];\n", indent, p, id, dot_escape(name),
                       value_meta(v), input_kind_name(v.input_kind));
  }
}

void emit_segment(std::string& out, const GraphRecord& r, const std::string& p, const std::string& indent) {
  const Graph& g = *r.graph;
  emit_inputs(out, g, p, indent);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    const Value& o = g.values[n.outputs[0]];
    std::string args = format_attrs(n.op, n.attrs);
    SourceLoc top = n.where.top();
    std::string loc = top.known() ? top.str() : std::string();
    std::string text = top.known() ? source_line(*top.file, top.line) : std::string();
    std::string label = fmt::format("{}{}{}\\n%{} {}{}", op_name(n.op), n.target >= 0 ? "_" : "",
                                    args.empty() ? "" : " " + dot_escape(args), n.outputs[0], value_meta(o),
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
  if (!r.ends_in_break) return "graph break";
  SourceLoc t = r.break_where.top();
  return fmt::format("graph break: {}\\n{}", dot_escape(std::string(break_kind_name(r.break_kind))),
                     t.known() ? dot_escape(t.str()) : std::string());
}

// What a node computes, independent of value numbering: the diff compares these.
std::string signature(const Graph& g, const Node& n) {
  const Value& o = g.values[n.outputs[0]];
  return fmt::format("{}{}({}) {}", op_name(n.op), n.target >= 0 ? "_" : "", format_attrs(n.op, n.attrs),
                     meta_str(o.dtype, o.shape));
}

void emit_diff(std::string& out, const Graph& a, const Graph& b, const std::string& p, const std::string& indent) {
  size_t n = a.nodes.size(), m = b.nodes.size();
  // Longest common subsequence over op names: matched nodes are the same or changed.
  std::vector<std::vector<int>> L(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      L[i][j] = a.nodes[i].op == b.nodes[j].op ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  std::vector<int> match_b(m, -1);
  std::vector<bool> matched_a(n, false);
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (a.nodes[i].op == b.nodes[j].op) {
      match_b[j] = static_cast<int>(i);
      matched_a[i] = true;
      ++i, ++j;
    } else if (L[i + 1][j] >= L[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  emit_inputs(out, b, p, indent);
  // Long runs of unchanged nodes (more than 6) are one box each: a large diff shows what changed.
  std::vector<bool> unchanged(m, false);
  for (size_t k = 0; k < m; ++k)
    unchanged[k] = match_b[k] >= 0 && signature(a, a.nodes[match_b[k]]) == signature(b, b.nodes[k]);
  std::vector<int> box(m, -1);  // node -> the collapsed run it belongs to (its first node's index)
  for (size_t k = 0; k < m;) {
    size_t j = k;
    while (j < m && unchanged[j]) ++j;
    if (j - k > 6) {
      for (size_t i = k; i < j; ++i) box[i] = static_cast<int>(k);
      out += fmt::format("{}{}run{} [label=\"... {} unchanged nodes ...\", style=dashed, color=\"#999999\"];\n", indent,
                         p, k, j - k);
    }
    k = j == k ? k + 1 : j;
  }
  for (size_t k = 0; k < m; ++k) {
    if (box[k] >= 0) continue;
    const Node& nb = b.nodes[k];
    std::string sig = signature(b, nb);
    std::string style;
    std::string note;
    if (match_b[k] < 0) {
      style = ", style=filled, fillcolor=\"#c7e9c0\"";
      note = "\\n(added)";
    } else if (signature(a, a.nodes[match_b[k]]) != sig) {
      style = ", style=filled, fillcolor=\"#fdd0a2\"";
      note = "\\n(was " + dot_escape(signature(a, a.nodes[match_b[k]])) + ")";
    }
    SourceLoc top = nb.where.top();
    out += fmt::format("{}{}n{} [label=\"{}{}{}\"{}];\n", indent, p, k, dot_escape(sig),
                       top.known() ? "\\n" + dot_escape(top.str()) : std::string(), note, style);
  }
  for (size_t i = 0; i < n; ++i)
    if (!matched_a[i])
      out += fmt::format(
          "{}{}gone{} [label=\"{}\\n(removed)\", style=\"filled,dashed\", fillcolor=\"#fcbba1\", "
          "color=\"#cb181d\"];\n",
          indent, p, i, dot_escape(signature(a, a.nodes[i])));
  auto name = [&](size_t k) { return box[k] >= 0 ? fmt::format("{}run{}", p, box[k]) : fmt::format("{}n{}", p, k); };
  auto src = [&](int v) {
    int prod = b.values[v].producer;
    return prod < 0 ? fmt::format("{}v{}", p, v) : name(static_cast<size_t>(prod));
  };
  std::set<std::string> edges;  // a collapsed run's inner edges, and repeats, are drawn once or not at all
  for (size_t k = 0; k < m; ++k)
    for (int i : b.nodes[k].inputs) {
      std::string from = src(i), to = name(k);
      if (from != to && edges.insert(from + " -> " + to).second) out += fmt::format("{}{} -> {};\n", indent, from, to);
    }
}

}  // namespace

std::string dot_diff_text(const std::string& a, const std::string& b) {
  auto ga = resolve_graphs(a), gb = resolve_graphs(b);
  std::string out = fmt::format("digraph \"{} vs {}\" {{\n", dot_escape(a), dot_escape(b));
  out += "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  out += fmt::format("  label=\"{} -> {}: green added, orange changed, red removed\"; labelloc=t;\n", dot_escape(a),
                     dot_escape(b));
  size_t segs = std::max(ga.size(), gb.size());
  static const Graph empty;
  for (size_t s = 0; s < segs; ++s) {
    const Graph& x = s < ga.size() ? *ga[s]->graph : empty;
    const Graph& y = s < gb.size() ? *gb[s]->graph : empty;
    out += fmt::format("  subgraph cluster_{} {{\n    label=\"segment {}\";\n", s, s);
    emit_diff(out, x, y, fmt::format("s{}_", s), "    ");
    out += "  }\n";
  }
  return out + "}\n";
}

std::string dot_text(const std::string& target) {
  auto graphs = resolve_graphs(target);
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
  // The segments stand side by side, left to right (a break edge adds no rank), and each break is
  // drawn as the data it hands on: from the value an earlier segment computed to the input of the
  // next one that reads it ("%7 of segment 0").
  for (size_t s = 0; s + 1 < graphs.size(); ++s) {
    const Graph& a = *graphs[s]->graph;
    const Graph& b = *graphs[s + 1]->graph;
    bool linked = false;
    for (int id : b.inputs) {
      const Value& v = b.values[id];
      int value = -1, seg = -1;
      if (v.input_kind != InputKind::Materialized ||
          std::sscanf(v.input_name().c_str(), "%%%d of segment %d", &value, &seg) != 2)
        continue;
      if (seg < 0 || static_cast<size_t>(seg) >= graphs.size() || static_cast<size_t>(seg) > s) continue;
      const Graph& from = *graphs[static_cast<size_t>(seg)]->graph;
      if (value < 0 || value >= static_cast<int>(from.values.size())) continue;
      int prod = from.values[value].producer;
      std::string src = prod < 0 ? fmt::format("s{}_v{}", seg, value) : fmt::format("s{}_n{}", seg, prod);
      out += fmt::format("  {} -> s{}_v{} [style=bold, color=red, constraint=false, label=\"{}\"];\n", src, s + 1, id,
                         linked ? std::string() : break_label(*graphs[s]));
      linked = true;
    }
    if (!linked && !a.nodes.empty() && !b.nodes.empty())
      out += fmt::format("  s{}_n{} -> s{}_n0 [style=bold, color=red, constraint=false, label=\"{}\"];\n", s,
                         a.nodes.size() - 1, s + 1, break_label(*graphs[s]));
  }
  return out + "}\n";
}

}  // namespace dyn::viz
