"""Elementwise functions of dyn's namespace and Tensor methods composed of the engine's ops (square,
sign, lerp, addcmul, round, div with rounding_mode, isclose, ...), as _ops.py's functions are."""
import builtins
import math

import _dyn
from _dyn import Tensor

from ._ops import method


# ---- elementwise extras ----

@method
def square(input):
    return input * input


@method
def reciprocal(input):
    return 1.0 / input if input.dtype.is_floating_point else 1.0 / input.to(_dyn.get_default_dtype())


@method
def sign(input):
    if input.dtype == _dyn.bool:
        return input.clone()
    z = _dyn.zeros((), dtype=input.dtype)
    out = (input > z).to(input.dtype) - (input < z).to(input.dtype)
    if input.requires_grad and _dyn.is_grad_enabled():
        # PyTorch's sign takes part in autograd with a zero gradient: a term that is +0 (leaving
        # every value's bits, -0 too) but depends on input
        out = out - _dyn.where(_dyn.zeros((), dtype=_dyn.bool), input, z)
    return out


sgn = method(sign, name="sgn")


@method
def log2(input):
    return input.log() / math.log(2.0)


@method
def log10(input):
    return input.log() / math.log(10.0)


@method
def exp2(input):
    return 2.0 ** input


@method
def trunc(input):
    return _dyn.where(input < 0, input.ceil(), input.floor())


fix = method(trunc, name="fix")


@method
def frac(input):
    return input - trunc(input)


@method(name="round")
def _round(input, *, decimals=0):
    """Half to even, as PyTorch."""
    x = input * (10.0 ** decimals) if decimals else input
    f = x.floor()
    d = x - f
    half = d == 0.5
    odd = f.remainder(2.0) != 0
    r = _dyn.where(d > 0.5, f + 1.0, f)
    r = _dyn.where(half & odd, f + 1.0, r)
    # a zero keeps the input's sign, as rint's (-0.3 rounds to -0.0; x * 0.0 is that zero)
    r = _dyn.where(r == 0, x * 0.0, r)
    return r / (10.0 ** decimals) if decimals else r


@method
def isnan(input):
    return input != input


@method
def isinf(input):
    return input.abs() == math.inf if input.dtype.is_floating_point else _dyn.zeros(*input.shape, dtype=_dyn.bool)


@method
def isfinite(input):
    if not input.dtype.is_floating_point:
        return _dyn.ones(*input.shape, dtype=_dyn.bool)
    return (input == input) & (input.abs() != math.inf)


@method
def isposinf(input):
    return input == math.inf


@method
def isneginf(input):
    return input == -math.inf


@method
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not input.dtype.is_floating_point:
        return input.clone()
    from ._dtypes import finfo  # imported after this module
    big = finfo(input.dtype).max
    out = _dyn.where(input != input, _dyn.full((), nan, dtype=input.dtype), input)
    out = _dyn.where(out == math.inf, _dyn.full((), big if posinf is None else posinf, dtype=input.dtype), out)
    return _dyn.where(out == -math.inf, _dyn.full((), -big if neginf is None else neginf, dtype=input.dtype), out)


@method
def clamp_min(input, min):
    return input.clamp(min=min)


@method
def clamp_max(input, max):
    return input.clamp(max=max)


@method(function=False)
def clamp_min_(input, min):
    return input.copy_(_dyn.Tensor.maximum(input.clone(), min)) if isinstance(min, _dyn.Tensor) else input.clamp_(min=min)


@method(function=False)
def clamp_max_(input, max):
    return input.copy_(_dyn.Tensor.minimum(input.clone(), max)) if isinstance(max, _dyn.Tensor) else input.clamp_(max=max)


@method
def lerp(input, end, weight):
    """PyTorch's two forms, which keep the ends exact: input + w * (end - input) for |w| < 0.5,
    else end - (end - input) * (1 - w) (1 - w in input's dtype)."""
    diff = end - input
    if isinstance(weight, Tensor):
        return _dyn.where(weight.abs() < 0.5, input + weight * diff, end - diff * (1 - weight))
    if abs(weight) < 0.5:
        return input + weight * diff
    return end - diff * (1 - _dyn.full((), weight, dtype=input.dtype))


@method
def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 * tensor2) if value != 1 else input + tensor1 * tensor2


@method
def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 / tensor2) if value != 1 else input + tensor1 / tensor2


@method(function=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    return self.copy_(addcmul(self, tensor1, tensor2, value=value))


@method(function=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return self.copy_(addcdiv(self, tensor1, tensor2, value=value))


@method(function=False)
def lerp_(self, end, weight):
    return self.copy_(lerp(self, end, weight))


@method
def true_divide(input, other):
    return input.div(other)


@method
def multiply(input, other):
    return input.mul(other)


@method
def subtract(input, other, *, alpha=1):
    return input.sub(other, alpha=alpha)


_true_div = _dyn.Tensor.div  # the op table's: true division (and in place), before div is wrapped below
_true_div_ = _dyn.Tensor.div_
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _type_name(dtype):
    return _TYPE_NAMES.get(str(dtype).replace("dyn.", ""), str(dtype))


def _rounded_div(input, other, rounding_mode):
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if not isinstance(input, _dyn.Tensor):
        input = _dyn.tensor(input)
    q = input.floor_divide(other)  # its dtype is the result's: integers stay integers
    if rounding_mode == "floor":
        return q
    if q.dtype.is_floating_point:
        return trunc(_true_div(input, other))
    # Integers exactly (no trip through a float, which rounds past 2**24): the dividend less C's
    # remainder divides evenly.
    return (input - input.fmod(other)).floor_divide(other)


_RoundedDivision = None


def _rounded_division():
    """An autograd.Function for a rounded quotient: its gradient is zero (a step function), as
    PyTorch's; made on first use (dyn.autograd imports dyn)."""
    global _RoundedDivision
    if _RoundedDivision is None:
        from .autograd import Function

        class RoundedDivision(Function):
            @staticmethod
            def forward(ctx, input, other, rounding_mode):
                ctx.shapes = [(t.shape, t.dtype) if isinstance(t, Tensor) else None for t in (input, other)]
                return _rounded_div(input, other, rounding_mode)

            @staticmethod
            def backward(ctx, grad):
                return tuple(None if s is None else _dyn.zeros(tuple(s[0]), dtype=s[1]) for s in ctx.shapes) + (None,)

        _RoundedDivision = RoundedDivision
    return _RoundedDivision


@method
def div(input, other, *, rounding_mode=None):
    """True division, or with rounding_mode 'trunc' (toward zero) or 'floor', as torch.div."""
    if not isinstance(input, _dyn.Tensor):  # torch.div(7, t)
        input = _dyn.tensor(input)
    if rounding_mode is None:
        return _true_div(input, other)
    if _dyn.is_grad_enabled() and (input.requires_grad or (isinstance(other, Tensor) and other.requires_grad)):
        if rounding_mode not in ("floor", "trunc"):
            _rounded_div(input, other, rounding_mode)  # raises
        return _rounded_division().apply(input, other, rounding_mode)
    return _rounded_div(input, other, rounding_mode)


@method(function=False)
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _true_div_(self, other)
    r = _rounded_div(self, other, rounding_mode)
    if r.dtype != self.dtype and not (self.dtype.is_floating_point and r.dtype.is_floating_point):
        raise RuntimeError(f"result type {_type_name(r.dtype)} can't be cast to the desired output type "
                           f"{_type_name(self.dtype)}")
    return self.copy_(r)


@method
def divide(input, other, *, rounding_mode=None):
    return div(input, other, rounding_mode=rounding_mode)


@method
def softplus(input, beta=1.0, threshold=20.0):
    bx = input * beta
    return _dyn.where(bx > threshold, input, (bx.exp()).log1p() / beta)


@method
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


@method
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if not isinstance(other, Tensor):
        other = _dyn.tensor(other, dtype=input.dtype)
    a, b = input.to(_dyn.float64), other.to(_dyn.float64)
    finite = isfinite(a) & isfinite(b)
    close = (a == b) | (finite & ((a - b).abs() <= atol + rtol * b.abs()))
    if equal_nan:
        close = close | ((a != a) & (b != b))
    return close




def _clamp_to_tensors(input, min, max):
    """clamp with tensor bounds (broadcast, in the promoted dtype): minimum(maximum(input, min), max),
    as PyTorch's clamp.Tensor computes it; a NaN bound gives NaN, and at a tie the gradient is
    shared between input and the bound, as PyTorch's."""
    from ._dtypes import promote_types, result_type  # imported after this module

    dtype = input.dtype
    for b in (min, max):
        if b is not None:
            dtype = promote_types(dtype, result_type(input, b))
    out = input.to(dtype)
    if min is not None:
        lo = min.to(dtype) if isinstance(min, _dyn.Tensor) else _dyn.full((), min, dtype=dtype)
        out = _dyn.Tensor.maximum(out, lo)
    if max is not None:
        hi = max.to(dtype) if isinstance(max, _dyn.Tensor) else _dyn.full((), max, dtype=dtype)
        out = _dyn.Tensor.minimum(out, hi)
    return out


def _tensor_bounds(name, min, max):
    """Whether min/max are tensors; PyTorch's TypeError for a tensor with a number."""
    tensors = [isinstance(b, _dyn.Tensor) for b in (min, max) if b is not None]
    if any(tensors) and not all(tensors):
        kinds = ", ".join("Tensor" if isinstance(b, _dyn.Tensor) else type(b).__name__ for b in (min, max))
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {kinds}), but "
                        "expected one of:\n (Tensor input, Tensor min = None, Tensor max = None)\n (Tensor input, "
                        "Number min = None, Number max = None)")
    return any(tensors)


def tensor_bound_clamps(name, scalar_clamp, scalar_clamp_):
    """Tensor.clamp / clamp_ (or clip) that also take tensors as min and max, over the op table's
    own, which takes numbers."""
    def clamp(input, min=None, max=None):
        if _tensor_bounds(name, min, max):
            return _clamp_to_tensors(input, min, max)
        return scalar_clamp(input, min=min, max=max)

    def clamp_(input, min=None, max=None):
        if _tensor_bounds(name + "_", min, max):
            return input.copy_(_clamp_to_tensors(input, min, max))
        return scalar_clamp_(input, min=min, max=max)

    return clamp, clamp_
