"""Dynamic shapes: a size that changes becomes a symbol at the recompile (automatic dynamic), or
from the first call (dyn.mark_dynamic, dynamic=True); later sizes replay the same graph, every
result bitwise equal to eager mode; a size the forms do not give recompiles instead of running
a wrong graph.
"""
import os
import re
import sys
import unittest

import dyn
import dyn.nn.functional as F
from compiletest import assert_same, copy_tensor, randt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "examples"))
import sampling  # noqa: E402  (the README's example: a tiny GPT sampling loop)


def counts():
    c = dyn.debug.counters()
    return {k: c[k] for k in ("calls", "cache_hits", "compiles", "recompiles", "fallbacks")}


def mlp_forward(x, w1, b1, w2):
    h = (x @ w1 + b1).relu()
    return (h @ w2).softmax(dim=-1)


class TestAutomaticDynamic(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_ten_batch_sizes_one_recompile(self):
        w1, b1, w2 = randt(16, 32, seed=1), randt(32, seed=2), randt(32, 5, seed=3)
        f = dyn.compile(mlp_forward)
        sizes = [8, 8, 3, 17, 5, 64, 2, 9, 31, 8, 4]
        for i, b in enumerate(sizes):
            x = randt(b, 16, seed=10 + i)
            assert_same(self, mlp_forward(x, w1, b1, w2), f(x, w1, b1, w2), f"batch {b}")
        self.assertEqual(counts()["recompiles"], 1)
        (ev,) = dyn.debug.events("recompile", f)
        self.assertEqual(ev["dynamic"], "x.size(0) became dynamic as s0 (sizes 8 and 3 seen)")
        self.assertIn("x.size(0) became dynamic as s0", ev["reason"])
        guards = dyn.debug.guards(f)
        self.assertEqual(len(guards), 2)
        self.assertIn("shape_symbol: s0 = x.size(0), 2 <= s0 (sizes 8 and 3 seen)", "\n".join(guards[1]))
        self.assertIn("tensor 'x' (argument) is %0 f32[s0, 16] with strides [16, 1]", "\n".join(guards[1]))
        self.assertNotIn("s0", "\n".join(guards[0]), "the first entry stays static")
        (g,) = [g for g in dyn.debug.graphs(f) if g.entry == 1]
        self.assertIn("f32[s0, 5] = softmax", g.text())

    def test_sizes_zero_and_one_stay_specialized(self):
        w1, b1, w2 = randt(16, 32, seed=1), randt(32, seed=2), randt(32, 5, seed=3)
        f = dyn.compile(mlp_forward)
        for i, b in enumerate([4, 6, 1, 9, 1]):
            x = randt(b, 16, seed=i)
            assert_same(self, mlp_forward(x, w1, b1, w2), f(x, w1, b1, w2), f"batch {b}")
        self.assertEqual(counts()["recompiles"], 2, "4->6 makes s0; 1 gets an entry of its own")
        ev = dyn.debug.events("recompile", f)[1]
        (one,) = [x for x in ev["failures"] if x["entry"] == 1]
        self.assertEqual((one["expected"], one["actual"]), ("s0 (a size >= 2)", "1"))
        self.assertIn("sizes 0 and 1 are specialized", one["hint"])

    def test_growing_sequence_sampling_loop(self):
        dyn.manual_seed(0)
        model = sampling.GPT().eval()
        compiled = dyn.compile(model)
        idx = dyn.zeros(1, 1, dtype=dyn.int64)
        with dyn.no_grad():
            for step in range(30):
                want = model(idx)
                got = compiled(idx)
                assert_same(self, want, got, f"step {step}")
                idx = dyn.cat([idx, want.argmax(-1, keepdim=True)], dim=1)
        c = counts()
        self.assertLessEqual(c["recompiles"], 2)
        self.assertEqual(c["fallbacks"], 0)
        self.assertEqual(c["cache_hits"], 30 - 1 - c["recompiles"])
        dynamic = [e["dynamic"] for e in dyn.debug.events("recompile", compiled) if e["dynamic"]]
        self.assertEqual(dynamic, ["idx.size(1) became dynamic as s0 (sizes 2 and 3 seen)"])
        g = [g for g in dyn.debug.graphs(compiled) if g.entry == 2][0]
        # the positions' arange and the mask's slice follow the length
        self.assertIn("arange(0, 3, 1, dtype=int64, {end=s0})", g.text())
        self.assertRegex(g.text(), r"f32\[s0, s0\] = slice\(.*\{stop=s0\}")

    def test_training_with_ragged_last_batch_and_lr_halving(self):
        def make():
            dyn.manual_seed(0)
            m = dyn.nn.Sequential(dyn.nn.Linear(6, 16), dyn.nn.GELU(), dyn.nn.Linear(16, 3))
            return m, dyn.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)

        def step(m, o, x, y):
            o.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            return loss

        model, opt = make()
        twin, twin_opt = make()
        sched = dyn.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        twin_sched = dyn.optim.lr_scheduler.StepLR(twin_opt, step_size=1, gamma=0.5)
        train = dyn.compile(step)
        batches = [12, 12, 12, 12, 7]
        data = [(randt(b, 6, seed=20 + i), dyn.randint(0, 3, (b,))) for i, b in enumerate(batches)]
        for epoch in range(5):
            for i, (x, y) in enumerate(data):
                want = step(twin, twin_opt, copy_tensor(x), copy_tensor(y))
                assert_same(self, want, train(model, opt, x, y), f"epoch {epoch} batch {i}")
            sched.step()
            twin_sched.step()
            for (n, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
                assert_same(self, q, p, f"epoch {epoch} {n}")
        self.assertEqual(counts()["recompiles"], 1)
        (ev,) = dyn.debug.events("recompile", train)
        self.assertEqual(ev["dynamic"], "x.size(0) became dynamic as s0 (sizes 12 and 7 seen)")
        # the ragged batch's entry serves any batch size: one more size is a hit
        x, y = randt(5, 6, seed=99), dyn.randint(0, 3, (5,))
        assert_same(self, step(twin, twin_opt, copy_tensor(x), copy_tensor(y)), train(model, opt, x, y))
        self.assertEqual(counts()["recompiles"], 1)

    def test_two_dims_that_changed_alike_share_a_symbol_and_must_stay_equal(self):
        def f(x, y):
            return x * 2.0 + y

        cf = dyn.compile(f)
        for a, b in [(4, 4), (6, 6), (9, 9), (5, 7)]:
            x, y = randt(a, 3, seed=a), randt(b, 1, seed=b)
            if a != b:
                with self.assertRaises(RuntimeError):
                    f(x, randt(b, 3))
                y = randt(1, 3, seed=b)
            assert_same(self, f(x, y), cf(x, y), f"{a}, {b}")
        self.assertEqual(counts()["recompiles"], 2)
        ev = dyn.debug.events("recompile", cf)[1]
        self.assertTrue(any(x["entry"] == 1 and "size mismatch at dim 0" in x["what"] for x in ev["failures"]))

    def test_a_form_that_stops_holding_recompiles(self):
        def head(x):
            n = min(x.shape[1], 6)  # follows the size up to 6, then stays 6
            return x[:, :n] * 2.0

        cf = dyn.compile(head)
        for t in [4, 5, 9, 12, 5]:
            x = randt(2, t, seed=t)
            assert_same(self, head(x), cf(x), f"length {t}")
        self.assertEqual(counts()["recompiles"], 2, "4->5 makes s0; 9 does not give stop=s0")
        ev = dyn.debug.events("recompile", cf)[1]
        (f1,) = [x for x in ev["failures"] if x["entry"] == 1]
        self.assertEqual(f1["what"], "the stop argument of slice does not follow the sizes it followed when traced")
        self.assertEqual((f1["expected"], f1["actual"]), ("s0 (= 9)", "6"))

    def test_a_data_dependent_size_breaks_the_graph(self):
        def pick(x):
            kept = x[x > 0]  # its size depends on the values: a graph break
            return kept * 3.0, x.sum(0)

        cf = dyn.compile(pick)
        for i, b in enumerate([4, 6, 8, 5]):
            x = randt(b, 3, seed=40 + i)
            assert_same(self, pick(x), cf(x), f"batch {b}")
        self.assertGreaterEqual(len(dyn.debug.events("graph_break", cf)), 1)


class TestMarkedDynamic(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_mark_dynamic_before_the_first_call_never_recompiles(self):
        dyn.manual_seed(0)
        model = dyn.nn.Sequential(dyn.nn.Linear(16, 32), dyn.nn.ReLU(), dyn.nn.Linear(32, 4))
        f = dyn.compile(model)
        for i, b in enumerate([8, 3, 17, 5, 64, 9, 2]):
            x = randt(b, 16, seed=i)
            dyn.mark_dynamic(x, 0)
            assert_same(self, model(x), f(x), f"batch {b}")
        self.assertEqual(counts()["recompiles"], 0)
        self.assertEqual(counts()["compiles"], 1)
        (g,) = dyn.debug.guards(f)
        self.assertIn("shape_symbol: s0 = input.size(0), 2 <= s0 (marked dynamic, 8 when traced)", "\n".join(g))

    def test_dynamic_true_and_false(self):
        def f(x):
            return x.sum(1) * 2.0

        both = dyn.compile(f, dynamic=True)
        for b, t in [(3, 4), (5, 7), (2, 9)]:
            x = randt(b, t, seed=b)
            assert_same(self, f(x), both(x))
        self.assertEqual(counts()["recompiles"], 0)
        static = dyn.compile(f, dynamic=False)
        for b in [3, 5, 2]:
            x = randt(b, 4, seed=b)
            assert_same(self, f(x), static(x))
        self.assertEqual(counts()["recompiles"], 2, "dynamic=False: every size is its own entry")

    def test_torch_dynamo_spelling(self):
        import torch  # inside dynrepl, torch is dyn
        import torch._dynamo

        x = randt(6, 4)
        torch._dynamo.mark_dynamic(x, 0)
        f = torch.compile(lambda t: t * 2.0)
        f(x)
        y = randt(9, 4)
        torch._dynamo.mark_dynamic(y, 0)
        assert_same(self, y * 2.0, f(y))
        self.assertEqual(counts()["recompiles"], 0)

    def test_bad_input(self):
        x = randt(3, 4)
        with self.assertRaisesRegex(IndexError, r"dim 2 is out of range for a tensor of shape \[3, 4\] "
                                                r"\(expected a dim in \[-2, 1\]\)"):
            dyn.mark_dynamic(x, 2)
        with self.assertRaisesRegex(TypeError, "expected a dyn tensor, got list"):
            dyn.mark_dynamic([1, 2], 0)
        with self.assertRaisesRegex(TypeError, "dim must be an int"):
            dyn.mark_dynamic(x, "0")
        with self.assertRaisesRegex(TypeError, "dynamic must be None, True or False"):
            dyn.compile(lambda t: t, dynamic="yes")
        one = randt(1, 4)
        with self.assertWarnsRegex(UserWarning, "sizes 0 and 1 stay specialized"):
            dyn.mark_dynamic(one, 0)
        dyn.mark_dynamic(x, -1)  # negative dims count from the end
        dyn.mark_static(x)
        f = dyn.compile(lambda t: t + 1.0)
        f(x)
        assert_same(self, randt(3, 5) + 1.0, f(randt(3, 5)))
        self.assertEqual(counts()["recompiles"], 1, "mark_static undid the mark")


class TestFoundByDifferentialRuns(unittest.TestCase):
    """Recompile counts a differential run of many size sequences found too high (results were
    always right); each is held here."""

    def setUp(self):
        dyn.debug.reset()

    def run_sizes(self, f, sizes, make, **kw):
        cf = dyn.compile(f, **kw)
        for i, n in enumerate(sizes):
            args = make(n, i)
            assert_same(self, f(*args), cf(*args), f"size {n}")
        return cf

    def test_sizes_derived_from_a_marked_dim_are_learned_at_one_recompile(self):
        def shift(x):
            return x[:, :-1] - x[:, 1:]

        for kw in ({}, {"dynamic": True}):
            dyn.debug.reset()
            self.run_sizes(shift, [4, 6, 9, 7, 5, 8], lambda n, i: (randt(3, n, seed=i),), **kw)
            self.assertEqual(counts()["recompiles"], 1, kw)
        dyn.debug.reset()
        cf = dyn.compile(shift)
        for i, n in enumerate([4, 6, 9, 7, 5]):
            x = randt(3, n, seed=i)
            dyn.mark_dynamic(x, 1)
            assert_same(self, shift(x), cf(x))
        self.assertEqual(counts()["recompiles"], 1, "the guess s0 for the slice's size is corrected once")
        (g,) = [g for g in dyn.debug.graphs(cf) if g.entry == 1]
        self.assertIn("f32[3, s0 - 1] = slice", g.text())

    def test_an_argument_read_only_for_its_shape(self):
        self.run_sizes(lambda x, y: y * dyn.ones(x.shape[0], 1), [4, 6, 9, 7, 5],
                       lambda n, i: (randt(n, seed=i), randt(3, seed=9)))
        self.assertEqual(counts()["recompiles"], 1)
        (ev,) = dyn.debug.events("recompile")
        self.assertIn("size argument 0 of full", ev["dynamic"])

    def test_ints_computed_from_sizes(self):
        for f in (lambda x: x * x.shape[0], lambda x: x.sum(0) / len(x), lambda x: x.var(0), lambda x: x.std()):
            dyn.debug.reset()
            self.run_sizes(f, [4, 8, 12, 16, 20, 24, 28, 32], lambda n, i: (randt(n, 3, seed=i),))
            self.assertEqual(counts()["recompiles"], 1)

    def test_a_first_call_whose_slice_is_clamped(self):
        self.run_sizes(lambda x: x[:, 5:] * 2.0, [4, 6, 9, 16, 7, 8, 10, 12], lambda n, i: (randt(2, n, seed=i),))
        self.assertEqual(counts()["recompiles"], 2, "4 gives an empty slice; 6 vs 9 gives s0 - 5")
        self.assertEqual(counts()["fallbacks"], 0)

    def test_parameters_stay_static_under_dynamic_true(self):
        emb = dyn.nn.Embedding(16, 3)

        def f(idx, m):
            return m(idx).sum()

        cf = self.run_sizes(f, [4, 3, 5, 2, 6, 7], lambda n, i: (dyn.randint(0, 16, (n, 8)), emb), dynamic=True)
        self.assertEqual(counts()["recompiles"], 0)
        (g,) = dyn.debug.guards(cf)
        self.assertIn("tensor 'm.weight' (parameter) is %0 f32[16, 3]", "\n".join(g))

    def test_sizes_zero_and_one_of_an_input_are_not_points_of_a_line(self):
        def f(idx, w):
            B, T = idx.shape
            return w[idx].view(B * T, -1).sum(0)

        w = randt(20, 3)
        cf = self.run_sizes(f, [(4, 8), (1, 9), (1, 10), (1, 4)], lambda n, i: (dyn.randint(0, 20, n), w))
        guards = "\n".join(dyn.debug.guards(cf)[1])
        self.assertIn("tensor 'idx' (argument) is %1 i64[1, s0]", guards)
        self.assertEqual(counts()["recompiles"], 1)

    def test_a_call_that_records_nothing_is_no_recompile(self):
        f = lambda x: F.pad(x, (0, max(0, 8 - x.shape[1])))  # noqa: E731  (no op at all from 8 on)
        self.run_sizes(f, [4, 6, 9, 16, 7, 3], lambda n, i: (randt(2, n, seed=i),))
        c = dyn.debug.counters()
        self.assertEqual(c["recompiles"], c["compiles"] - 1)
        self.assertEqual(len(dyn.debug.events("recompile")), c["recompiles"])

    def test_more_bad_input(self):
        with self.assertRaisesRegex(IndexError, "a 0-d tensor has no dims to mark"):
            dyn.mark_dynamic(dyn.tensor(3.0), 0)
        with self.assertRaisesRegex(IndexError, "dyn.maybe_mark_dynamic: dim 9 is out of range"):
            dyn.maybe_mark_dynamic(randt(2, 3), 9)
        with self.assertRaises(TypeError):
            dyn.mark_dynamic(randt(2, 3), 0, foo=2)


class TestFoundByReview(unittest.TestCase):
    """Symbol numbering across segments and prefixes: each once let a form name a symbol its entry
    did not have (a read past the call's bindings)."""

    def setUp(self):
        dyn.debug.reset()

    def test_a_later_segment_keeps_the_numbering_of_an_earlier_one(self):
        def f(x, flag):
            y = x * 2.0
            if flag:
                y = y + 1.0
            r = y.sum(1)
            s = r.sum().item()  # a graph break: segment 1 reads r
            return r * s

        cf = dyn.compile(f)
        a = randt(4, 3)
        assert_same(self, f(a, False), cf(a, False))
        b = randt(6, 5, seed=1)
        dyn.mark_dynamic(b, [0, 1])  # segment 0 guesses by value; segment 1 could pair with f[0]
        assert_same(self, f(b, True), cf(b, True))
        for i, n in enumerate([(7, 5), (8, 6), (3, 9), (7, 5)]):
            c = randt(*n, seed=2 + i)
            assert_same(self, f(c, True), cf(c, True), str(n))
        for entry, guards in enumerate(dyn.debug.guards(cf)):
            text = "\n".join(guards)
            used = {int(m) for m in re.findall(r"\bs(\d+)\b", text)}
            declared = {int(m) for m in re.findall(r"shape_symbol: s(\d+)", text)}
            self.assertLessEqual(used, declared, f"entry {entry} names a symbol it lacks:\n{text}")

    def test_a_stride_form_in_a_kept_prefix(self):
        def g(x, y, flag):
            a = x + 1.0
            b = a * 2.0
            if flag:
                b = b - 1.0
            return b, y * 2.0

        cg = dyn.compile(g)
        for i, (w, flag) in enumerate([(8, False), (16, False), (32, True), (32, True), (64, True), (24, False)]):
            buf = randt(4, w, seed=i)
            x, y = buf[:, :4], randt(w, seed=10 + i)  # x's row stride is the buffer's width
            assert_same(self, g(x, y, flag), cg(x, y, flag), f"width {w} flag {flag}")
        for guards in dyn.debug.guards(cg):
            text = "\n".join(guards)
            used = {int(m) for m in re.findall(r"\bs(\d+)\b", text)}
            declared = {int(m) for m in re.findall(r"shape_symbol: s(\d+)", text)}
            self.assertLessEqual(used, declared, text)


if __name__ == "__main__":
    unittest.main()
