"""dyn.utils: PyTorch's torch.utils helpers that dyn offers (data loading)."""
from . import data  # noqa: F401
