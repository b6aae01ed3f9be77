"""dyn.sparse (torch.sparse) and sparse COO tensors: to_sparse(), sparse_coo_tensor, spmm.

A sparse COO tensor in dyn is stored densely: a Tensor subclass whose layout is torch.sparse_coo,
whose indices()/values()/_nnz() are those of its nonzero elements in PyTorch's coalesced order
(row-major), and whose products (sparse @ dense, torch.mm, torch.spmm, torch.sparse.mm) are dyn's
dense products: differentiable and compiled like any op, with PyTorch's results (sums of the same
terms, plus zeros). Memory is that of the dense tensor: a graph of tens of thousands of nodes fits,
millions do not."""
import _dyn
from _dyn import Tensor

import dyn

from .autograd import Function


class layout:
    """torch.layout: how a tensor's elements are stored (torch.strided, torch.sparse_coo)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


layout.__module__ = "dyn"  # a constant to the trace-once analysis, as dtypes are
strided = layout("strided")
sparse_coo = layout("sparse_coo")


class SparseCOOTensor(Tensor):
    """A sparse COO tensor (stored densely; see the module's doc)."""

    layout = property(lambda self: sparse_coo)
    is_sparse = property(lambda self: True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        d = _dense(self) * 1  # a dense tensor with this one's history
        return d if dtype is None else d.to(dtype)

    def _nonzero(self):
        return _dense(self).detach().nonzero()

    def indices(self):
        return self._nonzero().t().contiguous()

    _indices = indices

    def values(self):
        return _Values.apply(self)

    _values = values

    def _nnz(self):
        return int(self._nonzero().shape[0])

    def coalesce(self):
        return self

    def is_coalesced(self):
        return True

    def sparse_dim(self):
        return self.dim()

    def dense_dim(self):
        return 0

    def to(self, *args, **kwargs):
        return _sparse(Tensor.to(_dense(self), *args, **kwargs))

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        return Tensor.cuda(_dense(self), *args, **kwargs)

    def float(self):
        return self.to(dyn.float32)

    def double(self):
        return self.to(dyn.float64)

    def to_sparse(self, sparse_dim=None):
        return self

    def __repr__(self):
        d = _dense(self).detach()
        grad = f", grad_fn=<{self.grad_fn.name()}>" if self.grad_fn is not None else \
            (", requires_grad=True" if self.requires_grad else "")
        dt = "" if d.dtype == dyn.get_default_dtype() or d.dtype == dyn.int64 else f",\n       dtype={d.dtype}"
        values = repr(self.values().detach()).replace("\n", "\n" + " " * 14)
        return (f"tensor(indices={repr(self.indices())},\n".replace("\n ", "\n" + " " * 16) +
                f"       values={values},\n       size={tuple(d.shape)}, nnz={self._nnz()}{dt}, "
                f"layout=torch.sparse_coo{grad})")


class _ToSparse(Function):
    node_name = "ToSparseBackward1"

    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, g):
        return g


class _Values(Function):
    node_name = "ValuesBackward0"

    @staticmethod
    def forward(ctx, s):
        d = _dense(s)
        idx = d.nonzero()
        ctx.idx, ctx.shape = idx, d.shape
        return d[tuple(idx[:, k] for k in range(d.dim()))]

    @staticmethod
    def backward(ctx, g):
        out = dyn.zeros(ctx.shape, dtype=g.dtype)
        out[tuple(ctx.idx[:, k] for k in range(len(ctx.shape)))] = g
        return out


def _dense(t):
    return _dyn._as_subclass(Tensor, t) if isinstance(t, SparseCOOTensor) else t


def _sparse(t):
    return _dyn._as_subclass(SparseCOOTensor, t)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse(): the same values as a sparse COO tensor (differentiable)."""
    if layout not in (None, sparse_coo):
        raise NotImplementedError(f"to_sparse(layout={layout}): dyn has sparse COO tensors only")
    if sparse_dim is not None and sparse_dim != self.dim():
        raise NotImplementedError("to_sparse(sparse_dim=k) with dense dims is not supported by dyn")
    return _sparse(_ToSparse.apply(_dense(self)))


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse tensor with values at indices (a (ndim, nnz) tensor); duplicates are summed, as
    coalesce() sums them."""
    indices = dyn.as_tensor(indices)
    values = dyn.as_tensor(values)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() != 1 or values.shape[0] != indices.shape[1]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0] if values.dim() else 0}")
    indices = indices.to(dyn.int64)
    if size is None:
        size = [int(m) + 1 for m in indices.amax(1).tolist()] if indices.shape[1] else [0] * indices.shape[0]
    size = [int(s) for s in size]
    if len(size) != indices.shape[0]:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({indices.shape[0]}) + dense_dim (0), but got "
                           f"{len(size)}")
    if indices.shape[1]:
        too_big = [(d, int(indices[d].amax()), size[d]) for d in range(len(size)) if int(indices[d].amax()) >= size[d]]
        if too_big or int(indices.amin()) < 0:
            d, m, s = too_big[0] if too_big else (0, int(indices.amin()), size[0])
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {s} but found index {m}")
    dtype = dtype or (values.dtype if values.dtype.is_floating_point or values.dtype != dyn.int64 else dyn.int64)
    values = values.to(dtype)
    flat = dyn.zeros(0, dtype=dyn.int64)
    if indices.shape[1]:
        strides = [1] * len(size)
        for d in range(len(size) - 2, -1, -1):
            strides[d] = strides[d + 1] * size[d + 1]
        flat = (indices * dyn.tensor(strides).unsqueeze(1)).sum(0)
    n = 1
    for s in size:
        n *= s
    dense = dyn.zeros(n, dtype=dtype).index_add(0, flat, values).reshape(size)
    if requires_grad:
        dense = dense.detach().requires_grad_()
    return _sparse(dense)


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: a sparse matrix times a dense (or sparse) one."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}) is not supported by dyn")
    out = dyn.mm(_dense(mat1), _dense(mat2))
    return _sparse(out) if isinstance(mat1, SparseCOOTensor) and isinstance(mat2, SparseCOOTensor) else out


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    return dyn.addmm(_dense(mat), _dense(mat1), _dense(mat2), beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    d = _dense(input)
    r = d.sum() if dim is None else d.sum(dim)
    r = r if dtype is None else r.to(dtype)
    return r if dim is None else _sparse(r)


def softmax(input, dim, *, dtype=None):
    raise NotImplementedError("torch.sparse.softmax is not supported by dyn (its sparse tensors are stored densely; "
                              "softmax over the stored zeros would differ)")


def spmm(mat1, mat2):
    """torch.spmm: torch.mm with a sparse first operand."""
    return mm(mat1, mat2)


def check_sparse_tensor_invariants(*args, **kwargs):
    import contextlib
    return contextlib.nullcontext()
