// Dispatch: where every op call a user (or a derivative) issues decides how it runs. Outside a
// compile region the op runs now (core/ops/run.h); inside one it is recorded or checked against a
// cached trace (core/capture). Either way, when grad mode is on, autograd records its grad node.
// Nothing below this layer calls back up here: kernels run their helper ops with core/ops/run.h.
#pragma once
#include <utility>

#include "core/ops/registry.h"

namespace dyn {

Tensor dispatch(OpId op, std::span<const Tensor> in, const Attrs& a);
// Ops with two outputs (max_dim, min_dim).
std::pair<Tensor, Tensor> dispatch2(OpId op, std::span<const Tensor> in, const Attrs& a);
// An in-place op: the result is written into `self` (cast when dtypes differ).
// With autograd involved it records history (Note [in-place history] in core/api/inplace.cpp).
void dispatch_into(OpId op, std::span<const Tensor> in, const Attrs& a, Tensor& self);

}  // namespace dyn
