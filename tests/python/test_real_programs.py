"""PyTorch programs as users write them (scripts/examples/pytorch and the seed programs in
scripts/examples/seeds) run unchanged under dynrepl with `import torch`, and their compiled runs
equal their eager runs bit for bit: every loss, every final parameter and buffer, every sample."""
import os
import subprocess
import sys
import unittest

import torch  # dyn, under dynrepl

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts", "examples", "pytorch"))
DYNREPL = os.environ.get("DYNREPL", os.path.join(REPO, "build", "repl", "dynrepl"))


def same_state(tc, a, b):
    tc.assertEqual(list(a), list(b))
    for k in a:
        tc.assertEqual(a[k].dtype, b[k].dtype, k)
        tc.assertTrue(torch.equal(a[k], b[k]), f"{k} differs between eager and compiled")


class TestTorchIsDyn(unittest.TestCase):
    def test_import_torch_gives_dyn(self):
        import dyn

        self.assertIs(torch, dyn)


class TestPrograms(unittest.TestCase):
    def test_gpt_compiled_equals_eager(self):
        import gpt

        eager = gpt.main(compile=False, max_iters=4, verbose=False)
        torch.debug.reset()
        compiled = gpt.main(compile=True, max_iters=4, verbose=False)
        self.assertEqual(eager[0], compiled[0])
        same_state(self, eager[1], compiled[1])
        self.assertEqual(eager[2].tolist(), compiled[2].tolist())
        c = torch.debug.counters()
        self.assertEqual((c["compiles"], c["recompiles"], c["cache_hits"]), (1, 0, 3), c)
        self.assertLess(eager[0][-1], eager[0][0])  # it learns

    def test_cnn_compiled_equals_eager(self):
        import cnn_mnist

        eager = cnn_mnist.main(compile=False, epochs=1, n_train=96, n_test=64, verbose=False)
        compiled = cnn_mnist.main(compile=True, epochs=1, n_train=96, n_test=64, verbose=False)
        self.assertEqual(eager[0], compiled[0])
        self.assertEqual(eager[1], compiled[1])
        same_state(self, eager[2], compiled[2])
        same_state(self, eager[2], eager[3])  # torch.save / torch.load round trip

    def test_lstm_compiled_equals_eager(self):
        import lstm_lm

        eager = lstm_lm.main(compile=False, epochs=1, verbose=False)
        compiled = lstm_lm.main(compile=True, epochs=1, verbose=False)
        self.assertEqual(eager[0], compiled[0])
        same_state(self, eager[1], compiled[1])
        self.assertEqual(eager[2], compiled[2])


class TestSeedPrograms(unittest.TestCase):
    """The torch.compile / torch_xla programs of the seed documents, run as scripts."""

    def run_script(self, name):
        path = os.path.join(REPO, "scripts", "examples", "seeds", name)
        r = subprocess.run([DYNREPL, "--batch", path], capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_openxla_add(self):
        out = self.run_script("openxla_add.py")
        self.assertTrue(out.startswith("tensor(["), out)

    def test_resnet18_inference(self):
        self.assertIn("dyn.Size([2, 1000])", self.run_script("resnet18_inference.py"))

    def test_resnet18_training(self):
        self.assertIn("dyn.Size([2, 1000])", self.run_script("resnet18_training.py"))

    def test_eager_compile(self):
        out = self.run_script("eager_compile.py")
        self.assertIn("dyn.Size([2, 1000])", out)
        losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step")]
        self.assertEqual(len(losses), 3)


if __name__ == "__main__":
    unittest.main()
