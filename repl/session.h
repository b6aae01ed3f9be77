// A REPL session: the read loop, the command table's state, breakpoints on capture events, and
// the nested prompt that opens when the running script stops at one.
#pragma once
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/query/query.h"
#include "repl/interpreter.h"
#include "repl/line_reader.h"

namespace dyn::repl {

struct Breakpoint {
  int id;
  EventKind kind;
  std::string fn;  // "" for any function
  int hits = 0;
};

// A command's mistake in what the user typed; printed as "error: ..." and the session goes on.
struct CommandError {
  std::string message;
};

class Session {
 public:
  Session(Interpreter& py, bool tty, bool color);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One line typed by the user (or given with -e): a :command or Python.
  void run_line(const std::string& line);
  // The top-level REPL until Ctrl-D, :quit or exit(); returns the exit status.
  int loop();

  // "KIND", "KIND:FN" or "KIND FN"; throws CommandError.
  const Breakpoint& add_breakpoint(const std::string& kind, const std::string& fn);
  void open_events_file(const std::string& path);  // throws CommandError
  // Every compiled graph is written as DIR/<graph id>.dot when it is compiled.
  void set_dot_dir(const std::string& dir);  // throws CommandError

  // ---- used by the commands ----
  Interpreter& py() { return py_; }
  void out(const std::string& s) { py_.write(s); }
  void error(const std::string& msg);
  bool stopped() const { return stopped_event_ != nullptr; }
  // Stopped at a breakpoint, or looking into an uncaught exception: Python runs in a user frame.
  bool in_frames() const { return stopped() || post_mortem_; }
  bool post_mortem_active() const { return post_mortem_; }
  // Opens the prompt in the frame that raised the last uncaught exception; false (with an
  // error line) when there was none.
  bool post_mortem(bool return_to_prompt);
  const Event* stopped_event() const { return stopped_event_; }
  std::vector<Breakpoint>& breakpoints() { return breakpoints_; }
  void request_continue() { continue_ = true; }
  // Ends the session: from the top level, after this line; while stopped, by unwinding the script.
  void request_quit(int code);
  bool quit_requested() const { return quit_; }
  int exit_status() const { return exit_status_; }
  bool color() const { return color_; }
  // Lines that failed: a command's error, a Python exception (-e lines make the status say so).
  int failed_lines() const { return failed_lines_; }
  // --batch: a breakpoint prints what it stops at and the script goes on (nobody could answer).
  void set_batch(bool b) { batch_ = b; }

 private:
  static void on_event(const Event& e, void* self);
  // A command's arguments naming a compiled function by the Python variable holding it.
  void resolve_variables(std::string_view command, std::vector<std::string>* words);
  void stop(const Event& e, Breakpoint& bp);
  // Reads and runs lines until EOF, :continue (nested) or a quit.
  void read_loop(bool nested);
  std::vector<std::string> complete(const std::string& line, const std::string& text);

  Interpreter& py_;
  LineReader reader_;
  bool color_;
  std::vector<Breakpoint> breakpoints_;
  int next_breakpoint_ = 1;
  const Event* stopped_event_ = nullptr;
  bool continue_ = false;
  bool quit_ = false;
  int exit_status_ = 0;
  std::FILE* events_file_ = nullptr;
  std::string dot_dir_;
  std::string pending_;  // a Python block being typed over several lines
  int failed_lines_ = 0;
  bool eof_warned_ = false;
  bool post_mortem_ = false;
  bool batch_ = false;
};

// ---- the command table (commands.cpp) ----

enum class CompleteWith { Nothing, Functions, Graphs, EventKinds, Files, Commands };

struct Command {
  const char* name;
  const char* args;
  const char* summary;
  const char* help;
  CompleteWith complete;
  void (*run)(Session& s, const std::vector<std::string>& args);
};

const std::vector<Command>& commands();
// The command named (with or without ':'), or nullptr.
const Command* find_command(const std::string& name);
// "did you mean ':graph'?" for a mistyped command, or "".
std::string suggest_command(const std::string& name);
std::optional<EventKind> parse_event_kind(const std::string& s);  // "graph-break" -> GraphBreak

}  // namespace dyn::repl
