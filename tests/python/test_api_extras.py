"""Functions added to dyn's namespace, Tensor methods, and nn.functional losses and activations,
against PyTorch 2.15 (torch_reference/api.json, recorded by torch_reference/record.py from
api_cases.py); then compiled equal to eager, bit for bit."""
import json
import os
import sys
import unittest

import dyn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from api_cases import cases, encode  # noqa: E402
from reference import assert_as_recorded, close  # noqa: E402


# Where dyn's float32 kernels round differently than PyTorch's (not these functions' formulas): the
# vectorized cos of the windows, softmax over a leading dim, bilinear interpolation's source
# coordinates with align_corners=True. Compared within 1e-6 of each value (of 1 below 1).
CLOSE = {"windows", "softmax2d", "upsampling_bilinear2d"}
# Composites whose float64 results PyTorch rounds in another order (its fused kernels): within 1e-12.
ORDER = {"cov", "corrcoef", "gaussian_nll_loss", "logaddexp2", "logcumsumexp", "logit", "multilabel_soft_margin_loss",
         "poisson_nll_loss", "sinc", "soft_margin_loss", "triplet_margin_loss"}


class TestAgainstPyTorch(unittest.TestCase):
    def test_every_case_as_pytorch_2_15(self):
        with open(os.path.join(HERE, "torch_reference", "api.json")) as f:
            recorded = json.load(f)["cases"]
        got = {k: encode(dyn, v) for k, v in cases(dyn).items()}
        known = {}
        for names, rel, floor in ((CLOSE, 1e-6, 1.0), (ORDER, 1e-12, 1e-12)):
            for k in names:
                with self.subTest(case=k):
                    self.assertTrue(close(got[k], recorded[k], rel, floor), (got[k], recorded[k]))
                known[k] = got[k]
        assert_as_recorded(self, "api.json", cases, encode, dyn, known)


class TestCompiled(unittest.TestCase):
    def test_compiled_equals_eager(self):
        eager = {k: encode(dyn, v) for k, v in cases(dyn).items()}
        compiled = {k: encode(dyn, v) for k, v in cases(dyn, wrap=dyn.compile).items()}
        for k in eager:
            with self.subTest(case=k):
                self.assertEqual(compiled[k], eager[k])


if __name__ == "__main__":
    unittest.main()
