// A REPL session: the read loop, breakpoints and the nested prompt of a stopped script.
#include "repl/session.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/query/query.h"
#include "repl/text.h"
#include "repl/write_file.h"
#include "viz/dot.h"
#include "viz/views.h"

namespace dyn::repl {

namespace {

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.dynrepl_history" : std::string();
}

// Words separated by blanks; '...' and "..." keep blanks inside one word, as a shell does.
std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> w;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) w.push_back(cur), cur.clear(), in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) w.push_back(cur);
  return w;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

Session::Session(Interpreter& py, bool tty, bool color)
    : py_(py), reader_(tty, tty ? history_path() : std::string()), color_(color) {
  reader_.set_completer([this](const std::string& line, const std::string& text) { return complete(line, text); });
  query::set_listener(&Session::on_event, this);
}

Session::~Session() {
  query::set_listener(nullptr, nullptr);
  if (events_file_) std::fclose(events_file_);
}

void Session::error(const std::string& msg) {
  ++failed_lines_;
  // Messages from the engine echo ids as typed: nothing the user typed reaches the terminal raw.
  std::string text = printable(msg);
  py_.write_err(color_ ? "\x1b[31merror:\x1b[0m " + text + "\n" : "error: " + text + "\n");
}

void Session::request_quit(int code) {
  quit_ = true;
  exit_status_ = code;
  // While stopped inside the script, leaving means unwinding it: SystemExit through the engine.
  if (stopped()) throw ExitRequest{code};
}

const Breakpoint& Session::add_breakpoint(const std::string& kind_in, const std::string& fn_in) {
  std::string kind = kind_in, fn = fn_in;
  size_t colon = kind.find(':');
  if (colon != std::string::npos && fn.empty()) {
    fn = kind.substr(colon + 1);
    kind = kind.substr(0, colon);
  }
  auto k = parse_event_kind(kind);
  if (!k || *k == EventKind::CacheHit)
    throw CommandError{
        fmt::format("unknown event kind '{}'; expected graph-break, recompile, guard-failure, "
                    "compile or fallback",
                    shown(kind))};
  breakpoints_.push_back(Breakpoint{next_breakpoint_++, *k, fn});
  return breakpoints_.back();
}

void Session::open_events_file(const std::string& path) {
  events_file_ = std::fopen(path.c_str(), "w");
  if (!events_file_) {
    std::string failure = write_failure(path, errno);
    throw CommandError{fmt::format("cannot write the events file '{}': {}", shown(path, kPathChars), failure)};
  }
}

void Session::set_dot_dir(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 && mkdir(dir.c_str(), 0755) != 0) {
    std::string reason = std::strerror(errno);
    throw CommandError{fmt::format("cannot create the DOT folder '{}': {}", shown(dir, kPathChars), reason)};
  }
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw CommandError{fmt::format("--dot-dir '{}' is not a folder", shown(dir, kPathChars))};
  dot_dir_ = dir;
}

void Session::on_event(const Event& e, void* self_ptr) {
  auto* self = static_cast<Session*>(self_ptr);
  if (!self->dot_dir_.empty() && (e.kind == EventKind::Compile || e.kind == EventKind::Recompile)) {
    // A compile writes its graph; a recompile also the graphs the new entry shares with an older one.
    std::vector<std::string> ids;
    if (e.kind == EventKind::Compile) ids.push_back(fmt::format("{}[{}].{}", e.fn, e.entry, e.segment));
    for (const GraphRecord* r : query::graphs())
      if (e.kind == EventKind::Recompile && r->fn == e.fn && r->entry == e.entry) ids.push_back(r->id());
    for (const std::string& id : ids) {
      std::string name = id;
      std::replace(name.begin(), name.end(), '/', '_');
      std::ofstream f(self->dot_dir_ + "/" + name + ".dot");
      try {
        f << viz::dot_text(id);
      } catch (const Error&) {
        // nothing recorded under that id (yet): nothing to draw
      }
    }
  }
  if (self->events_file_) {
    std::string j = query::event_json(e) + "\n";
    std::fwrite(j.data(), 1, j.size(), self->events_file_);
    std::fflush(self->events_file_);
  }
  // No breakpoints inside a stop, nor in post-mortem (its frames are the traceback's).
  if (self->stopped() || self->post_mortem_) return;
  for (Breakpoint& bp : self->breakpoints_)
    if (bp.kind == e.kind && (bp.fn.empty() || bp.fn == e.fn)) {
      self->stop(e, bp);
      return;
    }
}

void Session::stop(const Event& e, Breakpoint& bp) {
  ++bp.hits;
  // Nothing may sync or record while stopped: lazy tensors show their pending node.
  auto pause = std::make_unique<query::Pause>();
  stopped_event_ = &e;
  bool in_frame = py_.enter_user_frame();
  SourceLoc top = e.where.top();
  std::string text = top.known() ? source_line(*top.file, top.line) : std::string();
  std::string kind(event_kind_name(e.kind));
  std::replace(kind.begin(), kind.end(), '_', '-');  // as :break spells it
  std::string head = fmt::format("stopped at breakpoint {}: {} in {}", bp.id, kind, e.fn);
  out((color_ ? "\x1b[33m" + head + "\x1b[0m" : head) + "\n");
  out(fmt::format("  {}\n", e.reason));
  if (e.kind == EventKind::Recompile) {
    for (const GuardFailure& g : e.failures)
      out(g.entry >= 0 ? fmt::format("  {}[{}] failed {}: {}\n", e.fn, g.entry, guard_kind_name(g.kind), g.str())
                       : fmt::format("  {}\n", g.str()));
  } else if (e.kind == EventKind::GraphBreak) {
    out(fmt::format("  asked for: {}\n", e.details));
    if (!e.hint.empty()) out(fmt::format("  hint: {}\n", e.hint));
  } else if (e.kind == EventKind::GuardFailure) {
    // the reason already says it all
  } else if (!e.details.empty()) {
    out(fmt::format("  {}\n", e.details));
  }
  if (top.known()) out(fmt::format("  at {}{}\n", top.str(), text.empty() ? "" : "  " + text));
  auto leave = [&] {
    pending_.clear();  // a block half typed at the stop is not the outer prompt's
    if (in_frame) py_.leave_user_frame();
    stopped_event_ = nullptr;
    pause.reset();
  };
  if (batch_) {
    out("  (--batch: no prompt to stop at; the script goes on)\n");
    leave();
    return;
  }
  if (!in_frame) out("  (no user frame: Python runs in the main namespace)\n");
  out("  (:where shows the stack, :up/:down move, :list shows the source, :continue resumes, Ctrl-D or :quit "
      "exits)\n");
  try {
    read_loop(true);
  } catch (...) {
    leave();
    throw;
  }
  leave();
}

void Session::resolve_variables(std::string_view command, std::vector<std::string>* words) {
  // Commands that take a function (or a graph id starting with one) accept the Python variable
  // that holds the compiled function too: `:graph step` for `step = dyn.compile(train_step)`.
  static const std::set<std::string_view> takes_fn = {"graph", "graphs", "guards", "why-recompile", "breaks",
                                                      "break", "diff",   "dot",    "render",        "events"};
  if (!takes_fn.count(command)) return;
  auto fns = query::functions();
  for (std::string& w : *words) {
    if (w.empty() || w[0] == '-') continue;  // an option
    size_t cut = std::min(w.find('['), w.find(':'));
    std::string head = w.substr(0, cut);
    if (head.find_first_of("./") != std::string::npos) continue;  // a file
    if (std::any_of(fns.begin(), fns.end(), [&](const auto& f) { return f->name() == head; })) continue;
    std::string name = py_.compiled_name(head);
    if (!name.empty()) w = name + (cut == std::string::npos ? "" : w.substr(cut));
  }
}

void Session::run_line(const std::string& raw) {
  if (raw.find('\0') != std::string::npos) {
    error("the line contains a NUL byte and was not run; type text (Python or a :command)");
    return;
  }
  if (size_t at = invalid_utf8_at(raw); at != std::string::npos) {
    error(fmt::format("the line is not UTF-8 text (byte 0x{:02x} at column {}) and was not run; type text",
                      static_cast<unsigned char>(raw[at]), at + 1));
    return;
  }
  std::string line = trim(raw);
  if (pending_.empty() && !line.empty() && line[0] == ':') {
    std::vector<std::string> words = split_words(line.substr(1));
    if (words.empty()) {
      error("expected a command after ':'; :help lists them");
      return;
    }
    const Command* c = find_command(words[0]);
    if (!c) {
      std::string hint = suggest_command(words[0]);
      error(fmt::format("unknown command ':{}'{}", shown(words[0]),
                        hint.empty() ? "; :help lists the commands" : "; " + hint));
      return;
    }
    words.erase(words.begin());
    resolve_variables(c->name, &words);
    try {
      c->run(*this, words);
    } catch (const CommandError& e) {
      error(e.message);
    } catch (const Error& e) {
      error(e.what());
    }
    return;
  }
  // The block leaves pending_ before it runs: a breakpoint that stops it opens a prompt whose
  // input must start afresh, not be glued onto the line that is running.
  std::string source = pending_.empty() ? raw : pending_ + "\n" + raw;
  pending_.clear();
  std::optional<int> exit_code;
  Interpreter::Input r = py_.run_interactive(source, &exit_code);
  if (r == Interpreter::Input::Incomplete) {
    pending_ = std::move(source);
    return;
  }
  if (r == Interpreter::Input::Error) ++failed_lines_;
  if (exit_code) request_quit(*exit_code);
}

void Session::read_loop(bool nested) {
  for (;;) {
    if (quit_) return;
    if (nested && continue_) {
      // Taken by the stop it resumes: a post-mortem of the same script opens later and must read.
      continue_ = false;
      return;
    }
    std::string prompt = !pending_.empty() ? "... "
                         : post_mortem_    ? "(pm) dynrepl> "
                         : nested          ? "(stopped) dynrepl> "
                                           : "dynrepl> ";
    std::string line;
    bool interrupted = false;
    if (!reader_.read(prompt, &line, &interrupted)) {
      if (reader_.tty()) out("\n");
      pending_.clear();
      if (nested && !post_mortem_ && reader_.tty() && !eof_warned_) {
        // The script is cut short by a Ctrl-D here: say so once before doing it.
        eof_warned_ = true;
        out("the script is stopped; Ctrl-D again (or :quit) ends it, :continue resumes it\n");
        continue;
      }
      // Ending a stopped script is not a success (as pdb's quit); at the top level, Ctrl-D is.
      request_quit(nested ? std::max(exit_status_, 1) : exit_status_);
      return;
    }
    eof_warned_ = false;
    if (interrupted) {
      pending_.clear();
      out("KeyboardInterrupt\n");
      continue;
    }
    run_line(line);
  }
}

bool Session::post_mortem(bool return_to_prompt) {
  std::string where;
  if (!py_.enter_post_mortem(&where)) {
    error(where.empty() ? "no uncaught exception to look into: the script did not raise (or raised inside dyn only)"
                        : "no frame to look into: " + where);
    return false;
  }
  out("post-mortem: the script raised; Python runs in the frame that raised it\n  at " + where + "\n");
  out("  (:where shows the traceback's frames, :up/:down move, :list shows the source, Ctrl-D or :quit leaves)\n");
  post_mortem_ = true;
  int status = exit_status_;
  try {
    read_loop(true);
  } catch (...) {
    post_mortem_ = false;
    py_.leave_user_frame();
    throw;
  }
  post_mortem_ = false;
  py_.leave_user_frame();
  // Leaving a post-mortem opened from the prompt goes back to it, as pdb does; after --pm (no
  // prompt to go back to) the session ends.
  if (return_to_prompt) {
    quit_ = false;
    exit_status_ = status;
  }
  return true;
}

int Session::loop() {
  read_loop(false);
  return exit_status_;
}

std::vector<std::string> Session::complete(const std::string& line, const std::string& text) {
  std::vector<std::string> out;
  std::string l = trim(line);
  auto add_matching = [&](const std::vector<std::string>& cands, const std::string& prefix = "") {
    for (const std::string& c : cands)
      if ((prefix + c).rfind(text, 0) == 0) out.push_back(prefix + c);
  };
  if (!l.empty() && l[0] == ':') {
    std::vector<std::string> words = split_words(l.substr(1));
    bool first_word = words.empty() || (words.size() == 1 && line.back() != ' ');
    if (first_word) {
      std::vector<std::string> names;
      for (const Command& c : commands()) names.push_back(std::string(":") + c.name);
      add_matching(names);
      return out;
    }
    const Command* c = find_command(words[0]);
    if (!c) return out;
    switch (c->complete) {
      case CompleteWith::Functions:
        add_matching(viz::function_names());
        break;
      case CompleteWith::Graphs:
        add_matching(viz::graph_ids());
        add_matching(viz::function_names());
        break;
      case CompleteWith::EventKinds:
        add_matching({"graph-break", "recompile", "guard-failure", "compile", "fallback"});
        add_matching(viz::function_names());
        break;
      case CompleteWith::Commands: {
        std::vector<std::string> names;
        for (const Command& cmd : commands()) names.push_back(cmd.name);
        add_matching(names);
        break;
      }
      case CompleteWith::Files:
        return {"\x01files"};
      case CompleteWith::Nothing:
        break;
    }
    return out;
  }
  return py_.complete(text);
}

}  // namespace dyn::repl
