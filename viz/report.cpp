// The HTML report.
#include "viz/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

// graphviz numbers the groups of every picture alike (graph0, node1, edge1): ids made unique per
// picture, so that a page with many pictures has each id once.
std::string unique_svg_ids(std::string svg, const std::string& prefix) {
  for (const char* attr : {" id=\"", "xlink:href=\"#", "url(#"}) {
    std::string a(attr);
    for (size_t at = svg.find(a); at != std::string::npos; at = svg.find(a, at + a.size() + prefix.size()))
      svg.insert(at + a.size(), prefix);
  }
  return svg;
}

// Where the graphs were compiled from, as a tree of the user's frames (outermost first): which
// calls led to each graph (the stack trie of tlparse).
struct Trie {
  std::map<std::string, Trie> children;
  std::vector<std::string> graphs;
};
void trie_html(const Trie& t, std::string* out) {
  if (t.children.empty() && t.graphs.empty()) return;
  *out += "<ul>\n";
  for (const auto& [frame, sub] : t.children) {
    *out += "<li><code>" + esc(frame) + "</code>";
    for (const std::string& g : sub.graphs) *out += fmt::format(" &rarr; <a href=\"#g-{}\">{}</a>", anchor(g), esc(g));
    trie_html(Trie{sub.children, {}}, out);
    *out += "</li>\n";
  }
  *out += "</ul>\n";
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
  // Summary: the counters, then one row per function
  body += "<h2 id=\"summary\">Summary</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    body += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  };
  row("calls", std::to_string(c.calls));
  row("cache hits", std::to_string(c.cache_hits));
  row("of them without running the body (tier 2)", std::to_string(c.lifted_hits));
  row("compiles", std::to_string(c.compiles));
  row("recompiles", std::to_string(c.recompiles));
  row("graph breaks", std::to_string(c.graph_breaks));
  row("guard failures", std::to_string(c.guard_failures));
  row("fallbacks to eager", std::to_string(c.fallbacks));
  row("graphs", std::to_string(graphs.size()));
  row("time tracing / replaying / compiling / executing",
      fmt::format("{:.3f} / {:.3f} / {:.3f} / {:.3f} ms", c.trace_s * 1e3, c.replay_s * 1e3, c.compile_s * 1e3,
                  c.execute_s * 1e3));
  body += "</table>\n";
  std::vector<std::shared_ptr<const CompiledFunction>> fns;
  {
    std::set<std::string> seen;
    for (const auto& f : query::functions())
      if (f->calls > 0 && seen.insert(f->name()).second) fns.push_back(f);
  }
  if (!fns.empty()) {
    body += "<table>\n<tr><th>function</th><th>calls</th><th>cache entries</th><th>hits</th><th>recompiles</th></tr>\n";
    for (const auto& f : fns) {
      int64_t hits = 0;
      for (const Entry& e : f->entries()) hits += e.hits;
      body += fmt::format("<tr><td><a href=\"#fn-{}\">{}</a>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          anchor(f->name()), esc(f->name()),
                          f->fallen_back() ? " <span class=\"warn\">(fell back to eager)</span>" : "", f->calls,
                          f->num_entries(), hits, f->recompiles);
    }
    body += "</table>\n";
  }

  // Why it recompiled: the summary by cause first (the question this page answers), then a table.
  body += "<h2 id=\"why\">Why it recompiled</h2>\n";
  std::string why = why_recompile_text("");
  if (why.rfind("no recompiles", 0) == 0) {
    body += "<p>No recompiles.</p>\n";
  } else {
    std::string summary = why.substr(0, why.find("\n\n"));
    body += "<pre>" + esc(summary) + "</pre>\n";
    body +=
        "<table>\n<tr><th>function</th><th>new entry</th><th>where</th><th>cause</th><th>value (first)</th>"
        "<th>made dynamic</th></tr>\n";
    for (const Event& e : query::events()) {
      if (e.kind != EventKind::Recompile) continue;
      Cause cause = cause_of(e.failures, e.closest);
      SourceLoc t = e.where.top();
      body += fmt::format("<tr><td>{}</td><td>{}[{}]</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          esc(e.fn), esc(e.fn), e.entry, t.known() ? esc(t.str()) : "", esc(cause.key),
                          cause.has_value && !cause.value.empty() ? esc(cause.value + " (" + cause.first + ")") : "",
                          esc(e.dynamic));
    }
    body += "</table>\n<details><summary>every recompile, every older entry's failed guard</summary><pre>" +
            esc(why.substr(std::min(why.size(), why.find("\n\n") + 2))) + "</pre></details>\n";
  }

  // Functions: entries with their guards and graphs
  body += "<h2 id=\"functions\">Compiled functions</h2>\n";
  for (const auto& f : fns) {
    body += fmt::format("<h3 id=\"fn-{}\">{}</h3>\n", anchor(f->name()), esc(f->name()));
    body +=
        fmt::format("<p>{} calls, {} cache entries{}{}</p>\n", f->calls, f->num_entries(),
                    f->defined_at.empty() ? "" : ", compiled at " + esc(f->defined_at),
                    f->fallen_back() ? " &mdash; <span class=\"warn\">fell back to eager (cache_limit)</span>" : "");
    for (int e = 0; e < f->num_entries(); ++e) {
      int64_t hits = f->entries()[e].hits;
      std::string links;
      for (const std::string& g : f->entries()[e].graph_ids)  // an empty last segment has no graph
        if (query::find_graph(g)) links += fmt::format(" <a href=\"#g-{}\">{}</a>", anchor(g), esc(g));
      body += fmt::format("<h4 id=\"e-{}\">entry {}[{}] &mdash; {} hit{} &mdash; graphs:{}</h4>\n<pre>",
                          anchor(f->name() + "[" + std::to_string(e) + "]"), esc(f->name()), e, hits,
                          hits == 1 ? "" : "s", links);
      for (const std::string& l : f->guard_lines(e)) body += esc(l) + "\n";
      body += "</pre>\n";
    }
  }
  if (fns.empty()) body += "<p>No compiled function was called.</p>\n";

  // Where the graphs came from
  body += "<h2 id=\"trie\">Where the graphs came from</h2>\n";
  Trie trie;
  for (const Event& e : query::events()) {
    if (e.kind != EventKind::Compile) continue;
    Trie* t = &trie;
    for (auto it = e.where.frames().rbegin(); it != e.where.frames().rend(); ++it)
      t = &t->children[it->str() + (it->function ? " in " + *it->function : std::string())];
    for (const GraphRecord* r : graphs)
      if (r->fn == e.fn && r->entry == e.entry && r->segment == e.segment) t->graphs.push_back(r->id());
  }
  std::string tree;
  trie_html(trie, &tree);
  body += tree.empty() ? "<p>No graphs were compiled.</p>\n" : tree;

  // Breaks: identical ones (same function, line and reason) in one card, with a count
  body += "<h2 id=\"breaks\">Graph breaks</h2>\n";
  struct Card {
    const Event* e;
    int count;
  };
  std::vector<Card> cards;
  for (const Event& e : query::events()) {
    if (e.kind != EventKind::GraphBreak) continue;
    auto same = [&](const Card& k) {
      return k.e->fn == e.fn && k.e->reason == e.reason && k.e->where.top().str() == e.where.top().str();
    };
    auto it = std::find_if(cards.begin(), cards.end(), same);
    if (it != cards.end())
      it->count++;
    else
      cards.push_back(Card{&e, 1});
  }
  int nb = 0;
  for (const Card& k : cards) {
    const Event& e = *k.e;
    SourceLoc t = e.where.top();
    body += fmt::format("<h3>{}. {}[{}] after segment {} &mdash; {}{}</h3>\n", ++nb, esc(e.fn), e.entry, e.segment,
                        t.known() ? esc(t.str()) : "?", k.count > 1 ? fmt::format(" &mdash; {} times", k.count) : "");
    body += fmt::format("<p><b>{}</b> ({})<br>asked for: <code>{}</code>{}</p>\n", esc(e.reason),
                        esc(std::string(break_kind_name(e.break_kind))), esc(e.details),
                        e.hint.empty() ? "" : "<br>hint: " + esc(e.hint));
    if (t.known()) body += "<pre>" + excerpt(*t.file, t.line) + "</pre>\n";
  }
  if (cards.empty()) body += "<p>No graph breaks.</p>\n";

  // Trace once: which entries skip the body, and what keeps Python running in the others.
  body += "<h2 id=\"python\">Which calls skip the body</h2>\n<pre>" + esc(why_python_text("")) + "</pre>\n";

  // Where the time went: what :profile shows, the slowest steps and each graph's and line's time.
  body += "<h2 id=\"time\">Where the time went</h2>\n<pre>" + esc(profile_text("")) + "</pre>\n";

  // Graphs: text, picture (its ids made unique), and a link to its entry's guards
  body += "<h2 id=\"graphs\">Graphs</h2>\n";
  for (const auto& r : graphs) {
    std::string a = anchor(r->id());
    bool listed = std::any_of(fns.begin(), fns.end(), [&](const auto& f) { return f->name() == r->fn; });
    std::string guards = listed
                             ? fmt::format("<p><a href=\"#e-{}\">guards of {}[{}]</a></p>\n",
                                           anchor(r->fn + "[" + std::to_string(r->entry) + "]"), esc(r->fn), r->entry)
                             : std::string();
    body += fmt::format("<div class=\"graph\" id=\"g-{}\"><h3>{}</h3>\n{}<pre>{}</pre>\n", a, esc(r->id()), guards,
                        esc(print_graph(*r->graph)));
    // graphviz lays out a few hundred nodes in a second, but a training step's thousand takes
    // minutes: past kMaxPictureNodes the report names the command that draws it instead.
    constexpr size_t kMaxPictureNodes = 300;
    if (r->graph->nodes.size() > kMaxPictureNodes) {
      body += fmt::format(
          "<p class=\"warn\">No picture: {} nodes would take graphviz minutes to lay out; <code>:render {} "
          "FILE.svg</code> draws it.</p>\n",
          r->graph->nodes.size(), esc(r->id()));
    } else
      try {
        body += unique_svg_ids(inline_svg(dot_text(r->id())), a + "-") + "\n";
      } catch (const Error& err) {
        body += "<p class=\"warn\">" + esc(err.what()) + "</p>\n";
      }
    body += "</div>\n";
  }
  if (graphs.empty()) body += "<p>No graphs were captured.</p>\n";

  std::string toc =
      "<nav><h2>Contents</h2><ul>\n<li><a href=\"#summary\">Summary</a></li>\n"
      "<li><a href=\"#why\">Why it recompiled</a></li>\n"
      "<li><a href=\"#functions\">Compiled functions</a></li>\n"
      "<li><a href=\"#trie\">Where the graphs came from</a></li>\n<li><a href=\"#breaks\">Graph breaks</a></li>\n"
      "<li><a href=\"#python\">Which calls skip the body</a></li>\n"
      "<li><a href=\"#time\">Where the time went</a></li>\n"
      "<li><a href=\"#graphs\">Graphs</a><ul>\n";
  for (const auto& r : graphs) toc += fmt::format("<li><a href=\"#g-{}\">{}</a></li>\n", anchor(r->id()), esc(r->id()));
  toc += "</ul></li></ul></nav>\n";

  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{}</style>"
      "</head>\n<body>\n<h1>{}</h1>\n{}{}</body></html>\n",
      esc(title), kStyle, esc(title), toc, body);
}

}  // namespace dyn::viz
