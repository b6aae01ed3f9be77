"""The seed example of issue 3: one compile region, a data-dependent branch, two graphs.

fn(a, b): x = a + b; x = x / 2.0; if x.sum() < 0: return x * -1.0; return x
Asserts graphs, the break (kind, line, source, what Python asked for), every node's line,
counters, explain() and bitwise equality with eager mode, for the branch taken and not taken.
"""
import os
import unittest

import numpy as np

import dyn
from compiletest import assert_same, line_of, same_file, source_at


def fn(a, b):
    x = a + b                     # L_ADD
    x = x / 2.0                   # L_DIV
    if x.sum() < 0:               # L_IF
        return x * -1.0           # L_MUL
    return x


L_ADD, L_DIV, L_IF, L_MUL = (line_of(fn, m) for m in ("# L_ADD", "# L_DIV", "# L_IF", "# L_MUL"))
BASENAME = os.path.basename(__file__)


def inputs(taken):
    r = np.random.default_rng(3)
    a = r.standard_normal(10).astype(np.float32)
    b = r.standard_normal(10).astype(np.float32)
    sign = -1 if taken else 1
    a = sign * (np.abs(a) + 0.5)
    b = sign * np.abs(b)
    return dyn.tensor(a.astype(np.float32)), dyn.tensor(b.astype(np.float32))


class TestSeedBranchTaken(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()
        self.cf = dyn.compile(fn)
        self.a, self.b = inputs(taken=True)
        self.out = self.cf(self.a, self.b)

    def test_result_bitwise_equal_to_eager_and_numpy(self):
        assert_same(self, fn(self.a, self.b), self.out, "compiled vs eager")
        a, b = self.a.numpy(), self.b.numpy()
        ref = ((a + b) / np.float32(2.0)) * np.float32(-1.0)
        self.assertTrue(np.array_equal(self.out.numpy(), ref))

    def test_graphs_and_ops(self):
        gs = dyn.debug.graphs(self.cf)
        self.assertEqual([g.ops for g in gs], [["add", "div", "sum", "lt"], ["mul"]])
        name = self.cf.name
        self.assertEqual([g.id for g in gs], [f"{name}[0].0", f"{name}[0].1"])
        self.assertEqual([(g.fn, g.entry, g.segment, g.calls) for g in gs], [(name, 0, 0, 1), (name, 0, 1, 1)])
        # the same graphs are found by the original function and by name
        self.assertEqual([g.id for g in dyn.debug.graphs(fn)], [g.id for g in gs])
        self.assertEqual([g.id for g in dyn.debug.graphs(name)], [g.id for g in gs])

    def test_node_lines_sources_dtypes_shapes(self):
        g0, g1 = dyn.debug.graphs(self.cf)
        self.assertEqual([n.line for n in g0.nodes], [L_ADD, L_DIV, L_IF, L_IF])
        self.assertEqual([n.line for n in g1.nodes], [L_MUL])
        for n in g0.nodes + g1.nodes:
            self.assertTrue(same_file(n.file, __file__), n.file)
            self.assertEqual(n.source, source_at(fn, n.line))
            self.assertEqual(n.stack[0][1:], (n.line, "fn"))
            self.assertEqual(n.stack[1][2], "setUp")  # the caller, one frame up
        self.assertEqual(g0.nodes[0].source, "x = a + b                     # L_ADD")
        self.assertEqual([tuple(n.shape) for n in g0.nodes], [(10,), (10,), (), ()])
        self.assertEqual([n.dtype for n in g0.nodes], [dyn.float32, dyn.float32, dyn.float32, dyn.bool])
        self.assertEqual((tuple(g1.nodes[0].shape), g1.nodes[0].dtype), ((10,), dyn.float32))
        self.assertIn("2.0", g0.nodes[1].args)
        self.assertIn("-1.0", g1.nodes[0].args)

    def test_graph_inputs(self):
        g0, g1 = dyn.debug.graphs(self.cf)
        self.assertEqual([(i["kind"], i["name"]) for i in g0.inputs], [("argument", "a"), ("argument", "b")])
        self.assertEqual([i["kind"] for i in g1.inputs], ["materialized"])

    def test_text_has_one_line_per_node_with_source(self):
        g0, g1 = dyn.debug.graphs(self.cf)
        text = g0.text()
        for op, line in zip(g0.ops, [L_ADD, L_DIV, L_IF, L_IF]):
            hits = [ln for ln in text.splitlines() if f"= {op}(" in ln]
            self.assertEqual(len(hits), 1, text)
            self.assertIn(f"{BASENAME}:{line}", hits[0])
            self.assertIn(source_at(fn, line).split("#")[0].strip(), hits[0])
        div = [ln for ln in text.splitlines() if "= div(" in ln][0]
        self.assertIn("f32[10]", div)
        self.assertIn("2.0", div)
        self.assertIn(f"{BASENAME}:{L_MUL}", g1.text())
        verbose = g0.text(verbose=True)
        self.assertGreater(len(verbose.splitlines()), len(text.splitlines()))
        self.assertIn("setUp", verbose)

    def test_break_event(self):
        evs = dyn.debug.events("graph_break", self.cf)
        self.assertEqual(len(evs), 1)
        e = evs[0]
        self.assertEqual((e["kind"], e["fn"], e["entry"], e["segment"]), ("graph_break", self.cf.name, 0, 0))
        self.assertEqual(e["break_kind"], "data_dependent_branch")
        self.assertEqual(e["line"], L_IF)
        self.assertTrue(same_file(e["file"], __file__))
        self.assertEqual(e["source"], source_at(fn, L_IF))
        self.assertEqual(e["details"], "bool()")
        self.assertIn("data-dependent", e["reason"])
        self.assertIn("dyn.where", e["hint"])

    def test_compile_events(self):
        evs = dyn.debug.events("compile", self.cf)
        self.assertEqual([(e["entry"], e["segment"]) for e in evs], [(0, 0), (0, 1)])
        self.assertEqual([e["line"] for e in evs], [L_ADD, L_MUL])
        kinds = [e["kind"] for e in dyn.debug.events(fn=self.cf)]
        self.assertEqual(kinds, ["compile", "graph_break", "compile"])

    def test_counters(self):
        c = dyn.debug.counters()
        for k in ("calls", "compiles", "graph_breaks", "graphs", "cache_hits", "recompiles", "guard_failures",
                  "fallbacks"):
            self.assertIsInstance(c[k], int, k)
        self.assertEqual((c["calls"], c["compiles"], c["graph_breaks"], c["graphs"]), (1, 2, 1, 2))
        self.assertEqual((c["cache_hits"], c["recompiles"], c["guard_failures"], c["fallbacks"]), (0, 0, 0, 0))
        for k in ("trace_s", "compile_s", "execute_s"):
            self.assertIsInstance(c[k], float, k)
            self.assertGreaterEqual(c[k], 0.0, k)
            self.assertLess(c[k], 10.0, k)

    def test_second_call_reuses_entry(self):
        a2, b2 = inputs(taken=True)
        a2, b2 = a2 * 2.0, b2 * 3.0
        out2 = self.cf(a2, b2)
        assert_same(self, fn(a2, b2), out2, "second call")
        gs = dyn.debug.graphs(self.cf)
        self.assertEqual([(g.id, g.calls) for g in gs],
                         [(f"{self.cf.name}[0].0", 2), (f"{self.cf.name}[0].1", 2)])
        c = dyn.debug.counters()
        self.assertEqual((c["calls"], c["graphs"], c["graph_breaks"], c["compiles"]), (2, 2, 1, 2))
        self.assertEqual(len(dyn.debug.events("graph_break", self.cf)), 1)  # once per distinct trace

    def test_explain(self):
        ex = dyn.debug.explain(self.cf, self.a, self.b)
        self.assertEqual(ex.graph_count, 2)
        self.assertEqual(ex.graph_break_count, 1)
        self.assertEqual(ex.op_count, 5)
        self.assertEqual(ex.ops_per_graph, [["add", "div", "sum", "lt"], ["mul"]])
        self.assertEqual([g.ops for g in ex.graphs], ex.ops_per_graph)
        (br,) = ex.break_reasons
        self.assertEqual(br["line"], L_IF)
        self.assertTrue(same_file(br["file"], __file__))
        self.assertIn("data-dependent", br["reason"])
        self.assertEqual(br["kind"], "data_dependent_branch")
        self.assertEqual(br["source"], source_at(fn, L_IF))
        self.assertIn("dyn.where", br["hint"])
        s = str(ex)
        self.assertIn(f"{BASENAME}:{L_IF}", s)
        self.assertIn("if x.sum() < 0:", s)
        self.assertIn("add, div, sum, lt", s)
        # explain runs a fresh copy: the compiled function's own graphs are untouched
        self.assertEqual([g.calls for g in dyn.debug.graphs(self.cf)], [1, 1])
        # the original (uncompiled) function can be explained too
        ex2 = dyn.debug.explain(fn, self.a, self.b)
        self.assertEqual((ex2.graph_count, ex2.graph_break_count, ex2.op_count), (2, 1, 5))


class TestSeedBranchNotTaken(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()
        self.cf = dyn.compile(fn)
        self.a, self.b = inputs(taken=False)

    def test_one_graph_one_break(self):
        out = self.cf(self.a, self.b)
        assert_same(self, fn(self.a, self.b), out, "compiled vs eager")
        a, b = self.a.numpy(), self.b.numpy()
        self.assertTrue(np.array_equal(out.numpy(), (a + b) / np.float32(2.0)))
        gs = dyn.debug.graphs(self.cf)
        self.assertEqual([g.ops for g in gs], [["add", "div", "sum", "lt"]])
        self.assertEqual(gs[0].id, f"{self.cf.name}[0].0")
        self.assertEqual([n.line for n in gs[0].nodes], [L_ADD, L_DIV, L_IF, L_IF])
        evs = dyn.debug.events("graph_break", self.cf)
        self.assertEqual([(e["break_kind"], e["line"], e["details"]) for e in evs],
                         [("data_dependent_branch", L_IF, "bool()")])
        c = dyn.debug.counters()
        self.assertEqual((c["calls"], c["compiles"], c["graph_breaks"], c["graphs"]), (1, 1, 1, 1))

    def test_explain(self):
        ex = dyn.debug.explain(self.cf, self.a, self.b)
        self.assertEqual((ex.graph_count, ex.graph_break_count, ex.op_count), (1, 1, 4))
        self.assertEqual(ex.ops_per_graph, [["add", "div", "sum", "lt"]])
        self.assertIn(f"{BASENAME}:{L_IF}", str(ex))

    def test_both_branches_on_one_function(self):
        out1 = self.cf(self.a, self.b)
        ta, tb = inputs(taken=True)
        out2 = self.cf(ta, tb)
        assert_same(self, (fn(self.a, self.b), fn(ta, tb)), (out1, out2), "both branches")
        gs = dyn.debug.graphs(self.cf)
        self.assertEqual((gs[0].id, gs[0].ops), (f"{self.cf.name}[0].0", ["add", "div", "sum", "lt"]))
        # the taken side adds a mul graph after the same first segment (listed under its own entry)
        distinct = sorted({tuple(g.ops) for g in gs})
        self.assertEqual(distinct, [("add", "div", "sum", "lt"), ("mul",)])
        mul = [g for g in gs if g.ops == ["mul"]]
        self.assertEqual(len(mul), 1)
        self.assertEqual((mul[0].segment, mul[0].nodes[0].line), (1, L_MUL))

if __name__ == "__main__":
    unittest.main()
