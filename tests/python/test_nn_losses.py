"""dyn.nn losses against numpy references of PyTorch's documented formulas: nll_loss and
cross_entropy (class weights, ignore_index, label_smoothing, probability targets, [C], [N, C] and
[N, C, d1, ...] inputs, every reduction), the binary losses, l1 / smooth_l1 / huber / mse and
kl_div; gradients by finite differences; the loss modules; dyn.compile bitwise equal to eager.
"""
import unittest

import numpy as np

import dyn
import dyn.nn as nn
import dyn.nn.functional as F
from compiletest import same_bits
from test_autograd_ops import gradcheck, rnd
from test_nn_layers import close, compiled_matches_eager, t64

I64 = dyn.int64


def log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def classes_last(x):
    """[C] -> [1, C]; [N, C, d...] -> [N * d..., C]."""
    return x[None] if x.ndim == 1 else np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


def reduce(per, denom, reduction, shape):
    if reduction == "none":
        return per.reshape(shape)
    return per.sum() / denom if reduction == "mean" else per.sum()


def ce_ref(x, target, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0, log_probs=False):
    """Per element: -sum_c w_c * y_c * logp_c with y = (1 - s) * onehot(target) + s / C (or the given
    probabilities, smoothed the same way). Index targets: ignored elements are 0 and 'mean' divides by
    the summed weight of the targets kept; probability targets: 'mean' divides by the element count."""
    logp = x if log_probs else log_softmax(x, 0 if x.ndim == 1 else 1)
    flat = classes_last(logp)
    c = flat.shape[1]
    w = np.ones(c) if weight is None else weight
    if np.issubdtype(np.asarray(target).dtype, np.floating):
        y = classes_last(target) * (1 - smoothing) + smoothing / c
        per = -(w * y * flat).sum(1)
        return reduce(per, len(per), reduction, np.shape(target)[:1] + np.shape(target)[2:])
    t = np.asarray(target).reshape(-1)
    per, denom = np.zeros(len(t)), 0.0
    for n, k in enumerate(t):
        if k == ignore_index:
            continue
        y = np.full(c, smoothing / c)
        y[k] += 1 - smoothing
        per[n] = -(w * y * flat[n]).sum()
        denom += w[k]
    return reduce(per, denom, reduction, np.shape(target))


def bce_ref(p, y, w=None):
    with np.errstate(divide="ignore"):
        loss = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log(1 - p), -100))
    return loss * (1 if w is None else w)


def bce_logits_ref(x, y, w=None, pos_weight=None):
    s = 1 / (1 + np.exp(-x))
    pw = 1 if pos_weight is None else pos_weight
    return -(pw * y * np.log(s) + (1 - y) * np.log(1 - s)) * (1 if w is None else w)


def apply_reduction(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction](loss)


REDUCTIONS = ("mean", "sum", "none")


class TestClassLosses(unittest.TestCase):
    SHAPES = [((5, 4), (5,)), ((4,), ()), ((2, 4, 3, 2), (2, 3, 2))]

    def targets(self, tshape, c, seed, ignore=True):
        t = np.random.default_rng(seed).integers(0, c, tshape)
        if ignore and t.size > 1:
            t.reshape(-1)[1] = -100
        return t

    def test_nll_loss(self):
        for k, (xs, ts) in enumerate(self.SHAPES):
            x = log_softmax(rnd(xs, k), 0 if len(xs) == 1 else 1)
            t = self.targets(ts, xs[0 if len(xs) == 1 else 1], k)
            for weight in (None, rnd((4,), 9, "positive")):
                for red in REDUCTIONS:
                    with self.subTest(shape=xs, weight=weight is not None, reduction=red):
                        got = F.nll_loss(t64(x), dyn.tensor(t), None if weight is None else t64(weight),
                                         reduction=red)
                        close(self, got, ce_ref(x, t, weight, reduction=red, log_probs=True), 1e-12)

    def test_cross_entropy_class_indices(self):
        for k, (xs, ts) in enumerate(self.SHAPES):
            x = rnd(xs, 10 + k) * 2
            t = self.targets(ts, 4, 20 + k)
            for weight in (None, rnd((4,), 30, "positive")):
                for smoothing in (0.0, 0.2):
                    for red in REDUCTIONS:
                        with self.subTest(shape=xs, weight=weight is not None, smoothing=smoothing, reduction=red):
                            got = F.cross_entropy(t64(x), dyn.tensor(t), None if weight is None else t64(weight),
                                                  reduction=red, label_smoothing=smoothing)
                            close(self, got, ce_ref(x, t, weight, reduction=red, smoothing=smoothing), 1e-12)
        x, t = rnd((3, 4), 1), np.array([2, 5, 5])
        close(self, F.cross_entropy(t64(x), dyn.tensor(t), ignore_index=5), ce_ref(x, t, ignore_index=5), 1e-12,
              "custom ignore_index")
        self.assertTrue(np.isnan(F.cross_entropy(t64(x), dyn.tensor([-100] * 3)).item()), "all ignored: nan")

    def test_cross_entropy_probabilities(self):
        for xs in ((5, 4), (2, 4, 3)):
            x = rnd(xs, 1) * 2
            y = np.moveaxis(np.random.default_rng(2).dirichlet(np.ones(4), (xs[0],) + xs[2:]), -1, 1)
            for weight in (None, rnd((4,), 3, "positive")):
                for smoothing in (0.0, 0.3):
                    for red in REDUCTIONS:
                        with self.subTest(shape=xs, weight=weight is not None, smoothing=smoothing, reduction=red):
                            got = F.cross_entropy(t64(x), t64(y), None if weight is None else t64(weight),
                                                  reduction=red, label_smoothing=smoothing)
                            close(self, got, ce_ref(x, y, weight, reduction=red, smoothing=smoothing), 1e-12)

    def test_existing_call_unchanged(self):
        # the plain call keeps its value bit for bit: the mean of the picked negative log-probabilities
        x = dyn.tensor(rnd((6, 5), 3).astype(np.float32))
        t = dyn.tensor([0, 4, 2, 2, 1, 3])
        want = -x.log_softmax(1).gather(1, t.unsqueeze(1)).squeeze(1)
        self.assertTrue(same_bits(F.cross_entropy(x, t), want.mean()))
        self.assertTrue(same_bits(F.cross_entropy(x, t, reduction="sum"), want.sum()))

    def test_gradients(self):
        x, t = rnd((4, 3), 1), dyn.tensor([2, -100, 0, 2])
        w = t64(rnd((3,), 2, "positive"))
        gradcheck(self, lambda a: F.nll_loss(a, t, w), [x], msg="nll_loss weight ignore")
        gradcheck(self, lambda a: F.cross_entropy(a, t, w, label_smoothing=0.1), [x], msg="ce smoothing")
        gradcheck(self, lambda a: F.cross_entropy(a, dyn.tensor([[1, 0], [2, 2]]), reduction="none"),
                  [rnd((2, 3, 2), 3)], msg="ce [N, C, d]")
        y = t64(np.random.default_rng(4).dirichlet(np.ones(3), 4))
        gradcheck(self, lambda a: F.cross_entropy(a, y, w, label_smoothing=0.2), [x], msg="ce probabilities")

    def test_modules_and_errors(self):
        x, t = rnd((4, 3), 5), np.array([1, 2, -1, 0])
        w = rnd((3,), 6, "positive")
        m = nn.CrossEntropyLoss(weight=t64(w), ignore_index=-1, reduction="sum", label_smoothing=0.1)
        close(self, m(t64(x), dyn.tensor(t)), ce_ref(x, t, w, -1, "sum", 0.1), 1e-12)
        self.assertEqual(list(m.state_dict()), ["weight"])
        self.assertEqual(repr(m), "CrossEntropyLoss()")
        m = nn.NLLLoss(ignore_index=-1, reduction="none")
        close(self, m(t64(x), dyn.tensor(t)), ce_ref(x, t, None, -1, "none", log_probs=True), 1e-12)
        self.assertEqual(nn.CrossEntropyLoss(size_average=False).reduction, "sum")
        with self.assertRaisesRegex(RuntimeError, "expected target dtype to be Long or Byte, but got Float"):
            F.nll_loss(dyn.zeros(2, 3), dyn.zeros(2))
        with self.assertRaisesRegex(RuntimeError, "probability targets must have the input's shape"):
            F.cross_entropy(dyn.zeros(2, 3), dyn.zeros(2))
        with self.assertRaisesRegex(ValueError, r"Expected input batch_size \(2\) to match target batch_size \(3\)"):
            F.cross_entropy(dyn.zeros(2, 3), dyn.tensor([0, 1, 2]))
        with self.assertRaisesRegex(ValueError, "label_smoothing must be between 0.0 and 1.0"):
            F.cross_entropy(dyn.zeros(2, 3), dyn.tensor([0, 1]), label_smoothing=1.5)
        with self.assertRaisesRegex(ValueError, "not a valid value for reduction"):
            F.nll_loss(dyn.zeros(2, 3), dyn.tensor([0, 1]), reduction="avg")
        with self.assertRaisesRegex(RuntimeError, "weight tensor should be defined either for all 3 classes"):
            F.nll_loss(dyn.zeros(2, 3), dyn.tensor([0, 1]), weight=dyn.ones(2))

    def test_compiled_bitwise(self):
        r = np.random.default_rng(0)

        def make():
            dyn.manual_seed(2)
            model = nn.Linear(4, 3)
            loss = nn.CrossEntropyLoss(weight=dyn.tensor([0.5, 1.0, 2.0]), label_smoothing=0.1)

            def step(m, x, t):
                out = loss(m(x), t)
                out.backward()
                return out
            return model, step
        inputs = [(dyn.tensor(r.standard_normal((6, 4)).astype(np.float32)),
                   dyn.tensor(np.where(r.random(6) < 0.3, -100, r.integers(0, 3, 6)))) for _ in range(3)]
        compiled_matches_eager(self, make, inputs)


class TestElementLosses(unittest.TestCase):
    def test_binary_cross_entropy(self):
        p, y, w = rnd((3, 4), 1, "positive") / 3, np.random.default_rng(2).random((3, 4)), rnd((4,), 3, "positive")
        p[0, 0], y[0, 0] = 0.0, 1.0  # log(0) is clamped to -100
        for red in REDUCTIONS:
            with self.subTest(reduction=red):
                close(self, F.binary_cross_entropy(t64(p), t64(y), t64(w), reduction=red),
                      apply_reduction(bce_ref(p, y, w), red), 1e-12)
        close(self, nn.BCELoss()(t64(p), t64(y)), bce_ref(p, y).mean(), 1e-12)
        with self.assertRaisesRegex(ValueError, "Using a target size"):
            F.binary_cross_entropy(dyn.rand(3), dyn.rand(2))

    # Recorded from PyTorch 2.15 (CPU, float32): F.binary_cross_entropy(x, t, reduction="none"),
    # then .backward(g); x and t both require grad. x holds the edges of the domain (exactly 0 and
    # 1, against targets 0 and 1) where the clamped logs' own derivatives would give inf * 0.
    BCE_X = [0.0, 1.0, 0.0, 1.0, 0.3, 1e-30, 0.999999, 2e-8]
    BCE_T = [0.0, 1.0, 1.0, 0.0, 0.6, 0.5, 0.25, 0.75]
    BCE_G = [0.5, 0.7142857313156128, 0.9285714626312256, 1.1428571939468384, 1.3571428060531616,
             1.5714285373687744, 1.7857142686843872, 2.0]
    BCE_LOSS = [0.0, -0.0, 100.0, 100.0, 0.8650537133216858, 34.53877639770508, 10.351738929748535,
                13.295650482177734]
    BCE_GRAD_X = [0.0, 0.0, -928571457536.0, 1142857138176.0, -1.9387754201889038, -785714249728.0, 1321734.0,
                  -75000000.0]
    BCE_GRAD_T = [np.inf, -np.inf, np.inf, -np.inf, 1.1499041318893433, 108.5504379272461, -24.646995544433594,
                  35.4550666809082]

    def test_binary_cross_entropy_at_the_edges_is_pytorchs(self):
        x = dyn.tensor(self.BCE_X, requires_grad=True)
        t = dyn.tensor(self.BCE_T, requires_grad=True)
        loss = F.binary_cross_entropy(x, t, reduction="none")
        self.assertEqual(type(loss.grad_fn).__name__, "BinaryCrossEntropyBackward")
        loss.backward(dyn.tensor(self.BCE_G))
        for got, want, what in ((loss.detach(), self.BCE_LOSS, "loss"), (x.grad, self.BCE_GRAD_X, "x.grad"),
                                (t.grad, self.BCE_GRAD_T, "t.grad")):
            got = got.numpy()
            want = np.array(want, dtype=np.float32)
            self.assertFalse(np.isnan(got).any(), f"{what}: {got}")
            # The edges exactly (zeros with their signs, the 1e-12 clamp, infinities); the other
            # elements within a float32 ulp or two of PyTorch's log.
            edges = slice(0, 4)
            np.testing.assert_array_equal(got[edges], want[edges], what)
            np.testing.assert_array_equal(np.signbit(got[edges]), np.signbit(want[edges]), what)
            np.testing.assert_allclose(got[4:], want[4:], rtol=3e-7, err_msg=what)
        # Without grad the same values come from the same ops.
        plain = F.binary_cross_entropy(dyn.tensor(self.BCE_X), dyn.tensor(self.BCE_T), reduction="none")
        self.assertTrue(same_bits(plain, loss.detach()))

    def test_binary_cross_entropy_training_compiled_is_eager(self):
        # Sigmoid outputs that saturate to exactly 0 and 1 (large logits): the gradient stays finite,
        # and compiled equals eager bit for bit.
        def make():
            dyn.manual_seed(3)
            m = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
            with dyn.no_grad():
                m[0].weight.mul_(40.0)

            def step(mod, x, y):
                loss = F.binary_cross_entropy(mod(x).squeeze(1), y)
                loss.backward()
                return loss
            return m, step

        dyn.manual_seed(4)
        xs = [(dyn.randn(16, 4), (dyn.rand(16) > 0.5).float()) for _ in range(3)]
        compiled_matches_eager(self, make, xs)
        m, step = make()
        step(m, *xs[0])
        self.assertTrue(np.isfinite(m[0].weight.grad.numpy()).all(), m[0].weight.grad)

    def test_binary_cross_entropy_with_logits(self):
        x, y = rnd((3, 4), 4) * 3, np.random.default_rng(5).random((3, 4))
        w, pw = rnd((3, 1), 6, "positive"), rnd((4,), 7, "positive")
        for red in REDUCTIONS:
            with self.subTest(reduction=red):
                got = F.binary_cross_entropy_with_logits(t64(x), t64(y), t64(w), reduction=red, pos_weight=t64(pw))
                close(self, got, apply_reduction(bce_logits_ref(x, y, w, pw), red), 1e-12)
        m = nn.BCEWithLogitsLoss(pos_weight=t64(pw))
        close(self, m(t64(x), t64(y)), bce_logits_ref(x, y, None, pw).mean(), 1e-12)
        self.assertEqual(list(m.state_dict()), ["pos_weight"])
        # the stable form: large logits give exact, finite losses and gradients
        big = t64([100.0, -100.0, 800.0]).requires_grad_()
        loss = F.binary_cross_entropy_with_logits(big, t64([0.0, 1.0, 1.0]), reduction="none",
                                                  pos_weight=t64([2.0, 3.0, 1.0]))
        close(self, loss, [100.0, 300.0, 0.0], 1e-12)
        loss.sum().backward()
        close(self, big.grad, [1.0, -3.0, 0.0], 1e-12)
        with self.assertRaisesRegex(ValueError, "must be the same as input size"):
            F.binary_cross_entropy_with_logits(dyn.rand(3), dyn.rand(2))

    def test_regression_losses(self):
        a, b = rnd((3, 4), 8) * 2, rnd((3, 4), 9) * 2
        d = np.abs(a - b)
        cases = [
            ("l1", lambda r: F.l1_loss(t64(a), t64(b), reduction=r), d),
            ("mse", lambda r: F.mse_loss(t64(a), t64(b), reduction=r), d * d),
            ("smooth_l1", lambda r: F.smooth_l1_loss(t64(a), t64(b), reduction=r, beta=1.5),
             np.where(d < 1.5, 0.5 * d * d / 1.5, d - 0.75)),
            ("smooth_l1 beta 0", lambda r: F.smooth_l1_loss(t64(a), t64(b), reduction=r, beta=0.0), d),
            ("huber", lambda r: F.huber_loss(t64(a), t64(b), reduction=r, delta=0.5),
             np.where(d < 0.5, 0.5 * d * d, 0.5 * (d - 0.25))),
        ]
        for name, fn, want in cases:
            for red in REDUCTIONS:
                with self.subTest(loss=name, reduction=red):
                    close(self, fn(red), apply_reduction(want, red), 1e-12)
        close(self, nn.SmoothL1Loss(beta=1.5)(t64(a), t64(b)), cases[2][2].mean(), 1e-12)
        close(self, nn.HuberLoss(reduction="sum", delta=0.5)(t64(a), t64(b)), cases[4][2].sum(), 1e-12)
        close(self, nn.L1Loss()(t64(a), t64(b)), d.mean(), 1e-12)

    def test_kl_div(self):
        logq = log_softmax(rnd((3, 4), 10), 1)
        p = np.random.default_rng(11).dirichlet(np.ones(4), 3)
        p[0, 1] = 0.0  # 0 * log(0) counts as 0
        pointwise = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0) - p * logq
        for red, want in (("batchmean", pointwise.sum() / 3), ("sum", pointwise.sum()), ("mean", pointwise.mean()),
                          ("none", pointwise)):
            with self.subTest(reduction=red):
                close(self, F.kl_div(t64(logq), t64(p), reduction=red), want, 1e-12)
        logp = np.log(np.random.default_rng(12).dirichlet(np.ones(4), 3))
        close(self, nn.KLDivLoss(reduction="batchmean", log_target=True)(t64(logq), t64(logp)),
              (np.exp(logp) * (logp - logq)).sum() / 3, 1e-12)

    def test_gradients(self):
        a, b = rnd((3, 4), 1, "away"), rnd((3, 4), 2)
        p, y = rnd((3, 4), 3, "positive") / 3, np.random.default_rng(4).random((3, 4))
        pw = t64(rnd((4,), 5, "positive"))
        cases = [
            ("bce", lambda x, t: F.binary_cross_entropy(x, t), [p, y]),
            ("bce_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw), [b * 3, y]),
            ("l1", lambda x: F.l1_loss(x, t64(b)), [a + b]),
            ("smooth_l1", lambda x: F.smooth_l1_loss(x, t64(np.zeros((3, 4))), beta=0.7), [a]),
            ("huber", lambda x: F.huber_loss(x, t64(np.zeros((3, 4))), delta=0.7), [a]),
            ("kl_div", lambda x, t: F.kl_div(x, t, reduction="batchmean"), [b, y]),
            ("kl_div log_target", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True), [b, a]),
        ]
        for name, fn, args in cases:
            with self.subTest(loss=name):
                gradcheck(self, fn, args, msg=name)


if __name__ == "__main__":
    unittest.main()
