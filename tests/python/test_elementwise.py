"""Elementwise ops of dyn against numpy: unary, binary, broadcasting, layouts,
Python scalars, type promotion, integer floor division / remainder (in-place ops: test_inplace.py)."""
import operator
import unittest

import numpy as np

import dyn
from dyntest import LAYOUTS, assert_matches, np_dtype, pair, rand_np, rng, to_dyn, to_np

F32, F64, I64, BOOL = dyn.float32, dyn.float64, dyn.int64, dyn.bool
SHAPES = [(), (1,), (0, 3), (7,), (3, 4), (2, 3, 5)]
BCAST = [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (3,)), ((3,), ()),
         ((2, 1, 4), (3, 1)), ((0, 3), (1, 3)), ((0, 3), (3,)), ((1,), (5,)),
         ((1, 1), (3, 4)), ((5, 1, 1), (1, 1, 1)), ((4, 3), (4, 3))]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# name -> (numpy reference on float64, input kind, result kind)
# 'same': result dtype = input dtype, exact; 'float': float result (ints -> float32)
UNARY = {
    "abs": (np.abs, "normal", "same"),
    "neg": (np.negative, "normal", "same"),
    "relu": (lambda x: np.maximum(x, 0), "normal", "same"),
    "floor": (np.floor, "normal", "float_only_exact"),
    "ceil": (np.ceil, "normal", "float_only_exact"),
    "exp": (np.exp, "normal", "float"),
    "log": (np.log, "positive", "float"),
    "sqrt": (np.sqrt, "positive", "float"),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), "positive", "float"),
    "sin": (np.sin, "normal", "float"),
    "cos": (np.cos, "normal", "float"),
    "tanh": (np.tanh, "normal", "float"),
    "sigmoid": (_sigmoid, "normal", "float"),
}


class TestUnary(unittest.TestCase):
    def test_unary_float_all_shapes_layouts(self):
        r = rng(0)
        for name, (f, kind, res) in UNARY.items():
            for dt in (F32, F64):
                nd = np_dtype(dt)
                for shape in SHAPES:
                    for layout in LAYOUTS:
                        t, a = pair(shape, dt, r, layout, kind)
                        ref = f(a.astype(np.float64)).astype(nd)
                        exact = res != "float"
                        with self.subTest(op=name, dtype=str(dt), shape=shape, layout=layout):
                            assert_matches(getattr(t, name)(), ref, exact=exact, msg="method")
                            assert_matches(getattr(dyn, name)(t), ref, exact=exact, msg="function")
                            # the input is untouched
                            np.testing.assert_array_equal(to_np(t), a)

    def test_unary_int64_input(self):
        r = rng(1)
        for name, (f, kind, res) in UNARY.items():
            if res == "float_only_exact":
                continue
            for layout in LAYOUTS:
                t, a = pair((4, 5), I64, r, layout, kind)
                with self.subTest(op=name, layout=layout):
                    if res == "same":
                        assert_matches(getattr(t, name)(), f(a), msg=name)
                    else:  # int -> default float dtype, like torch
                        ref = f(a.astype(np.float32).astype(np.float64)).astype(np.float32)
                        assert_matches(getattr(dyn, name)(t), ref, msg=name)

    def test_special_values(self):
        x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan], dtype=np.float32)
        t = dyn.tensor(x)
        with np.errstate(all="ignore"):
            for name, (f, _, res) in UNARY.items():
                with self.subTest(op=name):
                    ref = f(x.astype(np.float64)).astype(np.float32)
                    assert_matches(getattr(t, name)(), ref, exact=res != "float", msg=name)

    def test_operators_neg_abs_invert(self):
        r = rng(2)
        for dt in (F32, F64, I64):
            t, a = pair((3, 4), dt, r, "transposed")
            assert_matches(-t, -a)
            assert_matches(abs(t), np.abs(a))
        t, a = pair((3, 4), BOOL, r, "sliced")
        assert_matches(~t, ~a)
        assert_matches(dyn.logical_not(t), ~a)


class TestBinary(unittest.TestCase):
    def _ref(self, op, a, b, res_nd):
        ac, bc = a.astype(res_nd), b.astype(res_nd)
        if op is operator.pow and res_nd.kind == "f":
            return np.power(ac.astype(np.float64), bc.astype(np.float64)).astype(res_nd)
        return op(ac, bc)

    def test_arithmetic_same_dtype_broadcast_layouts(self):
        r = rng(3)
        ops = [operator.add, operator.sub, operator.mul, operator.truediv,
               operator.floordiv, operator.mod, operator.pow]
        for dt in (F32, F64, I64):
            nd = np_dtype(dt)
            for sa, sb in BCAST:
                for la, lb in (("contig", "contig"), ("transposed", "sliced"),
                               ("sliced", "transposed")):
                    for op in ops:
                        if op is operator.pow:
                            if dt == I64:
                                a = r.integers(-5, 6, sa).astype(nd)
                                b = r.integers(0, 4, sb).astype(nd)
                            else:
                                a = rand_np(sa, dt, r, "positive")
                                b = rand_np(sb, dt, r, "unit") * 3
                        else:
                            a = rand_np(sa, dt, r)
                            kind = "nonzero" if op in (operator.truediv, operator.floordiv,
                                                       operator.mod) else "normal"
                            b = rand_np(sb, dt, r, kind)
                        res_nd = nd
                        if op is operator.truediv and dt == I64:
                            res_nd = np.dtype(np.float32)
                        ref = self._ref(op, a, b, res_nd)
                        exact = op is not operator.pow or dt == I64
                        with self.subTest(dtype=str(dt), shapes=(sa, sb), layouts=(la, lb),
                                          op=op.__name__):
                            got = op(to_dyn(a, la), to_dyn(b, lb))
                            assert_matches(got, ref, exact=exact, msg=op.__name__)

    def test_int_floordiv_mod_negative_python_semantics(self):
        a = np.array([7, -7, 7, -7, 0, 1, -1, 9, -9, 100], dtype=np.int64)
        b = np.array([2, 2, -2, -2, 3, -3, 3, 4, -4, -7], dtype=np.int64)
        ta, tb = dyn.tensor(a), dyn.tensor(b)
        assert_matches(ta // tb, a // b)
        assert_matches(ta % tb, a % b)
        # spot values from Python itself
        self.assertEqual((ta // tb).tolist(), [x // y for x, y in zip(a.tolist(), b.tolist())])
        self.assertEqual((ta % tb).tolist(), [x % y for x, y in zip(a.tolist(), b.tolist())])
        self.assertEqual((ta // -3).tolist(), [x // -3 for x in a.tolist()])
        self.assertEqual((ta % 3).tolist(), [x % 3 for x in a.tolist()])
        self.assertEqual((-7 // dyn.tensor([2, -2])).tolist(), [-4, 3])

    def test_float_floordiv_mod_negative(self):
        a = np.array([7.5, -7.5, 7.5, -7.5, 0.25, -3.0], dtype=np.float32)
        b = np.array([2.0, 2.0, -2.0, -2.0, -1.0, 1.5], dtype=np.float32)
        assert_matches(dyn.tensor(a) // dyn.tensor(b), np.floor_divide(a, b), exact=True)
        assert_matches(dyn.tensor(a) % dyn.tensor(b), np.mod(a, b), exact=True)
        self.assertEqual((dyn.tensor([-7.5]) % 2).tolist(), [0.5])

    def test_bool_arith(self):
        a = np.array([True, True, False, False])
        b = np.array([True, False, True, False])
        ta, tb = dyn.tensor(a), dyn.tensor(b)
        assert_matches(ta + tb, a | b)  # bool + bool -> bool
        assert_matches(ta * tb, a & b)
        with np.errstate(all="ignore"):
            ref = a.astype(np.float32) / b.astype(np.float32)
        assert_matches(ta / tb, ref, exact=True)

    def test_comparisons_all_dtypes(self):
        r = rng(4)
        cmps = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
        for dt in (F32, F64, I64, BOOL):
            for sa, sb in BCAST:
                for la in ("contig", "transposed"):
                    a = rand_np(sa, dt, r)
                    b = rand_np(sb, dt, r)
                    if dt in (F32, F64) and a.shape == b.shape and a.size:
                        b.flat[::2] = a.flat[::2]  # make some equal
                    for op in cmps:
                        with self.subTest(dtype=str(dt), shapes=(sa, sb), op=op.__name__):
                            assert_matches(op(to_dyn(a, la), to_dyn(b, "sliced")), op(a, b))
        # mixed dtypes compare after promotion
        ti = dyn.tensor([1, 2, 3])
        tf = dyn.tensor([1.0, 2.5, 2.0])
        assert_matches(ti == tf, np.array([True, False, False]))
        assert_matches(ti > tf, np.array([False, False, True]))
        assert_matches(tf <= 2, np.array([True, False, True]))
        assert_matches(2 < tf, np.array([False, True, False]))
        nan = dyn.tensor([float("nan"), 1.0])
        assert_matches(nan == nan, np.array([False, True]))
        assert_matches(nan != nan, np.array([True, False]))

    def test_logical_and_bitwise_bool(self):
        r = rng(5)
        for sa, sb in BCAST:
            a, b = rand_np(sa, BOOL, r), rand_np(sb, BOOL, r)
            ta, tb = to_dyn(a, "transposed"), to_dyn(b, "sliced")
            with self.subTest(shapes=(sa, sb)):
                assert_matches(ta & tb, a & b)
                assert_matches(ta | tb, a | b)
                assert_matches(ta ^ tb, a ^ b)
                assert_matches(dyn.logical_and(ta, tb), a & b)
                assert_matches(dyn.logical_or(ta, tb), a | b)
                assert_matches(dyn.logical_xor(ta, tb), a ^ b)
        x = np.array([0.0, 1.5, -2.0, 0.0], dtype=np.float32)
        y = np.array([0.0, 0.0, 3.0, 4.0], dtype=np.float32)
        tx, ty = dyn.tensor(x), dyn.tensor(y)
        assert_matches(dyn.logical_and(tx, ty), np.logical_and(x, y))
        assert_matches(dyn.logical_or(tx, ty), np.logical_or(x, y))
        assert_matches(dyn.logical_xor(tx, ty), np.logical_xor(x, y))
        assert_matches(dyn.logical_not(tx), np.logical_not(x))

    def test_maximum_minimum(self):
        r = rng(6)
        for dt in (F32, F64, I64):
            for sa, sb in BCAST:
                a, b = rand_np(sa, dt, r), rand_np(sb, dt, r)
                with self.subTest(dtype=str(dt), shapes=(sa, sb)):
                    assert_matches(dyn.maximum(to_dyn(a, "transposed"), to_dyn(b)), np.maximum(a, b))
                    assert_matches(dyn.minimum(to_dyn(a), to_dyn(b, "sliced")), np.minimum(a, b))
        x = np.array([np.nan, 1.0, 2.0], dtype=np.float32)
        y = np.array([0.0, np.nan, 1.0], dtype=np.float32)
        assert_matches(dyn.maximum(dyn.tensor(x), dyn.tensor(y)), np.maximum(x, y))
        assert_matches(dyn.minimum(dyn.tensor(x), dyn.tensor(y)), np.minimum(x, y))
        assert_matches(dyn.maximum(dyn.tensor([1, 5]), dyn.tensor([2.5, 0.5])),
                       np.array([2.5, 5.0], dtype=np.float32))

    def test_clamp(self):
        r = rng(7)
        a = rand_np((4, 5), F32, r)
        a[0, 0] = np.nan
        for layout in LAYOUTS:
            t = to_dyn(a, layout)
            assert_matches(t.clamp(min=-1.0, max=1.0), np.clip(a, -1.0, 1.0))
            assert_matches(t.clamp(min=0.0), np.maximum(a, np.float32(0)))
            assert_matches(t.clamp(max=0.5), np.minimum(a, np.float32(0.5)))
            assert_matches(dyn.clamp(t, -0.5, 0.5), np.clip(a, -0.5, 0.5))
            assert_matches(dyn.clamp(t, min=-2.0), np.maximum(a, np.float32(-2)))
            assert_matches(t.clamp(-1.0, 1.0), np.clip(a, -1.0, 1.0))
        # min > max: everything becomes max, like torch
        assert_matches(dyn.tensor([0.0, 5.0, -5.0]).clamp(min=2.0, max=1.0),
                       np.array([1.0, 1.0, 1.0], dtype=np.float32))
        ai = rand_np((3, 3), I64, r)
        assert_matches(dyn.tensor(ai).clamp(min=-2, max=3), np.clip(ai, -2, 3))

    def test_where(self):
        r = rng(8)
        for sc, sa, sb in [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((4,), (3, 4), ())]:
            c = rand_np(sc, BOOL, r)
            a, b = rand_np(sa, F32, r), rand_np(sb, F32, r)
            with self.subTest(shapes=(sc, sa, sb)):
                assert_matches(dyn.where(to_dyn(c, "sliced"), to_dyn(a, "transposed"), to_dyn(b)),
                               np.where(c, a, b))
        c = rand_np((5,), BOOL, r)
        a = rand_np((5,), F32, r)
        assert_matches(dyn.where(dyn.tensor(c), dyn.tensor(a), 0.0), np.where(c, a, np.float32(0)))
        assert_matches(dyn.where(dyn.tensor(c), -1.5, dyn.tensor(a)), np.where(c, np.float32(-1.5), a))
        t = dyn.tensor(a)
        assert_matches(dyn.where(t > 0, t, 0.0), np.where(a > 0, a, np.float32(0)))
        # promotion between the two branches
        a64 = a.astype(np.float64)
        assert_matches(dyn.where(dyn.tensor(c), dyn.tensor(a), dyn.tensor(a64)), np.where(c, a64, a64))
        ai = rand_np((5,), I64, r)
        assert_matches(dyn.where(dyn.tensor(c), dyn.tensor(ai), dyn.tensor(a)),
                       np.where(c, ai.astype(np.float32), a))


class TestLarge(unittest.TestCase):
    """Big enough for vectorized and multi-threaded kernels; odd sizes hit chunk edges."""

    def test_large_elementwise(self):
        r = rng(12)
        for dt in (F32, F64, I64):
            for layout in LAYOUTS:
                a = rand_np((301, 1037), dt, r, "nonzero")
                b = rand_np((301, 1), dt, r, "nonzero")
                c = rand_np((1037,), dt, r, "nonzero")
                ta, tb, tc = to_dyn(a, layout), to_dyn(b, layout), to_dyn(c, "sliced")
                with self.subTest(dtype=str(dt), layout=layout):
                    assert_matches(ta + tb, a + b, exact=True)
                    assert_matches(ta * tc - tb, a * c - b, exact=True)
                    assert_matches(ta // tb, np.floor_divide(a, b), exact=True)
                    assert_matches(ta % tc, np.mod(a, c), exact=True)
                    assert_matches(ta > tc, a > c)
                    assert_matches(dyn.maximum(ta, tb), np.maximum(a, b))
                    assert_matches(dyn.where(ta > 0, ta, tc), np.where(a > 0, a, c))
                    assert_matches(-ta, -a)
                    if dt != I64:
                        nd = np_dtype(dt)
                        assert_matches(ta / tb, a / b, exact=True)
                        assert_matches(ta.exp(), np.exp(a.astype(np.float64)).astype(nd))
                        assert_matches(ta.sigmoid(), _sigmoid(a.astype(np.float64)).astype(nd))
                        assert_matches(ta.tanh(), np.tanh(a.astype(np.float64)).astype(nd))
                        assert_matches(ta.abs().sqrt(), np.sqrt(np.abs(a).astype(np.float64)).astype(nd))
                        out = ta.clone()
                        out.mul_(tb).add_(1.5)
                        assert_matches(out, a * b + nd.type(1.5), exact=True)

    def test_permuted_operands_in_short_runs(self):
        # A permuted tensor is walked in runs of its innermost contiguous dim (here 5 or 17
        # elements) from run to run; threads start mid-run.
        r = rng(13)
        a = r.standard_normal((70, 33, 5, 17)).astype(np.float32)
        c = r.standard_normal((17,)).astype(np.float32)
        before = dyn.get_num_threads()
        try:
            for threads in (1, 2):
                dyn.set_num_threads(threads)
                for perm in ((2, 0, 1, 3), (1, 3, 0, 2), (3, 2, 1, 0)):
                    x, ref = dyn.tensor(a).permute(*perm), a.transpose(perm)
                    with self.subTest(threads=threads, perm=perm):
                        assert_matches(x.contiguous(), ref, exact=True)
                        assert_matches(x + 1.5, ref + np.float32(1.5), exact=True)
                        if ref.shape[-1] == 17:
                            assert_matches(x * dyn.tensor(c), ref * c, exact=True)
                        assert_matches(x[..., ::2].neg(), -ref[..., ::2], exact=True)
        finally:
            dyn.set_num_threads(before)

    def test_windows_walked_a_block_of_rows_at_a_time(self):
        # A window of a larger tensor (a convolution's shifted inputs) is walked a block of whole
        # rows at a time along the next dim; threads start and end mid-row and mid-block, and the
        # blocks end at every outer dim (shapes 5 x 7 x 33 x 37 and a size-1 dim).
        r = rng(15)
        a = r.standard_normal((5, 7, 36, 41)).astype(np.float32)
        b = r.standard_normal((5, 7, 36, 41)).astype(np.float32)
        before = dyn.get_num_threads()
        try:
            for threads in (1, 2):
                dyn.set_num_threads(threads)
                for win in ((slice(None), slice(None), slice(2, 35), slice(3, 40)),
                            (slice(None), slice(1, 6), slice(0, 36, 2), slice(0, 41)),
                            (slice(None), slice(3, 4), slice(1, 34), slice(1, 2))):
                    x, y = dyn.tensor(a)[win], dyn.tensor(b)[win]
                    ra, rb = a[win], b[win]
                    with self.subTest(threads=threads, window=win):
                        assert_matches(x.contiguous(), ra, exact=True)
                        assert_matches(x + y, ra + rb, exact=True)
                        assert_matches(x.exp(), dyn.tensor(np.ascontiguousarray(ra)).exp().numpy(), exact=True)
                        assert_matches(dyn.cat([x.unsqueeze(2), y.unsqueeze(2)], dim=2),
                                       np.stack([ra, rb], axis=2), exact=True)
                        big = dyn.zeros(5, 7, 40, 45)
                        dst = big[:, :ra.shape[1], 1:1 + ra.shape[2], 2:2 + ra.shape[3]]
                        dst.copy_(x)
                        around = big.numpy().copy()
                        assert_matches(dst, ra, exact=True)
                        around[:, :ra.shape[1], 1:1 + ra.shape[2], 2:2 + ra.shape[3]] = 0
                        self.assertFalse(around.any())  # nothing written outside the window
        finally:
            dyn.set_num_threads(before)

    def test_transposing_copies_and_casts(self):
        # Outputs whose contiguous dim is strided in the input (a transpose, NCHW -> NHWC) are
        # walked in tiles; edge tiles are partial (300 = 4 * 64 + 44, 37 = 4 * 8 + 5).
        r = rng(14)
        before = dyn.get_num_threads()
        try:
            for threads in (1, 2):
                dyn.set_num_threads(threads)
                for shape, perm in (((512, 512), (1, 0)), ((3, 200, 300), (0, 2, 1)), ((300, 37), (1, 0)),
                                    ((6, 40, 50, 9), (0, 3, 2, 1))):
                    a = r.standard_normal(shape).astype(np.float32)
                    x, ref = dyn.tensor(a).permute(*perm), a.transpose(perm)
                    with self.subTest(threads=threads, shape=shape, perm=perm):
                        assert_matches(x.contiguous(), ref, exact=True)
                        assert_matches(x.double(), ref.astype(np.float64), exact=True)
                        assert_matches(x.to(dyn.int64), ref.astype(np.int64), exact=True)
                        assert_matches(x.abs(), np.abs(ref), exact=True)
                        out = dyn.zeros(*ref.shape)
                        out.copy_(x)
                        assert_matches(out, ref, exact=True)
                        # into a view whose rows are strided: not walked in tiles, still right
                        big = dyn.zeros(*[s + 3 for s in ref.shape])
                        inner = tuple(slice(1, 1 + s) for s in ref.shape)
                        big[inner].copy_(x)
                        around = big.numpy().copy()
                        assert_matches(big[inner], ref, exact=True)
                        around[inner] = 0
                        self.assertFalse(around.any())  # nothing written outside the window
        finally:
            dyn.set_num_threads(before)


class TestScalarsAndPromotion(unittest.TestCase):
    def test_python_scalars_both_sides(self):
        r = rng(9)
        a = rand_np((3, 4), F32, r, "nonzero")
        t = to_dyn(a, "transposed")
        f32 = np.float32
        assert_matches(t + 2, a + f32(2), exact=True)
        assert_matches(2 + t, f32(2) + a, exact=True)
        assert_matches(t - 2.5, a - f32(2.5), exact=True)
        assert_matches(2.5 - t, f32(2.5) - a, exact=True)
        assert_matches(t * 0.1, a * f32(0.1), exact=True)
        assert_matches(3 * t, f32(3) * a, exact=True)
        assert_matches(t / 4, a / f32(4), exact=True)
        assert_matches(1 / t, f32(1) / a, exact=True)
        assert_matches(t ** 2, a * a, exact=True)
        assert_matches(abs(t) ** 0.5, np.sqrt(np.abs(a)))
        assert_matches(2 ** t, np.power(2.0, a.astype(np.float64)).astype(f32))
        assert_matches(t // 0.75, np.floor_divide(a, f32(0.75)), exact=True)
        assert_matches(t % 0.75, np.mod(a, f32(0.75)), exact=True)
        assert_matches(5 % t, np.mod(f32(5), a), exact=True)

        ai = rand_np((5,), I64, r, "nonzero")
        ti = dyn.tensor(ai)
        assert_matches(ti + 2, ai + 2)
        assert_matches(2 - ti, 2 - ai)
        assert_matches(ti * 3, ai * 3)
        assert_matches(ti ** 2, ai ** 2)
        assert_matches(ti // 4, ai // 4)
        assert_matches(20 // ti, 20 // ai)
        assert_matches(ti % 4, ai % 4)
        assert_matches(20 % ti, 20 % ai)
        assert_matches(ti + 2.5, ai.astype(f32) + f32(2.5), exact=True)
        assert_matches(ti * 0.5, ai.astype(f32) * f32(0.5), exact=True)
        assert_matches(ti / 2, ai.astype(f32) / f32(2), exact=True)
        assert_matches(1 / ti, f32(1) / ai.astype(f32), exact=True)
        assert_matches(abs(ti) ** 2.0, np.abs(ai).astype(f32) ** 2, exact=True)

        a64 = rand_np((4,), F64, r)
        assert_matches(dyn.tensor(a64) + 2.5, a64 + 2.5, exact=True)
        assert_matches(0.1 * dyn.tensor(a64), 0.1 * a64, exact=True)

    def test_promotion_result_dtypes(self):
        i = dyn.tensor([1, 2, 3])
        f = dyn.tensor([0.5, 1.5, 2.5])
        d = dyn.tensor([0.5, 1.5, 2.5], dtype=F64)
        b = dyn.tensor([True, False, True])
        cases = [
            ("int + 2.5", lambda: i + 2.5, F32, [3.5, 4.5, 5.5]),
            ("int / int", lambda: i / i, F32, [1.0, 1.0, 1.0]),
            ("int / 2", lambda: i / 2, F32, [0.5, 1.0, 1.5]),
            ("f32 + f64 0-dim", lambda: f + dyn.tensor(1.0, dtype=F64), F32, [1.5, 2.5, 3.5]),
            ("int + f64 0-dim", lambda: i + dyn.tensor(0.5, dtype=F64), F64, [1.5, 2.5, 3.5]),
            ("int + f32 0-dim", lambda: i + dyn.tensor(0.5), F32, [1.5, 2.5, 3.5]),
            ("f32 + int 0-dim", lambda: f + dyn.tensor(1), F32, [1.5, 2.5, 3.5]),
            ("int 0-dim + f32", lambda: dyn.tensor(1) + f, F32, [1.5, 2.5, 3.5]),
            ("f64 0-dim + f32 0-dim", lambda: dyn.tensor(1.0, dtype=F64) + dyn.tensor(0.5), F64, 1.5),
            ("bool + bool", lambda: b + b, BOOL, [True, False, True]),
            ("f32 + f64", lambda: f + d, F64, [1.0, 3.0, 5.0]),
            ("int * f32", lambda: i * f, F32, [0.5, 3.0, 7.5]),
            ("bool + int", lambda: b + i, I64, [2, 2, 4]),
            ("bool + 1", lambda: b + 1, I64, [2, 1, 2]),
            ("bool + 1.5", lambda: b + 1.5, F32, [2.5, 1.5, 2.5]),
            ("bool + f64 0-dim", lambda: b + dyn.tensor(0.5, dtype=F64), F64, [1.5, 0.5, 1.5]),
            ("int + True", lambda: i + True, I64, [2, 3, 4]),
            ("int + bool 0-dim", lambda: i + dyn.tensor(True), I64, [2, 3, 4]),
            ("f64 + 2.5", lambda: d + 2.5, F64, [3.0, 4.0, 5.0]),
            ("f32 * 2", lambda: f * 2, F32, [1.0, 3.0, 5.0]),
            ("int // int", lambda: i // dyn.tensor([2, 2, 2]), I64, [0, 1, 1]),
            ("f32 // int", lambda: f // i, F32, [0.0, 0.0, 0.0]),
            ("int ** 2", lambda: i ** 2, I64, [1, 4, 9]),
            ("int ** 2.0", lambda: i ** 2.0, F32, [1.0, 4.0, 9.0]),
            ("int == f32", lambda: i == f, BOOL, [False, False, False]),
            ("f32 < f64", lambda: f < d, BOOL, [False, False, False]),
            ("max(int, f32)", lambda: dyn.maximum(i, f), F32, [1.0, 2.0, 3.0]),
            ("int - 0.5", lambda: i - 0.5, F32, [0.5, 1.5, 2.5]),
            ("sqrt(int)", lambda: dyn.sqrt(dyn.tensor([4, 9])), F32, [2.0, 3.0]),
            ("exp(bool)", lambda: dyn.exp(dyn.tensor([False])), F32, [1.0]),
        ]
        for name, fn, dt, vals in cases:
            with self.subTest(case=name):
                out = fn()
                self.assertTrue(out.dtype == dt, f"{name}: {out.dtype} != {dt}")
                self.assertEqual(out.tolist(), vals, name)


if __name__ == "__main__":
    unittest.main()
