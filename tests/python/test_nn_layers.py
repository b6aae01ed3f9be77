"""dyn.nn layers against numpy references written here: padding, conv1d/conv2d (explicit loops),
max/avg/adaptive pooling, batch norm (train and eval, running statistics), activations, dropout2d
and one_hot; gradients by float64 finite differences; dyn.compile bitwise equal to eager; the
Module API (registration, traversal, hooks, state_dict errors, conversion, repr); nn.init and
nn.utils.

`compiled_matches_eager` is shared by test_nn_rnn.py and test_nn_losses.py.
"""
import copy
import math
import unittest

import numpy as np

import dyn
import dyn.nn as nn
import dyn.nn.functional as F
from compiletest import assert_same
from test_autograd_modules import module_gradcheck
from test_autograd_ops import gradcheck, rnd

F32, F64, I64 = dyn.float32, dyn.float64, dyn.int64


def t64(a):
    return dyn.tensor(np.asarray(a, dtype=np.float64))


def close(tc, got, want, tol=1e-12, msg=""):
    got = got.detach().numpy() if isinstance(got, dyn.Tensor) else np.asarray(got)
    tc.assertEqual(got.shape, np.shape(want), f"{msg}: shape")
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=msg)


def compiled_matches_eager(tc, make, inputs, seed=None):
    """make() -> (module, step) where step(module, *inputs) runs forward (and backward) and returns the
    results to compare. Two copies of one module run eagerly and under dyn.compile for each inputs
    tuple; results and parameter grads must be bitwise equal, with one compile, no graph break and
    the later calls replaying the cache. seed: dyn.manual_seed(seed + call) before both (dropout)."""
    dyn.debug.reset()
    module, step = make()
    twin = copy.deepcopy(module)
    compiled = dyn.compile(lambda *xs: step(twin, *xs))
    for call, xs in enumerate(inputs):
        for m in (module, twin):
            m.zero_grad()
        if seed is not None:
            dyn.manual_seed(seed + call)
        want = step(module, *xs)
        if seed is not None:
            dyn.manual_seed(seed + call)
        got = compiled(*xs)
        assert_same(tc, want, got, f"call {call}")
        for (name, p), (_, q) in zip(module.named_parameters(), twin.named_parameters()):
            if p.grad is not None or q.grad is not None:
                assert_same(tc, p.grad, q.grad, f"call {call}: {name}.grad")
    c = dyn.debug.counters()
    tc.assertEqual((c["compiles"], c["recompiles"], c["graph_breaks"], c["fallbacks"]), (1, 0, 0, 0),
                   f"counters {c}")
    tc.assertEqual(c["cache_hits"], len(inputs) - 1)


# ---------------------------------------------------------------- numpy references

def conv2d_ref(x, w, b=None, stride=(1, 1), pad=((0, 0), (0, 0)), dilation=(1, 1), groups=1):
    """Direct convolution: out[n, o, i, j] = sum over c, p, q of x_pad[n, g*Cg + c, i*sh + p*dh, j*sw + q*dw]
    * w[o, c, p, q], one output element at a time."""
    x = np.pad(x, ((0, 0), (0, 0)) + tuple(pad))
    n_, _, h, w_ = x.shape
    o_, cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    ho, wo = (h - dh * (kh - 1) - 1) // sh + 1, (w_ - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n_, o_, ho, wo))
    per_group = o_ // groups
    for n in range(n_):
        for o in range(o_):
            g = o // per_group
            for i in range(ho):
                for j in range(wo):
                    s = 0.0
                    for c in range(cg):
                        for p in range(kh):
                            for q in range(kw):
                                s += x[n, g * cg + c, i * sh + p * dh, j * sw + q * dw] * w[o, c, p, q]
                    out[n, o, i, j] = s + (b[o] if b is not None else 0.0)
    return out


def pool_out(n, k, s, p, d, ceil_mode):
    span = (n + 2 * p - d * (k - 1) - 1) / s
    out = (math.ceil(span) if ceil_mode else math.floor(span)) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def max_pool2d_ref(x, k, s, p, d=(1, 1), ceil_mode=False):
    """(values, flat indices h * W + w): the first maximum of each window in row-major order."""
    h, w = x.shape[-2:]
    ho, wo = pool_out(h, k[0], s[0], p[0], d[0], ceil_mode), pool_out(w, k[1], s[1], p[1], d[1], ceil_mode)
    vals = np.zeros(x.shape[:-2] + (ho, wo))
    idx = np.zeros(x.shape[:-2] + (ho, wo), dtype=np.int64)
    for lead in np.ndindex(*x.shape[:-2]):
        for i in range(ho):
            for j in range(wo):
                best, where = -np.inf, -1
                for a in range(k[0]):
                    for b in range(k[1]):
                        r, c = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + b * d[1]
                        if 0 <= r < h and 0 <= c < w and x[lead + (r, c)] > best:
                            best, where = x[lead + (r, c)], r * w + c
                vals[lead + (i, j)], idx[lead + (i, j)] = best, where
    return vals, idx


def avg_pool2d_ref(x, k, s, p, ceil_mode=False, count_include_pad=True, divisor=None):
    """Mean of each window; the divisor counts the window's positions inside the padded input
    (count_include_pad) or inside the input."""
    h, w = x.shape[-2:]
    ho, wo = pool_out(h, k[0], s[0], p[0], 1, ceil_mode), pool_out(w, k[1], s[1], p[1], 1, ceil_mode)
    out = np.zeros(x.shape[:-2] + (ho, wo))
    for lead in np.ndindex(*x.shape[:-2]):
        for i in range(ho):
            for j in range(wo):
                total, inside, in_padded = 0.0, 0, 0
                for a in range(k[0]):
                    for b in range(k[1]):
                        r, c = i * s[0] - p[0] + a, j * s[1] - p[1] + b
                        if -p[0] <= r < h + p[0] and -p[1] <= c < w + p[1]:
                            in_padded += 1
                        if 0 <= r < h and 0 <= c < w:
                            total += x[lead + (r, c)]
                            inside += 1
                div = divisor if divisor is not None else (in_padded if count_include_pad else inside)
                out[lead + (i, j)] = total / div
    return out


def adaptive_ref(x, out_hw, reduce):
    h, w = x.shape[-2:]
    ho, wo = out_hw
    out = np.zeros(x.shape[:-2] + (ho, wo))
    for i in range(ho):
        for j in range(wo):
            r0, r1 = math.floor(i * h / ho), math.ceil((i + 1) * h / ho)
            c0, c1 = math.floor(j * w / wo), math.ceil((j + 1) * w / wo)
            out[..., i, j] = reduce(x[..., r0:r1, c0:c1], axis=(-2, -1))
    return out


# ---------------------------------------------------------------- padding and convolution

class TestPad(unittest.TestCase):
    def test_modes_match_numpy(self):
        x = rnd((2, 3, 4, 5), 1)
        for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
            for pads in ((1, 2), (2, 1, 3, 0), (0, 0, 1, 1)):
                with self.subTest(mode=mode, pad=pads):
                    widths = [(0, 0)] * 4
                    for k in range(len(pads) // 2):
                        widths[3 - k] = (pads[2 * k], pads[2 * k + 1])
                    close(self, F.pad(t64(x), pads, mode=mode), np.pad(x, widths, mode=np_mode), 0, mode)

    def test_constant_value_and_negative_crop(self):
        x = rnd((2, 3, 4), 2)
        close(self, F.pad(t64(x), (1, 2, 0, 1), value=-3.5),
              np.pad(x, ((0, 0), (0, 1), (1, 2)), constant_values=-3.5), 0)
        close(self, F.pad(t64(x), (-1, 2)), np.pad(x[..., 1:], ((0, 0), (0, 0), (0, 2))), 0)

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "less than the corresponding input dimension"):
            F.pad(dyn.zeros(1, 3), (3, 0), mode="reflect")
        with self.assertRaisesRegex(NotImplementedError, "Unrecognised padding mode"):
            F.pad(dyn.zeros(1, 3), (1, 1), mode="mirror")
        with self.assertRaisesRegex(RuntimeError, "divisible by 2"):
            F.pad(dyn.zeros(3), (1,))


class TestConv(unittest.TestCase):
    CASES = [  # (input shape, weight shape, stride, padding, dilation, groups)
        ((2, 3, 6, 5), (4, 3, 3, 2), 1, 0, 1, 1),
        ((1, 2, 7, 7), (3, 2, 3, 3), 2, 1, 1, 1),
        ((2, 4, 6, 7), (6, 2, 2, 3), (1, 2), (2, 1), (2, 1), 2),
        ((1, 3, 5, 6), (2, 3, 3, 3), 1, "same", (1, 2), 1),
        ((1, 3, 5, 6), (2, 3, 2, 4), 1, "same", 1, 1),   # even kernels: the extra padding goes right
        ((2, 3, 5, 5), (3, 1, 1, 1), 2, "valid", 1, 3),  # 1x1 depthwise
    ]

    @staticmethod
    def pads(padding, w, dilation):
        if padding == "valid":
            return ((0, 0), (0, 0))
        d = (dilation,) * 2 if isinstance(dilation, int) else dilation
        if padding == "same":
            tot = [d[i] * (w.shape[2 + i] - 1) for i in range(2)]
            return tuple((t // 2, t - t // 2) for t in tot)
        p = (padding,) * 2 if isinstance(padding, int) else padding
        return tuple((v, v) for v in p)

    def test_conv2d_matches_loops(self):
        for k, (xs, ws, stride, padding, dilation, groups) in enumerate(self.CASES):
            for bias in (True, False):
                with self.subTest(case=k, bias=bias):
                    x, w, b = rnd(xs, k), rnd(ws, 10 + k), rnd((ws[0],), 20 + k)
                    got = F.conv2d(t64(x), t64(w), t64(b) if bias else None, stride, padding, dilation, groups)
                    two = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
                    want = conv2d_ref(x, w, b if bias else None, two(stride), self.pads(padding, w, dilation),
                                      two(dilation), groups)
                    close(self, got, want, 1e-12, f"case {k}")

    def test_conv2d_float32_and_unbatched(self):
        x, w = rnd((3, 5, 5), 1), rnd((2, 3, 3, 3), 2)
        got = F.conv2d(dyn.tensor(x.astype(np.float32)), dyn.tensor(w.astype(np.float32)), padding=1)
        self.assertEqual(got.dtype, F32)
        close(self, got, conv2d_ref(x[None], w, pad=((1, 1), (1, 1)))[0], 1e-5)

    def test_conv1d_matches_loops(self):
        for stride, padding, dilation, groups in ((1, 0, 1, 1), (2, 2, 1, 1), (1, "same", 2, 2), (3, 1, 2, 1)):
            with self.subTest(stride=stride, padding=padding, dilation=dilation, groups=groups):
                x, w, b = rnd((2, 4, 11), 3), rnd((6, 4 // groups, 3), 4), rnd((6,), 5)
                got = F.conv1d(t64(x), t64(w), t64(b), stride, padding, dilation, groups)
                if padding == "same":
                    pads = ((0, 0), (dilation, dilation))
                else:
                    pads = ((0, 0), (padding, padding))
                want = conv2d_ref(x[:, :, None], w[:, :, None], b, (1, stride), pads, (1, dilation), groups)[:, :, 0]
                close(self, got, want, 1e-12)

    def test_padding_modes_of_conv2d_module(self):
        for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
            with self.subTest(padding_mode=mode):
                m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
                x = rnd((1, 2, 5, 6), 6)
                xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
                want = conv2d_ref(xp, m.weight.detach().numpy(), m.bias.detach().numpy())
                close(self, m(t64(x)), want, 1e-12, mode)

    def test_gradients(self):
        cases = [(dict(stride=2, padding=1), (1, 2, 5, 5), (3, 2, 3, 3)),
                 (dict(dilation=2, padding="same"), (1, 2, 5, 4), (2, 2, 2, 2)),
                 (dict(groups=2, stride=(1, 2)), (2, 4, 4, 5), (4, 2, 2, 3))]
        for kw, xs, ws in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                gradcheck(self, lambda x, w, b: F.conv2d(x, w, b, **kw),
                          [rnd(xs, 1), rnd(ws, 2), rnd((ws[0],), 3)], ["contig", "transposed", "contig"])
        with self.subTest(fn="conv1d"):
            gradcheck(self, lambda x, w: F.conv1d(x, w, stride=2, padding=1), [rnd((2, 2, 6), 4), rnd((3, 2, 3), 5)])

    def test_module_parameters_init_and_repr(self):
        dyn.manual_seed(0)
        m = nn.Conv2d(4, 8, (3, 2), stride=2, padding=1, groups=2)
        self.assertEqual([(n, tuple(p.shape)) for n, p in m.named_parameters()],
                         [("weight", (8, 2, 3, 2)), ("bias", (8,))])
        bound = 1 / math.sqrt(2 * 3 * 2)  # fan_in = in_channels / groups * kH * kW
        for p in (m.weight, m.bias):
            v = p.detach().numpy()
            self.assertLessEqual(np.abs(v).max(), bound)
            self.assertGreater(np.abs(v).max(), bound * 0.5)
        self.assertEqual(repr(m), "Conv2d(4, 8, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), groups=2)")
        self.assertEqual(repr(nn.Conv1d(2, 3, 5, padding="same", bias=False)),
                         "Conv1d(2, 3, kernel_size=(5,), stride=(1,), padding='same', bias=False)")
        self.assertIsNone(nn.Conv1d(2, 3, 5, bias=False).bias)

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, r"expected input\[1, 3, 5, 5\] to have 4 channels, but got 3"):
            F.conv2d(dyn.zeros(1, 3, 5, 5), dyn.zeros(2, 4, 3, 3))
        with self.assertRaisesRegex(ValueError, "padding='same' is not supported for strided convolutions"):
            F.conv2d(dyn.zeros(1, 1, 5, 5), dyn.zeros(1, 1, 3, 3), stride=2, padding="same")
        with self.assertRaisesRegex(RuntimeError, "Kernel size can't be greater than actual input size"):
            F.conv2d(dyn.zeros(1, 1, 2, 2), dyn.zeros(1, 1, 3, 3))
        with self.assertRaisesRegex(ValueError, "in_channels must be divisible by groups"):
            nn.Conv2d(3, 4, 3, groups=2)

    def test_compiled_bitwise(self):
        r = np.random.default_rng(0)

        def make():
            dyn.manual_seed(1)
            return nn.Conv2d(3, 4, 3, stride=(2, 1), padding=1, dilation=(1, 2), groups=1), step

        def step(m, x):
            y = m(x)
            (y * y).sum().backward()
            return y
        inputs = [(dyn.tensor(r.standard_normal((2, 3, 7, 8)).astype(np.float32)),) for _ in range(3)]
        compiled_matches_eager(self, make, inputs)


def conv_transpose2d_ref(x, w, b, stride, padding, output_padding, groups, dilation):
    """Scatter form: input element (c, i, j) adds x * w[c, :, a, b] at output (i*sh + a*dh - ph, j*sw + b*dw - pw)
    of its group's output channels."""
    n_, cin, h, w_ = x.shape
    _, cog, kh, kw = w.shape
    (sh, sw), (ph, pw), (oh, ow), (dh, dw) = stride, padding, output_padding, dilation
    ho, wo = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oh + 1, (w_ - 1) * sw - 2 * pw + dw * (kw - 1) + ow + 1
    out = np.zeros((n_, cog * groups, ho, wo))
    per_group = cin // groups
    for n, c, i, j, a, bb in np.ndindex(n_, cin, h, w_, kh, kw):
        r, q = i * sh + a * dh - ph, j * sw + bb * dw - pw
        if 0 <= r < ho and 0 <= q < wo:
            g = c // per_group
            out[n, g * cog:(g + 1) * cog, r, q] += x[n, c, i, j] * w[c, :, a, bb]
    return out + (0 if b is None else b[None, :, None, None])


class TestConvTransposeAndResize(unittest.TestCase):
    CASES = [((1, 1), (0, 0), (0, 0), 1, (1, 1)), ((2, 2), (1, 1), (1, 1), 1, (1, 1)),
             ((2, 3), (1, 2), (1, 0), 2, (2, 1)), ((1, 2), (2, 0), (0, 1), 1, (1, 2))]  # the last crops: p > d(k-1)

    def test_conv_transpose2d_matches_scatter(self):
        for k, (s, p, op, g, d) in enumerate(self.CASES):
            with self.subTest(stride=s, padding=p, output_padding=op, groups=g, dilation=d):
                x, w, b = rnd((2, 4, 3, 4), k), rnd((4, 3, 3, 2), 10 + k), rnd((3 * g,), 20 + k)
                got = F.conv_transpose2d(t64(x), t64(w), t64(b), s, p, op, g, d)
                close(self, got, conv_transpose2d_ref(x, w, b, s, p, op, g, d), 1e-12)

    def test_adjoint_of_conv2d_and_gradients(self):
        x, w, y = rnd((2, 3, 8, 6), 1), rnd((4, 3, 3, 2), 2), rnd((2, 4, 4, 4), 3)
        conv = F.conv2d(t64(x), t64(w), stride=2, padding=1).numpy()
        back = F.conv_transpose2d(t64(y), t64(w), stride=2, padding=1, output_padding=(1, 0)).numpy()
        self.assertEqual(back.shape, x.shape)
        self.assertAlmostEqual(float((conv * y).sum()), float((x * back).sum()), places=10)
        gradcheck(self, lambda a, k, c: F.conv_transpose2d(a, k, c, stride=2, padding=1, groups=2),
                  [rnd((1, 4, 2, 3), 4), rnd((4, 1, 2, 2), 5), rnd((2,), 6)], msg="conv_transpose2d")

    def test_conv_transpose_modules(self):
        dyn.manual_seed(0)
        m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)
        self.assertEqual(tuple(m.weight.shape), (4, 3, 3, 3))
        self.assertLessEqual(np.abs(m.weight.detach().numpy()).max(), 1 / math.sqrt(3 * 9))  # fan_in = dim 1 * k
        self.assertEqual(tuple(m(dyn.randn(1, 4, 5, 5), output_size=(10, 10)).shape), (1, 6, 10, 10))
        with self.assertRaisesRegex(ValueError, "valid sizes range from 9 to 10"):
            m(dyn.randn(1, 4, 5, 5), output_size=(11, 11))
        self.assertEqual(repr(m), "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2)")
        m1 = nn.ConvTranspose1d(2, 3, 3, stride=2).double()
        x = rnd((2, 5), 7)
        want = conv_transpose2d_ref(x[None, :, None], m1.weight.detach().numpy()[:, :, None], m1.bias.detach().numpy(),
                                    (1, 2), (0, 0), (0, 0), 1, (1, 1))[0, :, 0]
        close(self, m1(t64(x)), want, 1e-12)

    def test_interpolate(self):
        x = rnd((2, 3, 4, 5), 8)
        close(self, F.interpolate(t64(x), scale_factor=2), x.repeat(2, 2).repeat(2, 3), 0, "nearest x2")
        close(self, F.interpolate(t64(x), size=(2, 10)), x[:, :, ::2].repeat(2, 3), 0, "nearest size")

        def lerp_ref(a, out, axis, align_corners):
            n = a.shape[axis]
            if align_corners:
                src = np.linspace(0, n - 1, out)
            else:
                src = np.clip((np.arange(out) + 0.5) * n / out - 0.5, 0, None)
            return np.apply_along_axis(lambda row: np.interp(src, np.arange(n), row), axis, a)
        for ac in (False, True):
            with self.subTest(align_corners=ac):
                want = lerp_ref(lerp_ref(x, 7, 2, ac), 3, 3, ac)
                close(self, F.interpolate(t64(x), size=(7, 3), mode="bilinear", align_corners=ac), want, 1e-12)
                close(self, nn.Upsample(size=9, mode="linear", align_corners=ac)(t64(x[0])),
                      lerp_ref(x[0], 9, 2, ac), 1e-12)
        close(self, F.interpolate(t64(x), size=(2, 3), mode="area"), adaptive_ref(x, (2, 3), np.mean), 1e-14)
        gradcheck(self, lambda a: F.interpolate(a, scale_factor=1.5, mode="bilinear"), [rnd((1, 1, 3, 2), 9)])
        with self.assertRaisesRegex(NotImplementedError, "bicubic"):
            F.interpolate(dyn.zeros(1, 1, 2, 2), scale_factor=2, mode="bicubic")

    def test_unfold_and_pixel_shuffle(self):
        x = rnd((2, 3, 5, 6), 10)
        got = F.unfold(t64(x), (2, 3), dilation=(2, 1), padding=1, stride=(2, 2))
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        cols = []
        for i in range(3):  # output rows: (7 - 2 - 1) // 2 + 1
            for j in range(3):  # output cols: (8 - 3) // 2 + 1
                cols.append(xp[:, :, 2 * i: 2 * i + 3: 2, 2 * j: 2 * j + 3].reshape(2, -1))
        close(self, got, np.stack(cols, -1), 0, "unfold")
        close(self, nn.Unfold(2)(t64(x[0])), F.unfold(t64(x), 2).numpy()[0], 0, "unbatched")
        y = rnd((2, 8, 3, 2), 11)
        want = np.zeros((2, 2, 6, 4))
        for c, h, w, i, j in np.ndindex(2, 3, 2, 2, 2):
            want[:, c, h * 2 + i, w * 2 + j] = y[:, c * 4 + i * 2 + j, h, w]
        close(self, nn.PixelShuffle(2)(t64(y)), want, 0, "pixel_shuffle")
        close(self, F.pixel_unshuffle(t64(want), 2), y, 0, "pixel_unshuffle")

    def test_distances(self):
        a, b = rnd((3, 4), 1), rnd((1, 4), 2)
        want = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        close(self, F.cosine_similarity(t64(a), t64(b)), want, 1e-12)
        close(self, nn.CosineSimilarity(dim=0)(t64(a.T), t64(b.T)), want, 1e-12)
        close(self, nn.PairwiseDistance()(t64(a), t64(b)), np.linalg.norm(a - b + 1e-6, axis=1), 1e-12)
        close(self, F.pairwise_distance(t64(a), t64(b), p=1.0, keepdim=True),
              np.abs(a - b + 1e-6).sum(1, keepdims=True), 1e-12)


# ---------------------------------------------------------------- pooling

class TestPooling(unittest.TestCase):
    def test_max_pool2d_values_and_indices(self):
        x = rnd((2, 3, 7, 6), 1)
        for k, s, p, d, ceil in (((2, 2), (2, 2), (0, 0), (1, 1), False), ((3, 3), (2, 2), (1, 1), (1, 1), True),
                                 ((3, 2), (1, 2), (1, 0), (2, 1), False), ((2, 3), (3, 2), (1, 1), (1, 1), True)):
            with self.subTest(kernel=k, stride=s, padding=p, dilation=d, ceil_mode=ceil):
                vals, idx = F.max_pool2d(t64(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
                want_v, want_i = max_pool2d_ref(x, k, s, p, d, ceil)
                close(self, vals, want_v, 0)
                self.assertEqual(idx.dtype, I64)
                np.testing.assert_array_equal(idx.numpy(), want_i)

    def test_max_pool_defaults_unbatched_and_1d(self):
        x = rnd((3, 6, 6), 2)
        close(self, nn.MaxPool2d(2)(t64(x)), max_pool2d_ref(x, (2, 2), (2, 2), (0, 0))[0], 0)
        x1 = rnd((2, 3, 9), 3)
        want = max_pool2d_ref(x1[:, :, None], (1, 3), (1, 2), (0, 1))[0][:, :, 0]
        close(self, F.max_pool1d(t64(x1), 3, 2, 1), want, 0)

    def test_avg_pool2d(self):
        x = rnd((2, 2, 7, 6), 4)
        for k, s, p, ceil, incl, div in (((2, 2), (2, 2), (0, 0), False, True, None),
                                         ((3, 3), (2, 2), (1, 1), False, True, None),
                                         ((3, 3), (2, 2), (1, 1), False, False, None),
                                         ((3, 2), (2, 3), (1, 1), True, True, None),
                                         ((3, 2), (2, 3), (1, 1), True, False, None),
                                         ((3, 3), (2, 2), (0, 0), True, True, None),  # past the right edge
                                         ((2, 2), (1, 1), (1, 0), False, True, 3)):
            with self.subTest(kernel=k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=incl, divisor=div):
                got = F.avg_pool2d(t64(x), k, s, p, ceil, incl, div)
                close(self, got, avg_pool2d_ref(x, k, s, p, ceil, incl, div), 1e-14)
        x1 = rnd((2, 9), 5)
        close(self, nn.AvgPool1d(3, 2, 1)(t64(x1)), avg_pool2d_ref(x1[:, None], (1, 3), (1, 2), (0, 1))[:, 0], 1e-14)

    def test_adaptive_pools(self):
        x = rnd((2, 3, 7, 10), 6)
        for size in ((3, 4), (7, 5), (1, 1), (5, 10), (4, None)):
            want_size = (size[0], 10 if size[1] is None else size[1])
            with self.subTest(output_size=size):
                close(self, F.adaptive_avg_pool2d(t64(x), size), adaptive_ref(x, want_size, np.mean), 1e-14)
                close(self, F.adaptive_max_pool2d(t64(x), size), adaptive_ref(x, want_size, np.max), 0)
        close(self, nn.AdaptiveAvgPool2d(3)(t64(x[0])), adaptive_ref(x[0], (3, 3), np.mean), 1e-14)
        close(self, F.adaptive_avg_pool1d(t64(x[0, 0]), 4), adaptive_ref(x[0, 0][:, None], (1, 4), np.mean)[:, 0],
              1e-14)
        close(self, nn.AdaptiveMaxPool1d(3)(t64(x[0])), adaptive_ref(x[0][..., None, :], (1, 3), np.max)[..., 0, :], 0)

    def test_gradients(self):
        x = rnd((1, 2, 5, 6), 7)  # distinct values: no ties in the max windows
        gradcheck(self, lambda t: F.max_pool2d(t, 3, 2, 1), [x], msg="max_pool2d")
        gradcheck(self, lambda t: F.max_pool2d(t, 2, 1, dilation=2), [x], ["transposed"], msg="max_pool2d dilated")
        gradcheck(self, lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False), [x],
                  msg="avg_pool2d")
        gradcheck(self, lambda t: F.adaptive_avg_pool2d(t, (3, 4)), [x], msg="adaptive_avg_pool2d")
        gradcheck(self, lambda t: F.adaptive_max_pool2d(t, (2, 4)), [x], msg="adaptive_max_pool2d")

    def test_errors_and_repr(self):
        with self.assertRaisesRegex(RuntimeError, "pad should be at most half of effective kernel size"):
            F.max_pool2d(dyn.zeros(1, 1, 4, 4), 2, padding=2)
        with self.assertRaisesRegex(RuntimeError, "Output size is too small"):
            F.avg_pool2d(dyn.zeros(1, 1, 2, 2), 3)
        self.assertEqual(repr(nn.MaxPool2d(3, 2, 1)),
                         "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)")
        self.assertEqual(repr(nn.AdaptiveAvgPool2d((5, 7))), "AdaptiveAvgPool2d(output_size=(5, 7))")


# ---------------------------------------------------------------- batch norm

def bn_ref(x, mean, var, w, b, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * w.reshape(shape) + b.reshape(shape)


class TestBatchNorm(unittest.TestCase):
    def test_train_eval_and_running_stats(self):
        for cls, shape in ((nn.BatchNorm2d, (4, 3, 2, 5)), (nn.BatchNorm1d, (6, 3)), (nn.BatchNorm1d, (4, 3, 5))):
            with self.subTest(module=cls.__name__, shape=shape):
                m = cls(3, momentum=0.2).double()
                with dyn.no_grad():
                    m.weight.copy_(t64([1.5, -0.5, 2.0]))
                    m.bias.copy_(t64([0.1, 0.2, -0.3]))
                w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
                axes = (0,) + tuple(range(2, len(shape)))
                count = np.prod(shape) // 3
                rm, rv = np.zeros(3), np.ones(3)
                for step in range(2):
                    x = rnd(shape, step) * 2 + 1
                    mean, var = x.mean(axis=axes), x.var(axis=axes)
                    close(self, m(t64(x)), bn_ref(x, mean, var, w, b, 1e-5), 1e-12, f"train step {step}")
                    rm = 0.8 * rm + 0.2 * mean
                    rv = 0.8 * rv + 0.2 * var * count / (count - 1)  # the unbiased variance
                    close(self, m.running_mean, rm, 1e-12)
                    close(self, m.running_var, rv, 1e-12)
                    self.assertEqual(m.num_batches_tracked.item(), step + 1)
                    self.assertEqual(m.num_batches_tracked.dtype, I64)
                m.eval()
                x = rnd(shape, 9)
                close(self, m(t64(x)), bn_ref(x, rm, rv, w, b, 1e-5), 1e-12, "eval")
                close(self, m.running_mean, rm, 1e-12, "eval must not update")

    def test_cumulative_momentum_and_no_tracking(self):
        m = nn.BatchNorm1d(2, momentum=None).double()
        xs = [rnd((5, 2), s) for s in range(3)]
        for x in xs:
            m(t64(x))
        close(self, m.running_mean, np.mean([x.mean(0) for x in xs], axis=0), 1e-12)
        close(self, m.running_var, np.mean([x.var(0, ddof=1) for x in xs], axis=0), 1e-12)
        m = nn.BatchNorm2d(2, affine=False, track_running_stats=False).double()
        self.assertEqual(list(m.state_dict()), [])
        self.assertIsNone(m.running_mean)
        x = rnd((2, 2, 3, 3), 4)
        m.eval()  # no running statistics: batch statistics even in eval
        close(self, m(t64(x)), bn_ref(x, x.mean((0, 2, 3)), x.var((0, 2, 3)), np.ones(2), np.zeros(2), 1e-5), 1e-12)

    def test_state_dict_init_repr_and_errors(self):
        m = nn.BatchNorm2d(3)
        self.assertEqual(list(m.state_dict()), ["weight", "bias", "running_mean", "running_var",
                                                "num_batches_tracked"])
        self.assertEqual(m.weight.tolist(), [1.0] * 3)
        self.assertEqual(m.bias.tolist(), [0.0] * 3)
        self.assertEqual(repr(m), "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                  "track_running_stats=True)")
        with self.assertRaisesRegex(ValueError, r"expected 4D input \(got 3D input\)"):
            m(dyn.zeros(2, 3, 4))
        with self.assertRaisesRegex(ValueError, "Expected more than 1 value per channel when training"):
            nn.BatchNorm1d(3)(dyn.zeros(1, 3))
        m.double()
        self.assertEqual((m.running_var.dtype, m.num_batches_tracked.dtype), (F64, I64))

    def test_gradients(self):
        x, w, b = rnd((3, 2, 2, 2), 1), rnd((2,), 2), rnd((2,), 3)
        gradcheck(self, lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [x, w, b],
                  msg="batch_norm train")
        rm, rv = rnd((2,), 4), rnd((2,), 5, "positive")
        gradcheck(self, lambda x, w, b: F.batch_norm(x, t64(rm), t64(rv), w, b), [x, w, b], msg="batch_norm eval")
        module_gradcheck(self, nn.BatchNorm1d(3), rnd((4, 3), 6), msg="BatchNorm1d")

    def test_compiled_training_updates_running_stats(self):
        r = np.random.default_rng(3)

        def make():
            return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3, momentum=None), nn.ReLU()), step

        def step(m, x):
            y = m(x)
            y.sum().backward()
            bn = m[1]
            return y, bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone()
        inputs = [(dyn.tensor(r.standard_normal((2, 2, 4, 4)).astype(np.float32)),) for _ in range(3)]
        compiled_matches_eager(self, make, inputs)


# ---------------------------------------------------------------- activations, dropout, one_hot

def np_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(np.minimum(x * beta, threshold))) / beta)


class TestActivations(unittest.TestCase):
    CASES = [
        ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x), nn.LeakyReLU(0.2)),
        ("elu", lambda x: F.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)), nn.ELU(1.5)),
        ("softplus", lambda x: F.softplus(x, 2.0, 3.0), lambda x: np_softplus(x, 2.0, 3.0), nn.Softplus(2.0, 3.0)),
        ("hardtanh", lambda x: F.hardtanh(x, -0.5, 1.0), lambda x: np.clip(x, -0.5, 1.0), nn.Hardtanh(-0.5, 1.0)),
        ("relu6", lambda x: F.relu6(x * 4), lambda x: np.clip(x * 4, 0, 6), None),
        ("mish", F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), nn.Mish()),
        ("logsigmoid", F.logsigmoid, lambda x: -np.log1p(np.exp(-x)), nn.LogSigmoid()),
        ("tanh", F.tanh, np.tanh, nn.Tanh()),
        ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x)), nn.Sigmoid()),
        ("glu", F.glu, lambda x: x[..., :2] / (1 + np.exp(-x[..., 2:])), nn.GLU()),
        ("selu", F.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), None),
        ("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, None),
        ("gelu tanh", lambda x: F.gelu(x, approximate="tanh"),
         lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), nn.GELU("tanh")),
        ("log_softmax", lambda x: F.log_softmax(x, 1), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True)),
         nn.LogSoftmax(1)),
        ("normalize", F.normalize, lambda x: x / np.linalg.norm(x, axis=1, keepdims=True), None),
    ]

    def test_values_gradients_and_modules(self):
        x = rnd((3, 4), 1, "away") * 2
        for name, fn, ref, module in self.CASES:
            with self.subTest(fn=name):
                close(self, fn(t64(x)), ref(x), 1e-12, name)
                gradcheck(self, fn, [x], msg=name)
                if module is not None:
                    close(self, module(t64(x)), ref(x), 1e-12, f"{name} module")

    def test_large_inputs_stay_finite(self):
        x = t64([-800.0, -30.0, 0.0, 30.0, 800.0]).requires_grad_()
        for name, fn in (("logsigmoid", F.logsigmoid), ("softplus", F.softplus), ("elu", F.elu), ("mish", F.mish)):
            with self.subTest(fn=name):
                x.grad = None
                y = fn(x)
                y.sum().backward()
                self.assertTrue(np.isfinite(y.detach().numpy()).all(), f"{name}: {y}")
                self.assertTrue(np.isfinite(x.grad.numpy()).all(), f"{name} grad: {x.grad}")
        close(self, F.logsigmoid(t64([-800.0, 800.0])), [-800.0, 0.0], 0)

    def test_dropout2d_drops_whole_channels(self):
        dyn.manual_seed(0)
        x = dyn.ones(8, 16, 3, 3)
        y = nn.Dropout2d(0.5)(x).numpy()
        per_channel = y.reshape(8, 16, 9)
        self.assertTrue(((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all())
        kept = (per_channel == 2.0).all(-1).mean()
        self.assertTrue(0.3 < kept < 0.7, kept)
        self.assertTrue((nn.Dropout2d(0.5).eval()(x).numpy() == 1).all())
        self.assertTrue((F.dropout2d(x, 1.0).numpy() == 0).all())

    def test_dropout2d_and_3d_other_ranks_as_pytorch(self):
        # PyTorch 2.15: a rank other than 3/4 (2d) or 4/5 (3d) warns that it is deprecated and drops
        # per (dim 0, dim 1) entry; 1-D raises when it would drop; a 3-D input to dropout2d warns and
        # drops [N, C, L] channels.
        import warnings

        dyn.manual_seed(0)
        cases = [(F.dropout2d, (6, 40), "Received a 2-D input to dropout2d, which is deprecated"),
                 (F.dropout2d, (4, 6, 2, 2, 2), "Received a 5-D input to dropout2d, which is deprecated"),
                 (F.dropout2d, (4, 6, 5), "assuming that channel-wise 1D dropout behavior is desired"),
                 (F.dropout3d, (6, 40), "Received a 2-D input to dropout3d, which is deprecated"),
                 (F.dropout3d, (4, 6, 2, 2, 2), None), (F.dropout3d, (6, 3, 2, 2), None)]
        for fn, shape, warning in cases:
            with self.subTest(fn=fn.__name__, shape=shape), warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                y = fn(dyn.ones(*shape), 0.5).numpy()
                msgs = [str(m.message) for m in w]
                if warning:
                    self.assertTrue(any(warning in m for m in msgs), msgs)
                else:
                    self.assertEqual(msgs, [])
                self.assertEqual(y.shape, shape)
                # unbatched 4-D to dropout3d is one sample: whole [D, H, W] channels of dim 0
                lead = 1 if (fn is F.dropout3d and len(shape) == 4) else 2
                per = y.reshape(shape[:lead] + (-1,))
                self.assertTrue(((per == 0).all(-1) | (per == 2.0).all(-1)).all(), y)
                self.assertTrue(0 < (per == 0).all(-1).mean() < 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with self.assertRaisesRegex(RuntimeError, "Feature dropout requires at least 2 dimensions in the input"):
                F.dropout2d(dyn.ones(5), 0.5)
            self.assertTrue((F.dropout2d(dyn.ones(5), 0.5, training=False).numpy() == 1).all())
            self.assertTrue((F.dropout2d(dyn.ones(5), 0.0).numpy() == 1).all())
            # no draw needed, so no rank asked for (PyTorch 2.15 alike)
            self.assertEqual(F.dropout2d(dyn.ones(3), 1.0).tolist(), [0.0, 0.0, 0.0])
            self.assertEqual(F.dropout3d(dyn.tensor(1.0), 1.0).tolist(), 0.0)
            self.assertEqual(tuple(F.dropout2d(dyn.ones(0), 0.5).shape), (0,))
        self.assertEqual(repr(nn.Dropout3d(0.2)), "Dropout3d(p=0.2, inplace=False)")
        self.assertTrue((nn.Dropout3d(0.5).eval()(dyn.ones(2, 3, 2, 2, 2)).numpy() == 1).all())

    def test_padding_modules_as_pytorch(self):
        # reprs, and values, recorded from PyTorch 2.15
        self.assertEqual(repr(nn.ReflectionPad2d(1)), "ReflectionPad2d((1, 1, 1, 1))")
        self.assertEqual(repr(nn.ConstantPad1d(2, 3.5)), "ConstantPad1d(padding=(2, 2), value=3.5)")
        self.assertEqual(repr(nn.ZeroPad2d(2)), "ZeroPad2d((2, 2, 2, 2))")
        self.assertEqual(repr(nn.ReflectionPad3d(1)), "ReflectionPad3d((1, 1, 1, 1, 1, 1))")
        self.assertEqual(nn.ReplicationPad2d((1, 0, 2, 1)).state_dict(), {})
        x = dyn.arange(12.0).reshape(1, 1, 3, 4)
        self.assertEqual(nn.ReflectionPad2d(1)(x).tolist(), [[[
            [5.0, 4.0, 5.0, 6.0, 7.0, 6.0], [1.0, 0.0, 1.0, 2.0, 3.0, 2.0], [5.0, 4.0, 5.0, 6.0, 7.0, 6.0],
            [9.0, 8.0, 9.0, 10.0, 11.0, 10.0], [5.0, 4.0, 5.0, 6.0, 7.0, 6.0]]]])
        self.assertEqual(nn.ConstantPad1d(2, 3.5)(dyn.ones(1, 1, 3)).tolist(), [[[3.5, 3.5, 1.0, 1.0, 1.0, 3.5, 3.5]]])
        self.assertEqual(nn.ZeroPad2d((1, 0, 0, 1))(x).tolist(), [[[
            [0.0, 0.0, 1.0, 2.0, 3.0], [0.0, 4.0, 5.0, 6.0, 7.0], [0.0, 8.0, 9.0, 10.0, 11.0],
            [0.0, 0.0, 0.0, 0.0, 0.0]]]])
        self.assertEqual(nn.ReflectionPad1d(1)(dyn.arange(4.0).reshape(1, 4)).tolist(), [[1.0, 0.0, 1.0, 2.0, 3.0, 2.0]])
        self.assertEqual(tuple(nn.CircularPad2d(1)(x).shape), (1, 1, 5, 6))
        with self.assertRaises(ValueError):
            nn.ReflectionPad2d((1, 2))
        import torch.nn.modules.padding  # noqa: F401  (the path a pickled model names)

    def test_instance_norm_modules(self):
        self.assertEqual(repr(nn.InstanceNorm2d(3)), "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, "
                                                     "bias=False, track_running_stats=False)")
        m = nn.InstanceNorm1d(4, affine=True)
        self.assertEqual(list(m.state_dict()), ["weight", "bias"])
        got = nn.InstanceNorm2d(3)(dyn.arange(24.0).reshape(2, 3, 2, 2)).reshape(-1)[:4].tolist()
        np.testing.assert_allclose(got, [-1.3416354656219482, -0.4472118616104126, 0.44721174240112305,
                                         1.3416353464126587], rtol=1e-6)
        self.assertEqual(tuple(nn.InstanceNorm2d(3)(dyn.arange(12.0).reshape(3, 2, 2)).shape), (3, 2, 2))
        with self.assertRaisesRegex(ValueError, r"expected 3D or 4D input \(got 2D input\)"):
            nn.InstanceNorm2d(3)(dyn.ones(2, 3))
        with self.assertRaisesRegex(NotImplementedError, "running statistics"):
            nn.InstanceNorm2d(3, track_running_stats=True)

    def test_one_hot(self):
        got = F.one_hot(dyn.tensor([[0, 2], [3, 1]]), 5)
        self.assertEqual(got.dtype, I64)
        np.testing.assert_array_equal(got.numpy(), np.eye(5, dtype=np.int64)[[[0, 2], [3, 1]]])
        self.assertEqual(tuple(F.one_hot(dyn.tensor([1, 4])).shape), (2, 5))
        with self.assertRaisesRegex(RuntimeError, "Class values must be smaller than num_classes"):
            F.one_hot(dyn.tensor([3]), 3)
        with self.assertRaisesRegex(RuntimeError, "one_hot is only applicable to index tensor"):
            F.one_hot(dyn.tensor([1.0]), 3)


# ---------------------------------------------------------------- the Module API

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.register_buffer("steps", dyn.zeros((), dtype=I64))
        self.register_buffer("cache", dyn.zeros(2), persistent=False)
        self.scale = nn.Parameter(dyn.ones(1))

    def forward(self, x):
        return self.block(self.fc(x)) * self.scale


class TestModuleAPI(unittest.TestCase):
    def test_registration_and_traversal(self):
        m = Net()
        self.assertEqual([n for n, _ in m.named_parameters()],
                         ["scale", "fc.weight", "fc.bias", "block.0.weight", "block.0.bias"])
        self.assertEqual([n for n, _ in m.named_buffers()], ["steps", "cache"])
        self.assertEqual(list(m.state_dict()), ["scale", "steps", "fc.weight", "fc.bias", "block.0.weight",
                                                "block.0.bias"])
        self.assertEqual([n for n, _ in m.named_modules()], ["", "fc", "block", "block.0", "block.1"])
        self.assertEqual([n for n, _ in m.named_children()], ["fc", "block"])
        self.assertIs(m.get_submodule("block.0"), m.block[0])
        self.assertIs(m.get_parameter("block.0.bias"), m.block[0].bias)
        with self.assertRaisesRegex(AttributeError, "Sequential has no attribute `7`"):
            m.get_submodule("block.7")
        seen = []
        self.assertIs(m.apply(lambda mod: seen.append(type(mod).__name__)), m)
        self.assertEqual(seen, ["Linear", "Linear", "ReLU", "Sequential", "Net"])
        m.shared = m.fc  # the same module twice: listed once
        self.assertEqual(len(list(m.parameters())), 5)

    def test_assignment_rules(self):
        m = Net()
        m.fc.bias = None
        self.assertIsNone(m.fc.bias)
        self.assertNotIn("fc.bias", m.state_dict())
        with self.assertRaisesRegex(TypeError, "cannot assign 'dyn.Tensor' as parameter 'weight'"):
            m.fc.weight = dyn.zeros(4, 3)
        m.steps = dyn.ones((), dtype=I64)  # a buffer stays a buffer
        self.assertEqual(m.state_dict()["steps"].item(), 1)
        del m.block
        self.assertNotIn("block", dict(m.named_children()))
        with self.assertRaisesRegex(KeyError, "attribute 'fc' already exists"):
            m.register_buffer("fc", dyn.zeros(1))
        with self.assertRaisesRegex(TypeError, "cannot assign 'dyn.Tensor' object to parameter 'p'"):
            m.register_parameter("p", dyn.zeros(1))
        with self.assertRaisesRegex(AttributeError, "'Net' object has no attribute 'nothing'"):
            m.nothing

    def test_zero_grad_requires_grad_train_eval(self):
        m = Net()
        m(dyn.randn(2, 3)).sum().backward()
        self.assertIsNotNone(m.fc.weight.grad)
        m.zero_grad(set_to_none=False)
        self.assertEqual(m.fc.weight.grad.abs().sum().item(), 0.0)
        m.zero_grad()
        self.assertIsNone(m.fc.weight.grad)
        m.requires_grad_(False)
        self.assertFalse(any(p.requires_grad for p in m.parameters()))
        m.eval()
        self.assertFalse(any(mod.training for mod in m.modules()))
        with self.assertRaisesRegex(ValueError, "training mode is expected to be boolean"):
            m.train("yes")

    def test_hooks(self):
        m = nn.Linear(2, 2)
        calls = []
        pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
        post = m.register_forward_hook(lambda mod, args, out: calls.append(tuple(out.shape)) or out + 1)
        y = m(dyn.ones(3, 2))
        close(self, y, np.tile(m.bias.detach().numpy() + 1, (3, 1)), 1e-6)
        self.assertEqual(calls, [(3, 2)])
        pre.remove()
        post.remove()
        close(self, m(dyn.zeros(1, 2)), m.bias.detach().numpy()[None], 0)
        kw = m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
        close(self, m(dyn.zeros(1, 2)), (m.weight.sum(1) + m.bias).detach().numpy()[None], 1e-6)
        kw.remove()

    def test_load_state_dict(self):
        src, dst = Net(), Net()
        result = dst.load_state_dict(src.state_dict())
        self.assertEqual(repr(result), "<All keys matched successfully>")
        close(self, dst.fc.weight, src.fc.weight.detach().numpy(), 0)
        sd = src.state_dict()
        del sd["fc.bias"]
        sd["fc.extra"] = dyn.zeros(1)
        sd["other"] = dyn.zeros(1)
        with self.assertRaises(RuntimeError) as cm:
            dst.load_state_dict(sd)
        self.assertEqual(str(cm.exception), 'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: '
                         '"fc.bias". \n\tUnexpected key(s) in state_dict: "other", "fc.extra". ')
        missing, unexpected = dst.load_state_dict(sd, strict=False)
        self.assertEqual((missing, unexpected), (["fc.bias"], ["other", "fc.extra"]))
        sd = src.state_dict()
        sd["fc.weight"] = dyn.zeros(2, 2)
        with self.assertRaisesRegex(RuntimeError, r"size mismatch for fc.weight: copying a param with shape "
                                    r"dyn.Size\(\[2, 2\]\) from checkpoint, the shape in current model is "
                                    r"dyn.Size\(\[4, 3\]\)."):
            dst.load_state_dict(sd, strict=False)

    def test_conversion_and_copy(self):
        m = Net()
        bn = nn.BatchNorm1d(4)
        m.add_module("bn", bn)
        m.to(dyn.float64)
        self.assertTrue(all(p.dtype == F64 and nn.is_parameter(p) and p.requires_grad for p in m.parameters()))
        self.assertEqual((m.steps.dtype, bn.num_batches_tracked.dtype, bn.running_mean.dtype), (I64, I64, F64))
        self.assertIs(m.float(), m)
        self.assertEqual(m.fc.weight.dtype, F32)
        self.assertIs(m.to("cpu"), m)
        self.assertIs(m.cpu(), m)
        with self.assertRaisesRegex(RuntimeError, "CPU only"):
            m.to("cuda")
        self.assertTrue(all(p.dtype == dyn.float16 for p in m.half().parameters()))
        self.assertTrue(all(p.dtype == dyn.bfloat16 for p in m.bfloat16().parameters()))
        m.float()
        with self.assertRaisesRegex(TypeError, "floating point"):
            m.to(dyn.int64)
        c = copy.deepcopy(m)
        with dyn.no_grad():
            c.fc.weight.fill_(7.0)
        self.assertNotEqual(m.fc.weight.sum().item(), c.fc.weight.sum().item())
        self.assertTrue(nn.is_parameter(c.fc.weight))
        tied = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
        tied[1].weight = tied[0].weight
        tied.double()
        self.assertIs(tied[0].weight, tied[1].weight)
        self.assertEqual(len(list(tied.parameters())), 3)

    def test_repr(self):
        m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()]), nn.Flatten(),
                          nn.Unflatten(1, (2, 3)), nn.Identity())
        self.assertEqual(repr(m), "\n".join([
            "Sequential(",
            "  (0): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))",
            "  (1): ModuleList(",
            "    (0-1): 2 x ReLU()",
            "    (2): Tanh()",
            "  )",
            "  (2): Flatten(start_dim=1, end_dim=-1)",
            "  (3): Unflatten(dim=1, unflattened_size=(2, 3))",
            "  (4): Identity()",
            ")"]))
        self.assertEqual(repr(nn.LeakyReLU(0.2, inplace=True)), "LeakyReLU(negative_slope=0.2, inplace=True)")

    def test_flatten_unflatten_identity(self):
        x = dyn.randn(2, 3, 4)
        self.assertEqual(tuple(nn.Flatten()(x).shape), (2, 12))
        self.assertEqual(tuple(nn.Flatten(0, 1)(x).shape), (6, 4))
        self.assertEqual(tuple(nn.Unflatten(-1, (2, 2))(x).shape), (2, 3, 2, 2))
        self.assertIs(nn.Identity(54, unused="x")(x), x)


# ---------------------------------------------------------------- nn.init and nn.utils

class TestInit(unittest.TestCase):
    def test_gain_and_fans(self):
        init = nn.init
        self.assertEqual(init.calculate_gain("conv2d"), 1)
        self.assertAlmostEqual(init.calculate_gain("tanh"), 5 / 3)
        self.assertAlmostEqual(init.calculate_gain("relu"), math.sqrt(2))
        self.assertAlmostEqual(init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04))
        self.assertEqual(init.calculate_gain("selu"), 0.75)
        with self.assertRaisesRegex(ValueError, "Unsupported nonlinearity foo"):
            init.calculate_gain("foo")
        self.assertEqual(init._calculate_fan_in_and_fan_out(dyn.empty(8, 3, 5, 2)), (30, 80))
        with self.assertRaisesRegex(ValueError, "fewer than 2 dimensions"):
            init._calculate_fan_in_and_fan_out(dyn.empty(3))

    def test_distributions(self):
        dyn.manual_seed(0)
        init = nn.init
        w = dyn.empty(200, 100)
        fan_in, fan_out = 100, 200
        cases = [  # (fill, expected std, bound or None)
            (lambda: init.kaiming_uniform_(w, a=0.1, mode="fan_out", nonlinearity="leaky_relu"),
             math.sqrt(2 / 1.01) / math.sqrt(fan_out), math.sqrt(3) * math.sqrt(2 / 1.01) / math.sqrt(fan_out)),
            (lambda: init.kaiming_normal_(w, nonlinearity="relu"), math.sqrt(2 / fan_in), None),
            (lambda: init.xavier_uniform_(w, gain=2.0), 2 * math.sqrt(2 / 300), 2 * math.sqrt(6 / 300)),
            (lambda: init.xavier_normal_(w), math.sqrt(2 / 300), None),
            (lambda: init.normal_(w, 1.0, 0.5), 0.5, None),
            (lambda: init.uniform_(w, -2.0, 1.0), 3 / math.sqrt(12), 2.0),
        ]
        for k, (fill, std, bound) in enumerate(cases):
            with self.subTest(case=k):
                v = fill().numpy()
                self.assertAlmostEqual(v.std() / std, 1.0, delta=0.03)
                if bound is not None:
                    self.assertLessEqual(np.abs(v).max(), bound)
                    self.assertGreater(np.abs(v).max(), 0.98 * bound)

    def test_trunc_normal_orthogonal_eye_dirac(self):
        dyn.manual_seed(1)
        init = nn.init
        v = init.trunc_normal_(dyn.empty(100000), mean=0.5, std=1.0, a=-0.5, b=1.0).numpy()
        self.assertTrue(v.min() >= -0.5 and v.max() <= 1.0)
        # the mean of N(0.5, 1) truncated to [-0.5, 1]: mu + (phi(alpha) - phi(beta)) / Z * sigma
        phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
        cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
        want = 0.5 + (phi(-1.0) - phi(0.5)) / (cdf(0.5) - cdf(-1.0))
        self.assertAlmostEqual(v.mean(), want, delta=0.01)
        for shape in ((4, 6), (6, 4), (3, 2, 2)):
            q = init.orthogonal_(dyn.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
            small = q @ q.T if shape[0] <= q.shape[1] else q.T @ q
            np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)
        np.testing.assert_array_equal(init.eye_(dyn.empty(2, 3)).numpy(), np.eye(2, 3))
        w = init.dirac_(dyn.empty(4, 2, 3, 3), groups=2)
        x = rnd((1, 2, 4, 4), 1)
        close(self, F.conv2d(t64(np.repeat(x, 2, 1)), w.double(), padding=1, groups=2), np.repeat(x, 2, 1), 1e-12)

    def test_default_initializations(self):
        dyn.manual_seed(2)
        lin = nn.Linear(50, 400)
        self.assertLessEqual(np.abs(lin.weight.detach().numpy()).max(), 1 / math.sqrt(50))
        self.assertAlmostEqual(lin.weight.detach().numpy().std() * math.sqrt(3 * 50), 1.0, delta=0.03)
        emb = nn.Embedding(300, 50, padding_idx=3)
        self.assertAlmostEqual(emb.weight.detach().numpy().std(), 1.0, delta=0.03)
        self.assertEqual(emb.weight[3].abs().sum().item(), 0.0)
        ln = nn.LayerNorm(4)
        self.assertEqual((ln.weight.tolist(), ln.bias.tolist()), ([1.0] * 4, [0.0] * 4))


class TestUtils(unittest.TestCase):
    def grads(self):
        ps = [nn.Parameter(dyn.zeros(3, dtype=F64)), nn.Parameter(dyn.zeros(2, 2, dtype=F64)),
              nn.Parameter(dyn.zeros(1, dtype=F64))]
        gs = [rnd((3,), 1), rnd((2, 2), 2)]
        for p, g in zip(ps, gs):
            p.grad = t64(g)
        return ps, gs

    def test_clip_grad_norm(self):
        for norm_type in (2.0, 1.0, 3.0, math.inf):
            with self.subTest(norm_type=norm_type):
                ps, gs = self.grads()
                flat = np.concatenate([g.ravel() for g in gs])
                total = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (
                    1 / norm_type)
                got = nn.utils.clip_grad_norm_(ps, 0.5, norm_type)
                self.assertIsInstance(got, dyn.Tensor)
                self.assertAlmostEqual(got.item(), total, places=12)
                coef = min(0.5 / (total + 1e-6), 1.0)
                for p, g in zip(ps, gs):
                    close(self, p.grad, g * coef, 1e-12)
                self.assertIsNone(ps[2].grad)
        ps, gs = self.grads()
        nn.utils.clip_grad_norm_(ps, 100.0)  # below the limit: unchanged
        close(self, ps[0].grad, gs[0], 1e-15)
        ps[0].grad = t64([1.0, float("inf"), 0.0])
        with self.assertRaisesRegex(RuntimeError, "non-finite"):
            nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
        self.assertEqual(nn.utils.clip_grad_norm_([nn.Parameter(dyn.zeros(2))], 1.0).item(), 0.0)

    def test_clip_grad_value_and_vectors(self):
        ps, gs = self.grads()
        nn.utils.clip_grad_value_(ps, 0.3)
        close(self, ps[1].grad, np.clip(gs[1], -0.3, 0.3), 0)
        vec = nn.utils.parameters_to_vector(ps)
        self.assertEqual(tuple(vec.shape), (8,))
        nn.utils.vector_to_parameters(t64(np.arange(8.0)), ps)
        self.assertEqual(ps[1].tolist(), [[3.0, 4.0], [5.0, 6.0]])
        self.assertEqual(ps[2].tolist(), [7.0])


if __name__ == "__main__":
    unittest.main()
