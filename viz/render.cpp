// Rendering DOT with graphviz in-process (libgvc).
#include "viz/render.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <mutex>

#include "core/error.h"

namespace dyn::viz {

namespace {

// graphviz reports errors through a global callback; collect them per call.
std::string g_errors;
int collect_error(char* msg) {
  g_errors += msg;
  return 0;
}

struct Context {
  GVC_t* gvc;
  Context() : gvc(gvContext()) { agseterrf(collect_error); }
  ~Context() { gvFreeContext(gvc); }
};

Context& context() {
  static Context c;
  return c;
}

Agraph_t* parse(const std::string& dot) {
  g_errors.clear();
  agseterr(AGERR);
  return agmemread(dot.c_str());
}

}  // namespace

std::string check_dot(const std::string& dot) {
  context();
  Agraph_t* g = parse(dot);
  if (!g) return g_errors.empty() ? std::string("graphviz could not parse the DOT text") : g_errors;
  agclose(g);
  return g_errors;
}

std::string render(const std::string& dot, const std::string& format) {
  if (format != "svg" && format != "png")
    fail(ErrorKind::Value, "cannot render '{}': expected a file ending in .svg or .png", format);
  Context& c = context();
  Agraph_t* g = parse(dot);
  if (!g) fail(ErrorKind::Value, "graphviz could not parse the DOT text: {}", g_errors);
  int nodes = agnnodes(g);
  if (nodes > kMaxRenderNodes) {
    agclose(g);
    fail(ErrorKind::Value,
         "this graph has {} nodes; rendering is limited to {} (graphviz layout time grows fast); read it with "
         ":graph, or write the DOT with :dot ID FILE and render parts of it",
         nodes, kMaxRenderNodes);
  }
  if (gvLayout(c.gvc, g, "dot") != 0) {
    agclose(g);
    fail(ErrorKind::Runtime, "graphviz could not lay out the graph: {}", g_errors);
  }
  char* data = nullptr;
  unsigned int len = 0;
  int rc = gvRenderData(c.gvc, g, format.c_str(), &data, &len);
  std::string out = rc == 0 && data ? std::string(data, len) : std::string();
  if (data) gvFreeRenderData(data);
  gvFreeLayout(c.gvc, g);
  agclose(g);
  if (rc != 0 || out.empty()) fail(ErrorKind::Runtime, "graphviz could not render {}: {}", format, g_errors);
  return out;
}

}  // namespace dyn::viz
