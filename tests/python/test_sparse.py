"""Sparse COO tensors (python/dyn/sparse.py; stored densely): to_sparse, sparse_coo_tensor, the
products, autograd through them and compiled regions, and PyTorch 2.15's reprs and values (the
expected strings and lists below were printed by PyTorch 2.15 for the same calls)."""
import unittest

import torch  # dyn, under dynrepl


class TestSparse(unittest.TestCase):
    def test_to_sparse_and_back(self):
        x = torch.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
        s = x.to_sparse()
        self.assertTrue(s.is_sparse)
        self.assertEqual(repr(s.layout), "torch.sparse_coo")
        self.assertEqual(repr(x.layout), "torch.strided")
        self.assertEqual(s._nnz(), 3)
        self.assertEqual(s.indices().tolist(), [[0, 1, 1], [1, 0, 2]])
        self.assertEqual(s.values().tolist(), [2.0, 1.0, 3.0])
        self.assertTrue(torch.equal(s.to_dense(), x))
        self.assertFalse(s.to_dense().is_sparse)
        self.assertEqual(repr(s), "tensor(indices=tensor([[0, 1, 1],\n                       [1, 0, 2]]),\n"
                                  "       values=tensor([2., 1., 3.]),\n       size=(2, 3), nnz=3, "
                                  "layout=torch.sparse_coo)")

    def test_coo_tensor_sums_duplicates(self):
        a = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), torch.tensor([1., 2, 3, 4]), (2, 3))
        self.assertEqual(a.coalesce().indices().tolist(), [[0, 1, 1], [2, 0, 2]])
        self.assertEqual(a.coalesce().values().tolist(), [5.0, 2.0, 3.0])
        self.assertEqual(a.to_dense().tolist(), [[0.0, 0.0, 5.0], [2.0, 0.0, 3.0]])
        self.assertEqual(torch.sparse_coo_tensor(torch.tensor([[1, 3]]), torch.tensor([5, 6])).to_dense().tolist(),
                         [0, 5, 0, 6])
        i = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.ones(2), (2,), dtype=torch.int64)
        self.assertEqual((i.dtype, i.to_dense().tolist()), (torch.int64, [1, 1]))

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "indices and values must have same nnz, but got nnz from indices: 2, "
                                                  "nnz from values: 3"):
            torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.ones(3), (2,))
        with self.assertRaisesRegex(RuntimeError, "size is inconsistent with indices: for dim 0, size is 2 but found "
                                                  "index 2"):
            torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.ones(2), (2,))
        with self.assertRaisesRegex(NotImplementedError, "sparse COO tensors only"):
            torch.ones(2).to_sparse(layout="csr")

    def test_products_and_their_gradients(self):
        x = torch.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]], requires_grad=True)
        d = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        s = x.to_sparse()
        self.assertEqual(s.grad_fn.name(), "ToSparseBackward1")
        for y in (torch.mm(s, d), torch.spmm(s, d), s @ d, torch.sparse.mm(s, d)):
            self.assertFalse(y.is_sparse)
            self.assertEqual(y.tolist(), [[6.0, 8.0], [16.0, 20.0]])
        (s @ d).sum().backward()
        self.assertEqual(x.grad.tolist(), [[3.0, 7.0, 11.0], [3.0, 7.0, 11.0]])
        self.assertEqual(d.grad.tolist(), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
        self.assertEqual((torch.eye(3)[:2] + s.detach()).tolist(), [[1.0, 2.0, 0.0], [1.0, 1.0, 3.0]])
        v = s.values()
        self.assertEqual(v.grad_fn.name(), "ValuesBackward0")

    def test_compiled_graph_convolution_equals_eager(self):
        torch.manual_seed(0)
        adj = (torch.rand(6, 6) > 0.6).float() + torch.eye(6)
        a = adj.to_sparse()
        w = torch.randn(4, 3, requires_grad=True)
        feats = torch.randn(6, 4)

        def layer(a, x, w):
            return torch.spmm(a, torch.mm(x, w)).relu().sum()

        outs = []
        for f in (layer, torch.compile(layer)):
            w.grad = None
            y = f(a, feats, w)
            y.backward()
            outs.append((y.item(), w.grad.tolist()))
        self.assertEqual(outs[0], outs[1])
        self.assertTrue(a.to(torch.float64).is_sparse)


if __name__ == "__main__":
    unittest.main()
