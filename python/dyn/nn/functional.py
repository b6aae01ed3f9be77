"""dyn.nn.functional: PyTorch's functional ops, composed from dyn's primitive ops."""
import dyn


def _tensor(fn, name, x, optional=False):
    if optional and x is None:
        return
    if not isinstance(x, dyn.Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def relu(input, inplace=False):
    if inplace:
        return input.copy_(input.relu())
    return input.relu()


def gelu(input, approximate="none"):
    if approximate != "none":
        raise ValueError(f"gelu: dyn supports approximate='none' only, got {approximate!r}")
    return input.gelu()


def silu(input, inplace=False):
    return input.silu()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def softmax(input, dim, dtype=None):
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return input.log_softmax(dim, dtype=dtype)


def linear(input, weight, bias=None):
    _tensor("linear", "input", input)
    _tensor("linear", "weight", weight)
    _tensor("linear", "bias", bias, optional=True)
    out = input @ weight.t() if weight.ndim == 2 else input @ weight
    if bias is not None:
        out = out + bias
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    _tensor("layer_norm", "input", input)
    _tensor("layer_norm", "weight", weight, optional=True)
    _tensor("layer_norm", "bias", bias, optional=True)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if tuple(input.shape[-n:]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size{list(input.shape)}"
        )
    dims = tuple(range(-n, 0))
    mean = input.mean(dim=dims, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(dim=dims, keepdim=True)
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    _tensor("rms_norm", "input", input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(-len(tuple(normalized_shape)), 0))
    if eps is None:
        eps = 1.1920928955078125e-07 if input.dtype == dyn.float32 else 2.220446049250313e-16
    out = input * (input * input).mean(dim=dims, keepdim=True).add(eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction: expected 'mean', 'sum' or 'none'")


def mse_loss(input, target, reduction="mean"):
    _tensor("mse_loss", "input", input)
    _tensor("mse_loss", "target", target)
    diff = input - target
    return _reduce(diff * diff, reduction)


def cross_entropy(input, target, reduction="mean"):
    """input: [N, C] logits (or [C]); target: [N] class indices (int64)."""
    _tensor("cross_entropy", "input", input)
    _tensor("cross_entropy", "target", target)
    if target.dtype != dyn.int64:
        raise RuntimeError(
            f"cross_entropy: expected target of class indices with dtype dyn.int64, got {target.dtype}; "
            "probability targets are not supported"
        )
    if input.ndim == 1:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if input.ndim != 2:
        raise RuntimeError(f"cross_entropy: expected input of shape [N, C] or [C], got {list(input.shape)}")
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    logp = input.log_softmax(1)
    picked = logp.gather(1, target.unsqueeze(1)).squeeze(1)
    return _reduce(-picked, reduction)


def dropout(input, p=0.5, training=True, inplace=False):
    _tensor("dropout", "input", input)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = dyn.rand_like(input) >= p
    out = input * keep * (1.0 / (1.0 - p))
    if inplace:
        return input.copy_(out)
    return out


def embedding(input, weight):
    _tensor("embedding", "input", input)
    _tensor("embedding", "weight", weight)
    return weight[input]
