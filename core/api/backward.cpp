// backward(): walks the grad nodes autograd recorded and runs each op's derivative. The
// derivatives issue ordinary ops through dispatch, so a backward inside a compile region is
// traced like the forward (Note [autograd] in core/autograd/autograd.cpp).
#include <algorithm>
#include <unordered_map>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/error.h"

namespace dyn {

namespace {
// The tensor a leaf's .grad becomes: its own memory (not shared with another leaf's gradient or
// anything else), laid out like the leaf, as PyTorch does. g is the caller's only handle. A lazy
// gradient (in a compile region) has no storage whose users could be counted, so a view made of
// its value elsewhere would go unseen: it is always copied.
Tensor own_grad(const Tensor& g, const Tensor& leaf) {
  bool shared = g.impl()->refs_.load() > 1 || g.impl()->lazy() || (g.storage() && g.storage()->use_count() > 1);
  // (a gradient can arrive as a broadcast view: sum's and mean's are expanded, not copied)
  if (!shared && g.strides() == leaf.strides()) return g;
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

void backward(const Tensor& root, const Tensor* gradient, bool retain_graph, const std::vector<Tensor>* inputs,
              bool create_graph) {
  if (!requires_grad(root))
    fail(ErrorKind::Runtime, "element 0 of tensors does not require grad and does not have a grad_fn");
  // backward(inputs=...): leaves outside the list keep their .grad; a non-leaf in it gets its
  // gradient as retain_grad gives it, for this call only.
  std::vector<const TensorImpl*> only;
  std::vector<Tensor> retained_here;
  if (inputs) {
    DYN_CHECK(!inputs->empty(), ErrorKind::Runtime, "`inputs` argument to `backward()` cannot be empty.");
    for (const Tensor& t : *inputs) {
      if (is_leaf(t)) {
        DYN_CHECK(requires_grad(t), ErrorKind::Runtime, "can't retain_grad on Tensor that has requires_grad=False");
        only.push_back(t.impl());
      } else if (!retains_grad(t)) {
        retain_grad(t);
        retained_here.push_back(t);
      }
    }
  }
  struct Unretain {
    std::vector<Tensor>& ts;
    ~Unretain() {
      for (const Tensor& t : ts) {
        auto& r = grad_fn_of(t)->retained;
        r.erase(
            std::remove_if(r.begin(), r.end(), [&](const auto& e) { return e.second.lock() == t.impl()->autograd_; }),
            r.end());
      }
    }
  } unretain{retained_here};
  // The derivatives run with grad mode off, or on for create_graph: then they record history.
  GradModeScope mode(create_graph);
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
  std::unordered_map<GradNode*, std::shared_ptr<GradNode>> owners;  // create_graph: each node's owner
  if (create_graph) owners[start.get()] = start;
  while (!stack.empty()) {
    GradNode* n = stack.back();
    stack.pop_back();
    for (const GradEdge& e : n->next) {
      if (!e.node) continue;
      auto [it, fresh] = deps.emplace(e.node.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(e.node.get());
      if (fresh && create_graph) owners[e.node.get()] = e.node;
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
    // Hooks see each output's gradient first (a leaf's, before it accumulates), then a retaining
    // non-leaf keeps it.
    for (size_t k = 0; k < n->hooks.size(); ++k) {
      GradNode::Hook h = n->hooks[k];  // a copy: the hook may register or remove hooks
      if (h.output < 0 || h.output >= static_cast<int>(gout.size()) || !gout[h.output].defined()) continue;
      Tensor r = h.fn(gout[h.output]);
      if (!r.defined()) continue;
      DYN_CHECK(r.shape() == gout[h.output].shape(), ErrorKind::Runtime,
                "hook '{}' has changed the size of value (from {} to {})", h.name, dims_str(gout[h.output].shape()),
                dims_str(r.shape()));
      gout[h.output] = r.dtype() == gout[h.output].dtype() ? r : ops::to_dtype(r, gout[h.output].dtype());
    }
    for (const auto& [o, weak] : n->retained) {
      auto m = weak.lock();
      if (!m || o >= static_cast<int>(gout.size()) || !gout[o].defined()) continue;
      Tensor g = ops::clone(gout[o]);
      m->grad = m->grad.defined() ? ops::binary(OpId::add, m->grad, g) : g;
    }
    if (n->accumulates) {
      // Moved, not copied: own_grad counts the handles to g to know whether it may keep it (a copy
      // here made every gradient look shared, so each was cloned).
      Tensor g = gout.empty() ? Tensor() : std::move(gout[0]);
      gout.clear();
      bool wanted = !inputs || std::find(only.begin(), only.end(), n->leaf) != only.end();
      if (g.defined() && n->leaf && wanted) {  // a leaf that no longer exists needs no gradient
        Tensor leaf = Tensor::borrow(n->leaf);
        Tensor gg = g.dtype() == leaf.dtype() ? std::move(g) : ops::to_dtype(g, leaf.dtype());
        const Tensor& old = grad_of(leaf);
        set_grad(leaf, old.defined() ? ops::binary(OpId::add, old, gg) : own_grad(gg, leaf));
      }
      continue;
    }
    if (n->released)
      fail(ErrorKind::Runtime,
           "Trying to backward through the graph a second time (or directly access saved tensors after they have "
           "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
           "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
           "you need to access saved tensors after calling backward.");
    check_saved_versions(*n);
    std::vector<Tensor> gin(n->inputs.size());
    bool any = false;
    for (const Tensor& g : gout) any = any || g.defined();
    if (any && n->custom)
      n->custom(gout, &gin);
    else if (any) {
      DerivativeScope deriving(n->op);
      // A saved output is kept without history (it would own its own node); a derivative that
      // reads it (exp's g * y) must see it with its history for the gradient to be differentiated.
      // Saved inputs are kept without history too (autograd.cpp's link_node says why): they get
      // the history they had when the op ran.
      Tensor plain;
      std::vector<Tensor> plain_inputs;
      if (create_graph) {
        if (derivative_of(n->op).saves_output && !n->outputs.empty() && n->outputs[0].defined()) {
          plain = n->outputs[0];
          n->outputs[0] = output_with_history(owners[n], 0);
        }
        plain_inputs = n->inputs;
        for (size_t i = 0; i < n->inputs.size() && i < n->next.size(); ++i)
          if (n->inputs[i].defined()) n->inputs[i] = input_with_history(*n, i);
      }
      struct Restore {
        GradNode* n;
        Tensor& plain;
        std::vector<Tensor>& inputs;
        ~Restore() {
          if (plain.defined()) n->outputs[0] = plain;
          if (!inputs.empty()) n->inputs = std::move(inputs);
        }
      } restore{n, plain, plain_inputs};
      derivative_of(n->op).fn(*n, gout, &gin);
    }
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
      // A custom Function's backward is a Python closure that may hold what forward saved: free it
      // with the rest, so that nothing it holds outlives the graph.
      n->custom = nullptr;
      n->released = true;
    }
  }
}

}  // namespace dyn
