"""Argument checks and small helpers shared by the dyn.nn.functional implementation files."""
import _dyn
import dyn


def check_tensor(fn, name, x, optional=False):
    """TypeError naming fn and the argument unless x is a dyn.Tensor (or None when optional)."""
    if optional and x is None:
        return
    if not isinstance(x, dyn.Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def reduce_loss(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction: expected 'mean', 'sum' or 'none'")


def legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated size_average/reduce flags, mapped onto reduction."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def ntuple(value, n, name):
    """An int (or a sequence of n ints) as a tuple of n ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {value!r}")
    return value


def masked_fill(x, mask, value):
    """x with value where mask is True (Tensor.masked_fill, composed)."""
    return dyn.where(mask, dyn.full((), value, dtype=x.dtype), x)


def default_float(dtype):
    return dtype if dtype is not None else dyn.get_default_dtype()


def tracing():
    """True inside a dyn.compile region: checks that read tensor values (a graph break) are skipped."""
    return _dyn._capture_active()
