// In-place ops on tensors that take part in autograd.
//
// Note [in-place history]
// x += y where x or y requires grad (or out[:, t] = h) records history as PyTorch does, out of
// pieces autograd already has: the op runs out of place with its own node, the result is written
// into self, and self takes the result's history. An input the derivative reads that lives in
// self's memory is cloned first, so that the write does not change what backward reads (PyTorch
// saves the original self the same way). The cost is one temporary per op, only when autograd is
// involved; without grad the op writes in place as before.
// When self is a view of another tensor (a view op made it: TensorImpl::view_base_), that
// tensor, the base, is written too: its history
// becomes a node (CopySlices, as PyTorch calls it) whose derivative sends the gradient of the
// written elements to the result and the rest to the base's old history, and self's history
// becomes a view of the new base (AsStridedBackward0). The written elements are told apart by
// their flat positions in the base, taken once from the two tensors' geometry, which lazy
// tensors have too: the derivatives are a gather and a scatter, traced like any other.
// Not done: other views of the base made before the write keep their old history (PyTorch
// regenerates it); a detached alias (detach(), .data) is no view, as in PyTorch.
#include <vector>

#include "core/api/api.h"
#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/dispatch/dispatch.h"
#include "core/error.h"
#include "core/ops/run.h"

namespace dyn {

namespace {

constexpr const char* kViewNode = "AsStridedBackward0";

// The flat positions, in base's element order, of view's elements (view lives in base's memory).
Tensor positions_in(const Tensor& base, const Tensor& view) {
  int64_t nb = base.numel(), nv = view.numel();
  std::vector<int64_t> of;  // a memory position (from lo) -> its element of base, for a strided base
  int64_t lo = 0;
  bool dense = base.is_contiguous();
  auto walk = [](const Tensor& t, auto&& each) {
    int nd = t.ndim();
    Dims i = Dims::filled(nd, 0);
    int64_t pos = t.offset();
    for (int64_t k = 0, n = t.numel(); k < n; ++k) {
      each(k, pos);
      for (int d = nd - 1; d >= 0; --d) {
        if (++i[d] < t.size(d)) {
          pos += t.strides()[d];
          break;
        }
        pos -= t.strides()[d] * (t.size(d) - 1);
        i[d] = 0;
      }
    }
  };
  if (!dense) {
    int64_t hi = base.offset();
    lo = base.offset();
    walk(base, [&](int64_t, int64_t pos) {
      lo = std::min(lo, pos);
      hi = std::max(hi, pos);
    });
    of.assign(nb ? hi - lo + 1 : 0, -1);
    walk(base, [&](int64_t k, int64_t pos) { of[pos - lo] = k; });
  }
  Tensor idx = Tensor::empty(Dims{nv}, DType::Int64);
  int64_t* out = idx.data<int64_t>();
  walk(view, [&](int64_t k, int64_t pos) {
    int64_t e = -1;
    if (dense)
      e = pos - base.offset();
    else if (pos >= lo && pos - lo < static_cast<int64_t>(of.size()))
      e = of[pos - lo];
    DYN_CHECK(e >= 0 && e < nb, ErrorKind::NotImplemented,
              "in-place op with autograd: element {} of the written view is outside the tensor it views (a layout dyn "
              "does not follow); write out of place",
              k);
    out[k] = e;
  });
  return idx;
}

Tensor zeros(const Dims& shape, DType dtype) { return ops::full(shape, Scalar::from_int(0), dtype); }

}  // namespace

// view's history as a view of base (AsStridedBackward0), and with copy_slices = {base, value}
// base's as the write of value into view (CopySlices) first. Returns view's positions in base.
Tensor view_history(const Tensor& base, const Tensor& view, std::span<const Tensor> copy_slices);

void inplace_with_history(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  OutMeta m;
  op_def(op).infer(in, a, &m);
  check_into(m, self);
  TensorImpl* b = self.impl()->view_base_;
  Tensor base = b ? Tensor::borrow(b) : Tensor();
  if (requires_grad(self) && is_leaf(self))
    fail(ErrorKind::Runtime,
         "a leaf Variable that requires grad is being used in an in-place operation. Wrap the update in "
         "`with dyn.no_grad():` (as optimizers do), or write into a clone");
  if (base.defined() && self.impl()->view_made_without_grad_)
    fail(ErrorKind::Runtime,
         "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
         "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
         "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
         "outside (if you want the inplace to be tracked).");
  if (base.defined() && requires_grad(base) && is_leaf(base))
    fail(ErrorKind::Runtime,
         "a view of a leaf Variable that requires grad is being used in an in-place operation. Wrap the update in "
         "`with dyn.no_grad():`, or write into a clone of the leaf");

  // The op out of place, with its node. The original self is cloned when the derivative reads it
  // (mul_ reads it for its other operand's gradient), as PyTorch saves it; another operand that is
  // self (y.mul_(y)) is saved as it is, so that backward() raises there as PyTorch's does.
  std::vector<Tensor> args(in.begin(), in.end());
  uint32_t reads = inputs_read_by_derivative(op, a, args.size());
  if (!args.empty() && (reads & 1u) && args[0].impl() == self.impl()) args[0] = ops::clone(args[0]);
  Tensor r;
  if (op == OpId::cast || op == OpId::full) {
    // copy_ and fill_: the old values get a zero gradient (CopyBackwards, FillBackward2).
    {
      NoGradScope no_grad;
      r = dispatch(op, args, a);
    }
    std::vector<Tensor> from{self};
    if (op == OpId::cast) from.push_back(args[0]);
    set_custom_history(r, from, op == OpId::cast ? "CopyBackwards" : "FillBackward2",
                       [](std::span<const Tensor> g, std::vector<Tensor>* gin) {
                         (*gin)[0] = zeros(g[0].shape(), g[0].dtype());
                         if (gin->size() > 1) (*gin)[1] = g[0];
                       });
  } else {
    r = dispatch(op, args, a);
  }
  if (r.dtype() != self.dtype()) r = ops::to_dtype(r, self.dtype());
  // Written into a tensor that cannot require grad (an integer one: x_int[1:3] = v * 2), the values
  // lose their history, as in PyTorch: the write is a plain copy.
  const bool history = requires_grad(r) || requires_grad(self) || (base.defined() && requires_grad(base));
  if (!requires_grad(r) && (requires_grad(self) || (base.defined() && requires_grad(base)))) {
    // Nothing of the old values reaches the result (x.gt_(0)): they get a zero gradient, and the
    // tensor keeps requiring grad, as PyTorch's GtBackward0 and its kind give.
    GradNode named;
    named.op = op;
    const Tensor old[1] = {self};
    set_custom_history(r, old, named.name(), [](std::span<const Tensor> g, std::vector<Tensor>* gin) {
      (*gin)[0] = zeros(g[0].shape(), g[0].dtype());
    });
  }
  {
    NoGradScope no_grad;
    Attrs c;
    c.dtype = self.dtype();
    const Tensor src[1] = {r};
    dispatch_into(OpId::cast, src, c, self);
  }
  if (!history) return;
  Capture* cap = Capture::active();
  if (cap) cap->note_inplace_history();
  if (Storage* st = self.storage()) st->last_history_op = static_cast<int16_t>(op);
  if (!base.defined()) {
    take_history(self, r);
  } else {
    const Tensor parts[2] = {base, r};
    view_history(base, self, parts);
  }
  if (cap) release_holders(base.defined() ? base.impl() : self.impl());  // (nodes made above included)
}

Tensor view_history(const Tensor& base, const Tensor& view, std::span<const Tensor> copy_slices) {
  Tensor idx;
  {
    EagerScope eager;
    idx = positions_in(base, view);
  }
  Dims bshape = base.shape(), vshape = view.shape();
  int64_t nb = base.numel();
  if (!copy_slices.empty()) {
    set_custom_history(base, copy_slices, "CopySlices",
                       [idx, bshape, vshape, nb](std::span<const Tensor> g, std::vector<Tensor>* gin) {
                         Tensor flat = ops::reshape(g[0], Dims{nb});
                         (*gin)[1] = ops::reshape(ops::gather(flat, 0, idx), vshape);
                         Tensor none = zeros(idx.shape(), flat.dtype());
                         (*gin)[0] = ops::reshape(ops::scatter(flat, 0, idx, none), bshape);
                       });
    ++base.impl()->autograd_->rebases;
  }
  const Tensor from[1] = {base};
  if (requires_grad(base))
    set_custom_history(view, from, kViewNode, [idx, bshape, nb](std::span<const Tensor> g, std::vector<Tensor>* gin) {
      // index_add, not scatter: an expanded view reads one element of the base several times
      Tensor src = ops::reshape(g[0], Dims{idx.numel()});
      (*gin)[0] = ops::reshape(ops::index_add(zeros(Dims{nb}, src.dtype()), 0, idx, src), bshape);
    });
  view.impl()->autograd_->seen_rebases = base.impl()->autograd_->rebases;
  return idx;
}

void refresh_view_history(const Tensor& view) {
  TensorImpl* p = view.impl();
  Tensor base = Tensor::borrow(p->view_base_);
  if (p->view_made_without_grad_ || !base.impl()->autograd_) {
    // (a view made under no_grad keeps none: writing it with grad mode on is the error above)
    if (!p->autograd_) p->autograd_ = std::make_shared<AutogradMeta>();
    p->autograd_->seen_rebases = base.impl()->autograd_ ? base.impl()->autograd_->rebases : 0;
    return;
  }
  if (!p->autograd_) p->autograd_ = std::make_shared<AutogradMeta>();
  p->autograd_->seen_rebases = base.impl()->autograd_->rebases;  // first: what follows asks again
  view_history(base, view, std::span<const Tensor>());
}

}  // namespace dyn
