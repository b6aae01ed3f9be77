"""torch.distributions.Dirichlet: on the simplex, by its concentration vector."""
import dyn

from . import constraints
from .distribution import _expanded
from .exp_family import ExponentialFamily
from .gamma import _refuse_grad, _standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = dyn.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        return _expanded(new, self, batch_shape)

    def rsample(self, sample_shape=()):
        _refuse_grad("Dirichlet", self.concentration)
        shape = self._extended_shape(sample_shape)
        gammas = _standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (dyn.xlogy(self.concentration - 1.0, value).sum(-1) + dyn.lgamma(self.concentration.sum(-1))
                - dyn.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        onehot = dyn.nn.functional.one_hot(self.concentration.argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return dyn.where(mask.unsqueeze(-1), onehot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (dyn.lgamma(self.concentration).sum(-1) - dyn.lgamma(a0) - (k - a0) * dyn.digamma(a0)
                - ((self.concentration - 1.0) * dyn.digamma(self.concentration)).sum(-1))
