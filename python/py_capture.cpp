// The binding of compile regions: region entry/exit, input naming, breaks, source locations and
// the debug queries (events, counters, graphs) that dyn.debug wraps.
#include <algorithm>
#include <unordered_map>

#include "core/capture/capture.h"
#include "core/error.h"
#include "core/query/query.h"
#include "python/py_common.h"
#include "viz/dot.h"
#include "viz/render.h"
#include "viz/views.h"

// The frame API needs Python.h (from py_common.h) first.
#include <frameobject.h>

namespace dyn::py {

PyObject* GraphBreakError = nullptr;

namespace {

// ---- source locations ----

struct CodeInfo {
  const std::string* file;
  const std::string* func;
  bool internal;  // a frame of the dyn package: skipped so the user's own line shows
  // Line numbers come from decoding the code object's line table, linear in its size: kept per
  // instruction offset, which is what a loop hits again and again.
  std::unordered_map<int, int> lines;
  PyObject* ref = nullptr;  // a weak reference whose callback forgets this entry
};

std::string g_package_dir;                // ".../python/dyn/"
std::vector<std::string> g_library_dirs;  // others whose frames are not the user's (torch/ under --real-torch)

bool in_library_dir(const std::string& f) {
  if ((!g_package_dir.empty() && f.rfind(g_package_dir, 0) == 0) || f == "<dynrepl>") return true;
  for (const std::string& d : g_library_dirs)
    if (f.rfind(d, 0) == 0) return true;
  return false;
}

// Keyed by the code object's address and held weakly: an entry goes when its code object does (a
// REPL line's, a function made by exec), so a new code object at the same address never gets
// another's lines, and none is kept alive for the life of the process.
std::unordered_map<PyCodeObject*, CodeInfo>& code_cache() {
  static auto* cache = new std::unordered_map<PyCodeObject*, CodeInfo>();  // callbacks may run at exit
  return *cache;
}

PyObject* forget_code(PyObject* key, PyObject* /*ref*/) {
  auto& cache = code_cache();
  auto it = cache.find(static_cast<PyCodeObject*>(PyLong_AsVoidPtr(key)));
  if (it != cache.end()) {
    PyObject* ref = it->second.ref;
    cache.erase(it);
    Py_XDECREF(ref);  // the weakref being called back: CPython holds nothing of it after the call
  }
  Py_RETURN_NONE;
}
PyMethodDef g_forget_code = {"_forget_code", forget_code, METH_O, nullptr};

CodeInfo& code_info(PyCodeObject* code) {
  auto& cache = code_cache();
  auto it = cache.find(code);
  if (it != cache.end()) return it->second;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* func = PyUnicode_AsUTF8(code->co_name);
  if (!file || !func) PyErr_Clear();
  std::string f = file ? file : "?";
  bool internal = in_library_dir(f);
  CodeInfo ci{intern(f), intern(func ? func : "?"), internal, {}, nullptr};
  PyObject* key = PyLong_FromVoidPtr(code);
  PyObject* callback = key ? PyCFunction_New(&g_forget_code, key) : nullptr;
  Py_XDECREF(key);
  ci.ref = callback ? PyWeakref_NewRef(reinterpret_cast<PyObject*>(code), callback) : nullptr;
  Py_XDECREF(callback);
  if (!ci.ref) {  // cannot watch it: keep it alive instead, so that its address stays its own
    PyErr_Clear();
    Py_INCREF(code);
  }
  // Making the callback may have collected garbage, and Python code run by it may have located
  // this code object first: then that entry stands and this one's references go.
  if (auto again = cache.find(code); again != cache.end()) {
    if (ci.ref)
      Py_DECREF(ci.ref);
    else
      Py_DECREF(code);
    return again->second;
  }
  return cache.emplace(code, std::move(ci)).first->second;
}

constexpr size_t kStackDepth = 4;

int line_of(PyFrameObject* f, CodeInfo& ci) {
  int lasti = PyFrame_GetLasti(f);
  auto it = ci.lines.find(lasti);
  if (it != ci.lines.end()) return it->second;
  int line = PyFrame_GetLineNumber(f);
  ci.lines.emplace(lasti, line);
  return line;
}

SourceStack locate() {
  thread_local std::vector<SourceLoc> frames;  // interned below: a stack seen before allocates nothing
  frames.clear();
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f && frames.size() < kStackDepth) {
    PyCodeObject* code = PyFrame_GetCode(f);
    CodeInfo& ci = code_info(code);
    if (!ci.internal) frames.push_back(SourceLoc{ci.file, ci.func, line_of(f, ci)});
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return SourceStack(frames);
}

// ---- compiled function state ----

struct PyCompiledState {
  PyObject_HEAD std::shared_ptr<CompiledFunction> fn;
};

void state_dealloc(PyObject* self) {
  CompiledFunction::retire(reinterpret_cast<PyCompiledState*>(self)->fn);
  reinterpret_cast<PyCompiledState*>(self)->fn.~shared_ptr();
  Py_TYPE(self)->tp_free(self);
}

PyObject* state_name(PyObject* self, void*) {
  return PyUnicode_FromString(reinterpret_cast<PyCompiledState*>(self)->fn->name().c_str());
}
PyObject* state_calls(PyObject* self, void*) {
  return PyLong_FromLongLong(reinterpret_cast<PyCompiledState*>(self)->fn->calls);
}
PyObject* state_entries(PyObject* self, void*) {
  return PyLong_FromLong(reinterpret_cast<PyCompiledState*>(self)->fn->num_entries());
}

PyObject* state_lifted_hits(PyObject* self, void*) {
  return PyLong_FromLongLong(reinterpret_cast<PyCompiledState*>(self)->fn->lifted_hits);
}

PyObject* state_fallen_back(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<PyCompiledState*>(self)->fn->fallen_back());
}

PyGetSetDef state_getset[] = {
    {"fallen_back", state_fallen_back, nullptr, "whether cache_limit was reached (the function runs eagerly)", nullptr},
    {"name", state_name, nullptr, "the function's name in graph ids", nullptr},
    {"calls", state_calls, nullptr, "calls so far", nullptr},
    {"lifted_hits", state_lifted_hits, nullptr, "calls tier 2 served without running the body", nullptr},
    {"entries", state_entries, nullptr, "distinct traces (cache entries) so far", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject CompiledStateType = [] {
  PyTypeObject t = new_type("dyn._CompiledState", sizeof(PyCompiledState), state_dealloc, Py_TPFLAGS_DEFAULT, nullptr);
  t.tp_getset = state_getset;
  return t;
}();

std::string str_arg(const char* fn, const char* arg, PyObject* o) {
  if (!o || !PyUnicode_Check(o)) throw_type_error(fmt::format("{}(): argument '{}' must be str", fn, arg));
  return PyUnicode_AsUTF8(o);
}

DYN_FAST(f_compiled_state) {
  PyObject* a[7];
  parse_args("_compiled_state", args, nargs, kw,
             {"name", "fullgraph", "cache_limit", "backend", "recreated", "defined_at", "dynamic"}, 4, a);
  CompileOptions o;
  o.name = str_arg("compile", "name", a[0]);
  o.fullgraph = bool_arg("compile", "fullgraph", a[1], false);
  o.cache_limit = static_cast<int>(int_arg("compile", "cache_limit", a[2]));
  std::string backend = str_arg("compile", "backend", a[3]);
  o.eager_backend = backend == "eager";
  if (a[6] && a[6] != Py_None) o.dynamic = bool_arg("compile", "dynamic", a[6], false) ? 1 : 0;
  auto* s = PyObject_New(PyCompiledState, &CompiledStateType);
  if (!s) return nullptr;
  new (&s->fn) std::shared_ptr<CompiledFunction>(CompiledFunction::create(std::move(o)));
  if (a[4]) s->fn->recreated = static_cast<int>(int_arg("compile", "recreated", a[4]));
  if (a[5]) s->fn->defined_at = str_arg("compile", "defined_at", a[5]);
  return reinterpret_cast<PyObject*>(s);
}

// The engine's namer for one compiled call: asks dyn._sources.Sources, made on the first question
// (a replayed call asks none). Python errors here never reach the user: a name is a nicety.
class PyNamer final : public SourceNamer {
  // A failed lookup is only a missing name, but a Ctrl-C that arrived meanwhile is the user's:
  // it is raised again at the next chance instead of being dropped with the lookup's error.
  static void clear_error() {
    if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
      PyErr_Clear();
      PyErr_SetInterrupt();
    } else {
      PyErr_Clear();
    }
  }

 public:
  void begin(PyObject* owner, PyObject* args, PyObject* kwargs, PyObject* caller) {
    release();
    owner_ = owner, args_ = args, kwargs_ = kwargs, caller_ = caller;  // borrowed: the call holds them
  }
  void release() {
    Py_CLEAR(sources_);
    map_.clear();
    built_ = false;
    owner_ = args_ = kwargs_ = caller_ = nullptr;
  }

  bool tensor(const Tensor& t, InputKind* kind, std::string* name) override {
    if (!build()) return false;
    auto it = map_.find(t.impl());
    // Not reachable from the call's arguments, module, closure or globals: the engine names a
    // tensor an earlier segment computed by its value. (The user's frames' locals are not read:
    // on Python 3.11 that copies them into a dict the frame keeps.)
    if (it == map_.end()) return false;
    *kind = it->second.first;
    *name = it->second.second;
    return true;
  }

  bool scalar(const Scalar& s, ScalarSide side, InputKind* kind, std::string* name) override {
    if (!build()) return false;
    PyObject* v = s.kind == Scalar::Float  ? PyFloat_FromDouble(s.f)
                  : s.kind == Scalar::Bool ? PyBool_FromLong(s.i != 0)
                                           : PyLong_FromLongLong(s.i);
    const char* where = side == ScalarSide::Rhs ? "rhs" : side == ScalarSide::Lhs ? "lhs" : "";
    PyObject* r = v ? PyObject_CallMethod(sources_, "scalar", "Os", v, where) : nullptr;
    Py_XDECREF(v);
    bool ok = false;
    if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
      const char* k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(r, 0));
      const char* n = PyUnicode_AsUTF8(PyTuple_GET_ITEM(r, 1));
      if (k && n) {
        *kind = kind_of(k);
        *name = n;
        ok = true;
      }
    }
    Py_XDECREF(r);
    clear_error();
    return ok;
  }

  std::string stored_name() override {
    if (!build()) return {};
    std::string out;
    PyObject* r = PyObject_CallMethod(sources_, "stored_name", nullptr);
    if (r && PyUnicode_Check(r))
      if (const char* s = PyUnicode_AsUTF8(r)) out = s;
    Py_XDECREF(r);
    clear_error();
    return out;
  }

  std::vector<NamedValue> values() override {
    std::vector<NamedValue> out;
    if (!build()) return out;
    PyObject* list = PyObject_CallMethod(sources_, "values", nullptr);
    if (list && PyList_Check(list))
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
        PyObject* t = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4) continue;
        const char* n = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0));
        const char* v = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1));
        const char* w = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 2));
        if (n && v && w) out.push_back({n, v, w, PyObject_IsTrue(PyTuple_GET_ITEM(t, 3)) == 1});
      }
    Py_XDECREF(list);
    clear_error();
    return out;
  }

 private:
  static InputKind kind_of(std::string_view k) {
    for (int i = 0; i <= static_cast<int>(InputKind::Literal); ++i)
      if (k == input_kind_key(static_cast<InputKind>(i))) return static_cast<InputKind>(i);
    return InputKind::External;
  }

  // (kind, name, tensor) triples into the map; the first name of a tensor wins. They stay alive
  // for the whole call (arguments, parameters, globals), so their addresses name them.
  void add(PyObject* list) {
    if (!list || !PyList_Check(list)) return;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
      PyObject* t = PyList_GET_ITEM(list, i);
      if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3 || !is_tensor(PyTuple_GET_ITEM(t, 2))) continue;
      const char* k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0));
      const char* n = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1));
      if (!k || !n) continue;
      TensorImpl* impl = unwrap(PyTuple_GET_ITEM(t, 2)).impl();
      if (!map_.count(impl)) map_[impl] = {kind_of(k), n};
    }
  }

  bool build() {
    if (built_) return sources_ != nullptr;
    built_ = true;
    if (!owner_) return false;
    // The engine asks in the middle of an op: keep any exception of the op's own untouched.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject* mod = PyImport_ImportModule("dyn._sources");
    PyObject* cls = mod ? PyObject_GetAttrString(mod, "Sources") : nullptr;
    sources_ = cls ? PyObject_CallFunction(cls, "OOOO", owner_, args_ ? args_ : Py_None, kwargs_ ? kwargs_ : Py_None,
                                           caller_ ? caller_ : Py_None)
                   : nullptr;
    Py_XDECREF(cls);
    Py_XDECREF(mod);
    if (sources_) {
      PyObject* list = PyObject_CallMethod(sources_, "tensors", nullptr);
      add(list);
      Py_XDECREF(list);
    }
    clear_error();
    PyErr_Restore(type, value, tb);
    return sources_ != nullptr;
  }

  PyObject *owner_ = nullptr, *args_ = nullptr, *kwargs_ = nullptr, *caller_ = nullptr;
  PyObject* sources_ = nullptr;
  bool built_ = false;
  std::unordered_map<const TensorImpl*, std::pair<InputKind, std::string>> map_;
};

thread_local PyNamer namer;

// _region_begin(state, args, kwargs, owner): enters a region; the owner (the CompiledFunction)
// names what enters it when the engine asks. False when a region is already active (inline) or
// the function fell back.
DYN_FAST(f_region_begin) {
  PyObject* a[4];
  parse_args("_region_begin", args, nargs, kw, {"state", "args", "kwargs", "owner"}, 1, a);
  if (Py_TYPE(a[0]) != &CompiledStateType) throw_type_error("_region_begin(): expected a compiled function state");
  if (!Capture::begin(reinterpret_cast<PyCompiledState*>(a[0])->fn)) Py_RETURN_FALSE;
  namer.begin(a[3], a[1], a[2], nullptr);  // the caller's frame is found when a name is asked for
  Capture::active()->set_namer(&namer);
  Py_RETURN_TRUE;
}

// The one warning a function gets when it falls back to eager (cache_limit reached).
int warn_fallback(CompiledFunction* fn) {
  if (!fn || !fn->take_fallback_warning()) return 0;
  std::string msg =
      fmt::format("dyn.compile: '{}' reached cache_limit={} and runs eagerly from now on; last reason: {}", fn->name(),
                  fn->options().cache_limit, fn->fallback_reason());
  return PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 2);  // point at the caller of the compiled function
}

DYN_FAST(f_region_end) {
  parse_args("_region_end", args, nargs, kw, {}, 0, nullptr);
  Capture* c = Capture::active();
  if (!c) Py_RETURN_NONE;
  auto* fn = const_cast<CompiledFunction*>(&c->function());
  struct Release {
    ~Release() { namer.release(); }
  } release;  // after the capture is gone, even when end() throws
  Capture::end();
  if (warn_fallback(fn) < 0) return nullptr;
  Py_RETURN_NONE;
}

DYN_FAST(f_region_abort) {
  parse_args("_region_abort", args, nargs, kw, {}, 0, nullptr);
  Capture* c = Capture::active();
  auto* fn = c ? const_cast<CompiledFunction*>(&c->function()) : nullptr;
  Capture::abort();
  namer.release();
  if (warn_fallback(fn) < 0) return nullptr;
  Py_RETURN_NONE;
}

DYN_FAST(f_guards) {
  PyObject* a[1];
  parse_args("_guards", args, nargs, kw, {"state"}, 1, a);
  if (Py_TYPE(a[0]) != &CompiledStateType) throw_type_error("_guards(): expected a compiled function state");
  const CompiledFunction& fn = *reinterpret_cast<PyCompiledState*>(a[0])->fn;
  PyObject* out = PyList_New(0);
  for (int e = 0; e < fn.num_entries(); ++e) {
    PyObject* lines = PyList_New(0);
    for (const std::string& l : fn.guard_lines(e)) {
      PyObject* s = PyUnicode_FromStringAndSize(l.data(), static_cast<Py_ssize_t>(l.size()));
      PyList_Append(lines, s);
      Py_DECREF(s);
    }
    PyList_Append(out, lines);
    Py_DECREF(lines);
  }
  return out;
}

DYN_FAST(f_name_input) {
  PyObject* a[3];
  parse_args("_name_input", args, nargs, kw, {"tensor", "kind", "name"}, 3, a);
  if (Capture* c = Capture::active()) {
    std::string kind = str_arg("_name_input", "kind", a[1]);
    c->name_input(tensor_arg("_name_input", "tensor", a[0]),
                  kind == "parameter" ? InputKind::Parameter : InputKind::Argument,
                  str_arg("_name_input", "name", a[2]));
  }
  Py_RETURN_NONE;
}

DYN_FAST(f_mark_dynamic) {
  PyObject* a[3];
  parse_args("_mark_dynamic", args, nargs, kw, {"tensor", "dim", "dynamic"}, 3, a);
  Tensor t = tensor_arg("_mark_dynamic", "tensor", a[0]);
  int64_t d = int_arg("_mark_dynamic", "dim", a[1]);
  if (d < 0 || d >= t.ndim() || d >= 8)
    fail(ErrorKind::Index, "_mark_dynamic: dim {} out of range for a {}-d tensor", d, t.ndim());
  auto bit = static_cast<uint8_t>(1u << d);
  TensorImpl* p = t.impl();
  p->dynamic_dims_ =
      bool_arg("_mark_dynamic", "dynamic", a[2], true) ? (p->dynamic_dims_ | bit) : (p->dynamic_dims_ & ~bit);
  Py_RETURN_NONE;
}

DYN_FAST(f_sync) {
  parse_args("sync", args, nargs, kw, {}, 0, nullptr);
  if (Capture* c = Capture::active()) c->graph_break(BreakKind::ExplicitSync, "dyn.sync()");
  Py_RETURN_NONE;
}

DYN_FAST(f_capture_active) {
  parse_args("_capture_active", args, nargs, kw, {}, 0, nullptr);
  return PyBool_FromLong(Capture::active() != nullptr);
}

DYN_FAST(f_set_package_dir) {
  PyObject* a[1];
  parse_args("_set_package_dir", args, nargs, kw, {"path"}, 1, a);
  g_package_dir = str_arg("_set_package_dir", "path", a[0]);
  Py_RETURN_NONE;
}

DYN_FAST(f_add_library_dir) {
  PyObject* a[1];
  parse_args("_add_library_dir", args, nargs, kw, {"path"}, 1, a);
  std::string d = str_arg("_add_library_dir", "path", a[0]);
  DYN_CHECK(!d.empty(), ErrorKind::Value, "_add_library_dir: expected a folder, got ''");
  if (std::find(g_library_dirs.begin(), g_library_dirs.end(), d) == g_library_dirs.end()) g_library_dirs.push_back(d);
  for (auto& [code, info] : code_cache()) info.internal = in_library_dir(*info.file);  // cached before it
  Py_RETURN_NONE;
}

// ---- events of another capture (PyTorch's Dynamo under --real-torch: dyn/_real_torch.py) ----

// d[key] as a string ("" when absent or None).
std::string dict_str(PyObject* d, const char* key) {
  PyObject* v = PyDict_GetItemString(d, key);  // borrowed
  if (!v || v == Py_None) return {};
  DYN_CHECK(PyUnicode_Check(v), ErrorKind::Type, "_log_event: '{}' must be a str, not {}", key, Py_TYPE(v)->tp_name);
  const char* s = PyUnicode_AsUTF8(v);
  if (!s) throw PythonErrorSet();
  return s;
}
int64_t dict_int(PyObject* d, const char* key, int64_t dflt) {
  PyObject* v = PyDict_GetItemString(d, key);
  return v && v != Py_None ? int_arg("_log_event", key, v) : dflt;
}
std::vector<std::string> dict_lines(PyObject* d, const char* key) {
  std::vector<std::string> out;
  PyObject* v = PyDict_GetItemString(d, key);
  if (!v || v == Py_None) return out;
  DYN_CHECK(PyList_Check(v), ErrorKind::Type, "'{}' must be a list of str, not {}", key, Py_TYPE(v)->tp_name);
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); ++i) {
    PyObject* s = PyList_GET_ITEM(v, i);
    DYN_CHECK(PyUnicode_Check(s), ErrorKind::Type, "'{}' must be a list of str", key);
    const char* c = PyUnicode_AsUTF8(s);
    if (!c) throw PythonErrorSet();
    out.emplace_back(c);
  }
  return out;
}
PyObject* dict_of(const char* fn, PyObject* o) {
  DYN_CHECK(o && PyDict_Check(o), ErrorKind::Type, "{}: expected a dict, got {}", fn,
            o ? Py_TYPE(o)->tp_name : "nothing");
  return o;
}
// file and line of d as a one-frame stack (none when file is empty).
SourceStack dict_where(PyObject* d) {
  std::string file = dict_str(d, "file");
  if (file.empty()) return {};
  std::string func = dict_str(d, "function");
  return SourceStack(
      {SourceLoc{intern(file), intern(func.empty() ? "?" : func), static_cast<int>(dict_int(d, "line", 0))}});
}
template <typename E, typename Name>
E enum_named(const std::string& s, int n, Name name, const char* what) {
  for (int i = 0; i < n; ++i)
    if (name(static_cast<E>(i)) == s) return static_cast<E>(i);
  fail(ErrorKind::Value, "_log_event: unknown {} '{}'", what, s);
}

// _log_event({"kind": "recompile", "fn": ..., "entry": .., "segment": .., "file", "line", "function",
// "reason", "details", "hint", "break_kind", "closest", "failures": [{"entry", "kind", "what",
// "expected", "actual", "file", "line", "function", "hint"}]}): logged and counted as dyn's own
// events are, so the views, --events and breakpoints see it (a breakpoint stops inside this call).
DYN_FAST(f_log_event) {
  PyObject* a[1];
  parse_args("_log_event", args, nargs, kw, {"event"}, 1, a);
  PyObject* d = dict_of("_log_event", a[0]);
  Event e;
  e.kind = enum_named<EventKind>(dict_str(d, "kind"), 8, event_kind_name, "event kind");
  e.fn = dict_str(d, "fn");
  DYN_CHECK(!e.fn.empty(), ErrorKind::Value, "_log_event: the event needs 'fn'");
  e.entry = static_cast<int>(dict_int(d, "entry", -1));
  e.segment = static_cast<int>(dict_int(d, "segment", -1));
  e.where = dict_where(d);
  e.reason = dict_str(d, "reason");
  e.details = dict_str(d, "details");
  e.hint = dict_str(d, "hint");
  e.closest = static_cast<int>(dict_int(d, "closest", -1));
  if (std::string bk = dict_str(d, "break_kind"); !bk.empty())
    e.break_kind = enum_named<BreakKind>(bk, 7, break_kind_name, "break kind");
  if (PyObject* fl = PyDict_GetItemString(d, "failures"); fl && fl != Py_None) {
    DYN_CHECK(PyList_Check(fl), ErrorKind::Type, "_log_event: 'failures' must be a list of dicts");
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(fl); ++i) {
      PyObject* f = dict_of("_log_event failures", PyList_GET_ITEM(fl, i));
      GuardFailure g;
      g.entry = static_cast<int>(dict_int(f, "entry", -1));
      if (std::string k = dict_str(f, "kind"); !k.empty())
        g.kind = enum_named<GuardKind>(k, 7, guard_kind_name, "guard kind");
      g.what = dict_str(f, "what");
      g.expected = dict_str(f, "expected");
      g.actual = dict_str(f, "actual");
      g.hint = dict_str(f, "hint");
      g.where = dict_where(f);
      e.failures.push_back(std::move(g));
    }
    if (!e.failures.empty()) e.guard = e.failures.front();
  }
  if (e.kind == EventKind::Compile) ++CaptureLog::get().counters().compiles;
  CaptureLog::get().add_counted(std::move(e));
  Py_RETURN_NONE;
}

// _add_foreign_graph({"fn", "entry", "segment", "ops", "lines": [str], "ends"}).
DYN_FAST(f_add_foreign_graph) {
  PyObject* a[1];
  parse_args("_add_foreign_graph", args, nargs, kw, {"graph"}, 1, a);
  PyObject* d = dict_of("_add_foreign_graph", a[0]);
  ForeignGraph g;
  g.fn = dict_str(d, "fn");
  DYN_CHECK(!g.fn.empty(), ErrorKind::Value, "_add_foreign_graph: the graph needs 'fn'");
  g.entry = static_cast<int>(dict_int(d, "entry", 0));
  g.segment = static_cast<int>(dict_int(d, "segment", 0));
  g.ops = static_cast<int>(dict_int(d, "ops", 0));
  g.lines = dict_lines(d, "lines");
  g.ends = dict_str(d, "ends");
  CaptureLog::get().add_foreign_graph(std::move(g));
  Py_RETURN_NONE;
}

// _add_foreign_entry({"fn", "entry", "guards": [str]}).
DYN_FAST(f_add_foreign_entry) {
  PyObject* a[1];
  parse_args("_add_foreign_entry", args, nargs, kw, {"entry"}, 1, a);
  PyObject* d = dict_of("_add_foreign_entry", a[0]);
  ForeignEntry e;
  e.fn = dict_str(d, "fn");
  DYN_CHECK(!e.fn.empty(), ErrorKind::Value, "_add_foreign_entry: the entry needs 'fn'");
  e.entry = static_cast<int>(dict_int(d, "entry", 0));
  e.guards = dict_lines(d, "guards");
  CaptureLog::get().add_foreign_entry(std::move(e));
  Py_RETURN_NONE;
}

// ---- debug queries ----

PyObject* str_obj(const std::string& s) {
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
}

void set_item(PyObject* d, const char* k, PyObject* v) {
  if (!v) throw PythonErrorSet{};
  PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
}

void put_where(PyObject* d, const SourceStack& where) {
  SourceLoc top = where.top();
  if (top.known()) {
    set_item(d, "file", str_obj(*top.file));
    set_item(d, "line", PyLong_FromLong(top.line));
    set_item(d, "source", str_obj(source_line(*top.file, top.line)));
  } else {
    PyDict_SetItemString(d, "file", Py_None);
    PyDict_SetItemString(d, "line", Py_None);
    PyDict_SetItemString(d, "source", Py_None);
  }
  PyObject* stack = PyList_New(0);
  for (const SourceLoc& f : where.frames()) {
    PyObject* fr = Py_BuildValue("(sis)", f.file->c_str(), f.line, f.function ? f.function->c_str() : "?");
    PyList_Append(stack, fr);
    Py_DECREF(fr);
  }
  set_item(d, "stack", stack);
}

// Events reach Python through the query's one serializer; dyn.debug shapes the dicts.
DYN_FAST(f_events) {
  parse_args("_events", args, nargs, kw, {}, 0, nullptr);
  std::string all = "[";
  for (const Event& e : query::events()) all += (all.size() > 1 ? ", " : "") + query::event_json(e);
  all += "]";
  return PyUnicode_FromStringAndSize(all.data(), static_cast<Py_ssize_t>(all.size()));
}

DYN_FAST(f_set_event_limit) {
  PyObject* a[1];
  parse_args("_set_event_limit", args, nargs, kw, {"n"}, 1, a);
  int64_t n = int_arg("_set_event_limit", "n", a[0]);
  if (n < 0)
    fail(ErrorKind::Value,
         "set_event_limit(n): n is how many of the newest events the history keeps, at least 0 (0 keeps "
         "every event); got {}",
         n);
  CaptureLog::get().set_event_limit(static_cast<size_t>(n));
  Py_RETURN_NONE;
}

DYN_FAST(f_event_limit) {
  parse_args("_event_limit", args, nargs, kw, {}, 0, nullptr);
  return PyLong_FromSize_t(CaptureLog::get().event_limit());
}

DYN_FAST(f_counters) {
  parse_args("_counters", args, nargs, kw, {}, 0, nullptr);
  const Counters& c = query::counters();
  return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:n,s:d,s:d,s:d,s:d,s:d}", "events_dropped",
                       static_cast<long long>(CaptureLog::get().dropped()), "calls", c.calls, "cache_hits",
                       c.cache_hits, "compiles", c.compiles, "recompiles", c.recompiles, "graph_breaks", c.graph_breaks,
                       "guard_failures", c.guard_failures, "fallbacks", c.fallbacks, "graphs",
                       static_cast<Py_ssize_t>(query::graphs().size()), "trace_s", c.trace_s, "replay_s", c.replay_s,
                       "compile_s", c.compile_s, "execute_s", c.execute_s, "paused_s", c.paused_s);
}

template <typename Ids>
PyObject* int_list(const Ids& v) {
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(v.size()));
  if (!l) throw PythonErrorSet{};
  for (size_t i = 0; i < v.size(); ++i) PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), PyLong_FromLong(v[i]));
  return l;
}

PyObject* graph_dict(const GraphRecord& r) {
  PyObject* d = PyDict_New();
  set_item(d, "id", str_obj(r.id()));
  set_item(d, "fn", str_obj(r.fn));
  set_item(d, "entry", PyLong_FromLong(r.entry));
  set_item(d, "segment", PyLong_FromLong(r.segment));
  set_item(d, "calls", PyLong_FromLongLong(r.calls));
  set_item(d, "text", str_obj(print_graph(*r.graph)));
  set_item(d, "text_verbose", str_obj(print_graph(*r.graph, true)));
  set_item(d, "plan", str_obj(r.plan ? print_plan(*r.graph, *r.plan) : std::string()));
  PyObject* nodes = PyList_New(0);
  for (const Node& n : r.graph->nodes) {
    PyObject* nd = PyDict_New();
    set_item(nd, "op", str_obj(std::string(op_name(n.op)) + (n.target >= 0 ? "_" : "")));
    const Value& v = r.graph->values[n.outputs[0]];
    set_item(nd, "dtype", dtype_object(v.dtype) ? (Py_INCREF(dtype_object(v.dtype)), dtype_object(v.dtype)) : nullptr);
    set_item(nd, "shape", make_size(v.shape));
    set_item(nd, "inputs", int_list(n.inputs));
    set_item(nd, "outputs", int_list(n.outputs));
    set_item(nd, "args", str_obj(format_attrs(n.op, n.attrs)));
    set_item(nd, "text", str_obj(print_node(*r.graph, n)));
    put_where(nd, n.where);
    PyList_Append(nodes, nd);
    Py_DECREF(nd);
  }
  set_item(d, "nodes", nodes);
  PyObject* ins = PyList_New(0);
  for (int id : r.graph->inputs) {
    const Value& v = r.graph->values[id];
    PyObject* x = Py_BuildValue("{s:i,s:s,s:s,s:N}", "value", id, "kind", input_kind_key(v.input_kind), "name",
                                v.input_name().c_str(), "shape", make_size(v.shape));
    PyList_Append(ins, x);
    Py_DECREF(x);
  }
  set_item(d, "inputs", ins);
  PyObject* scalars = PyList_New(0);
  for (const ScalarInput& si : r.graph->scalar_inputs) {
    if (si.constant) continue;  // a named constant, not an input
    const Node& n = r.graph->nodes[si.node];
    const Scalar* sc[] = {&n.attrs->scalar, &n.attrs->scalar2, &n.attrs->scalar3};
    PyObject* x = Py_BuildValue("{s:i,s:s,s:s,s:s,s:d}", "node", n.outputs[0], "op", std::string(op_name(n.op)).c_str(),
                                "kind", input_kind_key(si.kind), "name", si.named() ? si.name->c_str() : "", "traced",
                                sc[si.field]->to_double());
    PyList_Append(scalars, x);
    Py_DECREF(x);
  }
  set_item(d, "scalar_inputs", scalars);
  return d;
}

DYN_FAST(f_graphs) {
  parse_args("_graphs", args, nargs, kw, {}, 0, nullptr);
  PyObject* list = PyList_New(0);
  for (const GraphRecord* r : query::graphs()) {
    PyObject* d = graph_dict(*r);
    PyList_Append(list, d);
    Py_DECREF(d);
  }
  return list;
}

DYN_FAST(f_dot) {
  PyObject* a[1];
  parse_args("_dot", args, nargs, kw, {"target"}, 1, a);
  std::string s = viz::dot_text(str_arg("dot", "target", a[0]));
  return str_obj(s);
}

DYN_FAST(f_render) {
  PyObject* a[2];
  parse_args("_render", args, nargs, kw, {"target", "format"}, 2, a);
  std::string data = viz::render(viz::dot_text(str_arg("render", "target", a[0])), str_arg("render", "format", a[1]));
  return PyBytes_FromStringAndSize(data.data(), static_cast<Py_ssize_t>(data.size()));
}

DYN_FAST(f_profile) {
  PyObject* a[1];
  parse_args("_profile", args, nargs, kw, {"target"}, 1, a);
  std::vector<viz::StepRow> rows = viz::step_rows(str_arg("profile", "target", a[0]));
  PyObject* list = PyList_New(0);
  for (const viz::StepRow& r : rows) {
    PyObject* d = PyDict_New();
    set_item(d, "graph", str_obj(r.graph_id));
    set_item(d, "plan", PyLong_FromLong(r.plan));
    set_item(d, "step", PyLong_FromLong(r.step));
    set_item(d, "kind", str_obj(r.kind));
    set_item(d, "what", str_obj(r.what));
    if (r.file.empty()) {
      PyDict_SetItemString(d, "file", Py_None);
      PyDict_SetItemString(d, "line", Py_None);
      PyDict_SetItemString(d, "source", Py_None);
    } else {
      set_item(d, "file", str_obj(r.file));
      set_item(d, "line", PyLong_FromLong(r.lines[0]));
      set_item(d, "source", str_obj(r.text));
    }
    set_item(d, "lines", int_list(r.lines));
    set_item(d, "runs", PyLong_FromLongLong(r.runs));
    set_item(d, "seconds", PyFloat_FromDouble(r.seconds));
    PyList_Append(list, d);
    Py_DECREF(d);
  }
  return list;
}

DYN_FAST(f_reset_profile) {
  parse_args("_reset_profile", args, nargs, kw, {}, 0, nullptr);
  query::clear_step_times();
  Py_RETURN_NONE;
}

DYN_FAST(f_reset) {
  parse_args("_reset", args, nargs, kw, {}, 0, nullptr);
  query::reset();
  Py_RETURN_NONE;
}

PyMethodDef capture_functions[] = {
    DYN_ENTRY("_compiled_state", f_compiled_state, "engine state of a compiled function"),
    DYN_ENTRY("_region_begin", f_region_begin, "enter a compile region; False when one is active (inline)"),
    DYN_ENTRY("_region_end", f_region_end, "run the last segment and leave the region"),
    DYN_ENTRY("_region_abort", f_region_abort, "leave the region after an exception"),
    DYN_ENTRY("_name_input", f_name_input, "name a tensor entering the graph"),
    DYN_ENTRY("_guards", f_guards, "the guards of each cache entry of a compiled function"),
    DYN_ENTRY("_mark_dynamic", f_mark_dynamic, "mark (or unmark) one dim of a tensor dynamic for compiled calls"),
    DYN_ENTRY("sync", f_sync, "sync(): inside a compiled function, cut the graph here (an explicit graph break)"),
    DYN_ENTRY("_capture_active", f_capture_active, "whether a compile region is running"),
    DYN_ENTRY("_set_package_dir", f_set_package_dir, "frames under this folder are the library's, not the user's"),
    DYN_ENTRY("_events", f_events, "the capture event log"),
    DYN_ENTRY("_add_library_dir", f_add_library_dir, "frames under this folder are a library's, not the user's"),
    DYN_ENTRY("_log_event", f_log_event, "log an event of another capture (PyTorch's Dynamo, --real-torch)"),
    DYN_ENTRY("_add_foreign_graph", f_add_foreign_graph, "keep a graph of another capture, as text"),
    DYN_ENTRY("_add_foreign_entry", f_add_foreign_entry, "keep a cache entry of another capture, with its guards"),
    DYN_ENTRY("_set_event_limit", f_set_event_limit, "keep the newest n events (0: all)"),
    DYN_ENTRY("_event_limit", f_event_limit, "how many events the history keeps (0: all)"),
    DYN_ENTRY("_counters", f_counters, "capture counters and timings"),
    DYN_ENTRY("_graphs", f_graphs, "every captured graph"),
    DYN_ENTRY("_reset", f_reset, "forget graphs, events and compiled plans"),
    DYN_ENTRY("_profile", f_profile, "the time of each plan step of the graphs a target names ('' for all)"),
    DYN_ENTRY("_reset_profile", f_reset_profile, "zero every plan step's time"),
    DYN_ENTRY("_dot", f_dot, "DOT text of a graph, an entry or a function's newest entry"),
    DYN_ENTRY("_render", f_render, "a graph rendered by graphviz as 'svg' or 'png' bytes"),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

std::shared_ptr<CompiledFunction> compiled_state_fn(PyObject* o) {
  if (!o || Py_TYPE(o) != &CompiledStateType) return nullptr;
  return reinterpret_cast<PyCompiledState*>(o)->fn;
}

bool is_library_file(const char* filename) { return filename && in_library_dir(filename); }

// After a reset, the package forgets its definitions too (a re-run script's f is f[0] again).
void forget_definitions(void*) {
  PyObject* mod = PyImport_ImportModule("dyn._compile");
  PyObject* r = mod ? PyObject_CallMethod(mod, "forget_definitions", nullptr) : nullptr;
  if (!r) PyErr_Clear();  // the package is not loaded: it has nothing to forget
  Py_XDECREF(r);
  Py_XDECREF(mod);
}

bool init_capture(PyObject* m) {
  set_source_locator(locate);
  query::on_reset(forget_definitions, nullptr);
  if (PyType_Ready(&CompiledStateType) < 0) return false;
  GraphBreakError = PyErr_NewExceptionWithDoc(
      "dyn.GraphBreakError",
      "A graph break in a function compiled with fullgraph=True: says where, why and what to do.", PyExc_RuntimeError,
      nullptr);
  if (!GraphBreakError) return false;
  Py_INCREF(GraphBreakError);
  PyModule_AddObject(m, "GraphBreakError", GraphBreakError);
  return PyModule_AddFunctions(m, capture_functions) == 0;
}

}  // namespace dyn::py
