// The graph IR: a segment of a trace is a Graph of Nodes over Values (SSA, in program order).
#pragma once
#include <string>
#include <vector>

#include "core/ir/source.h"
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
  std::string input_name;  // "a", "fc.weight"
  Tensor input;            // the eager tensor read when the graph runs
};

struct Node {
  OpId op;
  Attrs attrs;
  std::vector<int> inputs;   // value ids
  std::vector<int> outputs;  // value ids
  // In-place ops write into the buffer of value `target`; the output aliases it.
  int target = -1;
  int values_before = 0;  // how many values existed when this node was recorded (for prefix copies)
  SourceStack where;
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

  int add_input(const Tensor& t, InputKind kind, std::string name);
  // Node count without inputs.
  size_t op_count() const { return nodes.size(); }
};

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
