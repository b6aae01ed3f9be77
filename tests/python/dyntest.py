"""Shared helpers for the dyn scenario tests (run by `dynrepl tests/python/test_X.py`).

Random numpy data per dtype, dyn tensors with the same values in contiguous and
non-contiguous layouts, and `assert_matches` that compares a dyn tensor with a numpy
reference (dtype mapping, shape, values); numpy references of softmax and log_softmax.
"""
import numpy as np

import dyn

# (dyn dtype, numpy dtype); a list because dyn dtypes need not be hashable.
DTYPE_PAIRS = [
    (dyn.float32, np.dtype(np.float32)),
    (dyn.float64, np.dtype(np.float64)),
    (dyn.int64, np.dtype(np.int64)),
    (dyn.bool, np.dtype(np.bool_)),
]
FLOAT_DTYPES = [dyn.float32, dyn.float64]
ALL_DTYPES = [p[0] for p in DTYPE_PAIRS]
LAYOUTS = ("contig", "transposed", "sliced")


def np_dtype(d):
    for dd, nd in DTYPE_PAIRS:
        if dd == d:
            return nd
    raise KeyError(d)


def dyn_dtype(nd):
    nd = np.dtype(nd)
    for dd, n in DTYPE_PAIRS:
        if n == nd:
            return dd
    raise KeyError(nd)


def rng(seed=0):
    return np.random.default_rng(seed)


def rand_np(shape, dtype, r, kind="normal"):
    """Random numpy array of `shape` with the numpy dtype matching dyn dtype `dtype`.

    kind: 'normal' (floats N(0, 2^2), ints in [-9, 9]), 'positive' (floats in
    [0.1, 5), ints in [1, 9]), 'nonzero' (like normal but no zeros), 'unit'
    (floats in [-0.95, 0.95]).
    """
    nd = np_dtype(dtype)
    shape = tuple(shape)
    if nd == np.bool_:
        return np.asarray(r.random(shape) < 0.5)
    if nd.kind == "f":
        # np.asarray: numpy's generators return a scalar, not a 0-d array, for shape ()
        if kind == "positive":
            a = np.asarray(r.uniform(0.1, 5.0, shape))
        elif kind == "unit":
            a = np.asarray(r.uniform(-0.95, 0.95, shape))
        else:
            a = np.asarray(r.standard_normal(shape) * 2.0)
            if kind == "nonzero":
                a[np.abs(a) < 1e-3] = 0.5
        return a.astype(nd)
    if kind == "positive":
        return np.asarray(r.integers(1, 10, shape)).astype(nd)
    a = np.asarray(r.integers(-9, 10, shape)).astype(nd)
    if kind == "nonzero":
        a[a == 0] = 3
    return a


def to_dyn(a, layout="contig"):
    """dyn tensor with the values of numpy array `a`, in the given memory layout.

    'transposed': built from the reversed-axes array and permuted back (a view);
    'sliced': every other element of a bigger tensor, offset by one (a view).
    Layouts that make no sense for the rank fall back to simpler ones.
    """
    a = np.asarray(a)
    nd = a.ndim
    if layout == "transposed" and nd >= 2:
        base = dyn.tensor(np.array(a.transpose(), order="C"))
        t = base.permute(*reversed(range(nd)))
    elif layout in ("sliced", "transposed") and nd >= 1:
        big = np.zeros(tuple(2 * s + 1 for s in a.shape), dtype=a.dtype)
        sl = tuple(slice(1, 1 + 2 * s, 2) for s in a.shape)
        big[sl] = a
        base = dyn.tensor(big)
        t = base[sl]
    else:
        t = dyn.tensor(np.array(a, order="C"))  # not ascontiguousarray: it makes 0-d 1-d
    assert tuple(t.shape) == a.shape, (layout, tuple(t.shape), a.shape)
    return t


def pair(shape, dtype, r, layout="contig", kind="normal"):
    a = rand_np(shape, dtype, r, kind)
    return to_dyn(a, layout), a


def pairs(r, dtypes, shapes):
    """(dtype, shape, layout, dyn tensor, numpy array) for every dtype, shape and layout (nested
    in that order), with new values from pair() for each."""
    for dt in dtypes:
        for shape in shapes:
            for layout in LAYOUTS:
                yield (dt, shape, layout) + pair(shape, dt, r, layout)


def in_layouts(a):
    """(layout, dyn tensor) for each layout, all with the values of numpy array `a`."""
    for layout in LAYOUTS:
        yield layout, to_dyn(a, layout)


def tol_for(nd):
    nd = np.dtype(nd)
    if nd == np.float32:
        return 1e-6, 1e-9
    return 1e-12, 1e-15


def softmax_ref(x, dim):
    x = x.astype(np.float64)
    m = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax_ref(x, dim):
    """In float64, whatever x's dtype; max-shifted so large logits stay finite."""
    x = x.astype(np.float64)
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


def to_np(t):
    """Values of a dyn tensor as a numpy array, through tolist() (layout independent)."""
    nd = np_dtype(t.dtype)
    return np.array(t.tolist(), dtype=nd).reshape(tuple(t.shape))


def assert_matches(t, ref, exact=None, rtol=None, atol=None, msg=""):
    """Check that dyn tensor `t` has ref's dtype (mapped), shape and values.

    exact=None means exact for integer/bool results and tolerance for floats;
    pass exact=True for float ops that are correctly rounded (+ - * /).
    NaN positions must be equal.
    """
    ref = np.asarray(ref)
    if not isinstance(t, dyn.Tensor):
        raise AssertionError(f"{msg}: expected a dyn.Tensor, got {type(t)!r}")
    want = dyn_dtype(ref.dtype)
    if not (t.dtype == want):
        raise AssertionError(f"{msg}: dtype {t.dtype} != expected {want}")
    if tuple(t.shape) != ref.shape:
        raise AssertionError(f"{msg}: shape {tuple(t.shape)} != expected {ref.shape}")
    got = to_np(t)
    if exact is None:
        exact = ref.dtype.kind in "biu"
    if exact:
        ok = np.array_equal(got, ref, equal_nan=ref.dtype.kind == "f")
        if not ok:
            bad = np.argwhere(~((got == ref) | (np.isnan(got) & np.isnan(ref)))
                              if ref.dtype.kind == "f" else got != ref)
            i = tuple(bad[0]) if len(bad) else ()
            raise AssertionError(
                f"{msg}: values differ at {len(bad)} positions; first {i}: "
                f"got {got[i]!r}, expected {ref[i]!r}")
        return
    r0, a0 = tol_for(ref.dtype)
    np.testing.assert_allclose(got, ref, rtol=r0 if rtol is None else rtol,
                               atol=a0 if atol is None else atol,
                               equal_nan=True, err_msg=msg)

