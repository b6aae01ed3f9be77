"""torchvision.transforms.functional: the functions the transforms call, on PIL images and on
tensors (C, H, W) or (..., C, H, W), as torchvision computes them."""
import enum
import numbers

import numpy as np

import dyn


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _pil():
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("torchvision.transforms reads PIL images with PIL: install Debian's python3-pil "
                          "(scripts/setup.sh does)") from e
    return Image


def _is_pil(img):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def _pair(size):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (tuple, list)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError("Please provide only two dimensions (h, w) for size.")


def get_image_size(img):
    """[width, height], as torchvision's get_image_size."""
    if _is_pil(img):
        return list(img.size)
    if isinstance(img, dyn.Tensor):
        if img.dim() < 2:
            raise TypeError(f"Tensor is not a torch image: expected at least 2 dims, got {img.dim()}")
        return [img.shape[-1], img.shape[-2]]
    raise TypeError(f"Unexpected type {type(img)}")


def to_tensor(pic):
    """A PIL image or a (H, W[, C]) ndarray as a (C, H, W) tensor; uint8 becomes float32 in [0, 1]."""
    if not (_is_pil(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        a = pic[:, :, None] if pic.ndim == 2 else pic
        img = dyn.from_numpy(np.ascontiguousarray(a.transpose((2, 0, 1))))
        return img.to(dyn.get_default_dtype()).div(255) if img.dtype == dyn.uint8 else img
    mode_dtype = {"I": np.int32, "I;16": np.int16, "F": np.float32}
    a = np.array(pic, mode_dtype.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        a = 255 * a
    if a.ndim == 2:
        a = a[:, :, None]
    img = dyn.from_numpy(np.ascontiguousarray(a.transpose((2, 0, 1))))
    return img.to(dyn.get_default_dtype()).div(255) if img.dtype == dyn.uint8 else img


def pil_to_tensor(pic):
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    a = np.array(pic, copy=True)
    if a.ndim == 2:
        a = a[:, :, None]
    return dyn.from_numpy(np.ascontiguousarray(a.transpose((2, 0, 1))))


def to_pil_image(pic, mode=None):
    Image = _pil()
    if isinstance(pic, dyn.Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        a = pic.permute(1, 2, 0).contiguous().numpy()
    elif isinstance(pic, np.ndarray):
        a = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if a.shape[2] == 1:
        a = a[:, :, 0]
    return Image.fromarray(a, mode)


def convert_image_dtype(image, dtype=dyn.float32):
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        eps = 1e-3
        max_val = float(dyn.iinfo(dtype).max)
        return image.mul(max_val + 1.0 - eps).to(dtype)
    in_max = float(dyn.iinfo(image.dtype).max)
    if dtype.is_floating_point:
        return image.to(dtype).div(in_max)
    return image.to(dyn.float64).mul(float(dyn.iinfo(dtype).max) / in_max).to(dtype)


def normalize(tensor, mean, std, inplace=False):
    if not isinstance(tensor, dyn.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    mean = dyn.as_tensor(mean, dtype=tensor.dtype)
    std = dyn.as_tensor(std, dtype=tensor.dtype)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


def _output_size(h, w, size, max_size):
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    requested = size if isinstance(size, int) else size[0]
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = requested, int(requested * long / short)
    if max_size is not None:
        if max_size <= requested:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                             f"smaller edge size = {size}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return new_h, new_w


_PIL_FILTERS = {"nearest": 0, "bilinear": 2, "bicubic": 3, "box": 4, "hamming": 5, "lanczos": 1}


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    if isinstance(interpolation, int):
        interpolation = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
                         3: InterpolationMode.BICUBIC}[interpolation]
    w, h = get_image_size(img)
    oh, ow = _output_size(h, w, size, max_size)
    if (oh, ow) == (h, w):
        return img
    if _is_pil(img):
        return img.resize((ow, oh), _PIL_FILTERS[interpolation.value])
    if interpolation.value not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError(f"resize of a tensor: interpolation {interpolation.value} is not supported")
    down = oh < h or ow < w
    if down and antialias and interpolation.value in ("bilinear", "bicubic"):
        raise NotImplementedError("resize of a tensor image to a smaller size with antialias=True is not supported "
                                  "by dyn; pass antialias=False, or resize the PIL image (before ToTensor)")
    x = img if img.ndim == 4 else img.unsqueeze(0)
    dtype = x.dtype
    y = dyn.nn.functional.interpolate(x.float() if not x.is_floating_point() else x, size=(oh, ow),
                                      mode=interpolation.value,
                                      align_corners=False if interpolation.value in ("bilinear", "bicubic") else None)
    if not dtype.is_floating_point:
        y = y.round().clamp(0, 255).to(dtype)
    return y if img.ndim == 4 else y.squeeze(0)


def crop(img, top, left, height, width):
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    w, h = get_image_size(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        pads = [max(-left, 0), max(right - w, 0), max(-top, 0), max(bottom - h, 0)]
        img = dyn.nn.functional.pad(img[..., max(top, 0):min(bottom, h), max(left, 0):min(right, w)], pads)
        return img
    return img[..., top:bottom, left:right]


def center_crop(img, output_size):
    th, tw = _pair(output_size)
    w, h = get_image_size(img)
    if tw > w or th > h:
        pads = [(tw - w) // 2 if tw > w else 0, (th - h) // 2 if th > h else 0,
                (tw - w + 1) // 2 if tw > w else 0, (th - h + 1) // 2 if th > h else 0]
        img = pad(img, pads, fill=0)
        w, h = get_image_size(img)
        if (tw, th) == (w, h):
            return img
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def _ltrb(padding):
    if isinstance(padding, numbers.Number):
        return [int(padding)] * 4
    p = list(padding)
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return [p[0], p[1], p[0], p[1]]
    if len(p) == 4:
        return p
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(p)} element tuple")


def pad(img, padding, fill=0, padding_mode="constant"):
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _ltrb(padding)
    if _is_pil(img):
        Image = _pil()
        a = np.asarray(img)
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (a.ndim - 2)
        if padding_mode == "constant":
            out = np.pad(a, widths, mode="constant", constant_values=fill)
        else:
            out = np.pad(a, widths, mode=padding_mode)
        return Image.fromarray(out, img.mode)
    mode = {"edge": "replicate"}.get(padding_mode, padding_mode)
    if mode == "symmetric":
        a = img.numpy()
        widths = [(0, 0)] * (a.ndim - 2) + [(top, bottom), (left, right)]
        return dyn.from_numpy(np.pad(a, widths, mode="symmetric"))
    x = img if img.is_floating_point() or mode == "constant" else img.float()
    y = dyn.nn.functional.pad(x, [left, right, top, bottom], mode=mode, value=fill) if mode == "constant" else \
        dyn.nn.functional.pad(x, [left, right, top, bottom], mode=mode)
    return y.to(img.dtype)


def hflip(img):
    if _is_pil(img):
        return img.transpose(0)  # FLIP_LEFT_RIGHT
    return img.flip(-1)


def vflip(img):
    if _is_pil(img):
        return img.transpose(1)  # FLIP_TOP_BOTTOM
    return img.flip(-2)


def rgb_to_grayscale(img, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if _is_pil(img):
        Image = _pil()
        g = img.convert("L")
        return Image.merge("RGB", [g, g, g]) if num_output_channels == 3 else g
    r, g, b = img.unbind(dim=-3)
    l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype) if img.is_floating_point() else \
        (0.2989 * r + 0.587 * g + 0.114 * b).round().clamp(0, 255).to(img.dtype)
    l_img = l_img.unsqueeze(dim=-3)
    return l_img.expand(img.shape) if num_output_channels == 3 else l_img
