// Reverse-mode autograd: grad nodes recorded as ops run, backward() issuing ordinary ops (so a
// backward pass inside a compile region is traced like any other code). See Note [autograd].
#pragma once
#include <memory>
#include <vector>

#include "core/ops/registry.h"

namespace dyn {

struct GradNode;

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
  bool released = false;     // saved values freed by a backward without retain_graph
  std::string name() const;  // "MulBackward0", "AccumulateGrad"
};

// A tensor's autograd state (attached to its TensorImpl).
struct AutogradMeta {
  ~AutogradMeta();
  Tensor grad;
  std::shared_ptr<GradNode> grad_fn;
  int output = 0;                         // which output of grad_fn this tensor is
  std::shared_ptr<GradNode> accumulator;  // leaves: their AccumulateGrad node, made once
};

bool grad_enabled();
void set_grad_enabled(bool on);

// Turns off gradient recording while it lives (kernels and backward itself run under it).
class NoGradScope {
 public:
  NoGradScope() : saved_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradScope() { set_grad_enabled(saved_); }
  NoGradScope(const NoGradScope&) = delete;
  NoGradScope& operator=(const NoGradScope&) = delete;

 private:
  bool saved_;
};

bool requires_grad(const Tensor& t);
const Tensor& grad_of(const Tensor& t);  // undefined Tensor if none
void set_grad(const Tensor& t, const Tensor& g);
std::shared_ptr<GradNode> grad_fn_of(const Tensor& t);
bool is_leaf(const Tensor& t);
void set_requires_grad(const Tensor& t, bool on);  // user error on a non-leaf or a non-float tensor

// Called by dispatch after an op ran (or was recorded): links outputs to a new grad node when
// grad mode is on and an input requires grad.
void record_grad(OpId op, std::span<const Tensor> in, const Attrs& a, std::span<const Tensor> out);
// In-place ops and autograd: allowed under no_grad, or when nothing involved requires grad.
void check_inplace_grad(const Tensor& self, std::span<const Tensor> in);

// Accumulates d(root)/d(leaf) into every leaf's .grad. gradient: for non-scalar roots.
void backward(const Tensor& root, const Tensor* gradient, bool retain_graph);

// The same values without history: shares storage (or, for a lazy tensor, its pending value).
Tensor detach(const Tensor& t);

// Each op's derivative: given the node and the gradients of its outputs, the gradients of its
// inputs (undefined where none). Issues ordinary ops. Filled in derivatives.cpp.
using BackwardFn = void (*)(const GradNode& n, std::span<const Tensor> grad_out, std::vector<Tensor>* grad_in);
BackwardFn backward_of(OpId op);

}  // namespace dyn
