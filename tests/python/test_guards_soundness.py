"""Soundness of the cache: a cached trace never serves a call it does not fit.

Each scenario is one compiled function and a set of argument variants (shapes, dtypes, layouts,
Python scalars, data that flips Python branches, aliasing, in-place on arguments and views, random
ops with manual_seed). A seeded random sequence of calls mixes the variants; every call runs the
uncompiled function on identical copies of the arguments first, and the compiled result, the
mutated arguments (and their bases), what Python observed inside the function and the random
generator's state afterwards must all be bitwise equal. The cache must also stay small and
useful: the number of entries never exceeds the number of distinct situations seen, and a
situation seen before is a cache hit (no compile, no recompile).

Every scenario runs in its own dynrepl child process so that an engine crash fails one test.
"""
import os
import random
import subprocess
import sys
import unittest

import numpy as np

import dyn
from compiletest import assert_same

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("DYNREPL") or sys.executable
CALLS = 48
OBS = []  # what Python observed inside the function (bool and .item() values), in order


def data(rng, *shape, dtype=np.float32, sign=0):
    a = rng.standard_normal(shape).astype(dtype)
    if sign:
        a = np.abs(a) * sign + np.float32(0.25) * sign
    return dyn.tensor(a)


# ---- scenario functions ----

def shapes(x, w):
    y = (x * 1.5 + w).relu()
    return y.sum(-1), y.mean(), y.t() if y.ndim == 2 else y


def scalars(x, s, n, lo):
    return (x * s + n).clamp(lo, 3.0), x - s


def special_floats(x, s):
    return x * s, x + s


def branches(x, k):
    y = x * 2.0
    pos = bool(y.sum() > 0)
    OBS.append(pos)
    if pos:
        y = y - 1.0
    else:
        y = y.exp()
    m = y.max().item()
    OBS.append(m > k)
    if m > k:
        return y * 0.5
    return y + k


def aliasing(a, b):
    return a + b, a * b.sum(), b - a


def aliasing_across_ops(a, b):
    # every op has at most one operand that is an argument: aliasing shows up between ops
    return a * 2.0 + b, (b * 3.0).sum() * a


def inplace(x, y, s):
    x.add_(s)
    y.mul_(2.0)
    return x * y, (x + y).sum()


def randomness(x, seed, p):
    if seed is not None:
        dyn.manual_seed(seed)
    noise = dyn.randn(x.shape)
    keep = dyn.rand(x.shape) > p
    return dyn.where(keep, x + noise, x * 0.0), noise.sum()


# ---- variants: name -> builder(rng) returning (args, extra tensors to compare after the call) ----

def v_shapes():
    out = {}
    for xs, ws in [((3, 4), (4,)), ((5, 4), (4,)), ((3, 4), (1, 4)), ((3, 4), ())]:
        out[f"x{xs} w{ws}"] = lambda r, xs=xs, ws=ws: ((data(r, *xs), data(r, *ws)), ())
    out["transposed x"] = lambda r: ((data(r, 4, 3).t(), data(r, 4)), ())
    out["f64 x"] = lambda r: ((data(r, 3, 4, dtype=np.float64), data(r, 4)), ())
    out["1-d x"] = lambda r: ((data(r, 4), data(r, 4)), ())
    return out


def v_scalars():
    out = {}
    for s in (0.5, 2.0):
        for n in (1, 2):
            for lo in (-1.0, 0.0):
                out[f"s={s} n={n} lo={lo}"] = lambda r, s=s, n=n, lo=lo: ((data(r, 2, 3), s, n, lo), ())
    out["tensor s"] = lambda r: ((data(r, 2, 3), dyn.tensor(0.5), 1, 0.0), ())
    return out


def v_special():
    vals = {"0.0": 0.0, "-0.0": -0.0, "nan": float("nan"), "inf": float("inf"), "-inf": -float("inf"), "1": 1.0}
    return {k: (lambda r, v=v: ((data(r, 4), v), ())) for k, v in vals.items()}


def v_branches():
    out = {}
    for k in (1.0, 3.0):
        for sign in (1, -1):
            out[f"k={k} sign={sign}"] = lambda r, k=k, sign=sign: ((data(r, 5, sign=sign), k), ())
    out["k=1.0 mixed"] = lambda r: ((data(r, 5), 1.0), ())
    return out


def v_aliasing():
    def pair(kind):
        def build(r):
            p0, p1 = data(r, 6), data(r, 6)
            if kind == "distinct":
                return (p0, p1), ()
            if kind == "same":
                return (p0, p0), ()
            if kind == "swapped":
                return (p1, p0), ()
            base = data(r, 12)
            return (base[:6], base[6:]), (base,)  # distinct views of one storage
        return build
    return {k: pair(k) for k in ("distinct", "same", "swapped", "views")}


def v_inplace():
    out = {}
    for s in (1.0, 0.5):
        out[f"distinct s={s}"] = lambda r, s=s: ((data(r, 4), data(r, 4), s), ())
        out[f"same s={s}"] = lambda r, s=s: ((lambda t: (t, t, s))(data(r, 4)), ())

        def views(r, s=s):
            base = data(r, 8)
            return (base[:4], base[4:], s), (base,)

        def overlap(r, s=s):
            base = data(r, 8)
            return (base[:4], base[2:6], s), (base,)
        out[f"views s={s}"] = views
        out[f"overlapping views s={s}"] = overlap
    return out


def v_random():
    out = {}
    for p in (0.25, 0.75):
        for seed in (None, 7, 11):
            for shape in ((4,), (2, 3)):
                out[f"p={p} seed={seed} shape={shape}"] = \
                    lambda r, p=p, seed=seed, shape=shape: ((data(r, *shape), seed, p), ())
    return out


SCENARIOS = {
    "shapes": (shapes, v_shapes, lambda name, obs: name),
    "scalars": (scalars, v_scalars, lambda name, obs: name),
    "special_floats": (special_floats, v_special, lambda name, obs: name),
    "branches": (branches, v_branches, lambda name, obs: (name.split()[0], tuple(obs))),
    # which tensors are the same object is what matters, not which one comes first
    "aliasing": (aliasing, v_aliasing, lambda name, obs: "same" if name == "same" else "distinct"),
    "aliasing_across_ops": (aliasing_across_ops, v_aliasing,
                            lambda name, obs: "same" if name == "same" else "distinct"),
    "inplace": (inplace, v_inplace, lambda name, obs: name),
    # manual_seed inside the function is not an op: the seed does not change the trace
    "randomness": (randomness, v_random, lambda name, obs: (name.split()[0], "seed=None" in name, name.split()[2])),
}


def counts():
    c = dyn.debug.counters()
    return {k: c[k] for k in ("calls", "cache_hits", "compiles", "recompiles", "fallbacks")}


def run_scenario(name, calls=CALLS, seed=1234):
    """Runs the call sequence of one scenario; raises AssertionError at the first unsound call."""
    tc = unittest.TestCase()
    tc.maxDiff = None
    fn, variants_of, situation_of = SCENARIOS[name]
    variants = variants_of()
    names = sorted(variants)
    dyn.debug.reset()
    cf = dyn.compile(fn, cache_limit=64)
    rng = random.Random(seed)
    seen = set()
    history = []
    for call in range(1, calls + 1):
        vname = names[rng.randrange(len(names))] if call > 2 else names[0]  # call 2 repeats call 1
        data_seed, gen_seed = rng.randrange(1 << 30), rng.randrange(1 << 30)
        eager_args, eager_extra = variants[vname](np.random.default_rng(data_seed))
        comp_args, comp_extra = variants[vname](np.random.default_rng(data_seed))
        OBS.clear()
        dyn.manual_seed(gen_seed)
        want = fn(*eager_args)
        want_next = dyn.rand(3)
        want_obs = list(OBS)
        situation = situation_of(vname, want_obs)
        history.append(f"{call}: {vname} -> {situation}")
        print(history[-1], flush=True)  # a child that crashes still shows how far it got
        where = f"{name}, call {call}, variant {vname!r}\n  history:\n    " + "\n    ".join(history[-8:])
        OBS.clear()
        before = counts()
        dyn.manual_seed(gen_seed)
        got = cf(*comp_args)
        got_next = dyn.rand(3)
        after = counts()
        assert_same(tc, want, got, f"result of {where}")
        assert_same(tc, (eager_args, eager_extra), (comp_args, comp_extra), f"arguments after {where}")
        tc.assertEqual(want_obs, OBS, f"what Python observed, {where}")
        assert_same(tc, want_next, got_next, f"random generator state after {where}")
        tc.assertEqual(after["calls"], before["calls"] + 1, where)
        if situation in seen:
            tc.assertEqual((after["compiles"], after["recompiles"], after["cache_hits"]),
                           (before["compiles"], before["recompiles"], before["cache_hits"] + 1),
                           f"a situation seen before must be a cache hit: {where}")
        seen.add(situation)
        entries = len(dyn.debug.guards(cf))
        tc.assertLessEqual(entries, len(seen), f"{entries} cache entries for {len(seen)} situations: {where}")
    tc.assertEqual(counts()["fallbacks"], 0)
    tc.assertGreaterEqual(len(seen), 2, f"{name}: the sequence must mix situations")
    return len(seen), len(dyn.debug.guards(cf))


def run_isolated(tc, scenario):
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import test_guards_soundness as m; "
            f"print(m.run_scenario({scenario!r}))")
    p = subprocess.run([BIN, "--batch", "-c", code], capture_output=True, text=True, timeout=120)
    how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
    tc.assertEqual(p.returncode, 0, f"scenario {scenario!r} in a child process: {how}\n{p.stdout[-1500:]}\n"
                                    f"{p.stderr[-4000:]}")


class TestSoundness(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_shapes_dtypes_layouts(self):
        run_isolated(self, "shapes")

    def test_python_scalars(self):
        run_isolated(self, "scalars")

    def test_special_float_constants(self):
        # 0.0 / -0.0 differ in sign bits of the results; nan must still be one situation
        run_isolated(self, "special_floats")

    def test_branches_on_data(self):
        run_isolated(self, "branches")

    def test_aliasing(self):
        run_isolated(self, "aliasing")

    def test_aliasing_across_ops(self):
        run_isolated(self, "aliasing_across_ops")

    def test_inplace_on_arguments_and_views(self):
        run_isolated(self, "inplace")

    def test_random_ops_with_manual_seed(self):
        run_isolated(self, "randomness")

    def test_every_scenario_has_enough_calls_and_variants(self):
        self.assertGreaterEqual(CALLS, 40)
        for name, (_, variants_of, _) in SCENARIOS.items():
            self.assertGreaterEqual(len(variants_of()), 4, name)


if __name__ == "__main__":
    unittest.main()
