"""Gradient checks of views, indexing, gathers, joins and casts (finite differences: see
test_autograd_ops.gradcheck), and the op table's coverage: every op of core/ops/ops.def is
either differentiable (with the grad_fn name it shows) or listed as not differentiable here.
"""
import unittest

import numpy as np

import _dyn
import dyn
from test_autograd_ops import gradcheck, rnd

F32, F64, I64 = dyn.float32, dyn.float64, dyn.int64
IDX = dyn.tensor([2, 0, 2, 1])  # repeated index: gradients accumulate


class TestViews(unittest.TestCase):
    CASES = [
        ("view", lambda x: x.view(6, 4)), ("view -1", lambda x: x.view(-1)),
        ("reshape", lambda x: x.reshape(4, 3, 2)), ("flatten", lambda x: x.flatten()),
        ("flatten(1)", lambda x: x.flatten(1)), ("flatten(0, 1)", lambda x: x.flatten(0, 1)),
        ("permute", lambda x: x.permute(2, 0, 1)), ("permute neg", lambda x: x.permute(-1, -3, -2)),
        ("transpose", lambda x: x.transpose(0, 2)), ("transpose neg", lambda x: x.transpose(-1, 1)),
        ("[0].T", lambda x: x[0].T), ("[0].t()", lambda x: x[0].t()),
        ("unsqueeze", lambda x: x.unsqueeze(1)), ("unsqueeze -1", lambda x: x.unsqueeze(-1)),
        ("x[None]", lambda x: x[None]), ("squeeze(dim)", lambda x: x[:, :1].squeeze(1)),
        ("squeeze()", lambda x: x[:1, :, 2:3].squeeze()), ("expand", lambda x: x.expand(3, 2, 3, 4)),
        ("expand -1", lambda x: x[:, :1].expand(-1, 5, -1)), ("expand_as", lambda x: x[:1].expand_as(dyn.zeros(3, 3, 4))),
        ("permute then reshape", lambda x: x.permute(2, 0, 1).reshape(4, 6)),
        ("view chain", lambda x: x.transpose(0, 1).unsqueeze(0).flatten(2).squeeze(0) * 2.0),
        ("dyn.reshape", lambda x: dyn.reshape(x, (3, 8))), ("dyn.transpose", lambda x: dyn.transpose(x, 0, 1)),
    ]

    def test_views(self):
        for name, fn in self.CASES:
            # view() of a strided leaf is (correctly) an error: view cases run on contiguous leaves,
            # plus a view of a transposed-then-contiguous leaf
            lays = ("contig",) if name.startswith("view") else ("contig", "transposed", "sliced")
            for lay in lays:
                with self.subTest(op=name, layout=lay):
                    gradcheck(self, fn, [rnd((2, 3, 4), 1)], [lay], msg=name)
        gradcheck(self, lambda x: x.T.contiguous().view(-1), [rnd((3, 4), 1)], ["transposed"], msg="T.contiguous.view")

    def test_view_of_view_accumulates(self):
        # two overlapping views of one leaf: each element's gradient is the sum of its uses
        gradcheck(self, lambda x: x[1:] * x[:-1] + x.T[:, 1:].T, [rnd((4, 3), 2)], ["transposed"], msg="overlap")


class TestIndexing(unittest.TestCase):
    CASES = [
        ("x[1]", lambda x: x[1]), ("x[-1]", lambda x: x[-1]), ("x[:, 2]", lambda x: x[:, 2]),
        ("x[1, 2, 3]", lambda x: x[1, 2, 3]), ("x[..., 1]", lambda x: x[..., 1]),
        ("x[:, 1:3]", lambda x: x[:, 1:3]), ("x[..., 1:]", lambda x: x[..., 1:]),
        ("x[:, ::2]", lambda x: x[:, ::2]), ("x[1:, ::2, -2]", lambda x: x[1:, ::2, -2]),
        ("x[:, None, 1]", lambda x: x[:, None, 1]), ("x[:, -2:]", lambda x: x[:, -2:]),
        ("x[1][2:]", lambda x: x[1][2:]), ("x[0, 1:2, ::3]", lambda x: x[0, 1:2, ::3]),
        ("x[:, :0]", lambda x: x[:, 1:2] + x[:, :0].sum()),
        ("select twice", lambda x: x[0] * x[1]),
    ]

    def test_basic_indexing(self):
        for name, fn in self.CASES:
            for lay in ("contig", "transposed", "sliced"):
                with self.subTest(index=name, layout=lay):
                    gradcheck(self, fn, [rnd((2, 3, 4), 3)], [lay], msg=name)

    def test_integer_tensor_indexing(self):
        cases = [
            ("w[idx]", lambda w: w[IDX]), ("w[:, idx]", lambda w: w[:, IDX]),
            ("w[..., idx]", lambda w: w[..., IDX]),
            ("w[2-d idx]", lambda w: w[dyn.tensor([[0, 1], [1, 1]])]),
            ("w[negative idx]", lambda w: w[dyn.tensor([-1, 0, -1])]),
            ("w[0-d idx]", lambda w: w[dyn.tensor(1)]), ("w[:, 0-d idx]", lambda w: w[:, dyn.tensor(2)]),
            ("index_select 0", lambda w: w.index_select(0, IDX)),
            ("index_select 1", lambda w: w.index_select(1, dyn.tensor([3, 3, 0]))),
            ("w[idx] * w[idx]", lambda w: w[IDX] * w[IDX].exp()),
        ]
        for name, fn in cases:
            for lay in ("contig", "transposed"):
                with self.subTest(index=name, layout=lay):
                    gradcheck(self, fn, [rnd((3, 4), 4)], [lay], msg=name)

    def test_repeated_index_accumulates(self):
        w = dyn.tensor(rnd((3, 2), 5), requires_grad=True)
        w[dyn.tensor([1, 1, 1, 0])].sum().backward()
        self.assertEqual(w.grad.tolist(), [[1.0, 1.0], [3.0, 3.0], [0.0, 0.0]])

    def test_boolean_mask_indexing(self):
        # x[mask] is masked_select: PyTorch differentiates it (IndexBackward0); the gradient of the
        # selected elements must not silently disappear.
        mask = dyn.tensor(rnd((3, 4), 6) > 0)
        gradcheck(self, lambda x: x[mask] * 2.0, [rnd((3, 4), 7)], msg="x[mask]")

    def test_gather(self):
        cases = [
            ((3, 4), 1, [[0, 3], [1, 1], [2, 0]]),
            ((3, 4), 0, [[0, 2, 2, 1], [0, 0, 1, 2]]),
            ((3, 4), -1, [[3], [3], [0]]),
            ((2, 3, 4), 2, np.array([[[0], [1], [3]], [[2], [2], [0]]])),
            ((2, 3, 4), 1, np.zeros((2, 5, 4), dtype=np.int64)),
        ]
        for shape, dim, idx in cases:
            index = dyn.tensor(np.asarray(idx, dtype=np.int64))
            for lay in ("contig", "transposed"):
                with self.subTest(shape=shape, dim=dim, layout=lay):
                    gradcheck(self, lambda x: x.gather(dim, index), [rnd(shape, 8)], [lay], msg=f"gather {dim}")
                    gradcheck(self, lambda x: dyn.gather(x, dim, index), [rnd(shape, 8)], [lay], msg="dyn.gather")


class TestJoins(unittest.TestCase):
    def test_cat(self):
        cases = [
            ("dim 0", lambda a, b, c: dyn.cat([a, b, c], 0), [(2, 3), (1, 3), (4, 3)]),
            ("dim 1", lambda a, b, c: dyn.cat([a, b, c], dim=1), [(2, 3), (2, 1), (2, 2)]),
            ("dim -1 3-d", lambda a, b, c: dyn.cat((a, b, c), -1), [(2, 2, 3), (2, 2, 1), (2, 2, 2)]),
            ("same tensor twice", lambda a, b, c: dyn.cat([a, b, a, c], 0), [(2, 3), (1, 3), (1, 3)]),
        ]
        for name, fn, shapes in cases:
            for lays in (None, ["transposed", "sliced", "transposed"]):
                with self.subTest(cat=name, layouts=lays):
                    gradcheck(self, fn, [rnd(s, i) for i, s in enumerate(shapes)], lays, msg=f"cat {name}")

    def test_cat_with_constant(self):
        const = dyn.tensor(rnd((2, 3), 9))
        gradcheck(self, lambda a: dyn.cat([const, a, const], 0) * 2.0, [rnd((1, 3), 1)], msg="cat const")

    def test_stack(self):
        for dim in (0, 1, 2, -1):
            for lays in (None, ["transposed", "sliced"]):
                with self.subTest(dim=dim, layouts=lays):
                    gradcheck(self, lambda a, b: dyn.stack([a, b, a * b], dim), [rnd((3, 4), 1), rnd((3, 4), 2)],
                              lays, msg=f"stack {dim}")


class TestCasts(unittest.TestCase):
    # A round trip through float32 is not differentiable by finite differences at eps 1e-6; the
    # gradient of a cast is the identity cast back to the input's dtype, checked exactly.
    def test_float64_through_float32(self):
        w = rnd((3, 4), 1).astype(np.float32)
        for name, fn in [("to", lambda x: x.to(F32)), ("float", lambda x: x.float()),
                         ("to(dtype=)", lambda x: x.to(dtype=F32))]:
            with self.subTest(cast=name):
                x = dyn.tensor(rnd((3, 4), 2), requires_grad=True)
                y = fn(x)
                self.assertEqual((y.dtype, y.requires_grad), (F32, True))
                (y * dyn.tensor(w)).sum().backward()
                self.assertEqual(x.grad.dtype, F64)
                self.assertTrue(np.array_equal(x.grad.numpy(), w.astype(np.float64)), name)

    def test_float32_through_float64(self):
        x = dyn.tensor(rnd((2, 3), 3).astype(np.float32), requires_grad=True)
        g = rnd((2, 3), 4)
        (x.double() * dyn.tensor(g)).sum().backward()
        self.assertEqual(x.grad.dtype, F32)
        self.assertTrue(np.array_equal(x.grad.numpy(), g.astype(np.float32)))

    def test_cast_in_float64_chain(self):
        # float64 -> float64 casts (to(F64), double(), clone, contiguous) are exact and checkable
        for name, fn in [("to F64", lambda x: x.to(F64) * x), ("double", lambda x: x.double().exp()),
                         ("clone", lambda x: x.clone() * 3.0), ("contiguous", lambda x: x.T.contiguous().sin()),
                         ("dyn.clone", lambda x: dyn.clone(x) + x)]:
            with self.subTest(cast=name):
                gradcheck(self, fn, [rnd((3, 4), 5)], ["transposed"], msg=name)

    def test_integer_cast_has_no_gradient(self):
        x = dyn.tensor([1.5, -2.5], requires_grad=True)
        self.assertFalse(x.long().requires_grad)
        self.assertIsNone(x.long().grad_fn)


_x = lambda: dyn.tensor(rnd((3, 4), 1), requires_grad=True)  # noqa: E731
# op name -> an expression built from a fresh leaf x whose grad_fn is that op's node.
DIFFERENTIABLE = {
    "neg": lambda x: -x, "abs": lambda x: x.abs(), "exp": lambda x: x.exp(), "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(), "rsqrt": lambda x: x.rsqrt(), "sin": lambda x: x.sin(), "cos": lambda x: x.cos(),
    "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(), "relu": lambda x: x.relu(),
    "gelu": lambda x: x.gelu(), "silu": lambda x: x.silu(), "floor": lambda x: x.floor(), "ceil": lambda x: x.ceil(),
    "erf": lambda x: x.erf(), "expm1": lambda x: x.expm1(), "log1p": lambda x: x.log1p(),
    "atan2": lambda x: x.atan2(x + 1.0),
    "erfc": lambda x: x.erfc(), "tan": lambda x: (x * 0.5).tan(), "asin": lambda x: (x * 0.1).asin(),
    "acos": lambda x: (x * 0.1).acos(), "atan": lambda x: x.atan(), "sinh": lambda x: x.sinh(),
    "cosh": lambda x: x.cosh(), "asinh": lambda x: x.asinh(), "acosh": lambda x: (x * x + 1.5).acosh(),
    "atanh": lambda x: (x * 0.1).atanh(), "fmod": lambda x: x.fmod(x.abs() + 0.5),
    "hypot": lambda x: x.hypot(x + 1.0), "logaddexp": lambda x: x.logaddexp(x * 0.5),
    "add": lambda x: x + x, "sub": lambda x: x - 1.0, "mul": lambda x: 2.0 * x, "div": lambda x: x / x,
    "pow": lambda x: x ** 2, "maximum": lambda x: x.maximum(x), "minimum": lambda x: dyn.minimum(x, x),
    "remainder": lambda x: x % 1.5,
    "where": lambda x: dyn.where(x > 0, x, 0.0), "clamp": lambda x: x.clamp(0, 1), "cast": lambda x: x.float(),
    "sum": lambda x: x.sum(), "mean": lambda x: x.mean(1), "amax": lambda x: x.amax(0), "amin": lambda x: x.min(),
    "max_dim": lambda x: x.max(1).values, "min_dim": lambda x: x.min(0)[0],
    "softmax": lambda x: x.softmax(1), "log_softmax": lambda x: x.log_softmax(0), "matmul": lambda x: x @ x.T,
    "view": lambda x: x.view(12), "permute": lambda x: x.T, "expand": lambda x: x.expand(2, 3, 4),
    "select": lambda x: x[0], "slice": lambda x: x[1:], "unsqueeze": lambda x: x[None],
    "squeeze": lambda x: x[:1].squeeze(0), "index": lambda x: x[IDX[:2]],
    "gather": lambda x: x.gather(1, dyn.tensor([[0], [1], [2]])),
    "masked_select": lambda x: x[x > 0], "cat": lambda x: dyn.cat([x, x]),
    "index_add": lambda x: dyn.zeros(2, 4, dtype=x.dtype).index_add(0, dyn.tensor([1, 0, 1]), x),
    "scatter_add": lambda x: dyn.zeros(3, 4, dtype=x.dtype).scatter_add(1, dyn.tensor([[0, 1, 1, 0]] * 3), x),
    "scatter": lambda x: x.scatter(1, dyn.tensor([[0], [1], [2]]), dyn.zeros(3, 1, dtype=x.dtype)),
    "cumsum": lambda x: x.cumsum(1), "sort": lambda x: x.sort(0).values,
    "layer_norm": lambda x: dyn.nn.functional.layer_norm(x, x.shape[-1:]),
}
# Ops whose results carry no gradient: creation, random, boolean and integer results, and
# floor_divide (piecewise constant, as floor).
NOT_DIFFERENTIABLE = {
    "full": lambda x: dyn.full((2,), 1.0), "arange": lambda x: dyn.arange(3.0), "rand": lambda x: dyn.rand(2),
    "randn": lambda x: dyn.randn(2), "randint": lambda x: dyn.randint(0, 3, (2,)),
    "logical_not": lambda x: (x > 0).logical_not(), "eq": lambda x: x == x, "ne": lambda x: x != 0,
    "lt": lambda x: x < 0, "le": lambda x: x <= 0, "gt": lambda x: x > 0, "ge": lambda x: x >= 0,
    "logical_and": lambda x: (x > 0).logical_and(x < 1), "logical_or": lambda x: (x > 0).logical_or(x < 1),
    "logical_xor": lambda x: (x > 0).logical_xor(x < 1), "argmax": lambda x: x.argmax(1),
    "argmin": lambda x: x.argmin(), "floor_divide": lambda x: x // 2.0,
    "bitwise_and": lambda x: x.long() & 3, "bitwise_or": lambda x: x.long() | 3, "bitwise_xor": lambda x: x.long() ^ 3,
    "bitwise_not": lambda x: ~x.long(),
}


class TestLayerNormKernel(unittest.TestCase):
    def test_gradients_of_input_weight_and_bias(self):
        F = dyn.nn.functional
        gradcheck(self, lambda x, w, b: F.layer_norm(x, (4,), w, b), [rnd((3, 4), 30), rnd((4,), 31), rnd((4,), 32)],
                  ["transposed", "contig", "contig"], msg="layer_norm weight bias")
        gradcheck(self, lambda x, w: F.layer_norm(x, (3, 4), w), [rnd((2, 3, 4), 33), rnd((3, 4), 34)],
                  msg="layer_norm over two dims")

    def test_matches_the_definition(self):
        x = dyn.tensor(rnd((5, 6), 35))
        w, b = dyn.tensor(rnd((6,), 36)), dyn.tensor(rnd((6,), 37))
        got = dyn.nn.functional.layer_norm(x, (6,), w, b, eps=1e-5).numpy()
        a = x.numpy()
        want = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5) * w.numpy() + b.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    def test_bad_shapes_are_errors(self):
        x = dyn.randn(3, 4)
        with self.assertRaisesRegex(RuntimeError, "weight of shape"):
            dyn.nn.functional.layer_norm(x, (4,), dyn.ones(3))


# PyTorch numbers a node by the overload that made it: clamp with two number bounds is ClampBackward1.
OVERLOAD_NAMES = {"clamp": "ClampBackward1"}


class TestOpTableCoverage(unittest.TestCase):
    def test_every_op_is_classified(self):
        rows = _dyn._op_table()
        names = [r["name"] for r in rows]
        self.assertGreater(len(names), 50)
        # The table's deriv column agrees with what this test observes below.
        self.assertEqual(sorted(r["name"] for r in rows if r["differentiable"]), sorted(DIFFERENTIABLE))
        unknown = [n for n in names if n not in DIFFERENTIABLE and n not in NOT_DIFFERENTIABLE]
        self.assertEqual(unknown, [], "ops of the op table this test does not know: classify them")
        stale = [n for n in list(DIFFERENTIABLE) + list(NOT_DIFFERENTIABLE) if n not in names]
        self.assertEqual(stale, [])

    def test_differentiable_ops_record_their_node(self):
        for name, fn in DIFFERENTIABLE.items():
            if fn is None:
                continue
            with self.subTest(op=name):
                y = fn(_x())
                want = OVERLOAD_NAMES.get(name, "".join(p.capitalize() for p in name.split("_")) + "Backward0")
                self.assertTrue(y.requires_grad, f"{name}: result does not require grad")
                self.assertIsNotNone(y.grad_fn, f"{name}: no grad_fn")
                self.assertEqual(y.grad_fn.name(), want)
                self.assertEqual(repr(y.grad_fn), f"<{want}>")

    def test_remainder_gradient(self):
        # PyTorch: d/da remainder(a, b) = 1, d/db = -floor(a / b); keep a / b away from integers
        a = np.array([[2.3, -1.1, 4.6], [0.7, 5.2, -3.4]])
        b = np.array([1.5, 2.0, -1.3])
        gradcheck(self, lambda x: x % 1.5, [a], msg="x % s")
        gradcheck(self, lambda x, y: x % y, [a, b], msg="x % y")

    def test_non_differentiable_ops_do_not_require_grad(self):
        for name, fn in NOT_DIFFERENTIABLE.items():
            with self.subTest(op=name):
                y = fn(_x())
                self.assertFalse(y.requires_grad, name)
                self.assertIsNone(y.grad_fn, name)


if __name__ == "__main__":
    unittest.main()
