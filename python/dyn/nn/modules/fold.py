"""torch.nn.modules.fold: Fold (col2im) and Unfold (im2col), at the module path PyTorch defines
them in (a pickled model names it)."""
from .. import functional as F
from .linear import Unfold
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """F.fold (col2im) as a module: sums sliding blocks back into an image of output_size."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


