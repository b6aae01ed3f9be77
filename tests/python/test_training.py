"""A whole training step compiled: one graph per call holding forward, backward and the update,
each op with the user's line; no graph breaks; one compile; bitwise equal to eager over 20 steps."""
import inspect
import os
import sys
import unittest

import numpy as np

import dyn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "examples"))
import tiny_transformer as tt  # noqa: E402


def make(compiled):
    dyn.manual_seed(0)
    model = dyn.nn.Sequential(dyn.nn.Linear(8, 16), dyn.nn.GELU(), dyn.nn.Linear(16, 3))
    opt = dyn.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = dyn.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)  # LINE forward
        loss.backward()  # LINE backward
        opt.step()  # LINE update
        return loss

    return (dyn.compile(step) if compiled else step), model


def line_of(marker):
    src, start = inspect.getsourcelines(make)
    for i, line in enumerate(src):
        if f"# LINE {marker}" in line:
            return start + i
    raise AssertionError(marker)


def bits(t):
    return t.detach().numpy().tobytes()


class TestCompiledTraining(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_mlp_bitwise_and_one_graph(self):
        dyn.manual_seed(1)
        x, y = dyn.randn(32, 8), dyn.randint(0, 3, (32,))
        step_e, model_e = make(False)
        step_c, model_c = make(True)
        for i in range(20):
            le, lc = step_e(x, y), step_c(x, y)
            self.assertEqual(bits(le), bits(lc), f"loss of step {i}")
        for (n, pe), (_, pc) in zip(model_e.named_parameters(), model_c.named_parameters()):
            self.assertEqual(bits(pe), bits(pc), n)
        c = dyn.debug.counters()
        self.assertEqual((c["calls"], c["compiles"], c["recompiles"], c["graph_breaks"], c["cache_hits"]),
                         (20, 1, 0, 0, 19))
        graphs = dyn.debug.graphs(step_c)
        self.assertEqual([g.id for g in graphs], ["step[0].0"])
        self.assertEqual(graphs[0].calls, 20)

    def test_graph_shows_forward_backward_and_update_with_lines(self):
        dyn.manual_seed(1)
        step, _ = make(True)
        step(dyn.randn(4, 8), dyn.randint(0, 3, (4,)))
        g = dyn.debug.graphs(step)[0]
        by_line = {}
        for n in g.nodes:
            by_line.setdefault(n.line, []).append(n.op)
        fwd, bwd, upd = line_of("forward"), line_of("backward"), line_of("update")
        # forward: the layers' ops are attributed to the user's line that called the model
        self.assertIn("matmul", by_line.get(fwd, []))
        self.assertIn("log_softmax", by_line.get(fwd, []))
        # backward: the derivatives, at the backward() line (matmul gradients, gelu's erf)
        # layer 2: d/dW2 and d/dh; layer 1: d/dW1 only (x needs no gradient, so none is computed)
        self.assertEqual(by_line.get(bwd, []).count("matmul"), 3)
        self.assertIn("erf", by_line.get(bwd, []))
        # update: in-place writes into parameters and optimizer state, at the step() line
        self.assertTrue(any(op.endswith("_") for op in by_line.get(upd, [])), by_line.get(upd))
        self.assertEqual(set(by_line) - {fwd, bwd, upd}, set(), "every op carries one of the step's lines")
        text = g.text()
        self.assertIn("loss.backward()", text)
        self.assertIn("opt.step()", text)

    def test_tiny_transformer_bitwise(self):
        eager, _ = tt.train(False, 5)
        dyn.debug.reset()
        compiled, _ = tt.train(True, 5)
        self.assertEqual(eager, compiled)
        self.assertLess(eager[-1], eager[0])
        self.assertEqual(len(dyn.debug.graphs()), 1)
        self.assertEqual(dyn.debug.counters()["graph_breaks"], 0)


if __name__ == "__main__":
    unittest.main()
