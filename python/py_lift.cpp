// The binding of tier 2 (trace once): what dyn/_lift/ needs from the engine to lift an entry
// and to serve a call with it.
#include <fmt/format.h>

#include <algorithm>

#include "core/autograd/autograd.h"
#include "core/capture/lift.h"
#include "core/random.h"
#include "python/py_common.h"

namespace dyn::py {

PyObject* frame_value_stack(PyObject* frame);

namespace {

struct PyLiftedPlan {
  PyObject_HEAD std::shared_ptr<LiftedPlan> plan;
  std::vector<Tensor> in, out, values;  // reused between calls
  std::vector<double> floats;
};

void lifted_dealloc(PyObject* self) {
  auto* p = reinterpret_cast<PyLiftedPlan*>(self);
  p->plan.~shared_ptr();
  p->in.~vector();
  p->out.~vector();
  p->values.~vector();
  p->floats.~vector();
  Py_TYPE(self)->tp_free(self);
}

// plan(inputs): a tuple of the results, or None (nothing ran) when a tensor or global-state guard
// fails; the call then goes to tier 1.
PyObject* lifted_call_impl(PyObject* self, PyObject* args, PyObject* kw) {
  auto* p = reinterpret_cast<PyLiftedPlan*>(self);
  PyObject* seq = nullptr;
  Py_ssize_t nargs = PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : 0;
  PyObject* fl = nargs == 3 ? PyTuple_GET_ITEM(args, 2) : nullptr;
  if (kw || nargs < 2 || nargs > 3 || !PyTuple_Check(seq = PyTuple_GET_ITEM(args, 0)) || (fl && !PyTuple_Check(fl))) {
    PyErr_SetString(PyExc_TypeError, "a lifted plan takes (tensors, count[, floats])");
    return nullptr;
  }
  bool count = PyObject_IsTrue(PyTuple_GET_ITEM(args, 1));
  p->floats.clear();
  for (Py_ssize_t i = 0; fl && i < PyTuple_GET_SIZE(fl); ++i) {
    PyObject* f = PyTuple_GET_ITEM(fl, i);
    if (!PyFloat_CheckExact(f)) Py_RETURN_NONE;  // a source that held a float holds something else now
    p->floats.push_back(PyFloat_AS_DOUBLE(f));
  }
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  p->in.clear();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = PyTuple_GET_ITEM(seq, i);
    if (!is_tensor(o)) {
      p->in.clear();
      Py_RETURN_NONE;  // a source that held a tensor holds something else now
    }
    p->in.push_back(unwrap(o));
  }
  bool ran = p->plan->run(p->in, p->floats, &p->out, count, &p->values);
  p->in.clear();
  if (!ran) Py_RETURN_NONE;
  if (!p->values.empty()) {  // the results' autograd history, as the body's ops record it
    try {
      record_lifted_history(p->plan->graph(), p->plan->grad_nodes(), p->values, p->plan->used_patches());
    } catch (...) {
      p->values.clear();
      p->out.clear();
      throw;
    }
    p->values.clear();
  }
  // Each result as the body gave it: a detached alias of a value with history does not require
  // grad; a leaf the call made does.
  for (size_t i = 0; i < p->out.size(); ++i) {
    bool want = p->plan->out_requires_grad(i);
    if (!want && requires_grad(p->out[i]))
      p->out[i] = detach(p->out[i]);
    else if (want && !requires_grad(p->out[i]) && !p->plan->released(i) && is_floating(p->out[i].dtype()))
      set_requires_grad(p->out[i], true);
  }
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(p->out.size()));
  if (!tuple) return nullptr;
  for (size_t i = 0; i < p->out.size(); ++i) {
    if (const auto& node = p->plan->released(i)) attach_released_history(p->out[i], node);
    PyObject* w = wrap(std::move(p->out[i]));
    if (!w) {
      Py_DECREF(tuple);
      p->out.clear();
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), w);
  }
  p->out.clear();
  return tuple;
}

PyObject* lifted_call(PyObject* self, PyObject* args, PyObject* kw) {
  try {
    return lifted_call_impl(self, args, kw);
  } catch (...) {
    return translate_exception();
  }
}

PyObject* lifted_entry(PyObject* self, void*) {
  return PyLong_FromLong(reinterpret_cast<PyLiftedPlan*>(self)->plan->entry());
}
PyObject* lifted_failure(PyObject* self, void*) {
  const std::string& s = reinterpret_cast<PyLiftedPlan*>(self)->plan->last_failure();
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
}
PyObject* lifted_valid(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<PyLiftedPlan*>(self)->plan->valid());
}

PyObject* lifted_writes(PyObject* self, void*) {
  std::vector<int> w = reinterpret_cast<PyLiftedPlan*>(self)->plan->written_inputs();
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(w.size()));
  if (!t) return nullptr;
  for (size_t i = 0; i < w.size(); ++i) PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), PyLong_FromLong(w[i]));
  return t;
}

PyObject* lifted_random(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<PyLiftedPlan*>(self)->plan->draws_random());
}

PyGetSetDef lifted_getset[] = {
    {"entry", lifted_entry, nullptr, "the cache entry this plan serves", nullptr},
    {"last_failure", lifted_failure, nullptr, "the tensor or global-state guard that failed last", nullptr},
    {"valid", lifted_valid, nullptr, "whether the entry still exists", nullptr},
    {"writes", lifted_writes, nullptr, "the inputs (positions) the graph writes into", nullptr},
    {"random", lifted_random, nullptr, "whether the graph draws random numbers", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject LiftedPlanType = [] {
  PyTypeObject t = new_type("dyn._LiftedPlan", sizeof(PyLiftedPlan), lifted_dealloc, Py_TPFLAGS_DEFAULT, nullptr);
  t.tp_getset = lifted_getset;
  t.tp_call = lifted_call;
  return t;
}();

// _lift_snapshot(outs, sources): before the region ends, (of_sources, out_ids, input_ids): the
// graph input each source is (below), the value id of each tensor of outs (-1: not pending in this
// call's graph) and the value ids of the current segment's graph inputs. None when no region runs
// or the call broke its graph.
DYN_FAST(f_lift_snapshot) {
  PyObject* a[2];
  parse_args("_lift_snapshot", args, nargs, kw, {"outs", "sources"}, 2, a);
  Capture* c = Capture::active();
  if (!c || !PyList_Check(a[0]) || !PyList_Check(a[1])) Py_RETURN_NONE;
  auto tensors = [](PyObject* list) {
    std::vector<Tensor> v;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
      PyObject* o = PyList_GET_ITEM(list, i);
      if (!is_tensor(o)) throw_type_error("_lift_snapshot(): expected lists of tensors");
      v.push_back(unwrap(o));
    }
    return v;
  };
  std::vector<Tensor> outs = tensors(a[0]), sources = tensors(a[1]);
  std::vector<std::shared_ptr<GradNode>> released;
  for (const Tensor& t : outs) released.push_back(requires_grad(t) ? released_copy_of_history(t) : nullptr);
  std::vector<std::pair<int, Tensor>> inputs;
  std::vector<int> ids;
  if (!c->lift_snapshot(outs, released, &inputs, &ids)) Py_RETURN_NONE;
  // For each source: the graph input it is (its value id), -1 if none; -2 if it is none but shares
  // an input's memory (the trace reads it as a view of that input); -3 if it is a value the call
  // made (pending in the graph; a source reached it through a container the call made).
  PyObject* in = PyList_New(0);
  for (const Tensor& src : sources) {
    long vid = -1;
    for (auto& [v, t] : inputs) {
      if (t.impl() == src.impl()) {
        vid = v;
        break;
      }
      if (vid == -1 && t.storage() && t.storage() == src.storage()) vid = -2;
    }
    if (vid < 0 && src.impl()->capture_ == c) vid = -3;
    PyObject* x = PyLong_FromLong(vid);
    PyList_Append(in, x);
    Py_DECREF(x);
  }
  PyObject* ids_of_inputs = PyList_New(0);
  for (auto& [v, t] : inputs) {
    PyObject* x = PyLong_FromLong(v);
    PyList_Append(ids_of_inputs, x);
    Py_DECREF(x);
  }
  PyObject* out = PyList_New(0);
  for (int v : ids) {
    PyObject* x = PyLong_FromLong(v);
    PyList_Append(out, x);
    Py_DECREF(x);
  }
  return Py_BuildValue("(NNN)", in, out, ids_of_inputs);
}

std::string str_arg_of(const char* fn, PyObject* o) {
  const char* c = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
  if (!c) throw_type_error(fmt::format("{}(): expected a str", fn));
  return c;
}

std::vector<int> int_list_arg(const char* fn, PyObject* o) {
  std::vector<int> out;
  if (!PyList_Check(o)) throw_type_error(fmt::format("{}(): expected a list of ints", fn));
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); ++i)
    out.push_back(static_cast<int>(int_arg(fn, "ids", PyList_GET_ITEM(o, i))));
  return out;
}

// _lift_plan(state, input_ids, output_ids): a plan that serves the entry the function's last
// call ended in, or (why the engine cannot serve it without the body, file:line or '').
DYN_FAST(f_lift_plan) {
  PyObject* a[4];
  parse_args("_lift_plan", args, nargs, kw, {"state", "input_ids", "output_ids", "float_slots"}, 4, a);
  std::shared_ptr<CompiledFunction> fn = compiled_state_fn(a[0]);
  if (!fn) throw_type_error("_lift_plan(): expected a compiled function state");
  std::vector<int> flat = int_list_arg("_lift_plan", a[3]);
  std::string why, where;
  auto plan = LiftedPlan::make(fn, int_list_arg("_lift_plan", a[1]), int_list_arg("_lift_plan", a[2]), &why, &where);
  if (!plan)
    return Py_BuildValue("(s#s#)", why.data(), static_cast<Py_ssize_t>(why.size()), where.data(),
                         static_cast<Py_ssize_t>(where.size()));
  std::vector<std::pair<int, int>> slots;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) slots.emplace_back(flat[i], flat[i + 1]);
  plan->set_float_slots(std::move(slots));
  auto* p = PyObject_New(PyLiftedPlan, &LiftedPlanType);
  if (!p) return nullptr;
  new (&p->plan) std::shared_ptr<LiftedPlan>(std::move(plan));
  new (&p->in) std::vector<Tensor>();
  new (&p->out) std::vector<Tensor>();
  new (&p->values) std::vector<Tensor>();
  new (&p->floats) std::vector<double>();
  return reinterpret_cast<PyObject*>(p);
}

// _lift_float_slot(state, node, value): which scalar slot of that node of the last call's entry
// holds the float, or -1.
DYN_FAST(f_lift_float_slot) {
  PyObject* a[3];
  parse_args("_lift_float_slot", args, nargs, kw, {"state", "node", "value"}, 3, a);
  std::shared_ptr<CompiledFunction> fn = compiled_state_fn(a[0]);
  if (!fn) throw_type_error("_lift_float_slot(): expected a compiled function state");
  double v = PyFloat_AsDouble(a[2]);
  if (v == -1.0 && PyErr_Occurred()) return nullptr;
  return PyLong_FromLong(LiftedPlan::float_slot(*fn, static_cast<int>(int_arg("_lift_float_slot", "node", a[1])), v));
}

// _lift_nodes(): the nodes of the running call's current segment so far; -1 after a break or outside a region.
DYN_FAST(f_lift_nodes) {
  parse_args("_lift_nodes", args, nargs, kw, {}, 0, nullptr);
  Capture* c = Capture::active();
  return PyLong_FromLong(c ? c->lift_nodes() : -1);
}

DYN_FAST(f_last_entry) {
  PyObject* a[1];
  parse_args("_last_entry", args, nargs, kw, {"state"}, 1, a);
  std::shared_ptr<CompiledFunction> fn = compiled_state_fn(a[0]);
  if (!fn) throw_type_error("_last_entry(): expected a compiled function state");
  return PyLong_FromLong(fn->last_entry);
}

// _lift_note(state, entry, lifted, guard_lines, reason, where, seconds, lift_on): what the analysis
// of an entry found, for the views (:guards, :why-python, :stats, the report). entry -1: only the
// function's switch and time.
DYN_FAST(f_lift_note) {
  PyObject* a[8];
  parse_args("_lift_note", args, nargs, kw,
             {"state", "entry", "lifted", "guard_lines", "reason", "where", "seconds", "lift_on"}, 8, a);
  std::shared_ptr<CompiledFunction> fn = compiled_state_fn(a[0]);
  if (!fn) throw_type_error("_lift_note(): expected a compiled function state");
  fn->lift_on = bool_arg("_lift_note", "lift_on", a[7], false);
  double s = PyFloat_AsDouble(a[6]);
  if (s == -1.0 && PyErr_Occurred()) return nullptr;
  fn->lift_s += s;
  int e = static_cast<int>(int_arg("_lift_note", "entry", a[1]));
  if (e < 0 || e >= fn->num_entries()) Py_RETURN_NONE;
  Entry& entry = fn->entry_for_notes(e);
  entry.lifted = bool_arg("_lift_note", "lifted", a[2], false);
  if (!PyList_Check(a[3])) throw_type_error("_lift_note(): guard_lines must be a list of str");
  entry.python_guards.clear();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(a[3]); ++i)
    entry.python_guards.push_back(str_arg_of("_lift_note", PyList_GET_ITEM(a[3], i)));
  entry.tier1_reason = str_arg_of("_lift_note", a[4]);
  entry.tier1_where = str_arg_of("_lift_note", a[5]);
  // An event, once per entry and outcome (a refusal after another path was lifted is not one).
  Event ev;
  ev.kind = entry.lifted ? EventKind::Lift : EventKind::LiftRefused;
  ev.fn = fn->name();
  ev.entry = e;
  if (entry.lifted) {
    ev.reason = fmt::format("calls it serves skip the body; {} Python guard{}", entry.python_guards.size(),
                            entry.python_guards.size() == 1 ? "" : "s");
  } else {
    ev.reason = entry.tier1_reason;
    const std::string& w = entry.tier1_where;
    size_t colon = w.rfind(':');
    int line = 0;
    if (colon != std::string::npos && colon + 1 < w.size() &&
        w.find_first_not_of("0123456789", colon + 1) == std::string::npos)
      line = std::stoi(w.substr(colon + 1));
    if (line > 0) ev.where = SourceStack({SourceLoc{intern(w.substr(0, colon)), nullptr, line}});
  }
  CaptureLog::get().add(std::move(ev));
  Py_RETURN_NONE;
}

// _lift_miss(state, entry, text): why a lifted entry did not serve the function's last call (its
// Python guard that failed, expected vs actual), for :why-python. Not an event: like tier 1's
// guard failures on a call some entry served, it explains no recompile.
DYN_FAST(f_lift_miss) {
  PyObject* a[3];
  parse_args("_lift_miss", args, nargs, kw, {"state", "entry", "text"}, 3, a);
  std::shared_ptr<CompiledFunction> fn = compiled_state_fn(a[0]);
  if (!fn) throw_type_error("_lift_miss(): expected a compiled function state");
  int e = static_cast<int>(int_arg("_lift_miss", "entry", a[1]));
  if (e < 0 || e >= fn->num_entries()) Py_RETURN_NONE;
  Entry& entry = fn->entry_for_notes(e);
  entry.last_miss = str_arg_of("_lift_miss", a[2]);
  entry.misses++;
  Py_RETURN_NONE;
}

// _lift_grads(start, candidates): the leaves whose .grad the running segment changed, from the
// start-th such change on, as [(index of the leaf among candidates or -1, its .grad before or
// None)] (a tensor's Python object is not unique: the engine's tensor is compared);
// _lift_grads(-1, []): how many changes there are so far.
DYN_FAST(f_lift_grads) {
  PyObject* a[2];
  parse_args("_lift_grads", args, nargs, kw, {"start", "candidates"}, 2, a);
  long start = static_cast<long>(int_arg("_lift_grads", "start", a[0]));
  Capture* c = Capture::active();
  if (start < 0) return PyLong_FromLong(c ? static_cast<long>(c->grad_changes()) : -1);
  if (!PyList_Check(a[1])) throw_type_error("_lift_grads(): candidates must be a list of tensors");
  std::vector<const TensorImpl*> cands;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(a[1]); ++i) {
    PyObject* o = PyList_GET_ITEM(a[1], i);
    cands.push_back(is_tensor(o) ? unwrap(o).impl() : nullptr);
  }
  PyObject* out = PyList_New(0);
  if (!out || !c) return out;
  for (auto& [leaf, old] : c->grad_changes_from(static_cast<size_t>(start))) {
    long k = static_cast<long>(std::find(cands.begin(), cands.end(), leaf.impl()) - cands.begin());
    if (k == static_cast<long>(cands.size())) k = -1;
    PyObject* o = old.defined() ? wrap(Tensor(old)) : (Py_INCREF(Py_None), Py_None);
    PyObject* pair = o ? Py_BuildValue("(lN)", k, o) : nullptr;
    if (!pair || PyList_Append(out, pair) < 0) {
      Py_XDECREF(pair);
      Py_DECREF(out);
      return nullptr;
    }
    Py_DECREF(pair);
  }
  return out;
}

// _rng_state([state]): the default generator's (seed, offset); with a state, sets it (verify mode
// runs both tiers from the same generator state; dyn.get_rng_state / set_rng_state).
DYN_FAST(f_rng_state) {
  PyObject* a[1];
  parse_args("_rng_state", args, nargs, kw, {"state"}, 0, a);
  if (a[0] && a[0] != Py_None) {
    unsigned long long seed = 0, offset = 0;
    if (!PyArg_ParseTuple(a[0], "KK", &seed, &offset)) return nullptr;
    set_rng_state({seed, offset});
    Py_RETURN_NONE;
  }
  GeneratorState g = rng_state();
  return Py_BuildValue("(KK)", static_cast<unsigned long long>(g.seed), static_cast<unsigned long long>(g.offset));
}

DYN_FAST(f_frame_stack) {
  PyObject* a[1];
  parse_args("_frame_stack", args, nargs, kw, {"frame"}, 1, a);
  return frame_value_stack(a[0]);
}

PyMethodDef lift_functions[] = {
    DYN_ENTRY("_lift_snapshot", f_lift_snapshot, "a running call's graph inputs and the value ids of tensors"),
    DYN_ENTRY("_lift_plan", f_lift_plan, "a tier-2 plan for the entry the last call ended in, or why not"),
    DYN_ENTRY("_lift_float_slot", f_lift_float_slot, "the scalar slot of a node that holds a float"),
    DYN_ENTRY("_lift_nodes", f_lift_nodes, "the nodes of the running call's segment so far"),
    DYN_ENTRY("_last_entry", f_last_entry, "the cache entry that served a function's last call (-1: none)"),
    DYN_ENTRY("_lift_note", f_lift_note, "record what the lift analysis found for an entry (for the views)"),
    DYN_ENTRY("_lift_miss", f_lift_miss, "note why a lifted entry did not serve a call"),
    DYN_ENTRY("_lift_grads", f_lift_grads, "the leaves whose .grad the running segment changed (for lifting)"),
    DYN_ENTRY("_rng_state", f_rng_state, "the default generator's (seed, offset), or set it"),
    DYN_ENTRY("_frame_stack", f_frame_stack, "the value stack of a frame, read inside a trace function"),
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

bool init_lift(PyObject* m) {
  if (PyType_Ready(&LiftedPlanType) < 0) return false;
  return PyModule_AddFunctions(m, lift_functions) == 0;
}

}  // namespace dyn::py
