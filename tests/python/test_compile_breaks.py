"""Graph breaks: one scenario per trigger, plus fullgraph=True for each.

Each program computes y = x * 2.0, then makes Python need a value on the line marked
"# BREAK", then goes on. Asserted: break kind, what Python asked for, line and source text,
the split of ops between the two graphs, values Python saw inside the region, and bitwise
equality with eager mode on both backends.
"""
import contextlib
import io
import os
import traceback
import unittest

import numpy as np

import dyn
from compiletest import assert_same, bool_branch, break_events, file_of, line_of, ops_of, same_file, source_at


def p_item(x):
    y = x * 2.0
    v = y.sum().item()  # BREAK
    return y + v, v


def p_float(x):
    y = x * 2.0
    v = float(y.sum())  # BREAK
    return y + v, v


def p_int(x):
    y = x * 2
    v = int(y.sum())  # BREAK
    return y + v, v


def p_tolist(x):
    y = x * 2.0
    values = y.tolist()  # BREAK
    return y + 1.0, values


def p_numpy(x):
    y = x * 2.0
    arr = y.numpy()  # BREAK
    return y + 1.0, arr.copy()


def p_print(x):
    y = x * 2.0
    print("y is", y)  # BREAK
    return y + 1.0


def p_repr(x):
    y = x * 2.0
    s = repr(y)  # BREAK
    return y + 1.0, s


def p_str(x):
    y = x * 2.0
    s = f"<{y}>"  # BREAK
    return y + 1.0, s


def p_masked(x):
    y = x * 2.0
    z = y[y > 0]  # BREAK
    return z + 1.0


def p_sync(x):
    y = x * 2.0
    dyn.sync()  # BREAK
    return y + 1.0


X_F = [1.5, -2.25, 3.0, 0.5]
# name -> (program, input values, dtype, break_kind, details, ops of graph 0, ops of graph 1)
CASES = {
    "bool": (bool_branch, X_F, dyn.float32, "data_dependent_branch", "bool()", ["mul", "sum", "gt"], ["add"]),
    "item": (p_item, X_F, dyn.float32, "item", ".item()", ["mul", "sum"], ["add"]),
    "float": (p_float, X_F, dyn.float32, "item", "float()", ["mul", "sum"], ["add"]),
    "int": (p_int, [4, -7, 9, 1], dyn.int64, "item", "int()", ["mul", "sum"], ["add"]),
    "tolist": (p_tolist, X_F, dyn.float32, "tolist", ".tolist()", ["mul"], ["add"]),
    "numpy": (p_numpy, X_F, dyn.float32, "numpy", ".numpy()", ["mul"], ["add"]),
    "print": (p_print, X_F, dyn.float32, "print", "repr()/print()", ["mul"], ["add"]),
    "repr": (p_repr, X_F, dyn.float32, "print", "repr()/print()", ["mul"], ["add"]),
    "str": (p_str, X_F, dyn.float32, "print", "repr()/print()", ["mul"], ["add"]),
    "masked_select": (p_masked, X_F, dyn.float32, "unsupported_op", "masked_select", ["mul", "gt"], ["add"]),
    "sync": (p_sync, X_F, dyn.float32, "explicit_sync", "dyn.sync()", ["mul"], ["add"]),
}


def run_capturing(f, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = f(*args)
    return out, buf.getvalue()


class TestEachBreak(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def check(self, name):
        prog, values, dtype, kind, details, ops0, ops1 = CASES[name]
        line = line_of(prog, "# BREAK")
        want, want_stdout = run_capturing(prog, dyn.tensor(values, dtype=dtype))
        for backend in ("default", "eager"):
            with self.subTest(backend=backend):
                dyn.debug.reset()
                cf = dyn.compile(prog, backend=backend)
                x = dyn.tensor(values, dtype=dtype)
                got, got_stdout = run_capturing(cf, x)
                assert_same(self, want, got, f"{name}/{backend}")
                self.assertEqual(got_stdout, want_stdout)
                self.assertEqual(ops_of(cf), [ops0, ops1])
                evs = break_events(cf)
                self.assertEqual(len(evs), 1, evs)
                e = evs[0]
                self.assertEqual((e["break_kind"], e["details"]), (kind, details))
                self.assertEqual((e["line"], e["source"]), (line, source_at(prog, line)))
                self.assertTrue(same_file(e["file"], file_of(prog)), e["file"])
                self.assertEqual((e["fn"], e["entry"], e["segment"]), (cf.name, 0, 0))
                self.assertTrue(e["reason"])
                if kind != "explicit_sync":
                    self.assertTrue(e["hint"], f"no hint for {kind}")
                g0, g1 = dyn.debug.graphs(cf)
                self.assertEqual(g0.nodes[0].line, line - 1)
                self.assertTrue(all(n.line in (line - 1, line) for n in g0.nodes))
                self.assertEqual([n.line for n in g1.nodes], [line + 1])
                self.assertEqual(dyn.debug.counters()["graph_breaks"], 1)
                # a second call takes the same path: no new break event, graphs serve 2 calls
                got2, _ = run_capturing(cf, dyn.tensor(values, dtype=dtype))
                assert_same(self, want, got2, f"{name}/{backend} second call")
                self.assertEqual(len(break_events(cf)), 1)
                self.assertEqual([g.calls for g in dyn.debug.graphs(cf)], [2, 2])
        return want, want_stdout

    def test_bool_if(self):
        self.check("bool")

    def test_item(self):
        want, _ = self.check("item")
        self.assertEqual(want[1], float(np.sum(np.array(X_F, np.float32) * np.float32(2))))

    def test_float(self):
        self.check("float")

    def test_int(self):
        want, _ = self.check("int")
        self.assertEqual(want[1], 14)
        self.assertIs(type(want[1]), int)

    def test_tolist_value_inside_region(self):
        cf = dyn.compile(p_tolist)
        _, values = cf(dyn.tensor(X_F))
        self.assertEqual(values, [v * 2.0 for v in X_F])
        self.check("tolist")

    def test_numpy_value_inside_region(self):
        cf = dyn.compile(p_numpy)
        _, arr = cf(dyn.tensor(X_F))
        self.assertEqual(arr.dtype, np.float32)
        self.assertTrue(np.array_equal(arr, np.array(X_F, np.float32) * np.float32(2)))
        self.check("numpy")

    def test_item_value_inside_region(self):
        cf = dyn.compile(p_item)
        out, v = cf(dyn.tensor(X_F))
        ref = np.float32(np.sum(np.array(X_F, np.float32) * np.float32(2)))
        self.assertEqual(v, float(ref))
        self.assertTrue(np.array_equal(out.numpy(), np.array(X_F, np.float32) * 2 + ref))

    def test_print_prints_values(self):
        _, stdout = self.check("print")
        self.assertEqual(stdout, "y is tensor([ 3.0000, -4.5000,  6.0000,  1.0000])\n")

    def test_repr(self):
        want, _ = self.check("repr")
        self.assertEqual(want[1], "tensor([ 3.0000, -4.5000,  6.0000,  1.0000])")

    def test_str_format(self):
        self.check("str")

    def test_masked_select(self):
        want, _ = self.check("masked_select")
        self.assertEqual(want.tolist(), [4.0, 7.0, 2.0])

    def test_explicit_sync(self):
        self.check("sync")

    def test_print_of_input_is_not_a_break(self):
        def f(x):
            print(x)
            return x * 2.0
        cf = dyn.compile(f)
        out, stdout = run_capturing(cf, dyn.tensor([1.0, 2.0]))
        self.assertEqual(stdout, "tensor([1., 2.])\n")
        self.assertEqual(out.tolist(), [2.0, 4.0])
        self.assertEqual(break_events(cf), [])
        self.assertEqual(ops_of(cf), [["mul"]])

    def test_break_in_loop(self):
        def f(x):
            y = x * 2.0
            total = 0.0
            for _ in range(3):
                y = y + 1.0
                total += y.sum().item()  # BREAK
            return y * total
        line = line_of(f, "# BREAK")
        cf = dyn.compile(f)
        for call in (1, 2):
            x = dyn.tensor(X_F)
            assert_same(self, f(dyn.tensor(X_F)), cf(x), f"call {call}")
        self.assertEqual(ops_of(cf), [["mul", "add", "sum"], ["add", "sum"], ["add", "sum"], ["mul"]])
        evs = break_events(cf)
        self.assertEqual([(e["segment"], e["line"], e["break_kind"]) for e in evs],
                         [(0, line, "item"), (1, line, "item"), (2, line, "item")])
        self.assertEqual([g.calls for g in dyn.debug.graphs(cf)], [2, 2, 2, 2])
        self.assertEqual(dyn.debug.counters()["graph_breaks"], 3)

    def test_lazy_tensors_in_containers_survive_break(self):
        def f(x):
            keep = {"a": x * 3.0, "b": [x + 1.0, x.exp()]}
            n = (x * 0.5).sum().item()
            return keep["a"] - n, keep["b"][0] * keep["b"][1], keep
        x = dyn.tensor(X_F)
        want = f(dyn.tensor(X_F))
        got = dyn.compile(f)(x)
        assert_same(self, want, got, "containers")

    def test_pending_write_forces_break_on_read(self):
        def f(x):
            x.add_(1.0)
            seen = x.tolist()  # BREAK
            return x * 2.0, seen
        xe, xc = dyn.tensor(X_F), dyn.tensor(X_F)
        want = f(xe)
        cf = dyn.compile(f)
        got = cf(xc)
        assert_same(self, (want, xe), (got, xc), "pending write")
        self.assertEqual(got[1], [v + 1.0 for v in X_F])
        (e,) = break_events(cf)
        self.assertEqual((e["break_kind"], e["line"]), ("tolist", line_of(f, "# BREAK")))


class TestFullgraph(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_each_trigger_raises_graph_break_error(self):
        for name, (prog, values, dtype, kind, details, _, _) in CASES.items():
            with self.subTest(trigger=name):
                line = line_of(prog, "# BREAK")
                cf = dyn.compile(prog, fullgraph=True)
                err = None
                try:  # not assertRaises: it drops the traceback
                    run_capturing(cf, dyn.tensor(values, dtype=dtype))
                except dyn.GraphBreakError as e:
                    err = e
                self.assertIsNotNone(err, "no GraphBreakError")
                self.assertIsInstance(err, RuntimeError)
                msg = str(err)
                self.assertIn(f"{os.path.basename(file_of(prog))}:{line}", msg)
                self.assertIn(source_at(prog, line), msg)
                self.assertIn(cf.name, msg)
                self.assertIn("fullgraph", msg)
                self.assertIn(details, msg)
                # the user's frame is in the traceback, at the break line
                frames = traceback.extract_tb(err.__traceback__)
                self.assertTrue(any(same_file(fr.filename, file_of(prog)) and fr.lineno == line for fr in frames),
                                [(fr.filename, fr.lineno) for fr in frames])
                self.assertIn("Hint:", msg, f"no hint in the fullgraph error for {kind}: {msg}")

    def test_engine_usable_after_fullgraph_error(self):
        stash = []

        def f(x):
            y = x * 2.0
            stash.append(y)
            return y.sum().item()

        def ok(x):
            return (x * 2.0).sum()

        with self.assertRaises(dyn.GraphBreakError):
            dyn.compile(f, fullgraph=True)(dyn.tensor(X_F))
        # a tensor the function stashed before the error is an ordinary tensor with its value
        self.assertEqual(stash[0].tolist(), [v * 2.0 for v in X_F])
        # the same function without fullgraph, and another fullgraph function, work
        self.assertEqual(dyn.compile(f)(dyn.tensor(X_F)), f(dyn.tensor(X_F)))
        cok = dyn.compile(ok, fullgraph=True)
        assert_same(self, ok(dyn.tensor(X_F)), cok(dyn.tensor(X_F)), "after error")
        self.assertEqual(ops_of(cok), [["mul", "sum"]])
        # eager mode outside any region is unaffected
        t = dyn.tensor(X_F) + 1.0
        self.assertEqual(t.tolist(), [v + 1.0 for v in X_F])

    def test_fullgraph_without_break_records_one_graph(self):
        def f(x):
            y = x * 2.0
            n = y.shape[0]
            return (y + n).softmax(0)
        cf = dyn.compile(f, fullgraph=True)
        assert_same(self, f(dyn.tensor(X_F)), cf(dyn.tensor(X_F)), "fullgraph")
        self.assertEqual(len(dyn.debug.graphs(cf)), 1)
        self.assertEqual(break_events(cf), [])


if __name__ == "__main__":
    unittest.main()
