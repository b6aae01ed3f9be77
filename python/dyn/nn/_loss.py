"""Loss functions of dyn.nn.functional, with PyTorch's reductions, weights and ignore_index.

Class-index losses move the class dim (dim 1 of [N, C, d1, ...], dim 0 of [C]) last and pick
each target's log-probability with gather. Ignored targets are replaced by class 0 before the
gather and masked out after it; 'mean' divides by the summed weights of the targets kept.
"""
import dyn
from dyn.autograd import Function

from ._activation import logsigmoid
from ._util import check_tensor, legacy_reduction, reduce_loss


def _check_same_size(fn, input, target):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{fn}: Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")


def _classes_last(fn, input, target):
    """input [N, C, d...] or [C] -> ([M, C], target [M], shape of the unreduced loss)."""
    if input.ndim == 0:
        raise ValueError(f"{fn}: expected input with at least 1 dimension (the classes), got a 0-d tensor")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(f"{fn}: for input of shape [C] the target must be 0-d, got shape {list(target.shape)}")
        return input.unsqueeze(0), target.reshape(1), ()
    n, c = input.shape[0], input.shape[1]
    expected = (n,) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        if target.ndim >= 1 and target.shape[0] != n:
            raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({target.shape[0]}).")
        raise RuntimeError(f"{fn}: expected target of shape {list(expected)}, got {list(target.shape)}")
    if input.ndim > 2:
        input = input.permute(0, *range(2, input.ndim), 1)
    return input.reshape(-1, c), target.reshape(-1), expected


def _check_index_target(fn, target):
    """The class indices as int64: PyTorch takes Long or Byte targets."""
    if target.dtype == dyn.uint8:
        return target.long()
    if target.dtype != dyn.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_LEGACY.get(target.dtype, target.dtype)}"
                           f" ({fn}: convert it with target.long())")
    return target


_LEGACY = {dyn.int32: "Int", dyn.int16: "Short", dyn.int8: "Char", dyn.float32: "Float", dyn.float64: "Double",
           dyn.float16: "Half", dyn.bfloat16: "BFloat16", dyn.bool: "Bool"}


def _picked_nll(fn, input, target, weight, ignore_index):
    """(-input[target] * weight[target] with ignored entries 0, weight[target] with ignored 0, loss shape)."""
    flat, t, shape = _classes_last(fn, input, target)
    c = flat.shape[1]
    if weight is not None and tuple(weight.shape) != (c,):
        raise RuntimeError(f"{fn}: weight tensor should be defined either for all {c} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    keep = t != ignore_index
    safe = dyn.where(keep, t, dyn.zeros((), dtype=dyn.int64))
    picked = flat.gather(1, safe.unsqueeze(1)).squeeze(1)
    zero = dyn.zeros((), dtype=flat.dtype)
    if weight is None:
        return dyn.where(keep, -picked, zero), keep.to(flat.dtype), shape
    w = dyn.where(keep, weight[safe], zero)
    return dyn.where(keep, -picked * w, zero), w, shape


def _reduce_weighted(loss, w, shape, reduction):
    if reduction == "none":
        return loss.reshape(shape)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        # sum(loss) / sum(w), written as a ratio of means: with no weights and nothing ignored w.mean() is
        # exactly 1, so the result is bitwise loss.mean()
        return loss.mean() / w.mean()
    raise ValueError(f"{reduction} is not a valid value for reduction: expected 'mean', 'sum' or 'none'")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] * weight[target[n]] for log-probabilities input [N, C, d...] or [C]."""
    check_tensor("nll_loss", "input", input)
    check_tensor("nll_loss", "target", target)
    check_tensor("nll_loss", "weight", weight, optional=True)
    target = _check_index_target("nll_loss", target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss, w, shape = _picked_nll("nll_loss", input, target, weight, ignore_index)
    return _reduce_weighted(loss, w, shape, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax over the classes (dim 1, or dim 0 of [C]) then nll_loss; or, for a floating target of
    input's shape, -sum(target * log_softmax * weight) over the classes (probability targets)."""
    check_tensor("cross_entropy", "input", input)
    check_tensor("cross_entropy", "target", target)
    check_tensor("cross_entropy", "weight", weight, optional=True)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 0:
        raise ValueError("cross_entropy: expected input with at least 1 dimension (the classes), got a 0-d tensor")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    logp = input.log_softmax(class_dim)
    wshape = (c,) + (1,) * (input.ndim - class_dim - 1)
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"cross_entropy: probability targets must have the input's shape "
                               f"{list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1.0 - label_smoothing) + label_smoothing / c
        terms = logp * target if weight is None else logp * target * weight.reshape(wshape)
        return reduce_loss(-terms.sum(class_dim), reduction)  # 'mean' averages over the elements, not weights
    target = _check_index_target("cross_entropy", target)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return nll
    # the uniform part: -sum_c weight[c] * logp[c] at every kept position, reduced like nll
    flat, t, shape = _classes_last("cross_entropy", logp, target)
    keep = t != ignore_index
    wsum = -(flat if weight is None else flat * weight).sum(1)
    smooth = dyn.where(keep, wsum, dyn.zeros((), dtype=flat.dtype))
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / keep.sum()
        else:
            safe = dyn.where(keep, t, dyn.zeros((), dtype=dyn.int64))
            smooth = smooth.sum() / dyn.where(keep, weight[safe], dyn.zeros((), dtype=weight.dtype)).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        smooth = smooth.reshape(shape)
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / c)


def _bce(input, target):
    # PyTorch's order of operations (and so its signed zeros): (t - 1) * log1p(-x) - t * log(x).
    return (target - 1.0) * (-input).log1p().clamp(min=-100.0) - target * input.log().clamp(min=-100.0)


class BinaryCrossEntropy(Function):
    """PyTorch's derivatives of the elementwise loss: grad * (x - t) / max((1 - x) * x, 1e-12) for the
    input (0 where x is exactly 0 or 1 and equals t, where the clamped logs' own derivatives give
    inf * 0 = NaN), and grad * -logit(x) for the target."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        return _bce(input, target)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        gi = gt = None
        if ctx.needs_input_grad[0]:
            # PyTorch's EPSILON is a float: 1e-12 rounded to float32, in float64 too
            gi = grad * (input - target) / ((1.0 - input) * input).clamp(min=9.999999960041972e-13)
        if ctx.needs_input_grad[1]:
            gt = grad * -(input / (1.0 - input)).log()  # -logit(x)
        return gi, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-weight * (target * log(input) + (1 - target) * log(1 - input)), each log clamped at -100 as PyTorch,
    with PyTorch's derivatives (finite where the input is exactly 0 or 1)."""
    check_tensor("binary_cross_entropy", "input", input)
    check_tensor("binary_cross_entropy", "target", target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_same_size("binary_cross_entropy", input, target)
    if dyn.is_grad_enabled() and (input.requires_grad or target.requires_grad):
        loss = BinaryCrossEntropy.apply(input, target)
    else:
        loss = _bce(input, target)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) in the stable form
    (1 - target) * input - (1 + (pos_weight - 1) * target) * logsigmoid(input)."""
    check_tensor("binary_cross_entropy_with_logits", "input", input)
    check_tensor("binary_cross_entropy_with_logits", "target", target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    log_sig = logsigmoid(input)
    if pos_weight is None:
        loss = (1.0 - target) * input - log_sig
    else:
        loss = (1.0 - target) * input - ((pos_weight - 1.0) * target + 1.0) * log_sig
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    check_tensor("mse_loss", "input", input)
    check_tensor("mse_loss", "target", target)
    diff = input - target
    loss = diff * diff
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    check_tensor("l1_loss", "input", input)
    check_tensor("l1_loss", "target", target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta (beta = 0: l1_loss)."""
    check_tensor("smooth_l1_loss", "input", input)
    check_tensor("smooth_l1_loss", "target", target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    d = (input - target).abs()
    return reduce_loss(dyn.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 * d^2 where |d| < delta, else delta * (|d| - 0.5 * delta)."""
    check_tensor("huber_loss", "input", input)
    check_tensor("huber_loss", "target", target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = dyn.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log(target) - input) (0 where target is 0); input holds log-probabilities.
    reduction 'batchmean' divides the sum by the batch size (input.shape[0])."""
    check_tensor("kl_div", "input", input)
    check_tensor("kl_div", "target", target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0  # xlogy: 0 * log(0) counts as 0
        safe_log = dyn.where(positive, target, dyn.ones((), dtype=target.dtype)).log()
        loss = dyn.where(positive, target * safe_log, dyn.zeros((), dtype=target.dtype)) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim > 0 else loss.sum()
    return reduce_loss(loss, reduction)
