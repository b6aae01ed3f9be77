"""torch.nn.modules.fold: the module path PyTorch defines Unfold in (a pickled model names it)."""
from .linear import Unfold  # noqa: F401

__all__ = ["Unfold"]
