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
#include "core/ops/api.h"

namespace dyn {

namespace {
thread_local bool t_grad_enabled = true;

AutogradMeta& meta(const Tensor& t) {
  TensorImpl* p = t.impl();
  if (!p->autograd_) p->autograd_ = std::make_shared<AutogradMeta>();
  return *p->autograd_;
}

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
  return camel(op_name(op)) + "Backward0";
}

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool on) { t_grad_enabled = on; }

bool requires_grad(const Tensor& t) { return t.defined() && t.impl()->requires_grad_; }

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
  if (Capture* c = Capture::active()) c->note_grad_change(t, m.grad);
  m.grad = g;
}

std::shared_ptr<GradNode> grad_fn_of(const Tensor& t) {
  return t.impl()->autograd_ ? t.impl()->autograd_->grad_fn : nullptr;
}

bool is_leaf(const Tensor& t) { return !grad_fn_of(t); }

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

void check_inplace_grad(const Tensor& self, std::span<const Tensor> in) {
  if (requires_grad(self) && is_leaf(self))
    fail(ErrorKind::Runtime,
         "a leaf Variable that requires grad is being used in an in-place operation. Wrap the update in "
         "`with dyn.no_grad():` (as optimizers do)");
  bool any = requires_grad(self);
  for (const Tensor& t : in) any = any || requires_grad(t);
  if (any)
    fail(ErrorKind::NotImplemented,
         "in-place ops on tensors that take part in autograd are not supported by dyn yet; use the out-of-place op "
         "(y = x + 1 instead of x += 1), or wrap the update in `with dyn.no_grad():`");
}

namespace {
// Its version now (Note [versions] in capture.cpp): -1 when it has no memory to write.
int64_t version_now(const Tensor& t) {
  const TensorImpl* p = t.impl();
  if (p->lazy()) return p->capture_->version_of(t);
  return p->storage_ ? p->storage_->version : -1;
}

// Which inputs the derivative reads the values of. A Python-number operand changes that: x * 2's
// derivative is 2, it reads nothing of x (PyTorch's mul.Scalar saves nothing either).
uint32_t saved_inputs(OpId op, const Attrs& a, size_t num_inputs) {
  uint32_t mask = op_def(op).saved_inputs;
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

void check_version(const GradNode& n, const Tensor& t, int64_t saved, const char* what, size_t i) {
  if (!t.defined() || saved < 0) return;
  int64_t now = version_now(t);
  if (now != saved)
    fail(ErrorKind::Runtime,
         "one of the variables needed for gradient computation has been modified by an inplace operation: {} {} of "
         "{} is at version {}; expected version {} instead. Compute on a clone, or modify it after backward()",
         what, i, n.name(), now, saved);
}

std::shared_ptr<GradNode> accumulator_of(const Tensor& leaf) {
  AutogradMeta& m = meta(leaf);
  if (!m.accumulator) {
    m.accumulator = std::make_shared<GradNode>();
    m.accumulator->leaf = leaf.impl();
    m.accumulator->accumulates = true;
  }
  return m.accumulator;
}
}  // namespace

void record_grad(OpId op, std::span<const Tensor> in, const Attrs& a, std::span<const Tensor> out) {
  bool any = false;
  for (const Tensor& t : in) any = any || requires_grad(t);
  if (!any) return;
  const OpDef& d = op_def(op);
  if (!d.backward) return;  // outputs without a derivative (comparisons, indices) do not require grad
  auto node = std::make_shared<GradNode>();
  node->op = op;
  node->attrs = a;
  uint32_t saved = saved_inputs(op, a, in.size());
  for (const Tensor& t : in) {
    // Inputs are kept as they are: they never point back to this node (only outputs could, through
    // their grad_fn, which is why outputs are saved as detached aliases). The same handle also
    // keeps a traced backward reading the very graph value the forward read.
    node->inputs.push_back(t);
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
    if (!is_floating(o.dtype())) continue;  // integer outputs (argmax indices) carry no gradient
    node->outputs.push_back(detach(o));
    o.impl()->requires_grad_ = true;
    AutogradMeta& m = meta(o);
    m.grad_fn = node;
    m.output = static_cast<int>(i);
  }
  if (node->outputs.size() < out.size())  // keep output positions aligned for multi-output ops
    node->outputs.resize(out.size());
  if (d.saves_output && node->outputs[0].defined()) node->output_version = version_now(node->outputs[0]);
}

namespace {
// The tensor a leaf's .grad becomes: its own memory (not shared with another leaf's gradient or
// anything else), laid out like the leaf, as PyTorch does.
Tensor own_grad(const Tensor& g, const Tensor& leaf) {
  bool shared = g.impl()->refs_.load() > 2 || (g.storage() && g.storage()->use_count() > 1);
  bool same_layout = g.strides() == leaf.strides();
  if (!shared && (same_layout || leaf.is_contiguous())) return g;
  // Order dims like the leaf's memory (outermost first), copy, and permute back.
  int nd = leaf.ndim();
  Dims perm;
  for (int i = 0; i < nd; ++i) perm.push_back(i);
  std::stable_sort(perm.data(), perm.data() + nd,
                   [&](int64_t a, int64_t b) { return leaf.strides()[a] > leaf.strides()[b]; });
  Dims inv = Dims::filled(nd, 0);
  for (int i = 0; i < nd; ++i) inv[perm[i]] = i;
  if (nd == 0 || leaf.is_contiguous()) return ops::clone(g);
  return ops::permute(ops::clone(ops::permute(g, perm)), inv);
}
}  // namespace

void backward(const Tensor& root, const Tensor* gradient, bool retain_graph) {
  if (!requires_grad(root))
    fail(ErrorKind::Runtime, "element 0 of tensors does not require grad and does not have a grad_fn");
  NoGradScope no_grad;
  Tensor g0;
  if (gradient && gradient->defined()) {
    DYN_CHECK(gradient->shape() == root.shape(), ErrorKind::Runtime,
              "Mismatch in shape: grad_output[0] has a shape of {} and output[0] has a shape of {}.",
              dims_str(gradient->shape()), dims_str(root.shape()));
    g0 = ops::clone(*gradient);  // .grad must not alias the caller's tensor
  } else {
    DYN_CHECK(root.numel() == 1, ErrorKind::Runtime, "grad can be implicitly created only for scalar outputs");
    g0 = ops::full(root.shape(), Scalar::from_int(1), root.dtype());
  }
  std::shared_ptr<GradNode> start = is_leaf(root) ? accumulator_of(root) : grad_fn_of(root);
  int start_output = is_leaf(root) ? 0 : root.impl()->autograd_->output;

  // Dependencies: how many edges lead into each reachable node.
  std::unordered_map<GradNode*, int> deps;
  std::vector<GradNode*> stack = {start.get()};
  deps[start.get()] = 0;
  while (!stack.empty()) {
    GradNode* n = stack.back();
    stack.pop_back();
    for (const GradEdge& e : n->next) {
      if (!e.node) continue;
      auto [it, fresh] = deps.emplace(e.node.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(e.node.get());
    }
  }
  std::unordered_map<GradNode*, std::vector<Tensor>> grads;
  grads[start.get()].resize(std::max<size_t>(1, start->outputs.size()));
  grads[start.get()][start_output] = g0;
  std::vector<GradNode*> ready = {start.get()};
  while (!ready.empty()) {
    GradNode* n = ready.front();
    ready.erase(ready.begin());
    std::vector<Tensor> gout = std::move(grads[n]);
    grads.erase(n);
    if (n->accumulates) {
      const Tensor& g = gout.empty() ? Tensor() : gout[0];
      if (g.defined() && n->leaf) {  // a leaf that no longer exists needs no gradient
        Tensor leaf = Tensor::borrow(n->leaf);
        Tensor gg = g.dtype() == leaf.dtype() ? g : ops::to_dtype(g, leaf.dtype());
        const Tensor& old = grad_of(leaf);
        set_grad(leaf, old.defined() ? ops::binary(OpId::add, old, gg) : own_grad(gg, leaf));
      }
      continue;
    }
    if (n->released)
      fail(ErrorKind::Runtime,
           "Trying to backward through the graph a second time (or directly access saved tensors after they have "
           "already been freed). Specify retain_graph=True if you need to backward through the graph a second time.");
    for (size_t i = 0; i < n->inputs.size() && i < n->versions.size(); ++i)
      check_version(*n, n->inputs[i], n->versions[i], "input", i);
    if (!n->outputs.empty()) check_version(*n, n->outputs[0], n->output_version, "output", 0);
    std::vector<Tensor> gin(n->inputs.size());
    bool any = false;
    for (const Tensor& g : gout) any = any || g.defined();
    if (any) op_def(n->op).backward(*n, gout, &gin);
    for (size_t i = 0; i < n->next.size(); ++i) {
      const GradEdge& e = n->next[i];
      if (!e.node) continue;
      auto& slot = grads[e.node.get()];
      size_t width = e.node->accumulates ? 1 : std::max<size_t>(1, e.node->outputs.size());
      if (slot.size() < width) slot.resize(width);
      if (i < gin.size() && gin[i].defined()) {
        Tensor& acc = slot[e.output];
        acc = acc.defined() ? ops::binary(OpId::add, acc, gin[i]) : gin[i];
      }
      if (--deps[e.node.get()] == 0) ready.push_back(e.node.get());
    }
    if (!retain_graph) {
      n->inputs.assign(n->inputs.size(), Tensor());
      n->outputs.assign(n->outputs.size(), Tensor());
      n->released = true;
    }
  }
}

}  // namespace dyn
