"""Optimizers against hand-computed update rules (PyTorch's), and their state handling."""
import math
import unittest

import numpy as np

import dyn


def param(values):
    return dyn.nn.Parameter(dyn.tensor(values, dtype=dyn.float64))


def set_grad(p, values):
    p.grad = dyn.tensor(values, dtype=dyn.float64)


class TestSGD(unittest.TestCase):
    def test_plain(self):
        p = param([1.0, -2.0])
        opt = dyn.optim.SGD([p], lr=0.1)
        set_grad(p, [0.5, 1.0])
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), [1.0 - 0.05, -2.0 - 0.1], rtol=0, atol=1e-15)

    def test_momentum_weight_decay_nesterov(self):
        for nesterov in (False, True):
            with self.subTest(nesterov=nesterov):
                p = param([1.0, 2.0])
                opt = dyn.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=nesterov)
                w, buf = np.array([1.0, 2.0]), None
                for g in ([0.5, -1.0], [0.25, 0.75], [-0.5, 0.5]):
                    set_grad(p, g)
                    opt.step()
                    d = np.array(g) + 0.01 * w
                    buf = d.copy() if buf is None else 0.9 * buf + d  # PyTorch: the first step takes d
                    w = w - 0.1 * (d + 0.9 * buf if nesterov else buf)
                    np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-14)

    def test_params_without_grad_are_skipped(self):
        p, q = param([1.0]), param([2.0])
        opt = dyn.optim.SGD([p, q], lr=1.0)
        set_grad(p, [1.0])
        opt.step()
        self.assertEqual((p.item(), q.item()), (0.0, 2.0))


def adam_reference(w, grads, lr, b1, b2, eps, wd, decoupled):
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        g = np.array(g, dtype=np.float64)
        if decoupled:
            w = w * (1 - lr * wd)
        elif wd:
            g = g + wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        step_size = lr / (1 - b1 ** t)
        denom = np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps
        w = w - step_size * m / denom
    return w


class TestAdam(unittest.TestCase):
    GRADS = ([0.5, -1.0, 2.0], [0.25, 0.75, -1.0], [-0.5, 0.5, 0.0], [1.0, 1.0, 1.0])

    def check(self, cls, wd, decoupled):
        p = param([1.0, -2.0, 0.5])
        opt = cls([p], lr=0.01, betas=(0.9, 0.99), eps=1e-8, weight_decay=wd)
        for g in self.GRADS:
            set_grad(p, g)
            opt.step()
        want = adam_reference(np.array([1.0, -2.0, 0.5]), self.GRADS, 0.01, 0.9, 0.99, 1e-8, wd, decoupled)
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-12)
        self.assertEqual(opt.state[p]["step"].item(), len(self.GRADS))

    def test_adam(self):
        self.check(dyn.optim.Adam, 0.0, False)

    def test_adam_l2(self):
        self.check(dyn.optim.Adam, 0.1, False)

    def test_adamw(self):
        self.check(dyn.optim.AdamW, 0.1, True)


class TestOptimizerState(unittest.TestCase):
    def test_zero_grad(self):
        p = param([1.0])
        opt = dyn.optim.SGD([p], lr=0.1)
        set_grad(p, [3.0])
        opt.zero_grad(set_to_none=False)
        self.assertEqual(p.grad.item(), 0.0)
        opt.zero_grad()
        self.assertIsNone(p.grad)

    def test_state_dict_round_trip(self):
        p = param([1.0, 2.0])
        opt = dyn.optim.Adam([p], lr=0.1)
        set_grad(p, [1.0, -1.0])
        opt.step()
        sd = opt.state_dict()
        q = param([1.0, 2.0])
        opt2 = dyn.optim.Adam([q], lr=0.5)
        opt2.load_state_dict(sd)
        self.assertEqual(opt2.param_groups[0]["lr"], 0.1)
        self.assertEqual(opt2.state[q]["step"].item(), 1.0)
        np.testing.assert_array_equal(opt2.state[q]["exp_avg"].numpy(), opt.state[p]["exp_avg"].numpy())

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            dyn.optim.SGD([], lr=0.1)
        with self.assertRaises(ValueError):
            dyn.optim.Adam([param([1.0])], lr=-1)
        with self.assertRaises(TypeError):
            dyn.optim.SGD([1.0], lr=0.1)

    def test_update_does_not_record_history(self):
        p = param([1.0])
        opt = dyn.optim.SGD([p], lr=0.1, momentum=0.5)
        set_grad(p, [1.0])
        opt.step()
        self.assertTrue(p.is_leaf)
        self.assertIsNone(p.grad_fn)


if __name__ == "__main__":
    unittest.main()
