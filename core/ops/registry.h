// The op registry: every op's name, class, arity, shape/dtype inference and kernel, in one table.
// Adding an op is one X() row here plus its infer and kernel (filled in by the file of its class).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace dyn {

// X(name, class, inputs, outputs). Inputs -1 = variadic.
#define DYN_OPS(X)                                                                                                     \
  /* creation */                                                                                                       \
  X(full, Creation, 0, 1)                                                                                              \
  X(arange, Creation, 0, 1)                                                                                            \
  X(rand, Random, 0, 1)                                                                                                \
  X(randn, Random, 0, 1) X(randint, Random, 0, 1) /* unary elementwise: formula in formulas.h */                       \
      X(neg, Unary, 1, 1) X(abs, Unary, 1, 1) X(exp, Unary, 1, 1) X(log, Unary, 1, 1) X(sqrt, Unary, 1, 1)             \
          X(rsqrt, Unary, 1, 1) X(sin, Unary, 1, 1) X(cos, Unary, 1, 1) X(tanh, Unary, 1, 1) X(sigmoid, Unary, 1, 1)   \
              X(relu, Unary, 1, 1) X(gelu, Unary, 1, 1) X(silu, Unary, 1, 1) X(logical_not, Unary, 1, 1)               \
                  X(floor, Unary, 1, 1) X(ceil, Unary, 1, 1)                                                           \
                      X(erf, Unary, 1,                                                                                 \
                        1) /* binary elementwise with broadcasting; a Python scalar operand is an attribute */         \
      X(add, Binary, 2, 1) X(sub, Binary, 2, 1) X(mul, Binary, 2, 1) X(div, Binary, 2, 1)                              \
          X(floor_divide, Binary, 2, 1) X(remainder, Binary, 2, 1) X(pow, Binary, 2, 1) X(maximum, Binary, 2, 1)       \
              X(minimum, Binary, 2, 1) X(eq, Binary, 2, 1) X(ne, Binary, 2, 1) X(lt, Binary, 2, 1) X(le, Binary, 2, 1) \
                  X(gt, Binary, 2, 1) X(ge, Binary, 2, 1) X(logical_and, Binary, 2, 1) X(logical_or, Binary, 2, 1)     \
                      X(logical_xor, Binary, 2, 1)                       /* other elementwise */                       \
      X(where, Ternary, 3, 1) X(clamp, Unary, 1, 1) X(cast, Unary, 1, 1) /* reductions */                              \
      X(sum, Reduce, 1, 1) X(mean, Reduce, 1, 1) X(amax, Reduce, 1, 1) X(amin, Reduce, 1, 1) X(max_dim, Reduce, 1, 2)  \
          X(min_dim, Reduce, 1, 2) X(argmax, Reduce, 1, 1) X(argmin, Reduce, 1, 1) X(softmax, Normalize, 1, 1)         \
              X(log_softmax, Normalize, 1, 1) /* linear algebra */                                                     \
      X(matmul, Matmul, 2, 1) /* views: output aliases input 0; infer gives its full geometry, no kernel runs */       \
      X(view, View, 1, 1) X(permute, View, 1, 1) X(expand, View, 1, 1) X(select, View, 1, 1) X(slice, View, 1, 1)      \
          X(unsqueeze, View, 1, 1) X(squeeze, View, 1, 1) /* gathers and joins */                                      \
      X(index, Gather, 2, 1) X(gather, Gather, 2, 1) X(masked_select, DataDependent, 2, 1)                             \
          X(cat, Join, -1,                                                                                             \
            1) /* accumulating scatters (autograd of index and gather): base + src added at index, in order */         \
      X(index_add, Gather, 3, 1) X(scatter_add, Gather, 3, 1)

enum class OpId : uint8_t {
#define DYN_X(name, cls, nin, nout) name,
  DYN_OPS(DYN_X)
#undef DYN_X
      kCount
};
constexpr int kNumOps = static_cast<int>(OpId::kCount);

enum class OpClass : uint8_t {
  Creation,
  Random,
  Unary,
  Binary,
  Ternary,
  Reduce,
  Normalize,
  Matmul,
  View,
  Gather,
  DataDependent,
  Join
};

// Where a binary op's Python scalar operand stands.
enum class ScalarSide : uint8_t { None, Rhs, Lhs };

// Non-tensor arguments of an op call. Each op reads only the fields it documents in infer.
struct Attrs {
  Scalar scalar;                       // binary: scalar operand; full: value; clamp: min; arange: start
  Scalar scalar2;                      // clamp: max; arange: end
  Scalar scalar3;                      // arange: step
  Dims dims;                           // shape (creation, view, expand), reduce dims, permutation
  int64_t dim = 0;                     // softmax, select, slice, index, gather, cat, max_dim, argmax
  int64_t i0 = 0, i1 = 0, i2 = 0;      // select: index; slice: start, stop, step; randint: low, high
  uint64_t seed = 0, offset = 0;       // random: the counter-based generator's key and position
  DType dtype = DType::Float32;        // result dtype for creation, cast, reductions with dtype=
  ScalarSide side = ScalarSide::None;  // binary
  bool keepdim = false;
  bool has_lo = false, has_hi = false;  // clamp; argmax: has_lo = dim given
};

// dtype and geometry of one output; views also fill strides and offset.
struct OutMeta {
  DType dtype = DType::Float32;
  Dims shape;
  Dims strides;
  int64_t offset = 0;
};

struct GradNode;
// The op's derivative (core/autograd/derivatives.cpp): the gradients of its inputs from those of
// its outputs, computed with ordinary ops so a traced backward is a graph like any other.
using BackwardFn = void (*)(const GradNode& n, std::span<const Tensor> grad_out, std::vector<Tensor>* grad_in);

using InferFn = void (*)(std::span<const Tensor> in, const Attrs& a, OutMeta* out);
// Raises the errors that depend on input values (an index out of range, an integer division by
// zero), looking only at operands whose values are known (value_known). The kernel raises the
// same errors; a compile region calls this when it records the op, so they surface at the op's
// own line instead of when the graph runs.
using CheckFn = void (*)(std::span<const Tensor> in, const Attrs& a);
using KernelFn = void (*)(std::span<const Tensor> in, const Attrs& a, std::span<Tensor> out);

struct OpDef {
  std::string_view name;
  OpClass cls;
  int8_t num_inputs;
  int8_t num_outputs;
  InferFn infer = nullptr;         // throws a user error on bad input; for DataDependent, dtype only
  KernelFn kernel = nullptr;       // writes outputs allocated from infer (any strides); none for views
  BackwardFn backward = nullptr;   // none: not differentiable (bool outputs, indices, creation)
  CheckFn check_values = nullptr;  // none: no error depends on input values
  // Bit i: the derivative reads input i's values (PyTorch's "saved tensors"), so an in-place
  // write to it before backward() is an error. add's derivative reads no input value.
  uint32_t saved_inputs = 0;
  bool saves_output = false;  // the derivative reads output 0 (exp, tanh, softmax)
};

// The data of t can be read now: not pending in a compile region, no recorded write pending.
inline bool value_known(const Tensor& t) {
  const TensorImpl* p = t.impl();
  return !p->lazy() && p->storage_ && !p->storage_->pending_writes;
}

const OpDef& op_def(OpId op);
inline std::string_view op_name(OpId op) { return op_def(op).name; }

// Every op call goes through these. Outside a compile region the op runs now; inside one it is
// recorded (see core/capture/capture.h) and its result is a lazy tensor.
Tensor dispatch(OpId op, std::span<const Tensor> in, const Attrs& a);
// Ops with two outputs (max_dim, min_dim).
std::pair<Tensor, Tensor> dispatch2(OpId op, std::span<const Tensor> in, const Attrs& a);
// An in-place op: the result is written into `self` (cast when dtypes differ).
void dispatch_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);

// The same, always run now: infer, allocate, kernel. Views share input 0's storage.
Tensor dispatch_eager(OpId op, std::span<const Tensor> in, const Attrs& a);
std::pair<Tensor, Tensor> dispatch2_eager(OpId op, std::span<const Tensor> in, const Attrs& a);
void dispatch_into_eager(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);
// The user errors an in-place op raises before anything runs (shape, overlap, dtype).
void check_into(const OutMeta& m, const Tensor& self);
// Two views of one buffer that share some elements but not all, element for element (x and x.t(),
// x[1:] and x[:-1]): an in-place op reading one while writing the other would read values it has
// already overwritten. PyTorch's rule: views that are not non-overlapping-and-dense are too hard
// to tell and pass.
bool partially_overlap(const Tensor& a, const Tensor& b);
[[noreturn]] void fail_partial_overlap();

// PyTorch's result type: dimensioned tensors outrank 0-dim ones unless a 0-dim one is of a higher
// category (bool < integral < floating).
DType result_type(std::span<const Tensor> ts);
// "Float", "Long": the dtype names PyTorch's messages use.
std::string_view legacy_dtype_name(DType t);

// The op's non-tensor arguments as they print in a graph ("2.0", "dim=1, keepdim=True"); empty if none.
std::string format_attrs(OpId op, const Attrs& a);
// A Python scalar as Python prints it: 2.0, -1, True.
std::string format_scalar(const Scalar& s);

// Each op class's file fills its rows of the table.
void register_elementwise_ops(OpDef* table);
void register_reduce_ops(OpDef* table);
void register_shape_ops(OpDef* table);
void register_matmul_ops(OpDef* table);
void register_derivatives(OpDef* table);

}  // namespace dyn
