// Reading REPL lines: GNU readline on a TTY (prompt, history, completion, Ctrl-C), plain lines
// from stdin otherwise (no prompt, so transcripts can be tested).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace dyn::repl {

class LineReader {
 public:
  // Completions for `text`, the word being completed, given the whole line so far.
  using Completer = std::function<std::vector<std::string>(const std::string& line, const std::string& text)>;

  LineReader(bool tty, std::string history_file);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // false at end of input (Ctrl-D). Ctrl-C while typing returns true with *interrupted set.
  bool read(const std::string& prompt, std::string* line, bool* interrupted);
  void set_completer(Completer c);
  bool tty() const { return tty_; }

 private:
  bool tty_;
  std::string history_file_;
};

}  // namespace dyn::repl
