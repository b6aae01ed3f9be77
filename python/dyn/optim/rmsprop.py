"""RMSprop (torch.optim.rmsprop)."""
import math

import dyn

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check, _check_lr, _check_nonnegative, _lerp_,  # noqa: F401
                        _no_differentiable, _pow_of_step, _step_count)


class RMSprop(Optimizer):
    """RMSprop: steps divided by a running RMS of gradients (centered: of their deviation), optional momentum."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check_nonnegative(epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _init_state(self, p, g):
        state = {"step": _step_count(), "square_avg": dyn.zeros_like(p)}
        if g["momentum"] > 0:
            state["momentum_buffer"] = dyn.zeros_like(p)
        if g["centered"]:
            state["grad_avg"] = dyn.zeros_like(p)
        return state

    def _update(self, p, grad, state, g):
        alpha, square_avg = g["alpha"], state["square_avg"]
        if g["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if g["weight_decay"] != 0:
            grad = grad.add(p, alpha=g["weight_decay"])
        _addcmul_(square_avg.mul_(alpha), grad, grad, 1 - alpha)
        if g["centered"]:
            grad_avg = _lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt()  # = addcmul(value=-1): the negation is exact
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(g["eps"])
        if g["momentum"] > 0:
            buf = _addcdiv_(state["momentum_buffer"].mul_(g["momentum"]), grad, avg, 1)
            p.add_(buf * -g["lr"])
        else:
            _addcdiv_(p, grad, avg, -g["lr"])


# ---- L-BFGS ----
# Note [LBFGS values] Scalars keep PyTorch's types: losses are Python floats, directional
# derivatives and curvature terms 0-dim tensors in the parameters' dtype, step lengths whichever of
# the two the arithmetic produces, so float32 problems round as PyTorch's do.
