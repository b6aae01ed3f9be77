"""Guards, the cache and recompiles: one scenario per guard kind.

Most scenarios call a compiled function in situation A, A, then B (which a guard of A's entry
rejects), then A B A B. Asserted: exactly one recompile, the failing guard's kind, what, expected,
actual, file and line (marker comments), the hint where one is owed, the same facts in the
guard_failure event, both situations served as cache hits afterwards, every result bitwise equal
to eager mode. (Aliasing inside one op, which can crash the engine, is in test_guards_edge.py.)
"""
import os
import unittest
import warnings

import dyn
from compiletest import assert_same, bool_branch, file_of, line_of, randt, same_file, source_at

KEYS = ("calls", "cache_hits", "compiles", "recompiles", "guard_failures", "fallbacks")
FACTS = ("entry", "guard", "what", "expected", "actual", "hint", "file", "line", "source")


def counts():
    c = dyn.debug.counters()
    return {k: c[k] for k in KEYS}


def only_recompile(tc, cf):
    evs = dyn.debug.events("recompile", cf)
    tc.assertEqual(len(evs), 1, [e["reason"] for e in evs])
    return evs[0]


class Base(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def check_failure(self, f, fn, kind, expected, actual, marker, what=None, hint=None, entry=0):
        self.assertEqual(f["entry"], entry, f)
        self.assertEqual(f["guard"], kind, f["text"])
        self.assertEqual((f["expected"], f["actual"]), (expected, actual), f["text"])
        self.assertIn(what or "", f["what"], f["text"])
        self.assertIn(hint or "", f["hint"], f["text"])
        self.assertIn(f"expected {expected}, actual {actual}", f["text"])
        line = line_of(fn, marker)
        self.assertEqual(f["line"], line, f["text"])
        self.assertTrue(same_file(f["file"], file_of(fn)), f["file"])
        self.assertEqual(f["source"], source_at(fn, line))

    def two_situations(self, fn, make_a, make_b, kind, expected, actual, marker, what=None, hint=None, made=""):
        """Calls A A B A B A B; returns the one failure of the one recompile (call 3, entry 1).
        made: what the recompile made dynamic, as its reason says it."""
        cf = dyn.compile(fn)
        after_b = None
        for call, s in enumerate("AABABAB", 1):
            make = make_a if s == "A" else make_b
            assert_same(self, fn(*make()), cf(*make()), f"call {call} ({s})")
            if call == 3:
                after_b = counts()
        c = counts()
        self.assertEqual(c["calls"], 7)
        self.assertEqual(c["recompiles"], 1)
        self.assertEqual((c["compiles"], c["recompiles"]), (after_b["compiles"], after_b["recompiles"]),
                         "both situations are cache hits after the recompile")
        self.assertEqual(c["cache_hits"], 5)
        self.assertEqual(len(dyn.debug.guards(cf)), 2)
        hits = [(e["entry"], e["count"]) for e in dyn.debug.events("cache_hit", cf)]
        self.assertEqual(hits, [(0, 1), (0, 1), (1, 1), (0, 1), (1, 1)])
        ev = only_recompile(self, cf)
        self.assertEqual(ev["entry"], 1)
        self.assertEqual(ev["reason"], f"call 3 of '{cf.name}': no cache entry served it; new entry {cf.name}[1]"
                         + (f"; {made}" if made else ""))
        self.assertEqual(ev["dynamic"], made)
        (f,) = ev["failures"]
        self.check_failure(f, fn, kind, expected, actual, marker, what, hint)
        (g,) = dyn.debug.events("guard_failure", cf)
        self.assertEqual({k: g[k] for k in FACTS}, {k: f[k] for k in FACTS})
        self.assertEqual(g["reason"], f"{kind}: {f['text']}")
        return f


def scale_relu(x, scale):
    return (x * scale).relu()  # MUL


class TestIssueExample(Base):
    def test_four_calls(self):
        f = dyn.compile(scale_relu)
        dyn.manual_seed(0)
        xs = [dyn.randn(4, 8), dyn.randn(4, 8), dyn.randn(6, 8), dyn.randn(4, 8)]
        for call, (x, s) in enumerate(zip(xs, (2, 2, 2, 3)), 1):
            assert_same(self, scale_relu(x, s), f(x, s), f"call {call}")
        self.assertEqual(counts(), dict(calls=4, cache_hits=1, compiles=3, recompiles=2, guard_failures=3,
                                        fallbacks=0))
        self.assertEqual([(e["entry"], e["count"]) for e in dyn.debug.events("cache_hit", f)], [(0, 1)])
        r1, r2 = dyn.debug.events("recompile", f)
        n = f.name
        self.assertEqual(r1["reason"], f"call 3 of '{n}': no cache entry served it; new entry {n}[1]; "
                                       "x.size(0) became dynamic as s0 (sizes 4 and 6 seen)")
        # compared with f[1], the trace for scale=3 is dynamic in dim 0 too: it stays so, it did
        # not become dynamic at this recompile
        self.assertEqual(r2["reason"], f"call 4 of '{n}': no cache entry served it; new entry {n}[2]; "
                                       f"x.size(0) stays dynamic as s0 (as in {n}[1])")
        self.assertEqual((r2["dynamic"], r2["closest"]), ("", 1))
        self.assertEqual((r1["entry"], r2["entry"]), (1, 2))
        (a,) = r1["failures"]
        self.check_failure(a, scale_relu, "tensor_input", "4", "6", "# MUL",
                           what="tensor 'x' (argument) size mismatch at dim 0", hint="the recompile made dim 0 dynamic")
        b0, b1 = r2["failures"]
        self.check_failure(b0, scale_relu, "constant", "2", "3", "# MUL",
                           what="constant 'scale' (argument) of mul changed", hint="pass it as a tensor")
        self.assertEqual(b0["cause"], f"`scale` changed from 2 to 3 (used at {os.path.basename(__file__)}:"
                                      f"{line_of(scale_relu, '# MUL')})")
        self.assertEqual((r2["cause"]["key"], r2["cause"]["value"], r2["cause"]["first"]), ("`scale`", "3", "2"))
        # entry 1 is dynamic in dim 0 (it takes x of 4 rows): only the int scale stops it
        self.check_failure(b1, scale_relu, "constant", "2", "3", "# MUL", entry=1,
                           what="constant 'scale' (argument) of mul changed")
        self.assertIn(r2["hint"], (b0["hint"], b1["hint"]))
        self.assertTrue(r2["hint"])
        self.assertEqual(len(dyn.debug.events("guard_failure", f)), 3)
        # every situation seen is now served by its entry: five hits of entry 1 coalesce into one event
        for _ in range(5):
            f(dyn.randn(6, 8), 2)
        f(dyn.randn(4, 8), 3)
        f(dyn.randn(4, 8), 2)
        c = counts()
        self.assertEqual((c["compiles"], c["recompiles"], c["cache_hits"]), (3, 2, 8))
        self.assertEqual([(e["entry"], e["count"]) for e in dyn.debug.events("cache_hit", f)],
                         [(0, 1), (1, 5), (2, 1), (0, 1)])
        self.assertTrue(all(dyn.debug.counters()[k] > 0 for k in ("trace_s", "replay_s", "compile_s", "execute_s")))

    def test_guard_listing_of_f0(self):
        f = dyn.compile(scale_relu)
        f(randt(4, 8), 0.5)
        (g,) = dyn.debug.guards(f)
        self.assertEqual([s.split(":")[0] for s in g], ["global_state", "tensor_input", "scalar_input", "op", "op"])
        self.assertIn("mul reads 'scale' (argument), a float read at each call (0.5 when traced)", g[2])
        for i, part in [(0, "float32"), (1, "tensor 'x'"), (1, "[4, 8]"), (1, "requires_grad=False"), (2, "0.5"),
                        (3, "mul"), (4, "relu")]:
            self.assertIn(part, g[i])
        tag = f"# {os.path.basename(__file__)}:{line_of(scale_relu, '# MUL')}"
        for s in g[1:]:
            self.assertIn(tag, s)
        self.assertEqual(dyn.debug.guards(f.name), [g])

        def local(x):
            return x + 1.0
        cl = dyn.compile(local)
        cl(T1)
        self.assertEqual(dyn.debug.guards(local), dyn.debug.guards(cl))
        self.assertEqual(len(dyn.debug.guards(local)), 1)


def plus_one(x):
    return x * 2.0 + 1.0  # X_ENTERS


class TestTensorInput(Base):
    def test_dtype(self):
        self.two_situations(plus_one, lambda: (randt(3),), lambda: (randt(3, dtype="float64"),),
                            "tensor_input", "float32", "float64", "# X_ENTERS", what="tensor 'x' (argument) dtype")

    def test_shape(self):
        self.two_situations(plus_one, lambda: (randt(3, 8),), lambda: (randt(3, 5),), "tensor_input", "8", "5",
                            "# X_ENTERS", what="tensor 'x' (argument) size mismatch at dim 1", hint="dyn.mark_dynamic(x, 1)",
                            made="x.size(1) became dynamic as s0 (sizes 8 and 5 seen)")

    def test_ndim(self):
        f = self.two_situations(plus_one, lambda: (randt(3),), lambda: (randt(3, 1),), "tensor_input",
                                "1 [3]", "2 [3, 1]", "# X_ENTERS", what="number of dimensions")
        self.assertIn("tensor 'x'", f["what"])

    def test_strides_of_a_transposed_input(self):
        self.two_situations(plus_one, lambda: (randt(3, 4),), lambda: (randt(4, 3).t(),), "tensor_input",
                            "[4, 1]", "[1, 3]", "# X_ENTERS", what="strides", hint=".contiguous()")

    def test_requires_grad(self):
        def grad_input():
            t = randt(3)
            t.requires_grad = True
            return (t,)
        self.two_situations(plus_one, lambda: (randt(3),), grad_input, "tensor_input", "False", "True",
                            "# X_ENTERS", what="requires_grad")


def add_scaled(a, b):
    return a * 2.0 + b  # TWO_OPS


T1, T2 = randt(3, seed=1), randt(3, seed=2)


class TestAliasing(Base):
    def test_distinct_then_same_tensor(self):
        f = self.two_situations(add_scaled, lambda: (T1, T2), lambda: (T1, T1), "aliasing", "input 'b'",
                                "input 'a'", "# TWO_OPS")
        self.assertIn("add", f["what"])

    def test_same_tensor_then_distinct(self):
        f = self.two_situations(add_scaled, lambda: (T1, T1), lambda: (T2, T1), "aliasing", "input 'a = b'",
                                "a new input", "# TWO_OPS")
        self.assertIn("add", f["what"])


def exp_or_sin(x, flag):
    if flag:
        return x.exp()  # EXP
    return x.sin()  # SIN


def scale(x, s):
    return x * s  # SCALE


def clamp_it(x, lo, hi):
    return x.clamp(lo, hi)  # CLAMP


class TestOpAndConstant(Base):
    def test_op_sequence_chosen_by_python_flag(self):
        f = self.two_situations(exp_or_sin, lambda: (T1, True), lambda: (T1, False), "op",
                                "exp at " + os.path.basename(__file__) + f":{line_of(exp_or_sin, '# EXP')} "
                                "`return x.exp()  # EXP`", "sin", "# SIN")
        self.assertIn("op 0", f["what"])

    def no_recompile(self, fn, calls):
        """Every call of calls (argument tuples) served by the first entry, bitwise equal to eager."""
        cf = dyn.compile(fn)
        for i, a in enumerate(calls):
            assert_same(self, fn(*a), cf(*a), f"call {i + 1} {a[1:]}")
        c = counts()
        self.assertEqual((c["compiles"], c["recompiles"], c["cache_hits"]), (1, 0, len(calls) - 1))
        return cf

    def test_python_float_is_a_graph_input(self):
        # A float that only enters arithmetic is read at each call: one graph for every value.
        cf = self.no_recompile(scale_relu, [(T1, 0.25), (T1, -3.5), (T1, 1e30), (T1, float("nan")), (T1, 0.25)])
        (g,) = dyn.debug.graphs(cf)
        self.assertEqual([(s["name"], s["kind"], s["op"]) for s in g.scalar_inputs], [("scale", "argument", "mul")])
        self.assertIn("float input 'scale'  (argument; read by %", g.text())

    def test_python_int(self):
        ints = dyn.tensor([3, -4, 5])
        self.two_situations(scale_relu, lambda: (ints, 2), lambda: (ints, 3), "constant", "2", "3", "# MUL",
                            what="constant 'scale' (argument) of mul changed", hint="pass it as a tensor")

    def test_float_clamp_bounds_are_graph_inputs(self):
        self.no_recompile(clamp_it, [(T1, -0.5, 0.5), (T1, -0.5, 0.75), (T1, -0.25, 0.5), (T1, 0.1, 0.2)])

    def test_int_clamp_bound(self):
        ints = dyn.tensor([3, -4, 5])
        self.two_situations(clamp_it, lambda: (ints, -1, 2), lambda: (ints, -1, 3), "constant", "2", "3",
                            "# CLAMP", what="clamp")

    def test_negative_zero_is_read_at_each_call(self):
        # x * 0.0 and x * -0.0 differ in the sign bit of every result; the graph reads the call's value.
        cf = self.no_recompile(scale, [(T1, 0.0), (T1, -0.0), (T1, 0.0)])
        self.assertEqual(str(cf(T1, -0.0).tolist()).count("-0.0"), T1.numel())

    def test_float_changing_to_int_is_a_constant_change(self):
        f = self.two_situations(scale, lambda: (T1, 2.0), lambda: (T1, 2), "constant", "2.0", "2", "# SCALE",
                                what="constant 's' (argument) of mul changed", hint="changed type")
        self.assertIn("int", f["hint"])


def item_branch(x):
    y = x * 2.0
    v = y.sum().item()  # ITEM
    if v > 5:
        return y * 3.0
    return y


def bool_branch_scaled(x, s):
    y = x * 2.0
    if y.sum() > 0:  # BOOL2
        return y + s
    return y - s  # SUB


def loop(x, n):
    for _ in range(n):
        x = x * 2.0  # BODY
    return x


POS, NEG = dyn.tensor([1.0, 2.0]), dyn.tensor([-1.0, -2.0])


class TestBranchAndTraceEnd(Base):
    def test_bool_break_flips(self):
        f = self.two_situations(bool_branch, lambda: (POS,), lambda: (NEG,), "branch", "True", "False", "# BREAK",
                                hint="dyn.where")
        self.assertIn("graph break 0", f["what"])

    def test_item_value_drives_python_branch(self):
        # 6.0 and 14.0 take the same Python path: one entry serves both; 5.0 takes the other
        self.two_situations(item_branch, lambda: (dyn.tensor([1.0, 2.0]),), lambda: (dyn.tensor([1.5, 1.0]),),
                            "branch", "6.0", "5.0", "# ITEM")
        cf = dyn.compile(item_branch)
        before = counts()
        for v in ([1.0, 2.0], [3.0, 4.0]):
            assert_same(self, item_branch(dyn.tensor(v)), cf(dyn.tensor(v)), f"{v}")
        self.assertEqual(counts()["recompiles"], before["recompiles"])
        self.assertEqual(counts()["cache_hits"], before["cache_hits"] + 1)

    def test_each_entry_explained_by_its_own_branch(self):
        # entry 1 was traced on the False path: call 3 (False, s changed) fails it on the constant of sub
        cf = dyn.compile(bool_branch_scaled)
        for call, (x, s) in enumerate([(POS, 1), (NEG, 1), (NEG, 2)], 1):
            assert_same(self, bool_branch_scaled(x, s), cf(x, s), f"call {call}")
        r1, r2 = dyn.debug.events("recompile", cf)
        self.check_failure(r1["failures"][0], bool_branch_scaled, "branch", "True", "False", "# BOOL2")
        f0, f1 = r2["failures"]
        self.check_failure(f0, bool_branch_scaled, "branch", "True", "False", "# BOOL2")
        self.check_failure(f1, bool_branch_scaled, "constant", "1", "2", "# SUB", entry=1)
        # a float s would be a graph input: the same calls then recompile only for the branch
        dyn.debug.reset()
        cf = dyn.compile(bool_branch_scaled)
        for call, (x, s) in enumerate([(POS, 1.0), (NEG, 1.0), (NEG, 2.0), (POS, 3.0)], 1):
            assert_same(self, bool_branch_scaled(x, s), cf(x, s), f"float call {call}")
        self.assertEqual(counts()["recompiles"], 1)

    def test_trace_end_more_ops(self):
        f = self.two_situations(loop, lambda: (T1, 2), lambda: (T1, 3), "trace_end", "return", "mul", "# BODY")
        self.assertIn("after 2 ops", f["what"])
        # the Python int that decided the loop count is named, with the line that uses it
        uses = line_of(loop, "for _ in range(n)")
        self.assertEqual(f["cause"], f"`n` changed from 2 to 3 (used at {os.path.basename(__file__)}:{uses})")

    def test_trace_end_fewer_ops(self):
        # expected the next mul of the loop, actual return; the failure must still carry its location
        cf = dyn.compile(loop)
        for call, n in enumerate([3, 2, 3, 2], 1):
            assert_same(self, loop(T1, n), cf(T1, n), f"call {call}")
        self.assertEqual(counts()["recompiles"], 1)
        self.assertEqual(counts()["cache_hits"], 2)
        (f,) = only_recompile(self, cf)["failures"]
        self.assertEqual((f["guard"], f["actual"]), ("trace_end", "return"), f["text"])
        self.assertTrue(f["expected"].startswith(f"mul at {os.path.basename(__file__)}:{line_of(loop, '# BODY')}"))
        self.assertTrue(same_file(f["file"], __file__) and f["line"] is not None, f"no location: {f}")


def with_default_dtype(x):
    return x + dyn.ones(x.shape)  # ONES


class TestGlobalState(Base):
    def test_set_default_dtype(self):
        cf = dyn.compile(with_default_dtype)
        try:
            for call, dt in enumerate([dyn.float32, dyn.float64, dyn.float64, dyn.float32, dyn.float64], 1):
                dyn.set_default_dtype(dt)
                want, got = with_default_dtype(T1), cf(T1)
                assert_same(self, want, got, f"call {call}")
                self.assertEqual(got.dtype, dt)
        finally:
            dyn.set_default_dtype(dyn.float32)
        c = counts()
        self.assertEqual((c["calls"], c["recompiles"], c["cache_hits"]), (5, 1, 3))
        (f,) = only_recompile(self, cf)["failures"]
        self.assertEqual((f["entry"], f["guard"], f["expected"], f["actual"]),
                         (0, "global_state", "float32", "float64"), f["text"])
        self.assertIn("default dtype", f["what"])
        self.assertIn("set_default_dtype", f["hint"])
        self.assertEqual([g[0] for g in dyn.debug.guards(cf)],
                         ["global_state: default dtype is float32, grad mode enabled",
                          "global_state: default dtype is float64, grad mode enabled"])
        self.assertTrue(same_file(f["file"], __file__) and f["line"] is not None, f"no location: {f}")


class TestGuardListing(Base):
    def test_entries_of_a_branching_function(self):
        cf = dyn.compile(bool_branch_scaled)
        cf(POS, 1.0)
        cf(NEG, 1.0)
        guards = dyn.debug.guards(cf)
        self.assertEqual(len(guards), 2)
        tag = f"# {os.path.basename(__file__)}:{line_of(bool_branch_scaled, '# BOOL2')}"
        observed = []
        for e, g in enumerate(guards):
            kinds = [s.split(":")[0] for s in g]
            self.assertEqual(kinds[0], "global_state")
            self.assertLessEqual(set(kinds), {"global_state", "tensor_input", "aliasing", "constant", "scalar_input",
                                              "op", "branch"})
            (b,) = [s for s in g if s.startswith("branch:")]
            self.assertIn(tag, b)
            self.assertIn("add reads 's' (argument), a float" if e == 0 else "sub reads 's' (argument), a float", "\n".join(g))
            self.assertIn("is read at each call", b)
            self.assertIn("the ops after it are checked, not its value", b)
            observed.append(("(True when traced)" in b, "(False when traced)" in b))
        # each entry lists the value Python observed when that entry was traced
        self.assertEqual(observed, [(True, False), (False, True)], guards)

    def test_every_guard_but_global_state_has_its_line(self):
        pair = dyn.compile(add_scaled)
        pair(T1, T2)
        (g,) = dyn.debug.guards(pair)
        self.assertEqual([s.split(":")[0] for s in g],
                         ["global_state", "tensor_input", "tensor_input", "aliasing", "scalar_input", "op", "op"])
        tag = f"# {os.path.basename(__file__)}:{line_of(add_scaled, '# TWO_OPS')}"
        for s in g[1:]:
            self.assertIn(tag, s)


class TestCacheLimitAndRecreation(Base):
    def test_fallback_after_cache_limit(self):
        cf = dyn.compile(scale_relu, cache_limit=3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(12):
                assert_same(self, scale_relu(T1, i), cf(T1, i), f"call {i + 1}")
                if i == 3:
                    events_at_fallback = len(dyn.debug.events(None, cf))
                    at_fallback = counts()
        mine = [w for w in caught if "cache_limit" in str(w.message)]
        self.assertEqual(len(mine), 1, [str(w.message) for w in caught])
        self.assertIs(mine[0].category, UserWarning)
        self.assertEqual(len(dyn.debug.events("recompile", cf)), 2)
        (fb,) = dyn.debug.events("fallback", cf)
        msg = str(mine[0].message)
        self.assertIn("cache_limit=3", msg)
        self.assertIn("constant 'scale' (argument) of mul changed, expected 2, actual 3", msg)
        self.assertIn(fb["details"], msg)
        self.assertIn("cache_limit (3)", fb["reason"])
        self.assertEqual(fb["line"], line_of(scale_relu, "# MUL"))
        self.assertEqual(at_fallback["fallbacks"], 1)
        self.assertEqual(len(dyn.debug.guards(cf)), 3)
        # later calls run eagerly: no new events, no compile, no hit
        self.assertEqual(len(dyn.debug.events(None, cf)), events_at_fallback)
        c = counts()
        for k in ("cache_hits", "compiles", "recompiles", "guard_failures", "fallbacks"):
            self.assertEqual(c[k], at_fallback[k], k)
        self.assertEqual(dyn.debug.graphs(cf)[-1].calls, 1)

    def test_recreated_function_hint(self):
        line = line_of(TestCacheLimitAndRecreation.test_recreated_function_hint, "# " + "RECREATE")
        call_line = line_of(TestCacheLimitAndRecreation.test_recreated_function_hint, "# " + "CALL")
        for i in range(3):
            cf = dyn.compile(scale_relu)  # RECREATE
            assert_same(self, scale_relu(T1, 0.5), cf(T1, 0.5), f"iteration {i}")  # CALL
        evs = dyn.debug.events("recompile")
        self.assertEqual(len(evs), 2)
        self.assertEqual(counts()["recompiles"], 2)
        for e in evs:
            self.assertIn("re-created each time", e["hint"])
            self.assertIn(f"{os.path.basename(__file__)}:{line}", e["hint"])
            self.assertTrue(same_file(e["file"], __file__))
            self.assertEqual(e["line"], call_line)  # logged where the call starts afresh
        # one function compiled once and called in the loop is never a recompile
        dyn.debug.reset()
        once = dyn.compile(scale_relu)
        for _ in range(3):
            once(T1, 0.5)
        self.assertEqual(dyn.debug.events("recompile"), [])


if __name__ == "__main__":
    unittest.main()
