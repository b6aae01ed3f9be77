"""The tensors autograd stores in .grad: independent of each other and of the caller's
`gradient=` tensor (an in-place update of one .grad, as gradient clipping or
zero_grad(set_to_none=False) do, must not reach another), and laid out like their leaf
(PyTorch's layout contract), whatever view the gradient arrived through.
"""
import unittest

import numpy as np

import dyn

F64 = dyn.float64


def leaf(values, dtype=F64):
    return dyn.tensor(values, dtype=dtype, requires_grad=True)


class TestStoredGradients(unittest.TestCase):
    def test_grads_do_not_alias_each_other(self):
        # add's derivative passes the same tensor to both inputs; the two .grad must still be
        # independent tensors (PyTorch's AccumulateGrad copies a gradient that is shared)
        a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
        (a + b).sum().backward()
        with dyn.no_grad():
            a.grad.mul_(10.0)  # e.g. gradient clipping, in place
        self.assertEqual(a.grad.tolist(), [10.0, 10.0])
        self.assertEqual(b.grad.tolist(), [1.0, 1.0], "b.grad changed through a.grad")

    def test_grad_does_not_alias_the_gradient_argument(self):
        for name, f in [("leaf", lambda x: x), ("x + 0", lambda x: x + 0.0), ("view", lambda x: x.view(2))]:
            with self.subTest(root=name):
                x = leaf([1.0, 2.0])
                g = dyn.tensor([5.0, 6.0], dtype=F64)
                f(x).backward(gradient=g)
                with dyn.no_grad():
                    g.zero_()
                self.assertEqual(x.grad.tolist(), [5.0, 6.0], "x.grad changed through the gradient argument")

    def test_grad_layout_matches_leaf(self):
        # PyTorch's layout contract: .grad has the leaf's strides, whatever view the gradient
        # arrived through (here w is used as w.T, so its incoming gradient is a transposed view)
        w = leaf(np.arange(6.0).reshape(2, 3))
        x = dyn.tensor(np.ones((4, 3)), dtype=F64)
        (x @ w.T).sum().backward()
        self.assertEqual(w.grad.tolist(), [[4.0] * 3] * 2)
        self.assertEqual(w.grad.stride(), w.stride())
        self.assertTrue(w.grad.is_contiguous())
        v = leaf([1.0, 2.0, 3.0])
        v.expand(2, 3).sum().backward()
        self.assertEqual(v.grad.stride(), v.stride())

    def test_in_place_update_of_grad_keeps_graph_values(self):
        # zero_grad(set_to_none=False) style: zeroing .grad in place, then accumulating again
        x = leaf([1.0, 2.0])
        (x * 3.0).sum().backward()
        with dyn.no_grad():
            x.grad.zero_()
        (x * 3.0).sum().backward()
        self.assertEqual(x.grad.tolist(), [3.0, 3.0])


if __name__ == "__main__":
    unittest.main()
