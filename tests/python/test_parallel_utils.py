"""torch.distributed for one process, torch.nn.parallel (DataParallel, DistributedDataParallel)
and torchvision.utils (make_grid, save_image): what PyTorch 2.15 and torchvision do, in one
process on the CPU (behaviour checked against them when written: the same errors, state_dict keys,
grids and PNG bytes)."""
import os
import tempfile
import unittest

import numpy as np

import torch  # dyn, under dynrepl
import torch.distributed as dist
import torchvision.utils as vu
from torch.nn.parallel import DataParallel, DistributedDataParallel as DDP

NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


class TestDistributed(unittest.TestCase):
    def tearDown(self):
        if dist.is_initialized():
            dist.destroy_process_group()

    def test_without_a_group_calls_raise_pytorchs_error(self):
        self.assertTrue(dist.is_available())
        self.assertFalse(dist.is_initialized())
        for f in (dist.get_rank, dist.get_world_size, dist.barrier, lambda: dist.all_reduce(torch.ones(1)),
                  lambda: DDP(torch.nn.Linear(2, 2))):
            with self.assertRaises(ValueError) as cm:
                f()
            self.assertEqual(str(cm.exception), NOT_INIT)

    def test_a_group_of_one(self):
        dist.init_process_group("gloo", rank=0, world_size=1, init_method="tcp://127.0.0.1:29500")
        self.assertEqual((dist.get_rank(), dist.get_world_size(), dist.get_backend()), (0, 1, "gloo"))
        t = torch.tensor([1.0, 2.0])
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
            dist.all_reduce(t, op=op)
        self.assertEqual(t.tolist(), [1.0, 2.0])
        out = [torch.zeros(2)]
        self.assertTrue(dist.all_gather(out, t, async_op=True).wait())
        self.assertEqual(out[0].tolist(), [1.0, 2.0])
        objs = [None]
        dist.all_gather_object(objs, {"a": 1})
        self.assertEqual(objs, [{"a": 1}])
        with self.assertRaisesRegex(ValueError, "twice"):
            dist.init_process_group("gloo", rank=0, world_size=1)
        dist.destroy_process_group()
        self.assertFalse(dist.is_initialized())

    def test_a_larger_world_says_what_to_do(self):
        with self.assertRaisesRegex(RuntimeError, "one process.*world_size=2"):
            dist.init_process_group("gloo", rank=0, world_size=2)
        with self.assertRaisesRegex(RuntimeError, "NCCL is only supported with GPUs"):
            dist.init_process_group("nccl", rank=0, world_size=1)
        self.assertFalse(dist.is_initialized())


class TestParallel(unittest.TestCase):
    def test_data_parallel_wraps_the_module(self):
        m = torch.nn.Linear(2, 3)
        d = DataParallel(m)
        self.assertEqual(list(d.state_dict()), ["module.weight", "module.bias"])
        x = torch.ones(4, 2)
        self.assertTrue(torch.equal(d(x), m(x)))
        self.assertTrue(repr(d).startswith("DataParallel(\n  (module): Linear(in_features=2, out_features=3"))

    def test_ddp_trains_as_the_module_does(self):
        dist.init_process_group("gloo", rank=0, world_size=1)
        try:
            torch.manual_seed(0)
            a = torch.nn.Linear(3, 1)
            b = torch.nn.Linear(3, 1)
            b.load_state_dict(a.state_dict())
            ddp = DDP(b)
            x = torch.randn(8, 3)
            for model, params in ((a, a.parameters()), (ddp, ddp.parameters())):
                opt = torch.optim.SGD(params, lr=0.1)
                for _ in range(3):
                    opt.zero_grad()
                    model(x).pow(2).mean().backward()
                    opt.step()
            self.assertTrue(torch.equal(a.weight, b.weight))
            self.assertEqual(list(ddp.state_dict()), ["module.weight", "module.bias"])
            with ddp.no_sync():
                self.assertFalse(ddp.require_backward_grad_sync)
            self.assertTrue(ddp.require_backward_grad_sync)
        finally:
            dist.destroy_process_group()


class TestVisionUtils(unittest.TestCase):
    def test_grid_layout(self):
        x = torch.arange(5 * 3 * 2 * 2, dtype=torch.float32).reshape(5, 3, 2, 2)
        g = vu.make_grid(x, nrow=3, padding=1, pad_value=-1.0)
        self.assertEqual(tuple(g.shape), (3, 2 * 3 + 1, 3 * 3 + 1))
        # image k sits at row k // 3, column k % 3, after `padding` pixels; the rest is pad_value
        for k in range(5):
            r, c = k // 3, k % 3
            self.assertTrue(torch.equal(g[:, 1 + 3 * r:3 + 3 * r, 1 + 3 * c:3 + 3 * c], x[k]))
        self.assertTrue(bool((g[:, 4:6, 7:9] == -1).all()))  # the sixth cell is empty
        self.assertEqual(float((g == -1).sum()), 3 * (7 * 10 - 5 * 4))

    def test_one_channel_normalize_and_single_image(self):
        x = torch.linspace(0, 1, 2 * 1 * 3 * 3).reshape(2, 1, 3, 3)
        g = vu.make_grid(x, normalize=True, value_range=(0.25, 0.75), padding=0)
        self.assertEqual(tuple(g.shape), (3, 3, 6))
        self.assertEqual(float(g.min()), 0.0)
        self.assertEqual(float(g.max()), 1.0)
        self.assertTrue(torch.equal(vu.make_grid(x[0]), torch.cat([x[0]] * 3)))  # one image: no padding

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "tensor or list of tensors expected"):
            vu.make_grid(np.zeros((2, 2)))
        with self.assertRaisesRegex(TypeError, "value_range has to be a tuple"):
            vu.make_grid(torch.rand(2, 3, 2, 2), normalize=True, value_range=[0, 1])

    def test_save_image_writes_the_png_torchvision_writes(self):
        from PIL import Image

        x = torch.linspace(0, 1, 5 * 3 * 4 * 6).reshape(5, 3, 4, 6)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "grid.png")
            vu.save_image(x, path, nrow=2)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            a = np.asarray(Image.open(path))
        self.assertEqual((a.shape, a.dtype), ((20, 18, 3), np.uint8))
        # the values torchvision's rounding gives (x * 255 + 0.5, truncated): torchvision 0.29 wrote
        # these same bytes for this input
        self.assertEqual(int(a.sum()), 45900)
        self.assertEqual(a[3, 3].tolist(), [5, 22, 39])
        want = (x[0] * 255 + 0.5).clamp(0, 255).to(torch.uint8).permute(1, 2, 0).numpy()
        self.assertTrue(np.array_equal(a[2:6, 2:8], want))


if __name__ == "__main__":
    unittest.main()
