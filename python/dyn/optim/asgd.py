"""ASGD (torch.optim.asgd): averaged stochastic gradient descent."""
import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable)
from .optimizer import _pow_of_step, _step_count
from .adamax import _scalar_state


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonnegative(weight_decay=weight_decay)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, p, g):
        return {"step": _step_count(), "eta": _scalar_state(g["lr"]), "mu": _scalar_state(1.0),
                "ax": dyn.zeros_like(p)}

    def _update(self, p, grad, state, g):
        lr, lambd, alpha, t0 = g["lr"], g["lambd"], g["alpha"], g["t0"]
        step, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
        if g["maximize"]:
            grad = -grad
        step.add_(1)
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        eta_value = eta.to(dyn.float64)  # PyTorch reads it with .item(): its float32 value, as a double
        p.mul_(1 - lambd * eta_value)
        p.add_(grad * -eta_value)
        ax.copy_(dyn.where(mu != 1, ax + (p - ax) * mu, p))
        eta.copy_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.copy_(1 / dyn.maximum(dyn.ones((), dtype=dyn.float64), step - t0))
