"""torch.linalg's decompositions and solvers, computed by LAPACK (Debian's OpenBLAS, through
numpy.linalg) on the tensors' values, with PyTorch's derivatives as custom autograd Functions
whose backward issues dyn ops (so create_graph works through them). Inside a compile region the
call is a graph break naming the function: LAPACK runs on values, not in a graph."""
import numpy as np

import _dyn
import dyn

from .autograd import Function


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: LAPACK could not complete (a singular or indefinite matrix)."""


def _values(name, *ts):
    for t in ts:
        if t.dtype in (dyn.float16, dyn.bfloat16):
            raise NotImplementedError(f"linalg.{name}: Low precision dtypes not supported. Got {_legacy(t.dtype)}")
        if not t.dtype.is_floating_point:
            raise NotImplementedError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                                      f"{_legacy(t.dtype)}")
    out = []
    for t in ts:
        _dyn._materialize(t, f"torch.linalg.{name} (LAPACK)")
        out.append(t.detach().contiguous().numpy())
    return out


def _legacy(dtype):
    return {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int64": "Long",
            "int32": "Int", "bool": "Bool", "uint8": "Byte"}.get(str(dtype).split(".")[-1], str(dtype))


def _tensor(a, like):
    a = np.asarray(a)  # (not ascontiguousarray: it makes a 0-dim array 1-dim)
    return dyn.from_numpy(a if a.flags.c_contiguous and a.flags.writeable else a.copy(order="C")).to(like.dtype)


def _square(name, A, what="A"):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor {what} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: {what} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _first_failure(a, test):
    """(batch index, k): the first matrix of a and the first k (1-based) at which test fails."""
    m = a.reshape((-1,) + a.shape[-2:])
    for b in range(m.shape[0]):
        for k in range(1, m.shape[-1] + 1):
            if not test(m[b], k):
                return b, k
    return 0, 1


def _pivot_ok(a, k):
    """Gaussian elimination with partial pivoting (getrf's) reaches a nonzero k-th pivot."""
    u = a.astype(np.float64).copy()
    for j in range(k):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            return False
        u[[j, p]] = u[[p, j]]
        u[j + 1:] -= np.outer(u[j + 1:, j] / u[j, j], u[j])
    return True


def _minor_ok(a, k):
    try:
        np.linalg.cholesky(a[:k, :k])
        return True
    except np.linalg.LinAlgError:
        return False


def _batch(b, a):
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _lapack(name, f, *args):
    """f(*args); LAPACK's failures as PyTorch words them."""
    try:
        return f(*args)
    except np.linalg.LinAlgError as e:
        a = args[0]
        if "positive definite" in str(e):
            b, k = _first_failure(a, _minor_ok)
            raise _LinAlgError(f"linalg.{name}: {_batch(b, a)}The factorization could not be completed because the "
                               f"input is not positive-definite (the leading minor of order {k} is not "
                               "positive-definite).") from None
        if name == "inv":
            b, k = _first_failure(a, _pivot_ok)
            raise _LinAlgError(f"linalg.inv: {_batch(b, a)}The diagonal element {k} is zero, the inversion could not "
                               "be completed because the input matrix is singular.") from None
        if "Singular" in str(e):
            raise _LinAlgError(f"linalg.{name}: The solver failed because the input matrix is singular.") from None
        raise _LinAlgError(f"linalg.{name}: LAPACK failed: {e}") from None


def _again(saved, f, *inputs):
    """A saved output for a derivative: as saved (detached), or, when backward itself records history
    (create_graph), computed again from the inputs so that the gradient can be differentiated."""
    return f(*inputs) if dyn.is_grad_enabled() else saved


def _mT(x):
    return x.transpose(-2, -1)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: input's last dim on the diagonal of the last two dims (differentiable)."""
    if offset != 0 or (dim1 % (input.dim() + 1), dim2 % (input.dim() + 1)) != (input.dim() - 1, input.dim()):
        raise NotImplementedError("diag_embed: dyn supports offset=0 into the last two dims only")
    n = input.shape[-1]
    return input.unsqueeze(-1) * dyn.eye(n, dtype=input.dtype)


# ---- inv, det, slogdet ----

class _Inv(Function):
    node_name = "LinalgInvExBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A):
        (a,) = _values("inv", A)
        X = _tensor(_lapack("inv", np.linalg.inv, a), A)
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        Xt = _mT(_again(X, inv, A))
        return -(Xt @ g @ Xt)


def inv(A, *, out=None):
    _square("inv", A)
    return _Inv.apply(A)


def inv_ex(A, *, check_errors=False, out=None):
    return inv(A), dyn.zeros(A.shape[:-2], dtype=dyn.int32)


class _Slogdet(Function):
    node_name = "LinalgSlogdetBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A):
        (a,) = _values("slogdet", A)
        sign, logabs = np.linalg.slogdet(a)
        ctx.save_for_backward(A)
        return _tensor(np.asarray(sign), A), _tensor(np.asarray(logabs), A)

    @staticmethod
    def backward(ctx, gsign, glog):
        (A,) = ctx.saved_tensors
        if glog is None:
            return None
        return glog[..., None, None] * _mT(inv(A))


def slogdet(A, *, out=None):
    _square("slogdet", A)
    sign, logabs = _Slogdet.apply(A)
    return _SlogdetResult(sign.detach(), logabs)


class _SlogdetResult(tuple):
    def __new__(cls, sign, logabsdet):
        r = tuple.__new__(cls, (sign, logabsdet))
        r.sign, r.logabsdet = sign, logabsdet
        return r


class _Det(Function):
    node_name = "LinalgDetBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A):
        (a,) = _values("det", A)
        d = _tensor(np.asarray(np.linalg.det(a)), A)
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, d = ctx.saved_tensors
        d = _again(d, det, A)
        # d det(A) / dA = det(A) A^-T (A invertible, as PyTorch's formula away from singular matrices)
        return (g * d)[..., None, None] * _mT(inv(A))


def det(A, *, out=None):
    _square("det", A)
    return _Det.apply(A)


def logdet(A):
    sign, logabs = slogdet(A)
    return dyn.where(sign < 0, dyn.full((), float("nan"), dtype=A.dtype), logabs)


# ---- solve ----

def _vector_case(A, B):
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


class _Solve(Function):
    node_name = "LinalgSolveExBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A, B):
        a, b = _values("solve", A, B)
        vec = _vector_case(A, B)
        x = _lapack("solve", np.linalg.solve, a, b[..., None] if vec else b)
        X = _tensor(x[..., 0] if vec else x, B)
        ctx.save_for_backward(A, X)
        ctx.B = B
        ctx.vec = vec
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        X = _again(X, lambda: solve(A, ctx.B))
        gB = solve(_mT(A), g)
        if ctx.vec:
            gA = -gB[..., :, None] * X[..., None, :]
        else:
            gA = -(gB @ _mT(X))
        while gA.dim() > A.dim():
            gA = gA.sum(0)
        return gA, gB


def solve(A, B, *, left=True, out=None):
    _square("solve", A)
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    if B.shape[-1 if _vector_case(A, B) else -2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {'x'.join(str(s) for s in B.shape[-2:])})")
    return _Solve.apply(A, B)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return solve(A, B, left=left), dyn.zeros(A.shape[:-2], dtype=dyn.int32)


class _SolveTriangular(Function):
    node_name = "LinalgSolveTriangularBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        a, b = _values("solve_triangular", A, B)
        t = np.triu(a) if upper else np.tril(a)
        if unitriangular:
            idx = np.arange(t.shape[-1])
            t[..., idx, idx] = 1
        x = _lapack("solve_triangular", np.linalg.solve, t, b) if left else \
            np.swapaxes(_lapack("solve_triangular", np.linalg.solve, np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)),
                        -1, -2)
        X = _tensor(x, B)
        ctx.save_for_backward(A, X)
        ctx.flags = (upper, left, unitriangular)
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.flags
        gB = solve_triangular(_mT(A), g, upper=not upper, left=left, unitriangular=unit)
        gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
        gA = gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)
        return gA, gB, None, None, None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    _square("solve_triangular", A)
    return _SolveTriangular.apply(A, B, upper, left, unitriangular)


# ---- cholesky ----

class _Cholesky(Function):
    node_name = "LinalgCholeskyExBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A):
        (a,) = _values("cholesky", A)
        L = _tensor(_lapack("cholesky", np.linalg.cholesky, a), A)
        ctx.save_for_backward(A, L)
        return L

    @staticmethod
    def backward(ctx, gL):
        A, L = ctx.saved_tensors
        L = _again(L, cholesky, A)
        # Murray (2016): with P = Phi(L^T gL) (the lower triangle, its diagonal halved),
        # S = L^-T P L^-1 and gA = (S + S^T) / 2.
        P = (_mT(L) @ gL).tril()
        P = P - 0.5 * diag_embed(P.diagonal(0, -2, -1))
        S = solve_triangular(_mT(L), _mT(solve_triangular(_mT(L), _mT(P), upper=True)), upper=True)
        return 0.5 * (S + _mT(S))


def cholesky(A, *, upper=False, out=None):
    _square("cholesky", A)
    L = _Cholesky.apply(A)
    return _mT(L) if upper else L


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    return cholesky(A, upper=upper), dyn.zeros(A.shape[:-2], dtype=dyn.int32)


# ---- eigh ----

class _Eigh(Function):
    node_name = "LinalgEighBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A, uplo):
        (a,) = _values("eigh", A)
        w, v = np.linalg.eigh(a, UPLO=uplo)
        W, V = _tensor(w, A), _tensor(v, A)
        ctx.save_for_backward(A, W, V)
        ctx.uplo = uplo
        return W, V

    @staticmethod
    def backward(ctx, gW, gV):
        A, W, V = ctx.saved_tensors
        if dyn.is_grad_enabled():
            W, V = eigh(A, ctx.uplo)
        n = W.shape[-1]
        if gV is not None:
            VtgV = _mT(V) @ gV
            ret = 0.5 * (VtgV - _mT(VtgV))  # the skew-symmetric part: what changes the eigenvectors
            E = W[..., None, :] - W[..., :, None]
            E = E + dyn.eye(n, dtype=E.dtype)  # the diagonal is replaced below
            ret = ret / E
            diag = gW if gW is not None else dyn.zeros_like(W)
            ret = ret - diag_embed(ret.diagonal(0, -2, -1)) + diag_embed(diag)
        else:
            ret = diag_embed(gW)
        return V @ ret @ _mT(V), None


def eigh(A, UPLO="L", *, out=None):
    _square("eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = _Eigh.apply(A, UPLO)
    return _Pair(("eigenvalues", "eigenvectors"), w, v)


def eigvalsh(A, UPLO="L", *, out=None):
    return eigh(A, UPLO)[0]


class _Pair(tuple):
    def __new__(cls, names, a, b):
        r = tuple.__new__(cls, (a, b))
        setattr(r, names[0], a)
        setattr(r, names[1], b)
        return r


# ---- svd, qr, pinv, lstsq ----

class _Svdvals(Function):
    node_name = "LinalgSvdBackward0"  # PyTorch's name for the node

    @staticmethod
    def forward(ctx, A):
        (a,) = _values("svd", A)
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        U, S, Vh = _tensor(u, A), _tensor(s, A), _tensor(vh, A)
        ctx.save_for_backward(U, Vh)
        return S

    @staticmethod
    def backward(ctx, gS):
        U, Vh = ctx.saved_tensors
        if dyn.is_grad_enabled():
            raise NotImplementedError("svdvals/matrix_norm(2, 'nuc'): second derivatives are not supported by dyn "
                                      "(the singular vectors have no derivative yet)")
        return (U * gS[..., None, :]) @ Vh


def svdvals(A, *, driver=None, out=None):
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return _Svdvals.apply(A)


def _no_grad_through(name, *ts):
    if dyn.is_grad_enabled() and any(t.requires_grad for t in ts):
        raise NotImplementedError(f"linalg.{name}: dyn computes it with LAPACK but has no derivative for it yet; "
                                  f"compute it under torch.no_grad() (or on .detach()), or use --real-torch")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """U, S, Vh (no derivative through U and Vh yet; svdvals has one)."""
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _no_grad_through("svd", A)
    (a,) = _values("svd", A)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    r = tuple.__new__(_SVD, (_tensor(u, A), _tensor(s, A), _tensor(vh, A)))
    r.U, r.S, r.Vh = r
    return r


class _SVD(tuple):
    pass


def qr(A, mode="reduced", *, out=None):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    _no_grad_through("qr", A)
    (a,) = _values("qr", A)
    if mode == "r":
        return _Pair(("Q", "R"), dyn.zeros(0, dtype=A.dtype), _tensor(np.linalg.qr(a, mode="r"), A))
    q, r = np.linalg.qr(a, mode=mode)
    return _Pair(("Q", "R"), _tensor(q, A), _tensor(r, A))


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Through the SVD: singular values at most max(atol, rtol * the largest) count as zero (rtol
    defaults to max(m, n) * eps when neither is given, as PyTorch's)."""
    _no_grad_through("pinv", A)
    (a,) = _values("pinv", A)
    if atol is None and rtol is None:
        rtol = max(a.shape[-2:]) * np.finfo(a.dtype).eps
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cut = np.maximum(atol or 0.0, (rtol or 0.0) * s.max(-1, initial=0.0))
    big = s > np.asarray(cut)[..., None]
    s_inv = np.where(big, 1.0 / np.where(big, s, 1.0), 0.0).astype(a.dtype)
    return _tensor(np.swapaxes(vh, -1, -2) @ (s_inv[..., :, None] * np.swapaxes(u, -1, -2)), A)


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) as PyTorch's CPU default driver gives them
    (gelsy: residuals for full-rank tall systems, rank; no singular values)."""
    _no_grad_through("lstsq", A, B)
    a, b = _values("lstsq", A, B)
    vec = b.ndim == a.ndim - 1
    x, res, rank, sv = np.linalg.lstsq(a, b[..., None] if vec else b, rcond=rcond)
    sol = _tensor(x[..., 0] if vec else x, A)
    m, n = a.shape[-2:]
    residuals = _tensor(res, A) if (m > n and rank == n and res.size) else dyn.zeros(0, dtype=A.dtype)
    r = tuple.__new__(_Lstsq, (sol, residuals, dyn.tensor(rank), dyn.zeros(0, dtype=A.dtype)))
    r.solution, r.residuals, r.rank, r.singular_values = r
    return r


class _Lstsq(tuple):
    pass


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    (a,) = _values("matrix_rank", A)
    s = np.linalg.svd(a, compute_uv=False)
    if tol is not None:
        atol = tol
    if atol is None and rtol is None:
        rtol = max(a.shape[-2:]) * np.finfo(a.dtype).eps
    cut = np.maximum(atol or 0.0, (rtol or 0.0) * s.max(-1, initial=0.0))
    return dyn.from_numpy(np.asarray((s > np.asarray(cut)[..., None]).sum(-1), dtype=np.int64))


def matrix_power(A, n):
    _square("matrix_power", A)
    if n == 0:
        return dyn.eye(A.shape[-1], dtype=A.dtype).expand(A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    out = A
    for _ in range(n - 1):
        out = out @ A
    return out


def cond(A, p=None):
    if p in (None, 2, -2):
        s = svdvals(A)
        return s[..., 0] / s[..., -1] if p in (None, 2) else s[..., -1] / s[..., 0]
    from .linalg import matrix_norm
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


# ---- torch.* names and Tensor methods (PyTorch's older spellings) ----

def _svd_legacy(A, some=True, compute_uv=True):
    """torch.svd: U, S, V (V, not Vh), reduced when some."""
    U, S, Vh = svd(A, full_matrices=not some)
    if not compute_uv:
        return U.new_zeros(U.shape), S, Vh.new_zeros(Vh.shape)
    return tuple.__new__(_SVD, (U, S, _mT(Vh)))


def _cholesky_legacy(A, upper=False):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `cholesky` is deprecated "
                       "in favor of `linalg.cholesky`.")


def _qr_legacy(A, some=True):
    return qr(A, "reduced" if some else "complete")


TORCH_FUNCTIONS = {"inverse": inv, "det": det, "logdet": logdet, "slogdet": slogdet, "pinverse":
                   lambda A, rcond=1e-15: pinv(A, rtol=rcond), "cholesky": _cholesky_legacy, "svd": _svd_legacy,
                   "qr": _qr_legacy, "matrix_power": matrix_power, "diag_embed": diag_embed}
