"""Upsample, PixelShuffle and PixelUnshuffle."""
from .. import functional as F
from .module import Module, _FunctionModule


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        what = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{what}, mode={self.mode!r}"


class PixelShuffle(_FunctionModule):
    _fn, _args = staticmethod(F.pixel_shuffle), ("upscale_factor",)

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor


class PixelUnshuffle(_FunctionModule):
    _fn, _args = staticmethod(F.pixel_unshuffle), ("downscale_factor",)

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
