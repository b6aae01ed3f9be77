"""torch.distributions.Exponential."""
from numbers import Number

import dyn

from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return dyn.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = dyn.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = dyn.Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return _expanded(new, self, batch_shape)

    def rsample(self, sample_shape=dyn.Size()):
        shape = self._extended_shape(sample_shape)
        return dyn.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - dyn.exp(-self.rate * value)

    def icdf(self, value):
        return -dyn.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - dyn.log(self.rate)

