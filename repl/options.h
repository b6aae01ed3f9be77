// The dynrepl command line (see shared/CONTRACT.md).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dyn::repl {

struct Options {
  std::optional<std::string> script;   // script.py
  std::optional<std::string> code;     // -c CODE
  std::vector<std::string> args;       // sys.argv[1:]
  std::vector<std::string> exec;       // -e lines, in order
  std::optional<std::string> events;   // --events FILE
  std::vector<std::string> breaks;     // --break KIND[:FN], repeatable
  std::optional<std::string> dot_dir;  // --dot-dir DIR
  std::optional<size_t> event_limit;   // --event-limit N
  std::optional<std::string> report;   // --report FILE.html
  bool interactive = false;            // -i
  bool batch = false;                  // --batch
  bool post_mortem = false;            // --pm
  bool no_color = false;
  bool real_torch = false;  // --real-torch: `import torch` is not mapped onto dyn
  bool help = false, version = false;
};

// Parses argv like python does: options stop at the script or -c; the rest are the script's.
// Throws std::invalid_argument with a message for the user on bad usage.
Options parse_options(int argc, char** argv);
std::string usage_text();

}  // namespace dyn::repl
