"""torchvision.utils: make_grid and save_image, as torchvision 0.20 computes them; images are
written with PIL (Debian's python3-pil), as torchvision writes them."""
import math

import dyn


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0,
              **kwargs):
    """A (C, H', W') image of a batch (B, C, H, W) or a list of (C, H, W) images, nrow images a row,
    `padding` pixels of pad_value between them; one-channel images become three."""
    if not (isinstance(tensor, dyn.Tensor) or (isinstance(tensor, list) and all(isinstance(t, dyn.Tensor)
                                                                                for t in tensor))):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if "range" in kwargs:
        raise TypeError("make_grid(range=...) was renamed value_range in torchvision 0.10; pass value_range")
    if isinstance(tensor, list):
        tensor = dyn.stack(tensor, dim=0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = dyn.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = dyn.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

        def norm_range(t, low, high):
            t = t.clamp(min=low, max=high)
            return (t - low) / max(high - low, 1e-5)

        if scale_each:
            tensor = dyn.stack([norm_range(t, *(value_range or (float(t.min()), float(t.max())))) for t in tensor])
        else:
            tensor = norm_range(tensor, *(value_range or (float(tensor.min()), float(tensor.max()))))
    if not isinstance(tensor, dyn.Tensor):
        raise TypeError("tensor should be of type torch.Tensor")
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = dyn.full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value,
                    dtype=tensor.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            top, left = y * height + padding, x * width + padding
            grid[:, top:top + height - padding, left:left + width - padding] = tensor[k]
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Writes make_grid(tensor, **kwargs) as an 8-bit image file (the format from fp's extension,
    or `format`), values in [0, 1] scaled to 0..255 and rounded as torchvision does."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("torchvision.utils.save_image writes images with PIL: install Debian's python3-pil "
                          "(scripts/setup.sh does)") from e
    grid = make_grid(tensor, **kwargs)
    with dyn.no_grad():
        ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(dyn.uint8).numpy()
    if ndarr.shape[2] == 1:
        ndarr = ndarr[:, :, 0]
    Image.fromarray(ndarr).save(fp, format=format)


__all__ = ["make_grid", "save_image"]
