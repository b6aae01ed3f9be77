"""torch.nn.modules.pixelshuffle: the module path PyTorch defines these in (a pickled model names it)."""
from .upsampling import PixelShuffle, PixelUnshuffle  # noqa: F401

__all__ = ["PixelShuffle", "PixelUnshuffle"]
