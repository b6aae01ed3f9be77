// The HTML report.
#include "viz/report.h"

#include <fmt/format.h>

#include <set>

#include "core/error.h"
#include "core/query/query.h"
#include "viz/dot.h"
#include "viz/render.h"
#include "viz/views.h"

namespace dyn::viz {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string anchor(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

// Lines around `line` of `file`, the line itself marked.
std::string excerpt(const std::string& file, int line) {
  std::string out;
  for (int l = std::max(1, line - 2); l <= line + 2; ++l) {
    std::string text = source_line(file, l, false);
    out += fmt::format("<span class=\"{}\">{:>5}  {}</span>", l == line ? "hit" : "ctx", l, esc(text));
  }
  return out;
}

// An SVG rendered by graphviz, without its XML prolog, to inline in HTML.
std::string inline_svg(const std::string& dot) {
  std::string svg = render(dot, "svg");
  size_t at = svg.find("<svg");
  return at == std::string::npos ? svg : svg.substr(at);
}

const char* kStyle = R"CSS(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { border-bottom: 2px solid #444; padding-bottom: .3em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; font-size: 12px; line-height: 1.35; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: .25em .6em; text-align: left; font-size: 14px; }
th { background: #eee; }
nav ul { columns: 2; }
.hit { background: #fff3b0; display: block; }
.ctx { color: #666; display: block; }
.graph { border: 1px solid #ddd; margin: 1em 0; padding: .5em; }
.graph svg { max-width: 100%; height: auto; }
.warn { color: #b35900; }
)CSS";

}  // namespace

std::string html_report(const std::string& title) {
  const Counters& c = query::counters();
  const std::vector<const GraphRecord*> graphs = query::graphs();
  std::string body;
  // Summary
  body += "<h2 id=\"summary\">Summary</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    body += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  };
  row("calls", std::to_string(c.calls));
  row("cache hits", std::to_string(c.cache_hits));
  row("compiles", std::to_string(c.compiles));
  row("recompiles", std::to_string(c.recompiles));
  row("graph breaks", std::to_string(c.graph_breaks));
  row("guard failures", std::to_string(c.guard_failures));
  row("fallbacks to eager", std::to_string(c.fallbacks));
  row("graphs", std::to_string(graphs.size()));
  row("time tracing / replaying / compiling / executing",
      fmt::format("{:.3f} / {:.3f} / {:.3f} / {:.3f} ms", c.trace_s * 1e3, c.replay_s * 1e3, c.compile_s * 1e3,
                  c.execute_s * 1e3));
  body += "</table>\n<pre>" + esc(stats_text()) + "</pre>\n";

  // Functions
  body += "<h2 id=\"functions\">Compiled functions</h2>\n";
  std::set<std::string> shown;
  for (const auto& f : query::functions()) {
    if (f->calls == 0 || !shown.insert(f->name()).second) continue;
    body += fmt::format("<h3 id=\"fn-{}\">{}</h3>\n", anchor(f->name()), esc(f->name()));
    body +=
        fmt::format("<p>{} calls, {} cache entries{}{}</p>\n", f->calls, f->num_entries(),
                    f->defined_at.empty() ? "" : ", compiled at " + esc(f->defined_at),
                    f->fallen_back() ? " &mdash; <span class=\"warn\">fell back to eager (cache_limit)</span>" : "");
    for (int e = 0; e < f->num_entries(); ++e) {
      int64_t hits = f->entries()[e].hits;
      body +=
          fmt::format("<h4>entry {}[{}] &mdash; {} hit{}</h4>\n<pre>", esc(f->name()), e, hits, hits == 1 ? "" : "s");
      for (const std::string& l : f->guard_lines(e)) body += esc(l) + "\n";
      body += "</pre>\n";
    }
    std::string why = why_recompile_text(f->name());
    if (why.rfind("no recompiles", 0) != 0) body += "<h4>why it recompiled</h4>\n<pre>" + esc(why) + "</pre>\n";
  }
  if (shown.empty()) body += "<p>No compiled function was called.</p>\n";

  // Breaks
  body += "<h2 id=\"breaks\">Graph breaks</h2>\n";
  int nb = 0;
  for (const Event& e : query::events()) {
    if (e.kind != EventKind::GraphBreak) continue;
    ++nb;
    SourceLoc t = e.where.top();
    body += fmt::format("<h3>{}. {}[{}] after segment {} &mdash; {}</h3>\n", nb, esc(e.fn), e.entry, e.segment,
                        t.known() ? esc(t.str()) : "?");
    body += fmt::format("<p><b>{}</b> ({})<br>asked for: <code>{}</code>{}</p>\n", esc(e.reason),
                        esc(std::string(break_kind_name(e.break_kind))), esc(e.details),
                        e.hint.empty() ? "" : "<br>hint: " + esc(e.hint));
    if (t.known()) body += "<pre>" + excerpt(*t.file, t.line) + "</pre>\n";
  }
  if (nb == 0) body += "<p>No graph breaks.</p>\n";

  // Graphs
  body += "<h2 id=\"graphs\">Graphs</h2>\n";
  for (const auto& r : graphs) {
    body += fmt::format("<div class=\"graph\" id=\"g-{}\"><h3>{}</h3>\n<pre>{}</pre>\n", anchor(r->id()), esc(r->id()),
                        esc(print_graph(r->graph)));
    try {
      body += inline_svg(dot_text(r->id())) + "\n";
    } catch (const Error& err) {
      body += "<p class=\"warn\">" + esc(err.what()) + "</p>\n";
    }
    body += "</div>\n";
  }
  if (graphs.empty()) body += "<p>No graphs were captured.</p>\n";

  std::string toc =
      "<nav><h2>Contents</h2><ul>\n<li><a href=\"#summary\">Summary</a></li>\n"
      "<li><a href=\"#functions\">Compiled functions</a></li>\n<li><a href=\"#breaks\">Graph breaks</a></li>\n"
      "<li><a href=\"#graphs\">Graphs</a><ul>\n";
  for (const auto& r : graphs) toc += fmt::format("<li><a href=\"#g-{}\">{}</a></li>\n", anchor(r->id()), esc(r->id()));
  toc += "</ul></li></ul></nav>\n";

  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{}</style>"
      "</head>\n<body>\n<h1>{}</h1>\n{}{}</body></html>\n",
      esc(title), kStyle, esc(title), toc, body);
}

}  // namespace dyn::viz
