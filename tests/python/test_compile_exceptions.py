"""Exceptions inside compile regions and bad input to dyn.compile.

An op error at the user's line, a user exception and KeyboardInterrupt mid-trace propagate unchanged
with the user's traceback; tensors the function stashed before the exception stay usable; the engine
works on the next call. An error found only when a segment runs must never crash the process.
"""
import os
import subprocess
import sys
import textwrap
import traceback
import unittest

import dyn
from compiletest import assert_same, line_of, ops_of, randt as data


def user_frames(err):
    return [(os.path.abspath(f.filename), f.lineno) for f in traceback.extract_tb(err.__traceback__)]


class Base(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def raised(self, exc_type, f, *args):
        """The exception f(*args) raised, with its traceback (assertRaises drops the traceback)."""
        try:
            f(*args)
        except exc_type as e:
            return e
        self.fail(f"{exc_type.__name__} not raised")


class TestFaults(Base):
    """Faults injected in the middle of a compiled call leave the cache consistent: the call raises,
    nothing half-built is served, and every later call equals eager."""

    @staticmethod
    def step(w, x):
        # a break, in-place writes to an argument before and after it, a reduction, a backward
        w.add_(x * 0.5)
        n = w.sum().item()
        y = (w * x).tanh() + n
        w.mul_(0.9)
        leaf = x.detach().requires_grad_()
        (leaf * y).sum().backward()
        return y.softmax(-1), leaf.grad

    def fresh(self):
        dyn.manual_seed(3)
        return dyn.randn(4, 8), dyn.randn(4, 8)

    def test_out_of_memory_at_every_allocation(self):
        _dyn = sys.modules["_dyn"]
        want = self.step(*self.fresh())
        for phase in ("tracing", "replaying"):
            failures = 0
            for k in range(1000):  # the k-th allocation of the call fails, until the call makes fewer
                cf = dyn.compile(self.step, name=f"step_{phase}_{k}")
                if phase == "replaying":
                    cf(*self.fresh())
                args = self.fresh()  # made before arming: the k-th allocation is the call's
                _dyn._fail_allocation_after(k)
                try:
                    cf(*args)
                    raised = False
                except MemoryError:
                    raised = True
                finally:
                    _dyn._fail_allocation_after(-1)
                for _ in range(2):
                    assert_same(self, want, cf(*self.fresh()), f"after a failure at allocation {k} {phase}")
                self.assertFalse([e for e in dyn.debug.events(fn=cf) if e["kind"] == "fallback"])
                if not raised:
                    break
                failures += 1
            # several allocations of the call were each made to fail (5 since a dying copy takes
            # its operand's buffer instead of allocating: the leaf gradient's)
            self.assertGreaterEqual(failures, 4, f"allocations made to fail while {phase}")

    def test_keyboard_interrupt_while_replaying(self):
        calls = [0]

        def f(a):
            y = a * 2.0
            n = y.sum().item()  # a break: the interrupt comes in the second segment
            z = y + n
            calls[0] += 1
            if calls[0] == 3:
                raise KeyboardInterrupt
            return z.exp()

        cf = dyn.compile(f)
        a = data(5)
        want = f(a)
        calls[0] = 0
        cf(a)
        cf(a)  # a cache hit
        with self.assertRaises(KeyboardInterrupt):
            cf(a)  # interrupted on a cache hit, after replaying part of it
        for _ in range(2):
            assert_same(self, want, cf(a), "after the interrupt")
        self.assertEqual(len(dyn.debug.graphs(cf)), 2)  # the same two segments, nothing half-built

    def test_keyboard_interrupt_as_the_region_begins_or_ends(self):
        # CPython raises a pending Ctrl-C right after a C function returns: right after
        # _region_begin entered the region (before __call__ sees True), or right after _region_end
        # left it. Raised there on purpose, whichever way the call goes (record or replay), the
        # region must not stay open: later lines would record into it (a new cache entry).
        _dyn = sys.modules["_dyn"]
        compile_module = sys.modules["dyn._compile"]

        class InterruptAfter:
            def __init__(self, name):
                self.name = name

            def __getattr__(self, attr):
                real = getattr(_dyn, attr)
                if attr != self.name:
                    return real

                def interrupted(*args, **kwargs):
                    real(*args, **kwargs)
                    raise KeyboardInterrupt
                return interrupted

        def f(a, scale):
            return (a * 2.0 * scale).relu()

        a = data(4, 8)
        for where in ("_region_begin", "_region_end"):
            for phase in ("recording", "replaying"):
                dyn.debug.reset()
                cf = dyn.compile(f, name=f"f_{where}_{phase}", lift=False)  # tier 1: the region itself
                if phase == "replaying":
                    cf(a, 1)
                compile_module._dyn = InterruptAfter(where)
                try:
                    with self.assertRaises(KeyboardInterrupt):
                        cf(a, 1)
                finally:
                    compile_module._dyn = _dyn
                what = f"interrupted after {where} while {phase}"
                left_open = _dyn._capture_active()
                if left_open:
                    _dyn._region_abort()  # so that the other tests still run eagerly
                self.assertFalse(left_open, what)
                # the next line, as the REPL's after a Ctrl-C: eager ops, then a call that is a cache hit
                self.assertEqual((dyn.ones(4, 8) * 2.0).sum().item(), 64.0, what)
                assert_same(self, f(a, 1), cf(a, 1), what)
                self.assertEqual(cf._state.entries, 1, what)
                self.assertEqual(len(dyn.debug.graphs(cf)), 1, what)
                self.assertEqual([e["kind"] for e in dyn.debug.events(fn=cf) if e["kind"] == "recompile"], [], what)

    def test_error_in_a_custom_function_backward(self):
        boom = [False]

        class Scale(dyn.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3.0

            @staticmethod
            def backward(ctx, g):
                if boom[0]:
                    raise ValueError("backward failed")
                return g * 3.0

        def f(x):
            leaf = x.detach().requires_grad_()
            Scale.apply(leaf).sum().backward()
            return leaf.grad * 2.0

        cf = dyn.compile(f)
        x = data(4)
        want = f(x)
        assert_same(self, want, cf(x), "first call")
        boom[0] = True
        with self.assertRaisesRegex(ValueError, "backward failed"):
            cf(x)
        boom[0] = False
        for _ in range(2):
            assert_same(self, want, cf(x), "after the failed backward")


class TestExceptions(Base):
    def test_shape_error_at_user_line(self):
        stash = []

        def f(a, b):
            x = a * 2.0
            stash.append(x)
            return x + b  # SHAPE
        eager_msg = str(self.raised(RuntimeError, f, data(3), data(4)))
        err = self.raised(RuntimeError, dyn.compile(f), data(3), data(4))
        self.assertEqual(str(err), eager_msg)
        self.assertIn((os.path.abspath(__file__), line_of(f, "# SHAPE")), user_frames(err))
        self.check_usable_after(stash[-1], data(3) * 2.0)

    def check_usable_after(self, stashed, want):
        """stashed: a tensor the failed call left behind; want: the same value computed eagerly."""
        self.assertIsInstance(stashed, dyn.Tensor)
        assert_same(self, want, stashed, "stashed tensor")
        assert_same(self, want + 1.0, stashed + 1.0, "stashed tensor used afterwards")

        def g(x):
            return (x * 3.0).sum(dim=0)
        cg = dyn.compile(g)
        assert_same(self, g(data(2, 3)), cg(data(2, 3)), "next call")
        self.assertEqual(ops_of(cg), [["mul", "sum"]])

    def test_user_exception(self):
        class Boom(Exception):
            pass
        stash = []

        def f(a):
            x = a + 1.0
            stash.append(x)
            raise Boom("boom")  # RAISE
        err = self.raised(Boom, dyn.compile(f), data(3))
        self.assertEqual(str(err), "boom")
        self.assertIn((os.path.abspath(__file__), line_of(f, "# RAISE")), user_frames(err))
        self.check_usable_after(stash[-1], data(3) + 1.0)

    def test_keyboard_interrupt(self):
        stash = []

        def f(a):
            x = a - 1.0
            stash.append(x)
            raise KeyboardInterrupt  # KBI
        err = self.raised(KeyboardInterrupt, dyn.compile(f), data(3))
        self.assertIn((os.path.abspath(__file__), line_of(f, "# KBI")), user_frames(err))
        self.check_usable_after(stash[-1], data(3) - 1.0)

    def test_exception_after_break_and_mutation(self):
        stash = []

        def f(w):
            w.add_(1.0)
            n = w.sum().item()
            y = w * n
            stash.append(y)
            w.mul_(2.0)
            raise ValueError("late")
        we, wc = data(3), data(3)
        with self.assertRaises(ValueError):
            f(we)
        want_y = stash.pop()
        with self.assertRaises(ValueError):
            dyn.compile(f)(wc)
        assert_same(self, (want_y, we), (stash.pop(), wc), "state after exception")
        self.check_usable_after(data(2) * 1.0, data(2) * 1.0)


    def test_execution_error_never_crashes(self):
        # An op error found only when the segment runs (index out of range in gather). The failed
        # call may lose the stashed tensor's value, but touching it must raise, never crash.
        code = textwrap.dedent("""
            import dyn
            stash = []
            def h(t, i):
                y = t * 2.0
                stash.append(y)
                return y.gather(0, i)
            try:
                dyn.compile(h)(dyn.tensor([1.0, 2.0]), dyn.tensor([5]))
            except IndexError as e:
                print("IndexError", e, flush=True)
            y = stash[0]
            for name, use in [("tolist", lambda t: t.tolist()), ("add", lambda t: (t + 1.0).tolist()),
                              ("repr", repr), ("index", lambda t: t[0].item()), ("sum", lambda t: t.sum().item()),
                              ("numpy", lambda t: t.numpy().tolist())]:
                try:
                    print(name, repr(use(y)), flush=True)
                except RuntimeError:
                    print(name, "RuntimeError", flush=True)
            print(dyn.compile(lambda t: t * 2.0)(dyn.ones(2)).tolist(), flush=True)
        """)
        p = subprocess.run([sys.executable, "--batch", "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "IndexError index 5 is out of bounds for dimension 0 with size 2")
        allowed = {"tolist": "[2.0, 4.0]", "add": "[3.0, 5.0]", "repr": "'tensor([2., 4.])'", "index": "2.0",
                   "sum": "6.0", "numpy": "[2.0, 4.0]"}
        for line, (name, value) in zip(lines[1:], allowed.items()):
            self.assertIn(line, (f"{name} {value}", f"{name} RuntimeError"))
        self.assertEqual(lines[-1], "[2.0, 2.0]")
        self.assertEqual(len(lines), 8, p.stdout)


class TestBadInput(Base):
    def test_non_callable(self):
        for bad in (5, "f", object(), [1, 2]):
            with self.subTest(bad=bad):
                with self.assertRaises(TypeError):
                    dyn.compile(bad)

    def test_generator_function(self):
        def gen(x):
            yield x * 2.0
        with self.assertRaises(TypeError):
            dyn.compile(gen)
        with self.assertRaises(TypeError):
            dyn.compile()(gen)

    def test_bad_backend(self):
        # torch.compile's contract: an unknown backend name raises InvalidBackend (a RuntimeError)
        # at compile time, naming it and the known ones; nothing is compiled or cached.
        import warnings

        from torch._dynamo.exc import InvalidBackend
        import torch._dynamo

        self.assertIs(InvalidBackend, dyn.InvalidBackend)
        self.assertIn("inductor", torch._dynamo.list_backends())
        before = dyn.debug.counters()
        n_graphs = len(dyn.debug.graphs())

        def fn(x):
            return x * 2.0

        for bad in ("xla", "nope", "inductorr", ""):
            with self.subTest(backend=bad), warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                with self.assertRaises(InvalidBackend) as cm:
                    dyn.compile(fn, backend=bad)
                with self.assertRaises(RuntimeError):
                    dyn.compile(backend=bad)(fn)  # the decorator form raises before it is applied
                self.assertEqual(w, [], "raised, not warned")
                msg = str(cm.exception)
                self.assertIn(repr(bad), msg)
                for known in ("default", "eager", "inductor", "openxla"):
                    self.assertIn(known, msg)
                self.assertIn("nothing was compiled", msg)
        self.assertEqual(dyn.debug.counters(), before)
        self.assertEqual(len(dyn.debug.graphs()), n_graphs)
        self.assertTrue(dyn.equal(dyn.compile(fn, backend="eager")(dyn.ones(2)), dyn.full((2,), 2.0)),
                        "a good name after bad ones still compiles")
        self.assertEqual(dyn.compile(fn, backend=None).backend, "default")  # as torch.compile's None
        for torch_name in ("inductor", "openxla", "aot_eager"):
            with self.subTest(backend=torch_name), warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                self.assertEqual(dyn.compile(lambda x: x, backend=torch_name).backend, "default")
                self.assertEqual(w, [])
        with self.assertRaises(TypeError):
            dyn.compile(lambda x: x, fullgraph="yes")

    def test_bad_cache_limit(self):
        for bad in (0, -1, "3", 2.5, True):
            with self.subTest(cache_limit=bad):
                with self.assertRaises(ValueError):
                    dyn.compile(lambda x: x, cache_limit=bad)

    def test_engine_usable_after_bad_input(self):
        with self.assertRaises(TypeError):
            dyn.compile(42)
        cf = dyn.compile(lambda x: x + 1.0, name="after_bad")
        self.assertEqual(cf(dyn.tensor([1.0])).tolist(), [2.0])
        self.assertEqual([g.id for g in dyn.debug.graphs(cf)], [f"{cf.name}[0].0"])


if __name__ == "__main__":
    unittest.main()
