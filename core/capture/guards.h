// Guards: what a cache entry checks before it serves a call, and how a failed check explains itself.
#pragma once
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace dyn {

enum class GuardKind : uint8_t { TensorInput, Aliasing, Op, Constant, Branch, GlobalState, TraceEnd };
std::string_view guard_kind_name(GuardKind k);  // "tensor_input"

// The first guard an entry failed for one call: kind, what, expected vs actual, where, a hint.
struct GuardFailure {
  int entry = -1;
  GuardKind kind = GuardKind::Op;
  std::string what;  // "tensor 'x' (argument) size at dim 0"
  std::string expected, actual;
  SourceStack where;
  std::string hint;
  std::string str() const;  // one line: what, expected vs actual, file:line and source, hint
};

// The check of one tensor entering the graph against the input it was traced with: dtype, shape,
// strides, requires_grad. Returns false and fills f on a mismatch.
bool check_tensor_input(const Value& traced, const Tensor& t, GuardFailure* f);

// Attributes equal for replay: everything but the random generator's state (a graph input).
bool attrs_match(const Attrs& a, const Attrs& b);
// Where two attribute sets differ, for an explanation: (what, expected, actual, is_constant).
void explain_attrs(OpId op, const Attrs& traced, const Attrs& now, GuardFailure* f);

}  // namespace dyn
