"""Stand-ins for the torchvision.transforms the corpus programs use, on uint8 tensor images."""
import torch


class ToTensor:
    """uint8 (H, W) or (H, W, C) -> float32 (C, H, W) in [0, 1], as torchvision's ToTensor."""

    def __call__(self, pic):
        if pic.dim() == 2:
            pic = pic.unsqueeze(-1)
        return pic.permute(2, 0, 1).contiguous().float().div(255)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = list(mean), list(std)

    def __call__(self, t):
        mean = torch.tensor(self.mean, dtype=t.dtype).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=t.dtype).view(-1, 1, 1)
        return (t - mean) / std


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


# Augmentations used by CIFAR programs, on raw uint8 (H, W, C) tensor images (before ToTensor).
# Done in numpy so that they rely on nothing but tensor <-> numpy conversion.
class Pad:
    def __init__(self, padding, fill=0):
        self.padding, self.fill = padding, fill

    def __call__(self, img):
        import numpy as np
        a = img.numpy()
        p = self.padding
        widths = [(p, p), (p, p)] + [(0, 0)] * (a.ndim - 2)
        return torch.from_numpy(np.pad(a, widths, constant_values=self.fill))


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        import random
        import numpy as np
        if random.random() < self.p:
            return torch.from_numpy(np.ascontiguousarray(img.numpy()[:, ::-1]))
        return img


class RandomCrop:
    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, img):
        import random
        import numpy as np
        h, w = self.size
        top = random.randint(0, img.shape[0] - h)
        left = random.randint(0, img.shape[1] - w)
        return torch.from_numpy(np.ascontiguousarray(img.numpy()[top:top + h, left:left + w]))
