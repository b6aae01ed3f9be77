"""torch.distributions: probability distributions with PyTorch's shapes, parameters, validation
errors and reprs (sample, rsample, log_prob, entropy, cdf, icdf, mean, variance, ...),
transformed distributions and closed-form KL divergences, composed of dyn's ops so that log_prob
and rsample are differentiable and compile like any other code. Samples come from dyn's random
generator, whose stream is not PyTorch's: a seed gives other numbers than under PyTorch."""
from . import constraints, transforms  # noqa: F401
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "ExponentialFamily",
           "Exponential", "Gamma", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
           "OneHotCategorical", "Poisson", "TransformedDistribution", "Uniform", "kl_divergence", "register_kl"]
__all__ += transforms.__all__
