"""torch.linalg's LAPACK functions (python/dyn/_lapack.py) against PyTorch 2.15
(torch_reference/linalg.json, recorded by torch_reference/record.py from linalg_cases.py): values,
gradients (first and second order) and errors; then compiled equal to eager, bit for bit."""
import os
import sys
import unittest

import dyn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from linalg_cases import cases, encode  # noqa: E402
from reference import assert_compiled_equals_eager, assert_like_recorded, close  # noqa: E402

# PyTorch's wheels call MKL's LAPACK, dyn Debian's OpenBLAS: the same factorizations, rounded in
# another order. float64 agrees to 1e-9 of each value (cond and the matrix powers amplify a few
# ulps), float32 to 1e-4.
REL = {"float64": 1e-9, "float32": 1e-4}


def _close(got, want, rel):
    """close(), with each tensor's tolerance chosen by its dtype."""
    if isinstance(got, list) and len(got) == 3 and isinstance(got[0], str) and got[0] in REL:
        return isinstance(want, list) and got[:2] == want[:2] and close(got[2], want[2], REL[got[0]])
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(_close(a, b, rel) for a, b in zip(got, want))
    return close(got, want, rel)


class TestAgainstPyTorch(unittest.TestCase):
    def test_every_case_as_pytorch_2_15(self):
        assert_like_recorded(self, "linalg.json", cases, encode, dyn, lambda got, want, name: _close(got, want, 1e-9))

    def test_lin_alg_error_is_a_runtime_error(self):
        self.assertTrue(issubclass(dyn.linalg.LinAlgError, RuntimeError))
        with self.assertRaises(dyn.linalg.LinAlgError):
            dyn.linalg.inv(dyn.zeros(2, 2))


class TestCompiled(unittest.TestCase):
    def test_compiled_equals_eager(self):
        assert_compiled_equals_eager(self, dyn, cases, encode)

    def test_a_call_in_a_region_is_a_graph_break_naming_it(self):
        @dyn.compile
        def f(a, b):
            return dyn.linalg.solve(a @ a.T + dyn.eye(3), b * 2) + 1

        a, b = dyn.randn(3, 3), dyn.randn(3)
        self.assertTrue(dyn.equal(f(a, b), dyn.linalg.solve(a @ a.T + dyn.eye(3), b * 2) + 1))
        breaks = dyn.debug.events("graph_break")
        self.assertTrue(any("torch.linalg.solve (LAPACK)" in str(e) for e in breaks), breaks)


if __name__ == "__main__":
    unittest.main()
