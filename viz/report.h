// The HTML report: one self-contained page (no network, no external assets) with the counters,
// every compiled function's entries, guards and recompile reasons, every graph break with its
// source, and every graph as inline SVG.
#pragma once
#include <string>

namespace dyn::viz {

std::string html_report(const std::string& title);

}  // namespace dyn::viz
