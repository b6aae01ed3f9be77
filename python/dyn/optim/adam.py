"""Adam and AdamW (torch.optim.adam, torch.optim.adamw)."""
import math

import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _adam_prologue, _no_differentiable, _pow_of_step, _step_count)


class Adam(Optimizer):
    """Adam (and AMSGrad); weight_decay is an L2 penalty unless decoupled_weight_decay (AdamW)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps)
        _check(0 <= betas[0] < 1, "beta parameter at index 0", betas[0])
        _check(0 <= betas[1] < 1, "beta parameter at index 1", betas[1])
        _check_nonnegative(weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p, g):
        state = {"step": _step_count(), "exp_avg": dyn.zeros_like(p), "exp_avg_sq": dyn.zeros_like(p)}
        if g["amsgrad"]:
            state["max_exp_avg_sq"] = dyn.zeros_like(p)
        return state

    def _update(self, p, grad, state, g):
        beta1, beta2 = g["betas"]
        lr = g["lr"]
        step, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        grad = _adam_prologue(p, grad, state, g)  # (AdamW decays the parameter; Adam adds an L2 term)
        _lerp_(m, grad, 1 - beta1)
        _addcmul_(v.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction1 = 1 - _pow_of_step(beta1, step)
        bias_correction2 = 1 - _pow_of_step(beta2, step)
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if g["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(dyn.maximum(state["max_exp_avg_sq"], v))
        denom = (v.sqrt() / bias_correction2_sqrt).add_(g["eps"])
        _addcdiv_(p, m, denom, -step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay: the parameter itself shrinks by lr * weight_decay each step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
