"""torch.functional's and the search / counting functions real programs reach for: broadcasting
helpers, tensordot, cdist, unflatten, count_nonzero, isin, take_along_dim, masked_select,
kthvalue, searchsorted, bucketize, quantile and histc.

Each is composed of the engine's ops (so it is traced, compiled and differentiated like any op
sequence) and registered as dyn.NAME and, where PyTorch has one, Tensor.NAME. Errors and results
follow PyTorch 2.15.
"""
import builtins
import collections
import math

import _dyn
from _dyn import Tensor

from ._ops import method

kthvalue_return = collections.namedtuple("kthvalue", ["values", "indices"])


def _size(shape):
    return tuple(int(s) for s in shape)


def _wrap_dim(dim, ndim):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


# Functions that PyTorch has as torch.NAME only (no Tensor method): exported by dyn/__init__.py.
FUNCTIONS = {}


def function(f):
    FUNCTIONS[f.__name__] = f
    return f


@function
def broadcast_shapes(*shapes):
    """The shape all the given shapes broadcast to (ints are 1-d shapes), as torch.broadcast_shapes."""
    out = []
    for k, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        for i, d in enumerate(reversed(s)):
            if d < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(s)}")
            if i == len(out):
                out.append(d)
            elif out[i] == 1:
                out[i] = d
            elif d != 1 and d != out[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {d} at {-1 - i}! Mismatching "
                                   f"argument at index {k} had {s}; but expected shape should be broadcastable to "
                                   f"{list(reversed(out))}")
    return _dyn.Size(tuple(reversed(out)))


@function
def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


@method
def broadcast_to(input, size):
    return input.expand(*_size(size))


@method
def unflatten(input, dim, sizes):
    """Splits dim into sizes (one of them may be -1)."""
    nd = builtins.max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    dim %= nd
    sizes = _size(sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (-1 not in sizes and known != input.shape[dim]) or (-1 in sizes and (known == 0 or input.shape[dim] % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({input.shape[dim]}) in the input tensor")
    shape = tuple(input.shape[:dim]) + sizes + tuple(input.shape[dim + 1:])
    return input.reshape(*shape)


@method
def count_nonzero(input, dim=None):
    nz = input != 0
    if dim is None:
        return nz.sum()
    return nz.sum(dim)


@function
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is among test_elements (a tensor or a number)."""
    if not isinstance(elements, Tensor):
        elements = _dyn.tensor(elements)
    if not isinstance(test_elements, Tensor):
        test_elements = _dyn.tensor(test_elements)
    flat = test_elements.reshape(-1)
    if flat.numel() == 0 or elements.numel() == 0:
        hit = _dyn.zeros(tuple(elements.shape), dtype=_dyn.bool)
    else:
        hit = (elements.unsqueeze(-1) == flat).any(-1)
    return hit.logical_not() if invert else hit


@method
def take_along_dim(input, indices, dim=None):
    """input.gather(dim, indices) with indices broadcast against input; dim=None: of the flattened input."""
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    nd = input.dim()
    dim = _wrap_dim(dim, nd)
    if indices.dim() != nd:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {nd} dimensions for input, and {indices.dim()} dimensions for indices")
    shape_i = list(broadcast_shapes(tuple(s for i, s in enumerate(input.shape) if i != dim),
                                    tuple(s for i, s in enumerate(indices.shape) if i != dim)))
    shape_in, shape_ix = list(shape_i), list(shape_i)
    shape_in.insert(dim, input.shape[dim])
    shape_ix.insert(dim, indices.shape[dim])
    return input.expand(*shape_in).gather(dim, indices.expand(*shape_ix))


@method
def masked_select(input, mask):
    """The elements where mask (broadcast with input) is True, as a 1-d tensor."""
    if mask.dtype != _dyn.bool:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(input.shape, mask.shape)
    return input.expand(*shape)[mask.expand(*shape)]


@method
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along dim (1-based) and its index."""
    nd = builtins.max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    n = input.shape[dim] if input.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim % nd}")
    values, indices = input.sort(dim, stable=True)
    if input.dim() == 0:
        return kthvalue_return(values, indices)
    v = values.narrow(dim, k - 1, 1)
    i = indices.narrow(dim, k - 1, 1)
    if not keepdim:
        v, i = v.squeeze(dim), i.squeeze(dim)
    return kthvalue_return(v, i)


def _count_below(sorted_sequence, values, right):
    """For each value, how many elements of the (sorted) innermost rows are < it (<= with right)."""
    # Counted as "not after it", so that a NaN value (which compares false) goes last, as in PyTorch.
    s, v = sorted_sequence.unsqueeze(-2), values.unsqueeze(-1)
    after = s > v if right else s >= v
    return after.logical_not().sum(-1)


@function
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value would be inserted into the innermost rows of sorted_sequence to keep them
    sorted (the leftmost place, or the rightmost with right=True / side='right')."""
    if out_int32:
        return searchsorted(sorted_sequence, input, right=right, side=side, sorter=sorter).to(_dyn.int32)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    values = _dyn.tensor(input, dtype=sorted_sequence.dtype) if scalar else input
    if sorted_sequence.dim() > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
                           f"{list(values.shape)}")
    if values.dim() == 0:
        return _count_below(sorted_sequence, values.reshape(1), right).reshape(())
    return _count_below(sorted_sequence, values, right)


@function
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of the bucket of 1-d boundaries each value falls into (as searchsorted)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@method
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q a float or a 1-d tensor in [0, 1]) along dim (of all elements when None),
    with PyTorch's interpolations: linear, lower, higher, nearest, midpoint. As PyTorch, the rank
    q * (n - 1) is computed in float64 and the interpolation weight rounded to the input's dtype."""
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ValueError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    qs = q if isinstance(q, Tensor) else _dyn.tensor(q, dtype=_dyn.float64)
    if qs.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    # q in the input's dtype, its rank in float64 (as PyTorch: 0.4 of 8 floats is 2.8000002)
    qv = qs.reshape(-1).to(input.dtype).double()
    for v in qs.reshape(-1).tolist():
        if not 0 <= v <= 1:  # NaN too
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {v}")
    d = -1 if dim is None else _wrap_dim(dim, input.dim())
    x = input.reshape(-1) if dim is None or input.dim() == 0 else input.movedim(d, -1)
    s = x.sort(-1).values
    n = s.shape[-1]
    ranks = qv * (n - 1)
    lo = ranks.floor().long()
    hi = ranks.ceil().long()
    lead = tuple(s.shape[:-1])
    m = qv.numel()

    def take(i):
        return s.unsqueeze(-2).expand(*lead, m, n).gather(-1, i.reshape(m, 1).expand(*lead, m, 1)).squeeze(-1)

    if interpolation == "lower":
        r = take(lo)
    elif interpolation == "higher":
        r = take(hi)
    elif interpolation == "nearest":
        r = take(ranks.round().long())
    elif interpolation == "midpoint":
        r = (take(lo) + take(hi)) * 0.5
    else:
        weight = (ranks - lo.double()).to(input.dtype)
        r = take(lo).lerp(take(hi), weight.expand(*lead, m))
    # NaN anywhere in a row makes its quantiles NaN, as in PyTorch.
    has_nan = x.isnan().any(-1, keepdim=True)
    r = _dyn.where(has_nan, _dyn.full((), float("nan"), dtype=r.dtype), r)
    r = r.movedim(-1, 0)  # the quantiles first
    if keepdim and input.dim() > 0:
        r = r.unsqueeze(d + 1 if d >= 0 else r.dim()) if dim is not None else \
            r.reshape((r.shape[0],) + (1,) * input.dim())
    if not isinstance(q, Tensor) or qs.dim() == 0:
        r = r.squeeze(0)
    return r


@method
def histc(input, bins=100, min=0, max=0):
    """A histogram of bins equal-width bins over [min, max] (the data's range when both are 0);
    elements outside are ignored, the last bin includes max."""
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for dimension 0")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"histogram_cpu" not implemented for \'{str(input.dtype).replace("dyn.", "")}\'')
    x = input.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.numel():
        lo, hi = x.min().item(), x.max().item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min, but got min {min} max {max}")
    inside = (x >= lo) & (x <= hi)
    # The bin in the input's dtype, in PyTorch's order: (x - lo) * bins / (hi - lo).
    b = ((x - lo) * bins / (hi - lo)).floor().long().clamp(0, bins - 1)
    ones = inside.to(input.dtype)
    return _dyn.zeros(bins, dtype=input.dtype).index_add(0, b, ones)


@function
def tensordot(a, b, dims=2, out=None):
    """Sums the products over the last dims of a and the first of b (dims an int), or over the
    listed dims (a pair of lists)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [_wrap_dim(d, a.dim()) for d in da]
    db = [_wrap_dim(d, b.dim()) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                               f"and second has size {b.shape[y]} in dim {y}")
    ka = [d for d in range(a.dim()) if d not in da]
    kb = [d for d in range(b.dim()) if d not in db]
    m = math.prod(a.shape[d] for d in ka)
    k = math.prod(a.shape[d] for d in da)
    n = math.prod(b.shape[d] for d in kb)
    pa = a.permute(*(ka + da)).reshape(m, k)
    pb = b.permute(*(db + kb)).reshape(k, n)
    r = (pa @ pb).reshape(*([a.shape[d] for d in ka] + [b.shape[d] for d in kb]))
    if out is not None:
        return out.copy_(r)
    return r


@function
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each pair of rows of x1 [.., P, M] and x2 [.., R, M]."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    for t, which in ((x1, "X1"), (x2, "X2")):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {which} got: "
                               f"{str(t.dtype).replace('dyn.', '').capitalize()}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {str(x1.dtype).replace('dyn.', '')} but found "
                           f"{str(x2.dtype).replace('dyn.', '')}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values")
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == float("inf"):
        # Each element at the maximum gets the whole gradient, as PyTorch's: the maximum (no
        # gradient) plus the zeros (diff - max) of those elements.
        m = diff.detach().amax(-1, keepdim=True)
        return (m + ((diff - m) * (diff.detach() == m).to(diff.dtype)).sum(-1, keepdim=True)).squeeze(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    return diff.pow(p).sum(-1).pow(1.0 / p)


def _nonzero(t):
    import dyn  # the package's nonzero (a graph break: its size is the data's)

    return dyn.nonzero(t)


def _index_positions(self, indices):
    """(k, linear index over the first k dims, broadcast index shape) of k int64 index tensors
    (bool masks become their positions); each checked against its dim's size."""
    idx = []
    for t in indices:
        t = t if isinstance(t, Tensor) else _dyn.tensor(t)
        if t.dtype == _dyn.bool:
            idx.extend(_nonzero(t).unbind(1))
        elif t.dtype != _dyn.int64:
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors")
        else:
            idx.append(t)
    k = len(idx)
    if k > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {k})")
    shape = broadcast_shapes(*(t.shape for t in idx))
    lin = None
    for d, t in enumerate(idx):
        n = self.shape[d]
        if t.numel() and (builtins.bool((t < -n).any()) or builtins.bool((t >= n).any())):
            bad = t[(t < -n) | (t >= n)].reshape(-1)[0].item()
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
        t = _dyn.where(t < 0, t + n, t).expand(*shape)
        lin = t if lin is None else lin * n + t
    return k, lin, shape


@method(function=False)
def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values, or += with accumulate=True (repeated positions add up)."""
    indices = tuple(indices)
    if not accumulate:
        self[indices if len(indices) != 1 else indices[0]] = values
        return self
    k, lin, shape = _index_positions(self, indices)
    rest = tuple(self.shape[k:])
    if not isinstance(values, Tensor):
        values = _dyn.tensor(values, dtype=self.dtype)
    src = values.expand(*(tuple(shape) + rest)).reshape(-1, *rest)
    base = self if self.is_contiguous() else self.contiguous()
    flat = base.view(-1, *rest)
    flat.index_add_(0, lin.reshape(-1), src.to(self.dtype))
    if base is not self:
        self.copy_(base)
    return self


@method
def index_put(input, indices, values, accumulate=False):
    return input.clone().index_put_(indices, values, accumulate)
