"""cumprod, cummax, cummin: sequential scans along a dim, written with dyn's ops (so they are
differentiable and compile like any op).

cumprod multiplies in float64 and rounds each partial product to the input's dtype, as PyTorch's
CPU kernel accumulates (acc_type<float> is double there), so the values are PyTorch's. cummax and
cummin keep the latest index of an equal value and stay at a NaN once one is met, as PyTorch does.
Each element is one step: long dims are slow, not wrong."""
import collections

import _dyn


from ._ops import method

cummax_return = collections.namedtuple("cummax", ["values", "indices"])
cummin_return = collections.namedtuple("cummin", ["values", "indices"])


def _dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


@method
def cumprod(input, dim, *, dtype=None):
    """The running product along dim."""
    x = input.to(dtype) if dtype is not None else input
    if dtype is None and not x.dtype.is_floating_point:
        x = x.to(_dyn.int64)  # integers multiply in int64, as PyTorch's
    if x.dim() == 0:
        return x.clone()
    d = _dim(dim, x.dim())
    n = x.shape[d]
    if n == 0:
        return x.clone()
    floating = x.dtype.is_floating_point
    acc = x.select(d, 0).to(_dyn.float64) if floating else x.select(d, 0)
    parts = [acc.to(x.dtype) if floating else acc]
    for i in range(1, n):
        xi = x.select(d, i)
        acc = acc * (xi.to(_dyn.float64) if floating else xi)
        parts.append(acc.to(x.dtype) if floating else acc)
    return _dyn.stack(parts, d)


def _cum_extreme(input, dim, larger, name):
    x = input
    if x.dim() == 0:
        return x.clone(), _dyn.zeros((), dtype=_dyn.int64)
    d = _dim(dim, x.dim())
    n = x.shape[d]
    if n == 0:
        return x.clone(), _dyn.zeros(tuple(x.shape), dtype=_dyn.int64)
    best = x.select(d, 0)
    idx = _dyn.zeros(tuple(best.shape), dtype=_dyn.int64)
    values, indices = [best], [idx]
    for i in range(1, n):
        xi = x.select(d, i)
        take = (xi >= best) if larger else (xi <= best)
        if xi.dtype.is_floating_point:
            take = take | xi.isnan() & best.isnan().logical_not()
        best = _dyn.where(take, xi, best)
        idx = _dyn.where(take, _dyn.full(tuple(idx.shape), i, dtype=_dyn.int64), idx)
        values.append(best)
        indices.append(idx)
    return _dyn.stack(values, d), _dyn.stack(indices, d)


@method
def cummax(input, dim):
    """(values, indices): the running maximum along dim and where it was found."""
    return cummax_return(*_cum_extreme(input, dim, True, "cummax"))


@method
def cummin(input, dim):
    """(values, indices): the running minimum along dim and where it was found."""
    return cummin_return(*_cum_extreme(input, dim, False, "cummin"))



