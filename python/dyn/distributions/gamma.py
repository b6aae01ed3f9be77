"""torch.distributions.Gamma, and the standard gamma sampler Beta and Dirichlet draw from."""
from numbers import Number

import dyn

from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _standard_gamma(concentration):
    """Gamma(concentration, 1) samples by Marsaglia and Tsang's method (a normal and a uniform per
    proposal; rejected positions are drawn again), with the boost u^(1/a) below 1. Not
    reparameterized: a gradient with respect to concentration is refused by the callers."""
    with dyn.no_grad():
        a = concentration.detach()
        alpha = dyn.where(a < 1, a + 1, a)
        d = alpha - 1.0 / 3
        c = 1.0 / (9 * d).sqrt()
        out = dyn.zeros_like(alpha)
        pending = dyn.ones_like(alpha, dtype=dyn.bool)
        while bool(pending.any()):
            x = dyn.randn(alpha.shape, dtype=alpha.dtype)
            v = (1 + c * x) ** 3
            u = dyn.rand(alpha.shape, dtype=alpha.dtype)
            ok = (v > 0) & (u.log() < 0.5 * x * x + d - d * v + d * v.clamp(min=1e-30).log())
            take = pending & ok
            out = dyn.where(take, d * v, out)
            pending = pending & ~ok
        boost = dyn.rand(alpha.shape, dtype=alpha.dtype).pow(1.0 / a)
        out = dyn.where(a < 1, out * boost, out)
        return out.clamp(min=dyn.finfo(out.dtype).tiny)


def _refuse_grad(name, *params):
    if dyn.is_grad_enabled() and any(p.requires_grad for p in params):
        raise NotImplementedError(f"{name}.rsample: the gradient of a sample with respect to the concentration is "
                                  "not supported by dyn (PyTorch differentiates its gamma sampler implicitly); use "
                                  ".sample() for values without a gradient")


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = dyn.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = dyn.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return _expanded(new, self, batch_shape)

    def rsample(self, sample_shape=dyn.Size()):
        _refuse_grad("Gamma", self.concentration)
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        value = dyn.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (dyn.xlogy(self.concentration, self.rate) + dyn.xlogy(self.concentration - 1, value)
                - self.rate * value - dyn.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return dyn.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - dyn.log(self.rate) + dyn.lgamma(self.concentration)
                + (1.0 - self.concentration) * dyn.digamma(self.concentration))
