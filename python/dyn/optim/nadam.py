"""NAdam (torch.optim.nadam): Adam with Nesterov momentum and a momentum schedule."""
import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable)
from .optimizer import _adam_prologue, _pow_of_step, _step_count
from .adamax import _betas, _scalar_state


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "mu_product": _scalar_state(1.0), "exp_avg": dyn.zeros_like(p),
                "exp_avg_sq": dyn.zeros_like(p)}

    def _update(self, p, grad, state, g):
        beta1, beta2 = g["betas"]
        lr, md = g["lr"], g["momentum_decay"]
        step, mu_product, m, v = state["step"], state["mu_product"], state["exp_avg"], state["exp_avg_sq"]
        grad = _adam_prologue(p, grad, state, g)
        bias_correction2 = 1 - _pow_of_step(beta2, step)
        # PyTorch computes these in Python doubles from the step count: float64 0-dim tensors here
        mu = beta1 * (1.0 - 0.5 * (dyn.full((), 0.96, dtype=dyn.float64) ** (step * md)))
        mu_next = beta1 * (1.0 - 0.5 * (dyn.full((), 0.96, dtype=dyn.float64) ** ((step + 1) * md)))
        # mu is a Python number to PyTorch: it meets the (float32) state tensor rounded to its dtype
        mu_product.mul_(mu.to(mu_product.dtype))
        _lerp_(m, grad, 1 - beta1)
        _addcmul_(v.mul_(beta2), grad, grad, 1 - beta2)
        denom = v.div(bias_correction2).sqrt()
        product = mu_product.to(dyn.float64)
        product_next = product * mu_next
        denom = denom.add_(g["eps"])
        _addcdiv_(p, grad, denom, -lr * (1.0 - mu) / (1.0 - product))
        _addcdiv_(p, m, denom, (-lr * mu_next) / (1.0 - product_next))
