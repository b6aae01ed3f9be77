// Reverse-mode autograd, the recording half: grad nodes recorded as ops run (dispatch calls
// record_grad). The other half, backward() and the derivatives, issues ordinary ops and so lives
// above dispatch, in core/api/. See Note [autograd].
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/grad_mode.h"
#include "core/ops/registry.h"

namespace dyn {

struct GradNode;
struct Graph;
using CustomBackward = std::function<void(std::span<const Tensor> grad_out, std::vector<Tensor>* grad_in)>;
struct NodePatch;

// Where the gradient of one input of a node goes: another node's output, or a leaf's .grad.
struct GradEdge {
  std::shared_ptr<GradNode> node;
  int output = 0;
};

// The backward of one op call: what it needs to compute its inputs' gradients.
struct GradNode {
  OpId op;
  Attrs attrs;
  std::vector<Tensor> inputs;  // the op's inputs (they never point back to this node)
  // The versions of the inputs the derivative reads (OpDef::saved_inputs) when the op ran; -1 for
  // inputs it does not read, which may change before backward() as in PyTorch.
  std::vector<int64_t> versions;
  int64_t output_version = -1;  // the same for output 0, when the derivative reads it (exp, tanh)
  std::vector<Tensor> outputs;  // detached aliases of its outputs
  std::vector<GradEdge> next;   // per input; node == nullptr when that input needs no gradient
  // AccumulateGrad: the leaf whose .grad it fills. Not owned (the leaf owns this node through its
  // AutogradMeta; owning it back would leak every leaf): cleared when the leaf dies.
  TensorImpl* leaf = nullptr;
  bool accumulates = false;
  bool released = false;  // saved values freed by a backward without retain_graph
  // Tensor hooks (register_hook), per output: each sees the gradient of that output before the
  // node uses it and may replace it (a leaf's run before its .grad accumulates); and non-leaf
  // tensors whose .grad keeps the gradient (retain_grad), held weakly: a dead one is skipped.
  struct Hook {
    int output;
    int64_t id;
    std::function<Tensor(const Tensor&)> fn;  // an undefined result keeps the gradient
    std::string name;                         // for errors: the hook's __name__
  };
  std::vector<Hook> hooks;
  std::vector<std::pair<int, std::weak_ptr<struct AutogradMeta>>> retained;
  // A derivative written by the user (torch.autograd.Function): used instead of the op's.
  std::function<void(std::span<const Tensor> grad_out, std::vector<Tensor>* grad_in)> custom;
  std::string custom_name;
  std::string name() const;  // "MulBackward0", "AccumulateGrad"
};

// A tensor's autograd state (attached to its TensorImpl).
struct AutogradMeta {
  ~AutogradMeta();
  Tensor grad;
  std::shared_ptr<GradNode> grad_fn;
  int output = 0;                         // which output of grad_fn this tensor is
  std::shared_ptr<GradNode> accumulator;  // leaves: their AccumulateGrad node, made once
  // Note [in-place history]: how many times an in-place op gave this tensor new history (a
  // tensor others view), and for a view, that count of its base when its history was made: when
  // they differ, the view's history is made anew from the base's.
  int64_t rebases = 0;
  int64_t seen_rebases = 0;
};

// (Inline: it is asked of every operand of every op. A view whose base took new history since its
// own was made gets its history anew first: Note [in-place history].)
bool requires_grad_of_view(const Tensor& t);
inline bool requires_grad(const Tensor& t) {
  if (!t.defined()) return false;
  const TensorImpl* p = t.impl();
  if (p->view_base_ && p->view_base_->autograd_) return requires_grad_of_view(t);
  return p->requires_grad_;
}
const Tensor& grad_of(const Tensor& t);  // undefined Tensor if none
void set_grad(const Tensor& t, const Tensor& g);
std::shared_ptr<GradNode> grad_fn_of(const Tensor& t);
bool is_leaf(const Tensor& t);
void set_requires_grad(const Tensor& t, bool on);  // user error on a non-leaf or a non-float tensor

// Called by dispatch after an op ran (or was recorded): links outputs to a new grad node when
// grad mode is on and an input requires grad.
// True when it made a node (an input requires grad and the op has a derivative).
bool record_grad(OpId op, std::span<const Tensor> in, const Attrs& a, std::span<const Tensor> out);
// Tier 2: the history the body's ops would have recorded, for a lifted call's values (by graph
// value id): record_grad for each of `nodes` (those that recorded one when the entry was
// analyzed, with which inputs required grad then), in order, with this call's numbers (patches).
// An input that did not require grad then is given as a detached alias (it was one); one that
// did, made in the call without history, is a leaf requiring grad again (ones(requires_grad=True)).
void record_lifted_history(const Graph& g, std::span<const std::pair<int, uint32_t>> nodes, std::span<Tensor> values,
                           const std::vector<NodePatch>* patches);
// Links outputs (computed without recording) to one node whose derivative is `backward`
// (torch.autograd.Function). Returns false when no input requires grad or grad mode is off.
bool record_custom_grad(std::span<const Tensor> in, std::span<const Tensor> out, std::string name,
                        CustomBackward backward);
// In-place ops and autograd (Note [in-place history] in core/api/inplace.cpp).
// True when an in-place op must record history: grad mode is on and self or an input requires grad.
bool inplace_needs_history(const Tensor& self, std::span<const Tensor> in);
// The in-place op with history: computed out of place with its node, written into self, and
// self (and the tensor self is a view of, if any) takes the new history.
void inplace_with_history(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);
// The pieces it is made of. self takes r's history (grad_fn and output).
void take_history(const Tensor& self, const Tensor& r);
// A view whose base took new history since the view's was made: its history becomes a view of
// the base's (AsStridedBackward0), as PyTorch regenerates it.
void refresh_view_history(const Tensor& view);
// A tensor made a view (dispatch): it starts with its base's history as it is now.
void note_view_made(TensorImpl* view, const TensorImpl* base);
// self's history becomes one node over `in` (linked as they are now, self among them or not)
// whose derivative is `backward`.
void set_custom_history(const Tensor& self, std::span<const Tensor> in, std::string name, CustomBackward backward);
// The bits of the inputs whose values the op's derivative reads (a Python-number operand counts).
uint32_t inputs_read_by_derivative(OpId op, const Attrs& a, size_t num_inputs);
// A tensor (a root, not a view) is about to take new history from an in-place write: nodes that
// kept it or a view of it as an input (a tensor from outside a compile region) keep an alias
// instead, so that none holds it in a cycle.
void release_holders(const TensorImpl* root);
// create_graph: another handle to node n's input i with the history it had when n was recorded.
Tensor input_with_history(const GradNode& n, size_t i);
// create_graph: another handle to node's output k whose history is the node itself.
Tensor output_with_history(const std::shared_ptr<GradNode>& node, int k);
// Tensor._version: the in-place writes its memory has had.
int64_t tensor_version(const Tensor& t);
// a and b are (views of) the same memory: the same storage, or in a compile region the same buffer.
bool same_buffer(const Tensor& a, const Tensor& b);

// Tier 2 (a lifted call returns what the body returned): a node named as t's grad_fn, its saved
// values freed, when backward() without retain_graph consumed t's history (null otherwise); and
// a fresh result given that history, so that its repr, grad_fn and a second backward() (an
// error) are the body's.
std::shared_ptr<GradNode> released_copy_of_history(const Tensor& t);
void attach_released_history(const Tensor& t, const std::shared_ptr<GradNode>& node);

// register_hook: fn runs on t's gradient in backward(); an id for remove_grad_hook. Errors as
// PyTorch's when t does not require grad.
int64_t add_grad_hook(const Tensor& t, std::function<Tensor(const Tensor&)> fn, std::string name);
void remove_grad_hook(const Tensor& t, int64_t id);
// The ids of t's hooks (its node's, for its output), in the order they run.
std::vector<int64_t> grad_hook_ids(const Tensor& t);
// retain_grad: a non-leaf's .grad keeps its gradient (a leaf's does anyway).
void retain_grad(const Tensor& t);
bool retains_grad(const Tensor& t);

// The same values without history: shares storage (or, for a lazy tensor, its pending value).
Tensor detach(const Tensor& t);

// Each op's derivative: given the node and the gradients of its outputs, the gradients of its
// inputs (undefined where none). Issues ordinary ops.
using BackwardFn = void (*)(const GradNode& n, std::span<const Tensor> grad_out, std::vector<Tensor>* grad_in);
// The deriv and saved columns of an op's row in ops.def. Defined in core/api/derivatives.cpp.
struct Derivative {
  BackwardFn fn = nullptr;    // none: not differentiable (bool outputs, indices, creation)
  uint32_t saved_inputs = 0;  // bit i: the derivative reads input i's values (PyTorch's saved tensors)
  bool saves_output = false;  // the derivative reads output 0 (exp, tanh, softmax)
};
const Derivative& derivative_of(OpId op);

// For backward(): where the gradients of a node go, and the checks before its derivative runs.
std::shared_ptr<GradNode> accumulator_of(const Tensor& leaf);
// Raises when a value the derivative reads was modified in place since the op ran.
void check_saved_versions(const GradNode& n);

}  // namespace dyn
