"""torch.nn.modules.instancenorm: the module path PyTorch defines these in (a pickled model names it)."""
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
