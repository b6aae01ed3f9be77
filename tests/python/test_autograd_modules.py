"""Gradient checks of every dyn.nn module against float64 central finite differences, for the
input and for each parameter (the module's own Parameter objects and their .grad).

Parameters are set to random values (so LayerNorm's ones/zeros are not a special case) and
perturbed in place under no_grad for the finite differences. Tolerances: see test_autograd_ops.
"""
import unittest

import numpy as np

import dyn
import dyn.nn as nn
from test_autograd_ops import ATOL, EPS, RTOL, rnd

F64, I64 = dyn.float64, dyn.int64


def module_gradcheck(tc, module, x, target=None, seed=0, msg=""):
    """module(x) (or module(x, target) for losses) vs finite differences, for x (if floating) and
    every parameter. x: numpy float64 array or a dyn integer tensor (embedding indices)."""
    module.double()
    r = np.random.default_rng(seed)
    params = list(module.named_parameters())
    with dyn.no_grad():
        for i, (_, p) in enumerate(params):
            p.copy_(dyn.tensor(rnd(tuple(p.shape), 100 + i)))
    vals = [p.detach().numpy().copy() for _, p in params]
    xt = dyn.tensor(x, requires_grad=True) if isinstance(x, np.ndarray) else x
    call = (lambda a: module(a, target)) if target is not None else module
    out = call(xt)
    g = np.ones(tuple(out.shape)) if out.numel() == 1 else r.standard_normal(tuple(out.shape))
    out.backward(gradient=dyn.tensor(g))

    def loss(a):
        with dyn.no_grad():
            return float(np.sum(call(a).detach().numpy() * g))
    with dyn.no_grad():
        scale = max(1.0, float(np.sum(np.abs(call(xt.detach()).numpy() * g))))

    def check(name, got, num):
        bad = np.abs(got - num) > ATOL * scale + RTOL * np.abs(num)
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            tc.fail(f"{msg} {name}: {int(bad.sum())}/{num.size} differ; first at {i}: backward {got[i]!r}, "
                    f"finite difference {num[i]!r}")

    if isinstance(x, np.ndarray):
        num = np.zeros(x.shape)
        for j in range(x.size):
            xp, xm = x.copy(), x.copy()
            xp.reshape(-1)[j] += EPS
            xm.reshape(-1)[j] -= EPS
            num.reshape(-1)[j] = (loss(dyn.tensor(xp)) - loss(dyn.tensor(xm))) / (2 * EPS)
        tc.assertEqual(xt.grad.dtype, F64)
        check("input", xt.grad.numpy(), num)
    for (name, p), v in zip(params, vals):
        tc.assertIsNotNone(p.grad, f"{msg} {name}.grad is None")
        tc.assertEqual((tuple(p.grad.shape), p.grad.dtype), (tuple(p.shape), F64), f"{msg} {name}.grad")
        num = np.zeros(v.shape)
        for j in range(v.size):
            fs = []
            for sgn in (1.0, -1.0):
                w = v.copy()
                w.reshape(-1)[j] += sgn * EPS
                with dyn.no_grad():
                    p.copy_(dyn.tensor(w))
                fs.append(loss(xt.detach()))
            num.reshape(-1)[j] = (fs[0] - fs[1]) / (2 * EPS)
        with dyn.no_grad():
            p.copy_(dyn.tensor(v))
        check(name, p.grad.numpy(), num)


class TestLayers(unittest.TestCase):
    def test_linear(self):
        for bias in (True, False):
            for xs in [(4, 3), (3,), (2, 2, 3)]:
                with self.subTest(bias=bias, input=xs):
                    module_gradcheck(self, nn.Linear(3, 5, bias=bias), rnd(xs, 1), msg="Linear")

    def test_embedding(self):
        with self.subTest(index="1-d repeated"):
            module_gradcheck(self, nn.Embedding(6, 3), dyn.tensor([1, 4, 1, 1, 0], dtype=I64), msg="Embedding")
        with self.subTest(index="2-d"):
            module_gradcheck(self, nn.Embedding(6, 3), dyn.tensor([[5, 0], [0, 2]], dtype=I64), msg="Embedding")

    def test_layer_norm(self):
        for shape, ns in [((3, 5), 5), ((2, 3, 4), (3, 4))]:
            with self.subTest(normalized_shape=ns):
                module_gradcheck(self, nn.LayerNorm(ns), rnd(shape, 2) * 2 + 0.5, msg="LayerNorm")
        with self.subTest(elementwise_affine=False):
            module_gradcheck(self, nn.LayerNorm(4, elementwise_affine=False), rnd((3, 4), 3), msg="LayerNorm")

    def test_rms_norm(self):
        for ns, eps in [(5, None), (5, 1e-3)]:
            with self.subTest(eps=eps):
                module_gradcheck(self, nn.RMSNorm(ns, eps=eps), rnd((3, 5), 4), msg="RMSNorm")
        with self.subTest(normalized_shape=(2, 3)):
            module_gradcheck(self, nn.RMSNorm((2, 3)), rnd((2, 2, 3), 5), msg="RMSNorm")
        with self.subTest(elementwise_affine=False):
            module_gradcheck(self, nn.RMSNorm(4, elementwise_affine=False), rnd((3, 4), 6), msg="RMSNorm")

    def test_activations(self):
        for name, m, kind in [("ReLU", nn.ReLU(), "away"), ("GELU", nn.GELU(), "normal"),
                              ("SiLU", nn.SiLU(), "normal"), ("Softmax", nn.Softmax(dim=1), "normal"),
                              ("Softmax -1", nn.Softmax(-1), "normal")]:
            with self.subTest(module=name):
                module_gradcheck(self, m, rnd((3, 4), 7, kind), msg=name)

    def test_dropout(self):
        with self.subTest(mode="eval"):
            module_gradcheck(self, nn.Dropout(0.5).eval(), rnd((3, 4), 8), msg="Dropout eval")
        with self.subTest(mode="p=0"):
            module_gradcheck(self, nn.Dropout(0.0), rnd((3, 4), 8), msg="Dropout p=0")
        with self.subTest(mode="train"):
            # the gradient is the kept mask scaled by 1/(1-p): read the mask off the output
            x = dyn.tensor(rnd((4, 5), 9, "away"), requires_grad=True)
            g = rnd((4, 5), 10)
            dyn.manual_seed(3)
            y = nn.Dropout(0.25)(x)
            y.backward(gradient=dyn.tensor(g))
            kept = y.detach().numpy() != 0
            self.assertTrue(kept.any() and not kept.all())
            np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / 0.75, 0.0), rtol=1e-15)


class TestContainersAndLosses(unittest.TestCase):
    def test_sequential_mlp(self):
        m = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.LayerNorm(4), nn.Linear(4, 2), nn.SiLU())
        module_gradcheck(self, m, rnd((5, 3), 11), msg="Sequential")

    def test_module_list_and_dict(self):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
                self.heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.RMSNorm(3)})
                self.shared = self.blocks[0]  # the same module twice: its grads add up

            def forward(self, x):
                for b in self.blocks:
                    x = b(x).tanh()
                return self.heads["a"](self.heads["b"](self.shared(x)))
        module_gradcheck(self, Net(), rnd((4, 3), 12), msg="ModuleList/ModuleDict")

    def test_mse_loss(self):
        for red in ("mean", "sum", "none"):
            with self.subTest(reduction=red):
                module_gradcheck(self, nn.MSELoss(reduction=red), rnd((3, 4), 13),
                                 target=dyn.tensor(rnd((3, 4), 14)), msg=f"MSELoss {red}")

    def test_cross_entropy_loss(self):
        for red in ("mean", "sum", "none"):
            with self.subTest(reduction=red):
                module_gradcheck(self, nn.CrossEntropyLoss(reduction=red), rnd((4, 5), 15) * 2,
                                 target=dyn.tensor([4, 0, 0, 2], dtype=I64), msg=f"CrossEntropyLoss {red}")

    def test_classifier_end_to_end(self):
        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
        loss_fn = nn.CrossEntropyLoss()
        y = dyn.tensor([2, 0, 1, 1, 0], dtype=I64)

        class WithLoss(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, x):
                return loss_fn(self.model(x), y)
        x = rnd((5, 4), 16)
        module_gradcheck(self, WithLoss(), x, msg="classifier")
        with dyn.no_grad():  # the check is valid only away from ReLU's kink
            self.assertGreater(float(model[0](dyn.tensor(x)).abs().amin()), 1e-3)


class TestModuleGradcheckItself(unittest.TestCase):
    def test_catches_a_wrong_parameter_gradient(self):
        class Bad(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(dyn.ones(3))

            def forward(self, x):
                return x * self.w * self.w.detach()  # backward sees w once, the function twice
        with self.assertRaises(AssertionError):
            module_gradcheck(self, Bad(), rnd((2, 3), 1))


if __name__ == "__main__":
    unittest.main()
