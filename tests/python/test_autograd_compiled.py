"""backward() inside dyn.compile: forward and backward traced into one graph, with .grad (and the
parameters after an update) bitwise equal to running the same step eagerly, the 2nd and later
calls replaying the cached trace (no recompile, no graph break), and the graph showing both the
forward ops and the backward ops at the user's backward() line.
"""
import unittest

import numpy as np

import dyn
import dyn.nn.functional as F
from compiletest import line_of, raw_bytes, same_bits

F32, F64, I64 = dyn.float32, dyn.float64, dyn.int64


def make_params(dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    shapes = {"w1": (16, 8), "b1": (16,), "w2": (4, 16), "b2": (4,)}
    return {k: dyn.tensor(r.standard_normal(s).astype(dtype) * 0.5, requires_grad=True) for k, s in shapes.items()}


def batches(n, dtype=np.float32, seed=1):
    r = np.random.default_rng(seed)
    return [(dyn.tensor(r.standard_normal((6, 8)).astype(dtype)), dyn.tensor(r.integers(0, 4, 6).astype(np.int64)))
            for _ in range(n)]


def make_grad_step(p):
    """Forward and backward of a 2-layer MLP with cross-entropy; grads reset each call."""
    def grad_step(x, y):
        for t in p.values():
            t.grad = None
        h = F.gelu(F.linear(x, p["w1"], p["b1"]))  # FORWARD-1
        loss = F.cross_entropy(F.linear(h, p["w2"], p["b2"]), y)  # FORWARD-2
        loss.backward()  # BACKWARD
        return loss
    return grad_step


def make_train_step(p, lr=0.1):
    """A whole SGD step: zero grads, forward, backward, update in place under no_grad."""
    def train_step(x, y):
        for t in p.values():
            t.grad = None
        h = (x @ p["w1"].T + p["b1"]).relu()
        loss = F.mse_loss((h @ p["w2"].T + p["b2"]).softmax(-1), F.embedding(y, EYE4))  # FORWARD
        loss.backward()  # BACKWARD
        with dyn.no_grad():
            for t in p.values():
                t.sub_(t.grad * lr)  # UPDATE
        return loss
    return train_step


EYE4 = dyn.tensor(np.eye(4, dtype=np.float32))


class Base(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def assert_bitwise(self, want, got, what):
        self.assertTrue(same_bits(want, got),
                        f"{what}: compiled differs from eager\n  eager    {raw_bytes(want)[:16]} {want.tolist()}\n"
                        f"  compiled {raw_bytes(got)[:16]} {got.tolist()}")

    def assert_one_graph_per_call(self, cfn, calls):
        c = dyn.debug.counters()
        self.assertEqual(c["calls"], calls)
        self.assertEqual(c["compiles"], 1, "compiled more than once")
        self.assertEqual(c["recompiles"], 0)
        self.assertEqual(c["graph_breaks"], 0)
        self.assertEqual(c["fallbacks"], 0)
        self.assertEqual(c["cache_hits"], calls - 1, "later calls did not replay the cached trace")
        self.assertEqual(dyn.debug.events("graph_break", cfn), [])
        self.assertEqual(len(dyn.debug.graphs(cfn)), 1, "the step is not one graph")


class TestGradStep(Base):
    def run_compare(self, dtype, fullgraph):
        pe, pc = make_params(dtype), make_params(dtype)
        eager, compiled = make_grad_step(pe), dyn.compile(make_grad_step(pc), fullgraph=fullgraph)
        hits = []
        for call, (x, y) in enumerate(batches(3, dtype)):
            le = eager(x, y)
            lc = compiled(x, y)
            self.assert_bitwise(le, lc, f"loss, call {call}")
            for k in pe:
                self.assertIsNotNone(pc[k].grad, f"{k}.grad after compiled call {call}")
                self.assertEqual(pc[k].grad.dtype, pc[k].dtype)
                self.assert_bitwise(pe[k].grad, pc[k].grad, f"{k}.grad, call {call}")
            hits.append(dyn.debug.counters()["cache_hits"])
        self.assertEqual(hits, [0, 1, 2], "cache hits per call")
        self.assert_one_graph_per_call(compiled, 3)
        return compiled

    def test_float32_bitwise_and_replayed(self):
        self.run_compare(np.float32, fullgraph=False)

    def test_float64_fullgraph(self):
        self.run_compare(np.float64, fullgraph=True)

    def test_graph_has_forward_and_backward_ops(self):
        compiled = self.run_compare(np.float32, fullgraph=False)
        (g,) = dyn.debug.graphs(compiled)
        fn = make_grad_step
        fwd = {line_of(fn, "# FORWARD-1"), line_of(fn, "# FORWARD-2")}
        bwd = line_of(fn, "# BACKWARD")
        fwd_ops = [n.op for n in g.nodes if n.line in fwd]
        bwd_ops = [n.op for n in g.nodes if n.line == bwd]
        self.assertEqual(len(fwd_ops) + len(bwd_ops), len(g.nodes), "ops at lines other than the step's")
        for op in ("matmul", "gelu", "log_softmax", "gather", "mean"):
            self.assertIn(op, fwd_ops)
        # backward: two matmuls per linear layer (input and weight grads), gelu's derivative (erf),
        # the gather's scatter_add, the broadcast bias gradients (sum)
        self.assertGreaterEqual(bwd_ops.count("matmul"), 3)
        for op in ("erf", "scatter_add", "sum", "exp"):
            self.assertIn(op, bwd_ops)
        self.assertGreater(g.ops.count("matmul"), 2)
        self.assertTrue(all(n.source == "loss.backward()  # BACKWARD" for n in g.nodes if n.line == bwd))
        self.assertIn("loss.backward()", g.text())

    def test_new_values_same_shapes_do_not_recompile(self):
        # the cached trace must read the current parameter values, not the traced ones
        pe, pc = make_params(), make_params()
        eager, compiled = make_grad_step(pe), dyn.compile(make_grad_step(pc))
        data = batches(3, seed=7)
        for call, (x, y) in enumerate(data):
            with dyn.no_grad():
                for k in pe:  # change parameters between calls (as an optimizer would)
                    pe[k].mul_(1.0 + 0.25 * call)
                    pc[k].mul_(1.0 + 0.25 * call)
            self.assert_bitwise(eager(x, y), compiled(x, y), f"loss {call}")
            for k in pe:
                self.assert_bitwise(pe[k].grad, pc[k].grad, f"{k}.grad {call}")
        self.assert_one_graph_per_call(compiled, 3)


class TestTrainStep(Base):
    def test_sgd_step_bitwise_one_graph(self):
        pe, pc = make_params(), make_params()
        eager, compiled = make_train_step(pe), dyn.compile(make_train_step(pc))
        for call, (x, y) in enumerate(batches(3, seed=3)):
            self.assert_bitwise(eager(x, y), compiled(x, y), f"loss {call}")
            for k in pe:
                self.assert_bitwise(pe[k], pc[k], f"{k} after update {call}")
                self.assert_bitwise(pe[k].grad, pc[k].grad, f"{k}.grad {call}")
                self.assertTrue(pc[k].requires_grad and pc[k].is_leaf)
        self.assert_one_graph_per_call(compiled, 3)
        (g,) = dyn.debug.graphs(compiled)
        fn = make_train_step
        lines = {n.line for n in g.nodes}
        for marker in ("# FORWARD", "# BACKWARD", "# UPDATE"):
            self.assertIn(line_of(fn, marker), lines, f"no op at the {marker} line")
        self.assertGreater(g.ops.count("matmul"), 2)

    def test_loss_falls(self):
        p = make_params(seed=5)
        step = dyn.compile(make_train_step(p, lr=0.5))
        x, y = batches(1, seed=11)[0]
        losses = [step(x, y).item() for _ in range(20)]
        self.assertLess(losses[-1], losses[0])


class TestAccumulation(Base):
    def test_grads_accumulate_across_compiled_calls(self):
        # without resetting .grad, each call adds to it: the same sums as eager, bit for bit
        pe, pc = make_params(), make_params()

        def make(p):
            def f(x, y):
                loss = F.cross_entropy(F.linear(F.linear(x, p["w1"], p["b1"]).tanh(), p["w2"], p["b2"]), y)
                loss.backward()
                return loss
            return f
        eager, compiled = make(pe), dyn.compile(make(pc))
        for call, (x, y) in enumerate(batches(3, seed=4)):
            self.assert_bitwise(eager(x, y), compiled(x, y), f"loss {call}")
            for k in pe:
                self.assert_bitwise(pe[k].grad, pc[k].grad, f"{k}.grad {call}")
        c = dyn.debug.counters()
        self.assertEqual(c["graph_breaks"], 0)
        # the first call starts from .grad None, later ones from a tensor: one recompile (call 2),
        # then call 3 sees .grad of the same kind (same shape and layout) and replays call 2's trace
        self.assertEqual((c["compiles"], c["recompiles"], c["cache_hits"]), (2, 1, 1),
                         [e["reason"] for e in dyn.debug.events("guard_failure", compiled)])


class TestEagerTensorsAndGradMode(Base):
    def test_backward_of_eager_leaf_through_compiled_function(self):
        # the compiled function only runs the forward; backward happens eagerly outside
        pe, pc = make_params(), make_params()

        def make(p):
            return lambda x: (F.linear(x, p["w1"], p["b1"]).sigmoid() * 2.0).sum()
        eager, compiled = make(pe), dyn.compile(make(pc))
        for call, (x, _) in enumerate(batches(2, seed=8)):
            le, lc = eager(x), compiled(x)
            self.assertTrue(lc.requires_grad)
            le.backward()
            lc.backward()
            for k in ("w1", "b1"):
                self.assert_bitwise(pe[k].grad, pc[k].grad, f"{k}.grad {call}")

    def test_no_grad_inside_compiled_function(self):
        p = make_params()

        @dyn.compile
        def f(x):
            with dyn.no_grad():
                y = F.linear(x, p["w1"], p["b1"])
            return y, y.requires_grad
        for x, _ in batches(2, seed=9):
            y, rg = f(x)
            self.assertFalse(rg)
            self.assertFalse(y.requires_grad)
        self.assertTrue(dyn.is_grad_enabled())


if __name__ == "__main__":
    unittest.main()
