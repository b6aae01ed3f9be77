"""Autograd engine semantics (PyTorch's): leaves and .grad accumulation, backward() arguments and
errors, retain_graph, grad mode, detach, graph shapes (diamonds, shared subgraphs), which results
require grad, in-place rules, repr, and the dtype of the gradients stored (their independence
and layout: test_autograd_grads.py).
"""
import unittest

import numpy as np

import dyn

F32, F64 = dyn.float32, dyn.float64


def leaf(values, dtype=F64):
    return dyn.tensor(values, dtype=dtype, requires_grad=True)


class TestLeavesAndAccumulation(unittest.TestCase):
    def test_leaf_state(self):
        x = leaf([1.0, 2.0])
        self.assertTrue(x.is_leaf)
        self.assertTrue(x.requires_grad)
        self.assertIsNone(x.grad)
        self.assertIsNone(x.grad_fn)
        y = x * 3.0
        self.assertFalse(y.is_leaf)
        self.assertTrue(y.requires_grad)
        self.assertEqual(y.grad_fn.name(), "MulBackward0")
        c = dyn.tensor([1.0, 2.0])
        self.assertTrue(c.is_leaf)
        self.assertFalse(c.requires_grad)
        self.assertFalse((c * 2.0).requires_grad)
        self.assertTrue((c * x).requires_grad)  # one input that requires grad is enough

    def test_each_leaf_owns_its_gradient(self):
        # A gradient is kept as the leaf's .grad without a copy only when nothing else holds it:
        # leaves handed the same gradient (a + b), or a view of it (a + c.reshape), get their own
        # memory, eagerly and compiled; an in-place change of one .grad leaves the others alone.
        w = dyn.arange(6.0)

        def step(a, b, c):
            ((a + b + c.reshape(6)) * w).sum().backward()  # the product makes a dense gradient

        for mode in ("eager", "compiled"):
            with self.subTest(mode=mode):
                a, b = dyn.ones(6, requires_grad=True), dyn.ones(6, requires_grad=True)
                c = dyn.ones(2, 3, requires_grad=True)
                (dyn.compile(step, name="owns") if mode == "compiled" else step)(a, b, c)
                want = w.tolist()
                a.grad.mul_(5.0)
                self.assertEqual(b.grad.tolist(), want)
                self.assertEqual(c.grad.reshape(6).tolist(), want)
                b.grad.add_(1.0)
                self.assertEqual(a.grad.tolist(), [5.0 * v for v in want])
                self.assertEqual(c.grad.reshape(6).tolist(), want)
                c.grad.zero_()
                self.assertEqual(a.grad.tolist(), [5.0 * v for v in want])
                self.assertEqual(b.grad.tolist(), [v + 1.0 for v in want])

    def test_creation_with_requires_grad(self):
        for t in (dyn.randn(2, 3, dtype=F64, requires_grad=True), dyn.zeros(2, requires_grad=True),
                  dyn.ones(2, 2, requires_grad=True), dyn.tensor(2.0, requires_grad=True)):
            self.assertTrue(t.requires_grad and t.is_leaf)
        t = dyn.zeros(3)
        self.assertIs(t.requires_grad_(), t)
        self.assertTrue(t.requires_grad)
        t.requires_grad = False
        self.assertFalse(t.requires_grad)

    def test_integer_tensors_cannot_require_grad(self):
        with self.assertRaises(RuntimeError):
            dyn.tensor([1, 2], requires_grad=True)
        with self.assertRaises(RuntimeError):
            dyn.tensor([1, 2]).requires_grad_()

    def test_accumulates_across_backward_calls(self):
        x = leaf([1.0, -2.0, 3.0])
        for k in (1, 2, 3):
            (x * x).sum().backward()  # a fresh graph each time
            self.assertEqual(x.grad.tolist(), [2.0 * k, -4.0 * k, 6.0 * k])
        x.grad = None
        (x * 5.0).sum().backward()
        self.assertEqual(x.grad.tolist(), [5.0, 5.0, 5.0])

    def test_grad_setter(self):
        x = leaf([1.0, 2.0])
        x.grad = dyn.tensor([10.0, 20.0], dtype=F64)
        x.sum().backward()
        self.assertEqual(x.grad.tolist(), [11.0, 21.0])
        with self.assertRaises(RuntimeError):
            x.grad = dyn.zeros(3, dtype=F64)  # wrong shape
        with self.assertRaises(RuntimeError):
            x.grad = dyn.zeros(2, dtype=F32)  # wrong dtype
        x.grad = None
        self.assertIsNone(x.grad)

    def test_backward_on_a_leaf(self):
        x = dyn.tensor(2.0, dtype=F64, requires_grad=True)
        x.backward()
        self.assertEqual(x.grad.tolist(), 1.0)
        v = leaf([1.0, 2.0])
        v.backward(gradient=dyn.tensor([3.0, 4.0], dtype=F64))
        self.assertEqual(v.grad.tolist(), [3.0, 4.0])

    def test_intermediate_grad_not_stored(self):
        x = leaf([1.0, 2.0])
        y = x * 2.0
        z = y.exp().sum()
        z.backward()
        self.assertIsNone(y.grad)
        self.assertIsNone(z.grad)
        self.assertIsNotNone(x.grad)

    def test_inputs_that_do_not_require_grad_get_none(self):
        a = leaf([1.0, 2.0])
        b = dyn.tensor([3.0, 4.0], dtype=F64)
        (a * b).sum().backward()
        self.assertEqual(a.grad.tolist(), [3.0, 4.0])
        self.assertIsNone(b.grad)

    def test_float32_leaves_get_float32_grads(self):
        x = leaf([1.0, 2.0], F32)
        (x * x).sum().backward()
        self.assertEqual(x.grad.dtype, F32)
        self.assertEqual(x.grad.tolist(), [2.0, 4.0])
        # through a float64 computation the gradient is cast back to the leaf's dtype
        y = leaf([1.5, 2.5], F32)
        w = dyn.tensor([0.1, 0.2], dtype=F64)
        (y.double() * w).sum().backward()
        self.assertEqual(y.grad.dtype, F32)
        self.assertTrue(np.array_equal(y.grad.numpy(), np.array([0.1, 0.2], dtype=np.float32)))
        # a float64 leaf mixed into float32 math: float64 grad
        z = leaf([1.0, 2.0], F64)
        (z.float() * 3.0).sum().backward()
        self.assertEqual(z.grad.dtype, F64)


class TestBackwardArguments(unittest.TestCase):
    def test_non_scalar_needs_gradient(self):
        x = leaf([1.0, 2.0, 3.0])
        y = x * 2.0
        with self.assertRaisesRegex(RuntimeError, "scalar"):
            y.backward()
        with self.assertRaisesRegex(RuntimeError, "shape"):
            y.backward(gradient=dyn.ones(2, dtype=F64))
        y.backward(gradient=dyn.tensor([1.0, 10.0, 100.0], dtype=F64))
        self.assertEqual(x.grad.tolist(), [2.0, 20.0, 200.0])
        (x * 1.0).backward(dyn.ones(3, dtype=F64))  # positional gradient
        self.assertEqual(x.grad.tolist(), [3.0, 21.0, 201.0])

    def test_non_contiguous_gradient_argument(self):
        g = np.arange(12.0).reshape(3, 4)
        for name, gt in [("contig", dyn.tensor(g)), ("transposed", dyn.tensor(np.ascontiguousarray(g.T)).T),
                         ("sliced", dyn.tensor(np.repeat(g, 2, axis=1))[:, ::2])]:
            with self.subTest(gradient=name):
                x = leaf(np.ones((3, 4)))
                (x.exp() * 2.0).backward(gradient=gt)
                np.testing.assert_array_equal(x.grad.numpy(), g * (2.0 * np.e))

    def test_backward_under_no_grad(self):
        # backward works whatever the grad mode where it is called (the graph was recorded before)
        x = leaf([1.0, 2.0])
        y = (x * x).sum()
        with dyn.no_grad():
            y.backward()
        self.assertEqual(x.grad.tolist(), [2.0, 4.0])
        self.assertFalse(x.grad.requires_grad)

    def test_one_element_non_0d_root(self):
        x = leaf([[2.0]])
        (x * x).backward()
        self.assertEqual(x.grad.tolist(), [[4.0]])

    def test_root_without_grad_raises(self):
        with self.assertRaises(RuntimeError):
            dyn.ones(2).sum().backward()
        x = leaf([1.0])
        with self.assertRaises(RuntimeError):
            x.detach().sum().backward()

    def test_second_backward_raises(self):
        x = leaf([1.0, 2.0])
        y = (x.exp() * x).sum()
        y.backward()
        with self.assertRaisesRegex(RuntimeError, "retain_graph"):
            y.backward()
        self.assertTrue(np.allclose(x.grad.numpy(), np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0]))))

    def test_retain_graph(self):
        x = leaf([1.0, 2.0])
        y = (x * x * x).sum()
        y.backward(retain_graph=True)
        y.backward(retain_graph=True)
        y.backward()
        self.assertEqual(x.grad.tolist(), [9.0, 36.0])
        with self.assertRaises(RuntimeError):
            y.backward()

    def test_shared_subgraph_two_roots(self):
        x = leaf([1.0, 2.0])
        h = x.exp()
        l1, l2 = (h * 2.0).sum(), h.sin().sum()
        l1.backward(retain_graph=True)
        l2.backward()
        e = np.exp([1.0, 2.0])
        np.testing.assert_allclose(x.grad.numpy(), e * 2.0 + np.cos(e) * e, rtol=1e-14)
        # without retain_graph the shared node's saved values are gone for the second root
        x2 = leaf([1.0, 2.0])
        h2 = x2.exp()
        a, b = (h2 * 2.0).sum(), h2.sin().sum()
        a.backward()
        with self.assertRaises(RuntimeError):
            b.backward()


class TestGraphShapes(unittest.TestCase):
    def test_diamond_sums_gradients(self):
        x = leaf([0.5, -1.0])
        y = x * 3.0
        z = (y.exp() + y.sin() + y * y).sum()
        z.backward()
        yv = 3.0 * np.array([0.5, -1.0])
        np.testing.assert_allclose(x.grad.numpy(), 3.0 * (np.exp(yv) + np.cos(yv) + 2 * yv), rtol=1e-14)

    def test_tensor_used_twice_in_one_op(self):
        x = leaf([2.0, 3.0])
        (x * x).sum().backward()
        self.assertEqual(x.grad.tolist(), [4.0, 6.0])
        w = leaf([[1.0, 2.0], [3.0, 4.0]])
        (w @ w).sum().backward()
        wn = np.array([[1.0, 2.0], [3.0, 4.0]])
        ones = np.ones((2, 2))
        np.testing.assert_allclose(w.grad.numpy(), ones @ wn.T + wn.T @ ones, rtol=1e-15)

    def test_long_chain(self):
        x = leaf([0.1])
        y = x
        for _ in range(200):
            y = y * 1.01
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [1.01 ** 200], rtol=1e-12)

    def test_wide_fan_out(self):
        x = leaf([1.0, 2.0])
        total = x * 0.0
        for k in range(50):
            total = total + x * float(k)
        total.sum().backward()
        self.assertEqual(x.grad.tolist(), [float(sum(range(50)))] * 2)

    def test_unused_branch_and_partial_outputs(self):
        x = leaf([[1.0, 5.0], [7.0, 2.0]])
        vals, idx = x.max(1)
        _unused = x.exp()  # recorded, never reached from the root
        (vals * 2.0).sum().backward()
        self.assertEqual(x.grad.tolist(), [[0.0, 2.0], [2.0, 0.0]])


class TestWhatRequiresGrad(unittest.TestCase):
    def test_integer_and_bool_results(self):
        x = leaf([[1.0, 5.0], [7.0, 2.0]])
        for name, t in [("argmax", x.argmax()), ("argmin", x.argmin(1)), ("max indices", x.max(1).indices),
                        ("gt", x > 1.0), ("eq", x == x), ("le tensor", x <= x * 2.0), ("long", x.long()),
                        ("logical_not", (x > 0).logical_not())]:
            with self.subTest(result=name):
                self.assertFalse(t.requires_grad, name)
                self.assertIsNone(t.grad_fn, name)
        self.assertTrue(x.max(1).values.requires_grad)

    def test_no_grad_blocks_recording(self):
        x = leaf([1.0, 2.0])
        self.assertTrue(dyn.is_grad_enabled())
        with dyn.no_grad():
            self.assertFalse(dyn.is_grad_enabled())
            y = x * 2.0
            self.assertFalse(y.requires_grad)
            self.assertIsNone(y.grad_fn)
            self.assertTrue(y.is_leaf)
            with dyn.enable_grad():
                self.assertTrue(dyn.is_grad_enabled())
                z = x * 2.0
                self.assertTrue(z.requires_grad)
                self.assertEqual(z.grad_fn.name(), "MulBackward0")
            self.assertFalse(dyn.is_grad_enabled())
        self.assertTrue(dyn.is_grad_enabled())
        # the graph recorded under enable_grad still works outside
        z.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0, 2.0])

    def test_grad_mode_restored_after_exception(self):
        with self.assertRaises(ValueError):
            with dyn.no_grad():
                raise ValueError("x")
        self.assertTrue(dyn.is_grad_enabled())

    def test_no_grad_decorator_and_set_grad_enabled(self):
        @dyn.no_grad()
        def f(t):
            return t * 2.0
        x = leaf([1.0])
        self.assertFalse(f(x).requires_grad)
        self.assertTrue(dyn.is_grad_enabled())
        try:
            dyn.set_grad_enabled(False)
            self.assertFalse((x * 2.0).requires_grad)
        finally:
            dyn.set_grad_enabled(True)
        with dyn.set_grad_enabled(False):
            self.assertFalse((x * 2.0).requires_grad)
        self.assertTrue(dyn.is_grad_enabled())

    def test_detach_stops_gradients(self):
        x = leaf([1.0, 2.0, 3.0])
        d = x.detach()
        self.assertFalse(d.requires_grad)
        self.assertTrue(d.is_leaf)
        self.assertIsNone(d.grad_fn)
        (x * x.detach()).sum().backward()
        self.assertEqual(x.grad.tolist(), [1.0, 2.0, 3.0])  # not 2x
        y = (x * 2.0).detach()
        self.assertFalse(y.requires_grad)
        # detach shares storage with the original (as in PyTorch)
        with dyn.no_grad():
            d.add_(1.0)
        self.assertEqual(x.tolist(), [2.0, 3.0, 4.0])
        # an intermediate cut by detach: only the attached path contributes
        x.grad = None
        h = x.exp()
        (h + h.detach() * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([2.0, 3.0, 4.0]), rtol=1e-14)


class TestInPlaceRules(unittest.TestCase):
    def test_leaf_in_place_raises(self):
        x = leaf([1.0, 2.0])
        for name, f in [("add_", lambda: x.add_(1.0)), ("mul_", lambda: x.mul_(2.0)), ("zero_", lambda: x.zero_()),
                        ("copy_", lambda: x.copy_(dyn.ones(2, dtype=F64))), ("+=", lambda: x.__iadd__(1.0))]:
            with self.subTest(op=name):
                with self.assertRaisesRegex(RuntimeError, "leaf"):
                    f()
        self.assertEqual(x.tolist(), [1.0, 2.0])

    def test_leaf_in_place_under_no_grad(self):
        x = leaf([1.0, 2.0])
        (x * x).sum().backward()
        with dyn.no_grad():
            x.sub_(x.grad * 0.5)  # an SGD step
        self.assertEqual(x.tolist(), [0.0, 0.0])
        self.assertTrue(x.requires_grad and x.is_leaf)
        x.grad = None
        (x + 1.0).sum().backward()
        self.assertEqual(x.grad.tolist(), [1.0, 1.0])

    def test_in_place_on_graph_tensor_records_history(self):
        # (test_autograd_inplace.py compares many more with PyTorch 2.15)
        x = leaf([1.0, 2.0])
        y = x * 2.0
        y.add_(1.0)
        y.mul_(x)  # d/dx (2x + 1) * x = 4x + 1
        self.assertEqual(type(y.grad_fn).__name__, "MulBackward0")
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [5.0, 9.0])

    def test_saved_tensor_modified_in_place_is_detected(self):
        # PyTorch: "one of the variables needed for gradient computation has been modified by an
        # inplace operation". The gradient must not silently use the new values.
        w = leaf([1.0, 2.0])
        y = (w * w).sum()
        with dyn.no_grad():
            w.mul_(2.0)
        try:
            y.backward()
        except RuntimeError:
            return
        self.fail(f"backward used values modified after the forward: grad {w.grad.tolist()}, "
                  "d/dw sum(w*w) at the forward values is [2.0, 4.0]")

    def test_requires_grad_on_non_leaf(self):
        x = leaf([1.0])
        y = x * 2.0
        with self.assertRaisesRegex(RuntimeError, "leaf"):
            y.requires_grad = False
        with self.assertRaisesRegex(RuntimeError, "leaf"):
            y.requires_grad_(False)

    def test_requires_grad_true_on_non_leaf_is_a_no_op(self):
        # PyTorch: asking a non-leaf that already requires grad to require grad is allowed
        y = leaf([1.0]) * 2.0
        self.assertIs(y.requires_grad_(), y)
        y.requires_grad = True
        self.assertTrue(y.requires_grad)


class TestRepr(unittest.TestCase):
    def test_repr(self):
        x = dyn.tensor([1.0, 2.0], requires_grad=True)
        self.assertEqual(repr(x), "tensor([1., 2.], requires_grad=True)")
        self.assertEqual(repr(x * 2.0), "tensor([2., 4.], grad_fn=<MulBackward0>)")
        self.assertEqual(repr((x * 2.0).sum()), "tensor(6., grad_fn=<SumBackward0>)")
        self.assertIn("grad_fn=<AddBackward0>", repr(x + x))
        self.assertEqual(repr(dyn.tensor([1.0, 2.0])), "tensor([1., 2.])")
        self.assertEqual(repr(x.detach()), "tensor([1., 2.])")
        with dyn.no_grad():
            self.assertEqual(repr(x * 2.0), "tensor([2., 4.])")
        d = dyn.tensor([1.0], dtype=F64, requires_grad=True)
        self.assertEqual(repr(d * 2.0), "tensor([2.], dtype=dyn.float64, grad_fn=<MulBackward0>)")
        self.assertEqual(repr((x * 2.0).grad_fn), "<MulBackward0>")


if __name__ == "__main__":
    unittest.main()
