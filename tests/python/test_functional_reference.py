"""torch.functional's and the search / counting functions (broadcast_shapes / _tensors / _to,
unflatten, count_nonzero, isin, take_along_dim, masked_select, kthvalue, searchsorted, bucketize,
quantile, histc, tensordot, cdist) against what PyTorch 2.15 returned for the same calls
(torch_reference/functional.json, recorded by torch_reference/record.py): dtype, shape and values
exactly; compiled equal to eager; and their errors.
"""
import os
import sys
import unittest

import dyn
from compiletest import same_bits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from cases import cases, encode  # noqa: E402
from reference import assert_as_recorded  # noqa: E402



class TestAgainstPyTorch(unittest.TestCase):
    def test_every_case_as_pytorch_2_15(self):
        assert_as_recorded(self, "functional.json", cases, encode, dyn)

    def test_compiled_equals_eager(self):
        def f(x, s, q):
            return (dyn.take_along_dim(x, x.argsort(1), dim=1), x.kthvalue(2, 1).values, x.quantile(q, dim=1),
                    dyn.cdist(x, x), dyn.tensordot(x, x.T, dims=1), dyn.searchsorted(s, x), x.count_nonzero(1),
                    dyn.isin(x.long(), s.long()), x.unflatten(1, (2, -1)), dyn.histc(x, bins=5, min=-2, max=2))

        g = dyn.compile(f)
        for seed in range(3):
            dyn.manual_seed(seed)
            x, s = dyn.randn(3, 4), dyn.randn(6).sort().values
            q = dyn.tensor([0.1, 0.5, 0.9])
            for a, b in zip(f(x, s, q), g(x, s, q)):
                self.assertTrue(same_bits(a, b))

    def test_cdist_inf_gives_each_tied_element_the_gradient(self):
        # PyTorch 2.15: [[1., 1.]] (|3-1| and |4-2| tie at the maximum)
        a = dyn.tensor([[3.0, 4.0]], requires_grad=True)
        dyn.cdist(a, dyn.tensor([[1.0, 2.0]]), p=float("inf")).sum().backward()
        self.assertEqual(a.grad.tolist(), [[1.0, 1.0]])

    def test_gradients_flow(self):
        x = dyn.randn(3, 4, requires_grad=True)
        (dyn.cdist(x, x.detach() + 1.0).sum() + x.quantile(0.3, dim=1).sum() + x.kthvalue(2, 1).values.sum()
         + dyn.tensordot(x, x, dims=([0, 1], [0, 1]))).backward()
        self.assertEqual(tuple(x.grad.shape), (3, 4))
        self.assertTrue(bool(x.grad.isfinite().all()))

    def test_errors_as_pytorch(self):
        with self.assertRaisesRegex(RuntimeError, r"Attempting to broadcast a dimension of length 4 at -2! "
                                                  r"Mismatching argument at index 1 had \(4, 3\)"):
            dyn.broadcast_shapes((2, 3), (4, 3))
        with self.assertRaisesRegex(RuntimeError, "don't multiply up to the size of dim 0"):
            dyn.arange(12).unflatten(0, (5, -1))
        with self.assertRaisesRegex(RuntimeError, "selected number k out of range"):
            dyn.tensor([1.0, 2.0]).kthvalue(3)
        with self.assertRaisesRegex(RuntimeError, r"q must be in the range \[0, 1\] but got 1.5"):
            dyn.tensor([1.0, 2.0]).quantile(1.5)
        with self.assertRaisesRegex(RuntimeError, r"q must be in the range \[0, 1\] but got nan"):
            dyn.tensor([1.0, 2.0]).quantile(float("nan"))
        with self.assertRaisesRegex(RuntimeError, "input tensor must be non-empty"):
            dyn.tensor([]).quantile(0.5)
        with self.assertRaisesRegex(IndexError, "Dimension out of range"):
            dyn.ones(2, 3).quantile(0.5, dim=2)
        self.assertEqual(tuple(dyn.tensor(3.0).quantile(0.5, keepdim=True).shape), ())
        with self.assertRaisesRegex(IndexError, "Dimension out of range"):
            dyn.take_along_dim(dyn.ones(2, 3), dyn.zeros(2, 1, dtype=dyn.int64), 2)
        with self.assertRaisesRegex(IndexError, "Dimension out of range"):
            dyn.tensordot(dyn.ones(2, 3), dyn.ones(3, 2), dims=([3], [0]))
        with self.assertRaisesRegex(RuntimeError, r"range of \[1, inf\] is not finite"):
            dyn.histc(dyn.tensor([1.0, float("inf"), 3.0]), 4)
        with self.assertRaisesRegex(RuntimeError, "cdist only supports floating-point dtypes"):
            dyn.cdist(dyn.ones(2, 3, dtype=dyn.int64), dyn.ones(2, 3, dtype=dyn.int64))
        with self.assertRaisesRegex(RuntimeError, "input tensor must be either float or double"):
            dyn.tensor([1, 2]).quantile(0.5)
        with self.assertRaisesRegex(RuntimeError, "boundaries tensor must be 1 dimension"):
            dyn.bucketize(dyn.tensor([1.0]), dyn.ones(2, 2))
        with self.assertRaisesRegex(RuntimeError, "side and right can't be set to opposites"):
            dyn.searchsorted(dyn.tensor([1.0]), dyn.tensor([1.0]), right=True, side="left")
        with self.assertRaisesRegex(RuntimeError, "contracted dimensions need to match"):
            dyn.tensordot(dyn.ones(2, 3), dyn.ones(2, 3), dims=1)
        with self.assertRaisesRegex(RuntimeError, "X1 and X2 must have the same number of columns"):
            dyn.cdist(dyn.ones(2, 3), dyn.ones(2, 4))
        with self.assertRaisesRegex(RuntimeError, "input and indices should have the same number of dimensions"):
            dyn.take_along_dim(dyn.ones(2, 3), dyn.tensor([0]), dim=1)

    def test_torch_names(self):
        # functions only where PyTorch has no Tensor method
        for name in ("broadcast_shapes", "broadcast_tensors", "isin", "searchsorted", "bucketize", "tensordot",
                     "cdist"):
            self.assertTrue(callable(getattr(dyn, name)), name)
            self.assertFalse(hasattr(dyn.Tensor, name), name)
        for name in ("broadcast_to", "unflatten", "count_nonzero", "take_along_dim", "masked_select", "kthvalue",
                     "quantile", "histc"):
            self.assertTrue(hasattr(dyn.Tensor, name) and callable(getattr(dyn, name)), name)


if __name__ == "__main__":
    unittest.main()
