"""Rprop (torch.optim.rprop): per-element step sizes grown or shrunk by the gradient's sign."""
import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable)
from .optimizer import _pow_of_step, _step_count


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), capturable=capturable,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "prev": dyn.zeros_like(p), "step_size": dyn.full_like(p, g["lr"])}

    def _update(self, p, grad, state, g):
        etaminus, etaplus = g["etas"]
        lo, hi = g["step_sizes"]
        step, prev, step_size = state["step"], state["prev"], state["step_size"]
        if g["maximize"]:
            grad = -grad
        step.add_(1)
        s = grad.mul(prev).sign()
        one = dyn.ones((), dtype=s.dtype)
        factor = dyn.where(s > 0, one * etaplus, dyn.where(s < 0, one * etaminus, one))
        step_size.mul_(factor).clamp_(lo, hi)
        grad = dyn.where(factor == etaminus, dyn.zeros((), dtype=grad.dtype), grad)
        _addcmul_(p, grad.sign(), step_size, -1)
        prev.copy_(grad)
