"""Every bad call raises a Python exception with a PyTorch-like message, never a crash,
and the engine keeps working afterwards."""
import unittest

import numpy as np

import dyn
import dyn.nn.functional as F

F32, F64, I64, BOOL = dyn.float32, dyn.float64, dyn.int64, dyn.bool


class ErrorCase(unittest.TestCase):
    def tearDown(self):
        # the engine is still usable after the error
        t = dyn.arange(6.0).reshape(2, 3)
        self.assertEqual((t + 1).sum().item(), 21.0)
        self.assertEqual((t @ t.T).tolist(), [[5.0, 14.0], [14.0, 50.0]])
        self.assertIs(dyn.get_default_dtype(), dyn.float32)

    def raises(self, exc, fn, *substrings):
        with self.assertRaises(exc) as cm:
            fn()
        msg = str(cm.exception)
        for s in substrings:
            self.assertIn(s, msg)
        return msg


class TestShapeErrors(ErrorCase):
    def test_broadcast_mismatch(self):
        want = "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
        self.raises(RuntimeError, lambda: dyn.ones(2, 3) + dyn.ones(2, 4), want)
        self.raises(RuntimeError, lambda: dyn.ones(2, 3) * dyn.ones(4), "The size of tensor a (3) must match "
                    "the size of tensor b (4) at non-singleton dimension 1")
        self.raises(RuntimeError, lambda: dyn.ones(5, 3) == dyn.ones(2, 3), "The size of tensor a (5) must match "
                    "the size of tensor b (2) at non-singleton dimension 0")
        self.raises(RuntimeError, lambda: dyn.where(dyn.ones(3, dtype=BOOL), dyn.ones(4), 0.0))
        self.raises(RuntimeError, lambda: dyn.maximum(dyn.ones(2), dyn.ones(3)))

    def test_inplace_broadcast_to_smaller_output(self):
        self.raises(RuntimeError, lambda: dyn.ones(3).add_(dyn.ones(2, 3)))
        t = dyn.ones(3)
        with self.assertRaises(RuntimeError):
            t += dyn.ones(2, 3)
        self.assertEqual(t.tolist(), [1.0, 1.0, 1.0])

    def test_matmul_errors(self):
        # both dtypes named, in torch's C names (Float/Double/Long) or dyn's
        msg = self.raises(RuntimeError, lambda: dyn.ones(2, 2) @ dyn.ones(2, 2, dtype=F64)).lower()
        self.assertTrue(("float" in msg and "double" in msg) or ("float32" in msg and "float64" in msg), msg)
        msg = self.raises(RuntimeError, lambda: dyn.ones(2, 2, dtype=I64) @ dyn.ones(2, 2)).lower()
        self.assertTrue(("long" in msg and "float" in msg) or ("int64" in msg and "float32" in msg), msg)
        msg = self.raises(RuntimeError, lambda: dyn.ones(3) @ dyn.ones(3, dtype=F64)).lower()
        self.assertTrue(("float" in msg and "double" in msg) or ("float32" in msg and "float64" in msg), msg)
        self.raises(RuntimeError, lambda: dyn.ones(2, 3) @ dyn.ones(4, 5))
        self.raises(RuntimeError, lambda: dyn.ones(3) @ dyn.ones(4))
        self.raises(RuntimeError, lambda: dyn.ones(2, 3, 4) @ dyn.ones(3, 5, 6))
        self.raises(RuntimeError, lambda: dyn.tensor(1.0) @ dyn.ones(2))

    def test_view_non_contiguous(self):
        t = dyn.ones(3, 4).T
        msg = self.raises(RuntimeError, lambda: t.view(12), "view")
        self.assertIn(".reshape(...)", msg)
        self.assertEqual(tuple(t.reshape(12).shape), (12,))

    def test_reshape_view_bad_sizes(self):
        self.raises(RuntimeError, lambda: dyn.ones(2, 3).reshape(4, 4), "shape '[4, 4]' is invalid for input of size 6")
        self.raises(RuntimeError, lambda: dyn.ones(2, 3).view(5), "invalid for input of size 6")
        self.raises(RuntimeError, lambda: dyn.ones(2, 3).reshape(-1, -1), "only one dimension can be inferred")
        self.raises(RuntimeError, lambda: dyn.ones(2, 3).permute(0, 1, 2))
        self.raises(RuntimeError, lambda: dyn.ones(2, 3).permute(0, 0))
        self.raises(RuntimeError, lambda: dyn.ones(3, 2).expand(3, 4))
        self.raises(RuntimeError, lambda: dyn.ones(3, 2).expand(2))

    def test_cat_stack_errors(self):
        self.raises(RuntimeError, lambda: dyn.cat([dyn.ones(2, 3), dyn.ones(2, 4)], dim=0))
        self.raises(RuntimeError, lambda: dyn.stack([dyn.ones(2), dyn.ones(3)]))
        self.raises((RuntimeError, ValueError), lambda: dyn.cat([]))
        self.raises(IndexError, lambda: dyn.cat([dyn.ones(2), dyn.ones(2)], dim=1), "Dimension out of range")

    def test_setitem_shape_mismatch(self):
        t = dyn.zeros(3, 3)
        self.raises(RuntimeError, lambda: t.__setitem__((slice(None), 1), dyn.ones(4)))
        self.assertEqual(t.sum().item(), 0.0)


class TestIndexErrors(ErrorCase):
    def test_index_out_of_range(self):
        t = dyn.ones(3, 4)
        self.raises(IndexError, lambda: t[3])
        self.raises(IndexError, lambda: t[-4])
        self.raises(IndexError, lambda: t[:, 4])
        self.raises(IndexError, lambda: t[0, 0, 0])
        self.raises(IndexError, lambda: t[dyn.tensor([0, 3])])
        self.raises(IndexError, lambda: t[dyn.tensor([-4])])
        self.raises(IndexError, lambda: t.__setitem__(5, 1.0))
        self.raises(IndexError, lambda: F.embedding(dyn.tensor([10]), dyn.ones(10, 2)))
        self.raises((IndexError, RuntimeError), lambda: t.gather(1, dyn.tensor([[0, 4]])))
        self.raises(IndexError, lambda: t[dyn.ones(4, dtype=BOOL)])
        self.raises(IndexError, lambda: t[1.5])  # like torch and numpy
        self.raises(IndexError, lambda: t["a"])

    def test_dimension_out_of_range(self):
        t = dyn.ones(2, 3)
        for fn in (lambda: t.sum(dim=2), lambda: t.sum(dim=-3), lambda: t.mean(dim=(0, 5)),
                   lambda: t.transpose(0, 2), lambda: t.unsqueeze(3), lambda: t.squeeze(2),
                   lambda: t.softmax(2), lambda: t.size(2), lambda: t.amax(dim=-3),
                   lambda: t.max(dim=2), lambda: t.argmax(dim=2), lambda: t.flatten(0, 2),
                   lambda: dyn.stack([t, t], dim=4), lambda: F.log_softmax(t, dim=-3)):
            with self.subTest():
                self.raises(IndexError, fn, "Dimension out of range")

    def test_negative_step(self):
        self.raises(ValueError, lambda: dyn.ones(4)[::-1])


class TestValueErrors(ErrorCase):
    def test_item_and_scalar_conversions(self):
        self.raises(RuntimeError, lambda: dyn.ones(2).item())
        self.raises(RuntimeError, lambda: dyn.ones(0).item())
        self.raises(RuntimeError, lambda: bool(dyn.ones(2)), "ambiguous")
        self.raises((ValueError, RuntimeError), lambda: float(dyn.ones(3)))
        self.raises((ValueError, RuntimeError), lambda: int(dyn.ones(2, 2)))

    def test_ragged_and_bad_data(self):
        self.raises((ValueError, TypeError), lambda: dyn.tensor([[1, 2], [3]]))
        self.raises((ValueError, TypeError), lambda: dyn.tensor([[1, 2], 3]))
        self.raises((ValueError, TypeError), lambda: dyn.tensor([1, "a"]))
        self.raises((ValueError, TypeError, RuntimeError), lambda: dyn.tensor(object()))

    def test_dtype_restrictions(self):
        self.raises(RuntimeError, lambda: dyn.arange(5).mean())
        self.raises(RuntimeError, lambda: dyn.ones(2, dtype=BOOL).mean())
        self.raises(RuntimeError, lambda: dyn.tensor([True]) - dyn.tensor([False]))
        self.raises(RuntimeError, lambda: -dyn.tensor([True]))
        self.raises((RuntimeError, TypeError), lambda: dyn.ones(2) & dyn.ones(2))
        self.raises(RuntimeError, lambda: dyn.where(dyn.ones(2), dyn.ones(2), dyn.zeros(2)))
        self.raises((TypeError, RuntimeError), lambda: dyn.set_default_dtype(dyn.int64))

    def test_misc_torch_errors(self):
        self.raises(RuntimeError, lambda: dyn.tensor([2]) ** -1, "Integers to negative integer powers are not allowed")
        self.raises(RuntimeError, lambda: dyn.tensor([2]) ** dyn.tensor([-1]))
        self.raises(TypeError, lambda: len(dyn.tensor(1.0)), "len() of a 0-d tensor")
        self.raises(TypeError, lambda: list(dyn.tensor(1.0)), "iteration over a 0-d tensor")
        self.raises(RuntimeError, lambda: dyn.ones(2, dtype=BOOL) @ dyn.ones(2, dtype=BOOL))
        self.raises(RuntimeError, lambda: dyn.ones(2, 2).flatten(1, 0))
        self.raises(IndexError, lambda: dyn.ones(3)[dyn.tensor([0.5])])
        self.raises(RuntimeError, lambda: dyn.arange(3).softmax(0))  # softmax of an int tensor

    def test_empty_reductions(self):
        self.raises(RuntimeError, lambda: dyn.zeros(0).max())
        self.raises((IndexError, RuntimeError), lambda: dyn.zeros(0).argmax())
        self.raises((IndexError, RuntimeError), lambda: dyn.zeros(0, 3).amax(dim=0))
        self.raises((IndexError, RuntimeError), lambda: dyn.zeros(0, 3).max(dim=0))
        self.assertEqual(dyn.zeros(0).sum().item(), 0.0)  # sum has an identity: no error

    def test_inplace_result_type_cannot_cast(self):
        t = dyn.tensor([1, 2])
        self.raises(RuntimeError, lambda: t.add_(1.5))
        self.raises(RuntimeError, lambda: t.div_(2))
        with self.assertRaises(RuntimeError):
            t /= 2
        with self.assertRaises(RuntimeError):
            t *= 0.5
        self.assertEqual(t.tolist(), [1, 2])
        self.assertIs(t.dtype, I64)
        b = dyn.tensor([True])
        self.raises(RuntimeError, lambda: b.add_(1))

    def test_integer_division_by_zero(self):
        self.raises(RuntimeError, lambda: dyn.tensor([1, 2]) // dyn.tensor([1, 0]), "ZeroDivisionError")
        self.raises(RuntimeError, lambda: dyn.tensor([1, 2]) % 0, "ZeroDivisionError")
        self.raises(RuntimeError, lambda: dyn.tensor([5]) // 0, "ZeroDivisionError")
        # float division by zero is IEEE, not an error
        self.assertEqual((dyn.tensor([1.0, -1.0]) / 0).tolist(), [float("inf"), float("-inf")])
        self.assertEqual((dyn.tensor([1, 0]) / dyn.tensor([0, 1])).tolist(), [float("inf"), 0.0])

    def test_random_bad_ranges(self):
        self.raises((RuntimeError, ValueError), lambda: dyn.randint(5, 2, (3,)))
        self.raises((RuntimeError, ValueError), lambda: dyn.zeros(-1))
        self.raises((RuntimeError, ValueError), lambda: dyn.arange(0, 10, 0))
        self.raises((RuntimeError, ValueError), lambda: dyn.arange(0, 10, -1))


class TestTypeErrors(ErrorCase):
    def test_wrong_argument_types(self):
        t = dyn.ones(2, 3)
        cases = [
            lambda: dyn.ones("a"), lambda: dyn.zeros(2, dtype="float"), lambda: t + "x",
            lambda: "x" * t, lambda: t @ 3, lambda: t.reshape("a"), lambda: t.sum(dim=1.5),
            lambda: dyn.cat(t), lambda: dyn.cat([t, 1]), lambda: t.transpose(0, None),
            lambda: t.to(3.5), lambda: dyn.tensor([1.0], dtype=3), lambda: dyn.softmax(t, 1.5),
            lambda: t.clamp("lo"), lambda: dyn.randn(2, "x"), lambda: dyn.full((2,), "x"),
            lambda: F.linear(t, [[1.0]]), lambda: dyn.set_num_threads("x"), lambda: t.view(2.0, 3),
        ]
        for i, fn in enumerate(cases):
            with self.subTest(case=i):
                self.raises(TypeError, fn)


class TestSurvivesManyErrors(ErrorCase):
    def test_error_loop(self):
        for _ in range(200):
            with self.assertRaises(RuntimeError):
                dyn.ones(2, 3) + dyn.ones(2, 4)
            with self.assertRaises(IndexError):
                dyn.ones(3)[5]
        self.assertEqual(dyn.ones(1000).sum().item(), 1000.0)
        self.assertEqual(np.asarray(dyn.arange(3).numpy()).tolist(), [0, 1, 2])


if __name__ == "__main__":
    unittest.main()
