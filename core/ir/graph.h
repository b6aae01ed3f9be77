// The graph IR: a segment of a trace is a Graph of Nodes over Values (SSA, in program order).
//
// Note [compact graphs]
// A training step's trace can hold millions of nodes, so a node and a value are kept small: a
// value's shape and strides and a node's source stack are interned pointers, a node's attributes
// are shared with the other nodes of its call that have the same ones, operand lists hold up to
// four ids inline, and what only graph inputs and dynamic graphs need sits behind one pointer.
// Nodes and values live in chunked storage (chunked.h), so a growing trace never copies itself.
#pragma once
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/chunked.h"
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

// What few values have: a graph input's name and tensor, a dynamic graph's forms.
struct ValueExtra {
  std::string input_name;  // "a", "fc.weight"
  Tensor input;            // the eager tensor read when the graph runs
  // In a dynamic graph: each dim's (and an input's each stride's) form in the entry's symbols;
  // empty: every one is the constant in shape (strides). A constant dim is SymExpr::constant.
  std::vector<SymExpr> sym_shape, sym_strides;
};

struct Value {
  DimsRef shape, strides;
  int64_t offset = 0;
  int producer = -1;  // node index, or -1 for a graph input
  DType dtype = DType::Float32;
  bool requires_grad = false;
  // Graph inputs only:
  InputKind input_kind = InputKind::External;
  uint8_t dynamic_dims = 0;  // inputs: dims marked dynamic (dyn.mark_dynamic, dynamic=True), bit d

  const std::string& input_name() const { return x_ ? x_->input_name : no_extra().input_name; }
  const Tensor& input() const { return x_ ? x_->input : no_extra().input; }
  const std::vector<SymExpr>& sym_shape() const { return x_ ? x_->sym_shape : no_extra().sym_shape; }
  const std::vector<SymExpr>& sym_strides() const { return x_ ? x_->sym_strides : no_extra().sym_strides; }
  // For writing them (allocates the extra part once).
  ValueExtra& extra() {
    if (!x_) x_ = std::make_unique<ValueExtra>();
    return *x_;
  }
  void drop_input() {  // the cache must not keep user tensors alive
    if (x_) x_->input = Tensor();
  }
  void clear_symbols() {
    if (x_) x_->sym_shape.clear(), x_->sym_strides.clear();
  }

  Value() = default;
  Value(const Value& o) { *this = o; }
  Value(Value&&) noexcept = default;
  Value& operator=(const Value& o);
  Value& operator=(Value&&) noexcept = default;

 private:
  static const ValueExtra& no_extra();
  std::unique_ptr<ValueExtra> x_;
};

// A node's operand ids: up to four inline, more on the heap (cat of many tensors). 20 bytes: the
// heap pointer sits in the inline space, and the capacity follows from the size.
class IdList {
 public:
  IdList() = default;
  IdList(std::initializer_list<int> v) {
    for (int x : v) push_back(x);
  }
  IdList(const IdList& o) { *this = o; }
  IdList(IdList&& o) noexcept { *this = std::move(o); }
  IdList& operator=(const IdList& o);
  IdList& operator=(IdList&& o) noexcept;
  ~IdList() {
    if (on_heap()) delete[] heap();
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const int* data() const { return on_heap() ? heap() : in_; }
  int* data() { return on_heap() ? heap() : in_; }
  const int* begin() const { return data(); }
  const int* end() const { return data() + n_; }
  int* begin() { return data(); }
  int* end() { return data() + n_; }
  int operator[](size_t i) const { return data()[i]; }
  int& operator[](size_t i) { return data()[i]; }
  int front() const { return data()[0]; }
  int back() const { return data()[n_ - 1]; }
  void reserve(size_t) {}  // the capacity follows from the size
  void push_back(int x);
  bool operator==(const IdList& o) const;

 private:
  static constexpr uint32_t kInline = 4;
  bool on_heap() const { return n_ > kInline; }
  // On the heap, the capacity is the size rounded up to a power of two.
  int* heap() const {
    int* p;
    std::memcpy(&p, in_, sizeof p);
    return p;
  }
  void set_heap(int* p) { std::memcpy(in_, &p, sizeof p); }
  uint32_t n_ = 0;
  int in_[kInline] = {};
};

// A node's result ids: the values a node makes are recorded one after another, so a first id and
// a count say which.
class OutputIds {
 public:
  struct iterator {
    using iterator_category = std::forward_iterator_tag;
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using pointer = const int*;
    using reference = int;
    int v;
    int operator*() const { return v; }
    iterator operator++(int) { return {v++}; }
    iterator& operator++() {
      ++v;
      return *this;
    }
    bool operator==(const iterator& o) const { return v == o.v; }
    bool operator!=(const iterator& o) const { return v != o.v; }
  };
  OutputIds() = default;
  OutputIds(std::initializer_list<int> v) {
    for (int x : v) push_back(x);
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int operator[](size_t i) const { return first_ + static_cast<int>(i); }
  int front() const { return first_; }
  int back() const { return first_ + static_cast<int>(n_) - 1; }
  iterator begin() const { return {first_}; }
  iterator end() const { return {first_ + static_cast<int>(n_)}; }
  void push_back(int id);  // the next id after the last one (a logic error otherwise)
  void reserve(size_t) {}
  bool operator==(const OutputIds& o) const { return n_ == o.n_ && (n_ == 0 || first_ == o.first_); }

 private:
  int first_ = 0;
  uint32_t n_ = 0;
};

// The ints of a node's attributes that follow the symbols of a dynamic graph: one pointer, since
// static graphs (nearly all nodes) have none.
class SymAttrList {
 public:
  SymAttrList() = default;
  SymAttrList(const SymAttrList& o) : v_(o.v_ ? std::make_unique<std::vector<SymAttr>>(*o.v_) : nullptr) {}
  SymAttrList(SymAttrList&&) noexcept = default;
  SymAttrList& operator=(const SymAttrList& o) {
    if (this != &o) v_ = o.v_ ? std::make_unique<std::vector<SymAttr>>(*o.v_) : nullptr;
    return *this;
  }
  SymAttrList& operator=(SymAttrList&&) noexcept = default;
  bool empty() const { return !v_ || v_->empty(); }
  size_t size() const { return v_ ? v_->size() : 0; }
  const SymAttr* begin() const { return v_ ? v_->data() : nullptr; }
  const SymAttr* end() const { return v_ ? v_->data() + v_->size() : nullptr; }
  void push_back(const SymAttr& a) {
    if (!v_) v_ = std::make_unique<std::vector<SymAttr>>();
    v_->push_back(a);
  }
  void clear() { v_.reset(); }
  std::vector<SymAttr> list() const { return v_ ? *v_ : std::vector<SymAttr>{}; }

 private:
  std::unique_ptr<std::vector<SymAttr>> v_;
};

// A node's attributes, shared by the nodes of a trace that have equal ones (Note [compact graphs]).
class AttrsRef {
 public:
  AttrsRef();
  AttrsRef(const Attrs& a) : p_(std::make_shared<Attrs>(a)) {}  // NOLINT: stands in for Attrs
  // A moved-from node still has attributes: moving copies the pointer.
  AttrsRef(const AttrsRef&) = default;
  AttrsRef(AttrsRef&& o) noexcept : p_(o.p_) {}
  AttrsRef& operator=(const AttrsRef&) = default;
  AttrsRef& operator=(AttrsRef&& o) noexcept {
    p_ = o.p_;
    return *this;
  }
  AttrsRef& operator=(const Attrs& a) {
    p_ = std::make_shared<Attrs>(a);
    return *this;
  }
  operator const Attrs&() const { return *p_; }  // NOLINT
  const Attrs& get() const { return *p_; }
  const Attrs* operator->() const { return p_.get(); }
  // For changing this node's attributes only: copies them first when they are shared. (The
  // objects are made non-const, so writing through this is defined.)
  Attrs& mut();

 private:
  std::shared_ptr<const Attrs> p_;
};

struct Node {
  OpId op;
  // The default dtype when recorded: an int operand and a Python float promote to it. A function
  // that sets it from Python state changes it between calls without failing the entry's guard.
  DType default_dtype = DType::Float32;
  DType autocast = kAutocastOff;  // likewise torch.autocast's dtype, which a with block may change
  // In-place ops write into the buffer of value `target`; the output aliases it.
  int target = -1;
  int values_before = 0;  // how many values existed when this node was recorded (for prefix copies)
  IdList inputs;          // value ids
  OutputIds outputs;      // value ids
  AttrsRef attrs;
  SourceStack where;
  SymAttrList sym_attrs;  // the ints of attrs that follow the symbols (dynamic graphs)
};

// A float constant that is an input of the graph (value_scalars): which node and field reads it,
// and where the number came from.
struct ScalarInput {
  int node = -1;
  uint8_t field = 0;  // 0: attrs.scalar, 1: scalar2, 2: scalar3
  InputKind kind = InputKind::External;
  // Not an input: a number baked into the graph (an int, a bool, arange's range), kept with its
  // name only so that its guard and a recompile can say which variable it is (never a literal).
  bool constant = false;
  // "w", "opt.param_groups[0]['lr']", "1 - beta1", "0.5" (Literal), interned; nullptr: unknown
  const std::string* name = nullptr;
  bool named() const { return name != nullptr; }
};

struct Graph {
  Chunked<Value> values;
  Chunked<Node> nodes;
  std::vector<int> inputs;   // value ids, in order of first use
  std::vector<int> outputs;  // value ids the rest of the program still sees
  Chunked<ScalarInput> scalar_inputs;
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
// "'w' (argument)", "the literal 0.5", "an unnamed float" (s null or unnamed): a float input's source.
std::string scalar_label(const ScalarInput* s);
// Checks SSA form, operand ranges and that each node's recorded outputs match re-inference.
// Returns an empty string when the graph is well formed, else what is wrong.
std::string verify_graph(const Graph& g);

// A key equal for graphs with the same structure: ops, attributes (rng state excluded: it is
// an input of the graph, not a constant), wiring, input and output metadata. A 16-byte digest.
std::string structure_key(const Graph& g);

}  // namespace dyn
