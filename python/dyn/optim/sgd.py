"""SGD (torch.optim.sgd)."""
import math

import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable, _pow_of_step, _step_count)


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (Nesterov or heavy-ball), dampening and L2 decay."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _init_state(self, p, g):
        if g["momentum"] == 0:
            return {}
        return {"momentum_buffer": dyn.zeros_like(p), "step": _step_count()}

    def _complete_loaded(self, target, loaded):
        if "momentum_buffer" in loaded and "step" not in loaded and loaded["momentum_buffer"] is not None:
            target["step"] = dyn.ones((), dtype=dyn.float64)  # the buffer is live: later steps decay it

    def _update(self, p, grad, state, g):
        if g["maximize"]:
            grad = -grad
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        if g["momentum"] != 0:
            buf, step = state["momentum_buffer"], state["step"]
            # PyTorch's first step takes the gradient as the buffer; later ones decay it. Both as
            # tensor ops, so the first step's trace serves every step.
            later = (buf * g["momentum"]).add(grad, alpha=1 - g["dampening"])
            buf.copy_(dyn.where(step > 0, later, grad))
            step.add_(1)
            grad = grad.add(buf, alpha=g["momentum"]) if g["nesterov"] else buf
        p.add_(grad * -g["lr"])  # = add(alpha=-lr); lr may be a tensor
