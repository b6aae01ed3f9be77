// Reverse-mode autograd.
//
// Note [autograd]
// When grad mode is on and an op's input requires grad, dispatch() records a GradNode: the op,
// its attributes, detached aliases of its inputs and outputs (values only, so no reference
// cycle through an output's own grad_fn), and for each input the edge its gradient flows to.
// backward() walks the nodes reachable from the root in dependency order and calls each op's
// derivative, which issues ordinary ops under no_grad. Inside a compile region those ops are
// recorded like any other, so forward, backward and the optimizer's update are one trace; the
// saved aliases of lazy tensors are lazy too and stay live until the segment runs.
#include "core/autograd/autograd.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "core/capture/capture.h"
#include "core/error.h"
#include "core/ir/plan.h"

namespace dyn {

namespace {
AutogradMeta& meta(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (!p->autograd_) p->autograd_ = std::make_shared<AutogradMeta>();
  return *p->autograd_;
}

void link_node(const std::shared_ptr<GradNode>& node, std::span<const Tensor> in, uint32_t saved,
               std::span<const Tensor> out);

// The nodes that kept a tensor from outside a compile region as itself (link_node says why): if an
// in-place write later gives that tensor history, they would hold it in a cycle; release_holders
// swaps them for aliases then. Expired entries are dropped as the list grows.
thread_local std::vector<std::weak_ptr<GradNode>> t_outside_holders;

void note_outside_holder(const std::shared_ptr<GradNode>& node) {
  if (t_outside_holders.size() >= 64 && (t_outside_holders.size() & (t_outside_holders.size() - 1)) == 0)
    std::erase_if(t_outside_holders, [](const std::weak_ptr<GradNode>& w) { return w.expired(); });
  t_outside_holders.push_back(node);
}
int64_t version_now(const Tensor& t);

std::string camel(std::string_view s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}
}  // namespace

AutogradMeta::~AutogradMeta() {
  if (accumulator) accumulator->leaf = nullptr;
}

std::string GradNode::name() const {
  if (accumulates) return "AccumulateGrad";
  if (!custom_name.empty()) return custom_name;  // custom is freed with the graph, the name stays
  // PyTorch's names: clamp with one number bound is clamp_min/clamp_max; the overloads are numbered.
  if (op == OpId::clamp && inputs.size() == 1 && attrs.has_lo != attrs.has_hi)
    return attrs.has_lo ? "ClampMinBackward0" : "ClampMaxBackward0";
  if ((op == OpId::clamp && inputs.size() == 1) || (op == OpId::pow && inputs.size() == 2))
    return camel(op_name(op)) + "Backward1";
  return camel(op_name(op)) + "Backward0";
}

namespace {
bool stale_view(const TensorImpl* p) {
  const TensorImpl* b = p->view_base_;
  if (!b || !b->autograd_ || b->autograd_->rebases == 0) return false;
  return (p->autograd_ ? p->autograd_->seen_rebases : 0) != b->autograd_->rebases;
}
}  // namespace

bool requires_grad_of_view(const Tensor& t) {
  if (stale_view(t.impl())) refresh_view_history(t);
  return t.impl()->requires_grad_;
}

void note_view_made(TensorImpl* view, const TensorImpl* base) {
  if (base->autograd_ && base->autograd_->rebases) {
    if (!view->autograd_) view->autograd_ = std::make_shared<AutogradMeta>();
    view->autograd_->seen_rebases = base->autograd_->rebases;
  }
}

const Tensor& grad_of(const Tensor& t) {
  static const Tensor none;
  return t.impl()->autograd_ ? t.impl()->autograd_->grad : none;
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    DYN_CHECK(g.shape() == t.shape(), ErrorKind::Runtime,
              "assigned grad has data of a different size: expected {}, got {}", dims_str(t.shape()),
              dims_str(g.shape()));
    DYN_CHECK(g.dtype() == t.dtype(), ErrorKind::Runtime,
              "assigned grad has data of a different type: expected {}, got {}", dtype_name(t.dtype()),
              dtype_name(g.dtype()));
  }
  AutogradMeta& m = meta(t);
  if (Capture* c = Capture::active()) {
    // A .grad that backward() set after a failing op never got its value: put back the one
    // eager mode would have left (backward never ran there).
    c->note_grad_change(t.impl(), m.grad, [leaf = t, old = m.grad] {
      const Tensor& now = grad_of(leaf);
      if (now.defined() && now.impl()->poisoned()) set_grad(leaf, old);
    });
  }
  m.grad = g;
}

std::shared_ptr<GradNode> grad_fn_of(const Tensor& t) {
  if (stale_view(t.impl())) refresh_view_history(t);
  return t.impl()->autograd_ ? t.impl()->autograd_->grad_fn : nullptr;
}

bool is_leaf(const Tensor& t) { return !grad_fn_of(t); }

namespace {
// The node and output a tensor's gradient arrives at: its grad_fn's, or a leaf's accumulator.
std::pair<std::shared_ptr<GradNode>, int> gradient_slot(const Tensor& t) {
  if (auto fn = grad_fn_of(t)) return {fn, t.impl()->autograd_->output};
  return {accumulator_of(t), 0};
}
int64_t next_hook_id = 0;
}  // namespace

int64_t add_grad_hook(const Tensor& t, std::function<Tensor(const Tensor&)> fn, std::string name) {
  DYN_CHECK(requires_grad(t), ErrorKind::Runtime, "cannot register a hook on a tensor that doesn't require gradient");
  auto [node, output] = gradient_slot(t);
  int64_t id = ++next_hook_id;
  node->hooks.push_back(GradNode::Hook{output, id, std::move(fn), std::move(name)});
  return id;
}

void remove_grad_hook(const Tensor& t, int64_t id) {
  if (!requires_grad(t)) return;
  auto [node, output] = gradient_slot(t);
  auto& h = node->hooks;
  h.erase(std::remove_if(h.begin(), h.end(), [&](const GradNode::Hook& x) { return x.id == id; }), h.end());
}

std::vector<int64_t> grad_hook_ids(const Tensor& t) {
  std::vector<int64_t> out;
  if (!requires_grad(t)) return out;
  auto fn = grad_fn_of(t);
  std::shared_ptr<GradNode> node = fn ? fn : (t.impl()->autograd_ ? t.impl()->autograd_->accumulator : nullptr);
  int output = fn ? t.impl()->autograd_->output : 0;
  if (node)
    for (const GradNode::Hook& h : node->hooks)
      if (h.output == output) out.push_back(h.id);
  return out;
}

void retain_grad(const Tensor& t) {
  DYN_CHECK(requires_grad(t), ErrorKind::Runtime, "can't retain_grad on Tensor that has requires_grad=False");
  auto fn = grad_fn_of(t);
  if (!fn || retains_grad(t)) return;  // a leaf keeps its gradient anyway
  fn->retained.emplace_back(t.impl()->autograd_->output, t.impl()->autograd_);
}

bool retains_grad(const Tensor& t) {
  auto fn = grad_fn_of(t);
  if (!fn) return false;
  for (const auto& [o, w] : fn->retained)
    if (w.lock() == t.impl()->autograd_) return true;
  return false;
}

std::shared_ptr<GradNode> released_copy_of_history(const Tensor& t) {
  std::shared_ptr<GradNode> fn = grad_fn_of(t);
  if (!fn || !fn->released || fn->accumulates) return nullptr;
  auto copy = std::make_shared<GradNode>();
  copy->op = fn->op;
  copy->custom_name = fn->custom_name;
  copy->released = true;
  return copy;
}

void attach_released_history(const Tensor& t, const std::shared_ptr<GradNode>& node) {
  t.impl()->requires_grad_ = true;
  AutogradMeta& m = meta(t);
  m.grad_fn = node;
  m.output = 0;
}

void set_requires_grad(const Tensor& t, bool on) {
  if (!is_leaf(t) && on) return;  // it already requires grad
  if (!is_leaf(t))
    fail(ErrorKind::Runtime,
         "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
         "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  if (on && !is_floating(t.dtype()))
    fail(ErrorKind::Runtime, "only Tensors of floating point dtype can require gradients");
  t.impl()->requires_grad_ = on;
}

Tensor detach(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (p->lazy()) return p->capture_->alias_lazy(t);
  return t.as_strided(t.shape(), t.strides(), t.offset());
}

bool inplace_needs_history(const Tensor& self, std::span<const Tensor> in) {
  if (!grad_enabled()) return false;
  if (requires_grad(self)) return true;
  if (const TensorImpl* b = self.impl()->view_base_; b && b->requires_grad_) return true;
  for (const Tensor& t : in)
    if (requires_grad(t)) return true;
  return false;
}

void take_history(const Tensor& self, const Tensor& r) {
  TensorImpl* p = self.impl();
  if (!requires_grad(r)) {
    p->requires_grad_ = false;
    if (p->autograd_) {
      p->autograd_->grad_fn = nullptr;
      ++p->autograd_->rebases;
    }
    return;
  }
  p->requires_grad_ = true;
  AutogradMeta& m = meta(self);
  ++m.rebases;  // views of self made before see its new history
  m.grad_fn = grad_fn_of(r);
  m.output = r.impl()->autograd_ ? r.impl()->autograd_->output : 0;
  // A derivative that reads the op's output (relu_, exp_) reads self, as PyTorch's does: a later
  // write into self before backward() is then the error it is there.
  if (GradNode* n = m.grad_fn.get(); n && n->output_version >= 0 && m.output == 0) {
    n->outputs[0] = detach(self);
    n->output_version = version_now(self);
  }
}

void set_custom_history(const Tensor& self, std::span<const Tensor> in, std::string name, CustomBackward backward) {
  auto node = std::make_shared<GradNode>();
  node->op = OpId::cast;
  node->custom = std::move(backward);
  node->custom_name = std::move(name);
  // link_node takes the inputs' edges before it sets self's history: self may be one of them.
  Tensor out[1] = {self};
  link_node(node, in, 0, out);
}

Tensor input_with_history(const GradNode& n, size_t i) {
  const GradEdge& e = n.next[i];
  if (e.node && e.node->accumulates)  // a leaf: the leaf itself (an alias's meta would own its accumulator)
    return e.node->leaf ? Tensor::borrow(e.node->leaf) : detach(n.inputs[i]);
  Tensor a = detach(n.inputs[i]);
  if (!e.node) return a;
  a.impl()->requires_grad_ = true;
  AutogradMeta& m = meta(a);
  m.grad_fn = e.node;
  m.output = e.output;
  return a;
}

Tensor output_with_history(const std::shared_ptr<GradNode>& node, int k) {
  Tensor t = detach(node->outputs[k]);
  t.impl()->requires_grad_ = true;
  AutogradMeta& m = meta(t);
  m.grad_fn = node;
  m.output = k;
  return t;
}

int64_t tensor_version(const Tensor& t) { return std::max<int64_t>(version_now(t), 0); }

void release_holders(const TensorImpl* root) {
  for (const auto& w : t_outside_holders)
    if (auto n = w.lock())
      for (Tensor& in : n->inputs)
        // the tensor itself or a view of it (a view holds its base); the same memory and
        // versions, only the identity goes
        if (in.defined() && (in.impl() == root || in.impl()->view_base_ == root)) in = detach(in);
}

bool same_buffer(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl()) return true;
  if (Capture* c = Capture::active(); c && (a.lazy() || b.lazy())) return c->same_buffer(a, b);
  return a.storage() && a.storage() == b.storage();
}

namespace {
// Its version now (Note [versions] in capture.cpp): -1 when it has no memory to write.
int64_t version_now(const Tensor& t) {
  const TensorImpl* p = t.impl();
  if (p->lazy()) return p->capture_->version_of(t);
  return p->storage_ ? p->storage_->version : -1;
}

}  // namespace

// Which inputs the derivative reads the values of. A Python-number operand changes that: x * 2's
// derivative is 2, it reads nothing of x (PyTorch's mul.Scalar saves nothing either).
uint32_t inputs_read_by_derivative(OpId op, const Attrs& a, size_t num_inputs) {
  uint32_t mask = derivative_of(op).saved_inputs;
  if (op_def(op).cls != OpClass::Binary || num_inputs != 1) return mask;
  bool lhs = a.side == ScalarSide::Lhs;  // 2 / x reads x; x / 2 does not
  switch (op) {
    case OpId::mul:
      return 0;
    case OpId::div:
    case OpId::remainder:
      return lhs ? 1u : 0u;
    default:
      return mask & 1u;
  }
}

namespace {

// PyTorch's words for a saved value modified in place: the tensor, and which op's output it is.
void check_version(const GradNode& n, const Tensor& t, int64_t saved, int input) {
  if (!t.defined() || saved < 0) return;
  int64_t now = version_now(t);
  if (now == saved) return;
  std::string maker;
  int k = 0;
  if (input < 0) {
    maker = n.name();
  } else if (const Storage* st = t.storage(); st && st->last_history_op >= 0) {
    // PyTorch names the saved tensor's grad_fn now: the in-place write that changed it
    auto op = static_cast<OpId>(st->last_history_op);
    GradNode named;
    named.op = op;
    maker = op == OpId::cast ? "CopyBackwards" : op == OpId::full ? "FillBackward" : named.name();
  } else if (const GradEdge& e = n.next[input]; e.node && !e.node->accumulates) {
    maker = e.node->name();  // (the saved input is an alias: its maker is its edge's node)
    k = e.output;
  }
  if (size_t b = maker.rfind("Backward"); b != std::string::npos && b > 0) maker.resize(b);
  std::string which = maker.empty() ? "" : fmt::format(", which is output {} of {},", k, maker);
  fail(ErrorKind::Runtime,
       "one of the variables needed for gradient computation has been modified by an inplace operation: "
       "[torch.{}Tensor {}]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find "
       "the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
       "check_nan=False). Or compute on a clone, or modify the tensor after backward().",
       legacy_dtype_name(t.dtype()), dims_str(t.shape()), which, now, saved);
}

}  // namespace

std::shared_ptr<GradNode> accumulator_of(const Tensor& leaf) {
  AutogradMeta& m = meta(leaf);
  if (!m.accumulator) {
    m.accumulator = std::make_shared<GradNode>();
    m.accumulator->leaf = leaf.impl();
    m.accumulator->accumulates = true;
  }
  return m.accumulator;
}

void check_saved_versions(const GradNode& n) {
  for (size_t i = 0; i < n.inputs.size() && i < n.versions.size(); ++i)
    check_version(n, n.inputs[i], n.versions[i], static_cast<int>(i));
  if (!n.outputs.empty()) check_version(n, n.outputs[0], n.output_version, -1);
}

namespace {

// The edges from a new node to where its inputs' gradients go, and its outputs' grad_fn.
void link_node(const std::shared_ptr<GradNode>& node, std::span<const Tensor> in, uint32_t saved,
               std::span<const Tensor> out) {
  for (const Tensor& t : in) {
    // An input is kept as another handle to its values, never as the tensor itself: an in-place
    // write may later give the tensor a history that leads back to this node (x += f(x),
    // out[:, t] = h with h made from out), and the two would hold each other. The alias reads the
    // same memory (and versions), or in a compile region the same graph value; its history, which
    // only create_graph needs, is the edge below (input_with_history). (A tensor from outside a
    // compile region is kept as itself: the capture knows its inputs by identity, by which it names
    // them and fetches them on a lifted call.)
    bool outside = !t.lazy() && Capture::active();
    node->inputs.push_back(outside ? t : detach(t));
    if (outside) note_outside_holder(node);
    bool reads = node->versions.size() < 32 && (saved >> node->versions.size() & 1u);
    node->versions.push_back(reads ? version_now(t) : -1);
    GradEdge e;
    if (requires_grad(t)) {
      auto fn = grad_fn_of(t);
      if (fn) {
        e.node = fn;
        e.output = t.impl()->autograd_->output;
      } else {
        e.node = accumulator_of(t);
      }
    }
    node->next.push_back(std::move(e));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& o = out[i];
    node->outputs.push_back(detach(o));     // integer outputs too: sort's derivative reads its indices
    if (!is_floating(o.dtype())) continue;  // they carry no gradient
    o.impl()->requires_grad_ = true;
    AutogradMeta& m = meta(o);
    m.grad_fn = node;
    m.output = static_cast<int>(i);
  }
}

}  // namespace

bool record_grad(OpId op, std::span<const Tensor> in, const Attrs& a, std::span<const Tensor> out) {
  bool any = false;
  for (const Tensor& t : in) any = any || requires_grad(t);
  if (!any) return false;
  const Derivative& d = derivative_of(op);
  if (!d.fn) return false;  // outputs without a derivative (comparisons, indices) do not require grad
  auto node = std::make_shared<GradNode>();
  node->op = op;
  node->attrs = a;
  uint32_t saved = inputs_read_by_derivative(op, a, in.size());
  if (in.size() == 2 && (op == OpId::mul || op == OpId::matmul || op == OpId::div)) {
    // One operand's values serve only the other's gradient (x * m: m for x's, x for m's): with the
    // other not requiring grad it is not saved, as PyTorch saves it, so writing it after is fine.
    if (!requires_grad(in[1])) saved &= ~1u;
    if (!requires_grad(in[0]) && op != OpId::div) saved &= ~2u;
  }
  link_node(node, in, saved, out);
  if (d.saves_output && node->outputs[0].defined()) node->output_version = version_now(node->outputs[0]);
  return true;
}

void record_lifted_history(const Graph& g, std::span<const std::pair<int, uint32_t>> nodes, std::span<Tensor> values,
                           const std::vector<NodePatch>* patches) {
  std::vector<Tensor> in, out;
  for (auto [k, mask] : nodes) {
    const Node& n = g.nodes[k];
    in.clear();
    out.clear();
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Tensor& t = values[n.inputs[i]];
      bool wanted = i < 32 && (mask >> i & 1u);
      if (wanted && !requires_grad(t)) set_requires_grad(t, true);  // a leaf the call made
      in.push_back(!wanted && requires_grad(t) ? detach(t) : t);
    }
    for (int v : n.outputs) out.push_back(values[v]);
    if (const NodePatch* p = find_patch(patches, k)) {
      Attrs a = n.attrs.get();
      p->apply(&a);
      record_grad(n.op, in, a, out);
    } else {
      record_grad(n.op, in, n.attrs.get(), out);
    }
  }
}

bool record_custom_grad(std::span<const Tensor> in, std::span<const Tensor> out, std::string name,
                        CustomBackward backward) {
  bool any = false;
  for (const Tensor& t : in) any = any || requires_grad(t);
  if (!any || !grad_enabled()) return false;
  for (const Tensor& o : out)
    DYN_CHECK(!o.impl()->autograd_ || !o.impl()->autograd_->grad_fn, ErrorKind::Runtime,
              "{}: an output of forward() already has a grad_fn; compute outputs from the inputs inside forward()",
              name);
  auto node = std::make_shared<GradNode>();
  node->op = OpId::cast;
  node->custom = std::move(backward);
  node->custom_name = std::move(name);
  link_node(node, in, 0, out);
  return true;
}

}  // namespace dyn
