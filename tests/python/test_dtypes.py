"""Every dtype against PyTorch 2.15 (torch_reference/dtypes.json, recorded by
torch_reference/record.py from the calls of dtype_cases.py): creation, reprs, promotion, integer
wrap-around, casts, the 16-bit floats' math, reductions and errors; then compiled equal to eager,
bit for bit, for each dtype."""
import os
import sys
import unittest

import numpy as np

import dyn
from compiletest import same_bits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from dtype_cases import FLOATS, INTS, cases, encode  # noqa: E402
from reference import assert_as_recorded  # noqa: E402



# Where dyn differs from PyTorch 2.15 on purpose, and what it does instead.
KNOWN_DIFFERENCES = {
    "numpy_uint16": ["error", "TypeError", "can't convert an array with buffer format 'H' to a dyn tensor"],
}


class TestAgainstPyTorch(unittest.TestCase):
    def test_every_case_as_pytorch_2_15(self):
        assert_as_recorded(self, "dtypes.json", cases, encode, dyn, KNOWN_DIFFERENCES)


def _numeric(x, y, s):
    a = x * y + x
    b = dyn.maximum(a - y, x).clamp(-50, 50)
    c = dyn.where(a > b, a, b * 2)
    d = dyn.cat([c, x.abs()]).sum(0, keepdim=True) + c.amax(0) + c[dyn.tensor([1, 0])].cumsum(0)
    return a, b, c, d, x @ y.t(), (c // 3) % 5, c.exp(), (a / y) * s, x.sum(), d.argmax(), x.to(dyn.int16) + 1


class TestCompiledEqualsEager(unittest.TestCase):
    """Every dtype through a compiled function: replayed graphs, plans and lifted calls use the
    kernels eager ops use, so each result has eager's bits."""

    def test_every_numeric_dtype(self):
        for name in INTS + FLOATS:
            d = getattr(dyn, name)
            g = dyn.compile(_numeric)
            for seed in range(3):
                r = np.random.default_rng(seed)
                x = dyn.tensor(r.integers(-9, 9, (3, 4)), dtype=d) if name != "uint8" else \
                    dyn.tensor(r.integers(0, 9, (3, 4)), dtype=d)
                if name in FLOATS:
                    x = x / 3 + dyn.tensor(r.standard_normal((3, 4)), dtype=d)
                y = (x.abs() + 1).to(d)
                want, got = _numeric(x, y, 0.5 + seed), g(x, y, 0.5 + seed)
                for k, (a, b) in enumerate(zip(want, got)):
                    with self.subTest(dtype=name, seed=seed, result=k):
                        self.assertEqual(a.dtype, b.dtype)
                        self.assertTrue(same_bits(a, b), (a, b))

    def test_half_chain_is_rounded_at_every_op(self):
        # A fused loop would keep float32 between the ops; each op rounds to float16 instead, in
        # eager and compiled alike, so (x * 3) * 3 is not x * 9.
        def f(x):
            return ((x * 3) * 3).exp() - x

        g = dyn.compile(f)
        x = dyn.tensor([0.1, 0.7, 1.3], dtype=dyn.float16)
        self.assertTrue(same_bits(f(x), g(x)))
        self.assertTrue(same_bits(g(x), g(x)))
        step = ((x.float() * 3).half().float() * 3).half().float().exp().half().float() - x.float()
        self.assertEqual(f(x).tolist(), step.half().tolist())

    def test_bool_and_mixed(self):
        def f(m, x, i):
            return m & (x > 0), (m.to(dyn.uint8) + i), x.to(dyn.bfloat16) * 2 + i, (x.half() + x.bfloat16()).dtype

        g = dyn.compile(f)
        m = dyn.tensor([True, False, True])
        x = dyn.tensor([0.5, -1.0, 2.0])
        i = dyn.tensor([1, 2, 3], dtype=dyn.int32)
        for a, b in zip(f(m, x, i)[:3], g(m, x, i)[:3]):
            self.assertEqual(a.dtype, b.dtype)
            self.assertTrue(same_bits(a, b))
        self.assertEqual(g(m, x, i)[3], dyn.float32)

    def test_training_in_bfloat16(self):
        # A model cast with .to(bfloat16) trains: gradients come in the parameters' dtype.
        dyn.manual_seed(0)
        model = dyn.nn.Sequential(dyn.nn.Linear(4, 8), dyn.nn.GELU(), dyn.nn.Linear(8, 2)).to(dyn.bfloat16)
        opt = dyn.optim.SGD(model.parameters(), lr=0.1)
        x = dyn.randn(16, 4).to(dyn.bfloat16)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = model(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.assertTrue(all(p.grad.dtype == dyn.bfloat16 for p in model.parameters()))
        self.assertLess(losses[-1], losses[0])


class TestNumpy(unittest.TestCase):
    def test_round_trips_share_memory(self):
        for name in INTS + ["float16", "float32", "float64", "bool"]:
            a = np.arange(6).reshape(2, 3).astype(name)
            t = dyn.from_numpy(a)
            self.assertEqual(str(t.dtype), "dyn." + name)
            back = t.numpy()
            self.assertEqual(back.dtype, a.dtype)
            a[0, 0] = 1
            self.assertEqual(back[0, 0], a[0, 0])


class TestViewDtype(unittest.TestCase):
    def test_shares_memory_and_refuses_other_sizes(self):
        h = dyn.tensor([1.0, -2.0], dtype=dyn.bfloat16)
        bits = h.view(dyn.int16)
        self.assertEqual(bits.tolist(), [0x3F80, -16384])  # 1.0 and -2.0 in bfloat16
        bits[0] = 0x4000  # 2.0
        self.assertEqual(h.tolist(), [2.0, -2.0])
        with self.assertRaisesRegex(RuntimeError, r"view\(dtype\): .* same size only .*float32 is 4\)"):
            h.view(dyn.float32)
        self.assertIs(h.view(dyn.bfloat16).dtype, dyn.bfloat16)

    def test_in_a_compiled_function_is_a_graph_break(self):
        def f(x):
            return (x * 2).view(dyn.int16) + 1

        g = dyn.compile(f)
        x = dyn.tensor([1.0, 3.0], dtype=dyn.float16)
        for _ in range(2):
            self.assertTrue(same_bits(f(x), g(x)))
        self.assertEqual(len(dyn.debug.events("graph_break", g)), 1)


if __name__ == "__main__":
    unittest.main()
