// Where in the user's program an op or a graph break came from.
#pragma once
#include <string>
#include <vector>

namespace dyn {

// One user frame. Strings are interned for the process (see intern()), so copies are cheap.
struct SourceLoc {
  const std::string* file = nullptr;
  const std::string* function = nullptr;
  int line = 0;

  bool known() const { return file != nullptr; }
  std::string str() const;  // "file.py:12" or "<unknown>"
};

// The user's frames, innermost first; frames inside the dyn package are already left out.
struct SourceStack {
  std::vector<SourceLoc> frames;
  SourceLoc top() const { return frames.empty() ? SourceLoc{} : frames.front(); }
  // "file.py:12 `y = x + 1`", "file.py:12" when the line cannot be read, or "<unknown>".
  std::string str() const;
};

const std::string* intern(const std::string& s);

// Supplied by the binding layer (the engine knows nothing of Python).
using SourceLocator = SourceStack (*)();
void set_source_locator(SourceLocator f);
SourceStack current_source();

// The text of line `line` of `file`, stripped (or as written, with strip=false); empty when the
// file cannot be read.
std::string source_line(const std::string& file, int line, bool strip = true);

}  // namespace dyn
