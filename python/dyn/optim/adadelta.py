"""Adadelta (torch.optim.adadelta)."""
import math

import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable, _pow_of_step, _step_count)


class Adadelta(Optimizer):
    """Adadelta: steps scaled by running RMS of past updates over running RMS of gradients."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0 <= rho <= 1, "rho value", rho)
        _check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "square_avg": dyn.zeros_like(p), "acc_delta": dyn.zeros_like(p)}

    def _update(self, p, grad, state, g):
        rho, eps = g["rho"], g["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"].add_(1)
        if g["maximize"]:
            grad = -grad
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        _addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt()
        delta = acc_delta.add(eps).sqrt().div_(std).mul_(grad)
        _addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
        p.add_(delta * -g["lr"])
