"""Normalizations of dyn.nn.functional: layer_norm, rms_norm, group_norm, batch_norm, normalize."""
import _dyn
import dyn

from .._dtypes import computes_in_float32
from ._util import check_tensor


def _moments(x, dims):
    """(mean, x - mean, biased variance) over dims, all keepdim."""
    mean = x.mean(dim=dims, keepdim=True)
    centered = x - mean
    return mean, centered, (centered * centered).mean(dim=dims, keepdim=True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    check_tensor("layer_norm", "input", input)
    check_tensor("layer_norm", "weight", weight, optional=True)
    check_tensor("layer_norm", "bias", bias, optional=True)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if tuple(input.shape[-n:]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size{list(input.shape)}"
        )
    # One row kernel (core/ops/reduce.cpp): moments in double, then one pass for the output.
    return _dyn._layer_norm(input, n, eps, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    check_tensor("rms_norm", "input", input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(-len(tuple(normalized_shape)), 0))
    if eps is None:  # the eps of the dtype the sums run in: float32 for float16 and bfloat16
        eps = dyn.finfo(dyn.float64 if input.dtype == dyn.float64 else dyn.float32).eps
    if input.dtype in (dyn.float16, dyn.bfloat16):
        w = weight.float() if weight is not None and weight.dtype == input.dtype else weight
        return rms_norm(input.float(), normalized_shape, w, eps).to(input.dtype)
    out = input * (input * input).mean(dim=dims, keepdim=True).add(eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out


def _channel_shape(input):
    """[1, C, 1, ...]: a per-channel vector broadcast against input [N, C, *]."""
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    check_tensor("group_norm", "input", input)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    grouped = input.reshape(n, num_groups, -1)
    _, centered, var = _moments(grouped, (2,))
    out = (centered * (var + eps).rsqrt()).reshape(tuple(input.shape))
    if weight is not None:
        out = out * weight.reshape(_channel_shape(input))
    if bias is not None:
        out = out + bias.reshape(_channel_shape(input))
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalizes each channel (dim 1) over all other dims.

    training: batch statistics (biased variance); running_mean/var, when given, move toward the batch mean
    and the unbiased batch variance by momentum (a float, or a 0-d tensor so that BatchNorm's cumulative
    average needs no graph break). Otherwise: the running statistics.
    """
    check_tensor("batch_norm", "input", input)
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected input of shape [N, C, *], got {list(input.shape)}")
    shape = _channel_shape(input)
    if training:
        dims = (0,) + tuple(range(2, input.ndim))
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        mean, centered, var = _moments(input, dims)
        out = centered * (var + eps).rsqrt()
        if running_mean is not None or running_var is not None:
            with dyn.no_grad():
                if running_mean is not None:
                    running_mean.copy_(running_mean * (1 - momentum) + mean.reshape(-1) * momentum)
                if running_var is not None:
                    unbiased = var.reshape(-1) * (count / (count - 1))
                    running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be defined when training=False")
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each (sample, channel) over the spatial dims (running statistics not supported)."""
    check_tensor("instance_norm", "input", input)
    if not use_input_stats or running_mean is not None or running_var is not None:
        raise NotImplementedError("instance_norm: running statistics are not supported by dyn")
    _, centered, var = _moments(input, tuple(range(2, input.ndim)))
    out = centered * (var + eps).rsqrt()
    shape = _channel_shape(input)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


@computes_in_float32
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    check_tensor("normalize", "input", input)
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported by dyn")
    if p == 2:
        # sqrt(max(sum x^2, eps^2)) equals max(norm, eps), and the clamp keeps a zero vector's gradient finite
        norm = (input * input).sum(dim, keepdim=True).clamp(min=eps * eps).sqrt()
    elif p == float("inf"):
        norm = input.abs().amax(dim, keepdim=True).clamp(min=eps)
    elif p == 1:
        norm = input.abs().sum(dim, keepdim=True).clamp(min=eps)
    else:
        norm = input.abs().pow(p).sum(dim, keepdim=True).clamp(min=eps ** p).pow(1.0 / p)
    return input / norm


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each channel divided by (k + alpha * the mean of squares over size neighbouring channels)^beta."""
    check_tensor("local_response_norm", "input", input)
    if input.ndim < 3:
        # (PyTorch's message, with the spaces of its source's line continuation)
        raise ValueError(f"Expected 3D or higher dimensionality {' ' * 24} input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    from ._conv import pad
    from ._pool import avg_pool2d

    sizes = input.shape
    div = (input * input).reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).reshape(sizes)
    div = (div * alpha + k).pow(beta)
    return input / div
