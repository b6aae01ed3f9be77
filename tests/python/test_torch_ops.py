"""The PyTorch-named tensor functions of dyn/_ops.py and dyn/_torch_api.py and the engine's
cumsum/sort/scatter/index_add ops: values against numpy references written here, errors,
random sampling with seeds and generators, tensor conversions and properties, float64
finite-difference gradients (test_autograd_ops.gradcheck), and compiled equals eager bitwise.
"""
import math
import unittest

import numpy as np

import _dyn
import dyn
from compiletest import assert_same
from dyntest import assert_matches, in_layouts, to_dyn, to_np
from test_autograd_ops import gradcheck, rnd

F32, F64, I64, BOOL = dyn.float32, dyn.float64, dyn.int64, dyn.bool
LAYOUTS = ("contig", "transposed", "sliced")
NAN, INF = math.nan, math.inf


def normal(shape, seed=0, dtype=np.float32):
    return (np.random.default_rng(seed).standard_normal(shape) * 2.0).astype(dtype)


def ints(shape, seed=0, lo=-5, hi=6):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(np.int64)


# ---- numpy references ----

def np_scatter(base, dim, index, src, add=False):
    """torch.scatter / scatter_add: out[..., index[pos], ...] (along dim) = / += src[pos]."""
    out = base.copy()
    for pos in np.ndindex(index.shape):
        at = list(pos)
        at[dim] = index[pos]
        if add:
            out[tuple(at)] += src[pos]
        else:
            out[tuple(at)] = src[pos]
    return out


def np_index_add(base, dim, index, src, alpha=1):
    out = base.copy()
    for k, i in enumerate(index):
        sel = (slice(None),) * dim
        out[sel + (i,)] += alpha * src[sel + (k,)]
    return out


def np_logsumexp(a, axis, keepdims=False):
    return np.log(np.sum(np.exp(a.astype(np.float64)), axis=axis, keepdims=keepdims))


class TestCumsum(unittest.TestCase):
    def test_float_along_each_dim_and_layout(self):
        # The kernel accumulates in double and rounds once per element: exactly numpy's float64
        # cumsum cast back.
        for dt in (np.float32, np.float64):
            a = normal((3, 4, 5), 1, dt)
            for layout in LAYOUTS:
                x = to_dyn(a, layout)
                for d in (0, 1, 2, -1, -3):
                    with self.subTest(dtype=dt.__name__, layout=layout, dim=d):
                        want = np.cumsum(a.astype(np.float64), axis=d).astype(dt)
                        assert_matches(x.cumsum(d), want, exact=True)
                        assert_matches(dyn.cumsum(x, dim=d), want, exact=True)

    def test_int_and_bool_sum_as_int64(self):
        a = ints((4, 3), 2)
        for d in (0, 1):
            assert_matches(dyn.tensor(a).cumsum(d), np.cumsum(a, axis=d), msg=f"int dim {d}")
        b = np.array([[True, False, True, True], [False, False, True, False]])
        for d in (0, 1):
            got = dyn.tensor(b).cumsum(d)
            self.assertEqual(got.dtype, I64)
            assert_matches(got, np.cumsum(b.astype(np.int64), axis=d), msg=f"bool dim {d}")

    def test_dtype_argument(self):
        got = dyn.tensor([1, 2, 3]).cumsum(0, dtype=F64)
        assert_matches(got, np.array([1.0, 3.0, 6.0]), exact=True)

    def test_zero_d_and_empty(self):
        assert_matches(dyn.tensor(2.5).cumsum(0), np.array(2.5, np.float32), exact=True)
        self.assertEqual(tuple(dyn.zeros(0, 3).cumsum(0).shape), (0, 3))

    def test_reverse_is_not_public(self):
        # The engine's reverse flag (used by cumsum's derivative) is a suffix sum, reachable only
        # through the private _dyn._cumsum; PyTorch's cumsum has no such argument.
        x = dyn.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        with self.assertRaises(TypeError):
            dyn.cumsum(x, 1, reverse=True)
        with self.assertRaises(TypeError):
            x.cumsum(1, reverse=True)
        a = to_np(x)
        assert_matches(_dyn._cumsum(x, 1, reverse=True), np.flip(np.cumsum(np.flip(a, 1), 1), 1), exact=True)
        assert_matches(_dyn._cumsum(x, 0, True), np.flip(np.cumsum(np.flip(a, 0), 0), 0), exact=True)

    def test_bad_dim(self):
        with self.assertRaises(IndexError):
            dyn.zeros(2, 3).cumsum(2)


class TestSort(unittest.TestCase):
    def check(self, a, dim, descending, x=None):
        x = dyn.tensor(a) if x is None else x
        v, i = x.sort(dim, descending=descending)
        if descending:
            # a stable descending order: ties keep their input order
            key = -a.astype(np.float64) if a.dtype != np.bool_ else ~a
            want_i = np.argsort(key, axis=dim, kind="stable")
        else:
            want_i = np.argsort(a, axis=dim, kind="stable")
        assert_matches(i, want_i, msg=f"indices dim={dim} desc={descending}")
        assert_matches(v, np.take_along_axis(a, want_i, dim), exact=True, msg="values")
        assert_matches(x.argsort(dim, descending=descending), want_i, msg="argsort")
        assert_matches(dyn.argsort(x, dim=dim, descending=descending), want_i, msg="dyn.argsort")

    def test_values_and_stable_indices_with_ties(self):
        a = np.array([[3.0, 1.0, 2.0, 1.0, 3.0, 0.0], [2.0, 2.0, 2.0, -1.0, 5.0, 2.0]], np.float32)
        for layout in LAYOUTS:
            for dim in (0, 1, -1):
                for desc in (False, True):
                    with self.subTest(layout=layout, dim=dim, descending=desc):
                        self.check(a, dim, desc, to_dyn(a, layout))

    def test_ints_bools_float64(self):
        for a in (ints((4, 7), 3, -2, 3), np.random.default_rng(4).random((3, 6)) < 0.5,
                  np.round(normal((5, 4), 5, np.float64))):
            for dim in (0, 1):
                for desc in (False, True):
                    with self.subTest(dtype=a.dtype, dim=dim, descending=desc):
                        self.check(a, dim, desc)

    def test_nan_is_the_largest_value(self):
        x = dyn.tensor([1.0, NAN, 2.0, NAN, 1.0, 0.0])
        v, i = x.sort()
        self.assertEqual(i.tolist(), [5, 0, 4, 2, 1, 3])
        assert_matches(v, np.array([0, 1, 1, 2, NAN, NAN], np.float32), exact=True)
        v, i = x.sort(descending=True)
        self.assertEqual(i.tolist(), [1, 3, 2, 0, 4, 5])
        assert_matches(v, np.array([NAN, NAN, 2, 1, 1, 0], np.float32), exact=True)

    def test_infinities_and_signed_zero(self):
        x = dyn.tensor([INF, -0.0, -INF, 0.0, 1.0])
        v, i = x.sort()
        self.assertEqual(i.tolist(), [2, 1, 3, 4, 0])  # -0.0 == 0.0: stable

    def test_named_tuple_and_method(self):
        r = dyn.sort(dyn.tensor([2, 1]))
        self.assertEqual(type(r).__name__, "sort")
        self.assertEqual(r.values.tolist(), [1, 2])
        self.assertEqual(r.indices.tolist(), [1, 0])
        self.assertEqual(dyn.msort(dyn.tensor([[2, 0], [1, 3]])).tolist(), [[1, 0], [2, 3]])

    def test_zero_d(self):
        v, i = dyn.tensor(3.0).sort()
        self.assertEqual((v.item(), i.item(), tuple(i.shape)), (3.0, 0, ()))


class TestTopk(unittest.TestCase):
    def test_largest_and_smallest(self):
        a = normal((4, 7), 6)
        x = dyn.tensor(a)
        for dim in (0, 1, -1):
            for k in (0, 1, 3):
                for largest in (True, False):
                    with self.subTest(dim=dim, k=k, largest=largest):
                        order = np.argsort(-a if largest else a, axis=dim, kind="stable")
                        want_i = np.take(order, np.arange(k), axis=dim)
                        v, i = x.topk(k, dim=dim, largest=largest)
                        assert_matches(i, want_i)
                        assert_matches(v, np.take_along_axis(a, want_i, dim), exact=True)
        r = dyn.topk(x, 2)
        self.assertEqual(type(r).__name__, "topk")
        self.assertEqual(tuple(r.values.shape), (4, 2))

    def test_nan_counts_as_largest(self):
        x = dyn.tensor([1.0, NAN, 3.0, 2.0])
        self.assertEqual(x.topk(2).indices.tolist(), [1, 2])
        self.assertEqual(x.topk(2, largest=False).indices.tolist(), [0, 3])

    def test_k_out_of_range(self):
        x = dyn.zeros(2, 3)
        for k in (4, -1):
            with self.assertRaisesRegex(RuntimeError, "k out of range"):
                x.topk(k)
        self.assertEqual(tuple(x.topk(2, dim=0).values.shape), (2, 3))


class TestScatter(unittest.TestCase):
    BASE = normal((3, 5), 7)
    IDX1 = np.array([[4, 0], [1, 3], [2, 2]])  # along dim 1; a repeat in row 2
    IDX0 = np.array([[2, 0, 1, 0, 2], [1, 1, 0, 2, 0]])  # along dim 0

    def test_scatter_src_along_each_dim(self):
        src1 = normal((3, 2), 8)
        src0 = normal((2, 5), 9)
        for layout, b in in_layouts(self.BASE):
            with self.subTest(layout=layout):
                idx1 = np.array([[4, 0], [1, 3], [2, 0]])  # no repeats: scatter's result is defined
                assert_matches(b.scatter(1, dyn.tensor(idx1), dyn.tensor(src1)),
                               np_scatter(self.BASE, 1, idx1, src1), exact=True)
                assert_matches(b.scatter(-1, dyn.tensor(idx1), dyn.tensor(src1)),
                               np_scatter(self.BASE, 1, idx1, src1), exact=True)
                idx0 = np.array([[2, 0, 1, 0, 2]])
                assert_matches(dyn.scatter(b, 0, dyn.tensor(idx0), dyn.tensor(src0[:1])),
                               np_scatter(self.BASE, 0, idx0, src0[:1]), exact=True)

    def test_scatter_last_write_wins(self):
        out = dyn.zeros(3).scatter(0, dyn.tensor([1, 1, 1]), dyn.tensor([5.0, 6.0, 7.0]))
        self.assertEqual(out.tolist(), [0.0, 7.0, 0.0])

    def test_scatter_value(self):
        b = dyn.tensor(self.BASE)
        idx = np.array([[0], [4], [2]])
        want = np_scatter(self.BASE, 1, idx, np.full((3, 1), 2.5, np.float32))
        assert_matches(b.scatter(1, dyn.tensor(idx), 2.5), want, exact=True)
        assert_matches(b.scatter(1, dyn.tensor(idx), value=2.5), want, exact=True)
        with self.assertRaises(TypeError):
            b.scatter(1, dyn.tensor(idx))

    def test_scatter_in_place(self):
        a = self.BASE.copy()
        b = dyn.tensor(a)
        idx = np.array([[4, 0], [1, 3], [2, 0]])
        src = normal((3, 2), 10)
        r = b.scatter_(1, dyn.tensor(idx), dyn.tensor(src))
        self.assertIs(r, b)
        assert_matches(b, np_scatter(a, 1, idx, src), exact=True)

    def test_scatter_add_accumulates_repeats(self):
        src1 = normal((3, 2), 11)
        src0 = normal((2, 5), 12)
        for layout, b in in_layouts(self.BASE):
            with self.subTest(layout=layout):
                assert_matches(b.scatter_add(1, dyn.tensor(self.IDX1), dyn.tensor(src1)),
                               np_scatter(self.BASE, 1, self.IDX1, src1, add=True), exact=True)
                assert_matches(dyn.scatter_add(b, 0, dyn.tensor(self.IDX0), dyn.tensor(src0)),
                               np_scatter(self.BASE, 0, self.IDX0, src0, add=True), exact=True)
                assert_matches(b.scatter(1, dyn.tensor(self.IDX1), dyn.tensor(src1), reduce="add"),
                               np_scatter(self.BASE, 1, self.IDX1, src1, add=True), exact=True)
        ib = ints((2, 3), 13)
        out = dyn.tensor(ib).scatter_add(1, dyn.tensor([[0, 0, 0], [2, 1, 2]]), dyn.tensor(ints((2, 3), 14)))
        assert_matches(out, np_scatter(ib, 1, np.array([[0, 0, 0], [2, 1, 2]]), ints((2, 3), 14), add=True))

    def test_scatter_add_in_place(self):
        b = dyn.zeros(2, 3)
        r = b.scatter_add_(1, dyn.tensor([[0, 0], [2, 2]]), dyn.ones(2, 2))
        self.assertIs(r, b)
        self.assertEqual(b.tolist(), [[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]])

    def test_index_add_with_alpha(self):
        base = normal((4, 3), 15)
        src0 = normal((5, 3), 16)
        src1 = normal((4, 2), 17)
        idx0, idx1 = np.array([3, 0, 3, 1, 3]), np.array([2, 2])
        for layout, b in in_layouts(base):
            with self.subTest(layout=layout):
                assert_matches(b.index_add(0, dyn.tensor(idx0), dyn.tensor(src0)),
                               np_index_add(base, 0, idx0, src0), exact=True)
                assert_matches(b.index_add(1, dyn.tensor(idx1), dyn.tensor(src1), alpha=-2.0),
                               np_index_add(base, 1, idx1, src1, np.float32(-2.0)), exact=True)
                assert_matches(dyn.index_add(b, -1, dyn.tensor(idx1), dyn.tensor(src1), alpha=3),
                               np_index_add(base, 1, idx1, src1, np.float32(3)), exact=True)
        b = dyn.tensor(base)
        r = b.index_add_(0, dyn.tensor(idx0), dyn.tensor(src0), alpha=0.5)
        self.assertIs(r, b)
        assert_matches(b, np_index_add(base, 0, idx0, src0, np.float32(0.5)), exact=True)

    def test_errors(self):
        b = dyn.zeros(3, 4)
        with self.assertRaisesRegex(RuntimeError, "int64"):
            b.scatter(1, dyn.tensor([[0.0]]), dyn.ones(1, 1))
        with self.assertRaises(IndexError):
            b.scatter(1, dyn.tensor([[4]]), dyn.ones(1, 1))
        with self.assertRaisesRegex(RuntimeError, "dtype"):
            b.scatter_add(1, dyn.tensor([[0]]), dyn.ones(1, 1, dtype=F64))
        with self.assertRaisesRegex(RuntimeError, "number of dimensions"):
            b.scatter(0, dyn.tensor([0, 1]), dyn.ones(2))
        with self.assertRaisesRegex(NotImplementedError, "reduce='add'"):
            b.scatter(1, dyn.tensor([[0]]), dyn.ones(1, 1), reduce="multiply")
        with self.assertRaises(IndexError):
            b.index_add(0, dyn.tensor([3]), dyn.ones(1, 4))
        with self.assertRaisesRegex(RuntimeError, "does not match"):
            b.index_add(0, dyn.tensor([0, 1]), dyn.ones(1, 4))

    # PyTorch lets src be larger than index (only index.size(d) <= src.size(d) is required): the
    # example of torch.Tensor.scatter_'s docs.
    def test_scatter_src_larger_than_index(self):
        src = dyn.arange(1, 11).reshape(2, 5)
        out = dyn.zeros(3, 5, dtype=src.dtype).scatter_(0, dyn.tensor([[0, 1, 2, 0]]), src)
        self.assertEqual(out.tolist(), [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]])


class TestMaskedFill(unittest.TestCase):
    def test_broadcast_mask_and_values(self):
        a = normal((2, 3, 4), 20)
        for mshape in ((2, 3, 4), (3, 1), (4,), (1, 1, 1)):
            m = np.random.default_rng(len(mshape)).random(mshape) < 0.5
            for layout in LAYOUTS:
                x = to_dyn(a, layout)
                with self.subTest(mask=mshape, layout=layout):
                    assert_matches(x.masked_fill(dyn.tensor(m), -1.5), np.where(m, np.float32(-1.5), a), exact=True)
                    assert_matches(dyn.masked_fill(x, dyn.tensor(m), -INF), np.where(m, np.float32(-INF), a),
                                   exact=True)
                    assert_matches(x.masked_fill(dyn.tensor(m), dyn.tensor(7.0, dtype=F64)),
                                   np.where(m, np.float32(7.0), a), exact=True)

    def test_int_tensor(self):
        x = dyn.tensor([1, 2, 3])
        self.assertEqual(x.masked_fill(dyn.tensor([True, False, True]), 9).tolist(), [9, 2, 9])
        self.assertEqual(x.masked_fill(dyn.tensor([True, False, True]), 9).dtype, I64)

    def test_in_place(self):
        x = dyn.tensor([1.0, 2.0, 3.0])
        r = x.masked_fill_(dyn.tensor([False, True, False]), 0.0)
        self.assertIs(r, x)
        self.assertEqual(x.tolist(), [1.0, 0.0, 3.0])

    def test_errors(self):
        x = dyn.zeros(2, 3)
        with self.assertRaisesRegex(RuntimeError, "boolean masks"):
            x.masked_fill(dyn.tensor([1, 0, 1]), 1.0)
        with self.assertRaisesRegex(RuntimeError, "boolean masks"):
            x.masked_fill(dyn.tensor([1.0, 0.0, 1.0]), 1.0)
        with self.assertRaisesRegex(RuntimeError, "0-dimensional"):
            x.masked_fill(dyn.tensor([True, False, True]), dyn.tensor([1.0, 2.0, 3.0]))


class TestTriangles(unittest.TestCase):
    def test_tril_triu_diagonals_batched(self):
        for shape in ((4, 4), (3, 5), (5, 3), (2, 3, 4), (2, 1, 3, 3)):
            a = normal(shape, 21)
            for layout in LAYOUTS:
                x = to_dyn(a, layout)
                for k in (-1, 0, 1, 2, -5):
                    with self.subTest(shape=shape, layout=layout, diagonal=k):
                        assert_matches(x.tril(k), np.tril(a, k), exact=True)
                        assert_matches(dyn.triu(x, diagonal=k), np.triu(a, k), exact=True)
        b = np.random.default_rng(0).random((3, 3)) < 0.7
        assert_matches(dyn.tensor(b).tril(), np.tril(b))
        i = ints((3, 4), 22)
        assert_matches(dyn.tensor(i).triu(1), np.triu(i, 1))

    def test_in_place_and_errors(self):
        a = normal((3, 3), 23)
        x = dyn.tensor(a)
        self.assertIs(x.tril_(-1), x)
        assert_matches(x, np.tril(a, -1), exact=True)
        x = dyn.tensor(a)
        self.assertIs(x.triu_(1), x)
        assert_matches(x, np.triu(a, 1), exact=True)
        with self.assertRaisesRegex(RuntimeError, "at least 2 dimensions"):
            dyn.ones(3).tril()


class TestFlipRollRepeat(unittest.TestCase):
    A = normal((2, 3, 4), 30)

    def test_flip(self):
        for layout in LAYOUTS:
            x = to_dyn(self.A, layout)
            for dims in ((0,), (1,), (-1,), (0, 2), (0, 1, 2), ()):
                with self.subTest(layout=layout, dims=dims):
                    want = np.flip(self.A, dims) if dims else self.A
                    assert_matches(x.flip(dims), want, exact=True)
                    assert_matches(dyn.flip(x, list(dims)), want, exact=True)
                    if dims:
                        assert_matches(x.flip(*dims), want, exact=True)
        m = normal((3, 4), 31)
        assert_matches(dyn.fliplr(dyn.tensor(m)), np.fliplr(m), exact=True)
        assert_matches(dyn.tensor(m).flipud(), np.flipud(m), exact=True)

    def test_roll(self):
        for layout in LAYOUTS:
            x = to_dyn(self.A, layout)
            for shifts, dims in ((1, None), (-2, None), (25, None), (1, 1), (-1, 2), (5, 0), (0, 1),
                                 ((1, -2), (0, 2)), ((3, 1), (2, 1)), ((1, 1), (1, 1))):
                with self.subTest(layout=layout, shifts=shifts, dims=dims):
                    assert_matches(x.roll(shifts, dims), np.roll(self.A, shifts, dims), exact=True)
        assert_matches(dyn.roll(dyn.tensor(self.A), -3), np.roll(self.A, -3), exact=True)

    def test_roll_shifts_and_dims_must_align(self):
        with self.assertRaises(RuntimeError):
            dyn.arange(6).reshape(2, 3).roll(1, (0, 1))

    def test_roll_tuple_shift_int_dim(self):
        self.assertEqual(dyn.arange(6).reshape(2, 3).roll((1,), 0).tolist(), [[3, 4, 5], [0, 1, 2]])

    def test_repeat(self):
        a = normal((2, 3), 32)
        for layout in LAYOUTS:
            x = to_dyn(a, layout)
            for sizes in ((1, 1), (2, 3), (3, 1), (2, 1, 2), (1, 0)):
                with self.subTest(layout=layout, sizes=sizes):
                    assert_matches(x.repeat(*sizes), np.tile(a, sizes), exact=True)
                    assert_matches(x.repeat(sizes), np.tile(a, sizes), exact=True)
        with self.assertRaisesRegex(RuntimeError, "can not be smaller"):
            dyn.tensor(a).repeat(2)

    def test_repeat_interleave_and_tile(self):
        a = ints((2, 3), 33)
        x = dyn.tensor(a)
        assert_matches(x.repeat_interleave(2), np.repeat(a, 2))
        for d in (0, 1, -1):
            assert_matches(dyn.repeat_interleave(x, 3, dim=d), np.repeat(a, 3, axis=d), msg=f"dim {d}")
        with self.assertRaises(NotImplementedError):
            x.repeat_interleave(dyn.tensor([1, 2]), dim=0)
        for dims in ((2,), (2, 2), (2, 1, 3), (1, 1)):
            assert_matches(x.tile(dims), np.tile(a, dims), msg=f"tile {dims}")
            assert_matches(dyn.tile(x, dims), np.tile(a, dims), msg=f"dyn.tile {dims}")


class TestSplitting(unittest.TestCase):
    def sizes(self, parts, dim):
        return [p.shape[dim] for p in parts]

    def test_narrow(self):
        a = normal((5, 4), 40)
        x = dyn.tensor(a)
        assert_matches(x.narrow(0, 1, 3), a[1:4], exact=True)
        assert_matches(dyn.narrow(x, 1, -2, 2), a[:, 2:], exact=True)
        assert_matches(x.narrow(-1, 0, 0), a[:, :0], exact=True)
        assert_matches(x.narrow(0, dyn.tensor(2), 2), a[2:4], exact=True)
        with self.assertRaisesRegex(RuntimeError, "exceeds dimension size"):
            x.narrow(0, 3, 3)

    def test_split(self):
        a = ints((7, 4), 41)
        x = dyn.tensor(a)
        parts = x.split(3)
        self.assertIsInstance(parts, tuple)
        self.assertEqual(self.sizes(parts, 0), [3, 3, 1])
        for p, w in zip(parts, (a[:3], a[3:6], a[6:])):
            assert_matches(p, w)
        parts = dyn.split(x, [1, 4, 2])
        self.assertEqual(self.sizes(parts, 0), [1, 4, 2])
        assert_matches(parts[1], a[1:5])
        parts = x.split([3, 0, 1], dim=1)
        self.assertEqual(self.sizes(parts, 1), [3, 0, 1])
        assert_matches(parts[2], a[:, 3:])
        self.assertEqual(self.sizes(x.split(2, 1), 1), [2, 2])
        with self.assertRaisesRegex(RuntimeError, "sum exactly to 7"):
            x.split([3, 3])
        with self.assertRaisesRegex(RuntimeError, "sum exactly to 7"):
            x.split([4, 4])

    def test_chunk_uneven(self):
        x = dyn.arange(10)
        for chunks, want in ((3, [4, 4, 2]), (4, [3, 3, 3, 1]), (6, [2, 2, 2, 2, 2]), (1, [10]), (12, [1] * 10)):
            with self.subTest(chunks=chunks):
                parts = x.chunk(chunks)
                self.assertEqual(self.sizes(parts, 0), want)
                self.assertEqual([v for p in parts for v in p.tolist()], list(range(10)))
        self.assertEqual(self.sizes(dyn.chunk(dyn.zeros(2, 5), 2, dim=1), 1), [3, 2])
        with self.assertRaisesRegex(RuntimeError, "greater than 0"):
            x.chunk(0)

    def test_tensor_split(self):
        a = ints((7, 3), 42)
        x = dyn.tensor(a)
        for k in (1, 2, 3, 7, 9):
            with self.subTest(sections=k):
                parts = x.tensor_split(k)
                want = np.array_split(a, k)
                self.assertEqual(len(parts), len(want))
                for p, w in zip(parts, want):
                    assert_matches(p, w)
        for idx in ([1, 5], [0, 2, 2, 9], [4]):
            with self.subTest(indices=idx):
                parts = dyn.tensor_split(x, idx)
                want = np.split(a, idx)
                self.assertEqual([tuple(p.shape) for p in parts], [w.shape for w in want])
                for p, w in zip(parts, want):
                    assert_matches(p, w)
        parts = x.tensor_split(2, dim=1)
        self.assertEqual(self.sizes(parts, 1), [2, 1])

    def test_unbind(self):
        a = ints((2, 3, 4), 43)
        x = dyn.tensor(a)
        for d in (0, 1, 2, -1):
            parts = x.unbind(d)
            self.assertEqual(len(parts), a.shape[d])
            for k, p in enumerate(parts):
                assert_matches(p, np.take(a, k, axis=d), msg=f"dim {d} part {k}")
        self.assertEqual(len(dyn.unbind(x)), 2)

    def test_movedim(self):
        a = ints((2, 3, 4, 5), 44)
        x = dyn.tensor(a)
        for src, dst in ((0, -1), (-1, 0), (1, 2), ((0, 1), (2, 0)), ((0, 3), (3, 0)), ([1, 2], [-1, -2])):
            with self.subTest(source=src, destination=dst):
                assert_matches(x.movedim(src, dst), np.moveaxis(a, src, dst))
                assert_matches(dyn.moveaxis(x, src, dst), np.moveaxis(a, src, dst))


class TestStatistics(unittest.TestCase):
    A = normal((3, 4, 5), 50, np.float64)

    def test_var_std(self):
        a = self.A
        x = dyn.tensor(a)
        cases = [
            ({}, {"ddof": 1}), ({"unbiased": False}, {"ddof": 0}), ({"dim": 1}, {"axis": 1, "ddof": 1}),
            ({"dim": -1, "unbiased": False}, {"axis": -1, "ddof": 0}),
            ({"dim": (0, 2)}, {"axis": (0, 2), "ddof": 1}),
            ({"dim": (0, 2), "keepdim": True}, {"axis": (0, 2), "ddof": 1, "keepdims": True}),
            ({"dim": 1, "correction": 0}, {"axis": 1, "ddof": 0}),
            ({"dim": 2, "correction": 2, "keepdim": True}, {"axis": 2, "ddof": 2, "keepdims": True}),
        ]
        for kw, npkw in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                assert_matches(x.var(**kw), np.var(a, **npkw), rtol=1e-12, atol=1e-12)
                assert_matches(dyn.std(x, **kw), np.std(a, **npkw), rtol=1e-12, atol=1e-12)
        assert_matches(x.var(False), np.var(a), rtol=1e-12, atol=1e-12)  # var(unbiased) positionally
        v, m = dyn.var_mean(x, 1)
        assert_matches(v, np.var(a, 1, ddof=1), rtol=1e-12, atol=1e-12)
        assert_matches(m, np.mean(a, 1), rtol=1e-12, atol=1e-12)
        s, m = dyn.std_mean(x, (0, 1), keepdim=True)
        assert_matches(s, np.std(a, (0, 1), ddof=1, keepdims=True), rtol=1e-12, atol=1e-12)
        self.assertTrue(math.isnan(dyn.tensor([5.0]).var().item()))  # one sample, unbiased: nan
        f = normal((6, 2), 51)
        assert_matches(dyn.tensor(f).std(0), np.std(f.astype(np.float64), 0, ddof=1).astype(np.float32))

    def test_norm(self):
        a = self.A
        x = dyn.tensor(a)
        tol = dict(rtol=1e-12, atol=1e-12)
        flat = a.reshape(-1)
        assert_matches(x.norm(), np.linalg.norm(flat), **tol)
        assert_matches(dyn.norm(x, "fro"), np.linalg.norm(flat), **tol)
        assert_matches(x.norm(p=1), np.abs(a).sum(), **tol)
        assert_matches(x.norm(p=INF), np.abs(a).max(), **tol)
        assert_matches(x.norm(p="inf"), np.abs(a).max(), **tol)
        assert_matches(x.norm(p=-INF), np.abs(a).min(), **tol)
        assert_matches(x.norm(p=3), (np.abs(a) ** 3).sum() ** (1 / 3), **tol)
        assert_matches(x.norm(p=0), np.array(float(np.count_nonzero(a))), **tol)
        for dim in (0, -1, (0, 2)):
            for keepdim in (False, True):
                with self.subTest(dim=dim, keepdim=keepdim):
                    kw = dict(dim=dim, keepdim=keepdim)
                    npkw = dict(axis=dim, keepdims=keepdim)
                    assert_matches(x.norm(2, **kw), np.sqrt((a * a).sum(**npkw)), **tol)
                    assert_matches(x.norm(1, **kw), np.abs(a).sum(**npkw), **tol)
                    assert_matches(x.norm(INF, **kw), np.abs(a).max(**npkw), **tol)
                    assert_matches(x.norm(3, **kw), ((np.abs(a) ** 3).sum(**npkw)) ** (1 / 3), **tol)
        assert_matches(dyn.dist(x, x * 0.5), np.linalg.norm(flat * 0.5), **tol)
        with self.assertRaises(NotImplementedError):
            x.norm(p="nuc")

    def test_prod(self):
        a = np.random.default_rng(52).uniform(0.5, 1.5, (3, 4, 5))
        x = dyn.tensor(a)
        # a sequential product along the dim: the same rounding as numpy's reduce in float64
        tol = dict(rtol=1e-13, atol=0)
        assert_matches(x.prod(), np.prod(a), **tol)
        for d in (0, 1, -1):
            assert_matches(x.prod(d), np.prod(a, d), **tol)
            assert_matches(dyn.prod(x, d, keepdim=True), np.prod(a, d, keepdims=True), **tol)
        i = ints((3, 4), 53, -3, 4)
        assert_matches(dyn.tensor(i).prod(1), np.prod(i, 1))
        assert_matches(dyn.tensor(i).prod(), np.prod(i))
        b = np.array([[True, True], [True, False]])
        assert_matches(dyn.tensor(b).prod(1), np.array([1, 0]))
        assert_matches(dyn.tensor(i).prod(0, dtype=F64), np.prod(i, 0).astype(np.float64), exact=True)
        assert_matches(dyn.zeros(0).prod(), np.array(1.0, np.float32), exact=True)
        assert_matches(dyn.zeros(2, 0).prod(1), np.ones(2, np.float32), exact=True)

    def test_logsumexp(self):
        a = self.A * 10.0  # exp overflows float64 without the max shift for some entries
        a[0, 0, 0] = 800.0
        x = dyn.tensor(a)
        m = a.max(axis=2, keepdims=True)
        want = (np.log(np.exp(a - m).sum(axis=2, keepdims=True)) + m)
        tol = dict(rtol=1e-12, atol=1e-12)
        assert_matches(x.logsumexp(2), want[..., 0], **tol)
        assert_matches(dyn.logsumexp(x, -1, keepdim=True), want, **tol)
        small = normal((3, 4), 54, np.float64)
        assert_matches(dyn.tensor(small).logsumexp(0), np_logsumexp(small, 0), **tol)
        assert_matches(dyn.tensor(small).logsumexp((0, 1)), np_logsumexp(small, (0, 1)), **tol)
        assert_matches(dyn.tensor(small).logsumexp((0, 1), keepdim=True), np_logsumexp(small, (0, 1), True), **tol)
        inf = dyn.tensor([[-INF, -INF], [INF, 1.0], [-INF, 0.0]]).logsumexp(1)
        assert_matches(inf, np.array([-INF, INF, 0.0], np.float32), exact=True)

    def test_median(self):
        a = normal((4, 5), 55, np.float64)
        x = dyn.tensor(a)
        lower = np.sort(a.reshape(-1))[(a.size - 1) // 2]
        assert_matches(x.median(), lower, exact=True)
        for d in (0, 1):
            v, i = x.median(d)
            k = (a.shape[d] - 1) // 2
            want_i = np.take(np.argsort(a, axis=d, kind="stable"), k, axis=d)
            assert_matches(i, want_i, msg=f"dim {d}")
            assert_matches(v, np.take_along_axis(a, np.expand_dims(want_i, d), d).squeeze(d), exact=True)
        r = dyn.median(x, 1, keepdim=True)
        self.assertEqual((tuple(r.values.shape), tuple(r.indices.shape)), ((4, 1), (4, 1)))
        self.assertEqual(dyn.tensor([1, 4, 2, 3]).median().item(), 2)  # the lower of the two middles

    # torch.median returns NaN when the input has a NaN, with the first NaN's index
    # (torch.nanmedian is the one that skips them).
    def test_median_propagates_nan(self):
        self.assertTrue(math.isnan(dyn.tensor([1.0, NAN, 2.0]).median().item()))
        v, i = dyn.tensor([[1.0, NAN, 2.0]]).median(1)
        self.assertTrue(math.isnan(v.item()))
        self.assertEqual(i.item(), 1)
        x = dyn.tensor([[1.0, NAN, 2.0], [3.0, 1.0, 2.0], [NAN, NAN, 0.5]])  # PyTorch 2.15's answers
        v, i = x.median(1)
        self.assertEqual((v.isnan().tolist(), v[1].item(), i.tolist()), ([True, False, True], 2.0, [1, 2, 0]))
        v, i = x.nanmedian(1)
        self.assertEqual((v.tolist(), i.tolist()), ([1.0, 2.0, 0.5], [0, 2, 2]))


class TestElementwise(unittest.TestCase):
    def test_isclose_allclose(self):
        a = np.array([1.0, 1.0, 0.0, NAN, NAN, 1e-9, 100.0, -3.0, INF, -INF])
        b = np.array([1.0 + 1e-6, 1.1, 1e-9, NAN, 1.0, 0.0, 100.001, -3.0, INF, -INF])
        x, y = dyn.tensor(a), dyn.tensor(b)
        assert_matches(x.isclose(y), np.isclose(a, b))
        assert_matches(dyn.isclose(x, y, equal_nan=True), np.isclose(a, b, equal_nan=True))
        assert_matches(x.isclose(y, rtol=0.2, atol=0.0), np.isclose(a, b, rtol=0.2, atol=0.0))
        assert_matches(x.isclose(1.0), np.isclose(a, 1.0))
        self.assertIs(dyn.allclose(x[:3], x[:3] + 1e-9), True)
        self.assertIs(x[:2].allclose(y[:2]), False)
        self.assertIs(x.allclose(x), False)  # NaN
        self.assertIs(x.allclose(x, equal_nan=True), True)
        i = dyn.tensor([1, 2, 3])
        assert_matches(i.isclose(dyn.tensor([1, 3, 3])), np.array([True, False, True]))

    def test_isclose_infinities(self):
        a, b = np.array([INF, 1.0, INF, -INF]), np.array([-INF, INF, 1.0, 5.0])
        assert_matches(dyn.isclose(dyn.tensor(a), dyn.tensor(b)), np.isclose(a, b))
        self.assertIs(dyn.allclose(dyn.tensor([1.0]), dyn.tensor([INF])), False)

    def test_nan_to_num(self):
        for dt in (np.float32, np.float64):
            a = np.array([NAN, INF, -INF, 1.5, -0.0], dt)
            x = dyn.tensor(a)
            with self.subTest(dtype=dt.__name__):
                assert_matches(x.nan_to_num(), np.nan_to_num(a), exact=True)
                assert_matches(dyn.nan_to_num(x, nan=2.0, posinf=3.0, neginf=-4.0),
                               np.nan_to_num(a, nan=2.0, posinf=3.0, neginf=-4.0), exact=True)
                assert_matches(x.nan_to_num(posinf=1e6), np.nan_to_num(a, posinf=1e6), exact=True)
        i = dyn.tensor([1, 2])
        self.assertEqual(i.nan_to_num().tolist(), [1, 2])

    def test_round_half_to_even(self):
        a = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.4999, 2.5001, -2.6, 7.0, 1e20, NAN, INF, -INF,
                      4503599627370495.5], np.float64)
        for dt in (np.float32, np.float64):
            v = a.astype(dt)
            with self.subTest(dtype=dt.__name__):
                assert_matches(dyn.round(dyn.tensor(v)), np.round(v), exact=True)
                assert_matches(dyn.tensor(v).round(), np.round(v), exact=True)
        d = np.array([1.2345, 2.675, -0.125, 0.375], np.float64)
        assert_matches(dyn.tensor(d).round(decimals=2), np.round(d, 2), rtol=0, atol=1e-15)
        assert_matches(dyn.round(dyn.tensor([15.0, 25.0]), decimals=-1), np.array([20.0, 20.0], np.float32),
                       exact=True)

    # round keeps the sign of a value that rounds to zero (torch and numpy: round(-0.5) and
    # round(-0.3) are -0.0).
    def test_round_negative_to_minus_zero(self):
        got = dyn.tensor([-0.5, -0.3, -0.0]).round().numpy()
        self.assertEqual(np.signbit(got).tolist(), [True, True, True])

    def test_sign_trunc(self):
        a = np.array([-2.5, -0.0, 0.0, 3.0, -INF, INF, 1e-30], np.float32)
        x = dyn.tensor(a)
        assert_matches(x.sign(), np.sign(a), exact=True)
        assert_matches(dyn.sgn(x), np.sign(a), exact=True)
        i = ints((6,), 60)
        assert_matches(dyn.tensor(i).sign(), np.sign(i))
        t = np.array([-2.5, -0.7, 0.2, 3.7, -3.0, 1e10, INF, -INF, NAN], np.float64)
        assert_matches(dyn.trunc(dyn.tensor(t)), np.trunc(t), exact=True)
        assert_matches(dyn.tensor(t).fix(), np.trunc(t), exact=True)
        self.assertTrue(np.signbit(dyn.tensor([-0.7]).trunc().numpy()[0]))


class TestProducts(unittest.TestCase):
    def test_diag_diagonal_trace(self):
        v = normal((3,), 70)
        for k in (0, 1, -1, 2):
            assert_matches(dyn.diag(dyn.tensor(v), k), np.diag(v, k), exact=True, msg=f"diag 1-d {k}")
        m = normal((3, 4), 71)
        x = dyn.tensor(m)
        for k in (0, 1, -1, 3, -2, 5):
            with self.subTest(offset=k):
                assert_matches(x.diag(k), np.diag(m, k), exact=True)
                assert_matches(x.diagonal(k), np.diagonal(m, k), exact=True)
        b = normal((2, 3, 4), 72)
        for off, d1, d2 in ((0, 0, 1), (1, 1, 2), (0, 0, 2), (-1, 2, 1), (0, -1, -2)):
            with self.subTest(offset=off, dim1=d1, dim2=d2):
                assert_matches(dyn.diagonal(dyn.tensor(b), off, d1, d2), np.diagonal(b, off, d1, d2), exact=True)
        i = ints((4, 3), 73)
        assert_matches(dyn.tensor(i).trace(), np.trace(i))
        assert_matches(dyn.trace(dyn.tensor(m)), np.trace(m.astype(np.float64)).astype(np.float32), rtol=1e-6)

    def test_bmm_dot_outer_addmm(self):
        a, b = normal((2, 3, 4), 74, np.float64), normal((2, 4, 5), 75, np.float64)
        tol = dict(rtol=1e-12, atol=1e-12)
        assert_matches(dyn.bmm(dyn.tensor(a), dyn.tensor(b)), a @ b, **tol)
        assert_matches(dyn.tensor(a).bmm(dyn.tensor(b)), a @ b, **tol)
        u, w = normal((5,), 76, np.float64), normal((5,), 77, np.float64)
        assert_matches(dyn.dot(dyn.tensor(u), dyn.tensor(w)), np.dot(u, w), **tol)
        assert_matches(dyn.tensor(u).outer(dyn.tensor(w[:3])), np.outer(u, w[:3]), exact=True)
        c, m1, m2 = normal((3, 5), 78, np.float64), a[0], b[0]
        assert_matches(dyn.addmm(dyn.tensor(c), dyn.tensor(m1), dyn.tensor(m2)), c + m1 @ m2, **tol)
        assert_matches(dyn.tensor(c).addmm(dyn.tensor(m1), dyn.tensor(m2), beta=0.5, alpha=-2.0),
                       0.5 * c + -2.0 * (m1 @ m2), **tol)
        assert_matches(dyn.addmm(dyn.tensor(c), dyn.tensor(m1), dyn.tensor(m2), beta=0), m1 @ m2, **tol)
        assert_matches(dyn.addmm(dyn.tensor(c[0]), dyn.tensor(m1), dyn.tensor(m2)), c[0] + m1 @ m2, **tol)
        with self.assertRaisesRegex(RuntimeError, "3D"):
            dyn.bmm(dyn.tensor(m1), dyn.tensor(m2))
        with self.assertRaisesRegex(RuntimeError, "1D tensors expected"):
            dyn.dot(dyn.tensor(m1), dyn.tensor(u))

    def test_einsum(self):
        r = np.random.default_rng(79)

        def arr(*shape):
            return r.standard_normal(shape)

        sq = arr(4, 4)
        cases = [
            ("ij,jk->ik", arr(3, 4), arr(4, 5)), ("bij,bjk->bik", arr(2, 3, 4), arr(2, 4, 5)),
            ("ii->i", sq), ("ij->ji", arr(3, 4)), ("i,i->", arr(5), arr(5)),
            ("bhqd,bhkd->bhqk", arr(2, 3, 4, 5), arr(2, 3, 6, 5)),
            ("ij,jk", arr(3, 4), arr(4, 2)), ("ii", sq), ("ba,ac", arr(2, 3), arr(3, 4)),
            ("ij->i", arr(3, 4)), ("ij,ij->ij", arr(3, 4), arr(3, 4)), ("i,j->ij", arr(3), arr(4)),
            ("ij,jk,kl->il", arr(2, 3), arr(3, 4), arr(4, 5)), ("bij->bji", arr(2, 3, 4)),
            (" ij , jk -> ki ", arr(3, 4), arr(4, 5)),
        ]
        for eq, *ops in cases:
            with self.subTest(equation=eq):
                want = np.einsum(eq.replace(" ", ""), *ops)
                got = dyn.einsum(eq, *[dyn.tensor(o) for o in ops])
                assert_matches(got, np.asarray(want), rtol=1e-12, atol=1e-12)
                got = dyn.einsum(eq, [dyn.tensor(o) for o in ops])
                assert_matches(got, np.asarray(want), rtol=1e-12, atol=1e-12)
        with self.assertRaises(ValueError):
            dyn.einsum("ij,jk->ik", dyn.ones(2, 2))
        # '...' as numpy writes it (more cases against PyTorch 2.15 in test_functional_reference.py)
        a = np.arange(24.0).reshape(2, 3, 4)
        assert_matches(dyn.einsum("...ij->...ji", dyn.tensor(a)), np.einsum("...ij->...ji", a))
        assert_matches(dyn.einsum("...ij,jk->...ik", dyn.tensor(a), dyn.tensor(a[0].T.copy())),
                       np.einsum("...ij,jk->...ik", a, a[0].T))
        with self.assertRaisesRegex(RuntimeError, "more than one '...'"):
            dyn.einsum("......", dyn.ones(2, 2))


class TestCreation(unittest.TestCase):
    def test_linspace(self):
        for start, end, steps in ((0.0, 1.0, 5), (-3.0, 7.0, 11), (0.1, 0.7, 7), (2.0, -1.0, 4), (1e-3, 1.0, 100),
                                  (0.3, 0.9, 2)):
            for dt, ndt in ((F64, np.float64), (F32, np.float32)):
                with self.subTest(start=start, end=end, steps=steps, dtype=ndt.__name__):
                    got = dyn.linspace(start, end, steps, dtype=dt)
                    want = np.linspace(start, end, steps).astype(ndt)
                    assert_matches(got, want, rtol=1e-6 if ndt == np.float32 else 1e-14, atol=1e-15)
                    vals = got.tolist()
                    self.assertEqual(vals[0], float(ndt(start)), "first value is start exactly")
                    self.assertEqual(vals[-1], float(ndt(end)), "last value is end exactly")
        self.assertEqual(dyn.linspace(0, 1, 5).dtype, dyn.get_default_dtype())
        self.assertEqual(dyn.linspace(2.5, 9.0, 1).tolist(), [2.5])
        self.assertEqual(tuple(dyn.linspace(0, 1, 0).shape), (0,))
        self.assertEqual(dyn.linspace(0, 10, 5, dtype=I64).tolist(), [0, 2, 5, 7, 10])
        self.assertEqual(dyn.linspace(dyn.tensor(1.0), dyn.tensor(2.0), 3).tolist(), [1.0, 1.5, 2.0])
        with self.assertRaises(RuntimeError):
            dyn.linspace(0, 1, -1)
        t = dyn.linspace(0, 1, 3, requires_grad=True)
        self.assertTrue(t.requires_grad and t.is_leaf)

    def test_logspace(self):
        assert_matches(dyn.logspace(0, 3, 4, dtype=F64), np.logspace(0, 3, 4), rtol=1e-14)
        assert_matches(dyn.logspace(-1, 2, 7, base=2, dtype=F64), np.logspace(-1, 2, 7, base=2.0), rtol=1e-14)
        assert_matches(dyn.logspace(0, 2, 3), np.array([1.0, 10.0, 100.0], np.float32), exact=True)

    def test_eye(self):
        assert_matches(dyn.eye(3), np.eye(3, dtype=np.float32), exact=True)
        assert_matches(dyn.eye(2, 4), np.eye(2, 4, dtype=np.float32), exact=True)
        assert_matches(dyn.eye(4, 2, dtype=I64), np.eye(4, 2, dtype=np.int64))
        assert_matches(dyn.eye(2, dtype=BOOL), np.eye(2, dtype=np.bool_))
        self.assertEqual(tuple(dyn.eye(0).shape), (0, 0))


class TestRandom(unittest.TestCase):
    def test_randperm(self):
        for n in (0, 1, 7, 100):
            p = dyn.randperm(n)
            self.assertEqual(p.dtype, I64)
            self.assertEqual(sorted(p.tolist()), list(range(n)), f"n={n}")
        dyn.manual_seed(3)
        a = dyn.randperm(50).tolist()
        dyn.manual_seed(3)
        self.assertEqual(dyn.randperm(50).tolist(), a)
        self.assertNotEqual(a, list(range(50)))
        g = dyn.Generator().manual_seed(4)
        b = dyn.randperm(20, generator=g).tolist()
        self.assertEqual(dyn.randperm(20, generator=dyn.Generator().manual_seed(4)).tolist(), b)
        self.assertEqual(dyn.randperm(5, dtype=F64).dtype, F64)

    def seeded(self, fn, seed=11):
        dyn.manual_seed(seed)
        return fn().tolist()

    def test_multinomial_with_replacement(self):
        p = [0.1, 0.0, 0.6, 0.3]
        n = 4000
        draw = lambda: dyn.multinomial(dyn.tensor(p), n, replacement=True)  # noqa: E731
        s = self.seeded(draw)
        self.assertEqual(self.seeded(draw), s, "the same seed gives the same draws")
        self.assertNotEqual(self.seeded(draw, 12), s)
        counts = np.bincount(s, minlength=4)
        self.assertEqual(counts[1], 0, "a class of probability 0 is never drawn")
        for k, pk in enumerate(p):
            sd = math.sqrt(n * pk * (1 - pk))
            self.assertLessEqual(abs(counts[k] - n * pk), 5 * sd + 1, f"class {k}: {counts[k]} of {n}, p={pk}")
        # unnormalized weights, rows, and the method
        rows = dyn.tensor([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]])
        dyn.manual_seed(0)
        r = rows.multinomial(500, True)
        self.assertEqual(tuple(r.shape), (2, 500))
        self.assertEqual(set(r[1].tolist()), {1})
        c0 = np.bincount(r[0].tolist(), minlength=3)
        self.assertEqual(c0[1], 0)
        self.assertLessEqual(abs(c0[2] - 375), 5 * math.sqrt(500 * 0.75 * 0.25))

    def test_multinomial_without_replacement(self):
        p = dyn.tensor([[0.1, 0.0, 0.6, 0.3, 0.2], [5.0, 1.0, 0.0, 0.0, 1.0]])
        draw = lambda: dyn.multinomial(p, 3)  # noqa: E731
        s = self.seeded(draw)
        self.assertEqual(self.seeded(draw), s)
        for row in s:
            self.assertEqual(len(set(row)), 3, f"repeats without replacement: {row}")
        self.assertNotIn(1, s[0])
        self.assertEqual(sorted(s[1]), [0, 1, 4], "the only three classes of positive weight")
        # frequency of the first draw follows p (class 2: p = 0.6 / 1.2 = 0.5)
        dyn.manual_seed(5)
        firsts = [dyn.multinomial(dyn.tensor([0.1, 0.0, 0.6, 0.3, 0.2]), 1).item() for _ in range(400)]
        c = np.bincount(firsts, minlength=5)
        self.assertEqual(c[1], 0)
        self.assertLessEqual(abs(c[2] - 200), 5 * math.sqrt(400 * 0.25))
        g1, g2 = dyn.Generator().manual_seed(9), dyn.Generator().manual_seed(9)
        self.assertEqual(dyn.multinomial(p, 2, generator=g1).tolist(), dyn.multinomial(p, 2, generator=g2).tolist())
        with self.assertRaisesRegex(RuntimeError, "without replacement"):
            dyn.multinomial(dyn.tensor([1.0, 1.0]), 3)
        with self.assertRaisesRegex(RuntimeError, "floating-point"):
            dyn.multinomial(dyn.tensor([1, 1]), 1)
        with self.assertRaisesRegex(RuntimeError, "1 or 2 dim"):
            dyn.multinomial(dyn.ones(2, 2, 2), 1)

    # torch.multinomial's checks of the weights, as PyTorch 2.15 makes them.
    def test_multinomial_invalid_distributions(self):
        # PyTorch 2.15: without replacement, more samples than positive weights still draws (from
        # the zero-weight categories); negative, infinite or NaN weights and an all-zero row raise
        self.assertEqual(sorted(dyn.multinomial(dyn.tensor([1.0, 0.0, 0.0]), 2).tolist())[0], 0)
        with self.assertRaisesRegex(RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0"):
            dyn.multinomial(dyn.tensor([-1.0, 2.0]), 1)
        with self.assertRaisesRegex(RuntimeError, "probability tensor contains either"):
            dyn.multinomial(dyn.tensor([math.inf, 1.0]), 1)
        with self.assertRaisesRegex(RuntimeError, "invalid multinomial distribution"):
            dyn.multinomial(dyn.tensor([0.0, 0.0]), 1)

    def test_bernoulli(self):
        self.assertEqual(dyn.bernoulli(dyn.tensor([0.0, 1.0, 0.0, 1.0])).tolist(), [0.0, 1.0, 0.0, 1.0])
        probs = dyn.full((5000,), 0.3, dtype=F64)
        s = self.seeded(lambda: dyn.bernoulli(probs))
        self.assertEqual(self.seeded(lambda: dyn.bernoulli(probs)), s)
        self.assertEqual(set(s), {0.0, 1.0})
        self.assertLessEqual(abs(sum(s) - 1500), 5 * math.sqrt(5000 * 0.21))
        out = dyn.bernoulli(dyn.zeros(2000), 0.9)  # p= overrides the input's values
        self.assertEqual(out.dtype, F32)
        self.assertLessEqual(abs(out.sum().item() - 1800), 5 * math.sqrt(2000 * 0.09))
        x = dyn.zeros(1000)
        self.assertIs(x.bernoulli_(0.5), x)
        self.assertLessEqual(abs(x.sum().item() - 500), 5 * math.sqrt(250))
        self.assertEqual(dyn.full((3,), 1.0).bernoulli().tolist(), [1.0, 1.0, 1.0])

    def test_generator(self):
        g1, g2 = dyn.Generator(), dyn.Generator()
        self.assertIs(g1.manual_seed(123), g1)
        g2.manual_seed(123)
        self.assertEqual(g1.initial_seed(), 123)
        for draw in (lambda g: dyn.rand(4, generator=g), lambda g: dyn.randn(2, 3, generator=g),
                     lambda g: dyn.randint(0, 100, (5,), generator=g), lambda g: dyn.randperm(6, generator=g)):
            self.assertEqual(draw(g1).tolist(), draw(g2).tolist())
        a = dyn.rand(3, generator=g1).tolist()
        self.assertNotEqual(dyn.rand(3, generator=g1).tolist(), a, "a generator advances")
        # state round trip
        st = g1.get_state()
        a = dyn.rand(5, generator=g1).tolist()
        g1.set_state(st)
        self.assertEqual(dyn.rand(5, generator=g1).tolist(), a)
        self.assertEqual(str(g1.device), "cpu")

    def test_generator_draws_leave_the_global_stream(self):
        dyn.manual_seed(77)
        want = dyn.rand(6).tolist()
        dyn.manual_seed(77)
        g = dyn.Generator().manual_seed(1)
        dyn.rand(100, generator=g)
        dyn.randperm(10, generator=g)
        dyn.multinomial(dyn.ones(4), 2, generator=g)
        dyn.bernoulli(dyn.full((5,), 0.5), generator=g)
        self.assertEqual(dyn.rand(6).tolist(), want)

    def test_generator_on_cuda_refused(self):
        with self.assertRaisesRegex(RuntimeError, "CPU"):
            dyn.Generator(device="cuda")


class TestTensorProtocol(unittest.TestCase):
    def test_format(self):
        t = dyn.tensor(3.14159)
        self.assertEqual(f"{t:.3f}", "3.142")
        self.assertEqual(f"{dyn.tensor(2, dtype=I64):04d}", "0002")
        self.assertEqual(f"{t}", format(t.item(), ""))
        self.assertEqual(f"{dyn.tensor([1.5, 2.0])}", str(dyn.tensor([1.5, 2.0])))
        with self.assertRaisesRegex(TypeError, r"0-d tensors.*shape \[1\]"):
            f"{dyn.tensor([3.14]):.3f}"
        with self.assertRaises(TypeError):
            f"{dyn.zeros(2, 2):>10}"

    def test_data(self):
        x = dyn.ones(3, requires_grad=True)
        y = x * 2.0
        d = y.data
        self.assertFalse(d.requires_grad)
        self.assertIsNone(d.grad_fn)
        self.assertEqual(d.tolist(), [2.0, 2.0, 2.0])
        x.data.mul_(3.0)  # .data shares x's memory, outside autograd
        self.assertEqual(x.tolist(), [3.0, 3.0, 3.0])
        x.data = dyn.tensor([1.0, 2.0, 3.0])
        self.assertEqual(x.tolist(), [1.0, 2.0, 3.0])
        self.assertTrue(x.requires_grad and x.is_leaf)
        (x * x).sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0, 4.0, 6.0])
        with self.assertRaisesRegex(RuntimeError, "shape or dtype"):
            x.data = dyn.zeros(2)
        with self.assertRaisesRegex(RuntimeError, "shape or dtype"):
            x.data = dyn.zeros(3, dtype=F64)

    def test_device_and_to(self):
        x = dyn.tensor([1.0, 2.0])
        self.assertEqual(x.device, dyn.device("cpu"))
        self.assertEqual(x.device, "cpu")
        self.assertEqual(x.device.type, "cpu")
        self.assertFalse(x.is_cuda)
        self.assertIs(x.to("cpu"), x)
        self.assertIs(x.to(dyn.device("cpu")), x)
        self.assertIs(x.cpu(), x)
        y = x.to("cpu", F64)
        self.assertEqual((y.dtype, y.tolist()), (F64, [1.0, 2.0]))
        y = x.to(device="cpu", dtype=I64)
        self.assertEqual(y.dtype, I64)
        self.assertEqual(x.to(dyn.zeros(1, dtype=F64)).dtype, F64)
        self.assertIs(x.to(dyn.zeros(1)), x)
        c = x.to("cpu", copy=True)
        self.assertIsNot(c, x)
        c.add_(1.0)
        self.assertEqual((x.tolist(), c.tolist()), ([1.0, 2.0], [2.0, 3.0]))
        c = x.to(F32, copy=True)
        self.assertIsNot(c, x)
        self.assertEqual(x.get_device(), -1)

    def test_cuda_refused(self):
        x = dyn.zeros(2)
        for call in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: x.to("cuda:0", F64)):
            with self.assertRaisesRegex(RuntimeError, "CPU"):
                call()
        factories = [
            lambda: dyn.zeros(2, device="cuda"), lambda: dyn.ones(2, device="cuda:0"),
            lambda: dyn.empty(2, device="cuda"), lambda: dyn.full((2,), 1.0, device="cuda"),
            lambda: dyn.rand(2, device="cuda"), lambda: dyn.randn(2, device="cuda"),
            lambda: dyn.randint(0, 5, (2,), device="cuda"), lambda: dyn.arange(3, device="cuda"),
            lambda: dyn.tensor([1.0], device="cuda"), lambda: dyn.linspace(0, 1, 3, device="cuda"),
            lambda: dyn.eye(2, device="cuda"), lambda: dyn.randperm(3, device="cuda"),
            lambda: dyn.zeros(2, device=dyn.device("cuda", 1)), lambda: dyn.zeros(2, device="mps"),
            lambda: dyn.zeros_like(x, device="cuda"), lambda: x.new_zeros(2, device="cuda"),
        ]
        for k, make in enumerate(factories):
            with self.subTest(factory=k):
                with self.assertRaisesRegex(RuntimeError, "CPU"):
                    make()
        self.assertEqual(dyn.zeros(2, device="cpu").tolist(), [0.0, 0.0])
        self.assertEqual(dyn.zeros(2, device=dyn.device("cpu")).tolist(), [0.0, 0.0])

    def test_new_and_like(self):
        x = dyn.tensor([[1.0, 2.0]], dtype=F64)
        z = x.new_zeros(2, 3)
        self.assertEqual((tuple(z.shape), z.dtype, z.tolist()), ((2, 3), F64, [[0.0] * 3] * 2))
        self.assertEqual(tuple(x.new_zeros((4,)).shape), (4,))
        f = x.new_full((2,), 7)
        self.assertEqual((f.dtype, f.tolist()), (F64, [7.0, 7.0]))
        self.assertEqual(x.new_full((1,), 3, dtype=I64).dtype, I64)
        self.assertEqual(x.new_ones(3).tolist(), [1.0, 1.0, 1.0])
        self.assertEqual(x.new_tensor([1, 2]).dtype, F64)
        self.assertFalse(x.new_zeros(1).requires_grad)
        self.assertTrue(x.new_zeros(1, requires_grad=True).requires_grad)
        self.assertEqual(dyn.tensor([1.7, -2.2]).type_as(dyn.tensor([1])).tolist(), [1, -2])
        self.assertEqual(dyn.tensor([1, 2]).type_as(x).dtype, F64)
        v = dyn.arange(6).view_as(dyn.zeros(2, 3))
        self.assertEqual(v.tolist(), [[0, 1, 2], [3, 4, 5]])
        self.assertEqual(tuple(dyn.arange(6).reshape_as(dyn.zeros(3, 2)).shape), (3, 2))

    def test_element_size(self):
        for dt, size in ((F32, 4), (F64, 8), (I64, 8), (BOOL, 1)):
            t = dyn.zeros(3, dtype=dt)
            self.assertEqual((t.element_size(), t.itemsize, t.nbytes), (size, size, 3 * size), str(dt))

    def test_unsupported_dtypes(self):
        for name in ("complex64", "cfloat", "complex128"):
            dt = getattr(dyn, name)
            self.assertIn("not supported", repr(dt), name)
            for use in (lambda: dyn.zeros(2, dtype=dt), lambda: dyn.tensor([1.0], dtype=dt),
                        lambda: dyn.arange(3, dtype=dt), lambda: dyn.ones(2).to(dt), lambda: dt.itemsize):
                with self.subTest(dtype=name):
                    with self.assertRaises(TypeError):
                        use()
        self.assertFalse(dyn.complex64.is_floating_point)

    def test_unsupported_dtype_message_names_it(self):
        with self.assertRaisesRegex(TypeError, "complex64"):
            dyn.ones(2).to(dyn.complex64)
        with self.assertRaisesRegex(TypeError, "complex64"):
            dyn.zeros(2, dtype=dyn.complex64)


# ---- gradients (float64 central differences) ----

def _unique_rows(rows, cols, n, seed):
    """[rows, n] int64 indices into a dim of size cols, distinct within each row."""
    r = np.random.default_rng(seed)
    return dyn.tensor(np.stack([r.permutation(cols)[:n] for _ in range(rows)]).astype(np.int64))


class TestGradients(unittest.TestCase):
    def test_cumsum(self):
        for d in (0, 1, -1):
            for lay in LAYOUTS:
                with self.subTest(dim=d, layout=lay):
                    gradcheck(self, lambda x: x.cumsum(d), [rnd((3, 4), 1)], [lay], msg=f"cumsum {d}")
        gradcheck(self, lambda x: dyn.cumsum(x, 0) * x, [rnd((5,), 2)], msg="cumsum * x")

    def test_sort_topk_values(self):
        for lay in LAYOUTS:
            with self.subTest(layout=lay):
                gradcheck(self, lambda x: x.sort(1).values, [rnd((3, 5), 3)], [lay], msg="sort")
                gradcheck(self, lambda x: x.sort(0, descending=True).values, [rnd((3, 5), 4)], [lay], msg="sort desc")
                gradcheck(self, lambda x: x.topk(2, dim=1).values, [rnd((3, 5), 5)], [lay], msg="topk")
                gradcheck(self, lambda x: x.topk(2, dim=0, largest=False).values, [rnd((3, 5), 6)], [lay],
                          msg="topk smallest")
        gradcheck(self, lambda x: x.median(1).values, [rnd((3, 5), 7)], msg="median")

    def test_scatter_family(self):
        idx = _unique_rows(3, 5, 2, 8)  # scatter's src gradient is defined when no place is written twice
        dup = dyn.tensor([[0, 4, 0], [1, 1, 1], [3, 2, 3]])
        cases = [
            ("scatter", lambda b, s: b.scatter(1, idx, s), [(3, 5), (3, 2)]),
            ("scatter_add", lambda b, s: b.scatter_add(1, dup, s), [(3, 5), (3, 3)]),
            ("scatter reduce add", lambda b, s: b.scatter(1, dup, s, reduce="add"), [(3, 5), (3, 3)]),
            ("index_add", lambda b, s: b.index_add(0, dyn.tensor([2, 0, 2, 1]), s), [(3, 5), (4, 5)]),
            ("index_add alpha", lambda b, s: b.index_add(1, dyn.tensor([4, 4]), s, alpha=-1.5), [(3, 5), (3, 2)]),
        ]
        for name, fn, shapes in cases:
            for lay in ("contig", "transposed"):
                with self.subTest(op=name, layout=lay):
                    gradcheck(self, fn, [rnd(shapes[0], 9), rnd(shapes[1], 10)], [lay, lay], msg=name)
        gradcheck(self, lambda b: b.scatter(1, idx, 2.0), [rnd((3, 5), 11)], msg="scatter value")

    def test_masked_fill_tril_flip_roll_repeat(self):
        mask = dyn.tensor([[True, False, False, True], [False, True, False, False], [True, True, False, False]])
        cases = [
            ("masked_fill", lambda x: x.masked_fill(mask, 0.5)),
            ("masked_fill broadcast", lambda x: x.masked_fill(mask[0], -2.0)),
            ("tril", lambda x: x.tril()), ("tril -1", lambda x: x.tril(-1)), ("triu 1", lambda x: x.triu(1)),
            ("flip", lambda x: x.flip(0)), ("flip both", lambda x: x.flip(0, 1)),
            ("roll", lambda x: x.roll(1, 1)), ("roll flat", lambda x: x.roll(-5)),
            ("roll two", lambda x: x.roll((1, -1), (0, 1))),
            ("repeat", lambda x: x.repeat(2, 1, 2)), ("repeat_interleave", lambda x: x.repeat_interleave(2, 0)),
            ("tile", lambda x: x.tile((2,))),
        ]
        for name, fn in cases:
            for lay in LAYOUTS:
                with self.subTest(op=name, layout=lay):
                    gradcheck(self, fn, [rnd((3, 4), 12)], [lay], msg=name)
        gradcheck(self, lambda x, v: x.masked_fill(mask, v), [rnd((3, 4), 13), rnd((), 14)], msg="tensor value")

    def test_reductions(self):
        cases = [
            ("var", lambda x: x.var(), "normal"), ("var dim", lambda x: x.var(1), "normal"),
            ("var tuple keepdim", lambda x: x.var((0, 1), keepdim=True, unbiased=False), "normal"),
            ("std", lambda x: x.std(0), "normal"), ("std correction", lambda x: x.std(1, correction=0), "normal"),
            ("norm", lambda x: x.norm(), "normal"), ("norm dim", lambda x: x.norm(dim=1), "normal"),
            ("norm 1", lambda x: x.norm(1, dim=0), "away"), ("norm inf", lambda x: x.norm(INF), "normal"),
            ("norm 3", lambda x: x.norm(3, dim=1), "away"),
            ("logsumexp", lambda x: x.logsumexp(1), "normal"),
            ("logsumexp tuple", lambda x: x.logsumexp((0, 1)), "normal"),
            ("prod", lambda x: x.prod(), "away"), ("prod dim", lambda x: x.prod(1, keepdim=True), "away"),
        ]
        for name, fn, kind in cases:
            for lay in LAYOUTS:
                with self.subTest(op=name, layout=lay):
                    gradcheck(self, fn, [rnd((3, 4), 15, kind)], [lay], msg=name)

    def test_einsum_and_products(self):
        cases = [
            ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ii->i", [(3, 3)]),
            ("i,i->", [(4,), (4,)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 2), (1, 2, 2, 2)]), ("ji", [(2, 3)]),
        ]
        for eq, shapes in cases:
            with self.subTest(equation=eq):
                gradcheck(self, lambda *xs: dyn.einsum(eq, *xs), [rnd(s, 16 + i) for i, s in enumerate(shapes)],
                          msg=eq)
        gradcheck(self, lambda c, a, b: dyn.addmm(c, a, b, beta=0.5, alpha=2.0),
                  [rnd((2, 2), 20), rnd((2, 3), 21), rnd((3, 2), 22)], msg="addmm")
        gradcheck(self, lambda a, b: dyn.outer(a, b), [rnd((3,), 23), rnd((2,), 24)], msg="outer")
        gradcheck(self, lambda x: x.diagonal(1).sum() + x.trace(), [rnd((3, 4), 25)], msg="diagonal trace")


# ---- compiled equals eager ----

def tri_roll(x):
    return x.cumsum(1).tril() + x.flip(0).roll(1, 1)


def causal_softmax(q, k):
    t = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = dyn.ones(t, t, dtype=BOOL).triu(1)
    return scores.masked_fill(mask, -INF).softmax(-1)


def top_and_sort(x):
    v, i = x.topk(3, dim=-1)
    s = x.sort(0, descending=True)
    return v * 2.0, i, s.values, s.indices, x.argsort(1)


def scatters(base, idx, src, acc, rows, upd):
    return (base.scatter_add(1, idx, src), acc.index_add(0, rows, upd, alpha=0.5),
            base.scatter(1, idx, src * 3.0), base.scatter(1, idx, -1.0))


def stats(x):
    return (x.var(1), x.std((0, 1), keepdim=True), x.norm(dim=0), x.norm(1), x.logsumexp(1), x.prod(0),
            dyn.einsum("ij,kj->ik", x, x), x.median(1).values, x.repeat(2, 1).tile((1, 2)), x.cumsum(0, dtype=F64))


def _args(name, k):
    r = np.random.default_rng(900 + k)

    def f(*shape):
        return dyn.tensor(r.standard_normal(shape).astype(np.float32))

    if name == "tri_roll":
        return [f(4, 5)]
    if name == "causal_softmax":
        return [f(2, 4, 3), f(2, 4, 3)]
    if name == "top_and_sort":
        return [f(4, 6)]
    if name == "scatters":
        idx = dyn.tensor(r.integers(0, 5, (3, 4)).astype(np.int64))
        rows = dyn.tensor(r.integers(0, 2, (4,)).astype(np.int64))
        return [f(3, 5), idx, f(3, 4), f(2, 3), rows, f(4, 3)]
    return [f(3, 4)]


PROGRAMS = {"tri_roll": tri_roll, "causal_softmax": causal_softmax, "top_and_sort": top_and_sort,
            "scatters": scatters, "stats": stats}
ENGINE_OPS = {"tri_roll": "cumsum", "top_and_sort": "sort", "scatters": "scatter_add", "stats": "cumsum"}


class TestCompiledEqualsEager(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_programs(self):
        for name, fn in PROGRAMS.items():
            with self.subTest(program=name):
                cf = dyn.compile(fn)
                for k in range(3):
                    want = fn(*_args(name, k))
                    got = cf(*_args(name, k))
                    assert_same(self, want, got, f"{name} call {k}")
                graphs = dyn.debug.graphs(cf)
                self.assertEqual(len(graphs), 1, [g.id for g in graphs])
                self.assertEqual(graphs[0].calls, 3)
                self.assertEqual(dyn.debug.events("graph_break", cf), [])
                if name in ENGINE_OPS:
                    self.assertIn(ENGINE_OPS[name], graphs[0].ops)

    def test_causal_mask_rows_sum_to_one(self):
        # sanity of the compiled program's values, not only agreement with eager
        p = dyn.compile(causal_softmax)(*_args("causal_softmax", 7)).numpy()
        np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-6)
        self.assertTrue((p[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0).all())


if __name__ == "__main__":
    unittest.main()
