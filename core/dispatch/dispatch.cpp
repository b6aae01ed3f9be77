#include "core/dispatch/dispatch.h"

#include "core/autograd/autograd.h"
#include "core/capture/capture.h"
#include "core/error.h"
#include "core/ops/run.h"

namespace dyn {

namespace {
// Which inputs required grad when a node was recorded (a lifted call records it the same way).
uint32_t requiring_grad(std::span<const Tensor> in) {
  uint32_t m = 0;
  for (size_t i = 0; i < in.size() && i < 32; ++i)
    if (requires_grad(in[i])) m |= 1u << i;
  return m;
}

// A view op's result remembers the tensor it views (Note [in-place history]).
void note_view(const Tensor& out, const Tensor& of) {
  TensorImpl* v = out.impl();
  TensorImpl* b = of.impl()->view_base_ ? of.impl()->view_base_ : of.impl();
  if (v == b || v->view_base_) return;
  b->refs_.fetch_add(1, std::memory_order_relaxed);
  v->view_base_ = b;
  v->view_made_without_grad_ = !grad_enabled() || of.impl()->view_made_without_grad_;
  note_view_made(v, b);
}
}  // namespace

Tensor dispatch(OpId op, std::span<const Tensor> in, const Attrs& a) {
  Capture* c = Capture::active();
  Tensor out = c ? c->record(op, in, a) : run_op(op, in, a);
  if (op_def(op).cls == OpClass::View) note_view(out, in[0]);
  if (grad_enabled() && record_grad(op, in, a, std::span<const Tensor>(&out, 1)) && c)
    c->note_grad_node(requiring_grad(in));
  return out;
}

std::pair<Tensor, Tensor> dispatch2(OpId op, std::span<const Tensor> in, const Attrs& a) {
  Capture* c = Capture::active();
  auto out = c ? c->record2(op, in, a) : run_op2(op, in, a);
  if (grad_enabled()) {
    const Tensor both[2] = {out.first, out.second};
    if (record_grad(op, in, a, both) && c) c->note_grad_node(requiring_grad(in));
  }
  return out;
}

void dispatch_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self) {
  if (self.storage() && self.storage()->read_only) fail_read_only_write();
  if (inplace_needs_history(self, in)) return inplace_with_history(op, in, a, self);
  if (Capture* c = Capture::active())
    c->record_into(op, in, a, self);
  else
    run_op_into(op, in, a, self);
  if (Storage* st = self.storage()) ++st->version;  // only once the write is certain
}

}  // namespace dyn
