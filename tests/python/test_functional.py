"""dyn.nn.functional against numpy reference implementations."""
import math
import unittest

import numpy as np

import dyn
import dyn.nn.functional as F
from dyntest import (LAYOUTS, assert_matches, in_layouts, log_softmax_ref, np_dtype, pairs, rand_np, rng, to_dyn,
                     to_np)

F32, F64, I64 = dyn.float32, dyn.float64, dyn.int64
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _tol(dt, f32=(1e-5, 1e-6), f64=(1e-11, 1e-13)):
    r, a = f32 if dt == F32 else f64
    return dict(rtol=r, atol=a)


class TestActivations(unittest.TestCase):
    def test_relu_gelu_silu(self):
        for dt, shape, layout, t, a in pairs(rng(0), (F32, F64), [(), (0, 4), (7,), (3, 5), (2, 3, 4)]):
            nd = np_dtype(dt)
            x = a.astype(np.float64)
            with self.subTest(dtype=str(dt), shape=shape, layout=layout):
                assert_matches(F.relu(t), np.maximum(a, nd.type(0)))
                gelu = (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(nd)
                assert_matches(F.gelu(t), gelu, **_tol(dt))
                silu = (x / (1.0 + np.exp(-x))).astype(nd)
                assert_matches(F.silu(t), silu, **_tol(dt, f32=(1e-5, 1e-7)))
        # known values
        g = F.gelu(dyn.tensor([0.0, 1.0, -1.0, 3.0], dtype=F64)).tolist()
        for got, want in zip(g, [0.0, 0.8413447460685429, -0.15865525393145707, 2.99595030590511]):
            self.assertAlmostEqual(got, want, places=12)
        self.assertEqual(F.relu(dyn.tensor([-1.0, 0.0, 2.0])).tolist(), [0.0, 0.0, 2.0])

    def test_softmax_log_softmax(self):
        r = rng(1)
        for dt in (F32, F64):
            nd = np_dtype(dt)
            a = rand_np((3, 4, 5), dt, r)
            for layout, t in in_layouts(a):
                for dim in (0, 1, 2, -1):
                    with self.subTest(dtype=str(dt), layout=layout, dim=dim):
                        ls = log_softmax_ref(a, dim)
                        assert_matches(F.softmax(t, dim), np.exp(ls).astype(nd), **_tol(dt, f32=(1e-5, 1e-7)))
                        assert_matches(F.softmax(t, dim=dim), np.exp(ls).astype(nd), **_tol(dt, f32=(1e-5, 1e-7)))
                        assert_matches(F.log_softmax(t, dim=dim), ls.astype(nd), **_tol(dt))


class TestLayers(unittest.TestCase):
    def _ln_ref(self, x, k, w, b, eps):
        x = x.astype(np.float64)
        axes = tuple(range(x.ndim - k, x.ndim))
        mu = x.mean(axis=axes, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mu) / np.sqrt(var + eps)
        if w is not None:
            y = y * w
        if b is not None:
            y = y + b
        return y

    def test_layer_norm(self):
        r = rng(2)
        for dt in (F32, F64):
            nd = np_dtype(dt)
            tol = dict(rtol=1e-4, atol=1e-5) if dt == F32 else dict(rtol=1e-10, atol=1e-12)
            for shape, k in [((4, 8), 1), ((2, 3, 6), 1), ((2, 3, 6), 2), ((5,), 1), ((0, 4), 1)]:
                for layout in LAYOUTS:
                    a = rand_np(shape, dt, r)
                    t = to_dyn(a, layout)
                    ns = shape[len(shape) - k:]
                    w = rand_np(ns, dt, r)
                    b = rand_np(ns, dt, r)
                    with self.subTest(dtype=str(dt), shape=shape, k=k, layout=layout):
                        assert_matches(F.layer_norm(t, ns), self._ln_ref(a, k, None, None, 1e-5).astype(nd), **tol)
                        assert_matches(F.layer_norm(t, list(ns), dyn.tensor(w), dyn.tensor(b)),
                                       self._ln_ref(a, k, w, b, 1e-5).astype(nd), **tol)
                        assert_matches(F.layer_norm(t, t.shape[len(shape) - k:], weight=dyn.tensor(w), eps=0.1),
                                       self._ln_ref(a, k, w, None, 0.1).astype(nd), **tol)
        # constant rows: var 0, the output is 0 (+ bias), never nan
        out = F.layer_norm(dyn.full((2, 4), 3.0), (4,), bias=dyn.tensor([1.0, 2.0, 3.0, 4.0]))
        self.assertEqual(out.tolist(), [[1.0, 2.0, 3.0, 4.0]] * 2)

    def test_linear(self):
        r = rng(3)
        for dt in (F32, F64):
            nd = np_dtype(dt)
            tol = dict(rtol=1e-4, atol=1e-4) if dt == F32 else dict(rtol=1e-10, atol=1e-10)
            for xs in [(5, 8), (8,), (2, 3, 8), (0, 8)]:
                for layout in LAYOUTS:
                    x = r.standard_normal(xs).astype(nd)
                    w = r.standard_normal((6, 8)).astype(nd)
                    b = r.standard_normal(6).astype(nd)
                    x64, w64 = x.astype(np.float64), w.astype(np.float64)
                    with self.subTest(dtype=str(dt), x=xs, layout=layout):
                        tx, tw = to_dyn(x, layout), to_dyn(w, layout)
                        assert_matches(F.linear(tx, tw), (x64 @ w64.T).astype(nd), **tol)
                        assert_matches(F.linear(tx, tw, dyn.tensor(b)), (x64 @ w64.T + b).astype(nd), **tol)
                        assert_matches(F.linear(tx, tw, bias=to_dyn(b, "sliced")), (x64 @ w64.T + b).astype(nd), **tol)

    def test_embedding(self):
        r = rng(4)
        w = rand_np((10, 4), F32, r)
        for layout, tw in in_layouts(w):
            for idx in (np.array([3, 0, 9, 3]), np.array([[1, 2], [8, 8], [0, 5]]), np.array(7),
                        np.zeros((0,), np.int64)):
                idx = idx.astype(np.int64)
                with self.subTest(layout=layout, idx=idx.tolist()):
                    assert_matches(F.embedding(dyn.tensor(idx), tw), w[idx])


class TestLosses(unittest.TestCase):
    def test_cross_entropy(self):
        r = rng(5)
        for dt in (F32, F64):
            nd = np_dtype(dt)
            for n, c in [(6, 5), (1, 3), (16, 10)]:
                for layout in LAYOUTS:
                    x = rand_np((n, c), dt, r)
                    y = r.integers(0, c, n).astype(np.int64)
                    nll = -log_softmax_ref(x, 1)[np.arange(n), y]
                    tx, ty = to_dyn(x, layout), dyn.tensor(y)
                    tol = _tol(dt)
                    with self.subTest(dtype=str(dt), n=n, c=c, layout=layout):
                        out = F.cross_entropy(tx, ty)
                        self.assertEqual(tuple(out.shape), ())
                        assert_matches(out, np.asarray(nll.mean(), nd), **tol)
                        assert_matches(F.cross_entropy(tx, ty, reduction="mean"), np.asarray(nll.mean(), nd), **tol)
                        assert_matches(F.cross_entropy(tx, ty, reduction="sum"), np.asarray(nll.sum(), nd), **tol)
                        assert_matches(F.cross_entropy(tx, ty, reduction="none"), nll.astype(nd), **tol)
        # large logits stay finite
        big = dyn.tensor([[1000.0, 0.0], [0.0, 1000.0]])
        out = F.cross_entropy(big, dyn.tensor([1, 1]))
        self.assertAlmostEqual(out.item(), 500.0, delta=1e-3)

    def test_mse_loss(self):
        r = rng(6)
        for dt in (F32, F64):
            nd = np_dtype(dt)
            for shape in [(7,), (3, 4), (2, 3, 4), ()]:
                for layout in LAYOUTS:
                    a, b = rand_np(shape, dt, r), rand_np(shape, dt, r)
                    d = a.astype(np.float64) - b.astype(np.float64)
                    ta, tb = to_dyn(a, layout), to_dyn(b, "sliced")
                    tol = _tol(dt)
                    with self.subTest(dtype=str(dt), shape=shape, layout=layout):
                        out = F.mse_loss(ta, tb)
                        self.assertEqual(tuple(out.shape), ())
                        assert_matches(out, np.asarray((d * d).mean(), nd), **tol)
                        assert_matches(F.mse_loss(ta, tb, reduction="sum"), np.asarray((d * d).sum(), nd), **tol)
                        assert_matches(F.mse_loss(ta, tb, reduction="none"), ((a - b) * (a - b)).astype(nd), **tol)


class TestDropout(unittest.TestCase):
    def test_eval_is_identity(self):
        a = rand_np((3, 4), F32, rng(7))
        for _, t in in_layouts(a):
            assert_matches(F.dropout(t, p=0.5, training=False), a, exact=True)
            assert_matches(F.dropout(t, 0.9, False), a, exact=True)
            assert_matches(F.dropout(t, p=0.0), a, exact=True)

    def test_training_drops_and_scales(self):
        dyn.manual_seed(0)
        for p in (0.5, 0.2, 0.75):
            with self.subTest(p=p):
                x = dyn.ones(100000)
                out = to_np(F.dropout(x, p=p, training=True))
                self.assertEqual(out.dtype, np.float32)
                zero_frac = np.mean(out == 0)
                self.assertLess(abs(zero_frac - p), 0.01)
                kept = out[out != 0]
                np.testing.assert_allclose(kept, 1.0 / (1.0 - p), rtol=1e-6)
                self.assertEqual(to_np(x).min(), 1.0)  # the input is untouched
        # default: p=0.5, training=True
        out = to_np(F.dropout(dyn.ones(20000)))
        self.assertLess(abs(np.mean(out == 0) - 0.5), 0.02)
        self.assertTrue(set(np.unique(out).tolist()) <= {0.0, 2.0})
        # p=1 zeroes everything
        self.assertEqual(to_np(F.dropout(dyn.ones(100), p=1.0)).tolist(), [0.0] * 100)
        # values are scaled, not replaced
        v = dyn.arange(1.0, 1001.0)
        out = to_np(F.dropout(v, p=0.5))
        keep = out != 0
        np.testing.assert_array_equal(out[keep], 2.0 * np.arange(1.0, 1001.0, dtype=np.float32)[keep])

    def test_reproducible_with_seed(self):
        x = dyn.ones(1000)
        dyn.manual_seed(11)
        a = to_np(F.dropout(x, 0.3))
        dyn.manual_seed(11)
        b = to_np(F.dropout(x, 0.3))
        np.testing.assert_array_equal(a, b)
        self.assertFalse(np.array_equal(a, to_np(F.dropout(x, 0.3))))


if __name__ == "__main__":
    unittest.main()
