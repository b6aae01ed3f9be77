"""Tier 2 (trace once, dyn.compile(lift=True)): a lifted entry serves calls without running the
body, and every change of Python state the body read sends the call back to tier 1 (never a stale
result). Each test compares against the plain function, call by call, in verify mode as well."""
import os
import unittest

import dyn
import dyn.nn as nn


# DYN_VERIFY_LIFT=1 (the suite in verify mode) makes every function verify: the body serves calls.
FORCED = os.environ.get("DYN_VERIFY_LIFT", "0") not in ("", "0")


def same(a, b):
    if isinstance(a, dyn.Tensor):
        return isinstance(b, dyn.Tensor) and a.dtype == b.dtype and list(a.shape) == list(b.shape) and \
            a.numpy().tobytes() == b.numpy().tobytes()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class Base(unittest.TestCase):
    def check(self, fn, calls, **kw):
        """Calls the compiled fn with each (args, before) where before() changes Python state first;
        every result must equal the plain function's: once served by lifted entries, and once in
        verify mode (the body serves each call and the lifted result is compared with it)."""
        forced = FORCED
        for verify in (False, True):
            cf = dyn.compile(fn, lift=True, verify=verify, **kw)
            for i, (args, before) in enumerate(calls):
                if before:
                    before()
                want = fn(*args)
                got = cf(*args)
                self.assertTrue(same(got, want), f"call {i}: {got} vs {want}")
            if verify or forced:
                self.assertEqual(cf._state.lifted_hits, 0)  # verify mode counts as tier 1 does
                self.assertGreater(cf._verified, 0, cf.why_python())
            else:
                self.assertGreater(cf._state.lifted_hits, 0, cf.why_python())
        return cf


X = dyn.randn(3, 4)
W = dyn.randn(4, 4)


class TestLifted(Base):
    def test_hits_skip_the_body(self):
        runs = []

        def f(x, w):
            return (x @ w).relu() * 0.5 + x

        cf = dyn.compile(f, lift=True)
        for _ in range(5):
            r = cf(X, W)
        self.assertTrue(same(r, f(X, W)))
        # the first call records, the second (a replay) is analyzed, the others skip the body
        self.assertEqual(cf._state.lifted_hits, 0 if FORCED else 3)
        self.assertEqual(cf.why_python(), [])
        del runs

    def test_int_argument_guard(self):
        def f(x, n):
            for _ in range(n):
                x = x * 2.0
            return x

        cf = self.check(f, [((X, 2), None), ((X, 2), None), ((X, 3), None), ((X, 2), None), ((X, 3), None)])
        self.assertGreaterEqual(cf._verified, 2)
        lines = [t for lift in cf._lifts for t, _ in lift.guard_lines()]
        self.assertTrue(any("n == 2" in t for t in lines), lines)

    def test_global_changes(self):
        g = {"scale": 2}

        def f(x):
            return x * g["scale"]

        self.check(f, [((X,), None), ((X,), None), ((X,), lambda: g.update(scale=3)), ((X,), None)])

    def test_attribute_and_training_flag(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.k = 1

            def forward(self, x):
                y = self.fc(x)
                if self.training:
                    y = y + self.k
                return y

        m = M()
        with dyn.no_grad():
            self.check(m, [((X,), None), ((X,), None), ((X,), lambda: setattr(m, "k", 5)), ((X,), None),
                           ((X,), m.eval), ((X,), None), ((X,), m.train)])

    def test_list_length_and_swapped_submodule(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).tanh()
                return x

        m = M()
        with dyn.no_grad():
            self.check(m, [((X,), None), ((X,), None), ((X,), lambda: m.layers.append(nn.Linear(4, 4))),
                           ((X,), None), ((X,), lambda: m.layers.__setitem__(0, nn.Linear(4, 4))), ((X,), None)])

    def test_parameter_values_are_read_at_each_call(self):
        lin = nn.Linear(4, 4)
        with dyn.no_grad():
            self.check(lin, [((X,), None), ((X,), None), ((X,), lambda: lin.weight.mul_(2.0)), ((X,), None),
                             ((X,), lambda: setattr(lin, "weight", nn.Parameter(dyn.randn(4, 4)))), ((X,), None)])

    def test_closure_default_and_monkey_patch(self):
        box = [1.5]
        k = 2

        def helper(x):
            return x + 1

        def f(x, m=3):
            return helper(x) * box[0] + m + k

        calls = [((X,), None), ((X,), None), ((X,), lambda: box.__setitem__(0, 2.5)), ((X,), None),
                 ((X,), lambda: setattr(f, "__defaults__", (7,))), ((X,), None)]
        self.check(f, calls)
        g = globals()
        g["_lift_helper"] = lambda x: x + 1

        def h(x):
            return _lift_helper(x) * 2  # noqa: F821 - a global patched between calls

        self.check(h, [((X,), None), ((X,), None), ((X,), None),
                       ((X,), lambda: g.update(_lift_helper=lambda x: x - 1)), ((X,), None), ((X,), None)])

    def test_hooks_added_later(self):
        lin = nn.Linear(4, 4)
        with dyn.no_grad():
            self.check(lin, [((X,), None), ((X,), None),
                             ((X,), lambda: lin.register_forward_hook(lambda mod, a, out: out * 2)), ((X,), None)])

    def test_floats_are_read_at_each_call(self):
        # As in tier 1, a float an op reads is an input of the graph: an lr schedule keeps one lifted
        # entry; an int is baked in and guarded.
        sched = {"lr": 0.1}

        def f(x, scale):
            return (x * scale).tanh() + sched["lr"] * 0.5

        calls = [((X, 0.5), None), ((X, 0.7), lambda: sched.update(lr=0.2)), ((X, -0.0), None),
                 ((X, 0.9), lambda: sched.update(lr=0.3))]
        cf = self.check(f, calls)
        self.assertEqual(cf._state.entries, 1)
        lines = [t for lift in cf._lifts for t, _ in lift.guard_lines()]
        self.assertTrue(any(t.startswith("scale is a float read at each call") for t in lines), lines)
        cf2 = dyn.compile(f, lift=True)
        cf2(X, 0.5)
        cf2(X, 2)  # an int: another entry
        self.assertEqual(cf2._state.entries, 2)

    def test_returns_python_values_and_containers(self):
        def f(x, n):
            return {"y": x + n, "n": n, "pair": (x * 2, [n, n + 1])}

        self.check(f, [((X, 1), None), ((X, 1), None), ((X, 1), None), ((X, 2), None), ((X, 2), None),
                       ((X, 2), None)])


class TestStaysOnTier1(Base):
    def reason(self, fn, *args):
        cf = dyn.compile(fn, lift=True)
        for _ in range(3):
            cf(*args)
        self.assertEqual(cf._state.lifted_hits, 0)
        why = cf.why_python()
        self.assertEqual(len(why), 1, why)
        return why[0][1], why[0][2]

    def test_print(self):
        def f(x):
            print("step", end="")
            return x + 1

        reason, where = self.reason(f, X)
        self.assertIn("print", reason)
        self.assertIn("test_lift.py", where)

    def test_store_to_outside_object(self):
        class C:
            n = 0
        c = C()

        def f(x):
            c.n = c.n + 1
            return x + 1

        reason, _ = self.reason(f, X)
        self.assertIn("stores `.n`", reason)

    def test_graph_break(self):
        def f(x):
            if x.sum().item() > 0:
                return x + 1
            return x - 1

        reason, _ = self.reason(f, X)
        self.assertIn("item", reason)

    def test_result_requires_grad(self):
        lin = nn.Linear(4, 4)
        reason, _ = self.reason(lin, X)
        self.assertIn("requires grad", reason)

    def test_random_ops(self):
        def f(x):
            return x + dyn.rand(3, 4)

        reason, _ = self.reason(f, X)
        self.assertIn("random", reason)

    def test_kill_switch(self):
        cf = dyn.compile(lambda x: x + 1, lift=False)
        for _ in range(3):
            cf(X)
        self.assertEqual(cf._state.lifted_hits, 0)
        self.assertEqual(cf.why_python(), [])


if __name__ == "__main__":
    unittest.main()
