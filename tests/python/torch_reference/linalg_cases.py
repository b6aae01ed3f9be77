"""torch.linalg's LAPACK functions on fixed well-conditioned matrices (float64 and float32,
batched too): values, gradients and the errors. Run by PyTorch 2.15 to record linalg.json
(record.py) and by dyn to compare with it (test_linalg.py). PyTorch calls MKL's LAPACK, dyn
OpenBLAS's, so values are compared to a relative tolerance, not bit for bit."""
import numpy as np

from reference import encode_value, recorder


def _spd(r, n, batch=()):
    m = r.standard_normal(batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def cases(torch, wrap=None):
    r = {}
    L = torch.linalg

    rec = recorder(r)

    g = np.random.default_rng(11)
    S = _spd(g, 4)
    SB = _spd(g, 3, (2,))
    G = g.standard_normal((4, 4)) + 4 * np.eye(4)
    R = g.standard_normal((5, 3))
    B = g.standard_normal((4, 2))
    W = g.standard_normal((4, 4))

    def grad_of(f, *arrays, dtype=torch.float64):
        """f's value and each input's gradient of (f * weights).sum()."""
        xs = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        out = (wrap(f) if wrap else f)(*xs)
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum((o * torch.arange(1.0, o.numel() + 1, dtype=o.dtype).reshape(o.shape) / o.numel()).sum()
                   for o in outs)
        loss.backward()
        return tuple(o.detach() for o in outs) + tuple(x.grad for x in xs)

    rec("inv", lambda: grad_of(L.inv, G))
    rec("inv_batched", lambda: grad_of(L.inv, SB))
    rec("inv_float32", lambda: grad_of(L.inv, G, dtype=torch.float32))
    rec("det", lambda: grad_of(L.det, G))
    rec("det_batched", lambda: grad_of(L.det, SB))
    rec("slogdet", lambda: grad_of(lambda a: L.slogdet(a)[1], G - 6 * np.eye(4)))
    rec("slogdet_sign", lambda: L.slogdet(torch.tensor(G - 6 * np.eye(4))).sign)
    rec("logdet", lambda: grad_of(torch.logdet, S))
    rec("solve", lambda: grad_of(L.solve, G, B))
    rec("solve_vector", lambda: grad_of(L.solve, G, B[:, 0]))
    rec("solve_batched", lambda: grad_of(L.solve, SB, g.standard_normal((2, 3, 2))))
    rec("solve_right", lambda: grad_of(lambda a, b: L.solve(a, b, left=False), G, B.T))
    rec("solve_triangular", lambda: grad_of(lambda a, b: L.solve_triangular(a, b, upper=True), np.triu(G), B))
    rec("solve_triangular_lower_unit", lambda: grad_of(
        lambda a, b: L.solve_triangular(a, b, upper=False, unitriangular=True), np.tril(G), B))
    rec("cholesky", lambda: grad_of(L.cholesky, S))
    rec("cholesky_upper", lambda: grad_of(lambda a: L.cholesky(a, upper=True), S))
    rec("cholesky_batched", lambda: grad_of(L.cholesky, SB))
    rec("eigh_values", lambda: grad_of(lambda a: L.eigh(a)[0], S))
    rec("eigh_vectors", lambda: grad_of(lambda a: L.eigh(a)[1].abs(), S))
    rec("eigvalsh", lambda: grad_of(L.eigvalsh, SB))
    rec("svdvals", lambda: grad_of(L.svdvals, R))
    rec("matrix_norm_2_nuc", lambda: grad_of(lambda a: L.matrix_norm(a, 2) + L.matrix_norm(a, "nuc"), R))
    rec("matrix_norm_neg2", lambda: grad_of(lambda a: L.matrix_norm(a, -2), R))
    rec("cond", lambda: grad_of(L.cond, G))
    rec("matrix_power", lambda: grad_of(lambda a: L.matrix_power(a, 3) + L.matrix_power(a, -2), G))
    rec("inverse_method", lambda: grad_of(lambda a: a.inverse() + a.det(), G))
    rec("inv_then_double_backward", lambda: _double(torch, G))
    with torch.no_grad():
        def absv(t):  # signs of singular vectors are LAPACK's choice
            return t.abs()
        rec("svd", lambda: tuple(absv(t) if i != 1 else t for i, t in enumerate(L.svd(torch.tensor(R)))))
        rec("svd_full", lambda: tuple(t.shape for t in L.svd(torch.tensor(R), full_matrices=True)))
        rec("svd_legacy", lambda: tuple(absv(t) if i != 1 else t for i, t in enumerate(torch.svd(torch.tensor(R)))))
        rec("qr", lambda: tuple(t.abs() for t in L.qr(torch.tensor(R))))
        rec("qr_complete", lambda: tuple(t.shape for t in L.qr(torch.tensor(R), mode="complete")))
        rec("qr_r", lambda: L.qr(torch.tensor(R), mode="r")[1].abs())
        rec("pinv", lambda: L.pinv(torch.tensor(R)))
        rec("pinv_rank_deficient", lambda: L.pinv(torch.tensor(np.outer(R[:, 0], R[0]))))
        rec("lstsq", lambda: L.lstsq(torch.tensor(R), torch.tensor(g.standard_normal((5, 2)))).solution)
        rec("matrix_rank", lambda: (L.matrix_rank(torch.tensor(R)), L.matrix_rank(torch.tensor(np.outer(R[:, 0], R[0])))))
        rec("pinverse", lambda: torch.pinverse(torch.tensor(R)))
        rec("cholesky_legacy", lambda: torch.cholesky(torch.tensor(S)))
    rec("error_inv_singular", lambda: L.inv(torch.zeros(3, 3)))
    rec("error_inv_singular_later", lambda: L.inv(torch.tensor([[1.0, 2.0], [2.0, 4.0]])))
    rec("error_inv_not_square", lambda: L.inv(torch.zeros(2, 3)))
    rec("error_cholesky", lambda: L.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])))
    rec("error_solve_singular", lambda: L.solve(torch.zeros(2, 2), torch.ones(2)))
    rec("error_det_1d", lambda: L.det(torch.ones(3)))
    rec("error_int", lambda: L.inv(torch.eye(2, dtype=torch.int64)))
    rec("error_half", lambda: L.inv(torch.eye(2, dtype=torch.float16)))
    rec("error_eigh_uplo", lambda: L.eigh(torch.eye(2), UPLO="X"))
    rec("error_qr_mode", lambda: L.qr(torch.eye(2), mode="x"))
    _ = W
    return r


def _double(torch, G):
    a = torch.tensor(G, requires_grad=True)
    y = torch.linalg.inv(a).sum()
    g, = torch.autograd.grad(y, a, create_graph=True)
    (g * g).sum().backward()
    return g.detach(), a.grad


def encode(torch, v):
    return encode_value(torch, v)
