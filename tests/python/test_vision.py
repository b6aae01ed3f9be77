"""torchvision's transforms, datasets and utils under dyn against torchvision 0.29 with PyTorch 2.15
(torch_reference/vision.json, recorded by torch_reference/record.py from vision_cases.py): PIL
images and tensors through each transform, MNIST/CIFAR read from files written in their formats,
ImageFolder, FakeData, make_grid, and the errors."""
import json
import os
import sys
import tempfile
import unittest

import dyn
import torchvision  # dyn.compat.torchvision, under dynrepl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from reference import assert_as_recorded, close  # noqa: E402
from vision_cases import cases, encode, write_mnist  # noqa: E402


# A tensor resized up with antialias=True (Resize's default): PyTorch runs its antialiasing kernel,
# which computes bilinear's weights another way; dyn runs bilinear interpolation. Within 2e-6.
CLOSE = {"resize_tensor_up": 2e-6}


class TestAgainstTorchvision(unittest.TestCase):
    def test_every_case_as_torchvision_0_29(self):
        with open(os.path.join(HERE, "torch_reference", "vision.json")) as f:
            recorded = json.load(f)["cases"]
        got = {k: encode(dyn, v) for k, v in cases(dyn, torchvision).items()}
        known = {}
        for k, rel in CLOSE.items():
            self.assertNotEqual(got[k], recorded[k], f"{k} now equals torchvision's: take it off CLOSE")
            self.assertTrue(close(got[k], recorded[k], rel, floor=1.0), k)  # pixels in [0, 1]
            known[k] = got[k]
        assert_as_recorded(self, "vision.json", lambda torch: cases(torch, torchvision), encode, dyn, known)


class TestDatasetsDyn(unittest.TestCase):
    def test_gzipped_mnist_files_are_read_too(self):
        import gzip

        with tempfile.TemporaryDirectory() as root:
            write_mnist(root)
            raw = os.path.join(root, "MNIST", "raw")
            plain = torchvision.datasets.MNIST(root)
            for name in os.listdir(raw):
                with open(os.path.join(raw, name), "rb") as f, gzip.open(os.path.join(raw, name + ".gz"), "wb") as g:
                    g.write(f.read())
                os.remove(os.path.join(raw, name))
            gz = torchvision.datasets.MNIST(root)
            self.assertTrue(dyn.equal(plain.data, gz.data) and dyn.equal(plain.targets, gz.targets))

    def test_download_says_where_the_files_go(self):
        with tempfile.TemporaryDirectory() as root:
            with self.assertRaisesRegex(RuntimeError, "does not download.*train-images-idx3-ubyte.*MNIST/raw"):
                torchvision.datasets.MNIST(root, download=True)
            with self.assertRaisesRegex(RuntimeError, "does not download.*data_batch_1"):
                torchvision.datasets.CIFAR10(root, download=True)

    def test_a_training_loop_over_mnist_files(self):
        with tempfile.TemporaryDirectory() as root:
            write_mnist(root, n=16)
            t = torchvision.transforms
            data = torchvision.datasets.MNIST(root, transform=t.Compose([t.ToTensor(), t.Normalize((0.1307,),
                                                                                                   (0.3081,))]))
            loader = dyn.utils.data.DataLoader(data, batch_size=4, shuffle=True)
            model = dyn.nn.Sequential(dyn.nn.Flatten(), dyn.nn.Linear(784, 10))
            opt = dyn.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                self.assertEqual((tuple(x.shape), x.dtype, y.dtype), ((4, 1, 28, 28), dyn.float32, dyn.int64))
                opt.zero_grad()
                dyn.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()


if __name__ == "__main__":
    unittest.main()
