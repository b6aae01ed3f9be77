"""Gradient checks of every differentiable op against float64 central finite differences.

`gradcheck` builds float64 leaves (contiguous or strided views), runs the function, calls
backward with a random upstream gradient (so every output element matters) and compares each
leaf's .grad with (L(x + eps) - L(x - eps)) / 2eps, where L = sum(out * upstream), for every
element of every input. Inputs are kept away from kinks (abs, relu, clamp, maximum) and from the
edges of domains (log, sqrt, rsqrt, pow). The nn.functional ops: test_autograd_functional.py.
"""
import unittest

import numpy as np

import dyn
from dyntest import to_dyn

F32, F64, I64 = dyn.float32, dyn.float64, dyn.int64
EPS = 1e-6
# The central difference of a float64 function has truncation error ~eps^2 * f''' (~1e-12) and
# rounding error ~1e-16 * sum|out * upstream| / eps (~1e-10 of that scale), so an absolute
# tolerance of 1e-7 times that scale plus rtol 1e-5 leaves margin without hiding wrong formulas.
RTOL, ATOL = 1e-5, 1e-7


def _loss(out, g):
    return float(np.sum(out.numpy().astype(np.float64) * g))


def gradcheck(tc, fn, inputs, layouts=None, seed=0, msg="", scalar_backward=None):
    """Checks d(sum(fn(*inputs) * G))/d(inputs) from backward() against central differences.

    inputs: float64 numpy arrays, all differentiated. layouts: per input, a dyntest layout
    ('contig', 'transposed', 'sliced'): the leaf is then a strided view of a bigger tensor.
    scalar_backward: for a one-element output, call backward() without `gradient=` (default True).
    """
    inputs = [np.array(a, dtype=np.float64) for a in inputs]
    layouts = layouts or ["contig"] * len(inputs)
    r = np.random.default_rng(seed)
    leaves = []
    for a, lay in zip(inputs, layouts):
        t = to_dyn(a, lay)
        t.requires_grad_()
        tc.assertTrue(t.is_leaf, msg)
        leaves.append(t)
    out = fn(*leaves)
    tc.assertIsInstance(out, dyn.Tensor, msg)
    tc.assertEqual(out.dtype, F64, f"{msg}: output dtype")
    tc.assertTrue(out.requires_grad, f"{msg}: output does not require grad")
    tc.assertIsNotNone(out.grad_fn, f"{msg}: output has no grad_fn")
    shape = tuple(out.shape)
    if scalar_backward is None:
        scalar_backward = out.numel() == 1
    if scalar_backward:
        g = np.ones(shape)
        out.backward()
    else:
        g = r.standard_normal(shape)
        out.backward(gradient=dyn.tensor(g))
    with dyn.no_grad():
        scale = max(1.0, float(np.sum(np.abs(fn(*[dyn.tensor(a) for a in inputs]).numpy() * g))))
    for k, (a, leaf) in enumerate(zip(inputs, leaves)):
        where = f"{msg}: input {k} {a.shape} ({layouts[k]})"
        tc.assertIsNotNone(leaf.grad, f"{where}: .grad is None")
        tc.assertEqual(tuple(leaf.grad.shape), a.shape, f"{where}: grad shape")
        tc.assertEqual(leaf.grad.dtype, F64, f"{where}: grad dtype")
        got = leaf.grad.numpy()
        num = np.zeros(a.shape)
        flat = num.reshape(-1)
        for j in range(a.size):
            vals = []
            for sgn in (1.0, -1.0):
                pert = [b.copy() for b in inputs]
                pert[k].reshape(-1)[j] += sgn * EPS
                with dyn.no_grad():
                    vals.append(_loss(fn(*[dyn.tensor(b) for b in pert]), g))
            flat[j] = (vals[0] - vals[1]) / (2 * EPS)
        bad = np.abs(got - num) > ATOL * scale + RTOL * np.abs(num)
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            tc.fail(f"{where}: {int(bad.sum())}/{a.size} grad elements differ; first at {i}: "
                    f"backward {got[i]!r}, finite difference {num[i]!r}\nbackward:\n{got}\nnumeric:\n{num}")


def rnd(shape, seed=0, kind="normal"):
    """float64 test data: 'normal'; 'positive' in [0.5, 2.5); 'away' (|x| >= 0.2, no kink at 0);
    'frac' (x - floor(x) in [0.2, 0.8], no step of floor/ceil)."""
    r = np.random.default_rng(seed)
    shape = tuple(shape)
    if kind == "positive":
        return np.asarray(r.uniform(0.5, 2.5, shape))
    if kind == "away":
        return np.asarray(r.choice([-1.0, 1.0], shape) * r.uniform(0.2, 2.0, shape))
    if kind == "frac":
        return np.asarray(r.integers(-3, 3, shape) + r.uniform(0.2, 0.8, shape))
    return np.asarray(r.standard_normal(shape))


LAYOUT_SETS = ("contig", "transposed", "sliced")


class TestGradcheckItself(unittest.TestCase):
    def test_catches_a_wrong_gradient(self):
        # x * x.detach() has backward grad x, but the function's true derivative is 2x
        with self.assertRaises(AssertionError):
            gradcheck(self, lambda x: x * x.detach(), [rnd((3,), 1, "away")])
        with self.assertRaises(AssertionError):  # a missing dependence on the second input
            gradcheck(self, lambda a, b: a + b.detach(), [rnd((2,)), rnd((2,), 1)])

    def test_passes_a_right_gradient(self):
        gradcheck(self, lambda x: x * x, [rnd((3,), 1)], ["sliced"])


class TestUnary(unittest.TestCase):
    CASES = [
        ("neg", lambda x: -x, "normal"),
        ("neg fn", lambda x: x.neg(), "normal"),
        ("abs", lambda x: x.abs(), "away"),
        ("exp", lambda x: x.exp(), "normal"),
        ("log", lambda x: x.log(), "positive"),
        ("sqrt", lambda x: x.sqrt(), "positive"),
        ("rsqrt", lambda x: x.rsqrt(), "positive"),
        ("sin", lambda x: x.sin(), "normal"),
        ("cos", lambda x: x.cos(), "normal"),
        ("tanh", lambda x: x.tanh(), "normal"),
        ("sigmoid", lambda x: x.sigmoid(), "normal"),
        ("relu", lambda x: x.relu(), "away"),
        ("gelu", lambda x: x.gelu(), "normal"),
        ("silu", lambda x: x.silu(), "normal"),
        ("floor", lambda x: x.floor(), "frac"),
        ("ceil", lambda x: x.ceil(), "frac"),
        ("dyn.exp", lambda x: dyn.exp(x), "normal"),
    ]

    def test_unary(self):
        for name, fn, kind in self.CASES:
            for shape in [(3, 4), (5,), ()]:
                for lay in LAYOUT_SETS:
                    with self.subTest(op=name, shape=shape, layout=lay):
                        gradcheck(self, fn, [rnd(shape, len(name), kind)], [lay], msg=name)

    def test_floor_ceil_gradient_is_zero(self):
        for fn in (lambda x: x.floor(), lambda x: x.ceil()):
            x = dyn.tensor(rnd((4,), 1, "frac"), requires_grad=True)
            fn(x).sum().backward()
            self.assertTrue(np.array_equal(x.grad.numpy(), np.zeros(4)))

    def test_kink_conventions(self):
        # at the kink PyTorch's subgradients are 0 for abs and relu
        x = dyn.tensor([0.0, -1.0, 2.0], dtype=F64, requires_grad=True)
        x.abs().sum().backward()
        self.assertEqual(x.grad.tolist(), [0.0, -1.0, 1.0])
        x.grad = None
        x.relu().sum().backward()
        self.assertEqual(x.grad.tolist(), [0.0, 0.0, 1.0])

    def test_clamp(self):
        # values at least 0.1 away from the bounds -0.5 and 0.7
        a = np.array([[-1.3, -0.7, -0.3, 0.0], [0.4, 0.6, 0.8, 1.9], [-2.0, 0.1, 0.9, -0.1]])
        for name, fn in [("both", lambda x: x.clamp(-0.5, 0.7)), ("min", lambda x: x.clamp(min=-0.5)),
                         ("max", lambda x: x.clamp(max=0.7)), ("clip", lambda x: x.clip(-0.5, 0.7)),
                         ("dyn.clamp", lambda x: dyn.clamp(x, -0.5, 0.7))]:
            for lay in LAYOUT_SETS:
                with self.subTest(clamp=name, layout=lay):
                    gradcheck(self, fn, [a], [lay], msg=f"clamp {name}")

    def test_clamp_values(self):
        x = dyn.tensor([-2.0, -0.5, 0.0, 0.7, 3.0], dtype=F64, requires_grad=True)
        x.clamp(-0.5, 0.7).sum().backward()
        # inside the closed interval [min, max] the gradient passes (PyTorch keeps it at the bounds)
        self.assertEqual(x.grad.tolist(), [0.0, 1.0, 1.0, 1.0, 0.0])


def _sep(shape_a, shape_b, seed):
    """(a, b) broadcastable with |a - b| >= 0.2 wherever they meet: no ties for maximum/minimum."""
    a, b = rnd(shape_a, seed), rnd(shape_b, seed + 1)
    for shift in np.arange(0.0, 10.0, 0.37):
        if (np.abs(a - (b + shift)) >= 0.2).all():
            return a, b + shift
    raise AssertionError("no separating shift")


BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((4,), (2, 3, 4)), ((3, 4), ()),
                 ((), (3, 4)), ((2, 1, 4), (3, 1))]


class TestBinary(unittest.TestCase):
    OPS = [
        ("add", lambda a, b: a + b, "normal", "normal"),
        ("sub", lambda a, b: a - b, "normal", "normal"),
        ("mul", lambda a, b: a * b, "normal", "normal"),
        ("div", lambda a, b: a / b, "normal", "away"),
        ("pow", lambda a, b: a ** b, "positive", "normal"),
        ("dyn.add", lambda a, b: dyn.add(a, b), "normal", "normal"),
        ("Tensor.mul", lambda a, b: a.mul(b), "normal", "normal"),
        ("Tensor.div", lambda a, b: a.div(b), "normal", "away"),
        ("dyn.pow", lambda a, b: dyn.pow(a, b), "positive", "normal"),
    ]

    def test_tensor_tensor(self):
        for name, fn, ka, kb in self.OPS:
            for i, (sa, sb) in enumerate(BINARY_SHAPES):
                lays = ["sliced", "transposed"] if i % 2 else ["contig", "contig"]
                with self.subTest(op=name, a=sa, b=sb):
                    gradcheck(self, fn, [rnd(sa, i, ka), rnd(sb, i + 7, kb)], lays, msg=name)

    def test_same_tensor_both_sides(self):
        for name, fn, kind in [("x*x", lambda x: x * x, "normal"), ("x/x", lambda x: x / x, "away"),
                               ("x**x", lambda x: x ** x, "positive"), ("x-x", lambda x: x - x + x * 0.5, "normal")]:
            with self.subTest(op=name):
                gradcheck(self, fn, [rnd((3, 4), 3, kind)], ["transposed"], msg=name)

    def test_python_scalar_either_side(self):
        cases = [
            ("x+s", lambda x: x + 2.5, "normal"), ("s+x", lambda x: 2.5 + x, "normal"),
            ("x-s", lambda x: x - 2.5, "normal"), ("s-x", lambda x: 2.5 - x, "normal"),
            ("x*s", lambda x: x * -1.5, "normal"), ("s*x", lambda x: -1.5 * x, "normal"),
            ("x*int", lambda x: x * 3, "normal"), ("int-x", lambda x: 3 - x, "normal"),
            ("x/s", lambda x: x / 0.75, "normal"), ("s/x", lambda x: 0.75 / x, "away"),
            ("int/x", lambda x: 2 / x, "away"),
            ("x**2", lambda x: x ** 2, "normal"), ("x**3", lambda x: x ** 3, "normal"),
            ("x**2.5", lambda x: x ** 2.5, "positive"), ("x**-1.5", lambda x: x ** -1.5, "positive"),
            ("x**0.5", lambda x: x ** 0.5, "positive"), ("s**x", lambda x: 2.5 ** x, "normal"),
            ("x.pow(2)", lambda x: x.pow(2), "normal"),
            ("maximum(x, s)", lambda x: x.maximum(0.0), "away"),
            ("minimum(x, s)", lambda x: x.minimum(0.0), "away"),
        ]
        for name, fn, kind in cases:
            for shape, lay in [((3, 4), "transposed"), ((5,), "sliced"), ((), "contig")]:
                with self.subTest(op=name, shape=shape):
                    gradcheck(self, fn, [rnd(shape, 4, kind)], [lay], msg=name)

    def test_maximum_minimum(self):
        for name, fn in [("maximum", lambda a, b: dyn.maximum(a, b)), ("minimum", lambda a, b: dyn.minimum(a, b)),
                         ("Tensor.maximum", lambda a, b: a.maximum(b))]:
            for i, (sa, sb) in enumerate(BINARY_SHAPES):
                a, b = _sep(sa, sb, 10 * i)
                with self.subTest(op=name, a=sa, b=sb):
                    gradcheck(self, fn, [a, b], ["transposed", "sliced"] if i % 2 else None, msg=name)

    def test_maximum_minimum_ties_split(self):
        for op, ga, gb in [("maximum", [0.5, 0.0, 1.0], [0.5, 1.0, 0.0]),
                           ("minimum", [0.5, 1.0, 0.0], [0.5, 0.0, 1.0])]:
            a = dyn.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
            b = dyn.tensor([1.0, 5.0, 0.0], dtype=F64, requires_grad=True)
            getattr(dyn, op)(a, b).sum().backward()
            self.assertEqual((a.grad.tolist(), b.grad.tolist()), (ga, gb), op)
        # the same tensor on both sides: the halves add up to 1
        x = dyn.tensor([1.0, -2.0], dtype=F64, requires_grad=True)
        dyn.maximum(x, x).sum().backward()
        self.assertEqual(x.grad.tolist(), [1.0, 1.0])
        # broadcast tie: b (1 element) ties with two of a's elements, gets half of each
        a = dyn.tensor([1.0, 1.0, 0.0], dtype=F64, requires_grad=True)
        b = dyn.tensor([1.0], dtype=F64, requires_grad=True)
        dyn.maximum(a, b).backward(gradient=dyn.tensor([2.0, 4.0, 8.0], dtype=F64))
        self.assertEqual((a.grad.tolist(), b.grad.tolist()), ([1.0, 2.0, 0.0], [11.0]))

    def test_pow_at_zero_base(self):
        # PyTorch's conventions where the formulas give 0 * inf: d/dx x**0 = 0 (also at x = 0),
        # and d/de x**e = 0 where x == 0 and e >= 0 (result * log(x) would be 0 * -inf = nan)
        def grads(fn, *vals):
            ts = [dyn.tensor(v, dtype=F64, requires_grad=True) for v in vals]
            fn(*ts).sum().backward()
            return [t.grad.tolist() for t in ts]
        with self.subTest("d/dx x**0"):
            self.assertEqual(grads(lambda x: x ** 0, [0.0, 2.0]), [[0.0, 0.0]])
        with self.subTest("d/dx x**t, t = 0 at x = 0"):
            self.assertEqual(grads(lambda x: x ** dyn.tensor([0.0, 2.0], dtype=F64), [0.0, 2.0]), [[0.0, 4.0]])
        with self.subTest("d/dx x**e, d/de x**e at x = 0"):
            gx, ge = grads(lambda x, e: x ** e, [0.0, 2.0], [2.0, 3.0])
            self.assertEqual(gx, [0.0, 12.0])
            np.testing.assert_allclose(ge, [0.0, 8.0 * np.log(2.0)], rtol=1e-15)
        with self.subTest("d/dz 0**z"):
            self.assertEqual(grads(lambda z: 0.0 ** z, [1.0, 2.0]), [[0.0, 0.0]])

    def test_where(self):
        cond_np = rnd((3, 4), 5) > 0
        cond = dyn.tensor(cond_np)
        cases = [
            ("same shape", lambda a, b: dyn.where(cond, a, b), (3, 4), (3, 4)),
            ("broadcast", lambda a, b: dyn.where(cond, a, b), (3, 1), (4,)),
            ("0-d", lambda a, b: dyn.where(cond, a, b), (), (3, 4)),
            ("method", lambda a, b: a.where(cond, b), (3, 4), (1, 4)),
            ("cond wider", lambda a, b: dyn.where(dyn.tensor(rnd((2, 3, 4), 6) > 0), a, b), (4,), (3, 1)),
        ]
        for name, fn, sa, sb in cases:
            with self.subTest(where=name):
                gradcheck(self, fn, [rnd(sa, 1), rnd(sb, 2)], msg=f"where {name}")
        with self.subTest(where="scalar other"):
            gradcheck(self, lambda a: dyn.where(cond, a, 0.0), [rnd((3, 4), 3)], ["transposed"], msg="where s")
        with self.subTest(where="scalar input"):
            gradcheck(self, lambda b: dyn.where(cond, 1.5, b), [rnd((3, 4), 3)], ["sliced"], msg="where s2")


class TestReductions(unittest.TestCase):
    DIMS = [None, 0, 1, 2, -1, (0, 2), (-1, -2), (0, 1, 2)]

    def _kw(self, dim, keep):
        return {"keepdim": keep} if dim is None else {"dim": dim, "keepdim": keep}

    def test_sum_mean_amax_amin(self):
        a = rnd((2, 3, 4), 6)  # distinct values: no ties for amax/amin
        for op in ("sum", "mean", "amax", "amin"):
            for dim in self.DIMS:
                for keep in (False, True):
                    if dim is None and (keep or op in ("amax", "amin")):
                        continue
                    kw = self._kw(dim, keep)
                    for lay in ("contig", "transposed"):
                        with self.subTest(op=op, dim=dim, keepdim=keep, layout=lay):
                            gradcheck(self, lambda x: getattr(x, op)(**kw), [a], [lay], msg=f"{op} {kw}")
        for name, fn in [("sum()", lambda x: x.sum()), ("mean()", lambda x: x.mean()),
                         ("max()", lambda x: x.max()), ("min()", lambda x: x.min()),
                         ("amax()", lambda x: x.amax()), ("dyn.sum(x, 1)", lambda x: dyn.sum(x, 1)),
                         ("sum positional", lambda x: x.sum(0, True)), ("0-d sum", lambda x: x.sum())]:
            with self.subTest(op=name):
                gradcheck(self, fn, [a if name != "0-d sum" else rnd((), 1)], ["sliced"], msg=name)

    def test_amax_amin_ties_share(self):
        x = dyn.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], dtype=F64, requires_grad=True)
        x.amax(1).sum().backward()
        self.assertEqual(x.grad.tolist(), [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
        x.grad = None
        x.max().backward()
        self.assertEqual(x.grad.tolist(), [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])
        x.grad = None
        x.amin(0).sum().backward()
        self.assertEqual(x.grad.tolist(), [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])

    def test_max_min_dim(self):
        a = rnd((3, 4, 2), 7)
        for op in ("max", "min"):
            for dim in (0, 1, 2, -1):
                for keep in (False, True):
                    with self.subTest(op=op, dim=dim, keepdim=keep):
                        gradcheck(self, lambda x: getattr(x, op)(dim, keepdim=keep).values, [a], ["transposed"],
                                  msg=f"{op}({dim})")
                        gradcheck(self, lambda x: getattr(x, op)(dim=dim, keepdim=keep)[0] * 2.0, [a], ["sliced"],
                                  msg=f"{op}(dim={dim})[0]")

    def test_max_dim_ties_follow_index(self):
        x = dyn.tensor([[1.0, 3.0, 3.0], [5.0, 5.0, 0.0]], dtype=F64, requires_grad=True)
        vals, idx = x.max(1)
        vals.sum().backward()
        want = np.zeros((2, 3))
        want[np.arange(2), idx.numpy()] = 1.0
        self.assertEqual(x.grad.tolist(), want.tolist())
        self.assertFalse(idx.requires_grad)

    def test_softmax_log_softmax(self):
        for op in ("softmax", "log_softmax"):
            for shape, dims in [((3, 4), (0, 1, -1)), ((2, 3, 4), (0, 1, 2, -2)), ((5,), (0, -1))]:
                for dim in dims:
                    for lay in ("contig", "transposed"):
                        with self.subTest(op=op, shape=shape, dim=dim, layout=lay):
                            gradcheck(self, lambda x: getattr(x, op)(dim), [rnd(shape, 8) * 2], [lay],
                                      msg=f"{op}({dim})")
        with self.subTest(op="dyn.softmax"):
            gradcheck(self, lambda x: dyn.softmax(x, 1), [rnd((3, 4), 9)], msg="dyn.softmax")
        with self.subTest(op="softmax weighted sum"):  # a scalar root: backward() without gradient=
            gradcheck(self, lambda x: (x.softmax(1) * dyn.tensor(rnd((3, 4), 10))).sum(), [rnd((3, 4), 9)],
                      msg="softmax weighted sum")


class TestMatmul(unittest.TestCase):
    SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (2, 4, 5)),
              ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (2, 4, 5)),
              ((2, 3, 4), (4,)), ((1, 3, 4), (2, 4, 2))]

    def test_matmul(self):
        for i, (sa, sb) in enumerate(self.SHAPES):
            for lays in (["contig", "contig"], ["transposed", "sliced"]):
                with self.subTest(a=sa, b=sb, layouts=lays):
                    gradcheck(self, lambda a, b: a @ b, [rnd(sa, i), rnd(sb, i + 20)], lays, msg="matmul")
        with self.subTest(form="dyn.matmul / mm / Tensor.matmul / x @ x.T"):
            gradcheck(self, lambda a, b: dyn.matmul(a, b) + dyn.mm(a, b) + a.matmul(b), [rnd((2, 3)), rnd((3, 2))],
                      msg="forms")
            gradcheck(self, lambda a: a @ a.T, [rnd((3, 4))], ["transposed"], msg="x @ x.T")


if __name__ == "__main__":
    unittest.main()
