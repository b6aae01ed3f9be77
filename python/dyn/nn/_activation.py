"""Activation functions of dyn.nn.functional, composed from dyn's elementwise ops.

Branches that could overflow in the branch where() does not take are clamped first, so that
their zero gradient is not 0 * inf = nan (elu's exp, softplus's exp).
"""
import math

import dyn

from ._util import check_tensor


def _inplace(input, f, inplace):
    """f(input), or with inplace f's result written into input. With autograd involved f reads a
    clone, so that the write does not change a value f's derivative saved (PyTorch's in-place
    activations save their result instead); relu and hardtanh write with their own op."""
    if not inplace:
        return f(input)
    if dyn.is_grad_enabled() and input.requires_grad:
        return input.copy_(f(input.clone()))
    return input.copy_(f(input))


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    check_tensor("leaky_relu", "input", input)
    return _inplace(input, lambda x: dyn.where(x > 0, x, x * negative_slope), inplace)


def prelu(input, weight):
    """weight has one element or one per channel (dim 1 of input)."""
    check_tensor("prelu", "input", input)
    check_tensor("prelu", "weight", weight)
    if weight.numel() != 1:
        if input.ndim < 2 or weight.numel() != input.shape[1]:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {weight.numel()} "
                f"and channel size = {input.shape[1] if input.ndim >= 2 else 1}.")
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2))
    return dyn.where(input > 0, input, input * weight)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    check_tensor("hardtanh", "input", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def elu(input, alpha=1.0, inplace=False):
    check_tensor("elu", "input", input)
    return _inplace(input, lambda x: dyn.where(x > 0, x, x.clamp(max=0.0).expm1() * alpha), inplace)


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _inplace(input, lambda x: elu(x, alpha) * scale, inplace)


def celu(input, alpha=1.0, inplace=False):
    check_tensor("celu", "input", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu's alpha must not be 0")
    return _inplace(input, lambda x: dyn.where(x > 0, x, (x.clamp(max=0.0) / alpha).expm1() * alpha), inplace)


def gelu(input, approximate="none"):
    check_tensor("gelu", "input", input)
    if approximate == "none":
        return input.gelu()
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return input * 0.5 * (inner.tanh() + 1.0)
    raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")


def silu(input, inplace=False):
    return _inplace(input, lambda x: x.silu(), inplace)


def mish(input, inplace=False):
    return _inplace(input, lambda x: x * softplus(x).tanh(), inplace)


def hardsigmoid(input, inplace=False):
    return _inplace(input, lambda x: (x / 6.0 + 0.5).clamp(0.0, 1.0), inplace)


def hardswish(input, inplace=False):
    return _inplace(input, lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def softsign(input):
    return input / (input.abs() + 1.0)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (as PyTorch)."""
    check_tensor("softplus", "input", input)
    bx = input * beta
    soft = bx.clamp(max=threshold).exp().log1p() / beta
    return dyn.where(bx > threshold, input, soft)


def logsigmoid(input):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): finite for large |x|. Both branches are
    chosen with x < 0, as PyTorch's derivative chooses them, so that the gradient at 0 is 1/2."""
    check_tensor("logsigmoid", "input", input)
    neg = input < 0
    z = dyn.zeros((), dtype=input.dtype)
    return dyn.where(neg, input, z) - dyn.where(neg, input, -input).exp().log1p()


def threshold(input, threshold, value, inplace=False):
    return _inplace(input, lambda x: dyn.where(x > threshold, x, dyn.full((), value, dtype=x.dtype)), inplace)


def glu(input, dim=-1):
    check_tensor("glu", "input", input)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} is size {n}")
    return _half(input, dim, 0) * _half(input, dim, 1).sigmoid()


def _half(x, dim, which):
    n = x.shape[dim] // 2
    index = [slice(None)] * x.ndim
    index[dim] = slice(which * n, (which + 1) * n)
    return x[tuple(index)]


def _softmax_dim(ndim):
    # PyTorch's implicit dim (deprecated): 0 for 0-, 1- and 3-D input, else 1.
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.softmax(_softmax_dim(input.ndim) if dim is None else dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return (-input).softmax(_softmax_dim(input.ndim) if dim is None else dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return input.log_softmax(_softmax_dim(input.ndim) if dim is None else dim, dtype=dtype)


def tanhshrink(input):
    return input - input.tanh()


def hardshrink(input, lambd=0.5):
    return dyn.where(input.abs() > lambd, input, dyn.zeros((), dtype=input.dtype))


def softshrink(input, lambd=0.5):
    if lambd < 0:
        legacy = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}
        name = str(input.dtype).split(".")[-1]
        raise RuntimeError(f"lambda must be in range [0, {dyn.finfo(input.dtype).max:g}] for input dtype "
                           f"{legacy.get(name, name)}, but found {lambd:g}")
    z = dyn.zeros((), dtype=input.dtype)
    return dyn.where(input > lambd, input - lambd, dyn.where(input < -lambd, input + lambd, z))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a slope drawn uniformly from [lower, upper] per element in training, their
    mean in evaluation."""
    if training:
        slope = dyn.empty(input.shape, dtype=input.dtype).uniform_(lower, upper)
        return _inplace(input, lambda x: dyn.where(x >= 0, x, x * slope), inplace)
    return _inplace(input, lambda x: leaky_relu(x, (lower + upper) / 2), inplace)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    gumbels = -dyn.empty(logits.shape, dtype=logits.dtype).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = dyn.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
