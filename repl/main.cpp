// dynrepl: runs a Python script with the dyn tensor library built in, then (on a TTY) the REPL.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/blas.h"
#include "core/query/query.h"
#include "repl/interpreter.h"
#include "repl/options.h"
#include "repl/session.h"
#include "repl/text.h"
#include "repl/write_file.h"
#include "viz/report.h"

namespace {

std::string script_folder(const std::string& script) {
  char buf[PATH_MAX];
  if (!realpath(script.c_str(), buf)) return ".";
  std::string p = buf;
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
}

// The engine is built for AVX2 (core/CMakeLists.txt). This runs before any static initializer of
// the engine (priority 101 comes first) and is built without AVX2, so an older CPU gets a message
// instead of an illegal-instruction crash.
__attribute__((constructor(101))) void require_avx2() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr,
                 "error: dynrepl needs an x86-64 CPU with AVX2 and FMA (Intel Haswell, AMD Zen or later); "
                 "this one has neither or only one of them\n");
    std::_Exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dyn::repl;
  dyn::select_blas_core();  // before anything (numpy included) loads OpenBLAS

  Options opt;
  try {
    opt = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "dynrepl: error: %s\nTry 'dynrepl --help' for the options.\n", printable(e.what()).c_str());
    return 2;
  }
  if (opt.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (opt.version) {
    std::printf("dynrepl %s (Python %s)\n", DYN_VERSION, python_version());
    return 0;
  }

  std::vector<std::string> sys_argv;
  std::string path0;
  if (opt.script) {
    sys_argv.push_back(*opt.script);
    path0 = script_folder(*opt.script);
  } else if (opt.code) {
    sys_argv.push_back("-c");
  } else {
    sys_argv.push_back("");
  }
  sys_argv.insert(sys_argv.end(), opt.args.begin(), opt.args.end());

  bool tty = isatty(0) && isatty(1);
  bool color = !opt.no_color && !std::getenv("NO_COLOR") && isatty(1);
  Interpreter py(argv[0], sys_argv, path0);
  if (opt.real_torch)
    py.watch_real_torch();
  else
    py.map_torch_to_dyn();
  Session session(py, isatty(0), color);
  session.set_batch(opt.batch);
  try {
    for (const auto& b : opt.breaks) session.add_breakpoint(b, "");
    if (opt.events) session.open_events_file(*opt.events);
    if (opt.dot_dir) session.set_dot_dir(*opt.dot_dir);
    if (opt.event_limit) dyn::query::set_event_limit(*opt.event_limit);
  } catch (const CommandError& e) {
    std::fprintf(stderr, "dynrepl: error: %s\n", printable(e.message).c_str());
    return 2;
  }

  // --report is written however the run ends (after the REPL, at :quit, or when stopped at a
  // breakpoint); a report that cannot be written makes the exit status 1.
  auto write_report = [&](int status) {
    if (!opt.report) return status;
    std::string failure = write_file(*opt.report, dyn::viz::html_report("dynrepl report"));
    if (failure.empty()) return status;
    std::fprintf(stderr, "dynrepl: error: cannot write the report '%s': %s\n", shown(*opt.report, kPathChars).c_str(),
                 failure.c_str());
    return status ? status : 1;
  };

  int status = 0;
  if (opt.script)
    status = py.run_file(*opt.script);
  else if (opt.code)
    status = py.run_source(*opt.code, "<string>");
  else  // a bare session: what a script would import first is there already
    py.run_source(opt.real_torch ? "import dyn\n" : "import dyn\nimport torch\n", "<dynrepl>");
  // --pm: an uncaught exception opens the prompt in the frame that raised it.
  if (opt.post_mortem && status == 1 && !session.quit_requested()) {
    session.post_mortem(false);
    return write_report(status);
  }
  if (session.quit_requested()) return write_report(session.exit_status());  // Ctrl-D or :quit while stopped
  // -e lines run even after the script failed, so a failed run can still be inspected.
  int failed_before_exec = session.failed_lines();
  for (const auto& line : opt.exec) {
    session.run_line(line);
    if (session.quit_requested()) {
      int failed = session.failed_lines() > failed_before_exec ? 1 : 0;  // a failed line before the :quit
      return write_report(status ? status : std::max(session.exit_status(), failed));
    }
  }
  // A -e line that failed (an error: line, a Python exception) makes the status say so.
  if (session.failed_lines() > failed_before_exec && status == 0) status = 1;
  bool nothing_to_run = !opt.script && !opt.code && opt.exec.empty();
  bool repl = !opt.batch && (opt.interactive || nothing_to_run || (opt.script && tty));
  if (repl) {
    if (tty)
      py.write(opt.real_torch ? "dynrepl: Python with dyn (import torch loads the installed PyTorch); :help lists the "
                                "commands, Ctrl-D exits\n"
                              : "dynrepl: Python with dyn (import torch gives dyn); :help lists the commands, Ctrl-D "
                                "exits\n");
    int s = session.loop();
    if (status == 0) status = s;
  }
  return write_report(status);
}
