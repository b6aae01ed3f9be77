"""dyn.linalg (torch.linalg): the norms and products composed of dyn's ops, and the decompositions
and solvers (inv, solve, det, slogdet, cholesky, eigh, svd, qr, lstsq, pinv, ...) through LAPACK
(_lapack.py). Those dyn does not compute (eig, lu, matrix_exp, ...) raise NotImplementedError."""
import math

import dyn
from ._dtypes import computes_in_float32

from ._lapack import _LinAlgError as LinAlgError  # noqa: E402,F401
from ._lapack import (inv, inv_ex, det, slogdet, solve, solve_ex, solve_triangular, cholesky,  # noqa: E402,F401
                      cholesky_ex, eigh, eigvalsh, svd, svdvals, qr, pinv, lstsq, matrix_rank, matrix_power, cond)

__all__ = ["vector_norm", "matrix_norm", "norm", "cross", "vecdot", "matmul", "multi_dot", "diagonal", "inv", "inv_ex",
           "det", "slogdet", "solve", "solve_ex", "solve_triangular", "cholesky", "cholesky_ex", "eigh", "eigvalsh",
           "svd", "svdvals", "qr", "pinv", "lstsq", "matrix_rank", "matrix_power", "cond"]


def _dims(dim, ndim):
    if dim is None:
        return None
    return tuple(d % max(ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim))


@computes_in_float32
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ord-norm of x over dim (all elements when None), as torch.linalg.vector_norm."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                                  f"Got {_legacy(x.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    dims = _dims(dim, x.dim())
    shape = tuple(x.shape)
    flat = dims is None
    if flat:
        x, dims = x.reshape(-1), (0,)
    keep = keepdim and not flat
    a = x.abs()
    if ord == math.inf:
        r = a.amax(dims, keepdim=keep)
    elif ord == -math.inf:
        r = a.amin(dims, keepdim=keep)
    elif ord == 0:
        r = (x != 0).to(x.dtype).sum(dims, keepdim=keep)
    elif ord == 1:
        r = a.sum(dims, keepdim=keep)
    elif ord == 2:
        r = (a * a).sum(dims, keepdim=keep).sqrt()
    else:
        r = (a ** ord).sum(dims, keepdim=keep) ** (1.0 / ord)
    if flat and keepdim:  # every dim reduced, each kept as size 1
        r = r.reshape((1,) * len(shape))
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of A over the two dims (Frobenius, or the max/min of absolute column or row
    sums), as torch.linalg.matrix_norm. The spectral and nuclear norms need singular values."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    r, c = _dims(dim, A.dim())
    if ord == "fro":
        return vector_norm(A, 2, (r, c), keepdim)
    if ord in ("nuc", 2, -2):
        if (r, c) != (A.dim() - 2, A.dim() - 1):
            A = A.movedim((r, c), (-2, -1))
        s = svdvals(A)
        red = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        return red.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (r, c)) if keepdim else red
    if ord in (1, -1):  # absolute column sums
        s = A.abs().sum(r, keepdim=True)
        red = s.amax(c, keepdim=True) if ord == 1 else s.amin(c, keepdim=True)
    elif ord in (math.inf, -math.inf):  # absolute row sums
        s = A.abs().sum(c, keepdim=True)
        red = s.amax(r, keepdim=True) if ord == math.inf else s.amin(r, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return red if keepdim else red.squeeze(max(r, c)).squeeze(min(r, c))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm over one dim (or all of a 1-D input), a matrix norm over two."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is not None and dim is None and A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 2, and ord={ord!r} needs a "
                           "matrix")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along dim."""
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    return dyn.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], dim)


def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


def matmul(input, other):
    return dyn.matmul(input, other)


def multi_dot(tensors):
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def _legacy(dtype):
    return {"torch.int64": "Long", "torch.bool": "Bool", "dyn.int64": "Long", "dyn.bool": "Bool"}.get(str(dtype),
                                                                                                      str(dtype))


def _needs_lapack(name):
    def f(*args, **kwargs):
        raise NotImplementedError(f"torch.linalg.{name} is not supported by dyn yet (its LAPACK functions are: inv, "
                                  "solve, det, slogdet, cholesky, eigh, svd, qr, lstsq, pinv, ...); run the script "
                                  "with dynrepl --real-torch")
    f.__name__ = name
    return f


for _name in ("eig", "eigvals", "matrix_exp", "lu", "lu_factor", "lu_solve", "ldl_factor", "tensorinv", "tensorsolve",
              "householder_product"):
    globals()[_name] = _needs_lapack(_name)
del _name
