"""torchvision on dyn: the model architectures (torchvision.models) with torchvision's module
structure and parameter names, so a torchvision state_dict loads into them, and torchvision.utils
(make_grid, save_image). Datasets and transforms are not provided (they read files and download)."""
from . import models  # noqa: F401
from . import utils  # noqa: F401

__version__ = "0.20.0+dyn"
