"""softmax, log_softmax and layer_norm give the same bits at AVX-512 width and at AVX2 width (Note
[rows at two widths], core/ops/rows.h), and so do gelu, sigmoid and silu (vmath::Formula, one
vector function each at either width): this process (AVX-512 where the CPU has it) against a
child process held to AVX2 by DYN_VMATH=avx2, over row lengths around every vector and lane
boundary, rows that stream (over 16 MiB) and values with NaN, infinities and signed zeros. On
an AVX2-only machine both sides are AVX2 and the test still checks determinism across processes."""
import hashlib
import math
import os
import subprocess
import sys
import unittest

import numpy as np

import dyn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("DYNREPL") or os.path.join(REPO, "build", "repl", "dynrepl")

LENGTHS = [1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 40, 47, 48, 63, 64, 65, 100, 127, 128, 129, 255, 1000, 1024,
           1031, 4096]


def inputs():
    """(name, tensor) pairs: random rows of every length, and rows of special values."""
    g = dyn.Generator().manual_seed(7)
    for n in LENGTHS:
        yield f"randn_{n}", dyn.randn(3, n, generator=g) * 4
    special = dyn.tensor([[0.0, -0.0, 1.0, -1.0] * 5, [-0.0] * 20, [float("-inf")] * 19 + [0.0],
                          [float("inf")] + [1.0] * 19, [float("nan")] + [1.0] * 19, [80.0, -80.0] * 10,
                          [1e-30, -1e30] * 10])
    yield "special", special
    # large enough to take the streaming path (over 16 MiB out, 32-byte rows)
    yield "streamed", dyn.randn(4200, 1024, generator=g)


def digest():
    """One hash per (input, function) of the results' bytes, as text lines."""
    lines = []
    for name, x in inputs():
        n = x.shape[-1]
        w = dyn.linspace(-2.0, 2.0, n)
        b = dyn.linspace(1.0, -1.0, n)
        outs = {"softmax": dyn.softmax(x, -1), "log_softmax": dyn.log_softmax(x, -1),
                "layer_norm": dyn.nn.functional.layer_norm(x, (n,)),
                "layer_norm_wb": dyn.nn.functional.layer_norm(x, (n,), w, b),
                "layer_norm_w": dyn.nn.functional.layer_norm(x, (n,), w, None),
                "gelu": dyn.nn.functional.gelu(x), "sigmoid": dyn.sigmoid(x), "silu": dyn.nn.functional.silu(x)}
        for f, y in outs.items():
            lines.append(f"{name} {f} {hashlib.sha256(y.numpy().tobytes()).hexdigest()[:16]}")
    return "\n".join(lines)


class TestRowsAtTwoWidths(unittest.TestCase):
    def test_avx2_child_gives_the_same_bits(self):
        here = digest()
        child = subprocess.run([BIN, "--batch", os.path.abspath(__file__), "--print-digest"], capture_output=True,
                               text=True, timeout=300, env=dict(os.environ, DYN_VMATH="avx2", NO_COLOR="1"))
        self.assertEqual(child.returncode, 0, child.stderr)
        theirs = child.stdout.strip()
        for a, b in zip(here.splitlines(), theirs.splitlines()):
            self.assertEqual(a, b)
        self.assertEqual(len(here.splitlines()), len(theirs.splitlines()))

    def test_formulas_are_their_steps(self):
        """gelu, sigmoid and silu in one vector pass give the bits of their steps as separate ops."""
        for name, x in inputs():
            with self.subTest(name):
                c = float(np.float32(math.sqrt(0.5)))
                for got, steps in ((dyn.nn.functional.gelu(x), (0.5 * x) * (1 + dyn.erf(x * c))),
                                   (dyn.sigmoid(x), 1 / (1 + dyn.exp(-x))),
                                   (dyn.nn.functional.silu(x), x / (1 + dyn.exp(-x)))):
                    self.assertTrue(np.array_equal(got.numpy().view(np.uint32), steps.numpy().view(np.uint32)))

    def test_softmax_of_signed_zeros_is_uniform(self):
        """The maximum of a row of zeros of both signs is +0 whichever lane saw which first."""
        x = dyn.tensor([[-0.0, 0.0] * 20, [0.0, -0.0] * 20])
        self.assertTrue(bool((dyn.log_softmax(x, -1) == -dyn.log(dyn.tensor(40.0))).all()))


if __name__ == "__main__":
    if "--print-digest" in sys.argv:
        print(digest())
    else:
        unittest.main()
