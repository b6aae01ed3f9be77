"""Backward's layout shortcuts (issue 13): a Linear's weight gradient over folded batch rows and
in the weight's layout, broadcast (uncopied) sum/mean gradients, and sums over leading dims read
in place. Each must give what the plain formulas give, and compiled must equal eager bit for bit."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import dyn  # noqa: E402
from test_autograd_ops import gradcheck, rnd  # noqa: E402


def bits(t):
    return t.detach().numpy().view(np.uint64 if t.dtype == dyn.float64 else np.uint32).copy()


class LinearGradients(unittest.TestCase):
    def test_gradcheck_over_batch_dims_and_transposed_weights(self):
        # x @ W.t() (the weight enters transposed), x @ B (it does not), at 2, 3 and 4 dims
        for xs in ((5, 3), (2, 5, 3), (2, 2, 3, 3)):
            with self.subTest(x=xs):
                gradcheck(self, lambda x, w: x @ w.t(), [rnd(xs, 1), rnd((4, 3), 2)], msg=f"x@W.t() {xs}")
                gradcheck(self, lambda x, b: x @ b, [rnd(xs, 3), rnd((3, 4), 4)], msg=f"x@B {xs}")
                gradcheck(self, lambda x, w, b: dyn.nn.functional.linear(x, w, b),
                          [rnd(xs, 5), rnd((4, 3), 6), rnd((4,), 7)], msg=f"linear {xs}")

    def test_weight_grad_has_the_weights_layout_and_matches_numpy(self):
        r = np.random.default_rng(0)
        x = r.standard_normal((4, 6, 8)).astype(np.float32)
        w = dyn.from_numpy(r.standard_normal((5, 8)).astype(np.float32)).requires_grad_()
        g = r.standard_normal((4, 6, 5)).astype(np.float32)
        (dyn.nn.functional.linear(dyn.from_numpy(x), w) * dyn.from_numpy(g)).sum().backward()
        self.assertTrue(w.grad.is_contiguous())
        self.assertEqual(tuple(w.grad.shape), (5, 8))
        want = g.reshape(-1, 5).astype(np.float64).T @ x.reshape(-1, 8).astype(np.float64)
        np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-5, atol=1e-5)

    def test_compiled_training_step_equals_eager_bitwise(self):
        def run(compiled):
            dyn.manual_seed(0)
            model = dyn.nn.Sequential(dyn.nn.Linear(8, 16), dyn.nn.GELU(), dyn.nn.Linear(16, 4))
            opt = dyn.optim.AdamW(model.parameters(), lr=1e-2)

            def step(x):
                opt.zero_grad()
                loss = (model(x) ** 2).mean()
                loss.backward()
                opt.step()
                return loss
            step = dyn.compile(step) if compiled else step
            x = dyn.randn(3, 5, 8)
            losses = [bits(step(x)) for _ in range(3)]
            return losses, [bits(p) for p in model.parameters()]
        le, pe = run(False)
        lc, pc = run(True)
        for a, b in zip(le + pe, lc + pc):
            np.testing.assert_array_equal(a, b)


class BroadcastGradients(unittest.TestCase):
    def test_leaf_grad_from_sum_and_mean_is_its_own_contiguous_memory(self):
        for reduce in (lambda t: t.sum(), lambda t: t.mean(), lambda t: t.sum(dim=0)):
            x = dyn.zeros(3, 4, requires_grad=True)
            out = reduce(x)
            out.backward(dyn.ones_like(out))
            self.assertTrue(x.grad.is_contiguous())
            x.grad.add_(1.0)  # writable: no two elements share memory
            self.assertEqual(len(set(x.grad.numpy().ravel().tolist())), 1)

    def test_leaf_grad_keeps_a_transposed_leafs_layout(self):
        base = dyn.zeros(4, 3)
        x = base.t().detach().requires_grad_()  # [3, 4] with strides (1, 3)
        x.sum().backward()
        self.assertEqual(tuple(x.grad.stride()), tuple(x.stride()))
        np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4), np.float32))


class LeadingSums(unittest.TestCase):
    def test_sum_over_leading_dims_has_the_row_kernels_bits(self):
        r = np.random.default_rng(1)
        for shape, dims in (((37, 5), (0,)), ((3, 11, 7), (0, 1)), ((9, 4, 3), (0,)), ((100, 300), (0,))):
            for dt in (np.float32, np.float64):
                a = (r.standard_normal(shape) * 1e3).astype(dt)
                t = dyn.from_numpy(a)
                kept = shape[len(dims):]
                rows = dyn.from_numpy(np.ascontiguousarray(a.reshape(-1, int(np.prod(kept))).T))
                with self.subTest(shape=shape, dtype=dt):
                    got = t.sum(dim=list(dims)).reshape(-1)
                    want = rows.sum(dim=1)  # the same elements, reduced along rows
                    np.testing.assert_array_equal(bits(got), bits(want))
                    np.testing.assert_array_equal(bits(t.mean(dim=list(dims)).reshape(-1)), bits(rows.mean(dim=1)))
                    np.testing.assert_allclose(got.numpy(), a.astype(np.float64).sum(axis=dims).ravel(), rtol=1e-6)


if __name__ == "__main__":
    unittest.main()
