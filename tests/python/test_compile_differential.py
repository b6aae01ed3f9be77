"""Differential test: every program runs eagerly, compiled with backend="default" and compiled
with backend="eager"; outputs, mutated inputs and the random generator's next draw must be
bitwise equal. Each program runs twice per mode (new data, same shapes) so the second run
goes through cached entries and plans.
"""
import unittest

import numpy as np

import dyn
import dyn.nn.functional as F
from compiletest import assert_same


def rng(k, salt):
    return np.random.default_rng(1000 * salt + k)


def fl(shape, k, salt, dtype=np.float32, scale=2.0):
    return dyn.tensor((rng(k, salt).standard_normal(shape) * scale).astype(dtype))


def ints(shape, k, salt, lo=-9, hi=10, nonzero=False):
    a = rng(k, salt).integers(lo, hi, shape).astype(np.int64)
    if nonzero:
        a[a == 0] = 3
    return dyn.tensor(a)


def bools(shape, k, salt):
    return dyn.tensor(rng(k, salt).random(shape) < 0.5)


# ---- the programs: (function, make_inputs(k) -> list of tensors and Python values) ----

def ew_broadcast(a, b, c):
    return ((a + b) * 3.0 - a / (b.abs() + 1.0)).exp() * 0.5 + c - 2, 1 - a, 2 / (b + 10.0), a ** 2


def unary_nan_inf(x):
    y = x.sin() + x.cos() * x.tanh() - x.sigmoid() + x.relu()
    z = x.log() + x.sqrt() - x.abs().rsqrt()  # NaN and inf for negatives and zeros
    w = x / (x * 0.0)  # 0/0 and x/0
    return y, z, w, x.clamp(-1.0, 1.0), x.maximum(z), x.minimum(-x), x.floor() + x.ceil(), z.amax(0)


def reductions(x):
    m = x.max(dim=1)
    return (x.sum(dim=1, keepdim=True), x.mean(dim=(0, 2)), x.amax(-1), x.amin(0), x.argmax(dim=2),
            m.values, m.indices, x.sum(), x.mean(), x.min(dim=0, keepdim=True).values)


def matmul(a, b, bias, v, x3):
    y = a @ b + bias
    return y, a @ v, y.t() @ y, x3 @ b, dyn.matmul(v, b)


def views(x, xt):
    a = x.t().reshape(3, 8) * 2.0
    b = x[1:, ::2] + xt[1:, 1::2]
    c = x.permute(1, 0).unsqueeze(0).squeeze(0)[2:5]
    d = x.view(2, 12).sum(1) + x.flatten()[3]
    e = x[:, 2] * x[-1, :4] + x.transpose(0, 1)[1:3].sum(0)
    f = x[0].expand(4, 6) - xt.contiguous().view(4, 6)
    return a, b, c.clone(), d, e, f


def cat_stack(a, b):
    return (dyn.cat([a, b], 0), dyn.cat([a, b.t().t() * 2.0], dim=1), dyn.stack([a, b], 2),
            dyn.stack([a.sum(0), b.sum(0)]), dyn.cat([a[:, :1], b[:, 1:]], 1))


def softmaxes(x):
    return x.softmax(-1), x.log_softmax(0), F.softmax(x * 3.0, 1), F.log_softmax(x - 100.0, dim=1)


def layer_norm(x, w, b):
    return F.layer_norm(x, (8,), w, b), F.layer_norm(x * 5.0 + 1.0, 8), F.layer_norm(x.view(4, 2, 4), (2, 4))


def cross_entropy(logits, target):
    return (F.cross_entropy(logits, target), F.cross_entropy(logits * 2.0, target, reduction="none"),
            F.cross_entropy(logits, target, reduction="sum"), F.mse_loss(logits, logits.softmax(1)))


def dropout(x):
    a = F.dropout(x, 0.25)
    dyn.manual_seed(7)
    b = F.dropout(x, 0.5)
    c = F.dropout(x, 0.5, training=False)
    return a, b, c


def random_inside(x):
    return x * dyn.randn(3, 4) + dyn.rand(4), dyn.randint(0, 5, (3, 1)), dyn.randn_like(x).sum(1)


def inplace(x, y):
    x.add_(y)
    x.mul_(2.0)
    x[0] = 1.0
    x[:, 1].fill_(3.0)
    x.sub_(0.5)
    x.div_(y.abs() + 1.0)
    v = x.t()
    v[0].add_(10.0)
    z = x.sum(1)
    y.zero_()
    return z, x * 1.0


def int_ops(a, b):
    return (a + b, a * b, a // b, a % b, a - 3, a > b, a.sum(), a.abs(), a.maximum(b), (a * 2).float() / 3,
            a.pow(2), a / b, a.sum(dim=0), -a, a.argmax())


def bool_ops(p, q, x):
    return (p & q, p | q, p ^ q, ~p, dyn.where(p, x, -x), p.sum(), p.float() * x, (x > 0).any(), (x > -10).all(),
            p.logical_and(x > 0), p == q)


def mixed_dtypes(a, b, c, m):
    return a + c, b * c, a * 0.5, a / 2, c + b, m * a, m + c, c.double() + b, a + b, (a > c) | m, a.float() - c


def breaks_in_middle(x):
    y = x * 2.0
    if y.sum() > 0:
        y = y + 1.0
    else:
        y = y - 1.0
    n = y.abs().max().item()
    values = (y / n).tolist()
    z = dyn.tensor(values) * y
    dyn.sync()
    pos = z[z > 0]
    return z, pos * 2.0, n, values, float(z.sum()), repr(z.sum() > 1e9)


def gather_index(x, idx):
    return (x.gather(1, idx), x.index_select(0, idx[:, 0]), x[idx[:, 0]], dyn.where(x > 0, x, 0.0),
            x.index_select(1, idx[0]).sum())


def mlp(x, w1, b1, w2, target):
    h = F.linear(x, w1, b1).relu()
    logits = F.linear(h, w2)
    return logits.softmax(-1), F.cross_entropy(logits, target), F.gelu(h) + F.silu(h)


def float64_chain(x, y):
    return (x * y + 1.0).exp().log() / 3.0, (x @ y.t()).tanh(), x.sum(dim=1, keepdim=True) - y


def seeded_inside(x, seed):
    dyn.manual_seed(seed)
    a = dyn.rand(3)
    dyn.manual_seed(0)
    b = dyn.rand(3)
    return a + x, b + x


def residual_inplace(x):
    h = x + 0.0
    skip = x + 0.0
    h.mul_(2.0)
    h.add_(1.0)
    return h + skip


PROGRAMS = {
    "ew_broadcast": (ew_broadcast, lambda k: [fl((4, 1), k, 1), fl((1, 5), k, 2), fl((5,), k, 3)]),
    "unary_nan_inf": (unary_nan_inf, lambda k: [dyn.cat([fl((6,), k, 4), dyn.tensor([0.0, -0.0, 1e-30])])]),
    "reductions": (reductions, lambda k: [fl((3, 4, 5), k, 5)]),
    "matmul": (matmul, lambda k: [fl((3, 4), k, 6), fl((4, 5), k, 7), fl((5,), k, 8), fl((4,), k, 9),
                                  fl((2, 3, 4), k, 10)]),
    "views": (views, lambda k: [fl((4, 6), k, 11), fl((6, 4), k, 12).t()]),
    "cat_stack": (cat_stack, lambda k: [fl((2, 3), k, 13), fl((2, 3), k, 14)]),
    "softmaxes": (softmaxes, lambda k: [fl((3, 5), k, 15, scale=4.0)]),
    "layer_norm": (layer_norm, lambda k: [fl((4, 8), k, 16), fl((8,), k, 17), fl((8,), k, 18)]),
    "cross_entropy": (cross_entropy, lambda k: [fl((5, 4), k, 19), ints((5,), k, 20, 0, 4)]),
    "dropout": (dropout, lambda k: [fl((4, 6), k, 21)]),
    "random_inside": (random_inside, lambda k: [fl((3, 4), k, 22)]),
    "inplace": (inplace, lambda k: [fl((3, 4), k, 23), fl((4,), k, 24)]),
    "int_ops": (int_ops, lambda k: [ints((6,), k, 25), ints((6,), k, 26, nonzero=True)]),
    "bool_ops": (bool_ops, lambda k: [bools((5,), k, 27), bools((5,), k, 28), fl((5,), k, 29)]),
    "mixed_dtypes": (mixed_dtypes, lambda k: [ints((4,), k, 30), fl((4,), k, 31, np.float64), fl((4,), k, 32),
                                              bools((4,), k, 33)]),
    "breaks_in_middle": (breaks_in_middle, lambda k: [fl((5,), k, 34) + (3.0 if k == 0 else -3.0)]),
    "gather_index": (gather_index, lambda k: [fl((4, 5), k, 35), ints((4, 2), k, 36, 0, 4)]),
    "mlp": (mlp, lambda k: [fl((4, 3), k, 37), fl((5, 3), k, 38), fl((5,), k, 39), fl((2, 5), k, 40),
                            ints((4,), k, 41, 0, 2)]),
    "float64_chain": (float64_chain, lambda k: [fl((3, 4), k, 42, np.float64), fl((3, 4), k, 43, np.float64)]),
    "seeded_inside": (seeded_inside, lambda k: [fl((3,), k, 44), k]),
    "residual_inplace": (residual_inplace, lambda k: [fl((4,), k, 45)]),
}

RUNS = 2


def run_mode(fn, make):
    """Runs fn RUNS times on fresh inputs; returns [(outputs, inputs after, next random draw)]."""
    results = []
    for k in range(RUNS):
        dyn.manual_seed(500 + k)
        args = make(k)
        out = fn(*args)
        results.append((out, [a for a in args if isinstance(a, dyn.Tensor)], dyn.rand(4)))
    return results


class TestDifferential(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def check_program(self, name):
        fn, make = PROGRAMS[name]
        want = run_mode(fn, make)
        for backend in ("default", "eager"):
            with self.subTest(backend=backend):
                cf = dyn.compile(fn, backend=backend)
                got = run_mode(cf, make)
                for k in range(RUNS):
                    assert_same(self, want[k], got[k], f"{name} backend={backend} run {k}")
                graphs = dyn.debug.graphs(cf)
                self.assertGreater(len(graphs), 0, "nothing was captured")
                self.assertGreater(sum(len(g.ops) for g in graphs), 0)
                if name != "breaks_in_middle":  # its two runs take different branches
                    self.assertTrue(all(g.calls == RUNS for g in graphs), [(g.id, g.calls) for g in graphs])


def _add_test(name):
    setattr(TestDifferential, f"test_{name}", lambda self: self.check_program(name))


for _name in PROGRAMS:
    _add_test(_name)


class TestProgramList(unittest.TestCase):
    def test_enough_programs(self):
        self.assertGreaterEqual(len(PROGRAMS), 15)

    def test_breaks_program_really_breaks(self):
        dyn.debug.reset()
        cf = dyn.compile(breaks_in_middle)
        cf(*PROGRAMS["breaks_in_middle"][1](0))
        kinds = [e["break_kind"] for e in dyn.debug.events("graph_break", cf)]
        self.assertEqual(kinds, ["data_dependent_branch", "item", "tolist", "explicit_sync", "unsupported_op",
                                 "item", "print"])


if __name__ == "__main__":
    unittest.main()
