"""Adagrad (torch.optim.adagrad)."""
import math

import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable, _pow_of_step, _step_count)


class Adagrad(Optimizer):
    """Adagrad: steps divided by the root of the summed squared gradients, with lr / (1 + (t - 1) lr_decay)."""

    _state_made_at_first_step = False

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    def _init_state(self, p, g):
        # PyTorch fills every group's sum with the constructor's initial_accumulator_value.
        return {"step": _step_count(), "sum": dyn.full_like(p, self.defaults["initial_accumulator_value"])}

    def _update(self, p, grad, state, g):
        step, state_sum = state["step"], state["sum"]
        step.add_(1)
        if g["maximize"]:
            grad = -grad
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        clr = g["lr"] / (1 + (step - 1) * g["lr_decay"])
        _addcmul_(state_sum, grad, grad, 1)
        std = state_sum.sqrt().add_(g["eps"])
        _addcdiv_(p, grad, std, -clr)
