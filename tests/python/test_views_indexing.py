"""Views and indexing: storage sharing, basic indexing vs numpy, setitem, tensor and
mask indexing, gather, cat/stack, reshape/expand/squeeze, numpy()/from_numpy sharing."""
import unittest

import numpy as np

import dyn
from dyntest import LAYOUTS, assert_matches, in_layouts, rand_np, rng, to_dyn, to_np

F32, F64, I64, BOOL = dyn.float32, dyn.float64, dyn.int64, dyn.bool
E = Ellipsis

BASIC_INDICES = [
    1, -1, 0, (slice(None), 1), (slice(1, 3),), (slice(None, None, 2),), None, (None, 1),
    (E, 0), (0, E), (slice(None), None, slice(1, None)), (-2, slice(None, -1)),
    (slice(None, None, 3), slice(1, 4, 2)), (1, 2), (E,), (slice(10, 20),), (slice(-100, 100),),
    (0, 1, 2), (-1, -1, -1), (E, None), (slice(1, 2), E, slice(None, None, 4)), (2, slice(None), -3),
    (slice(3, 1),), (slice(None), slice(None), slice(5, None)),
]


class TestViews(unittest.TestCase):
    def test_basic_indexing_matches_numpy(self):
        r = rng(0)
        for dt in (F32, I64, BOOL):
            for layout in LAYOUTS:
                a = rand_np((4, 5, 6), dt, r)
                t = to_dyn(a, layout)
                for idx in BASIC_INDICES:
                    with self.subTest(dtype=str(dt), layout=layout, idx=idx):
                        assert_matches(t[idx], a[idx])

    def test_indexing_views_share_storage(self):
        for idx in BASIC_INDICES:
            base = dyn.zeros(4, 5, 6)
            ref = np.zeros((4, 5, 6), np.float32)
            v = base[idx]
            if v.numel() == 0:
                continue
            with self.subTest(idx=idx):
                v.fill_(3.0)
                ref[idx] = 3.0
                assert_matches(base, ref)
                v.add_(1.0)
                ref[idx] += 1.0
                assert_matches(base, ref)

    def test_view_methods_share_storage(self):
        cases = [
            ("reshape", lambda t: t.reshape(6, 4)), ("reshape -1", lambda t: t.reshape(-1, 2)),
            ("view", lambda t: t.view(2, 12)), ("view -1", lambda t: t.view(-1)),
            ("flatten", lambda t: t.flatten()), ("flatten(1)", lambda t: t.flatten(1)),
            ("transpose", lambda t: t.transpose(0, 2)), ("permute", lambda t: t.permute(2, 0, 1)),
            ("unsqueeze", lambda t: t.unsqueeze(1)), ("squeeze", lambda t: t.unsqueeze(0).squeeze(0)),
            ("T of 2-D", lambda t: t[0].T), ("detach", lambda t: t.detach()),
            ("chain", lambda t: t.transpose(0, 1)[1:].unsqueeze(-1)[..., 0]),
        ]
        for name, f in cases:
            with self.subTest(view=name):
                base = dyn.arange(24.0).reshape(2, 3, 4)
                v = f(base)
                v.fill_(-1.0)  # every element of the base that v covers becomes -1
                after = to_np(base)
                self.assertTrue((after == -1).any(), name)
                self.assertTrue(((after == -1) | (after == np.arange(24.0).reshape(2, 3, 4))).all())
        base = dyn.zeros(3)
        alias = base.view(3)
        base.add_(2)
        self.assertEqual(alias.tolist(), [2.0, 2.0, 2.0])

    def test_shape_ops_values(self):
        r = rng(1)
        for layout in LAYOUTS:
            a = rand_np((2, 3, 4), F32, r)
            t = to_dyn(a, layout)
            with self.subTest(layout=layout):
                assert_matches(t.reshape(4, 6), a.reshape(4, 6))
                assert_matches(t.reshape(-1), a.reshape(-1))
                assert_matches(t.reshape((3, -1)), a.reshape(3, -1))
                assert_matches(t.flatten(), a.reshape(-1))
                assert_matches(t.flatten(0, 1), a.reshape(6, 4))
                assert_matches(t.flatten(start_dim=1), a.reshape(2, 12))
                assert_matches(t.flatten(-2, -1), a.reshape(2, 12))
                assert_matches(t.transpose(0, 1), a.transpose(1, 0, 2))
                assert_matches(t.transpose(-1, 0), a.transpose(2, 1, 0))
                assert_matches(t.permute(2, 0, 1), a.transpose(2, 0, 1))
                assert_matches(t.permute((1, 2, 0)), a.transpose(1, 2, 0))
                assert_matches(t[0].T, a[0].T)
                assert_matches(t.unsqueeze(0), a[None])
                assert_matches(t.unsqueeze(-1), a[..., None])
                assert_matches(t.unsqueeze(2), a[:, :, None])
                assert_matches(t.contiguous(), a)
                self.assertTrue(t.contiguous().is_contiguous())
                assert_matches(t.clone(), a)
        s = dyn.zeros(1, 3, 1, 2)
        self.assertEqual(tuple(s.squeeze().shape), (3, 2))
        self.assertEqual(tuple(s.squeeze(0).shape), (3, 1, 2))
        self.assertEqual(tuple(s.squeeze(1).shape), (1, 3, 1, 2))  # not size 1: no-op
        self.assertEqual(tuple(s.squeeze(-2).shape), (1, 3, 2))
        self.assertEqual(tuple(dyn.tensor(5.0).flatten().shape), (1,))
        self.assertEqual(tuple(dyn.ones(1, 1).squeeze().shape), ())
        self.assertEqual(tuple(dyn.ones(3).T.shape), (3,))

    def test_strides_and_contiguity(self):
        t = dyn.zeros(2, 3, 4)
        self.assertEqual(tuple(t.stride()), (12, 4, 1))
        self.assertTrue(t.is_contiguous())
        tt = t.transpose(0, 2)
        self.assertEqual(tuple(tt.stride()), (1, 4, 12))
        self.assertFalse(tt.is_contiguous())
        self.assertEqual(tuple(t[:, ::2].stride()), (12, 8, 1))
        e = dyn.zeros(3, 1).expand(3, 4)
        self.assertEqual(tuple(e.stride()), (1, 0))
        self.assertEqual(tuple(tt.contiguous().stride()), (6, 2, 1))

    def test_reshape_non_contiguous_copies(self):
        r = rng(2)
        a = rand_np((3, 4), F32, r)
        base = dyn.tensor(a)
        flat = base.T.reshape(-1)
        assert_matches(flat, a.T.reshape(-1))
        flat.fill_(0.0)
        assert_matches(base, a)  # a copy: the base is untouched
        c = base.T.contiguous()
        c.fill_(1.0)
        assert_matches(base, a)

    def test_expand(self):
        r = rng(3)
        a = rand_np((3, 1), F32, r)
        t = dyn.tensor(a)
        assert_matches(t.expand(3, 4), np.broadcast_to(a, (3, 4)))
        assert_matches(t.expand(-1, 5), np.broadcast_to(a, (3, 5)))
        assert_matches(t.expand(2, 3, 4), np.broadcast_to(a, (2, 3, 4)))
        assert_matches(t.expand((3, 2)), np.broadcast_to(a, (3, 2)))
        v = dyn.tensor([1.0, 2.0]).expand(3, 2)
        assert_matches(v + 1, np.broadcast_to(np.array([2.0, 3.0], np.float32), (3, 2)))
        assert_matches(v.sum(dim=0), np.array([3.0, 6.0], np.float32))
        assert_matches(v.contiguous(), np.broadcast_to(np.array([1.0, 2.0], np.float32), (3, 2)))
        base = dyn.zeros(3, 1)
        ex = base.expand(3, 4)
        base[1, 0] = 2.0  # an expanded tensor is a view of its base
        self.assertEqual(ex[1].tolist(), [2.0] * 4)

    def test_len_iter_size(self):
        t = dyn.arange(12).reshape(3, 4)
        self.assertEqual(len(t), 3)
        rows = list(t)
        self.assertEqual(len(rows), 3)
        for i, row in enumerate(rows):
            self.assertIsInstance(row, dyn.Tensor)
            self.assertEqual(row.tolist(), list(range(4 * i, 4 * i + 4)))
        self.assertEqual(t.size(), (3, 4))
        self.assertEqual(t.size(1), 4)
        self.assertEqual(t.size(-2), 3)
        self.assertEqual(t.ndim, 2)
        self.assertEqual(t.dim(), 2)
        self.assertEqual(t.numel(), 12)


class TestAdvancedIndexing(unittest.TestCase):
    def test_int_tensor_index(self):
        r = rng(4)
        w = rand_np((5, 4), F32, r)
        for layout, tw in in_layouts(w):
            for idx in [np.array([0, 4, 2, 2]), np.array([[1, 0, 3], [4, 4, 0]]),
                        np.array([-1, -5, 0]), np.zeros((0,), np.int64), np.array(3)]:
                idx = idx.astype(np.int64)
                with self.subTest(layout=layout, idx=idx.tolist()):
                    out = tw[dyn.tensor(idx)]
                    assert_matches(out, w[idx])
                    self.assertEqual(tuple(out.shape), idx.shape + (4,))
        ti = dyn.tensor(rand_np((6,), I64, r))
        assert_matches(ti[dyn.tensor([5, 0])], np.array(ti.tolist())[[5, 0]])
        # the result of tensor indexing is a copy
        tw = dyn.tensor(w)
        out = tw[dyn.tensor([0, 1])]
        out.fill_(0.0)
        assert_matches(tw, w)

    def test_mask_index(self):
        r = rng(5)
        for layout in LAYOUTS:
            a = rand_np((4, 5), F32, r)
            t = to_dyn(a, layout)
            m = rand_np((4, 5), BOOL, r)
            with self.subTest(layout=layout):
                assert_matches(t[to_dyn(m, layout)], a[m])
                assert_matches(t[t > 0], a[a > 0])
                assert_matches(t[t > 100], a[a > 100])  # empty result
        ai = rand_np((7,), I64, r)
        assert_matches(dyn.tensor(ai)[dyn.tensor(ai) % 2 == 0], ai[ai % 2 == 0])

    def test_gather(self):
        r = rng(6)
        a = rand_np((3, 4, 5), F32, r)
        for layout, t in in_layouts(a):
            for dim in (0, 1, 2, -1):
                shape = list(a.shape)
                shape[dim] = 2
                idx = r.integers(0, a.shape[dim], shape).astype(np.int64)
                with self.subTest(layout=layout, dim=dim):
                    assert_matches(t.gather(dim, dyn.tensor(idx)), np.take_along_axis(a, idx, axis=dim))
                    assert_matches(dyn.gather(t, dim, dyn.tensor(idx)), np.take_along_axis(a, idx, axis=dim))
        # an index smaller than the input in the other dims
        idx = np.array([[0], [3]], np.int64)
        b = a[0]
        assert_matches(dyn.tensor(b).gather(1, dyn.tensor(idx)), np.take_along_axis(b[:2], idx, axis=1))


class TestSeveralTensorIndices(unittest.TestCase):
    """x[i, j] with several int64 tensor indices: as NumPy's advanced indexing (which PyTorch
    follows; its results for the same calls are in torch_reference/), in layouts, compiled and
    differentiated."""

    CASES = [(lambda i, j: (i, slice(None), j)), (lambda i, j: (slice(None), i, j)), (lambda i, j: (i, j)),
             (lambda i, j: (E, i, j)), (lambda i, j: (i, j, j)), (lambda i, j: (None, i, j))]

    def test_matches_numpy(self):
        r = rng(4)
        a = rand_np((3, 4, 5, 6), F32, r)
        i = r.integers(-3, 3, (2, 1)).astype(np.int64)
        j = r.integers(-4, 4, (3,)).astype(np.int64)
        checked = 0
        for layout, t in in_layouts(a):
            for k, case in enumerate(self.CASES):
                with self.subTest(layout=layout, case=k):
                    assert_matches(t[case(dyn.tensor(i), dyn.tensor(j))], a[case(i, j)])
                    checked += 1
        self.assertEqual(checked, len(LAYOUTS) * len(self.CASES))

    def test_gradient_and_compiled(self):
        logits = dyn.randn(4, 3, requires_grad=True)
        y = dyn.tensor([2, 0, 1, 1])
        logits[dyn.arange(4), y].sum().backward()
        want = np.zeros((4, 3), np.float32)
        want[np.arange(4), y.numpy()] = 1
        np.testing.assert_array_equal(logits.grad.numpy(), want)

        def pick(x, rows, cols):
            return x[rows, :, cols] * 2.0

        f = dyn.compile(pick)
        x = dyn.randn(3, 4, 5)
        rows, cols = dyn.tensor([0, 2, -1]), dyn.tensor([4, 0, 1])
        self.assertTrue(dyn.equal(f(x, rows, cols), pick(x, rows, cols)))

    def test_errors(self):
        x = dyn.zeros(2, 3)
        with self.assertRaisesRegex(IndexError, "index 5 is out of bounds for dimension 0 with size 2"):
            x[dyn.tensor([5]), dyn.tensor([0])]
        with self.assertRaisesRegex(IndexError, r"shape mismatch: indexing tensors could not be broadcast together "
                                                r"with shapes \[2\], \[3\]"):
            x[dyn.tensor([0, 1]), dyn.tensor([0, 1, 2])]
        with self.assertRaisesRegex(IndexError, "index 5 is out of bounds for dimension 0 with size 2"):
            x[dyn.tensor([5]), dyn.tensor([0])] = 1.0
        self.assertEqual(x.sum().item(), 0.0)

    def test_assignment_matches_numpy(self):
        # scalars and tensors, adjacent and separated indices, repeated positions (the last wins,
        # as NumPy and PyTorch's CPU index_put_)
        def cases(lib, zeros, tensor):
            out = []
            x = zeros(3, 4)
            x[tensor([0, 2, 2]), tensor([1, 3, 0])] = 5.0
            out.append(x)
            y = zeros(2, 3, 4)
            y[:, tensor([0, 2]), tensor([1, 3])] = tensor([[1.0, 2.0], [3.0, 4.0]])
            out.append(y)
            z = zeros(2, 3, 4)
            z[tensor([0, 1]), :, tensor([3, 0])] = lib.arange(6.0).reshape(2, 3)
            out.append(z)
            w = zeros(3, 3)
            w[tensor([0, 0]), tensor([1, 1])] = tensor([7.0, 8.0])
            out.append(w)
            return out

        got = cases(dyn, lambda *s: dyn.zeros(*s), dyn.tensor)
        want = cases(np, lambda *s: np.zeros(s, np.float32), lambda v: np.array(v, np.float32 if isinstance(
            np.asarray(v).flat[0], float) else np.int64))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)

        def one_hot(y, n):
            out = dyn.zeros(y.shape[0], n)
            out[dyn.arange(y.shape[0]), y] = 1.0
            return out * 2.0

        f = dyn.compile(one_hot)
        y = dyn.tensor([2, 0, 1, 1])
        self.assertTrue(dyn.equal(f(y, 3), one_hot(y, 3)))


class TestIndexPut(unittest.TestCase):
    """index_put_ / index_put, with accumulate: values recorded from PyTorch 2.15."""

    def test_accumulate_and_replace(self):
        x = dyn.zeros(3, 4)
        x.index_put_((dyn.tensor([0, 2, 0]), dyn.tensor([1, 3, 1])), dyn.tensor([1.0, 2.0, 3.0]), accumulate=True)
        self.assertEqual(x.tolist(), [[0.0, 4.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]])
        y = dyn.zeros(3, 2)
        self.assertIs(y.index_put_((dyn.tensor([0, 0, 2]),), dyn.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                                   accumulate=True), y)
        self.assertEqual(y.tolist(), [[4.0, 6.0], [0.0, 0.0], [5.0, 6.0]])
        z = dyn.zeros(4)
        self.assertEqual(z.index_put((dyn.tensor([1, 1, -1]),), dyn.tensor(2.0), accumulate=True).tolist(),
                         [0.0, 4.0, 0.0, 2.0])
        self.assertEqual(z.tolist(), [0.0] * 4)
        w = dyn.zeros(2, 3)
        w.index_put_((dyn.tensor([1]), dyn.tensor([2])), dyn.tensor(5.0))
        self.assertEqual(w.tolist(), [[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
        t = dyn.zeros(3, 3).t()  # not contiguous: written back
        t.index_put_((dyn.tensor([0, 0]), dyn.tensor([2, 2])), dyn.tensor([1.0, 1.0]), accumulate=True)
        self.assertEqual(t.tolist(), [[0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
        m = dyn.zeros(2, 2)
        m.index_put_((dyn.tensor([[True, False], [False, True]]),), dyn.tensor(3.0), accumulate=True)
        self.assertEqual(m.tolist(), [[3.0, 0.0], [0.0, 3.0]])
        with self.assertRaisesRegex(IndexError, "index 2 is out of bounds for dimension 0 with size 2"):
            dyn.zeros(2).index_put_((dyn.tensor([2]),), dyn.tensor(1.0), accumulate=True)
        n = dyn.tensor([[0, 1], [2, 0]])
        self.assertEqual((n.nonzero().tolist(), n.argwhere().tolist()), ([[0, 1], [1, 0]], [[0, 1], [1, 0]]))


class TestSetitem(unittest.TestCase):
    def test_setitem_basic(self):
        r = rng(7)
        a = rand_np((4, 5), F32, r)
        t, ref = dyn.tensor(a), a.copy()
        t[0] = 1.0; ref[0] = 1.0
        t[:, 1] = dyn.tensor(np.arange(4, dtype=np.float32)); ref[:, 1] = np.arange(4)
        t[1:3, ::2] = dyn.tensor([7.0, 8.0, 9.0]); ref[1:3, ::2] = [7.0, 8.0, 9.0]
        t[..., -1] = 5; ref[..., -1] = 5
        t[2, 3] = -2.5; ref[2, 3] = -2.5
        t[-1] = dyn.tensor([[1, 2, 3, 4, 5]]).squeeze(0); ref[-1] = [1, 2, 3, 4, 5]  # int source
        assert_matches(t, ref)
        src = rand_np((5, 4), F32, r)
        t[:] = dyn.tensor(src).T; ref[:] = src.T  # non-contiguous source
        assert_matches(t, ref)
        tt = t.T
        tt[0] = 0.0; ref.T[0] = 0.0  # through a view
        assert_matches(t, ref)
        ti = dyn.zeros(3, dtype=I64)
        ti[1] = 2.9  # truncates, like torch
        self.assertEqual(ti.tolist(), [0, 2, 0])
        tb = dyn.zeros(2, 2, dtype=BOOL)
        tb[0, 1] = True
        self.assertEqual(tb.tolist(), [[False, True], [False, False]])


class TestCatStack(unittest.TestCase):
    def test_cat(self):
        r = rng(8)
        for layout in LAYOUTS:
            a, b, c = rand_np((2, 3, 4), F32, r), rand_np((2, 1, 4), F32, r), rand_np((2, 5, 4), F32, r)
            ta, tb, tc = to_dyn(a, layout), to_dyn(b, "sliced"), to_dyn(c, "transposed")
            with self.subTest(layout=layout):
                assert_matches(dyn.cat([ta, tb, tc], dim=1), np.concatenate([a, b, c], axis=1))
                assert_matches(dyn.cat((ta, ta), 0), np.concatenate([a, a], 0))
                assert_matches(dyn.cat([ta, ta], dim=-1), np.concatenate([a, a], -1))
                assert_matches(dyn.cat([ta]), a)
        z = np.zeros((0, 3), np.float32)
        x = rand_np((2, 3), F32, r)
        assert_matches(dyn.cat([dyn.tensor(z), dyn.tensor(x)]), np.concatenate([z, x]))
        xi = rand_np((2, 3), I64, r)
        assert_matches(dyn.cat([dyn.tensor(xi), dyn.tensor(xi)], 1), np.concatenate([xi, xi], 1))
        # cat promotes like torch 1.13
        out = dyn.cat([dyn.tensor([1.0]), dyn.tensor([2.0], dtype=F64)])
        self.assertTrue(out.dtype == F64)
        self.assertEqual(out.tolist(), [1.0, 2.0])

    def test_stack(self):
        r = rng(9)
        for layout in LAYOUTS:
            xs = [rand_np((3, 4), F32, r) for _ in range(3)]
            ts = [to_dyn(x, lay) for x, lay in zip(xs, (layout, "sliced", "transposed"))]
            for dim in (0, 1, 2, -1, -3):
                with self.subTest(layout=layout, dim=dim):
                    assert_matches(dyn.stack(ts, dim=dim), np.stack(xs, axis=dim))
        assert_matches(dyn.stack([dyn.tensor(1), dyn.tensor(2)]), np.array([1, 2]))
        bs = [rand_np((2,), BOOL, r) for _ in range(2)]
        assert_matches(dyn.stack([dyn.tensor(b) for b in bs], 1), np.stack(bs, 1))


class TestConversions(unittest.TestCase):
    def test_to_dtype(self):
        f = dyn.tensor([-1.7, 0.0, 2.7, 3.0])
        self.assertEqual(f.long().tolist(), [-1, 0, 2, 3])
        self.assertTrue(f.long().dtype == I64)
        self.assertEqual(f.to(I64).tolist(), [-1, 0, 2, 3])
        self.assertEqual(f.bool().tolist(), [True, False, True, True])
        self.assertTrue(f.double().dtype == F64)
        self.assertEqual(f.double().tolist(), [float(np.float32(x)) for x in (-1.7, 0.0, 2.7, 3.0)])
        i = dyn.tensor([1, 0, -3])
        self.assertTrue(i.float().dtype == F32)
        self.assertEqual(i.float().tolist(), [1.0, 0.0, -3.0])
        self.assertEqual(i.to(BOOL).tolist(), [True, False, True])
        b = dyn.tensor([True, False])
        self.assertEqual(b.long().tolist(), [1, 0])
        self.assertEqual(b.to(F64).tolist(), [1.0, 0.0])
        t = dyn.tensor([1.5]).to(F64)
        self.assertTrue(t.dtype == F64)
        c = f.to(F64)
        c.fill_(0.0)
        self.assertEqual(f.tolist()[2], float(np.float32(2.7)))  # a conversion is a copy
        # non-contiguous source
        m = dyn.arange(6.0).reshape(2, 3).T
        assert_matches(m.long(), np.arange(6).reshape(2, 3).T)

    def test_clone_is_independent(self):
        a = dyn.arange(6.0).reshape(2, 3)
        c = a.clone()
        c.fill_(0.0)
        self.assertEqual(a.tolist(), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        ct = a.T.clone()
        self.assertEqual(ct.tolist(), [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])


class TestNumpyInterop(unittest.TestCase):
    def test_numpy_shares_memory(self):
        t = dyn.zeros(3)
        a = t.numpy()
        self.assertIsInstance(a, np.ndarray)
        self.assertEqual(a.dtype, np.float32)
        a[0] = 5.0
        self.assertEqual(t[0].item(), 5.0)
        t.add_(1.0)
        self.assertEqual(a.tolist(), [6.0, 1.0, 1.0])
        for dt, nd in ((F64, np.float64), (I64, np.int64), (BOOL, np.bool_)):
            self.assertEqual(dyn.zeros(2, dtype=dt).numpy().dtype, nd)

    def test_numpy_of_view(self):
        base = dyn.arange(12.0).reshape(3, 4)
        v = base.T
        a = v.numpy()
        np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4).T)
        a[0, 1] = 100.0  # element (1, 0) of base
        self.assertEqual(base[1, 0].item(), 100.0)
        s = base[:, 1::2].numpy()
        np.testing.assert_array_equal(s, to_np(base)[:, 1::2])
        self.assertEqual(dyn.tensor(2.5).numpy().shape, ())

    def test_from_numpy_shares_memory(self):
        for nd in (np.float32, np.float64, np.int64, np.bool_):
            arr = np.zeros((2, 3), nd)
            t = dyn.from_numpy(arr)
            with self.subTest(dtype=nd):
                self.assertEqual(tuple(t.shape), (2, 3))
                arr[1, 2] = 1
                self.assertEqual(t[1, 2].item(), 1)
                t[0, 0] = 1
                self.assertEqual(arr[0, 0], 1)
        arr = np.arange(6.0).reshape(2, 3)
        t = dyn.from_numpy(arr.T)
        assert_matches(t, arr.T)

    def test_tensor_from_numpy_copies(self):
        arr = np.arange(4.0)
        t = dyn.tensor(arr)
        self.assertTrue(t.dtype == F64)
        arr[0] = 99.0
        self.assertEqual(t[0].item(), 0.0)


if __name__ == "__main__":
    unittest.main()
