// The op table's C++ side: OpId and OpDef from the rows of ops.def, the attributes every op call
// carries, and the op-independent rules (result type, how attributes print). Adding an op is one
// row in ops.def, its formula (formulas.h) or kernel, and its derivative (docs/architecture.md).
#pragma once
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace dyn {

enum class OpId : uint8_t {
#define DYN_OP(name, ...) name,
#include "core/ops/ops.def"
#undef DYN_OP
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
  Join,
  Scan
};

// How an op's result dtype follows from its inputs (the dtype column of ops.def).
enum class DTypeRule : uint8_t {
  attr,      // Attrs::dtype (creation, random, cast)
  same,      // the input's; bool is rejected (neg, abs, floor)
  floating,  // the input's if floating, else the default float dtype (exp, log, erf)
  to_bool,   // bool (comparisons, logical ops)
  promote,   // the operands' result type (add, mul)
  to_float,  // the result type, the default float dtype for integers (div, atan2)
  int_math,  // the result type, int64 for bools (pow, floor_divide, remainder)
  custom,    // the op's infer decides
};

// What the formula column says: the element expression formula::name of one or two operands.
enum class FormulaKind : uint8_t { none, unary, binary };

// The same two columns at compile time, for code generated per op (kernels, Python methods).
constexpr DTypeRule dtype_rule_of(OpId op) {
  switch (op) {
#define DYN_OP(n, cls, nin, nout, rule, ...) \
  case OpId::n:                              \
    return DTypeRule::rule;
#include "core/ops/ops.def"
#undef DYN_OP
    default:
      return DTypeRule::custom;
  }
}
constexpr FormulaKind formula_of(OpId op) {
  switch (op) {
#define DYN_OP(n, cls, nin, nout, rule, formula, ...) \
  case OpId::n:                                       \
    return FormulaKind::formula;
#include "core/ops/ops.def"
#undef DYN_OP
    default:
      return FormulaKind::none;
  }
}

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
  bool reverse = false;                 // cumsum: from the end; sort: descending
};

// Every field of Attrs once, for the code that must treat them all alike (equality for replay,
// structural keys, common-subexpression hashing). rng: the generator state, which is an input of
// a graph rather than a constant of it.
// clang-format off
#define DYN_ATTR_FIELDS(X)                                                      \
  X(scalar, false) X(scalar2, false) X(scalar3, false)                          \
  X(dims, false) X(dim, false) X(i0, false) X(i1, false) X(i2, false)           \
  X(seed, true) X(offset, true)                                                 \
  X(dtype, false) X(side, false) X(keepdim, false) X(has_lo, false) X(has_hi, false) X(reverse, false)
// clang-format on

// Calls f(name, a.field, b.field, is_rng) for every field of two attribute sets.
template <typename F>
void visit_attrs(const Attrs& a, const Attrs& b, F&& f) {
#define DYN_VISIT(field, rng) f(#field, a.field, b.field, rng);
  DYN_ATTR_FIELDS(DYN_VISIT)
#undef DYN_VISIT
}

// Appends the attributes' bytes to *key (structural keys, common-subexpression hashing). Float
// constants go in by their bits: -0.0 is not 0.0, and NaN equals NaN.
void put_attrs(const Attrs& a, bool with_rng, std::string* key);
// Constants compare by their bits: -0.0 is not 0.0 (x * -0.0 differs in sign), and NaN is NaN.
bool same_scalar(const Scalar& a, const Scalar& b);
// The same equality as put_attrs' keys, without building them.
bool attrs_equal(const Attrs& a, const Attrs& b, bool with_rng);
// Float constants that only enter arithmetic (a binary op's number, full's value, clamp's bounds,
// layer_norm's eps) are inputs of a graph rather than part of it: a replayed call runs the cached
// plan with its own values, so an lr schedule or a changing loss weight does not recompile. Bit k
// set: field k of (scalar, scalar2, scalar3). Ints and bools stay constants (they decide dtypes
// and may decide shapes), as does arange's range (it decides the shape).
unsigned value_scalars(OpId op, const Attrs& a);
// The numbers of an op the trace keeps as constants (a replay compares them): the Python numbers
// a binary op, full, clamp and arange take, less the value scalars. Same bit layout.
unsigned constant_scalars(OpId op, const Attrs& a);
// attrs_equal without the rng state, where the value scalars of `traced` compare by kind only.
bool attrs_equal_but_values(OpId op, const Attrs& traced, const Attrs& now);
// The value scalars of `now` that differ (bitwise) from `traced`'s, as a mask of value_scalars.
unsigned changed_values(OpId op, const Attrs& traced, const Attrs& now);

// dtype and geometry of one output; views also fill strides and offset.
struct OutMeta {
  DType dtype = DType::Float32;
  Dims shape;
  Dims strides;
  int64_t offset = 0;
};

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
  DTypeRule dtype_rule;
  FormulaKind formula;
  std::string_view python;  // the python column: "F|M|I", "0"
  // The row's class, dtype and formula columns as written, for tools (dyn._op_table()).
  std::string_view class_name, dtype_rule_name, formula_name;
  InferFn infer = nullptr;         // throws a user error on bad input; for DataDependent, dtype only
  KernelFn kernel = nullptr;       // writes outputs allocated from infer (any strides); none for views
  CheckFn check_values = nullptr;  // none: no error depends on input values
};

// The data of t can be read now: not pending in a compile region, no recorded write pending.
inline bool value_known(const Tensor& t) {
  const TensorImpl* p = t.impl();
  return !p->lazy() && p->storage_ && !p->storage_->pending_writes;
}

namespace detail {
extern std::atomic<const OpDef*> op_rows;  // set by the first op_rows_init()
const OpDef* op_rows_init();
}  // namespace detail
// Inline: every recorded and replayed op looks its row up several times.
inline const OpDef& op_def(OpId op) {
  const OpDef* rows = detail::op_rows.load(std::memory_order_acquire);
  if (!rows) [[unlikely]]
    rows = detail::op_rows_init();
  return rows[static_cast<int>(op)];
}
inline std::string_view op_name(OpId op) { return op_def(op).name; }

// PyTorch's result type: dimensioned tensors outrank 0-dim ones unless a 0-dim one is of a higher
// category (bool < integral < floating).
DType result_type(std::span<const Tensor> ts);
// "Float", "Long": the dtype names PyTorch's messages use.
std::string_view legacy_dtype_name(DType t);

// The op's non-tensor arguments as they print in a graph ("2.0", "dim=1, keepdim=True"); empty if none.
std::string format_attrs(OpId op, const Attrs& a);
// A Python scalar as Python prints it: 2.0, -1, True.
std::string format_scalar(const Scalar& s);

// Fills one row's infer and kernel: what each op class's register_* function does per op.
inline void set_kernel(OpDef* table, OpId op, InferFn infer, KernelFn kernel) {
  table[static_cast<int>(op)].infer = infer;
  table[static_cast<int>(op)].kernel = kernel;
}

// Each op class's file fills its rows of the table.
void register_elementwise_ops(OpDef* table);
void register_reduce_ops(OpDef* table);
void register_shape_ops(OpDef* table);
void register_matmul_ops(OpDef* table);
void register_scan_ops(OpDef* table);
void register_random_ops(OpDef* table);

}  // namespace dyn
