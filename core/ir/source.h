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
// Stacks are interned for the process: every recorded node carries one, and a loop's ops share it,
// so a node pays one pointer instead of a vector of frames.
class SourceStack {
 public:
  SourceStack() = default;
  explicit SourceStack(const std::vector<SourceLoc>& frames);
  const std::vector<SourceLoc>& frames() const;
  bool empty() const { return frames_ == nullptr; }
  SourceLoc top() const { return frames_ ? frames_->front() : SourceLoc{}; }
  // "file.py:12 `y = x + 1`", "file.py:12" when the line cannot be read, or "<unknown>".
  std::string str() const;

 private:
  const std::vector<SourceLoc>* frames_ = nullptr;  // interned, never empty; nullptr: no frames
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
