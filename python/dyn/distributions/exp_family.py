"""torch.distributions.exp_family: the base class PyTorch gives its exponential families."""
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the exponential family (Normal, Bernoulli, Gamma, ...): the base class
    programs test with isinstance."""
