// The graph IR: printing, verification and structural keys.
#include "core/ir/graph.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dyn {

// ---- compact parts (Note [compact graphs]) ----

const ValueExtra& Value::no_extra() {
  static const ValueExtra none;
  return none;
}

Value& Value::operator=(const Value& o) {
  if (this == &o) return *this;
  shape = o.shape, strides = o.strides, offset = o.offset, producer = o.producer;
  dtype = o.dtype, requires_grad = o.requires_grad, input_kind = o.input_kind, dynamic_dims = o.dynamic_dims;
  x_ = o.x_ ? std::make_unique<ValueExtra>(*o.x_) : nullptr;
  return *this;
}

IdList& IdList::operator=(const IdList& o) {
  if (this == &o) return *this;
  int* p = nullptr;  // allocated before anything is freed: a failed allocation leaves this intact
  if (o.on_heap()) {
    p = new int[std::bit_ceil(o.n_)];
    std::memcpy(p, o.heap(), o.n_ * sizeof(int));
  }
  if (on_heap()) delete[] heap();
  n_ = o.n_;
  if (p)
    set_heap(p);
  else
    std::memcpy(in_, o.in_, sizeof in_);
  return *this;
}

IdList& IdList::operator=(IdList&& o) noexcept {
  if (this == &o) return *this;
  if (on_heap()) delete[] heap();
  n_ = o.n_;
  std::memcpy(in_, o.in_, sizeof in_);
  o.n_ = 0;
  return *this;
}

void IdList::push_back(int x) {
  if (n_ == kInline || (n_ > kInline && std::has_single_bit(n_))) {  // full: twice the room
    int* p = new int[n_ * 2];
    std::memcpy(p, data(), n_ * sizeof(int));
    if (on_heap()) delete[] heap();
    set_heap(p);
  }
  ++n_;
  data()[n_ - 1] = x;
}

bool IdList::operator==(const IdList& o) const {
  return n_ == o.n_ && std::memcmp(data(), o.data(), n_ * sizeof(int)) == 0;
}

void OutputIds::push_back(int id) {
  if (n_ == 0) first_ = id;
  if (id != first_ + static_cast<int>(n_)) throw std::logic_error("a node's outputs are consecutive values");
  ++n_;
}

AttrsRef::AttrsRef() {
  static const std::shared_ptr<const Attrs> none = std::make_shared<Attrs>();
  p_ = none;
}

Attrs& AttrsRef::mut() {
  if (p_.use_count() != 1) p_ = std::make_shared<Attrs>(*p_);
  return const_cast<Attrs&>(*p_);  // this node's own copy now
}

int Graph::add_input(const Tensor& t, InputKind kind, std::string name) {
  Value v;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.strides = t.strides();
  v.offset = t.offset();
  v.requires_grad = t.impl()->requires_grad_;
  v.input_kind = kind;
  v.extra().input_name = std::move(name);
  v.extra().input = t;
  values.push_back(std::move(v));
  int id = static_cast<int>(values.size()) - 1;
  inputs.push_back(id);
  return id;
}

std::string meta_str(DType t, const Dims& shape) {
  static const char* kShort[] = {"b8", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"};
  std::string s = kShort[static_cast<int>(t)];
  s += "[";
  for (int i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* input_kind_name(InputKind k) {
  static constexpr const char* kNames[] = {"argument",
                                           "parameter",
                                           "made outside, unnamed",
                                           "from an earlier graph",
                                           "global",
                                           "closure",
                                           "attribute",
                                           "optimizer state",
                                           "local",
                                           "literal"};
  return kNames[static_cast<int>(k)];
}

const char* input_kind_key(InputKind k) {
  static constexpr const char* kKeys[] = {"argument", "parameter", "external",        "materialized", "global",
                                          "closure",  "attribute", "optimizer_state", "local",        "literal"};
  return kKeys[static_cast<int>(k)];
}

std::string input_label(const Graph& g, int value) {
  const Value& v = g.values[value];
  std::string name = v.input_name().empty() ? fmt::format("tensor %{}", value) : "tensor '" + v.input_name() + "'";
  return fmt::format("{} ({})", name, input_kind_name(v.input_kind));
}

std::string scalar_label(const ScalarInput* s) {
  return !s || !s->named()               ? std::string("an unnamed float")
         : s->kind == InputKind::Literal ? "the literal " + *s->name
                                         : fmt::format("'{}' ({})", *s->name, input_kind_name(s->kind));
}

namespace {

std::string operands(const Node& n) {
  std::string s;
  auto val = [](int v) { return "%" + std::to_string(v); };
  std::vector<std::string> parts;
  if (n.target >= 0) parts.push_back(val(n.target));
  bool lhs = n.attrs->side == ScalarSide::Lhs;
  if (lhs) parts.push_back(format_attrs(n.op, n.attrs));
  for (int i : n.inputs)
    if (i != n.target) parts.push_back(val(i));
  std::string a = lhs ? std::string() : format_attrs(n.op, n.attrs);
  if (!a.empty()) parts.push_back(a);
  // A dynamic graph's size arguments: the traced numbers above, and the forms they follow.
  if (!lhs && !n.sym_attrs.empty()) parts.push_back("{" + sym_attrs_str(n.op, n.sym_attrs.list()) + "}");
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

}  // namespace

std::string print_node(const Graph& g, const Node& n, bool verbose) {
  std::string lhs;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const Value& v = g.values[n.outputs[i]];
    lhs += (i ? ", " : "") + fmt::format("%{} : {}", n.outputs[i], value_meta(v));
  }
  std::string name(op_name(n.op));
  if (n.target >= 0) name += "_";
  std::string s = fmt::format("{} = {}({})", lhs, name, operands(n));
  SourceLoc top = n.where.top();
  if (top.known()) {
    std::string text = source_line(*top.file, top.line);
    s = fmt::format("{:<44}  # {}{}{}", s, top.str(), text.empty() ? "" : "  ", text);
  }
  if (verbose)
    for (size_t i = 1; i < n.where.frames().size(); ++i) {
      const SourceLoc& f = n.where.frames()[i];
      s += fmt::format("\n{:<44}  #   called from {} in {}", "", f.str(), f.function ? *f.function : "?");
    }
  return s;
}

std::string print_graph(const Graph& g, bool verbose) {
  std::string s;
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    std::string name = v.input_name().empty() ? std::string() : " '" + v.input_name() + "'";
    s += fmt::format("%{} : {} = input{}  ({})\n", id, value_meta(v), name, input_kind_name(v.input_kind));
  }
  // Float constants are read at each call: list them with the tensor inputs.
  for (const ScalarInput& si : g.scalar_inputs) {
    const Node& n = g.nodes[si.node];
    const Scalar* sc[] = {&n.attrs->scalar, &n.attrs->scalar2, &n.attrs->scalar3};
    if (!(value_scalars(n.op, n.attrs) >> si.field & 1) || !si.named() || si.kind == InputKind::Literal) continue;
    s += fmt::format("float input '{}'  ({}; read by %{} {}, {} when traced)\n", *si.name, input_kind_name(si.kind),
                     n.outputs[0], op_name(n.op), format_scalar(*sc[si.field]));
  }
  for (const Node& n : g.nodes) s += print_node(g, n, verbose) + "\n";
  s += "return (";
  for (size_t i = 0; i < g.outputs.size(); ++i) s += (i ? ", " : "") + fmt::format("%{}", g.outputs[i]);
  return s + ")\n";
}

std::string verify_graph(const Graph& g) {
  std::vector<bool> defined(g.values.size(), false);
  for (int id : g.inputs) {
    if (id < 0 || id >= static_cast<int>(g.values.size())) return fmt::format("input %{} out of range", id);
    defined[id] = true;
  }
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    const OpDef& d = op_def(n.op);
    int expected = d.num_inputs - (d.cls == OpClass::Binary && n.attrs->side != ScalarSide::None ? 1 : 0);
    if (d.num_inputs >= 0 && static_cast<int>(n.inputs.size()) != expected)
      return fmt::format("node {} ({}) has {} inputs, expected {}", k, d.name, n.inputs.size(), expected);
    for (int i : n.inputs)
      if (i < 0 || i >= static_cast<int>(defined.size()) || !defined[i])
        return fmt::format("node {} ({}) uses %{} before it is defined", k, d.name, i);
    if (n.target >= 0 && !defined[n.target]) return fmt::format("node {} writes undefined %{}", k, n.target);
    if (static_cast<int>(n.outputs.size()) != d.num_outputs)
      return fmt::format("node {} ({}) has {} outputs, expected {}", k, d.name, n.outputs.size(), d.num_outputs);
    for (int o : n.outputs) {
      if (o < 0 || o >= static_cast<int>(defined.size())) return fmt::format("node {} output out of range", k);
      if (defined[o]) return fmt::format("node {} ({}) redefines %{}", k, d.name, o);
      if (g.values[o].producer != static_cast<int>(k)) return fmt::format("%{} has the wrong producer", o);
      defined[o] = true;
    }
  }
  for (int o : g.outputs)
    if (o < 0 || o >= static_cast<int>(defined.size()) || !defined[o])
      return fmt::format("graph output %{} is not defined", o);
  return {};
}

namespace {
template <typename T>
void put(std::string& k, const T& v) {
  k.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
// Field by field: the struct's padding bytes are not part of the key.
void put_sym(std::string& k, const SymExpr& e) {
  put(k, e.coef);
  put(k, e.add);
  put(k, e.a);
  put(k, e.b);
}
void put_dims(std::string& k, const Dims& d) {
  put(k, static_cast<int8_t>(d.size()));
  for (int64_t x : d) put(k, x);
}
}  // namespace

std::string structure_key(const Graph& g) {
  // The bytes go through XXH3-128 a few kilobytes at a time: a long trace's key is 16 bytes held
  // by the plan cache, not a copy of its structure (about 130 bytes a node). Plans are shared only
  // between graphs whose keys are equal; two structures meeting one digest is a 2^-128 event.
  XXH3_state_t* st = XXH3_createState();
  if (!st) throw std::bad_alloc();
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> owner(st, XXH3_freeState);
  XXH3_128bits_reset(st);
  std::string k;
  k.reserve(8192);
  auto flush = [&](bool always) {
    if (!always && k.size() < 4096) return;
    XXH3_128bits_update(st, k.data(), k.size());
    k.clear();
  };
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    put(k, v.dtype);
    put_dims(k, v.shape);
    put_dims(k, v.strides);
    put(k, v.offset);
    put(k, v.requires_grad);
    put(k, v.sym_strides().size());
    for (const SymExpr& e : v.sym_strides()) put_sym(k, e);
  }
  // A dynamic graph's plan reads its sizes from the call: it is not a static graph's.
  if (g.dynamic) {
    k.push_back('D');
    for (const Value& v : g.values) {
      put(k, v.sym_shape().size());
      for (const SymExpr& e : v.sym_shape()) put_sym(k, e);
      flush(false);
    }
  }
  for (const Node& n : g.nodes) {
    put(k, n.op);
    put(k, n.target);
    for (int i : n.inputs) put(k, i);
    put_attrs(n.attrs, false, &k);
    for (const SymAttr& sa : n.sym_attrs) {
      put(k, sa.slot);
      put_sym(k, sa.e);
    }
    // What each node made: its dtype can depend on the default dtype at record time (int / int),
    // and a plan's fused loops are typed.
    for (int o : n.outputs) put(k, g.values[o].dtype);
    k.push_back(';');
    flush(false);
  }
  for (int o : g.outputs) put(k, o);
  flush(true);
  XXH128_hash_t h = XXH3_128bits_digest(st);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

}  // namespace dyn
