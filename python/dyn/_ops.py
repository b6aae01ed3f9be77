"""Tensor functions with PyTorch's signatures, built on the engine's ops.

Each is both dyn.NAME(input, ...) and the method Tensor.NAME(...). Those composed here from other
ops are traced, compiled and differentiated like any op sequence: compiled equals eager because
both run the same ops.
"""
import builtins
import collections

import _dyn
from _dyn import Tensor

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
    if src.dim() == index.dim() and tuple(src.shape) != tuple(index.shape) and \
            all(i <= s for i, s in zip(index.shape, src.shape)):
        # PyTorch reads src only where index has elements: src may be larger in any dim
        src = src[tuple(slice(0, i) for i in index.shape)]
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
    """The diagonal as a view of input where its two dims merge into one (a strided slice of
    them): writing it writes input, as PyTorch's (x.diagonal().fill_(1)). The transposed layout is
    the diagonal of the transpose; other layouts give a copy."""
    x = movedim(input, (dim1, dim2), (-2, -1))
    r, c = x.shape[-2], x.shape[-1]
    rows = [i for i in range(r) if 0 <= i + offset < c]
    if not rows:
        return x.reshape(*x.shape[:-2], 0) if x.numel() == 0 else x[..., :0, 0]
    for m, off in ((x, offset), (x.transpose(-2, -1), -offset)):
        cols = m.shape[-1]
        try:
            flat = m.view(*m.shape[:-2], m.shape[-2] * cols)
        except RuntimeError:
            continue
        i0 = builtins.max(0, -off)
        start = i0 * cols + i0 + off
        return flat[..., start:start + (len(rows) - 1) * (cols + 1) + 1:cols + 1]
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


def _strided():
    from .sparse import strided  # (imported when asked: sparse.py imports dyn)
    return strided


_properties = {
    "data": property(_data_get, _data_set, doc="the same data, outside autograd (as detach())"),
    "is_cuda": property(lambda self: False, doc="always False: dyn runs on the CPU"),
    "is_cpu": property(lambda self: True),
    "is_sparse": property(lambda self: False),
    "is_quantized": property(lambda self: False),
    "is_meta": property(lambda self: False),
    **{f"is_{d}": property(lambda self: False, doc="always False: dyn runs on the CPU")
       for d in ("xpu", "mps", "mkldnn", "vulkan", "ipu", "hpu", "mtia", "nested")},
    "layout": property(lambda self: _strided()),
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
