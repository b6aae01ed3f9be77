// The embedded CPython interpreter: one RAII object owns its lifetime.
#pragma once
#include <optional>
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

  // `import torch` (torchvision, torch_xla) gives dyn from now on; a failure is printed, not fatal.
  void map_torch_to_dyn();
  // --real-torch: the PyTorch venv on sys.path, and once torch is imported its Dynamo's graphs,
  // breaks, guards and recompiles logged as dyn's events are (dyn/_real_torch.py).
  void watch_real_torch();
  // Each returns an exit status as python would: 0, 1 after printing a traceback, or SystemExit's code.
  int run_file(const std::string& path);
  int run_source(const std::string& code, const std::string& filename);
  // One line typed by the user: an expression's value is echoed like the Python REPL does.
  int run_line(const std::string& line);
  // The status Py_FinalizeEx reports (flushing stdout may fail).
  int finalize();

  // ---- REPL support ----
  enum class Input { Complete, Incomplete, Error };
  // Compiles one interactive input by Python's own rules (codeop) and, when complete, runs it in
  // the current namespace, echoing an expression's value. Exceptions are printed; SystemExit
  // (exit(), quit(), sys.exit()) sets *exit_code instead.
  Input run_interactive(const std::string& source, std::optional<int>* exit_code);
  // The engine's name of the compiled function a Python variable holds (`step` for
  // `step = dyn.compile(train_step)`), or "" when the name holds none. Reads the variable only.
  std::string compiled_name(const std::string& variable);
  // Completions of a Python name or attribute in the current namespace.
  std::vector<std::string> complete(const std::string& text);
  // While stopped at a breakpoint, Python runs in the innermost user frame's namespace; a name
  // assigned there is written back to the frame (as pdb does).
  bool enter_user_frame();
  void leave_user_frame();
  // The user's Python stack, innermost first: "  file:line in func" and the source line; the
  // frame Python runs in is marked ">".
  std::string user_stack();
  // Post-mortem: Python runs in the innermost user frame of the last uncaught exception's
  // traceback (sys.last_traceback), :up/:down move along it. False when there is none; then
  // *where says why when there is more to say than that nothing raised.
  bool enter_post_mortem(std::string* where);
  // While stopped: Python runs in the frame `delta` further out (up, > 0) or in (down, < 0).
  // Returns where it is now ("file:line in func" and the source line), or an error message
  // starting with "error:".
  std::string move_frame(int delta);
  // While stopped: the source around the line of the frame Python runs in, `context` lines each
  // side, the current line marked "->".
  std::string list_source(int context);
  // Output through sys.stdout / sys.stderr, so it interleaves with the program's own prints.
  void write(const std::string& s);
  void write_err(const std::string& s);
  // :run: sys.argv, a fresh capture state (dyn.debug.reset()), then the file in __main__.
  int run_script(const std::string& path, const std::vector<std::string>& args);
  // For the events listener: a Python exception raised while a line ran must not leak.
  bool error_pending() const;

 private:
  // mode is Py_file_input or Py_single_input (which echoes an expression's value).
  int run_code(const std::string& source, const char* filename, int mode);
  int status_of_pending_error(std::optional<int>* exit_code = nullptr);
  bool finalized_ = false;
  struct Namespace {
    void* globals;  // PyObject*
    void* locals;
    void* frame = nullptr;  // PyFrameObject* whose locals these are (written back after a line)
  };
  std::vector<Namespace> frames_;
  // While stopped: the user's frames, innermost first (new references), and the one Python runs in.
  std::vector<void*> stack_;
  size_t stack_pos_ = 0;
  void write_back_locals();
  // Python runs in stack_[0]'s namespace; false (stack_ released) when it cannot be read.
  bool open_innermost();
  std::string frame_line(void* frame, bool with_source);
};

}  // namespace dyn::repl
