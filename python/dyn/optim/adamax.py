"""Adamax (torch.optim.adamax): Adam with the infinity norm of past gradients."""
import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable)
from .optimizer import _pow_of_step, _step_count


def _betas(betas):
    _check(0 <= betas[0] < 1, "beta parameter at index 0", betas[0])
    _check(0 <= betas[1] < 1, "beta parameter at index 1", betas[1])
    return tuple(betas)


def _scalar_state(value):
    """A 0-dim state number in PyTorch's scalar dtype (float32 unless the default is float64): the
    optimizers that keep one (NAdam's mu_product, ASGD's eta and mu) round it there."""
    return dyn.full((), value, dtype=dyn.float64 if dyn.get_default_dtype() == dyn.float64 else dyn.float32)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "exp_avg": dyn.zeros_like(p), "exp_inf": dyn.zeros_like(p)}

    def _update(self, p, grad, state, g):
        beta1, beta2 = g["betas"]
        step, m, u = state["step"], state["exp_avg"], state["exp_inf"]
        if g["maximize"]:
            grad = -grad
        step.add_(1)
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        _lerp_(m, grad, 1 - beta1)
        u.copy_(dyn.maximum(u.mul_(beta2), grad.abs().add_(g["eps"])))
        clr = g["lr"] / (1 - _pow_of_step(beta1, step))
        _addcdiv_(p, m, u, -clr)
