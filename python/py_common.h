// Shared declarations of the binding layer (the only code that includes Python headers).
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "core/tensor.h"

namespace dyn {
class CompiledFunction;
}

namespace dyn::py {

// A Python exception is already set; unwinds to the nearest DYN_CATCH.
struct PythonErrorSet {};

// The Python object of a dyn.Tensor: one handle to the engine's tensor.
struct PyTensor {
  PyObject_HEAD Tensor t;
  PyObject* weakrefs;
};

struct PyDType {
  PyObject_HEAD DType t;
};

extern PyTypeObject TensorType;
extern PyTypeObject DTypeType;
extern PyTypeObject* SizeType;
extern PyTypeObject* MaxReturnType;  // dyn.return_types.max / min: (values, indices)

bool init_tensor_type(PyObject* module);
bool init_capture(PyObject* module);
bool init_compat(PyObject* module);
extern PyObject* GraphBreakError;
// Whether a code file belongs to the dyn package (its frames are not the user's).
bool is_library_file(const char* filename);
bool init_lift(PyObject* module);
// The engine state behind a dyn._CompiledState, or null for anything else.
std::shared_ptr<CompiledFunction> compiled_state_fn(PyObject* o);

inline bool is_tensor(PyObject* o) { return Py_TYPE(o) == &TensorType || PyType_IsSubtype(Py_TYPE(o), &TensorType); }
inline const Tensor& unwrap(PyObject* o) { return reinterpret_cast<PyTensor*>(o)->t; }
// New reference.
PyObject* wrap(Tensor t);
PyObject* dtype_object(DType t);     // borrowed
PyObject* make_size(const Dims& d);  // new reference to a dyn.Size

// Sets the Python exception for the C++ exception being handled; returns nullptr.
PyObject* translate_exception();
[[noreturn]] void throw_type_error(const std::string& msg);

// Binds positional/keyword arguments to names (vectorcall convention); missing ones are nullptr.
void parse_args(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                std::initializer_list<const char*> names, int required, PyObject** out);

// A static type with the fields every type of ours sets; the caller adds its own slots.
inline PyTypeObject new_type(const char* name, Py_ssize_t basicsize, destructor dealloc, unsigned long flags,
                             const char* doc) {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = name;
  t.tp_basicsize = basicsize;
  t.tp_dealloc = dealloc;
  t.tp_flags = flags;
  t.tp_doc = doc;
  return t;
}

// ---- fast-call bindings (METH_FASTCALL | METH_KEYWORDS) ----
using Args = PyObject* const*;
using FastFn = PyObject* (*)(PyObject*, Args, Py_ssize_t, PyObject*);
// A binding's body may throw; DYN_ENTRY registers it behind guarded<>, which turns the C++
// exception into the Python one, so no body repeats the try/catch.
#define DYN_FAST(name) PyObject* name([[maybe_unused]] PyObject* self, Args args, Py_ssize_t nargs, PyObject* kw)
template <FastFn Fn>
PyObject* guarded(PyObject* self, Args args, Py_ssize_t nargs, PyObject* kw) noexcept {
  try {
    return Fn(self, args, nargs, kw);
  } catch (...) {
    return translate_exception();
  }
}
template <FastFn Fn>
PyCFunction fast_cfunction() {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(guarded<Fn>));
}
#define DYN_ENTRY(pyname, fn, doc) \
  { pyname, ::dyn::py::fast_cfunction<fn>(), METH_FASTCALL | METH_KEYWORDS, doc }

// ---- conversions; each throws a TypeError naming fn and arg on a wrong type ----
bool to_scalar(PyObject* o, Scalar* out);  // false if o is not a Python/numpy number
Scalar scalar_arg(const char* fn, const char* arg, PyObject* o);
int64_t int_arg(const char* fn, const char* arg, PyObject* o);
bool bool_arg(const char* fn, const char* arg, PyObject* o, bool dflt);
std::optional<DType> dtype_arg(const char* fn, PyObject* o);  // nullptr/None -> nullopt
// A TypeError with the message of a PyTorch dtype dyn does not have (dyn.float16), if o is one.
void throw_if_unsupported_dtype(PyObject* o);
const Tensor& tensor_arg(const char* fn, const char* arg, PyObject* o);
// One int or a sequence of ints.
Dims dims_arg(const char* fn, const char* arg, PyObject* o);
// f(2, 3) or f((2, 3)) or f([2, 3]) or f(dyn.Size): the positional args as a shape.
Dims shape_args(const char* fn, PyObject* const* args, Py_ssize_t nargs);
// A tensor from nested lists, scalars, buffers (numpy arrays) or tensors; a copy.
Tensor tensor_from_data(PyObject* data, std::optional<DType> dtype);
// A tensor sharing the memory of a numpy array (or any buffer).
Tensor tensor_from_buffer(PyObject* obj);
PyObject* tensor_to_list(const Tensor& t);
// a @ b as Python asks for it: under torch.autocast("cpu"), float32 operands are cast to its dtype
// first, as PyTorch's autocast does for matmul (backward's products, which call ops::matmul, are not).
Tensor autocast_matmul(const Tensor& a, const Tensor& b);

// device=: None, "cpu", "xla" (torch_xla maps onto dyn) or a dyn.device; anything else (cuda,
// mps) raises a RuntimeError that says dyn runs on the CPU.
void check_device(const char* fn, PyObject* o);

// generator=: while alive, draws use the generator's state (its _seed and _offset attributes),
// which gets the advanced offset back; None leaves the default generator in place.
class GeneratorScope {
 public:
  GeneratorScope(const char* fn, PyObject* generator);
  ~GeneratorScope();
  GeneratorScope(const GeneratorScope&) = delete;
  GeneratorScope& operator=(const GeneratorScope&) = delete;

 private:
  PyObject* gen_ = nullptr;
  uint64_t saved_seed_ = 0, saved_offset_ = 0;
};

}  // namespace dyn::py

#define DYN_TRY try {
#define DYN_CATCH                            \
  }                                          \
  catch (...) {                              \
    return ::dyn::py::translate_exception(); \
  }
