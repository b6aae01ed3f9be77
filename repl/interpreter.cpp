// The embedded CPython interpreter.
#include "repl/interpreter.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdlib.h>

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

int Interpreter::finalize() {
  if (finalized_) return 0;
  finalized_ = true;
  return Py_FinalizeEx() < 0 ? 120 : 0;
}

int Interpreter::status_of_pending_error() {
  if (!PyErr_ExceptionMatches(PyExc_SystemExit)) {
    PyErr_Print();
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
  return status;
}

int Interpreter::run_source(const std::string& source, const std::string& filename) {
  PyObject* code = Py_CompileStringExFlags(source.c_str(), filename.c_str(), Py_file_input, nullptr, -1);
  if (!code) return status_of_pending_error();
  PyObject* result = PyEval_EvalCode(code, main_dict(), main_dict());
  Py_DECREF(code);
  if (!result) return status_of_pending_error();
  Py_DECREF(result);
  return 0;
}

int Interpreter::run_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "dynrepl: can't open file '%s': [Errno %d] %s\n", path.c_str(), errno, std::strerror(errno));
    return 2;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  PyObject* d = main_dict();
  PyObject* file = PyUnicode_DecodeFSDefault(path.c_str());
  PyDict_SetItemString(d, "__file__", file);
  Py_DECREF(file);
  PyDict_SetItemString(d, "__cached__", Py_None);
  return run_source(buf.str(), path);
}

int Interpreter::run_line(const std::string& line) {
  // 'single' mode echoes an expression's value through sys.displayhook, as the Python REPL does.
  PyObject* code = Py_CompileStringExFlags(line.c_str(), "<exec>", Py_single_input, nullptr, -1);
  if (!code) return status_of_pending_error();
  PyObject* result = PyEval_EvalCode(code, main_dict(), main_dict());
  Py_DECREF(code);
  if (!result) return status_of_pending_error();
  Py_DECREF(result);
  return 0;
}

int Interpreter::interact() {
  // A plain Python console until the command REPL exists: no prompts without a TTY, so piped
  // input gives clean transcripts.
  static const char* kConsole = R"PY(
import code as _code, sys as _sys
class _DynConsole(_code.InteractiveConsole):
    def raw_input(self, prompt=""):
        if _sys.stdin.isatty():
            return input(prompt)
        line = _sys.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")
if _sys.stdin.isatty():
    try:
        import readline as _readline
    except ImportError:
        pass
_DynConsole(locals=globals()).interact(
    banner=("dynrepl: Python %s with dyn; Ctrl-D exits" % _sys.version.split()[0]) if _sys.stdin.isatty() else "",
    exitmsg="")
)PY";
  return run_source(kConsole, "<dynrepl>");
}

}  // namespace dyn::repl
