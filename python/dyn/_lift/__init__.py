"""Tier 2 of the cache (trace once): serving a cache entry without running the function's body.

While tier 1 records (or replays) a call, a concolic pass watches the body's CPython 3.11
bytecode run natively, one instruction at a time (a trace function with opcode events, reading
each instruction's operands from the frame's value stack), and keeps, for every value, where it
came from: an argument, a global, an attribute or item of one (a *source*, re-evaluable at the
next call), a constant, or a value made inside the call. It yields:

- the Python guards: every sourced value that decided a branch, a loop's length, a called
  object or a non-tensor operand of an op, as a predicate over its source;
- where each graph input is fetched from, and how the return value is rebuilt;
- or the reason the entry stays on tier 1 (an effect on outside Python state, an unknown C call,
  a graph break, ...), with the line that does it.

Execution stays native: effects happen once, values are Python's own, and a refusal costs
nothing but the tracing. A lifted call checks the guards in one generated function, fetches the
inputs and runs the entry's plan in the engine (which checks the tensor guards), then rebuilds
the result. A guard that fails sends the call to tier 1, which explains and recompiles as before.

The package, by topic: _prov (where a value came from: the provenance classes, Refused, the
library's tables of pure and impure calls), _expr (sources as expressions, the code that
re-evaluates them, the Python guards), _bytecode (a traced frame, its instructions, binding a
callee's parameters), _tracer (the concolic pass: Tracer, its entry points, trace callbacks and
provenance helpers) with its instruction handlers in _instructions (stack, variables, attributes,
containers, iteration), _operators (branches, operators, subscripts, functions, with) and _calls
(calls: Python callees, tensor ops, pure builtins, backward()), _plan (the lift: guards, fetches,
the generated hit function, the engine's plan) and _verify (verify mode and why a lift missed).
"""
from ._prov import _MISS, Refused
from ._tracer import Tracer
from ._plan import make_lift, result_tensors
from ._verify import State, compare, describe_miss

__all__ = ["_MISS", "Refused", "Tracer", "make_lift", "result_tensors", "State", "compare", "describe_miss"]
