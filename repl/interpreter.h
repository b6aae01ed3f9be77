// The embedded CPython interpreter: one RAII object owns its lifetime.
#pragma once
#include <string>
#include <vector>

namespace dyn::repl {

// The version of the embedded CPython ("3.11.2").
const char* python_version();

class Interpreter {
 public:
  // Starts CPython with sys.argv = argv, `path0` first on sys.path and the dyn package importable.
  Interpreter(const std::string& program, const std::vector<std::string>& argv, const std::string& path0);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Each returns an exit status as python would: 0, 1 after printing a traceback, or SystemExit's code.
  int run_file(const std::string& path);
  int run_source(const std::string& code, const std::string& filename);
  // One line typed by the user: an expression's value is echoed like the Python REPL does.
  int run_line(const std::string& line);
  // A plain Python read-eval-print loop on stdin until EOF or exit().
  int interact();
  // The status Py_FinalizeEx reports (flushing stdout may fail).
  int finalize();

 private:
  int status_of_pending_error();
  bool finalized_ = false;
};

}  // namespace dyn::repl
