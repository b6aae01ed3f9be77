"""Creation functions, dtype inference, random numbers, arange, repr strings, item/tolist."""
import unittest

import numpy as np

import dyn
from dyntest import assert_matches, to_np

F32, F64, I64, BOOL = dyn.float32, dyn.float64, dyn.int64, dyn.bool


class TestDtypes(unittest.TestCase):
    def test_aliases_and_singletons(self):
        self.assertIs(dyn.float, dyn.float32)
        self.assertIs(dyn.double, dyn.float64)
        self.assertIs(dyn.long, dyn.int64)
        self.assertIs(dyn.zeros(1).dtype, dyn.float32)
        self.assertIs(dyn.zeros(1, dtype=dyn.double).dtype, dyn.float64)
        self.assertTrue(dyn.tensor([1]).dtype == dyn.long)
        self.assertFalse(dyn.float32 == dyn.float64)
        self.assertEqual(repr(dyn.float32), "dyn.float32")
        self.assertEqual(str(dyn.int64), "dyn.int64")
        self.assertEqual(repr(dyn.bool), "dyn.bool")

    def test_default_dtype(self):
        self.assertIs(dyn.get_default_dtype(), dyn.float32)
        try:
            dyn.set_default_dtype(dyn.float64)
            self.assertIs(dyn.get_default_dtype(), dyn.float64)
            self.assertIs(dyn.zeros(2).dtype, F64)
            self.assertIs(dyn.tensor([1.5]).dtype, F64)
            self.assertIs(dyn.arange(0.0, 2.0).dtype, F64)
            self.assertIs(dyn.randn(2).dtype, F64)
            self.assertIs(dyn.tensor([1, 2]).dtype, I64)
            self.assertIs((dyn.tensor([1]) / dyn.tensor([2])).dtype, F64)
        finally:
            dyn.set_default_dtype(dyn.float32)
        self.assertIs(dyn.zeros(2).dtype, F32)


class TestCreation(unittest.TestCase):
    def test_zeros_ones_full_empty(self):
        for make, val in ((dyn.zeros, 0), (dyn.ones, 1)):
            for args in ((2, 3), ((2, 3),), ([2, 3],), (dyn.Size([2, 3]),)):
                t = make(*args)
                self.assertEqual(tuple(t.shape), (2, 3))
                self.assertIs(t.dtype, F32)
                self.assertEqual(t.tolist(), [[float(val)] * 3] * 2)
            for dt, nd in ((F64, np.float64), (I64, np.int64), (BOOL, np.bool_)):
                assert_matches(make(4, dtype=dt), np.full((4,), val, nd))
            self.assertEqual(tuple(make(()).shape), ())
            self.assertEqual(tuple(make(0, 3).shape), (0, 3))
        assert_matches(dyn.full((2, 3), 1.5), np.full((2, 3), 1.5, np.float32))
        assert_matches(dyn.full((2,), 7), np.full((2,), 7, np.int64))
        assert_matches(dyn.full((2,), True), np.full((2,), True))
        assert_matches(dyn.full((2,), 7, dtype=F64), np.full((2,), 7.0))
        assert_matches(dyn.full([3], -0.25), np.full((3,), -0.25, np.float32))
        e = dyn.empty(3, 4)
        self.assertEqual(tuple(e.shape), (3, 4))
        self.assertIs(e.dtype, F32)
        self.assertIs(dyn.empty((2,), dtype=I64).dtype, I64)
        self.assertFalse(dyn.ones(2).requires_grad)

    def test_like(self):
        t = dyn.tensor([[1, 2, 3]])
        assert_matches(dyn.zeros_like(t), np.zeros((1, 3), np.int64))
        assert_matches(dyn.ones_like(t), np.ones((1, 3), np.int64))
        assert_matches(dyn.full_like(t, 4), np.full((1, 3), 4, np.int64))
        assert_matches(dyn.ones_like(t, dtype=F64), np.ones((1, 3)))
        f = dyn.zeros(5, 2, dtype=F64).T
        for fn in (dyn.randn_like, dyn.rand_like, dyn.empty_like, dyn.zeros_like):
            out = fn(f)
            self.assertEqual(tuple(out.shape), (2, 5))
            self.assertIs(out.dtype, F64)
        self.assertIs(dyn.rand_like(f, dtype=F32).dtype, F32)
        self.assertIs(dyn.full_like(f, 2.5).dtype, F64)

    def test_tensor_inference(self):
        cases = [
            ([1, 2], I64, (2,)), ([1.0, 2], F32, (2,)), ([True, False], BOOL, (2,)),
            ([True, 2], I64, (2,)), ([1, 2.5, True], F32, (3,)), (3, I64, ()), (3.5, F32, ()),
            (False, BOOL, ()), ([], F32, (0,)), ([[], []], F32, (2, 0)),
            ([[1, 2], [3, 4], [5, 6]], I64, (3, 2)), ([[[1.0]], [[2.0]]], F32, (2, 1, 1)),
            ((1, 2, 3), I64, (3,)), ([(1.0, 2.0), [3, 4]], F32, (2, 2)),
            (np.array([1.0, 2.0]), F64, (2,)), (np.array([1.0], np.float32), F32, (1,)),
            (np.array([[1, 2]]), I64, (1, 2)), (np.array([True]), BOOL, (1,)),
            (np.arange(6.0).reshape(2, 3).T, F64, (3, 2)),
        ]
        for data, dt, shape in cases:
            with self.subTest(data=data):
                t = dyn.tensor(data)
                self.assertIs(t.dtype, dt)
                self.assertEqual(tuple(t.shape), shape)
        self.assertEqual(dyn.tensor([[1, 2], [3, 4]]).tolist(), [[1, 2], [3, 4]])
        self.assertEqual(dyn.tensor(np.arange(6.0).reshape(2, 3).T).tolist(),
                         [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
        self.assertEqual(dyn.tensor([1, 2], dtype=F32).tolist(), [1.0, 2.0])
        self.assertIs(dyn.tensor([1, 2], dtype=F32).dtype, F32)
        self.assertEqual(dyn.tensor([1.7, -1.7], dtype=I64).tolist(), [1, -1])
        self.assertEqual(dyn.tensor([0, 2], dtype=BOOL).tolist(), [False, True])
        self.assertEqual(dyn.tensor(2 ** 62).item(), 2 ** 62)
        self.assertEqual(dyn.tensor(0.1, dtype=F64).item(), 0.1)
        self.assertEqual(dyn.tensor(0.1).item(), float(np.float32(0.1)))

    def test_arange(self):
        assert_matches(dyn.arange(5), np.arange(5))
        assert_matches(dyn.arange(1, 4), np.arange(1, 4))
        assert_matches(dyn.arange(10, 0, -3), np.arange(10, 0, -3))
        assert_matches(dyn.arange(0, 10, 4), np.arange(0, 10, 4))
        assert_matches(dyn.arange(5.0), np.arange(5, dtype=np.float32))
        assert_matches(dyn.arange(0, 1, 0.25), np.arange(0, 1, 0.25, dtype=np.float32))
        assert_matches(dyn.arange(-1.0, 1.0, 0.5), np.array([-1.0, -0.5, 0.0, 0.5], np.float32))
        assert_matches(dyn.arange(5, dtype=F32), np.arange(5, dtype=np.float32))
        assert_matches(dyn.arange(1, 3, dtype=F64), np.arange(1, 3, dtype=np.float64))
        assert_matches(dyn.arange(0), np.arange(0))
        assert_matches(dyn.arange(3, 3), np.arange(3, 3))
        t = dyn.arange(0.0, 1.0, 0.1)
        self.assertEqual(t.numel(), 10)
        self.assertIs(t.dtype, F32)
        np.testing.assert_allclose(to_np(t), np.arange(10) * 0.1, rtol=1e-6, atol=1e-7)
        self.assertEqual(dyn.arange(1, 2.5, 0.5).tolist(), [1.0, 1.5, 2.0])


class TestRandom(unittest.TestCase):
    def test_manual_seed_reproducible(self):
        for fn in (lambda: dyn.randn(50), lambda: dyn.rand(3, 7), lambda: dyn.randint(0, 100, (40,)),
                   lambda: dyn.randn(4, dtype=F64), lambda: dyn.randn_like(dyn.zeros(2, 3))):
            dyn.manual_seed(1234)
            a = to_np(fn())
            b = to_np(fn())
            dyn.manual_seed(1234)
            c = to_np(fn())
            dyn.manual_seed(4321)
            d = to_np(fn())
            np.testing.assert_array_equal(a, c)
            self.assertFalse(np.array_equal(a, b))  # successive draws differ
            self.assertFalse(np.array_equal(a, d))  # another seed, other numbers

    def test_randn_rand_statistics(self):
        dyn.manual_seed(0)
        x = to_np(dyn.randn(100000)).astype(np.float64)
        self.assertIs(dyn.randn(2).dtype, F32)
        self.assertLess(abs(x.mean()), 0.02)
        self.assertLess(abs(x.std() - 1.0), 0.02)
        self.assertLess(abs(np.mean(np.abs(x) < 1.0) - 0.6827), 0.01)
        self.assertTrue(np.isfinite(x).all())
        self.assertGreater(len(np.unique(x)), 99000)  # not a short cycle
        u = to_np(dyn.rand(100000)).astype(np.float64)
        self.assertGreaterEqual(u.min(), 0.0)
        self.assertLess(u.max(), 1.0)
        self.assertLess(abs(u.mean() - 0.5), 0.01)
        self.assertLess(abs(u.var() - 1.0 / 12), 0.005)
        self.assertLess(abs(np.mean(u < 0.25) - 0.25), 0.01)
        self.assertEqual(tuple(dyn.randn(2, 3).shape), (2, 3))
        self.assertEqual(tuple(dyn.rand((4, 5)).shape), (4, 5))
        self.assertIs(dyn.rand(3, dtype=F64).dtype, F64)
        x64 = to_np(dyn.randn(20000, dtype=F64))
        self.assertLess(abs(x64.mean()), 0.05)
        self.assertLess(abs(x64.std() - 1.0), 0.05)

    def test_randint(self):
        dyn.manual_seed(0)
        t = dyn.randint(0, 10, (100000,))
        self.assertIs(t.dtype, I64)
        v = to_np(t)
        self.assertGreaterEqual(v.min(), 0)
        self.assertLessEqual(v.max(), 9)
        counts = np.bincount(v, minlength=10)
        self.assertEqual(len(counts), 10)
        for c in counts:
            self.assertLess(abs(c - 10000), 500)
        t = dyn.randint(5, (3, 4))
        self.assertEqual(tuple(t.shape), (3, 4))
        self.assertTrue(((to_np(t) >= 0) & (to_np(t) < 5)).all())
        v = to_np(dyn.randint(-3, 2, (1000,)))
        self.assertEqual(set(v.tolist()), {-3, -2, -1, 0, 1})

    def test_randint_keyword_forms(self):
        # PyTorch 2.15's two overloads by position or keyword: (high, size) and (low=0, high, size).
        forms = {"randint(5, size=(300,))": (0, 5), "randint(high=5, size=(300,))": (0, 5),
                 "randint(0, 5, size=(300,))": (0, 5), "randint(low=2, high=5, size=(300,))": (2, 5),
                 "randint(2, high=5, size=(300,))": (2, 5), "randint(5, (300,))": (0, 5)}
        for call, (lo, hi) in forms.items():
            with self.subTest(call=call):
                v = to_np(eval("dyn." + call))
                self.assertEqual(v.shape, (300,))
                self.assertEqual(set(v.tolist()), set(range(lo, hi)))
        for bad in ("randint(high=5)", "randint(5)", "randint()", "randint(low=1, size=(2,))",
                    "randint(low=2, high=5)", "randint(2, 5)"):
            with self.subTest(call=bad), self.assertRaisesRegex(TypeError, "randint"):
                eval("dyn." + bad)
        with self.assertRaisesRegex(RuntimeError, "Only Tensors of floating point and complex dtype can require"):
            dyn.randint(0, 5, (2,), requires_grad=True)


# Expected strings are what torch 1.13 prints for the same tensors (with dyn. for torch.),
# derived from torch/_tensor_str.py of 1.13 with the default print options.
REPR_CASES = [
    ("dyn.tensor([1.0, 2.0, 3.0])", "tensor([1., 2., 3.])"),
    ("dyn.tensor([1, 2, 3])", "tensor([1, 2, 3])"),
    ("dyn.tensor([True, False])", "tensor([ True, False])"),
    ("dyn.tensor([0.5, 1.25])", "tensor([0.5000, 1.2500])"),
    ("dyn.tensor([1e-5, 1e3])", "tensor([1.0000e-05, 1.0000e+03])"),
    ("dyn.tensor([1.0, 2.0], dtype=F64)", "tensor([1., 2.], dtype=dyn.float64)"),
    ("dyn.zeros(0, 3)", "tensor([], size=(0, 3))"),
    ("dyn.tensor(3.5)", "tensor(3.5000)"),
    ("dyn.tensor(3.0)", "tensor(3.)"),
    ("dyn.tensor(5)", "tensor(5)"),
    ("dyn.tensor(-7)", "tensor(-7)"),
    ("dyn.tensor(True)", "tensor(True)"),
    ("dyn.tensor(float('nan'))", "tensor(nan)"),
    ("dyn.tensor(3.5, dtype=F64)", "tensor(3.5000, dtype=dyn.float64)"),
    ("dyn.tensor([[1, 2], [3, 4]])", "tensor([[1, 2],\n        [3, 4]])"),
    ("dyn.tensor([[1.5, -2.0], [300.25, 0.0]])",
     "tensor([[  1.5000,  -2.0000],\n        [300.2500,   0.0000]])"),
    ("dyn.tensor([1, -20, 300])", "tensor([  1, -20, 300])"),
    ("dyn.tensor([0.1234, -5.6789, 10.0])", "tensor([ 0.1234, -5.6789, 10.0000])"),
    ("dyn.arange(30.0)",
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.])"),
    ("dyn.arange(20.0) / 3",
     "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
     "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
     "        6.0000, 6.3333])"),
    ("dyn.arange(2000)", "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    ("dyn.arange(10000).reshape(100, 100)",
     "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
     "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
     "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
     "        ...,\n"
     "        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n"
     "        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n"
     "        [9900, 9901, 9902,  ..., 9997, 9998, 9999]])"),
    ("dyn.arange(1001.0) / 4",
     "tensor([  0.0000,   0.2500,   0.5000,  ..., 249.5000, 249.7500, 250.0000])"),
    ("dyn.arange(2000.0).reshape(2, 1000)",
     "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
     "         9.9900e+02],\n"
     "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
     "         1.9990e+03]])"),
    ("dyn.arange(8).reshape(2, 2, 2)",
     "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"),
    ("dyn.zeros(0)", "tensor([])"),
    ("dyn.zeros(0, dtype=I64)", "tensor([], dtype=dyn.int64)"),
    ("dyn.zeros(2, 0, dtype=F64)", "tensor([], size=(2, 0), dtype=dyn.float64)"),
    ("dyn.tensor([float('nan'), float('inf'), -float('inf'), 1.0])", "tensor([nan, inf, -inf, 1.])"),
    ("dyn.tensor([0.1, float('nan')])", "tensor([0.1000,    nan])"),
    ("dyn.zeros(3)", "tensor([0., 0., 0.])"),
    ("dyn.tensor([1.0, 1e9])", "tensor([1.0000e+00, 1.0000e+09])"),
    ("dyn.tensor([1.0, 2000.0])", "tensor([1.0000e+00, 2.0000e+03])"),
    ("dyn.tensor([-1.5, 2.25e8])", "tensor([-1.5000e+00,  2.2500e+08])"),
    ("dyn.tensor([[1e-5, 1.0], [2.0, -3.0]])",
     "tensor([[ 1.0000e-05,  1.0000e+00],\n        [ 2.0000e+00, -3.0000e+00]])"),
    ("dyn.arange(14, dtype=F64)",
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.],\n"
     "       dtype=dyn.float64)"),
    ("dyn.tensor([[True, False], [False, True]])", "tensor([[ True, False],\n        [False,  True]])"),
    ("dyn.ones(2, 3, dtype=F64)", "tensor([[1., 1., 1.],\n        [1., 1., 1.]], dtype=dyn.float64)"),
    ("dyn.tensor([[1, 2, 3]]).T", "tensor([[1],\n        [2],\n        [3]])"),
    ("dyn.tensor([0.0001])", "tensor([1.0000e-04])"),
    ("dyn.tensor([123456.789])", "tensor([123456.7891])"),
    ("dyn.tensor([-0.5, 0.25]).reshape(2, 1, 1)", "tensor([[[-0.5000]],\n\n        [[ 0.2500]]])"),
    ("dyn.arange(12).reshape(3, 4).T",
     "tensor([[ 0,  4,  8],\n        [ 1,  5,  9],\n        [ 2,  6, 10],\n        [ 3,  7, 11]])"),
    ("dyn.full((1001,), True)", "tensor([True, True, True,  ..., True, True, True])"),
]

REPR_CASES_DEFAULT_F64 = [
    ("dyn.tensor([1.5])", "tensor([1.5000])"),
    ("dyn.tensor([1.5], dtype=F32)", "tensor([1.5000], dtype=dyn.float32)"),
    ("dyn.zeros(0)", "tensor([])"),
    ("dyn.zeros(0, dtype=F32)", "tensor([], dtype=dyn.float32)"),
    ("dyn.tensor([1, 2])", "tensor([1, 2])"),
]


class TestRepr(unittest.TestCase):
    def _check(self, cases):
        env = {"dyn": dyn, "F32": F32, "F64": F64, "I64": I64}
        for expr, want in cases:
            with self.subTest(expr=expr):
                t = eval(expr, env)
                self.assertEqual(repr(t), want)
                self.assertEqual(str(t), want)

    def test_repr_strings(self):
        self._check(REPR_CASES)

    def test_repr_with_default_float64(self):
        try:
            dyn.set_default_dtype(dyn.float64)
            self._check(REPR_CASES_DEFAULT_F64)
        finally:
            dyn.set_default_dtype(dyn.float32)

    def test_size_repr(self):
        s = dyn.zeros(2, 3).shape
        self.assertIsInstance(s, tuple)
        self.assertIsInstance(s, dyn.Size)
        self.assertEqual(s, (2, 3))
        self.assertEqual(repr(s), "dyn.Size([2, 3])")
        self.assertEqual(repr(dyn.tensor(1.0).shape), "dyn.Size([])")
        self.assertEqual(repr(dyn.zeros(2, 3).size()), "dyn.Size([2, 3])")
        self.assertEqual(s[1], 3)
        self.assertEqual(list(s), [2, 3])


class TestItemTolist(unittest.TestCase):
    def test_item(self):
        v = dyn.tensor(2.5).item()
        self.assertIs(type(v), float)
        self.assertEqual(v, 2.5)
        v = dyn.tensor(3).item()
        self.assertIs(type(v), int)
        self.assertEqual(v, 3)
        v = dyn.tensor(True).item()
        self.assertIs(type(v), bool)
        self.assertEqual(dyn.tensor([[5.0]]).item(), 5.0)
        self.assertEqual(dyn.arange(10)[7].item(), 7)
        self.assertEqual(float(dyn.tensor([2.5])), 2.5)
        self.assertEqual(int(dyn.tensor(2.7)), 2)
        self.assertEqual(int(dyn.tensor(-2.7)), -2)
        self.assertEqual(int(dyn.tensor([9])), 9)
        self.assertFalse(bool(dyn.tensor(0.0)))
        self.assertTrue(bool(dyn.tensor([3])))
        self.assertTrue(bool(dyn.tensor(True)))
        self.assertEqual("yes" if dyn.tensor(1.0) > 0 else "no", "yes")

    def test_tolist(self):
        t = dyn.tensor([[1, 2], [3, 4]])
        out = t.tolist()
        self.assertEqual(out, [[1, 2], [3, 4]])
        self.assertIs(type(out[0][0]), int)
        self.assertEqual(t.T.tolist(), [[1, 3], [2, 4]])
        self.assertEqual(dyn.tensor(1.5).tolist(), 1.5)
        f = dyn.tensor([0.5, 0.1]).tolist()
        self.assertIs(type(f[0]), float)
        self.assertEqual(f, [0.5, float(np.float32(0.1))])
        b = dyn.tensor([True, False]).tolist()
        self.assertEqual(b, [True, False])
        self.assertIs(type(b[0]), bool)
        self.assertEqual(dyn.zeros(0, 2).tolist(), [])
        self.assertEqual(dyn.zeros(2, 0).tolist(), [[], []])
        self.assertEqual(dyn.arange(24).reshape(2, 3, 4)[:, 1, ::2].tolist(), [[4, 6], [16, 18]])


if __name__ == "__main__":
    unittest.main()
