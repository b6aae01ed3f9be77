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
  // A constant failure: which of the op's numbers changed (scalar, scalar2, scalar3), until named.
  int constant_field = -1;
  // What changed, as the subject of a sentence: "dim 0 of tensor 'x' (argument)". Empty: `what`.
  std::string subject;
  // The Python value whose change explains the failure, when one changed since the entry was
  // traced: `steps` went from 2 to 3 (its first use in the function: cause_where).
  std::string cause_name, cause_old, cause_new, cause_where;
  // Where the value came from when it is not an argument or global the call can see: "from
  // .item() at a.py:12" for a local that Python read from a tensor at a graph break.
  std::string cause_from;
  // A size failure of a traced (static) dim: which dim, for the hint settled at the recompile.
  int size_dim = -1;
  std::string size_input;  // the traced tensor's name ("x"), as dyn.mark_dynamic would take it
  // A tensor-input failure: the tensor that came where the trace had a named input. Named only
  // if no entry serves the call (naming runs Python): when it is another argument or global than
  // the one traced, data flow changed and the failure says so. Dropped before it is logged.
  Tensor came;
  // tensor_input: the operand this call passed is a value an earlier segment of this call computed
  // (where the trace read an input from outside): which tensor the op reads changed, as it does
  // when a branch before it went the other way.
  bool came_computed = false;
  // A binary op's number that is a tensor now: named like `came` (then dropped). swap_kinds: "a
  // Python float where the trace had a tensor".
  Tensor swapped;
  std::string swap_kinds, swap_op;
  bool swap_number = false;   // the operand is a number now: named by the namer, if no entry serves
  std::string cause() const;  // "`steps` changed from 2 to 3 (used at a.py:12)", or ""
  std::string str() const;    // one line: what, expected vs actual, file:line and source, hint
};

// What one recompile is blamed on: the failures of its older entries reduced to one source (a
// Python value that changed, a tensor property, a constant), so that a storm of recompiles can
// be summarized as one cause that took several values.
struct Cause {
  std::string key;    // "`steps`", "tensor 'x' (argument) size at dim 0"; empty: none
  std::string value;  // what it was this time: "5"
  std::string first;  // what it was when the oldest entry was traced: "3"
  std::string where;  // where it is used or checked: "a.py:12"
  std::string from;   // "from .item() at a.py:12" (GuardFailure::cause_from)
  std::string hint;
  bool has_value = true;  // false: what changed is the trace itself (an op, its end), not a value
};
// The cause is the failure of the entry that came closest (closest: its index; -1 when not
// known, then the oldest entry's): against any other entry more than one thing differs.
Cause cause_of(const std::vector<GuardFailure>& failures, int closest);
// The failure of entry `closest` among failures, else the oldest entry's; nullptr if none.
const GuardFailure* closest_failure(const std::vector<GuardFailure>& failures, int closest);

// "fn[k] failed kind: text" for each failure, one a line: a recompile event's details.
std::string failure_lines(const std::string& fn, const std::vector<GuardFailure>& failures);

// The hint of a failure of a traced size, now that the recompile's outcome is known:
// dynamic: the function's dynamic= (-1 None, 0 False, 1 True); made_dynamic: the recompile made
// this dim symbolic; name: the tensor's source, as dyn.mark_dynamic(name, dim) would take it.
std::string size_hint(const GuardFailure& f, int dynamic, bool made_dynamic, const std::string& fn);

// The check of one tensor entering the graph against the input it was traced with: dtype, shape,
// strides, requires_grad. Returns false and fills f on a mismatch. syms: the entry's symbols at
// this call, bound here where a dynamic size meets them first.
bool check_tensor_input(const Value& traced, const Tensor& t, GuardFailure* f, SymValues* syms = nullptr);

// Attributes equal for replay: everything but the graph's inputs among them, the random
// generator's state and the float constants (value_scalars), whose kind alone must match.
bool attrs_match(OpId op, const Attrs& traced, const Attrs& now);
// Where two attribute sets differ, for an explanation: (what, expected, actual, is_constant).
void explain_attrs(OpId op, const Attrs& traced, const Attrs& now, GuardFailure* f);

}  // namespace dyn
