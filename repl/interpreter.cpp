// The embedded CPython interpreter.
#include "repl/interpreter.h"

#include "core/ir/source.h"
#include "python/py_common.h"
#include "repl/text.h"

#include <fmt/format.h>
#include <frameobject.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern "C" PyObject* PyInit__dyn();

namespace dyn::repl {

namespace {

void check_status(PyStatus st) {
  if (PyStatus_Exception(st)) Py_ExitStatusException(st);
}

std::string dyn_python_dir() {
  if (const char* env = std::getenv("DYN_PYTHON_DIR")) return env;
  return DYN_PYTHON_DIR;
}

PyObject* main_dict() { return PyModule_GetDict(PyImport_AddModule("__main__")); }

}  // namespace

const char* python_version() { return PY_VERSION; }

Interpreter::Interpreter(const std::string& program, const std::vector<std::string>& argv, const std::string& path0) {
  if (PyImport_AppendInittab("_dyn", PyInit__dyn) < 0) throw std::runtime_error("cannot register the _dyn module");
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  config.safe_path = 1;  // we put the script's folder on sys.path ourselves, as python would
  config.install_signal_handlers = 1;
  // We embed Debian's libpython: its standard library lives under the prefix it was built for,
  // whatever python3 comes first on PATH.
  if (!std::getenv("PYTHONHOME")) check_status(PyConfig_SetBytesString(&config, &config.home, DYN_PYTHON_HOME));
  check_status(PyConfig_SetBytesString(&config, &config.program_name, program.c_str()));
  std::vector<char*> av;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  check_status(PyConfig_SetBytesArgv(&config, static_cast<Py_ssize_t>(av.size()), av.data()));
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  check_status(st);

  PyObject* sys_path = PySys_GetObject("path");  // borrowed
  PyObject* dir = PyUnicode_DecodeFSDefault(dyn_python_dir().c_str());
  PyList_Insert(sys_path, 0, dir);
  Py_DECREF(dir);
  PyObject* p0 = PyUnicode_DecodeFSDefault(path0.c_str());
  PyList_Insert(sys_path, 0, p0);
  Py_DECREF(p0);
}

Interpreter::~Interpreter() { finalize(); }

namespace {
// module.install(); a failure is printed, not fatal.
void install(const char* module) {
  PyObject* m = PyImport_ImportModule(module);
  PyObject* r = m ? PyObject_CallMethod(m, "install", nullptr) : nullptr;
  if (!r) PyErr_Print();
  Py_XDECREF(r);
  Py_XDECREF(m);
}
}  // namespace

void Interpreter::map_torch_to_dyn() { install("dyn._torch_finder"); }

void Interpreter::watch_real_torch() { install("dyn._real_torch"); }

int Interpreter::finalize() {
  if (finalized_) return 0;
  finalized_ = true;
  return Py_FinalizeEx() < 0 ? 120 : 0;
}

namespace {
// Prints the pending exception with dyn's own frames left out (dyn._traceback), and says so.
void print_user_traceback() {
  const char* mode = std::getenv("DYNREPL_TRACEBACK");
  if (mode && std::string(mode) == "full") {
    PyErr_Print();
    return;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  long hidden = 0;
  if (value) {
    PyObject* m = PyImport_ImportModule("dyn._traceback");
    PyObject* r = m ? PyObject_CallMethod(m, "strip", "O", value) : nullptr;
    if (r) hidden = PyLong_AsLong(r);
    if (!r || hidden < 0) hidden = 0;
    PyErr_Clear();  // a traceback we cannot shorten is printed as it is
    Py_XDECREF(r);
    Py_XDECREF(m);
  }
  if (hidden > 0 && value) {
    Py_XDECREF(tb);
    tb = PyException_GetTraceback(value);
  }
  PyErr_Restore(type, value, tb);
  PyErr_Print();
  if (hidden > 0)
    PySys_WriteStderr("(%ld frame%s inside dyn left out; DYNREPL_TRACEBACK=full shows them)\n", hidden,
                      hidden == 1 ? "" : "s");
}
}  // namespace

int Interpreter::status_of_pending_error(std::optional<int>* exit_code) {
  if (!PyErr_ExceptionMatches(PyExc_SystemExit)) {
    print_user_traceback();
    return 1;
  }
  // SystemExit: its code is the status; PyErr_Print would exit the process here instead.
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  int status = 0;
  PyObject* code = value ? PyObject_GetAttrString(value, "code") : nullptr;
  if (code && code != Py_None) {
    if (PyLong_Check(code)) {
      status = static_cast<int>(PyLong_AsLong(code));
    } else {
      PyObject* s = PyObject_Str(code);
      if (s) {
        PySys_WriteStderr("%s\n", PyUnicode_AsUTF8(s));
        Py_DECREF(s);
      }
      status = 1;
    }
  }
  PyErr_Clear();
  Py_XDECREF(code);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  if (exit_code) *exit_code = status;
  return status;
}

int Interpreter::run_code(const std::string& source, const char* filename, int mode) {
  PyObject* code = Py_CompileStringExFlags(source.c_str(), filename, mode, nullptr, -1);
  if (!code) return status_of_pending_error();
  PyObject* result = PyEval_EvalCode(code, main_dict(), main_dict());
  Py_DECREF(code);
  if (!result) return status_of_pending_error();
  Py_DECREF(result);
  return 0;
}

int Interpreter::run_source(const std::string& source, const std::string& filename) {
  return run_code(source, filename.c_str(), Py_file_input);
}

int Interpreter::run_file(const std::string& path) {
  // A folder opens as a stream that reads nothing, which would run as an empty script.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    write_err(fmt::format("dynrepl: error: cannot run '{}': it is a folder, not a script; name the .py file to run\n",
                          shown(path, kPathChars)));
    return 1;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;  // before anything else can change it
    std::fprintf(stderr, "dynrepl: can't open file '%s': [Errno %d] %s\n", shown(path, kPathChars).c_str(), err,
                 std::strerror(err));
    return 2;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  // Python compiles a C string: it would stop at the first NUL and run what comes before it.
  if (size_t nul = buf.view().find('\0'); nul != std::string_view::npos) {
    auto line = std::count(buf.view().begin(), buf.view().begin() + static_cast<long>(nul), '\n') + 1;
    write_err(
        fmt::format("dynrepl: error: cannot run '{}': line {} contains a NUL byte (source code cannot contain "
                    "null bytes); is it a Python script?\n",
                    shown(path, kPathChars), line));
    return 1;
  }
  PyObject* d = main_dict();
  PyObject* file = PyUnicode_DecodeFSDefault(path.c_str());
  PyDict_SetItemString(d, "__file__", file);
  Py_DECREF(file);
  PyDict_SetItemString(d, "__cached__", Py_None);
  return run_source(buf.str(), path);
}

int Interpreter::run_line(const std::string& line) {
  // 'single' mode echoes an expression's value through sys.displayhook, as the Python REPL does.
  return run_code(line, "<exec>", Py_single_input);
}

namespace {

PyObject* g_compiler = nullptr;  // codeop.CommandCompiler(): remembers __future__ imports

}  // namespace

Interpreter::Input Interpreter::run_interactive(const std::string& source, std::optional<int>* exit_code) {
  if (!g_compiler) {
    PyObject* codeop = PyImport_ImportModule("codeop");
    if (codeop) {
      g_compiler = PyObject_CallMethod(codeop, "CommandCompiler", nullptr);
      Py_DECREF(codeop);
    }
    if (!g_compiler) {
      PyErr_Print();
      return Input::Error;
    }
  }
  PyObject* code = PyObject_CallFunction(g_compiler, "sss", source.c_str(), "<stdin>", "single");
  if (!code) {
    // Whatever compiling raised (a SyntaxError, or a MemoryError or RecursionError on too deep a
    // nesting), its frames are codeop's, the REPL's own: like the Python REPL, print the error
    // alone, and leave no traceback for :pm to open in.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_XDECREF(tb);
    if (value) PyException_SetTraceback(value, Py_None);
    PyErr_Restore(type, value, nullptr);
    status_of_pending_error(exit_code);
    return Input::Error;
  }
  if (code == Py_None) {
    Py_DECREF(code);
    return Input::Incomplete;
  }
  PyObject* globals = frames_.empty() ? main_dict() : static_cast<PyObject*>(frames_.back().globals);
  PyObject* locals = frames_.empty() ? globals : static_cast<PyObject*>(frames_.back().locals);
  // The frame's variables as they are now (the script may have run since), then written back.
  if (!frames_.empty() && frames_.back().frame &&
      PyFrame_FastToLocalsWithError(static_cast<PyFrameObject*>(frames_.back().frame)) < 0)
    PyErr_Clear();
  // Stopped inside an except block of the program (Dynamo logs a graph break while it handles
  // the Unsupported it raised), a line's error would chain that exception as its context and print
  // the library's traceback after the user's: the line runs with nothing being handled.
  PyObject* handled = PyErr_GetHandledException();
  PyErr_SetHandledException(nullptr);
  PyObject* result = PyEval_EvalCode(code, globals, locals);
  PyErr_SetHandledException(handled);
  Py_XDECREF(handled);
  Py_DECREF(code);
  write_back_locals();
  if (!result) {
    status_of_pending_error(exit_code);  // printed, unless it is SystemExit; the session goes on
    return exit_code && *exit_code ? Input::Complete : Input::Error;
  }
  Py_DECREF(result);
  return Input::Complete;
}

std::vector<std::string> Interpreter::complete(const std::string& text) {
  std::vector<std::string> out;
  // rlcompleter imports Python's readline module when it can, which takes over GNU readline
  // (completion, history) from dynrepl: hide it for the import, then put things back.
  PyObject* modules = PySys_GetObject("modules");
  PyObject* had = modules ? PyDict_GetItemString(modules, "readline") : nullptr;
  Py_XINCREF(had);
  if (modules && !PyDict_GetItemString(modules, "rlcompleter")) PyDict_SetItemString(modules, "readline", Py_None);
  PyObject* rl = PyImport_ImportModule("rlcompleter");
  if (modules) {
    if (had)
      PyDict_SetItemString(modules, "readline", had);
    else if (PyDict_GetItemString(modules, "readline") == Py_None)
      PyDict_DelItemString(modules, "readline");
  }
  Py_XDECREF(had);
  if (!rl) {
    PyErr_Clear();
    return out;
  }
  PyObject* ns = PyDict_Copy(frames_.empty() ? main_dict() : static_cast<PyObject*>(frames_.back().globals));
  if (!frames_.empty()) PyDict_Update(ns, static_cast<PyObject*>(frames_.back().locals));
  PyObject* completer = PyObject_CallMethod(rl, "Completer", "O", ns);
  Py_DECREF(rl);
  Py_DECREF(ns);
  if (!completer) {
    PyErr_Clear();
    return out;
  }
  for (int i = 0; i < 500; ++i) {
    PyObject* r = PyObject_CallMethod(completer, "complete", "si", text.c_str(), i);
    if (!r) {
      PyErr_Clear();
      break;
    }
    if (r == Py_None) {
      Py_DECREF(r);
      break;
    }
    if (const char* c = PyUnicode_AsUTF8(r)) out.push_back(c);
    Py_DECREF(r);
  }
  Py_DECREF(completer);
  return out;
}

namespace {
// The innermost frame that is the user's: frames of the dyn package and of dynrepl itself
// (the prompt's own "<stdin>"/"<exec>" code) are skipped.
PyFrameObject* user_frame(PyFrameObject* f) {
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    Py_DECREF(code);
    if (!dyn::py::is_library_file(file)) return f;
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return nullptr;
}
}  // namespace

bool Interpreter::open_innermost() {
  stack_pos_ = 0;
  if (stack_.empty()) return false;
  auto* top = static_cast<PyFrameObject*>(stack_[0]);
  PyObject* globals = PyFrame_GetGlobals(top);
  PyObject* locals = PyFrame_GetLocals(top);
  if (!globals || !locals) {
    PyErr_Clear();
    Py_XDECREF(globals);
    Py_XDECREF(locals);
    for (void* p : stack_) Py_DECREF(static_cast<PyObject*>(p));
    stack_.clear();
    return false;
  }
  frames_.push_back(Namespace{globals, locals, top});
  return true;
}

bool Interpreter::enter_user_frame() {
  // Every user frame, innermost first: :up and :down move between them.
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  f = user_frame(f);
  while (f) {
    stack_.push_back(f);
    PyFrameObject* back = PyFrame_GetBack(f);
    f = user_frame(back);
  }
  return open_innermost();
}

bool Interpreter::enter_post_mortem(std::string* where) {
  PyObject* tb = PySys_GetObject("last_traceback");  // borrowed; set when an exception was printed
  if (!tb || tb == Py_None) {
    PyObject* last = PySys_GetObject("last_value");  // borrowed
    if (last && last != Py_None)
      *where =
          fmt::format("the last error ({}) was raised compiling the code, which never ran", Py_TYPE(last)->tp_name);
    return false;
  }
  std::vector<PyObject*> frames;  // outermost first
  PyObject* t = tb;
  while (t && t != Py_None) {
    PyObject* frame = PyObject_GetAttrString(t, "tb_frame");
    if (!frame) PyErr_Clear();
    if (frame) {
      auto* f = reinterpret_cast<PyFrameObject*>(frame);
      PyCodeObject* code = PyFrame_GetCode(f);
      const char* file = PyUnicode_AsUTF8(code->co_filename);
      Py_DECREF(code);
      if (!dyn::py::is_library_file(file))
        frames.push_back(frame);
      else
        Py_DECREF(frame);
    }
    PyObject* next = PyObject_GetAttrString(t, "tb_next");
    if (t != tb) Py_DECREF(t);
    t = next;
  }
  if (t && t != tb) Py_DECREF(t);
  PyErr_Clear();
  if (frames.empty()) return false;
  leave_user_frame();
  stack_.assign(frames.rbegin(), frames.rend());  // innermost first; the references move
  if (!open_innermost()) return false;
  *where = frame_line(stack_[0], true);
  return true;
}

void Interpreter::leave_user_frame() {
  if (frames_.empty()) return;
  Py_DECREF(static_cast<PyObject*>(frames_.back().globals));
  Py_DECREF(static_cast<PyObject*>(frames_.back().locals));
  frames_.pop_back();
  for (void* p : stack_) Py_DECREF(static_cast<PyObject*>(p));
  stack_.clear();
  stack_pos_ = 0;
}

void Interpreter::write_back_locals() {
  if (frames_.empty() || !frames_.back().frame) return;
  // The frame is suspended in the op call that stopped it; its fast locals take the namespace's
  // values, so `x = ...` at the prompt is what the script sees when it goes on.
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyFrame_LocalsToFast(static_cast<PyFrameObject*>(frames_.back().frame), 0);
  PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

std::string Interpreter::compiled_name(const std::string& variable) {
  if (variable.empty() || !(std::isalpha(static_cast<unsigned char>(variable[0])) || variable[0] == '_')) return {};
  for (char c : variable)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return {};
  PyObject* globals = frames_.empty() ? main_dict() : static_cast<PyObject*>(frames_.back().globals);
  PyObject* locals = frames_.empty() ? globals : static_cast<PyObject*>(frames_.back().locals);
  PyObject* obj = PyMapping_Check(locals) ? PyMapping_GetItemString(locals, variable.c_str()) : nullptr;
  if (!obj) {
    PyErr_Clear();
    obj = PyDict_GetItemString(globals, variable.c_str());  // borrowed
    Py_XINCREF(obj);
  }
  if (!obj) return {};
  std::string out;
  // Only dyn's own CompiledFunction, whose name is a plain attribute of its engine state: no user
  // code (a property of another type) runs for a command's argument.
  PyObject* mod = PyImport_ImportModule("dyn._compile");
  PyObject* cls = mod ? PyObject_GetAttrString(mod, "CompiledFunction") : nullptr;
  if (cls && PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(cls)) &&
      Py_TYPE(obj) == reinterpret_cast<PyTypeObject*>(cls)) {
    PyObject* name = PyObject_GetAttrString(obj, "name");
    const char* text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
    if (text) out = text;
    Py_XDECREF(name);
  }
  PyErr_Clear();
  Py_XDECREF(cls);
  Py_XDECREF(mod);
  Py_DECREF(obj);
  return out;
}

std::string Interpreter::frame_line(void* frame, bool with_source) {
  auto* f = static_cast<PyFrameObject*>(frame);
  PyCodeObject* code = PyFrame_GetCode(f);
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* name = PyUnicode_AsUTF8(code->co_name);
  std::string fname = file ? file : "?";
  int line = PyFrame_GetLineNumber(f);
  size_t slash = fname.rfind('/');
  std::string out = (slash == std::string::npos ? fname : fname.substr(slash + 1)) + ":" + std::to_string(line) +
                    " in " + (name ? name : "?");
  if (with_source) {
    std::string text = dyn::source_line(fname, line);
    if (!text.empty()) out += "\n      " + text;
  }
  Py_DECREF(code);
  return out;
}

std::string Interpreter::move_frame(int delta) {
  if (stack_.empty() || frames_.empty()) return "error: no user frame to move in";
  long target = static_cast<long>(stack_pos_) + delta;
  if (target < 0) return "error: already in the innermost user frame (:up moves out)";
  if (target >= static_cast<long>(stack_.size())) return "error: already in the outermost user frame (:down moves in)";
  auto* f = static_cast<PyFrameObject*>(stack_[static_cast<size_t>(target)]);
  PyObject* globals = PyFrame_GetGlobals(f);
  PyObject* locals = PyFrame_GetLocals(f);
  if (!globals || !locals) {
    PyErr_Clear();
    Py_XDECREF(globals);
    Py_XDECREF(locals);
    return "error: that frame's variables cannot be read";
  }
  Py_DECREF(static_cast<PyObject*>(frames_.back().globals));
  Py_DECREF(static_cast<PyObject*>(frames_.back().locals));
  frames_.back() = Namespace{globals, locals, f};
  stack_pos_ = static_cast<size_t>(target);
  return fmt::format("frame {} of {}: {}", stack_pos_ + 1, stack_.size(), frame_line(f, true));
}

std::string Interpreter::list_source(int context) {
  if (stack_.empty()) return "error: no user frame";
  auto* f = static_cast<PyFrameObject*>(stack_[stack_pos_]);
  PyCodeObject* code = PyFrame_GetCode(f);
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  std::string fname = file ? file : "?";
  Py_DECREF(code);
  int line = PyFrame_GetLineNumber(f);
  std::string out = fname.substr(fname.rfind('/') == std::string::npos ? 0 : fname.rfind('/') + 1) + "\n";
  // The file itself: a blank line is a line, and the end of the file is where the listing stops.
  std::ifstream in(fname);
  if (!in) return fmt::format("error: the source of {} is not available (typed at the prompt, or not a file)", fname);
  std::string text;
  for (int n = 1; n <= line + context && std::getline(in, text); ++n)
    if (n >= line - context) out += fmt::format("{:>5} {} {}\n", n, n == line ? "->" : "  ", text);
  return out;
}

std::string Interpreter::user_stack() {
  std::string out;
  if (!stack_.empty()) {
    for (size_t i = 0; i < stack_.size(); ++i)
      out += (i == stack_pos_ ? "> " : "  ") + frame_line(stack_[i], true) + "\n";
    return out;
  }
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    Py_DECREF(code);
    if (!dyn::py::is_library_file(file)) out += "  " + frame_line(f, true) + "\n";
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return out;
}

namespace {
// Writes to sys.<name> (falling back to the C stream), flushed so that output keeps its order.
void write_stream(const char* name, std::FILE* fallback, const std::string& s) {
  PyObject* stream = PySys_GetObject(name);
  if (!stream || stream == Py_None) {
    std::fwrite(s.data(), 1, s.size(), fallback);
    std::fflush(fallback);
    return;
  }
  PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (str) {
    PyObject* r = PyObject_CallMethod(stream, "write", "O", str);
    Py_XDECREF(r);
    Py_DECREF(str);
  }
  PyObject* r = PyObject_CallMethod(stream, "flush", nullptr);
  Py_XDECREF(r);
  PyErr_Clear();
}
}  // namespace

void Interpreter::write(const std::string& s) { write_stream("stdout", stdout, s); }

void Interpreter::write_err(const std::string& s) {
  write_stream("stdout", stdout, "");  // what went to stdout before comes first
  write_stream("stderr", stderr, s);
}

int Interpreter::run_script(const std::string& path, const std::vector<std::string>& args) {
  PyObject* argv = PyList_New(0);
  PyObject* p = PyUnicode_DecodeFSDefault(path.c_str());
  PyList_Append(argv, p);
  Py_DECREF(p);
  for (const auto& a : args) {
    PyObject* s = PyUnicode_DecodeFSDefault(a.c_str());
    PyList_Append(argv, s);
    Py_DECREF(s);
  }
  PySys_SetObject("argv", argv);
  Py_DECREF(argv);
  // A run starts from a clean capture state, so graph ids read f[0] as in the first run.
  PyObject* r = PyRun_String("import dyn.debug as _d; _d.reset(); del _d", Py_file_input, main_dict(), main_dict());
  if (!r) return status_of_pending_error();
  Py_DECREF(r);
  return run_file(path);
}

bool Interpreter::error_pending() const { return PyErr_Occurred() != nullptr; }

}  // namespace dyn::repl
