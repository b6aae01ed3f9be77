"""RAdam (torch.optim.radam): Adam with the variance of the adaptive learning rate rectified."""
import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable)
from .optimizer import _adam_prologue, _pow_of_step, _step_count
from .adamax import _betas


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
                                      maximize=maximize, capturable=capturable, differentiable=differentiable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "exp_avg": dyn.zeros_like(p), "exp_avg_sq": dyn.zeros_like(p)}

    def _update(self, p, grad, state, g):
        beta1, beta2 = g["betas"]
        lr = g["lr"]
        step, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        grad = _adam_prologue(p, grad, state, g)
        _lerp_(m, grad, 1 - beta1)
        _addcmul_(v.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction1 = 1 - _pow_of_step(beta1, step)
        bias_correction2 = 1 - _pow_of_step(beta2, step)
        corrected = m / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * _pow_of_step(beta2, step) / bias_correction2
        # Both of PyTorch's branches (rho_t > 5 chooses), so that one trace serves every step.
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)).clamp(min=0) ** 0.5
        adaptive = (bias_correction2 ** 0.5) / v.sqrt().add(g["eps"])
        rectified = corrected * lr * adaptive * rect
        p.sub_(dyn.where(rho_t > 5.0, rectified, corrected * lr))  # (add(alpha=-1): the same bits)
