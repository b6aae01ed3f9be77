"""torch.nn.modules.flatten: the module path PyTorch defines these in (a pickled model names it)."""
from .linear import Flatten, Unflatten  # noqa: F401

__all__ = ["Flatten", "Unflatten"]
