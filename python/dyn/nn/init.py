"""dyn.nn.init: in-place initializations with PyTorch's names, arguments and formulas.

Each runs under no_grad and returns its tensor. Random draws come from dyn's generator, so
dyn.manual_seed makes them reproducible.
"""
import math
import warnings

import dyn


def _rand(tensor, generator, normal=False):
    """Uniform [0, 1) (or standard normal) values of tensor's shape and dtype."""
    if generator is None:
        return dyn.randn_like(tensor) if normal else dyn.rand_like(tensor)
    make = dyn.randn if normal else dyn.rand
    return make(*tensor.shape, dtype=tensor.dtype, generator=generator)


def _no_op_if_empty(tensor):
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return True
    return False


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear_fns = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (dims 2.. are the field)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills with values drawn from U(a, b)."""
    with dyn.no_grad():
        return tensor.copy_(_rand(tensor, generator) * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills with values drawn from N(mean, std^2)."""
    with dyn.no_grad():
        return tensor.copy_(_rand(tensor, generator, normal=True) * std + mean)


def _erfinv(y):
    """erf^-1 on (-1, 1) in float64: Winitzki's approximation refined by three Newton steps on erf."""
    a = 0.147
    ln = (1.0 - y * y).log()
    t = ln * 0.5 + 2.0 / (math.pi * a)
    x = ((t * t - ln / a).sqrt() - t).sqrt()
    x = dyn.where(y < 0, -x, x)
    for _ in range(3):
        x = x - (x.erf() - y) / ((-x * x).exp() * (2.0 / math.sqrt(math.pi)))
    return x


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with N(mean, std^2) values truncated to [a, b], by the inverse CDF of a uniform draw."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with dyn.no_grad():
        lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
        u = _rand(tensor, generator).to(dyn.float64) * (2 * hi - 2 * lo) + (2 * lo - 1)
        u = u.clamp(-1.0 + 1e-15, 1.0 - 1e-15)
        x = _erfinv(u) * (std * math.sqrt(2.0)) + mean
        return tensor.copy_(x.clamp(a, b))


def constant_(tensor, val):
    with dyn.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with dyn.no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with dyn.no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-D tensor with the identity (ones on the main diagonal)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    n, m = tensor.shape
    with dyn.no_grad():
        return tensor.copy_(dyn.arange(n).reshape(n, 1) == dyn.arange(m).reshape(1, m))


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D conv weight so that the convolution is the identity on each group's channels."""
    import numpy as np

    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(sizes)
    center = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d) + center] = 1.0
    with dyn.no_grad():
        return tensor.copy_(dyn.tensor(values))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.); a is leaky_relu's negative slope."""
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan) (He et al.)."""
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fills with a (semi-)orthogonal matrix: the Q of the QR decomposition of a normal draw, with the
    signs fixed by R's diagonal (the QR runs in numpy: it is not a dyn op)."""
    import numpy as np

    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rand(dyn.empty(rows, cols, dtype=dyn.float64), generator, normal=True).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with dyn.no_grad():
        return tensor.copy_(dyn.tensor(np.ascontiguousarray(q * gain)).reshape(tuple(tensor.shape)))


# PyTorch's deprecated names without the trailing underscore
def _deprecated(fn):
    def alias(*args, **kwargs):
        warnings.warn(f"nn.init.{fn.__name__[:-1]} is now deprecated in favor of nn.init.{fn.__name__}.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    alias.__name__ = fn.__name__[:-1]
    return alias


uniform, normal, constant = _deprecated(uniform_), _deprecated(normal_), _deprecated(constant_)
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
