"""Edge cases of guards and the cache (issue: "Bad input and edge cases").

Different numbers of arguments, keyword arguments, tensors nested in lists/tuples/dicts, a tensor
argument replaced by a Python number, the same tensor passed twice, a module parameter replaced
by one of another shape, a graph break whose branch flips, and exceptions during a replayed call.
Each is served correctly (every result bitwise equal to eager mode, never a stale graph), a
repeated situation is a cache hit, and every recompile is explained. Scenarios that can crash the
engine run in a child dynrepl process so that one crash fails one test only.
"""
import os
import subprocess
import sys
import unittest

import dyn
from compiletest import assert_same, copy_tensor, line_of, randt, same_file

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("DYNREPL") or sys.executable


def counts():
    c = dyn.debug.counters()
    return {k: c[k] for k in ("calls", "cache_hits", "compiles", "recompiles", "fallbacks")}


def failures(cf):
    """[(guard, what, expected, actual, line)] of every recompile, in order."""
    return [[(f["guard"], f["what"], f["expected"], f["actual"], f["line"]) for f in e["failures"]]
            for e in dyn.debug.events("recompile", cf)]


def run_isolated(tc, scenario):
    code = f"import sys; sys.path.insert(0, {HERE!r}); import test_guards_edge as m; m.{scenario}()"
    p = subprocess.run([BIN, "--batch", "-c", code], capture_output=True, text=True, timeout=60)
    how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
    tc.assertEqual(p.returncode, 0, f"{scenario} in a child process: {how}\n{p.stdout}\n{p.stderr[-3000:]}")


def serve(tc, fn, cf, calls, recompiles):
    """Runs every (args, kwargs) builder eagerly and compiled; asserts bitwise equality and the count."""
    for i, make in enumerate(calls, 1):
        a, k = make()
        b, l = make()
        assert_same(tc, fn(*a, **k), cf(*b, **l), f"call {i}")
        assert_same(tc, (a, k), (b, l), f"arguments after call {i}")
    tc.assertEqual(counts()["recompiles"], recompiles, failures(cf))
    tc.assertLessEqual(len(dyn.debug.guards(cf)), recompiles + 1)


class Base(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()


def varargs(x, *rest):
    y = x * 2.0
    for r in rest:
        y = y + r  # REST
    return y


def keywords(x, *, scale=1.0, bias=None):
    y = x * scale  # SCALE
    if bias is not None:
        y = y + bias  # BIAS
    return y


def nested(d):
    return d["x"] * 2.0 + d["ys"][0] - d["ys"][1][0]  # NESTED


def times(x, y):
    return x * y  # TIMES


def add_pair(a, b):
    return a + b  # ONE_OP


def add_then_read(a, b):
    a.add_(1.0)
    return b * 2.0  # READ_B


A, B, C = randt(3, seed=1), randt(3, seed=2), randt(3, seed=3)


class TestArguments(Base):
    def test_different_numbers_of_arguments(self):
        cf = dyn.compile(varargs)
        seq = [(A,), (A, B), (A, B, C), (A,), (A, C), (A, B, C), (A, C, B)]
        serve(self, varargs, cf, [lambda s=s: (s, {}) for s in seq], recompiles=2)
        self.assertEqual(counts()["cache_hits"], 4)
        (f1,), (f2a, f2b) = failures(cf)
        line = line_of(varargs, "# REST")
        self.assertEqual((f1[0], f1[2], f1[3], f1[4]), ("trace_end", "return", "add", line))
        self.assertEqual((f2a[0], f2b[0]), ("trace_end", "trace_end"))

    def test_keyword_arguments(self):
        cf = dyn.compile(keywords)
        calls = [((A,), {}), ((A,), {"scale": 1.0}), ((A,), {"bias": B, "scale": 1.0}),
                 ((A,), {"scale": 1.0, "bias": C}), ((A,), {"scale": 2.0}), ((A,), {"bias": randt(1)}),
                 ((A,), {}), ((A,), {"scale": 2.0}), ((A,), {"bias": B})]
        # scale is a float: a graph input, read at each call; only bias changes what runs
        serve(self, keywords, cf, [lambda c=c: c for c in calls], recompiles=2)
        self.assertEqual(counts()["cache_hits"], 6)
        f = failures(cf)
        self.assertEqual(f[0][0][:1] + f[0][0][2:], ("trace_end", "return", "add", line_of(keywords, "# BIAS")))
        (bias_failure,) = [x for x in dyn.debug.events("recompile", cf)[1]["failures"] if x["entry"] == 1]
        self.assertEqual((bias_failure["guard"], bias_failure["expected"], bias_failure["actual"]),
                         ("tensor_input", "3", "1"))
        self.assertIn("'bias'", bias_failure["what"])

    def test_tensors_nested_in_containers(self):
        cf = dyn.compile(nested)

        def d(x, y0, y1):
            return ({"x": x, "ys": [y0, (y1,)]},), {}
        calls = [lambda: d(A, B, C), lambda: d(C, A, B), lambda: d(A, A, C), lambda: d(B, C, A),
                 lambda: d(A, randt(2, 3), randt(3)), lambda: d(A, A, C)]
        serve(self, nested, cf, calls, recompiles=2)
        (f1,), f2 = failures(cf)
        line = line_of(nested, "# NESTED")
        self.assertEqual((f1[0], f1[2], f1[3], f1[4]), ("aliasing", "input 'd['ys'][0]'", "input 'd['x']'", line))
        self.assertEqual(f2[0][0], "tensor_input")
        self.assertIn("d['ys'][0]", f2[0][1])

    def test_tensor_argument_replaced_by_a_number(self):
        cf = dyn.compile(times)
        calls = [(A, B), (A, 2.0), (A, C), (A, 2.0), (A, dyn.tensor(2.0)), (A, 2.0), (A, B)]
        serve(self, times, cf, [lambda c=c: (c, {}) for c in calls], recompiles=2)
        self.assertEqual(counts()["cache_hits"], 4)
        for f in [f for e in failures(cf) for f in e]:
            self.assertEqual(f[4], line_of(times, "# TIMES"))
            # the explanation shows what differs (a tensor operand vs a Python number), not only where
            self.assertNotEqual(f[2].split(" at ")[0], f[3].split(" at ")[0], f"expected and actual read the same: {f}")


def scenario_same_tensor_twice_in_one_op(first, second):
    tc = unittest.TestCase()
    cf = dyn.compile(add_pair)
    for call, args in enumerate([first, second, first, second], 1):
        assert_same(tc, add_pair(*args), cf(*args), f"call {call} {'same' if args[0] is args[1] else 'distinct'}")
    tc.assertEqual(counts()["recompiles"], 1)
    (f,) = failures(cf)[0]
    tc.assertEqual((f[0], f[4]), ("aliasing", line_of(add_pair, "# ONE_OP")))


def scenario_distinct_then_same():
    scenario_same_tensor_twice_in_one_op((A, B), (A, A))


def scenario_same_then_distinct():
    scenario_same_tensor_twice_in_one_op((A, A), (A, B))


class TestSameTensorTwice(Base):
    def test_distinct_then_same_in_one_op(self):
        run_isolated(self, "scenario_distinct_then_same")

    def test_same_then_distinct_in_one_op(self):
        run_isolated(self, "scenario_same_then_distinct")

    def test_in_place_write_seen_through_the_other_argument(self):
        cf = dyn.compile(add_then_read)

        def args(same):
            x = copy_tensor(A)
            return ((x, x) if same else (x, copy_tensor(B))), {}
        serve(self, add_then_read, cf, [lambda s=s: args(s) for s in (False, True, False, True)], recompiles=1)
        (f,) = failures(cf)[0]
        self.assertEqual((f[0], f[4]), ("aliasing", line_of(add_then_read, "# READ_B")))


class Net(dyn.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = dyn.nn.Parameter(randt(3, n))

    def forward(self, x):
        return (x @ self.w).relu()  # MATMUL


class TestModuleParameter(Base):
    def test_parameter_replaced_by_another_shape(self):
        net = Net(4)
        cnet = dyn.compile(net)
        x = randt(2, 3, seed=5)
        assert_same(self, net(x), cnet(x), "call 1")
        net.w = dyn.nn.Parameter(randt(3, 5, seed=7))
        assert_same(self, net(x), cnet(x), "call 2: the new parameter, not the traced one")
        net.w = dyn.nn.Parameter(randt(3, 4, seed=8))  # same shape as call 1, new values
        assert_same(self, net(x), cnet(x), "call 3: served by entry 0 with the new values")
        self.assertEqual((counts()["recompiles"], counts()["cache_hits"]), (1, 1))
        (f,) = failures(cnet)[0]
        self.assertEqual((f[0], f[2], f[3], f[4]), ("tensor_input", "4", "5", line_of(net, "# MATMUL")))
        self.assertIn("'cnet.w' (parameter)", f[1])
        ev = dyn.debug.events("recompile", cnet)[0]
        self.assertTrue(same_file(ev["failures"][0]["file"], __file__))


    def test_a_replaced_child_or_parameter_is_read_on_the_next_call(self):
        # A compiled module keeps its parameter list between calls; any change of a child or a
        # parameter anywhere in the tree must show in the next call.
        outer = dyn.nn.Sequential(Net(4))
        c = dyn.compile(outer)
        x = randt(2, 3, seed=5)
        assert_same(self, outer(x), c(x), "call 1")
        outer[0] = Net(4)
        assert_same(self, outer(x), c(x), "call 2: the new child's parameter")
        outer[0]._parameters["w"] = dyn.nn.Parameter(randt(3, 4, seed=9))
        assert_same(self, outer(x), c(x), "call 3: a parameter written into the dict")
        del outer[0]._parameters["w"]
        outer[0].w = dyn.nn.Parameter(randt(3, 4, seed=10))
        assert_same(self, outer(x), c(x), "call 4: removed and registered again")


def flip(x):
    y = x * 2.0
    if y.sum() > 0:  # FLIP
        return y.exp()
    return y.sin()


class TestBranchFlip(Base):
    def test_break_branch_flips_between_calls(self):
        cf = dyn.compile(flip)
        pos, neg = dyn.tensor([1.0, 0.5]), dyn.tensor([-1.0, -0.5])
        serve(self, flip, cf, [lambda t=t: ((copy_tensor(t),), {}) for t in (pos, neg, pos, neg, neg, pos)],
              recompiles=1)
        self.assertEqual(counts()["cache_hits"], 4)
        (f,) = failures(cf)[0]
        self.assertEqual((f[0], f[2], f[3], f[4]), ("branch", "True", "False", line_of(flip, "# FLIP")))
        # the shared prefix (x * 2.0, sum, gt) is one segment of both entries: compiled once
        self.assertEqual(counts()["compiles"], 3)


STASH = []


def stash_then_maybe_raise(x, flag, fail):
    y = x * 2.0
    y = y + 1.0 if flag else y - 1.0
    z = y * 3.0
    STASH.append(z)
    if fail:
        raise ValueError("boom")
    return z


def mutate_then_maybe_raise(x, fail):
    x.add_(1.0)
    if fail:
        raise ValueError("boom")
    return x * 2.0


def shape_error(x, y):
    return x * 2.0 + y  # SHAPE


def scenario_raise_after_replayed_ops():
    # every op of the failing call matched entry 0 so far: the stashed tensor must hold its value
    tc = unittest.TestCase()
    cf = dyn.compile(stash_then_maybe_raise)
    assert_same(tc, stash_then_maybe_raise(A, True, False), cf(A, True, False), "call 1")
    with tc.assertRaises(ValueError):
        cf(B, True, True)
    stashed = STASH[-1]
    assert_same(tc, stash_then_maybe_raise(B, True, False), stashed, "tensor stashed by the failing call")
    assert_same(tc, stash_then_maybe_raise(C, True, False), cf(C, True, False), "call 3")
    tc.assertEqual(counts()["cache_hits"], 1)


def scenario_raise_after_leaving_one_entry():
    # two entries; the failing call left entry 0 (at y - 1.0) and still matched entry 1
    tc = unittest.TestCase()
    cf = dyn.compile(stash_then_maybe_raise)
    cf(A, True, False)
    cf(A, False, False)
    with tc.assertRaises(ValueError):
        cf(B, False, True)
    stashed = STASH[-1]
    assert_same(tc, stash_then_maybe_raise(B, False, False), stashed, "tensor stashed by the failing call")
    for flag in (True, False):
        assert_same(tc, stash_then_maybe_raise(C, flag, False), cf(C, flag, False), f"flag={flag}")
    tc.assertEqual((counts()["recompiles"], len(dyn.debug.guards(cf))), (1, 2))


def scenario_mutation_before_raise():
    tc = unittest.TestCase()
    cf = dyn.compile(mutate_then_maybe_raise)
    cf(copy_tensor(A), False)
    x, want = copy_tensor(B), copy_tensor(B)
    for t in (x, want):
        try:
            (cf if t is x else mutate_then_maybe_raise)(t, True)
        except ValueError:
            pass
    assert_same(tc, want, x, "argument mutated before the exception, as in eager mode")
    y = copy_tensor(C)
    assert_same(tc, mutate_then_maybe_raise(copy_tensor(C), False), cf(y, False), "next call")
    tc.assertEqual(counts()["cache_hits"], 1)


class TestExceptions(Base):
    def test_raise_after_replayed_ops(self):
        run_isolated(self, "scenario_raise_after_replayed_ops")

    def test_raise_after_leaving_one_entry(self):
        run_isolated(self, "scenario_raise_after_leaving_one_entry")

    def test_argument_mutated_before_raise(self):
        run_isolated(self, "scenario_mutation_before_raise")

    def test_op_error_after_a_guard_failure(self):
        cf = dyn.compile(shape_error)
        assert_same(self, shape_error(A, B), cf(A, B), "call 1")
        with self.assertRaisesRegex(RuntimeError, "must match the size"):
            cf(A, randt(4))
        assert_same(self, shape_error(B, C), cf(B, C), "entry 0 still serves")
        self.assertEqual(counts()["cache_hits"], 1)
        assert_same(self, shape_error(A, randt(1)), cf(A, randt(1)), "a broadcastable y: new entry")
        assert_same(self, shape_error(C, randt(1)), cf(C, randt(1)), "and it serves")
        self.assertEqual(len(dyn.debug.guards(cf)), 2)
        # every recompile event announces an entry that exists, each a different one
        entries = [e["entry"] for e in dyn.debug.events("recompile", cf)]
        self.assertEqual(entries, [1], dyn.debug.events("recompile", cf))
        self.assertEqual(counts()["recompiles"], 1)


if __name__ == "__main__":
    unittest.main()
