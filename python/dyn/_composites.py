"""Functions of torch's namespace (and Tensor methods) composed of other dyn functions, so that they
are differentiable and compile like the ops they are made of: pointwise extras (copysign, xlogy,
sinc, heaviside, logit, float_power...), nan-aware and windowed reductions (nansum, nanmean, diff,
cov, corrcoef, logcumsumexp), index helpers (tril_indices, scatter_reduce, index_fill, index_copy,
masked_scatter, take, unfold) and shape helpers (atleast_nd, kron, rot90), as PyTorch 2.15 defines
them."""
import builtins
import math

from _dyn import Tensor

import dyn

from ._ops import method


def _t(x, like):
    return x if isinstance(x, Tensor) else dyn.tensor(x, dtype=like.dtype if isinstance(like, Tensor) and
                                                        like.dtype.is_floating_point else None)


def _float(x):
    return x if x.dtype.is_floating_point else x.to(dyn.get_default_dtype())


# ---- pointwise ----

def _value_of(value, grad):
    """value's numbers with grad's gradient: for results whose formula PyTorch differentiates
    differently than the ops that give the values would (grad's value equals value where finite)."""
    delta = grad - grad.detach()
    # an infinite grad would give inf - inf = NaN: its elements get value's number and no gradient
    return value.detach() + dyn.where(grad.isfinite(), delta, dyn.zeros((), dtype=delta.dtype))


@method
def copysign(input, other):
    other = _t(other, input)
    a = _float(input).abs()
    neg = other.signbit() if isinstance(other, Tensor) else math.copysign(1.0, other) < 0
    out = dyn.where(neg, -a, a)
    if isinstance(other, Tensor) and other.requires_grad and dyn.is_grad_enabled():
        out = out + other.detach() * 0 * other  # PyTorch gives the sign's source a zero gradient
        out = dyn.where(neg, -a, a).detach() + (out - out.detach())
    return out


@method
def signbit(input):
    if not input.dtype.is_floating_point:
        return input < 0
    # -0.0 has its sign bit set: 1 / -0.0 is -inf
    return (input < 0) | ((input == 0) & ((1.0 / input) < 0))


@method
def xlogy(input, other):
    x, y = _t(input, other), _t(other, input)
    x, y = _float(x), _float(y)
    r = x * y.log()
    value = dyn.where(x == 0, dyn.zeros((), dtype=r.dtype), r)
    value = dyn.where(y != y, dyn.full((), math.nan, dtype=r.dtype), value)
    # PyTorch's derivative is x * log(y)'s, also where x == 0 (log y, and x / y for y)
    return _value_of(value, r) if r.requires_grad else value


@method
def sinc(input):
    x = _float(input)
    px = x * math.pi
    safe = dyn.where(x == 0, dyn.ones((), dtype=x.dtype), px)
    return dyn.where(x == 0, dyn.ones((), dtype=x.dtype), safe.sin() / safe)


@method
def heaviside(input, values):
    z = dyn.zeros((), dtype=input.dtype)
    o = dyn.ones((), dtype=input.dtype)
    return dyn.where(input == 0, values.to(input.dtype), dyn.where(input > 0, o, z))


@method
def logit(input, eps=None):
    x = _float(input)
    if eps is not None:
        x = x.clamp(eps, 1.0 - eps)
    return (x / (1.0 - x)).log()


@method
def positive(input):
    if input.dtype == dyn.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


@method
def float_power(input, exponent):
    base = input.to(dyn.float64) if isinstance(input, Tensor) else dyn.tensor(input, dtype=dyn.float64)
    e = exponent.to(dyn.float64) if isinstance(exponent, Tensor) else exponent
    return base ** e


@method
def logaddexp2(input, other):
    m = dyn.maximum(input, other)
    m = dyn.where(m.abs() == math.inf, dyn.zeros((), dtype=m.dtype), m).detach()
    return ((input - m).exp2() + (other - m).exp2()).log2() + m


# ---- reductions ----

@method
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = dyn.where(input != input, dyn.zeros((), dtype=input.dtype), input)
    return x.sum(dim, keepdim=keepdim, dtype=dtype) if dim is not None else x.sum(dtype=dtype)


@method
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not input.dtype.is_floating_point:
        legacy = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
        name = str(input.dtype).split(".")[-1]
        raise NotImplementedError(f"nanmean(): expected input to have floating point or complex dtype but got "
                                  f"{legacy.get(name, name)}")
    keep = input == input
    total = nansum(input, dim, keepdim, dtype=dtype)
    count = keep.sum(dim, keepdim=keepdim) if dim is not None else keep.sum()
    return total / count.to(total.dtype)


@method
def diff(input, n=1, dim=-1, prepend=None, append=None):
    if n < 0:
        raise RuntimeError(f"diff expects n to be non-negative, but got {n}")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = dyn.cat([p if p.dim() else p.expand(*input.shape[:dim % input.dim()], 1) for p in parts], dim) \
        if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        a, b = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = (a != b) if x.dtype == dyn.bool else a - b
    return x


@method
def logcumsumexp(input, dim):
    m = input.amax(dim, keepdim=True)
    m = dyn.where(m.abs() == math.inf, dyn.zeros((), dtype=m.dtype), m).detach()
    return (input - m).exp().cumsum(dim).log() + m


@method
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the variables (rows) over the observations (columns), as torch.cov."""
    x = input if input.dim() == 2 else input.reshape(1, -1)
    x = _float(x)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        avg = x.mean(1, keepdim=True)
        norm = n - correction
    else:
        wsum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights.to(x.dtype)).sum() / wsum
    xm = x - avg
    c = (xm * w if w is not None else xm) @ xm.t().conj() if hasattr(xm, "conj") else (
        xm * w if w is not None else xm) @ xm.t()
    c = c / (norm if isinstance(norm, Tensor) else builtins.max(norm, 0))
    return c.squeeze() if input.dim() < 2 else c


@method
def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)


# ---- indices ----

def _tri_indices(row, col, offset, lower, dtype):
    rows, cols = [], []
    for i in range(row):
        for j in range(col):
            if (j - i <= offset) if lower else (j - i >= offset):
                rows.append(i)
                cols.append(j)
    return dyn.tensor([rows, cols], dtype=dtype or dyn.int64).reshape(2, len(rows))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, True, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, False, dtype)


_REDUCE = ("sum", "prod", "mean", "amax", "amin")


@method
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Each src element reduced into input at index along dim: sum, prod, mean, amax or amin, with
    or without input's own value (include_self), as PyTorch's scatter_reduce."""
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = dim % builtins.max(input.dim(), 1)
    idx = index
    src = src.to(input.dtype)
    # one row of every index position: the target's flat position and the source value
    flat_shape = [s for s in input.shape]
    strides = [1] * input.dim()
    for k in range(input.dim() - 2, -1, -1):
        strides[k] = strides[k + 1] * flat_shape[k + 1]
    grids = dyn.meshgrid(*[dyn.arange(s) for s in idx.shape], indexing="ij") if idx.dim() else []
    pos = dyn.zeros(idx.shape, dtype=dyn.int64)
    for k in range(input.dim()):
        coord = idx if k == d else grids[k]
        pos = pos + coord * strides[k]
    pos, vals = pos.reshape(-1), src[tuple(slice(0, s) for s in idx.shape)].reshape(-1)
    n = input.numel()
    base = input.reshape(-1)
    touched = dyn.zeros(n, dtype=dyn.bool).index_fill(0, pos, True) if pos.numel() else \
        dyn.zeros(n, dtype=dyn.bool)
    if reduce in ("sum", "mean"):
        acc = dyn.zeros(n, dtype=input.dtype).index_add(0, pos, vals)
        cnt = dyn.zeros(n, dtype=input.dtype).index_add(0, pos, dyn.ones_like(vals))
        if include_self:
            acc, cnt = acc + base, cnt + 1
        out = acc
        if reduce == "mean":
            cnt = dyn.where(cnt == 0, dyn.ones((), dtype=cnt.dtype), cnt)
            out = acc / cnt if input.dtype.is_floating_point else acc.div(cnt, rounding_mode="floor")
        out = dyn.where(touched, out, base) if not include_self else out
    elif reduce in ("amax", "amin"):
        # Sorted by position, each position's values in order, the last one written is the max (or
        # min): scatter writes in order, the last write winning, as PyTorch's CPU kernel.
        with dyn.no_grad():
            by_value = vals.argsort(stable=True, descending=(reduce == "amin"))
            by_pos = pos[by_value].argsort(stable=True)
            order = by_value[by_pos]
            red = dyn.scatter(base, 0, pos[order], vals[order])
            if include_self:
                red = dyn.maximum(red, base) if reduce == "amax" else dyn.minimum(red, base)
            value = dyn.where(touched, red, base)
        if not (vals.requires_grad or base.requires_grad) or not dyn.is_grad_enabled():
            return value.reshape(input.shape)
        # The gradient goes to the elements equal to the result, shared among ties; input's own
        # element counts as a tie when equal, even with include_self=False (PyTorch's backward).
        # (where, not a product with the 0/1 mask: an infinite loser times 0 would be NaN)
        src_wins, self_wins = vals == value[pos], base == value
        ties = dyn.zeros(n, dtype=vals.dtype).index_add(0, pos, src_wins.to(vals.dtype)) + self_wins.to(base.dtype)
        ties = dyn.where(ties == 0, dyn.ones((), dtype=ties.dtype), ties)
        zero = dyn.zeros((), dtype=vals.dtype)
        share = dyn.zeros(n, dtype=vals.dtype).index_add(0, pos, dyn.where(src_wins, vals, zero) / ties[pos])
        if include_self:
            share = share + dyn.where(self_wins, base, zero) / ties
        out = _value_of(value, dyn.where(touched, share, base))
    else:  # prod: each position's values multiplied in order, one pass per repeat
        out = base.clone() if include_self else dyn.where(touched, dyn.ones((), dtype=base.dtype), base)
        order = pos.argsort(stable=True)
        pos_s, vals_s = pos[order], vals[order]
        rank = dyn.arange(pos_s.numel()) - dyn.searchsorted(pos_s, pos_s) if pos_s.numel() else pos_s
        for r in range(int(rank.amax()) + 1 if rank.numel() else 0):
            sel = rank == r
            p, v = pos_s[sel], vals_s[sel]
            out = out * dyn.ones(n, dtype=out.dtype).scatter(0, p, v)
    return out.reshape(input.shape)


@method(function=False)
def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    return input.copy_(scatter_reduce(input, dim, index, src, reduce, include_self=include_self))


@method
def index_fill(input, dim, index, value):
    d = dim % builtins.max(input.dim(), 1)
    mask_shape = [1] * input.dim()
    mask_shape[d] = input.shape[d]
    sel = dyn.zeros(input.shape[d], dtype=dyn.bool)
    if index.numel():
        sel = sel.index_add(0, index.reshape(-1), dyn.ones(index.numel(), dtype=dyn.bool)) if False else \
            (dyn.arange(input.shape[d]).unsqueeze(1) == (index.reshape(-1) % input.shape[d]).unsqueeze(0)).any(1)
    v = value if isinstance(value, Tensor) else dyn.tensor(value, dtype=input.dtype)
    return dyn.where(sel.reshape(mask_shape), v.to(input.dtype), input)


@method(function=False)
def index_fill_(input, dim, index, value):
    return input.copy_(index_fill(input, dim, index, value))


@method
def index_copy(input, dim, index, source):
    d = dim % builtins.max(input.dim(), 1)
    out = input
    for k, i in enumerate(index.reshape(-1).tolist()):
        sl = [slice(None)] * input.dim()
        sl[d] = i
        src = source.select(d, k) if source.dim() else source
        onehot = (dyn.arange(input.shape[d]) == i).reshape([input.shape[d] if j == d else 1
                                                             for j in range(input.dim())])
        out = dyn.where(onehot, src.unsqueeze(d).to(input.dtype), out)
    return out


@method(function=False)
def index_copy_(input, dim, index, source):
    return input.copy_(index_copy(input, dim, index, source))


@method
def masked_scatter(input, mask, source):
    """input's elements where mask is true replaced by source's first elements, in order."""
    m = mask.expand(input.shape) if mask.shape != input.shape else mask
    n = int(m.sum())
    if source.numel() < n:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    pos = m.reshape(-1).to(dyn.int64).cumsum(0) - 1
    picked = source.reshape(-1)[pos.clamp(min=0)]
    return dyn.where(m.reshape(-1), picked.to(input.dtype), input.reshape(-1)).reshape(input.shape)


@method(function=False)
def masked_scatter_(input, mask, source):
    return input.copy_(masked_scatter(input, mask, source))


@method
def take(input, index):
    return input.reshape(-1)[index]


@method(function=False)
def unfold(input, dimension, size, step):
    """Tensor.unfold: every window of `size` along dimension, `step` apart, as a new last dim."""
    d = dimension % builtins.max(input.dim(), 1)
    length = input.shape[d] if input.dim() else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    starts = range(0, length - size + 1, step)
    windows = [input.narrow(d, s, size).movedim(d, -1) for s in starts]
    return dyn.stack(windows, d)


# ---- shapes ----

def _atleast(k, tensors):
    def one(t):
        while t.dim() < k:
            t = t.unsqueeze(0) if t.dim() == 0 or k == 2 or (k == 3 and t.dim() == 1) else t.unsqueeze(-1)
        return t
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
        return tuple(one(t) for t in tensors)
    return one(tensors[0]) if len(tensors) == 1 else tuple(one(t) for t in tensors)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """(n,) -> (1, n, 1) and (m, n) -> (m, n, 1), as numpy and PyTorch shape them."""
    def one(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.reshape(1, -1, 1)
        if t.dim() == 2:
            return t.unsqueeze(-1)
        return t
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        return tuple(one(t) for t in tensors[0])
    return one(tensors[0]) if len(tensors) == 1 else tuple(one(t) for t in tensors)


@method
def kron(input, other):
    nd = builtins.max(input.dim(), other.dim())
    a = input.reshape((1,) * (nd - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.dim()) + tuple(other.shape))
    shape_a = []
    shape_b = []
    for sa, sb in zip(a.shape, b.shape):
        shape_a += [sa, 1]
        shape_b += [1, sb]
    out = a.reshape(shape_a) * b.reshape(shape_b)
    return out.reshape([sa * sb for sa, sb in zip(a.shape, b.shape)])


@method
def rot90(input, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = dims[0] % input.dim(), dims[1] % input.dim()
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0).flip(d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return input * beta + (mat @ vec) * alpha if beta != 0 else (mat @ vec) * alpha


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    outer = vec1.unsqueeze(1) * vec2.unsqueeze(0)
    return input * beta + outer * alpha if beta != 0 else outer * alpha


# ---- windows (PyTorch's formulas, in its order and in the window's dtype: its bits) ----

def _window(name, n, periodic, dtype, f):
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window length, got window_length={n}")
    dtype = dtype or dyn.get_default_dtype()
    if n == 0:
        return dyn.zeros(0, dtype=dtype)
    if n == 1:
        return dyn.ones(1, dtype=dtype)
    m = n + 1 if periodic else n  # a periodic window is the symmetric one of n + 1, its last point dropped
    w = f(dyn.arange(m, dtype=dtype), m)
    return w[:n] if periodic else w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype,
                   lambda k, m: (k * (2 * math.pi / (m - 1))).cos() * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    def f(k, m):
        w = k * (2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1
        return dyn.cat([w[:half], w[half:] * -1 + 2])
    return _window("bartlett_window", window_length, periodic, dtype, f)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    def f(k, m):
        w = k * (math.pi / (m - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, f)


FUNCTIONS = {f.__name__: f for f in (tril_indices, triu_indices, atleast_1d, atleast_2d, atleast_3d, addmv, addr,
                                      hann_window, hamming_window, bartlett_window, blackman_window)}
