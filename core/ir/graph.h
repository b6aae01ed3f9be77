// The graph IR: a segment of a trace is a Graph of Nodes over Values (SSA, in program order).
#pragma once
#include <string>
#include <vector>

#include "core/ir/source.h"
#include "core/ir/symbolic.h"
#include "core/ops/registry.h"

namespace dyn {

// Where a graph input came from, for printing and guards. External: from outside the function,
// by no name the call can see; Materialized: computed by an earlier segment of the same call.
enum class InputKind : uint8_t {
  Argument,
  Parameter,
  External,
  Materialized,
  Global,
  Closure,
  Attribute,
  OptimizerState,
  Local,
  Literal  // a number written in the code (scalar inputs only)
};

struct Value {
  DType dtype = DType::Float32;
  Dims shape, strides;
  int64_t offset = 0;
  int producer = -1;  // node index, or -1 for a graph input
  bool requires_grad = false;
  // Graph inputs only:
  InputKind input_kind = InputKind::External;
  std::string input_name;    // "a", "fc.weight"
  Tensor input;              // the eager tensor read when the graph runs
  uint8_t dynamic_dims = 0;  // inputs: dims marked dynamic (dyn.mark_dynamic, dynamic=True), bit d
  // In a dynamic graph: each dim's (and an input's each stride's) form in the entry's symbols;
  // empty: every one is the constant in shape (strides). A constant dim is SymExpr::constant.
  std::vector<SymExpr> sym_shape, sym_strides;
};

struct Node {
  OpId op;
  Attrs attrs;
  std::vector<int> inputs;   // value ids
  std::vector<int> outputs;  // value ids
  // In-place ops write into the buffer of value `target`; the output aliases it.
  int target = -1;
  int values_before = 0;  // how many values existed when this node was recorded (for prefix copies)
  // The default dtype when recorded: an int operand and a Python float promote to it. A function
  // that sets it from Python state changes it between calls without failing the entry's guard.
  DType default_dtype = DType::Float32;
  SourceStack where;
  std::vector<SymAttr> sym_attrs;  // the ints of attrs that follow the symbols (dynamic graphs)
};

// A float constant that is an input of the graph (value_scalars): which node and field reads it,
// and where the number came from.
struct ScalarInput {
  int node = -1;
  int field = 0;  // 0: attrs.scalar, 1: scalar2, 2: scalar3
  InputKind kind = InputKind::External;
  std::string name;  // "w", "opt.param_groups[0]['lr']", "1 - beta1", "0.5" (Literal); empty: unknown
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;   // value ids, in order of first use
  std::vector<int> outputs;  // value ids the rest of the program still sees
  std::vector<ScalarInput> scalar_inputs;
  bool dynamic = false;  // some size or int follows a symbol: replay checks and binds them

  int add_input(const Tensor& t, InputKind kind, std::string name);
  // Node count without inputs.
  size_t op_count() const { return nodes.size(); }
};

// ---- dynamic shapes (symbolic.cpp) ----
// g is this call's trace; old, a trace of the same ops with other sizes (an earlier entry that
// failed a size guard). Each input dim whose size differs (both at least 2) becomes a symbol
// (one symbol for dims that differ alike), and every other int that differs is written as a form
// in them. False, changing nothing, when the two are not the same ops or no size differs.
// syms/now: the new entry's symbols and their values at this call (extended).
bool generalize_pair(const Graph& old, Graph* g, std::vector<SymInfo>* syms, SymValues* now);
// One trace: the dims of inputs marked dynamic become symbols, and the sizes and size arguments
// equal to a symbol's value at this call are taken to follow it. True when g became dynamic.
bool generalize_by_value(Graph* g, std::vector<SymInfo>* syms, SymValues* now);
// Forgets every form: the graph as a plain trace of this call's sizes.
void clear_symbols(Graph* g);
// A copied prefix of a dynamic trace made concrete for this call: its symbolic ints evaluated
// under v, its values' geometry inferred again from the inputs this call bound (bound[id]).
void instantiate(Graph* g, int nodes, const SymValues& v, const std::vector<Tensor>& bound);
// "f32[s0, 16]": the metadata of a value, symbols where it has them.
std::string value_meta(const Value& v);
// The value's shape at this call: its sizes evaluated under v (shape itself when static).
Dims eval_shape(const Value& val, const SymValues* v);

// "%3 : f32[4, 8] = add(%1, %2)  # file.py:12  x = a + b", one node per line.
std::string print_graph(const Graph& g, bool verbose = false);
std::string print_node(const Graph& g, const Node& n, bool verbose = false);
// "f32[4, 8]"
std::string meta_str(DType t, const Dims& shape);
// "argument", "global", ...: the words :graph and the pictures use for an input.
const char* input_kind_name(InputKind k);
// "argument", "optimizer_state": the same as one identifier, for the Python API and events.
const char* input_kind_key(InputKind k);
// "tensor 'model.fc.weight' (parameter)", "tensor %3 (from an earlier graph)": an input as guards name it.
std::string input_label(const Graph& g, int value);
// "'w' (argument)", "the literal 0.5", "an unnamed float": the source of a float input of node k, field f.
std::string scalar_label(const Graph& g, int node, int field);
// Checks SSA form, operand ranges and that each node's recorded outputs match re-inference.
// Returns an empty string when the graph is well formed, else what is wrong.
std::string verify_graph(const Graph& g);

// A key equal for graphs with the same structure: ops, attributes (rng state excluded: it is
// an input of the graph, not a constant), wiring, input and output metadata.
std::string structure_key(const Graph& g);

}  // namespace dyn
