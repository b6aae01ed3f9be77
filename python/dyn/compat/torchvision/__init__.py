"""torchvision on dyn: the model architectures (torchvision.models) with torchvision's module
structure and parameter names, so a torchvision state_dict loads into them; torchvision.utils
(make_grid, save_image); transforms (the common v1 set) and datasets (MNIST, FashionMNIST, CIFAR
from their files, ImageFolder, FakeData). Images are PIL's (Debian's python3-pil)."""
from . import datasets  # noqa: F401
from . import models  # noqa: F401
from . import transforms  # noqa: F401
from . import utils  # noqa: F401

__version__ = "0.20.0+dyn"
