"""Reductions, max/min with indices, argmax, softmax / log_softmax and matmul against numpy."""
import unittest

import numpy as np

import dyn
from dyntest import (LAYOUTS, assert_matches, in_layouts, log_softmax_ref, np_dtype, pair, pairs, rand_np, rng,
                     softmax_ref, to_dyn, to_np)

F32, F64, I64, BOOL = dyn.float32, dyn.float64, dyn.int64, dyn.bool

# shape -> dims to try; a dim is None (all), an int or a tuple
REDUCE_DIMS = {
    (2, 3, 4): [None, 0, 1, 2, -1, -3, (0, 2), (-1, -2), (0, 1, 2)],
    (7,): [None, 0, -1],
    (): [None, 0, -1],
    (5, 1): [None, 0, 1],
    (0, 3): [0, 1, -1],
}


def _kw(dim, keepdim):
    kw = {"keepdim": keepdim}
    if dim is not None:
        kw["dim"] = dim
    return kw


def _axis(shape, dim):
    """numpy axis for a dyn dim: a 0-d tensor accepts dim 0 / -1, numpy wants None."""
    return None if len(shape) == 0 else dim


class TestReductions(unittest.TestCase):
    def test_sum_mean_float(self):
        r = rng(0)
        for dt, shape, layout, t, a in pairs(r, (F32, F64), REDUCE_DIMS):
            nd = np_dtype(dt)
            tol = dict(rtol=1e-5, atol=1e-5) if dt == F32 else dict(rtol=1e-12, atol=1e-12)
            a64 = a.astype(np.float64)
            for dim in REDUCE_DIMS[shape]:
                for keep in (False, True):
                    with self.subTest(dtype=str(dt), shape=shape, layout=layout, dim=dim, keepdim=keep):
                        ax = _axis(shape, dim)
                        ref = np.sum(a64, axis=ax, keepdims=keep).astype(nd)
                        assert_matches(t.sum(**_kw(dim, keep)), ref, **tol, msg="sum")
                        if a.size == 0 and (dim is None or 0 in [shape[d] for d in np.atleast_1d(dim)]):
                            continue
                        ref = np.mean(a64, axis=ax, keepdims=keep).astype(nd)
                        assert_matches(t.mean(**_kw(dim, keep)), ref, **tol, msg="mean")
        # function forms and positional dim
        a = rand_np((3, 4), F32, r)
        t = dyn.tensor(a)
        assert_matches(dyn.sum(t), np.sum(a.astype(np.float64)).astype(np.float32), rtol=1e-5)
        assert_matches(dyn.sum(t, 1), a.sum(1, dtype=np.float64).astype(np.float32), rtol=1e-5)
        assert_matches(dyn.mean(t, dim=0), a.mean(0, dtype=np.float64).astype(np.float32), rtol=1e-5)
        assert_matches(t.sum(0, True), a.sum(0, keepdims=True, dtype=np.float64).astype(np.float32),
                       rtol=1e-5)

    def test_mean_of_empty_is_nan(self):
        out = dyn.zeros(0, 3).mean(dim=0)
        self.assertEqual(tuple(out.shape), (3,))
        self.assertTrue(all(np.isnan(out.tolist())))

    def test_sum_int_bool_to_int64(self):
        for dt, shape, layout, t, a in pairs(rng(1), (I64, BOOL), REDUCE_DIMS):
            for dim in REDUCE_DIMS[shape]:
                for keep in (False, True):
                    with self.subTest(dtype=str(dt), shape=shape, layout=layout, dim=dim):
                        ref = np.sum(a.astype(np.int64), axis=_axis(shape, dim), keepdims=keep)
                        assert_matches(t.sum(**_kw(dim, keep)), np.asarray(ref, np.int64))
        big = dyn.tensor([2 ** 40, 2 ** 40, 3])
        self.assertEqual(big.sum().item(), 2 ** 41 + 3)  # int64 accumulation, not float

    def test_amax_amin(self):
        for dt, shape, layout, t, a in pairs(rng(2), (F32, F64, I64), REDUCE_DIMS):
            for dim in REDUCE_DIMS[shape]:
                if a.size == 0 and (dim is None or shape[dim if isinstance(dim, int) else 0] == 0):
                    continue
                for keep in (False, True):
                    with self.subTest(dtype=str(dt), shape=shape, layout=layout, dim=dim):
                        kw = _kw(dim, keep)
                        ax = _axis(shape, dim)
                        assert_matches(t.amax(**kw), np.amax(a, axis=ax, keepdims=keep))
                        assert_matches(t.amin(**kw), np.amin(a, axis=ax, keepdims=keep))
                        assert_matches(dyn.amax(t, **kw), np.amax(a, axis=ax, keepdims=keep))
                        assert_matches(dyn.amin(t, **kw), np.amin(a, axis=ax, keepdims=keep))
        x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
        assert_matches(dyn.tensor(x).amax(dim=1), np.amax(x, axis=1))
        assert_matches(dyn.tensor(x).amin(dim=0), np.amin(x, axis=0))
        self.assertTrue(np.isnan(dyn.tensor(x).max().item()))

    def test_max_min_with_indices(self):
        r = rng(3)
        for dt in (F32, F64, I64):
            nd = np_dtype(dt)
            a = (r.permutation(60).reshape(3, 4, 5) - 30).astype(nd)  # distinct values
            if dt != I64:
                a = a / nd.type(7)
            for layout, t in in_layouts(a):
                for dim in (0, 1, 2, -1, -2):
                    for keep in (False, True):
                        with self.subTest(dtype=str(dt), layout=layout, dim=dim, keepdim=keep):
                            res = t.max(dim, keepdim=keep)
                            vals, idx = res  # a (values, indices) namedtuple
                            assert_matches(vals, np.amax(a, axis=dim, keepdims=keep))
                            ri = np.argmax(a, axis=dim)
                            if keep:
                                ri = np.expand_dims(ri, dim)
                            assert_matches(idx, ri.astype(np.int64))
                            assert_matches(res.values, np.amax(a, axis=dim, keepdims=keep))
                            assert_matches(res[1], ri.astype(np.int64))
                            mres = t.min(dim=dim, keepdim=keep)
                            assert_matches(mres.values, np.amin(a, axis=dim, keepdims=keep))
                            ri = np.argmin(a, axis=dim)
                            if keep:
                                ri = np.expand_dims(ri, dim)
                            assert_matches(mres.indices, ri.astype(np.int64))
                            assert_matches(t.argmax(dim=dim, keepdim=keep), np.argmax(a, axis=dim, keepdims=keep))
                            assert_matches(t.argmin(dim, keep), np.argmin(a, axis=dim, keepdims=keep))
                m = t.max()
                self.assertEqual(tuple(m.shape), ())
                self.assertTrue(m.dtype == dt)
                self.assertEqual(m.item(), a.max().item())
                self.assertEqual(t.min().item(), a.min().item())
                am = t.argmax()
                self.assertEqual(tuple(am.shape), ())
                self.assertTrue(am.dtype == I64)
                self.assertEqual(am.item(), int(np.argmax(a)))  # flat index
                self.assertEqual(dyn.argmin(t).item(), int(np.argmin(a)))

    def test_nan_and_list_dims(self):
        t = dyn.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0]])
        r = t.max(dim=1)
        self.assertTrue(np.isnan(r.values.tolist()[0]))
        self.assertEqual(r.values.tolist()[1], 6.0)
        self.assertEqual(r.indices.tolist(), [1, 2])  # NaN wins, like torch
        self.assertEqual(t.argmax(dim=1).tolist(), [1, 2])
        a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
        assert_matches(dyn.tensor(a).sum(dim=[0, 2]), a.sum(axis=(0, 2)))
        assert_matches(dyn.tensor(a).amax(dim=[1, 2], keepdim=True), a.max(axis=(1, 2), keepdims=True))

    def test_ties_give_first_index(self):
        t = dyn.tensor([[1, 3, 3, 0], [2, 2, 2, 2]])
        self.assertEqual(t.argmax(dim=1).tolist(), [1, 0])
        self.assertEqual(t.max(dim=1).indices.tolist(), [1, 0])
        self.assertEqual(t.argmin(dim=1).tolist(), [3, 0])
        self.assertEqual(dyn.tensor([5.0, 7.0, 7.0]).argmax().item(), 1)

    def test_large_reductions_layouts(self):
        r = rng(12)
        for dt in (F32, F64, I64):
            nd = np_dtype(dt)
            tol = {} if dt == I64 else (dict(rtol=1e-5, atol=1e-3) if dt == F32 else dict(rtol=1e-12, atol=1e-10))
            for layout in LAYOUTS:
                t, a = pair((513, 1029), dt, r, layout)
                acc = a.astype(np.int64 if dt == I64 else np.float64)
                for dim in (None, 0, 1):
                    with self.subTest(dtype=str(dt), layout=layout, dim=dim):
                        kw = {} if dim is None else {"dim": dim}
                        assert_matches(t.sum(**kw), np.asarray(acc.sum(axis=dim)).astype(nd), **tol)
                        assert_matches(t.amax(**kw), np.asarray(a.max(axis=dim)))
                        if dim is not None:
                            vals, idx = t.min(dim=dim)
                            assert_matches(vals, a.min(axis=dim))
                            # ties are likely for ints: check that the index points at a minimum
                            picked = np.take_along_axis(a, np.expand_dims(to_np(idx), dim), axis=dim)
                            np.testing.assert_array_equal(picked.squeeze(dim), a.min(axis=dim))
                            np.testing.assert_array_equal(to_np(idx), np.argmin(a, axis=dim))
                        if dt != I64:
                            assert_matches(t.mean(**kw), np.asarray(acc.mean(axis=dim)).astype(nd), **tol)

    def test_large_float32_sum_is_accurate(self):
        # 1e6 * float32(0.1): naive float32 accumulation is off by ~1%; torch is not.
        v = float(np.float32(0.1))
        s = dyn.full((1000000,), 0.1).sum().item()
        self.assertAlmostEqual(s / (1e6 * v), 1.0, delta=1e-5)
        rows = dyn.full((4, 300000), 0.1).sum(dim=1).tolist()
        for x in rows:
            self.assertAlmostEqual(x / (3e5 * v), 1.0, delta=1e-5)
        self.assertAlmostEqual(dyn.full((1000000,), 0.1).mean().item(), v, delta=1e-6)

    def test_results_do_not_depend_on_thread_count(self):
        old = dyn.get_num_threads()
        self.assertGreaterEqual(old, 1)
        a = rng(4).standard_normal((1 << 21) + 123).astype(np.float32)
        m = rng(5).standard_normal((1500, 1100)).astype(np.float32)
        outs = []
        try:
            for n in (1, 2, 1):
                dyn.set_num_threads(n)
                self.assertEqual(dyn.get_num_threads(), n)
                t = dyn.tensor(a)
                tm = dyn.tensor(m)
                outs.append((t.sum().item(), t.mean().item(),
                             to_np(tm.sum(dim=0)), to_np(tm.sum(dim=1)), to_np(tm.T.sum(dim=1)),
                             to_np((t * 1.5 + t.exp()).sigmoid()), tm.amax().item()))
        finally:
            dyn.set_num_threads(old)
        self.assertEqual(dyn.get_num_threads(), old)
        for o in outs[1:]:
            self.assertEqual(o[0], outs[0][0])
            self.assertEqual(o[1], outs[0][1])
            for x, y in zip(o[2:6], outs[0][2:6]):
                self.assertEqual(x.tobytes(), y.tobytes())
            self.assertEqual(o[6], outs[0][6])


class TestSoftmax(unittest.TestCase):
    def test_softmax_log_softmax(self):
        for dt, shape, layout, t, a in pairs(rng(6), (F32, F64), [(5,), (3, 4), (2, 3, 4), (1, 1), (0, 3)]):
            nd = np_dtype(dt)
            tol = dict(rtol=1e-5, atol=1e-7) if dt == F32 else dict(rtol=1e-12, atol=1e-14)
            for dim in range(-len(shape), len(shape)):
                with self.subTest(dtype=str(dt), shape=shape, layout=layout, dim=dim):
                    if a.size == 0:
                        ref = lref = np.zeros(shape, nd)
                    else:
                        ref = softmax_ref(a, dim).astype(nd)
                        lref = log_softmax_ref(a, dim).astype(nd)
                    assert_matches(dyn.softmax(t, dim), ref, **tol)
                    assert_matches(t.softmax(dim), ref, **tol)
                    assert_matches(dyn.softmax(t, dim=dim), ref, **tol)
                    ltol = dict(tol, atol=1e-6 if dt == F32 else 1e-13)
                    assert_matches(dyn.log_softmax(t, dim), lref, **ltol)
                    assert_matches(t.log_softmax(dim=dim), lref, **ltol)

    def test_softmax_stable_for_large_and_infinite(self):
        t = dyn.tensor([1000.0, 1001.0, 1002.0])
        ref = softmax_ref(np.array([0.0, 1.0, 2.0]), 0).astype(np.float32)
        assert_matches(t.softmax(0), ref, rtol=1e-5)
        assert_matches(t.log_softmax(0), log_softmax_ref(np.array([0.0, 1.0, 2.0]), 0).astype(np.float32),
                       rtol=1e-5, atol=1e-6)
        s = dyn.tensor([float("-inf"), 0.0, float("-inf")]).softmax(0)
        self.assertEqual(s.tolist(), [0.0, 1.0, 0.0])
        rows = dyn.randn(4, 9).softmax(dim=1).sum(dim=1).tolist()
        for x in rows:
            self.assertAlmostEqual(x, 1.0, delta=1e-5)


MATMUL_SHAPES = [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((1, 1), (1, 1)),
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)), ((0, 4), (4, 5)), ((3, 0), (0, 5)),
    ((2, 0, 4), (4, 3)), ((0,), (0,)), ((17, 33), (33, 9)), ((64, 128), (128, 32)),
    ((1, 7), (7, 1)), ((7,), (7, 1)),
]


class TestMatmul(unittest.TestCase):
    def _data(self, shape, dt, r):
        nd = np_dtype(dt)
        if dt == I64:
            return r.integers(-50, 50, shape).astype(nd)
        return r.standard_normal(shape).astype(nd)

    def test_matmul_shapes_dtypes_layouts(self):
        r = rng(7)
        for dt in (F32, F64, I64):
            nd = np_dtype(dt)
            for sa, sb in MATMUL_SHAPES:
                for la, lb in (("contig", "contig"), ("transposed", "sliced"), ("sliced", "transposed")):
                    a, b = self._data(sa, dt, r), self._data(sb, dt, r)
                    if dt == I64:
                        ref, kw = np.matmul(a, b), {}
                    else:
                        ref = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(nd)
                        kw = dict(rtol=1e-4, atol=1e-4) if dt == F32 else dict(rtol=1e-10, atol=1e-10)
                    ta, tb = to_dyn(a, la), to_dyn(b, lb)
                    with self.subTest(dtype=str(dt), shapes=(sa, sb), layouts=(la, lb)):
                        assert_matches(ta @ tb, ref, **kw)
                        assert_matches(dyn.matmul(ta, tb), ref, **kw)
                        assert_matches(ta.matmul(tb), ref, **kw)

    def test_empty_inner_dim_gives_zeros(self):
        for dt in (F32, F64, I64):
            out = dyn.ones(3, 0, dtype=dt) @ dyn.ones(0, 5, dtype=dt)
            assert_matches(out, np.zeros((3, 5), np_dtype(dt)))
            out = dyn.ones(0, dtype=dt) @ dyn.ones(0, dtype=dt)
            assert_matches(out, np.zeros((), np_dtype(dt)))

    def test_int64_matmul_is_exact_beyond_double(self):
        r = rng(8)
        a = r.integers(-10 ** 8, 10 ** 8, (3, 5)).astype(np.int64)
        b = r.integers(-10 ** 8, 10 ** 8, (5, 4)).astype(np.int64)
        assert_matches(dyn.tensor(a) @ dyn.tensor(b), a @ b)

    def test_batched_rows_against_a_shared_matrix(self):
        # [batch, seq, k] @ [k, n] (a Linear's weight) is one product of batch * seq rows when the rows
        # are evenly spaced: the same bits as the product of the flattened rows, as in PyTorch. Views
        # whose rows are not evenly spaced must still give the right values.
        r = rng(10)
        x = r.standard_normal((8, 40, 64)).astype(np.float32)
        w = r.standard_normal((64, 48)).astype(np.float32)
        tx, tw = dyn.tensor(x), dyn.tensor(w)
        ref = lambda a: (a.astype(np.float64) @ w).astype(np.float32)  # noqa: E731
        flat = (tx.reshape(-1, 64) @ tw).reshape(8, 40, 48)
        self.assertTrue(np.array_equal(to_np(tx @ tw), to_np(flat)))
        assert_matches(tx @ tw, ref(x), rtol=1e-4, atol=1e-4)
        assert_matches(tx @ tw.T.contiguous().T, ref(x), rtol=1e-4, atol=1e-4)  # B read transposed
        for name, view, arr in (("sliced rows", tx[:, :32], x[:, :32]), ("every other batch", tx[::2], x[::2]),
                                ("batch and rows swapped", tx.permute(1, 0, 2), x.transpose(1, 0, 2)),
                                ("columns of a wider row", dyn.tensor(np.pad(x, ((0, 0), (0, 0), (0, 8))))[..., :64],
                                 x)):
            with self.subTest(view=name):
                assert_matches(view @ tw, ref(arr), rtol=1e-4, atol=1e-4)
        # one row per batch (a view's row stride is then not the batch stride), one column of k, a
        # B with a batch dim of size 1
        x1 = r.standard_normal((8, 64)).astype(np.float32)
        for name, view, arr in (("rows of 1", dyn.tensor(x1).unsqueeze(1), x1[:, None]),
                                ("rows of 1, strided", tx[:, 3:4], x[:, 3:4]),
                                ("k of 1", dyn.tensor(x1[:, :1]).reshape(2, 4, 1), x1[:, :1].reshape(2, 4, 1))):
            with self.subTest(view=name):
                wk = w[:arr.shape[-1]]
                assert_matches(view @ dyn.tensor(wk), (arr.astype(np.float64) @ wk).astype(np.float32), rtol=1e-4,
                               atol=1e-4)
        assert_matches(tx @ tw.unsqueeze(0), ref(x), rtol=1e-4, atol=1e-4)
        x4 = r.integers(-50, 50, (2, 1, 3, 5, 7)).astype(np.int64)
        w4 = r.integers(-50, 50, (7, 4)).astype(np.int64)
        assert_matches(dyn.tensor(x4) @ dyn.tensor(w4), x4 @ w4)  # exact, size-1 batch dims included

    def test_matmul_on_transposed_views_of_same_tensor(self):
        r = rng(9)
        a = r.standard_normal((6, 4)).astype(np.float32)
        t = dyn.tensor(a)
        assert_matches(t.T @ t, (a.T.astype(np.float64) @ a).astype(np.float32), rtol=1e-5, atol=1e-5)
        assert_matches(t @ t.T, (a.astype(np.float64) @ a.T).astype(np.float32), rtol=1e-5, atol=1e-5)
        assert_matches(t[::2] @ t[1::2].T, (a[::2].astype(np.float64) @ a[1::2].T).astype(np.float32),
                       rtol=1e-5, atol=1e-5)


class TestFewRowProducts(unittest.TestCase):
    """Products with few rows on the left (a batch-1 forward, a few sequences decoding; at most 16
    rows against a transposed B, 8 against a row-major one) run dyn's own kernels instead of
    OpenBLAS: each element summed by one thread in an order set by k alone."""

    SIZES_N = (1, 3, 4, 5, 7, 8, 31, 32, 33, 70)
    SIZES_K = (1, 5, 8, 9, 64, 67)

    def test_exact_on_small_integers_every_layout(self):
        # products and sums of small integers are exact in float32: any indexing slip shows
        r = rng(11)
        for m in (1, 2, 3, 4, 5, 8, 9, 16, 17):
            for n in self.SIZES_N:
                for k in self.SIZES_K:
                    a = r.integers(-3, 4, (m, k)).astype(np.float32)
                    b = r.integers(-3, 4, (k, n)).astype(np.float32)
                    for la in ("contig", "transposed"):
                        for lb in ("contig", "transposed", "sliced"):
                            with self.subTest(m=m, n=n, k=k, layouts=(la, lb)):
                                np.testing.assert_array_equal((to_dyn(a, la) @ to_dyn(b, lb)).numpy(), a @ b)

    def test_close_to_float64_and_batched(self):
        r = rng(12)
        for m in (1, 4):
            for n, k in ((64, 64), (33, 67), (512, 300)):
                a, b = r.standard_normal((3, m, k)).astype(np.float32), r.standard_normal((k, n)).astype(np.float32)
                ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
                with self.subTest(m=m, n=n, k=k):
                    assert_matches(dyn.tensor(a) @ dyn.tensor(b), ref, rtol=1e-5, atol=1e-5 * k ** 0.5)
                    assert_matches(dyn.tensor(a) @ dyn.tensor(np.ascontiguousarray(b.T)).T, ref, rtol=1e-5,
                                   atol=1e-5 * k ** 0.5)

    def test_a_column_does_not_depend_on_its_neighbours_or_the_threads(self):
        r = rng(13)
        threads = dyn.get_num_threads()
        self.addCleanup(dyn.set_num_threads, threads)
        for k in (64, 67):
            a = dyn.tensor(r.standard_normal((2, k)).astype(np.float32))
            w = dyn.tensor(r.standard_normal((9000, k)).astype(np.float32))  # a Linear's weight: [out, in]
            dyn.set_num_threads(1)
            one = (a @ w.T).numpy()
            dyn.set_num_threads(2)
            np.testing.assert_array_equal((a @ w.T).numpy(), one, err_msg=f"2 threads, k={k}")
            # columns computed four at a time, alone, or in another block: the same bits (one
            # column alone would be a [k, 1] operand, which is read as rows, in another order)
            for lo, hi in ((0, 2), (0, 7), (5, 9), (8995, 9000)):
                np.testing.assert_array_equal((a @ w[lo:hi].T).numpy(), one[:, lo:hi], err_msg=f"{lo}:{hi}")
            b = w[:3000].T.contiguous()  # row-major [in, out], small enough for dyn's kernel
            dyn.set_num_threads(1)
            whole = (a @ b).numpy()
            dyn.set_num_threads(2)
            np.testing.assert_array_equal((a @ b).numpy(), whole, err_msg=f"row-major B, 2 threads, k={k}")
            np.testing.assert_array_equal(whole[:, 5:45], (a @ b[:, 5:45].contiguous()).numpy())

    def test_many_rows_are_one_chain_per_element(self):
        # Past 16 rows, products run on core/packed_gemm.cpp (AVX-512) or OpenBLAS: every layout
        # close to float64, the same bits at 1 and 2 threads, and on the AVX-512 kernels (Note [one
        # chain per element]) a block of rows or of columns computed alone gives the same bits as in
        # the whole product. Shapes cross the kernel's blocks: k past 256, n past and short of the
        # 64-column panels, a narrow n (rows split over threads), an A past 1 MiB (rows grouped).
        # (OpenBLAS, which ran these before, gave other bits at 2 threads for 1500 x 600 x 20.)
        r = rng(15)
        threads = dyn.get_num_threads()
        self.addCleanup(dyn.set_num_threads, threads)
        own = dyn.blas_info()["float32"] == "dyn AVX-512"
        for m, k, n in ((17, 33, 65), (100, 600, 70), (300, 257, 130), (800, 600, 40), (1500, 600, 20)):
            a64, b64 = r.standard_normal((m, k)), r.standard_normal((k, n))
            ref = a64 @ b64
            for la in ("contig", "transposed"):
                for lb in ("contig", "transposed"):
                    a, b = to_dyn(a64.astype(np.float32), la), to_dyn(b64.astype(np.float32), lb)
                    with self.subTest(m=m, k=k, n=n, layouts=(la, lb)):
                        dyn.set_num_threads(1)
                        one = (a @ b).numpy()
                        np.testing.assert_allclose(one, ref, rtol=1e-4, atol=2e-5 * k)
                        dyn.set_num_threads(2)
                        np.testing.assert_array_equal((a @ b).numpy(), one)
                        if own:  # (16 rows or fewer run on small_gemm, in another order)
                            np.testing.assert_array_equal((a @ b[:, 1:n - 5]).numpy(), one[:, 1:n - 5])
                            if m - 5 > 16:
                                np.testing.assert_array_equal((a[3:m - 2] @ b).numpy(), one[3:m - 2])

    def test_a_row_does_not_depend_on_the_rows_computed_with_it(self):
        # Rows go a register tile at a time: a decoding batch [b, 1, k] @ W.T folds into one product
        # of b rows, and each row must be what that sequence alone would get.
        r = rng(14)
        for k, n in ((64, 64), (67, 300)):
            w = dyn.tensor(r.standard_normal((n, k)).astype(np.float32))
            x = dyn.tensor(r.standard_normal((16, 1, k)).astype(np.float32))
            for rows in (5, 8, 16):
                with self.subTest(k=k, n=n, rows=rows):
                    batch = (x[:rows] @ w.T).numpy()
                    for i in range(rows):
                        np.testing.assert_array_equal(batch[i], (x[i] @ w.T).numpy())
            b = w[:, :64].contiguous()  # row-major [n, 64] as B of a [rows, n] A
            a = dyn.tensor(r.standard_normal((8, n)).astype(np.float32))
            whole = (a @ b).numpy()
            for i in range(8):
                np.testing.assert_array_equal(whole[i], (a[i:i + 1] @ b).numpy()[0])


if __name__ == "__main__":
    unittest.main()
