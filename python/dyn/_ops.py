"""Tensor functions with PyTorch's signatures, built on the engine's ops.

Each is both dyn.NAME(input, ...) and the method Tensor.NAME(...). Those composed here from other
ops are traced, compiled and differentiated like any op sequence: compiled equals eager because
both run the same ops.
"""
import builtins
import collections
import math
import numbers

import _dyn
from _dyn import Tensor

from ._dtypes import computes_in_float32
from ._grad_mode import _GradMode

_methods = {}  # name -> function: installed on dyn.Tensor by install()


def method(fn=None, *, name=None, function=True):
    """Registers fn as Tensor.<name> and (when function) dyn.<name>."""

    def deco(f):
        f._dyn_function = function
        _methods[name or f.__name__] = f
        return f

    return deco(fn) if fn is not None else deco


def _dim(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], "
                         f"but got {dim})")
    return dim % max(ndim, 1)


def _dims_arg(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


sort_return = collections.namedtuple("sort", ["values", "indices"])
topk_return = collections.namedtuple("topk", ["values", "indices"])


# ---- scans and sorting ----

@method
def cumsum(input, dim, *, dtype=None):
    """Running sum along dim (integers and bools sum as int64)."""
    if dtype is not None:
        input = input.to(dtype)
    out = _dyn._cumsum(input, dim)  # integers sum in int64, kept in dtype= when it is given
    return out.to(dtype) if dtype is not None and out.dtype != dtype else out


@method
def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) sorted along dim; stable, NaN placed as the largest value."""
    return sort_return(*_dyn._sort(input, dim, descending))


@method
def argsort(input, dim=-1, descending=False, stable=False):
    return _dyn._sort(input, dim, descending)[1]


@method
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) elements along dim, in order, with their indices."""
    d = _dim(dim, input.dim())
    n = input.shape[d] if input.dim() else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range: k={k} for a dimension of size {n}")
    v, i = _dyn._sort(input, dim, largest)
    return topk_return(v.narrow(d, 0, k), i.narrow(d, 0, k))


@method
def msort(input):
    return sort(input, 0).values


# ---- scatter / gather family ----

def _scatter_src(input, index, src, value, fn):
    if (src is None) == (value is None):
        raise TypeError(f"{fn}() expects exactly one of src (a tensor) or value (a number)")
    if src is None or not isinstance(src, Tensor):
        v = value if src is None else src
        return _dyn.full(tuple(index.shape), v, dtype=input.dtype)
    return src


@method
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """A copy of input with src (or value) written at index along dim."""
    s = _scatter_src(input, index, src, value, "scatter")
    if reduce is None:
        return _dyn._scatter(input, dim, index, s, False)
    if reduce in ("add", "sum"):
        return _dyn._scatter(input, dim, index, s, True)
    raise NotImplementedError(f"scatter(reduce={reduce!r}) is not supported by dyn; use reduce='add' or scatter_add")


@method(function=False)
def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    return self.copy_(scatter(self, dim, index, src, value, reduce=reduce))


@method
def scatter_add(input, dim, index, src):
    return _dyn._scatter(input, dim, index, src, True)


@method(function=False)
def scatter_add_(self, dim, index, src):
    return self.copy_(_dyn._scatter(self, dim, index, src, True))


@method
def index_add(input, dim, index, source, *, alpha=1):
    if alpha != 1:
        source = source * alpha
    return _dyn._index_add(input, dim, index, source)


@method(function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    return self.copy_(index_add(self, dim, index, source, alpha=alpha))


@method
def masked_fill(input, mask, value):
    """input with value where mask is True (mask broadcasts)."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        value = value.to(input.dtype)
    else:
        value = _dyn.full((), value, dtype=input.dtype)
    if mask.dtype != _dyn.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    return _dyn.where(mask, value, input)


@method(function=False)
def masked_fill_(self, mask, value):
    return self.copy_(masked_fill(self, mask, value))


@method
def index_fill(input, dim, index, value):
    d = _dim(dim, input.dim())
    shape = [1] * input.dim()
    shape[d] = input.shape[d]
    hit = (_dyn.arange(input.shape[d]).view(-1, 1) == index.view(1, -1)).any(1).view(*shape)
    return masked_fill(input, hit, value)


# ---- triangles, flips, rolls, repeats ----

def _tri_mask(input, diagonal, lower):
    if input.dim() < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    r, c = input.shape[-2], input.shape[-1]
    rows = _dyn.arange(r).view(r, 1)
    cols = _dyn.arange(c).view(1, c)
    return (cols - rows <= diagonal) if lower else (cols - rows >= diagonal)


@method
def tril(input, diagonal=0):
    """The lower triangle (j - i <= diagonal) of the last two dims; zeros elsewhere."""
    return _dyn.where(_tri_mask(input, diagonal, True), input, _dyn.zeros((), dtype=input.dtype))


@method
def triu(input, diagonal=0):
    return _dyn.where(_tri_mask(input, diagonal, False), input, _dyn.zeros((), dtype=input.dtype))


@method(function=False)
def tril_(self, diagonal=0):
    return self.copy_(tril(self, diagonal))


@method(function=False)
def triu_(self, diagonal=0):
    return self.copy_(triu(self, diagonal))


@method
def flip(input, *dims):
    dims = _dims_arg(dims)
    out = input
    for d in dims:
        d = _dim(d, input.dim())
        n = input.shape[d]
        out = out.index_select(d, _dyn.arange(n - 1, -1, -1))
    return out


@method
def fliplr(input):
    return flip(input, 1)


@method
def flipud(input):
    return flip(input, 0)


@method
def roll(input, shifts, dims=None):
    if dims is None:
        return roll(input.flatten(), shifts, 0).view(*input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = input
    for s, d in zip(shifts, dims):
        d = _dim(d, input.dim())
        n = input.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = _dyn.cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out


@method(function=False)
def repeat(self, *sizes):
    sizes = _dims_arg(sizes)
    if len(sizes) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = self.view(*([1] * (len(sizes) - self.dim()) + list(self.shape)))
    # Interleave a broadcast dim before each dim, expand it, and merge: [a, b] * (r, s) -> [r*a, s*b].
    shape, expanded = [], []
    for r, n in zip(sizes, x.shape):
        shape += [1, n]
        expanded += [r, n]
    return x.view(*shape).expand(*expanded).reshape(*[r * n for r, n in zip(sizes, x.shape)])


@method
def repeat_interleave(input, repeats, dim=None):
    if not isinstance(repeats, int):
        raise NotImplementedError("repeat_interleave with a tensor of repeats is not supported by dyn; use an int")
    if dim is None:
        input, dim = input.flatten(), 0
    d = _dim(dim, input.dim())
    x = input.unsqueeze(d + 1)
    shape = list(x.shape)
    shape[d + 1] = repeats
    out = list(input.shape)
    out[d] *= repeats
    return x.expand(*shape).reshape(*out)


@method
def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return repeat(input, *dims)


# ---- splitting ----

def _dim_and_size(t, dim):
    """dim as an index into t's dims (negative dims count from the end), and t's size along it."""
    d = _dim(dim, t.dim())
    return d, t.shape[d]


@method
def narrow(input, dim, start, length):
    d, n = _dim_and_size(input, dim)
    if isinstance(start, Tensor):
        start = int(start)
    if start < 0:
        start += n
    if not (0 <= start and start + length <= n and length >= 0):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    idx = [builtins.slice(None)] * d + [builtins.slice(start, start + length)]
    return input[tuple(idx)]


def _pieces(t, d, sizes):
    out, at = [], 0
    for s in sizes:
        out.append(narrow(t, d, at, s))
        at += s
    return tuple(out)


@method
def split(tensor, split_size_or_sections, dim=0):
    d, n = _dim_and_size(tensor, dim)
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(s, n - i) for i in range(0, n, s)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    return _pieces(tensor, d, sizes)


@method
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    _, n = _dim_and_size(input, dim)
    return split(input, max(1, -(-n // chunks)), dim)


@method
def tensor_split(input, indices_or_sections, dim=0):
    d, n = _dim_and_size(input, dim)
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    else:
        bounds = [0] + [min(max(i, 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    return _pieces(input, d, sizes)


@method
def unbind(input, dim=0):
    d, n = _dim_and_size(input, dim)
    return tuple(input.select(d, i) for i in range(n))


@method(function=False)
def select(self, dim, index):
    d = _dim(dim, self.dim())
    return self[(builtins.slice(None),) * d + (index,)]


@method
def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    nd = input.dim()
    src = [_dim(s, nd) for s in src]
    dst = [_dim(s, nd) for s in dst]
    order = [None] * nd
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(i for i in range(nd) if i not in src)
    return input.permute(*[o if o is not None else next(rest) for o in order])


moveaxis = method(movedim, name="moveaxis")


@method
def swapaxes(input, axis0, axis1):
    return input.transpose(axis0, axis1)


swapdims = method(swapaxes, name="swapdims")


# ---- like-others ----

@method(function=False)
def view_as(self, other):
    return self.view(*other.shape)


@method(function=False)
def reshape_as(self, other):
    return self.reshape(*other.shape)


@method(function=False)
def type_as(self, other):
    return self.to(other.dtype)


@method(function=False)
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return _dyn.zeros(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@method(function=False)
def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return _dyn.ones(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@method(function=False)
def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return _dyn.empty(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@method(function=False)
def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    return _dyn.full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@method(function=False)
def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return _dyn.tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


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


@method
def median(input, dim=None, keepdim=False):
    """The lower median (as PyTorch); with dim, (values, indices)."""
    if dim is None:
        flat = input.flatten()
        return sort(flat).values[(flat.numel() - 1) // 2]
    d = _dim(dim, input.dim())
    v, i = sort(input, d)
    k = (input.shape[d] - 1) // 2
    v, i = v.narrow(d, k, 1), i.narrow(d, k, 1)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return sort_return(v, i)


@method
def aminmax(input, *, dim=None, keepdim=False):
    r = collections.namedtuple("aminmax", ["min", "max"])
    if dim is None:
        return r(input.amin(), input.amax())
    return r(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))


# ---- elementwise extras ----

@method
def square(input):
    return input * input


@method
def reciprocal(input):
    return 1.0 / input if input.dtype.is_floating_point else 1.0 / input.to(_dyn.get_default_dtype())


@method
def sign(input):
    z = _dyn.zeros((), dtype=input.dtype)
    return (input > z).to(input.dtype) - (input < z).to(input.dtype)


sgn = method(sign, name="sgn")


@method
def log2(input):
    return input.log() / math.log(2.0)


@method
def log10(input):
    return input.log() / math.log(10.0)


@method
def exp2(input):
    return 2.0 ** input


@method
def trunc(input):
    return _dyn.where(input < 0, input.ceil(), input.floor())


fix = method(trunc, name="fix")


@method
def frac(input):
    return input - trunc(input)


@method(name="round")
def _round(input, *, decimals=0):
    """Half to even, as PyTorch."""
    x = input * (10.0 ** decimals) if decimals else input
    f = x.floor()
    d = x - f
    half = d == 0.5
    odd = f.remainder(2.0) != 0
    r = _dyn.where(d > 0.5, f + 1.0, f)
    r = _dyn.where(half & odd, f + 1.0, r)
    return r / (10.0 ** decimals) if decimals else r


@method
def isnan(input):
    return input != input


@method
def isinf(input):
    return input.abs() == math.inf if input.dtype.is_floating_point else _dyn.zeros(*input.shape, dtype=_dyn.bool)


@method
def isfinite(input):
    if not input.dtype.is_floating_point:
        return _dyn.ones(*input.shape, dtype=_dyn.bool)
    return (input == input) & (input.abs() != math.inf)


@method
def isposinf(input):
    return input == math.inf


@method
def isneginf(input):
    return input == -math.inf


@method
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not input.dtype.is_floating_point:
        return input.clone()
    from ._dtypes import finfo  # imported after this module
    big = finfo(input.dtype).max
    out = _dyn.where(input != input, _dyn.full((), nan, dtype=input.dtype), input)
    out = _dyn.where(out == math.inf, _dyn.full((), big if posinf is None else posinf, dtype=input.dtype), out)
    return _dyn.where(out == -math.inf, _dyn.full((), -big if neginf is None else neginf, dtype=input.dtype), out)


@method
def clamp_min(input, min):
    return input.clamp(min=min)


@method
def clamp_max(input, max):
    return input.clamp(max=max)


@method
def lerp(input, end, weight):
    """PyTorch's two forms, which keep the ends exact: input + w * (end - input) for |w| < 0.5,
    else end - (end - input) * (1 - w) (1 - w in input's dtype)."""
    diff = end - input
    if isinstance(weight, Tensor):
        return _dyn.where(weight.abs() < 0.5, input + weight * diff, end - diff * (1 - weight))
    if abs(weight) < 0.5:
        return input + weight * diff
    return end - diff * (1 - _dyn.full((), weight, dtype=input.dtype))


@method
def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 * tensor2) if value != 1 else input + tensor1 * tensor2


@method
def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 / tensor2) if value != 1 else input + tensor1 / tensor2


@method(function=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    return self.copy_(addcmul(self, tensor1, tensor2, value=value))


@method(function=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return self.copy_(addcdiv(self, tensor1, tensor2, value=value))


@method(function=False)
def lerp_(self, end, weight):
    return self.copy_(lerp(self, end, weight))


@method
def true_divide(input, other):
    return input.div(other)


@method
def multiply(input, other):
    return input.mul(other)


@method
def subtract(input, other, *, alpha=1):
    return input.sub(other, alpha=alpha)


_true_div = _dyn.Tensor.div  # the op table's: true division (and in place), before div is wrapped below
_true_div_ = _dyn.Tensor.div_
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _type_name(dtype):
    return _TYPE_NAMES.get(str(dtype).replace("dyn.", ""), str(dtype))


def _rounded_div(input, other, rounding_mode):
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if not isinstance(input, _dyn.Tensor):
        input = _dyn.tensor(input)
    q = input.floor_divide(other)  # its dtype is the result's: integers stay integers
    if rounding_mode == "floor":
        return q
    if q.dtype.is_floating_point:
        return trunc(_true_div(input, other))
    # Integers exactly (no trip through a float, which rounds past 2**24): the dividend less C's
    # remainder divides evenly.
    return (input - input.fmod(other)).floor_divide(other)


_RoundedDivision = None


def _rounded_division():
    """An autograd.Function for a rounded quotient: its gradient is zero (a step function), as
    PyTorch's; made on first use (dyn.autograd imports dyn)."""
    global _RoundedDivision
    if _RoundedDivision is None:
        from .autograd import Function

        class RoundedDivision(Function):
            @staticmethod
            def forward(ctx, input, other, rounding_mode):
                ctx.shapes = [(t.shape, t.dtype) if isinstance(t, Tensor) else None for t in (input, other)]
                return _rounded_div(input, other, rounding_mode)

            @staticmethod
            def backward(ctx, grad):
                return tuple(None if s is None else _dyn.zeros(tuple(s[0]), dtype=s[1]) for s in ctx.shapes) + (None,)

        _RoundedDivision = RoundedDivision
    return _RoundedDivision


@method
def div(input, other, *, rounding_mode=None):
    """True division, or with rounding_mode 'trunc' (toward zero) or 'floor', as torch.div."""
    if not isinstance(input, _dyn.Tensor):  # torch.div(7, t)
        input = _dyn.tensor(input)
    if rounding_mode is None:
        return _true_div(input, other)
    if _dyn.is_grad_enabled() and (input.requires_grad or (isinstance(other, Tensor) and other.requires_grad)):
        if rounding_mode not in ("floor", "trunc"):
            _rounded_div(input, other, rounding_mode)  # raises
        return _rounded_division().apply(input, other, rounding_mode)
    return _rounded_div(input, other, rounding_mode)


@method(function=False)
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _true_div_(self, other)
    r = _rounded_div(self, other, rounding_mode)
    if r.dtype != self.dtype and not (self.dtype.is_floating_point and r.dtype.is_floating_point):
        raise RuntimeError(f"result type {_type_name(r.dtype)} can't be cast to the desired output type "
                           f"{_type_name(self.dtype)}")
    return self.copy_(r)


@method
def divide(input, other, *, rounding_mode=None):
    return div(input, other, rounding_mode=rounding_mode)


@method
def softplus(input, beta=1.0, threshold=20.0):
    bx = input * beta
    return _dyn.where(bx > threshold, input, (bx.exp()).log1p() / beta)


@method
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


@method
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if not isinstance(other, Tensor):
        other = _dyn.tensor(other, dtype=input.dtype)
    a, b = input.to(_dyn.float64), other.to(_dyn.float64)
    finite = isfinite(a) & isfinite(b)
    close = (a == b) | (finite & ((a - b).abs() <= atol + rtol * b.abs()))
    if equal_nan:
        close = close | ((a != a) & (b != b))
    return close


# ---- products ----

@method
def bmm(input, mat2):
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor; got {input.dim()}-D and {mat2.dim()}-D")
    return input.matmul(mat2)


@method(name="mm")
def _mm(input, mat2):
    """Matrix product of two 2-D tensors (no broadcasting: use matmul for batches)."""
    if input.dim() != 2:
        raise RuntimeError(f"self must be a matrix, got a {input.dim()}-D tensor; use dyn.matmul for batched products")
    if mat2.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got a {mat2.dim()}-D tensor; use dyn.matmul for batched products")
    return input.matmul(mat2)


@method
def mv(input, vec):
    return input.matmul(vec)


@method
def dot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    return input.matmul(other)


vdot = method(dot, name="vdot")
inner = method(dot, name="inner")


@method
def outer(input, vec2):
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = method(outer, name="ger")


@method
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    p = mat1.matmul(mat2)
    if alpha != 1:
        p = p * alpha
    return p + (input * beta if beta != 1 else input) if beta != 0 else p


@method
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return addmm(input, batch1, batch2, beta=beta, alpha=alpha)


@method
def diagonal(input, offset=0, dim1=0, dim2=1):
    x = movedim(input, (dim1, dim2), (-2, -1))
    r, c = x.shape[-2], x.shape[-1]
    rows = [i for i in range(r) if 0 <= i + offset < c]
    if not rows:
        return x.reshape(*x.shape[:-2], 0) if x.numel() == 0 else x[..., :0, 0]
    flat = x.reshape(*x.shape[:-2], r * c)
    return flat.index_select(-1, _dyn.tensor([i * c + i + offset for i in rows]))


@method
def diag(input, diagonal=0):
    if input.dim() == 1:
        n = input.shape[0] + builtins.abs(diagonal)
        out = _dyn.zeros(n * n, dtype=input.dtype)
        pos = [(i if diagonal >= 0 else i - diagonal) * n + (i + diagonal if diagonal >= 0 else i)
               for i in range(input.shape[0])]
        return out.index_add(0, _dyn.tensor(pos, dtype=_dyn.int64), input).view(n, n)
    return globals()["diagonal"](input, diagonal)


@method
def trace(input):
    return diagonal(input).sum()


# ---- conversions and properties ----

@method(function=False)
def cpu(self, memory_format=None):
    return self


@method(function=False)
def cuda(self, device=None, non_blocking=False, memory_format=None):
    _dyn._check_device("cuda", "cuda" if device is None else device)
    return self


@method(function=False, name="type")
def _type(self, dtype=None, non_blocking=False):
    names = {_dyn.float32: "torch.FloatTensor", _dyn.float64: "torch.DoubleTensor", _dyn.float16: "torch.HalfTensor",
             _dyn.bfloat16: "torch.BFloat16Tensor", _dyn.int64: "torch.LongTensor", _dyn.int32: "torch.IntTensor",
             _dyn.int16: "torch.ShortTensor", _dyn.int8: "torch.CharTensor", _dyn.uint8: "torch.ByteTensor",
             _dyn.bool: "torch.BoolTensor"}
    if dtype is None:
        return names[self.dtype]
    if isinstance(dtype, str):
        for d, n in names.items():
            if n == dtype or n.replace("torch.", "torch.cuda.") == dtype:
                return self.to(d)
        raise TypeError(f"invalid type: '{dtype}'")
    return self.to(dtype)


@method(function=False)
def element_size(self):
    return self.dtype.itemsize


@method(function=False)
def data_ptr(self):
    """The address of the first element (0 for an empty tensor); a pending value is computed first."""
    if self.numel() == 0:
        return 0
    t = self.detach()
    return (t.view(_dyn.int16) if t.dtype == _dyn.bfloat16 else t).numpy().__array_interface__["data"][0]


@method(function=False)
def nelement(self):
    return self.numel()


@method(function=False)
def ndimension(self):
    return self.dim()


@method(function=False)
def get_device(self):
    return -1


@method(function=False)
def is_floating_point(self):
    return self.dtype.is_floating_point


@method(function=False)
def is_complex(self):
    return False


@method(function=False)
def __format__(self, spec):
    if self.dim() == 0:
        return format(self.item(), spec)
    if spec:
        raise TypeError(f"unsupported format string passed to Tensor.__format__ (only 0-d tensors take a format "
                        f"spec like {{:.4f}}; this one has shape {list(self.shape)})")
    return str(self)


@method(function=False)
def __len__(self):
    if self.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


@method(function=False)
def __reversed__(self):
    return flip(self, 0) if self.dim() else self


@method(function=False)
def __contains__(self, element):
    return builtins.bool((self == element).any())


@method(function=False)
def __array__(self, dtype=None):
    a = self.detach().numpy()
    return a.astype(dtype) if dtype is not None else a


def _rebuild(data, requires_grad, bfloat16=False):
    t = _dyn.from_numpy(data)
    if bfloat16:
        t = t.view(_dyn.bfloat16)
    if requires_grad:
        t.requires_grad_(True)
    return t


@method(function=False)
def __reduce_ex__(self, protocol):
    """Pickles (and copy.copy) the values; a leaf keeps requires_grad, history is not kept."""
    t, bf = self.detach(), self.dtype == _dyn.bfloat16  # numpy has no bfloat16: its bits as int16
    return (_rebuild, ((t.view(_dyn.int16) if bf else t).numpy().copy(), self.requires_grad and self.is_leaf) +
            ((True,) if bf else ()))


@method(function=False)
def __deepcopy__(self, memo):
    if id(self) not in memo:
        t = self.detach().clone()
        if self.requires_grad and self.is_leaf:
            t.requires_grad_(True)
        memo[id(self)] = t
    return memo[id(self)]


def _data_get(self):
    return self.detach()


def _data_set(self, value):
    with _GradMode(False):
        if tuple(value.shape) != tuple(self.shape) or value.dtype != self.dtype:
            raise RuntimeError(f"dyn cannot change a tensor's shape or dtype through .data = (from "
                               f"{list(self.shape)} {self.dtype} to {list(value.shape)} {value.dtype}); "
                               "assign a new Parameter instead")
        self.copy_(value)


_properties = {
    "data": property(_data_get, _data_set, doc="the same data, outside autograd (as detach())"),
    "is_cuda": property(lambda self: False, doc="always False: dyn runs on the CPU"),
    "is_cpu": property(lambda self: True),
    "is_sparse": property(lambda self: False),
    "is_quantized": property(lambda self: False),
    "is_meta": property(lambda self: False),
    "layout": property(lambda self: "torch.strided"),
    "itemsize": property(lambda self: self.element_size()),
    "nbytes": property(lambda self: self.element_size() * self.numel()),
    "mT": property(lambda self: self.transpose(-2, -1)),
}


def install(device_of_tensor):
    """Puts the methods on dyn.Tensor; returns the functions for the dyn namespace."""
    props = dict(_properties)
    props["device"] = property(device_of_tensor, doc="where the data lives: always the CPU")
    table = {name: f for name, f in _methods.items()}
    table.update(props)
    _dyn._add_tensor_methods(table)
    return {name: f for name, f in _methods.items() if getattr(f, "_dyn_function", False)}
