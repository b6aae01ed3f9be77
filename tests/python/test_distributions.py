"""torch.distributions (python/dyn/distributions/) against PyTorch 2.15
(torch_reference/distributions.json, recorded by torch_reference/record.py from
distributions_cases.py): reprs, shapes, densities, moments, gradients, KL divergences,
transforms and validation errors; compiled equal to eager; and the samplers' statistics, which
PyTorch cannot give us (dyn's random stream is its own)."""
import os
import sys
import unittest

import dyn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "torch_reference"))
from distributions_cases import cases, encode  # noqa: E402
from reference import assert_compiled_equals_eager, assert_like_recorded, close  # noqa: E402

D = dyn.distributions
# the same formulas as PyTorch's, but lgamma, digamma and erfinv are dyn's series (Note [special
# functions in float64]) and LAPACK is OpenBLAS's: float32 agrees to a few ULP.
REL = 3e-6
FLOOR = 1e-6
# The precision matrix: PyTorch inverts the Cholesky factor with cholesky_inverse, dyn with two
# triangular products, so an entry that should be 0 carries the rounding of its row (~1e-8).
FLOOR_OF_CASE = {"mvn_matrices": 0.05}


def _same(got, want, floor=FLOOR):
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k], floor) for k in got)
    if isinstance(want, list) and want[:1] == ["error"]:
        return isinstance(got, list) and got[:2] == want[:2] and got[2].startswith(want[2])
    return close(got, want, REL, floor)


class TestAgainstPyTorch(unittest.TestCase):
    def test_every_case_as_pytorch_2_15(self):
        assert_like_recorded(self, "distributions.json", cases, encode, dyn, lambda got, want, name: _same(got, want, FLOOR_OF_CASE.get(name, FLOOR)))


class TestCompiled(unittest.TestCase):
    def test_compiled_equals_eager(self):
        assert_compiled_equals_eager(self, dyn, cases, encode)

    def test_rsample_in_a_compiled_policy(self):
        """A policy's sampled action and its log-probability, compiled, as eager under one seed."""
        def act(mu, log_std):
            d = D.Independent(D.Normal(mu, log_std.exp()), 1)
            a = d.rsample()
            return a, d.log_prob(a)

        mu, log_std = dyn.tensor([[0.1, -0.2]]), dyn.tensor([[-0.5, 0.3]])
        dyn.manual_seed(3)
        want = act(mu, log_std)
        dyn.manual_seed(3)
        got = dyn.compile(act)(mu, log_std)
        self.assertTrue(dyn.equal(got[0], want[0]) and dyn.equal(got[1], want[1]))


class TestSamples(unittest.TestCase):
    """Each sampler's mean and variance over 40000 draws (a fixed seed: the same draws every run)
    within 4 standard errors of the distribution's own."""

    def check(self, d, n=40000, shape=()):
        dyn.manual_seed(0)
        s = d.sample((n,))
        self.assertEqual(tuple(s.shape), (n,) + tuple(d.batch_shape) + tuple(d.event_shape))
        s = s.double()
        mean, var = d.mean.double(), d.variance.double()
        err = (var / n).sqrt() * 4
        self.assertTrue(bool(((s.mean(0) - mean).abs() <= err).all()), (s.mean(0), mean))
        # Var(s^2) = (mu4 - sigma^4 (n - 3) / (n - 1)) / n
        fourth = ((s - mean) ** 4).mean(0)
        err_var = ((fourth - var ** 2 * (n - 3) / (n - 1)).clamp(min=0) / n).sqrt() * 4
        self.assertTrue(bool(((s.var(0) - var).abs() <= err_var).all()), (s.var(0), var))

    def test_continuous(self):
        t = dyn.tensor
        self.check(D.Normal(t([0.0, 3.0]), t([1.0, 0.5])))
        self.check(D.Uniform(t([0.0, -2.0]), t([1.0, 5.0])))
        self.check(D.Exponential(t([0.5, 4.0])))
        self.check(D.Laplace(t([1.0]), t([2.0])))
        self.check(D.Gamma(t([0.3, 1.0, 5.0]), t([1.0, 2.0, 0.5])))
        self.check(D.Beta(t([0.5, 2.0]), t([0.5, 5.0])))
        self.check(D.Dirichlet(t([1.0, 2.0, 3.0])))
        self.check(D.LogNormal(t([0.0]), t([0.25])))
        self.check(D.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])))

    def test_discrete(self):
        t = dyn.tensor
        self.check(D.Bernoulli(probs=t([0.1, 0.5, 0.9])))
        self.check(D.Poisson(t([0.2, 3.0, 25.0])))
        self.check(D.Binomial(t([10.0, 3.0]), t([0.3, 0.9])))
        self.check(D.OneHotCategorical(probs=t([0.2, 0.3, 0.5])))
        dyn.manual_seed(0)
        c = D.Categorical(probs=t([0.2, 0.3, 0.5])).sample((40000,))
        freq = dyn.bincount(c, minlength=3).double() / 40000
        self.assertTrue(bool(((freq - t([0.2, 0.3, 0.5], dtype=dyn.float64)).abs() < 0.01).all()), freq)

    def test_gamma_rsample_refuses_a_gradient_it_cannot_give(self):
        conc = dyn.tensor([2.0], requires_grad=True)
        with self.assertRaisesRegex(NotImplementedError, "concentration"):
            D.Gamma(conc, 1.0).rsample()
        self.assertEqual(tuple(D.Gamma(conc, 1.0).sample((3,)).shape), (3, 1))

    def test_tanh_transform_inverts_its_own_saturated_output(self):
        """cache_size=1: log_prob of a sample that tanh rounded to 1.0 is finite, as SAC needs."""
        d = D.TransformedDistribution(D.Normal(dyn.tensor([30.0]), dyn.tensor([1.0])),
                                      [D.TanhTransform(cache_size=1)])
        a = d.rsample()
        self.assertEqual(float(a), 1.0)
        self.assertTrue(bool(d.log_prob(a).isfinite().all()))


if __name__ == "__main__":
    unittest.main()
