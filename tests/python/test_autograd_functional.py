"""Gradient checks of dyn.nn.functional (finite differences: see test_autograd_ops.gradcheck),
plus composite expressions mixing many ops (a small MLP, attention) so the engine's ordering and
accumulation are exercised on realistic graphs.
"""
import unittest

import numpy as np

import dyn
import dyn.nn.functional as F
from test_autograd_ops import gradcheck, rnd

I64 = dyn.int64


class TestActivations(unittest.TestCase):
    def test_activations(self):
        for name, fn, kind in [("relu", F.relu, "away"), ("gelu", F.gelu, "normal"), ("silu", F.silu, "normal"),
                               ("sigmoid", F.sigmoid, "normal"), ("tanh", F.tanh, "normal"),
                               ("softmax", lambda x: F.softmax(x, dim=-1), "normal"),
                               ("softmax 0", lambda x: F.softmax(x, 0), "normal"),
                               ("log_softmax", lambda x: F.log_softmax(x, dim=1), "normal"),
                               ("log_softmax 0", lambda x: F.log_softmax(x, 0), "normal")]:
            for lay in ("contig", "transposed"):
                with self.subTest(op=name, layout=lay):
                    gradcheck(self, fn, [rnd((3, 5), 1, kind) * 1.5], [lay], msg=name)

    def test_gelu_large_inputs(self):
        # the tails of exact gelu: derivative -> 1 for large x, -> 0 for very negative x
        gradcheck(self, F.gelu, [np.array([-6.0, -3.0, -1.0, 0.0, 1.0, 3.0, 6.0])], msg="gelu tails")


class TestLinear(unittest.TestCase):
    def test_linear(self):
        cases = [("2-d", (4, 3)), ("1-d", (3,)), ("3-d", (2, 4, 3))]
        for name, xs in cases:
            for lays in (None, ["transposed", "sliced", "sliced"]):
                with self.subTest(input=name, bias=True, layouts=lays):
                    gradcheck(self, lambda x, w, b: F.linear(x, w, b), [rnd(xs, 1), rnd((5, 3), 2), rnd((5,), 3)],
                              lays, msg=f"linear {name}")
                with self.subTest(input=name, bias=False, layouts=lays):
                    gradcheck(self, lambda x, w: F.linear(x, w), [rnd(xs, 1), rnd((5, 3), 2)],
                              lays[:2] if lays else None, msg=f"linear {name} no bias")


class TestLayerNorm(unittest.TestCase):
    def test_layer_norm(self):
        cases = [("last dim", (3, 5), (5,)), ("two dims", (2, 3, 4), (3, 4)), ("int shape", (4, 6), 6)]
        for name, xs, ns in cases:
            wshape = (ns,) if isinstance(ns, int) else ns
            with self.subTest(case=name, affine=True):
                gradcheck(self, lambda x, w, b: F.layer_norm(x, ns, w, b), [rnd(xs, 1) * 3 + 1, rnd(wshape, 2),
                                                                           rnd(wshape, 3)],
                          ["transposed", "contig", "sliced"], msg=f"layer_norm {name}")
            with self.subTest(case=name, affine=False):
                gradcheck(self, lambda x: F.layer_norm(x, ns), [rnd(xs, 4)], ["sliced"], msg=f"layer_norm {name}")
            with self.subTest(case=name, weight_only=True):
                gradcheck(self, lambda x, w: F.layer_norm(x, ns, weight=w, eps=1e-3), [rnd(xs, 5), rnd(wshape, 6)],
                          msg=f"layer_norm {name} weight")

    def test_layer_norm_output_gradient_sums_to_zero(self):
        # d(layer_norm)/dx is orthogonal to constants: each row's input gradient sums to 0
        x = dyn.tensor(rnd((3, 6), 7), requires_grad=True)
        F.layer_norm(x, (6,)).backward(gradient=dyn.tensor(rnd((3, 6), 8)))
        np.testing.assert_allclose(x.grad.numpy().sum(1), 0.0, atol=1e-12)


class TestLosses(unittest.TestCase):
    def test_mse_loss(self):
        for red in ("mean", "sum", "none"):
            for sa, sb in [((3, 4), (3, 4)), ((5,), (5,)), ((2, 3, 2), (2, 3, 2))]:
                with self.subTest(reduction=red, shape=sa):
                    gradcheck(self, lambda a, b: F.mse_loss(a, b, reduction=red), [rnd(sa, 1), rnd(sb, 2)],
                              ["transposed", "sliced"], msg=f"mse {red}")

    def test_cross_entropy(self):
        target = dyn.tensor([2, 0, 4, 2], dtype=I64)
        for red in ("mean", "sum", "none"):
            for lay in ("contig", "transposed"):
                with self.subTest(reduction=red, layout=lay):
                    gradcheck(self, lambda x: F.cross_entropy(x, target, reduction=red), [rnd((4, 5), 1) * 2], [lay],
                              msg=f"cross_entropy {red}")
        with self.subTest(input="1-d"):
            gradcheck(self, lambda x: F.cross_entropy(x, dyn.tensor(3)), [rnd((5,), 2)], msg="cross_entropy 1-d")

    def test_cross_entropy_closed_form(self):
        # d(mean CE)/dlogits = (softmax(logits) - onehot(target)) / N
        logits = rnd((4, 5), 3) * 2
        t = np.array([1, 1, 0, 4])
        x = dyn.tensor(logits, requires_grad=True)
        F.cross_entropy(x, dyn.tensor(t)).backward()
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(4), t] -= 1.0
        np.testing.assert_allclose(x.grad.numpy(), p / 4, rtol=1e-12, atol=1e-15)


class TestEmbedding(unittest.TestCase):
    def test_embedding(self):
        for name, idx in [("1-d repeated", [3, 0, 3, 3, 1]), ("2-d", [[0, 1], [1, 4]]), ("one", [2])]:
            index = dyn.tensor(idx, dtype=I64)
            for lay in ("contig", "transposed"):
                with self.subTest(index=name, layout=lay):
                    gradcheck(self, lambda w: F.embedding(index, w), [rnd((5, 3), 1)], [lay], msg=f"embedding {name}")

    def test_embedding_counts(self):
        w = dyn.tensor(rnd((4, 2), 2), requires_grad=True)
        F.embedding(dyn.tensor([[1, 1], [3, 1]]), w).sum().backward()
        self.assertEqual(w.grad.tolist(), [[0.0, 0.0], [3.0, 3.0], [0.0, 0.0], [1.0, 1.0]])


class TestComposites(unittest.TestCase):
    def test_mlp_loss(self):
        x = dyn.tensor(rnd((4, 3), 1))
        y = dyn.tensor([0, 2, 1, 2], dtype=I64)

        def f(w1, b1, w2, b2):
            h = F.gelu(F.linear(x, w1, b1))
            return F.cross_entropy(F.linear(h, w2, b2), y)
        gradcheck(self, f, [rnd((5, 3), 2), rnd((5,), 3), rnd((3, 5), 4), rnd((3,), 5)],
                  ["contig", "sliced", "transposed", "contig"], msg="mlp")

    def test_causal_attention_block(self):
        T, D = 3, 4
        tok = dyn.tensor([1, 0, 2], dtype=I64)
        causal = dyn.tensor(np.tril(np.ones((T, T), dtype=bool)))

        def f(emb, wq, wk, wv, g):
            h = F.embedding(tok, emb)
            n = h * (h * h).mean(-1, keepdim=True).__add__(1e-6).rsqrt() * g  # RMSNorm
            q, k, v = n @ wq, n @ wk, n @ wv
            s = (q @ k.transpose(0, 1)) * (1.0 / D ** 0.5)
            s = dyn.where(causal, s, -1e9)
            a = F.softmax(s, dim=-1) @ v
            return F.silu(a + h).sum(-1)
        gradcheck(self, f, [rnd((3, D), 1), rnd((D, D), 2), rnd((D, D), 3), rnd((D, D), 4), rnd((D,), 5)],
                  msg="attention")

    def test_deep_chain_and_reuse(self):
        def f(x):
            y = x
            for i in range(12):
                y = (y * 0.9 + x.sin() * 0.1).tanh() if i % 2 else y + y.exp() * 0.01
            return y
        gradcheck(self, f, [rnd((2, 3), 6)], ["transposed"], msg="chain")


if __name__ == "__main__":
    unittest.main()
