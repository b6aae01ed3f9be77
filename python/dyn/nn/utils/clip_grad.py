"""clip_grad_norm_ and clip_grad_value_: in-place rescaling of .grad, with PyTorch's formulas.

The total norm stays a tensor and the clip factor min(max_norm / (norm + 1e-6), 1) is computed
with tensor ops, so a compiled training step does not break its graph here (error_if_nonfinite
must read the norm, and so does break it).
"""
import math

import dyn


def _grads(parameters):
    if isinstance(parameters, dyn.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of tensors (as if all were concatenated into one vector)."""
    if isinstance(tensors, dyn.Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return dyn.tensor(0.0)
    # float16 and bfloat16 gradients are summed in float32 (as PyTorch's vector_norm does), so
    # squares of a few hundred do not overflow; the norm comes back in their dtype.
    dtype = tensors[0].dtype
    if dtype in (dyn.float16, dyn.bfloat16):
        return get_total_norm([t.float() for t in tensors], norm_type, error_if_nonfinite).to(dtype)
    with dyn.no_grad():
        if norm_type == math.inf:
            norms = [t.detach().abs().amax() for t in tensors]
            total = norms[0] if len(norms) == 1 else dyn.stack(norms).amax()
        elif norm_type == 2.0:
            squares = [(t.detach() * t.detach()).sum() for t in tensors]
            total = (squares[0] if len(squares) == 1 else dyn.stack(squares).sum()).sqrt()
        else:
            powers = [t.detach().abs().pow(norm_type).sum() for t in tensors]
            total = (powers[0] if len(powers) == 1 else dyn.stack(powers).sum()).pow(1.0 / norm_type)
        if error_if_nonfinite and not bool((total - total == 0).all()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales every .grad by min(max_norm / (total_norm + 1e-6), 1)."""
    grads = _grads(parameters)
    if not grads:
        return
    with dyn.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescales the gradients in place so that their total norm is at most max_norm; returns the total norm
    (before clipping) as a tensor."""
    # A generator (model.parameters()) is read once: its list serves both steps.
    parameters = [parameters] if isinstance(parameters, dyn.Tensor) else list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every .grad in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with dyn.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
