// Reading REPL lines with GNU readline, or from stdin.
#include "repl/line_reader.h"

#include <readline/history.h>
#include <readline/readline.h>
#include <setjmp.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace dyn::repl {

namespace {

LineReader::Completer g_completer;
std::vector<std::string> g_matches;

char* next_match(const char*, int state) {
  static size_t i;
  if (state == 0) i = 0;
  return i < g_matches.size() ? strdup(g_matches[i++].c_str()) : nullptr;
}

char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;  // no filename completion unless the completer wants it
  if (!g_completer) return nullptr;
  g_matches = g_completer(rl_line_buffer, text);
  rl_completion_append_character = ' ';
  for (const std::string& m : g_matches)
    if (!m.empty() && (m.back() == ' ' || m.back() == '(' || m.back() == '.')) rl_completion_append_character = '\0';
  if (g_matches.size() == 1 && g_matches[0] == "\x01files") {  // the completer asks for file names
    rl_attempted_completion_over = 0;
    return nullptr;
  }
  return rl_completion_matches(text, next_match);
}

// Ctrl-C at the prompt: readline restores the terminal, then re-raises to us; we jump out of
// readline and start a fresh line (Python's own handler is back while code runs).
sigjmp_buf g_jump;
volatile sig_atomic_t g_can_jump = 0;

void on_sigint(int) {
  if (g_can_jump) siglongjmp(g_jump, 1);
}

}  // namespace

LineReader::LineReader(bool tty, std::string history_file) : tty_(tty), history_file_(std::move(history_file)) {
  if (!tty_) return;
  rl_readline_name = "dynrepl";
  rl_attempted_completion_function = complete;
  using_history();
  stifle_history(2000);
  if (!history_file_.empty()) read_history(history_file_.c_str());
}

LineReader::~LineReader() {
  if (!tty_ || history_file_.empty()) return;
  write_history(history_file_.c_str());
  history_truncate_file(history_file_.c_str(), 2000);
}

void LineReader::set_completer(Completer c) { g_completer = std::move(c); }

bool LineReader::read(const std::string& prompt, std::string* line, bool* interrupted) {
  *interrupted = false;
  if (!tty_) {
    if (!std::getline(std::cin, *line)) return false;
    if (!line->empty() && line->back() == '\r') line->pop_back();
    return true;
  }
  struct sigaction sa = {}, old = {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  if (sigsetjmp(g_jump, 1) != 0) {
    g_can_jump = 0;
    rl_free_line_state();
    rl_cleanup_after_signal();
    sigaction(SIGINT, &old, nullptr);
    std::fputs("\n", stdout);
    std::fflush(stdout);
    *interrupted = true;
    line->clear();
    return true;
  }
  g_can_jump = 1;
  char* s = readline(prompt.c_str());
  g_can_jump = 0;
  sigaction(SIGINT, &old, nullptr);
  if (!s) return false;
  *line = s;
  if (*s) add_history(s);
  std::free(s);
  return true;
}

}  // namespace dyn::repl
