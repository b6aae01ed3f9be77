"""torch.distributions.utils: broadcasting parameters, probabilities from logits and back, and the
lazy_property the distributions cache derived parameters with."""
import numbers

import dyn

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape; numbers become tensors of the tensors' dtype
    (or the default dtype)."""
    if not all(isinstance(v, (dyn.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, dyn.Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, dyn.Tensor)), dyn.get_default_dtype())
        values = [v if isinstance(v, dyn.Tensor) else dyn.tensor(v, dtype=dtype) for v in values]
    return dyn.broadcast_tensors(*values)


def _standard_normal(shape, dtype):
    return dyn.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value, dim):
    """value summed over its dim rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.ndim - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    return dyn.sigmoid(logits) if is_binary else dyn.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = dyn.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return dyn.log(ps_clamped) - dyn.log1p(-ps_clamped)
    return dyn.log(ps_clamped)


class lazy_property:
    """A property computed on first use and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with dyn.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
