"""The fast backend: vector math and fused elementwise loops.

Every pattern a fused step handles runs compiled and eagerly and must agree bit for bit, at one
and at two threads, with sizes that cross block and thread-chunk boundaries; the plans say what
fused (step counts read from Graph.plan()).
"""
import math
import re
import unittest

import numpy as np

import dyn
from compiletest import assert_same

BIG = 70000  # more than two thread chunks (32768) and not a multiple of a block (512)


def fl(shape, seed, dtype=dyn.float32, scale=3.0):
    g = np.random.default_rng(seed)
    return dyn.tensor((g.standard_normal(shape) * scale).astype(np.float64)).to(dtype)


def steps(fn):
    """{kind: count} of the steps of fn's newest graph, and the plan text."""
    plan = dyn.debug.graphs(fn)[-1].plan()
    kinds = re.findall(r"^step +\d+ +(\w+)", plan, re.M)
    return {k: kinds.count(k) for k in set(kinds)}, plan


def chain(x, w, b):
    return (x * w + b).tanh() * 0.5 + x


def activations(x):
    return x.sigmoid() + x.exp().log1p() - dyn.nn.functional.gelu(x) * dyn.nn.functional.silu(x)


def broadcast(x, bias, col):
    return ((x + bias) * col).relu() - 2.0 / (x.abs() + 1.0)


def strided(x, xt):
    return (x.t() * 2.0 + xt).sin() + x[:, ::2].repeat(1, 2).t().cos()


def scalar_lhs(x):
    return (1.0 - x) / (3.0 + x * x) + 2.0 ** x.clamp(-3, 3).floor()


def with_intermediate_outputs(x):
    a = x * 3.0
    b = a.exp()
    c = (b - 1.0) * 0.25
    return a, c, b.sum(dim=1, keepdim=True)  # a and b are read after the loop


def then_in_place(x, y):
    a = (x + 1.0).tanh()
    a.mul_(y)
    return a + 1.0


def nan_and_inf(x):
    return x.log() + x.sqrt() - x.abs().rsqrt(), x / (x * 0.0)


def promoted(x, i):
    # int + float promotes in the add: the add runs alone, exp and tanh after it fuse
    return (x * 2.0 + i).exp().tanh() + (i * 3).to(dyn.float32)


def constants(x, y):
    # a loop keeps each distinct constant once, by bits and kind: 2.0, -2.0, 0.0, -0.0 and the
    # int 2 are five different ones (a key that mixed them up divided by zero here once)
    return (x + y) / 2.0 - x * -2.0 + (y * 0.0) * -0.0 + x * 2 + 0.5 * y - (x - y) * 2.0


def long_chain(x, y):
    # values read far from where they are made: their registers must stay live until then, while
    # every other value's register is reused
    h, keep = x, []
    for i in range(150):
        h = h * 1.0001 + y
        if i % 37 == 0:
            keep.append(h)
    for k in keep:
        h = h - k * 0.5
    return h, keep[1]


PROGRAMS = {
    "chain": (chain, lambda k: [fl((BIG,), k), fl((BIG,), k + 1), fl((BIG,), k + 2)]),
    "chain_f64": (chain, lambda k: [fl((300, 7), k, dyn.float64), fl((300, 7), k + 1, dyn.float64),
                                     fl((7,), k + 2, dyn.float64)]),
    "activations": (activations, lambda k: [fl((BIG,), k)]),
    "broadcast": (broadcast, lambda k: [fl((600, 130), k), fl((130,), k + 1), fl((600, 1), k + 2)]),
    "strided": (strided, lambda k: [fl((40, 60), k), fl((60, 40), k + 1)]),
    "scalar_lhs": (scalar_lhs, lambda k: [fl((1000,), k)]),
    "intermediate_outputs": (with_intermediate_outputs, lambda k: [fl((300, 250), k, scale=1.0)]),
    "then_in_place": (then_in_place, lambda k: [fl((50, 9), k), fl((9,), k + 1)]),
    "nan_and_inf": (nan_and_inf, lambda k: [dyn.cat([fl((20,), k), dyn.tensor([0.0, -0.0, 1e-30])])]),
    "promoted": (promoted, lambda k: [fl((64,), k), dyn.arange(64)]),
    "constants": (constants, lambda k: [fl((BIG,), k), fl((BIG,), k + 1)]),
    "long_chain": (long_chain, lambda k: [fl((3000,), k, scale=0.1), fl((3000,), k + 1, scale=0.1)]),
    # shapes at the edges: 0-d, empty, a view with an offset, a 0-d operand broadcast
    "zero_dim": (chain, lambda k: [fl((), k), fl((), k + 1), fl((), k + 2)]),
    "empty": (broadcast, lambda k: [fl((0, 3), k), fl((3,), k + 1), fl((0, 1), k + 2)]),
    "offset_view": (chain, lambda k: [fl((BIG,), k)[BIG // 2:], fl((BIG - BIG // 2,), k + 1), fl((), k + 2)]),
    # a convolution's bias over N x C x H x W (read as one run per channel), a window of a larger
    # tensor (rows of 33 of 41) and a size-1 dim in the middle
    "nchw_bias": (broadcast, lambda k: [fl((6, 5, 1, 40, 41), k)[..., 3:37, 4:37], fl((5, 1, 1, 1), k + 1),
                                         fl((6, 1, 1, 34, 1), k + 2)]),
}


class TestFusedEqualsEager(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()
        self.threads = dyn.get_num_threads()

    def tearDown(self):
        dyn.set_num_threads(self.threads)

    def test_every_pattern_bitwise_at_one_and_two_threads(self):
        for threads in (1, 2):
            dyn.set_num_threads(threads)
            for name, (fn, make) in PROGRAMS.items():
                with self.subTest(program=name, threads=threads):
                    compiled = dyn.compile(fn, name=f"{name}_{threads}")
                    for k in range(2):  # the first call records, the second replays the plan
                        args = make(10 * k)
                        assert_same(self, fn(*args), compiled(*args), f"{name} threads={threads} call {k}")

    def test_constants_a_call_brings(self):
        # float constants are inputs of the graph: replayed calls run the plan with their own
        # values, equal or not to each other and to the traced ones
        def f(x, s, t):
            return (x * s + t) * s - x * t + 2.0 * x

        compiled = dyn.compile(f, name="consts")
        x = fl((BIG,), 3)
        for s, t in [(2.0, 0.5), (0.5, 2.0), (2.0, 2.0), (-0.0, 0.0), (3.0, -3.0), (0.5, 0.5)]:
            assert_same(self, f(x, s, t), compiled(x, s, t), f"s={s} t={t}")
        self.assertEqual(len(dyn.debug.graphs(compiled)), 1)  # no recompile: one plan ran every call
        counts, plan = steps(compiled)
        self.assertEqual(counts.get("fused"), 1, plan)

    def test_outputs_larger_than_the_caches(self):
        # 16 MiB and more: outputs are written with streaming stores, the last partial block not
        n = (1 << 22) + 3
        args = [fl((n,), 40), fl((n,), 41), fl((n,), 42)]
        for threads in (1, 2):
            dyn.set_num_threads(threads)
            compiled = dyn.compile(with_intermediate_outputs, name=f"big{threads}")
            x = args[0].reshape(1, n)
            assert_same(self, with_intermediate_outputs(x), compiled(x), f"intermediate outputs, {threads} threads")
            assert_same(self, chain(*args), dyn.compile(chain, name=f"bigchain{threads}")(*args), "chain")

    def test_threads_do_not_change_bits(self):
        args = PROGRAMS["activations"][1](7)
        outs = []
        for threads in (1, 2):
            dyn.set_num_threads(threads)
            outs.append(dyn.compile(activations, name=f"act{threads}")(*args))
        assert_same(self, outs[0], outs[1], "1 vs 2 threads")


class TestRowKernelsStreamTheirOutput(unittest.TestCase):
    """softmax, log_softmax and layer_norm write outputs of 16 MiB and more with streaming stores
    from a scratch row: each row must have the bits it has when the op runs on fewer rows (below
    the threshold, written in place), at one and two threads, eagerly and compiled."""

    def setUp(self):
        self.threads = dyn.get_num_threads()

    def tearDown(self):
        dyn.set_num_threads(self.threads)

    def check(self, name, fn, x, dim=0):
        half = x.shape[dim] // 2  # halves along a dim the op does not reduce: 8 MiB each, not streamed
        parts = [fn(x.narrow(dim, 0, half)), fn(x.narrow(dim, half, x.shape[dim] - half))]
        for threads in (1, 2):
            dyn.set_num_threads(threads)
            whole = fn(x)
            assert_same(self, dyn.cat(parts, dim=dim), whole, f"{name}, {threads} threads: streamed vs not")
            assert_same(self, whole, dyn.compile(fn, name=f"{name}_{threads}")(x), f"{name} compiled")

    def test_softmax_and_log_softmax(self):
        x = fl((4096, 1024), 50)  # 16 MiB of float32
        self.check("softmax", lambda t: dyn.softmax(t, dim=-1), x)
        self.check("log_softmax", lambda t: dyn.log_softmax(t, dim=1), x)
        self.check("softmax_f64", lambda t: dyn.softmax(t, dim=-1), fl((4096, 512), 51, dyn.float64))

    def test_layer_norm_with_and_without_affine(self):
        x, w, b = fl((4096, 1024), 52), fl((1024,), 53), fl((1024,), 54)
        ln = dyn.nn.functional.layer_norm
        self.check("layer_norm", lambda t: ln(t, (1024,), w, b), x)
        self.check("layer_norm_w", lambda t: ln(t, (1024,), w), x)
        self.check("layer_norm_plain", lambda t: ln(t, (1024,)), x)

    def test_rows_that_cannot_stream_are_written_in_place(self):
        # rows not a whole number of 32-byte vectors, and a softmax over a leading dim
        self.check("softmax_1001", lambda t: dyn.softmax(t, dim=-1), fl((4200, 1001), 55))
        self.check("softmax_dim0", lambda t: dyn.softmax(t, dim=0), fl((4096, 1024), 56), dim=1)


class TestSoftmaxRowsAreTheExpOpScaled(unittest.TestCase):
    """The float row kernels inline the exponential into the pass that sums it: each element must
    be dyn.exp's (the same function, wherever it sits in a vector, tails included), scaled by the
    reciprocal of the row's sum (log_softmax: minus its log). The sum is taken in double, so
    numpy's double sum rounds to the same float."""

    def test_every_row_length_and_tail(self):
        rng = np.random.default_rng(7)
        for r in (1, 3, 7, 8, 9, 31, 33, 67, 1000, 1024):
            xn = (rng.standard_normal((64, r)) * 30).astype(np.float32)  # exps down to subnormal and 0
            xn[1, 0] = -np.inf
            xn[2, -1] = np.nan
            x = dyn.from_numpy(xn)
            mx = np.nanmax(xn, axis=1, keepdims=True)
            mx[2] = np.nan  # a NaN anywhere makes the row NaN
            e = dyn.exp(dyn.from_numpy(xn - mx)).numpy()
            s = e.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
            want_sm = e * (np.float32(1) / s)
            want_ls = (xn - mx) - dyn.log(dyn.from_numpy(s)).numpy()
            for name, got, want in (("softmax", dyn.softmax(x, dim=-1), want_sm),
                                    ("log_softmax", dyn.log_softmax(x, dim=-1), want_ls)):
                got = got.numpy()
                self.assertTrue(np.isnan(got[2]).all(), f"{name}, r={r}: a NaN row")
                np.testing.assert_array_equal(got, want, err_msg=f"{name}, r={r}")


def optimizer_like(p, m, g):
    # an update in place into its inputs' buffers, as optimizers do
    m.mul_(0.9).add_(g * 0.1)
    p.add_(m.sign() * -0.01 if False else m * -0.01)
    return p.sum()


def write_then_read_alias(a, b):
    a.mul_(2.0)
    return (a + b).tanh()


class TestInPlaceFusion(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def run_both(self, fn, make, name):
        compiled = dyn.compile(fn, name=name)
        for k in range(3):
            eager_args, compiled_args = make(k), make(k)
            want = fn(*eager_args)
            got = compiled(*compiled_args)
            assert_same(self, want, got, f"{name} call {k}")
            assert_same(self, eager_args, compiled_args, f"{name} call {k}: the inputs after the writes")
        return compiled

    def test_writes_into_inputs_fuse_and_equal_eager(self):
        for threads in (1, 2):
            dyn.set_num_threads(threads)
            f = self.run_both(optimizer_like, lambda k: [fl((BIG,), k), fl((BIG,), k + 1), fl((BIG,), k + 2)],
                              f"opt{threads}")
            kinds, plan = steps(f)
            self.assertNotIn("in_place", kinds, plan)
            self.assertRegex(plan, r"mul_\(%\d+, 0.9\); %\d+ = mul\(%\d+, 0.1\); %\d+ = add_")

    def test_a_write_into_memory_another_operand_reads_runs_node_by_node(self):
        # b is a transposed view of a: a fused loop would read blocks of b that it already wrote.
        def make(k):
            a = fl((300, 300), k)
            return [a, a.t()]
        self.run_both(write_then_read_alias, make, "alias")


class TestPlanSharing(unittest.TestCase):
    def test_a_plan_is_not_shared_across_default_dtypes(self):
        # int / int takes the default dtype: the same structure under float64 has float64 loops.
        def f(x):
            y = x / 3
            y.mul_(2.5)
            return (y + 1.0).sum()
        compiled = dyn.compile(f, name="default_dtype")
        old = dyn.get_default_dtype()
        try:
            for dtype in (dyn.float32, dyn.float64, dyn.float32):
                dyn.set_default_dtype(dtype)
                x = dyn.arange(1024)
                assert_same(self, f(x), compiled(x), f"default {dtype}")
        finally:
            dyn.set_default_dtype(old)

    def test_a_write_into_memory_another_storage_wraps(self):
        # from_numpy of a reversed view of x's array: another Storage over x's bytes
        def f(x, u):
            x.mul_(2.0)
            return u + 1.0

        def make():
            x = dyn.arange(4096.0)
            return x, dyn.from_numpy(x.numpy()[::-1])

        compiled = dyn.compile(f, name="numpy_alias")
        for k in range(2):
            want, got = f(*make()), compiled(*make())
            assert_same(self, want, got, f"call {k}")


class TestPlans(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def plan_of(self, program):
        """The step kinds and plan text of PROGRAMS[program] compiled and called once."""
        fn, make = PROGRAMS[program]
        f = dyn.compile(fn, name=program)
        f(*make(0))
        return steps(f)

    def test_a_chain_is_one_fused_step(self):
        kinds, plan = self.plan_of("chain")
        self.assertEqual(kinds.get("fused"), 1, plan)
        self.assertNotIn("kernel", kinds, plan)
        self.assertIn("fuse_elementwise: 5 kernel steps -> 1 fused step", plan)
        # only the result leaves the loop
        self.assertRegex(plan, r"-> %\d+ \(one pass over f32\[70000\]\)")

    def test_values_read_later_are_written_out(self):
        kinds, plan = self.plan_of("intermediate_outputs")
        self.assertEqual(kinds.get("fused"), 1, plan)
        self.assertEqual(kinds.get("kernel"), 1, plan)  # the sum
        line = next(l for l in plan.splitlines() if re.match(r"step +\d+ +fused", l))
        self.assertEqual(len(line.split("->")[1].split("(")[0].split(",")), 3, line)  # a, b, c

    def test_in_place_reductions_and_promotion_end_a_run(self):
        kinds, plan = self.plan_of("then_in_place")
        # add+tanh, then the in-place mul_ into tanh's result starts a second loop with the add
        self.assertEqual(kinds.get("fused"), 2, plan)
        self.assertNotIn("in_place", kinds, plan)
        self.assertRegex(plan, r"fused +%\d+ = mul_\(")
        kinds, plan = self.plan_of("promoted")
        self.assertEqual(kinds.get("fused"), 1, plan)
        self.assertRegex(plan, r"fused +%\d+ = exp\(%\d+\); %\d+ = tanh")
        self.assertIn("cast", plan)  # the int -> float conversion is its own step

    def test_the_eager_backend_has_no_plan(self):
        f = dyn.compile(chain, name="eager_chain", backend="eager")
        f(*PROGRAMS["chain"][1](0))
        self.assertEqual(dyn.debug.graphs(f)[-1].plan(), "")


class TestBuffers(unittest.TestCase):
    def test_a_freed_buffer_is_reused_for_the_same_size(self):
        a = dyn.empty(1 << 20)  # 4 MiB: kept when freed, so the next one skips the kernel's page zeroing
        p = a.data_ptr()
        self.assertNotEqual(p, 0)
        del a
        b = dyn.empty(1 << 20)
        self.assertEqual(b.data_ptr(), p)
        c = dyn.empty(1 << 20)  # b is alive: c gets other memory
        self.assertNotEqual(c.data_ptr(), b.data_ptr())
        self.assertEqual(dyn.empty(0).data_ptr(), 0)

    def test_views_share_the_address(self):
        x = dyn.arange(10.0)
        self.assertEqual(x[3:].data_ptr(), x.data_ptr() + 3 * 4)


class TestVectorMath(unittest.TestCase):
    def test_an_element_has_the_same_bits_wherever_it_sits(self):
        # The same value alone, at the start of a vector, in a padded tail and past a block.
        v = 0.7390851
        for name in ("exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "erf", "sigmoid"):
            alone = getattr(dyn.tensor([v]), name)().item()
            for n in (3, 17, 515, 1030):
                x = dyn.full((n,), v)
                got = getattr(x, name)().numpy()
                self.assertTrue(np.all(got == np.float32(alone)), f"{name} n={n}")
                strided_out = getattr(dyn.full((n, 2), v)[:, 1], name)().numpy()
                self.assertTrue(np.all(strided_out == np.float32(alone)), f"{name} strided n={n}")

    def test_float32_within_the_documented_bound(self):
        # 1 ULP (tanh 3.5) against float64 truth; float32 spacing at the value.
        a = np.random.default_rng(3).uniform(-4, 4, 4000).astype(np.float32)
        x = dyn.tensor(a)
        for name, truth, ulps in (("exp", np.exp, 1), ("tanh", np.tanh, 3.5), ("sin", np.sin, 1),
                                  ("erf", np.vectorize(math.erf), 1)):
            got = getattr(x, name)().numpy().astype(np.float64)
            want = truth(a.astype(np.float64))
            err = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
            self.assertLessEqual(err.max(), ulps + 0.5, name)  # + the rounding of the truth to f32


if __name__ == "__main__":
    unittest.main()
