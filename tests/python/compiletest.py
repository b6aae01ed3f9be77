"""Shared helpers for the compile-region scenario tests (test_compile_*.py).

Bitwise comparison of dyn tensors (NaN-safe: raw bytes plus shape and dtype), flattening of
nested results, source-line lookup so tests never hard-code line numbers, and programs that more
than one test file compiles.
"""
import inspect
import os

import numpy as np

import dyn


def raw_bytes(t):
    """The bytes of a dyn tensor's values in row-major order (any layout, 0-d included)."""
    t = t.detach()
    if t.dtype == dyn.bfloat16:  # numpy has no bfloat16; widening to float32 keeps every bit
        t = t.float()
    a = np.ascontiguousarray(t.numpy())
    return a.reshape(-1).view(np.uint8)


def same_bits(a, b):
    """True if two dyn tensors have the same shape, dtype and bytes."""
    return (tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
            and np.array_equal(raw_bytes(a), raw_bytes(b)))


def flatten(obj, prefix="out"):
    """[(path, leaf)] for tensors and Python scalars/strings inside tuples, lists and dicts."""
    if isinstance(obj, (tuple, list)):
        out = [(f"{prefix}:len", len(obj))]
        for i, x in enumerate(obj):
            out += flatten(x, f"{prefix}[{i}]")
        return out
    if isinstance(obj, dict):
        out = [(f"{prefix}:keys", sorted(obj))]
        for k in sorted(obj):
            out += flatten(obj[k], f"{prefix}[{k!r}]")
        return out
    return [(prefix, obj)]


def describe(t):
    return f"{t.dtype} {tuple(t.shape)} {t.detach().tolist()!r}"


def assert_same(tc, want, got, msg=""):
    """Bitwise equality of two (nested) results: tensors by bytes, numpy arrays by bytes,
    floats by their bit pattern (NaN-safe), everything else by ==."""
    fw, fg = flatten(want), flatten(got)
    tc.assertEqual([p for p, _ in fw], [p for p, _ in fg], f"{msg}: structure differs")
    for (path, w), (_, g) in zip(fw, fg):
        where = f"{msg}: {path}"
        if isinstance(w, dyn.Tensor):
            tc.assertIsInstance(g, dyn.Tensor, where)
            if not same_bits(w, g):
                tc.fail(f"{where}: not bitwise equal\n  want {describe(w)}\n  got  {describe(g)}")
        elif isinstance(w, np.ndarray):
            tc.assertIsInstance(g, np.ndarray, where)
            tc.assertEqual((w.shape, w.dtype), (g.shape, g.dtype), where)
            tc.assertTrue(np.array_equal(np.ascontiguousarray(w).reshape(-1).view(np.uint8),
                                         np.ascontiguousarray(g).reshape(-1).view(np.uint8)),
                          f"{where}: arrays differ\n  want {w!r}\n  got  {g!r}")
        elif isinstance(w, float):
            tc.assertIsInstance(g, float, where)
            tc.assertEqual(np.float64(w).view(np.uint64), np.float64(g).view(np.uint64),
                           f"{where}: {w!r} != {g!r}")
        else:
            tc.assertEqual(type(w), type(g), where)
            tc.assertEqual(w, g, where)


def copy_tensor(t):
    """An independent tensor with the same values, dtype and shape."""
    return dyn.tensor(np.array(t.detach().numpy(), copy=True))


def line_of(fn, marker):
    """Absolute line number of the only line of fn's source that contains `marker`."""
    fn = getattr(fn, "__wrapped__", fn)
    if isinstance(fn, dyn.nn.Module):
        fn = type(fn).forward
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, text in enumerate(lines) if marker in text]
    if len(hits) != 1:
        raise AssertionError(f"marker {marker!r} found {len(hits)} times in {fn.__name__}")
    return hits[0]


def source_at(fn, line):
    """The stripped source text of one absolute line of fn's file."""
    fn = getattr(fn, "__wrapped__", fn)
    lines, start = inspect.getsourcelines(fn)
    return lines[line - start].strip()


def file_of(fn):
    """The file fn's source is in (where the engine must place fn's ops, breaks and guards)."""
    return inspect.getsourcefile(getattr(fn, "__wrapped__", fn))


def same_file(a, b):
    return a is not None and b is not None and os.path.abspath(a) == os.path.abspath(b)


def break_events(fn=None):
    return dyn.debug.events("graph_break", fn)


def ops_of(fn=None):
    return [g.ops for g in dyn.debug.graphs(fn)]


def randt(*shape, seed=0, dtype=np.float32):
    """A dyn tensor of standard-normal values, reproducible from seed."""
    return dyn.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def bool_branch(x):
    """A Python `if` on a tensor: a data-dependent graph break, and a guard on the path taken."""
    y = x * 2.0
    if y.sum() > 0:  # BREAK
        return y + 1.0
    return y - 1.0
