"""torch.distributions.Poisson, and torch.poisson's sampler."""
from numbers import Number

import dyn

from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


def poisson(rates, generator=None):
    """torch.poisson: a Poisson count per rate, by counting uniform draws until their product falls
    below exp(-rate) (Knuth), all positions at once; the rounds grow with the largest rate."""
    with dyn.no_grad():
        limit = dyn.exp(-rates.detach().to(dyn.float64))
        count = dyn.zeros(rates.shape, dtype=dyn.float64)
        product = dyn.rand(rates.shape, dtype=dyn.float64, generator=generator) if generator is not None else \
            dyn.rand(rates.shape, dtype=dyn.float64)
        running = product > limit
        while bool(running.any()):
            count = count + running.to(dyn.float64)
            draw = dyn.rand(rates.shape, dtype=dyn.float64)
            product = dyn.where(running, product * draw, product)
            running = running & (product > limit)
        return count.to(rates.dtype)


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = dyn.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = dyn.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return _expanded(new, self, batch_shape)

    def sample(self, sample_shape=dyn.Size()):
        shape = self._extended_shape(sample_shape)
        return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()
