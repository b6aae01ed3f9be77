// Writing a whole file the user named (:report, :dot, :render, --report), saying why it failed.
#pragma once
#include <string>

namespace dyn::repl {

// Why writing `path` failed with errno `err`, and what to do: "No such file or directory; create
// the folder '/x' first, or choose another path".
std::string write_failure(const std::string& path, int err);

// Why dynrepl will not write an output file over `path`: it names a Python source file (a script
// given where the file to write goes, `--report script.py`, would be replaced). "" when it may.
std::string refused_target(const std::string& path);

// Creates or truncates `path` and writes `data` to it; "" when all of it reached the file,
// else write_failure's or refused_target's text.
std::string write_file(const std::string& path, const std::string& data);

}  // namespace dyn::repl
