"""torchvision.transforms (v1): the common set, on PIL images (Debian's python3-pil) and on
tensors, with torchvision's semantics: ToTensor scales uint8 to [0, 1] as (C, H, W) float32,
Normalize is (x - mean) / std per channel, the random transforms draw from torch's generator
(dyn's: the same calls, another stream than PyTorch's), Resize/crops of a PIL image are PIL's."""
import math
import numbers

import numpy as np

import dyn

from . import functional as F
from .functional import InterpolationMode  # noqa: F401


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class _Plain:
    def __repr__(self):
        return f"{type(self).__name__}()"


class ToTensor(_Plain):
    def __call__(self, pic):
        return F.to_tensor(pic)


class PILToTensor(_Plain):
    def __call__(self, pic):
        return F.pil_to_tensor(pic)


class ToPILImage:
    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"ToPILImage(mode={self.mode})" if self.mode else "ToPILImage()"


class ConvertImageDtype:
    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Lambda:
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return "Lambda()"


class Resize:
    def __init__(self, size, interpolation=F.InterpolationMode.BILINEAR, max_size=None, antialias=True):
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def __call__(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return f"Resize(size={self.size}, interpolation={self.interpolation.value}, max_size={self.max_size}, " \
               f"antialias={self.antialias})"


class CenterCrop:
    def __init__(self, size):
        self.size = F._pair(size)

    def __call__(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"CenterCrop(size={self.size})"


class Pad:
    def __init__(self, padding, fill=0, padding_mode="constant"):
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def __call__(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class RandomCrop:
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = F._pair(size)
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    @staticmethod
    def get_params(img, output_size):
        w, h = F.get_image_size(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = int(dyn.randint(0, h - th + 1, size=(1,)).item())
        j = int(dyn.randint(0, w - tw + 1, size=(1,)).item())
        return i, j, th, tw

    def __call__(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = F.get_image_size(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, [self.size[1] - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, [0, self.size[0] - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return F.hflip(img) if dyn.rand(1).item() < self.p else img

    def __repr__(self):
        return f"RandomHorizontalFlip(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    def __call__(self, img):
        return F.vflip(img) if dyn.rand(1).item() < self.p else img

    def __repr__(self):
        return f"RandomVerticalFlip(p={self.p})"


class RandomResizedCrop:
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=F.InterpolationMode.BILINEAR, antialias=True):
        self.size = F._pair(size)
        self.scale, self.ratio, self.interpolation, self.antialias = scale, ratio, interpolation, antialias

    @staticmethod
    def get_params(img, scale, ratio):
        width, height = F.get_image_size(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * dyn.empty(1).uniform_(scale[0], scale[1]).item()
            aspect = math.exp(dyn.empty(1).uniform_(log_ratio[0], log_ratio[1]).item())
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                i = int(dyn.randint(0, height - h + 1, size=(1,)).item())
                j = int(dyn.randint(0, width - w + 1, size=(1,)).item())
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resize(F.crop(img, i, j, h, w), list(self.size), self.interpolation, antialias=self.antialias)


class Grayscale:
    def __init__(self, num_output_channels=1):
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomApply:
    def __init__(self, transforms, p=0.5):
        self.transforms, self.p = transforms, p

    def __call__(self, img):
        if self.p < dyn.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomChoice:
    def __init__(self, transforms, p=None):
        self.transforms, self.p = transforms, p

    def __call__(self, *args):
        weights = self.p or [1.0] * len(self.transforms)
        k = int(dyn.multinomial(dyn.tensor(weights), 1).item())
        return self.transforms[k](*args)


def _unsupported(name):
    class Unsupported:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(f"torchvision.transforms.{name} is not supported by dyn (supported: "
                                      f"{', '.join(sorted(__all__))}); run under --real-torch for it")
    Unsupported.__name__ = Unsupported.__qualname__ = name
    return Unsupported


for _name in ("ColorJitter", "RandomRotation", "RandomAffine", "RandomPerspective", "GaussianBlur", "RandomErasing",
              "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "FiveCrop", "TenCrop",
              "RandomGrayscale", "ElasticTransform", "RandomInvert", "RandomPosterize", "RandomSolarize",
              "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "LinearTransformation"):
    globals()[_name] = _unsupported(_name)

__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize", "Lambda", "Resize",
           "CenterCrop", "Pad", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop",
           "Grayscale", "RandomApply", "RandomChoice", "InterpolationMode"]
_ = (np, numbers)
