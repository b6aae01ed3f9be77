"""Statistics and norms of dyn's namespace and Tensor methods (var, std, norm, prod, logsumexp,
median, mode, aminmax, ...), composed of the engine's ops as _ops.py's functions are."""
import builtins
import collections
import math
import numbers

import _dyn

from ._dtypes import computes_in_float32
from ._ops import _dim, method, sort, sort_return, unbind


# ---- statistics and norms ----

def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _reduced_count(input, dim):
    if dim is None:
        return input.numel()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = 1
    for d in dims:
        n *= input.shape[_dim(d, input.dim())]
    return n


@method
@computes_in_float32
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var(unbiased)
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    mean = input.mean(dim, keepdim=True) if dim is not None else input.mean()
    d = input - mean
    s = (d * d).sum(dim, keepdim=keepdim) if dim is not None else (d * d).sum()
    return s / builtins.max(_reduced_count(input, dim) - c, 0)


@method
@computes_in_float32
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


@method
@computes_in_float32
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), (
        input.mean(dim, keepdim=keepdim) if dim is not None else input.mean())


@method
@computes_in_float32
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return v.sqrt(), m


@method
@computes_in_float32
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over dim (all elements when None); 'fro' is the 2-norm."""
    if dtype is not None:
        input = input.to(dtype)
    kw = {"keepdim": keepdim} if dim is not None else {}
    args = (dim,) if dim is not None else ()
    a = input.abs()
    if p in ("fro", 2, 2.0):
        return (input * input).sum(*args, **kw).sqrt()
    if p == 1:
        return a.sum(*args, **kw)
    if p in (math.inf, "inf"):
        return a.amax(*args, **kw)
    if p == -math.inf:
        return a.amin(*args, **kw)
    if p == 0:
        return (input != 0).to(input.dtype).sum(*args, **kw)
    if isinstance(p, numbers.Number):
        return a.pow(p).sum(*args, **kw).pow(1.0 / p)
    raise NotImplementedError(f"norm(p={p!r}) is not supported by dyn; use p='fro', 1, 2, inf or a number")


@method
def dist(input, other, p=2):
    return norm(input - other, p)


@method
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of elements: a sequential product along one dim, as repeated multiplies."""
    if dtype is not None:
        input = input.to(dtype)
    elif not input.dtype.is_floating_point and input.dtype != _dyn.int64:
        input = input.to(_dyn.int64)  # integers multiply in int64, as PyTorch's
    if dim is None:
        return prod(input.flatten(), 0)
    d = _dim(dim, input.dim())
    out = None
    for t in unbind(input, d):
        out = t if out is None else out * t
    if out is None:
        shape = list(input.shape)
        del shape[d]
        out = _dyn.ones(*shape, dtype=input.dtype if input.dtype.is_floating_point else _dyn.int64)
    elif not input.dtype.is_floating_point:
        out = out.to(_dyn.int64)
    return out.unsqueeze(d) if keepdim else out


@method
def logsumexp(input, dim, keepdim=False):
    m = input.amax(dim, keepdim=True)
    m = _dyn.where(m.abs() == math.inf, _dyn.zeros((), dtype=m.dtype), m).detach()
    out = (input - m).exp().sum(dim, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dim) if isinstance(dim, int) else out.view(
        *[s for i, s in enumerate(out.shape) if i not in {_dim(d, input.dim()) for d in dim}])


def _median(input, dim, keepdim, ignore_nan):
    """The lower median; a row with NaN gives its first NaN (median) or the median of the rest
    (nanmedian, NaN when all are). The sort is stable and puts NaN last, so the k-th sorted element
    is picked by a gather: no value leaves the graph."""
    if dim is None:
        return _median(input.flatten(), 0, False, ignore_nan)[0]
    d = _dim(dim, input.dim())
    v, i = sort(input, d, stable=True)
    n = input.shape[d]
    if input.dtype.is_floating_point:
        nans = (input != input).sum(d, keepdim=True)
        valid = n - nans
        if ignore_nan:
            k = ((valid - 1) // 2).clamp(min=0)
        else:
            k = _dyn.where(nans > 0, valid, _dyn.full((), (n - 1) // 2, dtype=nans.dtype))
    else:
        k = _dyn.full([s if j != d else 1 for j, s in enumerate(input.shape)], (n - 1) // 2, dtype=_dyn.int64)
    v, i = v.gather(d, k), i.gather(d, k)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return sort_return(v, i)


@method
def median(input, dim=None, keepdim=False):
    """The lower median (as PyTorch; NaN where a row has one); with dim, (values, indices)."""
    return _median(input, dim, keepdim, False)


@method
def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN where a row is all NaN)."""
    return _median(input, dim, keepdim, True)


@method
def aminmax(input, *, dim=None, keepdim=False):
    r = collections.namedtuple("aminmax", ["min", "max"])
    if dim is None:
        return r(input.amin(), input.amax())
    return r(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))


