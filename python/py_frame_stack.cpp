// The value stack of a running CPython 3.11 frame, for the lift's concolic pass (dyn/_lift/):
// it observes the body run natively, one instruction at a time, and reads the operands each
// instruction is about to consume. CPython has no API for this; while a trace function runs,
// 3.11 stores the frame's stack pointer (ceval's DO_TRACING), so the internal frame layout gives
// the stack. Only CPython 3.11 (the interpreter dynrepl embeds) is supported: the #if below checks it.
#define Py_BUILD_CORE
#include <Python.h>
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

namespace dyn::py {

// A new list of the stack's items, bottom first, or nullptr with an exception set.
PyObject* frame_value_stack(PyObject* frame) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  if (!PyFrame_Check(frame)) {
    PyErr_SetString(PyExc_TypeError, "_frame_stack(): expected a frame");
    return nullptr;
  }
  _PyInterpreterFrame* f = reinterpret_cast<PyFrameObject*>(frame)->f_frame;
  if (!f || f->owner == FRAME_OWNED_BY_FRAME_OBJECT) {  // the frame has returned
    PyErr_SetString(PyExc_ValueError, "_frame_stack(): the frame is not running");
    return nullptr;
  }
  int base = f->f_code->co_nlocalsplus;
  int top = f->stacktop;
  if (top < base || top > base + f->f_code->co_stacksize) {
    PyErr_SetString(PyExc_RuntimeError, "_frame_stack(): the stack pointer is not stored (not inside a trace call)");
    return nullptr;
  }
  PyObject* out = PyList_New(top - base);
  if (!out) return nullptr;
  for (int i = base; i < top; ++i) {
    PyObject* v = f->localsplus[i];
    if (!v) v = Py_None;  // a NULL slot (PUSH_NULL before a call) reads as None
    Py_INCREF(v);
    PyList_SET_ITEM(out, i - base, v);
  }
  return out;
#else
  (void)frame;
  PyErr_SetString(PyExc_RuntimeError, "_frame_stack(): only CPython 3.11 is supported");
  return nullptr;
#endif
}

}  // namespace dyn::py
